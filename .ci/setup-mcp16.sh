#!/usr/bin/env bash
# Installs the official TypeScript MCP SDK (npm @modelcontextprotocol/sdk) for the sneaky-mcp
# concurrency/HTTP client test (tests/mcp/concurrency_test.mjs, driven by
# tests/suite/mcp_concurrency.rs). The Python SDK it also uses comes from .ci/setup-mcp.sh.
# Idempotent: an existing install with the SDK is left as it is.
#
# The packages live in "${CARGO_TARGET_DIR:-target}/mcp-node/node_modules" (relative to the
# repository root when CARGO_TARGET_DIR is unset or relative), where the test looks for them.
set -euo pipefail

cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
dir="$target/mcp-node"
sdk="$dir/node_modules/@modelcontextprotocol/sdk/package.json"

if [ -f "$sdk" ]; then
  echo "setup-mcp16: $dir already has @modelcontextprotocol/sdk $(node -p "require('$sdk').version")"
  exit 0
fi
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq nodejs npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; }
  else
    echo "setup-mcp16: npm is missing (install Node.js 18+); the TypeScript client test will skip" >&2
    exit 0
  fi
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"sneaky-mcp-test-clients","private":true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error '@modelcontextprotocol/sdk@^1.32'
echo "setup-mcp16: installed @modelcontextprotocol/sdk $(node -p "require('$sdk').version") into $dir"
