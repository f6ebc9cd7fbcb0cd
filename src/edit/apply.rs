//! Applying placed hunks to a file's lines: every hunk or none.

use super::explain::{explain, hunk_title, rejection_text};
use super::parse::Hunk;
use super::render::Edit;
use super::{Lines, Op};

/// How a hunk was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub number: usize,
    /// 1-based line where the header said the hunk's old side starts (None if unnumbered).
    pub expected_line: Option<usize>,
    /// 1-based line of the old file where the hunk's old side was found.
    pub line: usize,
    /// Lines between the found place and the header's, corrected for the hunks before.
    pub offset: isize,
    /// Context lines ignored at either end to place the hunk (GNU patch's fuzz).
    pub fuzz: usize,
}

#[derive(Debug)]
pub struct Applied {
    pub content: Vec<u8>,
    pub placements: Vec<Placement>,
    pub edits: Vec<Edit>,
}

#[derive(Debug)]
pub struct Rejection {
    pub number: usize,
    pub message: String,
}

/// GNU patch's default fuzz factor.
pub const MAX_FUZZ: usize = 2;

fn matches_at(file: &Lines<'_>, pattern: &[&[u8]], at: usize) -> bool {
    pattern
        .iter()
        .enumerate()
        .all(|(k, want)| file.content(at + k) == *want)
}

/// Nearest place at or after `min` where `pattern` occurs, searching outward from `expected`
/// (forward first, as GNU patch).
pub(super) fn find(
    file: &Lines<'_>,
    pattern: &[&[u8]],
    expected: usize,
    min: usize,
) -> Option<usize> {
    let n = file.len();
    if pattern.len() > n || min > n - pattern.len() {
        return None;
    }
    let max_start = n - pattern.len();
    let expected = expected.clamp(min, max_start);
    let first = pattern.first().copied();
    let check = |at: usize| match first {
        Some(f) => file.content(at) == f && matches_at(file, pattern, at),
        None => true,
    };
    let mut d = 0;
    loop {
        let fwd_ok = expected + d <= max_start;
        let back_ok = d > 0 && expected >= min + d;
        if !fwd_ok && !back_ok {
            return None;
        }
        if fwd_ok && check(expected + d) {
            return Some(expected + d);
        }
        if back_ok && check(expected - d) {
            return Some(expected - d);
        }
        d += 1;
    }
}

