//! Placing every hunk of a file's patch, or none: each hunk by its own line numbers (in any
//! order, never overlapping another), climbing the ladder of [`seek`](super::seek) only while
//! exactly one place answers. Two candidates at a rung is a refusal that lists them, never a
//! pick. The new bytes are then built by [`build`](super::build).

use std::ops::Range;

use super::build::{assemble, Applied};
use super::explain::{explain, rejection_text, Miss};
use super::patch::Hunk;
use super::place::{Placed, Placement, Rejection, Want, FUZZ_WINDOW};
use super::seek::{self, Rung, WINDOW};
use super::{Lines, Op};

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
    // Elided lines have no place in the file: the hunk is where its own lines start.
    let front = if p.rung == Rung::Elided { 0 } else { p.front };
    let start = p.at as isize - front as isize;
    Placement {
        number: w.hunk.number,
        expected_line: w.stated.map(|s| s + 1),
        line: start.max(0) as usize + 1,
        offset: w.stated.map_or(0, |s| start - s as isize),
        fuzz: if p.rung == Rung::Fuzz {
            p.front.max(p.back)
        } else {
            0
        },
        rung: p.rung,
    }
}

/// A hunk placed on its own evidence: its exact lines occurring once in the whole file (or,
/// without line numbers, an insertion that its anchor or the file's end places). A hunk that
/// matches at its stated line but also elsewhere waits for the others: the file may have
/// shifted, and they tell by how much.
fn anchor(file: &Lines<'_>, w: &Want<'_, '_>) -> Option<Placed> {
    if w.old_side.is_empty() {
        return match (w.stated, &w.anchors, w.end) {
            (Some(_), _, _) => None,
            (None, _, Some(n)) => Some(Placed::new(n, Rung::NumbersIgnored)),
            (None, Some(a), _) if a.len() == 1 => Some(Placed::new(a[0] + 1, Rung::NumbersIgnored)),
            (None, _, _) if file.is_empty() => Some(Placed::new(0, Rung::Exact)),
            (None, _, _) => None,
        };
    }
    let mut all = seek::candidates(file, &w.old_side, 0..file.len() + 1, Rung::Exact);
    all.retain(|&p| w.fits(p, 0, 0));
    let [only] = all.as_slice() else {
        return None;
    };
    if let Some(s) = w.stated.filter(|s| s != only) {
        // A loose match elsewhere near the stated line competes with this one: the decision
        // waits for the other hunks' shifts (see `seek_hunk`).
        let window = search_range(Some(s), file.len());
        let rival = LOOSE.iter().any(|&rung| {
            loose_candidates(file, w, window.clone(), rung)
                .iter()
                .any(|p| p != only && w.fits(*p, 0, 0))
        });
        if rival {
            return None;
        }
    }
    let rung = match w.stated {
        Some(s) if s == *only => Rung::Exact,
        Some(s) if only.abs_diff(s) <= WINDOW => Rung::Offset,
        _ => Rung::NumbersIgnored,
    };
    Some(Placed::new(*only, rung))
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

/// The shift (found line − stated line) of each placed hunk, with its stated line.
fn shifts(wants: &[Want<'_, '_>], placed: &[Option<Placed>], i: usize) -> Vec<(usize, isize)> {
    wants
        .iter()
        .zip(placed)
        .enumerate()
        .filter(|(k, _)| *k != i)
        .filter_map(|(_, (w, p))| {
            let s = w.stated?;
            let p = p.as_ref()?;
            Some((s, p.at as isize - p.front as isize - s as isize))
        })
        .collect()
}

/// Where a hunk is expected: its stated line moved by the shift of the placed hunk whose
/// stated line is nearest (the file may have shifted since the patch was written).
pub(super) fn expected_line(
    wants: &[Want<'_, '_>],
    placed: &[Option<Placed>],
    i: usize,
) -> Option<usize> {
    let stated = wants[i].stated?;
    let shift = shifts(wants, placed, i)
        .into_iter()
        .min_by_key(|(s, _)| s.abs_diff(stated))
        .map_or(0, |(_, shift)| shift);
    Some((stated as isize + shift).max(0) as usize)
}

/// The lines where the hunk's numbers put it, given the placed hunks around it: between its
/// stated line moved by the shift of the nearest placed hunk above and of the nearest below
/// (one of them when only one side has any; the stated line itself when none is placed).
fn plausible(wants: &[Want<'_, '_>], placed: &[Option<Placed>], i: usize) -> Option<Range<usize>> {
    let stated = wants[i].stated?;
    let all = shifts(wants, placed, i);
    let above = all
        .iter()
        .filter(|(s, _)| *s <= stated)
        .max_by_key(|(s, _)| *s);
    let below = all
        .iter()
        .filter(|(s, _)| *s >= stated)
        .min_by_key(|(s, _)| *s);
    let (lo, hi) = match (above, below) {
        (Some(a), Some(b)) => (a.1.min(b.1), a.1.max(b.1)),
        (Some(x), None) | (None, Some(x)) => (x.1, x.1),
        (None, None) => (0, 0),
    };
    let at = |d: isize| (stated as isize + d).max(0) as usize;
    Some(at(lo)..at(hi) + 1)
}

/// The lines searched at a loose rung: a window around the expected line, or the whole file
/// for a hunk without line numbers.
fn search_range(expected: Option<usize>, n: usize) -> Range<usize> {
    match expected {
        Some(e) => e.saturating_sub(WINDOW)..(e + WINDOW + 1).min(n + 1),
        None => 0..n + 1,
    }
}

fn fuzz_range(expected: Option<usize>, n: usize) -> Range<usize> {
    match expected {
        Some(e) => e.saturating_sub(FUZZ_WINDOW)..(e + FUZZ_WINDOW + 1).min(n + 1),
        None => 0..0,
    }
}

/// The rungs looked for near the expected line after the exact one, strictest first.
const LOOSE: [Rung; 4] = [
    Rung::TrailingWhitespace,
    Rung::LostMarker,
    Rung::Indentation,
    Rung::ContextIndentation,
];

/// Every start in `range` where the hunk's old side answers at a loose rung.
fn loose_candidates(
    file: &Lines<'_>,
    w: &Want<'_, '_>,
    range: Range<usize>,
    rung: Rung,
) -> Vec<usize> {
    match rung {
        Rung::LostMarker | Rung::ContextIndentation => {
            seek::context_candidates(file, &w.old_side, &w.context, range, rung)
        }
        _ => seek::candidates(file, &w.old_side, range, rung),
    }
}

/// Climb the ladder for one hunk that is not an anchor. Every rung is asked, and one decision
/// is made from all their answers and the expected line: the places within the window of the
/// expected line (or, when there are none, the exact ones beyond it) are weighed; one place
/// (at its strictest rung) is taken; several are decided by the expected line only (one of
/// them there), else refused with the list. Rung order never decides between places. Fuzz
/// comes last, only when no rung answers, and is refused when a place elsewhere matches with
/// all whitespace ignored.
// Long: one decision made from every rung's answers and the expected line, as its comment says;
// split, the weighing of candidates found at different rungs would be spread over functions
// that each see part of them.
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
        return insertion(file, wants, placed, i, expected);
    }
    let len = w.old_side.len();
    let free = |found: Vec<usize>, front: usize, back: usize| -> Vec<usize> {
        found
            .into_iter()
            .filter(|&p| w.fits(p, front, back))
            .filter(|p| !collides(&(*p..*p + len - front - back), wants, placed))
            .collect()
    };
    if let Some(range) = plausible(wants, placed, i) {
        let at_numbers = free(
            seek::candidates(file, &w.old_side, range, Rung::Exact),
            0,
            0,
        );
        match at_numbers.as_slice() {
            [] => {}
            [at] if Some(*at) == w.stated => return Ok(Placed::new(*at, Rung::Exact)),
            [at] => return Ok(Placed::new(*at, Rung::Offset)),
            _ => return Err(Miss::Ambiguous(Rung::Offset, at_numbers)),
        }
    }
    let window = search_range(expected, file.len());
    // (start, strictest rung answering there), in the order found.
    let mut found: Vec<(usize, Rung)> = Vec::new();
    let near = |p: usize| expected.map_or(true, |e| p.abs_diff(e) <= WINDOW);
    for p in free(
        seek::candidates(file, &w.old_side, 0..file.len() + 1, Rung::Exact),
        0,
        0,
    ) {
        let rung = if near(p) {
            Rung::Offset
        } else {
            Rung::NumbersIgnored
        };
        found.push((p, rung));
    }
    for rung in LOOSE {
        for p in free(loose_candidates(file, w, window.clone(), rung), 0, 0) {
            if !found.iter().any(|f| f.0 == p) {
                found.push((p, rung));
            }
        }
    }
    // Places near the expected line are weighed first; a place far from it only when none is
    // near.
    let (near_found, far): (Vec<_>, Vec<_>) = found.into_iter().partition(|f| near(f.0));
    let found = if near_found.is_empty() {
        far
    } else {
        near_found
    };
    let chosen = match found.as_slice() {
        [] => None,
        [one] => Some(*one),
        _ => match expected.and_then(|e| found.iter().find(|f| f.0 == e)) {
            Some(at) => Some(*at),
            None => {
                let loosest = found.iter().map(|f| f.1).max().unwrap_or(Rung::Offset);
                let mut at: Vec<usize> = found.iter().map(|f| f.0).collect();
                at.sort_unstable();
                return Err(Miss::Ambiguous(loosest, at));
            }
        },
    };
    if let Some((at, rung)) = chosen {
        return loose(file, w, at, rung);
    }
    if let Some(r) = elided(file, w, &free) {
        return r;
    }
    if expected.is_some() {
        if let Some(r) = fuzzed(file, w, expected, max_fuzz, &free) {
            // A place where the lines match with all whitespace ignored is better evidence
            // than fuzz: fuzz elsewhere than there is refused.
            let squashed = seek::squashed_candidates(file, &w.old_side, window);
            return match r {
                Ok(p) if squashed.iter().any(|&s| s + p.front != p.at) => {
                    let mut at = squashed;
                    at.push(p.at.saturating_sub(p.front));
                    at.sort_unstable();
                    at.dedup();
                    Err(Miss::Ambiguous(Rung::Fuzz, at))
                }
                r => r,
            };
        }
    }
    Err(Miss::NotFound)
}

