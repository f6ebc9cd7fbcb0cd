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
//!   call, as `.git`'s missing metadata does, at its first missing component: a socket file
//!   that nothing listens on, bound read-only, so that nothing can be created there. A socket
//!   file is what a placeholder must be: git does not list it (`git status`, `git add -A` stay
//!   as they were), opening it fails at once (ENXIO: a program that reads `.envrc` does not
//!   wait), and making and removing it frees no disk block (a directory's removal can cost
//!   milliseconds on a file system mounted with `discard`). Removed after the call by the
//!   last call using it. Over the overlay that holds a command's changes, the placeholders
//!   of names in the workspace's root are in its upper layer instead (`overlay::Scratch::place`;
//!   the workspace gets none, and a spare upper layer keeps them from call to call).

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg, OFlag};
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

/// What a command's mount view makes of the protected paths (src/fs/protected.rs): the places
/// bound read-only (what exists, and the placeholders, once made) and the links on the way,
/// pinned as links (a link replaced would lead elsewhere). Refused when a protected path leads
/// to the workspace's root or above it: the whole workspace would be read-only.
pub struct ProtectedView {
    pub read_only: Vec<PathBuf>,
    pub links: Vec<PathBuf>,
}

pub fn protected_view(ws: &Workspace) -> Result<ProtectedView> {
    let reach = ws.protected_reach();
    if let Some(whole) = reach.whole(ws.root()) {
        return Err(Error::new(
            ErrorKind::ProtectedPath,
            format!(
                "nothing ran: {}",
                crate::fs::jail::whole_workspace_reason(whole)
            ),
        ));
    }
    Ok(ProtectedView {
        read_only: reach
            .existing()
            .chain(reach.missing.iter().map(PathBuf::as_path))
            .map(Path::to_path_buf)
            .collect(),
        links: reach.links().map(Path::to_path_buf).collect(),
    })
}

/// Placeholders for protected paths that did not exist: socket files (see the module's
/// documentation), grouped by the directory that holds them, which is locked shared while
/// they are in use; dropping removes them unless another call or job still holds the lock.
pub struct Placeholders {
    held: Vec<(Flock<File>, Vec<PathBuf>)>,
}

/// Where a call holds the protected paths that do not exist: for each path the protected list
/// reaches beneath the root (links followed, src/fs/protected.rs), its first component that
/// does not exist (or is a placeholder already). A placeholder there keeps the whole path from
/// being made.
pub fn wanted(ws: &Workspace) -> Vec<PathBuf> {
    ws.protected_reach().missing.clone()
}

impl Placeholders {
    pub fn make(ws: &Workspace) -> Placeholders {
        Placeholders::make_at(&wanted(ws))
    }

    /// Placeholders at `paths` ([`wanted`]).
    pub fn make_at(paths: &[PathBuf]) -> Placeholders {
        Placeholders::hold(paths, Hold::Make)
    }

    /// Placeholders a command's overlay holds in its upper layer instead (see
    /// `overlay::Scratch::place`): none is made here, but their names in the workspace are
    /// locked as if they were, so that those the launcher makes there when the overlay cannot
    /// be mounted are removed after the call as this module's own.
    pub fn reserve(paths: &[PathBuf]) -> Placeholders {
        Placeholders::hold(paths, Hold::Reserve)
    }

    /// Where the placeholders are, for a background job's supervisor ([`Self::hold_at`]).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.held
            .iter()
            .flat_map(|(_, p)| p.iter().cloned())
            .collect()
    }

    /// Hold the placeholders that another call made (while it still holds them), as long as a
    /// background job runs: a placeholder removed under a job's mount view would let the job
    /// make the protected path.
    pub fn hold_at(paths: &[PathBuf]) -> Placeholders {
        Placeholders::hold(paths, Hold::Existing)
    }

    /// Lock each directory holding `paths` (shared: a call that ends meanwhile cannot remove
    /// them), then, as `how` says, make the missing placeholders and keep those that are
    /// placeholders, or keep them all.
    fn hold(paths: &[PathBuf], how: Hold) -> Placeholders {
        let mut held: Vec<(Flock<File>, Vec<PathBuf>)> = Vec::new();
        let mut dirs: Vec<&Path> = paths.iter().filter_map(|p| p.parent()).collect();
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            let Some(lock) = lock_dir(dir) else { continue };
            let mut here = Vec::new();
            for p in paths.iter().filter(|p| p.parent() == Some(dir)) {
                if how == Hold::Make && std::fs::symlink_metadata(p).is_err() {
                    plant(p);
                }
                if how == Hold::Reserve
                    || std::fs::symlink_metadata(p).is_ok_and(|m| is_placeholder(&m))
                {
                    here.push(p.clone());
                }
            }
            if !here.is_empty() {
                held.push((lock, here));
            }
        }
        Placeholders { held }
    }
}

/// What [`Placeholders::hold`] does at each of its paths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Make the placeholder if nothing is there; keep it if it is one.
    Make,
    /// Keep it if it is one.
    Existing,
    /// Keep the name whatever is there now (its placeholder is made elsewhere, if at all).
    Reserve,
}

/// Make a placeholder at `path`: a socket file, bound and closed at once, so no one listens
/// on it.
pub(crate) fn plant(path: &Path) {
    let _ = std::os::unix::net::UnixListener::bind(path);
}

/// A socket file where a protected path should be: nobody makes one there but this module.
pub(crate) fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    crate::fs::protected::is_placeholder(meta)
}

