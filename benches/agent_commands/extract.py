#!/usr/bin/env python3
"""Build the corpus of real agent shell commands (commands.jsonl.gz) from public repositories.

Each source below is a public GitHub repository that holds agent trajectories or session logs.
Its git directory (a bare clone or snapshot, history included where a source's files were later
removed) is found under MIRRORS/<owner>+<name>/repo, or MIRRORS/<owner>+<name> itself. The
extractor reads blobs with `git cat-file`, never checks anything out and runs nothing it reads.

For each shell command an agent issued it records one row
  {"agent", "model", "source", "command"}
where "source" is "owner/name:path" (and "@blob" when the file is only in the history), and
"command" is the text exactly as the agent handed it to its shell tool:
  - Claude Code: the `command` of a `Bash` tool_use;
  - Codex CLI: `exec_command`'s `cmd`, `shell_command`'s `command`, or for the argv forms
    (`shell`, `local_shell_call`) the script of `bash -lc SCRIPT`, else the argv joined as a
    shell would read it (shlex.join);
  - mini-swe-agent: the one ```bash block of a step (the agent's own rule: exactly one block,
    stripped), read from the terminal log terminal-bench recorded;
  - SWE-agent: the action of a step, less SWE-agent's own interface commands (open, edit,
    goto, ...), which are functions of its environment rather than shell programs.

Rows are distinct by (agent, command). No agent may hold more than MAX_SHARE of the rows: an
agent over it keeps a deterministic subset, spread evenly over its source repositories (a
small source whole, the large ones trimmed alike, each by the SHA-256 of the command text).

Usage: extract.py [--mirrors DIR] [--out FILE] [--max-share F]
"""

import argparse
import collections
import gzip
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys

# SWE-agent's interface commands (its tools bundles and the 0.x command files): they are
# functions or scripts of its own environment, not programs an ordinary shell would run.
SWE_AGENT_INTERFACE = {
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_dir",
    "search_file", "find_file", "submit", "str_replace_editor", "filemap", "skip",
    "exit_forfeit", "exit_cost", "exit_context", "exit_format", "exit_api", "exit_error",
    "forfeit", "insert", "append", "review_on_submit", "view_image",
    # EnIGMA's (SWE-agent for CTFs) debugger, decompiler and connection commands
    "decompile", "disassemble", "debug_start", "debug_add_breakpoint", "debug_continue",
    "debug_step", "debug_exec", "debug_stop", "connect_start", "connect_sendline",
    "connect_exec", "connect_stop",
}

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


