//! write_file: replace a file's whole content, or create it (and its missing parent
//! directories, each through the jail). The write is atomic (see `atomic`): readers and crashes
//! see the old content or the new. Permission bits of an existing file are kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::code::check::{self, Edited, IntroducedError};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable::{self, Existing, Unmade};
use crate::fs::history::{self, Undoable};
use crate::fs::jail::Kind;
use crate::render::human::{self, Text};
use crate::render::model;

/// Write text to a file, replacing all of its content; creates the file and any missing parent
/// directories. Returns the unified diff of the change. To change part of a file prefer
/// str_replace or patch_apply.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// Path of the file to write, relative to the workspace root.
    pub file_path: String,
    /// The complete new content of the file, written byte for byte as given (line endings
    /// included).
    pub content: String,
    /// Only compute the diff the write would make; change nothing. Default: false.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct WriteResult {
    pub path: String,
    /// Bytes of the new content (written, or that would be written with dry_run).
    pub bytes_written: u64,
    /// True when the file did not exist before.
    pub created: bool,
    pub dry_run: bool,
    /// Unified diff from the old content to the new (empty when unchanged).
    pub diff: String,
    /// True when `diff` was cut at max_output_bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    /// The file actually written when `path` is a link (inside the workspace) to it.
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

pub struct WriteFile;

impl Tool for WriteFile {
    const NAME: ToolName = ToolName::WriteFile;
    const TITLE: &'static str = "Write file";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: true,
        isolated: false,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["file_path"],
        stdin_param: Some("content"),
    };
    const DOC: Doc = Doc {
        summary: "create or overwrite a file atomically; parents created",
        example: r#"{"file_path": "notes/todo.md", "content": "- write tests\n"}"#,
        pipeline: "printf 'hello\\n' | sneaky-write greeting.txt | jq .result.created",
        config: &["max_file_size_bytes: largest content accepted"],
        env: &[],
        text: TextExample::prints(
            &[],
            &["new.txt"],
            "one\n",
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+one\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"file_path": "out/new.txt", "content": "made\n"}"#,
            fails: r#"{"file_path": "../escape.txt", "content": "x"}"#,
            fails_with: ErrorKind::OutsideWorkspace,
        },
    };
    const SCHEMA: &'static str = committed_schema!("write_file");
    const PATH_PARAMS: &'static [&'static str] = &["file_path"];
    type Args = WriteArgs;
    type Output = WriteResult;

    // Long: write_file's refusals (NUL bytes, size, a path ending in `/`, a target that is not
    // a file), then the dry run or the recorded write; the directories made on the way are held
    // by one guard across them all, to go again if the write fails.
    fn run(args: WriteArgs, ctx: &Context) -> Result<WriteResult> {
        let rel = ctx.ws.relative(&args.file_path)?;
        let path = rel.display().to_string();
        let content = args.content.as_bytes();
        if let Some(at) = crate::text::find_byte(0, content) {
            return Err(Error::new(
                ErrorKind::BinaryFile,
                format!("content has a NUL byte (at offset {at}); write_file writes text only"),
            ));
        }
        let max = ctx.config.max_file_size_bytes;
        if content.len() as u64 > max {
            return Err(durable::too_large(&path, content.len() as u64, max));
        }
        if args.file_path.ends_with('/') {
            return Err(Error::invalid_args(format!(
                "file_path {:?} ends with '/': name a file, not a directory",
                args.file_path
            )));
        }
        // Directories made on the way go again if the write fails (dropped without `keep`).
        let mut made = durable::MadeDirs::default();
        // A dry run makes nothing: where directories are still missing, the file is new.
        let (target, unmade) = if args.dry_run {
            match durable::locate_unmade(&ctx.ws, &args.file_path, true)? {
                Unmade::Found(t) => (Some(t), None),
                Unmade::Missing(shown) => (None, Some(shown)),
            }
        } else {
            let t = durable::locate(&ctx.ws, &args.file_path, true, Some(&mut made))?;
            (Some(t), None)
        };
        let existing: Option<Existing> = match &target {
            Some(t) => {
                if let Some(st) = t.stat()? {
                    let kind = Kind::from_mode(st.st_mode);
                    if kind == Kind::Dir {
                        return Err(durable::not_a_file(&t.display, kind));
                    }
                }
                t.read_existing(&ctx.ws, max)?
            }
            None => None,
        };
        let cap = ctx.config.max_output_bytes as usize;
        let (diff, diff_truncated) = match &existing {
            None => crate::edit::diff_text(&path, None, content, None, cap),
            Some(e) => match &e.bytes {
                Some(old) if old.contains(&0) => {
                    (format!("Binary files a/{path} and b/{path} differ\n"), false)
                }
                Some(old) => crate::edit::diff_text(&path, Some(old), content, None, cap),
                None => (
                    format!(
                        "(the old content, {} bytes, is over max_file_size_bytes and is not shown)\n",
                        e.size
                    ),
                    false,
                ),
            },
        };
        let recorded = match (&target, args.dry_run) {
            (Some(t), false) => Some(history::record_write(
                &ctx.ws,
                ctx.config.undo.max_bytes,
                Self::NAME.as_str(),
                t,
                existing.as_ref(),
                content,
                made,
            )?),
            _ => None,
        };
        let syntax_errors = check::introduced(&[Edited {
            path: &path,
            before: existing.as_ref().and_then(|e| e.bytes.as_deref()),
            after: content,
        }]);
        let resolved_path = target
            .as_ref()
            .map(|t| t.display.clone())
            .or(unmade)
            .filter(|d| *d != path);
        Ok(WriteResult {
            path,
            bytes_written: content.len() as u64,
            created: existing.is_none(),
            dry_run: args.dry_run,
            diff,
            diff_truncated,
            resolved_path,
            syntax_errors,
            undo: recorded.map(|r| r.undo).unwrap_or_default(),
        })
    }

    /// A new file: the model wrote its content, so only the size. A replaced file: the diff
    /// shows what was there before.
    fn model_text(r: &WriteResult) -> String {
        let mut out = written_text(r);
        out.push_str(&check::note(&r.syntax_errors));
        out
    }

    fn human_text(r: &WriteResult, binary: &str) -> Text {
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

    fn changed(r: &WriteResult) -> Vec<&str> {
        match (&r.resolved_path, r.dry_run) {
            (_, true) => Vec::new(),
            (Some(real), false) => vec![real.as_str()],
            (None, false) => vec![r.path.as_str()],
        }
    }
}

/// What a model reads of a write, before the syntax errors.
fn written_text(r: &WriteResult) -> String {
    let verb = if r.created {
        model::change(r.dry_run, "created", "created")
    } else {
        model::change(r.dry_run, "wrote", "written")
    };
    let bytes = model::plural(r.bytes_written, "byte", "bytes");
    let mut out = format!("{verb} {} ({bytes})", r.path);
    model::edit_notes(r.resolved_path.as_deref(), &mut out);
    if r.created && !r.dry_run {
        return out;
    }
    if r.diff.is_empty() && !r.created {
        out.push_str("; the content was already the same");
        return out;
    }
    model::with_diff(out, &r.diff, r.diff_truncated)
}
