//! Unified diffs over bytes: reading a patch into hunks, applying hunks to a file's lines the
//! way GNU patch does, and printing the diff of an edit. Nothing here does I/O: the parser turns
//! text into hunks and names the patch line that was wrong; applying is a separate step that
//! works on the file's bytes and either places every hunk or explains the first that failed.
//!
//! Grammar accepted by [`parse`] (what `git diff`, `diff -u` and people write):
//!
//! ```text
//! patch   := { other-line } { section }
//! section := [ "diff " … ] { other-line } [ "--- " old-name NL "+++ " new-name NL ] hunk { hunk }
//! hunk    := "@@ -" start [ "," count ] " +" start [ "," count ] " @@" [ text ] NL { body }
//!          | "@@" [ text ] NL { body }                    (no line numbers: found by content)
//! body    := ( " " | "-" | "+" ) text NL                  (context, removed, added)
//!          | NL                                           (an empty context line, space lost)
//!          | "\" text NL                                  ("\ No newline at end of file")
//! ```
//!
//! Other lines (the `index`/mode preamble of git, commentary, a `-- ` mail signature) are
//! skipped. A header whose counts disagree with its body is read by the body, with a warning.
//! Lines are compared without their line ending, so a patch written with LF applies to a CRLF
//! file; added lines take the line ending of the file's lines around them (those the hunk keeps
//! or removes), or the file's dominant one when those are no guide.
//!
//! The engine's parts, in the order a patch goes through them:
//! - [`parse`]: patch text → sections (one per file) → hunks.
//! - [`lines`]: a file's bytes as lines (content without endings, raw with them).
//! - [`seek`]: the ladder of ways a hunk's lines may match, and the candidates at each rung.
//! - [`apply`]: place every hunk by its own numbers, only where one candidate answers.
//! - [`build`]: the new bytes and the line edits, once every hunk has its place.
//! - [`explain`]: why a hunk does not apply, the real cause first.
//! - [`render`]: the unified diff of an edit, and the line edits between two versions.

mod apply;
mod build;
mod codex;
mod explain;
mod lines;
mod parse;
mod render;
pub(crate) mod seek;

pub use apply::{apply, Placement, Rejection, MAX_FUZZ};
pub use build::Applied;
pub(crate) use explain::{show, squash};
pub use lines::Lines;
pub use parse::{parse, Hunk, HunkLine, Op, ParseError, Patch, Section};
pub use render::{line_edits, render, Edit};
pub use seek::{Rung, WINDOW};

#[cfg(test)]
mod tests;
