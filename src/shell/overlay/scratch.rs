//! The directory that holds one call's upper layer and overlayfs's work directory, in the
//! undo history's scratch directory: made (or taken from the spare a previous call left),
//! locked while the call lives, and then removed, set aside as the next call's spare, held for
//! a host that applies or drops it later (`--hold-changes`), or kept where a person can take
//! the changes from when they could not be applied.

use std::fs::{self, File};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use super::clock::Started;
use super::mount::OverlaySpec;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::history;
use crate::fs::jail::Workspace;
use crate::shell::gone::Gone;

/// Held changes left longer than this by a host that never came back are removed.
const HELD_FOR_AT_MOST_SECS: u64 = 24 * 3600;

/// The file of a scratch directory that holds when its command started.
const STARTED_FILE: &str = "started";

/// The upper layer of one call, in the undo history's directory, removed when dropped (or,
/// when the command left it as it found it, kept as the next call's spare). It holds a lock
/// while it lives, so that a later call removes the ones killed calls left.
pub struct Scratch {
    dir: PathBuf,
    _lock: Option<Flock<File>>,
    /// When the command started: what the workspace's paths are compared against when its
    /// changes are applied.
    pub(super) started: Started,
    /// Kept (its changes could not be applied): not removed.
    kept: bool,
    /// The command ended with its namespace, whose end (the launcher's exit) unmounts the
    /// overlay: once that has come, an upper layer left empty may serve the next call
    /// ([`Scratch::command_ended`]).
    reusable: Option<Gone>,
    /// The start came from the real-time clock: the launcher waits for the coarse clock to
    /// pass it ([`Started::settle`]).
    settle: bool,
    /// What is tidied once the command has started ([`Scratch::command_started`]): the
    /// scratch directory's parent, where killed calls' directories are looked for, and, for a
    /// spare taken, the directory itself, where the work directories its previous overlays
    /// left are ([`SPENT`]).
    tidy: Option<(PathBuf, Option<PathBuf>)>,
    /// That tidying, while the command runs; whether the spent work directory went.
    sweep: Option<std::thread::JoinHandle<bool>>,
    /// The protected paths the upper layer holds placeholders for ([`Scratch::place`]).
    placed: Vec<PathBuf>,
}

/// The name prefix of a background job's upper layer while the job runs ([`Scratch::for_job`]).
const JOB_PREFIX: &str = "job-";

/// The lock a job's supervisor holds on its upper layer for as long as the job runs and its
/// changes are being applied: while either it or the directory's `lock` is held, no call's
/// tidying takes the directory for a killed call's.
pub const JOB_LOCK: &str = "job.lock";

/// A background job has ended (its namespace, and the overlay with it, is gone): its upper
/// layer `dir` (`job-<id>`) becomes held changes, to be applied by `apply_held` with the id
/// returned.
pub fn job_ended(dir: &Path) -> Result<String> {
    let id = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(JOB_PREFIX))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Error::new(ErrorKind::Internal, "not a job's upper layer"))?
        .to_string();
    // The upper layer was mounted `volatile`: flushed before it is kept.
    File::open(dir)
        .and_then(|d| nix::unistd::syncfs(&d).map_err(std::io::Error::from))
        .and_then(|()| fs::rename(dir, dir.with_file_name(format!("held-{id}"))))
        .map_err(|e| Error::io("keeping the job's changes", e))?;
    Ok(id)
}

/// A job's upper layer whose changes will not be applied (the overlay was not mounted: the
/// job wrote the workspace directly).
pub fn job_dropped(dir: &Path) {
    if dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(JOB_PREFIX))
    {
        remove_tree(dir);
    }
}

/// The name under which a scratch directory whose command changed nothing waits for the next
/// call: its lock file, an empty upper layer and an empty work directory, as `Scratch::create`
/// makes them. Reusing it spares each call making and removing three directories, which on a
/// file system without a journal mounted with `discard` each cost a synchronous discard of
/// the directory's block, and the inode allocator's scan past recently deleted inodes.
const SPARE: &str = "spare";

