//! The upper layer read into the paths that changed: whiteouts, opaque directories, a
//! directory replaced by a file and back, links, modes, each compared with what the workspace
//! holds.
//!
//! What is kept is what git keeps: regular files with plain permission bits, directories,
//! symbolic links as links. A set-user-id, set-group-id or sticky bit the command set is taken
//! off (a directory keeps the set-group-id bit the workspace gives it by inheritance, and the
//! bits it had already), its extended attributes are not carried (file capabilities
//! included), and a FIFO, a socket or a device node it made is not applied; each is named in
//! the result ([`Reduced`]). The workspace is read through directory handles opened one name at
//! a time without following links: a link swapped in by a running job is not looked through.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{openat, readlinkat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, FileStat, Mode, SFlag};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fs::jail::{Kind, Workspace};
use crate::fs::transition::{Content, To};

/// Something of a command's changes that was applied reduced, or not at all: what is applied
/// is what git keeps (regular files with plain permission bits, directories, links).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Reduced {
    /// Root-relative.
    pub path: String,
    /// What was taken off or left out: "setuid bit removed", "setgid bit removed", "sticky
    /// bit removed", "extended attribute NAME removed" (the file is applied without them), or
    /// "FIFO not applied", "socket not applied", "device node not applied", "name not UTF-8:
    /// not applied".
    pub what: String,
}

impl Reduced {
    pub(super) fn new(path: &str, what: &str) -> Reduced {
        Reduced {
            path: path.to_string(),
            what: what.to_string(),
        }
    }
}

/// One changed path found in the upper layer.
pub(super) struct Found {
    pub(super) path: String,
    pub(super) to: To,
}

/// What the upper layer holds: the changes, and what of them was reduced or left out.
#[derive(Default)]
pub(super) struct Scanned {
    pub(super) found: Vec<Found>,
    pub(super) reduced: Vec<Reduced>,
    /// The upper layer's files of several names (inode numbers) one of which the workspace
    /// holds as a file: a name the command gave a workspace file by a hard link (overlayfs
    /// copies the file up first, and every name carries its origin), whose first name is
    /// still there.
    pub(super) linked_present: std::collections::HashSet<u64>,
}

const SET_BITS: [(u32, &str); 3] = [
    (0o4000, "setuid bit removed"),
    (0o2000, "setgid bit removed"),
    (0o1000, "sticky bit removed"),
];

/// Read the upper layer into the paths that changed, parents before their children.
/// `placeholders`: the names of the protected paths' placeholders it holds in its root
/// (`Scratch::place`), which are not the command's; held changes taken up again do not know
/// theirs, and take every socket in the root that names a protected path for one (a command
/// cannot make a socket there: the placeholder was bound read-only over it).
pub(super) fn scan(ws: &Workspace, upper: &Path, placeholders: &[PathBuf]) -> Scanned {
    let mut out = Scanned::default();
    let lower = ws.open_dir_no_links(Path::new(".")).ok();
    let root_mode = lower
        .as_ref()
        .and_then(|d| nix::sys::stat::fstat(d.as_fd()).ok())
        .map_or(0, |st| st.st_mode);
    let mut placed: Vec<&OsStr> = placeholders.iter().filter_map(|p| p.file_name()).collect();
    let held: Vec<OsString> = fs::read_dir(upper)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_socket()))
        .map(|e| e.file_name())
        .filter(|n| ws.protected_list().covering(&ws.root().join(n)).is_some())
        .collect();
    placed.extend(held.iter().map(OsString::as_os_str));
    let at = Level {
        upper,
        rel: "",
        lower: lower.as_ref(),
        dir_mode: root_mode,
        placed: &placed,
    };
    scan_dir(&at, &mut out);
    out
}

pub(super) fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

/// One directory of the upper layer being read.
struct Level<'a> {
    upper: &'a Path,
    /// Root-relative ("" for the root).
    rel: &'a str,
    /// The workspace's directory at `rel`, when it holds a real one (else nothing below it is
    /// looked up there).
    lower: Option<&'a OwnedFd>,
    /// The mode the directory will have in the workspace (its set-group-id bit is inherited).
    dir_mode: u32,
    /// The placeholders' names (in the root only).
    placed: &'a [&'a OsStr],
}

