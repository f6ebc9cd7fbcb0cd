#!/usr/bin/env bash
# The soak of issue 45, four ways: sneaky-mcp over HTTP and over stdio, with the usual mix and
# with ~100 KB answers, SESSIONS clients for SECONDS each (default 32 and 60); each run prints
# the calls, the errors, the server's peak RSS (VmHWM), its RSS over the second half, its
# descriptors and whether every acknowledged write is on disk whole (benches/mcp_soak.py says
# how). Release build of sneaky-mcp and sneaky-run (run_command runs in sneaky-run, found
# beside sneaky-mcp). Exits 1 when a run fails a check (errors, a torn write, RSS > 128 MiB).
#
# Usage: benches/mcp_soak.sh [SECONDS] [SESSIONS]
# SNEAKY_BENCH_PROFILE=debug drives debug binaries (no release build needed).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
SESSIONS=${2:-32}
PROFILE=${SNEAKY_BENCH_PROFILE:-release}
if [ "$PROFILE" = release ]; then
  cargo build --release -q --bin sneaky-mcp --bin sneaky-run
else
  cargo build -q --bin sneaky-mcp --bin sneaky-run
fi
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
rc=0
for mode in "--http" "--http --big" "--stdio" "--stdio --big"; do
  # shellcheck disable=SC2086 # the mode is two words on purpose
  python3 benches/mcp_soak.py $mode --sessions "$SESSIONS" --seconds "$SECS" \
    --bin "$TARGET/$PROFILE/sneaky-mcp" || rc=1
  echo
done
exit "$rc"
