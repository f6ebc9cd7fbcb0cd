//! Unified diffs over bytes: reading a patch into hunks, applying hunks to a file's lines the
//! way GNU patch does, and printing the diff of an edit. Nothing here does I/O: the parser turns
//! text into hunks and names the patch line that was wrong; applying is a separate step that
//! works on the file's bytes and either places every hunk or explains the first that failed.
//!
//! Grammar accepted by [`parse`] (what `git diff`, `diff -u` and people write):
//!
//! ```text
//! patch   := { other-line } { section }
//! section := [ "diff " … ] { other-line } [ "--- " old-name NL "+++ " new-name NL ] hunk { hunk }
//! hunk    := "@@ -" start [ "," count ] " +" start [ "," count ] " @@" [ text ] NL { body }
//!          | "@@" [ text ] NL { body }                    (no line numbers: found by content)
//! body    := ( " " | "-" | "+" ) text NL                  (context, removed, added)
//!          | NL                                           (an empty context line, space lost)
//!          | "\" text NL                                  ("\ No newline at end of file")
//! ```
//!
//! Other lines (the `index`/mode preamble of git, commentary, a `-- ` mail signature) are
//! skipped. A header whose counts disagree with its body is read by the body, with a warning.
//! Lines are compared without their line ending, so a patch written with LF applies to a CRLF
//! file; added lines take the line ending of the file's lines around them (those the hunk keeps
//! or removes), or the file's dominant one when those are no guide.

use std::ops::Range;

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

impl Hunk<'_> {
    fn old_side(&self) -> Vec<&[u8]> {
        self.lines
            .iter()
            .filter(|l| l.op != Op::Add)
            .map(|l| l.text)
            .collect()
    }

    /// Context lines before the first change and after the last one.
    fn lead_trail(&self) -> (usize, usize) {
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
    fn written_position(&self) -> Option<usize> {
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

fn parse_header(header: &str) -> Result<Counts, String> {
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

/// A file's bytes seen as lines; each line's content excludes its ending (`\n` or `\r\n`).
pub struct Lines<'a> {
    pub bytes: &'a [u8],
    spans: Vec<(usize, usize, usize)>,
}

impl<'a> Lines<'a> {
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        let mut spans = Vec::with_capacity(bytes.len() / 32 + 1);
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            let end = if nl > start && bytes[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            spans.push((start, end, nl + 1));
            start = nl + 1;
        }
        if start < bytes.len() {
            spans.push((start, bytes.len(), bytes.len()));
        }
        Lines { bytes, spans }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The line's text without its ending.
    pub fn content(&self, i: usize) -> &'a [u8] {
        let (s, e, _) = self.spans[i];
        &self.bytes[s..e]
    }

    /// The line with its ending.
    pub fn raw(&self, i: usize) -> &'a [u8] {
        let (s, _, n) = self.spans[i];
        &self.bytes[s..n]
    }

    /// Byte offset where line `i` starts (the file's length for `i == len()`).
    pub fn offset(&self, i: usize) -> usize {
        self.spans.get(i).map_or(self.bytes.len(), |s| s.0)
    }

    /// Index of the line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.spans.partition_point(|s| s.2 <= offset)
    }

    /// The line ending new lines should get: CRLF when most lines end so, else LF.
    pub fn newline(&self) -> &'static [u8] {
        let crlf = self.spans.iter().filter(|s| s.2 - s.1 == 2).count();
        let lf = self.spans.iter().filter(|s| s.2 - s.1 == 1).count();
        if crlf > lf {
            b"\r\n"
        } else {
            b"\n"
        }
    }

    /// The ending most of the lines in `range` have (None when as many end with CRLF as with
    /// LF, or none has an ending).
    fn newline_of(&self, range: Range<usize>) -> Option<&'static [u8]> {
        let spans = self.spans.get(range).unwrap_or(&[]);
        let crlf = spans.iter().filter(|s| s.2 - s.1 == 2).count();
        let lf = spans.iter().filter(|s| s.2 - s.1 == 1).count();
        match crlf.cmp(&lf) {
            std::cmp::Ordering::Greater => Some(b"\r\n"),
            std::cmp::Ordering::Less => Some(b"\n"),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// True when the last line has no line ending.
    pub fn lacks_final_newline(&self) -> bool {
        self.spans.last().is_some_and(|s| s.2 == s.1)
    }
}

