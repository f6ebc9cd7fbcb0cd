// sneaky-mcp's concurrency, cancellation, progress and HTTP security, driven by the official
// TypeScript MCP SDK (@modelcontextprotocol/sdk): StdioClientTransport and
// StreamableHTTPClientTransport.
//
// Usage: SNEAKY_NODE_MODULES=DIR node concurrency_test.mjs SNEAKY_MCP_BINARY WORKSPACE_ROOT
//
// DIR is the node_modules that .ci/setup-mcp16.sh fills; WORKSPACE_ROOT must hold hello.txt
// ("hello world\n"). Run by tests/suite/mcp_concurrency.rs. Prints one line per check passed
// and exits non-zero on the first failure.

import { spawn } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const modules = process.env.SNEAKY_NODE_MODULES;
if (!modules || process.argv.length !== 4) {
  console.error("usage: SNEAKY_NODE_MODULES=DIR node concurrency_test.mjs SNEAKY_MCP_BINARY ROOT");
  process.exit(2);
}
const require = createRequire(join(modules, "..", "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [binary, root] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
  console.log(`ok: ${message}`);
}

/** Live processes whose command line contains `marker` (zombies do not count). */
function processesRunning(marker) {
  const found = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`).toString().replaceAll("\0", " ");
      const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop().trim()[0];
      if (cmdline.includes(marker) && state !== "Z") found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function waitFor(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (predicate()) return performance.now();
    await sleep(5);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

const marker = (base) => `${base + randomInt(999)}.${String(randomInt(1e6)).padStart(6, "0")}`;

async function exercise(client, label) {
  const tools = new Set((await client.listTools()).tools.map((t) => t.name));
  check(tools.has("run_command") && tools.has("read_file"), `${label}: tools listed`);

  // Parallel calls, each answered with its own result.
  mkdirSync(join(root, "many"), { recursive: true });
  for (let i = 0; i < 20; i++) writeFileSync(join(root, `many/g${i}.txt`), `file ${i}\n`);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      client.callTool({ name: "read_file", arguments: { file_path: `many/g${i}.txt` } }),
    ),
  );
  check(results.every((r, i) => r.structuredContent.content === `file ${i}\n`),
    `${label}: 20 parallel read_file calls each got their own answer`);

  // A long command does not hold up pings, lists and reads.
  const slow = marker(3000);
  let longDone = false;
  const longCall = client
    .callTool({ name: "run_command", arguments: { command: `sleep 6 && echo ${slow}` } })
    .then((r) => { longDone = true; return r; });
  await sleep(300);
  const t0 = performance.now();
  await client.ping();
  await client.listTools();
  const read = await client.callTool({ name: "read_file", arguments: { file_path: "hello.txt" } });
  const quick = (performance.now() - t0) / 1000;
  check(read.structuredContent.content === "hello world\n" && !longDone,
    `${label}: ping, tools/list and read_file answered while a command runs`);
  check(quick < 4, `${label}: ... within ${quick.toFixed(3)} s, not after the command`);
  const long = await longCall;
  check(!long.isError && long.structuredContent.stdout.includes(slow), `${label}: the long command finished`);

  // Progress notifications with elapsed time and bytes of output.
  const updates = [];
  const r = await client.callTool(
    { name: "run_command", arguments: { command: "seq 1 20000 && sleep 1.3 && seq 1 20000" } },
    undefined,
    { onprogress: (p) => updates.push(p) },
  );
  check(!r.isError && r.structuredContent.exit_code === 0, `${label}: progress command ran`);
  check(updates.length >= 2, `${label}: ${updates.length} progress notifications received`);
  const progress = updates.map((u) => u.progress);
  check(progress.every((p, i) => i === 0 || p > progress[i - 1]), `${label}: progress increases: ${progress}`);
  const sizes = updates.map((u) => Number(/(\d+) bytes/.exec(u.message)[1]));
  check(sizes[0] > 0 && sizes.every((s, i) => i === 0 || s >= sizes[i - 1]),
    `${label}: bytes of output so far: ${sizes}`);

  // Cancellation: the whole process tree goes; the server goes on.
  const doomedMark = marker(4000);
  const controller = new AbortController();
  let answered = false;
  const doomed = client
    .callTool({ name: "run_command", arguments: { command: `sleep ${doomedMark} | sleep ${doomedMark} && echo never` } },
      undefined, { signal: controller.signal })
    .then(() => { answered = true; }, (e) => e);
  await waitFor(() => processesRunning(`sleep ${doomedMark}`).length >= 2, 10000, "the two sleeps to start");
  const cancelledAt = performance.now();
  controller.abort("test");
  const goneAt = await waitFor(() => processesRunning(`sleep ${doomedMark}`).length === 0, 3000,
    "the cancelled command's processes to go");
  await doomed;
  check(!answered, `${label}: the cancelled call got no result`);
  check(true, `${label}: cancelled command's process tree gone ${(goneAt - cancelledAt).toFixed(0)} ms after the abort`);
  await client.ping();
  const after = await client.callTool({ name: "read_file", arguments: { file_path: "hello.txt" } });
  check(!after.isError, `${label}: the server serves on after a cancellation`);
}

async function overStdio() {
  const transport = new StdioClientTransport({
    command: binary,
    args: ["--root", root],
    env: process.env,
    stderr: "inherit",
  });
  const client = new Client({ name: "sneaky-suite", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  check(client.getServerVersion().name === "sneaky-mcp", "stdio: the official client connects");
  await exercise(client, "stdio");
  await client.close();
}

function startHttpServer(token) {
  const server = spawn(binary, ["--root", root, "--http", "127.0.0.1:0"], {
    env: { ...process.env, SNEAKY_MCP_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`the HTTP server did not start: ${seen}`)), 60000);
    server.stderr.on("data", (chunk) => {
      seen += chunk.toString();
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve({ server, url: m[1] });
      }
    });
    server.on("exit", () => reject(new Error(`the HTTP server exited: ${seen}`)));
  });
}

