#!/usr/bin/env bash
# What recording changes for undo costs, side by side with the direct way, in one run
# (release build):
#
# 1. `sneaky-run true` with the overlay that holds a command's changes, and without it
#    (SNEAKY_SANDBOX_SKIP=overlay: the command writes the workspace directly, as before the
#    overlay). Target: at most +1 ms.
# 2. write_file of a 1 MB file (its old content and the new one new at each call, as an
#    agent's edits are, so that the journal keeps new copies): with its journal entry, and
#    without (the history's directory made unwritable: the edit goes ahead and says it cannot
#    be undone; there is no switch that turns the journal off). Target: at most +20 %.
# 3. A command writing 1,000 small files (`seq 1000 | split -l 1`: files of 2-5 bytes) into a
#    fresh directory: through the overlay (held, then applied as one journaled change) against
#    writing them directly. Target: at most 2x. Last, for the files it removes (below); a run
#    started within a minute of another meets the other's.
#
# Each pair is measured in turns, a call of one side then a call of the other (the first of
# the two alternating), so that the load of this shared machine, which drifts by a third within
# minutes, hits both sides alike; what runs before a call (a fresh old file, an empty output
# directory) is not timed. Each figure is the mean over the calls (the median beside it), and
# the CPU time of the call's whole process tree (user + system, from wait4), which waiting for
# a CPU does not stretch.
#
# Usage: benches/undo.sh   (PAIRS=N scales the number of calls: 1 = 300 `true` pairs, 200
# writes, 40 of 1,000 files; SETTLE=S, the pause between sections, 65 s by default)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin sneaky-run --bin sneaky-write -q
DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/xdg/sneaky" "$WORK/state"
printf '[tools.shell]\nextra_allowed_commands = ["split", "seq", "mkdir"]\n' > "$WORK/xdg/sneaky/config.toml"
export XDG_CONFIG_HOME="$WORK/xdg" XDG_STATE_HOME="$WORK/state"
cd "$WORK/ws"
git init -q .
python3 - "$DIR" "$WORK" "${PAIRS:-1}" <<'PY'
import json, os, statistics, subprocess, sys, time
bin_dir, work, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
ws = f"{work}/ws"
run = [f"{bin_dir}/sneaky-run", "--root", ws]
write = [f"{bin_dir}/sneaky-write", "--root", ws]
files = "mkdir out && seq 1000 | split -a 3 -l 1 - out/f"
devnull = os.open(os.devnull, os.O_RDWR)
big = f"{work}/big.json"

def env(**extra):
    e = dict(os.environ)
    e.update(extra)
    return e

def fresh_old_file():
    with open(f"{ws}/big.txt", "wb") as f:
        f.write(os.urandom(1 << 20))
    with open(big, "w") as f:
        json.dump({"file_path": "big.txt", "content": os.urandom(1 << 19).hex()}, f)

def no_output():
    subprocess.run(["rm", "-rf", f"{ws}/out"], check=True)

# Each side: its command, its environment, its standard input, what runs before each call.
pairs = [
    ("sneaky-run true", 300, "ms",
     (run + ["true"], env(SNEAKY_SANDBOX_SKIP=""), None, None),
     (run + ["true"], env(SNEAKY_SANDBOX_SKIP="overlay"), None, None)),
    # Without a journal: the history's directory made unwritable (XDG_STATE_HOME=/proc/none):
    # the edit goes ahead and says it cannot be undone; no switch turns the journal off.
    ("write_file 1 MB", 200, "%",
     (write, env(), big, fresh_old_file),
     (write, env(XDG_STATE_HOME="/proc/none"), big, fresh_old_file)),
    # Last: the 90,000 files this makes and removes (at PAIRS=1) slow down every inode made
    # after them in the same block groups for a minute or more on ext4 without a journal (the
    # allocator steps past each inode freed less than 60 s ago: `recently_deleted`), which
    # weighed more on the side of a pair that makes more files (write_file with its journal
    # makes three, without one; +27 % against +7 % in turns right after 50,000 removed files).
    ("1000 files", 40, "x",
     (run + [files], env(SNEAKY_SANDBOX_SKIP=""), None, no_output),
     (run + [files], env(SNEAKY_SANDBOX_SKIP="overlay"), None, no_output)),
]

def call(cmd, e, stdin, prep):
    if prep:
        prep()
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    if stdin:
        actions.append((os.POSIX_SPAWN_OPEN, 0, stdin, os.O_RDONLY, 0))
    else:
        actions.append((os.POSIX_SPAWN_DUP2, devnull, 0))
    t0 = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, e, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed ({status})")
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000

print(f"load: {open('/proc/loadavg').read().split()[:3]}")
print(f"{'':28} {'mean ms':>8} {'median':>8} {'cpu ms':>8}")
verdicts = []
settle = float(os.environ.get("SETTLE", "65"))
for k, (name, n, unit, ours, base) in enumerate(pairs):
    if k > 0 and settle:
        # Past the removals of the section before (see the last section's note): its files
        # written back and older than the allocator's 60 s.
        os.sync()
        time.sleep(settle)
    n = max(10, int(n * scale))
    got = {0: [], 1: []}
    for i in range(n + 5):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for k in order:
            r = call(*(ours if k == 0 else base))
            if i >= 5:  # warm-up
                got[k].append(r)
    mean = [statistics.mean(w for w, _ in got[k]) for k in (0, 1)]
    median = [statistics.median(w for w, _ in got[k]) for k in (0, 1)]
    cpu = [statistics.mean(c for _, c in got[k]) for k in (0, 1)]
    for k, side in ((0, "with"), (1, "without")):
        print(f"{name + ', ' + side:28} {mean[k]:8.2f} {median[k]:8.2f} {cpu[k]:8.2f}")
    if unit == "ms":
        d = mean[0] - mean[1]
        verdicts.append(f"{name}: overlay − direct = {d:+.2f} ms mean, {median[0] - median[1]:+.2f} ms "
                        f"median, {cpu[0] - cpu[1]:+.2f} ms cpu ({n} pairs; target ≤ +1 ms: "
                        f"{'within' if d <= 1 else 'OVER'})")
    elif unit == "x":
        r = mean[0] / mean[1]
        verdicts.append(f"{name}: overlay / direct = {r:.2f}x mean, {median[0] / median[1]:.2f}x median, "
                        f"{cpu[0] / cpu[1]:.2f}x cpu ({n} pairs; target ≤ 2x: {'within' if r <= 2 else 'OVER'})")
    else:
        r = mean[0] / mean[1] - 1
        verdicts.append(f"{name}: journal / none = {100 * r:+.1f} % mean, "
                        f"{100 * (median[0] / median[1] - 1):+.1f} % median, "
                        f"{100 * (cpu[0] / cpu[1] - 1):+.1f} % cpu ({n} pairs; target ≤ +20 %: "
                        f"{'within' if r <= 0.20 else 'OVER'})")
print()
print("\n".join(verdicts))
PY
