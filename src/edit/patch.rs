//! A patch as data: its sections (one per file), hunks and lines, the lines of its text, and
//! the error that names the line a patch went wrong on. Both readers build it: the unified
//! diff's (src/edit/parse.rs) and the Codex envelope's (src/edit/codex.rs).

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
    /// A line the hunk comes after (Codex's `@@ class Foo`), trimmed.
    pub anchor: Option<&'a str>,
    /// The hunk ends at the end of the file (Codex's `*** End of File`).
    pub at_end: bool,
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
#[derive(Debug, Default)]
pub struct Section<'a> {
    /// Names from the `---`/`+++` lines as written (a `diff -u` timestamp dropped).
    pub old_name: Option<&'a str>,
    pub new_name: Option<&'a str>,
    /// Names from a `diff --git a/… b/…` line, unquoted (used when there are no `---`/`+++`
    /// lines: a rename, an empty new file).
    pub git_names: Option<(String, String)>,
    /// git's `rename from`/`rename to` (or Codex's `*** Move to:`), unquoted.
    pub rename_from: Option<String>,
    pub rename_to: Option<String>,
    /// git's `new file mode` / Codex's `*** Add File:`.
    pub created: bool,
    /// git's `deleted file mode` / Codex's `*** Delete File:`.
    pub deleted: bool,
    /// git's `copy from`/`copy to` (not applied: refused by the tool).
    pub copied: bool,
    /// git's `old mode`/`new mode` (not applied; warned about).
    pub mode_change: bool,
    /// Names are plain paths (Codex's envelope), with no `a/`/`b/` prefix to strip.
    pub plain_names: bool,
    /// 1-based line of the patch where the section starts.
    pub patch_line: usize,
    pub hunks: Vec<Hunk<'a>>,
}

impl Section<'_> {
    /// True when the section says something even without hunks (a rename, an empty file
    /// created or deleted).
    pub(super) fn meaningful(&self) -> bool {
        !self.hunks.is_empty()
            || self.created
            || self.deleted
            || self.rename_to.is_some()
            || self.copied
    }
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

/// The patch's lines without their endings, and for each line the ending an added line there
/// asks for (see [`HunkLine::cr`]).
pub(super) struct PatchLines<'a> {
    pub lines: Vec<&'a str>,
    pub cr: Vec<Option<bool>>,
}

impl<'a> PatchLines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        let raw: Vec<&str> = text.split_inclusive('\n').collect();
        // A patch CRLF throughout (headers too) was only carried that way; otherwise a CR on a
        // line belongs to that line.
        let transport_crlf = raw
            .iter()
            .filter(|l| l.ends_with('\n'))
            .all(|l| l.ends_with("\r\n"));
        let explicit = !transport_crlf && raw.iter().any(|l| l.ends_with("\r\n"));
        let cr = raw
            .iter()
            .map(|l| explicit.then(|| l.ends_with("\r\n")))
            .collect();
        // Before a "\ No newline at end of file" marker a line has no ending in the file, so a
        // CR there is the line's last character, not half of a CRLF.
        let lines = raw
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
        PatchLines { lines, cr }
    }
}

fn strip_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}
