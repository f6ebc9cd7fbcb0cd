//! The undo history of a workspace: what every change by an edit tool replaced, kept so that `undo`
//! can take it back, and what it left, so that a later change by anyone is noticed.
//!
//! Write-ahead: before an edit touches the workspace, its entry is on disk (flushed) holding the
//! state of every path it will change, file contents included; the edit then runs, and the entry is
//! completed with the state each path was left in (write_file, which knows that state ahead, writes
//! it in the entry ahead and completes it by a rename). A process killed in between leaves its
//! entry pending and unlocked; the next tool that opens the history settles it from what the
//! workspace holds: unchanged means the edit never landed (the entry goes), changed means it did
//! (the entry is completed from the workspace). A live edit holds a lock on its entry, so it is
//! never settled under it.
//!
//! The history lives outside the workspace, in `$XDG_STATE_HOME/sneaky/undo/` (else
//! `~/.local/state/sneaky/undo/`), one directory per workspace root (0700): `git status` never sees
//! it, and commands, which may only write the workspace, cannot change it. Contents are kept once
//! each under their digest (`blobs/`, see [`Digest`]), so the content one change leaves and the
//! next one replaces costs its size once; what a rewrite left is kept apart and unflushed
//! (`shown/`), only to show what changed since when an undo meets a conflict. The history is
//! bounded by `undo.max_bytes`: past it the oldest changes are forgotten, and the change that
//! caused it says how many.
//!
//! Where the history lives is `location.rs`; writing its files whole and flushing them,
//! `flush.rs`; keeping it within its bound, `bound.rs`; the journal (writing each change's entry
//! ahead and completing it, settling a killed edit's), `journal.rs`; the model (states,
//! snapshots, entries), the contents kept, and recording a change are here.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{readlinkat, Flock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use super::durable::{self, Existing, MadeDirs, Target};
use super::jail::{Kind, Workspace};
use crate::error::{Error, ErrorKind, Result};

mod bound;
mod flush;
mod journal;
mod location;

use flush::{kept_whole, write_file, write_unflushed, Flush};
use location::history_dir;
#[cfg(test)]
use location::scratch_dir_in;
pub(crate) use location::{outside_workspace, state_home, workspace_key};
pub use location::{scratch_dir, state_places};

/// What one path of the workspace was, or became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    Absent,
    File {
        mode: u32,
        size: u64,
        #[serde(flatten)]
        digest: Digest,
    },
    /// A symbolic link and its target, byte for byte.
    Link {
        target: Vec<u8>,
    },
    Dir {
        mode: u32,
    },
}

/// A file content's digest, by which the history names its copy (`blobs/<hex>`) and tells a
/// later change from the one recorded; in an entry, a key naming the algorithm
/// (`"blake3": "<hex>"`). BLAKE3 for what is recorded now: about four times as fast as SHA-256
/// on these machines (0.2 against 0.85-1 ms per MB with SHA-NI), and a 1 MB write_file works
/// out two. SHA-256 in entries written before: read, compared and restored as ever, each
/// checked by its own algorithm. (The hex digits of the two cannot meet but by a collision of
/// 256-bit digests, so both name their copies alike.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Digest {
    Blake3(String),
    Sha256(String),
}

impl Digest {
    /// The digest the history records for `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest::Blake3(blake3::hash(bytes).to_hex().to_string())
    }

    /// Its hex digits: also the name of the content's copy in the history.
    pub fn hex(&self) -> &str {
        match self {
            Digest::Blake3(hex) | Digest::Sha256(hex) => hex,
        }
    }

    /// Whether `bytes` have this digest, worked out by its own algorithm.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        match self {
            Digest::Blake3(hex) => blake3::hash(bytes).to_hex().as_str() == hex,
            Digest::Sha256(hex) => sha256_hex(bytes) == *hex,
        }
    }
}

impl State {
    /// Whether `now` (taken from the workspace, a file's content with it) is this state. A
    /// file recorded with another algorithm's digest is compared by that algorithm.
    pub fn holds(&self, now: &Snapshot) -> bool {
        match (self, &now.state, &now.content) {
            (
                State::File { mode, size, digest },
                State::File {
                    mode: m,
                    size: s,
                    digest: d,
                },
                Some(content),
            ) if std::mem::discriminant(digest) != std::mem::discriminant(d) => {
                mode == m && size == s && digest.matches(content)
            }
            _ => *self == now.state,
        }
    }

    /// In words, for messages: "a file of 12 bytes", "missing".
    pub fn describe(&self) -> String {
        match self {
            State::Absent => "missing".into(),
            State::File { size, .. } => format!("a file of {size} bytes"),
            State::Link { target } => {
                format!("a link to {}", String::from_utf8_lossy(target))
            }
            State::Dir { .. } => "a directory".into(),
        }
    }
}

/// One path's state as taken from the workspace, with a file's content.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub path: String,
    pub state: State,
    pub content: Option<Vec<u8>>,
}

impl Snapshot {
    /// A path that is not there.
    pub fn absent(path: &str) -> Snapshot {
        Snapshot {
            path: path.to_string(),
            state: State::Absent,
            content: None,
        }
    }

    /// A file about to be given `content` with `mode`, as it will be once written.
    pub fn file(path: &str, content: Vec<u8>, mode: u32) -> Snapshot {
        Snapshot {
            path: path.to_string(),
            state: State::File {
                mode: mode & 0o7777,
                size: content.len() as u64,
                digest: Digest::of(&content),
            },
            content: Some(content),
        }
    }

