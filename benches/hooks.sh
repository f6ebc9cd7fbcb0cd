#!/usr/bin/env bash
# What hooks cost a call (issue 43: no hook configured costs nothing measurable; one hook costs
# its own run time plus at most 1 ms). `hyperfine -N` of a release `sneaky-read` on a small file,
# side by side:
#
#   no hook           a configuration without [hooks] (the calls' usual path)
#   one hook          the same with one PreToolUse hook that does nothing (/bin/true)
#   pre and post      a PreToolUse and a PostToolUse hook (/bin/true each)
#   the hook alone    /bin/true itself, started by hyperfine: the hook's own run time
#   baseline          (with BASELINE_SNEAKY_READ=path) a build from before hooks, no hook
#
# The last lines give what running the hook added beyond its own run time (one hook − no hook −
# the hook alone), and with a baseline what the hooks code costs a call that has none
# (no hook − baseline).
#
# This machine is shared: ROUNDS (3) rounds of RUNS (200) runs each, the order rotating between
# rounds so that load hits every command alike; each figure is the median over the rounds. The
# CPU time (user + system of the process tree, hooks included) does not count waiting for a CPU
# and is the steadier figure under load; the minimum is printed too.
#
# Usage: benches/hooks.sh   (BASELINE_SNEAKY_READ=path: an older release build to compare with,
# e.g. of 9cbfc892, the commit before hooks; SNEAKY_READ=path: this tree's build made already;
# ROUNDS=N, RUNS=N)
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCHES=$PWD/benches
command -v hyperfine >/dev/null || { echo "missing hyperfine (apt-get install hyperfine)"; exit 1; }
if [ -n "${SNEAKY_READ:-}" ]; then
  BIN=$SNEAKY_READ
else
  cargo build --release --bin sneaky-read -q
  BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/sneaky-read
fi
TRUE=$(command -v true)
[ "${TRUE#/}" != "$TRUE" ] || TRUE=/bin/true
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws"
printf 'fn main() {\n    println!("hello");\n}\n' > "$WORK/ws/main.rs"
# Every variant reads a configuration file, so that only [hooks] differs.
printf 'max_output_bytes = 65536\n' > "$WORK/none.toml"
printf 'max_output_bytes = 65536\n[[hooks.PreToolUse]]\nmatcher = "read_file"\ncommand = "%s"\n' "$TRUE" > "$WORK/one.toml"
cp "$WORK/one.toml" "$WORK/both.toml"
printf '[[hooks.PostToolUse]]\nmatcher = "read_file"\ncommand = "%s"\n' "$TRUE" >> "$WORK/both.toml"
export XDG_CONFIG_HOME="$WORK/xdg" XDG_STATE_HOME="$WORK/state"
cd "$WORK/ws"
# Each works: the hooked call still reads the file.
for c in none one both; do
  "$BIN" --root "$WORK/ws" --config "$WORK/$c.toml" main.rs | grep -q '"ok":true' || { echo "the $c call failed"; exit 1; }
done
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-200}
cmds=(
  "$BIN --root $WORK/ws --config $WORK/none.toml main.rs"
  "$BIN --root $WORK/ws --config $WORK/one.toml main.rs"
  "$BIN --root $WORK/ws --config $WORK/both.toml main.rs"
  "$TRUE"
)
names=("no hook" "one hook" "pre and post" "the hook alone")
if [ -n "${BASELINE_SNEAKY_READ:-}" ]; then
  cmds+=("$BASELINE_SNEAKY_READ --root $WORK/ws --config $WORK/none.toml main.rs")
  names+=(baseline)
fi
. "$BENCHES/rounds.sh"
run_rounds 20
python3 - "$WORK" "$ROUNDS" <<'PY'
import os, sys
sys.path.insert(0, os.environ["BENCHES"])
from rounds import Rounds
r = Rounds(sys.argv[1], sys.argv[2])
mean, low, cpu, per = r.mean, r.low, r.cpu, r.names()
print(f"\n{'':16} {'mean ms':>8} {'min ms':>7} {'cpu ms':>7}")
for name in per:
    print(f"{name:16} {mean(name):8.3f} {low(name):7.3f} {cpu(name):7.3f}")
def added(a, b, c=None):
    f = lambda g: g(a) - g(b) - (g(c) if c else 0)
    return f"mean {f(mean):+.3f} ms, min {f(low):+.3f} ms, cpu {f(cpu):+.3f} ms"
print(f"one hook − no hook − the hook alone (target ≤ 1 ms): {added('one hook', 'no hook', 'the hook alone')}")
print(f"pre and post − no hook − 2 × the hook alone: "
      f"mean {mean('pre and post') - mean('no hook') - 2 * mean('the hook alone'):+.3f} ms, "
      f"cpu {cpu('pre and post') - cpu('no hook') - 2 * cpu('the hook alone'):+.3f} ms")
if "baseline" in per:
    print(f"no hook − baseline (target: nothing measurable): {added('no hook', 'baseline')}")
PY
