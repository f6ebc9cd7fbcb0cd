//! A file's bytes seen as lines: the view every other part of the engine works on.

use std::ops::Range;

/// A file's bytes seen as lines; each line's content excludes its ending (`\n` or `\r\n`).
pub struct Lines<'a> {
    pub bytes: &'a [u8],
    spans: Vec<(usize, usize, usize)>,
}

impl<'a> Lines<'a> {
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        let mut spans = Vec::with_capacity(bytes.len() / 32 + 1);
        let mut start = 0;
        for nl in crate::text::byte_positions(b'\n', bytes) {
            let end = if nl > start && bytes[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            spans.push((start, end, nl + 1));
            start = nl + 1;
        }
        if start < bytes.len() {
            spans.push((start, bytes.len(), bytes.len()));
        }
        Lines { bytes, spans }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The line's text without its ending.
    pub fn content(&self, i: usize) -> &'a [u8] {
        let (s, e, _) = self.spans[i];
        &self.bytes[s..e]
    }

    /// The line with its ending.
    pub fn raw(&self, i: usize) -> &'a [u8] {
        let (s, _, n) = self.spans[i];
        &self.bytes[s..n]
    }

    /// Byte offset where line `i` starts (the file's length for `i == len()`).
    pub fn offset(&self, i: usize) -> usize {
        self.spans.get(i).map_or(self.bytes.len(), |s| s.0)
    }

    /// Index of the line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.spans.partition_point(|s| s.2 <= offset)
    }

    /// The line ending new lines should get: CRLF when most lines end so, else LF.
    pub fn newline(&self) -> &'static [u8] {
        let crlf = self.spans.iter().filter(|s| s.2 - s.1 == 2).count();
        let lf = self.spans.iter().filter(|s| s.2 - s.1 == 1).count();
        if crlf > lf {
            b"\r\n"
        } else {
            b"\n"
        }
    }

    /// The ending most of the lines in `range` have (None when as many end with CRLF as with
    /// LF, or none has an ending).
    pub(super) fn newline_of(&self, range: Range<usize>) -> Option<&'static [u8]> {
        let spans = self.spans.get(range).unwrap_or(&[]);
        let crlf = spans.iter().filter(|s| s.2 - s.1 == 2).count();
        let lf = spans.iter().filter(|s| s.2 - s.1 == 1).count();
        match crlf.cmp(&lf) {
            std::cmp::Ordering::Greater => Some(b"\r\n"),
            std::cmp::Ordering::Less => Some(b"\n"),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// True when the last line has no line ending.
    pub fn lacks_final_newline(&self) -> bool {
        self.spans.last().is_some_and(|s| s.2 == s.1)
    }
}