    /// The entry a target names, as it is now (a link is the link, never followed), under the
    /// path it really has (`Target::recorded_path`). A file over `limit` bytes cannot be kept
    /// (`file_too_large`).
    pub fn of_target(ws: &Workspace, target: &Target, limit: u64) -> Result<Snapshot> {
        let path = target.recorded_path(ws);
        let path = path.as_str();
        let Some(st) = target.stat()? else {
            return Ok(Snapshot::absent(path));
        };
        let state = match Kind::from_mode(st.st_mode) {
            Kind::File => {
                let existing = target.read_existing(ws, limit.min(u64::MAX - 1))?;
                return match existing {
                    Some(e) => match e.bytes {
                        Some(bytes) => Ok(Snapshot::file(path, bytes, e.mode)),
                        None => Err(Error::new(
                            ErrorKind::FileTooLarge,
                            format!(
                                "{path} ({} bytes) is larger than the undo history may keep \
                                 (undo.max_bytes = {limit}); nothing was changed",
                                e.size
                            ),
                        )),
                    },
                    None => Ok(Snapshot::absent(path)),
                };
            }
            Kind::Symlink => {
                let link = readlinkat(&target.dir, target.name.as_os_str())
                    .map_err(|e| crate::fs::jail::map_errno(e, path))?;
                State::Link {
                    target: link.as_bytes().to_vec(),
                }
            }
            Kind::Dir => State::Dir {
                mode: st.st_mode & 0o7777,
            },
            Kind::Other => {
                return Err(Error::new(
                    ErrorKind::NotAFile,
                    format!("{path} is a special file; its changes cannot be recorded for undo"),
                ))
            }
        };
        Ok(Snapshot {
            path: path.to_string(),
            state,
            content: None,
        })
    }

    /// The entry at a root-relative path as it is now; a path whose directory is gone is absent.
    pub fn at(ws: &Workspace, path: &str, limit: u64) -> Result<Snapshot> {
        match durable::locate(ws, path, false, None) {
            Ok(target) => Snapshot::of_target(ws, &target, limit),
            Err(e) if e.kind == ErrorKind::NotFound || e.kind == ErrorKind::NotADirectory => {
                Ok(Snapshot::absent(path))
            }
            Err(e) => Err(e),
        }
    }
}

/// One path of a change: what it was, and what the change left (None while pending).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathChange {
    pub path: String,
    pub before: State,
    pub after: Option<State>,
}

/// One change, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub change_id: String,
    pub tool: String,
    /// Seconds since the Unix epoch when the change began.
    pub time: u64,
    /// The change this one took back, for an undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    pub done: bool,
    pub paths: Vec<PathChange>,
}

/// The history of one workspace.
pub struct History {
    dir: PathBuf,
    max_bytes: u64,
    /// Bytes this process has written into the history, for the running count of its size
    /// ([`History::bound`]).
    written: std::cell::Cell<u64>,
}

/// Where a change stands in the undo history, as an edit's result says it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Undoable {
    /// The change's id in the undo history: `undo` takes it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
    /// Older changes forgotten to keep the undo history within undo.max_bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten_changes: Option<u64>,
    /// Why the change could not be recorded, so that it cannot be undone (the history's
    /// directory cannot be written, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_unavailable: Option<String>,
}

/// A change landed, and what the history made of it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub undo: Undoable,
    /// The directories the change made, outermost first.
    pub made: Vec<String>,
}

/// An entry written ahead of its change; completed by [`Pending::done`], removed when dropped
/// without it (the change failed and the workspace is as it was).
pub struct Pending<'h> {
    history: &'h History,
    entry: Entry,
    /// Held until the entry is settled, so that no other process settles it meanwhile.
    lock: Option<Flock<File>>,
}

const ENTRIES: &str = "entries";
/// Entries of running (or killed) edits, apart from the completed ones: opening the history
/// reads only these.
const PENDING: &str = "pending";
/// Contents kept with a flush each, up to this many a change (see [`History::keep_contents`]).
const FLUSH_EACH_UP_TO: usize = 8;
const BLOBS: &str = "blobs";
/// Contents a change left that nothing is restored from, kept unflushed only to show what
/// changed since when an undo meets a conflict (see [`History::shown_wanted`]).
const SHOWN: &str = "shown";

impl History {
    /// The history of this workspace, with the entries of killed edits settled; `max_bytes`
    /// is its bound (`undo.max_bytes`).
    pub fn open(ws: &Workspace, max_bytes: u64) -> Result<History> {
        History::open_in(&state_home()?, ws, max_bytes)
    }

