//! Where a hunk's old lines occur in a file: the ladder of ways they may match, strictest first,
//! and every candidate position at one rung. Nothing here chooses between candidates: `apply`
//! weighs every rung's places together and takes one only when it is the one place (or the
//! one at the expected line), never by rung order alone.
//!
//! The rungs: the lines as written (at the stated line, near it, or anywhere when the numbers
//! are missing or far off), then with trailing whitespace ignored, with context lines read
//! with a lost marker space, with tabs/spaces and a uniform indentation shift allowed (added
//! lines are then re-indented the same way), with only the context lines shifted, then with a
//! `...` line at an end dropped, then with up to two context lines ignored at either end (GNU
//! patch's fuzz).

use std::ops::Range;

use super::Lines;

/// How a hunk's lines were found in the file: the rungs of the ladder, strictest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rung {
    /// Exactly as written, at the line the header states (after the shift shown by the other
    /// hunks of the patch).
    Exact,
    /// Exactly as written, a few lines away: the one such place near the stated line.
    Offset,
    /// Exactly as written, the one such place in the file: the header has no line numbers,
    /// or they are far off.
    NumbersIgnored,
    /// Equal once trailing whitespace is ignored.
    TrailingWhitespace,
    /// Context lines that lost their leading marker space (each one column less indented
    /// than the file's line), the removed lines as the file has them: the added lines are
    /// written as the patch has them.
    LostMarker,
    /// Equal once indentation is compared by its width: tabs for spaces, or every line shifted
    /// by the same amount.
    Indentation,
    /// Only the context lines' indentation is off, by the same amount on every one; the
    /// removed lines are as the file has them, so the added lines are written as the patch
    /// has them.
    ContextIndentation,
    /// A context line that stands for lines left out (`...`, `// ... existing code ...`,
    /// `# rest unchanged`) at either end of the hunk dropped, with the lines it stands for;
    /// the rest of the hunk's lines as written, once in the whole file.
    Elided,
    /// Context lines at either end ignored.
    Fuzz,
    /// str_replace: old_str found once its numbered-listing prefixes (`12→`, `12:`) are
    /// dropped.
    LineNumbers,
    /// str_replace: old_str found once typographic quotes are read as straight ones.
    Quotes,
}

impl Rung {
    /// The word a result uses for the rung.
    pub fn name(self) -> &'static str {
        match self {
            Rung::Exact => "exact",
            Rung::Offset => "offset",
            Rung::NumbersIgnored => "numbers_ignored",
            Rung::TrailingWhitespace => "trailing_whitespace",
            Rung::LostMarker => "lost_marker",
            Rung::Indentation => "indentation",
            Rung::ContextIndentation => "context_indentation",
            Rung::Elided => "elided",
            Rung::Fuzz => "fuzz",
            Rung::LineNumbers => "line_numbers",
            Rung::Quotes => "quotes",
        }
    }

    /// How the rung's matching is described in a message.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Rung::Exact | Rung::Offset | Rung::NumbersIgnored => "exactly",
            Rung::TrailingWhitespace => "when trailing whitespace is ignored",
            Rung::LostMarker => "when context lines are read with their lost marker space",
            Rung::Indentation => "when indentation is compared by width",
            Rung::ContextIndentation => "when the context lines' indentation is ignored",
            Rung::Elided => "when a line standing for lines left out is dropped",
            Rung::Fuzz => "when context lines at the ends are ignored",
            Rung::LineNumbers => "when its line-number prefixes are dropped",
            Rung::Quotes => "when typographic quotes are read as straight ones",
        }
    }
}

/// A hunk with a stated line is looked for this many lines either side of it, except with its
/// exact lines (which may be anywhere when they occur once).
pub const WINDOW: usize = 50;

/// The bytes without trailing ASCII whitespace.
pub(crate) fn rtrim(text: &[u8]) -> &[u8] {
    let end = text
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    &text[..end]
}

/// A line's leading spaces and tabs, and the rest without trailing whitespace.
pub(crate) fn split_indent(text: &[u8]) -> (&[u8], &[u8]) {
    let cut = text
        .iter()
        .position(|b| *b != b' ' && *b != b'\t')
        .unwrap_or(text.len());
    (&text[..cut], rtrim(&text[cut..]))
}

