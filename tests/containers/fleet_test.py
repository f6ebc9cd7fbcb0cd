"""Four workspaces in Podman containers (deploy/build-image.sh, deploy/workspace.sh), driven by
the official Python MCP SDK over Streamable HTTP, and probed from inside.

Usage: fleet_test.py REPO BINARIES_DIR

As root with podman, runc, iptables, curl and cc (.ci/setup-podman.sh, .ci/setup-sandbox.sh).
Builds the image from BINARIES_DIR (the test build's), starts four workspaces, each owned by
another uid; through the client each reads, greps and runs commands; inside, the raw-syscall
probe (tests/containers/probe.c) tries to write outside, run a denied program (rm, denied by the
test's configuration) directly and through ld.so, change .git/config, reach the other workspaces
and the host, see the server's process and read the token, and the effects are checked from outside. Then a fifth workspace
under a seccomp profile like Docker's default (unshare and mount only with CAP_SYS_ADMIN):
run_command refuses; under deploy/seccomp.json (Docker's default plus what the namespaces need)
it runs with every layer. Run by tests/suite/fleet.rs with the venv of .ci/setup-mcp.sh.
Prints one line per check passed and exits non-zero on the first failure.
"""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 120
WORKSPACES = 4


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}", flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def docker_like_profile(path):
    """Podman's default seccomp profile with what Docker's default keeps for CAP_SYS_ADMIN (the
    namespaces, mounts) allowed only with that capability, which a workspace never has."""
    profile = json.loads(Path("/usr/share/containers/seccomp.json").read_text())
    admin = {"unshare", "setns", "mount", "umount", "umount2", "pivot_root", "mount_setattr",
             "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "clone3"}
    for rule in profile["syscalls"]:
        if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("includes") and not rule.get("excludes"):
            rule["names"] = [n for n in rule["names"] if n not in admin]
    # Docker: clone only without namespace flags (CLONE_NEWNS|NEWUTS|NEWIPC|NEWUSER|NEWPID|
    # NEWNET|NEWCGROUP = 0x7E020000), unless CAP_SYS_ADMIN.
    for rule in profile["syscalls"]:
        if "clone" in rule["names"] and rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args"):
            rule["names"].remove("clone")
    profile["syscalls"].append({"names": ["clone"], "action": "SCMP_ACT_ALLOW",
                                "args": [{"index": 0, "value": 2114060288, "valueTwo": 0,
                                          "op": "SCMP_CMP_MASKED_EQ"}]})
    profile["syscalls"].append({"names": sorted(admin), "action": "SCMP_ACT_ALLOW",
                                "includes": {"caps": ["CAP_SYS_ADMIN"]}})
    Path(path).write_text(json.dumps(profile))


class Listener:
    """A TCP server on the host's every address: what reaches it is recorded."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = []
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop:
            try:
                conn, addr = self.sock.accept()
                self.connections.append(addr)
                conn.close()
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


class Fleet:
    def __init__(self, repo, tmp, image):
        self.repo = Path(repo)
        self.tmp = Path(tmp)
        self.image = image
        self.names = []
        self.env = dict(os.environ, SNEAKY_IMAGE=image, SNEAKY_WS_STATE=str(self.tmp / "tokens"),
                        SNEAKY_WS_CONFIG=str(self.tmp / "config.toml"))

    def up(self, directory, port, name, extra_env=None):
        env = dict(self.env, **(extra_env or {}))
        started = time.monotonic()
        out = run(["bash", str(self.repo / "deploy/workspace.sh"), "up", str(directory), str(port), name],
                  env=env)
        self.names.append(name)
        token_file = out.stdout.split("token: ", 1)[1].strip()
        return token_file, time.monotonic() - started

    def down(self):
        for name in self.names:
            subprocess.run(["bash", str(self.repo / "deploy/workspace.sh"), "down", name], env=self.env,
                           capture_output=True)


def workspace(tmp, i, probe):
    root = tmp / f"ws{i}"
    root.mkdir()
    (root / "hello.txt").write_text(f"hello from workspace {i}\n")
    (root / "src").mkdir()
    (root / "src/lib.rs").write_text(f"pub fn answer_{i}() -> u32 {{\n    {i}\n}}\n")
    (root / "victim.txt").write_text("delete me if you can\n")
    shutil.copy(probe, root / "probe")
    run(["git", "init", "-q", str(root)])
    run(["git", "-C", str(root), "add", "hello.txt", "src"])
    run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"])
    uid = 1000 + i
    run(["chown", "-R", f"{uid}:{uid}", str(root)])
    return root, uid


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def session(url, token_file, work):
    token = Path(token_file).read_text().strip()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(60, read=TIMEOUT))
    async with http:
        async with Client(streamable_http_client(url, http_client=http),
                          read_timeout_seconds=TIMEOUT) as client:
            return await work(client, token)


async def exercise(label, url, token_file, i, uid, secret, targets):
    async def work(client, token):
        r = await client.call_tool("read_file", {"file_path": "hello.txt"})
        check(not r.is_error and r.structured_content["content"] == f"hello from workspace {i}\n",
              f"{label}: read_file")
        r = await client.call_tool("grep_files", {"pattern": "fn answer_"})
        check(not r.is_error and f"answer_{i}" in json.dumps(r.structured_content), f"{label}: grep_files")
        r = await client.call_tool("run_command", {"command": "id -u && git status --short && cat hello.txt"})
        out = r.structured_content or {}
        check(not r.is_error and out.get("exit_code") == 0 and out["stdout"].startswith(f"{uid}\n"),
              f"{label}: run_command runs as the checkout's owner ({uid}), git works: {text_of(r)[:300]}")
        sandbox = out.get("sandbox", "")
        check(out.get("sandboxed") is True and "own /proc" in sandbox and "network denied" in sandbox
              and "landlock" in sandbox and "seccomp" in sandbox,
              f"{label}: every layer in force, own /proc included: {sandbox}")
        r = await client.call_tool("run_command", {"command": f"cat {secret}; cat hello.txt"})
        check(token not in text_of(r) and token not in json.dumps(r.structured_content or {}),
              f"{label}: a command cannot read the token ({secret})")
        r = await client.call_tool("run_command", {"command": " ".join(["./probe", secret, *targets])})
        out = r.structured_content or {}
        check(not r.is_error, f"{label}: the probe ran: {text_of(r)[:500]}")
        lines = out["stdout"].splitlines()
        print(f"{label}: probe said:\n  " + "\n  ".join(lines), flush=True)
        for line in lines:
            what, _, verdict = line.partition(": ")
            if what == "proc":
                check("none of them the server" in verdict, f"{label}: {line}")
            elif what == "read the token":
                check(verdict.startswith("refused") or verdict.startswith("empty"), f"{label}: {line}")
            else:
                check(verdict.startswith("refused"), f"{label}: {line}")
        expected = 7 + 2 + len(targets) + 2
        check(len(lines) == expected, f"{label}: the probe reported all {expected} attempts")
        check(token not in out["stdout"], f"{label}: the probe's output holds no token")
    await session(url, token_file, work)


async def main(repo, binaries):
    repo = Path(repo).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="sneaky-fleet-"))
    os.chmod(tmp, 0o755)
    image = f"localhost/sneaky-fleet-test:{os.getpid()}"
    fleet = Fleet(repo, tmp, image)
    listener = Listener()
    try:
        started = time.monotonic()
        out = run(["bash", str(repo / "deploy/build-image.sh"), image],
                  env=dict(os.environ, SNEAKY_BINARIES=binaries))
        check(True, f"image built in {time.monotonic() - started:.1f} s: {out.stdout.strip()}")

        probe = tmp / "probe"
        run(["cc", "-static", "-O2", "-o", str(probe), str(repo / "tests/containers/probe.c")])
        (tmp / "config.toml").write_text(
            # rm stands for a denied program (the image holds none of the default deny list's:
            # with every layer in force, rm itself runs and its deletion can be undone).
            (repo / "deploy/config.toml").read_text()
            + 'extra_allowed_commands = ["./probe"]\ndenied_commands = ["rm"]\n')

        spaces = []
        for i in range(1, WORKSPACES + 1):
            root, uid = workspace(tmp, i, probe)
            port = free_port()
            name = f"sneaky-fleet-{os.getpid()}-{i}"
            token_file, took = fleet.up(root, port, name)
            mode = os.stat(token_file).st_mode & 0o777
            check(mode == 0o600 and os.stat(token_file).st_uid == os.getuid(),
                  f"{name}: ready in {took:.2f} s; token file {token_file} is 0600, the caller's")
            spaces.append(dict(i=i, root=root, uid=uid, port=port, name=name, token_file=token_file,
                               secret=f"/run/secrets/{name}-token",
                               git_config=(root / ".git/config").read_bytes()))

        for s in spaces:
            info = json.loads(run(["podman", "inspect", s["name"]]).stdout)[0]
            nets = info["NetworkSettings"]["Networks"]
            s["ip"] = next(iter(nets.values()))["IPAddress"]
            gw = json.loads(run(["podman", "network", "inspect", f"{s['name']}-net"]).stdout)[0]
            s["gateway"] = gw["subnets"][0]["gateway"]
            token = Path(s["token_file"]).read_text().strip()
            check(token not in json.dumps(info), f"{s['name']}: the token is not in podman inspect")
            env = run(["podman", "exec", s["name"], "cat", "/proc/1/environ"]).stdout
            check(token not in env and "TOKEN=" not in env, f"{s['name']}: nor in the server's environment")
            r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                f"http://127.0.0.1:{s['port']}/healthz"], capture_output=True, text=True)
            check(r.stdout == "200", f"{s['name']}: /healthz answers 200 without a token")

        jobs = []
        for s in spaces:
            others = [f"{o['ip']}:8765" for o in spaces if o is not s]
            targets = others + [f"{s['gateway']}:{listener.port}", f"127.0.0.1:{listener.port}"]
            url = f"http://127.0.0.1:{s['port']}/mcp"
            jobs.append(exercise(s["name"], url, s["token_file"], s["i"], s["uid"], s["secret"], targets))
        await asyncio.wait_for(asyncio.gather(*jobs), TIMEOUT * 3)

        for s in spaces:
            check((s["root"] / "victim.txt").exists(), f"{s['name']}: victim.txt is still there")
            check((s["root"] / ".git/config").read_bytes() == s["git_config"], f"{s['name']}: .git/config unchanged")
            check(not (s["root"] / "gitconfig-moved").exists(), f"{s['name']}: .git/config not moved")
            left = subprocess.run(["podman", "exec", s["name"], "ls", "/pwned", "/home/sneaky/pwned",
                                   "/usr/local/bin/pwned"], capture_output=True, text=True)
            check(left.returncode != 0 and left.stdout == "", f"{s['name']}: nothing written outside /ws")
            config = run(["podman", "exec", s["name"], "cat", "/etc/xdg/sneaky/config.toml"]).stdout
            check("pwned" not in config, f"{s['name']}: the configuration unchanged")
            # The container's own firewall: the server's namespace starts no connection either.
            other = next(o for o in spaces if o is not s)
            for target in (f"{other['ip']}/8765", f"{s['gateway']}/{listener.port}"):
                r = subprocess.run(["podman", "exec", s["name"], "timeout", "5", "bash", "-c",
                                    f"echo x > /dev/tcp/{target}"], capture_output=True, text=True)
                check(r.returncode != 0, f"{s['name']}: the container itself cannot reach {target}")
        time.sleep(0.5)
        check(not listener.connections, f"the host's listener got no connection: {listener.connections}")

        # Under a profile like Docker's default the namespaces are lost: run_command refuses.
        profile = tmp / "docker-like-seccomp.json"
        docker_like_profile(profile)
        root, _ = workspace(tmp, WORKSPACES + 1, probe)
        name = f"sneaky-fleet-{os.getpid()}-docker"
        token_file, _ = fleet.up(root, free_port(), name, {"SNEAKY_SECCOMP": str(profile)})
        url = f"http://127.0.0.1:{fleet_port(name)}/mcp"

        async def refused(client, token):
            r = await client.call_tool("read_file", {"file_path": "hello.txt"})
            check(not r.is_error, "docker-like profile: read_file still works")
            r = await client.call_tool("run_command", {"command": "touch made-anyway"})
            message = text_of(r)
            check(r.is_error and "nothing ran" in message and "namespaces" in message,
                  f"docker-like profile: run_command refuses: {message}")
        await session(url, token_file, refused)
        check(not (root / "made-anyway").exists(), "docker-like profile: nothing ran")

        # The shipped profile (Docker's default plus the namespaces' calls) gives them back.
        root, uid = workspace(tmp, WORKSPACES + 2, probe)
        name = f"sneaky-fleet-{os.getpid()}-shipped"
        token_file, _ = fleet.up(root, free_port(), name,
                                 {"SNEAKY_SECCOMP": str(repo / "deploy/seccomp.json")})
        url = f"http://127.0.0.1:{fleet_port(name)}/mcp"

        async def runs(client, token):
            r = await client.call_tool("run_command", {"command": "id -u && touch made"})
            out = r.structured_content or {}
            check(not r.is_error and out.get("stdout") == f"{uid}\n" and "own /proc" in out.get("sandbox", ""),
                  f"deploy/seccomp.json: run_command runs with every layer: {text_of(r)[:300]}")
        await session(url, token_file, runs)
        check((root / "made").exists(), "deploy/seccomp.json: the command's file is there")

        # Down with its history kept, up again: the command's change is still undone.
        out = run(["bash", str(repo / "deploy/workspace.sh"), "down", "--keep-history", name], env=fleet.env)
        check("kept in the volume" in out.stdout, f"down --keep-history: {out.stdout.strip()}")
        other, _ = workspace(tmp, WORKSPACES + 3, probe)
        r = subprocess.run(["bash", str(repo / "deploy/workspace.sh"), "up", str(other), str(free_port()), name],
                           env=fleet.env, capture_output=True, text=True)
        check(r.returncode != 0 and "holds the history of" in r.stderr,
              f"up of another checkout over a kept history is refused: {r.stderr.strip()}")
        token_file, _ = fleet.up(root, free_port(), name,
                                 {"SNEAKY_SECCOMP": str(repo / "deploy/seccomp.json")})
        url = f"http://127.0.0.1:{fleet_port(name)}/mcp"

        async def undone(client, token):
            r = await client.call_tool("undo", {})
            check(not r.is_error and "made" in json.dumps(r.structured_content or {}),
                  f"after down --keep-history and up: undo takes back the command's change: {text_of(r)[:300]}")
        await session(url, token_file, undone)
        check(not (root / "made").exists(), "after down --keep-history and up: the file is gone again")
    finally:
        listener.close()
        fleet.down()
        subprocess.run(["podman", "rmi", "-f", image], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print("all fleet checks passed")


def fleet_port(name):
    ports = json.loads(run(["podman", "inspect", name]).stdout)[0]["NetworkSettings"]["Ports"]
    return int(ports["8765/tcp"][0]["HostPort"])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
