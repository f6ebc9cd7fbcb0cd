//! A call's outcome as text, chosen by the tool: what a model reads (`Tool::model_text`, for
//! MCP `content` and the agent's tool messages) and what a person reads (`Tool::human_text`,
//! `--format text`). The shared pieces of both live in `render`; picking the tool's own
//! renderer by name is done here, above the tools.

use serde_json::Value;

use super::{find, spec, ToolName, ToolSpec};
use crate::error::{Error, Result};
use crate::render::human::Text;
use crate::render::model::error_text;

/// What a model reads of a call's outcome: the tool's text, or `CODE: message`.
pub fn model_outcome(tool: ToolName, outcome: &Result<Value>) -> String {
    match outcome {
        Ok(result) => model_result(tool, result),
        Err(e) => error_text(e.code(), &e.message()),
    }
}

/// What a model reads of a successful result (`Tool::model_text`).
pub fn model_result(tool: ToolName, result: &Value) -> String {
    (spec(tool).model_text)(result)
}

/// What a model reads of an envelope as the binaries write it (`{"ok":true,"tool","result"}`
/// or `{"ok":false,"error":{"code","message"}}`).
/// What the user's hooks said (`hook_context`) follows the result's text.
pub fn model_envelope(envelope: &Value) -> String {
    if envelope.get("ok").and_then(Value::as_bool) == Some(true) {
        let result = envelope.get("result").unwrap_or(&Value::Null);
        let text = match envelope.get("tool").and_then(Value::as_str).and_then(find) {
            Some(spec) => (spec.model_text)(result),
            None => result.to_string(),
        };
        return match envelope.get("hook_context").and_then(Value::as_str) {
            Some(said) => format!("{text}\n\nhook_context: {said}"),
            None => text,
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

/// What a person reads of an outcome with `--format text`; the tool's binary names the program
/// in stderr lines (`sneaky-grep: …`). The description is taken rather than looked up by name,
/// so that a tool binary links only its own tool.
pub fn human_outcome(spec: &ToolSpec, outcome: &std::result::Result<Value, Error>) -> Text {
    match outcome {
        Ok(result) => (spec.human_text)(result),
        Err(e) => Text {
            stdout: String::new(),
            stderr: format!("{}: {}: {}\n", spec.binary(), e.code(), e.message()),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::tools::{self, Tool};
    use serde_json::json;

    fn result_text(tool: ToolName, result: &Value) -> String {
        model_result(tool, result)
    }

    fn outcome_text(tool: ToolName, outcome: &Result<Value>) -> String {
        model_outcome(tool, outcome)
    }

    fn envelope_text(envelope: &Value) -> String {
        model_envelope(envelope)
    }

    fn render(spec: &ToolSpec, outcome: &std::result::Result<Value, Error>) -> Text {
        human_outcome(spec, outcome)
    }

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
            "duration_ms": 1, "programs": ["true"], "effect": "reads", "env_removed": [],
            "config_restored": false});
        if let (Value::Object(all), Value::Object(given)) = (&mut result, fields) {
            all.extend(given);
        }
        result
    }

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
        let result = command(json!({"exit_code": 2, "stdout": "out\n", "stderr": "err\n"}));
        let t = render(spec(ToolName::RunCommand), &Ok(result));
        assert_eq!(t.stdout, "out\n");
        assert_eq!(t.stderr, "err\nsneaky-run: exit status 2\n");
    }

    /// Serialize -> deserialize -> serialize: the JSON a tool writes reads back into its result
    /// type unchanged, so a host holding only that JSON renders the typed result.
    fn round_trip<T: Tool>(samples: &[Value]) {
        for sample in samples {
            let typed: T::Output = serde_json::from_value(sample.clone())
                .unwrap_or_else(|e| panic!("{}: {e}: {sample}", T::NAME.as_str()));
            let again = serde_json::to_value(&typed).expect("serializes");
            assert_eq!(&again, sample, "{}", T::NAME.as_str());
        }
    }

    /// Every tool's own call (`Doc::calls`) has its real result read back so in
    /// tests/suite/examples.rs; these are the shapes a plain call does not show (cut results,
    /// dry runs, forgotten history, background jobs …).
    #[test]
    fn optional_parts_of_results_read_back_from_their_json() {
        round_trip::<tools::list::ListDir>(&[
            json!({"path": "src", "entries": ["src/a/", "src/b.rs"], "truncated": false}),
            json!({"path": ".", "entries": ["a"], "truncated": true, "next_offset": 1}),
        ]);
        round_trip::<tools::grep::GrepFiles>(&[
            json!({"matches": [
                    {"path": "a", "line": 2, "text": "m1", "before": ["b1"], "after": ["a3"]},
                    {"path": "a", "line": 4, "text": "m2", "before": ["a3"]},
                    {"path": "b", "line": 1, "text": "m4"}
                ], "truncated": true, "next_offset": 3}),
            json!({"files": ["b", "a"], "truncated": false}),
            json!({"counts": {"z": 2, "a": 1}, "truncated": false}),
        ]);
        round_trip::<tools::find::FindFiles>(&[
            json!({"files": ["a", "b/"], "truncated": true, "next_offset": 2}),
        ]);
        round_trip::<tools::outline::Outline>(&[
            json!({"symbols": [
                    {"path": "a.rs", "name": "S", "kind": "struct", "line": 1, "end_line": 3,
                     "signature": "struct S", "container": null},
                    {"path": "a.rs", "name": "f", "kind": "method", "line": 5, "end_line": 5,
                     "signature": "fn f()", "container": "S"}
                ], "truncated": true, "next_offset": 2,
                "unsupported": {"count": 1, "files": [{"path": "b.md",
                                "reason": "not a supported language"}]}}),
            json!({"symbols": [], "truncated": false}),
        ]);
        round_trip::<tools::symbol::FindSymbol>(&[
            json!({"symbols": [
                    {"path": "a.rs", "name": "f", "kind": "method", "line": 5, "end_line": 6,
                     "signature": "fn f()", "container": "S", "body": "fn f() {\n}\n"}
                ], "truncated": false}),
            json!({"symbols": [], "truncated": true, "next_offset": 100,
                       "unsupported": {"count": 1, "files": [{"path": "b.md",
                                       "reason": "not a supported language"}]}}),
        ]);
        round_trip::<tools::refs::FindReferences>(&[json!({"references": [
                    {"path": "a.rs", "line": 9, "column": 5, "text": "    f();",
                     "container": "main"},
                    {"path": "b.rs", "line": 1, "column": 1, "text": "f();", "container": null}
                ], "truncated": true, "next_offset": 2})]);
        round_trip::<tools::write::WriteFile>(&[
            json!({"path": "a", "bytes_written": 2, "created": false, "dry_run": false,
                       "diff": "-x\n+y\n"}),
            json!({"path": "l", "bytes_written": 2, "created": false, "dry_run": true,
                       "diff": "…", "diff_truncated": true, "resolved_path": "t"}),
            json!({"path": "a", "bytes_written": 2, "created": true, "dry_run": false,
                       "diff": "+y\n", "change_id": "c1-2-0", "forgotten_changes": 3}),
            json!({"path": "a", "bytes_written": 2, "created": true, "dry_run": false,
                       "diff": "+y\n", "undo_unavailable": "no place for the undo history"}),
        ]);
        round_trip::<tools::mkdir::MakeDir>(&[
            json!({"path": "a/b", "created": true, "created_dirs": ["a", "a/b"]}),
            json!({"path": "a", "created": false}),
        ]);
        round_trip::<tools::rm::DeleteFile>(&[json!({"path": "a", "kind": "link"})]);
        round_trip::<tools::replace::StrReplace>(&[
            json!({"path": "a", "line": 3, "replacements": 2, "rung": "indentation",
                     "replace_all": true, "dry_run": false, "diff": "d", "diff_truncated": true,
                     "resolved_path": "t"}),
        ]);
        round_trip::<tools::patch::PatchApply>(&[
            json!({"path": "a", "hunks_applied": 1, "dry_run": false, "created": true,
                       "diff": "d", "adjustments": [{"hunk": 1, "expected_line": 3,
                       "applied_line": 5, "offset": 2, "fuzz": 1, "rung": "fuzz"}]}),
            json!({"path": "a.rs", "hunks_applied": 3, "dry_run": true, "diff": "…",
                       "files": [
                    {"path": "a.rs", "action": "modified", "hunks_applied": 2, "adjustments": [
                        {"hunk": 2, "applied_line": 14, "offset": -4, "fuzz": 0,
                         "rung": "numbers_ignored"}]},
                    {"path": "b.rs", "action": "renamed", "from": "old.rs", "hunks_applied": 1}],
                       "warnings": ["w"], "diff_truncated": true}),
        ]);
        round_trip::<tools::run::RunCommand>(&[
            json!({"exit_code": null, "stdout": "o", "stderr": "", "timed_out": false,
                     "truncated": true, "signal": "SIGKILL", "sandboxed": false,
                     "sandbox": "none", "stdout_lossy": true, "stderr_lossy": false,
                     "stdout_bytes": 1, "stderr_bytes": 0, "duration_ms": 3,
                     "programs": ["ls"], "effect": "reads", "env_removed": ["TOKEN"], "config_restored": true}),
            json!({"exit_code": null, "stdout": "up\n", "stderr": "", "timed_out": false,
                     "truncated": false, "signal": null, "sandboxed": true,
                     "sandbox": "landlock", "stdout_lossy": false, "stderr_lossy": false,
                     "stdout_bytes": 3, "stderr_bytes": 0, "duration_ms": 3,
                     "programs": ["serve"], "effect": "writes", "env_removed": [], "config_restored": false,
                     "job_id": "3fa2-1", "running": true, "matched": true}),
        ]);
        let job = json!({"job_id": "3fa2-1", "command": "serve", "stdout": "o", "stderr": "e",
            "running": false, "exit_code": null, "signal": "SIGTERM", "ended_by": "kill",
            "matched": false, "stdout_offset": 2, "stderr_offset": 0, "stdout_bytes": 3,
            "stderr_bytes": 1, "dropped_bytes": 0, "more": false, "tty": false,
            "sandboxed": true, "sandbox": "landlock", "elapsed_ms": 9, "lease_left_s": null});
        let mut listed =
            serde_json::to_value(crate::shell::jobs::JobView::default()).expect("a job view");
        listed["jobs"] = json!([{"job_id": "3fa2-1", "command": "serve", "started": 1,
            "state": "running", "exit_code": null, "signal": null, "ended_by": null,
            "tty": true, "stdout_bytes": 3, "stderr_bytes": 0, "lease_left_s": 5}]);
        round_trip::<tools::jobs::JobOutput>(&[job, listed]);
        round_trip::<tools::undo::Undo>(&[
            json!({"undone": "c1-2-0", "change_id": "c3-4-0", "paths": ["a"],
                       "diff": "-x\n+y\n", "diff_truncated": false, "dry_run": false}),
            json!({"paths": [], "diff": "", "diff_truncated": false, "dry_run": false,
                       "changes": [{"change_id": "c3-4-0", "tool": "undo", "paths": ["a"],
                                    "time": 1, "undoes": "c1-2-0"}]}),
        ]);
    }
}
