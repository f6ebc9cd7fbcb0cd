#!/usr/bin/env bash
# Long functions: every Rust function longer than a limit (default 80 lines, from its `fn` line
# to its closing brace), longest first, with whether it is test code (under tests/ or inside a
# #[cfg(test)] module) and whether a comment just above it gives a reason for its length (the
# house rule: no function over ~80 lines without a reason in a comment). Braces inside strings,
# character literals and comments are not counted.
#
# Usage: benches/long_functions.sh [--check] [REVISION] [LIMIT]
#   --check   exit 1 when a product function (src/, bin/) over the limit gives no reason (CI)
#   REVISION  a commit to count instead of the working tree (e.g. b81cd27), read with git archive
#   LIMIT     the line limit (default 80)
# Test code: under tests/, inside a #[cfg(test)] module, or a file such a module is declared
# to be (`#[cfg(test)] mod tests;` beside it).
# Paths counted: src/ and bin/ (the product) and tests/ (reported separately).
set -euo pipefail
cd "$(dirname "$0")/.."
CHECK=0
if [ "${1:-}" = --check ]; then
  CHECK=1
  shift
fi
REV=${1:-}
LIMIT=${2:-80}
root=.
if [ -n "$REV" ]; then
  root=$(mktemp -d /tmp/sneaky-longfns.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  git archive "$REV" src bin tests | tar -x -C "$root"
fi
python3 - "$root" "$LIMIT" "${REV:-working tree}" "$CHECK" <<'PY'
import os, re, sys

root, limit, label, check = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == '1'
TEST_FILES = set()  # files that are a #[cfg(test)] module declared elsewhere
FN = re.compile(r'\bfn\s+(\w+)')

def blank_literals(text):
    """The text with comments, strings and char literals replaced by spaces (newlines kept),
    so that braces and semicolons in them do not count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith('/*', j): depth += 1; j += 2
                elif text.startswith('*/', j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif re.match(r'b?r#*"', text[i:i + 300]):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif c == '"' or text.startswith('b"', i):
            j = i + (2 if c == 'b' else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{7f}', '{') or a lifetime ('a): only the former is blanked.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:])
            if m:
                out.append(' ' * m.end()); i += m.end()
            else:
                out.append(c); i += 1
        elif re.match(r'\w', c):
            m = re.match(r'\w+', text[i:])
            out.append(m.group(0)); i += m.end()
        else:
            out.append(c); i += 1
    return ''.join(out)

def functions(path):
    raw = open(path, encoding='utf-8', errors='replace').read()
    text = blank_literals(raw)
    raw_lines = raw.split('\n')
    line_of = lambda pos: text.count('\n', 0, pos)
    # Ranges of #[cfg(test)] modules.
    test_ranges = []
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{', text):
        start, depth, j = m.end() - 1, 0, m.end() - 1
        while j < len(text):
            if text[j] == '{': depth += 1
            elif text[j] == '}':
                depth -= 1
                if depth == 0: break
            j += 1
        test_ranges.append((start, j))
    for m in FN.finditer(text):
        # The body starts at the first `{` outside (), [] and <>; a `;` first means no body.
        j, nest = m.end(), 0
        while j < len(text):
            ch = text[j]
            if ch in '([': nest += 1
            elif ch in ')]': nest -= 1
            elif ch == ';' and nest == 0: j = -1; break
            elif ch == '{' and nest == 0: break
            j += 1
        if j < 0 or j >= len(text):
            continue
        depth, k = 0, j
        while k < len(text):
            if text[k] == '{': depth += 1
            elif text[k] == '}':
                depth -= 1
                if depth == 0: break
            k += 1
        first, last = line_of(m.start()), line_of(k)
        length = last - first + 1
        if length <= limit:
            continue
        is_test = path.split(os.sep)[1:2] == ['tests'] or '/tests/' in path or \
            os.path.normpath(path) in TEST_FILES or \
            any(a <= m.start() <= b for a, b in test_ranges)
        # A reason: a comment in the lines just above the fn (attributes and docs included)
        # that speaks of the length.
        reason, i = False, first - 1
        while i >= 0 and re.match(r'\s*(//|#\[|\*|/\*)', raw_lines[i]):
            if re.search(r'\b(long(er)?|length|lines)\b', raw_lines[i], re.I): reason = True
            i -= 1
        yield length, first + 1, m.group(1), is_test, reason

# Out-of-line test modules: `#[cfg(test)] mod NAME;` in DIR/mod.rs (or lib.rs) is DIR/NAME.rs,
# in DIR/FILE.rs it is DIR/FILE/NAME.rs.
for top in ('src', 'bin'):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if not f.endswith('.rs'):
                continue
            text = open(os.path.join(dirpath, f), encoding='utf-8', errors='replace').read()
            for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', text):
                base = dirpath if f in ('mod.rs', 'lib.rs', 'main.rs') else os.path.join(dirpath, f[:-3])
                TEST_FILES.add(os.path.normpath(os.path.join(base, m.group(1) + '.rs')))

rows = []
for top in ('src', 'bin', 'tests'):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if f.endswith('.rs'):
                p = os.path.join(dirpath, f)
                rel = os.path.relpath(p, root)
                for length, line, name, is_test, reason in functions(p):
                    rows.append((length, f'{rel}:{line}', name, is_test, reason))
rows.sort(key=lambda r: (-r[0], r[1]))
print(f'functions over {limit} lines in {label} (src/, bin/, tests/):')
for length, where, name, is_test, reason in rows:
    tags = ('test' if is_test else 'code') + (', reason given' if reason else '')
    print(f'{length:5} {where} {name} ({tags})')
code = [r for r in rows if not r[3]]
print(f'{len(code)} functions over {limit} lines outside tests '
      f'({sum(1 for r in code if not r[4])} without a reason in a comment); '
      f'{len(rows) - len(code)} in test code')
if check and any(not r[4] for r in code):
    sys.exit(1)
PY
