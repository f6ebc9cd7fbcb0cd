// The official MCP conformance suite (npm @modelcontextprotocol/conformance) against
// `sneaky-mcp --http`: every server scenario that applies to a file toolbox must pass.
//
// Usage: node conformance_run.mjs SNEAKY_MCP_BINARY WORKSPACE_ROOT SUITE_NODE_MODULES
//
// The suite has no option for a bearer token, so it talks to a proxy started here that adds
// `Authorization: Bearer TOKEN` to each request and passes everything else through unchanged
// (Host and Origin included, which dns-rebinding-protection relies on; event streams are piped
// as they come). Run by tests/suite/conformance.rs with the Node.js and the suite that
// .ci/setup-conformance.sh installs. Every scenario the suite lists must be classified below:
// a new one fails this run until it is.
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';

// The scenarios that apply, and must pass.
const APPLICABLE = [
  'server-initialize',
  'ping',
  'tools-list',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

// The scenarios that do not apply, and why. sneaky-mcp offers tools only, and declares only the
// `tools` capability; the protocol has a client call nothing else.
const FIXTURE_TOOL = "calls a fixture tool of the suite's reference server (test_simple_text, …), which a file toolbox does not have; sneaky-mcp's own tests cover the same content kinds with its tools (tests/suite/media.rs: image blocks; tests/suite/mcp*.rs: errors, progress)";
const NOT_APPLICABLE = {
  'logging-set-level': 'no `logging` capability: the server logs to its stderr',
  'completion-complete': 'no `completions` capability: it completes prompt and resource arguments, and there are none',
  'tools-call-simple-text': FIXTURE_TOOL,
  'tools-call-image': FIXTURE_TOOL,
  'tools-call-audio': FIXTURE_TOOL,
  'tools-call-embedded-resource': FIXTURE_TOOL,
  'tools-call-mixed-content': FIXTURE_TOOL,
  'tools-call-with-logging': FIXTURE_TOOL,
  'tools-call-error': FIXTURE_TOOL,
  'tools-call-with-progress': FIXTURE_TOOL,
  'tools-call-sampling': `${FIXTURE_TOOL}; and the server asks the client nothing over HTTP (no sampling)`,
  'tools-call-elicitation': `${FIXTURE_TOOL}; and no elicitation`,
  'json-schema-2020-12': `${FIXTURE_TOOL}; the tools' own schemas are compiled by ajv in strict 2020-12 mode (tests/mcp/ts_client_test.cjs)`,
  'elicitation-sep1034-defaults': `${FIXTURE_TOOL}; and no elicitation`,
  'elicitation-sep1330-enums': `${FIXTURE_TOOL}; and no elicitation`,
  'resources-list': 'no `resources` capability: files are read through read_file',
  'resources-read-text': 'no `resources` capability',
  'resources-read-binary': 'no `resources` capability',
  'resources-templates-read': 'no `resources` capability',
  'resources-subscribe': 'no `resources` capability',
  'resources-unsubscribe': 'no `resources` capability',
  'prompts-list': 'no `prompts` capability',
  'prompts-get-simple': 'no `prompts` capability',
  'prompts-get-with-args': 'no `prompts` capability',
  'prompts-get-embedded-resource': 'no `prompts` capability',
  'prompts-get-with-image': 'no `prompts` capability',
};

const TOKEN = 'conformance-token-0123456789';

function fail(message) {
  console.error(`check failed: ${message}`);
  process.exit(1);
}

function startServer(binary, root) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['--root', root, '--http', '127.0.0.1:0'], {
      env: { ...process.env, SNEAKY_MCP_TOKEN: TOKEN },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let seen = '';
    child.stderr.on('data', (chunk) => {
      seen += chunk.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(seen);
      if (m) {
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.on('exit', (code) => reject(new Error(`sneaky-mcp ended (${code}): ${seen}`)));
  });
}

function startProxy(port) {
  const proxy = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${TOKEN}` };
    const upstream = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      if (!res.headersSent) {
        res.writeHead(502);
      }
      res.end(String(e));
    });
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

async function main() {
  const [binary, root, modules] = process.argv.slice(2);
  if (!modules) {
    fail('usage: conformance_run.mjs SNEAKY_MCP_BINARY WORKSPACE_ROOT SUITE_NODE_MODULES');
  }
  const cli = path.join(modules, '@modelcontextprotocol/conformance/dist/index.js');
  // Not spawnSync: the proxy answers in this process's event loop while the suite runs.
  const run = (args) => new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const timer = setTimeout(() => child.kill(), 120000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });

  const listed = await run(['list', '--server']);
  if (listed.status !== 0) {
    fail(`conformance list --server: ${listed.stderr}`);
  }
  const scenarios = [...listed.stdout.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1]);
  if (scenarios.length === 0) {
    fail(`no scenarios listed: ${listed.stdout}`);
  }
  for (const name of scenarios) {
    if (!APPLICABLE.includes(name) && !(name in NOT_APPLICABLE)) {
      fail(`scenario ${name} is new: classify it in tests/mcp/conformance_run.mjs`);
    }
  }
  for (const name of APPLICABLE) {
    if (!scenarios.includes(name)) {
      fail(`scenario ${name} is no longer in the suite`);
    }
  }

  const { child, port } = await startServer(binary, root);
  const proxy = await startProxy(port);
  const url = `http://127.0.0.1:${proxy.address().port}/mcp`;
  let failed = 0;
  try {
    for (const name of APPLICABLE) {
      const result = await run(['server', '--url', url, '--scenario', name]);
      const summary = /Passed: \d+\/\d+, (\d+) failed, \d+ warnings/.exec(result.stdout);
      if (result.status === 0 && summary && summary[1] === '0') {
        console.log(`ok: ${name}: ${summary[0]}`);
      } else {
        failed += 1;
        console.log(`FAILED: ${name} (exit ${result.status})\n${result.stdout}\n${result.stderr}`);
      }
    }
    for (const [name, why] of Object.entries(NOT_APPLICABLE)) {
      if (scenarios.includes(name)) {
        console.log(`not applicable: ${name}: ${why}`);
      }
    }
  } finally {
    proxy.close();
    child.kill();
  }
  if (failed > 0) {
    fail(`${failed} applicable scenario(s) failed`);
  }
  console.log(`all ${APPLICABLE.length} applicable conformance scenarios passed`);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
