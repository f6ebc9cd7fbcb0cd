//! The code inside a Rust doc comment. A doc comment is Markdown, and some of it is code that
//! a rename must change too: its examples (fenced blocks, which `cargo test` compiles and
//! runs), its intra-doc links (`[Searcher]`, `[text](crate::Searcher)`, which rustdoc
//! resolves) and its code spans (`` `Searcher` ``). find_references counts a name there as a
//! use; the prose around it stays out, as every other comment does. So with a Python
//! docstring: its doctest lines (which `doctest` runs) and its inline literals and roles
//! (` ``Searcher`` `, `` :class:`Searcher` ``, which Sphinx resolves).
//!
//! The prose around that code, and every other comment, is mostly words; but a name written
//! as only code writes it is a reference there too (`prose_code_ranges`): in a code span, in
//! BoringSSL's `|name|`, a `snake_case` or `CamelCase` name (no English word is spelled so),
//! a call `name(…)`, a path `a::name`, an attribute `obj.name`. A rename must change those,
//! and a reader looking for who uses a name wants them; the plain English word stays out.

/// Where a run of doc comment lines stands: inside a fenced block or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fence {
    #[default]
    Prose,
    /// Inside a fenced block: whether its lines are Rust (an example), and how its fence was
    /// spelled (the closing fence repeats it).
    Block { rust: bool, marker: u8, len: usize },
}

/// The byte ranges of `doc` (a doc comment's text, one or more lines, without its `///`,
/// `//!` or `/*!` marker) that are code, in order. `fence` carries a fenced block from one
/// line comment to the next.
pub fn code_ranges(doc: &[u8], fence: &mut Fence) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < doc.len() {
        let end = memchr::memchr(b'\n', &doc[start..]).map_or(doc.len(), |n| start + n + 1);
        line(doc, start, end, fence, &mut out);
        start = end;
    }
    out
}

fn line(doc: &[u8], start: usize, end: usize, fence: &mut Fence, out: &mut Vec<(usize, usize)>) {
    let text = &doc[start..end];
    let indent = text
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t' || c == b'*')
        .count();
    let body = &text[indent..];
    let run = |c: u8| body.iter().take_while(|&&b| b == c).count();
    match *fence {
        Fence::Block { rust, marker, len } => {
            if run(marker) >= len && body[run(marker)..].iter().all(u8::is_ascii_whitespace) {
                *fence = Fence::Prose;
            } else if rust {
                out.push((start, end));
            }
        }
        Fence::Prose => {
            for marker in [b'`', b'~'] {
                let len = run(marker);
                if len >= 3 {
                    *fence = Fence::Block {
                        rust: rust_block(&body[len..]),
                        marker,
                        len,
                    };
                    return;
                }
            }
            spans(doc, start, end, true, out);
        }
    }
}

/// The byte ranges of a Python docstring (its text, quotes and all) that are code, in order:
/// a doctest's lines after their `>>>` or `...` prompt, and what backticks enclose.
pub fn docstring_code_ranges(doc: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut doctest = false;
    while start < doc.len() {
        let end = memchr::memchr(b'\n', &doc[start..]).map_or(doc.len(), |n| start + n + 1);
        let indent = doc[start..end]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        let body = &doc[start + indent..end];
        doctest = body.starts_with(b">>>") || (doctest && body.starts_with(b"..."));
        if doctest {
            out.push((start + indent + 3, end));
        } else {
            spans(doc, start, end, false, &mut out);
        }
        start = end;
    }
    out
}

