//! The changes applied straight, unrecorded: the paths git ignores (build outputs) and a
//! nested repository's git data. First what goes (deepest first), then what comes (parents
//! first); a new file is moved in from the upper layer (renamed where it shares the
//! workspace's file system, so that a build's outputs are not copied), as git would keep it:
//! its plain permission bits, no extended attribute.
//!
//! Each path is reached and checked as every change is (src/fs/durable/landing.rs: no link
//! followed on the way, checked where it lands), and acted on with `*at` calls on the directory
//! handle that check was made on. `rule` says, for each step, what of git's own directories
//! it may land in.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{renameat, OFlag};
use nix::sys::stat::{fchmodat, mkdirat, FchmodatFlags, Mode};
use nix::unistd::{symlinkat, unlinkat, UnlinkatFlags};

use super::scan::strippable_xattrs;
use crate::error::{Error, Result};
use crate::fs::durable::{locate_no_links, Git, Target};
use crate::fs::history::{Snapshot, State};
use crate::fs::jail::{map_errno, Workspace};
use crate::fs::transition::{Content, Step, To};

/// What goes, deepest first.
pub(super) fn remove<'a>(
    ws: &Workspace,
    steps: &[Step],
    now: &[Snapshot],
    rule: impl Fn(&Step) -> Git<'a>,
) -> Result<()> {
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
        let t = locate_no_links(ws, &s.path, rule(s))?;
        let flag = if matches!(n.state, State::Dir { .. }) {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        match unlinkat(&t.dir, t.name.as_os_str(), flag) {
            Ok(()) | Err(Errno::ENOENT) => {}
            Err(e) => return Err(map_errno(e, &s.path)),
        }
    }
    Ok(())
}

/// What comes, parents first.
pub(super) fn add<'a>(
    ws: &Workspace,
    steps: &[Step],
    now: &[Snapshot],
    rule: impl Fn(&Step) -> Git<'a>,
) -> Result<()> {
    for (s, n) in steps.iter().zip(now) {
        if matches!(s.to, To::Absent) {
            continue;
        }
        let t = locate_no_links(ws, &s.path, rule(s))?;
        match &s.to {
            To::Absent => {}
            To::Dir { mode } => {
                let bits = Mode::from_bits_truncate(*mode);
                if !matches!(n.state, State::Dir { .. }) {
                    mkdirat(&t.dir, t.name.as_os_str(), bits).map_err(|e| map_errno(e, &s.path))?;
                }
                // A link swapped in since the check is refused, never followed.
                fchmodat(
                    &t.dir,
                    t.name.as_os_str(),
                    bits,
                    FchmodatFlags::NoFollowSymlink,
                )
                .map_err(|e| map_errno(e, &s.path))?;
            }
            To::Link { target } => {
                symlinkat(OsStr::from_bytes(target), &t.dir, t.name.as_os_str())
                    .map_err(|e| map_errno(e, &s.path))?;
            }
            To::File { mode, content } => match content {
                Content::File(from) => move_in(from, *mode, &t),
                Content::Bytes(bytes) => write_new(&t, *mode, &mut bytes.as_slice()),
            }
            .map_err(|e| Error::io(format!("moving {} in place", s.path), e))?,
        }
    }
    Ok(())
}

/// Take every extended attribute the workspace's copy must not carry off the upper layer's
/// file `path` (see `scan::strippable_xattrs`); whether none is left.
pub(super) fn strip_xattrs(path: &Path) -> bool {
    let names = strippable_xattrs(path);
    names
        .iter()
        .all(|n| crate::shell::sys::lremovexattr(path, n).is_ok())
        && strippable_xattrs(path).is_empty()
}

/// Move a file of the upper layer (its extended attributes taken off already) to the target
/// with the permission bits `mode`: renamed, or where that cannot be (across file systems, or
/// a file whose mode its owner's process may not change), copied into a fresh file beside the
/// target and renamed over it.
fn move_in(from: &Path, mode: u32, t: &Target) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (from.parent(), from.file_name()) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    if fs::set_permissions(from, fs::Permissions::from_mode(mode)).is_ok() {
        let src = File::open(dir)?;
        match renameat(&src, name, &t.dir, t.name.as_os_str()) {
            Ok(()) => return Ok(()),
            Err(Errno::EXDEV) => {}
            Err(e) => return Err(e.into()),
        }
    }
    write_new(t, mode, &mut File::open(from)?)
}

/// A fresh file with `content` and the bits `mode`, renamed over the target.
fn write_new(t: &Target, mode: u32, content: &mut impl std::io::Read) -> std::io::Result<()> {
    let mut temp = t.name.clone();
    temp.push(format!(".sneaky-{}.tmp", std::process::id()));
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let bits = Mode::from_bits_truncate(mode);
    let fd = nix::fcntl::openat(&t.dir, temp.as_os_str(), flags, bits)?;
    let mut out = File::from(fd);
    let copied = std::io::copy(content, &mut out).and_then(|_| {
        out.flush()?;
        nix::sys::stat::fchmod(&out, bits)?;
        renameat(&t.dir, temp.as_os_str(), &t.dir, t.name.as_os_str())?;
        Ok(())
    });
    if copied.is_err() {
        let _ = unlinkat(&t.dir, temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
    }
    copied
}
