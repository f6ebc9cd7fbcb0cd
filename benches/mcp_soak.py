#!/usr/bin/env python3
"""Soak: sneaky-mcp under sustained load, its memory sampled over the run (issue 45).

SESSIONS clients (default 32) loop for SECONDS (default 60) over the mix an operator of a shared
server would see: read_file of a 1,000-line file of ~100-byte lines, grep_files, write_file of
unique content, list_dir, and every tenth round run_command. Over HTTP (`--http`, the bearer
token, one keep-alive connection and one session per client) or over stdio (one server, the
clients' calls in flight side by side on its pipes). `--big` makes every answer about 100 KB
(grep_files and list_dir too; write_file sends 100 KB).

The server's RSS is read from /proc every 0.25 s; at the end the script prints the calls, the
errors (a non-2xx status, a JSON-RPC error, `isError: true`, a missing answer), the peak RSS
(VmHWM: the kernel's high-water mark, so every moment counts, not only the samples), the RSS
over the second half (min, max and the change from its first to its last quarter), the
descriptors the server holds (at most, and at the end), and whether every acknowledged write is
on disk whole (each file holds the last content the server acknowledged for it). It exits 1
when a check fails: an error, a torn or missing write, or an RSS over `--max-rss-mib` (default
128).

Usage: benches/mcp_soak.py [--http | --stdio] [--big] [--sessions N] [--seconds S]
                           [--bin PATH] [--config FILE] [--max-rss-mib M]
The binary defaults to target/release/sneaky-mcp (`cargo build --release --bin sneaky-mcp`).
"""

import argparse
import http.client
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "soak-token-0123456789abcdef"
LINE = "x" * 90


def make_workspace(root, sessions, big):
    """data/f*.txt: 1,000 lines of ~100 bytes; a directory to list (1,500 long names when big)."""
    os.makedirs(os.path.join(root, "data"))
    os.makedirs(os.path.join(root, "tree"))
    os.makedirs(os.path.join(root, "out"))
    for i in range(8):
        with open(os.path.join(root, "data", f"f{i}.txt"), "w") as f:
            for n in range(1000):
                tag = "needle" if n % 100 == 7 else "hay"
                f.write(f"{i:02d} {n:05d} {tag} {LINE}\n")
    entries = 1500 if big else 40
    for n in range(entries):
        name = f"entry-{n:05d}-" + ("y" * 50 if big else "z")
        open(os.path.join(root, "tree", name), "w").close()
    for s in range(sessions):
        os.makedirs(os.path.join(root, "out", f"s{s}"))


