//! A command's changes to the workspace, held aside, shown, and applied as one change that
//! `undo` takes back.
//!
//! In the command's mount namespace the workspace is an overlay (overlayfs, mounted by the
//! launcher in its user namespace with `userxattr`): the real workspace is the lower layer,
//! read as it is, and everything the command writes, creates or deletes lands in an upper
//! layer outside the workspace (in the undo history's directory, so that it is out of the
//! command's reach and usually on the workspace's file system). The repository's `.git` is the
//! real one, bound over the overlay (git's own writes go straight through, as before). This
//! step runs before every other mount of the namespace, so the read-only binds and pins of the
//! sandbox apply on top of the overlay as they did on the workspace.
//!
//! Once the command has ended, the runner reads the upper layer (whiteouts, opaque
//! directories, a directory replaced by a file and back, links, modes) into the paths that
//! changed, and applies them to the workspace: the paths git ignores (build outputs) straight,
//! reported as untracked; the others as one journaled change (`fs::history`, through the
//! all-or-none commit of `fs::durable`). With `dry_run` nothing is applied: the changes and
//! their diff are reported and the upper layer is removed.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::mount::{mount, MsFlags};
use nix::sys::stat::Mode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable;
use crate::fs::glob;
use crate::fs::history::{self, Digest, Snapshot, State, Undoable};
use crate::fs::jail::{map_errno, Workspace, CONFIG_FILE_NAME};
use crate::fs::transition::{self, Content, Step, To};

/// `sneaky-run --hold-changes`: a dry run keeps what it held (under `held-<id>` beside the
/// upper layers) and says `held: <id>` in its result, for the host to apply ([`apply_held`])
/// or drop ([`discard_held`]) once the person has seen the diff.
pub const HOLD_FLAG: &str = "--hold-changes";
/// `sneaky-run --apply-held` / `--drop-held` with `{"held": ID}` on stdin.
pub const APPLY_HELD_FLAG: &str = "--apply-held";
pub const DROP_HELD_FLAG: &str = "--drop-held";

static HOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For this process: dry runs keep what they held (see [`HOLD_FLAG`]).
pub fn hold_dry_runs() {
    HOLD.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub fn holding() -> bool {
    HOLD.load(std::sync::atomic::Ordering::Relaxed)
}

/// Held changes left longer than this by a host that never came back are removed.
const HELD_FOR_AT_MOST_SECS: u64 = 24 * 3600;

/// What the launcher is told: where the upper layer and overlayfs's work directory are, and
/// which real directories of the workspace are bound over the overlay.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverlaySpec {
    pub upper: PathBuf,
    pub work: PathBuf,
    pub pass_through: Vec<PathBuf>,
    /// When the command's call started, if the real-time clock says so (see [`Started`]): the
    /// launcher lets the command run only once the clock that stamps change times has passed
    /// it.
    #[serde(default)]
    pub started: Option<Started>,
    /// The placeholders of protected paths held in the upper layer ([`Scratch::place`]): made
    /// in the workspace by the launcher instead when the overlay cannot be mounted.
    #[serde(default)]
    pub placeholders: Vec<PathBuf>,
}

/// In the launcher, when the overlay could not be mounted and the command writes the
/// workspace itself: hold the protected paths there, as a call without the overlay does (the
/// runner removes them after the call, `protect::Placeholders::reserve`).
pub fn place_in_workspace(spec: &OverlaySpec) {
    for p in &spec.placeholders {
        if fs::symlink_metadata(p).is_err() {
            super::protect::plant(p);
        }
    }
}

/// In the launcher, once the overlay and the sandbox's other mounts are in place: wait, if
/// need be, until the command may start ([`Started::settle`]).
pub fn settle(spec: &OverlaySpec) {
    if let Some(started) = spec.started {
        started.settle();
    }
}

/// Mount the overlay over the workspace `root` (in the launcher, in its own mount namespace,
/// before anything else is mounted there).
pub fn mount_over(root: &Path, spec: &OverlaySpec) -> std::result::Result<(), String> {
    for p in [root, &spec.upper, &spec.work] {
        // overlayfs's options are a comma-separated list where `:` separates lower layers.
        if p.as_os_str().as_bytes().iter().any(|b| b",:\\".contains(b)) {
            return Err(format!(
                "{} holds a character overlayfs options cannot carry (, : \\)",
                p.display()
            ));
        }
    }
    // Opened before the overlay hides them; bound over it afterwards.
    let real: Vec<(&PathBuf, OwnedFd)> = spec
        .pass_through
        .iter()
        .filter_map(|p| {
            let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            nix::fcntl::open(p, flags, Mode::empty())
                .ok()
                .map(|fd| (p, fd))
        })
        .collect();
    let data = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        root.display(),
        spec.upper.display(),
        spec.work.display()
    );
    let overlay = |data: &str| {
        mount(
            Some("overlay"),
            root,
            Some("overlay"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(data),
        )
    };
    // `volatile`: the upper layer is never flushed. Without it, the overlay's unmount (when
    // the command's namespace ends) flushes the upper layer's whole file system (`syncfs`),
    // which on a busy disk held every command up by tens to hundreds of milliseconds. Nothing
    // relies on the upper layer surviving a crash: a call killed before applying it leaves
    // it to be removed, and the changes applied to the workspace are flushed there. A kernel
    // without the option (before Linux 5.10) refuses it; then the overlay is mounted as is.
    overlay(&format!("{data},volatile"))
        .or_else(|e| match e {
            nix::errno::Errno::EINVAL => overlay(&data),
            e => Err(e),
        })
        .map_err(|e| format!("mounting the overlay on {}: {e}", root.display()))?;
    for (path, fd) in real {
        let source = format!("/proc/self/fd/{}", fd.as_raw_fd());
        mount(
            Some(source.as_str()),
            path.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| {
            // Not half in force: the command writes the workspace directly, as reported.
            let _ = nix::mount::umount2(root, nix::mount::MntFlags::MNT_DETACH);
            format!("binding {} over the overlay: {e}", path.display())
        })?;
    }
    Ok(())
}

/// The file of a scratch directory that holds when its command started.
const STARTED_FILE: &str = "started";

/// When a command started, in nanoseconds since the epoch on this machine's real-time clock.
///
/// Whether a workspace path was changed by someone else while the command ran (a person's
/// editor, another tool) is told by its change time (ctime), which every change of content,
/// mode, links or name sets to the kernel's clock and which no program can set back: a change
/// time at or after the start is a change made since. Nothing is read or recorded per path
/// at the start, so a large workspace costs nothing.
///
/// The kernel stamps change times from a coarse clock, which here lags the real time by up to
/// two ticks (4-8 ms), so the start is best taken from the kernel's own stamps
/// ([`Started::stamped`]): two changes in a row to a directory of ours on the workspace's file
/// system, the start being the second one's change time. The stamps the kernel hands out never
/// go back (a fine-grained stamp, Linux 6.13 on, raises the floor of every later coarse one),
/// so every change made before the first of the two is stamped at most the first one's time,
/// and every change made after the second at least the second one's. When the second is
/// later than the first, no change made before the start can look made since, and none made
/// after it can look made before: exact, with no wait. Otherwise (the same coarse tick on a
/// kernel or file system without fine-grained stamps, or the history on another file system)
/// the start is the real-time clock's, and [`Started::settle`] holds the command back until
/// the coarse clock has passed it, so that any change made once the command runs is stamped
/// after the start, and any change made before the start is stamped before it (a change made
/// during the few milliseconds in between counts as made meanwhile: the safe side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started(i128);

