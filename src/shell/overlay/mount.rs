//! The overlay over the workspace, in the launcher: what it is told (`OverlaySpec`), the
//! mount itself with the real `.git` bound over it, and, where the overlay cannot be mounted,
//! the protected paths' placeholders made in the workspace instead.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::mount::{mount, MsFlags};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};

use super::clock::Started;

/// What the launcher is told: where the upper layer and overlayfs's work directory are, and
/// which real directories of the workspace are bound over the overlay.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverlaySpec {
    #[serde(with = "crate::shell::raw_path::one")]
    pub upper: PathBuf,
    #[serde(with = "crate::shell::raw_path::one")]
    pub work: PathBuf,
    #[serde(with = "crate::shell::raw_path::many")]
    pub pass_through: Vec<PathBuf>,
    /// When the command's call started, if the real-time clock says so (see [`Started`]): the
    /// launcher lets the command run only once the clock that stamps change times has passed
    /// it.
    #[serde(default)]
    pub started: Option<Started>,
    /// The placeholders of protected paths held in the upper layer ([`Scratch::place`]): made
    /// in the workspace by the launcher instead when the overlay cannot be mounted.
    #[serde(default, with = "crate::shell::raw_path::many")]
    pub placeholders: Vec<PathBuf>,
}

/// In the launcher, when the overlay could not be mounted and the command writes the
/// workspace itself: hold the protected paths there, as a call without the overlay does (the
/// runner removes them after the call, `protect::Placeholders::reserve`).
pub fn place_in_workspace(spec: &OverlaySpec) {
    for p in &spec.placeholders {
        if fs::symlink_metadata(p).is_err() {
            crate::shell::protect::plant(p);
        }
    }
}

/// In the launcher, once the overlay and the sandbox's other mounts are in place: wait, if
/// need be, until the command may start ([`Started::settle`]).
pub fn settle(spec: &OverlaySpec) {
    if let Some(started) = spec.started {
        started.settle();
    }
}

/// Mount the overlay over the workspace `root` (in the launcher, in its own mount namespace,
/// before anything else is mounted there).
pub fn mount_over(root: &Path, spec: &OverlaySpec) -> std::result::Result<(), String> {
    for p in [root, &spec.upper, &spec.work] {
        // overlayfs's options are a comma-separated list where `:` separates lower layers.
        if p.as_os_str().as_bytes().iter().any(|b| b",:\\".contains(b)) {
            return Err(format!(
                "{} holds a character overlayfs options cannot carry (, : \\)",
                p.display()
            ));
        }
    }
    // Opened before the overlay hides them; bound over it afterwards.
    let real: Vec<(&PathBuf, OwnedFd)> = spec
        .pass_through
        .iter()
        .filter_map(|p| {
            let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            nix::fcntl::open(p, flags, Mode::empty())
                .ok()
                .map(|fd| (p, fd))
        })
        .collect();
    let data = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        root.display(),
        spec.upper.display(),
        spec.work.display()
    );
    let overlay = |data: &str| {
        mount(
            Some("overlay"),
            root,
            Some("overlay"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(data),
        )
    };
    // `volatile`: the upper layer is never flushed. Without it, the overlay's unmount (when
    // the command's namespace ends) flushes the upper layer's whole file system (`syncfs`),
    // which on a busy disk held every command up by tens to hundreds of milliseconds. Nothing
    // relies on the upper layer surviving a crash: a call killed before applying it leaves
    // it to be removed, and the changes applied to the workspace are flushed there. A kernel
    // without the option (before Linux 5.10) refuses it; then the overlay is mounted as is.
    overlay(&format!("{data},volatile"))
        .or_else(|e| match e {
            nix::errno::Errno::EINVAL => overlay(&data),
            e => Err(e),
        })
        .map_err(|e| format!("mounting the overlay on {}: {e}", root.display()))?;
    for (path, fd) in real {
        let source = format!("/proc/self/fd/{}", fd.as_raw_fd());
        mount(
            Some(source.as_str()),
            path.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| {
            // Not half in force: the command writes the workspace directly, as reported.
            let _ = nix::mount::umount2(root, nix::mount::MntFlags::MNT_DETACH);
            format!("binding {} over the overlay: {e}", path.display())
        })?;
    }
    Ok(())
}
