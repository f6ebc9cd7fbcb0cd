#!/usr/bin/env bash
# Size and build time of the installed binaries, before and after: for each of two revisions,
# a clean release build (`cargo install --path . --root DIR --locked` into a fresh target
# directory, the way a user installs) timed with /usr/bin/time, then the installed size of each of the
# binaries (every [[bin]] of Cargo.toml). Prints both side by side with the ratio, and checks that the bash grammar
# (tree-sitter-bash) is linked only where it is parsed (sneaky-run: the hosts check and
# run commands through it; sneaky-outline and sneaky-symbol, which hold every grammar of the
# code navigation tools) and HTTPS (rustls) only in sneaky-agent.
#
# Usage: benches/size.sh [BEFORE] [AFTER]
#   BEFORE  a revision (default b81cd27, a fixed baseline)
#   AFTER   a revision, or `worktree` for the uncommitted state of this checkout (default HEAD)
# Each revision is built in its own shared clone under ${SNEAKY_SIZE_DIR:-/tmp/sneaky-size}/<sha>;
# a revision measured before is not rebuilt (its result file is reused) unless SNEAKY_SIZE_FORCE=1.
# A clean release build takes minutes per revision. The wall time depends on what else runs on
# the machine; the CPU time (user + system) much less: compare that one on a shared machine,
# and build both at once (SNEAKY_SIZE_PARALLEL=1) so that both see the same load.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${1:-b81cd27}
AFTER=${2:-HEAD}
WORK=${SNEAKY_SIZE_DIR:-/tmp/sneaky-size}
# Strings of the bash grammar's symbol table (rodata of tree-sitter-bash's parser.c, kept by
# `strip`); none of our own code spells them.
GRAMMAR_MARK=_c_expression_not_assignment
TLS_MARK=rustls

resolve() {
  if [ "$1" = worktree ]; then
    # A commit object of the working tree, without touching the index or the branch.
    local stash
    stash=$(git stash create)
    if [ -n "$stash" ]; then echo "$stash"; else git rev-parse HEAD; fi
  else
    git rev-parse --verify "$1^{commit}"
  fi
}

# measure SHA: build and install SHA cleanly unless measured before; leaves $WORK/SHA/result.
measure() {
  local sha=$1 dir=$WORK/$1
  if [ -s "$dir/result" ] && [ "${SNEAKY_SIZE_FORCE:-0}" != 1 ]; then
    echo "== $sha: reusing $dir/result (SNEAKY_SIZE_FORCE=1 rebuilds)" >&2
    return
  fi
  rm -rf "$dir"
  mkdir -p "$WORK"
  git clone --quiet --shared --no-checkout . "$dir/src"
  git -C "$dir/src" checkout --quiet --detach "$sha"
  echo "== $sha: clean release build (cargo install --path . --root $dir/inst --locked)" >&2
  # /usr/bin/time: wall seconds, and CPU seconds (user + system, children included), which
  # depend far less on what else the machine runs than the wall time does.
  (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" CARGO_TERM_COLOR=never \
    /usr/bin/time -f "%e %U %S" -o "$dir/time" \
    cargo install --path . --root "$dir/inst" --locked --quiet)
  {
    awk '{ printf "build_seconds %.1f\ncpu_seconds %.1f\n", $1, $2 + $3 }' "$dir/time"
    for b in $BINS; do
      local f=$dir/inst/bin/$b
      if [ -f "$f" ]; then
        echo "size $b $(stat -c %s "$f") $(grep -c -a -F "$GRAMMAR_MARK" "$f" || true) $(grep -c -a -F "$TLS_MARK" "$f" || true)"
      else
        echo "size $b - - -"
      fi
    done
  } >"$dir/result.tmp"
  mv "$dir/result.tmp" "$dir/result"
  # Keep the result and the installed binaries; the target directory is large.
  rm -rf "$dir/target"
}

field() { # field SHA BIN COLUMN  (COLUMN 3 = bytes, 4 = grammar marks, 5 = TLS marks)
  awk -v b="$2" -v c="$3" '$1 == "size" && $2 == b { print $c }' "$WORK/$1/result"
}

mb() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e6 }'; }

