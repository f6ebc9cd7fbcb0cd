#!/usr/bin/env bash
# The long fuzz runs: each cargo-fuzz target for SECONDS (default 600) on its
# committed corpus, then a table of executions, time and findings. CI only replays the
# minimised corpus (tests/suite/fuzz_replay.rs); this is the run that grows it.
#
# Usage: benches/fuzz.sh [SECONDS] [TARGET…]     (needs cargo-fuzz; runs on stable through
#        RUSTC_BOOTSTRAP=1; the first -O build takes several minutes)
# A finding stops its target and is left in fuzz/artifacts/<target>/ to reproduce with
#   cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -O <target> artifacts/<target>/<file>
# Afterwards minimise the corpus before committing it: cargo fuzz cmin -O <target>.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(RUSTC_BOOTSTRAP=1 cargo fuzz list)
export RUSTC_BOOTSTRAP=1
# A check slower than its bound (fuzz/checks.rs SLOW) is a finding here; the suite only reports it.
export SNEAKY_TIMING=1
cargo fuzz build -O || exit 1
logs=$(mktemp -d)
printf '%-16s %12s %8s %s\n' target runs seconds findings
for t in "${targets[@]}"; do
  extra=()
  # sneaky-mcp's stdin reader thread is detached (joining it could block on a client that
  # keeps stdin open), so it may still be exiting when serve returns: LeakSanitizer reports
  # its thread handle. Growth is still bounded by -rss_limit_mb.
  [ "$t" = mcp_line ] && extra=(-detect_leaks=0)
  cargo fuzz run -O "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    "${extra[@]}" -print_final_stats=1 > "$logs/$t.log" 2>&1
  status=$?
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$logs/$t.log")
  took=$(awk '/Done [0-9]+ runs in/ {print $(NF-1)}' "$logs/$t.log")
  found=$(ls "artifacts/$t" 2>/dev/null | wc -l)
  printf '%-16s %12s %8s %s\n' "$t" "${runs:-?}" "${took:-?}" \
    "$([ "$status" -eq 0 ] && echo "$found" || echo "$found (stopped: see $logs/$t.log)")"
done
