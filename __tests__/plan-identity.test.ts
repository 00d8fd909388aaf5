/**
 * The plan hash binds where the project is, not only what it holds: two projects with the same
 * `metadata.name` and the same change (staging/ and prod/) get different hashes, so an approval
 * of one never covers the other. Through the bundled Action on a real git repository, and from
 * the sources.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { planProject } from "../src/core/plan/plan-project.ts";
import {
  repositoryFromGitHub,
  repositoryFromRemoteUrl,
} from "../src/core/plan/repository-identity.ts";
import { projectResources } from "../src/core/plan/resources.ts";
import { validateProject } from "../src/core/validate.ts";
import {
  commitAll,
  copyInto,
  git,
  newRepo,
  pullRequestOpened,
  runAction,
} from "./helpers/action-harness.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, edit } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const HASH = /Plan hash: (sha256:[0-9a-f]{64})/;

describe("a plan hash names its project's path", () => {
  it("the repository is bound too: the Action in octo-org/agents and the CLI in its clone agree, another repository does not", async () => {
    const repo = newRepo();
    copyInto(EXAMPLE, repo, "staging");
    const base = commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    edit(join(repo, "staging"), "main.agent", "limit 3", "limit 2");
    const head = commitAll(repo, "head");
    git(repo, "checkout", "-q", "main");
    const gh = fakeGitHub({ pr: { headSha: head, baseSha: base, author: "alice" } });
    const run = await runAction({
      event: "pull_request",
      payload: pullRequestOpened(base, head),
      workspace: repo,
      inputs: { project: "staging", comment: "always" },
    });
    gh.done();
    expect(run.failed).toBe(false);
    const action = HASH.exec(gh.comments[0]?.body ?? "")?.[1];
    expect(action).toMatch(/^sha256:/);

    git(repo, "checkout", "-q", head);
    const cli = async (origin: string | undefined) => {
      git(repo, "remote", "remove", "origin").toString();
      if (origin) git(repo, "remote", "add", "origin", origin);
      const out = await runTerfyn(
        ["plan", "--project", "staging", "--against", base, "--json"],
        repo,
      );
      expect(out.code, out.stderr).toBe(0);
      return JSON.parse(out.stdout) as { hash: string; repository: string | null };
    };
    git(repo, "remote", "add", "origin", "https://example.invalid/x/y.git");
    const same = await cli("git@github.com:Octo-Org/Agents.git");
    expect(same.repository).toBe("github.com/octo-org/agents");
    expect(same.hash).toBe(action);
    const other = await cli("https://github.com/other-org/agents.git");
    expect(other.repository).toBe("github.com/other-org/agents");
    expect(other.hash).not.toBe(action);
    const none = await cli(undefined);
    expect(none.repository).toBeNull();
    expect(none.hash).not.toBe(action);
  });

  it("names a repository from the URL forms git accepts, and nothing from a local path", () => {
    for (const url of [
      "https://github.com/Octo-Org/agents.git",
      "https://token:x@github.com/octo-org/agents",
      "ssh://git@github.com/octo-org/agents.git",
      "git@github.com:octo-org/agents.git",
      "github.com:octo-org/agents/",
    ])
      expect(repositoryFromRemoteUrl(url), url).toBe("github.com/octo-org/agents");
    expect(repositoryFromRemoteUrl("https://ghe.example:8443/a/b.git")).toBe(
      "ghe.example:8443/a/b",
    );
    for (const url of [
      "/srv/git/agents.git",
      "file:///srv/agents",
      "../agents",
      "C:/x/y",
      "https://github.com/only",
    ])
      expect(repositoryFromRemoteUrl(url), url).toBeNull();
    expect(repositoryFromGitHub("https://GHE.example", "Acme/Agents")).toBe(
      "ghe.example/acme/agents",
    );
    expect(repositoryFromGitHub(undefined, "a/b")).toBe("github.com/a/b");
    expect(repositoryFromGitHub("https://github.com", "a/../b")).toBeNull();
  });

  it("staging/ and prod/, same name and same change: two hashes, one per project", async () => {
    const repo = newRepo();
    for (const dir of ["staging", "prod"]) copyInto(EXAMPLE, repo, dir);
    writeFileSync(join(repo, "README.md"), "two\n");
    const base = commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    for (const dir of ["staging", "prod"])
      edit(join(repo, dir), "main.agent", "limit 3", "limit 2");
    const head = commitAll(repo, "head");
    git(repo, "checkout", "-q", "main");

    const gh = fakeGitHub({ pr: { headSha: head, baseSha: base, author: "alice" } });
    const p = pullRequestOpened(base, head);
    const run = await runAction({
      event: "pull_request",
      payload: p,
      workspace: repo,
      inputs: { project: "staging\nprod", comment: "always" },
    });
    gh.done();
    expect(run.failed).toBe(false);
    const hashOf = (dir: string) =>
      HASH.exec(
        gh.comments.find((c) => c.body.includes(`terfyn:plan project=${dir}`))?.body ?? "",
      )?.[1];
    const staging = hashOf("staging");
    const prod = hashOf("prod");
    expect(staging).toMatch(/^sha256:/);
    expect(prod).toMatch(/^sha256:/);
    expect(staging).not.toBe(prod);
  });

  it("from the sources: the same files at two paths plan to two hashes, and the path is in the plan", () => {
    const files = [
      {
        path: "terfyn.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: same }\nspec: {}\n",
      },
    ];
    const v = validateProject(files);
    const prior = {
      resources: projectResources(v).resources,
      source: { source: "state" as const, ref: "x" },
    };
    const a = planProject(v, prior, { path: "staging" });
    const b = planProject(v, prior, { path: "prod" });
    if (!a.ok || !b.ok) throw new Error("must plan");
    expect(a.plan.path).toBe("staging");
    expect(a.plan.hash).not.toBe(b.plan.hash);
  });
});