/// Starts `p` in `range` where a pattern of `len` lines fits in a file of `n` lines.
pub(super) fn starts(n: usize, len: usize, range: Range<usize>) -> Range<usize> {
    let last = n.saturating_sub(len);
    if len > n {
        return 0..0;
    }
    range.start.min(last + 1)..range.end.min(last + 1)
}

/// Lines `at..at+pattern.len()` equal the pattern exactly.
pub(super) fn exact_at(file: &Lines<'_>, pattern: &[&[u8]], at: usize) -> bool {
    at + pattern.len() <= file.len()
        && pattern
            .iter()
            .enumerate()
            .all(|(k, want)| file.content(at + k) == *want)
}

/// Lines equal the pattern once trailing whitespace is ignored.
fn trailing_at(file: &Lines<'_>, pattern: &[&[u8]], at: usize) -> bool {
    at + pattern.len() <= file.len()
        && pattern
            .iter()
            .enumerate()
            .all(|(k, want)| rtrim(file.content(at + k)) == rtrim(want))
}

/// Every start in `range` where the pattern matches at `rung` (Exact, TrailingWhitespace and
/// Indentation; fuzz is Exact on a shorter pattern).
pub(crate) fn candidates(
    file: &Lines<'_>,
    pattern: &[&[u8]],
    range: Range<usize>,
    rung: Rung,
) -> Vec<usize> {
    starts(file.len(), pattern.len(), range)
        .filter(|&p| match rung {
            Rung::TrailingWhitespace => trailing_at(file, pattern, p),
            Rung::Indentation => indent_pairs(file, pattern, p)
                .is_some_and(|pairs| !pairs.is_empty() && !shifts(&pairs).is_empty()),
            _ => exact_at(file, pattern, p),
        })
        .collect()
}

/// Words a model writes, in a comment or alone, for lines it left out.
const ELISION_WORDS: [&str; 4] = ["existing code", "unchanged", "omitted", "rest of"];

/// True when a line stands for lines left out: `...` or `…` alone or in a comment
/// (`// ... existing code ...`, `# ...`, `/* ... */`, `<!-- ... -->`), or a comment saying so
/// in words (`# rest unchanged`).
pub fn is_elision(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let mut t = text.trim();
    let mut comment = false;
    for lead in ["//", "#", "/*", "<!--", "--", ";", "*"] {
        if let Some(rest) = t.strip_prefix(lead) {
            t = rest.trim_start_matches(lead.chars().next().unwrap_or('/'));
            comment = true;
            break;
        }
    }
    for tail in ["*/", "-->"] {
        if let Some(rest) = t.strip_suffix(tail) {
            t = rest;
        }
    }
    let dotted = t.contains("...") || t.contains('…');
    let core = t
        .trim_matches(|c: char| c == '.' || c == '…' || c.is_whitespace())
        .to_ascii_lowercase();
    if core.is_empty() {
        return dotted;
    }
    (comment || dotted) && core.len() <= 40 && ELISION_WORDS.iter().any(|w| core.contains(w))
}

/// Every start in `range` where [`context_rung`] answers `rung`.
pub(crate) fn context_candidates(
    file: &Lines<'_>,
    pattern: &[&[u8]],
    context: &[bool],
    range: Range<usize>,
    rung: Rung,
) -> Vec<usize> {
    starts(file.len(), pattern.len(), range)
        .filter(|&p| context_rung(file, pattern, context, p) == Some(rung))
        .collect()
}

/// Every start in `range` where the pattern's lines equal the file's once all whitespace is
/// ignored: the places a hunk may be meant for, whether or not a rung takes them.
pub(crate) fn squashed_candidates(
    file: &Lines<'_>,
    pattern: &[&[u8]],
    range: Range<usize>,
) -> Vec<usize> {
    let squash = |t: &[u8]| -> Vec<u8> {
        t.iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect()
    };
    let want: Vec<Vec<u8>> = pattern.iter().map(|l| squash(l)).collect();
    starts(file.len(), pattern.len(), range)
        .filter(|&p| {
            want.iter()
                .enumerate()
                .all(|(k, w)| squash(file.content(p + k)) == *w)
        })
        .collect()
}