impl Started {
    pub fn now() -> Started {
        Started(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128),
        )
    }

    /// The start as the kernel stamps changes (see [`Started`]): the change time of the second
    /// of two changes of `marker`'s mode to what it is, when it is later than the first's, and
    /// `marker` is on the workspace's file system (`workspace_dev`), whose stamps then have
    /// its granularity too. None: the real-time clock and [`Started::settle`] it is.
    fn stamped(marker: &File, workspace_dev: u64) -> Option<Started> {
        use nix::sys::stat::{fchmod, fstat};
        let was = fstat(marker).ok()?;
        if was.st_dev != workspace_dev {
            return None;
        }
        let mode = Mode::from_bits_truncate(was.st_mode & 0o7777);
        // Each change is read back: a change time that was read is what makes the kernel
        // stamp the next change of the same file finer than its coarse clock.
        let stamp = || -> Option<i128> {
            fchmod(marker, mode).ok()?;
            let now = fstat(marker).ok()?;
            Some(i128::from(now.st_ctime) * 1_000_000_000 + i128::from(now.st_ctime_nsec))
        };
        let (first, second) = (stamp()?, stamp()?);
        (second > first).then_some(Started(second))
    }

    /// Wait until the coarse clock that stamps change times has passed the start (at most two
    /// clock ticks).
    pub fn settle(self) {
        use nix::time::{clock_gettime, ClockId};
        let limit = std::time::Instant::now() + std::time::Duration::from_millis(50);
        loop {
            let Ok(coarse) = clock_gettime(ClockId::CLOCK_REALTIME_COARSE) else {
                // No coarse clock to watch: wait out the longest tick (HZ=100).
                std::thread::sleep(std::time::Duration::from_millis(10));
                return;
            };
            let coarse = i128::from(coarse.tv_sec()) * 1_000_000_000 + i128::from(coarse.tv_nsec());
            if coarse > self.0 || std::time::Instant::now() > limit {
                return;
            }
            std::thread::sleep(std::time::Duration::from_micros(250));
        }
    }

    /// Whether a path with this status was changed at or after the start. A change time with
    /// no nanoseconds comes from a file system that keeps whole seconds (or two): then a
    /// change in the second before the start counts too.
    fn changed_since(self, meta: &fs::Metadata) -> bool {
        if meta.ctime_nsec() == 0 {
            let start_secs = self.0.div_euclid(1_000_000_000);
            return i128::from(meta.ctime()) >= start_secs - 1;
        }
        i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()) >= self.0
    }
}

