#!/usr/bin/env bash
# Benchmark the read tools against their reference tools, side by side in one run, and print
# the ratios (ours / reference; lower is better):
#   sneaky-grep vs `rg -n` (target ≤ 1.2×) and vs `rg -n --sort path` — with identical
#   path:line sets checked first; sneaky-find vs `fdfind --glob` (target ≤ 1.2×) with identical
#   sets; one sneaky-read of a small file vs one `cat` process (target ≤ 1.1×).
#
# Usage: benches/read_tools.sh [SOURCE_TREE]
# The tree must hold ≥ 50 MB of source. Default: cargo's registry sources
# (~/.cargo/registry/src, filled by any `cargo fetch`; this project's own dependencies are
# ~150 MB). Needs hyperfine, ripgrep and fd-find (apt-get install hyperfine ripgrep fd-find).
# Builds only the binaries it runs (a fat-LTO link each); SNEAKY_BENCH_BIN=DIR runs those in
# DIR instead.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/same_results.sh
exec < /dev/null # rg searches a piped stdin instead of the directory

TREE=${1:-$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -n 1)}
TREE=$(cd "$TREE" && pwd -P)
for tool in hyperfine rg fdfind; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install hyperfine ripgrep fd-find)"; exit 1; }
done
size_mb=$(du -sm "$TREE" | cut -f1)
[ "$size_mb" -ge 50 ] || { echo "$TREE holds only ${size_mb} MB; need ≥ 50 MB"; exit 1; }

if [ -n "${SNEAKY_BENCH_BIN:-}" ]; then
  BIN=$(cd "$SNEAKY_BENCH_BIN" && pwd)
else
  cargo build --release -q --bin sneaky-grep --bin sneaky-find --bin sneaky-read
  BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "tree: $TREE (${size_mb} MB, $(find "$TREE" -type f | wc -l) files), $(nproc) cores"

ratio() { # ratio NAME JSON: mean of command 1 / mean of command 2
  python3 - "$1" "$2" <<'EOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))["results"]
ours, ref = r[0]["mean"], r[1]["mean"]
print(f"RATIO {name}: ours {ours*1000:.1f} ms, reference {ref*1000:.1f} ms, ratio {ours/ref:.2f}x")
EOF
}

# --- grep: identical sets first -------------------------------------------------------------
PATTERN='fn [a-z_]+_mut\('
cd "$TREE"
# The tree is no project (no sneaky.toml or .git above it): name it, as --root would.
export SNEAKY_ROOT="$TREE"
same_grep_as_rg "$PATTERN"
echo "grep: identical path:line sets ($(wc -l < "$WORK/ours.txt") matches)"

hyperfine -N -w 2 -r 10 --export-json "$WORK/grep.json" \
  -n sneaky-grep "$BIN/sneaky-grep --max-results 1000000 '$PATTERN'" \
  -n "rg -n" "rg -n '$PATTERN'" >/dev/null
ratio "sneaky-grep / rg -n" "$WORK/grep.json"
hyperfine -N -w 2 -r 10 --export-json "$WORK/grep_sorted.json" \
  -n sneaky-grep "$BIN/sneaky-grep --max-results 1000000 '$PATTERN'" \
  -n "rg -n --sort path" "rg -n --sort path '$PATTERN'" >/dev/null
ratio "sneaky-grep / rg -n --sort path" "$WORK/grep_sorted.json"

# --- find -----------------------------------------------------------------------------------
same_find_as_fd '*.rs'
echo "find: identical sets ($(wc -l < "$WORK/fd.txt") paths)"
hyperfine -N -w 2 -r 10 --export-json "$WORK/find.json" \
  -n sneaky-find "$BIN/sneaky-find --max-results 1000000 '*.rs'" \
  -n "fdfind --glob" "fdfind --glob '*.rs'" >/dev/null
ratio "sneaky-find / fdfind --glob" "$WORK/find.json"

# --- read: one small file, start-up dominated ----------------------------------------------
# Taken in turns (a run of ours, a run of cat, …) so both see the same load; the CPU time
# (user + system, from wait4) is the least disturbed by other programs on a busy machine.
mkdir -p "$WORK/ws"
printf 'fn main() {\n    println!("hello");\n}\n' > "$WORK/ws/small.rs"
cd "$WORK/ws"
export SNEAKY_ROOT="$WORK/ws"
python3 - "$BIN/sneaky-read" <<'EOF'
import os, statistics, sys, time
ours = [sys.argv[1], "small.rs"]
cat = ["/bin/cat", "small.rs"]
devnull = os.open("/dev/null", os.O_RDWR)
acts = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)]
wall, cpu = {0: [], 1: []}, {0: [], 1: []}
for i in range(620):
    for k, cmd in enumerate((ours, cat)):
        t0 = time.perf_counter()
        pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=acts)
        _, _, ru = os.wait4(pid, 0)
        if i >= 20:  # warm-up
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(ru.ru_utime + ru.ru_stime)
w = [statistics.median(wall[k]) for k in (0, 1)]
c = [statistics.mean(cpu[k]) for k in (0, 1)]
print(f"RATIO sneaky-read / cat (600 runs each, in turns): cpu ours {c[0]*1000:.2f} ms, "
      f"cat {c[1]*1000:.2f} ms, ratio {c[0]/c[1]:.2f}x | wall median ours {w[0]*1000:.2f} ms, "
      f"cat {w[1]*1000:.2f} ms, ratio {w[0]/w[1]:.2f}x")
EOF
