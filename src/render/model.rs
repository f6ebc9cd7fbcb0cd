//! What a model reads as a tool's result: the text of an MCP tool result and of the tool
//! messages `sneaky-agent run` sends back. The JSON result stays where programs read it
//! (`structuredContent`, the binaries' stdout); this text is written for a model, in the shapes
//! it knows from the plain tools and at about their cost in tokens (`benches/tokens.sh`):
//!
//! - read_file: a one-line header (path, lines a-b of N), then the content as it is;
//! - grep_files: matches grouped under each file as `line:text`, context lines `line-text`,
//!   `--` between groups that do not touch, a blank line between files (`rg --heading -n`);
//! - find_files: one path a line; list_dir: one entry a line under a heading per directory
//!   (`ls -1pR`);
//! - the edit tools: one line saying what changed, and the diff where it tells something;
//! - run_command: the exit status, then stdout and stderr;
//! - a failure: `CODE: message`.
//!
//! Each tool writes its own text from its typed result (`Tool::model_text`); the helpers here
//! are the pieces several tools share. A host holding the JSON renders it through the tool's
//! `ToolSpec::model_text`, which reads the JSON back into the result type first.

use std::fmt::Write as _;

use serde_json::Value;

use crate::catalog::ToolName;
use crate::error::Result;

/// The text of a call's outcome.
pub fn outcome_text(tool: ToolName, outcome: &Result<Value>) -> String {
    match outcome {
        Ok(result) => result_text(tool, result),
        Err(e) => error_text(e.code(), &e.message),
    }
}

/// The text of an envelope as the binaries write it (`{"ok":true,"tool","result"}` or
/// `{"ok":false,"error":{"code","message"}}`).
pub fn envelope_text(envelope: &Value) -> String {
    if envelope.get("ok").and_then(Value::as_bool) == Some(true) {
        let result = envelope.get("result").unwrap_or(&Value::Null);
        return match envelope
            .get("tool")
            .and_then(Value::as_str)
            .and_then(crate::tools::find)
        {
            Some(spec) => (spec.model_text)(result),
            None => result.to_string(),
        };
    }
    error_text(
        envelope
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or("error"),
        envelope
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or(""),
    )
}

/// `CODE: message`: the stable code first, so that a model (and a person) can act on it.
pub fn error_text(code: &str, message: &str) -> String {
    format!("{code}: {message}")
}

/// The text of a successful result (`Tool::model_text`).
pub fn result_text(tool: ToolName, result: &Value) -> String {
    (crate::tools::spec(tool).model_text)(result)
}

/// `1 line`, `2 lines`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// One path a line, with a closing note when the list was cut (`cut_note`); `empty` when
/// there are none.
pub fn path_lines<S: AsRef<str>>(
    paths: &[S],
    truncated: bool,
    next_offset: Option<u64>,
    what: &str,
    empty: &str,
) -> String {
    if paths.is_empty() {
        return empty.to_string();
    }
    let mut out = String::new();
    for (i, path) in paths.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(path.as_ref());
    }
    out.push_str(&cut_note(truncated, next_offset, paths.len(), what));
    out
}

/// When a result was cut: how much is shown and how to get the rest (the next page's
/// `offset` when the tool pages). Nothing when it was not cut.
pub fn cut_note(truncated: bool, next_offset: Option<u64>, shown: usize, what: &str) -> String {
    if !truncated {
        return String::new();
    }
    match next_offset {
        Some(next) => format!(
            "\n[{shown} shown, more follow: call again with offset {next}, or narrow the {what}]"
        ),
        None => format!("\n[only {shown} shown; narrow the {what} or raise max_results]"),
    }
}

fn is_root(path: &str) -> bool {
    matches!(path, "" | "." | "./")
}

/// A directory as a sentence names it: `src/`, or the workspace root.
pub fn display_dir(path: &str) -> String {
    match path {
        p if is_root(p) => "the workspace root".to_string(),
        p if p.ends_with('/') => p.to_string(),
        p => format!("{p}/"),
    }
}