async function httpSecurity(url, token) {
  const markerFile = join(root, "ts-must-not-exist.txt");
  const base = { Accept: "application/json, text/event-stream", "Content-Type": "application/json" };
  const run = {
    jsonrpc: "2.0", id: 3, method: "tools/call",
    params: { name: "run_command", arguments: { command: "touch ts-must-not-exist.txt" } },
  };
  // The official client with no token and with a wrong one: the connection is refused.
  for (const [label, headers] of [["no token", {}], ["a wrong token", { Authorization: `Bearer ${"0".repeat(token.length)}` }]]) {
    const client = new Client({ name: "intruder", version: "1" }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    let error;
    try {
      await client.connect(transport);
    } catch (e) {
      error = e;
    }
    check(error && /401|nauthorized/.test(String(error)), `http: ${label}: the client's connect is refused (${String(error).slice(0, 60)})`);
    await transport.close().catch(() => {});
  }
  for (const [label, headers, status] of [
    ["no token", {}, 401],
    ["a wrong token", { Authorization: `Bearer ${"1".repeat(token.length)}` }, 401],
    ["a foreign Origin", { Authorization: `Bearer ${token}`, Origin: "http://evil.example" }, 403],
  ]) {
    const r = await fetch(url, { method: "POST", headers: { ...base, ...headers, "Mcp-Session-Id": "x" }, body: JSON.stringify(run) });
    check(r.status === status, `http: ${label}: a raw tools/call gets ${status}`);
  }
  await sleep(300);
  check(!existsSync(markerFile), "http: nothing ran for refused requests");
}

async function overHttp() {
  const token = randomBytes(24).toString("hex");
  const { server, url } = await startHttpServer(token);
  try {
    await httpSecurity(url, token);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "sneaky-suite", version: "1" }, { capabilities: {} });
    await client.connect(transport);
    check(client.getServerVersion().name === "sneaky-mcp", "http: the official client connects");
    check(Boolean(transport.sessionId), "http: a session id was issued");
    await exercise(client, "http");
    await transport.terminateSession();
    await client.close();
  } finally {
    server.kill("SIGTERM");
  }
}

try {
  await overStdio();
  await overHttp();
  console.log("all concurrency checks passed");
  process.exit(0);
} catch (e) {
  console.error(e);
  process.exit(1);
}
