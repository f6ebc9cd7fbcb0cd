//! str_replace: replace one occurrence of a text. The file is handled as bytes: a CRLF file
//! stays CRLF (an `old_str` written with LF still matches, and `new_str` is written with CRLF),
//! and a BOM, tabs, the final newline and bytes that are not UTF-8 outside the match are left
//! exactly as they were.
//!
//! old_str is looked for as written first. When it is not there, the diff engine's ladder is
//! tried on whole lines: trailing whitespace ignored, and indentation compared by width (tabs
//! for spaces, or every line shifted alike; new_str is then re-indented the same way), their
//! places weighed together; then numbered-listing prefixes, typographic quotes and elided
//! lines (see `drift`). A rung is taken only when exactly one place answers, and the result's
//! `rung` says which was used.
//! Otherwise the error points at the nearest candidate so the model can correct itself.

use memchr::memmem;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod drift;

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::code::check::{self, Edited, IntroducedError};
use crate::edit::seek::{self, Rung};
use crate::edit::{show, squash, Edit, Lines};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable;
use crate::fs::history::{self, Undoable};
use crate::render::human::{self, Text};
use crate::render::model;

/// Line numbers listed in a multiple_matches error.
const MAX_LISTED: usize = 20;

/// Replace exactly one occurrence of old_str with new_str in a file. Fails when old_str is not
/// found (the error shows the closest text) or occurs more than once (the error lists the
/// lines; add surrounding lines to make it unique, or set replace_all). Returns the diff.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceArgs {
    /// Path of the file to edit, relative to the workspace root.
    pub file_path: String,
    /// The exact text to replace, including whitespace and indentation; must occur exactly once
    /// unless replace_all is set. Line endings may be written as \n even in a CRLF file.
    pub old_str: String,
    /// The text to put in its place (may be empty to delete old_str).
    pub new_str: String,
    /// Replace every occurrence instead of requiring exactly one. Default: false.
    #[serde(default)]
    pub replace_all: bool,
    /// Only compute the diff the edit would make; change nothing. Default: false.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ReplaceResult {
    pub path: String,
    /// 1-based line where the (first) replacement starts.
    pub line: u64,
    /// Number of occurrences replaced.
    pub replacements: u64,
    /// How old_str was found: `exact`, `trailing_whitespace` (its lines match once trailing
    /// whitespace is ignored), `indentation` (tabs/spaces or a uniform shift; new_str was
    /// re-indented alike), `line_numbers` (numbered-listing prefixes like `12→` dropped),
    /// `quotes` (typographic quotes read as straight) or `elided` (lines like `...` stood for
    /// lines left out, kept as they are). The loose rungs need exactly one placement.
    pub rung: String,
    pub replace_all: bool,
    pub dry_run: bool,
    /// Unified diff of the edit.
    pub diff: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    /// The file actually edited when `path` is a link (inside the workspace) to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<String>,
    /// Parse errors the edit introduced (the file's errors before it are left out), for a
    /// file of a language the navigation tools parse; the edit is made all the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syntax_errors: Vec<IntroducedError>,
    /// Its place in the undo history (`change_id`), for every edit but a dry run.
    #[serde(flatten)]
    pub undo: Undoable,
}

pub struct StrReplace;

/// `\n` not already preceded by `\r` becomes `\r\n`.
fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for (i, b) in text.iter().enumerate() {
        if *b == b'\n' && (i == 0 || text[i - 1] != b'\r') {
            out.push(b'\r');
        }
        out.push(*b);
    }
    out
}

fn to_lf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for (i, b) in text.iter().enumerate() {
        if *b == b'\r' && text.get(i + 1) == Some(&b'\n') {
            continue;
        }
        out.push(*b);
    }
    out
}

