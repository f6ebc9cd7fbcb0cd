//! Printing the diff of an edit, and finding the line edits between two versions.

use std::ops::Range;

use super::Lines;

/// A replaced range of lines: `old` lines of the old file became `new` lines of the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// The unified diff of an edit for a result: `a/<path>` → `b/<path>` (or `/dev/null` for a new
/// file), cut at `cap` bytes. Non-UTF-8 bytes show as U+FFFD here only, never in the file.
pub fn diff_text(
    display: &str,
    old: Option<&[u8]>,
    new: &[u8],
    edits: Option<Vec<Edit>>,
    cap: usize,
) -> (String, bool) {
    let old_bytes = old.unwrap_or(b"");
    let old_lines = Lines::new(old_bytes);
    let new_lines = Lines::new(new);
    let edits = edits.unwrap_or_else(|| line_edits(&old_lines, &new_lines));
    let old_label = if old.is_some() {
        format!("a/{display}")
    } else {
        "/dev/null".to_string()
    };
    render(
        &old_lines,
        &new_lines,
        &edits,
        &old_label,
        &format!("b/{display}"),
        cap,
    )
}

/// Unified diff text of an edit, with 3 lines of context, cut at about `cap` bytes.
/// Returns the text and whether it was cut.
pub fn render(
    old: &Lines<'_>,
    new: &Lines<'_>,
    edits: &[Edit],
    old_label: &str,
    new_label: &str,
    cap: usize,
) -> (String, bool) {
    const CONTEXT: usize = 3;
    let mut out: Vec<u8> = Vec::new();
    if edits.is_empty() {
        return (String::new(), false);
    }
    out.extend_from_slice(format!("--- {old_label}\n+++ {new_label}\n").as_bytes());
    let mut truncated = false;
    let mut i = 0;
    while i < edits.len() {
        let mut j = i;
        while j + 1 < edits.len() && edits[j + 1].old.start <= edits[j].old.end + 2 * CONTEXT {
            j += 1;
        }
        let (first, last) = (&edits[i], &edits[j]);
        let before = CONTEXT.min(first.old.start).min(first.new.start);
        let after = CONTEXT
            .min(old.len().saturating_sub(last.old.end))
            .min(new.len().saturating_sub(last.new.end));
        let (os, oe) = (first.old.start - before, last.old.end + after);
        let (ns, ne) = (first.new.start - before, last.new.end + after);
        out.extend_from_slice(
            format!(
                "@@ -{} +{} @@\n",
                range_text(os, oe - os),
                range_text(ns, ne - ns)
            )
            .as_bytes(),
        );
        let mut ctx_from = os;
        for e in &edits[i..=j] {
            for k in ctx_from..e.old.start {
                diff_line(&mut out, b' ', old.raw(k));
            }
            for k in e.old.clone() {
                diff_line(&mut out, b'-', old.raw(k));
            }
            for k in e.new.clone() {
                diff_line(&mut out, b'+', new.raw(k));
            }
            ctx_from = e.old.end;
        }
        for k in ctx_from..oe {
            diff_line(&mut out, b' ', old.raw(k));
        }
        i = j + 1;
        if out.len() > cap && i < edits.len() {
            truncated = true;
            break;
        }
    }
    if out.len() > cap {
        let cut = out[..cap]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |p| p + 1);
        out.truncate(cut);
        truncated = true;
    }
    (String::from_utf8_lossy(&out).into_owned(), truncated)
}

fn range_text(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

fn diff_line(out: &mut Vec<u8>, sign: u8, raw: &[u8]) {
    out.push(sign);
    out.extend_from_slice(raw);
    if !raw.ends_with(b"\n") {
        out.extend_from_slice(b"\n\\ No newline at end of file\n");
    }
}

/// Line edits between two versions of a file (for a whole-file rewrite), found with Myers'
/// algorithm; gives up on minimality after a short deadline on huge inputs.
pub fn line_edits(old: &Lines<'_>, new: &Lines<'_>) -> Vec<Edit> {
    let a: Vec<&[u8]> = (0..old.len()).map(|i| old.raw(i)).collect();
    let b: Vec<&[u8]> = (0..new.len()).map(|i| new.raw(i)).collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(250);
    let ops =
        similar::capture_diff_slices_deadline(similar::Algorithm::Myers, &a, &b, Some(deadline));
    // The edits are the gaps between the equal runs. similar's compaction can give a Delete a
    // new-side index past an equal run that follows it (Delete 2..3 at new 3, then Equal 3..4 ↔
    // 2..3), so the other ops' ranges are not trusted.
    let mut edits: Vec<Edit> = Vec::new();
    let (mut o_at, mut n_at) = (0, 0);
    for op in ops {
        let (tag, o, n) = op.as_tag_tuple();
        if tag != similar::DiffTag::Equal || o.is_empty() {
            continue;
        }
        if o.start < o_at || n.start < n_at || o.len() != n.len() {
            // Not a consistent alignment: say the whole file changed rather than guess.
            return vec![Edit {
                old: 0..old.len(),
                new: 0..new.len(),
            }];
        }
        if o.start > o_at || n.start > n_at {
            edits.push(Edit {
                old: o_at..o.start,
                new: n_at..n.start,
            });
        }
        (o_at, n_at) = (o.end, n.end);
    }
    if o_at < old.len() || n_at < new.len() {
        edits.push(Edit {
            old: o_at..old.len(),
            new: n_at..new.len(),
        });
    }
    edits
}
