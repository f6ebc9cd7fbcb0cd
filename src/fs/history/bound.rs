//! The history's bound (`undo.max_bytes`): a running count of its size, counted again from
//! the files now and then, and past the bound the oldest changes forgotten and the contents no
//! change refers to dropped.

use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use nix::fcntl::{Flock, FlockArg};

use super::{contents, referenced, Entry, History, BLOBS, ENTRIES, PENDING, SHOWN};

/// The history's size as last counted and added to, and how many changes since the last full
/// count (see [`History::bound`]).
const USAGE: &str = "usage";
/// Changes between two full counts of the history's size, which set right whatever the running
/// count missed (a process killed between its writes and its count).
const RECOUNT_EVERY: u64 = 500;
/// A temporary file in the history older than this was left by a killed process.
const TEMPORARY_FOR_AT_MOST: std::time::Duration = std::time::Duration::from_secs(3600);

impl History {
    /// Count `bytes` written into the history.
    pub(super) fn wrote(&self, bytes: usize) {
        self.written.set(self.written.get() + bytes as u64);
    }

    /// Forget the oldest changes while the history is over its bound, then drop the contents
    /// no change refers to. Returns how many changes were forgotten.
    ///
    /// The history's size is kept as a running count (`usage`: what was counted last, plus what
    /// each change since wrote), so that a change does not look at every file of a history of
    /// thousands of changes. The files are counted again when the running count passes the
    /// bound, every [`RECOUNT_EVERY`] changes, and when the count is missing or unreadable.
    pub(super) fn bound(&self) -> u64 {
        use std::io::{Seek, SeekFrom};
        let written = self.written.replace(0);
        let usage = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(self.dir.join(USAGE))
            .ok()
            .and_then(|f| Flock::lock(f, FlockArg::LockExclusive).ok());
        let Some(mut usage) = usage else {
            return self.recount().0;
        };
        let mut text = String::new();
        let counted = usage
            .read_to_string(&mut text)
            .ok()
            .and_then(|_| text.split_once(' '))
            .and_then(|(size, changes)| {
                Some((
                    size.parse::<u64>().ok()?,
                    changes.trim().parse::<u64>().ok()?,
                ))
            });
        let (size, changes, forgotten) = match counted {
            Some((size, changes))
                if size.saturating_add(written) <= self.max_bytes
                    && changes + 1 < RECOUNT_EVERY =>
            {
                (size + written, changes + 1, 0)
            }
            _ => {
                let (forgotten, size) = self.recount();
                (size, 0, forgotten)
            }
        };
        // Always as long (zeros ahead), so that it is written over in place: emptying the
        // file first freed its block and the write took a new one, at every change.
        let line = format!("{size:020} {changes:020}\n");
        let _ = usage
            .seek(SeekFrom::Start(0))
            .and_then(|_| usage.write_all(line.as_bytes()))
            .and_then(|_| match text.len() > line.len() {
                true => usage.set_len(line.len() as u64),
                false => Ok(()),
            });
        forgotten
    }

    /// The bytes the history's contents and entries take, file by file.
    pub(super) fn on_disk(&self) -> u64 {
        [BLOBS, SHOWN, ENTRIES, PENDING]
            .iter()
            .map(|sub| {
                fs::read_dir(self.dir.join(sub))
                    .map(|dir| {
                        dir.filter_map(|e| e.ok()?.metadata().ok())
                            .map(|m| m.len())
                            .sum::<u64>()
                    })
                    .unwrap_or(0)
            })
            .sum()
    }

