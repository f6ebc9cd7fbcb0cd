#!/usr/bin/env bash
# What recording changes for undo costs, side by side with the direct way, in one run
# (release build, hyperfine):
#
# 1. `sneaky-run true` with the overlay that holds a command's changes, and without it
#    (SNEAKY_SANDBOX_SKIP=overlay: the command writes the workspace directly, as before the
#    overlay). Target: at most +1 ms.
# 2. A command writing 1,000 small files (`seq 1000 | split -l 1`: files of 2-5 bytes) into a
#    fresh directory: through the overlay (held, then applied as one journaled change) against
#    writing them directly. Target: at most 2x.
# 3. write_file of a 1 MB file (whose old content is new each run, so that its journal entry
#    keeps a new copy): with its journal entry, and without (the history's directory made
#    unwritable: the edit goes ahead and says it cannot be undone; there is no switch that
#    turns the journal off). Target: at most +20 %.
#
# Each comparison is measured in ROUNDS (3) rounds of RUNS runs, the order alternating between
# rounds so that load on this shared machine hits both sides alike; each figure is the median
# of the rounds' means (and the CPU time, user + system of the whole process tree, which
# waiting for a CPU does not stretch).
#
# Usage: benches/undo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v hyperfine >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
  else
    echo "missing hyperfine (apt-get install hyperfine)"; exit 1
  fi
fi
cargo build --release --bin sneaky-run --bin sneaky-write -q
DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/xdg/sneaky" "$WORK/state"
printf '[tools.shell]\nextra_allowed_commands = ["split", "seq", "mkdir"]\n' > "$WORK/xdg/sneaky/config.toml"
export XDG_CONFIG_HOME="$WORK/xdg" XDG_STATE_HOME="$WORK/state"
cd "$WORK/ws"
git init -q .
python3 -c 'import json; print(json.dumps({"file_path": "big.txt", "content": "x" * (1 << 20)}))' > "$WORK/big.json"
ROUNDS=${ROUNDS:-3}
RUN="$DIR/sneaky-run --root $WORK/ws"
WRITE="$DIR/sneaky-write --root $WORK/ws"
FILES="mkdir out && seq 1000 | split -a 3 -l 1 - out/f"
# The pairs measured, each name with its command, what runs before each run, and how many
# runs (the two of a pair adjacent).
names=("true, overlay" "true, direct" "1000 files, overlay" "1000 files, direct"
  "write 1 MB, journal" "write 1 MB, no journal")
cmds=("env SNEAKY_SANDBOX_SKIP= $RUN true" "env SNEAKY_SANDBOX_SKIP=overlay $RUN true"
  "env SNEAKY_SANDBOX_SKIP= $RUN '$FILES'" "env SNEAKY_SANDBOX_SKIP=overlay $RUN '$FILES'"
  "$WRITE < $WORK/big.json" "env XDG_STATE_HOME=/proc/none $WRITE < $WORK/big.json")
preps=("" "" "rm -rf $WORK/ws/out" "rm -rf $WORK/ws/out"
  "head -c 1048576 /dev/urandom > $WORK/ws/big.txt" "head -c 1048576 /dev/urandom > $WORK/ws/big.txt")
runs=(100 100 20 20 30 30)
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round/$ROUNDS (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  for p in 0 2 4; do
    first=$p second=$((p + 1))
    if [ $((round % 2)) = 0 ]; then first=$((p + 1)) second=$p; fi
    for i in $first $second; do
      args=(--warmup 3 --runs "${runs[$i]}" --style none --export-json "$WORK/r$round-$i.json" -n "${names[$i]}")
      if [ -n "${preps[$i]}" ]; then args+=(--prepare "${preps[$i]}"); fi
      hyperfine "${args[@]}" "${cmds[$i]}" >/dev/null
    done
  done
done
python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
per = {}
for r in range(1, rounds + 1):
    for i in range(6):
        for x in json.load(open(f"{work}/r{r}-{i}.json"))["results"]:
            per.setdefault(x["command"], []).append(x)
mean = lambda n: statistics.median(x["mean"] for x in per[n]) * 1000
low = lambda n: min(x["min"] for x in per[n]) * 1000
cpu = lambda n: statistics.median(x["user"] + x["system"] for x in per[n]) * 1000
print(f"\n{'':24} {'mean ms':>8} {'min ms':>8} {'cpu ms':>8}")
for name in per:
    print(f"{name:24} {mean(name):8.2f} {low(name):8.2f} {cpu(name):8.2f}")
def verdict(ok):
    return "within" if ok else "OVER"
a, b = "true, overlay", "true, direct"
d = mean(a) - mean(b)
print(f"sneaky-run true: overlay − direct = {d:+.2f} ms mean, {low(a) - low(b):+.2f} ms min, "
      f"{cpu(a) - cpu(b):+.2f} ms cpu (target ≤ +1 ms: {verdict(d <= 1)})")
a, b = "1000 files, overlay", "1000 files, direct"
r = mean(a) / mean(b)
print(f"1000 files: overlay / direct = {r:.2f}x mean, {cpu(a) / cpu(b):.2f}x cpu "
      f"(target ≤ 2x: {verdict(r <= 2)})")
a, b = "write 1 MB, journal", "write 1 MB, no journal"
r = mean(a) / mean(b) - 1
print(f"write_file 1 MB: journal / none = {100 * r:+.1f} % mean, "
      f"{100 * (cpu(a) / cpu(b) - 1):+.1f} % cpu (target ≤ +20 %: {verdict(r <= 0.20)})")
PY
