// What the model reads through the agent hosts people use: Codex CLI, Claude Code and opencode,
// installed from npm (.ci/setup-agents.sh), each set up as docs/mcp.md says (the snippets marked
// `<!-- agents-test: NAME -->` there, taken as written) and pointed at a mock model on the
// loopback (mock_model.mjs), which calls sneaky's tools and records each result as the host
// hands it back to the model. Checked for each host, over stdio and over HTTP:
//
//   - read_file, grep_files, run_command and a failing call: the model reads the text sneaky-mcp
//     writes for it (the same text a client gets from the server directly), at most 1.1 times
//     its characters, not the JSON result;
//   - an image: one image block, and no base64 as text;
//   - a command longer than tools.shell.yield_after_seconds (5 s in the workspace's
//     sneaky.toml here): the model reads that it goes on as a background job;
//   - the host sent the `clientInfo.name` src/mcp/shape.rs knows it by (from the server's log).
//
// Usage: node hosts_test.mjs --bin DIR --agents DIR --docs docs/mcp.md --work DIR
//          [--hosts codex,claude,opencode] [--transports stdio,http] [--structured-content on]
//          [--report FILE] [--log-requests FILE]
//
// --bin: where sneaky-mcp and the other binaries are; --agents: the npm prefix of
// .ci/setup-agents.sh; --work: a scratch directory. `--structured-content on` makes the server
// serve every host the structured shape (as before src/mcp/shape.rs): then nothing is asserted,
// and the report says what the model read (the "before" figures). Prints a table, writes the
// report as JSON when asked, and exits non-zero when a check fails.
'use strict';

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { MockModel } from './mock_model.mjs';

const HOST_DEADLINE_MS = 240_000;
const TOKEN = 'sneaky-agents-test-token-0123456789';
// The example port of docs/mcp.md's HTTP snippets, replaced by the server's.
const DOC_PORT = '8765';
const PROMPT = 'Use the sneaky tools.';

// --- arguments

function parseArgs(argv) {
  const args = { hosts: 'codex,claude,opencode', transports: 'stdio,http' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    args[key] = argv[i + 1];
  }
  for (const need of ['bin', 'agents', 'docs', 'work']) {
    if (!args[need]) {
      console.error(`hosts_test.mjs: --${need} is required (see the top of this file)`);
      process.exit(2);
    }
  }
  args.hosts = args.hosts.split(',');
  args.transports = args.transports.split(',');
  args.before = args.structuredContent === 'on';
  return args;
}

// --- the workspace

function crc32(buf) {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

// A PNG of noise (it compresses to about its pixels' size, like a photograph).
function noisePng(width, height) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  let state = 0x2545f491;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let i = 0; i < raw.length; i++) {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
    raw[i] = i % (width * 3 + 1) === 0 ? 0 : (state >>> 24) & 0xff;
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PICTURE = { width: 400, height: 300 };
const YIELD_AFTER = 5;

function makeWorkspace(dir) {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  fs.writeFileSync(path.join(dir, 'sneaky.toml'), `[tools.shell]\nyield_after_seconds = ${YIELD_AFTER}\n`);
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'first line\nsecond line\n');
  fs.writeFileSync(path.join(dir, 'src/lib.rs'), 'pub fn answer() -> u32 {\n    42\n}\n');
  fs.writeFileSync(path.join(dir, 'picture.png'), noisePng(PICTURE.width, PICTURE.height));
}

// --- what each run asks for

const STEPS = {
  read: { tool: 'read_file', args: { file_path: 'notes.txt' } },
  grep: { tool: 'grep_files', args: { pattern: 'answer' } },
  // A timeout not longer than yield_after_seconds: the foreground, as with the default 30 s
  // under the default 50.
  command: { tool: 'run_command', args: { command: 'echo hello && cat notes.txt', timeout: YIELD_AFTER } },
  error: { tool: 'read_file', args: { file_path: 'missing.txt' } },
  image: { tool: 'read_file', args: { file_path: 'picture.png' } },
  long: { tool: 'run_command', args: { command: `sleep ${2 * YIELD_AFTER} && echo late`, timeout: 60 } },
};
const SCRIPT = { stdio: ['read', 'grep', 'command', 'error', 'image', 'long'], http: ['read', 'command'] };
// What the model reads of a command that yielded (its job's id differs from run to run).
const YIELDED = new RegExp(`^still running after ${YIELD_AFTER} s: it goes on as background job \\S+, `);