fn scan_dir(at: &Level<'_>, out: &mut Scanned) {
    let Ok(entries) = fs::read_dir(at.upper.join(at.rel)) else {
        return;
    };
    let mut names: Vec<OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let Some(text) = name.to_str() else {
            // Results name paths as text: a name that is not UTF-8 cannot be shown or kept.
            out.reduced.push(Reduced::new(
                &join(at.rel, &name.to_string_lossy()),
                "name not UTF-8: not applied",
            ));
            continue;
        };
        let path = join(at.rel, text);
        let up = at.upper.join(&path);
        let Ok(meta) = fs::symlink_metadata(&up) else {
            continue;
        };
        let lower = at
            .lower
            .and_then(|d| fstatat(d, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW).ok());
        let ft = meta.file_type();
        if ft.is_char_device() && meta.rdev() == 0 {
            // A whiteout: deleted.
            if lower.is_some() {
                out.found.push(Found {
                    path,
                    to: To::Absent,
                });
            }
        } else if ft.is_dir() {
            scan_subdir(at, &name, path, &meta, lower, out);
        } else if ft.is_symlink() {
            let Ok(target) = fs::read_link(&up) else {
                continue;
            };
            let target = target.into_os_string().into_vec();
            let same = lower.is_some_and(|m| Kind::from_mode(m.st_mode) == Kind::Symlink)
                && at
                    .lower
                    .and_then(|d| readlinkat(d, name.as_os_str()).ok())
                    .is_some_and(|t| t.into_vec() == target);
            if !same {
                out.found.push(Found {
                    path,
                    to: To::Link { target },
                });
            }
        } else if ft.is_file() {
            scan_file(at, &name, path, &meta, lower, out);
        } else if ft.is_socket() && at.rel.is_empty() && at.placed.contains(&name.as_os_str()) {
            // A protected path's placeholder (`Scratch::place`), not the command's.
        } else {
            let what = if ft.is_fifo() {
                "FIFO not applied"
            } else if ft.is_socket() {
                "socket not applied"
            } else {
                "device node not applied"
            };
            out.reduced.push(Reduced::new(&path, what));
        }
    }
}

/// A regular file of the upper layer: a change unless the workspace holds the same (its
/// mode as it will be applied, its content).
fn scan_file(
    at: &Level<'_>,
    name: &OsStr,
    path: String,
    meta: &fs::Metadata,
    lower: Option<FileStat>,
    out: &mut Scanned,
) {
    let up = at.upper.join(&path);
    let mode = meta.mode() & 0o7777;
    let kept = mode & 0o777;
    reduce_bits(&path, mode, kept, out);
    reduce_xattrs(&path, &up, out);
    if meta.nlink() > 1 && lower.is_some_and(|m| Kind::from_mode(m.st_mode) == Kind::File) {
        out.linked_present.insert(meta.ino());
    }
    let same = lower.is_some_and(|m| {
        Kind::from_mode(m.st_mode) == Kind::File
            && m.st_mode & 0o7777 == kept
            && u64::try_from(m.st_size).ok() == Some(meta.len())
            && at.lower.is_some_and(|d| same_content(d, name, &up))
    });
    if !same {
        out.found.push(Found {
            path,
            to: To::File {
                mode: kept,
                content: Content::File(up),
            },
        });
    }
}

/// A directory of the upper layer: a change when it is new, replaces something else, has
/// another mode, or is opaque (the command removed what the workspace's held); then what it
/// holds.
fn scan_subdir(
    at: &Level<'_>,
    name: &OsStr,
    path: String,
    meta: &fs::Metadata,
    lower: Option<FileStat>,
    out: &mut Scanned,
) {
    let up = at.upper.join(&path);
    let mode = meta.mode() & 0o7777;
    let was_dir = lower.is_some_and(|m| Kind::from_mode(m.st_mode) == Kind::Dir);
    // Kept of the special bits: those the workspace's directory had already, and the
    // set-group-id bit its parent hands down.
    let had = lower.filter(|_| was_dir).map_or(0, |m| m.st_mode & 0o7000);
    let inherited = at.dir_mode & 0o2000;
    let kept = mode & (0o777 | had | inherited);
    reduce_bits(&path, mode, kept, out);
    let opaque = was_dir
        && crate::shell::sys::lgetxattr(&up, "user.overlay.opaque").as_deref() == Some(b"y");
    let same_mode = lower.is_some_and(|m| m.st_mode & 0o7777 == kept);
    if !was_dir || !same_mode || opaque {
        out.found.push(Found {
            path: path.clone(),
            to: To::Dir { mode: kept },
        });
    }
    let below = match at.lower {
        Some(d) if was_dir => open_subdir(d, name),
        _ => None,
    };
    if opaque {
        // What the lower directory held and the upper does not was removed.
        let mut gone: Vec<String> = below
            .as_ref()
            .map(names_in)
            .unwrap_or_default()
            .into_iter()
            .filter(|n| fs::symlink_metadata(up.join(n)).is_err())
            .collect();
        gone.sort();
        for n in gone {
            out.found.push(Found {
                path: join(&path, &n),
                to: To::Absent,
            });
        }
    }
    let next = Level {
        upper: at.upper,
        rel: &path,
        lower: below.as_ref(),
        dir_mode: kept,
        placed: at.placed,
    };
    scan_dir(&next, out);
}

