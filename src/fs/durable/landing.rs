//! Where a change lands when no one named its path for the occasion: a command's changes
//! applied to the workspace (src/shell/overlay/apply.rs) and a change taken back (undo,
//! through src/fs/transition.rs). Their paths were found earlier (in an upper layer, in the
//! history), and a job running meanwhile may have swapped any directory on the way for a
//! symbolic link since: following it would write wherever it points (the workspace's own
//! `.git/hooks`, a protected `.claude`).
//!
//! So each path is resolved beneath the root following no link at any component
//! (`Workspace::open_dir_no_links`), and the directory handle that gives is checked for what it
//! is, by where the kernel says that directory is rather than by the path asked for: not
//! beneath the workspace's own `.git` (a nested repository's `.git` only where the caller lets
//! git's data through), not the workspace's configuration, not a protected path, not in the
//! read-deny list. The caller then acts on the one final name with `*at` calls on that same
//! handle: no lookup is left between the check and the act for a swap to redirect. A path that
//! can no longer be reached without a link is refused (`conflict`), and the caller's change
//! fails closed.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::AtFlags;
use nix::sys::stat::{fstatat, FileStat};

use super::{refuse_config_name, split, Target};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{map_errno, Workspace};

/// What of git's own directories a change may land in. The workspace's own `.git` is never
/// one of them: git's writes there went straight through while the command ran.
#[derive(Debug, Clone, Copy)]
pub enum Git<'a> {
    /// Nothing in or beneath a directory named `.git`, unless the configuration allows the
    /// tools to write there (`allow_vcs_writes`), as for every edit tool.
    AsTools,
    /// A nested repository's `.git` too (a real directory, reached without a link): the `.git`
    /// entry itself, and what lies beneath it when its first name there is one of `names`
    /// (None: whatever it is). With `root`, the workspace's own `.git` as well: a repository
    /// the command made where the workspace had none (`git init`).
    Nested {
        names: Option<&'a [&'a str]>,
        root: bool,
    },
}

/// The target of a change at the root-relative `path`, reached and checked as the module
/// comment says.
pub fn locate_no_links(ws: &Workspace, path: &str, git: Git<'_>) -> Result<Target> {
    let (parent, name) = plain_parts(path)?;
    // As spelled, too: a protected name is refused whatever it is now.
    ws.refuse_protected_spelling(&ws.relative(path)?)?;
    let dir = ws
        .open_dir_no_links(&parent)
        .map_err(|e| unreachable(ws, path, &parent, e))?;
    check(ws, &dir, &name, path, git)?;
    Ok(Target {
        dir,
        name: name.to_os_string(),
        display: path.to_string(),
    })
}