// --- the reference: the text sneaky-mcp writes for each call, asked directly

async function reference(bin, workspace) {
  const env = {
    ...process.env,
    XDG_RUNTIME_DIR: runtimeDir(path.join(workspace, '..', 'reference-home')),
    XDG_STATE_HOME: path.join(workspace, '..', 'reference-state'),
  };
  const child = spawn(path.join(bin, 'sneaky-mcp'), ['--root', workspace], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let buffer = '';
  const waiting = new Map();
  child.stdout.on('data', (d) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (waiting.has(msg.id)) waiting.get(msg.id)(msg);
    }
  });
  let id = 0;
  const ask = (method, params) => new Promise((resolve) => {
    id += 1;
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
  await ask('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'reference', version: '1' } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const out = {};
  for (const [name, step] of Object.entries(STEPS)) {
    const reply = await ask('tools/call', { name: step.tool, arguments: step.args });
    const text = reply.result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
    out[name] = { text, isError: reply.result.isError };
  }
  child.stdin.end();
  return out;
}

// --- docs/mcp.md's snippets

function snippets(docsPath) {
  const doc = fs.readFileSync(docsPath, 'utf8');
  const out = {};
  const re = /<!-- agents-test: ([a-z-]+) -->\s*\n```[a-z]*\n([\s\S]*?)\n```/g;
  let m;
  while ((m = re.exec(doc)) !== null) {
    out[m[1]] = m[2];
  }
  return out;
}

function need(snips, name) {
  if (!(name in snips)) {
    throw new Error(`docs/mcp.md has no snippet marked <!-- agents-test: ${name} -->`);
  }
  return snips[name];
}

// The shell lines of a snippet (comments and blank lines left out).
function shellLines(text) {
  return text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

// --- running a host

function run(cmd, args, opts) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => {
      err += `\n[killed after ${HOST_DEADLINE_MS / 1000} s]`;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, HOST_DEADLINE_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Whatever the host left running in its process group goes with it.
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      resolve({ code, signal, out, err, seconds: (Date.now() - started) / 1000 });
    });
  });
}

// A wrapper named sneaky-mcp, first on PATH: it runs the real one (with
// `--structured-content on` for the "before" figures) and keeps its stderr, where the server
// logs the client's name.
function wrapper(dir, bin, before, log) {
  fs.mkdirSync(dir, { recursive: true });
  const extra = before ? ' --structured-content on' : '';
  fs.writeFileSync(path.join(dir, 'sneaky-mcp'),
    `#!/bin/sh\nexec "${path.join(bin, 'sneaky-mcp')}" "$@"${extra} 2>>"${log}"\n`, { mode: 0o755 });
}