before=$(resolve "$BEFORE")
after=$(resolve "$AFTER")
# The binaries: every [[bin]] of either commit's Cargo.toml, in the newer one's order.
bins_of() { git show "$1:Cargo.toml" | sed -n 's/^name = "\(sneaky-[a-z]*\)"$/\1/p'; }
BINS=$( { bins_of "$after"; bins_of "$before"; } | awk '!seen[$0]++')
if [ "${SNEAKY_SIZE_PARALLEL:-0}" = 1 ]; then
  # Both builds at once: on a shared machine they see the same load, so their times compare.
  measure "$before" &
  first=$!
  measure "$after" &
  second=$!
  wait "$first"
  wait "$second"
else
  measure "$before"
  measure "$after"
fi

echo
echo "installed size (bytes as written by cargo install; MB = 10^6 bytes), $(nproc) CPUs"
printf '%-15s %12s %12s %7s   %s\n' binary "before" "after" ratio "after links: bash grammar / rustls"
total_b=0
total_a=0
bad=0
for b in $BINS; do
  sb=$(field "$before" "$b" 3)
  sa=$(field "$after" "$b" 3)
  gm=$(field "$after" "$b" 4)
  tm=$(field "$after" "$b" 5)
  ratio=-
  if [ "$sb" != - ] && [ "$sa" != - ]; then
    ratio=$(awk -v a="$sa" -v b="$sb" 'BEGIN { printf "%.2f", a / b }')
  fi
  [ "$sb" = - ] || total_b=$((total_b + sb))
  [ "$sa" = - ] || total_a=$((total_a + sa))
  grammar=no
  tls=no
  [ "${gm:-0}" != - ] && [ "${gm:-0}" -gt 0 ] && grammar=yes
  [ "${tm:-0}" != - ] && [ "${tm:-0}" -gt 0 ] && tls=yes
  # Where the grammar and TLS belong.
  case $b in
    sneaky-run|sneaky-outline) want_grammar=yes ;;
    *) want_grammar=no ;;
  esac
  case $b in
    sneaky-agent) want_tls=yes ;;
    *) want_tls=no ;;
  esac
  note=""
  if [ "$grammar" != "$want_grammar" ]; then note="$note UNEXPECTED grammar=$grammar"; bad=1; fi
  if [ "$tls" != "$want_tls" ]; then note="$note UNEXPECTED rustls=$tls"; bad=1; fi
  printf '%-15s %12s %12s %7s   %s / %s%s\n' "$b" "$sb" "$sa" "$ratio" "$grammar" "$tls" "$note"
done
printf '%-15s %12s %12s %7s\n' "total" "$total_b" "$total_a" \
  "$(awk -v a="$total_a" -v b="$total_b" 'BEGIN { printf "%.2f", a / b }')"
printf '%-15s %12s %12s\n' "total MB" "$(mb "$total_b")" "$(mb "$total_a")"
for what in build_seconds cpu_seconds; do
  tb=$(awk -v w=$what '$1 == w { print $2 }' "$WORK/$before/result")
  ta=$(awk -v w=$what '$1 == w { print $2 }' "$WORK/$after/result")
  label="build wall s"
  [ $what = cpu_seconds ] && label="build CPU s"
  printf '%-15s %12.0f %12.0f %7s\n' "$label" "$tb" "$ta" \
    "$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.2f", a / b }')"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before = $BEFORE ($before), after = $AFTER ($after)"
echo "target: total after <= 30 MB: $(awk -v a="$total_a" 'BEGIN { print (a <= 30e6) ? "met" : "MISSED" }')"
if [ "$bad" = 1 ]; then
  echo "the grammar or rustls is linked where it should not be (see UNEXPECTED above)"
  exit 1
fi
