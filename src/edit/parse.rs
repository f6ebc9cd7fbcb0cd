//! Reading a unified diff into sections and hunks (see the grammar in the module map).

use super::patch::{Hunk, HunkLine, Op, ParseError, Patch, PatchLines, Section};

/// File name from a `---`/`+++` header (a `diff -u` timestamp after a tab is dropped).
fn header_name(rest: &str) -> &str {
    rest.split('\t').next().unwrap_or(rest).trim_end()
}

pub(super) fn is_file_header(lines: &[&str], i: usize) -> bool {
    lines[i].starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "))
}

fn no_hunk(line: usize) -> ParseError {
    ParseError {
        line,
        message: "no hunk found; a unified diff needs at least one hunk starting with a line like \
                  `@@ -12,4 +12,5 @@`, followed by lines starting with ' ' (context), '-' \
                  (removed) or '+' (added)"
            .into(),
    }
}

/// Read a unified diff (or a Codex `*** Begin Patch` envelope). Fails on a malformed hunk, a
/// binary patch, or a patch without hunks.
pub fn parse(text: &str) -> Result<Patch<'_>, ParseError> {
    let pl = PatchLines::new(text);
    if pl.lines.iter().any(|l| l.trim_end() == "*** Begin Patch") {
        return super::codex::parse_envelope(&pl);
    }
    let lines = &pl.lines;
    let mut sections: Vec<Section<'_>> = Vec::new();
    let mut warnings = Vec::new();
    let mut cur: Option<Section<'_>> = None;
    let mut number = 0;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("diff ") {
            sections.extend(cur.take());
            cur = Some(Section {
                git_names: l.strip_prefix("diff --git ").and_then(git_line_names),
                patch_line: i + 1,
                ..Section::default()
            });
            i += 1;
        } else if is_file_header(lines, i) {
            if cur
                .as_ref()
                .is_some_and(|c| !c.hunks.is_empty() || c.old_name.is_some())
            {
                sections.extend(cur.take());
            }
            let c = cur.get_or_insert_with(|| Section {
                patch_line: i + 1,
                ..Section::default()
            });
            c.old_name = Some(header_name(&l[4..]));
            c.new_name = Some(header_name(&lines[i + 1][4..]));
            i += 2;
        } else if l.starts_with("@@") {
            number += 1;
            let (hunk, next) = parse_hunk(&pl, i, number, &mut warnings)?;
            cur.get_or_insert_with(|| Section {
                patch_line: i + 1,
                ..Section::default()
            })
            .hunks
            .push(hunk);
            i = next;
        } else if l.starts_with("GIT binary patch")
            || (l.starts_with("Binary files ") && l.ends_with("differ"))
        {
            return Err(ParseError {
                line: i + 1,
                message: "this is a binary patch; patch_apply changes text files only".into(),
            });
        } else {
            if let Some(c) = cur.as_mut().filter(|c| c.hunks.is_empty()) {
                git_extended_header(c, l);
            }
            i += 1;
        }
    }
    sections.extend(cur);
    sections.retain(Section::meaningful);
    if sections.is_empty() {
        return Err(no_hunk(lines.len().max(1)));
    }
    Ok(Patch { sections, warnings })
}

/// git's extended header lines between `diff --git` and the first hunk.
fn git_extended_header(c: &mut Section<'_>, l: &str) {
    if l.starts_with("new file mode ") {
        c.created = true;
    } else if l.starts_with("deleted file mode ") {
        c.deleted = true;
    } else if let Some(name) = l.strip_prefix("rename from ") {
        c.rename_from = Some(unquote(name));
    } else if let Some(name) = l.strip_prefix("rename to ") {
        c.rename_to = Some(unquote(name));
    } else if l.starts_with("copy from ") || l.starts_with("copy to ") {
        c.copied = true;
    } else if l.starts_with("old mode ") || l.starts_with("new mode ") {
        c.mode_change = true;
    }
}