    /// `open` with the state directory given (`$XDG_STATE_HOME` or its default).
    fn open_in(base: &Path, ws: &Workspace, max_bytes: u64) -> Result<History> {
        let dir = history_dir(base, ws);
        outside_workspace(&dir, ws)?;
        for sub in [ENTRIES, PENDING, BLOBS] {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir.join(sub))
                .map_err(|e| Error::io(format!("making the undo history {}", dir.display()), e))?;
        }
        let history = History {
            dir,
            max_bytes,
            written: std::cell::Cell::new(0),
        };
        history.settle_killed(ws);
        Ok(history)
    }

    /// Record the state of the paths a change is about to touch, before it touches them.
    /// `undoes`: the change this one takes back, for an undo.
    pub fn begin(
        &self,
        tool: &str,
        before: &[Snapshot],
        undoes: Option<&str>,
    ) -> Result<Pending<'_>> {
        self.keep_contents(before)?;
        let paths = before
            .iter()
            .map(|s| PathChange {
                path: s.path.clone(),
                before: s.state.clone(),
                after: None,
            })
            .collect();
        let mut flush = Flush::default();
        let pending = self.begin_unflushed(tool, paths, undoes, &mut flush)?;
        flush.run(|| Ok(()))?;
        Ok(pending)
    }

    /// The entry of [`History::begin`] written, its flush left to `flush` (which must run
    /// before the change touches the workspace).
    fn begin_unflushed(
        &self,
        tool: &str,
        paths: Vec<PathChange>,
        undoes: Option<&str>,
        flush: &mut Flush,
    ) -> Result<Pending<'_>> {
        let entry = Entry {
            change_id: new_change_id(),
            tool: tool.to_string(),
            time: now_secs(),
            undoes: undoes.map(str::to_string),
            done: false,
            paths,
        };
        let lock = self.write_entry(&entry, true, flush)?;
        Ok(Pending {
            history: self,
            entry,
            lock,
        })
    }

    /// An entry written ahead of its change with the state each path will be left in too
    /// (see [`History::rewrite`]), its flush left to `flush`: once the change has landed,
    /// [`Pending::landed`] completes it by a rename, with nothing more to write or flush. A
    /// crash that loses the rename leaves the entry pending, and the next tool settles it from
    /// the workspace as it settles any killed edit.
    /// `file`: made by [`History::create_entry`] for `change_id`.
    fn begin_whole(
        &self,
        (change_id, file): (String, File),
        tool: &str,
        paths: Vec<PathChange>,
        flush: &mut Flush,
    ) -> Result<Pending<'_>> {
        let mut entry = Entry {
            change_id,
            tool: tool.to_string(),
            time: now_secs(),
            undoes: None,
            done: true,
            paths,
        };
        let lock = self.fill_entry(file, &entry, true, flush)?;
        // Until it has landed, the entry is the running edit's (see `Drop for Pending`).
        entry.done = false;
        Ok(Pending {
            history: self,
            entry,
            lock,
        })
    }

    /// Every completed change, newest first.
    /// The newest completed changes, at most `n`, newest first: only their entries are read.
    pub fn newest(&self, n: usize) -> Result<Vec<Entry>> {
        Ok(self
            .entry_files()?
            .iter()
            .rev()
            .filter_map(|p| read_entry(p))
            .take(n)
            .collect())
    }

    /// The change named, or the newest.
    pub fn entry(&self, change_id: Option<&str>) -> Result<Entry> {
        let found = match change_id {
            None => self.newest(1)?.pop(),
            // An id names its file: only ids as the history makes them are looked up.
            Some(id) if id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
                read_entry(&self.entry_path(id)).filter(|e| e.change_id == id)
            }
            Some(_) => None,
        };
        found.ok_or_else(|| match change_id {
            None => Error::new(
                ErrorKind::NotFound,
                "there is no change to undo in this workspace",
            ),
            Some(id) => Error::new(
                ErrorKind::NotFound,
                format!(
                    "no change {id} in this workspace's history (forgotten, or never made); \
                     list them with {{\"list\": true}}"
                ),
            ),
        })
    }

    /// The content kept under a hash.
    pub fn content(&self, digest: &Digest) -> Result<Vec<u8>> {
        let name = digest.hex();
        let path = self.dir.join(BLOBS).join(name);
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|e| Error::io(format!("reading the undo history's copy {name}"), e))?;
        if !digest.matches(&bytes) {
            return Err(Error::new(
                ErrorKind::IoError,
                format!("the undo history's copy {name} is damaged; it cannot be restored"),
            ));
        }
        Ok(bytes)
    }

    /// The content a change left, to show what changed since: kept in `blobs/` (flushed,
    /// restorable) or `shown/` (see [`History::shown_wanted`]). None when neither has it whole.
    pub fn content_left(&self, digest: &Digest) -> Option<Vec<u8>> {
        self.content(digest).ok().or_else(|| {
            let bytes = fs::read(self.dir.join(SHOWN).join(digest.hex())).ok()?;
            digest.matches(&bytes).then_some(bytes)
        })
    }

    /// Where the content a rewrite left is kept (unless the history has it already), to show
    /// what changed since should an undo of it meet a conflict ([`write_shown`]). Unflushed,
    /// and apart from `blobs/`, whose contents are relied on to restore: a crash may lose or
    /// cut it short, and then the conflict is told without the diff. (A later change of the
    /// file keeps it in `blobs/`, from the file itself.)
    fn shown_wanted(&self, digest: &Digest, len: usize) -> Option<PathBuf> {
        let dir = self.dir.join(SHOWN);
        let kept = [self.dir.join(BLOBS), dir.clone()]
            .iter()
            .any(|d| kept_whole(&d.join(digest.hex()), len));
        (!kept).then_some(dir)
    }

    /// Keep a snapshot's content (once per hash), flushed before anything relies on it.
    fn keep_content(&self, snap: &Snapshot) -> Result<()> {
        self.keep_content_flushed(snap, true).map(|_| ())
    }

    /// Keep the contents of many snapshots. Past a few, each is written unflushed and the
    /// file system is flushed once at the end (`syncfs`): a command that wrote a thousand
    /// files would otherwise wait for a thousand flushes.
    fn keep_contents(&self, snaps: &[Snapshot]) -> Result<()> {
        let batch = snaps.len() > FLUSH_EACH_UP_TO;
        let mut wrote = false;
        for snap in snaps {
            wrote |= self.keep_content_flushed(snap, !batch)?;
        }
        if batch && wrote {
            let dir = File::open(self.dir.join(BLOBS))
                .map_err(|e| Error::io("flushing the undo history", e))?;
            nix::unistd::syncfs(&dir)
                .map_err(|e| Error::io("flushing the undo history", std::io::Error::from(e)))?;
        }
        Ok(())
    }

    /// Whether the content had to be written (it was not kept yet).
    fn keep_content_flushed(&self, snap: &Snapshot, flush: bool) -> Result<bool> {
        let (State::File { digest, .. }, Some(content)) = (&snap.state, &snap.content) else {
            return Ok(false);
        };
        let path = self.dir.join(BLOBS).join(digest.hex());
        if kept_whole(&path, content.len()) {
            return Ok(false);
        }
        write_file(&path, content, flush)
            .map_err(|e| Error::io(format!("keeping the old content of {}", snap.path), e))?;
        self.wrote(content.len());
        Ok(true)
    }

    /// Keep `content` (whose digest is `digest`) unflushed, its flush left to `flush`.
    fn keep_bytes(
        &self,
        digest: &Digest,
        content: &[u8],
        path: &str,
        flush: &mut Flush,
    ) -> Result<()> {
        let blob = self.dir.join(BLOBS).join(digest.hex());
        if kept_whole(&blob, content.len()) {
            return Ok(());
        }
        let file = write_unflushed(&blob, content)
            .map_err(|e| Error::io(format!("keeping the content of {path}"), e))?;
        self.wrote(content.len());
        flush.file(file);
        flush.dir(self.dir.join(BLOBS));
        Ok(())
    }

    /// Keep the file a rewrite replaces (`prior`, read as `content`, whose state is `state`)
    /// unflushed, its flush left to `flush`: the file itself, given a second name in the
    /// history, where that can be (see [`Target::link_as`]), else a copy. Returns the stamp
    /// the rewrite must expect of it when it was linked.
    fn keep_replaced(
        &self,
        target: &Target,
        prior: &Existing,
        content: &[u8],
        state: &State,
        flush: &mut Flush,
    ) -> Result<Option<durable::Stamp>> {
        let State::File { digest, .. } = state else {
            return Ok(None);
        };
        let blobs = self.dir.join(BLOBS);
        if kept_whole(&blobs.join(digest.hex()), content.len()) {
            return Ok(None);
        }
        let dir = File::open(&blobs).map_err(|e| Error::io("opening the undo history", e))?;
        match target.link_as(prior, dir.as_fd(), OsStr::new(digest.hex()))? {
            Some((file, stamp)) => {
                self.wrote(content.len());
                flush.linked(file);
                flush.dir(blobs);
                Ok(Some(stamp))
            }
            None => {
                self.keep_bytes(digest, content, &target.display, flush)?;
                Ok(None)
            }
        }
    }
}

