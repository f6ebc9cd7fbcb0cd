#!/usr/bin/env bash
# Regenerates the PDFs of tests/pdf/ (read by tests/suite/pdf.rs) from real producers, and
# pdftotext's text of each page as the reference the tests compare words with:
#   groff.pdf      groff -Tpdf (gropdf): three pages, accented Latin, Greek (Symbol font),
#                  euro sign, dashes, curly quotes; kerning by `Td` inside words
#   gs.pdf         the same document through groff -Tps and ghostscript's ps2pdf: subset
#                  Type 1 fonts with their own encodings, word spaces made by `Tc`
#   objstm.pdf     gs.pdf with object streams and a cross-reference stream (qpdf)
#   owner.pdf      gs.pdf encrypted (AES-128) with an owner password only: it opens without one
#   locked.pdf     gs.pdf encrypted (AES-256) with a user password: it needs one
#   long.pdf       twelve pages of numbered paragraphs (groff -Tpdf)
#   scan.pdf       one page that is only a picture (ps2pdf of an `image`), no text layer
#   <name>.pages   pdftotext's text of each page, pages ended by a form feed
#
# Needs groff, ghostscript, qpdf and poppler-utils (apt-get install groff ghostscript qpdf
# poppler-utils). The committed PDFs are what the tests read; the tests need none of these.
set -euo pipefail
cd "$(dirname "$0")"
export SOURCE_DATE_EPOCH=1700000000 # stable dates in the files
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/doc.ms" <<'MS'
.TL
A Test Document
.AU
Sneaky Tester
.NH
First section
.PP
Plain ASCII text on the first page. Café, naïve, Straße, Ελληνικα, €uro — dashes and “quotes”.
.bp
.NH
Second section
.PP
The second page says hello.
.bp
.NH
Third section
.PP
The third page ends here.
MS
groff -k -ms -Tpdf "$TMP/doc.ms" >groff.pdf
groff -k -ms -Tps "$TMP/doc.ms" >"$TMP/doc.ps"
ps2pdf "$TMP/doc.ps" gs.pdf
qpdf --object-streams=generate --compress-streams=y gs.pdf objstm.pdf
qpdf --encrypt '' owner-secret 128 --use-aes=y -- gs.pdf owner.pdf
qpdf --encrypt user-secret owner-secret 256 -- gs.pdf locked.pdf

{
  for page in $(seq 1 12); do
    [ "$page" -gt 1 ] && echo .bp
    echo .NH
    echo "Chapter $page"
    for para in 1 2 3; do
      echo .PP
      echo "Paragraph $para of page $page: the quick brown fox jumps over the lazy dog."
    done
  done
} >"$TMP/long.ms"
groff -ms -Tpdf "$TMP/long.ms" >long.pdf

# A 64 x 64 grey gradient drawn as an image, the way a scanner's PDF holds a page.
cat >"$TMP/scan.ps" <<'PS'
%!PS
/data 4096 string def
0 1 4095 { data exch dup 64 mod 4 mul put } for
72 500 translate 200 200 scale
64 64 8 [64 0 0 -64 0 64] { data } image
showpage
PS
ps2pdf "$TMP/scan.ps" scan.pdf

for f in groff gs objstm owner long scan; do
  pdftotext -enc UTF-8 "$f.pdf" "$f.pages"
done
ls -l ./*.pdf ./*.pages
