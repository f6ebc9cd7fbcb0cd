//! patch_apply: apply a unified diff (or Codex's `*** Begin Patch` envelope), all hunks or none.
//! With `file_path`, the hunks go to that one file and the names in the patch are not used to
//! open anything. Without it, every file the patch names is changed — created, deleted,
//! renamed and patched as its headers say — all files or none (see `multi`).
//!
//! Each hunk is placed by the diff engine's ladder (exact, offset, numbers ignored, trailing
//! whitespace, lost marker, indentation, context indentation, elided, fuzz), only where one
//! place answers; the result says which rung placed each hunk that was not exact.

mod multi;

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::code::check::{self, Edited, IntroducedError};
use crate::edit::{self, Applied, Hunk, Op, Rung};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable;
use crate::fs::history::{self, Undoable};
use crate::render::human::{self, Text};
use crate::render::model;

/// Apply a unified diff (as printed by `git diff` or `diff -u`, or Codex's `*** Begin Patch`
/// envelope). All hunks apply or none does. With file_path, the diff's hunks go to that file;
/// without it, every file the diff names is patched, created, deleted or renamed as its
/// headers say, all files or none. Hunks are placed by their line numbers and context; a hunk
/// whose lines differ only in trailing whitespace or indentation, or that matches with fewer
/// context lines, is applied only where exactly one place matches, and the result says so.
/// A rejected hunk is named with what it expected to find.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchArgs {
    /// Path of the file to patch, relative to the workspace root; the file names in the
    /// patch's `---`/`+++` lines are then ignored. Omit it to apply a multi-file patch to the
    /// files its headers name.
    #[serde(default)]
    pub file_path: Option<String>,
    /// The unified diff: hunks starting with `@@ -old_start,count +new_start,count @@`, then
    /// lines starting with ' ' (context), '-' (removed) or '+' (added). Give at least 3 lines
    /// of context around each change.
    pub patch: String,
    /// Only check that the patch applies and return the diff it would make; change nothing.
    /// Default: false.
    #[serde(default)]
    pub dry_run: bool,
}

/// A hunk that did not apply exactly where its header said.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Adjustment {
    /// Hunk number (1-based, in patch order).
    pub hunk: usize,
    /// Line where the header said the hunk starts (absent for a header without numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_line: Option<usize>,
    /// Line of the old file where the hunk was applied.
    pub applied_line: usize,
    /// Lines between the two.
    pub offset: isize,
    /// Context lines ignored at each end to place the hunk (0 = exact).
    pub fuzz: usize,
    /// How the hunk's lines were found: `exact` (at the stated line), `offset` (as written, the
    /// one such place near it), `numbers_ignored` (as written, the one such place in the
    /// file), `trailing_whitespace`, `lost_marker` (context lines missing their leading
    /// space), `indentation` (tabs/spaces or a uniform shift; added lines re-indented alike),
    /// `context_indentation` (only the context lines shifted; added lines as written),
    /// `elided` (a `...` line at an end stood for lines left out) or `fuzz`. All the rungs'
    /// places are weighed together: one place, or the one at the stated line, else refused.
    pub rung: String,
}

/// One file of a multi-file patch.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct FileChange {
    /// The file's path after the change (for a deleted file, the path it had).
    pub path: String,
    /// `modified`, `created`, `deleted` or `renamed`.
    pub action: String,
    /// For a renamed file, its old path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub hunks_applied: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<Adjustment>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct PatchResult {
    /// The file patched (for a multi-file patch, the first file).
    pub path: String,
    /// Hunks applied (for a multi-file patch, in all files).
    pub hunks_applied: usize,
    pub dry_run: bool,
    /// True when the patch created the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created: bool,
    /// Hunks applied at another line than their header's, or with fuzz. Check fuzzed ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<Adjustment>,
    /// Without file_path: every file the patch changed, in patch order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// Things in the patch that were tolerated (such as header counts that disagree).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Unified diff of the change as made to the file(s).
    pub diff: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    /// The file actually patched when `path` is a link (inside the workspace) to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<String>,
    /// Parse errors the edit introduced (the file's errors before it are left out), for a
    /// file of a language the navigation tools parse; the edit is made all the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub syntax_errors: Vec<IntroducedError>,
    /// Its place in the undo history (`change_id`), for every edit but a dry run.
    #[serde(flatten)]
    pub undo: Undoable,
}

pub struct PatchApply;

fn rejected(message: String) -> Error {
    Error::new(ErrorKind::PatchRejected, message)
}

