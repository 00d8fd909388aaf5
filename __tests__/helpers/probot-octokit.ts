/**
 * Probot's Octokit for tests, with retries and throttling really off. Probot builds its client
 * as a subclass whose defaults put its own `throttle` options (no `enabled`) over whatever the
 * given class's object defaults said, so `ProbotOctokit.defaults({ throttle: { enabled: false } })`
 * still spaced comments 3 s apart. Function-form defaults see Probot's options and win.
 */
import { ProbotOctokit } from "probot";

export const TestOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  retry: { enabled: false },
  throttle: { ...(options.throttle as object | undefined), enabled: false },
}));
