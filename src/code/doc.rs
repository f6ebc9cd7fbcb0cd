//! The code inside a Rust doc comment. A doc comment is Markdown, and some of it is code that
//! a rename must change too: its examples (fenced blocks, which `cargo test` compiles and
//! runs), its intra-doc links (`[Searcher]`, `[text](crate::Searcher)`, which rustdoc
//! resolves) and its code spans (`` `Searcher` ``). find_references counts a name there as a
//! use; the prose around it stays out, as every other comment does.

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
            spans(doc, start, end, out);
        }
    }
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

/// The code of one prose line: its code spans (between backticks) and its links' text and
/// targets when they are paths (`[Searcher]`, `[search](Searcher::search)`).
fn spans(doc: &[u8], start: usize, end: usize, out: &mut Vec<(usize, usize)>) {
    let mut i = start;
    while i < end {
        match doc[i] {
            b'`' => {
                let ticks = doc[i..end].iter().take_while(|&&c| c == b'`').count();
                let open = i + ticks;
                let close = (open..end).find(|&j| {
                    doc[j..end].iter().take_while(|&&c| c == b'`').count() == ticks
                        && doc.get(j.wrapping_sub(1)) != Some(&b'`')
                });
                match close {
                    Some(close) => {
                        out.push((open, close));
                        i = close + ticks;
                    }
                    None => i = open,
                }
            }
            // A link's text, or its target right after it.
            b'[' | b'(' if doc[i] == b'[' || doc.get(i.wrapping_sub(1)) == Some(&b']') => {
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
    fn a_lone_backtick_or_bracket_is_prose() {
        assert!(code(&[" a ` b [c d", " x (y z) [e f] (Walk) [1]"]).is_empty());
        assert_eq!(code(&[" ``a `b` c`` and `d`"]), ["a `b` c", "d"]);
    }
}
