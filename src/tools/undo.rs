//! undo: take back a change the file tools made, from the workspace's history (`fs::history`).
//!
//! Nothing a person (or anything else) did since is overwritten: every path the change left must
//! still be exactly as it was left (content hash, mode, link target, directory), or the call is
//! a `conflict` that names the path and shows the difference, and nothing changes. The files
//! are restored together through the same all-or-none commit a multi-file patch uses; the undo
//! is recorded as a change of its own, so it can be undone in turn.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::history::{Entry, History, PathChange, Snapshot, State};
use crate::fs::jail::map_errno;
use crate::fs::transition::{self, Content, Step, To};
use crate::render::human::Text;

/// Take back a change made by write_file, str_replace, patch_apply, delete_file, make_dir or an
/// earlier undo: the most recent one, or the one named by `change_id` (every edit's result
/// holds its change_id). Restores content, mode, links and directories exactly. A file changed
/// since by anyone is never overwritten: the call fails with `conflict`, naming it, and nothing
/// changes. An undo is itself a change, so it can be undone. `{"list": true}` lists the
/// recent changes; `dry_run` shows the diff and changes nothing.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoArgs {
    /// The change to take back (from an edit's result or the list); default: the most recent.
    #[serde(default)]
    pub change_id: Option<String>,
    /// List the recent changes, newest first, instead of taking one back.
    #[serde(default)]
    pub list: bool,
    /// Show what would be restored (the diff) and change nothing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UndoResult {
    /// The change taken back (or, with dry_run, that would be).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone: Option<String>,
    /// The undo's own change, which can be undone in turn (none for a dry run or a list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
    /// The paths restored, root-relative.
    pub paths: Vec<String>,
    /// Unified diff from what the paths hold now to what they are given back.
    pub diff: String,
    /// True when the diff was cut at max_output_bytes.
    pub diff_truncated: bool,
    pub dry_run: bool,
    /// With `list`: the recent changes, newest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<ChangeSummary>>,
    /// Older changes forgotten to keep the history within undo.max_bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten_changes: Option<u64>,
}

/// One change of the history, as listed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ChangeSummary {
    pub change_id: String,
    /// The tool that made it.
    pub tool: String,
    pub paths: Vec<String>,
    /// When it was made, in seconds since the Unix epoch.
    pub time: u64,
    /// The change it took back, for an undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
}

/// Changes listed at most.
const MAX_LISTED: usize = 100;

pub struct Undo;