/// The special bits of `mode` that `kept` leaves out, each named.
fn reduce_bits(path: &str, mode: u32, kept: u32, out: &mut Scanned) {
    for (bit, what) in SET_BITS {
        if mode & bit != 0 && kept & bit == 0 {
            out.reduced.push(Reduced::new(path, what));
        }
    }
}

/// The extended attributes of an upper-layer file that are not overlayfs's own (nor the
/// security label the system gives every file): not carried into the workspace.
fn reduce_xattrs(path: &str, up: &Path, out: &mut Scanned) {
    for name in foreign_xattrs(up) {
        out.reduced.push(Reduced::new(
            path,
            &format!(
                "extended attribute {} removed",
                String::from_utf8_lossy(&name)
            ),
        ));
    }
}

/// The extended attributes of `path` a file applied to the workspace must not carry: all but
/// the system's security label (`security.selinux`), which the kernel gives it there anyway.
/// overlayfs's own (`user.overlay.*`, `trusted.overlay.*`) are among them, not reported.
pub(super) fn strippable_xattrs(path: &Path) -> Vec<Vec<u8>> {
    let mut names = crate::shell::sys::llistxattr(path).unwrap_or_default();
    names.retain(|n| n.as_slice() != b"security.selinux");
    names
}

fn foreign_xattrs(path: &Path) -> Vec<Vec<u8>> {
    let mut names = strippable_xattrs(path);
    names.retain(|n| !n.starts_with(b"user.overlay.") && !n.starts_with(b"trusted.overlay."));
    names
}

/// The child directory `name` of `dir`, a real directory (a link is not followed).
fn open_subdir(dir: &OwnedFd, name: &OsStr) -> Option<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(dir, name, flags, Mode::empty()).ok()
}

/// The UTF-8 names a directory holds.
fn names_in(dir: &OwnedFd) -> Vec<String> {
    let Ok(own) = dir.try_clone() else {
        return Vec::new();
    };
    let Ok(mut d) = nix::dir::Dir::from_fd(own) else {
        return Vec::new();
    };
    d.iter()
        .flatten()
        .filter_map(|e| {
            std::str::from_utf8(e.file_name().to_bytes())
                .ok()
                .map(str::to_string)
        })
        .filter(|n| n != "." && n != "..")
        .collect()
}

/// Whether the workspace's file `name` in `dir` (not followed if a link) holds what `up` holds.
fn same_content(dir: &OwnedFd, name: &OsStr, up: &Path) -> bool {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let (Ok(a), Ok(mut b)) = (openat(dir, name, flags, Mode::empty()), fs::File::open(up)) else {
        return false;
    };
    let mut a = fs::File::from(a);
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let Ok(n) = read_full(&mut a, &mut x) else {
            return false;
        };
        let Ok(m) = read_full(&mut b, &mut y) else {
            return false;
        };
        if n != m || x[..n] != y[..m] {
            return false;
        }
        if n == 0 {
            return true;
        }
    }
}

/// Read until `buf` is full or the file ends.
fn read_full(f: &mut fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Every path beneath a directory of the workspace that goes (or becomes something else),
/// deepest last, as deletions. Read without following links: a directory swapped for a link
/// meanwhile lists nothing here (and fails the change when it is applied).
pub(super) fn expand_removed(ws: &Workspace, dir: &str, out: &mut Vec<Found>) {
    if let Ok(fd) = ws.open_dir_no_links(Path::new(dir)) {
        expand_in(&fd, dir, out);
    }
}

fn expand_in(fd: &OwnedFd, dir: &str, out: &mut Vec<Found>) {
    let mut names = names_in(fd);
    names.sort();
    for n in names {
        let path = join(dir, &n);
        let is_dir = fstatat(fd, n.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
            .is_ok_and(|st| st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFDIR.bits());
        out.push(Found {
            path: path.clone(),
            to: To::Absent,
        });
        if is_dir {
            if let Some(sub) = open_subdir(fd, OsStr::new(&n)) {
                expand_in(&sub, &path, out);
            }
        }
    }
}