/// Where a spare keeps what its previous overlay left in the work directory (overlayfs's
/// `work/work`, with the mark of a `volatile` mount, `incompat/volatile`, that would make the
/// next mount refuse it): moved out of the way by one rename, and removed by the call that
/// takes the spare while its command runs (three directories, each a synchronous discard on
/// a file system such as this machine's).
const SPENT: &str = "spent";

impl Scratch {
    /// `started`: the real-time clock's start, kept when the kernel's stamps cannot give an
    /// exact one ([`Started::stamped`]).
    pub fn create(ws: &Workspace, started: Started) -> Result<Scratch> {
        let base = history::scratch_dir(ws)?;
        let stamped = File::open(&base).ok().and_then(|marker| {
            let workspace = nix::sys::stat::fstat(ws.root_fd()).ok()?;
            Started::stamped(&marker, workspace.st_dev)
        });
        let (started, settle) = match stamped {
            Some(exact) => (exact, false),
            None => (started, true),
        };
        if let Some((dir, lock)) = claim_spare(&base) {
            let taken = Some(dir.clone());
            return Ok(Scratch::at(dir, lock, started, settle, Some((base, taken))));
        }
        let dir = tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(&base)
            .map_err(|e| Error::io("making the command's overlay directory", e))?
            .keep();
        // Locked before it has its name: another call removes a directory whose `lock` it can
        // lock, as a killed call's, and would take this one between the two steps.
        let unnamed = dir.join("lock.new");
        let lock = File::create(&unnamed)
            .map_err(|e| Error::io("making the command's overlay directory", e))
            .and_then(|f| {
                Flock::lock(f, FlockArg::LockExclusiveNonblock)
                    .map_err(|(_, e)| Error::io("locking the overlay", std::io::Error::from(e)))
            })
            .and_then(|lock| {
                fs::rename(&unnamed, dir.join("lock"))
                    .map(|()| lock)
                    .map_err(|e| Error::io("making the command's overlay directory", e))
            });
        let lock = match lock {
            Ok(lock) => lock,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        for sub in ["upper", "work"] {
            if let Err(e) = fs::create_dir(dir.join(sub)) {
                let _ = fs::remove_dir_all(&dir);
                return Err(Error::io("making the command's overlay directory", e));
            }
        }
        Ok(Scratch::at(dir, lock, started, settle, Some((base, None))))
    }

    /// A scratch directory taken by this call, locked, as nothing has used it yet.
    fn at(
        dir: PathBuf,
        lock: Flock<File>,
        started: Started,
        settle: bool,
        tidy: Option<(PathBuf, Option<PathBuf>)>,
    ) -> Scratch {
        Scratch {
            dir,
            _lock: Some(lock),
            started,
            settle,
            kept: false,
            reusable: None,
            tidy,
            sweep: None,
            placed: Vec::new(),
        }
    }

    /// Hold the protected paths `wanted` (`protect::wanted`) that are names in the workspace's
    /// root by placeholders in the upper layer, where the command meets them as it would in
    /// the workspace, bound read-only over them, while the workspace itself gets none: making
    /// and removing eleven socket files in it on every call was the most of what a call cost
    /// the file system's inode allocator, and a spare keeps these from call to call. The upper
    /// layer's placeholders no longer wanted go first (one would hide a file or directory made
    /// in the workspace since). Returns the paths left to the workspace (those beneath a
    /// directory of it).
    pub fn place(&mut self, root: &Path, wanted: Vec<PathBuf>) -> Vec<PathBuf> {
        let upper = self.upper();
        let (here, left): (Vec<PathBuf>, Vec<PathBuf>) =
            wanted.into_iter().partition(|p| p.parent() == Some(root));
        if let Ok(entries) = fs::read_dir(&upper) {
            for e in entries.flatten() {
                let gone = !here.iter().any(|p| p.file_name() == Some(&e.file_name()));
                if gone && e.file_type().is_ok_and(|t| t.is_socket()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        let mut left = left;
        for p in here {
            let Some(name) = p.file_name() else { continue };
            let at = upper.join(name);
            let is_placeholder = |at: &Path| {
                fs::symlink_metadata(at).map(|m| crate::shell::protect::is_placeholder(&m))
            };
            let held = is_placeholder(&at).unwrap_or_else(|_| {
                crate::shell::protect::plant(&at);
                is_placeholder(&at).unwrap_or(false)
            });
            if held {
                self.placed.push(p);
            } else {
                left.push(p);
            }
        }
        left
    }

    /// The workspace paths whose placeholders the upper layer holds.
    pub fn placed(&self) -> &[PathBuf] {
        &self.placed
    }

    /// Once the command's launcher has been started: remove what killed calls left and what
    /// the spare's previous overlay left, in a thread, while the command runs (rather than
    /// holding its start up: each directory removed can wait for a synchronous discard).
    pub fn command_started(&mut self) {
        if let Some((base, taken)) = self.tidy.take() {
            self.sweep = Some(std::thread::spawn(move || {
                remove_abandoned(&base);
                taken.map_or(true, |dir| spent_dirs(&dir).iter().all(|s| remove_spent(s)))
            }));
        }
    }

    /// Once the command has ended: `ended` says its namespace ended with it (the launcher
    /// reported the end of the namespace's init, whose exit ends every process in it), and
    /// `launcher` is the launcher's own exit, which unmounts the overlay. Only after both may
    /// the upper layer serve another call: an overlay still mounted on it would write into
    /// that call's changes.
    pub fn command_ended(&mut self, ended: bool, launcher: Gone) {
        self.reusable = ended.then_some(launcher);
    }

    /// Wait for the removal of the previous overlay's work directory; whether it went (not
    /// when the command never started).
    fn swept(&mut self) -> bool {
        match (self.sweep.take(), &self.tidy) {
            (Some(sweep), _) => sweep.join().unwrap_or(false),
            (None, Some((_, Some(_)))) => false,
            (None, _) => true,
        }
    }

    /// The scratch directory itself (its upper layer and overlayfs's work directory).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn upper(&self) -> PathBuf {
        self.dir.join("upper")
    }

    /// The launcher's part. With `dry_run` the repository's `.git` is in the overlay too, so
    /// that nothing at all reaches the workspace.
    pub fn spec(&self, ws: &Workspace, dry_run: bool) -> OverlaySpec {
        let git = ws.root().join(".git");
        OverlaySpec {
            upper: self.upper(),
            work: self.dir.join("work"),
            pass_through: if !dry_run && git.is_dir() {
                vec![git]
            } else {
                Vec::new()
            },
            started: self.settle.then_some(self.started),
            placeholders: self.placed.clone(),
        }
    }
}

impl Scratch {
    /// Keep a dry run's upper layer for [`apply_held`]; its id.
    pub fn hold(mut self) -> Result<String> {
        self.swept();
        let id = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().replacen("run-", "", 1))
            .unwrap_or_default();
        let held = self.dir.with_file_name(format!("held-{id}"));
        // Kept with the upper layer, for the conflict check when it is applied (`apply_held`).
        fs::write(self.dir.join(STARTED_FILE), self.started.0.to_string())
            .map_err(|e| Error::io("keeping the held changes", e))?;
        // The upper layer was mounted `volatile` (never flushed, see `mount_over`): what is
        // held for later is flushed before it is kept.
        File::open(&self.dir)
            .and_then(|dir| nix::unistd::syncfs(&dir).map_err(std::io::Error::from))
            .map_err(|e| Error::io("keeping the held changes", e))?;
        fs::rename(&self.dir, &held).map_err(|e| Error::io("keeping the held changes", e))?;
        self.kept = true;
        Ok(id)
    }

    /// Hand this upper layer to a background job (src/shell/jobs): renamed `job-<id>`, a name
    /// no call's tidying removes while the job's supervisor holds its [`JOB_LOCK`], with the
    /// job's start kept for the conflict check when its changes are applied. This call's own
    /// lock stays held (keep the `Scratch` until the supervisor has taken the job's lock), and
    /// the directory is kept when it is dropped, unless [`Scratch::job_refused`] says the job
    /// never started. The id, under which the changes are applied once the job has ended
    /// ([`job_ended`], then `apply_held`).
    pub fn for_job(&mut self) -> Result<String> {
        let id = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().replacen("run-", "", 1))
            .unwrap_or_default();
        fs::write(self.dir.join(STARTED_FILE), self.started.0.to_string())
            .map_err(|e| Error::io("keeping the job's start", e))?;
        File::create(self.dir.join(JOB_LOCK)).map_err(|e| Error::io("making the job's lock", e))?;
        let job = self.dir.with_file_name(format!("{JOB_PREFIX}{id}"));
        fs::rename(&self.dir, &job).map_err(|e| Error::io("handing the overlay to the job", e))?;
        self.dir = job;
        self.kept = true;
        Ok(id)
    }

    /// The job that was to use this upper layer did not start: it goes when dropped.
    pub fn job_refused(&mut self) {
        self.kept = false;
    }

    /// A held upper layer, taken over by this process (None: no such id).
    pub(super) fn adopt(ws: &Workspace, id: &str) -> Result<Scratch> {
        let gone = || {
            Error::new(
                ErrorKind::NotFound,
                format!("no held changes {id} in this workspace (applied, dropped or never held)"),
            )
        };
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(gone());
        }
        let base = history::scratch_dir(ws)?;
        let held = base.join(format!("held-{id}"));
        // Renamed back first, so that two hosts never apply the same changes.
        let dir = base.join(format!("run-{id}"));
        fs::rename(&held, &dir).map_err(|_| gone())?;
        let lock = File::create(dir.join("lock"))
            .map_err(|e| Error::io("taking the held changes", e))
            .and_then(|f| {
                Flock::lock(f, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
                    Error::io("locking the held changes", std::io::Error::from(e))
                })
            })?;
        // Without its start, every path the held changes touch counts as changed since.
        let started = fs::read_to_string(dir.join(STARTED_FILE))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .map_or(Started(i128::MIN), Started);
        Ok(Scratch::at(dir, lock, started, false, None))
    }

    /// The changes could not be applied: keep the upper layer where a person can take them
    /// from (under a name later calls leave alone), and say where.
    pub fn keep_after(mut self, e: Error) -> Error {
        self.swept();
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().replacen("run-", "kept-", 1))
            .unwrap_or_default();
        let kept = self.dir.with_file_name(name);
        if fs::rename(&self.dir, &kept).is_err() {
            return e;
        }
        self.kept = true;
        let message = format!(
            "{}; the command's changes were not applied, or not all of them, and what it left is \
             kept in {}",
            e.message(),
            kept.join("upper").display()
        );
        Error::new(e.kind, message)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.kept || self.dir.as_os_str().is_empty() {
            return;
        }
        // Before the launcher has left, the rest waits for it (off the call's path).
        if let Some(launcher) = self.reusable.as_ref().filter(|l| !l.is_done()).cloned() {
            let mut rest = Scratch {
                dir: std::mem::take(&mut self.dir),
                _lock: self._lock.take(),
                started: self.started,
                kept: false,
                reusable: self.reusable.take(),
                settle: self.settle,
                tidy: self.tidy.take(),
                sweep: self.sweep.take(),
                placed: std::mem::take(&mut self.placed),
            };
            launcher.then(move || rest.dispose());
            return;
        }
        self.dispose();
    }
}

