//! list_dir: a directory's entries, directories first (suffixed with `/`), then files, each
//! group sorted. The recursive walk reads directories through handles (`openat` with
//! `O_NOFOLLOW` from the parent's handle), never descends through a link, so it can neither
//! leave the root nor loop, and stops at a cap with `truncated`.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::dir::{Dir, Type};
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Cli, Context, Doc, Hints, Tool, ToolName};
use crate::error::{Error, Result};
use crate::fs::jail::{map_errno, Kind, RelPath, Workspace};

pub const DEFAULT_MAX_ENTRIES: u64 = 1000;
pub const MAX_ENTRIES_BOUND: u64 = 100_000;

/// List the entries of a directory in the workspace. Directories are suffixed with `/` and come
/// first, then files; each group is sorted by name. With `recursive`, paths are relative to the
/// listed directory (links are listed but not entered, `.git` is not entered) and the listing
/// stops at `max_results` entries with `truncated: true`.
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
}

fn default_dir() -> String {
    ".".to_string()
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListResult {
    /// The listed directory, relative to the workspace root.
    pub path: String,
    /// Directories (suffixed with "/") first, then files, each group sorted; with `recursive`,
    /// paths relative to the listed directory.
    pub entries: Vec<String>,
    /// True when the listing stopped at `max_results` entries.
    pub truncated: bool,
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
        let cap = super::bounded_max(args.max_results, DEFAULT_MAX_ENTRIES, MAX_ENTRIES_BOUND)?;
        let rel = ctx.ws.relative(&args.directory_path)?;
        let fd = ctx.ws.open_dir(&rel)?;
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        let mut truncated = false;
        // Breadth first, each directory's entries in name order, so the cap cuts predictably.
        let mut queue: VecDeque<(OwnedFd, String)> = VecDeque::new();
        queue.push_back((fd, String::new()));
        'walk: while let Some((dir_fd, prefix)) = queue.pop_front() {
            let entries = read_entries(&ctx.ws, &rel, dir_fd.as_fd(), &prefix)?;
            for entry in entries {
                if (dirs.len() + files.len()) as u64 >= cap {
                    truncated = true;
                    break 'walk;
                }
                let path = format!("{prefix}{}", entry.name);
                if entry.is_dir {
                    dirs.push(format!("{path}/"));
                    let enter = args.recursive && !entry.is_link && entry.name != ".git";
                    if enter {
                        if let Ok(sub) = openat(
                            dir_fd.as_fd(),
                            OsStr::from_bytes(&entry.raw_name),
                            OFlag::O_RDONLY
                                | OFlag::O_DIRECTORY
                                | OFlag::O_NOFOLLOW
                                | OFlag::O_CLOEXEC,
                            Mode::empty(),
                        ) {
                            queue.push_back((sub, format!("{path}/")));
                        }
                    }
                } else {
                    files.push(path);
                }
            }
        }
        dirs.sort();
        files.sort();
        dirs.extend(files);
        Ok(ListResult {
            path: rel.display().to_string(),
            entries: dirs,
            truncated,
        })
    }
}

struct Entry {
    name: String,
    raw_name: Vec<u8>,
    is_dir: bool,
    is_link: bool,
}

/// Entries of one open directory, sorted by name. A link counts as a directory when it leads
/// to one inside the root.
fn read_entries(
    ws: &Workspace,
    listed: &RelPath,
    dir_fd: std::os::fd::BorrowedFd<'_>,
    prefix: &str,
) -> Result<Vec<Entry>> {
    let own = dir_fd
        .try_clone_to_owned()
        .map_err(|e| Error::io(listed.display(), e))?;
    let mut dir = Dir::from_fd(own).map_err(|e| map_errno(e, listed.display()))?;
    let mut out = Vec::new();
    for item in dir.iter() {
        let item = item.map_err(|e| map_errno(e, listed.display()))?;
        let raw = item.file_name().to_bytes();
        if raw == b"." || raw == b".." {
            continue;
        }
        let name_os = OsStr::from_bytes(raw);
        let ty = match item.file_type() {
            Some(Type::Directory) => Kind::Dir,
            Some(Type::Symlink) => Kind::Symlink,
            Some(Type::File) => Kind::File,
            Some(_) => Kind::Other,
            None => fstatat(dir_fd, name_os, AtFlags::AT_SYMLINK_NOFOLLOW)
                .map(|st| Kind::from_mode(st.st_mode))
                .unwrap_or(Kind::Other),
        };
        let name = name_os.to_string_lossy().into_owned();
        let is_link = ty == Kind::Symlink;
        let is_dir = match ty {
            Kind::Dir => true,
            Kind::Symlink => link_is_inside_dir(ws, listed, prefix, &name),
            _ => false,
        };
        out.push(Entry {
            name,
            raw_name: raw.to_vec(),
            is_dir,
            is_link,
        });
    }
    out.sort_by(|a, b| a.raw_name.cmp(&b.raw_name));
    Ok(out)
}

fn link_is_inside_dir(ws: &Workspace, listed: &RelPath, prefix: &str, name: &str) -> bool {
    let Ok(rel) = ws.relative(&listed.join_display(&format!("{prefix}{name}"))) else {
        return false;
    };
    ws.open(&rel, OFlag::O_PATH | OFlag::O_DIRECTORY, Mode::empty())
        .is_ok()
}