impl Tool for StrReplace {
    const NAME: ToolName = ToolName::StrReplace;
    const TITLE: &'static str = "Replace text in a file";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: false,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["file_path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "replace exactly one occurrence (or `replace_all`), byte-exact",
        example: r#"{"file_path": "src/main.rs", "old_str": "fn old()", "new_str": "fn new()"}"#,
        pipeline: "sneaky-replace src/main.rs --old-str 'fn old()' --new-str 'fn new()' --dry-run | jq -r .result.diff",
        config: &["max_file_size_bytes: largest file edited"],
        env: &[],
        text: TextExample::prints(
            &[("src/lib.rs", "fn one() {}\nfn two() {}\n")],
            &["src/lib.rs", "--old-str", "one", "--new-str", "uno"],
            "",
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n-fn one() {}\n+fn uno() {}\n fn two() {}\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"file_path": "src/lib.rs", "old_str": "one", "new_str": "uno"}"#,
            fails: r#"{"file_path": "src/lib.rs", "old_str": "absent text", "new_str": "x"}"#,
            fails_with: ErrorKind::NoMatch,
        },
    };
    const SCHEMA: &'static str = committed_schema!("str_replace");
    const PATH_PARAMS: &'static [&'static str] = &["file_path"];
    type Args = ReplaceArgs;
    type Output = ReplaceResult;

    fn run(args: ReplaceArgs, ctx: &Context) -> Result<ReplaceResult> {
        if args.old_str.is_empty() {
            return Err(Error::invalid_args(
                "old_str: must not be empty (to write a whole file use write_file)",
            ));
        }
        if args.old_str == args.new_str {
            return Err(Error::invalid_args(
                "old_str and new_str are the same: the edit would change nothing",
            ));
        }
        if args.new_str.contains('\0') {
            return Err(Error::new(
                ErrorKind::BinaryFile,
                "new_str has a NUL byte; str_replace writes text only",
            ));
        }
        let max = ctx.config.max_file_size_bytes;
        let rel = ctx.ws.relative(&args.file_path)?;
        let path = rel.display().to_string();
        let (target, existing, bytes) = durable::load_for_edit(&ctx.ws, &args.file_path, max)?;
        let lines = Lines::new(&bytes);
        let (old, new) = (args.old_str.as_bytes(), args.new_str.as_bytes());
        let line_no = |offset: usize| lines.line_of(offset) as u64 + 1;
        let (out, edits, first, count, rung) = match splice(&lines, old, new, args.replace_all, max)
        {
            Ok(spliced) => {
                let edits = spliced.edits(&lines, &Lines::new(&spliced.content));
                let first = line_no(spliced.at[0]);
                let count = spliced.at.len() as u64;
                (spliced.content, Some(edits), first, count, Rung::Exact)
            }
            Err(Refusal::NotFound) if !args.replace_all => {
                let loose = forgiving(&lines, old, new, max)
                    .map_err(|why| why.into_error(&path, &lines, old, max))?;
                (loose.content, None, loose.line as u64 + 1, 1, loose.rung)
            }
            Err(why) => return Err(why.into_error(&path, &lines, old, max)),
        };
        let cap = ctx.config.max_output_bytes as usize;
        let (diff, diff_truncated) = crate::edit::diff_text(&path, Some(&bytes), &out, edits, cap);
        let recorded = if args.dry_run {
            None
        } else {
            Some(history::record(
                &ctx.ws,
                ctx.config.undo.max_bytes,
                Self::NAME.as_str(),
                &[&target],
                || {
                    if out != bytes {
                        target.replace_with(&out, Some(&existing))?;
                    }
                    Ok(Vec::new())
                },
            )?)
        };
        let resolved_path = Some(target.display.clone()).filter(|d| *d != path);
        let syntax_errors = check::introduced(&[Edited {
            path: &path,
            before: Some(&bytes),
            after: &out,
        }]);
        Ok(ReplaceResult {
            path,
            line: first,
            replacements: count,
            rung: rung.name().to_string(),
            replace_all: args.replace_all,
            dry_run: args.dry_run,
            diff,
            diff_truncated,
            resolved_path,
            syntax_errors,
            undo: recorded.map(|r| r.undo).unwrap_or_default(),
        })
    }

    fn model_text(r: &ReplaceResult) -> String {
        let n = r.replacements.max(1);
        let mut out = format!(
            "{} {} in {} at line {}",
            model::change(r.dry_run, "replaced", "replaced"),
            model::plural(n, "occurrence", "occurrences"),
            r.path,
            r.line
        );
        model::edit_notes(r.resolved_path.as_deref(), &mut out);
        let mut out = model::with_diff(out, &r.diff, r.diff_truncated);
        out.push_str(&check::note(&r.syntax_errors));
        out
    }

    fn human_text(r: &ReplaceResult, binary: &str) -> Text {
        let mut text = human::edit(
            binary,
            human::Edited {
                path: &r.path,
                diff: &r.diff,
                diff_truncated: r.diff_truncated,
                dry_run: r.dry_run,
            },
        );
        check::human_note(&r.syntax_errors, binary, &mut text.stderr);
        text
    }

    const TEXT_FORMAT: &'static str = human::EDIT_TEXT_FORMAT;

    fn changed(r: &ReplaceResult) -> Vec<&str> {
        match (&r.resolved_path, r.dry_run) {
            (_, true) => Vec::new(),
            (Some(real), false) => vec![real.as_str()],
            (None, false) => vec![r.path.as_str()],
        }
    }
}

