//! list_dir: a directory's entries, directories first (suffixed with `/`), then files, each
//! group sorted; every entry is a path relative to the workspace root, so it can be handed to
//! another tool. The recursive listing uses the shared walk (directory handles, `O_NOFOLLOW`
//! from the parent's handle), so it can neither leave the root nor loop; it does not enter
//! links or `.git`, and returns pages of `max_results` entries (`offset` for the next one).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Cli, Context, Doc, Hints, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Kind, RelPath, Workspace};
use crate::fs::walk::{self, Flow, TopN};

pub const DEFAULT_MAX_ENTRIES: u64 = 1000;
pub const MAX_ENTRIES_BOUND: u64 = 100_000;

/// List the entries of a directory in the workspace as paths relative to the workspace root.
/// Directories are suffixed with `/` and come first, then files; each group is sorted by path.
/// With `recursive`, subdirectories are listed too (links are listed but not entered, `.git`
/// is not entered). At most `max_results` entries are returned, with `truncated: true` and
/// `next_offset` when there are more.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Directory to list, relative to the workspace root. Default: "." (the root).
    #[serde(default = "default_dir")]
    pub directory_path: String,
    /// List subdirectories too. Default: false.
    #[serde(default)]
    pub recursive: bool,
    /// Most entries to return. Default: 1000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub max_results: Option<u64>,
    /// Entries to skip, for the next page after a truncated one (see next_offset). Default: 0.
    #[serde(default)]
    pub offset: Option<u64>,
}

fn default_dir() -> String {
    ".".to_string()
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListResult {
    /// The listed directory, relative to the workspace root.
    pub path: String,
    /// Paths relative to the workspace root: directories (suffixed with "/") first, then files,
    /// each group sorted.
    pub entries: Vec<String>,
    /// True when more entries exist than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

pub struct ListDir;

impl Tool for ListDir {
    const NAME: ToolName = ToolName::ListDir;
    const TITLE: &'static str = "List directory";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
    };
    const CLI: Cli = Cli {
        positional: &["directory_path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        example: r#"{"directory_path": "src", "recursive": true}"#,
        pipeline: "sneaky-ls src --recursive | jq -r '.result.entries[]' | grep -v /$",
        config: &[],
        env: &[],
    };
    const SCHEMA: &'static str = committed_schema!("list_dir");
    type Args = ListArgs;
    type Output = ListResult;

    fn run(args: ListArgs, ctx: &Context) -> Result<ListResult> {
        let limit = super::bounded_max(args.max_results, DEFAULT_MAX_ENTRIES, MAX_ENTRIES_BOUND)?;
        let offset = args.offset.unwrap_or(0);
        let rel = ctx.ws.relative(&args.directory_path)?;
        // Directories sort before files: (is_file, path).
        let found: TopN<(bool, String)> =
            TopN::new(usize::try_from(offset.saturating_add(limit)).unwrap_or(usize::MAX));
        let start = list(ctx, &rel, args.recursive, &mut |is_dir, path| {
            found.extend([(!is_dir, path)]);
            true
        })?;
        let (kept, total) = found.finish();
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let entries: Vec<String> = kept.into_iter().skip(skip).map(|(_, p)| p).collect();
        let truncated = total > offset + entries.len() as u64;
        Ok(ListResult {
            path: start,
            next_offset: truncated.then_some(offset + entries.len() as u64),
            entries,
            truncated,
        })
    }
}

/// List `rel`, handing each entry to `found` as (is a directory, root-relative path with "/"
/// after a directory), in no particular order; `found` returns false to stop. Returns the
/// listed directory's root-relative path.
pub fn list(
    ctx: &Context,
    rel: &RelPath,
    recursive: bool,
    found: &mut (dyn FnMut(bool, String) -> bool + Send),
) -> Result<String> {
    let start = ctx.ws.walk_start(rel)?;
    if start.kind != Kind::Dir {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{} is not a directory", rel.display()),
        ));
    }
    let shown = if start.path.is_empty() {
        ".".to_string()
    } else {
        start.path.clone()
    };
    let opts = walk::Options {
        filters: None,
        max_depth: if recursive { None } else { Some(1) },
        threads: if recursive { walk::threads() } else { 1 },
    };
    let found = std::sync::Mutex::new(found);
    let ws = &ctx.ws;
    walk::walk(ws, start, &opts, || {
        |entry: &walk::Entry<'_>| {
            let is_dir = match entry.kind {
                Kind::Dir => true,
                Kind::Symlink => link_is_inside_dir(ws, entry.path),
                _ => false,
            };
            let mut path = entry.path.to_string();
            if is_dir {
                path.push('/');
            }
            let go_on = match found.lock() {
                Ok(mut f) => f(is_dir, path),
                Err(_) => false,
            };
            if !go_on {
                Flow::Quit
            } else if entry.kind == Kind::Dir && entry.name == ".git" {
                Flow::Prune
            } else {
                Flow::Continue
            }
        }
    });
    Ok(shown)
}

/// A link is shown as a directory when it leads to one inside the root (it is not entered).
fn link_is_inside_dir(ws: &Workspace, path: &str) -> bool {
    ws.relative(path)
        .and_then(|rel| ws.dir_handle(&rel))
        .is_ok()
}
