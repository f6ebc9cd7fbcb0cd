#!/usr/bin/env python3
"""Whether outline's skimmed parse (the blocks that hold no definition and the comments left
out, src/code/skim.rs) finds exactly the definitions a whole parse finds, on real trees.

Every file of a supported language under the given trees is handed twice to the parse helper
(`sneaky-outline --parse`, src/code/elsewhere.rs): once for everything (a whole parse) and
once for the definitions alone (the skimmed parse), and each file's definitions (name, kind,
line, column, start and end line, signature, parent, owner) are compared. Prints, per
language, the files compared and the files that differ, with the first differences: those
whose whole parse is clean (the goal is none; exits 1 when any does) apart from those whose
whole parse has syntax errors, where tree-sitter recovers from the error one way with the
bodies and another without them (a file that is not the language its name says, a test's
broken input). A C# file's whole parse is of the text the skim reads: an `#if`'s first
branch without the directives (`first_branch`).

Usage: benches/skim_same.py SNEAKY_OUTLINE TREE...
"""

import os
import re
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# Lang::ALL's order (src/code/lang.rs): the id is the index.
LANGS = ["Rust", "Python", "JavaScript", "TypeScript", "TSX", "Go", "Java", "C", "C++", "C#",
         "Ruby", "PHP", "Bash"]
EXTENSIONS = {
    "rs": 0, "py": 1, "pyi": 1, "pyw": 1, "js": 2, "mjs": 2, "cjs": 2, "jsx": 2, "ts": 3,
    "mts": 3, "cts": 3, "tsx": 4, "go": 5, "java": 6, "c": 7, "h": 7, "cc": 8, "cpp": 8,
    "cxx": 8, "c++": 8, "hh": 8, "hpp": 8, "hxx": 8, "h++": 8, "ipp": 8, "tpp": 8, "inl": 8,
    "cs": 9, "rb": 10, "rake": 10, "gemspec": 10, "php": 11, "phtml": 11, "sh": 12, "bash": 12,
}
# The languages the skim leaves blocks out of (src/code/skim.rs, Rules::of).
SKIMMED = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11}
MAX_SOURCE_BYTES = 4 << 20
BATCH_BYTES = 8 << 20
KINDS = ["function", "method", "class", "struct", "enum", "interface", "trait", "module",
         "type", "constant", "variable", "field", "macro", "impl", "union", "variant"]


def files_of(trees):
    for tree in trees:
        for root, dirs, names in os.walk(tree):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
                lang = EXTENSIONS.get(ext)
                if lang not in SKIMMED:
                    continue
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                if os.path.getsize(path) > MAX_SOURCE_BYTES:
                    continue
                yield path, lang


def request(jobs):
    # The helper's wire (src/code/elsewhere.rs): `SNKP5`, the length of the rest, then per
    # file its language, what is wanted, an empty focus and its bytes.
    out = []
    for lang, want, data in jobs:
        out.append(bytes([lang, want]))
        out.append(struct.pack("<Q", 0))
        out.append(struct.pack("<Q", len(data)))
        out.append(data)
    rest = b"".join(out)
    return b"SNKP5" + struct.pack("<Q", len(rest)) + rest


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def u32(self):
        n, shift = 0, 0
        while True:
            b = self.data[self.at]
            self.at += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n
            shift += 7

    def str(self):
        n = self.u32()
        s = self.data[self.at:self.at + n].decode()
        self.at += n
        return s


def defs_of(encoded):
    """The definitions of an encoded FileTags (src/code/tags.rs, `encode`), and how many
    syntax errors it names."""
    assert encoded.startswith(b"SNTG2"), encoded[:5]
    r = Reader(encoded)
    r.at = 5
    r.u32()  # language
    r.u32()  # part
    defs = []
    for _ in range(r.u32()):
        name = r.str()
        kind = KINDS[r.u32()]
        line, column, _name_byte, start_line, end_line = (r.u32() for _ in range(5))
        signature = r.str()
        parent = r.u32()
        owner = r.str()
        defs.append((name, kind, line, column, start_line, end_line, signature,
                     parent - 1 if parent else None, owner or None))
    for _ in range(r.u32()):  # not code: (start, end) deltas
        r.u32()
        r.u32()
    for _ in range(r.u32()):  # identifiers
        r.str()
        r.u32()
    return defs, r.u32()


