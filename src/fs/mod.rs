//! The filesystem layer: the only code that turns a path into an open file.
//!
//! - `jail`: the workspace root handle; every user path is resolved beneath it.
//! - `durable`: crash-safe create, replace and delete through parent directory handles.
//! - `glob`: the one glob matcher (the path lists, `.gitignore` rules).
//! - `pathlist`: the read-deny list and the protected paths (globs over paths).
//! - `protected`: the protected paths as every path reaches them (links followed).
//! - `real`: where a path really is, remembered through a step that asks it of many paths.
//! - `history`: what each change replaced and left, for `undo` (kept outside the workspace).
//! - `suggest`: the nearest existing name for a path that is not there; the root named in
//!   `outside_workspace` messages.
//! - `transition`: taking paths from their states to new ones (a command's changes, undo).
//! - `walk`: the shared machinery of the walking tools (list_dir, grep_files, find_files).
//! - `found`: the paths a walk finds, handed over in batches and gathered in sorted order.

/// The one limit on links followed in one resolution, for every follower (the kernel's is 40):
/// the jail's resolution, the protected paths' reach, durable writes.
pub const MAX_LINK_HOPS: usize = 40;

pub mod durable;
pub mod found;
pub mod glob;
pub mod history;
pub mod jail;
pub mod pathlist;
pub mod protected;
pub mod real;
pub mod suggest;
pub mod transition;
pub mod walk;

/// Whether a file or directory was last modified longer than `age` ago: how leftovers of
/// killed processes (temporary files, journals, scratch directories) are told from those of
/// live ones that are still being made. False when its time cannot be read or lies ahead.
pub fn older_than(meta: &std::fs::Metadata, age: std::time::Duration) -> bool {
    meta.modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|elapsed| elapsed > age)
}
