//! Where this user's runtime directories are: the base that background jobs' directories
//! live under (src/shell/jobs), and every place such a directory may be, which a command's
//! view hides (src/shell/protect.rs, src/shell/tmpdir.rs).

use std::path::PathBuf;

/// `$XDG_RUNTIME_DIR/sneaky` when that is an absolute directory, else `sneaky-<uid>` in the
/// temporary directory.
pub fn base_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(d) if d.is_absolute() && d.is_dir() => d.join("sneaky"),
        _ => std::env::temp_dir().join(format!("sneaky-{}", nix::unistd::geteuid().as_raw())),
    }
}

/// Every place where jobs' runtime directories of this user may be: the one this process
/// uses, and the defaults a host of the same user with other variables would use
/// (`/run/user/<uid>/sneaky`, where a login session's `XDG_RUNTIME_DIR` is; `sneaky-<uid>` in
/// this process's temporary directory and in `/tmp`). What a command's view covers
/// (src/shell/protect.rs, `own_state`).
pub fn runtime_places() -> Vec<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    vec![
        base_path(),
        PathBuf::from(format!("/run/user/{uid}/sneaky")),
        std::env::temp_dir().join(format!("sneaky-{uid}")),
        PathBuf::from(format!("/tmp/sneaky-{uid}")),
    ]
}