/// (patch indentation, file indentation) of each non-blank line, when the lines are equal apart
/// from their indentation and trailing whitespace.
pub(crate) type Pairs<'a> = Vec<(&'a [u8], &'a [u8])>;

pub(crate) fn indent_pairs<'a>(
    file: &Lines<'a>,
    pattern: &[&'a [u8]],
    at: usize,
) -> Option<Pairs<'a>> {
    if at + pattern.len() > file.len() {
        return None;
    }
    let mut pairs = Vec::new();
    for (k, want) in pattern.iter().enumerate() {
        let (wi, wr) = split_indent(want);
        let (fi, fr) = split_indent(file.content(at + k));
        if wr != fr {
            return None;
        }
        if !wr.is_empty() {
            pairs.push((wi, fi));
        }
    }
    Some(pairs)
}

/// Tab widths an indentation may have been written with.
const TAB_WIDTHS: [usize; 4] = [2, 3, 4, 8];

/// Width of an indentation in columns, a tab reaching the next multiple of `tab`.
fn columns(indent: &[u8], tab: usize) -> usize {
    indent.iter().fold(0, |col, b| {
        if *b == b'\t' {
            (col / tab + 1) * tab
        } else {
            col + 1
        }
    })
}

/// The readings (tab width, columns added) under which every file line's indentation is its
/// patch line's plus the same number of columns. A shift of one column is no reading: no
/// indentation unit is one column wide, and a uniform one-column shift is the mark of context
/// lines that lost their marker space (see [`context_rung`]), whose added lines must not move.
fn shifts(pairs: &Pairs<'_>) -> Vec<(usize, isize)> {
    TAB_WIDTHS
        .iter()
        .filter_map(|&tab| {
            let mut deltas = pairs
                .iter()
                .map(|(p, f)| columns(f, tab) as isize - columns(p, tab) as isize);
            let first = deltas.next()?;
            (deltas.all(|d| d == first) && first.abs() != 1).then_some((tab, first))
        })
        .collect()
}

/// Where only a hunk's context lines are off (`context[k]`: line k of the pattern is a
/// context line; the others are removed lines): the rung that explains them, or None.
///
/// The removed lines must be the file's (trailing whitespace aside). Then either every
/// non-blank context line is the file's line with one leading space lost, or as it is
/// ([`Rung::LostMarker`], at least one line lost it), or every non-blank context line is
/// shifted by the same number of columns, at least two, under every reading of its tabs
/// ([`Rung::ContextIndentation`], at least one removed line with text proving the patch's own
/// indentation right). Either way the added lines are written as the patch has them.
pub(crate) fn context_rung(
    file: &Lines<'_>,
    pattern: &[&[u8]],
    context: &[bool],
    at: usize,
) -> Option<Rung> {
    if at + pattern.len() > file.len() || context.len() != pattern.len() {
        return None;
    }
    let mut lost = 0;
    let mut marker_fits = true;
    let mut removed_text = false;
    let mut pairs: Pairs<'_> = Vec::new();
    for (k, want) in pattern.iter().enumerate() {
        let has = file.content(at + k);
        let (w, f) = (rtrim(want), rtrim(has));
        if !context[k] {
            if w != f {
                return None;
            }
            removed_text |= !w.is_empty();
            continue;
        }
        if w.is_empty() && f.is_empty() {
            continue;
        }
        if f.first() == Some(&b' ') && &f[1..] == w {
            lost += 1;
        } else if f != w {
            marker_fits = false;
        }
        let (wi, wr) = split_indent(want);
        let (fi, fr) = split_indent(has);
        if wr != fr || wr.is_empty() {
            // A context line that differs in more than its indentation (or is blank on one
            // side only): only a lost marker may explain it, and it did not.
            if !marker_fits {
                return None;
            }
            continue;
        }
        pairs.push((wi, fi));
    }
    if marker_fits && lost > 0 {
        return Some(Rung::LostMarker);
    }
    if !removed_text || pairs.is_empty() {
        return None;
    }
    let readings: Vec<(usize, isize)> = TAB_WIDTHS
        .iter()
        .filter_map(|&tab| {
            let mut deltas = pairs
                .iter()
                .map(|(p, f)| columns(f, tab) as isize - columns(p, tab) as isize);
            let first = deltas.next()?;
            deltas.all(|d| d == first).then_some((tab, first))
        })
        .collect();
    let shifted = readings.len() == TAB_WIDTHS.len() && readings.iter().all(|r| r.1.abs() >= 2);
    shifted.then_some(Rung::ContextIndentation)
}

