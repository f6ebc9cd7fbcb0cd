#!/usr/bin/env bash
# Installs the official Python MCP SDK into a virtual environment for the sneaky-mcp client test
# (tests/mcp/client_test.py, driven by tests/suite/mcp_client.rs). Idempotent: an existing venv that
# already has the SDK is left as it is.
#
# The venv lives at "${CARGO_TARGET_DIR:-target}/mcp-venv" (relative to the repository root when
# CARGO_TARGET_DIR is unset or relative), where the test looks for it.
set -euo pipefail

cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac
venv="$target/mcp-venv"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'from mcp import Client, StdioServerParameters' 2>/dev/null; then
  echo "setup-mcp: $venv already has the mcp SDK ($("$venv/bin/python" -m pip show mcp 2>/dev/null | sed -n 's/^Version: //p'))"
  exit 0
fi

mkdir -p "$target"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<3'
"$venv/bin/python" -c 'from mcp import Client, StdioServerParameters'
echo "setup-mcp: installed mcp $("$venv/bin/python" -m pip show mcp | sed -n 's/^Version: //p') into $venv"
