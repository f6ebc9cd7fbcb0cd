//! Tool results as text, for the two kinds of readers that do not want JSON.
//!
//! - `model`: what a model reads as a tool's result (MCP `content`, the tool messages
//!   `sneaky-agent run` sends back): compact, unescaped, in the shapes models know from the
//!   plain tools (`cat`, `rg --heading -n`, `ls`).
//! - `human`: `--format text` of the tool binaries, for people at a shell (raw content, rg's
//!   `path:line:text`, one path a line, the command's own streams, diffs); `stream` writes it
//!   while a search runs, for the tools whose text needs no global order.
//!
//! And `json_out`: JSON written faster than serde_json writes it, byte for byte the same, for
//! the MCP server's messages and sneaky-find's long lists of paths.

pub mod human;
pub mod json_out;
pub mod model;
pub mod stream;
