# Sourced by the benches that time our search tools against rg and fd: before a ratio means
# anything, the results must be the same. Run in the tree searched (its root found from there,
# or named by SNEAKY_ROOT), with BIN (our binaries) and WORK (a scratch directory) set; a
# difference prints the first lines of the diff and ends the bench.

# same_grep_as_rg PATTERN: sneaky-grep's path:line set is `rg -n`'s. Leaves it sorted in
# $WORK/ours.txt.
same_grep_as_rg() {
  "$BIN/sneaky-grep" --max-results 1000000 "$1" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; assert not r["truncated"]; [print(m["path"] + ":" + str(m["line"])) for m in r["matches"]]' \
    | sort > "$WORK/ours.txt"
  rg -n --no-heading "$1" | cut -d: -f1,2 | sort > "$WORK/rg.txt"
  if ! cmp -s "$WORK/ours.txt" "$WORK/rg.txt"; then
    echo "grep $1: path:line sets differ from rg:"; diff "$WORK/ours.txt" "$WORK/rg.txt" | head -20; exit 1
  fi
}

# same_find_as_fd GLOB: sneaky-find's set of paths is `fdfind --glob`'s. Leaves it sorted in
# $WORK/fd.txt.
same_find_as_fd() {
  "$BIN/sneaky-find" --max-results 1000000 "$1" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; assert not r["truncated"]; [print(f.rstrip("/")) for f in r["files"]]' \
    | sort > "$WORK/ours_find.txt"
  fdfind --glob "$1" | sed -E 's#^\./##; s#/$##' | sort > "$WORK/fd.txt"
  if ! cmp -s "$WORK/ours_find.txt" "$WORK/fd.txt"; then
    echo "find $1: sets differ from fd:"; diff "$WORK/ours_find.txt" "$WORK/fd.txt" | head -20; exit 1
  fi
}
