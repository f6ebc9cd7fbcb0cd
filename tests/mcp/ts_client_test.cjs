// Drive sneaky-mcp with the official TypeScript MCP SDK's client (what Claude Code, VS Code,
// Cursor and the MCP Inspector build on), and compile every schema with ajv in strict mode.
//
// Usage: node ts_client_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT EXPORTS_JSON [structured|text]
//
// WORKSPACE_ROOT holds hello.txt ("hello world\n") and src/lib.rs ("pub fn answer() -> u32 {\n
// 42\n}\n"); secret.txt lies beside it, outside. EXPORTS_JSON is an object mapping each
// `sneaky-agent tools --format` name to its output. Run by tests/suite/mcp_client.rs with
// NODE_PATH pointing at the packages .ci/setup-hosts.sh installs. Every tool is called with a
// valid and with a failing call: each must come back as a result (the SDK validates
// structuredContent against outputSchema, and throws when it does not match), never as a thrown
// error. The last argument is the shape the server is made to serve (--structured-content on or
// off, src/mcp/shape.rs): "structured" (the default) declares outputSchema and carries
// structuredContent; "text" declares no outputSchema and results are content blocks only, which
// the SDK must accept as they are. Prints one line per check and exits non-zero after the first
// failure.
'use strict';

const fs = require('fs');
const path = require('path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { LATEST_PROTOCOL_VERSION } = require('@modelcontextprotocol/sdk/types.js');
const Ajv2020 = require('ajv/dist/2020').default;

function check(condition, message) {
  if (!condition) {
    throw new Error(`check failed: ${message}`);
  }
  console.log(`ok: ${message}`);
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

// ajv in strict mode: unknown keywords or formats, ignored keywords and ambiguous types all
// throw at compile time.
function compileStrict(schema, what) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  try {
    ajv.compile(schema);
  } catch (e) {
    throw new Error(`check failed: ajv strict refuses ${what}: ${e.message}`);
  }
}

function compileExports(exportsPath) {
  const exported = JSON.parse(fs.readFileSync(exportsPath, 'utf8'));
  let count = 0;
  for (const tool of exported.mcp) {
    compileStrict(tool.inputSchema, `mcp ${tool.name} inputSchema`);
    compileStrict(tool.outputSchema, `mcp ${tool.name} outputSchema`);
    count += 2;
  }
  for (const tool of exported.openai) {
    compileStrict(tool.function.parameters, `openai ${tool.function.name} parameters`);
    count += 1;
  }
  for (const tool of exported['openai-strict']) {
    compileStrict(tool.function.parameters, `openai strict ${tool.function.name} parameters`);
    count += 1;
  }
  for (const tool of exported['openai-responses']) {
    compileStrict(tool.parameters, `openai-responses ${tool.name} parameters`);
    count += 1;
  }
  for (const tool of exported.anthropic) {
    compileStrict(tool.input_schema, `anthropic ${tool.name} input_schema`);
    count += 1;
  }
  check(exported.mcp.some((t) => t.name === 'finish'), 'the exports include finish');
  check(true, `ajv strict compiles all ${count} exported schemas`);
}

const PATCH = [
  '--- a/src/lib.rs',
  '+++ b/src/lib.rs',
  '@@ -1,3 +1,3 @@',
  ' pub fn answer() -> u32 {',
  '-    42',
  '+    43',
  ' }',
  '',
].join('\n');

const STALE_PATCH = PATCH.replace('-    42', '-    41');

// Per tool: a call that works and a call that fails with the code it must give. They run in
// this order (the delete removes what the write made).
const CALLS = [
  ['read_file', { file_path: 'hello.txt' }, { file_path: '../secret.txt' }, 'outside_workspace'],
  ['list_dir', { directory_path: '.' }, { directory_path: 'no/such/dir' }, 'not_found'],
  ['grep_files', { pattern: 'fn answer' }, { pattern: 'fn (' }, 'invalid_args'],
  ['find_files', { pattern: '*.rs' }, { pattern: '*.rs', nope: 1 }, 'invalid_args'],
  ['outline', { path: 'src/lib.rs' }, { path: 'hello.txt' }, 'invalid_args'],
  ['find_symbol', { name: 'answer' }, { name: 'answer', kind: 'nope' }, 'invalid_args'],
  ['find_references', { name: 'answer' }, { name: 'answer', path: 'no/such/dir' }, 'not_found'],
  ['repo_map', { max_tokens: 256 }, { max_tokens: 1 }, 'invalid_args'],
  ['write_file', { file_path: 'out/new.txt', content: 'made by ts\n' },
    { file_path: '../escape.txt', content: 'x' }, 'outside_workspace'],
  ['make_dir', { directory_path: 'made/deep' }, { directory_path: 'hello.txt' }, 'already_exists'],
  ['delete_file', { file_path: 'out/new.txt' }, { file_path: 'missing.txt' }, 'not_found'],
  ['str_replace', { file_path: 'hello.txt', old_str: 'world', new_str: 'there' },
    { file_path: 'hello.txt', old_str: 'absent text', new_str: 'x' }, 'no_match'],
  ['patch_apply', { file_path: 'src/lib.rs', patch: PATCH },
    { file_path: 'src/lib.rs', patch: STALE_PATCH }, 'patch_rejected'],
  ['run_command', { command: 'ls' }, { command: 'sudo ls' }, 'command_denied'],
  // Takes back the patch above (the command changed nothing).
  ['undo', {}, { change_id: 'c0-0-0' }, 'not_found'],
  // A background job (cat) to write to, then ended.
  ['job_input', async (client) => ({ job_id: await startJob(client), input: 'hi\n' }),
    { job_id: 'no-such-job', input: 'x' }, 'not_found'],
  ['job_output', async () => ({ job_id: JOB.id, wait_for: 'hi', wait_ms: 5000 }),
    { job_id: 'no-such-job' }, 'not_found'],
];

const JOB = { id: null };

// "structured" or "text" (from the command line).
let SHAPE = 'structured';

async function startJob(client) {
  const started = await client.callTool({
    name: 'run_command', arguments: { command: 'cat', background: true, wait_ms: 0 },
  });
  if (SHAPE === 'structured') {
    check(!started.isError && started.structuredContent.running === true,
      `a background job starts: ${textOf(started).slice(0, 80)}`);
    JOB.id = started.structuredContent.job_id;
  } else {
    // The text says it: "job ID is running in the background …".
    const running = /^job (\S+) is running in the background/.exec(textOf(started));
    check(!started.isError && running !== null,
      `a background job starts: ${textOf(started).slice(0, 80)}`);
    JOB.id = running[1];
  }
  return JOB.id;
}

async function callAll(client, tools, root) {
  const listed = new Set(tools.map((t) => t.name));
  const exercised = new Set(CALLS.map((c) => c[0]));
  for (const name of listed) {
    check(exercised.has(name), `${name} is exercised by this test`);
  }
  for (const [name, makeGood, bad, code] of CALLS) {
    const good = typeof makeGood === 'function' ? await makeGood(client) : makeGood;
    if (!listed.has(name)) {
      throw new Error(`check failed: ${name} is not listed`);
    }
    let result;
    try {
      result = await client.callTool({ name, arguments: good });
    } catch (e) {
      throw new Error(`check failed: ${name} ${JSON.stringify(good)} threw: ${e.message}`);
    }
    check(!result.isError, `${name} succeeds: ${textOf(result).slice(0, 60)}`);
    if (SHAPE === 'structured') {
      check(result.structuredContent && typeof result.structuredContent === 'object',
        `${name}: the result object is structuredContent (the SDK validated it)`);
    } else {
      check(result.structuredContent === undefined
        && result.content.every((c) => c.type === 'text' || c.type === 'image'),
      `${name}: content blocks only (text shape)`);
    }
    const text = textOf(result);
    check(text.length > 0 && !text.startsWith('{'), `${name}: the text is for a model, not JSON`);

    try {
      result = await client.callTool({ name, arguments: bad });
    } catch (e) {
      throw new Error(`check failed: failing ${name} ${JSON.stringify(bad)} threw: ${e.message}`);
    }
    const failure = textOf(result);
    check(result.isError === true, `failing ${name} is an isError result, not a thrown error`);
    check(result.structuredContent === undefined, `failing ${name} has no structuredContent`);
    const match = /^([a-z_]+): (.+)/s.exec(failure);
    check(match !== null, `failing ${name}: text is CODE: message (${failure.slice(0, 80)})`);
    if (code !== null) {
      check(match[1] === code, `failing ${name}: code ${match[1]} is ${code}`);
    }
  }
  check(!fs.existsSync(path.join(root, '..', 'escape.txt')), 'nothing was written outside');
  check(fs.readFileSync(path.join(root, 'hello.txt'), 'utf8') === 'hello there\n',
    'str_replace changed hello.txt');
}

async function main() {
  const [binary, root, exportsPath, shape = 'structured'] = process.argv.slice(2);
  if (!exportsPath || !['structured', 'text'].includes(shape)) {
    console.error(
      'usage: ts_client_test.cjs SNEAKY_MCP_BINARY WORKSPACE_ROOT EXPORTS_JSON [structured|text]');
    process.exit(2);
  }
  SHAPE = shape;
  compileExports(exportsPath);

  const transport = new StdioClientTransport({
    command: binary,
    args: ['--root', root, '--structured-content', SHAPE === 'structured' ? 'on' : 'off'],
    env: process.env,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'sneaky-ts-test', version: '1.0.0' });
  await client.connect(transport);
  check(client.getServerVersion().name === 'sneaky-mcp', 'server identifies as sneaky-mcp');

  const { tools } = await client.listTools();
  check(tools.length === CALLS.length && !tools.some((t) => t.name === 'finish'),
    `every tool but finish listed: ${tools.map((t) => t.name)}`);
  for (const tool of tools) {
    compileStrict(tool.inputSchema, `${tool.name} inputSchema`);
    if (SHAPE === 'structured') {
      compileStrict(tool.outputSchema, `${tool.name} outputSchema`);
    } else {
      check(tool.outputSchema === undefined, `${tool.name}: no outputSchema (text shape)`);
    }
  }
  check(true, `ajv strict compiles every listed schema (${SHAPE} shape)`);

  await callAll(client, tools, root);

  // An unknown tool is a protocol error, which the SDK throws as McpError (-32602).
  try {
    await client.callTool({ name: 'finish', arguments: { message: 'x' } });
    check(false, 'finish is not callable over MCP');
  } catch (e) {
    check(e.code === -32602, `finish over MCP is -32602 (unknown tool): ${e.message}`);
  }
  await client.close();
  console.log(`all TypeScript MCP client checks passed (${SHAPE} shape)`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
