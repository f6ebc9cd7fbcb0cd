#!/usr/bin/env python3
"""Run every command of the corpus through `sneaky-run --check-policy` (the policy step only:
nothing is run) and report how many are refused, per agent, and why.

Each distinct command text is checked once, on an empty temporary workspace, with
XDG_CONFIG_HOME pointing at an empty directory and SNEAKY_CONFIG unset, so only the defaults
(or the file given with --config) apply. The agent's own working directory (a row's "cwd":
/testbed, /app, the developer's checkout) stood where the temporary workspace stands now, so
that path, where the command names it, is rebased onto the workspace before the check (else
`cd /testbed && …` would be refused for a path that was the workspace); --no-rebase checks
the texts as they are. The figures are over distinct (rebased) command texts; the per-agent
figures are over each agent's distinct commands (a text two agents issued counts for both).

Usage: policy_check.py --sneaky-run BIN [--corpus FILE] [--config FILE] [--jobs N]
                       [--refused-out FILE] [--top N] [--agent NAME] [--no-rebase]
"""

import argparse
import collections
import concurrent.futures
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The policy names the part of the line it refuses first: "`segment`: reason".
SEGMENT = re.compile(r"^`(.*?)`: (?=\S)", re.DOTALL)
QUOTED = re.compile(r"`[^`]*`")
# A reason that names a program first ("python3 is in the default denied list ...",
# "./gradlew: a command given by path runs only ...").
PROGRAM_FIRST = re.compile(r"^(\S+?)(:? (is|are) |: a command given by path)")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check(binary, root, config, env, command):
    args = [binary, "--check-policy", "--root", root]
    if config:
        args += ["--config", config]
    proc = subprocess.run(args, input=json.dumps({"command": command}).encode(),
                          capture_output=True, env=env, timeout=60)
    try:
        envelope = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return "broken", proc.stderr.decode(errors="replace").strip() or "no JSON answer"
    if envelope.get("ok"):
        return "allowed", ""
    error = envelope.get("error") or {}
    return error.get("code", "unknown"), error.get("message", "")


def rebase(command, cwd, root):
    """`command` with its agent's working directory `cwd` (where it stands as a whole path or
    a path's leading part) replaced by the workspace `root`."""
    if not cwd or cwd == "/":
        return command
    return re.sub(re.escape(cwd.rstrip("/")) + r"(?=/|$|[\s\"'`;&|)<>])", root, command)


def reason_of(message):
    """The reason without the part of the command it quotes, programs kept apart."""
    m = SEGMENT.match(message)
    reason = message[m.end():] if m else message
    reason = QUOTED.sub("`…`", reason).split("\n", 1)[0]
    program = None
    p = PROGRAM_FIRST.match(reason)
    if p:
        program = p.group(1)
        reason = "PROGRAM" + reason[len(program):]
    reason = re.sub(r"\(to allow it.*?\)", "(…)", reason)
    return reason, program


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sneaky-run", required=True)
    ap.add_argument("--corpus", default=os.path.join(HERE, "commands.jsonl.gz"))
    ap.add_argument("--config", help="a configuration file to check with (else the defaults)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", "1")))
    ap.add_argument("--refused-out", help="write the refused commands here (JSON lines)")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--agent", action="append", help="only these agents")
    ap.add_argument("--no-rebase", action="store_true",
                    help="check the commands as they are, their agent's cwd not rebased")
    args = ap.parse_args()

    rows = load(args.corpus)
    if args.agent:
        rows = [r for r in rows if r["agent"] in args.agent]

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(os.path.realpath(tmp), "ws")
        for r in rows:
            r["checked"] = r["command"] if args.no_rebase else rebase(
                r["command"], r.get("cwd", ""), root)
        texts = sorted({r["checked"] for r in rows})
        xdg = os.path.join(tmp, "xdg")
        os.makedirs(root)
        os.makedirs(xdg)
        env = {k: v for k, v in os.environ.items() if k != "SNEAKY_CONFIG"}
        env["XDG_CONFIG_HOME"] = xdg
        config = os.path.abspath(args.config) if args.config else None
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            verdicts = dict(zip(texts, pool.map(
                lambda t: check(args.sneaky_run, root, config, env, t), texts)))
        elapsed = time.monotonic() - start

    broken = [t for t in texts if verdicts[t][0] == "broken"]
    if broken:
        print(f"{len(broken)} checks gave no JSON answer, e.g.: {verdicts[broken[0]][1]}",
              file=sys.stderr)
    refused = [t for t in texts if verdicts[t][0] != "allowed"]
    what = f"with {args.config}" if args.config else "with the defaults"
    print(f"corpus: {args.corpus}")
    print(f"{len(texts)} distinct commands checked {what} in {elapsed:.0f} s")
    print(f"refused: {len(refused)} of {len(texts)} = {100 * len(refused) / max(1, len(texts)):.1f} %")

    print("\nper agent (distinct commands of each):")
    per_agent = collections.defaultdict(set)
    for r in rows:
        per_agent[r["agent"]].add(r["checked"])
    for agent, cmds in sorted(per_agent.items()):
        n = sum(1 for t in cmds if verdicts[t][0] != "allowed")
        print(f"  {agent:16} {n:6} of {len(cmds):6} = {100 * n / len(cmds):5.1f} %")

    reasons = collections.Counter()
    example = {}
    programs = collections.Counter()
    for t in refused:
        code, message = verdicts[t]
        reason, program = reason_of(message)
        key = f"[{code}] {reason}"
        reasons[key] += 1
        example.setdefault(key, (t, message))
        if program:
            programs[program] += 1

    print(f"\nrefusal reasons (top {args.top} of {len(reasons)}; count, reason, an example):")
    for key, n in reasons.most_common(args.top):
        cmd, message = example[key]
        short = cmd if len(cmd) <= 100 else cmd[:97] + "..."
        short = short.replace(root, "$WS")
        print(f"  {n:6}  {key}")
        print(f"          e.g. {json.dumps(short)}")
    if programs:
        print(f"\nprograms named by a refusal (top {args.top}):")
        print("  " + ", ".join(f"{p} {n}" for p, n in programs.most_common(args.top)))

    if args.refused_out:
        first = {}
        for r in rows:
            first.setdefault(r["checked"], r)
        with open(args.refused_out, "w", encoding="utf-8") as f:
            for t in refused:
                code, message = verdicts[t]
                row = dict(first[t])
                row["checked"] = row["checked"].replace(root, "$WS")
                row["code"] = code
                row["message"] = message.replace(root, "$WS")
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"\nrefused commands written to {args.refused_out}")


if __name__ == "__main__":
    main()
