//! Placing every hunk of a file's patch, or none: each hunk by its own line numbers (in any
//! order, never overlapping another), climbing the ladder of [`seek`](super::seek) only while
//! exactly one place answers. Two candidates at a rung is a refusal that lists them, never a
//! pick. The new bytes are then built by [`build`](super::build).

use std::ops::Range;

use super::build::{assemble, Applied};
use super::explain::{explain, rejection_text, Miss};
use super::parse::Hunk;
use super::seek::{self, Rung, WINDOW};
use super::{Lines, Op};

/// How a hunk was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub number: usize,
    /// 1-based line where the header said the hunk's old side starts (None if unnumbered).
    pub expected_line: Option<usize>,
    /// 1-based line of the old file where the hunk's old side was found.
    pub line: usize,
    /// Lines between the found place and the header's.
    pub offset: isize,
    /// Context lines ignored at either end to place the hunk (GNU patch's fuzz).
    pub fuzz: usize,
    /// The rung of the ladder that placed the hunk.
    pub rung: Rung,
}

#[derive(Debug)]
pub struct Rejection {
    pub number: usize,
    pub message: String,
}

/// GNU patch's default fuzz factor.
pub const MAX_FUZZ: usize = 2;

/// A hunk as the placer sees it.
pub(super) struct Want<'h, 'a> {
    pub hunk: &'h Hunk<'a>,
    pub old_side: Vec<&'a [u8]>,
    pub lead: usize,
    pub trail: usize,
    /// 0-based line where the header says the old side starts.
    pub stated: Option<usize>,
    /// Lines equal to the hunk's anchor (Codex's `@@ class Foo`): it goes after one of them.
    pub anchors: Option<Vec<usize>>,
    /// Number of lines in the file, when the hunk must end at the end of the file.
    pub end: Option<usize>,
}

impl<'h, 'a> Want<'h, 'a> {
    fn new(hunk: &'h Hunk<'a>, file: &Lines<'_>) -> Self {
        let (lead, trail) = hunk.lead_trail();
        let anchors = hunk.anchor.map(|a| {
            (0..file.len())
                .filter(|&i| seek::rtrim(file.content(i)).trim_ascii_start() == a.as_bytes())
                .collect()
        });
        Want {
            hunk,
            old_side: hunk.old_side(),
            lead,
            trail,
            stated: hunk.written_position(),
            anchors,
            end: hunk.at_end.then_some(file.len()),
        }
    }

    /// True when the hunk's (trimmed) old side may start at `p`: after its anchor, and at the
    /// end of the file when it says so.
    fn fits(&self, p: usize, front: usize, back: usize) -> bool {
        let len = self.old_side.len() - front - back;
        self.end.map_or(true, |n| p + len + back == n)
            && self.anchors.as_ref().map_or(true, |a| {
                a.iter().any(|&line| line < p.saturating_sub(front))
            })
    }

    fn added(&self, front: usize, back: usize) -> Vec<&'a [u8]> {
        let body = &self.hunk.lines[front..self.hunk.lines.len() - back];
        body.iter()
            .filter(|l| l.op == Op::Add)
            .map(|l| l.text)
            .collect()
    }
}

/// Where a hunk goes.
#[derive(Debug, Clone)]
pub(super) struct Placed {
    /// File line where the (fuzz-trimmed) old side starts.
    pub at: usize,
    /// Context lines left out at the front and the back (fuzz).
    pub front: usize,
    pub back: usize,
    /// The added lines re-indented (indentation rung), in hunk order.
    pub added: Option<Vec<Vec<u8>>>,
    pub rung: Rung,
}

impl Placed {
    fn new(at: usize, rung: Rung) -> Placed {
        Placed {
            at,
            front: 0,
            back: 0,
            added: None,
            rung,
        }
    }

    /// The old lines the hunk covers (for a pure insertion, the empty range at its line).
    pub fn span(&self, want: &Want<'_, '_>) -> Range<usize> {
        self.at..self.at + want.old_side.len() - self.front - self.back
    }
}

/// True when two hunks' old lines overlap (an insertion may touch either end of a range).
fn clash(a: &Range<usize>, b: &Range<usize>) -> bool {
    if a.is_empty() || b.is_empty() {
        let (point, span) = if a.is_empty() {
            (a.start, b)
        } else {
            (b.start, a)
        };
        span.start < point && point < span.end
    } else {
        a.start < b.end && b.start < a.end
    }
}

/// True when `range` would overlap a placed hunk's lines.
fn collides(range: &Range<usize>, wants: &[Want<'_, '_>], placed: &[Option<Placed>]) -> bool {
    placed
        .iter()
        .zip(wants)
        .any(|(p, w)| p.as_ref().is_some_and(|p| clash(range, &p.span(w))))
}

