//! make_dir: `mkdir -p` through the jail. Each missing directory is made with `mkdirat` on its
//! already-open parent, so a link swapped in cannot send the creation outside the root.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable;
use crate::fs::history::{self, Undoable};
use crate::fs::jail::Kind;
use crate::render::human::{self, Text};
use crate::render::model;

/// Create a directory and any missing parent directories (like `mkdir -p`). Not an error when
/// it already exists.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MakeDirArgs {
    /// Path of the directory to create, relative to the workspace root.
    pub directory_path: String,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct MakeDirResult {
    pub path: String,
    /// False when the directory already existed.
    pub created: bool,
    /// Every directory that was created, parents first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<String>,
    /// Its place in the undo history (`change_id`), for every edit but a dry run.
    #[serde(flatten)]
    pub undo: Undoable,
}

pub struct MakeDir;

impl Tool for MakeDir {
    const NAME: ToolName = ToolName::MakeDir;
    const TITLE: &'static str = "Make directory";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["directory_path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "`mkdir -p`; `created` false when it existed",
        example: r#"{"directory_path": "src/services/new_module"}"#,
        pipeline: "sneaky-mkdir build/out | jq .result.created",
        config: &[],
        env: &[],
        text: TextExample::prints(&[], &["d/e"], "", "d\nd/e\n"),
        calls: Calls {
            before: &[],
            works: r#"{"directory_path": "made/deep"}"#,
            fails: r#"{"directory_path": "../escape"}"#,
            fails_with: ErrorKind::OutsideWorkspace,
        },
    };
    const SCHEMA: &'static str = committed_schema!("make_dir");
    const PATH_PARAMS: &'static [&'static str] = &["directory_path"];
    type Args = MakeDirArgs;
    type Output = MakeDirResult;

    fn run(args: MakeDirArgs, ctx: &Context) -> Result<MakeDirResult> {
        let rel = ctx.ws.relative(&args.directory_path)?;
        let path = rel.display().to_string();
        let make = || match durable::open_dirs(&ctx.ws, rel.as_path(), true) {
            Ok((_, created)) => Ok(created),
            Err(e) if e.kind == ErrorKind::NotADirectory => {
                if ctx.ws.kind_of(&rel).ok() == Some(Kind::File) {
                    return Err(Error::new(
                        ErrorKind::AlreadyExists,
                        format!("{path} already exists and is a file, not a directory"),
                    ));
                }
                Err(e)
            }
            Err(e) => Err(e),
        };
        // The directories to make are known once made: the entry starts with no path, and
        // gets them as the directories this change made.
        let recorded = history::record(
            &ctx.ws,
            ctx.config.undo.max_bytes,
            Self::NAME.as_str(),
            &[],
            make,
        )?;
        let created_dirs = recorded.made.clone();
        Ok(MakeDirResult {
            path,
            created: !created_dirs.is_empty(),
            created_dirs,
            undo: recorded.undo,
        })
    }

    fn model_text(r: &MakeDirResult) -> String {
        let path = model::display_dir(&r.path);
        if !r.created {
            return format!("{path} already exists");
        }
        if r.created_dirs.len() > 1 {
            let made: Vec<String> = r
                .created_dirs
                .iter()
                .map(|d| model::display_dir(d))
                .collect();
            return format!("created {}", made.join(", "));
        }
        format!("created {path}")
    }

    /// `mkdir -pv`: the directories made, nothing when they all existed.
    fn human_text(r: &MakeDirResult, _binary: &str) -> Text {
        let mut text = Text::default();
        human::lines(&mut text.stdout, &r.created_dirs);
        if r.created_dirs.is_empty() && r.created {
            text.stdout = format!("{}\n", r.path);
        }
        text
    }

    const TEXT_FORMAT: &'static str =
        "each directory created, one a line (nothing when it existed)";

    fn changed(r: &MakeDirResult) -> Vec<&str> {
        let made = r.created_dirs.iter().map(String::as_str);
        made.chain(r.created.then_some(r.path.as_str())).collect()
    }
}