/// A completed entry read from its file (None: unreadable, or not completed).
fn read_entry(path: &Path) -> Option<Entry> {
    let bytes = fs::read(path).ok()?;
    serde_json::from_slice::<Entry>(&bytes)
        .ok()
        .filter(|e| e.done)
}

/// The contents an entry refers to (by the names of their copies), before and after.
fn contents(entry: &Entry) -> impl Iterator<Item = &str> {
    entry
        .paths
        .iter()
        .flat_map(|p| std::iter::once(&p.before).chain(p.after.as_ref()))
        .filter_map(|s| match s {
            State::File { digest, .. } => Some(digest.hex()),
            _ => None,
        })
}

fn referenced(entries: &[Entry]) -> Vec<String> {
    let mut used: Vec<String> = entries
        .iter()
        .flat_map(contents)
        .map(str::to_string)
        .collect();
    used.sort();
    used.dedup();
    used
}

/// SHA-256, in hex: the digest of entries written before BLAKE3 ([`Digest`]), and the name of
/// each workspace's directory (kept, so that the histories already there are found).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new change's id: its start time (so ids sort by age) and the process.
fn new_change_id() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("c{micros:017}-{}-{n}", std::process::id())
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The size from which a rewrite's work goes on threads (the larger of its old and new
/// content): the hashes ([`hash_while`]), the flushes ([`Flush::run`]) and the copy shown in a
/// conflict. Below it a thread costs more than it saves.
const ON_THREADS_FROM: usize = 128 << 10;

/// Whether a rewrite of `old` by `new` is that large.
fn on_threads(old: Option<&[u8]>, new: &[u8]) -> bool {
    old.map_or(0, <[u8]>::len).max(new.len()) >= ON_THREADS_FROM
}

/// Record one change of the workspace around `apply`: the states of `targets` are kept before
/// it runs, and what it left after. `apply` makes the change and returns the directories it
/// made on the way (outermost first). When `apply` fails, nothing is recorded. When the history
/// cannot be opened at all, the change is still made, and the result says it cannot be undone:
/// refusing every edit over an unwritable state directory would only make people turn undo off.
pub fn record(
    ws: &Workspace,
    max_bytes: u64,
    tool: &str,
    targets: &[&Target],
    apply: impl FnOnce() -> Result<Vec<String>>,
) -> Result<Recorded> {
    let history = match History::open(ws, max_bytes) {
        Ok(history) => history,
        Err(e) => {
            let made = apply()?;
            return Ok(Recorded {
                undo: Undoable {
                    undo_unavailable: Some(e.message()),
                    ..Undoable::default()
                },
                made,
            });
        }
    };
    let take = || -> Result<Vec<Snapshot>> {
        targets
            .iter()
            .map(|t| Snapshot::of_target(ws, t, max_bytes))
            .collect()
    };
    let pending = history.begin(tool, &take()?, None)?;
    let made = apply()?;
    pending.done(ws, &made, &take()?)
}

