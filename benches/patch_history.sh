#!/usr/bin/env bash
# Success rate of sneaky-patch and GNU patch on the same real diffs: every modified file in
# this repository's first-parent history (`git diff PARENT COMMIT -- FILE`), applied to the
# parent's version as is, shifted down by five comment lines, and shifted by lines that
# include a blank one. A result counts as correct only when it equals the commit's version
# (shifted alike); "wrong" means the tool said it succeeded but the file differs.
#
# Usage: benches/patch_history.sh [MAX_COMMITS]      Needs git and GNU patch.
# SNEAKY_BENCH_PROFILE=debug uses a debug build (no release build needed; for CI).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
MAX=${1:-500}
command -v patch >/dev/null || { echo "missing GNU patch (apt-get install patch)"; exit 1; }
PROFILE=${SNEAKY_BENCH_PROFILE:-release}
if [ "$PROFILE" = release ]; then cargo build --release --bin sneaky-patch -q; else cargo build --bin sneaky-patch -q; fi
BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/$PROFILE
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws"
printf 'max_file_size_bytes = 268435456\n' > "$WORK/config.toml"
printf '// shifted 1\n// shifted 2\n// shifted 3\n// shifted 4\n// shifted 5\n' > "$WORK/shift.plain"
printf '// shifted 1\n\n// shifted 3\n' > "$WORK/shift.blank"
: > "$WORK/shift.none"

declare -A count
for k in ours_correct ours_wrong ours_rejected gnu_correct gnu_wrong gnu_rejected; do count[$k]=0; done
cases=0
for commit in $(git -C "$REPO" rev-list --first-parent --max-count="$MAX" HEAD); do
  git -C "$REPO" rev-parse -q --verify "$commit^" >/dev/null || continue
  while IFS=$'\t' read -r added removed file; do
    [ "$added" = "-" ] && continue   # binary
    git -C "$REPO" show "$commit^:$file" > "$WORK/old" 2>/dev/null || continue
    git -C "$REPO" show "$commit:$file" > "$WORK/new" 2>/dev/null || continue
    git -C "$REPO" diff --no-color --no-ext-diff "$commit^" "$commit" -- "$file" > "$WORK/d.patch"
    for shift in none plain blank; do
      cases=$((cases + 1))
      cat "$WORK/shift.$shift" "$WORK/old" > "$WORK/old.s"
      cat "$WORK/shift.$shift" "$WORK/new" > "$WORK/new.s"
      cp "$WORK/old.s" "$WORK/ws/f"
      if "$BIN/sneaky-patch" --root "$WORK/ws" --config "$WORK/config.toml" f < "$WORK/d.patch" > /dev/null 2>&1; then
        if cmp -s "$WORK/ws/f" "$WORK/new.s"; then count[ours_correct]=$((count[ours_correct] + 1))
        else count[ours_wrong]=$((count[ours_wrong] + 1)); echo "ours WRONG: $commit $file ($shift)"; fi
      else
        count[ours_rejected]=$((count[ours_rejected] + 1))
      fi
      cp "$WORK/old.s" "$WORK/gnu"
      if patch -s -f --no-backup-if-mismatch -r - "$WORK/gnu" < "$WORK/d.patch" > /dev/null 2>&1; then
        if cmp -s "$WORK/gnu" "$WORK/new.s"; then count[gnu_correct]=$((count[gnu_correct] + 1))
        else count[gnu_wrong]=$((count[gnu_wrong] + 1)); echo "GNU patch wrong: $commit $file ($shift)"; fi
      else
        count[gnu_rejected]=$((count[gnu_rejected] + 1))
      fi
    done
  done < <(git -C "$REPO" diff --numstat --diff-filter=M "$commit^" "$commit")
done
echo "cases: $cases (file changes × {as is, shifted, shifted with a blank line})"
echo "sneaky-patch: correct ${count[ours_correct]}, wrong ${count[ours_wrong]}, rejected ${count[ours_rejected]}"
echo "GNU patch:    correct ${count[gnu_correct]}, wrong ${count[gnu_wrong]}, rejected ${count[gnu_rejected]}"
if [ "${count[ours_wrong]}" -ne 0 ] || [ "${count[ours_correct]}" -lt "${count[gnu_correct]}" ]; then
  echo "FAIL: sneaky-patch must be at least as good as GNU patch and never wrong"; exit 1
fi
echo "OK: at least as good as GNU patch, never wrong"