class Git:
    """Reads one repository's blobs through a single `git cat-file --batch` process."""

    def __init__(self, gitdir):
        self.gitdir = gitdir
        self.proc = subprocess.Popen(
            ["git", "--git-dir", gitdir, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.head = self._out(["rev-parse", "HEAD"]).strip()

    def _out(self, args):
        return subprocess.run(["git", "--git-dir", self.gitdir] + args, check=True,
                              capture_output=True).stdout.decode()

    def head_files(self):
        """(path, blob) of every file in HEAD."""
        out = self._out(["ls-tree", "-r", "HEAD"])
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            _, kind, blob = meta.split()
            if kind == "blob":
                yield path, blob

    def history_files(self):
        """(path, blob) of every file version reachable from any ref, objects the snapshot
        lacks left out."""
        out = subprocess.run(
            ["git", "--git-dir", self.gitdir, "rev-list", "--all", "--objects",
             "--missing=allow-any"], capture_output=True).stdout.decode(errors="replace")
        seen = set()
        for line in out.splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[0] not in seen:
                seen.add(parts[0])
                yield parts[1], parts[0]

    def read(self, blob):
        self.proc.stdin.write(blob.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] != "blob":
            if len(header) >= 3:
                self.proc.stdout.read(int(header[2]) + 1)
            return None
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.read(1)
        return data


def jsonl(data):
    for line in data.decode("utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def claude_commands(data):
    """(model, cwd, command) of every Bash tool_use in a Claude Code transcript or stream-json
    log (a transcript's records carry the cwd; a stream-json log says it in its init record)."""
    cwd = ""
    for rec in jsonl(data):
        if isinstance(rec.get("cwd"), str):
            cwd = rec["cwd"]
        msg = rec.get("message")
        if isinstance(msg, dict) and msg.get("subtype") == "init" and isinstance(
                msg.get("cwd"), str):
            cwd = msg["cwd"]
        if rec.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if (isinstance(block, dict) and block.get("type") == "tool_use"
                    and block.get("name") == "Bash"):
                cmd = (block.get("input") or {}).get("command")
                if isinstance(cmd, str):
                    yield msg.get("model") or "", cwd, cmd


MD_BASH = re.compile(r"🔧 Using tool: Bash\nInput: ")


def markdown_claude_commands(text):
    """The `command` of every Bash call in a Markdown export of a Claude Code session that
    renders a call as "🔧 Using tool: Bash" followed by "Input: " and the call's JSON input."""
    decoder = json.JSONDecoder()
    for m in MD_BASH.finditer(text):
        try:
            args, _ = decoder.raw_decode(text, m.end())
        except json.JSONDecodeError:
            continue
        if isinstance(args, dict) and isinstance(args.get("command"), str):
            yield args["command"]


def steps_claude_commands(data):
    """(model, cwd, command) of the Bash calls of a trajectory JSON that lists `steps` of type
    `tool_call` (OpenAgents' autopilot runs of Claude, docs/logs/*.json)."""
    try:
        traj = json.loads(data)
    except json.JSONDecodeError:
        return
    if not isinstance(traj, dict) or not isinstance(traj.get("steps"), list):
        return
    model, cwd = traj.get("model") or "", traj.get("cwd") or ""
    for step in traj["steps"]:
        if (isinstance(step, dict) and step.get("type") == "tool_call"
                and step.get("tool") == "Bash"):
            cmd = (step.get("input") or {}).get("command")
            if isinstance(cmd, str):
                yield model, cwd, cmd


def argv_command(argv):
    if (len(argv) == 3 and os.path.basename(argv[0]) in ("bash", "sh", "zsh")
            and argv[1] in ("-lc", "-c")):
        return argv[2]
    return shlex.join(argv)


def codex_commands(data):
    """(model, cwd, command) of every shell call in a Codex CLI rollout."""
    model = ""
    cwd = ""
    for rec in jsonl(data):
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            continue
        if rec.get("type") in ("session_meta", "turn_context"):
            model = payload.get("model") or model
            cwd = payload.get("cwd") or cwd
            continue
        if rec.get("type") != "response_item":
            continue
        kind = payload.get("type")
        if kind == "local_shell_call":
            argv = (payload.get("action") or {}).get("command")
            if isinstance(argv, list) and argv:
                workdir = (payload.get("action") or {}).get("working_directory")
                yield model, workdir or cwd, argv_command([str(a) for a in argv])
            continue
        if kind != "function_call":
            continue
        name = payload.get("name")
        try:
            args = json.loads(payload.get("arguments") or "{}")
        except json.JSONDecodeError:
            continue
        if not isinstance(args, dict):
            continue
        workdir = args.get("workdir") if isinstance(args.get("workdir"), str) else cwd
        if name == "exec_command" and isinstance(args.get("cmd"), str):
            yield model, workdir, args["cmd"]
        elif name == "shell_command" and isinstance(args.get("command"), str):
            yield model, workdir, args["command"]
        elif name in ("shell", "container.exec") and isinstance(args.get("command"), list):
            yield model, workdir, argv_command([str(a) for a in args["command"]])


MINI_STEP = re.compile(r"^mini-swe-agent \(step \d+, \$[0-9.]+\):$")
MINI_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
# mini-swe-agent 2.x names its block so that a plain bash example in prose is not taken.
MINI_V2_BLOCK = re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.DOTALL)


def terminal_lines(data):
    """The lines a terminal log shows: ANSI sequences dropped, a carriage return's overwrite
    applied."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    for line in text.split("\n"):
        line = ANSI.sub("", line)
        yield line.split("\r")[-1]


MINI_LAUNCH = re.compile(r"^\S+@\S+?:(/\S*)# mini ")


def mini_log_commands(data):
    """(cwd, command) of each step of a mini-swe-agent run, from its terminal log: the text
    after a step's header up to the next 'User:' line holds the model's answer; the cwd is the
    one the shell prompt showed when `mini` was started."""
    answer = None
    cwd = ""
    for line in terminal_lines(data):
        launch = MINI_LAUNCH.match(line)
        if launch:
            cwd = launch.group(1)
        if MINI_STEP.match(line.strip()):
            answer = []
        elif answer is not None and line.strip() == "User:":
            blocks = MINI_BLOCK.findall("\n".join(answer))
            if len(blocks) == 1:
                yield cwd, blocks[0].strip()
            answer = None
        elif answer is not None:
            answer.append(line)


def mini_traj_commands(data):
    """The command of each step of a mini-swe-agent trajectory: a dict with `messages` (and
    the model under info.config), or, in its first versions, the bare list of messages."""
    try:
        traj = json.loads(data)
    except json.JSONDecodeError:
        return
    model = ""
    cwd = ""
    if isinstance(traj, dict):
        config = (traj.get("info") or {}).get("config") or {}
        if isinstance(config, dict):
            model = (config.get("model") or {}).get("model_name", "")
            cwd = (config.get("environment") or {}).get("cwd", "")
        traj = traj.get("messages") or []
    if not isinstance(traj, list):
        return
    for msg in traj:
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            continue
        # mini-swe-agent 2.x with a tool-calling model: one `bash` call per command.
        calls = [c.get("function") for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        calls = [f for f in calls if isinstance(f, dict) and f.get("name") == "bash"]
        if calls:
            for call in calls:
                try:
                    args = json.loads(call.get("arguments") or "{}")
                except json.JSONDecodeError:
                    continue
                if isinstance(args, dict) and isinstance(args.get("command"), str):
                    yield model, cwd, args["command"]
            continue
        content = msg.get("content")
        if not isinstance(content, str):
            continue
        blocks = MINI_V2_BLOCK.findall(content) or MINI_BLOCK.findall(content)
        if len(blocks) == 1:
            yield model, cwd, blocks[0].strip()


def swe_agent_commands(data):
    """(cwd, action) of the shell actions of a SWE-agent .traj, less its interface commands;
    the cwd is the working_dir of the step's state (the state after the action: an action that
    moved would otherwise be rebased wrongly, so the first step's state is taken for all)."""
    try:
        traj = json.loads(data)
    except json.JSONDecodeError:
        return
    if not isinstance(traj, dict):
        return
    cwd = ""
    for step in traj.get("trajectory") or []:
        if not isinstance(step, dict):
            continue
        if not cwd:
            try:
                state = json.loads(step.get("state") or "{}")
            except (TypeError, json.JSONDecodeError):
                state = {}
            if isinstance(state, dict) and isinstance(state.get("working_dir"), str):
                cwd = state["working_dir"]
        action = step.get("action")
        if not isinstance(action, str):
            continue
        action = action.strip()
        first = action.split(None, 1)[0] if action else ""
        # "DISCUSSION" opens the thought in SWE-agent's prompt format: a step whose action
        # starts with it is a model that broke the format, not a command it chose.
        if first and first not in SWE_AGENT_INTERFACE and first != "DISCUSSION":
            yield cwd, action


def mirror(root, repo):
    base = os.path.join(root, repo.replace("/", "+"))
    for cand in (os.path.join(base, "repo"), base):
        if os.path.isfile(os.path.join(cand, "HEAD")):
            return cand
    sys.exit(f"extract.py: no git directory for {repo} under {root} (fetch its snapshot)")


def source_terminal_bench_mini(git, repo):
    prefix = "results/terminal-bench-core@0.1.1/20250825_swe-agent-mini_claude-4-sonnet/"
    files = dict(git.head_files())
    for path, blob in sorted(files.items()):
        if not (path.startswith(prefix) and path.endswith("/sessions/agent.log")):
            continue
        trial = path[: -len("sessions/agent.log")]
        model = "claude-sonnet-4-20250514"
        cmds = files.get(trial + "commands.txt")
        if cmds:
            m = re.search(r"mini -m (\S+)", git.read(cmds).decode(errors="replace"))
            if m:
                model = m.group(1).split("/")[-1]
        for cwd, cmd in mini_log_commands(git.read(blob)):
            yield "mini-swe-agent", model, f"{repo}:{path}", cwd, cmd


def source_multi_swe_bench(git, repo):
    for path, blob in sorted(git.head_files()):
        m = re.match(r"evaluation/.*/\d+_SWE-agent_([^/]+)/trajs/[^/]+\.traj$", path)
        if m:
            for cwd, cmd in swe_agent_commands(git.read(blob)):
                yield "swe-agent", m.group(1), f"{repo}:{path}", cwd, cmd


def source_swe_agent_repo(git, repo):
    for path, blob in sorted(git.head_files()):
        if path.endswith(".traj") and ("trajectories/" in path):
            data = git.read(blob)
            model = ""
            m = re.search(r"(?:^|/)(gpt4|claude[^_/]*|gpt-4o[^_/]*)__", path)
            if m:
                model = m.group(1)
            for cwd, cmd in swe_agent_commands(data):
                yield "swe-agent", model, f"{repo}:{path}", cwd, cmd


def source_mini_repo(git, repo):
    seen = set()
    for path, blob in sorted(git.history_files()):
        if not (path.endswith(".traj.json") or path.endswith(".traj")) or blob in seen:
            continue
        seen.add(blob)
        data = git.read(blob)
        if data is None:
            continue
        for model, cwd, cmd in mini_traj_commands(data):
            yield "mini-swe-agent", model, f"{repo}:{path}@{blob[:12]}", cwd, cmd


MD_FILE_PATH = re.compile(r'"file_path": "(/[^"]+)"')


def markdown_workspace(text):
    """The export does not say the session's cwd: the deepest directory that holds every file
    the session's Read/Write/Edit calls named stands for it (none when that is shallower than
    three levels, e.g. /Users/name)."""
    dirs = [os.path.dirname(p) for p in MD_FILE_PATH.findall(text)]
    if not dirs:
        return ""
    common = os.path.commonpath(dirs)
    return common if common.count("/") >= 3 else ""


def source_markdown_transcripts(git, repo):
    """Claude Code sessions exported to Markdown (docs/transcripts/claude-code/*.md)."""
    for path, blob in sorted(git.head_files()):
        if path.startswith("docs/transcripts/claude-code/") and path.endswith(".md"):
            text = git.read(blob).decode("utf-8", errors="replace")
            cwd = markdown_workspace(text)
            for cmd in markdown_claude_commands(text):
                yield "claude-code", "", f"{repo}:{path}", cwd, cmd


def source_conversation_logs(git, repo):
    """Claude Code and Codex session logs committed as files (HEAD and history)."""
    head = {blob for _, blob in git.head_files()}
    seen = set()
    for path, blob in sorted(git.history_files()):
        if path.startswith("docs/logs/") and path.endswith(".json") and blob not in seen:
            seen.add(blob)
            data = git.read(blob)
            if data is None:
                continue
            where = f"{repo}:{path}" if blob in head else f"{repo}:{path}@{blob[:12]}"
            for model, cwd, cmd in steps_claude_commands(data):
                yield "claude-code", model, where, cwd, cmd
            continue
        if not path.endswith(".jsonl") or blob in seen:
            continue
        seen.add(blob)
        data = git.read(blob)
        if data is None:
            continue
        where = f"{repo}:{path}" if blob in head else f"{repo}:{path}@{blob[:12]}"
        # A Codex rollout (or an export of its records): response_item records, which a
        # Claude Code log never has.
        if re.search(rb'"type": ?"(session_meta|response_item)"', data):
            for model, cwd, cmd in codex_commands(data):
                yield "codex-cli", model, where, cwd, cmd
        else:
            for model, cwd, cmd in claude_commands(data):
                yield "claude-code", model, where, cwd, cmd


# (repository, reader)
SOURCES = [
    ("laude-institute/terminal-bench-leaderboard", source_terminal_bench_mini),
    ("multi-swe-bench/experiments", source_multi_swe_bench),
    ("SWE-agent/SWE-agent", source_swe_agent_repo),
    ("SWE-agent/mini-swe-agent", source_mini_repo),
    ("agurod42/torre-swipe", source_conversation_logs),
    ("OpenAgentsInc/openagents", source_conversation_logs),
    ("jerometremblay/codex_log_viewer", source_conversation_logs),
    ("nikblanchet/claude-code-production-patterns", source_markdown_transcripts),
    ("gruckion/mini-swe-agent", source_mini_repo),
]

# Paths in a conversation-log source that are test fixtures of a tool, not real sessions.
FIXTURE = re.compile(r"(^|/)(tests?|fixtures?|samples?|__tests__)/")


def keep_evenly(items, limit):
    """At most `limit` of an agent's rows, spread over its source repositories so that a small
    source is kept whole and the large ones are trimmed to the same size (the largest t with
    sum(min(n_i, t)) <= limit); within a source, the rows first by the SHA-256 of their text."""
    by_source = collections.defaultdict(list)
    for row in items:
        by_source[row["source"].split(":", 1)[0]].append(row)
    sizes = sorted(len(v) for v in by_source.values())
    if sum(sizes) <= limit:
        return list(items)
    t, left, n = 0, limit, len(sizes)
    for i, size in enumerate(sizes):
        share = left // (n - i)
        if size <= share:
            left -= size
        else:
            t = share
            break
    kept = []
    for rows in by_source.values():
        rows.sort(key=lambda r: hashlib.sha256(r["command"].encode()).hexdigest())
        kept.extend(rows[: t] if len(rows) > t else rows)
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                  "commands.jsonl.gz"))
    ap.add_argument("--max-share", type=float, default=0.4)
    ap.add_argument("--sources-out", default=os.path.join(os.path.dirname(__file__),
                                                          "sources.json"))
    args = ap.parse_args()

    rows = {}
    commits = {}
    for repo, reader in SOURCES:
        git = Git(mirror(args.mirrors, repo))
        commits[repo] = git.head
        n = 0
        for agent, model, source, cwd, cmd in reader(git, repo):
            path = source.split(":", 1)[1]
            if reader is source_conversation_logs and FIXTURE.search(path):
                continue
            if not cmd.strip() or "\x00" in cmd:
                continue
            key = (agent, cmd)
            if key not in rows:
                rows[key] = {"agent": agent, "model": model, "source": source, "cwd": cwd,
                             "command": cmd}
                n += 1
        print(f"{repo}: {n} new distinct commands", file=sys.stderr)

    by_agent = collections.defaultdict(list)
    for row in rows.values():
        by_agent[row["agent"]].append(row)
    total = len(rows)
    # The cap is a share of the corpus as it ends up: an agent over it keeps
    # max_share / (1 - max_share) times the rows of all the others together.
    cap = {}
    for agent, items in by_agent.items():
        others = total - len(items)
        if args.max_share >= 1:
            continue
        limit = int(args.max_share / (1 - args.max_share) * others)
        if len(items) > limit:
            cap[agent] = limit
    out_rows = []
    for agent, items in sorted(by_agent.items()):
        kept = keep_evenly(items, cap.get(agent, len(items)))
        print(f"{agent}: {len(items)} distinct, {len(kept)} kept", file=sys.stderr)
        out_rows.extend(kept)
    out_rows.sort(key=lambda r: (r["agent"], r["source"], r["command"]))

    with gzip.GzipFile(args.out, "wb", mtime=0) as f:
        for row in out_rows:
            f.write((json.dumps(row, ensure_ascii=False) + "\n").encode())
    with open(args.sources_out, "w") as f:
        json.dump({"sources": [{"repository": r, "commit": commits[r]} for r, _ in SOURCES]},
                  f, indent=2)
        f.write("\n")
    distinct = len({r["command"] for r in out_rows})
    print(f"{len(out_rows)} rows, {distinct} distinct commands -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