/// The status of the entry at `path` (links not followed, none on the way either); None when
/// there is none, or a component on the way is not a directory. A link on the way is the
/// error `ELOOP`.
pub fn lstat_no_links(ws: &Workspace, path: &str) -> std::result::Result<Option<FileStat>, Errno> {
    let Ok((parent, name)) = plain_parts(path) else {
        return Err(Errno::EINVAL);
    };
    let dir = match ws.open_dir_no_links(&parent) {
        Ok(dir) => dir,
        Err(Errno::ENOENT | Errno::ENOTDIR) => return Ok(None),
        Err(e) => return Err(e),
    };
    match fstatat(&dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::ENOENT | Errno::ENOTDIR) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The error of a `path` that could not be reached without a link (`e`, from
/// [`lstat_no_links`] or `Workspace::open_dir_no_links`).
pub fn not_reached(ws: &Workspace, path: &str, e: Errno) -> Error {
    match plain_parts(path) {
        Ok((parent, _)) => unreachable(ws, path, &parent, e),
        Err(refused) => refused,
    }
}

/// `path` as its parent and final name: plain names only (no `..`, `.`, absolute path or
/// empty name), as the paths of an upper layer and of the history are.
fn plain_parts(path: &str) -> Result<(std::path::PathBuf, std::ffi::OsString)> {
    let p = Path::new(path);
    let plain = !path.is_empty()
        && p.components().all(|c| matches!(c, Component::Normal(_)))
        && !path.ends_with('/');
    match split(p) {
        Some(parts) if plain => Ok(parts),
        _ => Err(Error::invalid_args(format!(
            "{path}: not a plain path beneath the workspace root"
        ))),
    }
}

/// Why `path` could not be reached without a link: which component on the way is a link (or
/// no longer a directory), looked for one by one on this error's path only.
fn unreachable(ws: &Workspace, path: &str, parent: &Path, e: Errno) -> Error {
    if !matches!(e, Errno::ELOOP | Errno::ENOTDIR | Errno::EXDEV) {
        return map_errno(e, path);
    }
    let mut prefix = std::path::PathBuf::new();
    let mut culprit = parent.display().to_string();
    for comp in parent.components() {
        prefix.push(comp);
        if matches!(
            ws.open_dir_no_links(&prefix),
            Err(Errno::ELOOP | Errno::ENOTDIR | Errno::EXDEV)
        ) {
            culprit = prefix.display().to_string();
            break;
        }
    }
    Error::new(
        ErrorKind::Conflict,
        format!(
            "{path}: {culprit} is now a symbolic link or no longer a directory (it changed while \
             the change was being applied, or since it was recorded); changes are applied only \
             through real directories, never through a link, and this one was not"
        ),
    )
    .about_path(path)
}

/// The checks on the directory handle `dir` and the entry `name` in it (see the module
/// comment).
fn check(ws: &Workspace, dir: &OwnedFd, name: &OsStr, path: &str, git: Git<'_>) -> Result<()> {
    let real = ws
        .real_location(dir.as_fd())
        .ok()
        .flatten()
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Conflict,
                format!(
                    "{path}: its directory is no longer beneath the workspace root (moved or \
                     removed meanwhile); nothing more was applied"
                ),
            )
            .about_path(path)
        })?;
    let mut parts: Vec<&[u8]> = real
        .as_os_str()
        .as_bytes()
        .split(|b| *b == b'/')
        .filter(|c| !c.is_empty())
        .collect();
    parts.push(name.as_bytes());
    refuse_git(ws, &parts, path, git)?;
    refuse_config_name(ws, dir, name, path)?;
    if let Ok(st) = fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        if ws.is_protected(st.st_dev, st.st_ino) {
            return Err(super::protected(path));
        }
    }
    ws.refuse_protected_entry(dir.as_fd(), name, path)?;
    ws.refuse_denied_entry(dir.as_fd(), name, path)
}

