#!/usr/bin/env bash
# What applying a command's changes costs, an older build of sneaky-run against this tree's, side
# by side in one run (release builds):
#
# 1. A command that writes 1,000 files git ignores (`build/`, applied straight) and 100 it does
#    not (recorded for undo as one change), into a workspace that holds neither (each call's
#    are removed before the next, untimed): what the apply step adds to a build's call.
# 2. `sneaky-run true`: the start-up and a call's fixed cost, which the apply step must not
#    raise when nothing changed.
#
# Each pair is measured in turns, a call of one build then a call of the other (the first of the
# two alternating), so that the load of this shared machine, which drifts within minutes, hits
# both alike. Each figure is the mean over the calls (the median beside it) and the CPU time of
# the call's whole process tree (user + system, from wait4), which waiting for a CPU does not
# stretch; the last lines give new / old.
#
# Usage: benches/apply.sh [OLD_REV]   (OLD_REV: the older build's git revision; default: the
# one before the apply step became a file tool, the commit that added
# src/fs/durable/landing.rs. OLD_BIN=path uses an older sneaky-run already built instead.
# PAIRS=N scales the number of calls: 1 = 30 pairs of the 1,100 files, 200 of `true`)
set -euo pipefail
cd "$(dirname "$0")/.."
OLD_REV=${1:-$(git log --diff-filter=A --format=%H -- src/fs/durable/landing.rs | tail -1)~}
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/old-src" "$WORK/old" "$WORK/new" "$WORK/ws" "$WORK/xdg/sneaky" "$WORK/state"
# The older build from its own sources, in the same target directory (the dependencies are
# built once); each binary is copied aside before the other is built over it.
if [ -n "${OLD_BIN:-}" ]; then
  cp "$OLD_BIN" "$WORK/old/sneaky-run"
else
  git archive "$OLD_REV" | tar -x -C "$WORK/old-src"
  (cd "$WORK/old-src" && cargo build --release --bin sneaky-run -q --target-dir "$TARGET")
  cp "$TARGET/release/sneaky-run" "$WORK/old/sneaky-run"
fi
cargo build --release --bin sneaky-run -q
cp "$TARGET/release/sneaky-run" "$WORK/new/sneaky-run"
printf '[tools.shell]\nextra_allowed_commands = ["split", "seq", "mkdir"]\n' > "$WORK/xdg/sneaky/config.toml"
export XDG_CONFIG_HOME="$WORK/xdg" XDG_STATE_HOME="$WORK/state"
cd "$WORK/ws"
git init -q .
printf 'build/\n' > .gitignore
git add .gitignore && git -c user.name=b -c user.email=b@b commit -qm ignore
python3 - "$WORK" "${OLD_BIN:-$OLD_REV}" "${PAIRS:-1}" <<'PY'
import os, statistics, subprocess, sys, time
work, old_rev, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
ws = f"{work}/ws"
files = ("mkdir build src && seq 1000 | split -a 3 -l 1 - build/f && "
         "seq 100 | split -a 2 -l 1 - src/g")
devnull = os.open(os.devnull, os.O_RDWR)

def side(build, command):
    return [f"{work}/{build}/sneaky-run", "--root", ws, command]

def clean():
    subprocess.run(["rm", "-rf", f"{ws}/build", f"{ws}/src"], check=True)

def call(cmd, prep):
    if prep:
        prep()
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1),
               (os.POSIX_SPAWN_DUP2, devnull, 2)]
    t0 = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, dict(os.environ), file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed ({status})")
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000

# The new build must apply what the old one did: the same files, none left in the upper layer.
call(side("new", files), clean)
got = sorted(os.listdir(f"{ws}/build")), sorted(os.listdir(f"{ws}/src"))
if len(got[0]) != 1000 or len(got[1]) != 100:
    sys.exit(f"the new build applied {len(got[0])} ignored and {len(got[1])} recorded files")

print(f"old: {old_rev}; load: {open('/proc/loadavg').read().split()[:3]}")
print(f"{'':34} {'mean ms':>9} {'median':>9} {'cpu ms':>9}")
verdicts = []
for name, n, command, prep in [
    ("1,000 ignored + 100 recorded files", 30, files, clean),
    ("sneaky-run true", 200, "true", None),
]:
    n = max(5, int(n * scale))
    got = {"old": [], "new": []}
    for i in range(n + 3):
        order = ("old", "new") if i % 2 == 0 else ("new", "old")
        for build in order:
            r = call(side(build, command), prep)
            if i >= 3:  # warm-up
                got[build].append(r)
    stats = {}
    for build in ("old", "new"):
        walls = [w for w, _ in got[build]]
        stats[build] = (statistics.mean(walls), statistics.median(walls),
                        statistics.mean(c for _, c in got[build]))
        print(f"{name + ', ' + build:34} {stats[build][0]:9.2f} {stats[build][1]:9.2f} "
              f"{stats[build][2]:9.2f}")
    ratio = [stats["new"][k] / stats["old"][k] for k in range(3)]
    verdicts.append(f"{name}: new / old = {ratio[0]:.3f}x mean, {ratio[1]:.3f}x median, "
                    f"{ratio[2]:.3f}x cpu ({n} pairs)")
print()
print("\n".join(verdicts))
PY
