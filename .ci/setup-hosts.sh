#!/usr/bin/env bash
# Installs the outside clients the host tests drive, from their registries, under the target
# directory (nothing global):
#   - npm, into "$target/hosts-npm": the official TypeScript MCP SDK (its client calls every
#     tool of sneaky-mcp: tests/mcp/ts_client_test.cjs), ajv (strict mode compiles every schema)
#     and gpt-tokenizer (o200k_base, for benches/tokens.sh);
#   - pip, into the venv "$target/hosts-venv": the OpenAI and Anthropic Python SDKs
#     (tests/hosts/sdk_test.py: the strict, Responses and Anthropic tool exports) and Google's
#     Gen AI SDK (tests/hosts/gemini_test.py: the Gemini export against its types).
# Driven by tests/suite/mcp_client.rs and tests/suite/agent_sdk.rs, which skip (and say so) when
# these are missing. Idempotent: what is already installed is left as it is.
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

NPM_PACKAGES=('@modelcontextprotocol/sdk@^1.32' 'ajv@^8.17' 'gpt-tokenizer@^3.0.0 || ^4.0.0')
PIP_PACKAGES=('openai>=2,<4' 'anthropic>=0.70,<3' 'google-genai>=1.30,<4')

# --- npm
if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq nodejs npm >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; }
fi
npm_dir="$target/hosts-npm"
have_npm() {
  [ -f "$npm_dir/node_modules/@modelcontextprotocol/sdk/package.json" ] &&
    [ -f "$npm_dir/node_modules/ajv/package.json" ] &&
    [ -f "$npm_dir/node_modules/gpt-tokenizer/package.json" ]
}
if have_npm; then
  echo "setup-hosts: $npm_dir already has the npm packages"
else
  mkdir -p "$npm_dir"
  [ -f "$npm_dir/package.json" ] || printf '{"name":"sneaky-hosts-tests","private":true}\n' >"$npm_dir/package.json"
  npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}"
  have_npm
  echo "setup-hosts: installed ${NPM_PACKAGES[*]} into $npm_dir"
fi

# --- pip
venv="$target/hosts-venv"
python="${PYTHON:-python3}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import openai, anthropic, google.genai' 2>/dev/null; then
  echo "setup-hosts: $venv already has the openai, anthropic and google-genai SDKs"
else
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PIP_PACKAGES[@]}"
  "$venv/bin/python" -c 'import openai, anthropic, google.genai'
  echo "setup-hosts: installed ${PIP_PACKAGES[*]} into $venv"
fi
