//! Shared machinery of the walking tools (grep_files, find_files): where a walk starts, the
//! gitignore-aware parallel walker configured as ripgrep and fd configure it, and a bounded,
//! deterministic collection of results.
//!
//! The walker (`ignore`) reports plain paths beneath the root's canonical path. It does not
//! follow links, so it does not leave the root through one; and whatever it reports is only
//! a name: every file is then opened, or checked, through the jail's handle before anything of
//! it is read or returned, so a directory swapped for a link mid-walk yields nothing.

use std::collections::BinaryHeap;
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::sync::Mutex;

use ignore::WalkBuilder;
use nix::fcntl::OFlag;
use nix::sys::stat::{fstat, Mode};

use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{map_errno, Kind, RelPath, Workspace};

/// Where a walk starts: the real path of the place the user named, checked through the jail.
pub struct Start {
    pub path: PathBuf,
    pub kind: Kind,
}

pub fn start(ws: &Workspace, rel: &RelPath) -> Result<Start> {
    let fd = ws.open(rel, OFlag::O_PATH, Mode::empty())?;
    let st = fstat(fd.as_fd()).map_err(|e| map_errno(e, rel.display()))?;
    let kind = Kind::from_mode(st.st_mode);
    // The real location of what the handle refers to (no `..`, no links in between).
    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .map_err(|e| Error::io(rel.display(), e))?;
    if ws.strip_root(&real).is_none() {
        return Err(Error::new(
            ErrorKind::OutsideWorkspace,
            format!("{} is outside the workspace root", rel.display()),
        ));
    }
    Ok(Start { path: real, kind })
}

/// A walker with the default filters of ripgrep and fd: hidden files and gitignored paths
/// skipped, links not followed; `custom_ignore` is the tool's own ignore file name.
pub fn builder(start: &Start, custom_ignore: &str) -> WalkBuilder {
    let mut b = WalkBuilder::new(&start.path);
    b.standard_filters(true)
        .follow_links(false)
        .add_custom_ignore_filename(custom_ignore)
        .threads(threads());
    b
}

pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().min(12))
        .unwrap_or(1)
}

/// Root-relative display form of a path a walker found, or None when it is not beneath the root.
pub fn display(ws: &Workspace, found: &std::path::Path) -> Option<String> {
    let rel = ws.strip_root(found)?;
    Some(rel.to_string_lossy().into_owned())
}

/// Keeps the `cap` smallest items seen (in their `Ord`), counting all of them: memory stays
/// bounded and the kept set does not depend on the order threads deliver items in.
pub struct TopN<T: Ord> {
    cap: usize,
    inner: Mutex<(BinaryHeap<T>, u64)>,
}

impl<T: Ord> TopN<T> {
    pub fn new(cap: usize) -> TopN<T> {
        TopN {
            cap,
            inner: Mutex::new((BinaryHeap::new(), 0)),
        }
    }

    pub fn extend(&self, items: impl IntoIterator<Item = T>) {
        let Ok(mut guard) = self.inner.lock() else {
            return;
        };
        let (heap, total) = &mut *guard;
        for item in items {
            *total += 1;
            if heap.len() >= self.cap {
                match heap.peek() {
                    Some(top) if item < *top => {
                        heap.pop();
                    }
                    _ => continue,
                }
            }
            heap.push(item);
        }
    }

    /// The kept items in order, and whether any were dropped.
    pub fn finish(self) -> (Vec<T>, bool) {
        let (heap, total) = self
            .inner
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let kept = heap.into_sorted_vec();
        let truncated = total > kept.len() as u64;
        (kept, truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_n_keeps_the_smallest_whatever_the_order() {
        let t = TopN::new(3);
        t.extend([9, 1, 7]);
        t.extend([3, 8, 2]);
        let (kept, truncated) = t.finish();
        assert_eq!(kept, vec![1, 2, 3]);
        assert!(truncated);
        let t = TopN::new(5);
        t.extend([2, 1]);
        assert_eq!(t.finish(), (vec![1, 2], false));
    }
}