impl Tool for Undo {
    const NAME: ToolName = ToolName::Undo;
    const TITLE: &'static str = "Undo a change";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: false,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["change_id"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "take back an edit (the latest, or by `change_id`); `list`, `dry_run`",
        example: r#"{"change_id": "c01764601234567890-4242-0", "dry_run": true}"#,
        pipeline:
            "sneaky-replace src/lib.rs --old-str one --new-str uno && sneaky-undo --format text",
        config: &[
            "undo.max_bytes: bytes the history of a workspace may take; past it the \
                   oldest changes are forgotten",
        ],
        env: &[(
            "XDG_STATE_HOME",
            "where the history is kept: $XDG_STATE_HOME/sneaky/undo/ (else \
             ~/.local/state/sneaky/undo/), one directory per workspace",
        )],
        text: TextExample::prints(&[], &["--list"], "", ""),
        calls: Calls {
            before: &[(
                ToolName::WriteFile,
                r#"{"file_path": "a.txt", "content": "x\n"}"#,
            )],
            works: r#"{}"#,
            fails: r#"{"change_id": "c0-0-0"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("undo");
    type Args = UndoArgs;
    type Output = UndoResult;

    fn run(args: UndoArgs, ctx: &Context) -> Result<UndoResult> {
        let history = History::open(&ctx.ws, ctx.config.undo.max_bytes)?;
        if args.list {
            if args.change_id.is_some() || args.dry_run {
                return Err(Error::invalid_args(
                    "list: lists the changes; give it alone, without change_id or dry_run",
                ));
            }
            return list(&history);
        }
        let entry = history.entry(args.change_id.as_deref())?;
        let now = check_unchanged(ctx, &history, &entry)?;
        let cap = ctx.config.max_output_bytes as usize;
        let (diff, diff_truncated) = restore_diff(&history, &entry, &now, cap)?;
        let paths: Vec<String> = entry.paths.iter().map(|p| p.path.clone()).collect();
        let mut result = UndoResult {
            undone: Some(entry.change_id.clone()),
            change_id: None,
            paths,
            diff,
            diff_truncated,
            dry_run: args.dry_run,
            changes: None,
            forgotten_changes: None,
        };
        if args.dry_run {
            return Ok(result);
        }
        let pending = history.begin("undo", &now, Some(&entry.change_id))?;
        restore(ctx, &history, &entry, &now)?;
        let after = entry
            .paths
            .iter()
            .map(|p| Snapshot::at(&ctx.ws, &p.path, ctx.config.undo.max_bytes))
            .collect::<Result<Vec<_>>>()?;
        let recorded = pending.done(&ctx.ws, &[], &after)?;
        result.change_id = recorded.undo.change_id;
        result.forgotten_changes = recorded.undo.forgotten_changes;
        Ok(result)
    }

    fn model_text(r: &UndoResult) -> String {
        if let Some(changes) = &r.changes {
            if changes.is_empty() {
                return "no changes recorded in this workspace".into();
            }
            return changes
                .iter()
                .map(summary_line)
                .collect::<Vec<_>>()
                .join("\n");
        }
        let undone = r.undone.as_deref().unwrap_or("");
        let head = match (&r.change_id, r.dry_run) {
            (_, true) => format!("would undo {undone} ({})", r.paths.join(", ")),
            (Some(id), false) => format!(
                "undid {undone} ({}); undo it in turn with change_id {id}",
                r.paths.join(", ")
            ),
            (None, false) => format!("undid {undone}"),
        };
        format!("{head}\n{}", r.diff).trim_end().to_string()
    }

    fn human_text(r: &UndoResult, binary: &str) -> Text {
        let mut text = Text::default();
        match &r.changes {
            Some(changes) => {
                for c in changes {
                    text.stdout.push_str(&summary_line(c));
                    text.stdout.push('\n');
                }
            }
            None => text.stdout.push_str(&r.diff),
        }
        if r.diff_truncated {
            text.stderr
                .push_str(&format!("{binary}: the diff was cut at max_output_bytes\n"));
        }
        if let Some(n) = r.forgotten_changes {
            text.stderr.push_str(&format!(
                "{binary}: {n} older change(s) forgotten to stay within undo.max_bytes\n"
            ));
        }
        text
    }

    const TEXT_FORMAT: &'static str = "the unified diff of what was given back (of what would be, \
        with --dry-run); with --list one change a line: change_id, tool, paths";

    fn changed(r: &UndoResult) -> Vec<&str> {
        match (&r.undone, r.dry_run) {
            (Some(_), false) => r.paths.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        }
    }
}

/// `change_id tool path, path` (and what an undo took back).
fn summary_line(c: &ChangeSummary) -> String {
    let undoes = c
        .undoes
        .as_deref()
        .map(|u| format!(" (undoes {u})"))
        .unwrap_or_default();
    format!("{} {} {}{undoes}", c.change_id, c.tool, c.paths.join(", "))
}

fn list(history: &History) -> Result<UndoResult> {
    let changes = history
        .newest(MAX_LISTED)?
        .into_iter()
        .map(|e| ChangeSummary {
            paths: e.paths.iter().map(|p| p.path.clone()).collect(),
            change_id: e.change_id,
            tool: e.tool,
            time: e.time,
            undoes: e.undoes,
        })
        .collect();
    Ok(UndoResult {
        undone: None,
        change_id: None,
        paths: Vec::new(),
        diff: String::new(),
        diff_truncated: false,
        dry_run: false,
        changes: Some(changes),
        forgotten_changes: None,
    })
}

/// Every path as the change left it, or a conflict naming the first that is not.
fn check_unchanged(ctx: &Context, history: &History, entry: &Entry) -> Result<Vec<Snapshot>> {
    let mut now = Vec::with_capacity(entry.paths.len());
    for p in &entry.paths {
        let snap = Snapshot::at(&ctx.ws, &p.path, ctx.config.undo.max_bytes)?;
        let left = p.after.as_ref().unwrap_or(&State::Absent);
        if !left.holds(&snap) {
            return Err(changed_since(history, entry, p, left, &snap, ctx));
        }
        // A directory the undo removes must hold nothing the change did not put there.
        if !matches!(p.before, State::Dir { .. }) && matches!(left, State::Dir { .. }) {
            refuse_foreign_entries(ctx, entry, &p.path)?;
        }
        now.push(snap);
    }
    Ok(now)
}

fn changed_since(
    history: &History,
    entry: &Entry,
    p: &PathChange,
    left: &State,
    now: &Snapshot,
    ctx: &Context,
) -> Error {
    let mut message = format!(
        "{} was changed after {} ({}): it was left {}, and is now {}; nothing was undone",
        p.path,
        entry.change_id,
        entry.tool,
        left.describe(),
        now.state.describe()
    );
    if let (State::File { digest, .. }, Some(current)) = (left, &now.content) {
        if let Some(kept) = history.content_left(digest) {
            let cap = ctx.config.max_output_bytes as usize;
            let (diff, _) = crate::edit::diff_text(&p.path, Some(&kept), current, None, cap);
            message.push_str(". The change since:\n");
            message.push_str(&diff);
        }
    }
    Error::new(ErrorKind::Conflict, message)
}

fn refuse_foreign_entries(ctx: &Context, entry: &Entry, dir: &str) -> Result<()> {
    let handle = ctx.ws.dir_handle(&ctx.ws.relative(dir)?)?;
    let names = handle.entries().map_err(|e| map_errno(e, dir))?;
    for name in names {
        let child = format!("{dir}/{}", String::from_utf8_lossy(name.name.as_bytes()));
        let ours = entry
            .paths
            .iter()
            .any(|p| p.path == child && matches!(p.before, State::Absent));
        if !ours {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!(
                    "{child} was made inside {dir} after {} ({}), and undoing it would remove \
                     {dir}; nothing was undone",
                    entry.change_id, entry.tool
                ),
            ));
        }
    }
    Ok(())
}

