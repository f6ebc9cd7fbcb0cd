#!/usr/bin/env bash
# Start-up cost of run_command's sandbox: `hyperfine -N` of `sneaky-run true` (release build,
# every layer the kernel offers: user/mount/pid namespaces, Landlock, rlimits; and with
# network = false also the net namespace and seccomp) side by side with `bash -c true`, and
# the ratio. Target: the layers add no more than 5 ms: `sneaky-run true` after
# minus before (BASELINE_SNEAKY_RUN, a release build of the commit before the sandbox layers,
# 2b45ab6), printed as the last line in mean wall time, minimum and CPU time (user + system of
# the whole process tree; the verdict is on this one, which load does not stretch). Without a baseline, the layers' cost over the launcher alone
# (`tools.shell.sandbox = false`) stands in.
#
# This machine is shared: the commands are measured in ROUNDS (3) rounds of RUNS (100) runs,
# the order rotating between rounds so that load hits every command alike, and each figure is
# the median over the rounds. The CPU time does not count waiting for a CPU, so it is the
# steadier figure under load; the minimum is printed too.
#
# Usage: benches/run_start.sh [BASELINE_SNEAKY_RUN]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v hyperfine >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
  else
    echo "missing hyperfine (apt-get install hyperfine)"; exit 1
  fi
fi
cargo build --release --bin sneaky-run -q
BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/sneaky-run
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/xdg/sneaky"
printf '[tools.shell]\nsandbox = false\n' > "$WORK/off.toml"
printf '[tools.shell]\nnetwork = false\n' > "$WORK/nonet.toml"
export XDG_CONFIG_HOME="$WORK/xdg"
cd "$WORK/ws"
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-100}
cmds=(
  "bash -c true"
  "$BIN --root $WORK/ws true"
  "$BIN --root $WORK/ws --config $WORK/nonet.toml true"
  "$BIN --root $WORK/ws --config $WORK/off.toml true"
)
names=(bash sandboxed "sandboxed, network = false" "sandbox off")
if [ $# -ge 1 ]; then
  cmds+=("$1 --root $WORK/ws true")
  names+=(baseline)
fi
n=${#cmds[@]}
for round in $(seq 1 "$ROUNDS"); do
  args=()
  for k in $(seq 0 $((n - 1))); do
    i=$(((k + round) % n))
    args+=(-n "${names[$i]}" "${cmds[$i]}")
  done
  echo "round $round/$ROUNDS (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  hyperfine -N --warmup 10 --runs "$RUNS" --style basic --export-json "$WORK/h$round.json" "${args[@]}" >/dev/null
done
python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
per = {}
for r in range(1, rounds + 1):
    for x in json.load(open(f"{work}/h{r}.json"))["results"]:
        per.setdefault(x["command"], []).append(x)
med = lambda name, f: statistics.median(f(x) for x in per[name]) * 1000
mean = lambda n: med(n, lambda x: x["mean"])
low = lambda n: min(x["min"] for x in per[n]) * 1000
cpu = lambda n: med(n, lambda x: x["user"] + x["system"])
print(f"\n{'':28} {'mean ms':>8} {'min ms':>7} {'cpu ms':>7} {'× bash':>7}")
for name in per:
    print(f"{name:28} {mean(name):8.2f} {low(name):7.2f} {cpu(name):7.2f} {mean(name) / mean('bash'):7.2f}")
def delta(a, b):
    return (f"mean {mean(a) - mean(b):+.2f} ms, min {low(a) - low(b):+.2f} ms, "
            f"cpu {cpu(a) - cpu(b):+.2f} ms")
for name in ("sandboxed", "sandboxed, network = false"):
    print(f"layers over the launcher alone ({name} − sandbox off): {delta(name, 'sandbox off')}")
before = "baseline" if "baseline" in per else "sandbox off"
# The verdict is on CPU time: under load the mean wall time mostly measures waiting for a CPU
# (the sandboxed call hands over between more processes), on a quiet machine the two agree.
added = cpu("sandboxed") - cpu(before)
verdict = "within" if added <= 5 else "OVER"
print(f"issue 12 (after − before, target ≤ 5 ms): sandboxed − {before}: {delta('sandboxed', before)} "
      f"[CPU {verdict} the target]")
PY