/// A path as git writes it: bare, or in double quotes with C escapes when it has unusual bytes.
pub(super) fn unquote(name: &str) -> String {
    let name = name.trim_end();
    let Some(inner) = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) else {
        return name.to_string();
    };
    let mut bytes = Vec::new();
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&o @ b'0'..=b'7') = it.peek() {
                        v = v * 8 + u32::from(o - b'0');
                        it.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The two names of `diff --git a/x b/x` (quoted names, or unquoted ones split where the two
/// halves agree).
fn git_line_names(rest: &str) -> Option<(String, String)> {
    if let Some(inner) = rest.strip_prefix('"') {
        let end = inner.find("\" ")? + 1;
        return Some((unquote(&rest[..=end]), unquote(&rest[end + 2..])));
    }
    // Unquoted names may hold spaces: the split is where both halves name the same path.
    let candidates: Vec<(usize, char)> = rest.char_indices().filter(|(_, c)| *c == ' ').collect();
    for (pos, _) in &candidates {
        let (a, b) = (&rest[..*pos], &rest[pos + 1..]);
        let strip = |n: &str| n.split_once('/').map(|(_, r)| r.to_string());
        if strip(a).is_some() && strip(a) == strip(b) {
            return Some((a.to_string(), b.to_string()));
        }
    }
    let (a, b) = rest.split_once(' ')?;
    Some((a.to_string(), b.to_string()))
}

/// Old and new (start, count) of a numbered header, or None for a bare `@@`.
type Counts = Option<((usize, usize), (usize, usize))>;

pub(super) fn parse_header(header: &str) -> Result<Counts, String> {
    if header.starts_with("@@@") {
        return Err("combined diffs (`@@@`, from merges) cannot be applied to one file".into());
    }
    let rest = header[2..].trim_start();
    if !rest.starts_with('-') {
        return Ok(None);
    }
    let bad = || {
        format!("malformed hunk header `{header}`; expected a line like `@@ -12,4 +12,5 @@` (old start,count and new start,count)")
    };
    let mut parts = rest.split_whitespace();
    let old = parts
        .next()
        .and_then(|p| p.strip_prefix('-'))
        .ok_or_else(bad)?;
    let new = parts
        .next()
        .and_then(|p| p.strip_prefix('+'))
        .ok_or_else(bad)?;
    if parts.next() != Some("@@") {
        return Err(bad());
    }
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    Ok(Some((
        range(old).ok_or_else(bad)?,
        range(new).ok_or_else(bad)?,
    )))
}

/// True when only blank lines remain before the next hunk/section or the end.
fn only_blank_until_delimiter(lines: &[&str], from: usize) -> bool {
    for (k, l) in lines.iter().enumerate().skip(from) {
        if l.starts_with("@@") || l.starts_with("diff ") || is_file_header(lines, k) {
            return true;
        }
        if !l.is_empty() {
            return false;
        }
    }
    true
}

/// True when no line from `from` up to the next hunk or section starts like a change (`+`,
/// `-`): what follows a hunk whose counts are off is then prose, and ending the hunk there
/// loses no change.
fn no_change_follows(lines: &[&str], from: usize) -> bool {
    for (k, l) in lines.iter().enumerate().skip(from) {
        if l.starts_with("@@") || l.starts_with("diff ") || is_file_header(lines, k) {
            return true;
        }
        if (l.starts_with('+') || l.starts_with('-')) && *l != "-- " {
            return false;
        }
    }
    true
}

/// What a line inside a hunk is.
enum Step {
    Line(Op),
    /// The hunk ends before this line.
    End,
    /// The hunk ends before this line, and the counts were off (prose or a fence followed).
    EndEarly,
    Bad,
}

fn classify(lines: &[&str], j: usize, counts: Counts, olds: usize, news: usize) -> Step {
    let l = lines[j];
    let satisfied = counts.is_some_and(|((_, oc), (_, nc))| olds >= oc && news >= nc);
    let open_ended = satisfied || counts.is_none();
    if l.starts_with("@@") || l.starts_with("diff ") {
        return Step::End;
    }
    if open_ended && (is_file_header(lines, j) || l == "-- ") {
        return Step::End;
    }
    if l.starts_with("```") {
        // A Markdown fence closing the diff: never a hunk line.
        return if open_ended {
            Step::End
        } else {
            Step::EndEarly
        };
    }
    match l.as_bytes().first() {
        Some(b' ') => Step::Line(Op::Context),
        Some(b'-') => Step::Line(Op::Remove),
        Some(b'+') => Step::Line(Op::Add),
        None if satisfied || (counts.is_none() && only_blank_until_delimiter(lines, j)) => {
            Step::End
        }
        None => Step::Line(Op::Context),
        Some(_) if open_ended => Step::End,
        Some(_) if no_change_follows(lines, j) => Step::EndEarly,
        Some(_) => Step::Bad,
    }
}

fn parse_hunk<'a>(
    pl: &PatchLines<'a>,
    at: usize,
    number: usize,
    warnings: &mut Vec<String>,
) -> Result<(Hunk<'a>, usize), ParseError> {
    let lines = &pl.lines;
    let header = lines[at];
    let counts = parse_header(header).map_err(|message| ParseError {
        line: at + 1,
        message,
    })?;
    let mut body: Vec<HunkLine<'a>> = Vec::new();
    let (mut olds, mut news) = (0usize, 0usize);
    let mut j = at + 1;
    // Blank patch lines read as context at the end of a hunk whose counts are off: separators
    // before prose rather than lines of the file.
    let mut trailing_blank = 0;
    while j < lines.len() {
        let l = lines[j];
        if l.starts_with('\\') {
            let Some(last) = body.last_mut() else {
                return Err(ParseError {
                    line: j + 1,
                    message: format!("`{l}` comes before any line of hunk {number}"),
                });
            };
            last.no_newline = true;
            j += 1;
            continue;
        }
        let op = match classify(lines, j, counts, olds, news) {
            Step::Line(op) => op,
            Step::End => break,
            Step::EndEarly if body.iter().all(|l| l.op == Op::Context) => {
                return Err(bad_line(header, number, counts, olds, news, j))
            }
            Step::EndEarly => {
                body.truncate(body.len() - trailing_blank);
                olds -= trailing_blank;
                news -= trailing_blank;
                break;
            }
            Step::Bad => return Err(bad_line(header, number, counts, olds, news, j)),
        };
        trailing_blank = if l.is_empty() { trailing_blank + 1 } else { 0 };
        body.push(HunkLine {
            op,
            text: l.as_bytes().get(1..).unwrap_or(b""),
            no_newline: false,
            cr: pl.cr.get(j).copied().flatten(),
        });
        olds += usize::from(op != Op::Add);
        news += usize::from(op != Op::Remove);
        j += 1;
    }
    if body.is_empty() {
        return Err(ParseError {
            line: at + 1,
            message: format!("hunk {number} (`{header}`) has no lines"),
        });
    }
    if let Some(((_, oc), (_, nc))) = counts.filter(|c| c.0 .1 != olds || c.1 .1 != news) {
        warnings.push(format!(
            "hunk {number} (`{header}`) announces {oc} old and {nc} new lines but its body has \
             {olds} and {news}; the body was used"
        ));
    }
    let hunk = Hunk {
        number,
        header,
        patch_line: at + 1,
        old_start: counts.map(|((s, _), _)| s),
        lines: body,
        anchor: None,
        at_end: false,
    };
    Ok((hunk, j))
}

fn bad_line(
    header: &str,
    number: usize,
    counts: Counts,
    olds: usize,
    news: usize,
    j: usize,
) -> ParseError {
    let ((_, oc), (_, nc)) = counts.unwrap_or(((0, 0), (0, 0)));
    ParseError {
        line: j + 1,
        message: format!(
            "hunk {number} (`{header}`) announces {oc} old and {nc} new lines but has {olds} and \
             {news} when this line comes, which starts with neither ' ' (context), '-' \
             (removed) nor '+' (added)"
        ),
    }
}