/// A hunk that only adds lines, at its stated line moved as the hunks around it were.
fn insertion(
    file: &Lines<'_>,
    wants: &[Want<'_, '_>],
    placed: &[Option<Placed>],
    i: usize,
    expected: Option<usize>,
) -> Result<Placed, Miss> {
    let (Some(e), Some(s)) = (expected, wants[i].stated) else {
        return Err(Miss::AddOnlyUnnumbered);
    };
    let at = e.min(file.len());
    let claimed = wants.iter().zip(placed).find_map(|(w, p)| {
        let span = p.as_ref()?.span(w);
        clash(&(at..at), &span).then_some((w.hunk.number, span.start + 1))
    });
    if let Some((other, line)) = claimed {
        return Err(Miss::Overlap(other, line));
    }
    let rung = if at == s { Rung::Exact } else { Rung::Offset };
    Ok(Placed::new(at, rung))
}

/// A placement, with the added lines re-indented for the indentation rung.
fn loose(file: &Lines<'_>, w: &Want<'_, '_>, at: usize, rung: Rung) -> Result<Placed, Miss> {
    let mut p = Placed::new(at, rung);
    if rung != Rung::Indentation {
        return Ok(p);
    }
    let pairs = seek::indent_pairs(file, &w.old_side, at).unwrap_or_default();
    let added = w.added(0, 0);
    let reindented = seek::reindent(&pairs, &added).ok_or(Miss::IndentUndecided(at))?;
    let proven = w
        .old_side
        .iter()
        .zip(&w.context)
        .any(|(l, ctx)| !ctx && !seek::rtrim(l).is_empty());
    if proven || !seek::shifted(&pairs) {
        p.added = Some(reindented);
        return Ok(p);
    }
    // Only context lines, all shifted alike: the whole hunk was shifted (its added lines too)
    // or only its context was. The added lines' neighbours in the file decide: the reading
    // under which each run of added lines starts at the indentation of a file line next to
    // it, when only one reading does.
    let written: Vec<Vec<u8>> = added.iter().map(|l| l.to_vec()).collect();
    match (
        fits_neighbours(file, w, at, &reindented),
        fits_neighbours(file, w, at, &written),
    ) {
        (true, false) => p.added = Some(reindented),
        (false, true) => p.rung = Rung::ContextIndentation,
        _ => return Err(Miss::IndentUndecided(at)),
    }
    Ok(p)
}

