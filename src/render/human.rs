//! `--format text`: a tool's outcome as a person at a shell expects to read it (CONTRACT.md,
//! "Output"). read_file prints the content as is, grep_files rg's `path:line:text` lines,
//! find_files and list_dir one path a line, run_command the command's own stdout and stderr
//! on the matching streams, the edit tools their diff. A failure is one line
//! `sneaky-TOOL: CODE: message` on stderr; a result that was cut says so on stderr, so that
//! stdout stays exactly the data. Exit statuses are the protocol's, whatever the format.
//!
//! This is the shell's renderer; what a model reads is written elsewhere (for a model, not for a
//! terminal), and the two are kept apart on purpose.

use std::fmt::Write as _;
use std::io::Write as _;

use serde_json::Value;

use crate::catalog::ToolName;
use crate::error::Error;
use crate::render::stream::Streamed;

/// What goes to each stream.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub stdout: String,
    pub stderr: String,
}

/// Render an outcome; `binary` names the program in stderr lines (`sneaky-grep: …`).
pub fn render(tool: ToolName, outcome: &Result<Value, Error>) -> Text {
    let binary = tool.binary();
    let result = match outcome {
        Ok(result) => result,
        Err(e) => {
            return Text {
                stdout: String::new(),
                stderr: format!("{binary}: {}: {}\n", e.code(), e.message),
            }
        }
    };
    let mut text = Text::default();
    match tool {
        ToolName::ReadFile => text.stdout = str_field(result, "content").to_string(),
        ToolName::ListDir => {
            lines(&mut text.stdout, result, "entries");
            cut_note(&mut text, binary, result, "entries");
        }
        ToolName::GrepFiles => {
            grep(&mut text.stdout, result);
            cut_note(&mut text, binary, result, "matches");
        }
        ToolName::FindFiles => {
            lines(&mut text.stdout, result, "files");
            cut_note(&mut text, binary, result, "paths");
        }
        ToolName::WriteFile | ToolName::StrReplace | ToolName::PatchApply => {
            edit(&mut text, binary, result)
        }
        ToolName::MakeDir => {
            // `mkdir -pv`: the directories made, nothing when they all existed.
            for dir in strings(result, "created_dirs") {
                let _ = writeln!(text.stdout, "{dir}");
            }
            if result.get("created_dirs").is_none() && bool_field(result, "created") {
                let _ = writeln!(text.stdout, "{}", str_field(result, "path"));
            }
        }
        ToolName::DeleteFile => {
            let _ = writeln!(text.stdout, "{}", str_field(result, "path"));
        }
        ToolName::RunCommand => command(&mut text, binary, result),
        ToolName::Finish => {
            let _ = writeln!(text.stdout, "{}", str_field(result, "message"));
        }
    }
    text
}

/// What `--format text` prints for a tool, in a sentence (for its man page and help).
pub fn describe(tool: ToolName) -> &'static str {
    match tool {
        ToolName::ReadFile => "the file's content, as is",
        ToolName::ListDir => "one entry a line, directories suffixed with /",
        ToolName::GrepFiles => {
            "rg's lines: path:line:text for a match, path-line-text for a context line, -- \
             between groups; one path a line for files_with_matches, path:count for count. \
             They are written as each file is searched, so files come in the order they were \
             searched, as rg's do, and --max-results has no upper bound (with --offset, even 0, \
             the sorted page is printed instead)"
        }
        ToolName::FindFiles => {
            "one path a line, written as they are found, so in the order the walk finds them, \
             as fd's, and --max-results has no upper bound (with --offset, even 0, the sorted \
             page is printed instead)"
        }
        ToolName::WriteFile | ToolName::StrReplace | ToolName::PatchApply => {
            "the unified diff of the edit (of the edit that would be made, with --dry-run)"
        }
        ToolName::MakeDir => "each directory created, one a line (nothing when it existed)",
        ToolName::DeleteFile => "the path deleted",
        ToolName::RunCommand => {
            "the command's stdout on stdout and its stderr on stderr; then, on stderr, its exit \
             status, signal or timeout when it did not succeed"
        }
        ToolName::Finish => "the message",
    }
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

fn str_field<'a>(result: &'a Value, key: &str) -> &'a str {
    result.get(key).and_then(Value::as_str).unwrap_or("")
}

