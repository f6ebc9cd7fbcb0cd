#!/usr/bin/env bash
# Model-shaped edit mistakes, per class: how often sneaky-patch / sneaky-replace, GNU patch
# (with and without -l) and git apply --recount (with and without --ignore-whitespace) give the
# right file, refuse, or give a wrong one. The corpus (benches/llm_edits/corpus.rs) mutates real
# edits of real files (cargo registry sources and this repository's history) the way models
# get diffs wrong; each case has its expected result (or must be refused).
#
# "correct" = the file equals the expected one; "wrong" = the tool said it succeeded and the
# file is anything else (or it applied a case whose only right answer is a refusal);
# "refused" = the tool failed and left the file alone. Columns uc = correct among the cases
# whose answer the text pins down (every hunk's lines, whitespace stripped, occur once).
# str_replace classes have no reference tool ("-").
#
# Usage: benches/llm_edits.sh [PER_CLASS] [SEED]     Needs git and GNU patch.
# SNEAKY_BENCH_PROFILE=release builds release binaries (default debug: this measures results,
# not speed). Fails when ours is ever wrong, or has fewer uc than the best reference in a class.
set -euo pipefail
cd "$(dirname "$0")/.."
PER=${1:-100}
SEED=${2:-20261130}
command -v patch >/dev/null || { echo "missing GNU patch (apt-get install patch)"; exit 1; }
command -v git >/dev/null || { echo "missing git"; exit 1; }
PROFILE=${SNEAKY_BENCH_PROFILE:-debug}
FLAGS=(); [ "$PROFILE" = release ] && FLAGS=(--release)
cargo build "${FLAGS[@]}" -q --bin sneaky-patch --bin sneaky-replace --example llm_edits_corpus
TARGET=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
WORK=$(mktemp -d /tmp/llm_edits.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# A copy, so that a rebuild during the run does not change what is measured.
BIN=$WORK/bin
mkdir -p "$BIN"
cp "$TARGET/$PROFILE/sneaky-patch" "$TARGET/$PROFILE/sneaky-replace" "$TARGET/$PROFILE/examples/llm_edits_corpus" "$BIN/"
"$BIN/llm_edits_corpus" "$WORK/corpus" "$PER" "$SEED"
printf 'max_file_size_bytes = 268435456\n' > "$WORK/config.toml"
mkdir -p "$WORK/ws" "$WORK/ref"

# outcome FILE CASE EXIT_STATUS → correct | refused | wrong
outcome() {
  local file=$1 case=$2 status=$3
  if [ "$status" -ne 0 ]; then
    if cmp -s "$file" "$case/old"; then echo refused; else echo wrong; fi
  elif [ -f "$case/expected" ] && cmp -s "$file" "$case/expected"; then echo correct
  else echo wrong; fi
}

run_ref() { # NAME CASE COMMAND...
  local name=$1 case=$2; shift 2
  rm -rf "$WORK/ref"; mkdir -p "$WORK/ref"; cp "$case/old" "$WORK/ref/f"
  local st=0
  (cd "$WORK/ref" && "$@" < "$case/patch" > /dev/null 2>&1) || st=$?
  rm -f "$WORK/ref/f.orig" "$WORK/ref/f.rej"
  echo "$name $(outcome "$WORK/ref/f" "$case" "$st")"
}

: > "$WORK/results"
for case in "$WORK"/corpus/*/; do
  case=${case%/}
  read -r class tag < "$case/meta"
  cp "$case/old" "$WORK/ws/f"
  st=0
  if [ -f "$case/patch" ]; then
    "$BIN/sneaky-patch" --root "$WORK/ws" --config "$WORK/config.toml" f < "$case/patch" > /dev/null 2>&1 || st=$?
  else
    "$BIN/sneaky-replace" --root "$WORK/ws" --config "$WORK/config.toml" < "$case/args.json" > /dev/null 2>&1 || st=$?
  fi
  res=$(outcome "$WORK/ws/f" "$case" "$st")
  [ "$res" = wrong ] && echo "ours WRONG: $(basename "$case")" >&2
  {
    echo "$class $tag ours $res"
    if [ -f "$case/patch" ]; then
      run_ref gnu "$case" patch -s -f --no-backup-if-mismatch -r - f | sed "s/^/$class $tag /"
      run_ref gnu_l "$case" patch -s -f -l --no-backup-if-mismatch -r - f | sed "s/^/$class $tag /"
      run_ref git "$case" git apply --recount - | sed "s/^/$class $tag /"
      run_ref git_iw "$case" git apply --recount --ignore-whitespace - | sed "s/^/$class $tag /"
    fi
  } >> "$WORK/results"
done

echo "cases: $(ls "$WORK/corpus" | wc -l) ($PER per class, seed $SEED); per tool: correct/refused/wrong (uc: correct among unique cases, of u)"
awk '
  { k = $1 SUBSEP $3; if (!($1 in seen)) { seen[$1] = 1; sorted[++m] = $1 }
    n[k]++; r[k SUBSEP $4]++
    if ($2 == "unique") { u[k]++; if ($4 == "correct") uc[k]++ } }
  END {
    split("ours gnu gnu_l git git_iw", order, " ")
    printf "%-24s %5s", "class", "u"
    hdr["ours"] = "sneaky"; hdr["gnu"] = "patch"; hdr["gnu_l"] = "patch -l"; hdr["git"] = "git --recount"; hdr["git_iw"] = "git --recount -iw"
    for (i = 1; i <= 5; i++) printf " | %-20s", hdr[order[i]]
    printf "\n"
    fail = 0
    for (j = 1; j <= m; j++) {
      c = sorted[j]; best = 0
      printf "%-24s %5d", c, u[c SUBSEP "ours"] + 0
      for (i = 1; i <= 5; i++) {
        t = order[i]; k = c SUBSEP t
        if (!(k in n)) { printf " | %-20s", "-"; continue }
        cell = sprintf("%d/%d/%d uc%d", r[k SUBSEP "correct"], r[k SUBSEP "refused"], r[k SUBSEP "wrong"], uc[k])
        printf " | %-20s", cell
        if (t != "ours" && uc[k] > best) best = uc[k]
      }
      printf "\n"
      ko = c SUBSEP "ours"
      if (r[ko SUBSEP "wrong"] > 0) { fail = 1; print "  FAIL: ours wrong in " c }
      if (uc[ko] < best) { fail = 1; print "  FAIL: ours below the best reference in " c }
    }
    if (fail) exit 1
    print "OK: ours never wrong, and at least the best reference on unique cases in every class"
  }' "$WORK/results"
