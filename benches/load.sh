#!/usr/bin/env bash
# Load: 16 concurrent processes doing mixed edits (write_file, str_replace, patch_apply,
# make_dir, delete_file, read_file) on the same small tree for a minute. Prints operations,
# errors by code, torn files (must be 0), leftover temporary files (must be 0) and replies
# that were not one valid envelope (must be 0). The driver is the suite's test
# load::sixteen_processes_editing_one_tree (which CI runs for 3 s).
#
# Usage: benches/load.sh [SECONDS] [PROCESSES]     (default 60 16)
# SNEAKY_BENCH_PROFILE=debug drives debug binaries (no release build needed).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
WORKERS=${2:-16}
PROFILE=${SNEAKY_BENCH_PROFILE:-release}
if [ "$PROFILE" = release ]; then cargo build --release --bins -q; else cargo build --bins -q; fi
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
echo "== load: $WORKERS processes, ${SECS}s, $PROFILE binaries, $(nproc) CPUs"
set +e
out=$(SNEAKY_LOAD_SECS=$SECS SNEAKY_LOAD_WORKERS=$WORKERS SNEAKY_LOAD_BIN_DIR="$TARGET/$PROFILE" \
  cargo test -q --test suite load::sixteen_processes_editing_one_tree -- --exact --nocapture 2>&1)
rc=$?
set -e
printf '%s\n' "$out" | grep -E '^load:|panicked|torn files:|left behind|bad or unexpected' -A3
[ "$rc" = 0 ] && echo "== load: PASS" || echo "== load: FAIL (exit $rc)"
exit "$rc"
