//! Where grep's JSON result keeps what it found until it is written: every file's path, line
//! records and line text packed one after another in one buffer, with one offset per file to
//! find it, so a match costs about its own text and path once (a 100,000-match result takes
//! less than its JSON). The first `cap` matches in (path, line) order are kept: whenever twice
//! as many have piled up, the index is sorted and the rest dropped.
//!
//! A file in the buffer: a header of variable-length integers (path bytes, lines, record
//! bytes, text bytes, matching lines), the path, one record per line (its kind, its number,
//! the length of its text), then the lines' text.

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{FileMatches, LineKind, Match};

/// Where a kept file starts in the buffer.
type Slot = usize;

/// A kept file's header, read back.
#[derive(Debug, Clone, Copy)]
struct Header {
    /// Where its path starts (after the header).
    path_at: usize,
    path_len: usize,
    lines: usize,
    records_len: usize,
    text_len: usize,
    matched: u64,
}

impl Header {
    fn records_at(&self) -> usize {
        self.path_at + self.path_len
    }

    fn text_at(&self) -> usize {
        self.records_at() + self.records_len
    }

    fn end(&self) -> usize {
        self.text_at() + self.text_len
    }
}

#[derive(Debug, Default)]
pub struct Arena {
    buf: Vec<u8>,
    index: Vec<Slot>,
    /// One file's records while it is added.
    records: Vec<u8>,
    /// Matches held in the buffer.
    kept: u64,
    /// Matches seen in all.
    pub total: u64,
    /// After a prune that kept a full `cap`: the last path kept. A file after it cannot enter.
    pub bar: Option<String>,
}

impl Arena {
    /// Keep one file's lines; drop what can no longer be among the first `cap`.
    pub fn add(&mut self, file: &FileMatches, cap: u64) {
        self.records.clear();
        let mut from = 0usize;
        for rec in &file.lines {
            let end = rec.end as usize;
            self.records.push(kind_byte(rec.kind));
            put_varint(&mut self.records, rec.number);
            put_varint(&mut self.records, end.saturating_sub(from) as u64);
            from = end;
        }
        let start = self.buf.len();
        for n in [
            file.path.len(),
            file.lines.len(),
            self.records.len(),
            file.text.len(),
        ] {
            put_varint(&mut self.buf, n as u64);
        }
        put_varint(&mut self.buf, file.matched);
        self.buf.extend_from_slice(file.path.as_bytes());
        self.buf.extend_from_slice(&self.records);
        self.buf.extend_from_slice(file.text.as_bytes());
        self.index.push(start);
        self.kept += file.matched;
        self.total += file.matched;
        if self.kept > cap.saturating_mul(2).saturating_add(1024) {
            self.prune(cap);
        }
    }

