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

    /// True when it had to be put back.
    pub fn restore_if_changed(&self, ws: &Workspace) -> Result<bool> {
        use nix::fcntl::{openat, OFlag};
        use nix::sys::stat::Mode;
        use nix::unistd::{symlinkat, unlinkat, UnlinkatFlags};
        let Some(before) = &self.state else {
            return Ok(false);
        };
        if config_state(ws).as_ref() == Some(before) {
            return Ok(false);
        }
        let fd = ws.root_fd();
        let fail = |e: nix::errno::Errno| {
            Error::new(
                ErrorKind::IoError,
                format!("the command changed {CONFIG_FILE_NAME} and it could not be restored: {e}"),
            )
        };
        match unlinkat(fd, CONFIG_FILE_NAME, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(nix::errno::Errno::EISDIR) => {
                unlinkat(fd, CONFIG_FILE_NAME, UnlinkatFlags::RemoveDir).map_err(fail)?
            }
            Err(e) => return Err(fail(e)),
        }
        match before {
            ConfigState::Absent => {}
            ConfigState::Link { target, .. } => {
                symlinkat(target.as_os_str(), fd, CONFIG_FILE_NAME).map_err(fail)?
            }
            ConfigState::File { content, mode, .. } => {
                let file = openat(
                    fd,
                    CONFIG_FILE_NAME,
                    OFlag::O_WRONLY
                        | OFlag::O_CREAT
                        | OFlag::O_EXCL
                        | OFlag::O_NOFOLLOW
                        | OFlag::O_CLOEXEC,
                    Mode::from_bits_truncate(*mode & 0o7777),
                )
                .map_err(fail)?;
                let mut file = std::fs::File::from(file);
                std::io::Write::write_all(&mut file, content)
                    .map_err(|e| Error::io(format!("restoring {CONFIG_FILE_NAME}"), e))?;
            }
        }
        Ok(true)
    }
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