/// `parts`: where the entry really is, root-relative, its own name last.
fn refuse_git(ws: &Workspace, parts: &[&[u8]], path: &str, git: Git<'_>) -> Result<()> {
    let Some(at) = parts.iter().position(|c| c.eq_ignore_ascii_case(b".git")) else {
        return Ok(());
    };
    let allowed = match git {
        Git::AsTools => ws.vcs_writes_allowed(),
        Git::Nested { root: false, .. } if at == 0 => false,
        Git::Nested { names, .. } => match parts.get(at + 1) {
            None => true,
            Some(first) => names.map_or(true, |names| names.iter().any(|n| n.as_bytes() == *first)),
        },
    };
    if allowed {
        return Ok(());
    }
    let whose = if at == 0 {
        "the workspace's own repository metadata (.git)"
    } else {
        "repository metadata (.git) git does not write as it works (config, hooks, …)"
    };
    Err(Error::new(
        ErrorKind::ProtectedPath,
        format!(
            "{path} lands in {whose}, which no tool or command changes; set allow_vcs_writes = \
             true in the configuration to change a nested repository's"
        ),
    )
    .about_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn ws(root: &Path) -> Workspace {
        let mut ws = Workspace::open_root(root).expect("root");
        ws.set_path_lists(Vec::new(), vec![".claude".to_string()]);
        ws
    }

    #[test]
    fn a_link_anywhere_on_the_way_is_refused_with_the_link_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        std::fs::create_dir_all(root.join("a/.git")).expect("mkdir");
        symlink("../../.git/hooks", root.join("a/.git/objects")).expect("link");
        symlink("a", root.join("b")).expect("link");
        let ws = ws(root);
        let nested = Git::Nested {
            names: Some(&["objects"]),
            root: false,
        };
        for (path, link) in [
            ("a/.git/objects/pre-commit", "a/.git/objects"),
            ("b/.git/objects/x", "b"),
            ("b/new.txt", "b"),
        ] {
            let err = locate_no_links(&ws, path, nested).expect_err(path);
            assert_eq!(err.kind, ErrorKind::Conflict, "{path}: {}", err.message());
            assert!(
                err.message().starts_with(&format!("{path}: {link} is now")),
                "{}",
                err.message()
            );
        }
        // The walk refuses the same, where openat2 is not there.
        assert_eq!(
            ws.walk_no_links(Path::new("a/.git/objects"))
                .expect_err("link"),
            Errno::ELOOP
        );
        assert_eq!(
            lstat_no_links(&ws, "a/.git/objects/x").expect_err("link"),
            Errno::ELOOP
        );
        assert!(lstat_no_links(&ws, "a/.git/missing/x")
            .expect("absent")
            .is_none());
    }

    #[test]
    fn git_data_lands_only_in_a_nested_repository_s_real_git_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in [
            ".git/hooks",
            ".git/objects",
            "a/.git/objects",
            "a/.git/hooks",
            ".claude",
        ] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        let ws = ws(root);
        let data = Git::Nested {
            names: Some(&["objects"]),
            root: false,
        };
        assert!(locate_no_links(&ws, "a/.git/objects/ab", data).is_ok());
        assert!(locate_no_links(&ws, "a/.git", data).is_ok());
        // A repository the command made where the workspace had none: its data at the root.
        let new = Git::Nested {
            names: Some(&["objects"]),
            root: true,
        };
        assert!(locate_no_links(&ws, ".git/objects/ab", new).is_ok());
        assert!(locate_no_links(&ws, ".git/hooks/pre-commit", new).is_err());
        for (path, git) in [
            ("a/.git/hooks/pre-commit", data),
            (".git/hooks/pre-commit", data),
            (
                ".git/objects",
                Git::Nested {
                    names: None,
                    root: false,
                },
            ),
            ("a/.git/objects/ab", Git::AsTools),
            (".claude/settings.json", data),
            (".claude", Git::AsTools),
            ("sneaky.toml", Git::AsTools),
        ] {
            let err = locate_no_links(&ws, path, git).expect_err(path);
            assert_eq!(
                err.kind,
                ErrorKind::ProtectedPath,
                "{path}: {}",
                err.message()
            );
        }
        assert!(locate_no_links(&ws, "a/../x", Git::AsTools).is_err());
        assert!(locate_no_links(&ws, "/etc/x", Git::AsTools).is_err());
    }

    /// The check is of where the directory handle really is: a directory of the workspace moved
    /// into `.git` after its path was found is refused there, whatever the path said.
    #[test]
    fn the_check_is_of_the_handle_not_of_the_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).expect("mkdir");
        std::fs::create_dir_all(root.join("x")).expect("mkdir");
        let ws = ws(root);
        let opened = ws.open_dir_no_links(Path::new("x")).expect("open");
        std::fs::rename(root.join("x"), root.join(".git/hooks")).expect("rename");
        let err = check(
            &ws,
            &opened,
            OsStr::new("pre-commit"),
            "x/pre-commit",
            Git::AsTools,
        )
        .expect_err("moved into .git");
        assert_eq!(err.kind, ErrorKind::ProtectedPath);
    }
}