/// True when every hunk only adds lines to an empty file (`--- /dev/null`).
fn creates_file(hunks: &[Hunk<'_>]) -> bool {
    hunks.len() == 1
        && hunks[0].old_start.unwrap_or(0) == 0
        && hunks[0].lines.iter().all(|l| l.op == Op::Add)
}

/// The hunks that were not placed exactly as their headers said.
fn adjustments(applied: &Applied) -> Vec<Adjustment> {
    applied
        .placements
        .iter()
        .filter(|p| {
            p.offset != 0 || p.fuzz != 0 || p.expected_line.is_none() || p.rung != Rung::Exact
        })
        .map(|p| Adjustment {
            hunk: p.number,
            expected_line: p.expected_line,
            applied_line: p.line,
            offset: p.offset,
            fuzz: p.fuzz,
            rung: p.rung.name().to_string(),
        })
        .collect()
}

/// Apply hunks to a file's bytes: the new bytes, checked for NUL and size.
fn patched(path: &str, bytes: &[u8], hunks: &[Hunk<'_>], max: u64) -> Result<Applied> {
    let applied = edit::apply(bytes, hunks, edit::MAX_FUZZ)
        .map_err(|r| rejected(format!("{path}: {}", r.message)))?;
    if applied.content.contains(&0) {
        return Err(Error::new(
            ErrorKind::BinaryFile,
            format!("the patch adds a NUL byte to {path}"),
        ));
    }
    if applied.content.len() as u64 > max {
        return Err(durable::too_large(path, applied.content.len() as u64, max));
    }
    Ok(applied)
}

impl Tool for PatchApply {
    const NAME: ToolName = ToolName::PatchApply;
    const TITLE: &'static str = "Apply a unified diff";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: false,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["file_path"],
        stdin_param: Some("patch"),
    };
    const DOC: Doc = Doc {
        summary: "a unified diff (`git diff`, `diff -u`), all hunks or none",
        example: r#"{"file_path": "src/main.rs", "patch": "@@ -1 +1 @@\n-old\n+new\n"}"#,
        pipeline: "git diff -- src/main.rs > fix.patch; sneaky-patch src/main.rs --dry-run < fix.patch | jq .result.hunks_applied",
        config: &["max_file_size_bytes: largest file patched"],
        env: &[],
        text: TextExample::prints(
            &[("a.txt", "héllo\nworld\n")],
            &["a.txt"],
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-héllo\n+hello\n world\n",
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-héllo\n+hello\n world\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"file_path": "a.txt", "patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-héllo\n+hello\n world\n"}"#,
            fails: r#"{"file_path": "a.txt", "patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-hallo\n+hello\n world\n"}"#,
            fails_with: ErrorKind::PatchRejected,
        },
    };
    const SCHEMA: &'static str = committed_schema!("patch_apply");
    const PATH_PARAMS: &'static [&'static str] = &["file_path"];
    type Args = PatchArgs;
    type Output = PatchResult;

    fn run(args: PatchArgs, ctx: &Context) -> Result<PatchResult> {
        let parsed = edit::parse(&args.patch)
            .map_err(|e| rejected(format!("the patch cannot be read: {e}")))?;
        match &args.file_path {
            Some(file_path) => one_file(ctx, file_path, parsed, args.dry_run),
            None => multi::apply_all(ctx, parsed, args.dry_run),
        }
    }

    /// The hunks applied (per file for a multi-file patch), where they landed when not exactly
    /// where their headers said, the warnings; the diff only for a dry run (the model wrote the
    /// patch).
    fn model_text(r: &PatchResult) -> String {
        let mut out = if r.files.is_empty() {
            let hunks = model::plural(r.hunks_applied as u64, "hunk", "hunks");
            let verb = if r.created {
                model::change(r.dry_run, "created", "created")
            } else {
                model::change(r.dry_run, "patched", "patched")
            };
            let mut out = format!("{verb} {} ({hunks})", r.path);
            model::edit_notes(r.resolved_path.as_deref(), &mut out);
            adjustments_text(&r.adjustments, &mut out);
            out
        } else {
            let mut out = format!(
                "{} {}:",
                model::change(r.dry_run, "patched", "patched"),
                model::plural(r.files.len() as u64, "file", "files")
            );
            for file in &r.files {
                let _ = write!(out, "\n{} {}", file.action, file.path);
                if let Some(from) = file.from.as_deref().filter(|f| !f.is_empty()) {
                    let _ = write!(out, " (from {from})");
                }
                if file.hunks_applied > 0 {
                    let hunks = model::plural(file.hunks_applied as u64, "hunk", "hunks");
                    let _ = write!(out, " ({hunks})");
                }
                adjustments_text(&file.adjustments, &mut out);
            }
            out
        };
        for w in &r.warnings {
            let _ = write!(out, "\nwarning: {w}");
        }
        if r.dry_run {
            out = model::with_diff(out, &r.diff, r.diff_truncated);
        }
        out.push_str(&check::note(&r.syntax_errors));
        out
    }

    fn human_text(r: &PatchResult, binary: &str) -> Text {
        let mut text = human::edit(
            binary,
            human::Edited {
                path: &r.path,
                diff: &r.diff,
                diff_truncated: r.diff_truncated,
                dry_run: r.dry_run,
            },
        );
        check::human_note(&r.syntax_errors, binary, &mut text.stderr);
        text
    }

    const TEXT_FORMAT: &'static str = human::EDIT_TEXT_FORMAT;

    fn changed(r: &PatchResult) -> Vec<&str> {
        if r.dry_run {
            return Vec::new();
        }
        if r.files.is_empty() {
            return vec![r.resolved_path.as_deref().unwrap_or(&r.path)];
        }
        r.files
            .iter()
            .flat_map(|f| std::iter::once(f.path.as_str()).chain(f.from.as_deref()))
            .collect()
    }
}

