//! The workspace's changes made while a job runs, mirrored into the job's view.
//!
//! A job sees the workspace through an overlay whose lower layer is the workspace
//! (src/shell/jobs/changes.rs), and overlayfs does not look again at a name of the lower layer
//! it has looked up: a file the edit tools replaced (they rename a new file over the old one)
//! keeps its old content in the job's view, and a name looked up before it was made stays
//! missing. So the tools tell the workspace's supervisor which paths they changed
//! ([`announce`]: the edit tools, undo, a command's applied changes, a job's), and the
//! supervisor writes each path's state in the workspace through the overlay of every running
//! job ([`View::mirror`]). What is mirrored lands in the job's upper layer equal to the
//! workspace, so applying the job's changes at its end finds nothing there
//! (src/shell/overlay/scan.rs drops a file, link or directory equal to the workspace's, and a
//! whiteout of what the workspace no longer has).
//!
//! The way in is a descriptor, not a namespace: once the launcher has built the job's mount
//! view, it hands the supervisor a descriptor of the workspace as the job sees it (the
//! overlay's root) over a socket in the supervisor's private directory
//! (src/shell/handover.rs). Entering the job's namespaces instead would need the launcher's
//! /proc/PID/ns files, which a supervisor of a user other than root cannot open (the launcher
//! is not dumpable), and a child forked from the threaded supervisor to do it in. Every path
//! is resolved beneath that root with openat2 (RESOLVE_BENEATH, NO_SYMLINKS, NO_MAGICLINKS,
//! NO_XDEV), one name at a time where a directory is made on the way: no link the job planted
//! in its view is followed, and no write leaves the overlay's mount (the real `.git` and the
//! read-only files bound over the overlay are other mounts, which the job sees as they are).
//!
//! What the job changed itself is left as the job has it: a path whose entry in the upper
//! layer (or an ancestor's entry that is not a directory) was not written by the mirror is the
//! job's own change; applying the job's changes then meets the workspace's edit as a conflict,
//! as it would without the mirror.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{openat, openat2, readlinkat, renameat, AtFlags, OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{symlinkat, unlinkat, UnlinkatFlags};

use crate::fs::jail::Workspace;

/// How long a tool waits for the supervisor to have mirrored its changes, so that the job
/// sees them once the tool's call has returned; the mirror goes on past it.
const ANNOUNCE_WAIT: Duration = Duration::from_secs(1);
/// The most paths one announcement carries (a request line of the supervisor is bounded); a
/// change of more is not mirrored.
pub const MAX_PATHS: usize = 20_000;
/// The most bytes of file content mirrored into one job for one announcement; a file beyond
/// it is left (a build's large outputs are not copied into every job's upper layer).
const BUDGET: u64 = 256 << 20;

/// Tell the workspace's supervisor, if one runs, that the tools changed these paths
/// (root-relative), so that its running jobs see the change. Asks nothing and starts nothing
/// when no supervisor runs; never fails the caller. Paths of the read-deny list are left out:
/// their content is not copied into a job's upper layer.
pub fn announce(ws: &Workspace, paths: &[&str]) {
    if paths.is_empty() || paths.len() > MAX_PATHS {
        return;
    }
    let Some(dir) = super::existing_workspace_dir(ws.root()) else {
        return;
    };
    let denied = |p: &&str| {
        ws.deny_read()
            .is_some_and(|d| d.by_path(&ws.root().join(p)).is_some())
    };
    let paths: Vec<&str> = paths.iter().copied().filter(|p| !denied(p)).collect();
    if paths.is_empty() {
        return;
    }
    let Ok(mut stream) = UnixStream::connect(super::socket_path(&dir)) else {
        return;
    };
    let _ = stream.set_write_timeout(Some(ANNOUNCE_WAIT));
    let _ = stream.set_read_timeout(Some(ANNOUNCE_WAIT));
    let request = serde_json::json!({"op": "mirror", "paths": paths});
    if stream.write_all(format!("{request}\n").as_bytes()).is_ok() {
        // The answer says the running jobs see the change; nothing in it is needed.
        let _ = BufReader::new(stream).read_line(&mut String::new());
    }
}

/// An entry of the upper layer as the mirror left it: its inode and change time.
type Stamp = (u64, i64, i64);