/// True when a pattern of only blank lines occurs more than once at or after `min`: placing
/// it away from its stated line would be a guess.
fn ambiguous_blank(file: &Lines<'_>, pattern: &[&[u8]], min: usize) -> bool {
    if pattern.is_empty()
        || pattern
            .iter()
            .any(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
    {
        return false;
    }
    let n = file.len();
    let mut seen = 0;
    for at in min..=n.saturating_sub(pattern.len()) {
        if at + pattern.len() <= n && matches_at(file, pattern, at) {
            seen += 1;
            if seen > 1 {
                return true;
            }
        }
    }
    false
}

/// Apply every hunk or none. Hunks are placed in order, each after the previous one.
pub fn apply(old: &[u8], hunks: &[Hunk<'_>], max_fuzz: usize) -> Result<Applied, Rejection> {
    let file = Lines::new(old);
    let total = hunks.len();
    let mut placed: Vec<(usize, usize, usize)> = Vec::with_capacity(total);
    let mut placements = Vec::with_capacity(total);
    let mut min = 0usize;
    let mut offset: isize = 0;
    let mut rejections: Vec<(usize, String)> = Vec::new();
    for hunk in hunks {
        let old_side = hunk.old_side();
        let (lead, trail) = hunk.lead_trail();
        let written = hunk.written_position();
        let expected = match written {
            Some(w) => (w as isize + offset).max(0) as usize,
            None => min,
        };
        let mut found: Result<(usize, usize, usize, usize), String> = Err(String::new());
        let mut tried = Vec::new();
        for fuzz in 0..=max_fuzz {
            let front = fuzz.min(lead);
            let back = fuzz.min(trail);
            if tried.contains(&(front, back)) {
                continue;
            }
            tried.push((front, back));
            let pattern = &old_side[front..old_side.len() - back];
            if pattern.is_empty() && !old_side.is_empty() {
                continue;
            }
            if let Some(at) = find(&file, pattern, expected + front, min) {
                if at != expected + front && ambiguous_blank(&file, pattern, min) {
                    found = Err(format!(
                        "{} does not match at line {} and its lines are all blank, so they \
                         match in several places. Give the hunk context lines with text in them.",
                        hunk_title(hunk, total),
                        expected + 1
                    ));
                } else {
                    found = Ok((at, front, back, front.max(back)));
                }
                break;
            }
        }
        let (at, front, back, fuzz) = match found {
            Ok(place) => place,
            Err(why) => {
                let why = if why.is_empty() {
                    explain(&file, hunk, total, &old_side, expected, min, max_fuzz)
                } else {
                    why
                };
                // Keep going: the model is told about every hunk that fails at once.
                rejections.push((hunk.number, why));
                continue;
            }
        };
        let start = at as isize - front as isize;
        if let Some(w) = written {
            offset = start - w as isize;
        }
        placements.push(Placement {
            number: hunk.number,
            expected_line: written.map(|w| w + 1),
            line: (start.max(0) as usize) + 1,
            offset: written.map_or(0, |w| start - w as isize),
            fuzz,
        });
        min = at + old_side.len() - front - back;
        placed.push((at, front, back));
    }
    if let Some((first, _)) = rejections.first() {
        return Err(Rejection {
            number: *first,
            message: rejection_text(&rejections, total),
        });
    }
    Ok(assemble(&file, hunks, &placed, placements))
}

fn assemble(
    file: &Lines<'_>,
    hunks: &[Hunk<'_>],
    placed: &[(usize, usize, usize)],
    placements: Vec<Placement>,
) -> Applied {
    let eol = file.newline();
    let n = file.len();
    let added: usize = hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .filter(|l| l.op == Op::Add)
        .map(|l| l.text.len() + 2)
        .sum();
    let mut out: Vec<u8> = Vec::with_capacity(file.bytes.len() + added);
    let mut edits: Vec<Edit> = Vec::new();
    let mut cursor = 0usize;
    let mut new_no = 0usize;
    // The new line number the old last line ended up at, when it was kept.
    let mut old_last_at: Option<usize> = None;
    // The old line the last line written came from (None: an added line).
    let mut last_origin: Option<usize> = None;
    let mut touches_end_marker: Option<bool> = None;
    // Length of the ending given to the last line written when that line was an added one (its
    // text may itself end in a CR, which the ending must not be confused with).
    let mut added_eol: Option<usize> = None;
    let push_line = |out: &mut Vec<u8>, bytes: &[u8]| {
        if out.last().is_some_and(|b| *b != b'\n') {
            // The old last line had no newline and is no longer last.
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(bytes);
    };
    for (hunk, &(at, front, back)) in hunks.iter().zip(placed) {
        if at > cursor {
            push_line(&mut out, &file.bytes[file.offset(cursor)..file.offset(at)]);
            added_eol = None;
            new_no += at - cursor;
            last_origin = Some(at - 1);
            if at == n {
                old_last_at = Some(new_no - 1);
            }
        }
        let body = &hunk.lines[front..hunk.lines.len() - back];
        // A line the patch adds without saying its ending gets the ending of the lines the
        // hunk keeps or removes: in a file that mixes them, the diff of an LF region added to
        // a mostly-CRLF file must give LF lines back (found by fuzzing the round trip).
        let old_count = body.iter().filter(|l| l.op != Op::Add).count();
        let hunk_eol = file.newline_of(at..at + old_count).unwrap_or(eol);
        let mut old_i = at;
        let mut run: Option<(usize, usize)> = None;
        let mut marker = false;
        for line in body {
            match line.op {
                Op::Context => {
                    if let Some((os, ns)) = run.take() {
                        edits.push(Edit {
                            old: os..old_i,
                            new: ns..new_no,
                        });
                    }
                    push_line(&mut out, file.raw(old_i));
                    added_eol = None;
                    last_origin = Some(old_i);
                    if old_i + 1 == n {
                        old_last_at = Some(new_no);
                    }
                    old_i += 1;
                    new_no += 1;
                }
                Op::Remove => {
                    run.get_or_insert((old_i, new_no));
                    old_i += 1;
                }
                Op::Add => {
                    run.get_or_insert((old_i, new_no));
                    push_line(&mut out, line.text);
                    let ending: &[u8] = match line.cr {
                        Some(true) => b"\r\n",
                        Some(false) => b"\n",
                        None => hunk_eol,
                    };
                    out.extend_from_slice(ending);
                    added_eol = Some(ending.len());
                    last_origin = None;
                    new_no += 1;
                }
            }
            marker |= line.no_newline;
        }
        if let Some((os, ns)) = run.take() {
            edits.push(Edit {
                old: os..old_i,
                new: ns..new_no,
            });
        }
        if old_i == n && back == 0 {
            // This hunk reached the end of the file: if it speaks about the final newline
            // (a "\ No newline" marker), its new side decides.
            touches_end_marker = marker.then(|| {
                body.iter()
                    .rev()
                    .find(|l| l.op != Op::Remove)
                    .is_some_and(|l| l.no_newline)
            });
        } else {
            touches_end_marker = None;
        }
        cursor = old_i;
    }
    if cursor < n {
        push_line(&mut out, &file.bytes[file.offset(cursor)..]);
        added_eol = None;
        new_no += n - cursor;
        old_last_at = Some(new_no - 1);
        last_origin = Some(n - 1);
    }
    let want_no_newline = match touches_end_marker {
        Some(decided) => decided,
        None => file.lacks_final_newline(),
    };
    if want_no_newline {
        let kept = if let Some(len) = added_eol {
            out.len() - len
        } else if out.ends_with(b"\r\n") {
            out.len() - 2
        } else if out.ends_with(b"\n") {
            out.len() - 1
        } else {
            out.len()
        };
        // An empty last line cannot go without its newline: it would vanish.
        if kept > 0 && out[kept - 1] != b'\n' {
            out.truncate(kept);
        }
    } else if out.last().is_some_and(|b| *b != b'\n') {
        out.extend_from_slice(eol);
    }
    // Kept lines whose ending changed (the old last line, and the new last line) must show
    // in the diff.
    let new_lines = Lines::new(&out);
    let mut changed: Vec<(usize, usize)> = Vec::new();
    if let (Some(k), true) = (old_last_at, n > 0) {
        changed.push((n - 1, k));
    }
    if let (Some(o), Some(k)) = (last_origin, new_lines.len().checked_sub(1)) {
        changed.push((o, k));
    }
    let before = edits.len();
    for (o, k) in changed {
        let differs = k < new_lines.len() && o < n && new_lines.raw(k) != file.raw(o);
        if differs && !edits.iter().any(|e| e.old.contains(&o)) {
            edits.push(Edit {
                old: o..o + 1,
                new: k..k + 1,
            });
        }
    }
    if edits.len() != before {
        edits.sort_by_key(|e| (e.old.start, e.old.end));
    }
    Applied {
        content: out,
        placements,
        edits,
    }
}
