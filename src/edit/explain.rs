//! Why a hunk does not apply, in words a model can act on.

use super::patch::Hunk;
use super::place::{Placed, Want, FUZZ_WINDOW};
use super::seek::{self, Rung, WINDOW};
use super::{Lines, Op};

/// Why the placer gave up on a hunk.
#[derive(Debug, Clone)]
pub(super) enum Miss {
    /// No rung found the lines.
    NotFound,
    /// Several places answer at this rung (0-based starts).
    Ambiguous(Rung, Vec<usize>),
    /// Its lines are the lines another hunk (this number) claims, from this 1-based line.
    Overlap(usize, usize),
    /// It only adds lines and has no line number in a non-empty file.
    AddOnlyUnnumbered,
    /// The indentation matched at this line, but the readings of its shift disagree about the
    /// added lines.
    IndentUndecided(usize),
}

/// Hunks explained in full in one rejection message.
const MAX_EXPLAINED: usize = 3;

pub(super) fn rejection_text(rejections: &[(usize, String)], total: usize) -> String {
    let numbers: Vec<String> = rejections.iter().map(|(n, _)| n.to_string()).collect();
    let mut msg = if rejections.len() == 1 {
        format!(
            "hunk {} of {total} does not apply; no hunk was applied.",
            numbers[0]
        )
    } else {
        format!(
            "{} of {total} hunks do not apply (hunks {}); no hunk was applied.",
            rejections.len(),
            numbers.join(", ")
        )
    };
    for (_, why) in rejections.iter().take(MAX_EXPLAINED) {
        msg.push_str("\n\n");
        msg.push_str(why);
    }
    if rejections.len() > MAX_EXPLAINED {
        msg.push_str(&format!(
            "\n\n… and {} more hunks that do not apply.",
            rejections.len() - MAX_EXPLAINED
        ));
    }
    msg
}

pub(super) fn hunk_title(hunk: &Hunk<'_>, total: usize) -> String {
    format!(
        "Hunk {} of {total} (`{}`, patch line {})",
        hunk.number, hunk.header, hunk.patch_line
    )
}

/// The bytes without ASCII whitespace: how near-misses are found when spacing differs.
pub(crate) fn squash(text: &[u8]) -> Vec<u8> {
    text.iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect()
}

/// A line as shown in an error message: lossy UTF-8, shortened.
pub(crate) fn show(text: &[u8]) -> String {
    crate::text::shorten(&String::from_utf8_lossy(text), 160)
}

/// Why a hunk does not apply, in words a model can act on: what the placer saw first, then the
/// nearest thing the file has, checked in order of how likely it is the real cause.
pub(super) fn explain(
    file: &Lines<'_>,
    wants: &[Want<'_, '_>],
    placed: &[Option<Placed>],
    i: usize,
    expected: Option<usize>,
    miss: &Miss,
    max_fuzz: usize,
) -> String {
    let w = &wants[i];
    let mut msg = format!("{} does not apply.", hunk_title(w.hunk, wants.len()));
    match miss {
        Miss::NotFound => {}
        Miss::Ambiguous(rung, at) => return ambiguous(msg, w, *rung, at),
        Miss::Overlap(other, line) => {
            msg.push_str(&format!(
                " Its lines are also claimed by hunk {other} (from line {line}): hunks must not \
                 overlap. Merge them into one hunk, or give each its own lines."
            ));
            return msg;
        }
        Miss::AddOnlyUnnumbered => {
            msg.push_str(
                " It only adds lines and its header has no line numbers, so nothing says where \
                 they go. Give it context lines (' ') around the addition, or a header like \
                 `@@ -12,0 +13,2 @@`.",
            );
            return msg;
        }
        Miss::IndentUndecided(at) => {
            msg.push_str(&format!(
                " Its lines match from line {} when indentation is compared by width, but the \
                 indentation of its added lines can be read more than one way (their tabs and \
                 spaces, or whether they shifted with the context lines). Copy the file's \
                 indentation exactly.",
                at + 1
            ));
            return msg;
        }
    }
    let e = expected.unwrap_or(0);
    expect_lines(&mut msg, &w.old_side, expected);
    if let Some(hint) = overlap_hint(file, wants, placed, i) {
        msg.push_str(&hint);
        return msg;
    }
    if let Some(hint) = elision_hint(&w.old_side) {
        msg.push_str(&hint);
        return msg;
    }
    if let Some(hint) = whitespace_hint(file, &w.old_side, expected) {
        msg.push_str(&hint);
        return msg;
    }
    if expected.is_some() {
        msg.push_str(&first_difference(file, &w.old_side, e));
    }
    msg.push_str(&removed_line_hint(file, w.hunk));
    msg.push_str(&format!(
        "\nIt was looked for as written anywhere in the file, within {WINDOW} lines of its stated \
         line also ignoring trailing whitespace and indentation, and within {FUZZ_WINDOW} lines \
         with up to {max_fuzz} context lines ignored at each end. Read the file again and make \
         the hunk's context and '-' lines match it exactly."
    ));
    msg
}

