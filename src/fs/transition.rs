//! Taking a set of workspace paths from the states they are in to the states a change wants:
//! files, links and directories, a directory becoming a file and back. Used to apply a
//! command's changes (src/shell/overlay/) and to take a change back (`undo`).
//!
//! The files go through the all-or-none commit of `durable` (one commit, or two when a file
//! takes the place of a directory or a directory the place of a file, since the one must be
//! gone before the other can be made); directories and links are made and removed around it.
//! Order: new directories (outermost first) and links a file replaces; the commit; the links
//! and directories that go (deepest first); directories in the place of what went; the files
//! that waited for them; new links; modes.
//!
//! Nobody names these paths for the occasion (they come from a command's upper layer or the
//! history), so each is reached with no link followed at any component and checked where it
//! really lands, then acted on through that directory handle (src/fs/durable/landing.rs): a
//! directory swapped for a link meanwhile fails the change, never redirects it.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use nix::sys::stat::{fchmodat, mkdirat, FchmodatFlags, Mode};
use nix::unistd::{symlinkat, unlinkat, UnlinkatFlags};

use super::durable::{self, Change};
use super::history::{Snapshot, State};
use super::jail::{map_errno, Kind, Workspace};
use crate::error::{Error, Result};

/// Where a file's new content comes from.
#[derive(Debug, Clone)]
pub enum Content {
    Bytes(Vec<u8>),
    /// Read when the change is applied (a command's upper layer).
    File(PathBuf),
}

/// What a path is to become.
#[derive(Debug, Clone)]
pub enum To {
    Absent,
    File { mode: u32, content: Content },
    Link { target: Vec<u8> },
    Dir { mode: u32 },
}

/// One path and what it becomes.
#[derive(Debug, Clone)]
pub struct Step {
    pub path: String,
    pub to: To,
}

fn is_dir(s: &State) -> bool {
    matches!(s, State::Dir { .. })
}

fn is_link(s: &State) -> bool {
    matches!(s, State::Link { .. })
}

/// Take every path of `steps` from `now` (the same order, as the workspace holds them) to its
/// new state. Parents come before their children in `steps`. Longer than most: the five steps
/// of the module comment, whose order is the point, read top to bottom in one place.
pub fn apply(ws: &Workspace, steps: &[Step], now: &[Snapshot]) -> Result<()> {
    // A multi-file edit killed halfway is put back before anything else is changed.
    durable::recover(ws);
    let pairs: Vec<(&Step, &State)> = steps.iter().zip(now.iter().map(|s| &s.state)).collect();
    // Directories made where something else stands now (made once it is gone).
    let replaced_dirs: Vec<&str> = pairs
        .iter()
        .filter(|(s, n)| matches!(s.to, To::Dir { .. }) && !is_dir(n) && **n != State::Absent)
        .map(|(s, _)| s.path.as_str())
        .collect();
    let waits = |s: &Step, n: &State| {
        is_dir(n)
            || replaced_dirs.iter().any(|d| {
                s.path.len() > d.len()
                    && s.path.starts_with(d)
                    && s.path.as_bytes()[d.len()] == b'/'
            })
    };
    // 1. New directories where nothing is, outermost first; links a file takes the place of.
    for (s, n) in &pairs {
        match (&s.to, n) {
            (To::Dir { mode }, State::Absent) => make_dir(ws, &s.path, *mode)?,
            (To::File { .. }, State::Link { .. }) => land(ws, &s.path)?.unlink()?,
            _ => {}
        }
    }
    // 2. The files, together (each holds descriptors until all are committed).
    durable::room_for_descriptors(pairs.len() as u64 * durable::DESCRIPTORS_PER_FILE);
    let mut first = Vec::new();
    for (s, n) in &pairs {
        match (&s.to, n) {
            (To::File { .. }, _) if waits(s, n) => {}
            (To::File { mode, content }, _) => {
                first.push(write_change(ws, &s.path, *mode, content)?)
            }
            (_, State::File { .. }) => first.push(delete_change(ws, &s.path)?),
            _ => {}
        }
    }
    commit(ws, &first)?;
    // 3. Links and directories that go, deepest first.
    for (s, n) in pairs.iter().rev() {
        let stays = match (&s.to, n) {
            (To::Link { target }, State::Link { target: t }) => target == t,
            (To::Dir { .. }, State::Dir { .. }) => true,
            (To::File { .. }, State::Link { .. }) => true, // gone in step 1
            _ => !(is_link(n) || is_dir(n)),
        };
        if stays {
            continue;
        }
        let target = land(ws, &s.path)?;
        let flag = if is_dir(n) {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        match unlinkat(&target.dir, target.name.as_os_str(), flag) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => return Err(map_errno(e, &s.path)),
        }
    }
    // 4. Directories in the place of what went; then the files that waited for them.
    for (s, n) in &pairs {
        if let To::Dir { mode } = s.to {
            if !is_dir(n) && **n != State::Absent {
                make_dir(ws, &s.path, mode)?;
            }
        }
    }
    let mut second = Vec::new();
    for (s, n) in &pairs {
        if let To::File { mode, content } = &s.to {
            if waits(s, n) {
                second.push(write_change(ws, &s.path, *mode, content)?);
            }
        }
    }
    commit(ws, &second)?;
    // 5. New links; the modes a rewrite or an existing directory did not take.
    for (s, n) in &pairs {
        match &s.to {
            To::Link { target } if !matches!(n, State::Link { target: t } if t == target) => {
                let t = land(ws, &s.path)?;
                symlinkat(OsStr::from_bytes(target), &t.dir, t.name.as_os_str())
                    .map_err(|e| map_errno(e, &s.path))?;
            }
            // A file that was not one before is new: the commit made it with its mode.
            To::File { mode, .. } if matches!(n, State::File { .. }) => {
                set_mode(ws, &s.path, *mode)?
            }
            To::Dir { mode } => set_mode(ws, &s.path, *mode)?,
            _ => {}
        }
    }
    Ok(())
}

