#!/usr/bin/env bash
# Start-up cost of run_command's sandbox: `hyperfine -N` of `sneaky-run true` (release build,
# every layer the kernel offers: user/mount/pid namespaces, Landlock, rlimits; and with
# network = false also the net namespace and seccomp) side by side with `bash -c true`, and
# the ratio. Target (issue 12): the new layers add no more than 5 ms over the launcher alone
# (`tools.shell.sandbox = false`, measured here too).
#
# Usage: benches/run_start.sh [BASELINE_SNEAKY_RUN]
#   BASELINE_SNEAKY_RUN: another sneaky-run binary (e.g. a release build of the commit before
#   the sandbox layers) measured alongside, for a before/after figure.
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
runs=(--warmup 20 --min-runs 200 -N)
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
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hyperfine "${runs[@]}" --export-json "$WORK/h.json" "${args[@]}"
python3 - "$WORK/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
ms = lambda v: v * 1000
# On a busy machine the mean wall time mostly measures waiting for a CPU: the minimum and the
# CPU time (user + system) are printed too.
print(f"\n{'':28} {'mean ms':>8} {'± ms':>6} {'min ms':>7} {'cpu ms':>7} {'× bash':>7}")
for name, x in r.items():
    cpu = ms(x["user"] + x["system"])
    print(f"{name:28} {ms(x['mean']):8.2f} {ms(x['stddev']):6.2f} {ms(x['min']):7.2f} {cpu:7.2f} "
          f"{x['mean'] / r['bash']['mean']:7.2f}")
def delta(a, b):
    return (f"mean {ms(r[a]['mean'] - r[b]['mean']):.2f} ms, min {ms(r[a]['min'] - r[b]['min']):.2f} ms, "
            f"cpu {ms(r[a]['user'] + r[a]['system'] - r[b]['user'] - r[b]['system']):.2f} ms")
for name in ("sandboxed", "sandboxed, network = false"):
    print(f"layers added ({name} − sandbox off): {delta(name, 'sandbox off')}")
if "baseline" in r:
    print(f"sandboxed − baseline: {delta('sandboxed', 'baseline')}")
PY