    /// Sort by path and drop the files after the first `cap` matches, compacting the buffer.
    pub fn prune(&mut self, cap: u64) {
        // Sorted by each file's path bytes, with its header read once per file rather than
        // at every comparison or count (a UTF-8 string's bytes sort as the string does).
        let mut keyed: Vec<(&[u8], Slot, u64)> = self
            .index
            .iter()
            .map(|&slot| {
                let h = self.header(slot);
                let path = self.buf.get(h.path_at..h.records_at()).unwrap_or(&[]);
                (path, slot, h.matched)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut kept = 0u64;
        let mut keep = keyed.len();
        for (i, &(_, _, matched)) in keyed.iter().enumerate() {
            if kept >= cap {
                keep = i;
                break;
            }
            kept += matched;
        }
        let mut index: Vec<Slot> = keyed
            .into_iter()
            .take(keep)
            .map(|(_, slot, _)| slot)
            .collect();
        // The buffer holds exactly the indexed files: it shrinks only when some are dropped.
        if keep < self.index.len() {
            let mut buf = Vec::with_capacity(self.index_bytes(&index));
            for slot in &mut index {
                let from = *slot;
                let end = self.header(from).end();
                *slot = buf.len();
                buf.extend_from_slice(self.buf.get(from..end).unwrap_or(&[]));
            }
            self.buf = buf;
        }
        self.kept = kept;
        self.index = index;
        if self.kept >= cap {
            self.bar = self.index.last().map(|s| self.path(*s).to_string());
        }
    }

    fn header(&self, slot: Slot) -> Header {
        let mut at = slot;
        let mut next = || get_varint(&self.buf, &mut at);
        let (path_len, lines, records_len, text_len, matched) =
            (next(), next(), next(), next(), next());
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Header {
            path_at: at,
            path_len: size(path_len),
            lines: size(lines),
            records_len: size(records_len),
            text_len: size(text_len),
            matched,
        }
    }

    fn index_bytes(&self, index: &[Slot]) -> usize {
        index.iter().map(|s| self.header(*s).end() - s).sum()
    }

    fn path(&self, slot: Slot) -> &str {
        self.path_of(&self.header(slot))
    }

    fn path_of(&self, h: &Header) -> &str {
        std::str::from_utf8(self.buf.get(h.path_at..h.records_at()).unwrap_or(&[])).unwrap_or("")
    }

    /// One kept file's lines in order (`h`: its header): (line number, kind, text).
    fn lines(&self, h: &Header) -> impl Iterator<Item = (u64, LineKind, &str)> + '_ {
        let h = *h;
        let records = self.buf.get(h.records_at()..h.text_at()).unwrap_or(&[]);
        let text = self.buf.get(h.text_at()..h.end()).unwrap_or(&[]);
        let (mut at, mut from) = (0usize, 0usize);
        (0..h.lines).map(move |_| {
            let kind = kind_of(records.get(at).copied().unwrap_or(3));
            at += 1;
            let number = get_varint(records, &mut at);
            let len = usize::try_from(get_varint(records, &mut at)).unwrap_or(0);
            let end = from.saturating_add(len);
            let line = std::str::from_utf8(text.get(from..end).unwrap_or(&[])).unwrap_or("");
            from = end;
            (number, kind, line)
        })
    }
}

/// Append `v` in seven-bit groups, low first; the high bit says more follow.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Read a `put_varint` number at `*at`, moving past it (0 past the end of `bytes`).
fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0u32;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    v
}

fn kind_byte(kind: LineKind) -> u8 {
    match kind {
        LineKind::Match => 0,
        LineKind::Before => 1,
        LineKind::After => 2,
        LineKind::Break => 3,
    }
}

fn kind_of(byte: u8) -> LineKind {
    match byte {
        0 => LineKind::Match,
        1 => LineKind::Before,
        2 => LineKind::After,
        _ => LineKind::Break,
    }
}

/// A match with its context as the JSON result groups it.
pub struct MatchView<'a> {
    pub line: u64,
    pub text: &'a str,
    pub before: Vec<&'a str>,
    pub after: Vec<&'a str>,
}

/// Group a file's lines into matches: context before a match (since the last gap) and after.
pub fn grouped<'a>(lines: impl Iterator<Item = (u64, LineKind, &'a str)>) -> Vec<MatchView<'a>> {
    let mut out = Vec::new();
    each_grouped(lines, |m| {
        out.push(m);
        true
    });
    out
}