fn expect_lines(msg: &mut String, old_side: &[&[u8]], expected: Option<usize>) {
    match expected {
        Some(e) => msg.push_str(&format!(
            " It expects these {} lines at line {}:",
            old_side.len(),
            e + 1
        )),
        None => msg.push_str(&format!(" It expects these {} lines:", old_side.len())),
    }
    for line in old_side.iter().take(8) {
        msg.push_str(&format!("\n  |{}", show(line)));
    }
    if old_side.len() > 8 {
        msg.push_str(&format!("\n  … ({} more)", old_side.len() - 8));
    }
}

fn line_list(at: &[usize]) -> String {
    let mut shown: Vec<String> = at.iter().take(10).map(|p| (p + 1).to_string()).collect();
    if at.len() > 10 {
        shown.push("…".into());
    }
    shown.join(", ")
}

fn ambiguous(mut msg: String, w: &Want<'_, '_>, rung: Rung, at: &[usize]) -> String {
    let blank = w
        .old_side
        .iter()
        .all(|l| l.iter().all(|b| b.is_ascii_whitespace()));
    let near = match (rung, w.stated) {
        (Rung::NumbersIgnored, _) | (_, None) => String::new(),
        (_, Some(s)) => format!(" within {WINDOW} lines of its stated line {}", s + 1),
    };
    msg.push_str(&format!(
        " Its lines match {}{near} at {} places, starting at lines {}, so where it goes would \
         be a guess.",
        rung.describe(),
        at.len(),
        line_list(at)
    ));
    if blank {
        msg.push_str(" Its lines are all blank, so they match in many places.");
    }
    msg.push_str(
        " Give it the right line numbers (`@@ -N,count +N,count @@`) or more context lines with \
         text in them.",
    );
    msg
}

/// Its exact lines occur, but only where another hunk already applies.
fn overlap_hint(
    file: &Lines<'_>,
    wants: &[Want<'_, '_>],
    placed: &[Option<Placed>],
    i: usize,
) -> Option<String> {
    let w = &wants[i];
    let all = seek::candidates(file, &w.old_side, 0..file.len() + 1, Rung::Exact);
    let at = *all.first()?;
    let other = wants
        .iter()
        .zip(placed)
        .enumerate()
        .find_map(|(k, (o, p))| {
            let span = p.as_ref()?.span(o);
            (k != i && span.start < at + w.old_side.len() && at < span.end).then_some(o.hunk.number)
        })?;
    Some(format!(
        "\nIts lines are in the file at line {}, but hunk {other} already changes lines there: \
         hunks must not overlap. Merge them into one hunk.",
        at + 1
    ))
}

