#!/usr/bin/env bash
# Time to read the text of a 100-page PDF: `sneaky-read --format text` against `pdftotext`
# (poppler), each run as a whole process, the medians of RUNS runs of the wall time and of the
# CPU time (user + system, which depends far less on what else the machine runs), after checking
# that both give the same words on every page. Two documents of the same text: one from groff -Tpdf, one
# through ghostscript's ps2pdf (compressed fonts and streams, Tc word spacing).
#
# Usage: benches/pdf_text.sh [RUNS]   (default 20)
# Needs groff, ghostscript and poppler-utils (apt-get install groff ghostscript poppler-utils);
# builds the release sneaky-read and sneaky-outline (which reads the PDF for it: src/media) only,
# unless SNEAKY_READ names a sneaky-read to time (with its sneaky-outline beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
for tool in groff ps2pdf pdftotext python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install groff ghostscript poppler-utils)"; exit 1; }
done
if [ -n "${SNEAKY_READ:-}" ]; then
  BIN=$SNEAKY_READ
  [ -x "$(dirname "$BIN")/sneaky-outline" ] || { echo "no sneaky-outline beside $BIN"; exit 1; }
else
  cargo build --release --bin sneaky-read --bin sneaky-outline -q
  BIN=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/sneaky-read
fi
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

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { printf "%.0f", a[int((NR + 1) / 2)] }'; }

timed() { # timed CMD...: "WALL_MS CPU_MS", the medians of RUNS runs
  local wall=() cpu=()
  for _ in $(seq 1 "$RUNS"); do
    /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$@" >/dev/null
    wall+=("$(awk '{ printf "%.0f", $1 * 1000 }' "$WORK/time")")
    cpu+=("$(awk '{ printf "%.0f", ($2 + $3) * 1000 }' "$WORK/time")")
  done
  echo "$(median "${wall[@]}") $(median "${cpu[@]}")"
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
  read -r ours_wall ours_cpu < <(timed "$BIN" --root "$WORK" --format text "$pdf")
  read -r ref_wall ref_cpu < <(timed pdftotext -enc UTF-8 "$pdf" -)
  echo "RATIO $doc.pdf ($(stat -c %s "$pdf") bytes, 100 pages, same words): wall sneaky-read ${ours_wall} ms, pdftotext ${ref_wall} ms; CPU sneaky-read ${ours_cpu} ms, pdftotext ${ref_cpu} ms (/usr/bin/time counts 10 ms steps)"
done
