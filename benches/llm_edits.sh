#!/usr/bin/env bash
# Model-shaped edit mistakes, per class: how often sneaky-patch / sneaky-replace, GNU patch
# (with and without -l), git apply --recount (with and without --ignore-whitespace) and, for
# str_replace, an Aider-like matcher (benches/llm_edits/aider_like.py) give the right file,
# refuse, or give a wrong one. The corpus (benches/llm_edits/corpus.rs) mutates real edits of
# real files (cargo registry sources, this repository's history, and the history of ripgrep, a
# large test-heavy repository cloned at a pinned commit into ~/.cache/sneaky-bench unless
# LLM_EDITS_RIPGREP names a clone) the way models get edits wrong; each case has its expected
# result (or must be refused).
#
# "correct" = the file equals the expected one; "wrong" = the tool said it succeeded and the
# file is anything else (or it applied a case whose only right answer is a refusal);
# "refused" = the tool failed and left the file alone. Column u = cases whose answer the text
# pins down (every hunk's lines, whitespace stripped, occur once); uc = correct among them.
# Tools are compared on correct results, for str_replace classes on uc: without line numbers,
# taking the first of several places (as the Aider-like matcher does) is a guess.
#
# Usage: benches/llm_edits.sh [PER_CLASS] [SEED]     Needs git, GNU patch and python3.
# SNEAKY_BENCH_PROFILE=release builds release binaries (default debug: this measures results,
# not speed). Fails when ours is ever wrong, or, in a class, correct less often than the best
# reference that is never wrong in that class. LLM_EDITS_RESULTS=FILE keeps the raw results;
# LLM_EDITS_SAMPLE=DIR writes the fixed sample CI checks (the committed one came from
# `LLM_EDITS_SAMPLE=tests/llm_edits bash benches/llm_edits.sh 30`).
set -euo pipefail
cd "$(dirname "$0")/.."
PER=${1:-100}
SEED=${2:-20261130}
command -v patch >/dev/null || { echo "missing GNU patch (apt-get install patch)"; exit 1; }
command -v git >/dev/null || { echo "missing git"; exit 1; }
command -v python3 >/dev/null || { echo "missing python3"; exit 1; }
RIPGREP=${LLM_EDITS_RIPGREP:-$HOME/.cache/sneaky-bench/ripgrep.git}
RIPGREP_COMMIT=3fce3b5bb0236da2df6d99672afb8a719642eca7
if [ ! -d "$RIPGREP" ]; then
  mkdir -p "$(dirname "$RIPGREP")"
  git clone -q --bare https://github.com/BurntSushi/ripgrep "$RIPGREP"
fi
git -C "$RIPGREP" cat-file -e "$RIPGREP_COMMIT^{commit}" 2>/dev/null \
  || { echo "$RIPGREP lacks commit $RIPGREP_COMMIT"; exit 1; }
# The history is read from the pinned commit, so that the corpus stays the same.
RG_AT=$(mktemp -d /tmp/llm_edits_rg.XXXXXX)
git clone -q --bare "$RIPGREP" "$RG_AT/rg.git"
git -C "$RG_AT/rg.git" update-ref --no-deref HEAD "$RIPGREP_COMMIT"
PROFILE=${SNEAKY_BENCH_PROFILE:-debug}
FLAGS=(); [ "$PROFILE" = release ] && FLAGS=(--release)
cargo build "${FLAGS[@]}" -q --bin sneaky-patch --bin sneaky-replace --example llm_edits_corpus
TARGET=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
WORK=$(mktemp -d /tmp/llm_edits.XXXXXX)
trap 'rm -rf "$WORK" "$RG_AT"' EXIT
# A copy, so that a rebuild during the run does not change what is measured.
BIN=$WORK/bin
mkdir -p "$BIN"
cp "$TARGET/$PROFILE/sneaky-patch" "$TARGET/$PROFILE/sneaky-replace" "$TARGET/$PROFILE/examples/llm_edits_corpus" "$BIN/"
LLM_EDITS_REPOS="$RG_AT/rg.git" "$BIN/llm_edits_corpus" "$WORK/corpus" "$PER" "$SEED"
AIDER=$PWD/benches/llm_edits/aider_like.py
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
  if [ "$res" = wrong ]; then
    echo "ours WRONG: $(basename "$case")" >&2
    # LLM_EDITS_KEEP=DIR keeps the cases ours got wrong.
    [ -n "${LLM_EDITS_KEEP:-}" ] && mkdir -p "$LLM_EDITS_KEEP" && cp -r "$case" "$LLM_EDITS_KEEP/"
  fi
  {
    echo "ours $res"
    if [ -f "$case/patch" ]; then
      run_ref gnu "$case" patch -s -f --no-backup-if-mismatch -r - f
      run_ref gnu_l "$case" patch -s -f -l --no-backup-if-mismatch -r - f
      run_ref git "$case" git apply --recount -
      run_ref git_iw "$case" git apply --recount --ignore-whitespace -
    else
      rm -rf "$WORK/ref"; mkdir -p "$WORK/ref"; cp "$case/old" "$WORK/ref/f"
      st=0; python3 "$AIDER" "$WORK/ref/f" "$case/args.json" > /dev/null 2>&1 || st=$?
      echo "aider $(outcome "$WORK/ref/f" "$case" "$st")"
    fi
  } > "$case/refs"
  sed "s/^/$class $tag /; s/\$/ $(basename "$case")/" "$case/refs" >> "$WORK/results"