    /// [`History::bound`] from the files themselves. Past the bound, the oldest changes are
    /// forgotten down to nine tenths of it, so that the changes right after do not each count
    /// again. Returns how many changes were forgotten, and the size the history is left with.
    // Long: counting the history's size by content (a copy shared by entries counted once) and
    // forgetting the oldest changes share the maps built from every entry.
    fn recount(&self) -> (u64, u64) {
        use std::collections::HashMap;
        let size = self.on_disk();
        if size <= self.max_bytes {
            return (0, size);
        }
        let Ok(mut entries) = self.read_all() else {
            return (0, size);
        };
        let file_size = |path: PathBuf| fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let mut uses: HashMap<&str, u64> = HashMap::new();
        for name in entries.iter().flat_map(contents) {
            *uses.entry(name).or_default() += 1;
        }
        // A content shown that is kept to restore too is dropped below: counted once.
        let sizes: HashMap<&str, u64> = uses
            .keys()
            .map(|s| {
                let kept = Some(file_size(self.dir.join(BLOBS).join(s)))
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| file_size(self.dir.join(SHOWN).join(s)));
                (*s, kept)
            })
            .collect();
        let entry_sizes: Vec<u64> = entries
            .iter()
            .map(|e| file_size(self.entry_path(&e.change_id)))
            .collect();
        let mut total: u64 = sizes.values().sum::<u64>() + entry_sizes.iter().sum::<u64>();
        let low = self.max_bytes - self.max_bytes / 10;
        let mut forgotten = 0;
        while total > low && forgotten < entries.len() {
            // The newest change goes only when it alone is past the bound.
            if forgotten + 1 == entries.len() && total <= self.max_bytes {
                break;
            }
            let gone = &entries[forgotten];
            let _ = fs::remove_file(self.entry_path(&gone.change_id));
            total = total.saturating_sub(entry_sizes[forgotten]);
            for name in contents(gone) {
                let left = uses.get_mut(name).map(|n| {
                    *n -= 1;
                    *n
                });
                if left == Some(0) {
                    total = total.saturating_sub(sizes.get(name).copied().unwrap_or(0));
                }
            }
            forgotten += 1;
        }
        drop(uses);
        drop(sizes);
        entries.drain(..forgotten);
        let forgotten = forgotten as u64;
        // The contents of running edits' entries (pending) are theirs: kept too.
        let running: Vec<Entry> = self
            .pending_files()
            .iter()
            .filter_map(|p| fs::read(p).ok())
            .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
            .collect();
        entries.extend(running);
        let used = referenced(&entries);
        for sub in [BLOBS, SHOWN, ENTRIES, PENDING] {
            let Ok(kept) = fs::read_dir(self.dir.join(sub)) else {
                continue;
            };
            for file in kept.flatten() {
                let name = file.file_name();
                let name = name.to_string_lossy();
                let gone = if name.ends_with(".tmp") {
                    // A live writer's, unless it is old: then a killed one's.
                    file.metadata()
                        .is_ok_and(|m| crate::fs::older_than(&m, TEMPORARY_FOR_AT_MOST))
                } else if sub == BLOBS || sub == SHOWN {
                    // A content shown is dropped too once it is kept to restore.
                    used.binary_search_by(|u| u.as_str().cmp(&name)).is_err()
                        || (sub == SHOWN && self.dir.join(BLOBS).join(&*name).exists())
                } else {
                    false
                };
                if gone {
                    let _ = fs::remove_file(file.path());
                }
            }
        }
        (forgotten, self.on_disk())
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::time::SystemTime;

    use super::*;
    use crate::fs::history::tests::{rewrite, setup};

    #[test]
    fn the_running_count_of_the_size_is_set_right_by_a_full_count() {
        let (dir, ws, _) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, 10_000).expect("open");
        for i in 0..4 {
            let content = format!("{i}").repeat(1500);
            rewrite(&history, &ws, "a.txt", content.as_bytes()).expect("rewrite");
        }
        assert!(history.on_disk() <= 10_000);
        let kept = history.newest(usize::MAX).expect("entries").len();
        // A count that missed what was written (as a process killed between writing and
        // counting leaves it): trusted until the next full count, which forgets what it must.
        fs::write(
            history.dir.join(USAGE),
            format!("0 {}\n", RECOUNT_EVERY - 3),
        )
        .expect("usage");
        for i in 4..8 {
            let content = format!("{i}").repeat(1500);
            rewrite(&history, &ws, "a.txt", content.as_bytes()).expect("rewrite");
        }
        assert!(history.on_disk() <= 10_000, "{}", history.on_disk());
        assert!(history.newest(usize::MAX).expect("entries").len() <= kept + 1);
        let usage = fs::read_to_string(history.dir.join(USAGE)).expect("usage");
        assert_eq!(usage.len(), 42, "{usage:?}");
        let counted: u64 = usage
            .split(' ')
            .next()
            .expect("size")
            .parse()
            .expect("number");
        assert_eq!(counted, history.on_disk(), "{usage}");
        // One longer than the count (damaged) is counted again and cut to it.
        fs::write(history.dir.join(USAGE), "x".repeat(100)).expect("usage");
        rewrite(&history, &ws, "a.txt", b"again").expect("rewrite");
        let usage = fs::read_to_string(history.dir.join(USAGE)).expect("usage");
        assert_eq!(usage, format!("{:020} {:020}\n", history.on_disk(), 0));
    }

    #[test]
    fn temporary_files_of_killed_writers_go_when_the_history_is_trimmed() {
        let (dir, ws, _) = setup();
        let state = dir.path().join("state");
        let history = History::open_in(&state, &ws, 4_000).expect("open");
        let two_hours_ago = SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
        let left = |sub: &str, name: &str, old: bool| {
            let path = history.dir.join(sub).join(name);
            let file = File::create(&path).expect("create");
            if old {
                file.set_modified(two_hours_ago).expect("mtime");
            }
            path
        };
        let old_blob = left(BLOBS, "ab.1.tmp", true);
        let old_entry = left(PENDING, "c1-1-0.pending.tmp", true);
        let live = left(BLOBS, "cd.2.tmp", false);
        for i in 0..4 {
            let content = format!("{i}").repeat(1500);
            rewrite(&history, &ws, "a.txt", content.as_bytes()).expect("rewrite");
        }
        assert!(!old_blob.exists() && !old_entry.exists());
        assert!(live.exists());
    }
}
