#!/usr/bin/env bash
# Benchmark the code navigation tools against the reference tools, side by side in one run,
# and print the ratios (ours / reference; lower is better) of the median wall time, with the
# CPU time (user + system, mean) beside it:
#   - outline of a whole tree (sneaky-outline PATH) vs `ctags -R` on it (goal: no slower),
#     with the parse cache empty before every run (cold) and as a second call finds it (warm);
#   - find_symbol (sneaky-symbol NAME) vs `rg -w NAME` on a tree of 10,000 files (goal:
#     within 1.5x), cold and warm likewise, for a few names.
#
# Usage: [BIN=DIR] [RUNS=N] [NAMES='a b'] benches/code_nav.sh [OUTLINE_TREE]
# OUTLINE_TREE defaults to the tokio crate's source as Cargo.lock pins it (cargo's registry). The
# 10,000-file tree is cargo's registry sources (~/.cargo/registry/src, this project's
# dependencies), crates taken in name order until 10,000 files, hard-linked into a temporary
# directory. Needs hyperfine, ripgrep and universal-ctags (apt-get install hyperfine ripgrep
# universal-ctags); builds only the two binaries it runs, in release.
set -euo pipefail
cd "$(dirname "$0")/.."
exec < /dev/null # rg searches a piped stdin instead of the directory

for tool in hyperfine rg ctags python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install hyperfine ripgrep universal-ctags)"; exit 1; }
done
ctags --version | grep -q '^Universal Ctags' || { echo "ctags is not Universal Ctags"; exit 1; }

REGISTRY=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -n 1)
if [ -z "${1:-}" ]; then
  version=$(grep -A1 '^name = "tokio"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p' | head -n 1)
  OUTLINE_TREE="$REGISTRY/tokio-$version"
else
  OUTLINE_TREE=$1
fi
OUTLINE_TREE=$(cd "$OUTLINE_TREE" && pwd -P)

# BIN=DIR runs the binaries already in DIR (the release profile is slow to build).
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin sneaky-outline --bin sneaky-symbol
  BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
fi
BIN=$(cd "$BIN" && pwd -P)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config"
RUNS=${RUNS:-5}

ratio() { # ratio NAME JSON: command 1 (ours) against command 2 (the reference)
  python3 - "$1" "$2" <<'EOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))["results"]
(o, f) = r[0], r[1]
cpu = lambda x: x["user"] + x["system"]
print(f"RATIO {name}: median ours {o['median']*1000:.0f} ms, reference {f['median']*1000:.0f} ms, "
      f"ratio {o['median']/f['median']:.2f}x | cpu ours {cpu(o)*1000:.0f} ms, reference "
      f"{cpu(f)*1000:.0f} ms, ratio {cpu(o)/cpu(f):.2f}x")
EOF
}

# --- outline of a whole tree vs ctags -R ----------------------------------------------------
cd "$OUTLINE_TREE"
export SNEAKY_ROOT="$OUTLINE_TREE"
"$BIN/sneaky-outline" --limit 100000 . | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert not r["truncated"]
unparsed = (r.get("unsupported") or {}).get("count", 0)
print("outline tree:", sys.argv[1] + ",", len(r["symbols"]), "definitions,", unparsed, "files not parsed")' "$OUTLINE_TREE"
echo "ctags -R: $(ctags -R --sort=no -f - . | wc -l) tags; $(nproc) cores"
rm -rf "$XDG_STATE_HOME"
hyperfine -N -w 1 -r "$RUNS" --prepare "rm -rf $XDG_STATE_HOME" --export-json "$WORK/outline_cold.json" \
  -n "sneaky-outline (cold)" "$BIN/sneaky-outline --limit 100000 ." \
  -n "ctags -R" "ctags -R --sort=no -f /dev/null ." >/dev/null
ratio "outline of the tree (cache empty) / ctags -R" "$WORK/outline_cold.json"
hyperfine -N -w 1 -r "$RUNS" --export-json "$WORK/outline_warm.json" \
  -n "sneaky-outline (warm)" "$BIN/sneaky-outline --limit 100000 ." \
  -n "ctags -R" "ctags -R --sort=no -f /dev/null ." >/dev/null
ratio "outline of the tree (cache filled) / ctags -R" "$WORK/outline_warm.json"

# --- find_symbol vs rg -w on 10,000 files ---------------------------------------------------
BIG="$WORK/tree"
mkdir -p "$BIG"
files=0
for crate in $(ls "$REGISTRY" | sort); do
  [ "$files" -ge 10000 ] && break
  cp -al "$REGISTRY/$crate" "$BIG/$crate"
  files=$(find "$BIG" -type f | wc -l)
done
# Cut to exactly 10,000 files (the last crate taken in part).
find "$BIG" -type f | sort | tail -n +10001 | xargs -r rm -f
cd "$BIG"
export SNEAKY_ROOT="$BIG"
echo "symbol tree: $(find . -type f | wc -l) files, $(du -sm --apparent-size . | cut -f1) MB (cargo registry crates $(ls | head -n 1) … $(ls | tail -n 1))"
for name in ${NAMES:-Searcher deserialize_any WalkBuilder}; do
  found=$("$BIN/sneaky-symbol" --limit 100000 "$name" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["result"]["symbols"]))')
  echo "$name: find_symbol $found definitions, rg -w $(rg -w -F -c --no-filename -- "$name" . | awk "{s+=\$1} END {print s+0}") lines in $(rg -w -F -l -- "$name" . | wc -l) files"
  rm -rf "$XDG_STATE_HOME"
  hyperfine -N -w 1 -r "$RUNS" --prepare "rm -rf $XDG_STATE_HOME" --export-json "$WORK/sym_cold.json" \
    -n "sneaky-symbol $name (cold)" "$BIN/sneaky-symbol --limit 100000 $name" \
    -n "rg -w $name" "rg -w -F -- $name ." >/dev/null
  ratio "find_symbol $name (cache empty) / rg -w" "$WORK/sym_cold.json"
  hyperfine -N -w 1 -r "$RUNS" --export-json "$WORK/sym_warm.json" \
    -n "sneaky-symbol $name (warm)" "$BIN/sneaky-symbol --limit 100000 $name" \
    -n "rg -w $name" "rg -w -F -- $name ." >/dev/null
  ratio "find_symbol $name (cache filled) / rg -w" "$WORK/sym_warm.json"
done
