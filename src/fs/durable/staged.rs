//! Changing several files as one: all of them or none, also across a crash or a `kill -9`.
//!
//! 1. Stage: every new version is written to an unnamed temporary beside its file and flushed;
//!    nothing visible has changed, and a kill leaves nothing behind.
//! 2. Journal: a file `.sneaky-journal-…` in the workspace root lists, for each change, its
//!    directory, its name, the temporary name the new version will get and a backup name for
//!    the old one (a hard link: no copy). It is written and flushed under another name, locked
//!    (`flock`), then renamed into place, so a reader only ever sees a whole, locked journal.
//! 3. Link the temporaries and backups under those names, check that no file changed since it
//!    was read, then rename each new version over its file (or unlink a deleted one).
//! 4. Commit point: the journal is renamed to `….done`; then backups and journal are removed.
//!
//! A transaction of more than a few files flushes them all at once (`syncfs` after staging
//! and after publishing) instead of one `fsync` each: a command's thousand changed files
//! would otherwise wait for a thousand flushes.
//!
//! A failure in step 3 rolls back at once. A process killed during steps 2–4 leaves its
//! journal unlocked: the next edit tool run in the workspace ([`recover`], called by
//! [`super::locate`]) puts every old version back (pending journal) or finishes the cleanup
//! (done journal). A journal still locked belongs to a live edit (another thread or process)
//! and is left alone.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use nix::fcntl::{openat, renameat, AtFlags, Flock, FlockArg, OFlag};
use nix::sys::stat::{fstat, fstatat, Mode};
use nix::unistd::{fsync, linkat, unlinkat, UnlinkatFlags};
use serde::{Deserialize, Serialize};

use super::{open_dirs, temp_name, Existing, Stamp, Target, TempFile};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{map_errno, Workspace};

/// One file change of a transaction.
#[derive(Debug)]
pub enum Change {
    /// Give the target this content; `prior` is the file as read (None: it must not exist).
    Write {
        target: Target,
        content: Vec<u8>,
        prior: Option<Existing>,
        /// Permission bits for the file; None: a rewrite keeps the old file's bits, a new file
        /// gets 0666 less the umask, as any new file.
        mode: Option<u32>,
    },
    /// Remove the target, which must still be the file as read.
    Delete { target: Target, prior: Existing },
    /// Make the target, which must not exist, a new name of `from`: a file on the same file
    /// system (a command's upper layer), linked rather than copied.
    Move {
        target: Target,
        from: std::fs::File,
        mode: u32,
    },
}

impl Change {
    /// The entry the change is to.
    pub fn target(&self) -> &Target {
        match self {
            Change::Write { target, .. }
            | Change::Delete { target, .. }
            | Change::Move { target, .. } => target,
        }
    }
}

const JOURNAL_PREFIX: &str = ".sneaky-journal-";
/// A journal being written (see [`temp_name`]): never acted on, removed when unlocked.
const UNPUBLISHED_PREFIX: &str = ".journal.sneaky-";
/// An unpublished journal younger than this may be a live edit's (see `recover`).
const UNPUBLISHED_FOR_AT_MOST: std::time::Duration = std::time::Duration::from_secs(60);

/// What the journal says about one change (names as bytes: they need not be UTF-8).
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The directory, relative to the root.
    dir: Vec<u8>,
    name: Vec<u8>,
    /// Name the new version is linked under before the rename (None: a delete).
    temp: Option<Vec<u8>>,
    /// Name the old version is linked under (None: the file is new).
    backup: Option<Vec<u8>>,
    /// Inode of the new version, so that a rollback removes only what this edit created.
    ino: Option<u64>,
}

/// A change with what it needs on the way.
struct Staged<'c> {
    change: &'c Change,
    temp: Option<TempFile>,
    entry: Entry,
}

fn dir_of(display: &str) -> std::path::PathBuf {
    Path::new(display)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| ".".into(), |p| p.to_path_buf())
}

/// Apply every change or none (see the module comment).
pub fn commit_all(ws: &Workspace, changes: &[Change]) -> Result<()> {
    let batch = changes.len() > FLUSH_EACH_UP_TO;
    let mut staged = Vec::with_capacity(changes.len());
    for change in changes {
        staged.push(stage(change, !batch)?);
    }
    if batch {
        flush_all(ws)?;
    }
    let journal = Journal::create(ws, &staged)?;
    let result =
        publish(&mut staged, !batch).and_then(|()| if batch { flush_all(ws) } else { Ok(()) });
    match result {
        Ok(()) => {
            journal.finish(ws, &staged);
            Ok(())
        }
        Err(e) => {
            roll_back(ws, &journal.entries(&staged));
            journal.discard(ws);
            Err(e)
        }
    }
}

