//! Codex's patch envelope, which GPT models are trained to write, read into the same sections
//! and hunks as a unified diff:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path            then the new file's lines, each starting with '+'
//! *** Delete File: path
//! *** Update File: path
//! [*** Move to: new/path]
//! @@ [a line the hunk comes after, e.g. `class Foo`]
//!  context / -removed / +added lines
//! [*** End of File]             the hunk before ends at the end of the file
//! *** End Patch
//! ```
//!
//! Hunks have no line numbers: they are placed by their lines (and anchor), and only where one
//! place answers.

use super::patch::{Hunk, HunkLine, Op, ParseError, Patch, PatchLines, Section};

fn error(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line: line + 1,
        message: message.into(),
    }
}

/// The body lines of one hunk from `from`, up to the next `@@` or `***` line.
fn body<'a>(
    pl: &PatchLines<'a>,
    from: usize,
    only_added: bool,
) -> Result<(Vec<HunkLine<'a>>, usize), ParseError> {
    let mut out = Vec::new();
    let mut j = from;
    while j < pl.lines.len() {
        let l = pl.lines[j];
        if l.starts_with("***") || l.starts_with("@@") {
            break;
        }
        let op = match l.as_bytes().first() {
            Some(b'+') => Op::Add,
            Some(b' ') | None if !only_added => Op::Context,
            Some(b'-') if !only_added => Op::Remove,
            _ if only_added => {
                return Err(error(j, "every line of an `*** Add File:` starts with '+'"))
            }
            _ => {
                return Err(error(
                    j,
                    "a line of an `*** Update File:` hunk starts with neither ' ' (context), \
                     '-' (removed) nor '+' (added)",
                ))
            }
        };
        out.push(HunkLine {
            op,
            text: l.as_bytes().get(1..).unwrap_or(b""),
            no_newline: false,
            cr: pl.cr.get(j).copied().flatten(),
        });
        j += 1;
    }
    // Blank lines before the next `***` line separate; they are not context.
    while out
        .last()
        .is_some_and(|l| l.op == Op::Context && l.text.is_empty())
        && pl.lines[j - 1].is_empty()
    {
        out.pop();
        j -= 1;
    }
    Ok((out, j))
}

/// The hunks of one `*** Update File:` from `from`.
fn update_hunks<'a>(
    pl: &PatchLines<'a>,
    mut j: usize,
    number: &mut usize,
) -> Result<(Vec<Hunk<'a>>, usize), ParseError> {
    let mut hunks: Vec<Hunk<'a>> = Vec::new();
    while let Some(l) = pl.lines.get(j).copied() {
        if l.trim_end() == "*** End of File" {
            match hunks.last_mut() {
                Some(h) => h.at_end = true,
                None => return Err(error(j, "`*** End of File` comes before any hunk")),
            }
            j += 1;
            continue;
        }
        if l.starts_with("***") {
            break;
        }
        let (header, anchor, from) = match l.strip_prefix("@@") {
            Some(rest) => {
                let anchor = rest.trim().trim_end_matches("@@").trim();
                (l, (!anchor.is_empty()).then_some(anchor), j + 1)
            }
            None => ("@@", None, j),
        };
        let (lines, next) = body(pl, from, false)?;
        if lines.is_empty() && anchor.is_none() {
            j = next.max(j + 1);
            continue;
        }
        *number += 1;
        hunks.push(Hunk {
            number: *number,
            header,
            patch_line: j + 1,
            old_start: None,
            lines,
            anchor,
            at_end: false,
        });
        j = next;
    }
    Ok((hunks, j))
}

/// Read a `*** Begin Patch` … `*** End Patch` envelope.
pub(super) fn parse_envelope<'a>(pl: &PatchLines<'a>) -> Result<Patch<'a>, ParseError> {
    let lines = &pl.lines;
    let begin = lines
        .iter()
        .position(|l| l.trim_end() == "*** Begin Patch")
        .unwrap_or(0);
    let mut sections = Vec::new();
    let mut number = 0;
    let mut j = begin + 1;
    let mut ended = false;
    while j < lines.len() {
        let l = lines[j].trim_end();
        let start = j;
        if l == "*** End Patch" {
            ended = true;
            break;
        } else if let Some(path) = l.strip_prefix("*** Add File: ") {
            let (body, next) = body(pl, j + 1, true)?;
            number += 1;
            let hunk = Hunk {
                number,
                header: lines[j],
                patch_line: j + 1,
                old_start: Some(0),
                lines: body,
                anchor: None,
                at_end: false,
            };
            sections.push(section(start, None, Some(path), |s| {
                s.created = true;
                s.hunks = vec![hunk];
            }));
            j = next;
        } else if let Some(path) = l.strip_prefix("*** Delete File: ") {
            sections.push(section(start, Some(path), None, |s| s.deleted = true));
            j += 1;
        } else if let Some(path) = l.strip_prefix("*** Update File: ") {
            j += 1;
            let mut moved = None;
            if let Some(to) = lines.get(j).and_then(|m| m.strip_prefix("*** Move to: ")) {
                moved = Some(to.trim_end().to_string());
                j += 1;
            }
            let (hunks, next) = update_hunks(pl, j, &mut number)?;
            sections.push(section(start, Some(path), Some(path), |s| {
                s.rename_from = moved.as_ref().map(|_| path.to_string());
                s.rename_to = moved;
                s.hunks = hunks;
            }));
            j = next;
        } else if l.is_empty() {
            j += 1;
        } else {
            return Err(error(
                j,
                format!(
                    "`{l}` is not an envelope line; expected `*** Add File: `, `*** Delete File: \
                     `, `*** Update File: ` or `*** End Patch`"
                ),
            ));
        }
    }
    if !ended {
        return Err(error(lines.len(), "the patch has no `*** End Patch` line"));
    }
    if sections.is_empty() {
        return Err(error(j, "the envelope changes no file"));
    }
    Ok(Patch {
        sections,
        warnings: Vec::new(),
    })
}

fn section<'a>(
    start: usize,
    old: Option<&'a str>,
    new: Option<&'a str>,
    fill: impl FnOnce(&mut Section<'a>),
) -> Section<'a> {
    let mut s = Section {
        old_name: old.map(str::trim_end),
        new_name: new.map(str::trim_end),
        plain_names: true,
        patch_line: start + 1,
        ..Section::default()
    };
    fill(&mut s);
    s
}
