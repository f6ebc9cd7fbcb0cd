#!/usr/bin/env bash
# 1,000 sequential tools/call of read_file through one sneaky-mcp process, against running
# sneaky-read 1,000 times; prints calls per second for both. Each MCP call waits for its reply
# before the next is sent, as a host does. Both are driven from the same Python loop (standard
# library only), so the difference is the server against one process per call.
#
#   benches/mcp_bench.sh            # N=1000
#   N=5000 benches/mcp_bench.sh
#
# Builds the two binaries in release once (respects CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
n="${N:-1000}"

cargo build --release --quiet --bin sneaky-mcp --bin sneaky-read
bin="$target/release"
ws="$(mktemp -d)"
trap 'rm -rf "$ws"' EXIT

python3 - "$bin" "$ws" "$n" <<'PY'
import json, os, subprocess, sys, time

bin_dir, ws, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(os.path.join(ws, "sample.rs"), "w") as f:
    for i in range(100):
        f.write(f"fn function_{i}(x: u32) -> u32 {{ x * {i} + 1 }}\n")
env = {k: v for k, v in os.environ.items() if k not in ("SNEAKY_ROOT", "SNEAKY_CONFIG")}
env["XDG_CONFIG_HOME"] = os.path.join(ws, ".xdg")

# MCP: one server, n sequential calls.
t0 = time.perf_counter()
server = subprocess.Popen([os.path.join(bin_dir, "sneaky-mcp"), "--root", ws], env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def rpc(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
    return json.loads(server.stdout.readline())
rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}})
server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
ready = time.perf_counter() - t0
call = {"jsonrpc": "2.0", "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_path": "sample.rs"}}}
t0 = time.perf_counter()
for i in range(1, n + 1):
    call["id"] = i
    reply = rpc(call)
    if reply.get("id") != i or reply["result"]["isError"]:
        sys.exit(f"MCP call {i} failed: {reply}")
mcp_s = time.perf_counter() - t0
server.stdin.close()
server.wait()

# One sneaky-read process per call.
read = os.path.join(bin_dir, "sneaky-read")
t0 = time.perf_counter()
for i in range(n):
    out = subprocess.run([read, "--root", ws, "sample.rs"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if out.returncode != 0 or not out.stdout.startswith(b'{"ok":true'):
        sys.exit(f"sneaky-read run {i} failed: {out.stdout[:200]!r}")
read_s = time.perf_counter() - t0

print(f"sample: {os.path.getsize(os.path.join(ws, 'sample.rs'))} bytes, {n} calls each")
print(f"sneaky-mcp  start + initialize: {ready * 1000:.1f} ms")
print(f"sneaky-mcp  tools/call read_file: {n / mcp_s:9.0f} calls/s  ({mcp_s * 1e6 / n:7.1f} µs/call)")
print(f"sneaky-read process per call:     {n / read_s:9.0f} calls/s  ({read_s * 1e6 / n:7.1f} µs/call)")
print(f"speed-up: {read_s / mcp_s:.1f}×")
PY
ls -l "$bin/sneaky-mcp" "$bin/sneaky-read" | awk '{print $5, $9}'
