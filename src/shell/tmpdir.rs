//! A command's or job's private temporary directory (what TMPDIR names), and its clean-up.
//!
//! Each is made beneath a per-user base, `<temp dir>/sneaky-<uid>/tmp` (0700), inside one of
//! the places every command's view covers (the jobs' runtime places, src/shell/protect.rs,
//! `own_state`): a command or job sees its own temporary directory, which the launcher keeps
//! visible through the cover (`protect::cover_denied`), and none of another call's (their
//! scratch files, build outputs, whatever their programs put in TMPDIR). One mount per call,
//! whatever the number of other calls.
//!
//! Whoever uses one holds a shared lock on it: the call that made it, and for a background
//! job its supervisor (taken before the call lets go, so there is no gap). It is removed by
//! the last holder, and one that nobody holds any longer (left by a killed call or
//! supervisor) by the next call that makes one. When no base can be made (a place taken by
//! another user), the directory is made in the temporary directory itself, as programs
//! usually do: every command of the same user can then read it.

use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::fcntl::{Flock, FlockArg};

use crate::error::{Error, Result};

/// How long a directory in the base must have been left unchanged before a call that gets
/// its lock removes it: a call makes its directory and locks it a moment later, and another
/// call's clean-up must not fall in between.
const SETTLED: Duration = Duration::from_secs(60);

/// A private temporary directory, locked while held; dropping it removes it unless another
/// holder (a job's supervisor) still holds it.
pub struct PrivateTmp {
    path: PathBuf,
    lock: Option<Flock<File>>,
}

impl PrivateTmp {
    /// Make one named `<prefix>…` beneath this user's base (see the module's documentation),
    /// else in the temporary directory itself; `whose` names it in an error ("the command's").
    pub fn create(prefix: &str, whose: &str) -> Result<PrivateTmp> {
        if let Some(base) = base() {
            if let Ok(dir) = tempfile::Builder::new().prefix(prefix).tempdir_in(&base) {
                let path = dir.keep();
                let lock = lock(&path, FlockArg::LockShared);
                sweep(&base, &path, SystemTime::now());
                return Ok(PrivateTmp { path, lock });
            }
        }
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(|e| Error::io(format!("creating {whose} temporary directory"), e))?;
        let path = dir.keep();
        let lock = lock(&path, FlockArg::LockShared);
        Ok(PrivateTmp { path, lock })
    }

    /// Hold the directory another call made (a background job's, for its supervisor, as long
    /// as the job runs).
    pub fn adopt(path: &Path) -> PrivateTmp {
        PrivateTmp {
            path: path.to_path_buf(),
            lock: lock(path, FlockArg::LockShared),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Let go without removing it: another holder (a job's supervisor) has it now.
    pub fn keep(mut self) -> PathBuf {
        self.lock = None;
        std::mem::take(&mut self.path)
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        if self.path.as_os_str().is_empty() {
            return;
        }
        // Another holder still uses it: the last one removes it.
        let lock = self.lock.take();
        if let Some(held) = &lock {
            if held.relock(FlockArg::LockExclusiveNonblock) == Err(nix::errno::Errno::EWOULDBLOCK) {
                return;
            }
        }
        remove(&self.path);
    }
}

/// This user's base for private temporary directories: `tmp` in the first of the places
/// `own_state` covers that is, or can be made, a directory of this user closed to others
/// (0700, not a link): `sneaky-<uid>` in the temporary directory first (on disk, where builds
/// have room; a runtime directory is often a small tmpfs). Canonical, as the launcher compares
/// it with the places it covers.
fn base() -> Option<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    let preferred = std::env::temp_dir().join(format!("sneaky-{uid}"));
    std::iter::once(preferred)
        .chain(super::runtime::runtime_places())
        .find_map(|place| {
            private(&place, uid)?;
            let base = place.join("tmp");
            private(&base, uid)?;
            crate::fs::real::path(&base).ok()
        })
}

/// `dir`, made 0700 when missing, if it is a directory of `uid` closed to others.
fn private(dir: &Path, uid: u32) -> Option<()> {
    let _ = std::fs::DirBuilder::new().mode(0o700).create(dir);
    let meta = std::fs::symlink_metadata(dir).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0).then_some(())
}

/// A lock on the directory `path` (not followed if it is a link), or None when it cannot be
/// opened or locked (then its holder removes it without asking).
fn lock(path: &Path, how: FlockArg) -> Option<Flock<File>> {
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    Flock::lock(dir, how).ok()
}

/// Remove what nobody holds in `base` any longer, but `mine`: directories left by a killed
/// call or supervisor. One held by a live call fails the lock at once (a few system calls
/// each); one changed within [`SETTLED`] before `now` is left for a later call.
fn sweep(base: &Path, mine: &Path, now: SystemTime) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path == mine {
            continue;
        }
        let settled = entry.metadata().is_ok_and(|m| {
            m.is_dir()
                && SystemTime::UNIX_EPOCH
                    .checked_add(Duration::new(m.ctime().max(0) as u64, 0))
                    .and_then(|changed| now.duration_since(changed).ok())
                    .is_some_and(|age| age >= SETTLED)
        });
        if !settled {
            continue;
        }
        if let Some(_held) = lock(&path, FlockArg::LockExclusiveNonblock) {
            remove(&path);
        }
    }
}

/// Remove a temporary directory and everything in it, also what a program left read-only
/// (a directory without write permission, where nothing could be removed otherwise).
fn remove(path: &Path) {
    if std::fs::remove_dir_all(path).is_ok() || !path.exists() {
        return;
    }
    open_up(path);
    let _ = std::fs::remove_dir_all(path);
}

/// Give the owner full rights on every directory beneath `dir` (links not followed).
fn open_up(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_nobody_holds_is_swept_and_a_held_one_is_kept() {
        let base = tempfile::tempdir().unwrap();
        let mine = base.path().join("mine");
        let held = base.path().join("held");
        let left = base.path().join("left");
        let fresh = base.path().join("fresh");
        for d in [&mine, &held, &left, &fresh] {
            std::fs::create_dir(d).unwrap();
        }
        // A read-only directory inside: what `go` leaves in its module cache.
        std::fs::create_dir(left.join("ro")).unwrap();
        std::fs::write(left.join("ro/f"), "x").unwrap();
        std::fs::set_permissions(left.join("ro"), std::fs::Permissions::from_mode(0o500)).unwrap();
        let _holder = PrivateTmp::adopt(&held);
        // As if every change were older than SETTLED: judged from a later clock.
        sweep(base.path(), &mine, SystemTime::now() + SETTLED * 2);
        assert!(mine.is_dir() && held.is_dir());
        assert!(!left.exists(), "a directory nobody holds is removed");
        assert!(!fresh.exists());
        // A directory changed just now is left for later.
        std::fs::create_dir(&fresh).unwrap();
        sweep(base.path(), &mine, SystemTime::now());
        assert!(fresh.is_dir());
    }

    #[test]
    fn the_last_holder_removes_it() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("t");
        std::fs::create_dir(&dir).unwrap();
        let first = PrivateTmp::adopt(&dir);
        let second = PrivateTmp::adopt(&dir);
        drop(first);
        assert!(dir.is_dir(), "removed while another holder still uses it");
        drop(second);
        assert!(!dir.exists());
        // Let go without removing (a job's supervisor holds it now).
        std::fs::create_dir(&dir).unwrap();
        let kept = PrivateTmp::adopt(&dir).keep();
        assert_eq!(kept, dir);
        assert!(dir.is_dir());
    }
}