impl Refusal {
    /// The error a model reads for a refusal.
    fn into_error(self, path: &str, lines: &Lines<'_>, old: &[u8], max: u64) -> Error {
        match self {
            Refusal::NotFound => Error::new(
                ErrorKind::NoMatch,
                format!(
                    "old_str was not found in {path}; nothing was changed.{}",
                    nearest_candidate(lines, old)
                ),
            ),
            Refusal::Multiple(at) => {
                let listed: Vec<String> = at
                    .iter()
                    .take(MAX_LISTED)
                    .map(|o| (lines.line_of(*o) + 1).to_string())
                    .collect();
                let more = if at.len() > MAX_LISTED { ", …" } else { "" };
                Error::new(
                    ErrorKind::MultipleMatches,
                    format!(
                        "old_str occurs {} times in {path}, at lines {}{more}; nothing was \
                         changed. Include more surrounding lines in old_str to make it unique, or \
                         set replace_all to replace every occurrence.",
                        at.len(),
                        listed.join(", ")
                    ),
                )
            }
            Refusal::Loose(rung, at) => {
                let listed: Vec<String> = at
                    .iter()
                    .take(MAX_LISTED)
                    .map(|l| (l + 1).to_string())
                    .collect();
                Error::new(
                    ErrorKind::MultipleMatches,
                    format!(
                        "old_str is not in {path} as written; it matches {} at {} places (lines \
                         {}), so which one is meant would be a guess; nothing was changed. Copy \
                         the lines exactly as the file has them, with more surrounding lines.",
                        rung.describe(),
                        at.len(),
                        listed.join(", ")
                    ),
                )
            }
            Refusal::TooLarge(new_len) => durable::too_large(path, new_len as u64, max),
        }
    }
}

/// A replacement found on a loose rung.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loose {
    pub content: Vec<u8>,
    /// 0-based first line replaced.
    pub line: usize,
    pub rung: Rung,
}

/// old_str as whole lines, found with trailing whitespace ignored, then with indentation
/// compared by width — each only where exactly one place answers. new_str replaces those
/// lines (re-indented on the indentation rung); the last line keeps its line ending, and new
/// lines take the file's.
pub fn forgiving(
    file: &Lines<'_>,
    old: &[u8],
    new: &[u8],
    max_len: u64,
) -> std::result::Result<Loose, Refusal> {
    let old = to_lf(old);
    let new = to_lf(new);
    let (old, new) = match (old.strip_suffix(b"\n"), new.strip_suffix(b"\n")) {
        (Some(o), Some(n)) => (o.to_vec(), n.to_vec()),
        (Some(_), None) => return Err(Refusal::NotFound),
        (None, _) => (old, new),
    };
    match whitespace(file, &old, &new, max_len) {
        Err(Refusal::NotFound) => drift::drifted(file, &old, &new, max_len),
        found => found,
    }
}

