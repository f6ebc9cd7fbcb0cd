//! What placing a hunk works with and yields, shared by the placer (src/edit/apply.rs), the
//! builder of the new bytes (src/edit/build.rs) and the explanation of a miss
//! (src/edit/explain.rs): a hunk as the placer sees it ([`Want`]), where it goes ([`Placed`]),
//! how it was placed ([`Placement`]) or why not ([`Rejection`]), and the fuzz limits.

use std::ops::Range;

use super::patch::Hunk;
use super::seek::{self, Rung};
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
    /// For each old-side line: a context line (else a removed one).
    pub context: Vec<bool>,
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
    pub(super) fn new(hunk: &'h Hunk<'a>, file: &Lines<'_>) -> Self {
        let (lead, trail) = hunk.lead_trail();
        let anchors = hunk.anchor.map(|a| {
            (0..file.len())
                .filter(|&i| seek::rtrim(file.content(i)).trim_ascii_start() == a.as_bytes())
                .collect()
        });
        Want {
            hunk,
            old_side: hunk.old_side(),
            context: hunk
                .lines
                .iter()
                .filter(|l| l.op != Op::Add)
                .map(|l| l.op == Op::Context)
                .collect(),
            lead,
            trail,
            stated: hunk.written_position(),
            anchors,
            end: hunk.at_end.then_some(file.len()),
        }
    }

    /// True when the hunk's (trimmed) old side may start at `p`: after its anchor, and at the
    /// end of the file when it says so.
    pub(super) fn fits(&self, p: usize, front: usize, back: usize) -> bool {
        let len = self.old_side.len() - front - back;
        self.end.map_or(true, |n| p + len + back == n)
            && self.anchors.as_ref().map_or(true, |a| {
                a.iter().any(|&line| line < p.saturating_sub(front))
            })
    }

    pub(super) fn added(&self, front: usize, back: usize) -> Vec<&'a [u8]> {
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
    pub(super) fn new(at: usize, rung: Rung) -> Placed {
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

/// Fuzz, the weakest evidence, is looked for this close to the expected line only.
pub const FUZZ_WINDOW: usize = 15;