/// Apply every hunk or none.
pub fn apply(old: &[u8], hunks: &[Hunk<'_>], max_fuzz: usize) -> Result<Applied, Rejection> {
    let file = Lines::new(old);
    let wants: Vec<Want<'_, '_>> = hunks.iter().map(|h| Want::new(h, &file)).collect();
    let mut placed: Vec<Option<Placed>> = wants.iter().map(|w| anchor(&file, w)).collect();
    let mut misses: Vec<(usize, Miss)> = overlapping(&wants, &mut placed);
    for i in 0..wants.len() {
        if placed[i].is_some() || misses.iter().any(|(k, _)| *k == i) {
            continue;
        }
        let expected = expected_line(&wants, &placed, i);
        match seek_hunk(&file, &wants, &placed, i, expected, max_fuzz) {
            Ok(p) => placed[i] = Some(p),
            Err(miss) => misses.push((i, miss)),
        }
    }
    if !misses.is_empty() {
        misses.sort_by_key(|(i, _)| *i);
        let total = hunks.len();
        let texts: Vec<(usize, String)> = misses
            .iter()
            .map(|(i, miss)| {
                let expected = expected_line(&wants, &placed, *i);
                let why = explain(&file, &wants, &placed, *i, expected, miss, max_fuzz);
                (wants[*i].hunk.number, why)
            })
            .collect();
        return Err(Rejection {
            number: texts[0].0,
            message: rejection_text(&texts, total),
        });
    }
    let placed: Vec<Placed> = placed.into_iter().flatten().collect();
    let placements = wants
        .iter()
        .zip(&placed)
        .map(|(w, p)| placement(w, p))
        .collect();
    Ok(assemble(&file, &wants, &placed, placements))
}

fn placement(w: &Want<'_, '_>, p: &Placed) -> Placement {
    let start = p.at as isize - p.front as isize;
    Placement {
        number: w.hunk.number,
        expected_line: w.stated.map(|s| s + 1),
        line: start.max(0) as usize + 1,
        offset: w.stated.map_or(0, |s| start - s as isize),
        fuzz: p.front.max(p.back),
        rung: p.rung,
    }
}

/// A hunk placed on its own evidence: its exact lines at its stated line, or its exact lines
/// occurring once in the whole file.
fn anchor(file: &Lines<'_>, w: &Want<'_, '_>) -> Option<Placed> {
    if w.old_side.is_empty() {
        return match (w.stated, &w.anchors, w.end) {
            (Some(s), _, _) => Some(Placed::new(s.min(file.len()), Rung::Exact)),
            (None, _, Some(n)) => Some(Placed::new(n, Rung::NumbersIgnored)),
            (None, Some(a), _) if a.len() == 1 => Some(Placed::new(a[0] + 1, Rung::NumbersIgnored)),
            (None, _, _) if file.is_empty() => Some(Placed::new(0, Rung::Exact)),
            (None, _, _) => None,
        };
    }
    if let Some(s) = w.stated {
        if seek::exact_at(file, &w.old_side, s) && w.fits(s, 0, 0) {
            return Some(Placed::new(s, Rung::Exact));
        }
    }
    let mut all = seek::candidates(file, &w.old_side, 0..file.len() + 1, Rung::Exact);
    all.retain(|&p| w.fits(p, 0, 0));
    match all.as_slice() {
        [only] => {
            let near = w.stated.is_some_and(|s| only.abs_diff(s) <= WINDOW);
            Some(Placed::new(
                *only,
                if near {
                    Rung::Offset
                } else {
                    Rung::NumbersIgnored
                },
            ))
        }
        _ => None,
    }
}

/// Anchors that claim the same lines are both unproven: take them back and say so.
fn overlapping(wants: &[Want<'_, '_>], placed: &mut [Option<Placed>]) -> Vec<(usize, Miss)> {
    let mut misses = Vec::new();
    for i in 0..placed.len() {
        for j in i + 1..placed.len() {
            let (Some(a), Some(b)) = (&placed[i], &placed[j]) else {
                continue;
            };
            let (ra, rb) = (a.span(&wants[i]), b.span(&wants[j]));
            if clash(&ra, &rb) {
                let line = ra.start.max(rb.start) + 1;
                misses.push((i, Miss::Overlap(wants[j].hunk.number, line)));
                misses.push((j, Miss::Overlap(wants[i].hunk.number, line)));
            }
        }
    }
    for (i, _) in &misses {
        placed[*i] = None;
    }
    misses.dedup_by_key(|(i, _)| *i);
    misses
}

/// Where a hunk is expected: its stated line moved by the offset of the placed hunk whose
/// stated line is nearest (the file may have shifted since the patch was written).
pub(super) fn expected_line(
    wants: &[Want<'_, '_>],
    placed: &[Option<Placed>],
    i: usize,
) -> Option<usize> {
    let stated = wants[i].stated?;
    let shift = wants
        .iter()
        .zip(placed)
        .enumerate()
        .filter(|(k, _)| *k != i)
        .filter_map(|(_, (w, p))| {
            let s = w.stated?;
            let p = p.as_ref()?;
            Some((
                s.abs_diff(stated),
                p.at as isize - p.front as isize - s as isize,
            ))
        })
        .min_by_key(|(d, _)| *d)
        .map_or(0, |(_, shift)| shift);
    Some((stated as isize + shift).max(0) as usize)
}

/// Exactly one candidate: that one; none: None (try the next rung); several: refused.
fn pick(found: Vec<usize>, rung: Rung) -> Option<Result<usize, Miss>> {
    match found.len() {
        0 => None,
        1 => Some(Ok(found[0])),
        _ => Some(Err(Miss::Ambiguous(rung, found))),
    }
}

/// The lines searched at a loose rung: a window around the expected line, or the whole file
/// for a hunk without line numbers.
fn search_range(expected: Option<usize>, n: usize) -> Range<usize> {
    match expected {
        Some(e) => e.saturating_sub(WINDOW)..(e + WINDOW + 1).min(n + 1),
        None => 0..n + 1,
    }
}

/// Climb the ladder for one hunk that is not an anchor.
fn seek_hunk(
    file: &Lines<'_>,
    wants: &[Want<'_, '_>],
    placed: &[Option<Placed>],
    i: usize,
    expected: Option<usize>,
    max_fuzz: usize,
) -> Result<Placed, Miss> {
    let w = &wants[i];
    if w.old_side.is_empty() {
        return Err(Miss::AddOnlyUnnumbered);
    }
    let len = w.old_side.len();
    let free = |found: Vec<usize>, front: usize, back: usize| -> Vec<usize> {
        found
            .into_iter()
            .filter(|&p| w.fits(p, front, back))
            .filter(|p| !collides(&(*p..*p + len - front - back), wants, placed))
            .collect()
    };
    if let Some(e) = expected {
        if seek::exact_at(file, &w.old_side, e) && !free(vec![e], 0, 0).is_empty() {
            return Ok(Placed::new(e, Rung::Exact));
        }
    }
    let window = search_range(expected, file.len());
    let exact = free(
        seek::candidates(file, &w.old_side, window.clone(), Rung::Exact),
        0,
        0,
    );
    if let Some(r) = pick(exact, Rung::Offset) {
        return r.map(|at| Placed::new(at, Rung::Offset));
    }
    let anywhere = free(
        seek::candidates(file, &w.old_side, 0..file.len() + 1, Rung::Exact),
        0,
        0,
    );
    if let Some(r) = pick(anywhere, Rung::NumbersIgnored) {
        return r.map(|at| Placed::new(at, Rung::NumbersIgnored));
    }
    for rung in [Rung::TrailingWhitespace, Rung::Indentation] {
        let found = free(
            seek::candidates(file, &w.old_side, window.clone(), rung),
            0,
            0,
        );
        if let Some(r) = pick(found, rung) {
            return r.and_then(|at| loose(file, w, at, rung));
        }
    }
    if expected.is_some() {
        if let Some(r) = fuzzed(file, w, expected, max_fuzz, &free) {
            return r;
        }
    }
    Err(Miss::NotFound)
}

/// A placement at a whitespace rung, with the added lines re-indented for the indentation one.
fn loose(file: &Lines<'_>, w: &Want<'_, '_>, at: usize, rung: Rung) -> Result<Placed, Miss> {
    let mut p = Placed::new(at, rung);
    if rung == Rung::Indentation {
        let pairs = seek::indent_pairs(file, &w.old_side, at).unwrap_or_default();
        let added = w.added(0, 0);
        p.added = Some(seek::reindent(&pairs, &added).ok_or(Miss::IndentUndecided(at))?);
    }
    Ok(p)
}

/// GNU patch's fuzz, within the window: up to `max_fuzz` context lines left out at each end,
/// the rest matched exactly, and only where one place answers.
fn fuzzed(
    file: &Lines<'_>,
    w: &Want<'_, '_>,
    expected: Option<usize>,
    max_fuzz: usize,
    free: &dyn Fn(Vec<usize>, usize, usize) -> Vec<usize>,
) -> Option<Result<Placed, Miss>> {
    let mut tried = Vec::new();
    for fuzz in 1..=max_fuzz {
        let (front, back) = (fuzz.min(w.lead), fuzz.min(w.trail));
        if (front, back) == (0, 0) || tried.contains(&(front, back)) {
            continue;
        }
        tried.push((front, back));
        let pattern = &w.old_side[front..w.old_side.len() - back];
        if pattern.is_empty() {
            continue;
        }
        let window = search_range(expected.map(|e| e + front), file.len());
        let found = free(
            seek::candidates(file, pattern, window, Rung::Exact),
            front,
            back,
        );
        if let Some(r) = pick(found, Rung::Fuzz) {
            return Some(r.map(|at| Placed {
                at,
                front,
                back,
                added: None,
                rung: Rung::Fuzz,
            }));
        }
    }
    None
}