impl Scratch {
    /// Keep the directory as the next call's spare, or remove it; it is not this value's any
    /// longer (its drop does nothing more). Set aside, it does not wait for the removal of
    /// what its previous overlay left, which goes on meanwhile (a directory removed can wait
    /// milliseconds for the file system's journal while other programs write: `sneaky-run`'s
    /// exit waited for it); what is left of it is the next call's to remove.
    fn dispose(&mut self) {
        if !(self.reusable.is_some() && self.set_aside()) {
            // The tree the removal works in goes whole: after it.
            self.swept();
            remove_tree(&self.dir);
        }
        self.dir = PathBuf::new();
    }
}

impl Scratch {
    /// Leave this directory as the next call's spare, if its command left the upper layer as
    /// it was made: no entry, and the attributes of its root (the workspace root as the
    /// command saw it) those of a new directory. False: it is to be removed.
    fn set_aside(&self) -> bool {
        let upper = self.upper();
        let work = self.dir.join("work");
        let (Ok(u), Ok(w)) = (fs::symlink_metadata(&upper), fs::symlink_metadata(&work)) else {
            return false;
        };
        // `work` was made beside `upper`, alike, and overlayfs leaves it as it was (it works
        // in `work/work`): what differs was changed through the overlay's root. The upper
        // layer holds nothing but the placeholders put there (which the command could not
        // change: each was bound read-only).
        let placeholder = |e: &fs::DirEntry| {
            e.file_type().is_ok_and(|t| t.is_socket())
                && self
                    .placed
                    .iter()
                    .any(|p| p.file_name() == Some(&e.file_name()))
        };
        let untouched = u.mode() == w.mode()
            && u.uid() == w.uid()
            && u.gid() == w.gid()
            && fs::read_dir(&upper)
                .is_ok_and(|mut entries| entries.all(|e| e.is_ok_and(|e| placeholder(&e))))
            && own_xattrs(&upper) == own_xattrs(&work);
        if !untouched {
            return false;
        }
        // Beside one still being removed (or that could not be), under a name of its own.
        let mut spent = self.dir.join(SPENT);
        if fs::symlink_metadata(&spent).is_ok() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            spent = self
                .dir
                .join(format!("{SPENT}-{}_{nanos:x}", std::process::id()));
        }
        // Moved to another directory, `work/work` needs to be writable (its `..` changes).
        let inner = work.join("work");
        let _ = fs::set_permissions(&inner, std::os::unix::fs::PermissionsExt::from_mode(0o700));
        match fs::rename(&inner, &spent) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return false,
        }
        let Some(base) = self.dir.parent() else {
            return false;
        };
        // Never over another spare: a rename of a directory replaces only an empty one, and a
        // spare holds its lock, upper and work.
        fs::rename(&self.dir, base.join(SPARE)).is_ok()
    }
}

