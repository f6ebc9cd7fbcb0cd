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
//! The text is made from the result's JSON (what every surface has in hand), one function per
//! tool, chosen by an exhaustive match on `ToolName`: a new tool does not compile without one.

use std::collections::BTreeMap;
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
            .and_then(ToolName::from_name)
        {
            Some(tool) => result_text(tool, result),
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

/// The text of a successful result.
pub fn result_text(tool: ToolName, result: &Value) -> String {
    match tool {
        ToolName::ReadFile => read_file(result),
        ToolName::ListDir => list_dir(result),
        ToolName::GrepFiles => grep_files(result),
        ToolName::FindFiles => find_files(result),
        ToolName::WriteFile => write_file(result),
        ToolName::MakeDir => make_dir(result),
        ToolName::DeleteFile => delete_file(result),
        ToolName::StrReplace => str_replace(result),
        ToolName::PatchApply => patch_apply(result),
        ToolName::RunCommand => run_command(result),
        ToolName::Finish => text(result, "message").to_string(),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn number(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `path (lines a-b of N)`, then the content unchanged.
fn read_file(r: &Value) -> String {
    let path = text(r, "path");
    let (start, end, total) = (
        number(r, "start_line"),
        number(r, "end_line"),
        number(r, "total_lines"),
    );
    let content = text(r, "content");
    let header = if total == 0 {
        format!("{path} (empty file)")
    } else if end < start {
        format!(
            "{path} (nothing there: the file has {})",
            plural(total, "line", "lines")
        )
    } else {
        format!("{path} (lines {start}-{end} of {total})")
    };
    if content.is_empty() {
        return header;
    }
    format!("{header}\n{content}")
}

/// One path a line, with a closing note when the list was cut.
fn path_lines(r: &Value, paths: &[&str], what: &str, empty: &str) -> String {
    if paths.is_empty() {
        return empty.to_string();
    }
    let mut out = paths.join("\n");
    out.push_str(&cut_note(r, paths.len(), what));
    out
}

/// When a result was cut: how much is shown and how to get the rest (the next page's
/// `offset` when the tool pages).
fn cut_note(r: &Value, shown: usize, what: &str) -> String {
    if !flag(r, "truncated") {
        return String::new();
    }
    match r.get("next_offset").and_then(Value::as_u64) {
        Some(next) => format!(
            "\n[{shown} shown, more follow: call again with offset {next}, or narrow the {what}]"
        ),
        None => format!("\n[only {shown} shown; narrow the {what} or raise max_results]"),
    }
}

/// `ls -1pR`: entries grouped under their directory, each directory once as a heading
/// (`src/:`) and its entries by name beneath, in the result's order (directories first); the
/// workspace root's own entries need no heading. The result's paths are relative to the root;
/// naming each directory once instead of on every line is what keeps this at `ls`'s cost.
fn list_dir(r: &Value) -> String {
    let entries = strings(r, "entries");
    if entries.is_empty() {
        return format!("{} is empty", display_dir(text(r, "path")));
    }
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for entry in &entries {
        let bare = entry.strip_suffix('/').unwrap_or(entry);
        let split = bare.rfind('/').map_or(0, |i| i + 1);
        groups
            .entry(&entry[..split])
            .or_default()
            .push(&entry[split..]);
    }
    let mut out = String::new();
    for (dir, names) in &groups {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        if !dir.is_empty() {
            out.push_str(dir);
            out.push_str(":\n");
        }
        out.push_str(&names.join("\n"));
    }
    out.push_str(&cut_note(r, entries.len(), "listing"));
    out
}

fn is_root(path: &str) -> bool {
    matches!(path, "" | "." | "./")
}

fn display_dir(path: &str) -> String {
    match path {
        p if is_root(p) => "the workspace root".to_string(),
        p if p.ends_with('/') => p.to_string(),
        p => format!("{p}/"),
    }
}

fn find_files(r: &Value) -> String {
    path_lines(r, &strings(r, "files"), "pattern", "no files match")
}

/// The lines shown for one file: line number → (is a match, text).
type FileLines<'a> = BTreeMap<u64, (bool, &'a str)>;

/// `rg --heading -n`: each file's path, then its lines as `n:text` (matches) and `n-text`
/// (context), `--` between runs of lines that do not touch, a blank line between files.
/// Results in another output mode (`files`, `counts`) are listed as rg lists them.
fn grep_files(r: &Value) -> String {
    if let Some(counts) = r.get("counts").and_then(Value::as_object) {
        let lines: Vec<String> = counts.iter().map(|(p, n)| format!("{p}:{n}")).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        return path_lines(r, &lines, "search", "no matches");
    }
    if r.get("files").is_some_and(Value::is_array) {
        return path_lines(r, &strings(r, "files"), "search", "no matches");
    }
    let matches = r
        .get("matches")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if matches.is_empty() {
        return "no matches".to_string();
    }
    // Per file (in result order): line number → (is a match, text); a match wins over the
    // same line seen as another match's context.
    let mut files: Vec<(&str, FileLines)> = Vec::new();
    for m in matches {
        let path = text(m, "path");
        if files.last().map(|(p, _)| *p) != Some(path) {
            files.push((path, BTreeMap::new()));
        }
        let Some((_, lines)) = files.last_mut() else {
            continue;
        };
        let line = number(m, "line");
        let before = strings(m, "before");
        for (i, t) in before.iter().enumerate() {
            let n = line.saturating_sub((before.len() - i) as u64);
            lines.entry(n).or_insert((false, t));
        }
        lines.insert(line, (true, text(m, "text")));
        for (i, t) in strings(m, "after").iter().enumerate() {
            lines.entry(line + 1 + i as u64).or_insert((false, t));
        }
    }
    // Without context, rg puts no `--` between distant matches; with it, between runs.
    let with_context = matches
        .iter()
        .any(|m| !strings(m, "before").is_empty() || !strings(m, "after").is_empty());
    let mut out = String::new();
    for (i, (path, lines)) in files.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(path);
        out.push('\n');
        let mut previous: Option<u64> = None;
        for (n, (is_match, t)) in lines {
            if with_context && previous.is_some_and(|p| p + 1 < *n) {
                out.push_str("--\n");
            }
            let separator = if *is_match { ':' } else { '-' };
            let _ = writeln!(out, "{n}{separator}{t}");
            previous = Some(*n);
        }
    }
    let mut out = out.trim_end_matches('\n').to_string();
    out.push_str(&cut_note(
        r,
        matches.len(),
        "pattern or path (counting matches)",
    ));
    out
}

/// Notes every edit tool shares: the link that was followed, a diff cut short.
fn edit_notes(r: &Value, out: &mut String) {
    let resolved = text(r, "resolved_path");
    if !resolved.is_empty() {
        let _ = write!(out, " (through the link to {resolved})");
    }
}

fn with_diff(mut head: String, r: &Value) -> String {
    let diff = text(r, "diff");
    if !diff.is_empty() {
        head.push('\n');
        head.push_str(diff.trim_end_matches('\n'));
        if flag(r, "diff_truncated") {
            head.push_str("\n[diff cut at max_output_bytes]");
        }
    }
    head
}

/// "wrote x" for a change made, "dry run, nothing changed: would have written x" for one shown.
fn change(r: &Value, past: &str, participle: &str) -> String {
    if flag(r, "dry_run") {
        format!("dry run, nothing changed: would have {participle}")
    } else {
        past.to_string()
    }
}

/// A new file: the model wrote its content, so only the size. A replaced file: the diff
/// shows what was there before.
fn write_file(r: &Value) -> String {
    let created = flag(r, "created");
    let verb = if created {
        change(r, "created", "created")
    } else {
        change(r, "wrote", "written")
    };
    let mut out = format!(
        "{verb} {} ({})",
        text(r, "path"),
        plural(number(r, "bytes_written"), "byte", "bytes")
    );
    edit_notes(r, &mut out);
    if created && !flag(r, "dry_run") {
        return out;
    }
    if text(r, "diff").is_empty() && !created {
        out.push_str("; the content was already the same");
        return out;
    }
    with_diff(out, r)
}

fn make_dir(r: &Value) -> String {
    let path = display_dir(text(r, "path"));
    if !flag(r, "created") {
        return format!("{path} already exists");
    }
    let made = strings(r, "created_dirs");
    if made.len() > 1 {
        let made: Vec<String> = made.iter().map(|d| display_dir(d)).collect();
        return format!("created {}", made.join(", "));
    }
    format!("created {path}")
}

fn delete_file(r: &Value) -> String {
    match text(r, "kind") {
        "link" => format!("deleted the link {} (not its target)", text(r, "path")),
        _ => format!("deleted {}", text(r, "path")),
    }
}

fn str_replace(r: &Value) -> String {
    let n = number(r, "replacements").max(1);
    let mut out = format!(
        "{} {} in {} at line {}",
        change(r, "replaced", "replaced"),
        plural(n, "occurrence", "occurrences"),
        text(r, "path"),
        number(r, "line")
    );
    edit_notes(r, &mut out);
    with_diff(out, r)
}

/// The hunks applied (per file for a multi-file patch), where they landed when not exactly
/// where their headers said, the warnings; the diff only for a dry run (the model wrote the
/// patch).
fn patch_apply(r: &Value) -> String {
    let files = r
        .get("files")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut out = if files.is_empty() {
        let hunks = plural(number(r, "hunks_applied"), "hunk", "hunks");
        let verb = if flag(r, "created") {
            change(r, "created", "created")
        } else {
            change(r, "patched", "patched")
        };
        let mut out = format!("{verb} {} ({hunks})", text(r, "path"));
        edit_notes(r, &mut out);
        adjustments(r, &mut out);
        out
    } else {
        let mut out = format!(
            "{} {}:",
            change(r, "patched", "patched"),
            plural(files.len() as u64, "file", "files")
        );
        for file in files {
            let _ = write!(out, "\n{} {}", text(file, "action"), text(file, "path"));
            let from = text(file, "from");
            if !from.is_empty() {
                let _ = write!(out, " (from {from})");
            }
            let hunks = number(file, "hunks_applied");
            if hunks > 0 {
                let _ = write!(out, " ({})", plural(hunks, "hunk", "hunks"));
            }
            adjustments(file, &mut out);
        }
        out
    };
    for w in strings(r, "warnings") {
        let _ = write!(out, "\nwarning: {w}");
    }
    if flag(r, "dry_run") {
        return with_diff(out, r);
    }
    out
}

/// Hunks placed other than exactly where their headers said: where, and by which rung.
fn adjustments(r: &Value, out: &mut String) {
    for a in r
        .get("adjustments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let _ = write!(
            out,
            "\n  hunk {} applied at line {}",
            number(a, "hunk"),
            number(a, "applied_line")
        );
        if let Some(expected) = a.get("expected_line").and_then(Value::as_u64) {
            let _ = write!(out, " (its header said {expected})");
        }
        let rung = text(a, "rung");
        if !matches!(rung, "" | "exact" | "offset") {
            let _ = write!(out, ", matched by {}", rung.replace('_', " "));
        }
        let fuzz = number(a, "fuzz");
        if fuzz > 0 {
            let _ = write!(
                out,
                ", ignoring {} of context at each end: check it",
                plural(fuzz, "line", "lines")
            );
        }
    }
}

/// The status line, then stdout and stderr, each under a marker when there is any.
fn run_command(r: &Value) -> String {
    let mut out = match r.get("exit_code").and_then(Value::as_i64) {
        _ if flag(r, "timed_out") => "timed out and was killed".to_string(),
        Some(code) => format!("exit code {code}"),
        None => match text(r, "signal") {
            "" => "killed".to_string(),
            signal => format!("killed by {signal}"),
        },
    };
    if !flag(r, "sandboxed") && !text(r, "sandbox").is_empty() {
        let _ = write!(out, " (not sandboxed: {})", text(r, "sandbox"));
    }
    if flag(r, "config_restored") {
        out.push_str("\nnote: the command changed sneaky.toml; it was put back");
    }
    for (stream, lossy) in [("stdout", "stdout_lossy"), ("stderr", "stderr_lossy")] {
        let body = text(r, stream);
        if body.is_empty() {
            continue;
        }
        let _ = write!(out, "\n[{stream}");
        if flag(r, lossy) {
            out.push_str(", not UTF-8: decoded lossily");
        }
        out.push_str("]\n");
        out.push_str(body.trim_end_matches('\n'));
    }
    if text(r, "stdout").is_empty() && text(r, "stderr").is_empty() {
        out.push_str(", no output");
    }
    out
}

#[cfg(test)]
mod tests {
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
        let r = json!({"path": "a", "line": 3, "replacements": 2, "dry_run": true, "diff": ""});
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
        let r = json!({"exit_code": 1, "stdout": "out\n", "stderr": "err\n", "timed_out": false,
                       "truncated": false, "signal": null, "sandboxed": true, "sandbox": "x"});
        assert_eq!(
            result_text(ToolName::RunCommand, &r),
            "exit code 1\n[stdout]\nout\n[stderr]\nerr"
        );
        let r = json!({"exit_code": 0, "stdout": "", "stderr": "", "sandboxed": true});
        assert_eq!(
            result_text(ToolName::RunCommand, &r),
            "exit code 0, no output"
        );
    }
}