/// The whitespace rungs, weighed together: the one place where old_str's lines match with
/// trailing whitespace ignored or indentation compared by width (at its strictest rung), or a
/// refusal listing the places when there are several.
fn whitespace(
    file: &Lines<'_>,
    old: &[u8],
    new: &[u8],
    max_len: u64,
) -> std::result::Result<Loose, Refusal> {
    let pattern: Vec<&[u8]> = old.split(|b| *b == b'\n').collect();
    if pattern
        .iter()
        .all(|l| l.iter().all(|b| b.is_ascii_whitespace()))
    {
        return Err(Refusal::NotFound);
    }
    let new_lines: Vec<&[u8]> = new.split(|b| *b == b'\n').collect();
    let mut found: Vec<(usize, Rung)> = Vec::new();
    for rung in [Rung::TrailingWhitespace, Rung::Indentation] {
        for at in seek::candidates(file, &pattern, 0..file.len() + 1, rung) {
            if !found.iter().any(|f| f.0 == at) {
                found.push((at, rung));
            }
        }
    }
    let (at, rung) = match found.as_slice() {
        [] => return Err(Refusal::NotFound),
        [one] => *one,
        _ => {
            let loosest = found.iter().map(|f| f.1).max().unwrap_or(Rung::Indentation);
            let mut at: Vec<usize> = found.iter().map(|f| f.0).collect();
            at.sort_unstable();
            return Err(Refusal::Loose(loosest, at));
        }
    };
    let mut replaced: Vec<Vec<u8>> = if rung == Rung::Indentation {
        let pairs = seek::indent_pairs(file, &pattern, at).unwrap_or_default();
        seek::reindent(&pairs, &new_lines).ok_or(Refusal::NotFound)?
    } else {
        new_lines.iter().map(|l| l.to_vec()).collect()
    };
    // Lines new_str keeps from old_str keep the file's bytes (its whitespace).
    for (n, o) in kept_lines(old, new) {
        replaced[n] = file.content(at + o).to_vec();
    }
    let content = splice_lines(file, at, pattern.len(), &replaced, new.is_empty());
    if content.len() as u64 > max_len {
        return Err(Refusal::TooLarge(content.len()));
    }
    Ok(Loose {
        content,
        line: at,
        rung,
    })
}

/// (new line, old line) pairs that new_str keeps unchanged from old_str, in their place: a
/// line new_str moves (lines added or removed before it) is written by new_str, and its
/// whitespace follows new_str's.
fn kept_lines(old: &[u8], new: &[u8]) -> Vec<(usize, usize)> {
    let mut o = old.to_vec();
    o.push(b'\n');
    let mut n = new.to_vec();
    n.push(b'\n');
    let (a, b) = (Lines::new(&o), Lines::new(&n));
    let mut kept = Vec::new();
    let (mut i, mut j) = (0, 0);
    for e in crate::edit::line_edits(&a, &b) {
        while i < e.old.start && j < e.new.start {
            kept.push((j, i));
            i += 1;
            j += 1;
        }
        (i, j) = (e.old.end, e.new.end);
    }
    while i < a.len() && j < b.len() {
        kept.push((j, i));
        i += 1;
        j += 1;
    }
    kept.retain(|(n, o)| n == o);
    kept
}

/// The file with lines `at..at+count` replaced by `lines` (nothing when `remove`).
fn splice_lines(
    file: &Lines<'_>,
    at: usize,
    count: usize,
    lines: &[Vec<u8>],
    remove: bool,
) -> Vec<u8> {
    let bytes = file.bytes;
    let last = at + count - 1;
    let ending = &file.raw(last)[file.content(last).len()..];
    let eol: &[u8] = if ending.is_empty() {
        file.newline()
    } else {
        ending
    };
    let mut out = Vec::with_capacity(bytes.len() + 64);
    out.extend_from_slice(&bytes[..file.offset(at)]);
    if !remove {
        for (k, l) in lines.iter().enumerate() {
            out.extend_from_slice(l);
            out.extend_from_slice(if k + 1 == lines.len() { ending } else { eol });
        }
    }
    out.extend_from_slice(&bytes[file.offset(at + count)..]);
    out
}