fn stamp(st: &FileStat) -> Stamp {
    (st.st_ino, st.st_ctime, st.st_ctime_nsec)
}

/// A running job's view of the workspace, and what the mirror wrote into it.
pub(super) struct View {
    /// The workspace as the job sees it; None once the job has ended (the overlay must be
    /// gone before its changes are applied).
    root: Option<OwnedFd>,
    workspace: PathBuf,
    upper: PathBuf,
    /// The upper layer's entries the mirror wrote, by path.
    written: HashMap<String, Stamp>,
}

/// What a path of the workspace is now.
enum Now {
    Absent,
    File { mode: u32 },
    Dir { mode: u32 },
    Link { target: std::ffi::OsString },
}

static TEMPORARY: AtomicU64 = AtomicU64::new(0);

impl View {
    pub(super) fn new(root: OwnedFd, workspace: PathBuf, upper: PathBuf) -> View {
        View {
            root: Some(root),
            workspace,
            upper,
            written: HashMap::new(),
        }
    }

    /// Let go of the job's view (its overlay is unmounted once nothing holds it).
    pub(super) fn close(&mut self) {
        self.root = None;
    }

    /// Write each path's state in the workspace into the job's view: what went first
    /// (deepest first), then what is there (parents first). Paths that are not plain
    /// root-relative paths are skipped, as is every path the job changed itself.
    pub(super) fn mirror(&mut self, paths: &[String]) {
        let Some(view) = self.root.as_ref().and_then(|r| r.try_clone().ok()) else {
            return;
        };
        let dir_flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let (Ok(ws), Ok(upper)) = (
            nix::fcntl::open(&self.workspace, dir_flags, Mode::empty()),
            nix::fcntl::open(&self.upper, dir_flags, Mode::empty()),
        ) else {
            return;
        };
        let mut all: Vec<Vec<&str>> = paths.iter().filter_map(|p| components(p)).collect();
        all.sort();
        all.dedup();
        let states: Vec<Option<Now>> = all.iter().map(|c| now(&ws, c)).collect();
        let mut budget = BUDGET;
        for (comps, state) in all.iter().zip(&states).rev() {
            if matches!(state, Some(Now::Absent)) && !self.jobs_own(&upper, comps, false) {
                self.remove(&view, &upper, comps);
            }
        }
        for (comps, state) in all.iter().zip(&states) {
            let Some(state) = state else { continue };
            let is_dir = matches!(state, Now::Dir { .. });
            if matches!(state, Now::Absent) || self.jobs_own(&upper, comps, is_dir) {
                continue;
            }
            if let Some(parent) = view_parent(&view, &ws, &upper, comps) {
                if put(&parent, state, (&ws, &upper), comps, &mut budget) {
                    self.note(&upper, comps);
                }
            }
        }
    }

    /// Whether the upper layer holds a change of the job's own at `comps` or in place of a
    /// directory above it: an entry the mirror did not leave there (a directory where the
    /// workspace has one too is nobody's change).
    fn jobs_own(&self, upper: &OwnedFd, comps: &[&str], now_dir: bool) -> bool {
        let ours = |upto: usize, st: &FileStat| {
            self.written.get(&comps[..upto].join("/")) == Some(&stamp(st))
        };
        match upper_at(upper, comps) {
            Upper::Nothing => false,
            Upper::Entry(st) if now_dir && kind(&st) == SFlag::S_IFDIR => false,
            Upper::Entry(st) => !ours(comps.len(), &st),
            Upper::InPlaceOf(upto, st) => !ours(upto, &st),
            Upper::Unknown => true,
        }
    }

    /// Remember what the mirror left in the upper layer at `comps`.
    fn note(&mut self, upper: &OwnedFd, comps: &[&str]) {
        let path = comps.join("/");
        match upper_at(upper, comps) {
            Upper::Entry(st) => self.written.insert(path, stamp(&st)),
            _ => self.written.remove(&path),
        };
    }