/// The names of a directory's extended attributes but overlayfs's own (`user.overlay.*`,
/// `trusted.overlay.*`: the mount keeps the overlay's identity on its upper layer's root).
fn own_xattrs(path: &Path) -> Option<Vec<Vec<u8>>> {
    let mut names = crate::shell::sys::llistxattr(path)?;
    names.retain(|n| !n.starts_with(b"user.overlay.") && !n.starts_with(b"trusted.overlay."));
    names.sort();
    Some(names)
}

/// Take the spare scratch directory, if there is one no other call is taking: locked first
/// (under its spare name, which no call removes), then renamed to a name of this call's own.
fn claim_spare(base: &Path) -> Option<(PathBuf, Flock<File>)> {
    let spare = base.join(SPARE);
    let lock = File::open(spare.join("lock"))
        .ok()
        .and_then(|f| Flock::lock(f, FlockArg::LockExclusiveNonblock).ok())?;
    // The pid and the time: no other call's name (tempfile's are alphanumeric after `run-`).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = base.join(format!("run-{}_{nanos:x}", std::process::id()));
    fs::rename(&spare, &dir).ok()?;
    // Between the lock and the rename another call may have taken that spare and set another
    // one aside: then the one renamed is not the one locked, and is taken by its own lock.
    let locked = lock.metadata().ok()?;
    match fs::metadata(dir.join("lock")) {
        Ok(m) if m.dev() == locked.dev() && m.ino() == locked.ino() => Some((dir, lock)),
        _ => {
            drop(lock);
            let lock = File::open(dir.join("lock"))
                .ok()
                .and_then(|f| Flock::lock(f, FlockArg::LockExclusiveNonblock).ok())?;
            Some((dir, lock))
        }
    }
}