/// The result of [`splice`]: the file's new bytes and where the replacements were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced {
    /// The file's new bytes.
    pub content: Vec<u8>,
    /// Byte offsets in the old file where each replaced occurrence starts, ascending.
    pub at: Vec<usize>,
    /// The bytes searched for: old_str, with its line endings adapted to the file's.
    pub old: Vec<u8>,
    /// The bytes put in their place: new_str, with its line endings adapted likewise.
    pub new: Vec<u8>,
}

impl Spliced {
    /// Whole-line edits from `old` (the file before) to `new` (the file after) for the diff.
    pub fn edits(&self, old: &Lines<'_>, new: &Lines<'_>) -> Vec<Edit> {
        replacement_edits(old, new, &self.at, self.old.len(), self.new.len())
    }
}

/// Why [`splice`] made no change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// old_str occurs nowhere (in any line-ending form tried).
    NotFound,
    /// old_str occurs at these byte offsets and replace_all is not set.
    Multiple(Vec<usize>),
    /// The result would be this many bytes, over the limit.
    TooLarge(usize),
    /// Not as written; at this loose rung, at these 0-based lines.
    Loose(Rung, Vec<usize>),
}

/// The core of str_replace, without I/O: find old_str in the file (as written; in a CRLF file
/// first with its `\n` made `\r\n`; in an LF file, if it has `\r\n`, last with them made `\n`)
/// and splice new_str (with the same line endings) in place of exactly one occurrence (two
/// overlapping occurrences count as two), or of every non-overlapping occurrence, left to
/// right, with `replace_all`. Every byte outside the replaced spans is kept.
pub fn splice(
    file: &Lines<'_>,
    old: &[u8],
    new: &[u8],
    replace_all: bool,
    max_len: u64,
) -> std::result::Result<Spliced, Refusal> {
    let bytes = file.bytes;
    let crlf = file.newline() == b"\r\n";
    let mut attempts: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    if crlf && old.contains(&b'\n') {
        attempts.push((to_crlf(old), to_crlf(new)));
    }
    let new_as_file = if crlf { to_crlf(new) } else { new.to_vec() };
    attempts.push((old.to_vec(), new_as_file));
    if !crlf && memmem::find(old, b"\r\n").is_some() {
        // Text copied with CRLF endings, for a file that uses LF.
        attempts.push((to_lf(old), to_lf(new)));
    }
    let mut found: Option<(Vec<usize>, Vec<u8>, Vec<u8>)> = None;
    for (o, n) in attempts {
        let at: Vec<usize> = memmem::find_iter(bytes, &o).collect();
        if !at.is_empty() {
            found = Some((at, o, n));
            break;
        }
    }
    let Some((at, old_b, new_b)) = found else {
        return Err(Refusal::NotFound);
    };
    if at.len() > 1 && !replace_all {
        return Err(Refusal::Multiple(at));
    }
    if !replace_all {
        // Another occurrence overlapping the one found (`aa` in `aaa`) makes the edit
        // ambiguous too (found by fuzzing: the inverse replacement then edits elsewhere).
        if let Some(p) = memmem::find(&bytes[at[0] + 1..], &old_b) {
            return Err(Refusal::Multiple(vec![at[0], at[0] + 1 + p]));
        }
    }
    let new_len = bytes.len() - at.len() * old_b.len() + at.len() * new_b.len();
    if new_len as u64 > max_len {
        return Err(Refusal::TooLarge(new_len));
    }
    let mut out = Vec::with_capacity(new_len);
    let mut prev = 0;
    for &o in &at {
        out.extend_from_slice(&bytes[prev..o]);
        out.extend_from_slice(&new_b);
        prev = o + old_b.len();
    }
    out.extend_from_slice(&bytes[prev..]);
    Ok(Spliced {
        content: out,
        at,
        old: old_b,
        new: new_b,
    })
}

