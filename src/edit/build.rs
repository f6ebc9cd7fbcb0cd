//! Building the new bytes once every hunk has its place: the file's own lines between and
//! inside the hunks (context keeps the file's bytes, whitespace included), the added lines with
//! the line ending of the lines around them, the final newline as the patch says, and the line
//! edits that describe the change for its diff.

use super::place::{Placed, Placement, Want};
use super::render::Edit;
use super::{Lines, Op};

#[derive(Debug)]
pub struct Applied {
    pub content: Vec<u8>,
    pub placements: Vec<Placement>,
    pub edits: Vec<Edit>,
}

/// The new file as it is being written.
struct Builder<'f, 'a> {
    file: &'f Lines<'a>,
    eol: &'static [u8],
    out: Vec<u8>,
    edits: Vec<Edit>,
    /// Next old line to copy.
    cursor: usize,
    /// Lines written so far.
    new_no: usize,
    /// The new line number the old last line ended up at, when it was kept.
    old_last_at: Option<usize>,
    /// The old line the last line written came from (None: an added line).
    last_origin: Option<usize>,
    /// What the last hunk reaching the end says about the final newline (None: nothing).
    end_marker: Option<bool>,
    /// Length of the ending given to the last line written when it was an added one (its text
    /// may itself end in a CR, which the ending must not be confused with).
    added_eol: Option<usize>,
}

impl Builder<'_, '_> {
    fn push_line(&mut self, bytes: &[u8]) {
        if self.out.last().is_some_and(|b| *b != b'\n') {
            // The old last line had no newline and is no longer last.
            self.out.extend_from_slice(self.eol);
        }
        self.out.extend_from_slice(bytes);
    }

    /// Copy the old lines up to `to` unchanged.
    fn copy_to(&mut self, to: usize) {
        let n = self.file.len();
        if to <= self.cursor {
            return;
        }
        let bytes = &self.file.bytes[self.file.offset(self.cursor)..self.file.offset(to)];
        self.push_line(bytes);
        self.added_eol = None;
        self.new_no += to - self.cursor;
        self.last_origin = Some(to - 1);
        if to == n {
            self.old_last_at = Some(self.new_no - 1);
        }
        self.cursor = to;
    }

    fn close_run(&mut self, run: &mut Option<(usize, usize)>, old_i: usize) {
        if let Some((os, ns)) = run.take() {
            self.edits.push(Edit {
                old: os..old_i,
                new: ns..self.new_no,
            });
        }
    }

    /// Write one placed hunk.
    fn hunk(&mut self, want: &Want<'_, '_>, placed: &Placed) {
        self.copy_to(placed.at);
        let lines = &want.hunk.lines;
        let body = &lines[placed.front..lines.len() - placed.back];
        // A line the patch adds without saying its ending gets the ending of the lines the
        // hunk keeps or removes: in a file that mixes them, the diff of an LF region added to
        // a mostly-CRLF file must give LF lines back (found by fuzzing the round trip).
        let old_count = body.iter().filter(|l| l.op != Op::Add).count();
        let hunk_eol = self
            .file
            .newline_of(placed.at..placed.at + old_count)
            .unwrap_or(self.eol);
        let mut old_i = placed.at;
        let mut run: Option<(usize, usize)> = None;
        let mut marker = false;
        let mut added_k = 0;
        for line in body {
            match line.op {
                Op::Context => {
                    self.close_run(&mut run, old_i);
                    self.push_line(self.file.raw(old_i));
                    self.added_eol = None;
                    self.last_origin = Some(old_i);
                    if old_i + 1 == self.file.len() {
                        self.old_last_at = Some(self.new_no);
                    }
                    old_i += 1;
                    self.new_no += 1;
                }
                Op::Remove => {
                    run.get_or_insert((old_i, self.new_no));
                    old_i += 1;
                }
                Op::Add => {
                    run.get_or_insert((old_i, self.new_no));
                    let text = match &placed.added {
                        Some(re) => re.get(added_k).map_or(line.text, |v| v.as_slice()),
                        None => line.text,
                    };
                    added_k += 1;
                    self.push_line(text);
                    let ending: &[u8] = match line.cr {
                        Some(true) => b"\r\n",
                        Some(false) => b"\n",
                        None => hunk_eol,
                    };
                    self.out.extend_from_slice(ending);
                    self.added_eol = Some(ending.len());
                    self.last_origin = None;
                    self.new_no += 1;
                }
            }
            marker |= line.no_newline;
        }
        self.close_run(&mut run, old_i);
        self.end_marker = if old_i == self.file.len() && placed.back == 0 {
            // This hunk reached the end of the file: if it speaks about the final newline
            // (a "\ No newline" marker), its new side decides.
            marker.then(|| {
                body.iter()
                    .rev()
                    .find(|l| l.op != Op::Remove)
                    .is_some_and(|l| l.no_newline)
            })
        } else {
            None
        };
        self.cursor = old_i;
    }

    /// The final newline: kept, added or taken away as the file and the patch say.
    fn final_newline(&mut self) {
        let want_no_newline = match self.end_marker {
            Some(decided) => decided,
            None => self.file.lacks_final_newline(),
        };
        let out = &mut self.out;
        if want_no_newline {
            let kept = if let Some(len) = self.added_eol {
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
            out.extend_from_slice(self.eol);
        }
    }

    /// Kept lines whose ending changed (the old last line, and the new last line) must show
    /// in the diff.
    fn ending_edits(&mut self) {
        let n = self.file.len();
        let new_lines = Lines::new(&self.out);
        let mut changed: Vec<(usize, usize)> = Vec::new();
        if let (Some(k), true) = (self.old_last_at, n > 0) {
            changed.push((n - 1, k));
        }
        if let (Some(o), Some(k)) = (self.last_origin, new_lines.len().checked_sub(1)) {
            changed.push((o, k));
        }
        let before = self.edits.len();
        for (o, k) in changed {
            let differs = k < new_lines.len() && o < n && new_lines.raw(k) != self.file.raw(o);
            if differs && !self.edits.iter().any(|e| e.old.contains(&o)) {
                self.edits.push(Edit {
                    old: o..o + 1,
                    new: k..k + 1,
                });
            }
        }
        if self.edits.len() != before {
            self.edits.sort_by_key(|e| (e.old.start, e.old.end));
        }
    }
}

/// The new file from placed hunks (in patch order; written in file order).
pub(super) fn assemble(
    file: &Lines<'_>,
    wants: &[Want<'_, '_>],
    placed: &[Placed],
    placements: Vec<Placement>,
) -> Applied {
    let added: usize = wants
        .iter()
        .flat_map(|w| w.hunk.lines.iter())
        .filter(|l| l.op == Op::Add)
        .map(|l| l.text.len() + 2)
        .sum();
    let mut b = Builder {
        file,
        eol: file.newline(),
        out: Vec::with_capacity(file.bytes.len() + added),
        edits: Vec::new(),
        cursor: 0,
        new_no: 0,
        old_last_at: None,
        last_origin: None,
        end_marker: None,
        added_eol: None,
    };
    let mut order: Vec<usize> = (0..placed.len()).collect();
    // In file order; an insertion at a line goes before a hunk that starts there.
    order.sort_by_key(|&i| (placed[i].at, !placed[i].span(&wants[i]).is_empty()));
    for i in order {
        b.hunk(&wants[i], &placed[i]);
    }
    b.copy_to(file.len());
    b.final_newline();
    b.ending_edits();
    Applied {
        content: b.out,
        placements,
        edits: b.edits,
    }
}
