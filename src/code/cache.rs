//! The parse cache: each parsed file's [`FileTags`] by its workspace path, so that a second
//! call over a large tree reads what the first one parsed instead of parsing again. An entry
//! holds either everything of the parse or only the definitions (`FileTags::part`, written in
//! the entry): outline parses for definitions alone and keeps those; a call that needs
//! everything takes such an entry for a miss, parses, and replaces it.
//!
//! It lives beside the undo history, outside the workspace, in
//! `$XDG_STATE_HOME/sneaky/parse/<workspace>/` (0700): `git status` never sees it, and
//! commands, which may only write the workspace, can neither read nor change it (the state
//! directory is out of their view). An entry is used only when the file is the one it was
//! made from, told by what no program can set back: device, inode, size and change time
//! (ctime is set by the kernel on every change of content or metadata; `touch -d` and
//! `utimensat` set the modification time, which is in the key too but never trusted alone),
//! and by the parse code, queries and grammars that made it. A file changed within [`SETTLE`]
//! of being read is parsed but not cached, since a second change in the same clock tick could
//! leave its change time as it was.
//!
//! The entries are kept in [`PACKS`] files, the packs; a directory's files all go to the one
//! its path hashes to. Creating a file is what a cold call pays for: a file per entry cost
//! 35-290 ms of system time for tokio's 573 files on this machine's ext4, more than all of
//! ctags -R, and a pack per directory still 0.6 ms each where the file system has no journal
//! and searches its inode bitmap past recently deleted inodes (`recently_deleted` in
//! `perf`): 150 ms of laravel's 239 directories. A call reads a pack at its first file there,
//! and writes the packs it added to once, at its end (`flush`), whole under a temporary name
//! and renamed, with the entries another call wrote there since it read the pack: two
//! calls that write one pack at the same moment keep the last one's, and the other's new
//! entries are misses next time. An entry (or a pack) that does not read back (damaged,
//! or from another version) is a miss. The entries of files since deleted stay in their pack.

use std::collections::HashMap;
use std::fs::{self, File, Metadata};
use std::io::{Read, Write};
use std::ops::Range;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::tags::{FileTags, Part};
use super::Lang;
use crate::fs::history;
use crate::fs::jail::Workspace;

/// How long after its last change a file's entry may be kept: longer than any file system's
/// timestamp granularity (FAT's is 2 s; ext4's and tmpfs's a clock tick).
pub const SETTLE: Duration = Duration::from_secs(3);

/// What makes the tags of one content: the parse code (its digest, from `build.rs`: every file
/// under `src/code`), the queries, the grammars, and the layout of an entry, named here. Part
/// of every entry's key, so that entries made by another version are misses.
const PARSER_VERSION: &str = concat!("sneaky-tags 11 ", env!("SNEAKY_PARSE_CODE"));

/// The first bytes of a pack; a new layout gets a new one.
const PACK_MAGIC: &[u8] = b"SNPK1";

/// How many packs a workspace's entries are spread over: a cold call over a whole tree
/// creates at most this many files, and a call on one file reads a sixteenth of the entries
/// (laravel's 1,691 files: 110 KB).
const PACKS: u8 = 16;

/// The grammar crates, as Cargo.lock has them (a test holds this to it).
pub const GRAMMARS: &str = "tree-sitter 0.26.13, tree-sitter-bash 0.25.1, tree-sitter-c 0.24.2, \
     tree-sitter-c-sharp 0.23.5, tree-sitter-cpp 0.23.4, tree-sitter-go 0.25.0, \
     tree-sitter-java 0.23.5, tree-sitter-javascript 0.25.0, tree-sitter-php 0.25.1, \
     tree-sitter-python 0.25.0, tree-sitter-ruby 0.23.1, tree-sitter-rust 0.24.2, \
     tree-sitter-typescript 0.23.2";

/// Which file, as it is now: from `fstat` of the handle the content was read through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    dev: u64,
    ino: u64,
    size: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
    lang: u8,
}

impl Key {
    pub fn of(meta: &Metadata, lang: Lang) -> Key {
        Key {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            lang: lang.id(),
        }
    }

    /// Whether the file last changed long enough before `now` for a later change to show in
    /// its change time.
    pub fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let ctime = Duration::new(
            u64::try_from(self.ctime.0).unwrap_or(0),
            u32::try_from(self.ctime.1).unwrap_or(0),
        );
        ctime + SETTLE < now
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 * 7 + 1);
        for n in [self.dev, self.ino, self.size] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for n in [self.ctime.0, self.ctime.1, self.mtime.0, self.mtime.1] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.push(self.lang);
        out
    }
}