/// Whole-line edits covering each replacement (merged when they share lines), with lines that
/// did not change trimmed from both ends.
fn replacement_edits(
    old: &Lines<'_>,
    new: &Lines<'_>,
    at: &[usize],
    old_len: usize,
    new_len: usize,
) -> Vec<Edit> {
    // (first old line, end old line, byte delta before, byte delta after)
    let mut spans: Vec<(usize, usize, isize, isize)> = Vec::new();
    let mut delta: isize = 0;
    for &o in at {
        let ls = old.line_of(o);
        let le = old.line_of(o + old_len - 1) + 1;
        let after = delta + new_len as isize - old_len as isize;
        match spans.last_mut() {
            Some(last) if ls < last.1 => {
                last.1 = last.1.max(le);
                last.3 = after;
            }
            _ => spans.push((ls, le, delta, after)),
        }
        delta = after;
    }
    // A replacement can take away the ending of its last line, which then runs into the next
    // line: widen the edit until it ends on a line boundary of the new text too.
    let mut i = 0;
    while i < spans.len() {
        loop {
            let (_, le, _, after) = spans[i];
            let ne = (old.offset(le) as isize + after) as usize;
            if le >= old.len() || ne == 0 || new.bytes.get(ne - 1) == Some(&b'\n') {
                break;
            }
            match spans.get(i + 1).copied() {
                Some(next) if next.0 <= le => {
                    spans[i].1 = next.1.max(le + 1);
                    spans[i].3 = next.3;
                    spans.remove(i + 1);
                }
                _ => spans[i].1 = le + 1,
            }
        }
        i += 1;
    }
    spans
        .into_iter()
        .map(|(ls, le, before, after)| {
            let ns = (old.offset(ls) as isize + before) as usize;
            let ne = (old.offset(le) as isize + after) as usize;
            let mut e = Edit {
                old: ls..le,
                new: new.line_of(ns)..new.line_of(ne),
            };
            while e.old.start < e.old.end
                && e.new.start < e.new.end
                && old.raw(e.old.start) == new.raw(e.new.start)
            {
                e.old.start += 1;
                e.new.start += 1;
            }
            while e.old.start < e.old.end
                && e.new.start < e.new.end
                && old.raw(e.old.end - 1) == new.raw(e.new.end - 1)
            {
                e.old.end -= 1;
                e.new.end -= 1;
            }
            e
        })
        .collect()
}

/// A hint for a failed search: where old_str matches when whitespace is ignored, or how far it
/// matches exactly and where it first differs.
fn nearest_candidate(file: &Lines<'_>, old: &[u8]) -> String {
    let mut msg = whitespace_hint(file, old).unwrap_or_else(|| prefix_hint(file, old));
    if let Err(e) = std::str::from_utf8(file.bytes) {
        msg.push_str(&format!(
            "\nNote: the file is not UTF-8 (from line {} on); text with such bytes cannot be \
             matched, so choose old_str around them.",
            file.line_of(e.valid_up_to()) + 1
        ));
    }
    msg
}

