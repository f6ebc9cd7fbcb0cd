#!/usr/bin/env bash
# Installs the agent hosts that tests/agents/hosts_test.mjs runs against a mock model (driven by
# tests/suite/agent_hosts.rs), from npm, under the target directory (nothing global):
# Codex CLI (@openai/codex), Claude Code (@anthropic-ai/claude-code) and opencode
# (opencode-ai), into "$target/agents-npm". Each package carries its native binary in a
# platform package; Claude Code's and opencode's install scripts put it in place, and when npm
# holds install scripts back (ignore-scripts) they are run here. Idempotent: hosts that already
# answer --version are left as they are.
#
# "$target" is "${CARGO_TARGET_DIR:-target}", relative to the repository root when relative.
set -euo pipefail

cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
mkdir -p "$target"

# Newer releases within these ranges are taken: the test is there to fail when one changes
# what the model reads.
PACKAGES=('@openai/codex@>=0.171.0 <1' '@anthropic-ai/claude-code@^2.1.197' 'opencode-ai@^1.18.33')

if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq nodejs npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; }
fi
dir="$target/agents-npm"
bin="$dir/node_modules/.bin"

answers() {
  [ -x "$bin/$1" ] && "$bin/$1" --version >/dev/null 2>&1
}
all_answer() {
  answers codex && answers claude && answers opencode
}

if all_answer; then
  echo "setup-agents: $dir already has codex $("$bin/codex" --version | awk '{print $NF}'), claude $("$bin/claude" --version | awk '{print $1}'), opencode $("$bin/opencode" --version)"
  exit 0
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || printf '{"name":"sneaky-agents-tests","private":true}\n' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}"
# The install scripts, when npm did not run them: they move the platform package's binary into
# place (Claude Code) or check it and link it (opencode).
if ! answers claude; then
  (cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs)
fi
if ! answers opencode; then
  (cd "$dir/node_modules/opencode-ai" && node postinstall.mjs)
fi
for host in codex claude opencode; do
  if ! answers "$host"; then
    echo "setup-agents: $host does not run after installing: $("$bin/$host" --version 2>&1 | head -5)" >&2
    exit 1
  fi
done
echo "setup-agents: installed codex $("$bin/codex" --version | awk '{print $NF}'), claude $("$bin/claude" --version | awk '{print $1}'), opencode $("$bin/opencode" --version) into $dir"
