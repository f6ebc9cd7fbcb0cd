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
//! `ToolSpec::model_text` (`tools::outcome`), which reads the JSON back into the result type
//! first.

use std::fmt::Write as _;

/// `CODE: message`: the stable code first, so that a model (and a person) can act on it.
pub fn error_text(code: &str, message: &str) -> String {
    format!("{code}: {message}")
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
