// Start sneaky-mcp as desktop hosts do, through the official TypeScript MCP SDK's stdio client
// (what Claude Desktop, VS Code and Cursor build on): no --root, in a directory that is no
// project, with an empty home directory.
//
// Usage: node ts_host_start_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT START_DIR HOME_DIR
//
// WORKSPACE_ROOT holds hello.txt ("hello world\n"); START_DIR (the server's working directory)
// and HOME_DIR are empty and lie in no project (SNEAKY_CEILING_DIRECTORIES stops the search at
// START_DIR). Run by tests/suite/mcp_client.rs with NODE_PATH pointing at the packages
// .ci/setup-hosts.sh installs. Prints one line per check and exits non-zero after the first
// failure.
'use strict';

const { pathToFileURL } = require('url');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ListRootsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

function check(condition, message) {
  if (!condition) {
    throw new Error(`check failed: ${message}`);
  }
  console.log(`ok: ${message}`);
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

// roots: undefined (none offered), an array of directories, or 'never' (offered, never answered).
async function connect(binary, start, home, args, roots) {
  const transport = new StdioClientTransport({
    command: binary,
    args,
    cwd: start,
    // A desktop host's environment: an empty home, no configuration.
    env: { PATH: process.env.PATH, HOME: home, SNEAKY_CEILING_DIRECTORIES: start },
    stderr: 'ignore',
  });
  const capabilities = roots === undefined ? {} : { roots: { listChanged: true } };
  const client = new Client({ name: 'host-start-test', version: '1.0.0' }, { capabilities });
  let asked = false;
  if (roots !== undefined) {
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      asked = true;
      if (roots === 'never') {
        return new Promise(() => {});
      }
      return { roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href })) };
    });
  }
  await client.connect(transport);
  return { client, wasAsked: () => asked };
}

async function names(client) {
  return new Set((await client.listTools()).tools.map((t) => t.name)).size;
}

async function main() {
  const [binary, root, start, home] = process.argv.slice(2);
  if (!home) {
    console.error('usage: node ts_host_start_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT START_DIR HOME_DIR');
    process.exit(2);
  }
  let s = await connect(binary, start, home, ['--root', root]);
  const reference = await names(s.client);
  await s.client.close();
  check(reference > 4, `the reference list has ${reference} tools`);

  s = await connect(binary, start, home, []);
  check((await names(s.client)) === reference, 'without a root every tool is listed');
  let r = await s.client.callTool({ name: 'read_file', arguments: { file_path: 'hello.txt' } });
  const text = textOf(r);
  check(r.isError === true && r.structuredContent === undefined, `a call is a tool error: ${text}`);
  check(text.startsWith('invalid_args: no workspace') && text.includes('--root') && text.includes('roots'),
    "its text says how to give a root (--root, or the host's roots)");
  await s.client.close();

  s = await connect(binary, start, home, [], [root, start]);
  check((await names(s.client)) === reference, 'with roots every tool is listed');
  r = await s.client.callTool({ name: 'read_file', arguments: { file_path: 'hello.txt' } });
  check(!r.isError && r.structuredContent.content === 'hello world\n',
    `the host's first root is the workspace: ${textOf(r)}`);
  await s.client.close();

  s = await connect(binary, start, home, [], 'never');
  const began = performance.now();
  const count = await names(s.client);
  const took = performance.now() - began;
  check(count === reference, 'roots unanswered: every tool is listed');
  check(took < 1000, `roots unanswered: tools/list answered within 1 s (${took.toFixed(0)} ms)`);
  check(s.wasAsked(), 'the server did ask roots/list');
  await s.client.close();
  console.log('all TypeScript host start-up checks passed');
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
