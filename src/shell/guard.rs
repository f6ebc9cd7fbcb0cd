//! The workspace's `sneaky.toml` compared before and after a command, and put back if the
//! command changed it: the fallback where the mount layer is unavailable, and the only guard
//! against creating the file where there was none (a bind mount needs something to cover).

use std::ffi::OsString;
use std::io::Read;

use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};

/// The workspace's sneaky.toml before the command ran, to put it back if the command changed
/// it (Landlock rules can only add rights beneath the root, not take one file out). Compared
/// by inode, type and content, so a rename over it or a link swapped in counts as a change.
pub struct ConfigSnapshot {
    /// None: unknown (unreadable or too big) — then nothing is compared.
    state: Option<ConfigState>,
}

#[derive(PartialEq, Eq)]
enum ConfigState {
    Absent,
    File {
        content: Vec<u8>,
        mode: u32,
        ino: u64,
    },
    Link {
        target: OsString,
        ino: u64,
    },
}

impl ConfigSnapshot {
    pub fn take(ws: &Workspace) -> ConfigSnapshot {
        ConfigSnapshot {
            state: config_state(ws),
        }
    }

    /// True when it had to be put back. The old version is written under a temporary name
    /// and renamed over whatever the command left, so that an interruption (SIGKILL, a
    /// crash) at any point leaves either the command's version or the old one, never none
    /// or half of it.
    pub fn restore_if_changed(&self, ws: &Workspace) -> Result<bool> {
        use nix::unistd::{unlinkat, UnlinkatFlags};
        let Some(before) = &self.state else {
            return Ok(false);
        };
        if config_state(ws).as_ref() == Some(before) {
            return Ok(false);
        }
        let fd = ws.root_fd();
        // A directory put in its place cannot be renamed over: removed first (when empty;
        // otherwise the restore fails and says so).
        match unlinkat(fd, CONFIG_FILE_NAME, UnlinkatFlags::RemoveDir) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) | Err(nix::errno::Errno::ENOTDIR) => {}
            Err(e) => return Err(restore_failed(e)),
        }
        match before {
            ConfigState::Absent => match unlinkat(fd, CONFIG_FILE_NAME, UnlinkatFlags::NoRemoveDir)
            {
                Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
                Err(e) => return Err(restore_failed(e)),
            },
            ConfigState::Link { target, .. } => {
                put_in_place(ws, |tmp| {
                    nix::unistd::symlinkat(target.as_os_str(), fd, tmp).map_err(restore_failed)
                })?;
            }
            ConfigState::File { content, mode, .. } => {
                put_in_place(ws, |tmp| write_new(ws, tmp, content, *mode))?;
            }
        }
        Ok(true)
    }
}

fn restore_failed(e: nix::errno::Errno) -> Error {
    Error::new(
        ErrorKind::IoError,
        format!("the command changed {CONFIG_FILE_NAME} and it could not be restored: {e}"),
    )
}

/// Create the old version under a fresh temporary name in the root with `make`, then rename
/// it over the configuration's name (atomic); the temporary is removed if anything fails.
fn put_in_place(ws: &Workspace, make: impl Fn(&str) -> Result<()>) -> Result<()> {
    let fd = ws.root_fd();
    for attempt in 0..16u32 {
        let tmp = format!(
            ".{CONFIG_FILE_NAME}.restore-{}-{attempt}",
            std::process::id()
        );
        match make(&tmp) {
            Ok(()) => {}
            Err(_)
                if nix::sys::stat::fstatat(
                    fd,
                    tmp.as_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .is_ok() =>
            {
                // The name was taken (left by an earlier interrupted restore, or planted):
                // try the next one.
                continue;
            }
            Err(e) => return Err(e),
        }
        return nix::fcntl::renameat(fd, tmp.as_str(), fd, CONFIG_FILE_NAME).map_err(|e| {
            let _ =
                nix::unistd::unlinkat(fd, tmp.as_str(), nix::unistd::UnlinkatFlags::NoRemoveDir);
            restore_failed(e)
        });
    }
    Err(restore_failed(nix::errno::Errno::EEXIST))
}

/// Write `content` to the new file `name` in the root (never following a link, never over an
/// existing file), flushed to disk before it is renamed into place.
fn write_new(ws: &Workspace, name: &str, content: &[u8], mode: u32) -> Result<()> {
    use nix::fcntl::{openat, OFlag};
    use nix::sys::stat::Mode;
    let file = openat(
        ws.root_fd(),
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(mode & 0o7777),
    )
    .map_err(restore_failed)?;
    let mut file = std::fs::File::from(file);
    let written = std::io::Write::write_all(&mut file, content).and_then(|()| file.sync_all());
    written.map_err(|e| {
        let _ = nix::unistd::unlinkat(ws.root_fd(), name, nix::unistd::UnlinkatFlags::NoRemoveDir);
        Error::io(format!("restoring {CONFIG_FILE_NAME}"), e)
    })
}

fn config_state(ws: &Workspace) -> Option<ConfigState> {
    use nix::fcntl::{readlinkat, AtFlags};
    use nix::sys::stat::fstatat;
    let st = match fstatat(ws.root_fd(), CONFIG_FILE_NAME, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(nix::errno::Errno::ENOENT) => return Some(ConfigState::Absent),
        Err(_) => return None,
    };
    let ino = st.st_ino;
    match crate::fs::jail::Kind::from_mode(st.st_mode) {
        crate::fs::jail::Kind::Symlink => {
            let target = readlinkat(ws.root_fd(), CONFIG_FILE_NAME).ok()?;
            Some(ConfigState::Link { target, ino })
        }
        crate::fs::jail::Kind::File => {
            let rel = ws.relative(CONFIG_FILE_NAME).ok()?;
            let file = ws.open_read(&rel).ok()?;
            let mut content = Vec::new();
            file.take(1024 * 1024 + 1).read_to_end(&mut content).ok()?;
            (content.len() <= 1024 * 1024).then_some(ConfigState::File {
                content,
                mode: st.st_mode,
                ino,
            })
        }
        // A directory or device there is not a config; anything else is left alone.
        _ => None,
    }
}