/// One workspace's cache.
pub struct Cache {
    dir: PathBuf,
    /// The digest of the parser's version, its queries and grammars (see `PARSER_VERSION`).
    version: [u8; 32],
    /// The packs as read, by number, each at the first file that needs it: two threads read
    /// two packs at once.
    read: [OnceLock<Pack>; PACKS as usize],
    /// The entries this call made, by pack and path: written by `flush`.
    added: Mutex<HashMap<u8, HashMap<String, Vec<u8>>>>,
}

/// One pack as read: its bytes, and where each entry (its head, then the encoded tags) lies
/// in them, by path. An entry is decoded from there; nothing is copied.
#[derive(Default)]
struct Pack {
    bytes: Vec<u8>,
    entries: HashMap<String, Range<usize>>,
}

impl Pack {
    fn entries(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.entries
            .iter()
            .map(|(path, at)| (path.as_str(), &self.bytes[at.clone()]))
    }
}

impl Cache {
    /// The workspace's cache, made if needed; None when there is no place for it outside the
    /// workspace (no state directory, or one inside the workspace): the tools then parse
    /// every time.
    pub fn open(ws: &Workspace) -> Option<Cache> {
        let dir = history::state_home()
            .ok()?
            .join("sneaky")
            .join("parse")
            .join(history::workspace_key(ws.root()));
        history::outside_workspace(&dir, ws).ok()?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .ok()?;
        Some(Cache::at(dir))
    }

    fn at(dir: PathBuf) -> Cache {
        Cache {
            dir,
            version: version(),
            read: [const { OnceLock::new() }; PACKS as usize],
            added: Mutex::new(HashMap::new()),
        }
    }

    fn pack_path(&self, pack: u8) -> PathBuf {
        self.dir.join(format!("pack{pack:02}"))
    }

    fn added(&self) -> std::sync::MutexGuard<'_, HashMap<u8, HashMap<String, Vec<u8>>>> {
        self.added.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The tags kept for `path` when they were made from the file `key` names and hold what
    /// the call needs, with only the definitions `keep` passes if it is given
    /// (`FileTags::decode_for`).
    pub fn get(
        &self,
        path: &str,
        key: &Key,
        need: Part,
        keep: Option<&dyn Fn(&str) -> bool>,
    ) -> Option<FileTags> {
        let n = pack_of(path);
        let head = self.head(path, key);
        let decode =
            |entry: &[u8]| FileTags::decode_for(entry.strip_prefix(&head[..])?, need, keep);
        if let Some(entry) = self.added().get(&n).and_then(|p| p.get(path)) {
            return decode(entry);
        }
        let pack = self.read[usize::from(n)].get_or_init(|| self.read_pack(n));
        decode(&pack.bytes[pack.entries.get(path)?.clone()])
    }

    /// Keep `tags` for `path` as the file `key` names (its [`Part`] is in the entry: an
    /// entry of only the definitions is told from a whole one), written with its pack by
    /// `flush`. Tags of some definitions only (`Part::Focused`) are not kept.
    pub fn put(&self, path: &str, key: &Key, tags: &FileTags) {
        if tags.part == Part::Focused {
            return;
        }
        let mut bytes = self.head(path, key);
        bytes.extend_from_slice(&tags.encode());
        self.added()
            .entry(pack_of(path))
            .or_default()
            .insert(path.to_string(), bytes);
    }

