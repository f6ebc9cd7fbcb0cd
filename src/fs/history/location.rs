//! Where a workspace's history lives: beneath the user's state directory
//! (`$XDG_STATE_HOME`, else `~/.local/state`), one directory per workspace root, never inside
//! the workspace; and every place a history of this user may be, which a command's view covers.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::sha256_hex;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::Workspace;

/// `$XDG_STATE_HOME`, else `~/.local/state` (the XDG base directory rules: relative values are
/// ignored).
pub(crate) fn state_home() -> Result<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_STATE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".local").join("state"))
        })
        .ok_or_else(|| {
            Error::new(
                ErrorKind::IoError,
                "no place for the undo history: set XDG_STATE_HOME or HOME",
            )
        })
}

/// Every place where histories of this user may be (`<state>/sneaky`): beneath the state
/// directory this process uses, and beneath the default ones a host of the same user with
/// other variables would use (`~/.local/state` by `HOME`, and by the user's entry in the
/// password database). What a command's view covers (src/shell/protect.rs, `own_state`).
pub fn state_places() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .into_iter()
        .collect();
    if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::geteuid()) {
        homes.push(user.dir);
    }
    state_home()
        .into_iter()
        .chain(homes.iter().map(|h| h.join(".local").join("state")))
        .map(|base| base.join("sneaky"))
        .collect()
}

/// The workspace's history under the state directory `base`.
pub(super) fn history_dir(base: &Path, ws: &Workspace) -> PathBuf {
    base.join("sneaky")
        .join("undo")
        .join(workspace_key(ws.root()))
}

/// Refuse a history that would be inside the workspace, where commands could change it, or
/// whose making would make a directory there on the way (`<workspace>/new/../../elsewhere`).
/// Told from where `dir` really is, or would be once made: each existing part resolved
/// (symbolic links, `..`) as the kernel and `create_dir_all` would take it, so that neither a
/// link into the workspace hides it nor `<workspace>/../elsewhere` is taken for it.
pub(crate) fn outside_workspace(dir: &Path, ws: &Workspace) -> Result<()> {
    use std::path::Component;
    let inside = |place: &Path| place.starts_with(ws.root());
    let refused = match fs::canonicalize(dir) {
        Ok(place) => inside(&place),
        Err(_) => {
            let mut place = PathBuf::from("/");
            let mut made_inside = false;
            for part in dir.components() {
                match part {
                    Component::ParentDir => {
                        place.pop();
                    }
                    Component::Normal(name) => {
                        place.push(name);
                        match fs::canonicalize(&place) {
                            Ok(real) => place = real,
                            Err(_) => made_inside |= inside(&place),
                        }
                    }
                    _ => {}
                }
            }
            made_inside || inside(&place)
        }
    };
    if refused {
        return Err(Error::new(
            ErrorKind::ConfigError,
            format!(
                "the undo history would be inside the workspace ({}), where commands could \
                 change it; point XDG_STATE_HOME elsewhere",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// A directory of the workspace's history for the upper layers of commands' overlays
/// (src/shell/overlay/): outside the workspace, out of commands' reach, 0700.
pub fn scratch_dir(ws: &Workspace) -> Result<PathBuf> {
    scratch_dir_in(&state_home()?, ws)
}

pub(super) fn scratch_dir_in(base: &Path, ws: &Workspace) -> Result<PathBuf> {
    let dir = history_dir(base, ws).join("scratch");
    outside_workspace(&dir, ws)?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io(format!("making {}", dir.display()), e))?;
    Ok(dir)
}

/// The directory name of a workspace's history: the root's last name (for people) and a hash
/// of its whole path (so that two roots never share one).
pub(crate) fn workspace_key(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = sha256_hex(root.as_os_str().as_bytes());
    format!("{name}-{}", &hash[..16])
}
