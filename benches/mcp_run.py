#!/usr/bin/env python3
"""run_command's latency through sneaky-mcp over stdio, side by side: each server given on the
command line (a directory holding sneaky-mcp and the sneaky-run it starts as its launcher) is
started on its own workspace, and `true` is run through `tools/call` CALLS times per round,
the servers taking turns over ROUNDS rounds (the order reversed every other round) so that
load hits them alike. Prints per server the median and the minimum latency of a call (from
writing the request to reading its response), the median of the rounds' medians, and each
server's median against the first's.

  python3 benches/mcp_run.py BEFORE_DIR AFTER_DIR      # ROUNDS=5 CALLS=100
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


class Server:
    def __init__(self, name, directory, workspace):
        self.name = name
        self.proc = subprocess.Popen(
            [os.path.join(directory, "sneaky-mcp"), "--root", workspace],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "mcp_run.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def run_true(self):
        started = time.perf_counter()
        reply = self.call("tools/call", {"name": "run_command", "arguments": {"command": "true"}})
        took = (time.perf_counter() - started) * 1000
        result = reply.get("result", {})
        if "error" in reply or result.get("isError"):
            sys.exit(f"{self.name}: the call failed: {reply}")
        return took

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(__doc__)
    rounds = int(os.environ.get("ROUNDS", "5"))
    calls = int(os.environ.get("CALLS", "100"))
    with tempfile.TemporaryDirectory() as work:
        servers = []
        for i, d in enumerate(dirs):
            ws = os.path.join(work, f"ws{i}")
            os.mkdir(ws)
            servers.append(Server(f"{i + 1}: {d}", d, ws))
        for s in servers:
            for _ in range(10):
                s.run_true()
        times = {s.name: [] for s in servers}
        medians = {s.name: [] for s in servers}
        for r in range(rounds):
            load = open("/proc/loadavg").read().split()[:3]
            print(f"round {r + 1}/{rounds} (load: {' '.join(load)})", flush=True)
            order = servers if r % 2 == 0 else servers[::-1]
            for s in order:
                got = [s.run_true() for _ in range(calls)]
                times[s.name] += got
                medians[s.name].append(statistics.median(got))
        for s in servers:
            s.close()
    names = [s.name for s in servers]
    first = statistics.median(medians[names[0]])
    print(f"\n{'server':40} {'median ms':>10} {'min ms':>8} {'rounds med':>11} {'× first':>8}")
    for n in names:
        med = statistics.median(medians[n])
        print(f"{n[-40:]:40} {statistics.median(times[n]):10.2f} {min(times[n]):8.2f} "
              f"{med:11.2f} {med / first:8.2f}")


if __name__ == "__main__":
    main()
