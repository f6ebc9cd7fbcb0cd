//! The journal: each change's entry in the history, written ahead of the change (pending,
//! locked while its edit runs) and completed after it, or removed when the edit failed; and the
//! entries of killed edits settled from what the workspace holds (see the module above).

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use nix::fcntl::{Flock, FlockArg};

use super::flush::Flush;
use super::{
    Entry, History, PathChange, Pending, Recorded, Snapshot, State, Undoable, BLOBS, ENTRIES,
    PENDING,
};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable;
use crate::fs::jail::Workspace;

impl History {
    /// A completed entry: `<id>.json`.
    pub(super) fn entry_path(&self, change_id: &str) -> PathBuf {
        self.dir.join(ENTRIES).join(format!("{change_id}.json"))
    }

    /// An entry whose edit is running, or was killed: `pending/<id>.pending`. Apart from the
    /// completed ones, so that settling and listing read only what they need.
    pub(super) fn pending_path(&self, change_id: &str) -> PathBuf {
        self.dir.join(PENDING).join(format!("{change_id}.pending"))
    }

    /// The pending entries' files.
    pub(super) fn pending_files(&self) -> Vec<PathBuf> {
        fs::read_dir(self.dir.join(PENDING))
            .map(|dir| {
                dir.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension() == Some(OsStr::new("pending")))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Write an entry whole (temporary name, rename), its flush (the file and the directory)
    /// left to `flush`. A pending entry is written locked and the lock handed back.
    pub(super) fn write_entry(
        &self,
        entry: &Entry,
        pending: bool,
        flush: &mut Flush,
    ) -> Result<Option<Flock<File>>> {
        let file = self.create_entry(&entry.change_id, pending)?;
        self.fill_entry(file, entry, pending, flush)
    }

    /// The file an entry is written into, under its temporary name (see [`History::write_entry`]).
    pub(super) fn create_entry(&self, change_id: &str, pending: bool) -> Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(self.entry_temp(change_id, pending))
            .map_err(|e| Error::io("writing the undo history", e))
    }

    pub(super) fn entry_temp(&self, change_id: &str, pending: bool) -> PathBuf {
        let mut temp = if pending {
            self.pending_path(change_id)
        } else {
            self.entry_path(change_id)
        }
        .into_os_string();
        temp.push(".tmp");
        PathBuf::from(temp)
    }

    /// [`History::write_entry`] into the file [`History::create_entry`] made.
    pub(super) fn fill_entry(
        &self,
        mut file: File,
        entry: &Entry,
        pending: bool,
        flush: &mut Flush,
    ) -> Result<Option<Flock<File>>> {
        let io = |e| Error::io("writing the undo history", e);
        let text = serde_json::to_vec(entry)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("writing an entry: {e}")))?;
        file.write_all(&text).map_err(io)?;
        let lock = if pending {
            let kept = file.try_clone().map_err(io)?;
            let locked = Flock::lock(kept, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
                Error::new(ErrorKind::IoError, format!("locking an undo entry: {e}"))
            })?;
            Some(locked)
        } else {
            None
        };
        let path = if pending {
            self.pending_path(&entry.change_id)
        } else {
            self.entry_path(&entry.change_id)
        };
        fs::rename(self.entry_temp(&entry.change_id, pending), &path).map_err(io)?;
        self.wrote(text.len());
        flush.file(file);
        flush.dir(self.dir.join(if pending { PENDING } else { ENTRIES }));
        Ok(lock)
    }

    /// Every entry on disk, oldest first (ids sort by time). Unreadable ones are skipped.
    pub(super) fn read_all(&self) -> Result<Vec<Entry>> {
        Ok(self
            .entry_files()?
            .iter()
            .filter_map(|p| {
                let bytes = fs::read(p).ok()?;
                serde_json::from_slice(&bytes).ok()
            })
            .collect())
    }

    /// The completed entries' files, oldest first (ids sort by time).
    pub(super) fn entry_files(&self) -> Result<Vec<PathBuf>> {
        let mut names: Vec<PathBuf> = fs::read_dir(self.dir.join(ENTRIES))
            .map_err(|e| Error::io("reading the undo history", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension() == Some(OsStr::new("json")))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Settle the pending entries of edits that were killed (their lock is free): the
    /// workspace as it was means the edit never landed; otherwise it did, and what the
    /// workspace holds is what it left.
    pub(super) fn settle_killed(&self, ws: &Workspace) {
        for path in self.pending_files() {
            let Ok(file) = File::open(&path) else {
                continue;
            };
            let Ok(_lock) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
                continue; // a live edit
            };
            let Some(mut entry) = fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
            else {
                // Cut short by a crash before it was flushed: its change never began, since
                // a change waits for its entry's flush.
                let _ = fs::remove_file(&path);
                continue;
            };
            // Killed after its completed entry was written: only the pending one is left over.
            // (A completed entry a crash cut short is written again below.)
            let completed = fs::read(self.entry_path(&entry.change_id))
                .ok()
                .is_some_and(|b| serde_json::from_slice::<Entry>(&b).is_ok());
            if completed {
                let _ = fs::remove_file(&path);
                continue;
            }
            let now: Vec<Snapshot> = match entry
                .paths
                .iter()
                .map(|p| Snapshot::at(ws, &p.path, self.max_bytes))
                .collect::<Result<_>>()
            {
                Ok(now) => now,
                Err(_) => continue,
            };
            let unchanged = entry.paths.iter().zip(&now).all(|(p, s)| p.before.holds(s));
            if unchanged {
                self.unlink_kept_files(ws, &entry);
            } else {
                if now.iter().try_for_each(|s| self.keep_content(s)).is_err() {
                    continue;
                }
                for (p, s) in entry.paths.iter_mut().zip(now) {
                    p.after = Some(s.state);
                }
                entry.done = true;
                let mut flush = Flush::default();
                if self.write_entry(&entry, false, &mut flush).is_err()
                    || flush.run(|| Ok(())).is_err()
                {
                    continue;
                }
            }
            let _ = fs::remove_file(&path);
        }
    }

    /// For a change that never landed: a kept content that is the workspace's file itself (a
    /// rewrite killed between giving the old file a name here and replacing it) loses that
    /// name, so that a later change of the file in place cannot alter it.
    fn unlink_kept_files(&self, ws: &Workspace, entry: &Entry) {
        use std::os::unix::fs::MetadataExt;
        for p in &entry.paths {
            let State::File { digest, .. } = &p.before else {
                continue;
            };
            let blob = self.dir.join(BLOBS).join(digest.hex());
            let Ok(kept) = fs::symlink_metadata(&blob) else {
                continue;
            };
            let Ok(target) = durable::locate(ws, &p.path, false, None) else {
                continue;
            };
            let same = target
                .stat()
                .ok()
                .flatten()
                .is_some_and(|st| st.st_dev == kept.dev() && st.st_ino == kept.ino());
            if same {
                let _ = fs::remove_file(&blob);
            }
        }
    }
}

