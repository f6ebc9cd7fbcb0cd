#!/usr/bin/env bash
# Scale benchmark: trees of our own of 10,000 and 200,000 files, and ours side by side with
# the reference tools in one run. Prints (ours / reference; lower is better), at each size:
#   - sneaky-find vs `fdfind --glob` (target ≤ 0.4×), identical sets first;
#   - sneaky-grep vs `rg -n` (target ≤ 0.6× at 10,000 files, ≤ 0.7× at 200,000), identical
#     path:line sets first;
# and on the 200,000-file tree:
#   - peak RSS of a 100,000-match grep in JSON (target ≤ 2× its output), and of
#     files_with_matches / count / `--format text` (streamed; its lines checked against rg -n)
#     over more than a million matching lines (target ≤ 64 MiB each), and the streamed text's
#     time vs `rg -n`;
#   - list_dir recursive over the whole tree, paged to the end with offset.
#
# Usage: benches/scale.sh [WORKDIR]   (default: a fresh mktemp -d, removed at the end)
# Needs ripgrep and fd-find (apt-get install ripgrep fd-find) and python3. ROUNDS=N sets the
# runs per command (default 9); SIZES="10000 200000" the tree sizes (in files, multiples of
# 100; the memory and list_dir figures are taken on the largest). Builds only the binaries
# it runs (a fat-LTO link each); SNEAKY_BENCH_BIN=DIR runs those in DIR instead.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/same_results.sh
exec < /dev/null # rg searches a piped stdin instead of the directory

for tool in rg fdfind python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install ripgrep fd-find)"; exit 1; }
done
if [ -n "${SNEAKY_BENCH_BIN:-}" ]; then
  BIN=$(cd "$SNEAKY_BENCH_BIN" && pwd)
else
  cargo build --release -q --bin sneaky-find --bin sneaky-grep --bin sneaky-ls
  BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
fi
if [ $# -ge 1 ]; then WORK=$1; mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
SIZES=${SIZES:-10000 200000}

# --- the trees: FILES/100 folders × 100 small source files (90 .rs, 10 .txt) ----------------
# Every file has 6 lines with "let "; every other file has one "needle" (100,000 in the
# 200,000-file tree). A .git marks a repository whose .gitignore hides one folder, as in real
# projects.
make_tree() { # make_tree DIR FILES
  [ -f "$1/.complete" ] && return
  rm -rf "$1"
  python3 - "$1" "$(($2 / 100))" <<'EOF'
import os, sys
root, folders = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(root, ".git"))
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("generated/\n*.log\n")
os.makedirs(os.path.join(root, "generated"))
for i in range(50):
    with open(os.path.join(root, "generated", f"g{i}.rs"), "w") as f:
        f.write("let needle = 1;\n")
for d in range(folders):
    folder = os.path.join(root, f"pkg{d // 100:02}", f"mod{d:04}")
    os.makedirs(folder)
    for i in range(100):
        ext = "txt" if i % 10 == 9 else "rs"
        body = [f"// file {i} of module {d}\n", f"pub fn item_{i}() -> u64 {{\n"]
        body += [f"    let v{k} = {k * i};\n" for k in range(6)]
        if i % 2 == 0:
            body.append("    // needle: look here\n")
        body += ["    v0 + v5\n", "}\n"]
        with open(os.path.join(folder, f"f{i:03}.{ext}"), "w") as f:
            f.writelines(body)
open(os.path.join(root, ".complete"), "w").close()
EOF
}

# compare NAME OURS REF: run both ROUNDS times, interleaved (the machine's load drifts; runs
# taken in turns see the same drift), output to a file, stdin from /dev/null; medians of wall
# time and of CPU time (user + system), and ours / reference for each.
ROUNDS=${ROUNDS:-9}
compare() {
  python3 - "$ROUNDS" "$WORK/compare.out" "$@" <<'EOF'
import os, shlex, statistics, subprocess, sys, time
rounds, out, name, cmds = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:6]
def once(cmd):
    t0 = time.monotonic()
    with open(out, "wb") as sink:
        # stdin from /dev/null: rg searches a piped stdin instead of the directory.
        p = subprocess.Popen(shlex.split(cmd), stdin=subprocess.DEVNULL, stdout=sink,
                             stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return time.monotonic() - t0, ru.ru_utime + ru.ru_stime
for cmd in cmds:
    once(cmd)  # warm-up
runs = [[], []]
for _ in range(rounds):
    for i, cmd in enumerate(cmds):
        runs[i].append(once(cmd))
wall = [statistics.median(w for w, _ in r) for r in runs]
cpu = [statistics.median(c for _, c in r) for r in runs]
print(f"RATIO {name}: wall ours {wall[0]*1000:.0f} ms, reference {wall[1]*1000:.0f} ms, "
      f"ratio {wall[0]/wall[1]:.2f}x | cpu ours {cpu[0]*1000:.0f} ms, reference {cpu[1]*1000:.0f} ms, "
      f"ratio {cpu[0]/cpu[1]:.2f}x")
EOF
}

