//! Unified diffs over bytes: reading a patch into hunks, placing every hunk in a file's lines
//! (never by a guess), and printing the diff of an edit. Nothing here does I/O: the parser turns
//! text into hunks and names the patch line that was wrong; applying is a separate step that
//! works on the file's bytes and either places every hunk or explains each that failed.
//!
//! A hunk is placed by its own line numbers (hunks may come in any order, never overlapping).
//! Every rung of a ladder is asked where its lines are — exact, numbers and counts ignored,
//! trailing whitespace ignored, context lines that lost their marker space, tabs/spaces and a
//! uniform indentation shift (added lines re-indented alike), context lines alone shifted —
//! and one decision is made from all the places found: one place, or the one at the expected
//! line, else a refusal listing them. Only when none answers: a `...` line at either end of
//! the hunk standing for lines left out, then fuzz (unique in its window, and never where the
//! lines match with all whitespace ignored). The placement says which rung was used.
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
//! git's extended headers (`new file mode`, `deleted file mode`, `rename from/to`) mark a
//! section's creation, deletion or rename; Codex's `*** Begin Patch` envelope is read into the
//! same sections (see `codex`). Other lines (git's `index` line, commentary, a Markdown fence, a
//! `-- ` mail signature) are skipped; prose or a fence right after a hunk whose counts are off
//! ends it when no change line follows. A header whose counts disagree with its body is read by the body, with a warning.
//! Lines are compared without their line ending, so a patch written with LF applies to a CRLF
//! file; added lines take the line ending of the file's lines around them (those the hunk keeps
//! or removes), or the file's dominant one when those are no guide.
//!
//! The engine's parts, in the order a patch goes through them:
//! - [`patch`]: a patch as data (sections, hunks, lines) and the error naming its bad line.
//! - [`parse`]: patch text → sections (one per file) → hunks; [`codex`] for the Codex envelope.
//! - [`lines`]: a file's bytes as lines (content without endings, raw with them).
//! - [`seek`]: the ladder of ways a hunk's lines may match, and the candidates at each rung.
//! - [`place`]: what placing works with and yields (a hunk as the placer sees it, its place).
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
mod patch;
mod place;
mod render;
pub(crate) mod seek;

pub use apply::apply;
pub use build::Applied;
pub(crate) use explain::{show, squash};
pub use lines::Lines;
pub use parse::parse;
pub use patch::{Hunk, HunkLine, Op, ParseError, Patch, Section};
pub use place::{Placement, Rejection, MAX_FUZZ};
pub use render::{diff_text, line_edits, render, Edit};
pub use seek::{Rung, WINDOW};

#[cfg(test)]
mod tests;
