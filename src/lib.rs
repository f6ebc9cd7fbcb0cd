//! SneakyCode: jailed, policy-checked file, search, edit and shell tools for LLM agents.
//!
//! - `fs`: the workspace jail (the only door from a user path to the filesystem), crash-safe
//!   writes and the walkers.
//! - `edit`: unified diffs over bytes: parse, place, apply like GNU patch, explain, render.
//! - `shell`: what run_command may run (the command policy) and how it is confined (sandbox).
//! - `discover`: where the workspace root comes from (flag, variable, config, project marker).
//! - `config`: finding and reading `sneaky.toml`; `permissions`: tiers (auto / confirm / deny);
//!   `hooks`: the user's own programs around every tool call (Claude Code's protocol).
//! - `protocol`: stdin JSON or flags → validated arguments → one JSON envelope → exit status.
//! - `error`: the error type with its stable codes and exit statuses.
//! - `render`: results as text; `render::model` is what a model reads, `render::human` the
//!   binaries' `--format text`.
//! - `tools`: one module per tool; `text`: small text helpers every layer uses.
//! - `media`: what read_file returns of an image (and how it is scaled down).
//! - `agent`: the LLM driver behind `sneaky-agent`; `mcp`: the MCP server.
//! - `isolate`: running a tool in its own binary for a long-lived host, cancellable, with
//!   progress (`progress`: the lines a tool binary prints for its host); `proctable`: the
//!   process table from /proc, for finding what a command left behind.

pub mod agent;
pub mod cancel;
pub mod catalog;
pub mod code;
pub mod config;
pub mod definitions;
pub mod discover;
pub mod edit;
pub mod error;
pub mod fs;
pub mod hooks;
pub mod isolate;
pub mod mcp;
pub mod media;
pub mod permissions;
pub mod proctable;
pub mod progress;
pub mod protocol;
pub mod render;
pub mod shell;
pub mod text;
pub mod tools;