/// True when every run of added lines (as `added` gives them, in hunk order) starts at the
/// indentation of the nearest non-blank file line before or after it within the hunk.
fn fits_neighbours(file: &Lines<'_>, w: &Want<'_, '_>, at: usize, added: &[Vec<u8>]) -> bool {
    let indent = |l: &[u8]| -> Option<Vec<u8>> {
        let (i, rest) = seek::split_indent(l);
        (!rest.is_empty()).then(|| i.to_vec())
    };
    let lines = &w.hunk.lines;
    let (mut old_i, mut k) = (0, 0);
    let mut i = 0;
    while i < lines.len() {
        if lines[i].op != Op::Add {
            old_i += 1;
            i += 1;
            continue;
        }
        let run = lines[i..].iter().take_while(|l| l.op == Op::Add).count();
        let first = added[k..k + run].iter().find_map(|l| indent(l));
        let before = (0..old_i).rev().find_map(|o| indent(file.content(at + o)));
        let after = (old_i..w.old_side.len()).find_map(|o| indent(file.content(at + o)));
        if let Some(first) = first {
            if before.as_ref() != Some(&first) && after.as_ref() != Some(&first) {
                return false;
            }
        }
        k += run;
        i += run;
    }
    true
}

/// GNU patch's fuzz, within the window: up to `max_fuzz` context lines left out at either end
/// (or both), the rest matched exactly. Every way of leaving lines out at one fuzz level is
/// tried; the hunk is placed only when they all point at one place in the window.
fn fuzzed(
    file: &Lines<'_>,
    w: &Want<'_, '_>,
    expected: Option<usize>,
    max_fuzz: usize,
    free: &dyn Fn(Vec<usize>, usize, usize) -> Vec<usize>,
) -> Option<Result<Placed, Miss>> {
    let mut tried = Vec::new();
    for fuzz in 1..=max_fuzz {
        // (hunk start, front, back) of every answer at this level (a start may lie before the
        // file's first line when the lines left out would).
        let mut found: Vec<(isize, usize, usize)> = Vec::new();
        for (front, back) in fuzz_shapes(fuzz) {
            // Context beyond the usual 3 lines is extra assurance: it does not count as fuzz.
            let front = (front + w.lead.saturating_sub(3) * usize::from(front > 0)).min(w.lead);
            let back = (back + w.trail.saturating_sub(3) * usize::from(back > 0)).min(w.trail);
            if (front, back) == (0, 0) || tried.contains(&(front, back)) {
                continue;
            }
            tried.push((front, back));
            let pattern = &w.old_side[front..w.old_side.len() - back];
            if pattern.is_empty() {
                continue;
            }
            let window = fuzz_range(expected.map(|e| e + front), file.len());
            let at = free(
                seek::candidates(file, pattern, window, Rung::Exact),
                front,
                back,
            );
            found.extend(
                at.into_iter()
                    .map(|p| (p as isize - front as isize, front, back)),
            );
        }
        let mut starts: Vec<isize> = found.iter().map(|f| f.0).collect();
        starts.sort_unstable();
        starts.dedup();
        // Fuzz is the weakest evidence: several places in its window are refused even when one
        // is where the numbers say (a similar spot a few lines away is the usual trap).
        match starts.len() {
            0 => continue,
            1 => {
                let &(start, front, back) = found.iter().min_by_key(|f| f.1 + f.2)?;
                return Some(Ok(Placed {
                    at: (start + front as isize) as usize,
                    front,
                    back,
                    added: None,
                    rung: Rung::Fuzz,
                }));
            }
            _ => {
                let lines = starts.iter().map(|s| (*s).max(0) as usize).collect();
                return Some(Err(Miss::Ambiguous(Rung::Fuzz, lines)));
            }
        }
    }
    None
}