/// Where the change to `path` lands: reached with no link followed on the way, and checked
/// there (src/fs/durable/landing.rs).
fn land(ws: &Workspace, path: &str) -> Result<durable::Target> {
    durable::locate_no_links(ws, path, durable::Git::AsTools)
}

fn commit(ws: &Workspace, changes: &[Change]) -> Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    durable::commit_all(ws, changes)
}

fn make_dir(ws: &Workspace, path: &str, mode: u32) -> Result<()> {
    let target = land(ws, path)?;
    match mkdirat(
        &target.dir,
        target.name.as_os_str(),
        Mode::from_bits_truncate(mode),
    ) {
        Ok(()) => Ok(()),
        Err(e) => Err(map_errno(e, path)),
    }
}

/// The mount a descriptor is on (`mnt_id` of /proc/self/fdinfo), None where it cannot be read.
fn mount_id(fd: &impl std::os::fd::AsRawFd) -> Option<u64> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("mnt_id:"))
        .and_then(|id| id.trim().parse().ok())
}

fn write_change(ws: &Workspace, path: &str, mode: u32, content: &Content) -> Result<Change> {
    let target = land(ws, path)?;
    // Only the file's identity is compared at the commit, never its content: nothing read.
    let prior = match target.stat()? {
        Some(st) if Kind::from_mode(st.st_mode) == Kind::File => target.read_existing(ws, 0)?,
        _ => None,
    };
    // A new file whose content is a file on the workspace's file system (a command's upper
    // layer) is linked into place: neither read nor written again.
    if let (None, Content::File(p)) = (&prior, content) {
        let from =
            std::fs::File::open(p).map_err(|e| Error::io(format!("reading the new {path}"), e))?;
        // One mount, not only one file system (a mount is of one file system): in a container
        // the workspace and the upper layer's volume are two bind mounts of one file system,
        // and linkat between them fails with EXDEV.
        if mount_id(&from).is_some_and(|m| mount_id(&target.dir) == Some(m)) {
            return Ok(Change::Move { target, from, mode });
        }
    }
    let content = match content {
        Content::Bytes(b) => b.clone(),
        Content::File(p) => {
            std::fs::read(p).map_err(|e| Error::io(format!("reading the new {path}"), e))?
        }
    };
    Ok(Change::Write {
        target,
        content,
        prior,
        mode: Some(mode),
    })
}

fn delete_change(ws: &Workspace, path: &str) -> Result<Change> {
    let target = land(ws, path)?;
    let prior = target.read_existing(ws, 0)?.ok_or_else(|| {
        Error::new(
            crate::error::ErrorKind::Conflict,
            format!("{path} was removed by another process meanwhile; nothing was changed"),
        )
    })?;
    Ok(Change::Delete { target, prior })
}

/// Give a file or directory the permission bits recorded (a rewrite keeps the old file's).
fn set_mode(ws: &Workspace, path: &str, mode: u32) -> Result<()> {
    let target = land(ws, path)?;
    let Some(st) = target.stat()? else {
        return Ok(());
    };
    if st.st_mode & 0o7777 == mode & 0o7777 {
        return Ok(());
    }
    fchmodat(
        &target.dir,
        target.name.as_os_str(),
        Mode::from_bits_truncate(mode),
        // A link swapped in since the check is refused, never followed.
        FchmodatFlags::NoFollowSymlink,
    )
    .map_err(|e| map_errno(e, path))
}
