#!/usr/bin/env bash
# `npm run test:node-versions [-- MAJOR...]`: the CLI's tests on every Node that
# scripts/node-versions.sh fetches (22, the oldest supported line, and 24), and the Action
# bundle's tests on 24, the Node action.yml runs it on. Each run is Vitest started by that Node,
# so its workers are that Node too, and that Node's directory is first on PATH for whatever the
# tests start by name; TERFYN_EXPECT_NODE makes node-range.test.ts check both. Every run is made;
# the script fails when any of them fails. `npm test` runs everything on the Node that runs npm.
#
# The CLI's tests: its front door (the binary, conventions, init, the output contract, the
# goldens, signals, hostile arguments) and the core it drives (parser, checker, plan, engine,
# crash recovery, the sandbox every executed command runs in, the V8 flags it sets per V8
# version). About 80 s per Node on two cores; run-directory-guards.test.ts (another 95 s) is left
# to `npm test`.
set -uo pipefail
cd "$(dirname "$0")/.."

CLI_TESTS=(
  __tests__/node-range.test.ts
  __tests__/cli.test.ts
  __tests__/cli-conventions.test.ts
  __tests__/init.test.ts
  __tests__/output-contract.test.ts
  __tests__/golden.test.ts
  __tests__/hostile-input.test.ts
  __tests__/run-signals.test.ts
  __tests__/v8-tuning.test.ts
  __tests__/temp-root.test.ts
  __tests__/parser.test.ts
  __tests__/checker.test.ts
  __tests__/validate-corpus.test.ts
  __tests__/capability-test-command.test.ts
  __tests__/plan.test.ts
  __tests__/plan-against-git.test.ts
  __tests__/plan-from-sources.test.ts
  __tests__/plan-hash.test.ts
  __tests__/plan-identity.test.ts
  __tests__/plan-renderers.test.ts
  __tests__/engine.test.ts
  __tests__/crash-resume.test.ts
  __tests__/adapters/sandbox.test.ts
  __tests__/sandbox-escapes.test.ts
)
# The Action's bundle (dist/index.js, dist/review-fix.js), run as the runner runs it.
ACTION_TESTS=(
  __tests__/node-range.test.ts
  __tests__/action.test.ts
)
# action.yml's `runs.using` (node24).
ACTION_NODE_MAJOR="$(sed -n 's/^  using: *node\([0-9][0-9]*\) *$/\1/p' action.yml)"
if [ -z "$ACTION_NODE_MAJOR" ]; then
  echo "scripts/test-node-versions.sh: no \`using: node<major>\` in action.yml" >&2
  exit 1
fi

binaries="$(bash scripts/node-versions.sh "$@")" || exit 1
failed=()
summary=()

# run LABEL NODE FILE...
run() {
  local label="$1" node="$2"
  shift 2
  local version start status
  version="$("$node" --version)"
  echo "== $label on Node $version: $# files" >&2
  start=$SECONDS
  # The sandbox shows that Node's directory read-only, as the sandboxed `node` of the tests needs.
  PATH="$(dirname "$node"):$PATH" TERFYN_EXPECT_NODE="$version" \
    TERFYN_SANDBOX_READ_ONLY="$(dirname "$node")${TERFYN_SANDBOX_READ_ONLY:+:$TERFYN_SANDBOX_READ_ONLY}" \
    "$node" node_modules/vitest/vitest.mjs run "$@"
  status=$?
  summary+=("$label on Node $version: $([ "$status" = 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s")
  [ "$status" = 0 ] || failed+=("$label on Node $version")
}

while IFS= read -r node; do
  [ -n "$node" ] || continue
  run "CLI tests" "$node" "${CLI_TESTS[@]}"
  if [ "$("$node" -p 'process.versions.node.split(".")[0]')" = "$ACTION_NODE_MAJOR" ]; then
    run "Action tests" "$node" "${ACTION_TESTS[@]}"
  fi
done <<<"$binaries"

echo >&2
printf 'test:node-versions: %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'test:node-versions: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