/// The diff from what each path holds now to what the undo gives back.
fn restore_diff(
    history: &History,
    entry: &Entry,
    now: &[Snapshot],
    cap: usize,
) -> Result<(String, bool)> {
    let mut diff = String::new();
    let mut truncated = false;
    for (p, snap) in entry.paths.iter().zip(now) {
        let room = cap.saturating_sub(diff.len());
        let (part, cut) = match (&snap.state, &p.before) {
            (State::File { .. } | State::Absent, State::File { digest, .. }) => {
                let old = history.content(digest)?;
                crate::edit::diff_text(&p.path, snap.content.as_deref(), &old, None, room)
            }
            (State::File { .. }, State::Absent) => {
                let current = snap.content.as_deref().unwrap_or_default();
                let (text, cut) = crate::edit::diff_text(&p.path, Some(current), b"", None, room);
                (
                    text.replacen(&format!("+++ b/{}", p.path), "+++ /dev/null", 1),
                    cut,
                )
            }
            (from, to) if from != to => (
                format!(
                    "{}: {} becomes {}\n",
                    p.path,
                    from.describe(),
                    to.describe()
                ),
                false,
            ),
            _ => (String::new(), false),
        };
        truncated |= cut;
        diff.push_str(&part);
    }
    Ok((diff, truncated))
}

/// Give every path back its state before the change (`fs::transition`: the files through one
/// all-or-none commit, directories and links made and removed around it).
fn restore(ctx: &Context, history: &History, entry: &Entry, now: &[Snapshot]) -> Result<()> {
    let steps = entry
        .paths
        .iter()
        .map(|p| {
            let to = match &p.before {
                State::Absent => To::Absent,
                State::File { mode, digest, .. } => To::File {
                    mode: *mode,
                    content: Content::Bytes(history.content(digest)?),
                },
                State::Link { target } => To::Link {
                    target: target.clone(),
                },
                State::Dir { mode } => To::Dir { mode: *mode },
            };
            Ok(Step {
                path: p.path.clone(),
                to,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    transition::apply(&ctx.ws, &steps, now)
}