    /// Remove `comps` from the job's view, as it is gone from the workspace (a directory only
    /// when the job's view of it is empty).
    fn remove(&mut self, view: &OwnedFd, upper: &OwnedFd, comps: &[&str]) {
        let Ok(dir) = parent_beneath(view, comps) else {
            return;
        };
        let name = comps[comps.len() - 1];
        let flag = match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) if kind(&st) == SFlag::S_IFDIR => UnlinkatFlags::RemoveDir,
            Ok(_) => UnlinkatFlags::NoRemoveDir,
            Err(_) => return,
        };
        if unlinkat(&dir, name, flag).is_ok() {
            self.note(upper, comps);
        }
    }
}

/// The components of a root-relative path, or None for one that is not plain (absolute,
/// `..`, a NUL).
fn components(path: &str) -> Option<Vec<&str>> {
    if path.starts_with('/') || path.contains('\0') {
        return None;
    }
    let comps: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    (!comps.is_empty() && !comps.contains(&"..")).then_some(comps)
}

fn kind(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// What the upper layer holds at a path.
enum Upper {
    Nothing,
    Entry(FileStat),
    /// Something other than a directory in place of the path's first `.0` components.
    InPlaceOf(usize, FileStat),
    Unknown,
}

fn upper_at(upper: &OwnedFd, comps: &[&str]) -> Upper {
    let Ok(mut dir) = upper.try_clone() else {
        return Upper::Unknown;
    };
    for (i, name) in comps.iter().enumerate() {
        let st = match fstatat(&dir, *name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::ENOENT) => return Upper::Nothing,
            Err(_) => return Upper::Unknown,
        };
        if i + 1 == comps.len() {
            return Upper::Entry(st);
        }
        if kind(&st) != SFlag::S_IFDIR {
            return Upper::InPlaceOf(i + 1, st);
        }
        dir = match beneath(&dir, name, OFlag::O_PATH | OFlag::O_DIRECTORY) {
            Ok(d) => d,
            Err(_) => return Upper::Unknown,
        };
    }
    Upper::Nothing
}

/// Open `rel` beneath `dir`: no link followed, no `..` out, no other mount entered.
fn beneath(dir: &OwnedFd, rel: &str, flags: OFlag) -> nix::Result<OwnedFd> {
    let how = OpenHow::new()
        .flags(flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
        .resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS
                | ResolveFlag::RESOLVE_NO_XDEV,
        );
    openat2(dir, rel, how)
}

/// The directory holding `comps` beneath `dir`.
fn parent_beneath(dir: &OwnedFd, comps: &[&str]) -> nix::Result<OwnedFd> {
    let parent = match comps.len() {
        0 | 1 => ".".to_string(),
        n => comps[..n - 1].join("/"),
    };
    beneath(dir, &parent, OFlag::O_PATH | OFlag::O_DIRECTORY)
}

/// What the workspace holds at `comps` now; None when it cannot be told (a link on the way,
/// a kind no tool makes).
fn now(ws: &OwnedFd, comps: &[&str]) -> Option<Now> {
    let dir = match parent_beneath(ws, comps) {
        Ok(dir) => dir,
        Err(Errno::ENOENT | Errno::ENOTDIR) => return Some(Now::Absent),
        Err(_) => return None,
    };
    let name = comps[comps.len() - 1];
    let st = match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::ENOENT) => return Some(Now::Absent),
        Err(_) => return None,
    };
    let mode = st.st_mode & 0o7777;
    match kind(&st) {
        SFlag::S_IFREG => Some(Now::File { mode }),
        SFlag::S_IFDIR => Some(Now::Dir { mode }),
        SFlag::S_IFLNK => readlinkat(&dir, name)
            .ok()
            .map(|target| Now::Link { target }),
        _ => None,
    }
}

/// The directory of `comps` in the job's view, made (with the workspace's modes) where the
/// view has none yet; None where the way there is not plain directories of the overlay.
fn view_parent(view: &OwnedFd, ws: &OwnedFd, upper: &OwnedFd, comps: &[&str]) -> Option<OwnedFd> {
    let mut dir = view.try_clone().ok()?;
    for i in 0..comps.len() - 1 {
        let name = comps[i];
        dir = match beneath(&dir, name, OFlag::O_PATH | OFlag::O_DIRECTORY) {
            Ok(d) => d,
            Err(Errno::ENOENT) => {
                let Some(Now::Dir { mode }) = now(ws, &comps[..=i]) else {
                    return None;
                };
                make_dir(&dir, upper, &comps[..=i], mode)?
            }
            Err(_) => return None,
        };
    }
    Some(dir)
}