/// Hunks placed other than exactly where their headers said: where, and by which rung.
fn adjustments_text(adjustments: &[Adjustment], out: &mut String) {
    for a in adjustments {
        let _ = write!(
            out,
            "\n  hunk {} applied at line {}",
            a.hunk, a.applied_line
        );
        if let Some(expected) = a.expected_line {
            let _ = write!(out, " (its header said {expected})");
        }
        if !matches!(a.rung.as_str(), "" | "exact" | "offset") {
            let _ = write!(out, ", matched by {}", a.rung.replace('_', " "));
        }
        if a.fuzz > 0 {
            let _ = write!(
                out,
                ", ignoring {} of context at each end: check it",
                model::plural(a.fuzz as u64, "line", "lines")
            );
        }
    }
}

/// The patch's hunks applied to `file_path` (the names in the patch are not used).
// Long: a one-file patch from its checks to its write: more than one section refused, a missing
// file created only when the hunks create it (refused dry or not before any directory is made),
// the hunks applied, the directories made held across the write to go again if it fails.
fn one_file(
    ctx: &Context,
    file_path: &str,
    parsed: edit::Patch<'_>,
    dry_run: bool,
) -> Result<PatchResult> {
    let rel = ctx.ws.relative(file_path)?;
    let path = rel.display().to_string();
    if parsed.sections.len() > 1 {
        let names: Vec<String> = parsed
            .sections
            .iter()
            .map(|s| s.new_name.or(s.old_name).unwrap_or("?").to_string())
            .collect();
        return Err(Error::invalid_args(format!(
            "the patch changes {} files ({}); with file_path, patch_apply patches that one file: \
             send only the part for {path}, or leave file_path out to apply the whole patch",
            names.len(),
            names.join(", ")
        )));
    }
    let mut warnings = parsed.warnings;
    let deletes = parsed
        .sections
        .first()
        .is_some_and(|s| s.new_name == Some("/dev/null") || s.deleted);
    let hunks: Vec<Hunk<'_>> = parsed.sections.into_iter().flat_map(|s| s.hunks).collect();
    let max = ctx.config.max_file_size_bytes;
    let (target, existing, bytes) = match durable::load_for_edit(&ctx.ws, file_path, max) {
        Ok((t, e, b)) => (Some(t), Some(e), b),
        Err(e) if e.kind == ErrorKind::NotFound && creates_file(&hunks) => {
            // What making the directories would refuse is refused dry or not, before any is made
            // (and before the hunks are tried, so that both answer with the same error).
            durable::locate_unmade(&ctx.ws, file_path, true)?;
            warnings.push(format!("{path} did not exist; the patch creates it"));
            (None, None, Vec::new())
        }
        Err(e) => return Err(e),
    };
    let applied = patched(&path, &bytes, &hunks, max)?;
    if deletes && applied.content.is_empty() {
        warnings.push(format!(
            "the patch deletes the file (+++ /dev/null); {path} was left empty: remove it with \
             delete_file if that is meant, or leave file_path out to apply the patch as written"
        ));
    }
    let cap = ctx.config.max_output_bytes as usize;
    let old_for_diff = existing.as_ref().map(|_| bytes.as_slice());
    let edits = applied.edits.clone();
    let (diff, diff_truncated) =
        edit::diff_text(&path, old_for_diff, &applied.content, Some(edits), cap);
    let resolved_path = target
        .as_ref()
        .map(|t| t.display.clone())
        .filter(|d| *d != path);
    let mut recorded = None;
    if !dry_run {
        // Directories made for a new file go again if the write fails.
        let mut made = durable::MadeDirs::default();
        let target = match target {
            Some(t) => t,
            None => durable::locate(&ctx.ws, file_path, true, Some(&mut made))?,
        };
        recorded = Some(history::record(
            &ctx.ws,
            ctx.config.undo.max_bytes,
            PatchApply::NAME.as_str(),
            &[&target],
            || {
                if existing.is_none() || applied.content != bytes {
                    target.replace_with(&applied.content, existing.as_ref())?;
                }
                Ok(made.keep())
            },
        )?);
    }
    let syntax_errors = check::introduced(&[Edited {
        path: &path,
        before: old_for_diff,
        after: &applied.content,
    }]);
    Ok(PatchResult {
        path,
        hunks_applied: applied.placements.len(),
        dry_run,
        created: existing.is_none(),
        adjustments: adjustments(&applied),
        files: Vec::new(),
        warnings,
        diff,
        diff_truncated,
        resolved_path,
        syntax_errors,
        undo: recorded.map(|r| r.undo).unwrap_or_default(),
    })
}
