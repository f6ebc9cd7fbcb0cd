//! Why a hunk does not apply, in words a model can act on.

use super::apply::find;
use super::parse::Hunk;
use super::{Lines, Op};

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
    crate::tools::shorten(&String::from_utf8_lossy(text), 160)
}

/// Why a hunk does not apply, in words a model can act on.
pub(super) fn explain(
    file: &Lines<'_>,
    hunk: &Hunk<'_>,
    total: usize,
    old_side: &[&[u8]],
    expected: usize,
    min: usize,
    max_fuzz: usize,
) -> String {
    let mut msg = format!("{} does not apply.", hunk_title(hunk, total));
    let n = file.len();
    if old_side.is_empty() {
        msg.push_str(&format!(
            " It only adds lines, at line {}, but the file has {n} lines.",
            expected + 1
        ));
        return msg;
    }
    msg.push_str(&format!(
        " It expects these {} lines at line {}:",
        old_side.len(),
        expected + 1
    ));
    for line in old_side.iter().take(8) {
        msg.push_str(&format!("\n  |{}", show(line)));
    }
    if old_side.len() > 8 {
        msg.push_str(&format!("\n  … ({} more)", old_side.len() - 8));
    }
    // First difference where the hunk was expected.
    let at = expected.min(n.saturating_sub(1));
    if at >= min && at < n {
        if let Some(k) =
            (0..old_side.len()).find(|k| at + k >= n || file.content(at + k) != old_side[*k])
        {
            if at + k >= n {
                msg.push_str(&format!(
                    "\nThe file ends (line {n}) before the hunk's lines do."
                ));
            } else {
                msg.push_str(&format!(
                    "\nAt line {} the file has\n  |{}\nwhere the hunk expects\n  |{}",
                    at + k + 1,
                    show(file.content(at + k)),
                    show(old_side[k])
                ));
                if std::str::from_utf8(file.content(at + k)).is_err() {
                    msg.push_str(
                        "\nThat line is not UTF-8 (Latin-1 or another legacy encoding?): a patch, \
                         being UTF-8 text, cannot match it. Change the lines around it instead, \
                         or use write_file.",
                    );
                }
            }
        }
    }
    // The same lines with different whitespace?
    let want: Vec<Vec<u8>> = old_side.iter().map(|l| squash(l)).collect();
    if n >= want.len() {
        let ws_match = (0..=n - want.len()).find(|&p| {
            want.iter()
                .enumerate()
                .all(|(k, w)| squash(file.content(p + k)) == *w)
        });
        if let Some(p) = ws_match {
            msg.push_str(&format!(
                "\nThe hunk's lines match lines {}-{} if whitespace is ignored: the indentation, \
                 tabs or spaces differ. Copy those lines exactly.",
                p + 1,
                p + want.len()
            ));
            return msg;
        }
    }
    // Before an earlier hunk?
    if min > 0 && find(file, old_side, 0, 0).is_some_and(|p| p < min) {
        msg.push_str(
            "\nIts lines occur only before the place where the previous hunk applied: hunks \
             must come in file order and must not overlap.",
        );
        return msg;
    }
    let first_changed = hunk
        .lines
        .iter()
        .find(|l| l.op == Op::Remove)
        .map(|l| l.text);
    if let Some(text) = first_changed {
        let at: Vec<String> = (0..n)
            .filter(|&i| file.content(i) == text)
            .take(5)
            .map(|i| (i + 1).to_string())
            .collect();
        if at.is_empty() {
            msg.push_str(&format!(
                "\nThe first line it removes, `{}`, is nowhere in the file.",
                show(text)
            ));
        } else {
            msg.push_str(&format!(
                "\nThe first line it removes occurs at line(s) {}, but the context lines around \
                 it differ.",
                at.join(", ")
            ));
        }
    }
    msg.push_str(&format!(
        "\nThe whole file was searched, also ignoring up to {max_fuzz} context lines at each end. \
         Read the file again and make the hunk's context and '-' lines match it exactly."
    ));
    msg
}
