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
export BENCHES=$PWD/benches
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
. "$BENCHES/rounds.sh"
run_rounds 5
python3 - "$WORK" "$ROUNDS" "${names[@]}" <<'PY'
import os, sys
sys.path.insert(0, os.environ["BENCHES"])
from rounds import Rounds
r, names = Rounds(sys.argv[1], sys.argv[2]), sys.argv[3:]
print(f"{'':34} {'mean ms':>8} {'min ms':>8} {'cpu ms':>8}")
for n in names:
    print(f"{n:34} {r.mean(n):8.2f} {r.median_min(n):8.2f} {r.cpu(n):8.2f}")
PY