# peak NAME CMD...: run once, print peak RSS and output size (and their ratio).
peak() {
  local name=$1; shift
  /usr/bin/time -f '%M' -o "$WORK/rss" "$@" < /dev/null > "$WORK/out" 2>/dev/null || true
  python3 - "$name" "$(cat "$WORK/rss")" "$(stat -c %s "$WORK/out")" <<'EOF'
import sys
name, rss_kb, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print(f"RSS {name}: peak {rss_kb/1024:.1f} MiB for {out/1048576:.1f} MiB of output ({rss_kb*1024/max(out,1):.2f}x)")
EOF
}

for SIZE in $SIZES; do
  TREE=$WORK/tree-$SIZE
  make_tree "$TREE" "$SIZE"
  cd "$TREE"
  echo "tree: $TREE ($(find . -type f -not -path './.git/*' | wc -l) files, $(du -sm . | cut -f1) MB), $(nproc) cores"

  # --- find vs fd -----------------------------------------------------------------------------
  for pattern in '*.txt' '*.rs'; do
    same_find_as_fd "$pattern"
    echo "$SIZE files: find $pattern: identical sets ($(wc -l < "$WORK/fd.txt") paths)"
    compare "$SIZE files: sneaky-find '$pattern' / fdfind --glob" \
      "$BIN/sneaky-find --max-results 1000000 '$pattern'" "fdfind --glob '$pattern'"
  done

  # --- grep vs rg -----------------------------------------------------------------------------
  PATTERN='needle'
  same_grep_as_rg "$PATTERN"
  echo "$SIZE files: grep $PATTERN: identical path:line sets ($(wc -l < "$WORK/ours.txt") matches)"
  compare "$SIZE files: sneaky-grep $PATTERN ($(wc -l < "$WORK/ours.txt") matches) / rg -n" \
    "$BIN/sneaky-grep --max-results 1000000 $PATTERN" "rg -n $PATTERN"
  compare "$SIZE files: sneaky-grep -l 'let v0' / rg -l" \
    "$BIN/sneaky-grep -l --max-results 1000000 'let v0'" "rg -l 'let v0'"

done

# The memory and list_dir figures: on the largest tree (the last one searched).
# --- memory ---------------------------------------------------------------------------------
peak "grep JSON, $(wc -l < "$WORK/ours.txt") matches" "$BIN/sneaky-grep" --max-results 1000000 "$PATTERN"
echo "matching lines of 'let ': $(rg -c 'let ' | awk -F: '{s+=$2} END {print s}')"
peak "grep files_with_matches, 'let '" "$BIN/sneaky-grep" -l --max-results 1000000 'let '
peak "grep count, 'let '" "$BIN/sneaky-grep" -c --max-results 1000000 'let '
if "$BIN/sneaky-grep" --help | grep -q -- '--format'; then
  # Streamed: no bound on --max-results, so nothing is cut; the lines must be rg's.
  peak "grep --format text, 'let '" "$BIN/sneaky-grep" --format text --max-results 100000000 'let '
  rg -n 'let ' | sort > "$WORK/rg_text.txt"
  sort "$WORK/out" > "$WORK/ours_text.txt"
  if ! cmp -s "$WORK/ours_text.txt" "$WORK/rg_text.txt"; then
    echo "grep --format text: lines differ from rg -n:"; diff "$WORK/ours_text.txt" "$WORK/rg_text.txt" | head -20; exit 1
  fi
  echo "grep --format text 'let ': identical lines to rg -n ($(wc -l < "$WORK/ours_text.txt") lines)"
  peak "grep --format text -l, 'let '" "$BIN/sneaky-grep" --format text -l --max-results 100000000 'let '
  peak "grep --format text -c, 'let '" "$BIN/sneaky-grep" --format text -c --max-results 100000000 'let '
  compare "sneaky-grep --format text 'let ' (1.2 million lines) / rg -n" \
    "$BIN/sneaky-grep --format text --max-results 100000000 'let '" "rg -n 'let '"
else
  echo "RSS grep --format text: this build has no --format text"
fi
peak "rg -n 'let ' (reference)" rg -n 'let '

# --- list_dir recursive, paged to the end ----------------------------------------------------
if [ ! -x "$BIN/sneaky-ls" ]; then
  echo "LIST list_dir recursive: no $BIN/sneaky-ls"
  exit 0
fi
python3 - "$BIN/sneaky-ls" <<'EOF'
import json, subprocess, sys, time
ls = sys.argv[1]
offset, pages, entries, t0 = 0, 0, 0, time.monotonic()
while True:
    out = subprocess.run([ls, "--recursive", "--max-results", "50000", "--offset", str(offset)],
                         capture_output=True, check=True).stdout
    r = json.loads(out)["result"]
    pages += 1
    entries += len(r["entries"])
    if not r["truncated"]:
        break
    offset = r["next_offset"]
elapsed = time.monotonic() - t0
print(f"LIST list_dir recursive: {entries} entries in {pages} pages of 50,000, {elapsed:.2f} s in all")
EOF
echo "find . (reference count; list_dir lists .git/ but does not enter it): $(find . -mindepth 1 -not -path "./.git/*" | wc -l) entries"
