//! The upper layer read into the paths that changed: whiteouts, opaque directories, a
//! directory replaced by a file and back, links, modes, each compared with what the workspace
//! holds.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use crate::fs::transition::{Content, To};

/// One changed path found in the upper layer.
pub(super) struct Found {
    pub(super) path: String,
    pub(super) to: To,
}

/// Read the upper layer into the paths that changed, parents before their children.
pub(super) fn scan(root: &Path, upper: &Path) -> Vec<Found> {
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
                && crate::shell::sys::lgetxattr(&up, "user.overlay.opaque").as_deref()
                    == Some(b"y");
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

/// Every path beneath a directory of the workspace that goes (or becomes something else),
/// deepest last, as deletions.
pub(super) fn expand_removed(root: &Path, dir: &str, out: &mut Vec<Found>) {
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
