//! Reading a unified diff into sections and hunks (see the grammar in the module map).

/// What a hunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Context,
    Remove,
    Add,
}

#[derive(Debug, Clone)]
pub struct HunkLine<'a> {
    pub op: Op,
    /// The line's text without its marker and line ending.
    pub text: &'a [u8],
    /// Followed by "\ No newline at end of file".
    pub no_newline: bool,
    /// The line ending an added line gets: Some(true) CRLF, Some(false) LF, as the patch shows
    /// them when it mixes both (as `git diff` of a CRLF or mixed file does); None, the ending of
    /// the lines around it, when the patch has no CR at all or is CRLF throughout (only carried
    /// so).
    pub cr: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct Hunk<'a> {
    /// 1-based position among all hunks of the patch.
    pub number: usize,
    /// The `@@ … @@` line as written.
    pub header: &'a str,
    /// 1-based line of the header in the patch text.
    pub patch_line: usize,
    /// Start line of the old side as written (1-based; 0 before the first line), if numbered.
    pub old_start: Option<usize>,
    pub lines: Vec<HunkLine<'a>>,
}

impl<'a> Hunk<'a> {
    pub(super) fn old_side(&self) -> Vec<&'a [u8]> {
        self.lines
            .iter()
            .filter(|l| l.op != Op::Add)
            .map(|l| l.text)
            .collect()
    }

    /// Context lines before the first change and after the last one.
    pub(super) fn lead_trail(&self) -> (usize, usize) {
        let lead = self
            .lines
            .iter()
            .take_while(|l| l.op == Op::Context)
            .count();
        if lead == self.lines.len() {
            return (lead, 0);
        }
        let trail = self
            .lines
            .iter()
            .rev()
            .take_while(|l| l.op == Op::Context)
            .count();
        (lead, trail)
    }

    /// Where the old side starts, 0-based, as the header says (None when unnumbered).
    pub(super) fn written_position(&self) -> Option<usize> {
        let start = self.old_start?;
        let old_len = self.lines.iter().filter(|l| l.op != Op::Add).count();
        Some(if old_len == 0 {
            start
        } else {
            start.saturating_sub(1)
        })
    }
}

/// The changes for one file.
#[derive(Debug)]
pub struct Section<'a> {
    pub old_name: Option<&'a str>,
    pub new_name: Option<&'a str>,
    pub hunks: Vec<Hunk<'a>>,
}

#[derive(Debug)]
pub struct Patch<'a> {
    pub sections: Vec<Section<'a>>,
    /// Things the parser tolerated (wrong header counts); reported, never silent.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the patch text.
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "patch line {}: {}", self.line, self.message)
    }
}

fn strip_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// File name from a `---`/`+++` header (a `diff -u` timestamp after a tab is dropped).
fn header_name(rest: &str) -> &str {
    rest.split('\t').next().unwrap_or(rest).trim_end()
}

fn is_file_header(lines: &[&str], i: usize) -> bool {
    lines[i].starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "))
}

/// Read a unified diff. Fails on a malformed hunk, a binary patch, or a patch without hunks.
pub fn parse(text: &str) -> Result<Patch<'_>, ParseError> {
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    // A patch CRLF throughout (headers too) was only carried that way; otherwise a CR on a
    // line belongs to that line.
    let transport_crlf = raw
        .iter()
        .filter(|l| l.ends_with('\n'))
        .all(|l| l.ends_with("\r\n"));
    let explicit = !transport_crlf && raw.iter().any(|l| l.ends_with("\r\n"));
    let cr: Vec<Option<bool>> = raw
        .iter()
        .map(|l| explicit.then(|| l.ends_with("\r\n")))
        .collect();
    // Before a "\ No newline at end of file" marker a line has no ending in the file, so a CR
    // there is the line's last character, not half of a CRLF.
    let lines: Vec<&str> = raw
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let before_marker = raw.get(i + 1).is_some_and(|n| n.starts_with('\\'));
            if before_marker && !transport_crlf {
                l.strip_suffix('\n').unwrap_or(l)
            } else {
                strip_eol(l)
            }
        })
        .collect();
    let mut sections: Vec<Section<'_>> = Vec::new();
    let mut warnings = Vec::new();
    let mut cur: Option<Section<'_>> = None;
    let mut number = 0;
    let mut i = 0;
    let new_section = || Section {
        old_name: None,
        new_name: None,
        hunks: Vec::new(),
    };
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("diff ") {
            sections.extend(cur.take());
            cur = Some(new_section());
            i += 1;
        } else if is_file_header(&lines, i) {
            if cur
                .as_ref()
                .is_some_and(|c| !c.hunks.is_empty() || c.old_name.is_some())
            {
                sections.extend(cur.take());
            }
            let c = cur.get_or_insert_with(new_section);
            c.old_name = Some(header_name(&l[4..]));
            c.new_name = Some(header_name(&lines[i + 1][4..]));
            i += 2;
        } else if l.starts_with("@@") {
            number += 1;
            let (hunk, next) = parse_hunk(&lines, &cr, i, number, &mut warnings)?;
            cur.get_or_insert_with(new_section).hunks.push(hunk);
            i = next;
        } else if l.starts_with("GIT binary patch")
            || (l.starts_with("Binary files ") && l.ends_with("differ"))
        {
            return Err(ParseError {
                line: i + 1,
                message: "this is a binary patch; patch_apply changes text files only".into(),
            });
        } else {
            i += 1;
        }
    }
    sections.extend(cur);
    sections.retain(|s| !s.hunks.is_empty());
    if sections.is_empty() {
        return Err(ParseError {
            line: lines.len().max(1),
            message: "no hunk found; a unified diff needs at least one hunk starting with a \
                      line like `@@ -12,4 +12,5 @@`, followed by lines starting with ' ' \
                      (context), '-' (removed) or '+' (added)"
                .into(),
        });
    }
    Ok(Patch { sections, warnings })
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

