//! The syntax errors an edit introduced: write_file, str_replace and patch_apply parse the file
//! before and after (one helper call, both at once, through `sneaky-outline --parse`) and
//! report the errors of the new content that the old one did not have, so that a file
//! already broken, or half-way through a multi-step edit, does not repeat its old errors at
//! every step. An error is the old one when the same error stands on a line of the same text
//! (an edit above it moves it, it does not make it new).
//!
//! Never blocking: a file of another language, a helper that cannot be run or does not answer
//! within [`CHECK_TIME_LIMIT`], leaves the result without errors; the edit itself is done
//! before the check.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::source::MAX_SOURCE_BYTES;
use super::tags::SyntaxError;
use super::{elsewhere, Lang};

/// How long an edit waits for its check at most.
pub const CHECK_TIME_LIMIT: Duration = Duration::from_secs(2);

/// A parse error the edit introduced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IntroducedError {
    /// File path relative to the workspace root.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub column: u32,
    /// What is wrong: `unexpected "}"`, `missing ")"`.
    pub text: String,
}

/// One file an edit changed: its content before (None: it is new) and after.
pub struct Edited<'a> {
    pub path: &'a str,
    pub before: Option<&'a [u8]>,
    pub after: &'a [u8],
}

/// The errors the edits introduced, by file in the order given.
pub fn introduced(edits: &[Edited<'_>]) -> Vec<IntroducedError> {
    let mut asked: Vec<(Lang, &[u8])> = Vec::new();
    // Per edit: its language, and where its two parses are in `asked`.
    let mut plan = Vec::new();
    for edit in edits {
        let name = edit.path.rsplit('/').next().unwrap_or(edit.path);
        // A header that reads as C++ before or after the edit is parsed as C++ both times.
        let lang = match (Lang::of_file(name, edit.after), edit.before) {
            (Some(Lang::C), Some(before)) => Lang::of_file(name, before),
            (lang, _) => lang,
        };
        let Some(lang) = lang else {
            continue;
        };
        if edit.after.len() as u64 > MAX_SOURCE_BYTES {
            continue;
        }
        let before = edit
            .before
            .filter(|b| b.len() as u64 <= MAX_SOURCE_BYTES)
            .map(|b| {
                asked.push((lang, b));
                asked.len() - 1
            });
        asked.push((lang, edit.after));
        plan.push((edit, before, asked.len() - 1));
    }
    if plan.is_empty() {
        return Vec::new();
    }
    let Ok(parsed) = elsewhere::parse_elsewhere(&asked, Some(CHECK_TIME_LIMIT)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (edit, before, after) in plan {
        let Some(Ok(new)) = parsed.get(after) else {
            continue;
        };
        let old = before
            .and_then(|b| parsed.get(b))
            .and_then(|p| p.as_ref().ok())
            .map_or(&[][..], |t| &t.errors[..]);
        for e in new_errors(edit.before.unwrap_or(b""), old, edit.after, &new.errors) {
            out.push(IntroducedError {
                path: edit.path.to_string(),
                line: e.line,
                column: e.column,
                text: e.text.clone(),
            });
        }
    }
    out
}

/// The errors of `after` that `before` did not have: an error counts as the old one when an
/// error with the same text stands on a line of the same text (as many times as it did).
fn new_errors<'e>(
    before: &[u8],
    old: &[SyntaxError],
    after: &[u8],
    new: &'e [SyntaxError],
) -> Vec<&'e SyntaxError> {
    let mut had: HashMap<(&str, &[u8]), usize> = HashMap::new();
    for e in old {
        *had.entry((e.text.as_str(), line_of(before, e.line)))
            .or_default() += 1;
    }
    let mut out = Vec::new();
    for e in new {
        match had.get_mut(&(e.text.as_str(), line_of(after, e.line))) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(e),
        }
    }
    out
}

/// Line `n` (from 1) of `text`, without its line ending or the spaces around it.
fn line_of(text: &[u8], n: u32) -> &[u8] {
    let line = text
        .split(|&b| b == b'\n')
        .nth(usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX))
        .unwrap_or(b"");
    line.trim_ascii()
}

/// The closing note of an edit's text for a model: which syntax errors it introduced.
pub fn note(errors: &[IntroducedError]) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n[the edit introduced syntax errors:");
    for e in errors {
        let _ = write!(out, " {}:{}:{}: {};", e.path, e.line, e.column, e.text);
    }
    out.push(']');
    out
}

/// The same for `--format text`, a line each on stderr.
pub fn human_note(errors: &[IntroducedError], binary: &str, stderr: &mut String) {
    for e in errors {
        let _ = writeln!(
            stderr,
            "{binary}: {}:{}:{}: the edit introduced a syntax error: {}",
            e.path, e.line, e.column, e.text
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line: u32, text: &str) -> SyntaxError {
        SyntaxError {
            line,
            column: 1,
            text: text.into(),
        }
    }

    #[test]
    fn an_error_that_moved_is_the_old_one() {
        let before = b"a\nbroken(\nc\n";
        let after = b"new line\na\nbroken(\nc\nd)\n";
        let old = [error(2, "missing \")\"")];
        let new = [error(3, "missing \")\""), error(5, "unexpected \")\"")];
        let found = new_errors(before, &old, after, &new);
        assert_eq!(found, [&new[1]]);
        // Two of the same where there was one: one is new.
        let new = [error(3, "missing \")\""), error(3, "missing \")\"")];
        assert_eq!(new_errors(before, &old, after, &new).len(), 1);
        assert_eq!(line_of(b"x\n  y  \nz", 2), b"y");
        assert_eq!(line_of(b"x", 7), b"");
    }
}
