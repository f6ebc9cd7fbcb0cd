//! Where a path really is (`std::fs::canonicalize`), remembered for the length of one step
//! that asks it of many paths sharing their directories: building a command's sandbox asks it
//! of every PATH directory, every program found there and every protected place, and the C
//! library's `realpath` reads every component of each again (about 450 `readlink` calls a
//! command, most of them for `/usr`, `/root`, `/tmp`). Inside [`remembered`], a path is its
//! directory's real path (remembered) and its own name, when one `lstat` says that name is
//! not a link; a link is resolved whole as before. Outside it, this is `canonicalize`.

use foldhash::{HashMap, HashMapExt};
use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};

/// Keyed by the path's bytes: hashing a `Path` takes it apart into components, which cost a
/// third of the exec set's instructions; a path spelled two ways is then resolved twice, to
/// the same answer. Hashed with foldhash rather than SipHash: the exec set hashes about a
/// thousand names (here and in its listings of PATH), which took 236K of its 1.32M
/// instructions; its seed is still random per process, and the memory lasts one step.
type Memo = HashMap<std::ffi::OsString, Result<PathBuf, std::io::ErrorKind>>;

thread_local! {
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
    /// Links being followed, one inside another.
    static HOPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Run `step` with real paths remembered on this thread until it returns (a step inside
/// another shares the outer one's memory). What the file system does meanwhile is not seen:
/// only for a step that reads the paths of one moment (a sandbox's spec).
pub fn remembered<T>(step: impl FnOnce() -> T) -> T {
    let outer = MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let outer = m.is_some();
        if !outer {
            *m = Some(HashMap::new());
        }
        outer
    });
    let out = step();
    if !outer {
        MEMO.with(|m| *m.borrow_mut() = None);
    }
    out
}

/// `std::fs::canonicalize(p)`, remembered inside [`remembered`].
pub fn path(p: impl AsRef<Path>) -> std::io::Result<PathBuf> {
    let p = p.as_ref();
    let active = MEMO.with(|m| m.borrow().is_some());
    if !active {
        return std::fs::canonicalize(p);
    }
    if let Some(known) = MEMO.with(|m| {
        m.borrow()
            .as_ref()
            .and_then(|m| m.get(p.as_os_str()).cloned())
    }) {
        return known.map_err(std::io::Error::from);
    }
    let found = resolve(p);
    MEMO.with(|m| {
        if let Some(m) = m.borrow_mut().as_mut() {
            m.insert(
                p.as_os_str().to_owned(),
                found.as_ref().cloned().map_err(|e| e.kind()),
            );
        }
    });
    found
}

fn resolve(p: &Path) -> std::io::Result<PathBuf> {
    let (Some(parent), Some(Component::Normal(name))) = (p.parent(), p.components().next_back())
    else {
        return std::fs::canonicalize(p);
    };
    if !p.is_absolute() || parent.as_os_str().is_empty() || !plain(p) {
        return std::fs::canonicalize(p);
    }
    let dir = path(parent)?;
    let meta = std::fs::symlink_metadata(p)?;
    if !meta.file_type().is_symlink() {
        return Ok(dir.join(name));
    }
    // A link: its target taken from the real directory it is in, component by component
    // (`..` is the real directory's parent: that directory holds no link), each again
    // through the memory; a chain longer than the kernel follows is left to canonicalize.
    let hops = HOPS.with(|h| {
        h.set(h.get() + 1);
        h.get()
    });
    let out = if hops > crate::fs::MAX_LINK_HOPS {
        std::fs::canonicalize(p)
    } else {
        follow(&dir, &std::fs::read_link(p)?)
    };
    HOPS.with(|h| h.set(h.get() - 1));
    out
}

/// `target` of a link in the real directory `dir`, resolved.
fn follow(dir: &Path, target: &Path) -> std::io::Result<PathBuf> {
    let mut at = dir.to_path_buf();
    for c in target.components() {
        match c {
            Component::RootDir => at = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => at = path(at.join(name))?,
            Component::Prefix(_) => return std::fs::canonicalize(dir.join(target)),
        }
    }
    Ok(at)
}

/// Written as its components say: no `.` or `..`, no doubled or trailing `/` (which
/// `Path::parent` reads past, while the kernel resolves them: `dir/link/.` is the directory
/// the link leads to).
fn plain(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    !b.ends_with(b"/")
        && !b.ends_with(b"/.")
        && !b.windows(2).any(|w| w == b"//")
        && !b.windows(3).any(|w| w == b"/./")
        && !p.components().any(|c| c == Component::ParentDir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_paths_are_what_canonicalize_says() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path();
        std::fs::create_dir_all(base.join("a/b")).expect("mkdir");
        std::fs::write(base.join("a/b/f"), "x").expect("write");
        std::os::unix::fs::symlink("a/b", base.join("l")).expect("link");
        std::os::unix::fs::symlink("../a/b/f", base.join("a/fl")).expect("link");
        std::os::unix::fs::symlink("gone", base.join("dangling")).expect("link");
        std::os::unix::fs::symlink("loop2", base.join("loop1")).expect("link");
        std::os::unix::fs::symlink("./loop1", base.join("loop2")).expect("link");
        std::os::unix::fs::symlink("../l/..", base.join("a/up")).expect("link");
        let cases = [
            base.join("a/b/f"),
            base.join("l/f"),
            base.join("a/fl"),
            base.join("a/b/../b/f"),
            base.join("a/./b"),
            base.join("l/."),
            base.join("a//b/f"),
            base.join("dangling"),
            base.join("loop1"),
            base.join("a/up"),
            base.join("a/up/a/fl"),
            base.join("missing/f"),
            base.join("a/b/f/under-a-file"),
            PathBuf::from("/"),
            PathBuf::from("relative/path"),
        ];
        let plain: Vec<_> = cases
            .iter()
            .map(|p| std::fs::canonicalize(p).map_err(|e| e.kind()))
            .collect();
        // Twice inside one step: the second time from memory.
        let kept = remembered(|| {
            let first: Vec<_> = cases
                .iter()
                .map(|p| path(p).map_err(|e| e.kind()))
                .collect();
            let second: Vec<_> = cases
                .iter()
                .map(|p| path(p).map_err(|e| e.kind()))
                .collect();
            assert_eq!(first, second);
            first
        });
        assert_eq!(kept, plain);
        // Outside a step nothing is remembered: a change is seen at once.
        std::fs::remove_file(base.join("a/b/f")).expect("rm");
        assert!(path(base.join("a/b/f")).is_err());
    }
}