/// A replaced range of lines: `old` lines of the old file became `new` lines of the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

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
fn find(file: &Lines<'_>, pattern: &[&[u8]], expected: usize, min: usize) -> Option<usize> {
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

/// Hunks explained in full in one rejection message.
const MAX_EXPLAINED: usize = 3;

fn rejection_text(rejections: &[(usize, String)], total: usize) -> String {
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

fn hunk_title(hunk: &Hunk<'_>, total: usize) -> String {
    format!(
        "Hunk {} of {total} (`{}`, patch line {})",
        hunk.number, hunk.header, hunk.patch_line
    )
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
fn explain(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_text(file: &str, patch: &str) -> Result<String, String> {
        let p = parse(patch).map_err(|e| e.to_string())?;
        let hunks: Vec<Hunk<'_>> = p.sections.into_iter().flat_map(|s| s.hunks).collect();
        apply(file.as_bytes(), &hunks, MAX_FUZZ)
            .map(|a| String::from_utf8(a.content).expect("utf8"))
            .map_err(|r| r.message)
    }

    #[test]
    fn header_forms() {
        assert_eq!(
            parse_header("@@ -1,3 +1,4 @@ fn x()"),
            Ok(Some(((1, 3), (1, 4))))
        );
        assert_eq!(parse_header("@@ -5 +5 @@"), Ok(Some(((5, 1), (5, 1)))));
        assert_eq!(parse_header("@@ -0,0 +1,2 @@"), Ok(Some(((0, 0), (1, 2)))));
        assert_eq!(parse_header("@@"), Ok(None));
        assert!(parse_header("@@ -a,3 +1 @@").is_err());
        assert!(parse_header("@@@ -1 -1 +1 @@@").is_err());
    }

    #[test]
    fn simple_apply_and_offset() {
        let file = "a\nb\nc\nd\ne\n";
        let patch = "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n";
        assert_eq!(apply_text(file, patch).expect("ok"), "a\nb\nC\nd\ne\n");
        let shifted = format!("x\ny\n{file}");
        assert_eq!(
            apply_text(&shifted, patch).expect("ok"),
            "x\ny\na\nb\nC\nd\ne\n"
        );
    }

    #[test]
    fn crlf_file_stays_crlf() {
        let file = "a\r\nb\r\nc\r\n";
        let patch = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n";
        assert_eq!(
            apply_text(file, patch).expect("ok"),
            "a\r\nB\r\nB2\r\nc\r\n"
        );
    }

    #[test]
    fn a_cr_on_an_added_line_is_kept_unless_the_whole_patch_is_crlf() {
        // git diff of a mixed file: the CR belongs to the line.
        assert_eq!(
            apply_text("a\nb\n", "@@ -1 +1,2 @@\n a\n+new\r\n").expect("ok"),
            "a\nnew\r\nb\n"
        );
        // Its absence too, when the patch shows CRs elsewhere.
        let p = "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+b\n";
        assert_eq!(apply_text("a\r\nb\r\n", p).expect("ok"), "a\r\nb\n");
        // No CR anywhere: the file's ending.
        assert_eq!(
            apply_text("a\r\nb\r\n", "@@ -2 +2 @@\n-b\n+c\n").expect("ok"),
            "a\r\nc\r\n"
        );
        // A patch carried with CRLF throughout: the file's own ending is used.
        let p = "--- a/f\r\n+++ b/f\r\n@@ -1 +1,2 @@\r\n a\r\n+new\r\n";
        assert_eq!(apply_text("a\nb\n", p).expect("ok"), "a\nnew\nb\n");
    }

    #[test]
    fn an_added_line_takes_the_ending_of_the_lines_around_it() {
        // Mostly CRLF, but the hunk is in the LF part: its added line is LF (the diff rendered
        // from this edit has no CR, and must give the new file back).
        let file = "a\r\na\r\na\r\na\r\na\r\nb\nb\nb\nb\n";
        assert_eq!(
            apply_text(file, "@@ -7,3 +7,4 @@\n b\n b\n b\n+c\n").expect("ok"),
            format!("{file}c\n")
        );
        // And the other way round.
        let file = "a\r\na\r\nb\nb\nb\n";
        assert_eq!(
            apply_text(file, "@@ -1,2 +1,3 @@\n a\n+x\n a\n").expect("ok"),
            "a\r\nx\r\na\r\nb\nb\nb\n"
        );
        // Context without endings (the unterminated last line alone): the file's ending.
        assert_eq!(
            apply_text("x\r\ny\r\nz", "@@ -3 +3,2 @@\n+w\n z\n").expect("ok"),
            "x\r\ny\r\nw\r\nz"
        );
    }

    #[test]
    fn final_newline_rules() {
        // Unaware patch keeps the absence.
        assert_eq!(
            apply_text("a\nb", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n").expect("ok"),
            "a\nB"
        );
        // Aware patch adds it.
        let p = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
        assert_eq!(apply_text("a\nb", p).expect("ok"), "a\nb\n");
        // Aware patch removes it.
        let p = "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n";
        assert_eq!(apply_text("a\nb\n", p).expect("ok"), "a\nb");
        // Appending after a last line without newline.
        assert_eq!(
            apply_text("a\nb", "@@ -2 +2,2 @@\n b\n+c\n").expect("ok"),
            "a\nb\nc"
        );
    }

    #[test]
    fn fuzz_is_used_and_reported() {
        let file = "X\nY\n3\n4\n5\n6\n7\n";
        let patch = "@@ -1,7 +1,7 @@\n 1\n 2\n 3\n-4\n+four\n 5\n 6\n 7\n";
        let p = parse(patch).expect("parse");
        let a = apply(file.as_bytes(), &p.sections[0].hunks, MAX_FUZZ).expect("fuzz");
        assert_eq!(a.placements[0].fuzz, 2);
        assert_eq!(
            String::from_utf8(a.content).expect("utf8"),
            "X\nY\n3\nfour\n5\n6\n7\n"
        );
        assert!(apply(file.as_bytes(), &p.sections[0].hunks, 0).is_err());
    }

    #[test]
    fn rejection_names_hunk_and_expectation() {
        let file = "a\nb\nc\nd\n";
        let patch = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -3,2 +3,2 @@\n-zzz\n+Z\n d\n";
        let err = apply_text(file, patch).expect_err("second hunk fails");
        assert!(err.contains("hunk 2 of 2"), "{err}");
        assert!(err.contains("@@ -3,2 +3,2 @@"), "{err}");
        assert!(err.contains("|zzz"), "{err}");
    }

    #[test]
    fn blank_only_context_is_not_moved_when_ambiguous() {
        let patch = "@@ -1 +1,2 @@\n+added\n \n";
        let err = apply_text("x\n\ny\n\n", patch).expect_err("ambiguous");
        assert!(err.contains("all blank"), "{err}");
        // Unique, or where the header says: applied.
        assert_eq!(
            apply_text("x\n\ny\n", patch).expect("unique"),
            "x\nadded\n\ny\n"
        );
        assert_eq!(
            apply_text("\nx\n\n", patch).expect("in place"),
            "added\n\nx\n\n"
        );
    }

    /// Random patch-like text against random files: parse and apply may refuse, never panic;
    /// whatever applies renders a diff that applies back.
    #[test]
    fn random_patches_never_panic() {
        let pieces = [
            "@@ -1,2 +1,2 @@\n",
            "@@ -0,0 +1 @@\n",
            "@@ -3 +3,0 @@\n",
            "@@\n",
            " a\n",
            " b\n",
            "-a\n",
            "-b\n",
            "+c\n",
            "+\n",
            "\n",
            "\\ No newline at end of file\n",
            "--- a/f\n",
            "+++ b/f\n",
            "diff --git a/f b/f\n",
            " \r\n",
            "-- \n",
            "@@ -9,1 +2 @@ x\n",
            "+a\r\n",
        ];
        let files = [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "b\na\n\n",
            "a\r\nb\r\n",
            "\n\n\n",
        ];
        let mut seed: u64 = 7;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n
        };
        for _ in 0..20_000 {
            let text: String = (0..1 + next(8))
                .map(|_| pieces[next(pieces.len())])
                .collect();
            let file = files[next(files.len())].as_bytes();
            let Ok(patch) = parse(&text) else { continue };
            let hunks: Vec<Hunk<'_>> = patch.sections.into_iter().flat_map(|s| s.hunks).collect();
            if let Ok(applied) = apply(file, &hunks, MAX_FUZZ) {
                let (a, b) = (Lines::new(file), Lines::new(&applied.content));
                let (diff, _) = render(&a, &b, &applied.edits, "a/f", "b/f", usize::MAX);
                if diff.is_empty() {
                    continue;
                }
                let back = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
                let hunks: Vec<Hunk<'_>> =
                    back.sections.into_iter().flat_map(|s| s.hunks).collect();
                let again = apply(file, &hunks, 0)
                    .unwrap_or_else(|r| panic!("{}\n{text:?}\n{diff}", r.message));
                assert_eq!(
                    again.content, applied.content,
                    "{text:?} on {file:?}\n{diff}"
                );
            }
        }
    }

    /// A last line ending in a lone CR without a newline: the CR is the line's text, in the
    /// diff (`-x\r` then the marker) and when an added line is the new last one.
    #[test]
    fn a_lone_cr_before_the_no_newline_marker_is_text() {
        for (old, new) in [
            ("a\nb\r", "a\n"),
            ("a\nb\r", "a\nc\r"),
            ("a\n", "a\nc\r"),
            ("a\r\nb\r", "a\r\nc"),
            ("\n\n\n\n\n\n\n\n\n\r", "\n\n\n\n\n\n\n\n\n"),
        ] {
            let (a, b) = (Lines::new(old.as_bytes()), Lines::new(new.as_bytes()));
            let edits = line_edits(&a, &b);
            let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
            let parsed = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
            let hunks: Vec<Hunk<'_>> = parsed.sections.into_iter().flat_map(|s| s.hunks).collect();
            let applied = apply(old.as_bytes(), &hunks, 0)
                .unwrap_or_else(|r| panic!("{old:?} → {new:?}: {}\n{diff}", r.message));
            assert_eq!(applied.content, new.as_bytes(), "{old:?} → {new:?}\n{diff}");
        }
    }

    /// similar gives a Delete a new-side index after the equal run that follows it here; the
    /// edits must still describe the change (they once merged across that run).
    #[test]
    fn line_edits_follow_the_equal_runs() {
        let (old, new) = (&b"\n\na\n\n\n"[..], &b"\n\n\n \n\n\n"[..]);
        let (a, b) = (Lines::new(old), Lines::new(new));
        let edits = line_edits(&a, &b);
        let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
        let parsed = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
        let hunks: Vec<Hunk<'_>> = parsed.sections.into_iter().flat_map(|s| s.hunks).collect();
        let applied = apply(old, &hunks, 0).unwrap_or_else(|r| panic!("{}\n{diff}", r.message));
        assert_eq!(applied.content, new, "{diff}");
        assert!(diff.contains("@@ -1,5 +1,6 @@"), "{diff}");
    }

    #[test]
    fn a_non_utf8_line_is_named() {
        let err = apply_text("caf\u{e9}\n", "@@ -1 +1 @@\n-caf\u{e9}\n+cafe\n").expect("utf8 ok");
        assert_eq!(err, "cafe\n");
        let p = parse("@@ -1 +1 @@\n-caf\u{e9}\n+cafe\n").expect("parse");
        let r = apply(b"caf\xe9\n", &p.sections[0].hunks, MAX_FUZZ).expect_err("latin-1");
        assert!(r.message.contains("not UTF-8"), "{}", r.message);
    }

    #[test]
    fn pure_insertion_past_the_end_appends() {
        assert_eq!(
            apply_text("a\n", "@@ -5,0 +6 @@\n+z\n").expect("ok"),
            "a\nz\n"
        );
    }

    #[test]
    fn every_failing_hunk_is_named() {
        let file: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        let patch = "@@ -2 +2 @@\n-nope\n+x\n@@ -10 +10 @@\n-l10\n+X\n@@ -20 +20 @@\n-gone\n+y\n";
        let err = apply_text(&file, patch).expect_err("two fail");
        assert!(
            err.starts_with("2 of 3 hunks do not apply (hunks 1, 3)"),
            "{err}"
        );
        assert!(err.contains("|nope") && err.contains("|gone"), "{err}");
    }

    #[test]
    fn whitespace_hint() {
        let err = apply_text(
            "if x:\n\tpass\n",
            "@@ -1,2 +1,2 @@\n if x:\n-    pass\n+    return\n",
        )
        .expect_err("tabs");
        assert!(err.contains("whitespace is ignored"), "{err}");
    }

    #[test]
    fn parse_errors_name_the_line() {
        let e = parse("@@ -1,2 +1,2 @@\n a\nbogus\n").expect_err("bad body");
        assert_eq!(e.line, 3);
        let e = parse("just text\n").expect_err("no hunks");
        assert!(e.message.contains("no hunk"));
        assert!(parse("").is_err());
    }

    #[test]
    fn miscounted_header_is_read_by_body_with_warning() {
        let p = parse("@@ -1,5 +1,5 @@\n a\n-b\n+c\n").expect("parse");
        assert_eq!(p.warnings.len(), 1);
        let p = parse("@@ -1,1 +1,1 @@\n-b\n+c\n+d\n").expect("parse");
        assert_eq!(p.sections[0].hunks[0].lines.len(), 3);
        assert_eq!(p.warnings.len(), 1);
    }

    #[test]
    fn git_preamble_and_signature() {
        let patch = "From abc\nSubject: x\n---\n f | 2 +-\n\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n-- \n2.39.0\n\n";
        assert_eq!(apply_text("a\n", patch).expect("ok"), "b\n");
    }

    /// Found by fuzzing: `similar` placed a delete after the insert that follows it; the
    /// edits are now the gaps between its (checked) equal runs.
    #[test]
    fn line_edits_are_in_order_and_exact() {
        let old: &[u8] = b"a\r\na\r\na\r\na\r\na\r\nb\nb\nb\nb\n";
        let new: &[u8] = b"a\r\na\r\na\r\na\r\nb\n\x00a\ra=\nb\nb\nb\nb\nc\n";
        let (a, b) = (Lines::new(old), Lines::new(new));
        let edits = line_edits(&a, &b);
        let (mut i, mut j) = (0, 0);
        for e in &edits {
            assert!(e.old.start >= i && e.new.start >= j, "{edits:?}");
            assert_eq!(e.old.start - i, e.new.start - j, "{edits:?}");
            (i, j) = (e.old.end, e.new.end);
        }
        assert_eq!(a.len() - i, b.len() - j, "{edits:?}");
        let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
        let hunks: Vec<Hunk<'_>> = parse(&diff)
            .expect("parse")
            .sections
            .into_iter()
            .flat_map(|s| s.hunks)
            .collect();
        assert_eq!(apply(old, &hunks, 0).expect("applies").content, new);
    }

    #[test]
    fn render_matches_diff_u() {
        let old = Lines::new(b"a\nb\nc\n");
        let new = Lines::new(b"a\nB\nc\n");
        let edits = line_edits(&old, &new);
        let (text, cut) = render(&old, &new, &edits, "a/f", "b/f", 1 << 20);
        assert!(!cut);
        assert_eq!(text, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }
}