/// [`record`] for a rewrite of one file with `content` (write_file), whose old content the
/// caller has read (`prior`; None for a new file): nothing is read again, both hashes come
/// from memory, the old file itself is kept where it can be (a second name for it in the
/// history, see [`Target::link_as`]) rather than copied, and the history's writes are flushed
/// together with the edit's own: its entry and the old content with the new content before the
/// rename, the completed entry with the directory after it. `made`: the directories made on
/// the way, kept once the file is in place.
pub fn record_write(
    ws: &Workspace,
    max_bytes: u64,
    tool: &str,
    target: &Target,
    prior: Option<&Existing>,
    content: &[u8],
    made: MadeDirs,
) -> Result<Recorded> {
    let old = match prior {
        None => None,
        Some(p) => match &p.bytes {
            Some(bytes) if p.size <= max_bytes && bytes.len() as u64 <= max_bytes => {
                Some((p, bytes.as_slice()))
            }
            // Not read (over max_file_size_bytes), or more than the history keeps: the general
            // way reads it, or says why it cannot be kept.
            _ => {
                return record(ws, max_bytes, tool, &[target], || {
                    target.replace_with(content, prior)?;
                    Ok(made.keep())
                })
            }
        },
    };
    let history = match History::open(ws, max_bytes) {
        Ok(history) => history,
        Err(e) => {
            target.replace_with(content, prior)?;
            return Ok(Recorded {
                undo: Undoable {
                    undo_unavailable: Some(e.message()),
                    ..Undoable::default()
                },
                made: made.keep(),
            });
        }
    };
    history.rewrite(ws, tool, target, old, content, made)
}

impl History {
    /// [`record_write`] once the history is open; `old`: the file replaced and its content.
    // Long: the order of a recorded write is its crash safety: the old file named in the
    // history, the entry whole before the edit, the edit, the copy a conflict shows written
    // while the flushes wait, the new name made durable; one function keeps that order and its
    // ways out (each of which removes the old file's name again) readable top to bottom.
    fn rewrite(
        &self,
        ws: &Workspace,
        tool: &str,
        target: &Target,
        old: Option<(&Existing, &[u8])>,
        content: &[u8],
        made: MadeDirs,
    ) -> Result<Recorded> {
        let prior = old.map(|(p, _)| p);
        let change_id = new_change_id();
        // The two hashes (the old content's names its copy in the history; both are in the
        // entry written before the edit) are worked out while the new content is written and
        // the entry's file is made.
        let large = on_threads(old.map(|(_, bytes)| bytes), content);
        let ((staged, entry_file), (old_digest, digest)) =
            hash_while(old.map(|(_, bytes)| bytes), content, || {
                let staged = target.stage(content, prior);
                let entry_file = self.create_entry(&change_id, true);
                (staged, entry_file)
            });
        let mut unfilled = Provisional(self.entry_temp(&change_id, true));
        let mut staged = staged?;
        let entry_file = (change_id, entry_file?);
        let mut ahead = Flush::new(large);
        // The old file when it was given a name in the history: until the rename has replaced
        // it, that name goes again on every way out.
        let mut linked = None;
        let mut replaced = None;
        let before = match (old, old_digest) {
            (Some((p, bytes)), Some(old_digest)) => {
                let state = State::File {
                    mode: p.mode,
                    size: bytes.len() as u64,
                    digest: old_digest,
                };
                replaced = Some((p, bytes, state.clone()));
                state
            }
            _ => {
                let snap = Snapshot::of_target(ws, target, self.max_bytes)?;
                if let (State::File { digest, .. }, Some(bytes)) = (&snap.state, &snap.content) {
                    self.keep_bytes(digest, bytes, &snap.path, &mut ahead)?;
                }
                snap.state
            }
        };
        let path = target.recorded_path(ws);
        let path = path.as_str();
        let after = State::File {
            mode: staged.mode()?,
            size: content.len() as u64,
            digest: digest.clone(),
        };
        // The entry is whole before the edit: what each path was and what it will be (the
        // directories made on the way are there already), so that nothing about it needs
        // writing or flushing once the file is in place.
        let mut paths = Vec::new();
        for dir in made.names() {
            // Its mode is what the kernel gave it under the umask: read back.
            paths.push(PathChange {
                after: Some(Snapshot::at(ws, &dir, 0)?.state),
                path: dir,
                before: State::Absent,
            });
        }
        paths.push(PathChange {
            path: path.to_string(),
            before,
            after: Some(after),
        });
        let pending = self.begin_whole(entry_file, tool, paths, &mut ahead)?;
        unfilled.0 = PathBuf::new();
        // The old file gets its name in the history only once the pending entry names it: an
        // edit killed in between leaves an entry the next tool settles, which takes that name
        // away again (`unlink_kept_files`), never a kept content that is the workspace's file.
        if let Some((p, bytes, state)) = replaced {
            if let Some(stamp) = self.keep_replaced(target, p, bytes, &state, &mut ahead)? {
                staged.expect(stamp);
                if let State::File { digest, .. } = &state {
                    linked = Some(Provisional(self.dir.join(BLOBS).join(digest.hex())));
                }
            }
        }
        // The copy a later conflict shows (see `shown_wanted`) is written while the flushes
        // wait for the disk.
        let shown = self.shown_wanted(&digest, content.len());
        let large_copy = content.len() >= ON_THREADS_FROM;
        let (flushed, shown) = std::thread::scope(|s| {
            // A thread only for a large copy; one that cannot start leaves it to this one.
            let copy = shown.as_deref().map(|dir| {
                let name = digest.hex();
                let thread = large_copy.then(|| {
                    std::thread::Builder::new()
                        .spawn_scoped(s, move || write_shown(dir, name, content))
                        .ok()
                });
                (dir, thread.flatten())
            });
            let flushed = ahead.run(|| {
                staged
                    .sync()
                    .map_err(|e| Error::io(format!("writing {path}"), e))
            });
            let shown = copy.map(|(dir, t)| match t {
                Some(t) => t.join().unwrap_or(false),
                None => write_shown(dir, digest.hex(), content),
            });
            (flushed, shown)
        });
        if shown == Some(true) {
            self.wrote(content.len());
        }
        flushed?;
        staged.publish()?;
        if let Some(linked) = linked.as_mut() {
            linked.0 = PathBuf::new();
        }
        let made = made.keep();
        // The new name must survive a crash too (as for a write without the history, a
        // failure there is not the edit's).
        let _ = nix::unistd::fsync(&target.dir);
        Ok(pending.landed(made))
    }
}

