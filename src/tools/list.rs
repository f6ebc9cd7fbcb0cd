//! list_dir: a directory's entries, directories first (suffixed with `/`), then files, each
//! group sorted; every entry is a path relative to the workspace root, so it can be handed to
//! another tool. The recursive listing uses the shared walk (directory handles, `O_NOFOLLOW`
//! from the parent's handle), so it can neither leave the root nor loop; it does not enter
//! links or `.git`, and returns pages of `max_results` entries (`offset` for the next one).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::found::{Batch, PathSink, Paths};
use crate::fs::jail::{Kind, Workspace};
use crate::fs::walk::{self, Flow, TopN};
use crate::render::human::{self, Text};
use crate::render::model;

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

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ListResult {
    /// The listed directory, relative to the workspace root.
    pub path: String,
    /// Paths relative to the workspace root: directories (suffixed with "/") first, then files,
    /// each group sorted.
    pub entries: Vec<String>,
    /// True when more entries exist than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
        walks: true,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["directory_path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "entries as root-relative paths, directories first (`/`-suffixed); `recursive`",
        example: r#"{"directory_path": "src", "recursive": true}"#,
        pipeline: "sneaky-ls src --recursive | jq -r '.result.entries[]' | grep -v /$",
        config: &[],
        env: &[],
        text: TextExample::prints(
            &[("src/lib.rs", ""), ("README.md", "")],
            &[],
            "",
            "src/\nREADME.md\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"directory_path": "."}"#,
            fails: r#"{"directory_path": "no/such/dir"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("list_dir");
    const PATH_PARAMS: &'static [&'static str] = &["directory_path"];
    type Args = ListArgs;
    type Output = ListResult;

    fn run(args: ListArgs, ctx: &Context) -> Result<ListResult> {
        let limit = super::bounded_max(args.max_results, DEFAULT_MAX_ENTRIES, MAX_ENTRIES_BOUND)?;
        let offset = args.offset.unwrap_or(0);
        // Directories sort before files: (is_file, path).
        let found = DirsFirst(TopN::new(
            usize::try_from(offset.saturating_add(limit)).unwrap_or(usize::MAX),
        ));
        let start = search(&args, ctx, &found)?;
        let found = found.0;
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

    /// `ls -1pR`: entries grouped under their directory, each directory once as a heading
    /// (`src/:`) and its entries by name beneath, in the result's order (directories first); the
    /// workspace root's own entries need no heading. The result's paths are relative to the root;
    /// naming each directory once instead of on every line is what keeps this at `ls`'s cost.
    fn model_text(r: &ListResult) -> String {
        if r.entries.is_empty() {
            return format!("{} is empty", model::display_dir(&r.path));
        }
        let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for entry in &r.entries {
            let bare = entry.strip_suffix('/').unwrap_or(entry);
            let split = bare.rfind('/').map_or(0, |i| i + 1);
            groups
                .entry(&entry[..split])
                .or_default()
                .push(&entry[split..]);
        }
        let mut out = String::new();
        for (dir, names) in &groups {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            if !dir.is_empty() {
                out.push_str(dir);
                out.push_str(":\n");
            }
            out.push_str(&names.join("\n"));
        }
        out.push_str(&model::cut_note(
            r.truncated,
            r.next_offset,
            r.entries.len(),
            "listing",
        ));
        out
    }

    fn human_text(r: &ListResult, binary: &str) -> Text {
        let mut text = Text::default();
        human::lines(&mut text.stdout, &r.entries);
        let cut = (r.truncated, r.next_offset);
        human::cut_note(&mut text, binary, cut, r.entries.len(), "entries");
        text
    }

    const TEXT_FORMAT: &'static str = "one entry a line, directories suffixed with /";
}

/// The listing's order: directories (their paths end with "/") before files, each sorted.
struct DirsFirst(TopN<(bool, String)>);

impl PathSink for DirsFirst {
    fn found(&self, paths: Paths) -> bool {
        self.0
            .extend(paths.iter().map(|p| (!p.ends_with('/'), p.to_string())));
        true
    }
}

/// List a directory, handing each entry to `sink` as soon as it is read, in no particular
/// order: root-relative paths, "/" after a directory (or a link to one inside the root).
/// Returns the listed directory's root-relative path.
pub fn search(args: &ListArgs, ctx: &Context, sink: &dyn PathSink) -> Result<String> {
    let rel = ctx.ws.relative(&args.directory_path)?;
    let start = ctx.ws.walk_start(&rel)?;
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
        filters: None::<walk::Unfiltered>,
        max_depth: if args.recursive { None } else { Some(1) },
        threads: if args.recursive { walk::threads() } else { 1 },
        files_per_job: walk::FILES_PER_JOB,
    };
    let ws = &ctx.ws;
    walk::walk(ws, start, &opts, || {
        let mut batch = Batch::new(sink);
        move |entry: &walk::Entry<'_>| {
            let is_dir = match entry.kind {
                Kind::Dir => true,
                Kind::Symlink => link_is_inside_dir(ws, entry.path),
                _ => false,
            };
            if !batch.push(entry, is_dir) {
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
