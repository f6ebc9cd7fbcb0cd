//! Writing the history's files whole (a temporary name, then a rename) and flushing them: each
//! at once, or gathered ([`Flush`]) and flushed before anything relies on them, together on
//! threads for large writes.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Write a file whole under its final name: temporary name, `fsync` (with `flush`), rename,
/// `fsync` of the directory (with `flush`).
pub(super) fn write_file(path: &Path, content: &[u8], flush: bool) -> std::io::Result<()> {
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(content)?;
    if flush {
        file.sync_all()?;
    }
    fs::rename(&temp, path)?;
    match path.parent() {
        Some(dir) if flush => sync_dir(dir),
        _ => Ok(()),
    }
}

/// Write a file whole under its final name (temporary name, rename), unflushed; the file is
/// handed back to be flushed.
pub(super) fn write_unflushed(path: &Path, content: &[u8]) -> std::io::Result<File> {
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(content)?;
    fs::rename(&temp, path)?;
    Ok(file)
}

/// Whether a content of `len` bytes is kept at `path` already. One of another size was cut
/// short by a crash before its flush, and is written again.
pub(super) fn kept_whole(path: &Path, len: usize) -> bool {
    fs::metadata(path).is_ok_and(|m| m.len() == len as u64)
}

pub(super) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// One flush of [`Flush::run`].
#[derive(Clone, Copy)]
pub(super) enum Flushed<'a> {
    File(&'a File),
    Dir(&'a Path),
}

impl Flushed<'_> {
    pub(super) fn flush(self) -> std::io::Result<()> {
        match self {
            Flushed::File(file) => file.sync_all(),
            Flushed::Dir(dir) => sync_dir(dir),
        }
    }
}

/// The history's writes made without a flush, flushed before anything relies on them. With
/// `together` (large writes), all the flushes wait for the disk at once, each on a thread:
/// flushes in flight together share the device's cache flushes (the block layer serves every
/// flush waiting with the next one it sends) and their write-backs overlap. On this machine's
/// disk, where each flush of a file or directory is a flush of the device's cache, one after
/// the other they made a 1 MB write_file take 60-80 % longer than without the history under
/// load. For small writes the threads cost more CPU than they save time (about +0.5 ms of CPU
/// for a write of a few bytes), and the flushes go one after the other.
#[derive(Default)]
pub(super) struct Flush {
    files: Vec<File>,
    /// Files of the workspace given a name in the history: flushed, but not dropped from the
    /// cache (their pages were not written here, and dropping them costs more than it saves).
    linked: Vec<File>,
    dirs: Vec<PathBuf>,
    together: bool,
}

impl Flush {
    /// Nothing to flush yet; `together`: the flushes wait for the disk at once, on threads.
    pub(super) fn new(together: bool) -> Flush {
        Flush {
            together,
            ..Flush::default()
        }
    }

    pub(super) fn file(&mut self, file: File) {
        self.files.push(file);
    }

    pub(super) fn linked(&mut self, file: File) {
        self.linked.push(file);
    }

    pub(super) fn dir(&mut self, dir: PathBuf) {
        if !self.dirs.contains(&dir) {
            self.dirs.push(dir);
        }
    }

    /// Flush `first` (the caller's own, on this thread) and everything written, together.
    pub(super) fn run(self, first: impl FnOnce() -> Result<()>) -> Result<()> {
        use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
        for file in &self.files {
            // Starts the write-back (and drops the pages from the cache once written: the
            // history is seldom read again). Only a hint: the flush below is what counts.
            let _ = posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
        }
        let io = |e| Error::io("flushing the undo history", e);
        let files = self.files.iter().chain(&self.linked).map(Flushed::File);
        let jobs: Vec<Flushed> = files
            .chain(self.dirs.iter().map(|d| Flushed::Dir(d)))
            .collect();
        if !self.together {
            first()?;
            return jobs.iter().try_for_each(|job| job.flush()).map_err(io);
        }
        std::thread::scope(|s| {
            let mut threads = Vec::new();
            let mut inline = Vec::new();
            for &job in &jobs {
                match std::thread::Builder::new().spawn_scoped(s, move || job.flush()) {
                    Ok(t) => threads.push(t),
                    // A thread that cannot start leaves its flush to this one.
                    Err(_) => inline.push(job),
                }
            }
            let mut result = first();
            for job in inline {
                result = result.and(job.flush().map_err(io));
            }
            for t in threads {
                let done = t
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("a flush's thread failed")));
                result = result.and(done.map_err(io));
            }
            result
        })
    }
}