/// Keep the content a rewrite left in `dir` ([`History::shown_wanted`]); whether it was made.
fn write_shown(dir: &Path, name: &str, content: &[u8]) -> bool {
    let _ = fs::DirBuilder::new().mode(0o700).create(dir);
    write_file(&dir.join(name), content, false).is_ok()
}

/// The digests of `old` (when given) and of `new`, worked out on other threads while `work`
/// runs on this one, when they are large enough to be worth a thread each (on a busy machine
/// this costs no more than one after the other).
fn hash_while<'a, W>(
    old: Option<&'a [u8]>,
    new: &'a [u8],
    work: impl FnOnce() -> W,
) -> (W, (Option<Digest>, Digest)) {
    if !on_threads(old, new) {
        return (work(), (old.map(Digest::of), Digest::of(new)));
    }
    std::thread::scope(|s| {
        let old_hash = old.map(|b| (b, spawn_hash(s, b)));
        let new_hash = spawn_hash(s, new);
        let done = work();
        // A thread that could not start (or failed) leaves its hash to this one.
        let join = |t: Option<std::thread::ScopedJoinHandle<'_, Digest>>, bytes: &[u8]| {
            t.and_then(|t| t.join().ok())
                .unwrap_or_else(|| Digest::of(bytes))
        };
        let old = old_hash.map(|(b, t)| join(t, b));
        (done, (old, join(new_hash, new)))
    })
}

fn spawn_hash<'scope, 'a>(
    s: &'scope std::thread::Scope<'scope, 'a>,
    bytes: &'a [u8],
) -> Option<std::thread::ScopedJoinHandle<'scope, Digest>> {
    std::thread::Builder::new()
        .spawn_scoped(s, move || Digest::of(bytes))
        .ok()
}

/// A name in the history that goes again unless the rewrite gets far enough (emptied then):
/// the entry's file before it is filled, and the history's name for a file of the workspace
/// ([`Target::link_as`]) — a file that stays in the workspace (the rewrite failed) must not also
/// be a kept content, which a later change to it in place would alter.
struct Provisional(PathBuf);

