//! Where a path that a command writes may lead: inside the root, never the configuration
//! file, never under `.git` (lexically; the mount layer enforces it for real).

use std::path::{Component, Path, PathBuf};

use crate::fs::jail::CONFIG_FILE_NAME;
/// The path relative to the root, lexically, or None when it leaves the root.
pub(super) fn root_relative(value: &str, root: &Path) -> Option<PathBuf> {
    let path = Path::new(value);
    let rel = if path.is_absolute() {
        path.strip_prefix(root).ok()?.to_path_buf()
    } else {
        path.to_path_buf()
    };
    let mut out = PathBuf::new();
    for comp in rel.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Whether the last component of a path is the configuration file's name.
pub(super) fn names_config(value: &str) -> bool {
    Path::new(value)
        .file_name()
        .is_some_and(|n| n == CONFIG_FILE_NAME)
}

/// Whether a path has a `.git` component (the repository's metadata: config and hooks there
/// run programs).
pub(super) fn names_vcs_metadata(value: &str) -> bool {
    Path::new(value)
        .components()
        .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
}

/// A path a command may write: inside the root, not the config file.
pub(super) fn check_write_path(value: &str, root: &Path) -> std::result::Result<(), String> {
    if matches!(value, "/dev/null" | "/dev/stdout" | "/dev/stderr") {
        return Ok(());
    }
    if value.is_empty() {
        return Err("to an empty path".into());
    }
    if names_config(value) {
        return Err(format!(
            "to {value}: the configuration file must not be written"
        ));
    }
    if Path::new(value)
        .components()
        .any(|c| c == Component::ParentDir)
    {
        return Err(format!(
            "to {value}: `..` is not allowed in a path that is written"
        ));
    }
    if names_vcs_metadata(value) {
        return Err(format!(
            "to {value}: .git is version-control metadata, read-only to commands"
        ));
    }
    match root_relative(value, root) {
        Some(_) => Ok(()),
        None => Err(format!("to {value}: outside the workspace root")),
    }
}

pub(super) fn check_inside_root(value: &str, root: &Path) -> std::result::Result<(), String> {
    match root_relative(value, root) {
        Some(_) => Ok(()),
        None => Err(format!("{value} is outside the workspace root")),
    }
}

pub(super) fn check_cd_path(value: &str, root: &Path) -> std::result::Result<(), String> {
    if Path::new(value)
        .components()
        .any(|c| c == Component::ParentDir)
    {
        return Err(format!(
            "{value}: `..` is not allowed (the directory may only move down)"
        ));
    }
    if value.is_empty() {
        return Err("needs a directory".into());
    }
    check_inside_root(value, root)
}