/// Make the directory `comps` (named `comps`' last in `dir`) with exactly `mode`, the umask
/// aside; its handle. Not where the upper layer holds something (a whiteout): overlayfs makes
/// a directory there opaque, and applying the job's changes would then remove what the
/// workspace holds in it.
fn make_dir(dir: &OwnedFd, upper: &OwnedFd, comps: &[&str], mode: u32) -> Option<OwnedFd> {
    if !matches!(upper_at(upper, comps), Upper::Nothing) {
        return None;
    }
    let name = comps[comps.len() - 1];
    match mkdirat(dir, name, Mode::from_bits_truncate(mode)) {
        Ok(()) | Err(Errno::EEXIST) => {}
        Err(_) => return None,
    }
    let made = beneath(dir, name, OFlag::O_RDONLY | OFlag::O_DIRECTORY).ok()?;
    fchmod(&made, Mode::from_bits_truncate(mode)).ok()?;
    Some(made)
}

/// Put the workspace's `state` of `comps` at `name` in the job's view (`parent`): a file or a
/// link by a temporary renamed over it, a directory made where there is none. Whether the
/// view now holds it. A file larger than what is left of `budget` is left.
fn put(
    parent: &OwnedFd,
    state: &Now,
    (ws, upper): (&OwnedFd, &OwnedFd),
    comps: &[&str],
    budget: &mut u64,
) -> bool {
    let name = comps[comps.len() - 1];
    let temporary = || {
        format!(
            ".sneaky-mirror-{}-{}",
            std::process::id(),
            TEMPORARY.fetch_add(1, Ordering::Relaxed)
        )
    };
    match state {
        Now::Absent => false,
        Now::Dir { mode } => match fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            // A directory there already; anything else in its place is left as the job sees
            // it (made over a whiteout, the directory would hide the workspace's entries).
            Ok(_) => false,
            Err(Errno::ENOENT) => make_dir(parent, upper, comps, *mode).is_some(),
            Err(_) => false,
        },
        Now::Link { target } => {
            let tmp = temporary();
            if symlinkat(target.as_os_str(), parent, tmp.as_str()).is_err() {
                return false;
            }
            replace(parent, &tmp, name)
        }
        Now::File { mode } => {
            let Ok(dir) = parent_beneath(ws, comps) else {
                return false;
            };
            let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK;
            let Ok(src) = beneath(&dir, name, flags) else {
                return false;
            };
            let Ok(st) = fstat(&src) else { return false };
            // A set-id or sticky bit is never applied from an upper layer
            // (src/shell/overlay/scan.rs): such a copy would read as the job's change.
            if kind(&st) != SFlag::S_IFREG || st.st_size as u64 > *budget || mode & 0o7000 != 0 {
                return false;
            }
            *budget -= st.st_size as u64;
            let tmp = temporary();
            let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
            let Ok(out) = openat(
                parent,
                tmp.as_str(),
                flags | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o600),
            ) else {
                return false;
            };
            let mut out = File::from(out);
            let copied = std::io::copy(&mut File::from(src).take(st.st_size as u64), &mut out)
                .is_ok()
                && fchmod(&out, Mode::from_bits_truncate(*mode)).is_ok();
            drop(out);
            if !copied {
                let _ = unlinkat(parent, tmp.as_str(), UnlinkatFlags::NoRemoveDir);
                return false;
            }
            replace(parent, &tmp, name)
        }
    }
}

/// Rename the temporary `tmp` over `name`, or remove it.
fn replace(parent: &OwnedFd, tmp: &str, name: &str) -> bool {
    if renameat(parent, tmp, parent, OsStr::from_bytes(name.as_bytes())).is_ok() {
        return true;
    }
    let _ = unlinkat(parent, tmp, UnlinkatFlags::NoRemoveDir);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_mirrored() {
        assert_eq!(components("a/b.txt"), Some(vec!["a", "b.txt"]));
        assert_eq!(components("./a//b/"), Some(vec!["a", "b"]));
        for bad in ["/etc/passwd", "a/../../x", "..", "", ".", "a\0b"] {
            assert_eq!(components(bad), None, "{bad:?}");
        }
    }
}
