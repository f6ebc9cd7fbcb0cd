//! sneaky-mcp: the tools over the Model Context Protocol, so that any MCP host (Claude Desktop,
//! Claude Code, Codex, Cursor, VS Code …) can use SneakyCode's jailed, policy-checked tools.
//!
//! Transport: stdio, one JSON-RPC 2.0 message per line. Methods: `initialize`, `ping`,
//! `tools/list`, `tools/call`; notifications `notifications/initialized` and
//! `notifications/cancelled`; the server itself may ask the client `roots/list`.
//!
//! Why not the official Rust SDK (`rmcp`): it needs tokio and an async runtime around tools that
//! are synchronous, and costs ~122 s of clean build and ~3 MB (FIELD-NOTES.md) for a protocol
//! that, over stdio, is a handful of methods on newline-delimited JSON. This module is a few
//! hundred lines over serde_json and runs each call through `protocol::call`, the code path
//! the tool binaries use (same jail, policy and limits); the official Python client drives it in
//! the test suite (tests/mcp/client_test.py).
//!
//! stdout carries protocol messages only; logs go to stderr. EOF on stdin ends the server with
//! status 0, and so does a closed stdout.

mod catalog;
mod jsonrpc;
mod roots;
mod server;
mod version;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, Command};

pub use server::{serve, Options};
pub use version::Version;

/// The command line of `sneaky-mcp` (also the source of its man page and completions).
pub fn command() -> Command {
    Command::new("sneaky-mcp")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Serve SneakyCode's tools over the Model Context Protocol (stdio)")
        .long_about(
            "Serve SneakyCode's tools over the Model Context Protocol: JSON-RPC 2.0, one message \
             per line on stdin and stdout. Add it to an MCP host's configuration as a stdio \
             server; the host starts it.",
        )
        .after_help(
            "Workspace: --root, else SNEAKY_ROOT, else workspace_root in the configuration, else \
             the client's first root (when the client offers roots), else the nearest directory \
             at or above the current one holding sneaky.toml or .git.\n\
             Tools denied by the configuration are not offered. Logs go to stderr.\n\
             Exit status: 0 at the end of input (or when the client closes stdout), 1 when \
             stdin cannot be read, 2 on bad flags or a workspace or configuration that cannot \
             be opened.",
        )
        .arg(crate::protocol::root_arg(
            "Workspace root (else SNEAKY_ROOT, else workspace_root in the configuration, else the client's first root, else the project around the current directory)",
        ))
        .arg(crate::protocol::config_arg())
        .arg(
            Arg::new("read-only")
                .long("read-only")
                .action(ArgAction::SetTrue)
                .help("Offer only the auto-approved read tools (read_file, list_dir, grep_files, find_files)"),
        )
}

/// Entry point of `sneaky-mcp`.
pub fn main() -> ExitCode {
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let opts = Options {
        root: matches.get_one::<PathBuf>("root").cloned(),
        config: matches.get_one::<PathBuf>("config").cloned(),
        read_only: matches.get_flag("read-only"),
    };
    match serve(opts, std::io::stdin(), std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            server::log(&e);
            ExitCode::from(e.exit_status().max(1) as u8)
        }
    }
}
