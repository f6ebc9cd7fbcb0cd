//! Tool results as text, for the two kinds of readers that do not want JSON.
//!
//! - `model`: what a model reads as a tool's result (MCP `content`, the tool messages
//!   `sneaky-agent run` sends back): compact, unescaped, in the shapes models know from the
//!   plain tools (`cat`, `rg --heading -n`, `ls`).
//! - `human`: `--format text` of the tool binaries, for people at a shell (raw content, rg's
//!   `path:line:text`, one path a line, the command's own streams, diffs); `stream` writes it
//!   while a search runs, for the tools whose text needs no global order.

pub mod human;
pub mod model;
pub mod stream;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{json, Value};

    use crate::tools::{self, Tool};

    /// Serialize -> deserialize -> serialize: the JSON a tool writes reads back into its result
    /// type unchanged, so a host holding only that JSON renders the typed result.
    fn round_trip<T: Tool>(seen: &mut BTreeSet<&'static str>, samples: &[Value]) {
        for sample in samples {
            let typed: T::Output = serde_json::from_value(sample.clone())
                .unwrap_or_else(|e| panic!("{}: {e}: {sample}", T::NAME.as_str()));
            let again = serde_json::to_value(&typed).expect("serializes");
            assert_eq!(&again, sample, "{}", T::NAME.as_str());
        }
        seen.insert(T::NAME.as_str());
    }

    #[test]
    fn every_result_reads_back_from_its_json() {
        let mut seen = BTreeSet::new();
        let seen = &mut seen;
        round_trip::<tools::read::ReadFile>(
            seen,
            &[
                json!({"path": "a.rs", "content": "x\n", "total_lines": 1, "start_line": 1,
                     "end_line": 1, "truncated": false}),
            ],
        );
        round_trip::<tools::list::ListDir>(
            seen,
            &[
                json!({"path": "src", "entries": ["src/a/", "src/b.rs"], "truncated": false}),
                json!({"path": ".", "entries": ["a"], "truncated": true, "next_offset": 1}),
            ],
        );
        round_trip::<tools::grep::GrepFiles>(
            seen,
            &[
                json!({"matches": [
                    {"path": "a", "line": 2, "text": "m1", "before": ["b1"], "after": ["a3"]},
                    {"path": "a", "line": 4, "text": "m2", "before": ["a3"]},
                    {"path": "b", "line": 1, "text": "m4"}
                ], "truncated": true, "next_offset": 3}),
                json!({"files": ["b", "a"], "truncated": false}),
                json!({"counts": {"z": 2, "a": 1}, "truncated": false}),
            ],
        );
        round_trip::<tools::find::FindFiles>(
            seen,
            &[json!({"files": ["a", "b/"], "truncated": true, "next_offset": 2})],
        );
        round_trip::<tools::write::WriteFile>(
            seen,
            &[
                json!({"path": "a", "bytes_written": 2, "created": false, "dry_run": false,
                       "diff": "-x\n+y\n"}),
                json!({"path": "l", "bytes_written": 2, "created": false, "dry_run": true,
                       "diff": "…", "diff_truncated": true, "resolved_path": "t"}),
            ],
        );
        round_trip::<tools::mkdir::MakeDir>(
            seen,
            &[
                json!({"path": "a/b", "created": true, "created_dirs": ["a", "a/b"]}),
                json!({"path": "a", "created": false}),
            ],
        );
        round_trip::<tools::rm::DeleteFile>(seen, &[json!({"path": "a", "kind": "link"})]);
        round_trip::<tools::replace::StrReplace>(
            seen,
            &[
                json!({"path": "a", "line": 3, "replacements": 2, "rung": "indentation",
                     "replace_all": true, "dry_run": false, "diff": "d", "diff_truncated": true,
                     "resolved_path": "t"}),
            ],
        );
        round_trip::<tools::patch::PatchApply>(
            seen,
            &[
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
            ],
        );
        round_trip::<tools::run::RunCommand>(
            seen,
            &[
                json!({"exit_code": null, "stdout": "o", "stderr": "", "timed_out": false,
                     "truncated": true, "signal": "SIGKILL", "sandboxed": false,
                     "sandbox": "none", "stdout_lossy": true, "stderr_lossy": false,
                     "stdout_bytes": 1, "stderr_bytes": 0, "duration_ms": 3,
                     "programs": ["ls"], "env_removed": ["TOKEN"], "config_restored": true}),
            ],
        );
        round_trip::<tools::finish::Finish>(seen, &[json!({"message": "done"})]);
        let all: BTreeSet<&str> = tools::all().map(|spec| spec.name()).collect();
        assert_eq!(*seen, all, "a sample for every tool");
    }
}
