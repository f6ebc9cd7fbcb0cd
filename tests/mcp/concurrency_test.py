"""sneaky-mcp's concurrency, cancellation, progress and HTTP security, driven by the official
Python MCP SDK over stdio and over Streamable HTTP.

Usage: concurrency_test.py SNEAKY_MCP_BINARY WORKSPACE_ROOT

WORKSPACE_ROOT must hold hello.txt ("hello world\\n"). Run by tests/suite/mcp_concurrency.rs with
the venv that .ci/setup-mcp.sh makes. Prints one line per check passed and exits non-zero on the
first failure.
"""

import asyncio
import os
import re
import secrets
import subprocess
import sys
import time
import warnings
from pathlib import Path

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

warnings.filterwarnings("ignore", message="ping is removed")

TIMEOUT = 60


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}")


def processes_running(marker):
    """Live processes whose command line contains `marker` (zombies do not count)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append(int(pid))
    return found


async def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        await anyio.sleep(0.005)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


async def exercise(client, label, root):
    """The same checks over either transport."""
    tools = {t.name for t in (await client.list_tools()).tools}
    check("run_command" in tools and "read_file" in tools, f"{label}: tools listed")

    # Parallel calls: twenty reads at once, each answered with its own result.
    for i in range(20):
        (Path(root) / f"many/f{i}.txt").parent.mkdir(exist_ok=True)
        (Path(root) / f"many/f{i}.txt").write_text(f"file {i}\n")
    results = await asyncio.gather(
        *(client.call_tool("read_file", {"file_path": f"many/f{i}.txt"}) for i in range(20))
    )
    check(all(r.structured_content["content"] == f"file {i}\n" for i, r in enumerate(results)),
          f"{label}: 20 parallel read_file calls each got their own answer")

    # A long command does not hold up pings, lists and reads.
    marker = f"{3000 + secrets.randbelow(999)}.{secrets.randbelow(10**6):06d}"
    long_call = asyncio.create_task(client.call_tool("run_command", {"command": f"sleep 6 && echo {marker}"}))
    await anyio.sleep(0.3)
    t0 = time.monotonic()
    await client.send_ping()
    await client.list_tools()
    r = await client.call_tool("read_file", {"file_path": "hello.txt"})
    quick = time.monotonic() - t0
    check(r.structured_content["content"] == "hello world\n" and not long_call.done(),
          f"{label}: ping, tools/list and read_file answered while a command runs")
    check(quick < 4, f"{label}: ... within {quick:.3f} s, not after the command")
    r = await long_call
    check(not r.is_error and marker in r.structured_content["stdout"], f"{label}: the long command finished")

    # Progress: a command that prints, waits and prints again reports elapsed time and bytes.
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total, message))

    r = await client.call_tool(
        "run_command", {"command": "seq 1 20000 && sleep 1.3 && seq 1 20000"},
        progress_callback=on_progress)
    check(not r.is_error and r.structured_content["exit_code"] == 0, f"{label}: progress command ran")
    check(len(updates) >= 2, f"{label}: {len(updates)} progress notifications received")
    progresses = [u[0] for u in updates]
    check(progresses == sorted(progresses) and len(set(progresses)) == len(progresses),
          f"{label}: progress increases: {progresses}")
    sizes = [int(re.search(r"(\d+) bytes", u[2]).group(1)) for u in updates]
    check(sizes[0] > 0 and sizes == sorted(sizes), f"{label}: bytes of output so far: {sizes}")

    # Cancellation: the command's whole process tree goes, and the server goes on.
    marker = f"{4000 + secrets.randbelow(999)}.{secrets.randbelow(10**6):06d}"
    command = f"sleep {marker} | sleep {marker} && echo never"
    scope = anyio.CancelScope()
    outcome = {}

    async def doomed():
        with scope:
            outcome["result"] = await client.call_tool("run_command", {"command": command})

    async with anyio.create_task_group() as tg:
        tg.start_soon(doomed)
        await wait_for(lambda: len(processes_running(f"sleep {marker}")) >= 2, 10,
                       "the two sleeps to start")
        cancelled_at = time.monotonic()
        scope.cancel()
    gone_at = await wait_for(lambda: not processes_running(f"sleep {marker}"), 3,
                             "the cancelled command's processes to go")
    check("result" not in outcome, f"{label}: the cancelled call got no result")
    check(True, f"{label}: cancelled command's process tree gone {1000 * (gone_at - cancelled_at):.0f} ms "
                "after the cancellation was sent")
    await client.send_ping()
    r = await client.call_tool("read_file", {"file_path": "hello.txt"})
    check(not r.is_error, f"{label}: the server serves on after a cancellation")


async def over_stdio(binary, root):
    server = StdioServerParameters(command=binary, args=["--root", root])
    async with Client(server, read_timeout_seconds=TIMEOUT) as client:
        await exercise(client, "stdio", root)


def start_http_server(binary, root, token):
    env = dict(os.environ, SNEAKY_MCP_TOKEN=token)
    server = subprocess.Popen([binary, "--root", root, "--http", "127.0.0.1:0"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        line = server.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"listening on (http://\S+/mcp)", line)
        if m:
            return server, m.group(1)
    server.kill()
    raise AssertionError(f"the HTTP server did not start: {''.join(lines)}")


async def http_security(url, token, root):
    """Requests without the token, with a wrong one or from a foreign Origin run nothing."""
    marker = Path(root) / "must-not-exist.txt"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}}
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=30) as http:
        r = await http.post(url, json=init, headers={**base, "Authorization": f"Bearer {token}"})
        check(r.status_code == 200 and "mcp-session-id" in r.headers, "http: initialize with the token")
        session = r.headers["mcp-session-id"]
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers={**base, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session})
        write = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "write_file",
                            "arguments": {"file_path": marker.name, "content": "x"}}}
        run = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "run_command", "arguments": {"command": f"touch {marker.name}"}}}
        for label, headers in [
            ("no token", {}),
            ("a wrong token", {"Authorization": "Bearer " + "0" * len(token)}),
            ("a token of another scheme", {"Authorization": f"Basic {token}"}),
        ]:
            for body in (init, write, run):
                r = await http.post(url, json=body, headers={**base, **headers, "Mcp-Session-Id": session})
                check(r.status_code == 401, f"http: {label}: {body['method']} refused with 401")
                check("mcp-session-id" not in r.headers, f"http: {label}: no session opened")
        r = await http.post(url, json=write, headers={**base, "Authorization": f"Bearer {token}",
                                                         "Mcp-Session-Id": session,
                                                         "Origin": "http://evil.example"})
        check(r.status_code == 403, "http: a foreign Origin is refused with 403")
        r = await http.post(url, json=write, headers={**base, "Authorization": f"Bearer {token}",
                                                         "Mcp-Session-Id": "not-a-session"})
        check(r.status_code == 404, "http: an unknown session gets 404")
        await anyio.sleep(0.3)
        check(not marker.exists(), "http: nothing ran for refused requests")
        r = await http.delete(url, headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session})
        check(r.status_code == 204, "http: DELETE ends the session")


async def over_http(binary, root):
    token = secrets.token_hex(24)
    server, url = start_http_server(binary, root, token)
    try:
        await http_security(url, token, root)
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(30, read=300))
        async with http:
            async with Client(streamable_http_client(url, http_client=http),
                              read_timeout_seconds=TIMEOUT) as client:
                check(client.server_info.name == "sneaky-mcp", "http: the official client connects")
                await exercise(client, "http", root)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


async def main(binary, root):
    await over_stdio(binary, root)
    await over_http(binary, root)
    print("all concurrency checks passed")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
