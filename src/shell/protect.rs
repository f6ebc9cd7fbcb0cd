//! The read-deny list and the protected paths for commands (src/fs/pathlist.rs has the lists;
//! the file tools apply them in src/fs/jail.rs and src/fs/durable.rs).
//!
//! - Read-deny (`deny_read`): every place of the list that exists when the call starts is
//!   covered in the command's mount view, a directory by an empty read-only tmpfs, anything
//!   else by `/dev/null` (reads find nothing, writes go nowhere); the mount follows a link, so
//!   the real place is covered and every other path to it (`/proc/self/root/…`, a symbolic
//!   link in the workspace) meets the cover. A mount point cannot be removed or renamed, and
//!   nested namespaces inherit the cover locked. Applied by the launcher as one step after the
//!   rest of the mount view ([`cover_denied`]), so it holds on top of whatever the workspace
//!   is mounted as.
//! - Protected paths (`protected_paths`): what exists is bound read-only like `.git/config`
//!   (src/shell/spec.rs); a literal path that does not exist yet gets a placeholder for the
//!   call, as `.git`'s missing metadata does: an empty directory (mode 1500, which marks it as
//!   a placeholder) at the first missing component, bound read-only, so that nothing can be
//!   created there; git does not see an empty directory. Removed after the call by the last
//!   call using it.

use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use nix::mount::{mount, MsFlags};

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::Workspace;
use crate::fs::pathlist::PathList;

/// The places of the read-deny list that exist now (what the launcher covers). Refused when
/// one of their files has another hard link: the cover hides a path, and the other name
/// (wherever it is) would stay readable. Checked for the places themselves and the files
/// directly in a denied directory (`~/.ssh/id_ed25519`); deeper files are not looked at, to
/// keep the cost of every call small.
pub fn denied_places(config: &Config, ws: &Workspace) -> Result<Vec<PathBuf>> {
    let places = PathList::resolve(&config.deny_read_list(), ws.root()).expand();
    for place in &places {
        let Ok(meta) = std::fs::metadata(place) else {
            continue;
        };
        let linked = if meta.is_dir() {
            std::fs::read_dir(place)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .find(|e| e.metadata().is_ok_and(|m| m.nlink() > 1))
                .map(|e| e.path())
        } else {
            (meta.is_file() && meta.nlink() > 1).then(|| place.clone())
        };
        if let Some(file) = linked {
            return Err(Error::new(
                ErrorKind::ProtectedPath,
                format!(
                    "{} is in the read-deny list (deny_read) and has another hard link, which a \
                     command could read: nothing ran. Remove the other link, or take the file out \
                     of deny_read in your own configuration",
                    file.display()
                ),
            ));
        }
    }
    Ok(places)
}

/// The protected places that exist now beneath the root (bound read-only).
pub fn protected_places(ws: &Workspace) -> Vec<PathBuf> {
    let root = ws.root();
    ws.protected_list()
        .expand()
        .into_iter()
        .filter(|p| p.starts_with(root) && p != root)
        .collect()
}

/// The mode that marks a placeholder directory (r-x for the owner, sticky): a directory a
/// person makes does not look like it.
const PLACEHOLDER_MODE: u32 = 0o1500;

/// Placeholders made for protected paths that did not exist, each held with a shared lock;
/// dropping removes those no other call holds.
pub struct Placeholders {
    held: Vec<(PathBuf, Flock<File>)>,
}

impl Placeholders {
    pub fn make(ws: &Workspace) -> Placeholders {
        let root = ws.root();
        let mut held = Vec::new();
        for p in ws
            .protected_list()
            .patterns
            .iter()
            .filter(|p| p.is_literal())
        {
            let path = p.literal_path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            // The first component that does not exist: a placeholder there keeps the whole
            // path from being made.
            let mut at = root.to_path_buf();
            let mut missing = None;
            for c in rel.components() {
                at.push(c);
                match std::fs::symlink_metadata(&at) {
                    Ok(m) if m.is_dir() => continue,
                    Ok(_) => break,
                    Err(_) => {
                        missing = Some(at.clone());
                        break;
                    }
                }
            }
            if let Some(lock) = missing.and_then(|m| hold(&m).map(|l| (m, l))) {
                held.push(lock);
            }
        }
        Placeholders { held }
    }

    /// Where the placeholders are, for a background job's supervisor ([`Self::hold_at`]).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.held.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Hold the placeholders that another call made (while it still holds them), as long as a
    /// background job runs: a placeholder removed under a job's mount view would let the job
    /// make the protected path.
    pub fn hold_at(paths: &[PathBuf]) -> Placeholders {
        let held = paths
            .iter()
            .filter_map(|p| hold(p).map(|lock| (p.clone(), lock)))
            .collect();
        Placeholders { held }
    }
}

/// Make the placeholder directory `path` unless something is there, and hold a shared lock
/// on it when it is a placeholder (ours or another call's). Retried when it is removed in
/// between (by a call that just ended).
fn hold(path: &Path) -> Option<Flock<File>> {
    for _ in 0..3 {
        match std::fs::DirBuilder::new()
            .mode(PLACEHOLDER_MODE)
            .create(path)
        {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(path)
            .ok()?;
        let lock = Flock::lock(dir, FlockArg::LockShared).ok()?;
        let Ok(now) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let Ok(held) = lock.metadata() else {
            return None;
        };
        if held.ino() == now.ino() && held.dev() == now.dev() {
            let ours = now.is_dir() && now.mode() & 0o7777 == PLACEHOLDER_MODE;
            return ours.then_some(lock);
        }
    }
    None
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        for (path, lock) in self.held.drain(..) {
            if lock.relock(FlockArg::LockExclusiveNonblock).is_ok() {
                // Only an empty directory goes (a person may have put something there).
                let _ = std::fs::remove_dir(&path);
            }
        }
    }
}

/// The launcher's step: cover each denied place (see the module's documentation). A place
/// gone since the runner looked is skipped; any other failure refuses the call.
pub fn cover_denied(places: &[PathBuf]) -> std::result::Result<(), String> {
    let none: Option<&str> = None;
    for p in places {
        let Ok(meta) = std::fs::metadata(p) else {
            continue; // gone, a dangling link, or beneath a place covered just before
        };
        let done = if meta.is_dir() {
            mount(
                Some("tmpfs"),
                p,
                Some("tmpfs"),
                MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
                Some("size=4k,nr_inodes=1,mode=0555"),
            )
        } else {
            mount(Some("/dev/null"), p, none, MsFlags::MS_BIND, none)
        };
        match done {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => {
                return Err(format!(
                    "covering {} (deny_read) in the command's view: {e}",
                    p.display()
                ))
            }
        }
    }
    Ok(())
}