/// Remove what an overlay left in its work directory (`work/work`, here moved to `spent`),
/// whose directories overlayfs makes mode 000: opened up first, so that they can be removed
/// without privileges.
fn remove_spent(spent: &Path) -> bool {
    open_up(spent);
    // What a volatile mount leaves, removed entry by entry (a third of the system calls of a
    // walk); anything else by the walk.
    let incompat = spent.join("incompat");
    let volatile = incompat.join("volatile");
    let known = fs::remove_file(volatile.join("dirty")).is_ok()
        && fs::remove_dir(&volatile).is_ok()
        && fs::remove_dir(&incompat).is_ok()
        && fs::remove_dir(spent).is_ok();
    known || fs::remove_dir_all(spent).is_ok()
}

/// The directories overlayfs makes mode 000 in its work directory `inner`, made searchable and
/// writable.
fn open_up(inner: &Path) {
    let incompat = inner.join("incompat");
    for dir in [inner, &incompat, &incompat.join("volatile")] {
        let _ = fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700));
    }
}

/// The work directories previous overlays left in the scratch directory `dir` ([`SPENT`], and
/// `spent-…` where one was set aside beside another still being removed).
fn spent_dirs(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.strip_prefix(SPENT)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
            })
        })
        .map(|e| e.path())
        .collect()
}

