#!/usr/bin/env bash
# Time to read the text of a 100-page PDF: `sneaky-read --format text` against `pdftotext`
# (poppler), each run as a whole process, the median of RUNS runs, after checking that both give
# the same words on every page. Two documents of the same text: one from groff -Tpdf, one
# through ghostscript's ps2pdf (compressed fonts and streams, Tc word spacing).
#
# Usage: benches/pdf_text.sh [RUNS]   (default 20)
# Needs groff, ghostscript and poppler-utils (apt-get install groff ghostscript poppler-utils);
# builds the release sneaky-read only.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
for tool in groff ps2pdf pdftotext python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install groff ghostscript poppler-utils)"; exit 1; }
done
cargo build --release --bin sneaky-read -q
BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/sneaky-read
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

{
  for page in $(seq 1 100); do
    [ "$page" -gt 1 ] && echo .bp
    echo .NH
    echo "Chapter $page"
    for para in $(seq 1 6); do
      echo .PP
      echo "Paragraph $para of page $page. The quick brown fox jumps over the lazy dog; naïve café"
      echo "owners in Straße $para serve “quoted” crème brûlée at €$page — all of it well kerned,"
      echo "justified and hyphenated by groff, as a report's body text would be."
    done
  done
} >"$WORK/doc.ms"
groff -k -ms -Tpdf "$WORK/doc.ms" >"$WORK/groff.pdf"
groff -k -ms -Tps "$WORK/doc.ms" | ps2pdf - "$WORK/gs.pdf"

median_ms() { # median_ms CMD...: median wall time of RUNS runs, in ms
  local times=()
  for _ in $(seq 1 "$RUNS"); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'
}

echo "$(nproc) cores; $RUNS runs each; sneaky-read $(stat -c %s "$BIN") bytes"
for doc in groff gs; do
  pdf=$WORK/$doc.pdf
  "$BIN" --root "$WORK" --format text "$pdf" >"$WORK/$doc.ours"
  pdftotext -enc UTF-8 "$pdf" "$WORK/$doc.ref"
  python3 - "$WORK/$doc.ours" "$WORK/$doc.ref" <<'PY'
import sys
ours, ref = (open(p, encoding="utf-8").read().split("\f") for p in sys.argv[1:])
assert len(ours) == len(ref), f"{len(ours) - 1} pages against {len(ref) - 1}"
bad = [i + 1 for i, (a, b) in enumerate(zip(ours, ref)) if a.split() != b.split()]
assert not bad, f"pages whose words differ from pdftotext's: {bad}"
PY
  ours=$(median_ms "$BIN" --root "$WORK" --format text "$pdf")
  ref=$(median_ms pdftotext -enc UTF-8 "$pdf" -)
  echo "RATIO $doc.pdf ($(stat -c %s "$pdf") bytes, 100 pages, same words): sneaky-read ${ours} ms, pdftotext ${ref} ms, ratio $(awk -v a="$ours" -v b="$ref" 'BEGIN { printf "%.2f", a / b }')x"
done
