#!/usr/bin/env bash
# Benchmark patch_apply against GNU patch: one 5,000-hunk patch (`diff -u` of a 100,000-line
# file with every 20th line changed) applied in place to a fresh copy, by `sneaky-patch FILE`
# (patch on stdin) and by `patch -s FILE`, side by side with hyperfine. Both results are
# checked against the expected file first. Prints the ratio ours / GNU (target ≤ 1.5×).
#
# Usage: benches/patch_bench.sh        Needs hyperfine and GNU patch (apt-get install hyperfine patch).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in hyperfine patch diff; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install hyperfine patch diffutils)"; exit 1; }
done
cargo build --release --bin sneaky-patch -q
BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws"
cd "$WORK"
printf 'max_file_size_bytes = 268435456\n' > config.toml

awk 'BEGIN { for (i = 1; i <= 100000; i++) printf "line %d: the quick brown fox jumps over the lazy dog %d\n", i, i * 7 }' > old.txt
awk '{ if (NR % 20 == 10) print $0 " (changed)"; else print }' old.txt > new.txt
diff -u old.txt new.txt > big.patch || true
hunks=$(grep -c '^@@' big.patch)
echo "file: $(wc -l < old.txt) lines, $(wc -c < old.txt) bytes; patch: $hunks hunks, $(wc -c < big.patch) bytes; $(nproc) cores"

# Correctness first.
cp old.txt ws/f.txt
"$BIN/sneaky-patch" --root ws --config config.toml f.txt < big.patch > out.json
python3 -c 'import json,sys; r=json.load(open("out.json")); assert r["ok"], r; print("sneaky-patch: hunks_applied", r["result"]["hunks_applied"])'
cmp ws/f.txt new.txt
cp old.txt gnu.txt
patch -s gnu.txt < big.patch
cmp gnu.txt new.txt
echo "both results equal the expected file"

# hyperfine 1.15 has no --input: both commands read the patch through a shell redirect (the
# shell's own start-up is measured and subtracted by hyperfine).
hyperfine --warmup 3 --min-runs 20 --export-json times.json \
  --prepare "cp $WORK/old.txt $WORK/ws/f.txt" \
  -n sneaky-patch "$BIN/sneaky-patch --root $WORK/ws --config $WORK/config.toml f.txt < $WORK/big.patch > /dev/null" \
  --prepare "cp $WORK/old.txt $WORK/gnu.txt" \
  -n 'GNU patch' "patch -s $WORK/gnu.txt < $WORK/big.patch" 2>&1 | grep -v '^ *$' || true
python3 - <<'EOF'
import json
r = json.load(open("times.json"))["results"]
ours, ref = r[0]["mean"], r[1]["mean"]
print(f"RATIO patch_apply 5000 hunks / 100000 lines: ours {ours*1000:.1f} ms, GNU patch {ref*1000:.1f} ms, ratio {ours/ref:.2f}x (target <= 1.5x)")
EOF
