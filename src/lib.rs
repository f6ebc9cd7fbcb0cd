//! SneakyCode: jailed, policy-checked file, search, edit and shell tools for LLM agents.
//!
//! - `jail`: the workspace root handle, the only door from a user path to the filesystem.
//! - `config`: finding and reading `sneaky.toml`.
//! - `policy`: permission tiers (auto / confirm / deny).
//! - `protocol`: stdin JSON or flags → validated arguments → one JSON envelope → exit status.
//! - `error`: the error type with its stable codes and exit statuses.
//! - `tools`: the tool table and one module per tool; `walk`: shared walking machinery.
//! - `atomic`: crash-safe create/replace/delete through parent handles (the edit tools).
//! - `unidiff`: unified diffs over bytes: parse, apply like GNU patch, render.
//! - `agent`: the LLM driver behind `sneaky-agent`; `mcp`: the MCP server.

pub mod agent;
pub mod command_policy;
pub mod config;
pub mod error;
pub mod jail;
pub mod mcp;
pub mod policy;
pub mod protocol;
pub mod sandbox;
pub mod tools;
pub mod walk;

pub mod atomic;
pub mod unidiff;