/// Remove a tree whatever the modes in it (overlayfs makes its work directory mode 000).
fn remove_tree(dir: &Path) {
    open_up(&dir.join("work").join("work"));
    for spent in spent_dirs(dir) {
        open_up(&spent);
    }
    if fs::remove_dir_all(dir).is_ok() {
        return;
    }
    for entry in walkdir_dirs(dir) {
        let _ = fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(0o700));
    }
    let _ = fs::remove_dir_all(dir);
}

fn walkdir_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let _ = fs::set_permissions(&out[i], std::os::unix::fs::PermissionsExt::from_mode(0o700));
        if let Ok(rd) = fs::read_dir(&out[i]) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    out.push(e.path());
                }
            }
        }
        i += 1;
    }
    out
}

/// The upper layers of calls that were killed (their lock is free).
fn remove_abandoned(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("held-") {
            let stale = e.metadata().is_ok_and(|m| {
                crate::fs::older_than(&m, std::time::Duration::from_secs(HELD_FOR_AT_MOST_SECS))
            });
            if stale {
                remove_tree(&e.path());
            }
            continue;
        }
        if let Some(id) = name.strip_prefix(JOB_PREFIX) {
            // A job's, whose supervisor and caller are both gone (killed): its changes are
            // kept where a person can take them from, never removed.
            let free = |file: &str| {
                File::open(e.path().join(file))
                    .ok()
                    .and_then(|f| Flock::lock(f, FlockArg::LockExclusiveNonblock).ok())
            };
            if let (Some(_a), Some(_b)) = (free("lock"), free(JOB_LOCK)) {
                let _ = fs::rename(e.path(), base.join(format!("kept-job-{id}")));
            }
            continue;
        }
        if !name.starts_with("run-") {
            continue;
        }
        let path = e.path();
        let Ok(file) = File::open(path.join("lock")) else {
            // A directory without its lock yet is being made, or was left before it had one.
            if e.metadata()
                .is_ok_and(|m| crate::fs::older_than(&m, std::time::Duration::from_secs(60)))
            {
                remove_tree(&path);
            }
            continue;
        };
        if Flock::lock(file, FlockArg::LockExclusiveNonblock).is_ok() {
            remove_tree(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make_spare(base: &Path) -> PathBuf {
        let spare = base.join(SPARE);
        for sub in ["upper", "work"] {
            fs::create_dir_all(spare.join(sub)).expect("mkdir");
        }
        File::create(spare.join("lock")).expect("lock");
        spare
    }

    #[test]
    fn a_spare_is_taken_by_one_call_only_and_never_while_locked() {
        for _ in 0..20 {
            let base = tempfile::tempdir().expect("tempdir");
            let spare = make_spare(base.path());
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
            let takers: Vec<_> = (0..6)
                .map(|_| {
                    let (base, barrier) = (base.path().to_path_buf(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        claim_spare(&base).map(|(dir, _lock)| dir)
                    })
                })
                .collect();
            let taken: Vec<PathBuf> = takers
                .into_iter()
                .filter_map(|t| t.join().expect("join"))
                .collect();
            assert_eq!(taken.len(), 1, "{taken:?}");
            assert!(!spare.exists());
            assert!(taken[0].join("upper").is_dir() && taken[0].join("work").is_dir());
        }
        // Another call holds its lock (it is taking it): left alone.
        let base = tempfile::tempdir().expect("tempdir");
        let spare = make_spare(base.path());
        let held = Flock::lock(
            File::open(spare.join("lock")).expect("open"),
            FlockArg::LockExclusiveNonblock,
        )
        .map_err(|(_, e)| e)
        .expect("lock");
        assert!(claim_spare(base.path()).is_none());
        assert!(spare.join("lock").exists());
        drop(held);
        assert!(claim_spare(base.path()).is_some());
    }

    #[test]
    fn a_spare_is_set_aside_beside_a_work_directory_still_being_removed() {
        let base = tempfile::tempdir().expect("tempdir");
        let spare = make_spare(base.path());
        // What the spare's previous overlay left, not removed yet when this call ends.
        fs::create_dir_all(spare.join(SPENT).join("incompat/volatile")).expect("mkdir");
        let (dir, lock) = claim_spare(base.path()).expect("the spare");
        // What this call's overlay left.
        fs::create_dir_all(dir.join("work/work/incompat/volatile")).expect("mkdir");
        let mut scratch = Scratch::at(dir, lock, Started(0), false, None);
        let gone = Gone::default();
        gone.set();
        scratch.command_ended(true, gone);
        drop(scratch);
        // The spare again, with both work directories, which the call taking it removes.
        let spent = spent_dirs(&spare);
        assert_eq!(spent.len(), 2, "{spent:?}");
        assert!(spent.iter().all(|s| remove_spent(s)));
        assert!(spent_dirs(&spare).is_empty());
        assert!(spare.join("upper").is_dir() && spare.join("work").is_dir());
    }

    #[test]
    fn the_work_directory_a_volatile_overlay_leaves_is_removed_whatever_its_modes() {
        let base = tempfile::tempdir().expect("tempdir");
        let spent = base.path().join(SPENT);
        let volatile = spent.join("incompat/volatile");
        fs::create_dir_all(&volatile).expect("mkdir");
        File::create(volatile.join("dirty")).expect("dirty");
        for dir in [&volatile, &spent.join("incompat"), &spent] {
            fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o000))
                .expect("chmod");
        }
        assert!(remove_spent(&spent));
        assert!(!spent.exists());
        assert!(!remove_spent(&spent));
        // Something else in it too (not what a volatile mount leaves): removed by a walk.
        fs::create_dir_all(spent.join("incompat/volatile")).expect("mkdir");
        File::create(spent.join("incompat/volatile/dirty")).expect("dirty");
        File::create(spent.join("incompat/other")).expect("other");
        fs::set_permissions(&spent, std::os::unix::fs::PermissionsExt::from_mode(0o000))
            .expect("chmod");
        assert!(remove_spent(&spent));
        assert!(!spent.exists());
    }
}