/// The byte ranges of `text` (a comment's or a docstring's prose) that name something as
/// code, in order: what backticks or BoringSSL's bars (`|name|`) enclose on one line, and
/// each word spelled as only code is: with an underscore between its letters (`parse_escape`,
/// `OPENSSL_cpuid`), a capital after a small letter or digit (`HirKind`, `Utf8Sequence`,
/// `parseEscape`), called (`name(`, but not a plural's `(s)`), a macro's `name!(`, in a path
/// (`a::name`, `name::b`, `p->name`) or an attribute of a name (`self.name`; not `e.g.`, and
/// not a short lowercase word after a dot, a file's extension). A web address is prose.
pub fn prose_code_ranges(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |n| start + n + 1);
        prose_line(text, start, end, &mut out);
        start = end;
    }
    out
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn prose_line(text: &[u8], start: usize, end: usize, out: &mut Vec<(usize, usize)>) {
    let mut i = start;
    while i < end {
        let c = text[i];
        if c == b'`' {
            match code_span(text, i, end) {
                Ok((span, next)) => {
                    out.push(span);
                    i = next;
                }
                Err(next) => i = next,
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // One whitespace-delimited chunk at a time: an address is prose as a whole.
        let chunk_end = (i..end)
            .find(|&j| text[j].is_ascii_whitespace() || text[j] == b'`')
            .unwrap_or(end);
        let chunk = &text[i..chunk_end];
        let address =
            chunk.windows(3).any(|w| w == b"://") || chunk.windows(4).any(|w| w == b"www.");
        if !address {
            words(text, i, chunk_end, out);
        }
        i = chunk_end;
    }
}

/// The code-shaped words of one chunk of prose (`prose_code_ranges`).
fn words(text: &[u8], start: usize, end: usize, out: &mut Vec<(usize, usize)>) {
    let mut i = start;
    while i < end {
        if !is_word(text[i]) {
            i += 1;
            continue;
        }
        let a = i;
        while i < end && is_word(text[i]) {
            i += 1;
        }
        let word = &text[a..i];
        let before = &text[start..a];
        let after = &text[i..end];
        if code_word(word, before, after) {
            out.push((a, i));
        }
    }
}

fn code_word(word: &[u8], before: &[u8], after: &[u8]) -> bool {
    if !word.iter().any(u8::is_ascii_alphabetic) {
        return false;
    }
    let underscored = word.windows(2).any(|w| {
        (w[0] == b'_' && w[1].is_ascii_alphanumeric())
            || (w[1] == b'_' && w[0].is_ascii_alphanumeric())
    });
    let humped = word
        .windows(2)
        .any(|w| (w[0].is_ascii_lowercase() || w[0].is_ascii_digit()) && w[1].is_ascii_uppercase());
    if underscored || humped {
        return true;
    }
    let barred = before.ends_with(b"|") && after.starts_with(b"|");
    let called = after.starts_with(b"(") && !after.starts_with(b"(s)") || after.starts_with(b"!(");
    let pathed = after.starts_with(b"::") || before.ends_with(b"::") || before.ends_with(b"->");
    barred || called || pathed || attribute(word, before)
}

/// Whether `word` follows a dot that follows a name of two letters or more (`self.name`, not
/// the `g` of `e.g.`), and is not a short lowercase word (`main.rs`, `io.h`).
fn attribute(word: &[u8], before: &[u8]) -> bool {
    let Some(head) = before.strip_suffix(b".") else {
        return false;
    };
    let owner = head.iter().rev().take_while(|&&c| is_word(c)).count();
    let extension = word.len() <= 3 && word.iter().all(|c| c.is_ascii_lowercase());
    owner >= 2 && !extension
}

/// Whether a fenced block's info string makes it a Rust example: rustdoc takes a block with
/// no info, or only its own attributes, as Rust.
fn rust_block(info: &[u8]) -> bool {
    let info = String::from_utf8_lossy(info);
    info.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(
                w,
                "rust"
                    | "ignore"
                    | "should_panic"
                    | "no_run"
                    | "compile_fail"
                    | "test_harness"
                    | "standalone_crate"
            ) || w.starts_with("edition")
                || w.starts_with("ignore-")
                || w.starts_with('E')
        })
}

/// The code of one prose line: its code spans (between backticks) and, with `links`
/// (Markdown), its links' text and targets when they are paths (`[Searcher]`,
/// `[search](Searcher::search)`).
fn spans(doc: &[u8], start: usize, end: usize, links: bool, out: &mut Vec<(usize, usize)>) {
    let mut i = start;
    while i < end {
        match doc[i] {
            b'`' => match code_span(doc, i, end) {
                Ok((span, next)) => {
                    out.push(span);
                    i = next;
                }
                Err(next) => i = next,
            },
            // A link's text, or its target right after it.
            b'[' | b'('
                if links && (doc[i] == b'[' || doc.get(i.wrapping_sub(1)) == Some(&b']')) =>
            {
                let closer = if doc[i] == b'[' { b']' } else { b')' };
                let open = i + 1;
                let close = doc[open..end]
                    .iter()
                    .position(|&c| c == closer || c == b'[' || c == b'(' || c == b'`')
                    .map(|n| open + n)
                    .filter(|&c| doc[c] == closer);
                match close {
                    Some(close) if is_path(&doc[open..close]) => {
                        out.push((open, close));
                        i = close + 1;
                    }
                    _ => i = open,
                }
            }
            _ => i += 1,
        }
    }
}

