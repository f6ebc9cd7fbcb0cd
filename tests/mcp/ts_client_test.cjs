// Drive sneaky-mcp with the official TypeScript MCP SDK's client (what Claude Code, VS Code,
// Cursor and the MCP Inspector build on), and compile every schema with ajv in strict mode.
//
// Usage: node ts_client_test.cjs SNEAKY_MCP_BINARY BASE_DIR EXPORTS_JSON CALLS_JSON [structured|text]
//
// CALLS_JSON holds each tool's own calls (`Doc::calls` in its module, written out by
// tests/suite/mcp_client.rs): {"calls": [{name, files, before, works, fails, code}], "unlisted":
// [names]}. For each tool a fresh workspace BASE_DIR/<name>/ws is made holding `files`, a server
// is started on it, the `before` calls (of other tools) are made, then `works`, which must
// succeed (`$JOB` in it stands for the job id the calls before returned), and `fails`, which must
// fail with `code`. EXPORTS_JSON is an object mapping each `sneaky-agent tools --format` name to
// its output. Run by tests/suite/mcp_client.rs with NODE_PATH pointing at the packages
// .ci/setup-hosts.sh installs. Every call must come back as a result (the SDK validates
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
  check(true, `ajv strict compiles all ${count} exported schemas`);
}

// "structured" or "text" (from the command line).
let SHAPE = 'structured';

async function callTool(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    throw new Error(`check failed: ${name} ${JSON.stringify(args)} threw: ${e.message}`);
  }
}

// The job a call started: its id from the result object, or from the text, which says it
// ("job ID is running in the background …").
function startedJob(result) {
  if (SHAPE === 'structured') {
    return result.structuredContent && result.structuredContent.job_id;
  }
  const running = /^job (\S+) is running in the background/.exec(textOf(result));
  return running && running[1];
}

async function connect(binary, root) {
  const transport = new StdioClientTransport({
    command: binary,
    args: ['--root', root, '--structured-content', SHAPE === 'structured' ? 'on' : 'off'],
    env: process.env,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'sneaky-ts-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// One tool's calls, in a workspace of its own.
async function callOne(client, call, root) {
  const { name, before, works, fails, code } = call;
  let job = null;
  for (const [other, args] of before) {
    const result = await callTool(client, other, args);
    check(!result.isError, `${name}: ${other} first: ${textOf(result).slice(0, 60)}`);
    job = startedJob(result) || job;
  }
  let good = works;
  if (JSON.stringify(works).includes('$JOB')) {
    check(job !== null && job !== undefined, `${name}: a call before started a job`);
    good = JSON.parse(JSON.stringify(works).split('$JOB').join(job));
  }
  let result = await callTool(client, name, good);
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

  result = await callTool(client, name, fails);
  const failure = textOf(result);
  check(result.isError === true, `failing ${name} is an isError result, not a thrown error`);
  check(result.structuredContent === undefined, `failing ${name} has no structuredContent`);
  const match = /^([a-z_]+): (.+)/s.exec(failure);
  check(match !== null, `failing ${name}: text is CODE: message (${failure.slice(0, 80)})`);
  check(match[1] === code, `failing ${name}: code ${match[1]} is ${code}`);
  const beside = fs.readdirSync(path.dirname(root));
  check(beside.length === 1, `${name}: nothing was written outside the workspace (${beside})`);
}

async function main() {
  const [binary, base, exportsPath, callsPath, shape = 'structured'] = process.argv.slice(2);
  if (!callsPath || !['structured', 'text'].includes(shape)) {
    console.error('usage: ts_client_test.cjs SNEAKY_MCP_BINARY BASE_DIR EXPORTS_JSON CALLS_JSON '
      + '[structured|text]');
    process.exit(2);
  }
  SHAPE = shape;
  compileExports(exportsPath);
  const { calls, unlisted } = JSON.parse(fs.readFileSync(callsPath, 'utf8'));
  const exported = JSON.parse(fs.readFileSync(exportsPath, 'utf8'));
  for (const name of unlisted) {
    check(exported.mcp.some((t) => t.name === name), `the exports include ${name}`);
  }
  let listedChecked = false;
  for (const call of calls) {
    const root = path.join(base, call.name, 'ws');
    for (const [file, content] of Object.entries(call.files)) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), content);
    }
    fs.mkdirSync(root, { recursive: true });
    const client = await connect(binary, root);
    if (!listedChecked) {
      check(client.getServerVersion().name === 'sneaky-mcp', 'server identifies as sneaky-mcp');
      const { tools } = await client.listTools();
      const listed = tools.map((t) => t.name).sort();
      const called = calls.map((c) => c.name).sort();
      check(JSON.stringify(listed) === JSON.stringify(called),
        `every tool listed is called, and only those: ${listed}`);
      for (const tool of tools) {
        compileStrict(tool.inputSchema, `${tool.name} inputSchema`);
        if (SHAPE === 'structured') {
          compileStrict(tool.outputSchema, `${tool.name} outputSchema`);
        } else {
          check(tool.outputSchema === undefined, `${tool.name}: no outputSchema (text shape)`);
        }
      }
      check(true, `ajv strict compiles every listed schema (${SHAPE} shape)`);
      // A tool the server does not list is a protocol error, which the SDK throws as McpError
      // (-32602).
      for (const name of unlisted) {
        try {
          await client.callTool({ name, arguments: {} });
          check(false, `${name} is not callable over MCP`);
        } catch (e) {
          check(e.code === -32602, `${name} over MCP is -32602 (unknown tool): ${e.message}`);
        }
      }
      listedChecked = true;
    }
    await callOne(client, call, root);
    await client.close();
  }
  console.log(`all TypeScript MCP client checks passed (${SHAPE} shape)`);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
