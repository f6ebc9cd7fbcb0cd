#!/usr/bin/env bash
# What a model reads costs tokens: count them for a fixed set of calls on a real tree, ours
# (the text of sneaky-mcp's tool results, which is also what sneaky-agent sends its model)
# against the plain tools a model would otherwise run (`cat`, `rg --heading -n`, `ls`,
# `rg --files`), and print the table with the ratio (ours / plain; target ≤ 1.1×). The JSON
# result (structuredContent, and what the text used to be) is shown beside it.
#
# Tokens are counted with gpt-tokenizer's o200k_base encoding (GPT-4o and later), in node.
#
# Usage: benches/tokens.sh [TREE]
# TREE defaults to the serde_json sources this project builds with (Cargo.lock pins the
# version, so the numbers are comparable from run to run), found in cargo's registry.
# Needs node, ripgrep, and the npm packages of .ci/setup-hosts.sh (it runs it when they are
# missing).
set -euo pipefail
cd "$(dirname "$0")/.."

target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
if [ -z "${1:-}" ]; then
  version=$(grep -A1 '^name = "serde_json"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p' | head -n 1)
  TREE=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"serde_json-$version" | head -n 1)
else
  TREE=$1
fi
TREE=$(cd "$TREE" && pwd -P)
command -v rg >/dev/null || { echo "missing rg (apt-get install ripgrep)"; exit 1; }
[ -f "$target/hosts-npm/node_modules/gpt-tokenizer/package.json" ] || bash .ci/setup-hosts.sh
cargo build --quiet --bin sneaky-mcp

export NODE_PATH="$target/hosts-npm/node_modules" TREE MCP="$target/debug/sneaky-mcp"
node - <<'EOF'
'use strict';
const { execFileSync } = require('child_process');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { encode } = require('gpt-tokenizer/encoding/o200k_base');

const tree = process.env.TREE;
const plain = (cmd, args) => execFileSync(cmd, args, { cwd: tree, encoding: 'utf8', maxBuffer: 1 << 26 });

// [label, tool, arguments, plain command]
const CALLS = [
  ['read src/lib.rs', 'read_file', { file_path: 'src/lib.rs' }, ['cat', ['src/lib.rs']]],
  ['read src/de.rs', 'read_file', { file_path: 'src/de.rs' }, ['cat', ['src/de.rs']]],
  ['read src/map.rs 100-199', 'read_file', { file_path: 'src/map.rs', offset: 100, limit: 100 },
    ['sed', ['-n', '100,199p', 'src/map.rs']]],
  ['grep "fn deserialize" src', 'grep_files', { pattern: 'fn deserialize', path: 'src' },
    ['rg', ['--heading', '-n', '--sort', 'path', 'fn deserialize', 'src']]],
  ['grep "Error::syntax" src', 'grep_files', { pattern: 'Error::syntax', path: 'src' },
    ['rg', ['--heading', '-n', '--sort', 'path', 'Error::syntax', 'src']]],
  ['grep -C2 "fn peek" src', 'grep_files', { pattern: 'fn peek', path: 'src', context: 2 },
    ['rg', ['--heading', '-n', '--sort', 'path', '-C2', 'fn peek', 'src']]],
  ['grep -l "impl" src', 'grep_files', { pattern: 'impl', path: 'src', output_mode: 'files_with_matches' },
    ['rg', ['-l', '--sort', 'path', 'impl', 'src']]],
  ['grep -c "impl" src', 'grep_files', { pattern: 'impl', path: 'src', output_mode: 'count' },
    ['rg', ['-c', '--sort', 'path', 'impl', 'src']]],
  ['find *.rs', 'find_files', { pattern: '*.rs' },
    ['rg', ['--files', '--sort', 'path', '-g', '*.rs']]],
  ['list src', 'list_dir', { directory_path: 'src' }, ['ls', ['-1pA', 'src']]],
  ['list .', 'list_dir', { directory_path: '.' }, ['ls', ['-1pA']]],
  ['list -R src', 'list_dir', { directory_path: 'src', recursive: true }, ['ls', ['-1pAR', 'src']]],
];

const tokens = (text) => encode(text).length;

async function main() {
  const transport = new StdioClientTransport({
    command: process.env.MCP, args: ['--root', tree, '--read-only'], stderr: 'inherit',
  });
  const client = new Client({ name: 'sneaky-tokens-bench', version: '1.0.0' });
  await client.connect(transport);
  const rows = [];
  const totals = { plain: 0, ours: 0, json: 0 };
  for (const [label, tool, args, [cmd, cmdArgs]] of CALLS) {
    const result = await client.callTool({ name: tool, arguments: args });
    if (result.isError) throw new Error(`${label}: ${result.content[0].text}`);
    const ours = tokens(result.content.map((c) => c.text).join(''));
    const json = tokens(JSON.stringify(result.structuredContent));
    const reference = tokens(plain(cmd, cmdArgs));
    totals.plain += reference; totals.ours += ours; totals.json += json;
    rows.push([label, `${cmd} ${cmdArgs.join(' ')}`, reference, ours, ours / reference, json]);
  }
  await client.close();
  rows.push(['total', '', totals.plain, totals.ours, totals.ours / totals.plain, totals.json]);
  const header = ['call', 'plain command', 'plain', 'ours (text)', 'ours/plain', 'JSON result'];
  const cells = [header, ...rows.map((r) =>
    [r[0], r[1], r[2].toLocaleString('en'), r[3].toLocaleString('en'), `${r[4].toFixed(2)}×`,
     r[5].toLocaleString('en')])];
  const widths = header.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  console.log(`tree: ${tree}; tokens: o200k_base (gpt-tokenizer); target ours/plain ≤ 1.10×\n`);
  for (const c of cells) {
    console.log(c.map((v, i) => (i >= 2 ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join('  '));
  }
  const worst = Math.max(...rows.map((r) => r[4]));
  console.log(`\nworst ratio ${worst.toFixed(2)}× (${worst <= 1.1 ? 'within' : 'over'} the 1.10× target)`);
}

main().catch((e) => { console.error(e); process.exit(1); });
EOF
