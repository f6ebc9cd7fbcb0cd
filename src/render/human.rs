//! `--format text`: a tool's outcome as a person at a shell expects to read it (CONTRACT.md,
//! "Output"). read_file prints the content as is, grep_files rg's `path:line:text` lines,
//! find_files and list_dir one path a line, run_command the command's own stdout and stderr
//! on the matching streams, the edit tools their diff. A failure is one line
//! `sneaky-TOOL: CODE: message` on stderr; a result that was cut says so on stderr, so that
//! stdout stays exactly the data. Exit statuses are the protocol's, whatever the format.
//!
//! This is the shell's renderer; what a model reads is written elsewhere (for a model, not for a
//! terminal), and the two are kept apart on purpose. Each tool writes its own text from its
//! typed result (`Tool::human_text`); the helpers here are the pieces several tools share.

use std::fmt::Write as _;
use std::io::Write as _;

use serde_json::Value;

use crate::catalog::ToolName;
use crate::error::Error;
use crate::render::stream::Streamed;
use crate::tools::ToolSpec;

/// What goes to each stream.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub stdout: String,
    pub stderr: String,
}

/// Render an outcome; the tool's binary names the program in stderr lines (`sneaky-grep: …`).
/// The description is taken rather than looked up by name, so that a tool binary links only
/// its own tool.
pub fn render(spec: &ToolSpec, outcome: &Result<Value, Error>) -> Text {
    match outcome {
        Ok(result) => (spec.human_text)(result),
        Err(e) => Text {
            stdout: String::new(),
            stderr: format!("{}: {}: {}\n", spec.binary(), e.code(), e.message),
        },
    }
}

/// What `--format text` prints for a tool, in a sentence (for its man page and help).
pub fn describe(tool: ToolName) -> &'static str {
    crate::tools::spec(tool).text_format
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::tools::spec;
    use serde_json::json;

    #[test]
    fn failures_are_one_line_on_stderr() {
        let e = Error::new(ErrorKind::NotFound, "x.txt does not exist");
        let t = render(spec(ToolName::ReadFile), &Err(e));
        assert_eq!(t.stdout, "");
        assert_eq!(t.stderr, "sneaky-read: not_found: x.txt does not exist\n");
    }

    #[test]
    fn grep_context_is_printed_like_rg() {
        let result = json!({"matches": [
            {"path": "a", "line": 2, "text": "m1", "before": ["b1"], "after": ["a3"]},
            {"path": "a", "line": 4, "text": "m2", "before": ["a3"]},
            {"path": "a", "line": 9, "text": "m3"},
            {"path": "b", "line": 1, "text": "m4"}
        ], "truncated": false});
        let t = render(spec(ToolName::GrepFiles), &Ok(result));
        assert_eq!(
            t.stdout,
            "a-1-b1\na:2:m1\na-3-a3\na:4:m2\n--\na:9:m3\n--\nb:1:m4\n"
        );
    }

    #[test]
    fn grep_without_context_has_no_separators() {
        let result = json!({"matches": [
            {"path": "a", "line": 2, "text": "x"},
            {"path": "b", "line": 7, "text": "y"}
        ], "truncated": true});
        let t = render(spec(ToolName::GrepFiles), &Ok(result));
        assert_eq!(t.stdout, "a:2:x\nb:7:y\n");
        assert!(t.stderr.contains("first 2 matches"), "{}", t.stderr);
        let result = json!({"files": ["a", "b"], "truncated": true, "next_offset": 2});
        let t = render(spec(ToolName::GrepFiles), &Ok(result));
        assert_eq!(t.stdout, "a\nb\n");
        assert!(t.stderr.contains("first 2 files"), "{}", t.stderr);
        assert!(t.stderr.contains("--offset 2"), "{}", t.stderr);
    }

    #[test]
    fn command_status_goes_to_stderr() {
        let result = crate::render::model::tests::command(
            json!({"exit_code": 2, "stdout": "out\n", "stderr": "err\n"}),
        );
        let t = render(spec(ToolName::RunCommand), &Ok(result));
        assert_eq!(t.stdout, "out\n");
        assert_eq!(t.stderr, "err\nsneaky-run: exit status 2\n");
    }
}
