//! What becomes of each path a command changed: applied and recorded, applied as a nested
//! repository's own git data, or discarded (what no tool may change); and which of them
//! someone else changed in the workspace while the command ran.

use std::path::Path;

use nix::errno::Errno;

use super::clock::Started;
use super::scan::Found;
use crate::error::{Error, ErrorKind};
use crate::fs::durable::{lstat_no_links, Git};
use crate::fs::jail::{Kind, Workspace, CONFIG_FILE_NAME};
use crate::fs::transition::To;

/// What becomes of a path the command changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// No tool may change it (the workspace's repository's `.git`, the root's `sneaky.toml`,
    /// protected paths): never applied.
    Discarded,
    /// A nested repository's git directory, as git wrote it: applied, not recorded.
    NestedGit,
    /// A change of the workspace: recorded, or applied as untracked where git ignores it.
    Workspace,
}

/// What of a nested repository's git directory git writes as it works: objects, refs, the
/// index, logs, the state of a merge, rebase or bisect. The rest (config, hooks, info, …)
/// can make a later git run programs, and is applied only with `allow_vcs_writes`, as the
/// sandbox keeps it read-only in the workspace's own repository (src/shell/spec.rs).
const NESTED_GIT_DATA: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "index",
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_NAMES",
    "BISECT_EXPECTED_REV",
    "COMMIT_EDITMSG",
    "packed-refs",
    "description",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "shallow",
    "rr-cache",
];

/// What becomes of the change of `path` to `to`, by its path (where it lands is checked
/// again, by the directory it lands in, when it is applied: src/fs/durable/landing.rs).
pub(super) fn route(
    ws: &Workspace,
    upper: &Path,
    path: &str,
    to: &To,
    vcs_writable: bool,
) -> Route {
    let absolute = ws.root().join(path);
    if path == CONFIG_FILE_NAME
        || ws.protected_paths().iter().any(|p| absolute.starts_with(p))
        || ws.protected_list().covering(&absolute).is_some()
    {
        return Route::Discarded;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let Some(at) = parts.iter().position(|c| c.eq_ignore_ascii_case(".git")) else {
        return Route::Workspace;
    };
    if at == 0 {
        return Route::Discarded;
    }
    if vcs_writable {
        return Route::NestedGit;
    }
    // A `.git` file (`gitdir: …`) or link could send git anywhere: only a directory counts.
    let git_dir = parts[..=at].join("/");
    let in_upper = std::fs::symlink_metadata(upper.join(&git_dir)).is_ok_and(|m| m.is_dir());
    let in_workspace = lstat_no_links(ws, &git_dir)
        .is_ok_and(|st| st.is_some_and(|st| Kind::from_mode(st.st_mode) == Kind::Dir));
    if !(in_upper || in_workspace) {
        return Route::Discarded;
    }
    // git writes no symbolic link in its directory; one there would lead git's next writes
    // (and a later apply's lookups) elsewhere.
    if matches!(to, To::Link { .. }) {
        return Route::Discarded;
    }
    let data = match parts.get(at + 1) {
        None => matches!(to, To::Dir { .. } | To::Absent),
        Some(first) => NESTED_GIT_DATA.contains(first) || matches!(to, To::Absent),
    };
    if data {
        Route::NestedGit
    } else {
        Route::Discarded
    }
}

/// Where a nested repository's git data may land (src/fs/durable/landing.rs): what git writes
/// as it works ([`NESTED_GIT_DATA`]) and what it removes, or with `allow_vcs_writes` whatever
/// it is.
pub(super) fn nested_git(to: &To, vcs_writable: bool) -> Git<'static> {
    let names = (!vcs_writable && !matches!(to, To::Absent)).then_some(NESTED_GIT_DATA);
    Git::Nested { names }
}

/// The paths the command changed that someone else changed in the workspace while it ran
/// (see [`Started`]): applying the command's version would overwrite that work. Its
/// files, links and what it removes are compared by their change time; a directory the
/// command keeps as a directory is not (its change time moves with every entry made or
/// removed in it, and its entries are compared one by one). A file the command changed that
/// is gone from the workspace was deleted meanwhile, unless the command also removed paths,
/// one of which it may have renamed there (overlayfs marks a file copied up from the
/// workspace, not where from). A path the workspace no longer reaches without a link (a
/// directory on its way swapped for one) was changed meanwhile too.
pub(super) fn changed_meanwhile(
    ws: &Workspace,
    upper: &Path,
    all: &[Found],
    started: Started,
    vcs_writable: bool,
) -> Vec<String> {
    // A clock set back while the command ran leaves change times that cannot be judged.
    let clock_went_back = Started::now().0 < started.0;
    let renames_possible = all.iter().any(|f| matches!(f.to, To::Absent));
    let mut out = Vec::new();
    for f in all {
        if route(ws, upper, &f.path, &f.to, vcs_writable) == Route::Discarded {
            continue;
        }
        let changed = match lstat_no_links(ws, &f.path) {
            Ok(Some(st))
                if Kind::from_mode(st.st_mode) == Kind::Dir && matches!(f.to, To::Dir { .. }) =>
            {
                false
            }
            Ok(Some(st)) => clock_went_back || started.changed_since(st.st_ctime, st.st_ctime_nsec),
            Err(Errno::ELOOP | Errno::EXDEV) => true,
            Ok(None) | Err(_) => match f.to {
                To::File { .. } | To::Link { .. } => {
                    !renames_possible
                        && crate::shell::sys::lgetxattr(&upper.join(&f.path), "user.overlay.origin")
                            .is_some()
                }
                To::Absent | To::Dir { .. } => false,
            },
        };
        if changed {
            out.push(f.path.clone());
        }
    }
    out
}

/// The error of changes that would overwrite work done while the command ran.
pub(super) fn conflict(paths: &[String]) -> Error {
    const SHOWN: usize = 20;
    let mut named = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        named.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    Error::new(
        ErrorKind::Conflict,
        format!(
            "while the command ran, someone else changed what it changed too, and applying its \
             changes would overwrite that: {named}"
        ),
    )
}
