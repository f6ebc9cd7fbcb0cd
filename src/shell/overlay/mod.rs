//! A command's changes to the workspace, held aside, shown, and applied as one change that
//! `undo` takes back.
//!
//! In the command's mount namespace the workspace is an overlay (overlayfs, mounted by the
//! launcher in its user namespace with `userxattr`): the real workspace is the lower layer,
//! read as it is, and everything the command writes, creates or deletes lands in an upper
//! layer outside the workspace (in the undo history's directory, so that it is out of the
//! command's reach and usually on the workspace's file system). The repository's `.git` is the
//! real one, bound over the overlay (git's own writes go straight through, as before). This
//! step runs before every other mount of the namespace, so the read-only binds and pins of the
//! sandbox apply on top of the overlay as they did on the workspace.
//!
//! Once the command has ended, the runner reads the upper layer (whiteouts, opaque
//! directories, a directory replaced by a file and back, links, modes) into the paths that
//! changed, and applies them to the workspace: the paths git ignores (build outputs) straight,
//! reported as untracked; the others as one journaled change (`fs::history`, through the
//! all-or-none commit of `fs::durable`). With `dry_run` nothing is applied: the changes and
//! their diff are reported and the upper layer is removed.
//!
//! One concern a file:
//! - `mount`: what the launcher is told, and the overlay mounted over the workspace;
//! - `clock`: when the command started, against which a path changed meanwhile is told;
//! - `scratch`: the upper layer's directory, a spare for the next call, held changes;
//! - `scan`: the upper layer read into the paths that changed;
//! - `gitignore`, `gitindex`, `gitconfig`: which of them git ignores (its ignore files, its
//!   index, the configuration naming the user's excludes file);
//! - `route`: what becomes of each path (applied, recorded, discarded) and what changed
//!   meanwhile;
//! - `apply`: the changes applied to the workspace (or, with `dry_run`, their diff), each
//!   path reached without links and checked where it lands; `straight`: those applied
//!   unrecorded (ignored paths, a nested repository's git data); `applied`: what the result
//!   says became of them.

mod applied;
mod apply;
mod clock;
mod gitconfig;
mod gitignore;
mod gitindex;
mod mount;
mod route;
mod scan;
mod scratch;
mod straight;

use crate::error::{Error, ErrorKind};

pub use applied::{Applied, Changed};
pub use apply::{apply_held, collect, discard_held};
pub use clock::Started;
pub use mount::{mount_over, place_in_workspace, settle, OverlaySpec};
pub use scan::Reduced;
pub use scratch::{job_dropped, job_ended, Scratch, JOB_LOCK};

/// `sneaky-run --hold-changes`: a dry run keeps what it held (under `held-<id>` beside the
/// upper layers) and says `held: <id>` in its result, for the host to apply ([`apply_held`])
/// or drop ([`discard_held`]) once the person has seen the diff.
pub const HOLD_FLAG: &str = "--hold-changes";
/// `sneaky-run --apply-held` / `--drop-held` with `{"held": ID}` on stdin.
pub const APPLY_HELD_FLAG: &str = "--apply-held";
pub const DROP_HELD_FLAG: &str = "--drop-held";

static HOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For this process: dry runs keep what they held (see [`HOLD_FLAG`]).
pub fn hold_dry_runs() {
    HOLD.store(true, std::sync::atomic::Ordering::Relaxed);
}

pub fn holding() -> bool {
    HOLD.load(std::sync::atomic::Ordering::Relaxed)
}

/// Why a command's changes could not be held or recorded, for the result.
pub fn unavailable(why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::IoError,
        format!("the command's changes cannot be held aside: {why}"),
    )
}
