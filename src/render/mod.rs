//! Turning a tool's outcome into text for a reader other than a JSON parser.
//!
//! - `human`: `--format text` of the tool binaries, for people at a shell.

pub mod human;