/// The upper layer of one call, in the undo history's directory, removed when dropped (or,
/// when the command left it as it found it, kept as the next call's spare). It holds a lock
/// while it lives, so that a later call removes the ones killed calls left.
pub struct Scratch {
    dir: PathBuf,
    _lock: Flock<File>,
    /// When the command started: what the workspace's paths are compared against when its
    /// changes are applied.
    started: Started,
    /// Kept (its changes could not be applied): not removed.
    kept: bool,
    /// The command's namespace, and the overlay with it, is known to be gone: an upper layer
    /// left empty may serve the next call ([`Scratch::command_ended`]).
    reusable: bool,
    /// The start came from the real-time clock: the launcher waits for the coarse clock to
    /// pass it ([`Started::settle`]).
    settle: bool,
    /// What is tidied once the command has started ([`Scratch::command_started`]): the
    /// scratch directory's parent, where killed calls' directories are looked for, and the
    /// work directory the spare's previous overlay left ([`SPENT`]).
    tidy: Option<(PathBuf, Option<PathBuf>)>,
    /// That tidying, while the command runs; whether the spent work directory went.
    sweep: Option<std::thread::JoinHandle<bool>>,
    /// The protected paths the upper layer holds placeholders for ([`Scratch::place`]).
    placed: Vec<PathBuf>,
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
            let spent = dir.join(SPENT);
            let spent = fs::symlink_metadata(&spent).is_ok().then_some(spent);
            return Ok(Scratch::at(dir, lock, started, settle, Some((base, spent))));
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
            _lock: lock,
            started,
            settle,
            kept: false,
            reusable: false,
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
            let is_placeholder =
                |at: &Path| fs::symlink_metadata(at).map(|m| super::protect::is_placeholder(&m));
            let held = is_placeholder(&at).unwrap_or_else(|_| {
                super::protect::plant(&at);
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
        if let Some((base, spent)) = self.tidy.take() {
            self.sweep = Some(std::thread::spawn(move || {
                remove_abandoned(&base);
                spent.map_or(true, |spent| remove_spent(&spent))
            }));
        }
    }

    /// Once the command has ended: `gone` says its namespace ended with it (the launcher left
    /// by itself, having waited for the namespace's init, whose exit ends every process in
    /// it, and the last of them unmounted the overlay). Only then may the upper layer serve
    /// another call: an overlay still mounted on it would write into that call's changes.
    pub fn command_ended(&mut self, gone: bool) {
        self.reusable = gone;
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

    /// A held upper layer, taken over by this process (None: no such id).
    fn adopt(ws: &Workspace, id: &str) -> Result<Scratch> {
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
            "{}; the command's changes were not applied and are kept in {}",
            e.message(),
            kept.join("upper").display()
        );
        Error::new(e.kind, message)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let swept = self.swept();
        if self.kept || (self.reusable && swept && self.set_aside()) {
            return;
        }
        remove_tree(&self.dir);
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
        let spent = self.dir.join(SPENT);
        if !untouched || fs::symlink_metadata(&spent).is_ok() {
            return false;
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
    let mut names = super::sys::llistxattr(path)?;
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

/// Remove a tree whatever the modes in it (overlayfs makes its work directory mode 000).
fn remove_tree(dir: &Path) {
    open_up(&dir.join("work").join("work"));
    open_up(&dir.join(SPENT));
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

/// One path the command changed, as a result states it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Changed {
    /// Root-relative.
    pub path: String,
    /// "created", "modified" or "deleted" (a rename is a delete and a create).
    pub kind: String,
}

/// What became of a command's changes.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The changes git does not ignore: journaled (or, with dry_run, held).
    pub changes: Vec<Changed>,
    /// The paths git ignores, applied straight (or held, with dry_run).
    pub untracked: Vec<Changed>,
    /// Changes no tool may make (`.git`, the workspace configuration, protected paths): never
    /// applied.
    pub discarded: Vec<String>,
    pub undo: Undoable,
    /// With dry_run: the diff of the changes.
    pub diff: Option<String>,
    pub diff_truncated: bool,
    /// With dry_run under `--hold-changes`: the id the held changes wait under.
    pub held: Option<String>,
    /// Files the command changed that have other hard links: their new version replaces
    /// them (as an edit tool's does), and the other names keep the old content.
    pub links_broken: Vec<String>,
}

impl Applied {
    /// What the command's stderr gains when applying broke hard links (empty: none).
    pub fn links_note(&self) -> String {
        if self.links_broken.is_empty() {
            return String::new();
        }
        format!(
            "sneaky-run: {} had other hard links; the command's version {} it, and the other \
             names keep the old content (a command's changes are applied as an edit tool's are, \
             never written through a hard link)\n",
            self.links_broken.join(", "),
            if self.held.is_some() || self.diff.is_some() {
                "would replace"
            } else {
                "replaced"
            }
        )
    }
}

/// One changed path found in the upper layer.
struct Found {
    path: String,
    to: To,
}

/// Read the upper layer into the paths that changed, parents before their children.
fn scan(root: &Path, upper: &Path) -> Vec<Found> {
    let mut out = Vec::new();
    scan_dir(root, upper, "", true, &mut out);
    out
}

fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

/// `lower_dir`: the workspace holds a real directory at `rel` (else nothing below it is
/// looked up there).
fn scan_dir(root: &Path, upper: &Path, rel: &str, lower_dir: bool, out: &mut Vec<Found>) {
    let Ok(entries) = fs::read_dir(upper.join(rel)) else {
        return;
    };
    let mut names: Vec<OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let Some(name) = name.to_str().map(str::to_string) else {
            continue; // not UTF-8: results could not name it
        };
        let path = join(rel, &name);
        let up = upper.join(&path);
        let Ok(meta) = fs::symlink_metadata(&up) else {
            continue;
        };
        let lower = if lower_dir {
            fs::symlink_metadata(root.join(&path)).ok()
        } else {
            None
        };
        let ft = meta.file_type();
        if ft.is_char_device() && meta.rdev() == 0 {
            // A whiteout: deleted.
            if lower.is_some() {
                out.push(Found {
                    path,
                    to: To::Absent,
                });
            }
        } else if ft.is_dir() {
            let mode = meta.mode() & 0o7777;
            let was_dir = lower.as_ref().is_some_and(|m| m.file_type().is_dir());
            let opaque = was_dir
                && super::sys::lgetxattr(&up, "user.overlay.opaque").as_deref() == Some(b"y");
            let same_mode = lower.as_ref().is_some_and(|m| m.mode() & 0o7777 == mode);
            if !was_dir || !same_mode || opaque {
                out.push(Found {
                    path: path.clone(),
                    to: To::Dir { mode },
                });
            }
            if opaque {
                // What the lower directory held and the upper does not was removed.
                if let Ok(lower_entries) = fs::read_dir(root.join(&path)) {
                    let mut gone: Vec<String> = lower_entries
                        .flatten()
                        .filter_map(|e| e.file_name().to_str().map(str::to_string))
                        .filter(|n| fs::symlink_metadata(up.join(n)).is_err())
                        .collect();
                    gone.sort();
                    for n in gone {
                        out.push(Found {
                            path: join(&path, &n),
                            to: To::Absent,
                        });
                    }
                }
            }
            scan_dir(root, upper, &path, was_dir, out);
        } else if ft.is_symlink() {
            let Ok(target) = fs::read_link(&up) else {
                continue;
            };
            let target = target.into_os_string().into_vec();
            let same = lower.is_some_and(|m| m.file_type().is_symlink())
                && fs::read_link(root.join(&path))
                    .is_ok_and(|t| t.into_os_string().into_vec() == target);
            if !same {
                out.push(Found {
                    path,
                    to: To::Link { target },
                });
            }
        } else if ft.is_file() {
            let mode = meta.mode() & 0o7777;
            let same = lower.is_some_and(|m| {
                m.file_type().is_file()
                    && m.mode() & 0o7777 == mode
                    && m.len() == meta.len()
                    && same_content(&root.join(&path), &up)
            });
            if !same {
                out.push(Found {
                    path,
                    to: To::File {
                        mode,
                        content: Content::File(up),
                    },
                });
            }
        }
        // Other kinds (a FIFO, a socket) are not carried over.
    }
}

fn same_content(a: &Path, b: &Path) -> bool {
    match (fs::read(a), fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Whether git ignores a path (by the workspace's `.gitignore` files, the repository's
/// `info/exclude` and the user's excludes file: `core.excludesFile` as git's configuration
/// sets it, else `$XDG_CONFIG_HOME/git/ignore`): it, or a directory above it, matches, and
/// git does not track it (a path in the index, or a directory holding one, is never ignored).
/// The patterns are gitignore(5)'s, matched by the tool set's glob matcher (src/fs/glob.rs)
/// rather than through a glob crate: the regular-expression engine one brings would more than
/// double sneaky-run's size.
struct Ignored {
    root: PathBuf,
    per_dir: HashMap<String, Vec<Rule>>,
    exclude: Vec<Rule>,
    global: Vec<Rule>,
    repo: Option<GitDirs>,
    /// The index's paths, read the first time a changed path matches a rule.
    tracked: Option<Vec<Vec<u8>>>,
}

/// One line of an ignore file.
struct Rule {
    /// The pattern's segments (split at `/`); `**` matches any number of directories.
    segments: Vec<Vec<u8>>,
    /// No `/` but a trailing one: matches a name at any depth.
    anywhere: bool,
    negated: bool,
    dir_only: bool,
}

fn read_rules(file: &Path) -> Vec<Rule> {
    let Ok(text) = fs::read(file) else {
        return Vec::new();
    };
    text.split(|b| *b == b'\n').filter_map(parse_rule).collect()
}

fn parse_rule(line: &[u8]) -> Option<Rule> {
    let mut line = line.strip_suffix(b"\r").unwrap_or(line);
    // Trailing spaces are dropped unless escaped.
    while line.ends_with(b" ") && !line.ends_with(b"\\ ") {
        line = &line[..line.len() - 1];
    }
    if line.is_empty() || line.starts_with(b"#") {
        return None;
    }
    let (negated, mut line) = match line.strip_prefix(b"!") {
        Some(rest) => (true, rest),
        None => (false, line.strip_prefix(b"\\").unwrap_or(line)),
    };
    let dir_only = line.ends_with(b"/");
    if dir_only {
        line = &line[..line.len() - 1];
    }
    let anchored = line.contains(&b'/');
    let line = line.strip_prefix(b"/").unwrap_or(line);
    if line.is_empty() {
        return None;
    }
    Some(Rule {
        segments: line.split(|b| *b == b'/').map(<[u8]>::to_vec).collect(),
        anywhere: !anchored,
        negated,
        dir_only,
    })
}

impl Rule {
    /// `parts`: the path's components relative to the ignore file's directory.
    fn matches(&self, parts: &[&[u8]], is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        if self.anywhere {
            return parts
                .last()
                .is_some_and(|name| glob::component(&self.segments[0], name));
        }
        glob::components(&self.segments, parts, glob::Extent::Whole)
    }
}

/// The last rule of a file that matches decides: Some(ignored) or None (no opinion).
fn decide(rules: &[Rule], parts: &[&[u8]], is_dir: bool) -> Option<bool> {
    rules
        .iter()
        .rev()
        .find(|r| r.matches(parts, is_dir))
        .map(|r| !r.negated)
}

impl Ignored {
    fn new(root: &Path) -> Ignored {
        let repo = GitDirs::of(root);
        let config = GitConfig::read(repo.as_ref().map(|r| r.common.as_path()));
        let global = match &config.excludes_file {
            Some(file) => read_rules(&root.join(file)),
            None => config_home()
                .map(|base| read_rules(&base.join("git/ignore")))
                .unwrap_or_default(),
        };
        Ignored {
            root: root.to_path_buf(),
            per_dir: HashMap::new(),
            exclude: repo
                .as_ref()
                .map(|r| read_rules(&r.common.join("info/exclude")))
                .unwrap_or_default(),
            global,
            tracked: None,
            repo: repo.map(|r| GitDirs {
                hash_len: config.hash_len,
                ..r
            }),
        }
    }

    /// Does git ignore `path` (root-relative; `is_dir` for the path itself)?
    fn ignores(&mut self, path: &str, is_dir: bool) -> bool {
        let parts: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        (1..=parts.len()).any(|end| self.matches(&parts[..end], end < parts.len() || is_dir))
            && !self.tracks(path)
    }

    /// Whether git tracks `path`, or files beneath it.
    fn tracks(&mut self, path: &str) -> bool {
        let Some(repo) = &self.repo else {
            return false;
        };
        let paths = self.tracked.get_or_insert_with(|| read_index(repo));
        let path = path.as_bytes();
        let mut below = path.to_vec();
        below.push(b'/');
        let at = paths.partition_point(|p| p.as_slice() < path);
        if paths.get(at).is_some_and(|p| p == path) {
            return true;
        }
        let at_below = paths.partition_point(|p| p.as_slice() < below.as_slice());
        if paths.get(at_below).is_some_and(|p| p.starts_with(&below)) {
            return true;
        }
        // A sparse index's directory entry (`dir/`) stands for all it holds.
        at > 0 && paths[at - 1].ends_with(b"/") && path.starts_with(&paths[at - 1])
    }

    fn matches(&mut self, parts: &[&[u8]], is_dir: bool) -> bool {
        // The deepest .gitignore with an opinion decides, then exclude, then the global one.
        for depth in (0..parts.len()).rev() {
            let dir = parts[..depth]
                .iter()
                .map(|p| String::from_utf8_lossy(p))
                .collect::<Vec<_>>()
                .join("/");
            let root = &self.root;
            let rules = self
                .per_dir
                .entry(dir.clone())
                .or_insert_with(|| read_rules(&root.join(&dir).join(".gitignore")));
            if let Some(ignored) = decide(rules, &parts[depth..], is_dir) {
                return ignored;
            }
        }
        decide(&self.exclude, parts, is_dir)
            .or_else(|| decide(&self.global, parts, is_dir))
            .unwrap_or(false)
    }
}

/// `$XDG_CONFIG_HOME`, else `~/.config`, as git finds its per-user files.
fn config_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

/// Where the workspace's repository keeps its files: `.git`, or the directory a `.git` file
/// names (`gitdir: …`), and the common directory a linked worktree shares (`commondir`).
struct GitDirs {
    /// The index's directory.
    git: PathBuf,
    /// The configuration's and `info/exclude`'s.
    common: PathBuf,
    /// 20 (SHA-1) or 32 (SHA-256, `extensions.objectFormat`).
    hash_len: usize,
}

impl GitDirs {
    fn of(root: &Path) -> Option<GitDirs> {
        let dot_git = root.join(".git");
        let meta = fs::metadata(&dot_git).ok()?;
        let git = if meta.is_dir() {
            dot_git
        } else {
            let text = fs::read_to_string(&dot_git).ok()?;
            root.join(text.strip_prefix("gitdir:")?.trim())
        };
        let common = fs::read_to_string(git.join("commondir"))
            .ok()
            .map_or_else(|| git.clone(), |c| git.join(c.trim()));
        Some(GitDirs {
            git,
            common,
            hash_len: 20,
        })
    }
}

/// The paths of git's index (index-format(5), versions 2 to 4, with a split index's shared
/// part), sorted; empty where it cannot be read, as in a repository without commits.
fn read_index(repo: &GitDirs) -> Vec<Vec<u8>> {
    let Ok(data) = fs::read(repo.git.join("index")) else {
        return Vec::new();
    };
    let (mut paths, shared) = parse_index(&data, repo.hash_len).unwrap_or_default();
    if let Some(hash) = shared {
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        if let Ok(data) = fs::read(repo.git.join(format!("sharedindex.{hex}"))) {
            // Entries the split part deletes stay listed: a path counted as tracked is
            // recorded for undo, the safe side.
            paths.extend(parse_index(&data, repo.hash_len).unwrap_or_default().0);
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

/// An index's paths, and the hash naming its shared index.
type IndexPaths = (Vec<Vec<u8>>, Option<Vec<u8>>);

/// An index's entry paths, and the shared index a split index names (its `link` extension).
fn parse_index(data: &[u8], hash_len: usize) -> Option<IndexPaths> {
    let be32 = |at: usize| -> Option<u32> {
        data.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if data.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    let count = be32(8)? as usize;
    let mut paths = Vec::with_capacity(count.min(1 << 20));
    let mut pos = 12;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = pos;
        let flags_at = start + 40 + hash_len;
        let flags = u16::from_be_bytes([*data.get(flags_at)?, *data.get(flags_at + 1)?]);
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let name = if version >= 4 {
            // The name is the previous one less `strip` bytes, then the bytes to the NUL.
            let mut strip: usize = 0;
            let mut at = name_at;
            loop {
                let c = *data.get(at)?;
                at += 1;
                strip = (strip << 7) | usize::from(c & 0x7f);
                if c & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let end = at + data.get(at..)?.iter().position(|b| *b == 0)?;
            let mut name = prev.get(..prev.len().checked_sub(strip)?)?.to_vec();
            name.extend_from_slice(&data[at..end]);
            pos = end + 1;
            name
        } else {
            let end = name_at + data.get(name_at..)?.iter().position(|b| *b == 0)?;
            // Padded with 1 to 8 NULs to a multiple of 8 bytes.
            pos = start + ((end - start + 8) & !7);
            data[name_at..end].to_vec()
        };
        prev.clone_from(&name);
        paths.push(name);
    }
    // Extensions follow, up to the closing checksum.
    let mut shared = None;
    while pos + 8 + hash_len <= data.len() {
        let size = be32(pos + 4)? as usize;
        if &data[pos..pos + 4] == b"link" {
            shared = data.get(pos + 8..pos + 8 + hash_len).map(<[u8]>::to_vec);
        }
        pos += 8 + size;
    }
    Some((paths, shared))
}

/// What of git's configuration (git-config(1)) deciding what is ignored: the system file,
/// the user's (`$XDG_CONFIG_HOME/git/config`, then `~/.gitconfig`, or `GIT_CONFIG_GLOBAL`)
/// and the repository's, the last setting winning; `include.path` is followed,
/// `includeIf` is not.
#[derive(Default)]
struct GitConfig {
    excludes_file: Option<PathBuf>,
    hash_len: usize,
}

impl GitConfig {
    fn read(common: Option<&Path>) -> GitConfig {
        let mut files = Vec::new();
        if std::env::var_os("GIT_CONFIG_NOSYSTEM").is_none() {
            files.push(
                std::env::var_os("GIT_CONFIG_SYSTEM")
                    .map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
            );
        }
        match std::env::var_os("GIT_CONFIG_GLOBAL") {
            Some(global) => files.push(PathBuf::from(global)),
            None => {
                files.extend(config_home().map(|c| c.join("git/config")));
                files.extend(std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".gitconfig")));
            }
        }
        files.extend(common.map(|c| c.join("config")));
        let mut config = GitConfig {
            excludes_file: None,
            hash_len: 20,
        };
        for file in files {
            config.read_file(&file, 0);
        }
        config
    }

    fn read_file(&mut self, file: &Path, depth: usize) {
        // Includes nest at most as deep as git lets them (10).
        if depth > 10 {
            return;
        }
        let Ok(text) = fs::read(file) else {
            return;
        };
        for (section, key, value) in config_entries(&text) {
            match (section.as_str(), key.as_str()) {
                ("core", "excludesfile") => {
                    self.excludes_file = Some(expand_home(&value));
                }
                ("extensions", "objectformat") => {
                    self.hash_len = if value.eq_ignore_ascii_case(b"sha256") {
                        32
                    } else {
                        20
                    };
                }
                ("include", "path") => {
                    let path = expand_home(&value);
                    let path = match file.parent() {
                        Some(dir) if path.is_relative() => dir.join(path),
                        _ => path,
                    };
                    self.read_file(&path, depth + 1);
                }
                _ => {}
            }
        }
    }
}

/// A path setting with `~/` standing for the home directory, as git reads it.
fn expand_home(value: &[u8]) -> PathBuf {
    match (value.strip_prefix(b"~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(std::ffi::OsStr::from_bytes(rest)),
        _ => PathBuf::from(std::ffi::OsStr::from_bytes(value)),
    }
}

/// The settings of a git configuration file: (section, key) lower-cased (a subsection kept
/// apart: `section "sub"` reads as `section.sub`), and the value with quotes, escapes and
/// comments resolved; a key without `=` is `true`.
fn config_entries(text: &[u8]) -> Vec<(String, String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.split(|b| *b == b'\n');
    while let Some(line) = lines.next() {
        let mut line = trim_ascii(line);
        if line.starts_with(b"[") {
            let Some(close) = line.iter().rposition(|b| *b == b']') else {
                continue;
            };
            let header = &line[1..close];
            section = match header.iter().position(|b| *b == b'"') {
                Some(q) => {
                    let name = String::from_utf8_lossy(trim_ascii(&header[..q])).to_lowercase();
                    let sub = String::from_utf8_lossy(&header[q + 1..])
                        .trim_end_matches('"')
                        .to_string();
                    format!("{name}.{sub}")
                }
                None => String::from_utf8_lossy(header).to_lowercase(),
            };
            line = trim_ascii(&line[close + 1..]);
            if line.is_empty() || line[0] == b'#' || line[0] == b';' {
                continue;
            }
        }
        if line.is_empty() || line[0] == b'#' || line[0] == b';' {
            continue;
        }
        let (key, rest) = match line.iter().position(|b| *b == b'=') {
            Some(eq) => (trim_ascii(&line[..eq]), Some(&line[eq + 1..])),
            None => (line, None),
        };
        let key = String::from_utf8_lossy(key).to_lowercase();
        let Some(rest) = rest else {
            out.push((section.clone(), key, b"true".to_vec()));
            continue;
        };
        // The value: quotes toggle, `\` escapes, a comment ends it, a final `\` continues it.
        let mut value = Vec::new();
        let mut quoted = false;
        let mut pending_space = 0;
        let mut chars: Vec<u8> = rest.to_vec();
        let mut i = 0;
        loop {
            if i >= chars.len() {
                break;
            }
            let c = chars[i];
            i += 1;
            match c {
                b'"' => quoted = !quoted,
                b'\\' if i >= chars.len() => {
                    // A line ending in `\`: the value goes on on the next line.
                    match lines.next() {
                        Some(next) => {
                            chars = next.strip_suffix(b"\r").unwrap_or(next).to_vec();
                            i = 0;
                        }
                        None => break,
                    }
                }
                b'\\' => {
                    let e = chars[i];
                    i += 1;
                    value.extend(std::iter::repeat(b' ').take(pending_space));
                    pending_space = 0;
                    value.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'b' => 8,
                        other => other,
                    });
                }
                b'#' | b';' if !quoted => break,
                b' ' | b'\t' | b'\r' if !quoted => {
                    if !value.is_empty() {
                        pending_space += 1;
                    }
                }
                other => {
                    value.extend(std::iter::repeat(b' ').take(pending_space));
                    pending_space = 0;
                    value.push(other);
                }
            }
        }
        out.push((section.clone(), key, value));
    }
    out
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

/// What becomes of a path the command changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
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

fn route(ws: &Workspace, upper: &Path, f: &Found, vcs_writable: bool) -> Route {
    let path = f.path.as_str();
    if path == CONFIG_FILE_NAME
        || ws
            .protected_paths()
            .iter()
            .any(|p| ws.root().join(path).starts_with(p))
    {
        return Route::Discarded;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let Some(at) = parts.iter().position(|c| *c == ".git") else {
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
    let is_dir = |base: &Path| fs::symlink_metadata(base.join(&git_dir)).is_ok_and(|m| m.is_dir());
    if !(is_dir(upper) || is_dir(ws.root())) {
        return Route::Discarded;
    }
    let data = match parts.get(at + 1) {
        None => matches!(f.to, To::Dir { .. } | To::Absent),
        Some(first) => NESTED_GIT_DATA.contains(first) || matches!(f.to, To::Absent),
    };
    if data {
        Route::NestedGit
    } else {
        Route::Discarded
    }
}

/// Every path beneath a directory of the workspace that goes (or becomes something else),
/// deepest last, as deletions.
fn expand_removed(root: &Path, dir: &str, out: &mut Vec<Found>) {
    let Ok(entries) = fs::read_dir(root.join(dir)) else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    for n in names {
        let path = join(dir, &n);
        let is_dir = fs::symlink_metadata(root.join(&path)).is_ok_and(|m| m.file_type().is_dir());
        out.push(Found {
            path: path.clone(),
            to: To::Absent,
        });
        if is_dir {
            expand_removed(root, &path, out);
        }
    }
}

/// The paths the command changed that someone else changed in the workspace while it ran
/// (see [`Started`]): applying the command's version would overwrite that work. Its
/// files, links and what it removes are compared by their change time; a directory the
/// command keeps as a directory is not (its change time moves with every entry made or
/// removed in it, and its entries are compared one by one). A file the command changed that
/// is gone from the workspace was deleted meanwhile, unless the command also removed paths,
/// one of which it may have renamed there (overlayfs marks a file copied up from the
/// workspace, not where from).
fn changed_meanwhile(
    ws: &Workspace,
    upper: &Path,
    all: &[Found],
    started: Started,
    vcs_writable: bool,
) -> Vec<String> {
    let root = ws.root();
    // A clock set back while the command ran leaves change times that cannot be judged.
    let clock_went_back = Started::now().0 < started.0;
    let renames_possible = all.iter().any(|f| matches!(f.to, To::Absent));
    let mut out = Vec::new();
    for f in all {
        if route(ws, upper, f, vcs_writable) == Route::Discarded {
            continue;
        }
        let changed = match fs::symlink_metadata(root.join(&f.path)) {
            Ok(m) if m.file_type().is_dir() && matches!(f.to, To::Dir { .. }) => false,
            Ok(m) => clock_went_back || started.changed_since(&m),
            Err(_) => match f.to {
                To::File { .. } | To::Link { .. } => {
                    !renames_possible
                        && super::sys::lgetxattr(&upper.join(&f.path), "user.overlay.origin")
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
fn conflict(paths: &[String]) -> Error {
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

/// A path's state without its content (what applying needs to know of it).
fn state_of(root: &Path, path: &str) -> Snapshot {
    let state = match fs::symlink_metadata(root.join(path)) {
        Err(_) => State::Absent,
        Ok(m) if m.file_type().is_dir() => State::Dir {
            mode: m.mode() & 0o7777,
        },
        Ok(m) if m.file_type().is_symlink() => State::Link {
            target: fs::read_link(root.join(path))
                .map(|t| t.into_os_string().into_vec())
                .unwrap_or_default(),
        },
        Ok(m) => State::File {
            mode: m.mode() & 0o7777,
            size: m.len(),
            // Not worked out: such a state is only told apart by its kind.
            digest: Digest::Blake3(String::new()),
        },
    };
    Snapshot {
        path: path.to_string(),
        state,
        content: None,
    }
}

fn kind_of(before: &State, to: &To) -> &'static str {
    match (before, to) {
        (State::Absent, _) => "created",
        (_, To::Absent) => "deleted",
        _ => "modified",
    }
}

/// Turn the upper layer into changes, and apply them unless `dry_run`.
pub fn collect(
    ws: &Workspace,
    scratch: &Scratch,
    max_bytes: u64,
    cap: usize,
    dry_run: bool,
) -> Result<Applied> {
    let root = ws.root();
    // (Sockets are not carried over: the placeholders the upper layer holds, `Scratch::place`,
    // are not among the changes.)
    let found = scan(root, &scratch.upper());
    if found.is_empty() {
        // The usual case for a command that only reads: nothing more to look at.
        return Ok(Applied {
            diff: dry_run.then(String::new),
            ..Applied::default()
        });
    }
    // A directory of the workspace that goes or becomes something else takes its contents
    // with it: each is a change of its own.
    let mut all = Vec::with_capacity(found.len());
    for f in found {
        let was_dir =
            fs::symlink_metadata(root.join(&f.path)).is_ok_and(|m| m.file_type().is_dir());
        let removes_tree = was_dir && !matches!(f.to, To::Dir { .. });
        let path = f.path.clone();
        all.push(f);
        if removes_tree {
            expand_removed(root, &path, &mut all);
        }
    }
    // Parents before their children.
    all.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    let upper = scratch.upper();
    let vcs_writable = !ws.is_vcs_metadata(ws.root_fd(), std::ffi::OsStr::new(".git"));
    if !dry_run {
        let meanwhile = changed_meanwhile(ws, &upper, &all, scratch.started, vcs_writable);
        if !meanwhile.is_empty() {
            return Err(conflict(&meanwhile));
        }
    }
    let mut ignored = Ignored::new(root);
    let mut applied = Applied::default();
    let mut journaled = Vec::new();
    let mut untracked = Vec::new();
    let mut nested_git = Vec::new();
    for f in all {
        match route(ws, &upper, &f, vcs_writable) {
            Route::Discarded => {
                applied.discarded.push(f.path);
                continue;
            }
            Route::NestedGit => {
                nested_git.push(Step {
                    path: f.path,
                    to: f.to,
                });
                continue;
            }
            Route::Workspace => {}
        }
        let is_dir = matches!(f.to, To::Dir { .. })
            || fs::symlink_metadata(root.join(&f.path)).is_ok_and(|m| m.file_type().is_dir());
        if ignored.ignores(&f.path, is_dir) {
            untracked.push(f);
        } else {
            journaled.push(f);
        }
    }
    let steps: Vec<Step> = journaled
        .into_iter()
        .map(|f| Step {
            path: f.path,
            to: f.to,
        })
        .collect();
    // What the history keeps (contents included); a file it cannot keep (over
    // undo.max_bytes) leaves the change unrecorded rather than lost.
    // (A path that is not there has nothing to keep: one lstat says so.)
    let (now, unrecordable) = match steps
        .iter()
        .map(|s| match fs::symlink_metadata(root.join(&s.path)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Snapshot {
                path: s.path.clone(),
                state: State::Absent,
                content: None,
            }),
            _ => Snapshot::at(ws, &s.path, max_bytes),
        })
        .collect::<Result<Vec<_>>>()
    {
        Ok(now) => (now, None),
        Err(e) => (
            steps.iter().map(|s| state_of(root, &s.path)).collect(),
            Some(e),
        ),
    };
    applied.changes = steps
        .iter()
        .zip(&now)
        .map(|(s, n)| Changed {
            path: s.path.clone(),
            kind: kind_of(&n.state, &s.to).into(),
        })
        .collect();
    let untracked_steps: Vec<Step> = untracked
        .into_iter()
        .map(|f| Step {
            path: f.path,
            to: f.to,
        })
        .collect();
    let untracked_now: Vec<Snapshot> = untracked_steps
        .iter()
        .map(|s| state_of(root, &s.path))
        .collect();
    applied.untracked = untracked_steps
        .iter()
        .zip(&untracked_now)
        .map(|(s, n)| Changed {
            path: s.path.clone(),
            kind: kind_of(&n.state, &s.to).into(),
        })
        .collect();
    // A file with other hard links loses them: the new version is a new file (the overlay
    // copied it up at the command's first write, and the commit replaces, never writes into,
    // an existing file).
    applied.links_broken = steps
        .iter()
        .chain(&untracked_steps)
        .filter(|s| matches!(s.to, To::File { .. }))
        .filter(|s| {
            fs::symlink_metadata(root.join(&s.path)).is_ok_and(|m| m.is_file() && m.nlink() > 1)
        })
        .map(|s| s.path.clone())
        .collect();
    if dry_run {
        let (diff, cut) = diff_of(&steps, &now, cap);
        applied.diff = Some(diff);
        applied.diff_truncated = cut;
        return Ok(applied);
    }
    // A nested repository's own writes are applied as git made them, through a handle of the
    // workspace that lets them into `.git` (what may go there was decided by `route`).
    let git_ws = if nested_git.is_empty() {
        None
    } else {
        let mut git_ws = Workspace::open_root(root)?;
        git_ws.allow_vcs_writes(true);
        Some(git_ws)
    };
    let nested_now: Vec<Snapshot> = nested_git.iter().map(|s| state_of(root, &s.path)).collect();
    // What goes of them goes first, what comes last: an untracked path may sit in a tracked
    // directory that the recorded change removes or makes.
    if let Some(git_ws) = &git_ws {
        remove_untracked(git_ws, &nested_git, &nested_now)?;
    }
    remove_untracked(ws, &untracked_steps, &untracked_now)?;
    applied.undo = match unrecordable {
        _ if steps.is_empty() => Undoable::default(),
        None => apply_journaled(ws, &steps, &now, max_bytes)?,
        Some(e) => {
            transition::apply(ws, &steps, &now)?;
            Undoable {
                undo_unavailable: Some(e.message()),
                ..Undoable::default()
            }
        }
    };
    add_untracked(ws, &untracked_steps, &untracked_now)?;
    if let Some(git_ws) = &git_ws {
        add_untracked(git_ws, &nested_git, &nested_now)?;
    }
    Ok(applied)
}

/// The paths git ignores are applied as they are, unrecorded, each through the jail
/// (`durable::locate`). First what goes, deepest first.
fn remove_untracked(ws: &Workspace, steps: &[Step], now: &[Snapshot]) -> Result<()> {
    use nix::unistd::{unlinkat, UnlinkatFlags};
    for (s, n) in steps.iter().zip(now).rev() {
        let goes = match (&s.to, &n.state) {
            (_, State::Absent) => false,
            (To::Dir { .. }, State::Dir { .. }) => false,
            (To::File { .. }, State::File { .. }) => false, // renamed over
            _ => true,
        };
        if !goes {
            continue;
        }
        let t = durable::locate(ws, &s.path, false, None)?;
        let flag = if matches!(n.state, State::Dir { .. }) {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        match unlinkat(&t.dir, t.name.as_os_str(), flag) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => return Err(map_errno(e, &s.path)),
        }
    }
    Ok(())
}

/// Then what comes, parents first: a file is moved from the upper layer (a rename where it
/// shares the workspace's file system, so that a build's outputs are not copied).
fn add_untracked(ws: &Workspace, steps: &[Step], now: &[Snapshot]) -> Result<()> {
    use nix::unistd::symlinkat;
    for (s, n) in steps.iter().zip(now) {
        match &s.to {
            To::Absent => {}
            To::Dir { mode } => {
                let t = durable::locate(ws, &s.path, false, None)?;
                if !matches!(n.state, State::Dir { .. }) {
                    nix::sys::stat::mkdirat(
                        &t.dir,
                        t.name.as_os_str(),
                        Mode::from_bits_truncate(*mode),
                    )
                    .map_err(|e| map_errno(e, &s.path))?;
                }
                nix::sys::stat::fchmodat(
                    &t.dir,
                    t.name.as_os_str(),
                    Mode::from_bits_truncate(*mode),
                    nix::sys::stat::FchmodatFlags::FollowSymlink,
                )
                .map_err(|e| map_errno(e, &s.path))?;
            }
            To::Link { target } => {
                let t = durable::locate(ws, &s.path, false, None)?;
                symlinkat(
                    std::ffi::OsStr::from_bytes(target),
                    &t.dir,
                    t.name.as_os_str(),
                )
                .map_err(|e| map_errno(e, &s.path))?;
            }
            To::File { content, .. } => {
                let t = durable::locate(ws, &s.path, false, None)?;
                let Content::File(from) = content else {
                    continue;
                };
                move_in(from, &t)
                    .map_err(|e| Error::io(format!("moving {} in place", s.path), e))?;
            }
        }
    }
    Ok(())
}

/// Move a file of the upper layer to the target: renamed, or, across file systems, copied to
/// a temporary beside it and renamed over it.
fn move_in(from: &Path, t: &durable::Target) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (from.parent(), from.file_name()) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    let src = File::open(dir)?;
    match nix::fcntl::renameat(&src, name, &t.dir, t.name.as_os_str()) {
        Ok(()) => return Ok(()),
        Err(nix::errno::Errno::EXDEV) => {}
        Err(e) => return Err(e.into()),
    }
    let mut temp = t.name.clone();
    temp.push(format!(".sneaky-{}.tmp", std::process::id()));
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC;
    let mode = fs::metadata(from)?.mode() & 0o7777;
    let fd = nix::fcntl::openat(
        &t.dir,
        temp.as_os_str(),
        flags,
        Mode::from_bits_truncate(mode),
    )?;
    let mut out = File::from(fd);
    let copied = std::io::copy(&mut File::open(from)?, &mut out).and_then(|_| {
        nix::sys::stat::fchmod(&out, Mode::from_bits_truncate(mode))?;
        nix::fcntl::renameat(&t.dir, temp.as_os_str(), &t.dir, t.name.as_os_str())?;
        Ok(())
    });
    if copied.is_err() {
        let _ = nix::unistd::unlinkat(
            &t.dir,
            temp.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    copied
}

fn apply_journaled(
    ws: &Workspace,
    steps: &[Step],
    now: &[Snapshot],
    max_bytes: u64,
) -> Result<Undoable> {
    let history = match history::History::open(ws, max_bytes) {
        Ok(h) => h,
        Err(e) => {
            transition::apply(ws, steps, now)?;
            return Ok(Undoable {
                undo_unavailable: Some(e.message()),
                ..Undoable::default()
            });
        }
    };
    let pending = history.begin("run_command", now, None)?;
    transition::apply(ws, steps, now)?;
    let after = steps
        .iter()
        .map(|s| Snapshot::at(ws, &s.path, max_bytes))
        .collect::<Result<Vec<_>>>()?;
    Ok(pending.done(ws, &[], &after)?.undo)
}

/// The diff from what the workspace holds to what the command left.
fn diff_of(steps: &[Step], now: &[Snapshot], cap: usize) -> (String, bool) {
    let mut diff = String::new();
    let mut truncated = false;
    for (s, n) in steps.iter().zip(now) {
        let room = cap.saturating_sub(diff.len());
        let (part, cut) = match (&s.to, &n.state) {
            (To::File { content, .. }, State::Absent | State::File { .. }) => {
                let new = match content {
                    Content::Bytes(b) => b.clone(),
                    Content::File(p) => fs::read(p).unwrap_or_default(),
                };
                crate::edit::diff_text(&s.path, n.content.as_deref(), &new, None, room)
            }
            (To::Absent, State::File { .. }) => {
                let old = n.content.as_deref().unwrap_or_default();
                let (text, cut) = crate::edit::diff_text(&s.path, Some(old), b"", None, room);
                (
                    text.replacen(&format!("+++ b/{}", s.path), "+++ /dev/null", 1),
                    cut,
                )
            }
            (to, from) => (
                format!(
                    "{}: {} becomes {}\n",
                    s.path,
                    from.describe(),
                    describe_to(to)
                ),
                false,
            ),
        };
        truncated |= cut;
        diff.push_str(&part);
    }
    (diff, truncated)
}

fn describe_to(to: &To) -> String {
    match to {
        To::Absent => "missing".into(),
        To::File { .. } => "a file".into(),
        To::Link { target } => format!("a link to {}", String::from_utf8_lossy(target)),
        To::Dir { .. } => "a directory".into(),
    }
}

/// Apply the changes a dry run held (`--hold-changes`), as the command's call would have.
pub fn apply_held(ws: &Workspace, id: &str, max_bytes: u64, cap: usize) -> Result<Applied> {
    let scratch = Scratch::adopt(ws, id)?;
    match collect(ws, &scratch, max_bytes, cap, false) {
        Ok(applied) => Ok(applied),
        Err(e) => Err(scratch.keep_after(e)),
    }
}

/// Drop the changes a dry run held.
pub fn discard_held(ws: &Workspace, id: &str) -> Result<()> {
    Scratch::adopt(ws, id).map(drop)
}

/// Why a command's changes could not be held or recorded, for the result.
pub fn unavailable(why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::IoError,
        format!("the command's changes cannot be held aside: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(lines: &str, path: &str, is_dir: bool) -> bool {
        let rules: Vec<Rule> = lines
            .lines()
            .filter_map(|l| parse_rule(l.as_bytes()))
            .collect();
        let parts: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        (1..=parts.len())
            .any(|end| decide(&rules, &parts[..end], end < parts.len() || is_dir) == Some(true))
    }

    /// The kernel's release as (major, minor).
    fn kernel() -> (u32, u32) {
        let release = nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut parts = release.split(|c: char| !c.is_ascii_digit());
        let mut next = || parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (next(), next())
    }

    #[test]
    fn a_stamped_start_parts_changes_made_before_it_from_changes_made_after() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("marker")).unwrap();
        let marker = File::open(dir.path().join("marker")).unwrap();
        let dev = fs::metadata(dir.path()).unwrap().dev();
        let rounds = 1000;
        let mut exact = 0;
        for i in 0..rounds {
            if i % 50 == 0 {
                // Clock ticks enough since the marker last changed that its first change in
                // this round is stamped from the coarse clock, as the file made before it.
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            // New files, never looked at: the kernel stamps them from its coarse clock (or the
            // floor of fine-grained stamps), which is what a person's editor's changes get.
            let before = dir.path().join(format!("before-{i}"));
            fs::write(&before, "").unwrap();
            let Some(started) = Started::stamped(&marker, dev) else {
                continue;
            };
            exact += 1;
            let after = dir.path().join(format!("after-{i}"));
            fs::write(&after, "").unwrap();
            let meta = |p: &Path| fs::symlink_metadata(p).unwrap();
            assert!(
                !started.changed_since(&meta(&before)),
                "round {i}: a change made before the start counts as made since"
            );
            assert!(
                started.changed_since(&meta(&after)),
                "round {i}: a change made after the start counts as made before"
            );
        }
        // Fine-grained stamps (Linux 6.13 on, ext4, xfs, btrfs, tmpfs) make nearly every start
        // exact; before them, only a start whose two stamps fell in two clock ticks is.
        if kernel() >= (6, 13) && Started::stamped(&marker, dev).is_some() {
            assert!(
                exact * 10 >= rounds * 9,
                "{exact} of {rounds} starts were exact"
            );
        }
        assert!(Started::stamped(&marker, dev.wrapping_add(1)).is_none());
    }

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

    #[test]
    fn git_configuration_values_are_read_as_git_reads_them() {
        let text = b"# top\n[core]\n\tExcludesFile = ~/ignore # a comment\n\
                     [Core \"sub\"]\n\texcludesfile = no\n\
                     [extensions]\n\tobjectFormat = sha256\n\
                     [core] bare\n[user]\n\tname = \"A \\\"B\\\" ; c\" ; gone\n\
                     \tlong = one \\\n two\n";
        let entries = config_entries(text);
        let find = |s: &str, k: &str| {
            entries
                .iter()
                .filter(|(sec, key, _)| sec == s && key == k)
                .map(|(_, _, v)| String::from_utf8_lossy(v).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(find("core", "excludesfile"), ["~/ignore"]);
        assert_eq!(find("core.sub", "excludesfile"), ["no"]);
        assert_eq!(find("extensions", "objectformat"), ["sha256"]);
        assert_eq!(find("core", "bare"), ["true"]);
        assert_eq!(find("user", "name"), ["A \"B\" ; c"]);
        assert_eq!(find("user", "long"), ["one  two"]);
    }

    #[test]
    fn a_version_4_index_s_prefix_compressed_paths_are_read() {
        // Two entries with no extended flags, SHA-1: "ab/c" then "ab/d" (strip 1, then "d").
        let mut data = b"DIRC".to_vec();
        data.extend(4u32.to_be_bytes());
        data.extend(2u32.to_be_bytes());
        for (strip, suffix) in [(0u8, &b"ab/c"[..]), (1, b"d")] {
            data.extend([0u8; 40 + 20]);
            data.extend(4u16.to_be_bytes());
            data.push(strip);
            data.extend(suffix);
            data.push(0);
        }
        data.extend([0u8; 20]);
        let (paths, shared) = parse_index(&data, 20).expect("index");
        assert_eq!(paths, [b"ab/c".to_vec(), b"ab/d".to_vec()]);
        assert!(shared.is_none());
    }

    #[test]
    fn gitignore_patterns_match_as_git_documents_them() {
        assert!(ignored("*.log", "a/b/run.log", false));
        assert!(!ignored("*.log", "a/b/run.logs", false));
        assert!(ignored("build/", "out/build/x.o", false));
        assert!(!ignored("build/", "build", false));
        assert!(ignored("/target", "target/debug/app", false));
        assert!(!ignored("/target", "sub/target/x", false));
        assert!(ignored("doc/*.html", "doc/a.html", false));
        assert!(!ignored("doc/*.html", "doc/sub/a.html", false));
        assert!(ignored("**/tmp", "a/b/tmp", true));
        assert!(ignored("a/**/z", "a/z", false));
        assert!(ignored("a/**/z", "a/b/c/z", false));
        assert!(ignored("logs/**", "logs/x/y", false));
        assert!(ignored("*.o\n!keep.o", "x.o", false));
        assert!(!ignored("*.o\n!keep.o", "keep.o", false));
        assert!(ignored("f[0-9].txt", "f7.txt", false));
        assert!(!ignored("f[!0-9].txt", "f7.txt", false));
        assert!(ignored("?.c", "a.c", false));
        assert!(!ignored("# comment\n\n", "# comment", false));
        assert!(ignored("\\#lit", "#lit", false));
    }
}
