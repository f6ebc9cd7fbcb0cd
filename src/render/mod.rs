//! Tool results as text, for the two kinds of readers that do not want JSON.
//!
//! - `model`: what a model reads as a tool's result (MCP `content`, the tool messages
//!   `sneaky-agent run` sends back): compact, unescaped, in the shapes models know from the
//!   plain tools (`cat`, `rg --heading -n`, `ls`).

pub mod model;
