//! delete_file: remove one file or link with `unlinkat` on its parent's handle. A link is
//! removed itself, never what it points to; directories are refused.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable;
use crate::fs::history::{self, Undoable};
use crate::fs::jail::{map_errno, Kind};
use crate::render::human::Text;

/// Delete a single file (or a symbolic link, never its target). Does not delete directories.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// Path of the file to delete, relative to the workspace root.
    pub file_path: String,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct DeleteResult {
    pub path: String,
    /// "file" or "link".
    pub kind: String,
    /// Its place in the undo history (`change_id`), for every edit but a dry run.
    #[serde(flatten)]
    pub undo: Undoable,
}

pub struct DeleteFile;

impl Tool for DeleteFile {
    const NAME: ToolName = ToolName::DeleteFile;
    const TITLE: &'static str = "Delete file";
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
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "a file or a link (never the link's target)",
        example: r#"{"file_path": "old/deprecated.py"}"#,
        pipeline: "sneaky-rm old/deprecated.py | jq -e .ok",
        config: &[],
        env: &[],
        text: TextExample::prints(&[("notes.md", "x\n")], &["notes.md"], "", "notes.md\n"),
        calls: Calls {
            before: &[],
            works: r#"{"file_path": "notes.md"}"#,
            fails: r#"{"file_path": "missing.txt"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("delete_file");
    const PATH_PARAMS: &'static [&'static str] = &["file_path"];
    type Args = DeleteArgs;
    type Output = DeleteResult;

    fn run(args: DeleteArgs, ctx: &Context) -> Result<DeleteResult> {
        if args.file_path.ends_with('/') {
            return Err(Error::invalid_args(format!(
                "file_path {:?} ends with '/': name a file, not a directory",
                args.file_path
            )));
        }
        let target = durable::locate(&ctx.ws, &args.file_path, false, None)?;
        let st = target
            .stat()?
            .ok_or_else(|| map_errno(nix::errno::Errno::ENOENT, &target.display))?;
        target.refuse_protected(&ctx.ws, &st)?;
        let kind = match Kind::from_mode(st.st_mode) {
            Kind::File => "file",
            Kind::Symlink => "link",
            Kind::Dir => {
                return Err(Error::new(
                    ErrorKind::NotAFile,
                    format!(
                        "{} is a directory; delete_file removes files and links only",
                        target.display
                    ),
                ))
            }
            other => return Err(durable::not_a_file(&target.display, other)),
        };
        let recorded = history::record(
            &ctx.ws,
            ctx.config.undo.max_bytes,
            Self::NAME.as_str(),
            &[&target],
            || target.unlink().map(|()| Vec::new()),
        )?;
        Ok(DeleteResult {
            path: target.display.clone(),
            kind: kind.to_string(),
            undo: recorded.undo,
        })
    }

    fn model_text(r: &DeleteResult) -> String {
        match r.kind.as_str() {
            "link" => format!("deleted the link {} (not its target)", r.path),
            _ => format!("deleted {}", r.path),
        }
    }

    fn human_text(r: &DeleteResult, _binary: &str) -> Text {
        Text {
            stdout: format!("{}\n", r.path),
            stderr: String::new(),
        }
    }

    const TEXT_FORMAT: &'static str = "the path deleted";

    fn changed(r: &DeleteResult) -> Vec<&str> {
        vec![r.path.as_str()]
    }
}