/// A line that stands for lines left out (`...`, `// ... existing code ...`).
fn elision_hint(old_side: &[&[u8]]) -> Option<String> {
    let elided = old_side.iter().find(|l| {
        let t = String::from_utf8_lossy(l);
        let t = t.trim();
        // After a comment marker or punctuation: `// ...`, `# …`, `<!-- ... -->`.
        let core = t.trim_start_matches(|c: char| c.is_ascii_punctuation() && c != '.' || c == ' ');
        core.starts_with("...") || core.starts_with('…')
    })?;
    Some(format!(
        "\nIts line `{}` seems to stand for lines left out. A hunk must list every line it \
         covers: copy them from the file, or make several smaller hunks.",
        show(elided)
    ))
}

/// The lines occur with other whitespace: where, and why no rung took them.
fn whitespace_hint(
    file: &Lines<'_>,
    old_side: &[&[u8]],
    expected: Option<usize>,
) -> Option<String> {
    let want: Vec<Vec<u8>> = old_side.iter().map(|l| squash(l)).collect();
    let n = file.len();
    if n < want.len() {
        return None;
    }
    let found: Vec<usize> = (0..=n - want.len())
        .filter(|&p| {
            want.iter()
                .enumerate()
                .all(|(k, w)| squash(file.content(p + k)) == *w)
        })
        .collect();
    let p = *found.first()?;
    let far = expected.is_some_and(|e| found.iter().all(|f| f.abs_diff(e) > WINDOW));
    let why = if found.len() > 1 {
        format!(
            "at {} places (lines {}), so which one is meant would be a guess",
            found.len(),
            line_list(&found)
        )
    } else if far {
        format!(
            "at lines {}-{}, more than {WINDOW} lines from where the header says",
            p + 1,
            p + want.len()
        )
    } else {
        format!(
            "at lines {}-{}, but not by a uniform change of indentation (spaces inside the lines, \
             or lines indented by different amounts)",
            p + 1,
            p + want.len()
        )
    };
    Some(format!(
        "\nThe hunk's lines match the file if all whitespace is ignored, {why}. Copy those lines \
         exactly as the file has them."
    ))
}

/// The first line that differs where the hunk was expected, and what the difference looks like.
fn first_difference(file: &Lines<'_>, old_side: &[&[u8]], e: usize) -> String {
    let n = file.len();
    let at = e.min(n.saturating_sub(1));
    let Some(k) = (0..old_side.len()).find(|k| at + k >= n || file.content(at + k) != old_side[*k])
    else {
        return String::new();
    };
    if at + k >= n {
        return format!("\nThe file ends (line {n}) before the hunk's lines do.");
    }
    let has = file.content(at + k);
    let mut msg = format!(
        "\nAt line {} the file has\n  |{}\nwhere the hunk expects\n  |{}",
        at + k + 1,
        show(has),
        show(old_side[k])
    );
    if std::str::from_utf8(has).is_err() {
        msg.push_str(
            "\nThat line is not UTF-8 (Latin-1 or another legacy encoding?): a patch, being UTF-8 \
             text, cannot match it. Change the lines around it instead, or use write_file.",
        );
    } else if old_side.get(k + 1) == Some(&has) {
        msg.push_str("\nThe hunk has a line there that the file does not (one too many).");
    } else if at + k + 1 < n && file.content(at + k + 1) == old_side[k] {
        msg.push_str(&format!(
            "\nThe hunk leaves out line {} of the file (`{}`).",
            at + k + 1,
            show(has)
        ));
    }
    msg
}

fn removed_line_hint(file: &Lines<'_>, hunk: &Hunk<'_>) -> String {
    let Some(text) = hunk
        .lines
        .iter()
        .find(|l| l.op == Op::Remove)
        .map(|l| l.text)
    else {
        return String::new();
    };
    let at: Vec<usize> = (0..file.len())
        .filter(|&i| file.content(i) == text)
        .collect();
    if at.is_empty() {
        format!(
            "\nThe first line it removes, `{}`, is nowhere in the file.",
            show(text)
        )
    } else {
        format!(
            "\nThe first line it removes occurs at line(s) {}, but the context lines around it \
             differ.",
            line_list(&at)
        )
    }
}