fn parse_hunk<'a>(
    lines: &[&'a str],
    cr: &[Option<bool>],
    at: usize,
    number: usize,
    warnings: &mut Vec<String>,
) -> Result<(Hunk<'a>, usize), ParseError> {
    let header = lines[at];
    let counts = parse_header(header).map_err(|message| ParseError {
        line: at + 1,
        message,
    })?;
    let mut body: Vec<HunkLine<'a>> = Vec::new();
    let (mut olds, mut news) = (0usize, 0usize);
    let mut j = at + 1;
    while j < lines.len() {
        let l = lines[j];
        let satisfied = counts.is_some_and(|((_, oc), (_, nc))| olds >= oc && news >= nc);
        let open_ended = satisfied || counts.is_none();
        if l.starts_with('\\') {
            match body.last_mut() {
                Some(last) => last.no_newline = true,
                None => {
                    return Err(ParseError {
                        line: j + 1,
                        message: format!("`{l}` comes before any line of hunk {number}"),
                    })
                }
            }
            j += 1;
            continue;
        }
        if l.starts_with("@@") || l.starts_with("diff ") {
            break;
        }
        if open_ended && (is_file_header(lines, j) || l == "-- ") {
            break;
        }
        let op = match l.as_bytes().first() {
            Some(b' ') => Op::Context,
            Some(b'-') => Op::Remove,
            Some(b'+') => Op::Add,
            None if satisfied || (counts.is_none() && only_blank_until_delimiter(lines, j)) => {
                break
            }
            None => Op::Context,
            Some(_) if open_ended => break,
            Some(_) => {
                let ((_, oc), (_, nc)) = counts.unwrap_or(((0, 0), (0, 0)));
                return Err(ParseError {
                    line: j + 1,
                    message: format!(
                        "hunk {number} (`{header}`) announces {oc} old and {nc} new lines but \
                         has {olds} and {news} when this line comes, which starts with neither \
                         ' ' (context), '-' (removed) nor '+' (added)"
                    ),
                });
            }
        };
        let text = l.as_bytes().get(1..).unwrap_or(b"");
        body.push(HunkLine {
            op,
            text,
            no_newline: false,
            cr: cr.get(j).copied().flatten(),
        });
        match op {
            Op::Context => {
                olds += 1;
                news += 1;
            }
            Op::Remove => olds += 1,
            Op::Add => news += 1,
        }
        j += 1;
    }
    if body.is_empty() {
        return Err(ParseError {
            line: at + 1,
            message: format!("hunk {number} (`{header}`) has no lines"),
        });
    }
    if let Some(((_, oc), (_, nc))) = counts {
        if olds != oc || news != nc {
            warnings.push(format!(
                "hunk {number} (`{header}`) announces {oc} old and {nc} new lines but its body \
                 has {olds} and {news}; the body was used"
            ));
        }
    }
    Ok((
        Hunk {
            number,
            header,
            patch_line: at + 1,
            old_start: counts.map(|((s, _), _)| s),
            lines: body,
        },
        j,
    ))
}