fn lock_dir(dir: &Path) -> Option<Flock<File>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)
        .ok()?;
    Flock::lock(file, FlockArg::LockShared).ok()
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        for (lock, paths) in self.held.drain(..) {
            if lock.relock(FlockArg::LockExclusiveNonblock).is_ok() {
                for p in paths {
                    if std::fs::symlink_metadata(&p).is_ok_and(|m| is_placeholder(&m)) {
                        let _ = std::fs::remove_file(&p);
                    }
                }
            }
        }
    }
}

/// SneakyCode's own state, covered in every command's and job's view as the read-deny list
/// is ([`cover_denied`]): the jobs' runtime directories (every workspace's job output, their
/// sockets) and the undo histories (what edits replaced and left, held changes, other calls'
/// live upper layers), where this process keeps them and where a host of the same user with
/// other `XDG_*` variables would ([`crate::shell::runtime::runtime_places`],
/// [`crate::fs::history::state_places`]). A place that does not exist is made (0700) when its
/// parent exists, so that what another host makes there later, while a job runs, is beneath
/// the cover too. Left out: what is not a directory of this user (another user's, or a link
/// planted in `/tmp`: covering where it leads would hide something else), and a place that
/// holds one the command writes (`write`: the workspace, `write_paths`), which the cover
/// would hide. The private temp dirs are made inside one of these places
/// (src/shell/tmpdir.rs): the cover hides every other call's, and the launcher keeps the
/// command's own visible through it ([`cover_denied`]).
pub fn own_state(write: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let uid = nix::unistd::geteuid().as_raw();
    let mut out: Vec<PathBuf> = Vec::new();
    let places = super::runtime::runtime_places()
        .into_iter()
        .chain(crate::fs::history::state_places());
    for place in places {
        if place.parent().is_some_and(Path::is_dir) {
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&place);
        }
        let Ok(meta) = std::fs::symlink_metadata(&place) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let Ok(real) = crate::fs::real::path(&place) else {
            continue;
        };
        if write.iter().any(|w| w.starts_with(&real)) || out.contains(&real) {
            continue;
        }
        out.push(real);
    }
    out
}

/// The launcher's step: cover each denied place (see the module's documentation). A place
/// gone since the runner looked is skipped; any other failure refuses the call.
///
/// A place that holds the command's private temp dir `tmp` (SneakyCode's own state, where
/// the temp dirs of every call are: src/shell/tmpdir.rs) gets a cover with one way through:
/// the empty tmpfs holds the directories on the way to `tmp`, and `tmp` as it is mounted
/// here (writable, and executable where the exec set says so) is bound at its own path
/// before the tmpfs is made read-only. The command finds its temp dir where TMPDIR says, and
/// beside it nothing.
pub fn cover_denied(places: &[PathBuf], tmp: Option<&Path>) -> std::result::Result<(), String> {
    let none: Option<&str> = None;
    let fail = |p: &Path, e: &dyn std::fmt::Display| {
        format!(
            "covering {} (deny_read) in the command's view: {e}",
            p.display()
        )
    };
    // Taken before anything is covered: beneath a cover, its path leads to the cover.
    let kept = match tmp {
        Some(t) if places.iter().any(|p| t.starts_with(p) && t != p) => Some((
            t,
            nix::fcntl::open(
                t,
                OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .map_err(|e| fail(t, &e))?,
        )),
        _ => None,
    };
    for p in places {
        let Ok(meta) = std::fs::metadata(p) else {
            continue; // gone, a dangling link, or beneath a place covered just before
        };
        let way = kept
            .as_ref()
            .and_then(|(t, fd)| Some((t.strip_prefix(p).ok()?, fd)))
            .filter(|(rel, _)| !rel.as_os_str().is_empty());
        let done = match way {
            Some((rel, fd)) if meta.is_dir() => cover_keeping(p, rel, fd),
            _ if meta.is_dir() => mount(
                Some("tmpfs"),
                p,
                Some("tmpfs"),
                MsFlags::MS_RDONLY | COVER_FLAGS,
                Some("size=4k,nr_inodes=1,mode=0555"),
            ),
            _ => mount(Some("/dev/null"), p, none, MsFlags::MS_BIND, none),
        };
        match done {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => return Err(fail(p, &e)),
        }
    }
    Ok(())
}

const COVER_FLAGS: MsFlags = MsFlags::MS_NOSUID
    .union(MsFlags::MS_NODEV)
    .union(MsFlags::MS_NOEXEC);

/// Cover the directory `place` with an empty tmpfs that holds only the way to `rel` beneath
/// it, where the directory `kept` (opened before) is bound, with what is mounted beneath it;
/// then make the tmpfs read-only.
fn cover_keeping(place: &Path, rel: &Path, kept: &OwnedFd) -> nix::Result<()> {
    let none: Option<&str> = None;
    let inodes = rel.components().count() + 1;
    mount(
        Some("tmpfs"),
        place,
        Some("tmpfs"),
        COVER_FLAGS,
        Some(format!("size=4k,nr_inodes={inodes},mode=0555").as_str()),
    )?;
    let mut at = place.to_path_buf();
    for c in rel.components() {
        at.push(c);
        nix::unistd::mkdir(&at, nix::sys::stat::Mode::from_bits_truncate(0o555))?;
    }
    let by_handle = PathBuf::from(format!("/proc/self/fd/{}", kept.as_raw_fd()));
    mount(
        Some(&by_handle),
        &at,
        none,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        none,
    )?;
    mount(
        none,
        place,
        none,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | COVER_FLAGS,
        none,
    )
}