/// A hunk whose leading or trailing context has a line standing for lines left out (`...`,
/// `// ... existing code ...`): that line and the context beyond it are dropped, and the rest
/// must occur as written once in the whole file (the dropped lines give no position, so the
/// rest must anchor itself). An elision between changes is not guessed at.
fn elided(
    file: &Lines<'_>,
    w: &Want<'_, '_>,
    free: &dyn Fn(Vec<usize>, usize, usize) -> Vec<usize>,
) -> Option<Result<Placed, Miss>> {
    let lines = &w.hunk.lines;
    let marked = |l: &super::HunkLine<'_>| seek::is_elision(l.text);
    let front = lines[..w.lead]
        .iter()
        .rposition(marked)
        .map_or(0, |m| m + 1);
    let back = lines[lines.len() - w.trail..]
        .iter()
        .position(marked)
        .map_or(0, |m| w.trail - m);
    if front + back == 0 || front + back >= lines.len() {
        return None;
    }
    let pattern = &w.old_side[front..w.old_side.len() - back];
    let body = &lines[front..lines.len() - back];
    if pattern.iter().all(|l| seek::rtrim(l).is_empty()) || body.iter().any(marked) {
        return None;
    }
    let at = free(
        seek::candidates(file, pattern, 0..file.len() + 1, Rung::Exact),
        front,
        back,
    );
    match at.as_slice() {
        [] => None,
        [one] => Some(Ok(Placed {
            at: *one,
            front,
            back,
            added: None,
            rung: Rung::Elided,
        })),
        _ => Some(Err(Miss::Ambiguous(Rung::Elided, at))),
    }
}

/// The (front, back) context lines left out at one fuzz level, fewest first.
fn fuzz_shapes(fuzz: usize) -> Vec<(usize, usize)> {
    let mut shapes: Vec<(usize, usize)> = (0..=fuzz).flat_map(|a| [(fuzz, a), (a, fuzz)]).collect();
    shapes.sort_by_key(|(f, b)| (f + b, *f));
    shapes.dedup();
    shapes
}
