#!/usr/bin/env bash
# Background jobs, side by side with `hyperfine -N`:
#
# - start to first output: `sneaky-run 'echo hi'` (a foreground command: the call ends when
#   the command has ended and its output is in) against `sneaky-run --background --wait-for
#   hi 'echo hi'` (the call ends as soon as the job's output matched, read back from the
#   workspace's supervisor, which is already running: a long job keeps it up);
# - the job_output round trip: `sneaky-jobs JOB` on a running job (no new output, no wait),
#   against `sneaky-ls .` as the cost of any tool call.
#
# The machine is shared: ROUNDS (3) rounds of RUNS (50) runs, the order rotating between
# rounds, each figure the median over the rounds (mean and minimum wall time, and the CPU
# time of the calling process as hyperfine reports it, user + system: a background start's
# job runs in the supervisor, whose CPU is not counted there).
#
# Usage: benches/jobs.sh  (SNEAKY_BIN_DIR=DIR measures the binaries in DIR instead of a
# release build)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "missing hyperfine (apt-get install hyperfine)"; exit 1; }
if [ -n "${SNEAKY_BIN_DIR:-}" ]; then
  BIN=$SNEAKY_BIN_DIR
else
  cargo build --release --bin sneaky-run --bin sneaky-jobs --bin sneaky-ls -q
  BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
fi
WORK=$(mktemp -d)
mkdir -p "$WORK/ws" "$WORK/xdg" "$WORK/run"
export XDG_CONFIG_HOME="$WORK/xdg" XDG_RUNTIME_DIR="$WORK/run" SNEAKY_ROOT="$WORK/ws"
unset SNEAKY_JOB_OWNER
cd "$WORK/ws"
keep=$("$BIN/sneaky-run" --background --wait-ms 0 'sleep 3600' | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["job_id"])')
cleanup() {
  "$BIN/sneaky-jobs" --kill "$keep" >/dev/null 2>&1 || true
  pkill -TERM -f -- "--sneaky-jobs-daemon $WORK/run" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-50}
cmds=(
  "$BIN/sneaky-run 'echo hi'"
  "$BIN/sneaky-run --background --wait-for hi 'echo hi'"
  "$BIN/sneaky-jobs $keep"
  "$BIN/sneaky-ls ."
)
names=("foreground echo" "background echo, to first output" "job_output round trip" "list_dir (any call)")
n=${#cmds[@]}
for round in $(seq 1 "$ROUNDS"); do
  args=()
  for k in $(seq 0 $((n - 1))); do
    i=$(((k + round) % n))
    args+=(-n "${names[$i]}" "${cmds[$i]}")
  done
  echo "round $round/$ROUNDS (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  hyperfine -N --warmup 5 --runs "$RUNS" --style basic --export-json "$WORK/h$round.json" "${args[@]}" >/dev/null
done
python3 - "$WORK" "$ROUNDS" "${names[@]}" <<'PY'
import json, statistics, sys
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
fig = {n: {"mean": [], "min": [], "cpu": []} for n in names}
for r in range(1, rounds + 1):
    for res in json.load(open(f"{work}/h{r}.json"))["results"]:
        f = fig[res["command"]]
        f["mean"].append(res["mean"] * 1000)
        f["min"].append(res["min"] * 1000)
        f["cpu"].append((res["user"] + res["system"]) * 1000)
print(f"{'':34} {'mean ms':>8} {'min ms':>8} {'cpu ms':>8}")
for n in names:
    f = fig[n]
    print(f"{n:34} {statistics.median(f['mean']):8.2f} {statistics.median(f['min']):8.2f} {statistics.median(f['cpu']):8.2f}")
PY
