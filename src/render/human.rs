//! `--format text`: a tool's outcome as a person at a shell expects to read it
//! (docs/contract.md, "What comes out"). read_file prints the content as is, grep_files rg's
//! `path:line:text` lines, find_files and list_dir one path a line, run_command the command's
//! own stdout and stderr on the matching streams, the edit tools their diff. A failure is one line
//! `sneaky-TOOL: CODE: message` on stderr; a result that was cut says so on stderr, so that
//! stdout stays exactly the data. Exit statuses are the protocol's, whatever the format.
//!
//! This is the shell's renderer; what a model reads is written elsewhere (for a model, not for a
//! terminal), and the two are kept apart on purpose. Each tool writes its own text from its
//! typed result (`Tool::human_text`); the helpers here are the pieces several tools share.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::catalog::ToolName;
use crate::render::stream::Streamed;

/// What goes to each stream.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub stdout: String,
    pub stderr: String,
}

/// Write both streams; a closed pipe is not an error.
pub fn print(text: &Text) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.stdout.as_bytes());
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.stderr.as_bytes());
    let _ = err.flush();
}

/// Each item on a line of its own.
pub fn lines<S: AsRef<str>>(out: &mut String, items: &[S]) {
    for item in items {
        let _ = writeln!(out, "{}", item.as_ref());
    }
}

/// "sneaky-find: the result was cut: only the first 1000 paths are shown (the next page:
/// --offset 1000)": `shown` results of the unit `what` (file lists and counts are files).
/// Nothing when the result was not cut.
pub fn cut_note(
    text: &mut Text,
    binary: &str,
    (truncated, next_offset): (bool, Option<u64>),
    shown: usize,
    what: &str,
) {
    if !truncated {
        return;
    }
    let next = match next_offset {
        Some(offset) => format!("the next page: --offset {offset}; or raise --max-results"),
        None => "raise --max-results, or narrow the search".to_string(),
    };
    let _ = writeln!(
        text.stderr,
        "{binary}: the result was cut: only the first {shown} {what} are shown ({next})"
    );
}

/// The stderr note of a streamed text run that was cut (nothing when it was not, or when the
/// reader went away): which results are shown, and how to see the rest.
pub fn streamed_note(tool: ToolName, end: Streamed, unit: &str) -> Option<String> {
    if !end.cut || end.closed {
        return None;
    }
    Some(format!(
        "{}: the result was cut: only the first {} {unit} found are shown, in the order they \
         were found (raise --max-results; --offset 0 prints sorted pages)\n",
        tool.binary(),
        end.shown
    ))
}

/// What `--format text` prints for an edit tool.
pub const EDIT_TEXT_FORMAT: &str =
    "the unified diff of the edit (of the edit that would be made, with --dry-run)";

/// What the edit tools show of an edit.
pub struct Edited<'a> {
    pub path: &'a str,
    pub diff: &'a str,
    pub diff_truncated: bool,
    pub dry_run: bool,
}

/// The edit tools: their diff on stdout; a dry run and an edit that changed nothing say so.
pub fn edit(binary: &str, edited: Edited<'_>) -> Text {
    let Edited {
        path,
        diff,
        diff_truncated,
        dry_run,
    } = edited;
    let mut text = Text::default();
    text.stdout.push_str(diff);
    if !diff.is_empty() && !diff.ends_with('\n') {
        text.stdout.push('\n');
    }
    if diff.is_empty() {
        let _ = writeln!(text.stderr, "{binary}: {path}: no change");
    }
    if diff_truncated {
        let _ = writeln!(text.stderr, "{binary}: the diff was cut");
    }
    if dry_run {
        let _ = writeln!(text.stderr, "{binary}: dry run: {path} was not changed");
    }
    text
}