function runtimeDir(home) {
  const dir = path.join(home, '..', 'run');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function hostEnv(ctx, home, extra) {
  return {
    PATH: `${ctx.wrapDir}:${ctx.bin}:${process.env.PATH}`,
    HOME: home,
    LANG: 'C.UTF-8',
    TMPDIR: process.env.TMPDIR || '/tmp',
    XDG_STATE_HOME: path.join(home, '.local/state'),
    SNEAKY_MCP_TOKEN: TOKEN,
    // The job supervisor of the run's workspace keeps its socket here.
    XDG_RUNTIME_DIR: runtimeDir(home),
    ...extra,
  };
}

const HOSTS = {
  // Codex CLI: ~/.codex/config.toml as docs/mcp.md gives it, with a model provider for the mock.
  async codex(ctx, run_, transport, ws, home, base) {
    const config = need(ctx.snips, `codex-${transport}`).replaceAll(DOC_PORT, String(ctx.httpPort));
    const codexHome = path.join(home, '.codex');
    fs.mkdirSync(codexHome, { recursive: true });
    fs.writeFileSync(path.join(codexHome, 'config.toml'), [
      'model = "mock-model"',
      'model_provider = "mock"',
      config,
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${base}/v1"`,
      'wire_api = "responses"',
      'env_key = "MOCK_API_KEY"',
      '',
    ].join('\n'));
    const env = hostEnv(ctx, home, { CODEX_HOME: codexHome, MOCK_API_KEY: 'mock' });
    const lines = shellLines(need(ctx.snips, 'codex-exec')).map((l) => l.replace(/^codex\b/, ctx.agentBin.codex));
    return runLines(lines, ws, env);
  },

  // Claude Code: `claude mcp add …` and `claude -p …` as docs/mcp.md gives them, run in the
  // project, with the mock as the Anthropic endpoint.
  async claude(ctx, run_, transport, ws, home, base) {
    const env = hostEnv(ctx, home, {
      ANTHROPIC_BASE_URL: base,
      ANTHROPIC_API_KEY: 'sk-ant-mock',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    });
    let lines = shellLines(need(ctx.snips, `claude-${transport}`));
    if (transport === 'http') {
      // The permissions.allow of docs/mcp.md, in ~/.claude/settings.json, instead of the flag.
      fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
      fs.writeFileSync(path.join(home, '.claude/settings.json'), need(ctx.snips, 'claude-settings'));
      lines = lines.map((l) => l.replace(' --allowedTools mcp__sneaky', ''));
    }
    lines = lines.map((l) => l.replaceAll(DOC_PORT, String(ctx.httpPort)).replace(/^claude\b/, ctx.agentBin.claude));
    return runLines(lines, ws, env);
  },

  // opencode: the project's opencode.json as docs/mcp.md gives it, with a provider for the mock.
  async opencode(ctx, run_, transport, ws, home, base) {
    const config = JSON.parse(need(ctx.snips, `opencode-${transport}`).replaceAll(DOC_PORT, String(ctx.httpPort)));
    config.model = 'mock/mock-model';
    config.provider = {
      mock: {
        npm: '@ai-sdk/openai-compatible',
        name: 'mock',
        options: { baseURL: `${base}/v1`, apiKey: 'mock' },
        models: { 'mock-model': { name: 'mock', attachment: true, modalities: { input: ['text', 'image'], output: ['text'] } } },
      },
    };
    fs.writeFileSync(path.join(ws, 'opencode.json'), JSON.stringify(config, null, 2));
    const env = hostEnv(ctx, home, { OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1' });
    const lines = shellLines(need(ctx.snips, 'opencode-run')).map((l) => l.replace(/^opencode\b/, ctx.agentBin.opencode));
    return runLines(lines, ws, env);
  },
};

// Each line through bash (as a person types it), one after the other; stdin is empty.
async function runLines(lines, cwd, env) {
  const results = [];
  for (const line of lines) {
    const r = await run('bash', ['-c', `${line} </dev/null`], { cwd, env });
    results.push({ line, ...r });
    if (r.code !== 0) break;
  }
  return results;
}

// --- judging what the model read

// Words a host adds around a result, which are not the tool's: Codex CLI puts its own
// "Wall time: … seconds\nOutput:" before every result; opencode introduces the media it moves
// out of a tool message with "Attached media from tool result:"; Claude Code (2.1.3xx) keeps a
// copy of an image and says where after it ("[Image: source: PATH]").
const FRAMING = [
  /^Wall time: [0-9.]+ seconds\nOutput:\n?/,
  /^Attached media from tool result:\n?/,
  /^\[Image: source: [^\]\n]+\]$/,
];

function split(parts) {
  let text = '';
  let framing = '';
  const images = [];
  const other = [];
  for (const p of parts) {
    if (p.type === 'text') {
      let t = p.text;
      for (const f of FRAMING) {
        const m = f.exec(t);
        if (m) {
          framing += m[0];
          t = t.slice(m[0].length);
        }
      }
      text += t;
    } else if (p.type === 'image') {
      images.push(p);
    } else {
      other.push(p);
    }
  }
  return { text, framing, images, other };
}

function pngSize(data) {
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length < 24 || bytes.readUInt32BE(12) !== 0x49484452) return null;
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

function judge(name, record, ref) {
  const problems = [];
  if (!record) {
    return { received: null, problems: ['the host never gave this result back to the model'] };
  }
  const { text, framing, images, other } = split(record.parts);
  const base64Text = /[A-Za-z0-9+/]{200,}/.test(text);
  const received = {
    chars: text.length, framing: framing.length, images: images.length,
    imageChars: images.reduce((n, i) => n + i.data.length, 0), base64Text,
  };
  const limit = Math.floor(ref.text.length * 1.1);
  if (name === 'long') {
    if (!YIELDED.test(text)) {
      problems.push(`the model did not read that the command goes on as a job: ${JSON.stringify(text.slice(0, 200))}`);
    }
  } else if (!text.includes(ref.text)) {
    problems.push(`the model did not read the tool's text ${JSON.stringify(ref.text.slice(0, 80))}: it read ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (text.length > limit) {
    problems.push(`${text.length} characters, over 1.1 x the tool's ${ref.text.length}`);
  }
  if (base64Text) problems.push('base64 as text');
  if (other.length) problems.push(`parts the test does not know: ${JSON.stringify(other)}`);
  if (name === 'image') {
    if (images.length !== 1) problems.push(`${images.length} image blocks, not 1`);
    const size = images.length === 1 && pngSize(images[0].data);
    if (images.length === 1 && (!size || size[0] !== PICTURE.width || size[1] !== PICTURE.height)) {
      problems.push(`the image is not the ${PICTURE.width}x${PICTURE.height} PNG: ${size}`);
    }
  } else if (images.length) {
    problems.push(`${images.length} image blocks where none belong`);
  }
  return { received, problems };
}

// The clientInfo names the server logged (`sneaky-mcp: client "NAME" …`).
function clientNames(log) {
  const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
  return [...text.matchAll(/client "([^"]*)" "([^"]*)" \(protocol ([^)]*)\): (.*)/g)]
    .map((m) => ({ name: m[1], version: m[2], protocol: m[3], shape: m[4] }));
}

// What src/mcp/shape.rs calls each host.
const CLIENT_NAME = { codex: 'codex-mcp-client', claude: 'claude-code', opencode: 'opencode' };

// --- main

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const work = path.resolve(args.work);
  fs.mkdirSync(work, { recursive: true });
  const bin = path.resolve(args.bin);
  const agents = path.resolve(args.agents);
  const agentBin = {
    codex: path.join(agents, 'node_modules/.bin/codex'),
    claude: path.join(agents, 'node_modules/.bin/claude'),
    opencode: path.join(agents, 'node_modules/.bin/opencode'),
  };
  const versions = {};
  for (const host of args.hosts) {
    versions[host] = execFileSync(agentBin[host], ['--version'], { encoding: 'utf8', timeout: 60_000 }).trim();
  }
  const snips = snippets(args.docs);

  const refWs = path.join(work, 'reference');
  makeWorkspace(refWs);
  const ref = await reference(bin, refWs);

  const runs = [];
  for (const host of args.hosts) {
    for (const transport of args.transports) {
      runs.push({ host, transport, name: `${host}-${transport}` });
    }
  }
  const scripts = Object.fromEntries(runs.map((r) => [r.name, SCRIPT[r.transport].map((s) => STEPS[s])]));
  const mock = new MockModel(scripts, args.logRequests);
  const port = await mock.listen();

  const results = await Promise.all(runs.map(async (r) => {
    const dir = path.join(work, r.name);
    const ws = path.join(dir, 'ws');
    const home = path.join(dir, 'home');
    fs.mkdirSync(home, { recursive: true });
    makeWorkspace(ws);
    const log = path.join(dir, 'sneaky-mcp.log');
    const ctx = { bin, snips, agentBin, wrapDir: path.join(dir, 'wrap') };
    wrapper(ctx.wrapDir, bin, args.before, log);
    let server = null;
    if (r.transport === 'http') {
      server = await startHttp(bin, ws, log, args.before);
      ctx.httpPort = server.port;
    }
    try {
      const ran = await HOSTS[r.host](ctx, r.name, r.transport, ws, home, `http://127.0.0.1:${port}/${r.name}`);
      return { ...r, ran, clients: clientNames(log) };
    } finally {
      if (server) server.child.kill('SIGTERM');
    }
  }));
  mock.close();

  const report = { versions, before: args.before, reference: ref, runs: [] };
  let failures = 0;
  const rows = [];
  for (const r of results) {
    const records = mock.records[r.name] || {};
    const entry = {
      host: r.host, transport: r.transport, version: versions[r.host], clients: r.clients,
      requests: mock.requests[r.name] || {}, steps: {},
      commands: r.ran.map((x) => ({ line: x.line, code: x.code, seconds: x.seconds })),
    };
    const runProblems = [];
    const last = r.ran[r.ran.length - 1];
    if (!last || last.code !== 0) {
      runProblems.push(`a command failed: ${last && last.line} (${last && last.code}):\n${last && last.out.slice(-2000)}\n${last && last.err.slice(-3000)}`);
    }
    const named = r.clients.map((c) => c.name);
    if (r.transport === 'stdio' && !named.includes(CLIENT_NAME[r.host])) {
      runProblems.push(`the server did not see the client name ${CLIENT_NAME[r.host]} (it saw ${JSON.stringify(named)})`);
    }
    SCRIPT[r.transport].forEach((stepName, index) => {
      const verdict = judge(stepName, records[index], ref[stepName]);
      entry.steps[stepName] = { reference: ref[stepName].text.length, ...verdict };
      rows.push([r.name, stepName, ref[stepName].text.length, verdict.received, verdict.problems]);
      if (!args.before) {
        for (const p of verdict.problems) runProblems.push(`${stepName}: ${p}`);
      }
    });
    entry.problems = runProblems;
    if (runProblems.length && !args.before) {
      failures += 1;
      console.log(`FAILED ${r.name} (${versions[r.host]}):\n  ${runProblems.join('\n  ')}`);
    }
    report.runs.push(entry);
  }
  if (mock.unknown.length) console.log(`requests to no run: ${mock.unknown.join(', ')}`);

  console.log(`hosts: ${Object.entries(versions).map(([h, v]) => `${h} ${v}`).join(', ')}; shape: ${args.before ? 'structured for every client (--structured-content on)' : 'by client'}`);
  console.log('run              step     tool text  model read (text + host framing)  images  base64-as-text');
  for (const [run_, step, refChars, got] of rows) {
    const read = got ? `${got.chars} + ${got.framing}` : 'nothing';
    const imgs = got ? `${got.images}${got.images ? ` (${got.imageChars} b64)` : ''}` : '-';
    console.log(`${run_.padEnd(16)} ${step.padEnd(8)} ${String(refChars).padStart(9)}  ${read.padStart(32)}  ${imgs.padStart(6)}  ${got ? got.base64Text : '-'}`);
  }
  if (args.report) fs.writeFileSync(args.report, JSON.stringify(report, null, 2));
  if (failures) {
    console.log(`${failures} of ${results.length} host runs failed`);
    process.exit(1);
  }
  console.log(args.before ? 'the figures before (nothing asserted)' : 'all host checks passed');
}

async function startHttp(bin, ws, log, before) {
  const extra = before ? ['--structured-content', 'on'] : [];
  const child = spawn(path.join(bin, 'sneaky-mcp'), ['--root', ws, '--http', '127.0.0.1:0', ...extra], {
    env: {
      ...process.env,
      SNEAKY_MCP_TOKEN: TOKEN,
      XDG_STATE_HOME: path.join(ws, '..', 'state'),
      XDG_RUNTIME_DIR: runtimeDir(path.join(ws, '..', 'home')),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const out = fs.createWriteStream(log, { flags: 'a' });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (d) => {
      out.write(d);
      seen += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(seen);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`sneaky-mcp --http exited (${code}): ${seen}`)));
  });
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