/// old_str's lines (whitespace squashed away, blank ends dropped) at the first place the file
/// has them so.
fn whitespace_hint(file: &Lines<'_>, old: &[u8]) -> Option<String> {
    let want: Vec<Vec<u8>> = old.split(|b| *b == b'\n').map(squash).collect::<Vec<_>>();
    let first = want.iter().position(|l| !l.is_empty())?;
    let last = want.iter().rposition(|l| !l.is_empty())?;
    let want: Vec<&[u8]> = want[first..=last].iter().map(|v| v.as_slice()).collect();
    let n = file.len();
    if n < want.len() {
        return None;
    }
    let squashed: Vec<Vec<u8>> = (0..n).map(|i| squash(file.content(i))).collect();
    let end = want.len() - 1;
    let p = (0..=n - want.len()).find(|&p| {
        want.iter().enumerate().all(|(k, w)| {
            let line = &squashed[p + k];
            if want.len() == 1 {
                memmem::find(line, w).is_some()
            } else if k == 0 {
                line.ends_with(w)
            } else if k == end {
                line.starts_with(w)
            } else {
                line == w
            }
        })
    })?;
    let many = want.len() > 1;
    let mut msg = format!(
        "\nIt matches line{} {} if whitespace is ignored: indentation, tabs or spaces differ \
         (and not by one uniform shift, or in more than one place). The file has:",
        if many { "s" } else { "" },
        if many {
            format!("{}-{}", p + 1, p + want.len())
        } else {
            (p + 1).to_string()
        }
    );
    for k in p..(p + want.len()).min(p + 8) {
        msg.push_str(&format!(
            "\n  |{}",
            show(file.content(k)).replace('\t', "\\t")
        ));
    }
    Some(msg)
}

