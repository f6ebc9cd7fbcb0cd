// The user's hooks seen through the official TypeScript MCP SDK's stdio client: a hook written
// for Claude Code (tests/hooks/claude_code_guard.py, `names = "claude"`) blocks, rewrites and
// annotates calls made over MCP, and a hook's `ask` blocks (nobody is asked over MCP).
//
// Usage: node ts_hooks_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT XDG_CONFIG_HOME XDG_STATE_HOME
//
// The user's configuration under XDG_CONFIG_HOME is written by tests/suite/hooks.rs: the Claude
// Code hook on Bash, Write and Edit (before and after), and a hook that asks on read_file. Run
// with NODE_PATH pointing at the packages .ci/setup-hosts.sh installs. Prints one line per check
// and exits non-zero after the first failure.
'use strict';

const fs = require('fs');
const path = require('path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

function check(condition, message) {
  if (!condition) {
    throw new Error(`check failed: ${message}`);
  }
  console.log(`ok: ${message}`);
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function main() {
  const [binary, root, xdgConfig, xdgState] = process.argv.slice(2);
  const transport = new StdioClientTransport({
    command: binary,
    args: ['--root', root],
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      XDG_CONFIG_HOME: xdgConfig,
      XDG_STATE_HOME: xdgState,
      SNEAKY_CEILING_DIRECTORIES: path.dirname(root),
    },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'hooks-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);

  let r = await client.callTool({ name: 'write_file', arguments: { file_path: '.env', content: 'KEY=1\n' } });
  check(r.isError === true, 'a Write to .env is refused');
  check(textOf(r).startsWith('hook_denied:'), `the refusal is hook_denied: ${textOf(r)}`);
  check(textOf(r).includes('.env is a protected file'), 'with the hook\'s reason');
  check(!fs.existsSync(path.join(root, '.env')), 'and nothing was written');

  r = await client.callTool({ name: 'write_file', arguments: { file_path: 'tool.py', content: 'print(1)\n' } });
  check(r.isError !== true, `a Write of a Python file goes through: ${textOf(r)}`);
  check(
    fs.readFileSync(path.join(root, 'tool.py'), 'utf8') === "# Checked by the team's hook.\nprint(1)\n",
    'as the hook rewrote it (updatedInput)',
  );
  check(
    textOf(r).includes('hook_context: Remember to run the tests for'),
    `the PostToolUse context follows the result: ${textOf(r)}`,
  );

  r = await client.callTool({ name: 'run_command', arguments: { command: 'grep -r TODO .' } });
  check(r.isError === true && textOf(r).startsWith('hook_denied:'), `grep is refused: ${textOf(r)}`);
  check(textOf(r).includes("Use 'rg' (ripgrep) instead of 'grep'"), 'with the stderr of exit 2');

  r = await client.callTool({ name: 'run_command', arguments: { command: 'echo once' } });
  check(r.isError !== true && textOf(r).includes('once'), `an allowed command runs: ${textOf(r)}`);

  r = await client.callTool({ name: 'read_file', arguments: { file_path: 'tool.py' } });
  check(r.isError === true && textOf(r).startsWith('hook_denied:'), `ask blocks over MCP: ${textOf(r)}`);
  check(textOf(r).includes('a person should see this read'), 'with the hook\'s reason');

  await client.close();
  console.log('all TypeScript hook checks passed');
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
