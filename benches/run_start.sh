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
bash = r["bash"]["mean"] * 1000
print(f"\n{'':28} {'mean ms':>8} {'± ms':>6} {'× bash':>7}")
for name, x in r.items():
    m = x["mean"] * 1000
    print(f"{name:28} {m:8.2f} {x['stddev']*1000:6.2f} {m/bash:7.2f}")
off = r["sandbox off"]["mean"] * 1000
for name in ("sandboxed", "sandboxed, network = false"):
    print(f"layers added ({name} − sandbox off): {r[name]['mean']*1000 - off:.2f} ms")
if "baseline" in r:
    print(f"sandboxed − baseline: {r['sandboxed']['mean']*1000 - r['baseline']['mean']*1000:.2f} ms")
PY