/// Files a transaction flushes one by one, at most (see the module notes).
const FLUSH_EACH_UP_TO: usize = 8;

/// Flush the workspace's file system: every staged file, or every rename, at once.
fn flush_all(ws: &Workspace) -> Result<()> {
    nix::unistd::syncfs(root_dir(ws)?).map_err(|e| map_errno(e, "."))
}

fn stage(change: &Change, flush: bool) -> Result<Staged<'_>> {
    let target = change.target();
    let (temp, ino) = match change {
        Change::Write {
            content,
            prior,
            mode,
            ..
        } => {
            if prior.is_some() {
                target.refuse_unwritable()?;
            }
            let mut temp = TempFile::create(target, prior.is_none())?;
            temp.fill(content, prior.as_ref(), flush)
                .map_err(|e| Error::io(format!("writing {}", target.display), e))?;
            // Given bits win over the old file's, before the file lands: a change that takes
            // a set-id bit off never leaves the new content with it even for a moment.
            if let Some(bits) = mode {
                nix::sys::stat::fchmod(temp.file.as_fd(), Mode::from_bits_truncate(*bits))
                    .map_err(|e| map_errno(e, &target.display))?;
            }
            let ino = fstat(temp.file.as_fd()).ok().map(|st| st.st_ino);
            (Some(temp), ino)
        }
        Change::Move { from, mode, .. } => {
            let dir = target
                .dir
                .try_clone()
                .map_err(|e| Error::io(format!("directory of {}", target.display), e))?;
            let file = from
                .try_clone()
                .map_err(|e| Error::io(format!("opening the new {}", target.display), e))?;
            nix::sys::stat::fchmod(file.as_fd(), Mode::from_bits_truncate(*mode))
                .map_err(|e| map_errno(e, &target.display))?;
            if flush {
                file.sync_all()
                    .map_err(|e| Error::io(format!("writing {}", target.display), e))?;
            }
            let ino = fstat(file.as_fd()).ok().map(|st| st.st_ino);
            // Named through /proc/self/fd like an unnamed temporary when published.
            let temp = TempFile {
                file,
                name: None,
                dir,
            };
            (Some(temp), ino)
        }
        Change::Delete { .. } => (None, None),
    };
    let has_prior = matches!(
        change,
        Change::Write { prior: Some(_), .. } | Change::Delete { .. }
    );
    let entry = Entry {
        dir: dir_of(&target.display).as_os_str().as_bytes().to_vec(),
        name: target.name.as_bytes().to_vec(),
        temp: temp.as_ref().map(|t| {
            t.name
                .clone()
                .unwrap_or_else(|| temp_name(&target.name))
                .into_vec()
        }),
        backup: has_prior.then(|| backup_name(&target.name).into_vec()),
        ino,
    };
    Ok(Staged {
        change,
        temp,
        entry,
    })
}

fn backup_name(name: &OsStr) -> OsString {
    let mut n = temp_name(name).into_vec();
    n.truncate(n.len() - ".tmp".len());
    n.extend_from_slice(b".bak");
    OsString::from_vec(n)
}

/// Link the new versions and the backups under their journal names, check every file is as
/// read, then rename the new versions into place.
fn publish(staged: &mut [Staged<'_>], flush: bool) -> Result<()> {
    for s in staged.iter() {
        check_unchanged(s.change, false)?;
    }
    for s in staged.iter_mut() {
        let t = s.change.target();
        if let (Some(temp), Some(name)) = (s.temp.as_mut(), s.entry.temp.as_ref()) {
            if temp.name.is_none() {
                temp.link_as(OsStr::from_bytes(name))
                    .map_err(|e| map_errno(e, &t.display))?;
                temp.name = Some(OsString::from_vec(name.clone()));
            }
        }
        if let Some(backup) = &s.entry.backup {
            linkat(
                &t.dir,
                t.name.as_os_str(),
                &t.dir,
                OsStr::from_bytes(backup),
                AtFlags::empty(),
            )
            .map_err(|e| map_errno(e, &t.display))?;
        }
    }
    for s in staged.iter() {
        check_unchanged(s.change, true)?;
    }
    for s in staged.iter_mut() {
        let t = s.change.target();
        match (s.change, s.temp.as_mut()) {
            (Change::Write { prior: None, .. } | Change::Move { .. }, Some(temp)) => {
                temp.commit_new(t)?
            }
            (Change::Write { .. }, Some(temp)) => temp.commit_over(t)?,
            _ => unlinkat(&t.dir, t.name.as_os_str(), UnlinkatFlags::NoRemoveDir)
                .map_err(|e| map_errno(e, &t.display))?,
        }
        if flush {
            let _ = fsync(&t.dir);
        }
    }
    Ok(())
}

/// The file is still the one that was read (or still absent, for a new one). Once its backup
/// link exists (`linked`), its ctime has changed by that link and is not compared.
fn check_unchanged(change: &Change, linked: bool) -> Result<()> {
    let t = change.target();
    let expected = match change {
        Change::Write { prior, .. } => prior.as_ref().map(|p| p.stamp),
        Change::Delete { prior, .. } => Some(prior.stamp),
        Change::Move { .. } => None,
    };
    match (t.stat()?, expected) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(t.conflict("was created by another process")),
        (None, Some(_)) => Err(t.conflict("was deleted or moved by another process")),
        (Some(st), Some(stamp)) if Stamp::of(&st) == stamp => Ok(()),
        (Some(st), Some(stamp)) if linked && stamp.same_but_ctime(&Stamp::of(&st)) => Ok(()),
        (Some(_), Some(_)) => Err(t.conflict("was changed by another process")),
    }
}