def mix(session, rnd, big):
    """The calls of one round: (tool, arguments)."""
    f = f"data/f{rnd % 8}.txt"
    calls = [
        ("read_file", {"file_path": f}),
        # Big: every line of one file matches (the default cap is 1,000 matches, ~120 KB).
        ("grep_files", {"pattern": "hay|needle", "path": f} if big else {"pattern": "needle"}),
        ("list_dir", {"directory_path": "tree"}),
    ]
    size = 100_000 if big else 1_000
    tag = f"s{session} r{rnd} {random.getrandbits(64):016x}"
    body = (tag + "\n") + ("w" * 99 + "\n") * (size // 100) + f"end {tag}\n"
    calls.append(("write_file", {"file_path": f"out/s{session}/w{rnd % 4}.txt", "content": body}))
    if rnd % 10 == 9:
        calls.append(("run_command", {"command": f"wc -l {f}"}))
    return calls


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = 0
        self.errors = {}
        self.acked = {}  # path -> content the server acknowledged last

    def error(self, what):
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1


def classify(answer, tool):
    """None when the answer is a success; else a short reason."""
    if answer is None:
        return f"{tool}: no answer"
    if "error" in answer:
        return f"{tool}: JSON-RPC {answer['error'].get('code')} {answer['error'].get('message', '')[:60]}"
    if answer.get("result", {}).get("isError"):
        text = answer["result"].get("content", [{}])[0].get("text", "")
        return f"{tool}: isError {text[:60]}"
    return None


def sse_answer(body, want_id):
    for line in body.split("\n"):
        if line.startswith("data: "):
            try:
                msg = json.loads(line[6:])
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("id") == want_id:
                return msg
    return None


def http_client(port, session, deadline, big, stats):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    base = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }

    def post(msg, sid=None):
        headers = dict(base)
        if sid:
            headers["Mcp-Session-Id"] = sid
        conn.request("POST", "/mcp", body=json.dumps(msg), headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Mcp-Session-Id"), resp.getheader("Content-Type") or "", resp.read().decode()

    status, sid, _, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"}}})
    if status != 200 or not sid:
        stats.error(f"initialize: {status}")
        return
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    rid = 1
    rnd = 0
    while time.monotonic() < deadline:
        for tool, args in mix(session, rnd, big):
            rid += 1
            msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}}
            try:
                status, _, ctype, body = post(msg, sid)
            except (OSError, http.client.HTTPException) as e:
                stats.error(f"{tool}: {type(e).__name__}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                continue
            if status != 200:
                stats.error(f"{tool}: HTTP {status}")
                continue
            answer = sse_answer(body, rid) if ctype.startswith("text/event-stream") else json.loads(body)
            done(stats, tool, args, answer)
        rnd += 1
    conn.request("DELETE", "/mcp", headers={"Authorization": base["Authorization"], "Mcp-Session-Id": sid})
    conn.getresponse().read()
    conn.close()


def done(stats, tool, args, answer):
    reason = classify(answer, tool)
    with stats.lock:
        stats.calls += 1
        if reason:
            stats.errors[reason] = stats.errors.get(reason, 0) + 1
        elif tool == "write_file":
            stats.acked[args["file_path"]] = args["content"]


class StdioServer:
    """One server; clients' requests go out under a lock, answers are routed by id."""

    def __init__(self, proc):
        self.proc = proc
        self.lock = threading.Lock()
        self.waiting = {}
        self.next = 0
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            box = self.waiting.pop(msg.get("id"), None) if isinstance(msg, dict) else None
            if box is not None:
                box.put(msg)

    def call(self, method, params):
        box = queue.Queue()
        with self.lock:
            self.next += 1
            rid = self.next
            self.waiting[rid] = box
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        try:
            return box.get(timeout=120)
        except queue.Empty:
            return None


def stdio_client(server, session, deadline, big, stats):
    rnd = 0
    while time.monotonic() < deadline:
        for tool, args in mix(session, rnd, big):
            done(stats, tool, args, server.call("tools/call", {"name": tool, "arguments": args}))
        rnd += 1


def rss_kib(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--http", action="store_true", default=True)
    mode.add_argument("--stdio", action="store_true")
    p.add_argument("--big", action="store_true")
    p.add_argument("--sessions", type=int, default=32)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "sneaky-mcp"))
    p.add_argument("--config", help="the server's configuration file (else an empty one)")
    p.add_argument("--max-rss-mib", type=float, default=128)
    a = p.parse_args()
    transport = "stdio" if a.stdio else "http"

    work = tempfile.mkdtemp(prefix="mcp-soak-")
    root = os.path.join(work, "ws")
    os.makedirs(root)
    make_workspace(root, a.sessions, a.big)
    config = a.config or os.path.join(work, "config.toml")
    if not a.config:
        open(config, "w").close()
    env = dict(os.environ, SNEAKY_MCP_TOKEN=TOKEN, XDG_CONFIG_HOME=os.path.join(work, "xdg"),
               XDG_STATE_HOME=os.path.join(work, "state"))
    env.pop("SNEAKY_ROOT", None)
    cmd = [os.path.abspath(a.bin), "--root", root, "--config", config]
    if transport == "http":
        cmd += ["--http", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
    stats = Stats()
    threads = []
    try:
        if transport == "http":
            port = None
            seen = ""
            while port is None:
                line = proc.stderr.readline()
                if not line:
                    sys.exit(f"the server did not start: {seen}")
                seen += line
                if "listening on http://" in line:
                    port = int(line.split("http://")[1].split("/")[0].rsplit(":", 1)[1])
            # Its stderr keeps being drained, or a busy log would block it.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        else:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            server = StdioServer(proc)
            init = server.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "soak", "version": "1"}})
            if not init or "result" not in init:
                sys.exit(f"initialize failed: {init}")
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            proc.stdin.flush()
        start = time.monotonic()
        deadline = start + a.seconds
        for s in range(a.sessions):
            if transport == "http":
                t = threading.Thread(target=http_client, args=(port, s, deadline, a.big, stats))
            else:
                t = threading.Thread(target=stdio_client, args=(server, s, deadline, a.big, stats))
            t.start()
            threads.append(t)
        samples = []  # (seconds, rss KiB)
        fds_max = 0
        while any(t.is_alive() for t in threads):
            now = time.monotonic() - start
            rss, _ = rss_kib(proc.pid)
            samples.append((now, rss))
            fds_max = max(fds_max, descriptors(proc.pid))
            time.sleep(0.25)
        for t in threads:
            t.join()
        took = time.monotonic() - start
        time.sleep(0.5)  # the last sessions' DELETEs are answered; their calls have ended
        rss_end, hwm = rss_kib(proc.pid)
        fds_end = descriptors(proc.pid)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()

    torn = 0
    for path, content in stats.acked.items():
        try:
            with open(os.path.join(root, path)) as f:
                if f.read() != content:
                    torn += 1
        except OSError:
            torn += 1
    shutil.rmtree(work, ignore_errors=True)

    half = [r for t, r in samples if t >= a.seconds / 2]
    q = max(1, len(half) // 4)
    first_q = sum(half[:q]) / q if half else 0
    last_q = sum(half[-q:]) / q if half else 0
    mib = lambda kib: kib / 1024
    errors = sum(stats.errors.values())
    print(f"soak: {transport}{' big' if a.big else ''}, {a.sessions} sessions, {a.seconds:g} s "
          f"({took:.1f} s with the last calls), {os.cpu_count()} CPUs")
    print(f"calls: {stats.calls} ({stats.calls / took:.0f}/s), errors: {errors}")
    for reason, n in sorted(stats.errors.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {n} x {reason}")
    print(f"rss: peak {mib(hwm):.1f} MiB (VmHWM), after warm-up (5 s) "
          f"{mib(next((r for t, r in samples if t >= 5), 0)):.1f} MiB, at the end {mib(rss_end):.1f} MiB")
    if half:
        print(f"rss over the second half: min {mib(min(half)):.1f} MiB, max {mib(max(half)):.1f} MiB, "
              f"first quarter {mib(first_q):.1f} MiB -> last quarter {mib(last_q):.1f} MiB "
              f"({mib(last_q - first_q):+.1f} MiB)")
    print(f"descriptors: at most {fds_max}, at the end {fds_end}")
    print(f"writes: {len(stats.acked)} files acknowledged, {torn} not on disk whole")
    failed = []
    if errors:
        failed.append(f"{errors} errors")
    if torn:
        failed.append(f"{torn} writes not on disk whole")
    if mib(hwm) > a.max_rss_mib:
        failed.append(f"peak RSS {mib(hwm):.1f} MiB > {a.max_rss_mib:g} MiB")
    print("soak: " + ("FAIL: " + "; ".join(failed) if failed else "PASS"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
