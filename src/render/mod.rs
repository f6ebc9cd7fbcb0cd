//! Tool results as text, for the two kinds of readers that do not want JSON.
//!
//! - `human`: `--format text` of the tool binaries, for people at a shell (raw content, rg's
//!   `path:line:text`, one path a line, the command's own streams, diffs).

pub mod human;