impl Pending<'_> {
    /// The change landed: record what it left. `made` are the directories it made on the way
    /// (outermost first), which an undo removes again.
    pub fn done(self, ws: &Workspace, made: &[String], after: &[Snapshot]) -> Result<Recorded> {
        self.history.keep_contents(after)?;
        let after: Vec<(&str, State)> = after
            .iter()
            .map(|s| (s.path.as_str(), s.state.clone()))
            .collect();
        self.finish(ws, made, &after, Flush::default(), || Ok(()))
    }

    /// [`Pending::done`] with the contents kept already: the completed entry is written, and
    /// flushed with the rest of `flush`, after `first` (a flush of the caller's).
    pub(super) fn finish(
        mut self,
        ws: &Workspace,
        made: &[String],
        after: &[(&str, State)],
        mut flush: Flush,
        first: impl FnOnce() -> Result<()>,
    ) -> Result<Recorded> {
        let mut paths = Vec::with_capacity(made.len() + self.entry.paths.len());
        for dir in made {
            // Its mode is what the kernel gave it under the umask: read back.
            paths.push(PathChange {
                path: dir.clone(),
                before: State::Absent,
                after: Some(Snapshot::at(ws, dir, 0)?.state),
            });
        }
        for p in &mut self.entry.paths {
            if let Some((_, state)) = after.iter().find(|(path, _)| *path == p.path) {
                p.after = Some(state.clone());
            }
        }
        self.entry.paths.retain(|p| p.after.is_some());
        paths.append(&mut self.entry.paths);
        self.entry.paths = paths;
        self.entry.done = true;
        self.history.write_entry(&self.entry, false, &mut flush)?;
        flush.run(first)?;
        let _ = fs::remove_file(self.history.pending_path(&self.entry.change_id));
        self.lock = None;
        let forgotten = self.history.bound();
        Ok(Recorded {
            undo: Undoable {
                change_id: Some(self.entry.change_id.clone()),
                forgotten_changes: Some(forgotten).filter(|n| *n > 0),
                undo_unavailable: None,
            },
            made: made.to_vec(),
        })
    }

    pub fn change_id(&self) -> &str {
        &self.entry.change_id
    }

    /// The change of an entry written whole ([`History::begin_whole`]) landed: the entry is
    /// completed by its rename. Whatever happens to the rename, the change has landed and is
    /// recorded: a pending entry left behind is settled by the next tool.
    pub(super) fn landed(mut self, made: Vec<String>) -> Recorded {
        self.entry.done = true;
        let id = self.entry.change_id.clone();
        let _ = fs::rename(self.history.pending_path(&id), self.history.entry_path(&id));
        self.lock = None;
        let forgotten = self.history.bound();
        Recorded {
            undo: Undoable {
                change_id: Some(id),
                forgotten_changes: Some(forgotten).filter(|n| *n > 0),
                undo_unavailable: None,
            },
            made,
        }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.entry.done {
            let _ = fs::remove_file(self.history.pending_path(&self.entry.change_id));
        }
    }
}