/// The code span whose backticks begin at `i` (before `end`): its inside and where the text
/// goes on after it; else (a run of backticks never closed) where the text goes on after the
/// run.
fn code_span(doc: &[u8], i: usize, end: usize) -> Result<((usize, usize), usize), usize> {
    let ticks = doc[i..end].iter().take_while(|&&c| c == b'`').count();
    let open = i + ticks;
    let close = (open..end).find(|&j| {
        doc[j..end].iter().take_while(|&&c| c == b'`').count() == ticks
            && doc.get(j.wrapping_sub(1)) != Some(&b'`')
    });
    match close {
        Some(close) => Ok(((open, close), close + ticks)),
        None => Err(open),
    }
}

/// Whether a link's text or target is a Rust path (`Searcher`, `crate::a::B`, `f()`, `B!`),
/// not words or an address.
fn is_path(text: &[u8]) -> bool {
    let text = text.strip_suffix(b"()").unwrap_or(text);
    let text = text.strip_suffix(b"!").unwrap_or(text);
    let text = text.split(|&c| c == b'@').next_back().unwrap_or(text);
    !text.is_empty()
        && text
            .split(|&c| c == b':')
            .all(|part| part.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_'))
        && !text.starts_with(b":")
        && !text.ends_with(b":")
        && !text.windows(3).any(|w| w == b":::")
        && text.iter().any(|&c| c.is_ascii_alphabetic() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(lines: &[&str]) -> Vec<String> {
        let mut fence = Fence::default();
        let mut out = Vec::new();
        for l in lines {
            let text = format!("{l}\n");
            for (a, b) in code_ranges(text.as_bytes(), &mut fence) {
                out.push(text[a..b].trim_end().to_string());
            }
        }
        out
    }

    #[test]
    fn examples_spans_and_links_are_code() {
        assert_eq!(
            code(&[
                " Walks with a [`WalkBuilder`] or [the builder](crate::WalkBuilder), see `walk`.",
                " A [Searcher] (not [a sentence here]) or [`Sink::matched`].",
                " ```",
                " let w = WalkBuilder::new();",
                " ```",
                " ```text",
                " WalkBuilder in a text block",
                " ```",
                " ```no_run,edition2021",
                " walk(w);",
                " ```",
            ]),
            [
                "WalkBuilder",
                "crate::WalkBuilder",
                "walk",
                "Searcher",
                "Sink::matched",
                " let w = WalkBuilder::new();",
                " walk(w);",
            ]
        );
    }

    #[test]
    fn doctests_literals_and_roles_of_a_docstring_are_code() {
        let doc = "\"\"\"Make a Parser [Parser].\n\n    Use ``Parser`` or :class:`Parser`:\n\n    >>> p = Parser(\n    ...     1)\n    Parser ok\n    ... not code\n    \"\"\"";
        let code: Vec<&str> = docstring_code_ranges(doc.as_bytes())
            .into_iter()
            .map(|(a, b)| doc[a..b].trim_end())
            .collect();
        assert_eq!(code, ["Parser", "Parser", " p = Parser(", "     1)"]);
    }

    #[test]
    fn names_written_as_code_are_code_in_prose() {
        let text =
            "// parse_escape and HirKind, Utf8Sequence or OPENSSL_cpuid; `span` and |out|,\n\
                    // call(a) or Hir::literal or self.next; render as a word, literal(s),\n\
                    // e.g. i.e. main.rs, https://www.unicode.org/a_b.html, __, 12_000\n";
        let got: Vec<&str> = prose_code_ranges(text.as_bytes())
            .into_iter()
            .map(|(a, b)| &text[a..b])
            .collect();
        assert_eq!(
            got,
            [
                "parse_escape",
                "HirKind",
                "Utf8Sequence",
                "OPENSSL_cpuid",
                "span",
                "out",
                "call",
                "Hir",
                "literal",
                "next",
            ]
        );
    }

    #[test]
    fn a_lone_backtick_or_bracket_is_prose() {
        assert!(code(&[" a ` b [c d", " x (y z) [e f] (Walk) [1]"]).is_empty());
        assert_eq!(code(&[" ``a `b` c`` and `d`"]), ["a `b` c", "d"]);
    }
}