/// How much of old_str occurs, and where the file first differs from it.
fn prefix_hint(file: &Lines<'_>, old: &[u8]) -> String {
    let (mut lo, mut hi) = (0usize, old.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if memmem::find(file.bytes, &old[..mid]).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let first_line_len = old.iter().position(|b| *b == b'\n').unwrap_or(old.len());
    if lo < first_line_len.clamp(1, 8) {
        return "\nIts first line does not occur in the file either. Read the file again.".into();
    }
    let Some(p) = memmem::find(file.bytes, &old[..lo]) else {
        return String::new();
    };
    let n = file.len();
    let diverge = p + lo;
    let fl = file.line_of(diverge.min(file.bytes.len().saturating_sub(1)));
    let ol_start = old[..lo]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let ol_end = old[lo..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(old.len(), |i| lo + i);
    format!(
        "\nIts first {lo} bytes match the file at line {}, but then they differ: line {} of the \
         file is\n  |{}\nwhere old_str has\n  |{}",
        file.line_of(p) + 1,
        fl + 1,
        show(file.content(fl.min(n.saturating_sub(1)))),
        show(&old[ol_start..ol_end]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_conversion() {
        assert_eq!(to_crlf(b"a\nb\r\nc\n"), b"a\r\nb\r\nc\r\n");
        assert_eq!(to_lf(b"a\r\nb\rc\n"), b"a\nb\rc\n");
    }

    /// The diff of random replacements (single and all) applies back to give the new text.
    #[test]
    fn replacement_diffs_apply_back() {
        use crate::edit::{apply, parse, render, Hunk};
        let alphabet = [b"a".as_slice(), b"b", b"\n", b"\r\n", b" ", b"ab\n"];
        let mut seed: u64 = 3;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n
        };
        for _ in 0..20_000 {
            let file: Vec<u8> = (0..next(12))
                .flat_map(|_| alphabet[next(alphabet.len())].to_vec())
                .collect();
            if file.is_empty() {
                continue;
            }
            let start = next(file.len());
            let len = 1 + next((file.len() - start).min(6));
            let old = file[start..start + len].to_vec();
            let new: Vec<u8> = (0..next(4))
                .flat_map(|_| alphabet[next(alphabet.len())].to_vec())
                .collect();
            let at: Vec<usize> = memmem::find_iter(&file, &old).collect();
            let mut out = Vec::new();
            let mut prev = 0;
            for &o in &at {
                out.extend_from_slice(&file[prev..o]);
                out.extend_from_slice(&new);
                prev = o + old.len();
            }
            out.extend_from_slice(&file[prev..]);
            // A CR that ends a file without a newline reads as a line ending in a diff text;
            // the file itself is edited exactly, only its diff cannot show that one byte.
            if out.ends_with(b"\r") {
                continue;
            }
            let (a, b) = (Lines::new(&file), Lines::new(&out));
            let edits = replacement_edits(&a, &b, &at, old.len(), new.len());
            let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
            if diff.is_empty() {
                assert_eq!(file, out);
                continue;
            }
            let patch = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
            let hunks: Vec<Hunk<'_>> = patch.sections.into_iter().flat_map(|s| s.hunks).collect();
            let back = apply(&file, &hunks, 0).unwrap_or_else(|r| panic!("{}\n{diff}", r.message));
            assert_eq!(back.content, out, "{file:?} {old:?} -> {new:?}\n{diff}");
        }
    }

    /// Found by fuzzing: `aa` occurs twice in `xaaa` (overlapping); which one to replace is a
    /// guess, so it is refused like any other repeat. replace_all still replaces left to right.
    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let file = Lines::new(b"xaaa\n");
        assert_eq!(
            splice(&file, b"aa", b"b", false, u64::MAX),
            Err(Refusal::Multiple(vec![1, 2]))
        );
        let all = splice(&file, b"aa", b"b", true, u64::MAX).expect("replace_all");
        assert_eq!(all.content, b"xba\n");
        let one = splice(&file, b"xa", b"y", false, u64::MAX).expect("unique");
        assert_eq!(one.content, b"yaa\n");
    }

    #[test]
    fn hint_for_indentation() {
        let file = Lines::new(b"fn x() {\n\tif y {\n\t\treturn;\n\t}\n}\n");
        let hint = nearest_candidate(&file, b"    if y {\n        return;");
        assert!(hint.contains("lines 2-3"), "{hint}");
    }

    #[test]
    fn hint_for_divergence() {
        let file = Lines::new(b"alpha\nbeta gamma\ndelta\n");
        let hint = nearest_candidate(&file, b"beta gamma\ndelta2\n");
        assert!(hint.contains("line 3"), "{hint}");
    }

    #[test]
    fn trailing_whitespace_and_indentation_drift_are_forgiven_once() {
        let file = Lines::new(b"fn x() {\n\tif y {  \n\t\treturn;\n\t}\n}\n");
        let got = forgiving(
            &file,
            b"if y {\n    return;",
            b"if y {\n    return 1;",
            1 << 20,
        );
        // Copied one level too shallow: a uniform shift, undone for new_str too; the line it
        // keeps keeps the file's bytes (its trailing spaces).
        assert_eq!(
            got.expect("shifted").content,
            b"fn x() {\n\tif y {  \n\t\treturn 1;\n\t}\n}\n"
        );
        let got = forgiving(
            &file,
            b"    if y {\n        return;",
            b"    if z {\n        return 1;",
            1 << 20,
        )
        .expect("indentation");
        assert_eq!(got.rung, Rung::Indentation);
        assert_eq!(got.content, b"fn x() {\n\tif z {\n\t\treturn 1;\n\t}\n}\n");
        let got = forgiving(
            &file,
            b"\tif y {\n\t\treturn;",
            b"\tif y {\n\t\treturn 2;",
            1 << 20,
        )
        .expect("trailing");
        assert_eq!(got.rung, Rung::TrailingWhitespace);
        // A line new_str moves is written as new_str has it: no trailing whitespace kept.
        let file = Lines::new(b"x\na  \nb\nc\n");
        let got = forgiving(&file, b"a\nb\nc", b"b\na\nc", 1 << 20).expect("trailing");
        assert_eq!(got.content, b"x\nb\na\nc\n");
        let got = forgiving(&file, b"a\nb", b"new\na\nb", 1 << 20).expect("trailing");
        assert_eq!(got.content, b"x\nnew\na\nb\nc\n");
        let got = forgiving(&file, b"a\nb", b"a\nB", 1 << 20).expect("trailing");
        assert_eq!(got.content, b"x\na  \nB\nc\n");
        let twice = Lines::new(b"a \nb\na\t\nb\n");
        assert!(matches!(
            forgiving(&twice, b"a\nb", b"c", 1 << 20),
            Err(Refusal::Loose(_, _))
        ));
    }
}