impl Drop for Provisional {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn setup() -> (tempfile::TempDir, Workspace, u64) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ws");
        fs::create_dir(&root).expect("mkdir");
        let ws = Workspace::open_root(&root).expect("workspace");
        (dir, ws, 1 << 20)
    }

    /// A pending entry as a killed edit leaves it: written, and no longer locked.
    fn killed_edit(history: &History, path: &str, before: State) -> String {
        let entry = Entry {
            change_id: new_change_id(),
            tool: "write_file".into(),
            time: now_secs(),
            undoes: None,
            done: false,
            paths: vec![PathChange {
                path: path.into(),
                before,
                after: None,
            }],
        };
        // Written locked, and the lock let go: as a killed edit leaves it.
        let mut flush = Flush::default();
        drop(
            history
                .write_entry(&entry, true, &mut flush)
                .expect("write"),
        );
        flush.run(|| Ok(())).expect("flush");
        entry.change_id
    }

    #[test]
    fn a_killed_edit_is_settled_from_the_workspace() {
        let (dir, ws, max) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, max).expect("open");
        fs::write(ws.root().join("a.txt"), "old\n").expect("write");
        let old = Snapshot::at(&ws, "a.txt", 1 << 20).expect("snapshot");
        history.keep_content(&old).expect("keep");
        // Killed before the change landed: the workspace is as it was, the entry goes.
        let never = killed_edit(&history, "a.txt", old.state.clone());
        // Killed after it landed: the entry is completed from what the workspace holds.
        let landed = killed_edit(&history, "a.txt", State::Absent);
        let history = History::open_in(&state, &ws, max).expect("open again");
        let entries = history.newest(usize::MAX).expect("entries");
        assert!(entries.iter().all(|e| e.change_id != never), "{entries:?}");
        let settled = history.entry(Some(&landed)).expect("settled");
        assert!(settled.done);
        assert_eq!(settled.paths[0].after.as_ref(), Some(&old.state));
    }

    /// A rewrite of `name` to `new` through [`History::rewrite`], as write_file makes it.
    pub(super) fn rewrite(
        history: &History,
        ws: &Workspace,
        name: &str,
        new: &[u8],
    ) -> Result<Recorded> {
        let target = durable::locate(ws, name, true, None).expect("locate");
        let prior = target.read_existing(ws, 1 << 20).expect("read");
        let old = prior
            .as_ref()
            .map(|p| (p, p.bytes.as_deref().expect("bytes")));
        history.rewrite(ws, "write_file", &target, old, new, MadeDirs::default())
    }

    #[test]
    fn a_file_state_names_its_digest_and_older_sha256_entries_still_read_and_compare() {
        let state = State::File {
            mode: 0o644,
            size: 4,
            digest: Digest::of(b"two\n"),
        };
        let json = serde_json::to_value(&state).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"kind": "file", "mode": 0o644, "size": 4,
                               "blake3": blake3::hash(b"two\n").to_hex().as_str()})
        );
        assert_eq!(serde_json::from_value::<State>(json).expect("back"), state);
        // As entries were written before BLAKE3.
        let old: State = serde_json::from_value(serde_json::json!(
            {"kind": "file", "mode": 0o644, "size": 4, "sha256": sha256_hex(b"two\n")}
        ))
        .expect("an older entry's state");
        let State::File { digest, .. } = &old else {
            panic!("{old:?}")
        };
        assert_eq!(digest, &Digest::Sha256(sha256_hex(b"two\n")));
        assert!(digest.matches(b"two\n") && !digest.matches(b"two!"));
        // Compared with what the workspace holds now, whose digest is BLAKE3's.
        let now = |content: &[u8], mode: u32| Snapshot::file("a.txt", content.to_vec(), mode);
        assert!(old.holds(&now(b"two\n", 0o644)));
        assert!(!old.holds(&now(b"tw0\n", 0o644)));
        assert!(!old.holds(&now(b"two\n", 0o600)));
        assert!(state.holds(&now(b"two\n", 0o644)));
        assert!(!state.holds(&now(b"tw0\n", 0o644)));
        assert!(!old.holds(&Snapshot::absent("a.txt")));
        // Neither reads as the other, nor a state with none.
        for bad in [
            serde_json::json!({"kind": "file", "mode": 1, "size": 1}),
            serde_json::json!({"kind": "file", "mode": 1, "size": 1, "md5": "00"}),
        ] {
            assert!(
                serde_json::from_value::<State>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_history_inside_the_workspace_is_refused_wherever_its_path_says_it_is() {
        let (dir, ws, max) = setup();
        let root = ws.root().to_path_buf();
        let inside = |base: &Path| {
            History::open_in(base, &ws, max).err().map(|e| {
                assert_eq!(e.kind, ErrorKind::ConfigError, "{}", e.message());
                assert!(
                    e.message().contains("inside the workspace"),
                    "{}",
                    e.message()
                );
            })
        };
        // Plainly inside, and through a link from outside (XDG_STATE_HOME=~/state -> ws).
        assert!(inside(&root.join("state")).is_some());
        std::os::unix::fs::symlink(&root, dir.path().join("link")).expect("link");
        assert!(inside(&dir.path().join("link").join("state")).is_some());
        assert!(inside(&dir.path().join("gone/../link/x/state")).is_some());
        assert!(scratch_dir_in(&dir.path().join("link"), &ws).is_err());
        // Beside it, however written: its path starts with the workspace's but leaves it.
        assert!(inside(&root.join("../beside")).is_none());
        assert!(dir.path().join("beside/sneaky/undo").is_dir());
        // Nor one whose making would make a directory in the workspace on the way.
        assert!(inside(&root.join("not/made/../../../beside2")).is_some());
        // Nothing was made in the workspace on the way.
        assert_eq!(
            fs::read_dir(&root).expect("ws").count(),
            0,
            "{:?}",
            fs::read_dir(&root).expect("ws").collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_copy_kept_under_its_sha256_is_restored_and_checked_by_it() {
        let (dir, ws, max) = setup();
        let history = History::open_in(&dir.path().join("state"), &ws, max).expect("open");
        let old = Digest::Sha256(sha256_hex(b"kept before\n"));
        let blob = history.dir.join(BLOBS).join(old.hex());
        fs::write(&blob, b"kept before\n").expect("write");
        assert_eq!(history.content(&old).expect("content"), b"kept before\n");
        fs::write(&blob, b"kept bef0re\n").expect("damage");
        let e = history.content(&old).expect_err("damaged");
        assert!(e.message().contains("damaged"), "{}", e.message());
    }

    fn blob_of(state: &Path, content: &[u8]) -> PathBuf {
        let undo = state.join("sneaky").join("undo");
        let ws = fs::read_dir(&undo)
            .expect("undo")
            .flatten()
            .next()
            .expect("one");
        ws.path().join(BLOBS).join(Digest::of(content).hex())
    }

    #[test]
    fn a_rewrite_whose_completing_rename_is_lost_is_settled_as_landed() {
        let (dir, ws, max) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, max).expect("open");
        // Large enough that both hashes are worked out on threads.
        let old = vec![b'o'; 300 << 10];
        let new = vec![b'n'; 200 << 10];
        fs::write(ws.root().join("a.txt"), &old).expect("write");
        let id = rewrite(&history, &ws, "a.txt", &new)
            .expect("rewrite")
            .undo
            .change_id
            .expect("id");
        let whole = history.entry(Some(&id)).expect("entry");
        assert_eq!(
            whole.paths[0].before,
            State::File {
                mode: 0o644 & !umask(),
                size: old.len() as u64,
                digest: Digest::of(&old)
            }
        );
        // As a crash before the rename reached the disk leaves it: pending, unlocked.
        fs::rename(history.entry_path(&id), history.pending_path(&id)).expect("back");
        let history = History::open_in(&state, &ws, max).expect("open again");
        let settled = history.entry(Some(&id)).expect("settled");
        let states = |e: &Entry| -> Vec<(State, Option<State>)> {
            e.paths
                .iter()
                .map(|p| (p.before.clone(), p.after.clone()))
                .collect()
        };
        assert_eq!(states(&settled), states(&whole));
        assert!(history.pending_files().is_empty());
        assert_eq!(history.content(&Digest::of(&old)).expect("old"), old);
        // Nothing of the entry's own writing is left over.
        let names: Vec<_> = fs::read_dir(history.dir.join(ENTRIES))
            .expect("entries")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    fn umask() -> u32 {
        let mask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
        nix::sys::stat::umask(mask);
        mask.bits()
    }

    #[test]
    fn a_rewrite_keeps_the_old_file_itself_unless_it_has_other_names() {
        use std::os::unix::fs::MetadataExt;
        let (dir, ws, max) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, max).expect("open");
        let a = ws.root().join("a.txt");
        fs::write(&a, "old a\n").expect("write");
        let ino = fs::metadata(&a).expect("stat").ino();
        let done = rewrite(&history, &ws, "a.txt", b"new a\n").expect("rewrite");
        assert_eq!(fs::read(&a).expect("read"), b"new a\n");
        // The old file is the kept content: no copy was made.
        let kept = blob_of(&state, b"old a\n");
        assert_eq!(fs::metadata(&kept).expect("kept").ino(), ino);
        assert_eq!(fs::metadata(&kept).expect("kept").nlink(), 1);
        let id = done.undo.change_id.expect("id");
        let entry = history.entry(Some(&id)).expect("entry");
        assert_eq!(
            history.content(&Digest::of(b"old a\n")).expect("old"),
            b"old a\n"
        );
        assert!(matches!(
            &entry.paths[0].after,
            Some(State::File { size: 6, .. })
        ));
        assert!(history.pending_files().is_empty());

        // A file with another name is copied: that name could change it in place.
        let b = ws.root().join("b.txt");
        let other = dir.path().join("other-name");
        fs::write(&b, "old b\n").expect("write");
        fs::hard_link(&b, &other).expect("link");
        rewrite(&history, &ws, "b.txt", b"new b\n").expect("rewrite");
        let kept = blob_of(&state, b"old b\n");
        assert_ne!(
            fs::metadata(&kept).expect("kept").ino(),
            fs::metadata(&other).expect("other").ino()
        );
        assert_eq!(fs::read(&kept).expect("kept"), b"old b\n");
        assert_eq!(fs::read(&other).expect("other"), b"old b\n");
        assert_eq!(fs::read(&b).expect("read"), b"new b\n");

        // Changed by someone else after it was read: a conflict, and no name is left to it.
        let target = durable::locate(&ws, "a.txt", true, None).expect("locate");
        let prior = target
            .read_existing(&ws, 1 << 20)
            .expect("read")
            .expect("there");
        fs::write(&a, "theirs\n").expect("write");
        let bytes = prior.bytes.clone().expect("bytes");
        let err = history
            .rewrite(
                &ws,
                "write_file",
                &target,
                Some((&prior, &bytes)),
                b"ours\n",
                MadeDirs::default(),
            )
            .expect_err("conflict");
        assert_eq!(err.kind, ErrorKind::Conflict);
        assert_eq!(fs::read(&a).expect("read"), b"theirs\n");
        assert!(history.pending_files().is_empty());
    }

    #[test]
    fn a_rewrite_killed_before_its_rename_leaves_the_file_no_name_in_the_history() {
        use std::os::unix::fs::MetadataExt;
        let (dir, ws, max) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, max).expect("open");
        let a = ws.root().join("a.txt");
        fs::write(&a, "old\n").expect("write");
        // As a killed rewrite leaves it: the file linked into the history, its entry pending.
        let old = Snapshot::at(&ws, "a.txt", max).expect("snapshot");
        let State::File { digest, .. } = &old.state else {
            panic!("not a file")
        };
        let kept = history.dir.join(BLOBS).join(digest.hex());
        fs::hard_link(&a, &kept).expect("link");
        killed_edit(&history, "a.txt", old.state.clone());
        History::open_in(&state, &ws, max).expect("open again");
        assert!(
            !kept.exists(),
            "the workspace's file is still a kept content"
        );
        assert_eq!(fs::metadata(&a).expect("stat").nlink(), 1);
        assert!(history.pending_files().is_empty());
    }

    #[test]
    fn a_live_edit_is_left_alone_and_a_failed_one_leaves_nothing() {
        let (dir, ws, max) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, max).expect("open");
        let pending = history
            .begin("write_file", &[Snapshot::absent("x.txt")], None)
            .expect("begin");
        fs::write(ws.root().join("x.txt"), "new\n").expect("write");
        // Another process opening the history meanwhile does not settle it.
        History::open_in(&state, &ws, max).expect("open again");
        assert_eq!(history.pending_files().len(), 1);
        assert!(history.read_all().expect("read").is_empty());
        drop(pending);
        assert!(history.pending_files().is_empty());
        assert!(history.read_all().expect("read").is_empty());
    }
}
