#!/usr/bin/env bash
# Memory bound of sneaky-run: `yes` floods stdout for 3 s (timeout 3), and the peak RSS of
# sneaky-run itself must stay under 64 MiB while the output is capped at max_output_bytes.
# Reports /usr/bin/time -v's "Maximum resident set size" (sneaky-run and the children it
# reaped) and sneaky-run's own VmHWM from /proc, sampled until it exits.
#
# Usage: benches/run_rss.sh        (needs /usr/bin/time: apt-get install time)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "missing /usr/bin/time (apt-get install time)"; exit 1; }

cargo build --release --bin sneaky-run -q
BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/ws"
LIMIT_KB=$((64 * 1024))

# Own peak RSS, sampled from /proc while it runs (VmHWM only grows, so the last read is it).
"$BIN/sneaky-run" --root "$WORK/ws" --timeout 3 yes > "$WORK/out.json" &
pid=$!
hwm=0
while kill -0 "$pid" 2>/dev/null; do
  v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$v" ] && hwm=$v
  sleep 0.05
done
wait "$pid" || true

/usr/bin/time -v "$BIN/sneaky-run" --root "$WORK/ws" --timeout 3 yes > "$WORK/out2.json" 2> "$WORK/time.txt" || true
maxrss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")

python3 - "$WORK/out.json" "$hwm" "$maxrss" "$LIMIT_KB" <<'PY'
import json, sys
out, hwm, maxrss, limit = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = out["result"]
print(f"yes for 3 s: produced {r['stdout_bytes'] / 2**20:.0f} MiB on stdout, kept {len(r['stdout'])} bytes, "
      f"truncated={r['truncated']}, timed_out={r['timed_out']}, signal={r['signal']}")
print(f"peak RSS: sneaky-run VmHWM {hwm / 1024:.1f} MiB; /usr/bin/time -v max RSS {maxrss / 1024:.1f} MiB "
      f"(limit {limit / 1024:.0f} MiB)")
ok = r["truncated"] and r["timed_out"] and len(r["stdout"]) <= 65536 + 200 and 0 < hwm < limit and maxrss < limit
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