class Parsed:
    """One file's answer: its definitions and syntax errors, or why it was not parsed."""

    def __init__(self, status, body):
        if status == 0:
            self.defs, self.errors = defs_of(body)
            self.failed = None
        else:
            self.defs, self.errors, self.failed = None, 0, body.decode()

    def __eq__(self, other):
        return (self.defs, self.failed) == (other.defs, other.failed)


def answers(data, count):
    assert data.startswith(b"SNKR1"), data[:40]
    at, out = 5, []
    while at < len(data):
        status = data[at]
        (n,) = struct.unpack_from("<Q", data, at + 1)
        out.append(Parsed(status, data[at + 9:at + 9 + n]))
        at += 9 + n
    assert len(out) == count, (len(out), count)
    return out


CSHARP = 9
CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(if|elif|else|endif)\b")


def first_branch(data):
    """C#'s text as the skim reads it (src/code/skim.rs, `Lexer::directive`): an `#if`'s
    first branch without its directives, the branches after it left out; the bytes that go
    are blanked (newlines kept), so that every place stays where it was. None when the file
    has no `#else` or `#elif` and no `#if`."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    lines = data[len(bom):].split(b"\n")
    out, taking, found = [], [], False
    blank = lambda line: b" " * len(line)
    for line in lines:
        m = CONDITIONAL.match(line)
        word = m.group(1) if m else None
        dropped = not all(taking)
        if word == b"if":
            taking.append(True)
        elif word in (b"elif", b"else") and taking:
            taking[-1] = False
        elif word == b"endif" and taking:
            taking.pop()
        if word:
            found = True
            hash_at = line.index(b"#")
            out.append(line[:hash_at] + blank(line[hash_at:]) if not dropped else blank(line))
        else:
            out.append(blank(line) if dropped else line)
    return bom + b"\n".join(out) if found else None


def parse(binary, batch):
    jobs = []
    for _, lang, data in batch:
        # everything: a whole parse (of C#'s first branches, which the skim reads)
        reference = first_branch(data) if lang == CSHARP else None
        jobs.append((lang, 0, reference or data))
        jobs.append((lang, 1, data))  # the definitions: the skimmed parse
    run = subprocess.run([binary, "--parse"], input=request(jobs), capture_output=True,
                         check=True)
    got = answers(run.stdout, len(jobs))
    return [(path, lang, got[2 * i], got[2 * i + 1]) for i, (path, lang, _) in enumerate(batch)]


def batches(files):
    batch, size = [], 0
    for path, lang in files:
        with open(path, "rb") as f:
            data = f.read()
        batch.append((path, lang, data))
        size += len(data)
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def first_difference(whole, skimmed):
    if whole.failed or skimmed.failed:
        return f"whole: {whole.failed or 'parsed'}, skimmed: {skimmed.failed or 'parsed'}"
    for i, (a, b) in enumerate(zip(whole.defs, skimmed.defs)):
        if a != b:
            return f"definition {i}: whole {a}, skimmed {b}"
    return f"{len(whole.defs)} definitions whole, {len(skimmed.defs)} skimmed"


def main():
    binary, trees = sys.argv[1], sys.argv[2:]
    compared = [0] * len(LANGS)
    differ = [0] * len(LANGS)
    # Files whose whole parse has syntax errors (or was given up), where the two parses
    # recover from the error each its own way.
    broken = [0] * len(LANGS)
    defs = [0] * len(LANGS)
    shown = {}
    # Two helpers at a time (each parses on every core).
    with ThreadPoolExecutor(max_workers=2) as pool:
        for results in pool.map(lambda b: parse(binary, b), batches(files_of(trees))):
            for path, lang, whole, skimmed in results:
                compared[lang] += 1
                defs[lang] += len(whole.defs or [])
                if whole == skimmed:
                    continue
                if whole.errors or whole.failed:
                    broken[lang] += 1
                    kind = "with errors"
                else:
                    differ[lang] += 1
                    kind = "CLEAN"
                seen = shown.setdefault(lang, [])
                if len(seen) < 8 or kind == "CLEAN":
                    seen.append(f"  {kind} {path}: {first_difference(whole, skimmed)}")
    for lang, name in enumerate(LANGS):
        if compared[lang]:
            print(f"SKIM {name}: {compared[lang]} files, {defs[lang]} definitions; differ: "
                  f"{differ[lang]} files that parse cleanly, {broken[lang]} with syntax "
                  f"errors (or not parsed) in the whole parse")
            print("\n".join(shown.get(lang, [])))
    total = sum(differ)
    print(f"SKIM all: {sum(compared)} files; differ: {total} that parse cleanly, "
          f"{sum(broken)} with syntax errors")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