/// The journal of a transaction in progress, locked while this process lives.
struct Journal {
    lock: Flock<std::fs::File>,
    name: OsString,
}

/// [`Journal::create`] where the file system has no unnamed files: the journal is made under
/// an unpublished name, locked, written, flushed and renamed to `final_name`. Between its
/// making and its lock another edit's `recover` could take it for a killed edit's; it leaves
/// young ones alone, and the lock is waited for.
fn publish_named(
    root: &OwnedFd,
    name: &OsStr,
    final_name: &OsStr,
    text: &[u8],
) -> Result<Flock<std::fs::File>> {
    let flags =
        OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(root, name, flags, Mode::from_bits_truncate(0o600))
        .map_err(|e| map_errno(e, "journal of a multi-file edit"))?;
    Flock::lock(std::fs::File::from(fd), FlockArg::LockExclusive)
        .map_err(|(_, e)| std::io::Error::from(e))
        .and_then(|mut lock| {
            lock.write_all(text)?;
            lock.sync_all()?;
            renameat(root, name, root, final_name)?;
            Ok(lock)
        })
        .map_err(|e| {
            let _ = unlinkat(root, name, UnlinkatFlags::NoRemoveDir);
            Error::io("journal of a multi-file edit", e)
        })
}

impl Journal {
    fn create(ws: &Workspace, staged: &[Staged<'_>]) -> Result<Journal> {
        let entries: Vec<&Entry> = staged.iter().map(|s| &s.entry).collect();
        let text = serde_json::to_vec(&entries)
            .map_err(|e| Error::new(ErrorKind::IoError, format!("journal: {e}")))?;
        let root = root_dir(ws)?;
        let name = temp_name(OsStr::new("journal"));
        let final_name = {
            let mut n = JOURNAL_PREFIX.as_bytes().to_vec();
            n.extend_from_slice(&name.as_bytes()[1..]);
            OsString::from_vec(n)
        };
        // Unnamed, locked, written and flushed before it gets its name: no other edit's
        // `recover` can ever see it unlocked, and a kill before the link leaves nothing.
        let unnamed = openat(
            &root,
            ".",
            OFlag::O_RDWR | OFlag::O_TMPFILE | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        );
        let lock = match unnamed {
            Ok(fd) => Flock::lock(std::fs::File::from(fd), FlockArg::LockExclusiveNonblock)
                .map_err(|(_, e)| std::io::Error::from(e))
                .and_then(|mut lock| {
                    use std::os::fd::AsRawFd;
                    lock.write_all(&text)?;
                    lock.sync_all()?;
                    let path = format!("/proc/self/fd/{}", lock.as_raw_fd());
                    linkat(
                        nix::fcntl::AT_FDCWD,
                        path.as_str(),
                        &root,
                        final_name.as_os_str(),
                        AtFlags::AT_SYMLINK_FOLLOW,
                    )?;
                    Ok(lock)
                })
                .map_err(|e| Error::io("journal of a multi-file edit", e))?,
            // A file system without unnamed files: made under a name first (see `recover`).
            Err(_) => publish_named(&root, &name, &final_name, &text)?,
        };
        let _ = fsync(&root);
        Ok(Journal {
            lock,
            name: final_name,
        })
    }

    fn entries<'s>(&self, staged: &'s [Staged<'_>]) -> Vec<&'s Entry> {
        staged.iter().map(|s| &s.entry).collect()
    }

    /// Commit point, then cleanup.
    fn finish(self, ws: &Workspace, staged: &[Staged<'_>]) {
        let Ok(root) = root_dir(ws) else { return };
        let mut done = self.name.clone().into_vec();
        done.extend_from_slice(b".done");
        let done = OsString::from_vec(done);
        if renameat(&root, self.name.as_os_str(), &root, done.as_os_str()).is_err() {
            return;
        }
        let _ = fsync(&root);
        for s in staged {
            if let Some(b) = &s.entry.backup {
                let t = s.change.target();
                let _ = unlinkat(&t.dir, OsStr::from_bytes(b), UnlinkatFlags::NoRemoveDir);
            }
        }
        let _ = unlinkat(&root, done.as_os_str(), UnlinkatFlags::NoRemoveDir);
        drop(self.lock);
    }

    fn discard(self, ws: &Workspace) {
        if let Ok(root) = root_dir(ws) {
            let _ = unlinkat(&root, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
            let _ = fsync(&root);
        }
        drop(self.lock);
    }
}

fn root_dir(ws: &Workspace) -> Result<OwnedFd> {
    ws.open_at(
        ws.root_fd(),
        Path::new("."),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY,
        Mode::empty(),
    )
    .map_err(|e| map_errno(e, "."))
}

/// Put the old versions back where this edit had replaced or removed them (a file someone
/// else changed meanwhile is left as they made it), and remove this edit's new files and
/// temporaries.
fn roll_back(ws: &Workspace, entries: &[&Entry]) {
    for e in entries {
        let Ok((dir, _)) = open_dirs(ws, Path::new(OsStr::from_bytes(&e.dir)), false) else {
            continue;
        };
        let name = OsStr::from_bytes(&e.name);
        let now = fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).ok();
        let ours = now.is_some_and(|st| Some(st.st_ino) == e.ino);
        match &e.backup {
            Some(b) => {
                let b = OsStr::from_bytes(b);
                // Replaced by this edit (its inode is there), or deleted by it (nothing is).
                let undo = if e.temp.is_some() {
                    ours
                } else {
                    now.is_none()
                };
                if undo {
                    let _ = renameat(&dir, b, &dir, name);
                } else {
                    let _ = unlinkat(&dir, b, UnlinkatFlags::NoRemoveDir);
                }
            }
            None if ours => {
                let _ = unlinkat(&dir, name, UnlinkatFlags::NoRemoveDir);
            }
            None => {}
        }
        if let Some(t) = &e.temp {
            let _ = unlinkat(&dir, OsStr::from_bytes(t), UnlinkatFlags::NoRemoveDir);
        }
        let _ = fsync(&dir);
    }
}

/// Remove the backups and temporaries of a transaction that committed.
fn clean_up(ws: &Workspace, entries: &[Entry]) {
    for e in entries {
        let Ok((dir, _)) = open_dirs(ws, Path::new(OsStr::from_bytes(&e.dir)), false) else {
            continue;
        };
        for n in [&e.backup, &e.temp].into_iter().flatten() {
            let _ = unlinkat(&dir, OsStr::from_bytes(n), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// Finish what a killed multi-file edit left: roll back a pending journal, clean up after a
/// done one. Journals still locked belong to live edits and are left alone.
pub fn recover(ws: &Workspace) {
    let Ok(root) = root_dir(ws) else { return };
    let Ok(mut dir) = nix::dir::Dir::from_fd(root) else {
        return;
    };
    let names: Vec<OsString> = dir
        .iter()
        .filter_map(|e| e.ok())
        .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
        .filter(|n| {
            n.as_bytes().starts_with(JOURNAL_PREFIX.as_bytes())
                || n.as_bytes().starts_with(UNPUBLISHED_PREFIX.as_bytes())
        })
        .collect();
    if names.is_empty() {
        return;
    }
    let Ok(root) = root_dir(ws) else { return };
    for name in names {
        let flags = OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(fd) = openat(&root, name.as_os_str(), flags, Mode::empty()) else {
            continue;
        };
        let file = std::fs::File::from(fd);
        let unpublished = name.as_bytes().starts_with(UNPUBLISHED_PREFIX.as_bytes());
        // An unpublished journal is locked only once it exists: a young one may be a live
        // edit's that has not locked it yet. A killed edit's is removed once it is older.
        let young = || {
            !file
                .metadata()
                .is_ok_and(|m| crate::fs::older_than(&m, UNPUBLISHED_FOR_AT_MOST))
        };
        if unpublished && young() {
            continue;
        }
        let Ok(lock) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
            continue;
        };
        let entries: Vec<Entry> = serde_json::from_reader(&*lock).unwrap_or_default();
        if unpublished {
            // Killed before the journal was published: nothing was changed.
        } else if name.as_bytes().ends_with(b".done") {
            clean_up(ws, &entries);
        } else {
            roll_back(ws, &entries.iter().collect::<Vec<_>>());
        }
        let _ = unlinkat(&root, name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        let _ = fsync(&root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::durable::locate;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn write_change(ws: &Workspace, name: &str, content: &str) -> Change {
        let target = locate(ws, name, false, None).expect("locate");
        let prior = target.read_existing(ws, 1 << 20).expect("read");
        Change::Write {
            target,
            content: content.as_bytes().to_vec(),
            prior,
            mode: None,
        }
    }

    /// A process that dies after renaming the first of three files: its journal is unlocked,
    /// and recovery puts the first file back, removes the new one and every temporary name.
    #[test]
    fn a_transaction_killed_halfway_is_rolled_back_by_recovery() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("a.txt"), "old a\n").expect("write");
        std::fs::write(root.join("sub/b.txt"), "old b\n").expect("write");
        let ws = Workspace::open_root(root).expect("root");
        let changes = [
            write_change(&ws, "a.txt", "new a\n"),
            write_change(&ws, "sub/b.txt", "new b\n"),
            write_change(&ws, "c.txt", "new c\n"),
        ];
        let mut staged: Vec<Staged<'_>> = changes
            .iter()
            .map(|c| stage(c, true).expect("stage"))
            .collect();
        let journal = Journal::create(&ws, &staged).expect("journal");
        // The first file (and the new one) published, then the process dies.
        publish(&mut staged[..1], true).expect("first");
        let mut rest: Vec<Staged<'_>> = staged.drain(2..).collect();
        publish(&mut rest, true).expect("third");
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).expect("read"),
            "new a\n"
        );
        assert!(root.join("c.txt").exists());
        // Dying releases the lock and runs no destructor.
        let Journal { lock, .. } = journal;
        drop(lock.unlock().expect("unlock"));
        std::mem::forget(staged);
        std::mem::forget(rest);
        recover(&ws);
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).expect("read"),
            "old a\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("sub/b.txt")).expect("read"),
            "old b\n"
        );
        assert_eq!(names(root), vec!["a.txt", "sub"]);
        assert_eq!(names(&root.join("sub")), vec!["b.txt"]);
    }

    /// A live transaction's journal (locked) is left alone by another thread's recovery.
    #[test]
    fn a_locked_journal_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "old a\n").expect("write");
        let ws = Workspace::open_root(root).expect("root");
        let changes = [write_change(&ws, "a.txt", "new a\n")];
        let mut staged: Vec<Staged<'_>> = changes
            .iter()
            .map(|c| stage(c, true).expect("stage"))
            .collect();
        let journal = Journal::create(&ws, &staged).expect("journal");
        publish(&mut staged, true).expect("publish");
        recover(&ws);
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).expect("read"),
            "new a\n"
        );
        journal.finish(&ws, &staged);
        assert_eq!(names(root), vec!["a.txt"]);
    }

    /// Another edit's recovery never takes a live edit's journal, made but not locked yet, for
    /// a killed one's (it did, and removed it under the edit); a killed edit's goes once old.
    #[test]
    fn recovery_leaves_a_journal_being_made_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let ws = Workspace::open_root(root).expect("root");
        let made = root.join(format!("{UNPUBLISHED_PREFIX}1-0-0.tmp"));
        std::fs::write(&made, "").expect("journal");
        recover(&ws);
        assert!(made.exists(), "a journal being made was removed");
        let file = std::fs::File::options()
            .write(true)
            .open(&made)
            .expect("open");
        file.set_modified(std::time::SystemTime::now() - 2 * UNPUBLISHED_FOR_AT_MOST)
            .expect("mtime");
        recover(&ws);
        assert!(!made.exists(), "a killed edit's journal was left");
    }

    /// All or none, through the public entry: a conflict on the second file leaves the first.
    #[test]
    fn a_conflict_on_one_file_changes_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "old a\n").expect("write");
        std::fs::write(root.join("b.txt"), "old b\n").expect("write");
        let ws = Workspace::open_root(root).expect("root");
        let changes = [
            write_change(&ws, "a.txt", "new a\n"),
            write_change(&ws, "b.txt", "new b\n"),
        ];
        std::fs::write(root.join("b.txt"), "someone else\n").expect("write");
        let err = commit_all(&ws, &changes).expect_err("conflict");
        assert_eq!(err.code(), "conflict");
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).expect("read"),
            "old a\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("b.txt")).expect("read"),
            "someone else\n"
        );
        assert_eq!(names(root), vec!["a.txt", "b.txt"]);
    }
}
