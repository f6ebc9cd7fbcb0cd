#!/usr/bin/env bash
# Benchmark the code navigation tools against the reference tools, side by side in one run,
# and print the ratios (ours / reference; lower is better) of the wall time (mean), with the
# CPU time (user + system) beside it, each the median over ROUNDS (3) rounds of RUNS (5) runs
# whose order rotates between ours and the reference (benches/rounds.sh: the machine is
# shared, and load then hits both alike):
#   - outline of a whole tree (sneaky-outline PATH) vs `ctags -R` on it (goal: no slower),
#     with the parse cache empty before every run (cold) and as a second call finds it (warm);
#   - find_symbol (sneaky-symbol NAME) vs `rg -w NAME` on a tree of 10,000 files (goal:
#     within 1.5x), cold and warm likewise (find_symbol caches nothing itself: the warm cache
#     is one outline of the tree filled), for a few names: three rare ones and `new`, a common
#     name defined in many of the files that hold it, where a parse per such file shows.
# First, that outline's skimmed parse (the blocks that hold no definition left out,
# src/code/skim.rs) finds exactly the definitions of a whole parse, file by file, over every
# file of cargo's registry and the trees in SKIM_TREES (benches/skim_same.py; `SKIM` lines,
# the goal: no file that parses cleanly differs); SKIM_CHECK=0 leaves it out.
#
# Usage: [BIN=DIR] [ROUNDS=N] [RUNS=N] [NAMES='a b'] [SKIM_TREES='dir …'] [SKIM_CHECK=0]
#        benches/code_nav.sh [OUTLINE_TREE]
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

BENCHES=$(pwd)/benches
. "$BENCHES/rounds.sh"

# --- the skimmed parse finds what the whole parse finds ------------------------------------
if [ "${SKIM_CHECK:-1}" != 0 ]; then
  # It exits 1 when a file differs (its lines say which), as Python does on an error of its
  # own: only its last line (`SKIM all:`) tells that it ran through. A filter over its output
  # once hid that it failed (it spoke an old wire to the parse helper).
  # shellcheck disable=SC2086 # SKIM_TREES is a list of directories
  skim=$(python3 "$BENCHES/skim_same.py" "$BIN/sneaky-outline" "$REGISTRY" ${SKIM_TREES:-} 2>&1) || true
  if ! printf '%s\n' "$skim" | grep -q '^SKIM all:'; then
    printf '%s\n' "$skim" | tail -n 5
    echo "benches/skim_same.py failed"
    exit 1
  fi
  printf '%s\n' "$skim" | grep '^SKIM\|^  '
fi
ROUNDS=${ROUNDS:-3}

# compare LABEL OURS REFERENCE: the rounds of the two commands, and the ratio ours / reference.
compare() {
  local label=$1
  cmds=("$2" "$3")
  names=("ours" "reference")
  run_rounds 1
  BENCHES="$BENCHES" python3 - "$WORK" "$ROUNDS" "$label" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["BENCHES"])
from rounds import Rounds
r, label = Rounds(sys.argv[1], sys.argv[2]), sys.argv[3]
o, f = r.mean("ours"), r.mean("reference")
co, cf = r.cpu("ours"), r.cpu("reference")
print(f"RATIO {label}: wall ours {o:.0f} ms, reference {f:.0f} ms, ratio {o/f:.2f}x | "
      f"cpu ours {co:.0f} ms, reference {cf:.0f} ms, ratio {co/cf:.2f}x")
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
PREPARE="rm -rf $XDG_STATE_HOME" compare "outline of the tree, cold (cache emptied before every run) / ctags -R" \
  "$BIN/sneaky-outline --limit 100000 ." "ctags -R --sort=no -f /dev/null ."
"$BIN/sneaky-outline" --limit 100000 . >/dev/null
compare "outline of the tree, warm (cache filled by an earlier run) / ctags -R" \
  "$BIN/sneaky-outline --limit 100000 ." "ctags -R --sort=no -f /dev/null ."

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
for name in ${NAMES:-Searcher deserialize_any WalkBuilder new}; do
  found=$("$BIN/sneaky-symbol" --limit 100000 "$name" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["result"]["symbols"]))')
  echo "$name: find_symbol $found definitions, rg -w $(rg -w -F -c --no-filename -- "$name" . | awk "{s+=\$1} END {print s+0}") lines in $(rg -w -F -l -- "$name" . | wc -l) files"
  PREPARE="rm -rf $XDG_STATE_HOME" compare "find_symbol $name, cold (cache emptied before every run) / rg -w" \
    "$BIN/sneaky-symbol --limit 100000 $name" "rg -w -F -- $name ."
  # find_symbol caches no file it parsed (it parses a file only for the definitions where the
  # name is); the cache is filled here as outline, find_references or repo_map fill it.
  "$BIN/sneaky-outline" --limit 100000 . >/dev/null
  compare "find_symbol $name, warm (cache filled by outline of the tree) / rg -w" \
    "$BIN/sneaky-symbol --limit 100000 $name" "rg -w -F -- $name ."
done
