#!/usr/bin/env bash
# Scale benchmark (issue 17): a monorepo-size tree of our own, and ours side by side with the
# reference tools in one run. Prints (ours / reference; lower is better):
#   - sneaky-find vs `fdfind --glob` on 200,000 files (target ≤ 1.0×), identical sets first;
#   - sneaky-grep vs `rg -n` (target ≤ 1.0×), identical path:line sets first;
#   - peak RSS of a 100,000-match grep in JSON (target ≤ 3× its output), and of
#     files_with_matches / count / `--format text` over more than a million matching lines
#     (target ≤ 64 MiB each);
#   - list_dir recursive over the whole tree, paged to the end with offset.
#
# Usage: benches/scale.sh [WORKDIR]   (default: a fresh mktemp -d, removed at the end)
# Needs hyperfine, ripgrep and fd-find (apt-get install hyperfine ripgrep fd-find), python3.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in hyperfine rg fdfind python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install hyperfine ripgrep fd-find)"; exit 1; }
done
cargo build --release --bins -q
BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
if [ $# -ge 1 ]; then WORK=$1; mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
TREE=$WORK/tree

# --- the tree: 2,000 folders × 100 small source files (90 .rs, 10 .txt) ----------------------
# Every file has 6 lines with "let " (1.2 million in all); every other file has one "needle"
# (100,000). A .git marks a repository whose .gitignore hides one folder, as in real projects.
if [ ! -f "$TREE/.complete" ]; then
  rm -rf "$TREE"
  python3 - "$TREE" <<'EOF'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, ".git"))
with open(os.path.join(root, ".gitignore"), "w") as f:
    f.write("generated/\n*.log\n")
os.makedirs(os.path.join(root, "generated"))
for i in range(50):
    with open(os.path.join(root, "generated", f"g{i}.rs"), "w") as f:
        f.write("let needle = 1;\n")
for d in range(2000):
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
fi
cd "$TREE"
echo "tree: $TREE ($(find . -type f -not -path './.git/*' | wc -l) files, $(du -sm . | cut -f1) MB), $(nproc) cores"

ratio() { # ratio NAME JSON: mean of command 1 / mean of command 2
  python3 - "$1" "$2" <<'EOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))["results"]
ours, ref = r[0]["mean"], r[1]["mean"]
print(f"RATIO {name}: ours {ours*1000:.1f} ms ± {r[0]['stddev']*1000:.1f}, reference {ref*1000:.1f} ms ± {r[1]['stddev']*1000:.1f}, ratio {ours/ref:.2f}x")
EOF
}

# peak NAME CMD...: run once, print peak RSS and output size (and their ratio).
peak() {
  local name=$1; shift
  /usr/bin/time -f '%M' -o "$WORK/rss" "$@" > "$WORK/out" 2>/dev/null || true
  python3 - "$name" "$(cat "$WORK/rss")" "$(stat -c %s "$WORK/out")" <<'EOF'
import sys
name, rss_kb, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print(f"RSS {name}: peak {rss_kb/1024:.1f} MiB for {out/1048576:.1f} MiB of output ({rss_kb*1024/max(out,1):.2f}x)")
EOF
}

# --- find vs fd -----------------------------------------------------------------------------
for pattern in '*.txt' '*.rs'; do
  "$BIN/sneaky-find" --max-results 1000000 "$pattern" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; assert not r["truncated"]; [print(f.rstrip("/")) for f in r["files"]]' \
    | sort > "$WORK/ours_find.txt"
  fdfind --glob "$pattern" | sed -E 's#^\./##; s#/$##' | sort > "$WORK/fd.txt"
  if ! cmp -s "$WORK/ours_find.txt" "$WORK/fd.txt"; then
    echo "find $pattern: sets differ from fd:"; diff "$WORK/ours_find.txt" "$WORK/fd.txt" | head -20; exit 1
  fi
  echo "find $pattern: identical sets ($(wc -l < "$WORK/fd.txt") paths)"
  hyperfine -N -w 1 -r 8 --export-json "$WORK/find.json" \
    -n sneaky-find "$BIN/sneaky-find --max-results 1000000 '$pattern'" \
    -n "fdfind --glob" "fdfind --glob '$pattern'" >/dev/null
  ratio "sneaky-find '$pattern' / fdfind --glob" "$WORK/find.json"
done

# --- grep vs rg -----------------------------------------------------------------------------
PATTERN='needle'
"$BIN/sneaky-grep" --max-results 1000000 "$PATTERN" \
  | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; assert not r["truncated"]; [print(m["path"] + ":" + str(m["line"])) for m in r["matches"]]' \
  | sort > "$WORK/ours.txt"
rg -n --no-heading "$PATTERN" | cut -d: -f1,2 | sort > "$WORK/rg.txt"
if ! cmp -s "$WORK/ours.txt" "$WORK/rg.txt"; then
  echo "grep: path:line sets differ from rg:"; diff "$WORK/ours.txt" "$WORK/rg.txt" | head -20; exit 1
fi
echo "grep $PATTERN: identical path:line sets ($(wc -l < "$WORK/ours.txt") matches)"
hyperfine -N -w 1 -r 8 --export-json "$WORK/grep.json" \
  -n sneaky-grep "$BIN/sneaky-grep --max-results 1000000 '$PATTERN'" \
  -n "rg -n" "rg -n '$PATTERN'" >/dev/null
ratio "sneaky-grep '$PATTERN' (100,000 matches) / rg -n" "$WORK/grep.json"
hyperfine -N -w 1 -r 8 --export-json "$WORK/grep_l.json" \
  -n "sneaky-grep -l" "$BIN/sneaky-grep -l --max-results 1000000 'let '" \
  -n "rg -l" "rg -l 'let '" >/dev/null
ratio "sneaky-grep -l 'let ' / rg -l" "$WORK/grep_l.json"

# --- memory ---------------------------------------------------------------------------------
peak "grep JSON, 100,000 matches" "$BIN/sneaky-grep" --max-results 1000000 "$PATTERN"
echo "matching lines of 'let ': $(rg -c 'let ' | awk -F: '{s+=$2} END {print s}')"
peak "grep files_with_matches, 'let '" "$BIN/sneaky-grep" -l --max-results 1000000 'let '
peak "grep count, 'let '" "$BIN/sneaky-grep" -c --max-results 1000000 'let '
if "$BIN/sneaky-grep" --format text needle generated >/dev/null 2>&1; then
  peak "grep --format text, 'let '" "$BIN/sneaky-grep" --format text 'let '
  echo "text lines: $(wc -l < "$WORK/out") (rg: $(rg -n 'let ' | wc -l))"
else
  echo "RSS grep --format text: this build has no --format text"
fi
peak "rg -n 'let ' (reference)" rg -n 'let '

# --- list_dir recursive, paged to the end ----------------------------------------------------
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