    /// Write the packs added to. Best effort: a cache that cannot be written only costs a
    /// parse next time.
    pub fn flush(&self) {
        let added = std::mem::take(&mut *self.added());
        for (n, added) in added {
            // With the entries as the pack holds them now: another call may have written it
            // since this one read it (two calls on two folders whose packs are one). This
            // call's own win where both have one.
            let kept = self.read_pack(n);
            let mut bytes = PACK_MAGIC.to_vec();
            let others = kept
                .entries()
                .filter(|(path, _)| !added.contains_key(*path));
            for (_, entry) in added
                .iter()
                .map(|(p, e)| (p.as_str(), &e[..]))
                .chain(others)
            {
                bytes.extend_from_slice(&(entry.len() as u64).to_le_bytes());
                bytes.extend_from_slice(entry);
            }
            let file = self.pack_path(n);
            let temporary = file.with_extension(format!("tmp{}", std::process::id()));
            let written = fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&temporary)
                .and_then(|mut f| f.write_all(&bytes));
            if written.is_err() || fs::rename(&temporary, &file).is_err() {
                let _ = fs::remove_file(&temporary);
            }
        }
    }

    /// A pack as kept (empty when there is none, or it does not read back).
    fn read_pack(&self, n: u8) -> Pack {
        let mut pack = Pack::default();
        let read = File::open(self.pack_path(n)).and_then(|mut f| f.read_to_end(&mut pack.bytes));
        if read.is_err() || !pack.bytes.starts_with(PACK_MAGIC) {
            return Pack::default();
        }
        let mut at = PACK_MAGIC.len();
        while at < pack.bytes.len() {
            let Some(range) = pack.bytes[at..]
                .get(..8)
                .and_then(|n| <[u8; 8]>::try_from(n).ok())
                .and_then(|n| usize::try_from(u64::from_le_bytes(n)).ok())
                .and_then(|n| {
                    let start = at.checked_add(8)?;
                    let end = start.checked_add(n)?;
                    (end <= pack.bytes.len()).then_some(start..end)
                })
            else {
                return Pack::default();
            };
            at = range.end;
            // The entry's path, from its head (`head`); another version's is left out.
            let Some(path) = pack.bytes[range.clone()]
                .strip_prefix(self.version.as_slice())
                .and_then(|e| {
                    let n = usize::try_from(u64::from_le_bytes(e.get(..8)?.try_into().ok()?));
                    std::str::from_utf8(e.get(8..8usize.checked_add(n.ok()?)?)?).ok()
                })
            else {
                continue;
            };
            pack.entries.insert(path.to_string(), range);
        }
        pack
    }

    /// What an entry starts with: the version, the path (two paths never share an entry, even
    /// on a hash collision) and the file's key.
    fn head(&self, path: &str, key: &Key) -> Vec<u8> {
        let mut head = Vec::with_capacity(32 + path.len() + 80);
        head.extend_from_slice(&self.version);
        head.extend_from_slice(&(path.len() as u64).to_le_bytes());
        head.extend_from_slice(path.as_bytes());
        head.extend_from_slice(&key.bytes());
        head
    }
}

/// The pack of a (workspace-relative) path: its directory's, so that a call on one folder
/// reads few packs.
fn pack_of(path: &str) -> u8 {
    let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    blake3::hash(dir.as_bytes()).as_bytes()[0] % PACKS
}

fn version() -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(PARSER_VERSION.as_bytes());
    hasher.update(GRAMMARS.as_bytes());
    for lang in Lang::ALL {
        hasher.update(lang.tags_query().as_bytes());
    }
    *hasher.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_list_is_cargo_locks() {
        let lock = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"),
        )
        .unwrap();
        let mut locked = Vec::new();
        let mut name = None;
        for line in lock.lines() {
            if let Some(n) = line.strip_prefix("name = ") {
                name = Some(n.trim_matches('"').to_string());
            } else if let Some(v) = line.strip_prefix("version = ") {
                if let Some(n) = name
                    .take()
                    .filter(|n| n.starts_with("tree-sitter") && n != "tree-sitter-language")
                {
                    locked.push(format!("{n} {}", v.trim_matches('"')));
                }
            }
        }
        locked.sort();
        assert_eq!(GRAMMARS, locked.join(", "), "update cache::GRAMMARS");
    }

    /// Two calls that each add an entry to one pack, one after the other: the second keeps
    /// the first's.
    #[test]
    fn a_pack_keeps_the_entries_another_call_wrote_since_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = || Cache::at(dir.path().to_path_buf());
        let file = dir.path().join("a.rs");
        std::fs::write(&file, "fn a() {}").unwrap();
        let key = Key::of(&std::fs::metadata(&file).unwrap(), Lang::Rust);
        let tags = FileTags::empty(Lang::Rust, Part::Defs);
        let (one, two) = (cache(), cache());
        let get = |cache: &Cache, path| cache.get(path, &key, Part::Defs, None);
        assert!(get(&one, "src/a.rs").is_none());
        assert!(get(&two, "src/b.rs").is_none());
        one.put("src/a.rs", &key, &tags);
        two.put("src/b.rs", &key, &tags);
        one.flush();
        two.flush();
        let three = cache();
        assert_eq!(get(&three, "src/a.rs"), Some(tags.clone()));
        assert_eq!(get(&three, "src/b.rs"), Some(tags));
    }

    #[test]
    fn a_recent_change_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        std::fs::write(&path, "fn a() {}").unwrap();
        let key = Key::of(&std::fs::metadata(&path).unwrap(), Lang::Rust);
        let now = SystemTime::now();
        assert!(!key.settled(now));
        assert!(key.settled(now + SETTLE + Duration::from_secs(1)));
    }
}
