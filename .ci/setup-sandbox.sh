#!/usr/bin/env bash
# What the sandbox tests (tests/suite/sandbox.rs) need beyond the toolchain: a C compiler for
# the fork-hopper test, make and git for the usability checks, curl for the host-list
# network tests (tests/suite/sandbox_net.rs). Idempotent; as a normal user
# it only reports what is missing (those tests then skip loudly).
set -euo pipefail
missing=()
for tool in cc make git curl; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-sandbox: cc, make, git and curl present"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-sandbox: missing ${missing[*]} (not root: the tests that need them skip)"
  exit 0
fi
apt-get install -y -qq gcc make git curl >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq gcc make git curl >/dev/null; }
echo "setup-sandbox: installed gcc make git curl"