/// `grouped`, one match at a time, each handed to `f` once its context after is known; stops
/// (and says false) when `f` says false.
fn each_grouped<'a>(
    lines: impl Iterator<Item = (u64, LineKind, &'a str)>,
    mut f: impl FnMut(MatchView<'a>) -> bool,
) -> bool {
    let mut pending: Option<MatchView<'a>> = None;
    let mut before: Vec<&str> = Vec::new();
    for (number, kind, text) in lines {
        match kind {
            LineKind::Match => {
                if let Some(done) = pending.take() {
                    if !f(done) {
                        return false;
                    }
                }
                pending = Some(MatchView {
                    line: number,
                    text,
                    before: std::mem::take(&mut before),
                    after: Vec::new(),
                });
            }
            LineKind::After => {
                if let Some(last) = pending.as_mut() {
                    last.after.push(text);
                }
            }
            LineKind::Before => before.push(text),
            LineKind::Break => before.clear(),
        }
    }
    pending.map_or(true, f)
}

/// The page of matches a JSON result returns: the kept files in path order, `skip` matches
/// left out at the front, at most `take` returned; or, for a result read back from its JSON
/// (a host holding only what a tool binary wrote), the matches as they were written.
#[derive(Debug)]
pub struct MatchPage(Page);

#[derive(Debug)]
enum Page {
    Held { arena: Arena, skip: u64, take: u64 },
    Read(Vec<Match>),
}

impl MatchPage {
    /// The page of a finished search (sorted here).
    pub fn new(mut arena: Arena, skip: u64, take: u64) -> MatchPage {
        arena.prune(skip.saturating_add(take));
        MatchPage(Page::Held { arena, skip, take })
    }

    /// Matches held (before paging).
    pub fn held(&self) -> u64 {
        match &self.0 {
            Page::Held { arena, .. } => arena.kept,
            Page::Read(matches) => matches.len() as u64,
        }
    }

    /// Each match of the page in order, with its file's path; stops at the first error `f`
    /// returns.
    pub fn try_for_each<'a, E>(
        &'a self,
        mut f: impl FnMut(&'a str, MatchView<'a>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let (arena, skip, take) = match &self.0 {
            Page::Held { arena, skip, take } => (arena, *skip, *take),
            Page::Read(matches) => {
                for m in matches {
                    let view = MatchView {
                        line: m.line,
                        text: &m.text,
                        before: m.before.iter().map(String::as_str).collect(),
                        after: m.after.iter().map(String::as_str).collect(),
                    };
                    f(&m.path, view)?;
                }
                return Ok(());
            }
        };
        let (mut index, end) = (0u64, skip.saturating_add(take));
        for &slot in &arena.index {
            let h = arena.header(slot);
            if index + h.matched <= skip {
                index += h.matched;
                continue;
            }
            let path = arena.path_of(&h);
            let mut failed = None;
            let go_on = each_grouped(arena.lines(&h), |m| {
                if index >= end {
                    return false;
                }
                if index >= skip {
                    if let Err(e) = f(path, m) {
                        failed = Some(e);
                        return false;
                    }
                }
                index += 1;
                true
            });
            if let Some(e) = failed {
                return Err(e);
            }
            if !go_on {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The page's matches in order, with their paths.
    pub fn views(&self) -> Vec<(&str, MatchView<'_>)> {
        let mut out = Vec::new();
        let _ = self.try_for_each(|path, m| {
            out.push((path, m));
            Ok::<(), std::convert::Infallible>(())
        });
        out
    }
}

impl Serialize for MatchPage {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        self.try_for_each(|path, m| seq.serialize_element(&MatchOut { path, m }))?;
        seq.end()
    }
}

impl<'de> Deserialize<'de> for MatchPage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<MatchPage, D::Error> {
        Vec::<Match>::deserialize(d).map(|matches| MatchPage(Page::Read(matches)))
    }
}

struct MatchOut<'a> {
    path: &'a str,
    m: MatchView<'a>,
}

impl Serialize for MatchOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let extra = usize::from(!self.m.before.is_empty()) + usize::from(!self.m.after.is_empty());
        let mut st = s.serialize_struct("Match", 3 + extra)?;
        st.serialize_field("path", self.path)?;
        st.serialize_field("line", &self.m.line)?;
        st.serialize_field("text", self.m.text)?;
        if !self.m.before.is_empty() {
            st.serialize_field("before", &self.m.before)?;
        }
        if !self.m.after.is_empty() {
            st.serialize_field("after", &self.m.after)?;
        }
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, lines: &[(u64, LineKind, &str)]) -> FileMatches {
        let mut f = FileMatches::new(path);
        for (n, kind, text) in lines {
            f.push(*n, *kind, format!("{text}\n").as_bytes());
        }
        f
    }

    fn page_json(arena: Arena, skip: u64, take: u64) -> Vec<String> {
        let page = MatchPage::new(arena, skip, take);
        let v = serde_json::to_value(&page).expect("json");
        v.as_array()
            .expect("array")
            .iter()
            .map(|m| format!("{}:{}:{}", m["path"], m["line"], m["text"]).replace('"', ""))
            .collect()
    }

    #[test]
    fn keeps_the_first_matches_in_path_order_whatever_the_arrival_order() {
        let mut arena = Arena::default();
        // Many files in reverse order, so the prune inside `add` runs several times.
        for i in (0..3000).rev() {
            let path = format!("f{i:04}");
            arena.add(
                &file(
                    &path,
                    &[(1, LineKind::Match, "a"), (2, LineKind::Match, "b")],
                ),
                5,
            );
        }
        assert_eq!(arena.total, 6000);
        assert_eq!(
            page_json(arena, 2, 3),
            ["f0001:1:a", "f0001:2:b", "f0002:1:a"]
        );
    }

    #[test]
    fn numbers_and_long_lines_read_back() {
        for v in [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            let mut at = 0;
            assert_eq!((get_varint(&buf, &mut at), at), (v, buf.len()));
        }
        let long = "x".repeat(400);
        let mut arena = Arena::default();
        arena.add(
            &file(
                "b/long",
                &[
                    (70_000, LineKind::Match, &long),
                    (4_000_000_000, LineKind::Match, "é"),
                ],
            ),
            10,
        );
        arena.add(&file("a", &[(1, LineKind::Match, "")]), 10);
        assert_eq!(
            page_json(arena, 0, 10),
            [
                "a:1:".to_string(),
                format!("b/long:70000:{long}"),
                "b/long:4000000000:é".into()
            ]
        );
    }

    /// A page that starts and ends inside a file keeps each match's context, as the whole
    /// result groups it.
    #[test]
    fn pages_inside_a_file_keep_each_matchs_context() {
        use LineKind::*;
        let lines = [
            (1, Before, "b1"),
            (2, Match, "m2"),
            (3, After, "a3"),
            (4, Match, "m4"),
            (5, After, "a5"),
            (0, Break, ""),
            (9, Before, "b9"),
            (10, Match, "m10"),
            (11, After, "a11"),
        ];
        let whole = {
            let mut arena = Arena::default();
            arena.add(&file("x", &lines), 100);
            serde_json::to_value(MatchPage::new(arena, 0, 100)).expect("json")
        };
        for (skip, take) in [(0, 1), (1, 1), (1, 2), (2, 5), (3, 1)] {
            let mut arena = Arena::default();
            arena.add(&file("w", &[(1, Match, "w")]), 100);
            arena.add(&file("x", &lines), 100);
            let page = serde_json::to_value(MatchPage::new(arena, skip + 1, take)).expect("json");
            let expected: Vec<serde_json::Value> = whole
                .as_array()
                .expect("array")
                .iter()
                .skip(skip as usize)
                .take(take as usize)
                .cloned()
                .collect();
            assert_eq!(page, serde_json::Value::Array(expected), "{skip} {take}");
        }
    }

    #[test]
    fn groups_context_around_matches() {
        use LineKind::*;
        let mut arena = Arena::default();
        let lines = [
            (1, Before, "b1"),
            (2, Match, "m2"),
            (3, After, "a3"),
            (0, Break, ""),
            (9, Before, "b9"),
            (10, Match, "m10"),
        ];
        arena.add(&file("x", &lines), 100);
        let page = MatchPage::new(arena, 0, 100);
        let v = serde_json::to_value(&page).expect("json");
        assert_eq!(
            v,
            serde_json::json!([
                {"path": "x", "line": 2, "text": "m2", "before": ["b1"], "after": ["a3"]},
                {"path": "x", "line": 10, "text": "m10", "before": ["b9"]}
            ])
        );
    }
}