fn bool_field(result: &Value, key: &str) -> bool {
    result.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn strings<'a>(result: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    result
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn lines(out: &mut String, result: &Value, key: &str) {
    for item in strings(result, key) {
        let _ = writeln!(out, "{item}");
    }
}

/// "sneaky-find: the result was cut: only the first 1000 paths are shown (the next page:
/// --offset 1000)". `what` names the unit of a content result; file lists and counts are files.
fn cut_note(text: &mut Text, binary: &str, result: &Value, what: &str) {
    if !bool_field(result, "truncated") {
        return;
    }
    let (shown, what) = match (result.get("files"), result.get("counts")) {
        (Some(Value::Array(files)), _) if what != "paths" => (files.len(), "files"),
        (_, Some(Value::Object(counts))) => (counts.len(), "files"),
        _ => {
            let shown = ["entries", "matches", "files"]
                .iter()
                .find_map(|key| result.get(*key).and_then(Value::as_array).map(Vec::len))
                .unwrap_or(0);
            (shown, what)
        }
    };
    let next = match result.get("next_offset").and_then(Value::as_u64) {
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

/// rg's forms: `path:line:text` for matches, `path-line-text` for context lines, `--` between
/// groups that do not touch; `path` alone (files_with_matches) and `path:n` (count).
fn grep(out: &mut String, result: &Value) {
    if let Some(counts) = result.get("counts").and_then(Value::as_object) {
        for (path, n) in counts {
            let _ = writeln!(out, "{path}:{n}");
        }
        return;
    }
    if result.get("files").is_some() {
        lines(out, result, "files");
        return;
    }
    let matches = result
        .get("matches")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let with_context = matches
        .iter()
        .any(|m| m.get("before").is_some() || m.get("after").is_some());
    // The last line printed: (path, line number), so overlapping context is printed once.
    let mut last: Option<(&str, u64)> = None;
    for m in matches {
        let path = str_field(m, "path");
        let line = m.get("line").and_then(Value::as_u64).unwrap_or(0);
        let before: Vec<&str> = strings(m, "before").collect();
        let first = line.saturating_sub(before.len() as u64);
        if with_context {
            if let Some((last_path, last_line)) = last {
                if last_path != path || last_line + 1 < first {
                    out.push_str("--\n");
                }
            }
        }
        let mut emit = |n: u64, sep: char, text: &str| {
            if last.is_some_and(|(p, l)| p == path && n <= l) {
                return;
            }
            let _ = writeln!(out, "{path}{sep}{n}{sep}{text}");
            last = Some((path, n));
        };
        for (i, text) in before.iter().enumerate() {
            emit(first + i as u64, '-', text);
        }
        emit(line, ':', str_field(m, "text"));
        for (i, text) in strings(m, "after").enumerate() {
            emit(line + 1 + i as u64, '-', text);
        }
    }
}

/// The edit tools: their diff on stdout; a dry run and an edit that changed nothing say so.
fn edit(text: &mut Text, binary: &str, result: &Value) {
    let diff = str_field(result, "diff");
    text.stdout.push_str(diff);
    if !diff.is_empty() && !diff.ends_with('\n') {
        text.stdout.push('\n');
    }
    let path = str_field(result, "path");
    if diff.is_empty() {
        let _ = writeln!(text.stderr, "{binary}: {path}: no change");
    }
    if bool_field(result, "diff_truncated") {
        let _ = writeln!(text.stderr, "{binary}: the diff was cut");
    }
    if bool_field(result, "dry_run") {
        let _ = writeln!(text.stderr, "{binary}: dry run: {path} was not changed");
    }
}

/// The command's own streams, then, on stderr, how it ended when it did not succeed.
fn command(text: &mut Text, binary: &str, result: &Value) {
    text.stdout.push_str(str_field(result, "stdout"));
    text.stderr.push_str(str_field(result, "stderr"));
    if bool_field(result, "truncated") {
        let _ = writeln!(
            text.stderr,
            "{binary}: the output was cut at max_output_bytes ({} bytes on stdout, {} on stderr)",
            result
                .get("stdout_bytes")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            result
                .get("stderr_bytes")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        );
    }
    let code = result.get("exit_code").and_then(Value::as_i64);
    if bool_field(result, "timed_out") {
        let _ = writeln!(text.stderr, "{binary}: timed out; the command was killed");
    } else if let Some(signal) = result.get("signal").and_then(Value::as_str) {
        let _ = writeln!(text.stderr, "{binary}: killed by {signal}");
    } else if let Some(code) = code.filter(|c| *c != 0) {
        let _ = writeln!(text.stderr, "{binary}: exit status {code}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn failures_are_one_line_on_stderr() {
        let e = Error::new(ErrorKind::NotFound, "x.txt does not exist");
        let t = render(ToolName::ReadFile, &Err(e));
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
        let t = render(ToolName::GrepFiles, &Ok(result));
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
        let t = render(ToolName::GrepFiles, &Ok(result));
        assert_eq!(t.stdout, "a:2:x\nb:7:y\n");
        assert!(t.stderr.contains("first 2 matches"), "{}", t.stderr);
        let result = json!({"files": ["a", "b"], "truncated": true, "next_offset": 2});
        let t = render(ToolName::GrepFiles, &Ok(result));
        assert_eq!(t.stdout, "a\nb\n");
        assert!(t.stderr.contains("first 2 files"), "{}", t.stderr);
        assert!(t.stderr.contains("--offset 2"), "{}", t.stderr);
    }

    #[test]
    fn command_status_goes_to_stderr() {
        let result = json!({"exit_code": 2, "stdout": "out\n", "stderr": "err\n",
            "timed_out": false, "truncated": false, "signal": null});
        let t = render(ToolName::RunCommand, &Ok(result));
        assert_eq!(t.stdout, "out\n");
        assert_eq!(t.stderr, "err\nsneaky-run: exit status 2\n");
    }
}