done

[ -n "${LLM_EDITS_RESULTS:-}" ] && cp "$WORK/results" "$LLM_EDITS_RESULTS"
if [ -n "${LLM_EDITS_SAMPLE:-}" ]; then
  # The fixed sample tests/suite/edit_corpus.rs checks: the LLM_EDITS_SAMPLE_PER (2) cases of
  # each class with the smallest files, with the references' outcomes (`refs`, without ours).
  rm -rf "$LLM_EDITS_SAMPLE"; mkdir -p "$LLM_EDITS_SAMPLE"
  for case in "$WORK"/corpus/*/; do
    case=${case%/}
    read -r class tag < "$case/meta"
    echo "$class $(wc -c < "$case/old") $case"
  done | sort -k1,1 -k2,2n | awk -v per="${LLM_EDITS_SAMPLE_PER:-2}" '++n[$1] <= per { print $3 }' |
  while read -r case; do
    cp -r "$case" "$LLM_EDITS_SAMPLE/"
    grep -v '^ours ' "$case/refs" > "$LLM_EDITS_SAMPLE/$(basename "$case")/refs" || true
  done
fi
echo "cases: $(ls "$WORK/corpus" | wc -l) ($PER per class, seed $SEED); per tool: correct/refused/wrong (uc: correct among the u unique cases)"
awk '
  { k = $1 SUBSEP $3; if (!($1 in seen)) { seen[$1] = 1; sorted[++m] = $1 }
    n[k]++; r[k SUBSEP $4]++
    if ($2 == "unique") { u[k]++; if ($4 == "correct") uc[k]++ } }
  END {
    split("ours gnu gnu_l git git_iw aider", order, " ")
    printf "%-24s %5s", "class", "u"
    hdr["ours"] = "sneaky"; hdr["gnu"] = "patch"; hdr["gnu_l"] = "patch -l"; hdr["git"] = "git --recount"
    hdr["git_iw"] = "git --recount -iw"; hdr["aider"] = "aider-like"
    for (i = 1; i <= 6; i++) printf " | %-18s", hdr[order[i]]
    printf "\n"
    fail = 0
    for (j = 1; j <= m; j++) {
      c = sorted[j]; best = 0; bestname = ""
      printf "%-24s %5d", c, u[c SUBSEP "ours"] + 0
      for (i = 1; i <= 6; i++) {
        t = order[i]; k = c SUBSEP t
        if (!(k in n)) { printf " | %-18s", "-"; continue }
        cell = sprintf("%d/%d/%d uc%d", r[k SUBSEP "correct"], r[k SUBSEP "refused"], r[k SUBSEP "wrong"], uc[k])
        printf " | %-18s", cell
        score[t] = (c ~ /^replace_/) ? uc[k] : r[k SUBSEP "correct"]
        if (t != "ours" && r[k SUBSEP "wrong"] == 0 && score[t] > best) { best = score[t]; bestname = hdr[t] }
      }
      printf "\n"
      ko = c SUBSEP "ours"
      if (r[ko SUBSEP "wrong"] > 0) { fail = 1; print "  FAIL: ours wrong in " c }
      if (score["ours"] < best) { fail = 1; print "  FAIL: ours correct less often than " bestname " (never wrong) in " c }
    }
    if (fail) exit 1
    print "OK: ours never wrong, and in every class correct at least as often as the best never-wrong reference"
  }' "$WORK/results"