/// Notes every edit tool shares: the link that was followed.
pub fn edit_notes(resolved_path: Option<&str>, out: &mut String) {
    if let Some(resolved) = resolved_path.filter(|r| !r.is_empty()) {
        let _ = write!(out, " (through the link to {resolved})");
    }
}

/// `head`, then the diff when there is one, and a note when it was cut.
pub fn with_diff(mut head: String, diff: &str, diff_truncated: bool) -> String {
    if !diff.is_empty() {
        head.push('\n');
        head.push_str(diff.trim_end_matches('\n'));
        if diff_truncated {
            head.push_str("\n[diff cut at max_output_bytes]");
        }
    }
    head
}

/// "wrote x" for a change made, "dry run, nothing changed: would have written x" for one shown.
pub fn change(dry_run: bool, past: &str, participle: &str) -> String {
    if dry_run {
        format!("dry run, nothing changed: would have {participle}")
    } else {
        past.to_string()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::{Error, ErrorKind};
    use serde_json::json;

    #[test]
    fn read_file_is_a_header_and_the_content() {
        let r = json!({"path": "a.rs", "content": "fn main() {\n    \"x\"\n}\n", "total_lines": 3,
                       "start_line": 1, "end_line": 3, "truncated": false});
        assert_eq!(
            result_text(ToolName::ReadFile, &r),
            "a.rs (lines 1-3 of 3)\nfn main() {\n    \"x\"\n}\n"
        );
        let empty = json!({"path": "e", "content": "", "total_lines": 0, "start_line": 1,
                           "end_line": 0, "truncated": false});
        assert_eq!(result_text(ToolName::ReadFile, &empty), "e (empty file)");
    }

    #[test]
    fn grep_groups_by_file_with_context_like_rg() {
        let r = json!({"truncated": false, "matches": [
            {"path": "a.rs", "line": 2, "text": "two", "before": ["one"], "after": ["three"]},
            {"path": "a.rs", "line": 3, "text": "three", "before": ["two"], "after": ["four"]},
            {"path": "a.rs", "line": 9, "text": "nine"},
            {"path": "b.rs", "line": 1, "text": "x:y"},
        ]});
        let plain = json!({"truncated": false, "matches": [
            {"path": "a.rs", "line": 2, "text": "two"}, {"path": "a.rs", "line": 9, "text": "nine"},
        ]});
        assert_eq!(
            result_text(ToolName::GrepFiles, &plain),
            "a.rs\n2:two\n9:nine"
        );
        assert_eq!(
            result_text(ToolName::GrepFiles, &r),
            "a.rs\n1-one\n2:two\n3:three\n4-four\n--\n9:nine\n\nb.rs\n1:x:y"
        );
        let none = json!({"matches": [], "truncated": false});
        assert_eq!(result_text(ToolName::GrepFiles, &none), "no matches");
    }

    #[test]
    fn paths_one_a_line_and_a_note_when_cut() {
        let r = json!({"files": ["a", "b/c"], "truncated": true});
        let t = result_text(ToolName::FindFiles, &r);
        assert!(t.starts_with("a\nb/c\n[only 2 shown"), "{t}");
        let r = json!({"files": ["a"], "truncated": true, "next_offset": 1});
        let t = result_text(ToolName::FindFiles, &r);
        assert!(
            t.starts_with("a\n[1 shown, more follow: call again with offset 1"),
            "{t}"
        );
        let r = json!({"path": "src", "entries": [], "truncated": false});
        assert_eq!(result_text(ToolName::ListDir, &r), "src/ is empty");
        let r = json!({"path": "src", "entries": ["src/a/", "src/b.rs", "src/a/c.rs"],
                       "truncated": false});
        assert_eq!(
            result_text(ToolName::ListDir, &r),
            "src/:\na/\nb.rs\n\nsrc/a/:\nc.rs"
        );
        let r = json!({"path": ".", "entries": ["a/", "b.rs"], "truncated": false});
        assert_eq!(result_text(ToolName::ListDir, &r), "a/\nb.rs");
    }

    #[test]
    fn edits_say_what_changed_and_dry_runs_what_would_have() {
        let r = json!({"path": "a", "bytes_written": 2, "created": false, "dry_run": false,
                       "diff": "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n"});
        assert_eq!(
            result_text(ToolName::WriteFile, &r),
            "wrote a (2 bytes)\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y"
        );
        let r = json!({"path": "a", "bytes_written": 1, "created": true, "dry_run": false,
                       "diff": "+x\n"});
        assert_eq!(result_text(ToolName::WriteFile, &r), "created a (1 byte)");
        let r = json!({"path": "a", "line": 3, "replacements": 2, "rung": "exact",
                       "replace_all": true, "dry_run": true, "diff": ""});
        assert_eq!(
            result_text(ToolName::StrReplace, &r),
            "dry run, nothing changed: would have replaced 2 occurrences in a at line 3"
        );
    }

    #[test]
    fn multi_file_patches_list_each_file() {
        let r = json!({"path": "", "hunks_applied": 3, "dry_run": false, "diff": "…",
        "files": [
            {"path": "a.rs", "action": "modified", "hunks_applied": 2, "adjustments": [
                {"hunk": 2, "expected_line": 10, "applied_line": 14, "offset": 4,
                 "fuzz": 0, "rung": "indentation"}]},
            {"path": "b.rs", "action": "renamed", "from": "old.rs", "hunks_applied": 1},
            {"path": "c.rs", "action": "deleted", "hunks_applied": 0},
        ]});
        assert_eq!(
            result_text(ToolName::PatchApply, &r),
            "patched 3 files:\nmodified a.rs (2 hunks)\n  hunk 2 applied at line 14 (its \
             header said 10), matched by indentation\nrenamed b.rs (from old.rs) (1 hunk)\n\
             deleted c.rs"
        );
    }

    #[test]
    fn errors_lead_with_their_code() {
        let e = Err(Error::new(ErrorKind::OutsideWorkspace, "../x is outside"));
        assert_eq!(
            outcome_text(ToolName::ReadFile, &e),
            "outside_workspace: ../x is outside"
        );
        let envelope = json!({"ok": false, "tool": "x", "error": {"code": "not_found",
                                                               "message": "no a.txt"}});
        assert_eq!(envelope_text(&envelope), "not_found: no a.txt");
    }

    #[test]
    fn run_command_states_the_status_then_the_streams() {
        let r = command(json!({"exit_code": 1, "stdout": "out\n", "stderr": "err\n",
                               "sandboxed": true, "sandbox": "x"}));
        assert_eq!(
            result_text(ToolName::RunCommand, &r),
            "exit code 1\n[stdout]\nout\n[stderr]\nerr"
        );
        let r = command(json!({"exit_code": 0, "stdout": "", "stderr": "", "sandboxed": true}));
        assert_eq!(
            result_text(ToolName::RunCommand, &r),
            "exit code 0, no output"
        );
    }

    /// A whole run_command result: `fields` over one that ran `true` quietly.
    pub(crate) fn command(fields: Value) -> Value {
        let mut result = json!({"exit_code": 0, "stdout": "", "stderr": "", "timed_out": false,
            "truncated": false, "signal": null, "sandboxed": true, "sandbox": "",
            "stdout_lossy": false, "stderr_lossy": false, "stdout_bytes": 0, "stderr_bytes": 0,
            "duration_ms": 1, "programs": ["true"], "env_removed": [], "config_restored": false});
        if let (Value::Object(all), Value::Object(given)) = (&mut result, fields) {
            all.extend(given);
        }
        result
    }
}