/// True when no reading of the pairs leaves the indentation where it was (tabs for spaces
/// alone is no shift).
pub(crate) fn shifted(pairs: &Pairs<'_>) -> bool {
    shifts(pairs).iter().all(|r| r.1 != 0)
}

/// An added line's indentation as the file would have it under one reading.
fn reindent_one(
    pairs: &Pairs<'_>,
    (tab, delta): (usize, isize),
    use_tabs: bool,
    line: &[u8],
) -> Option<Vec<u8>> {
    let (indent, _) = split_indent(line);
    let rest = &line[indent.len()..];
    if rest.iter().all(|b| b.is_ascii_whitespace()) {
        return Some(line.to_vec());
    }
    let mut out = match pairs.iter().find(|(p, _)| *p == indent) {
        Some((_, f)) => f.to_vec(),
        None => {
            let col = usize::try_from(columns(indent, tab) as isize + delta).ok()?;
            let (tabs, spaces) = if use_tabs {
                (col / tab, col % tab)
            } else {
                (0, col)
            };
            let mut v = vec![b'\t'; tabs];
            v.resize(tabs + spaces, b' ');
            v
        }
    };
    out.extend_from_slice(rest);
    Some(out)
}

/// The added lines re-indented as the matched lines were, or None when the readings of the
/// shift disagree about them (or one would need a negative indentation): then re-indenting
/// would be a guess.
pub(crate) fn reindent(pairs: &Pairs<'_>, added: &[&[u8]]) -> Option<Vec<Vec<u8>>> {
    let mut readings = shifts(pairs);
    if readings.iter().any(|r| r.1 == 0) {
        // Tabs written as spaces (or back) without a shift: the plain reading.
        readings.retain(|r| r.1 == 0);
    }
    let use_tabs = pairs.iter().any(|(_, f)| f.contains(&b'\t'));
    let mut answer: Option<Vec<Vec<u8>>> = None;
    for reading in readings {
        let lines: Option<Vec<Vec<u8>>> = added
            .iter()
            .map(|l| reindent_one(pairs, reading, use_tabs, l))
            .collect();
        let lines = lines?;
        match &answer {
            Some(a) if *a != lines => return None,
            Some(_) => {}
            None => answer = Some(lines),
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs<'a>(list: &[(&'a str, &'a str)]) -> Pairs<'a> {
        list.iter()
            .map(|(p, f)| (p.as_bytes(), f.as_bytes()))
            .collect()
    }

    #[test]
    fn tabs_written_as_spaces_come_back_as_tabs() {
        let p = pairs(&[("    ", "\t"), ("", "")]);
        let got = reindent(&p, &[b"        deeper", b"    same"]).expect("decided");
        assert_eq!(got, vec![b"\t\tdeeper".to_vec(), b"\tsame".to_vec()]);
    }

    #[test]
    fn a_uniform_shift_is_undone() {
        let p = pairs(&[("      ", "    "), ("    ", "  ")]);
        let got = reindent(&p, &[b"        x", b"  y"]).expect("decided");
        assert_eq!(got, vec![b"      x".to_vec(), b"y".to_vec()]);
        // Below column 0: no answer.
        assert!(reindent(&p, &[b"z"]).is_none());
    }

    #[test]
    fn no_uniform_shift_no_candidate() {
        assert!(shifts(&pairs(&[("  ", "    "), ("    ", "  ")])).is_empty());
    }
}
