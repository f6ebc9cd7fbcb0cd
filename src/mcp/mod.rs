//! sneaky-mcp: the tools over the Model Context Protocol, so that any MCP host (Claude Desktop,
//! Claude Code, Codex, Cursor, VS Code …) can use SneakyCode's jailed, policy-checked tools.
//!
//! Transports: stdio, one JSON-RPC 2.0 message per line (`server.rs`), and Streamable HTTP with
//! sessions, a bearer token and SSE (`http/`, `--http ADDR`: a file per concern, listed in
//! `http/mod.rs`). Methods: `initialize`, `ping`, `tools/list`, `tools/call`; notifications
//! `notifications/initialized` and `notifications/cancelled`; the server sends
//! `notifications/progress` for long calls that ask for it and, over stdio, may ask the client
//! `roots/list`. Tool calls run side by side on a bounded worker pool (`pool.rs`, `calls.rs`);
//! run_command runs in its own `sneaky-run` process (`crate::isolate`), so that cancelling it
//! kills its whole process tree.
//!
//! Why not the official Rust SDK (`rmcp`): it needs tokio and an async runtime around tools that
//! are synchronous, and costs ~122 s of clean build and ~3 MB for a protocol
//! that, over stdio, is a handful of methods on newline-delimited JSON. The stdio transport is
//! about two thousand lines over serde_json (`server.rs`, `calls.rs`, `pool.rs`, `jsonrpc.rs`,
//! `log.rs` for stderr, and `crate::render::json_out` writing the messages), and runs each call through `tools::call`, the code
//! path the tool binaries use (same jail, policy and limits). The HTTP transport uses hyper on tokio
//! (only when `--http` is given: the stdio path starts no runtime). The official Python and
//! TypeScript clients drive both transports in the test suite (tests/mcp/).
//!
//! stdout carries protocol messages only; logs go to stderr. EOF on stdin ends the server with
//! status 0, and so does a closed stdout.

mod calls;
mod catalog;
mod http;
mod jsonrpc;
mod log;
mod pool;
mod resume;
mod roots;
mod server;
mod shape;
mod version;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, Command};

pub use http::HttpOptions;
pub use server::{serve, Options};
pub use shape::StructuredChoice;
pub use version::Version;

/// The command line of `sneaky-mcp` (also the source of its man page and completions).
pub fn command() -> Command {
    Command::new("sneaky-mcp")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Serve SneakyCode's tools over the Model Context Protocol (stdio or HTTP)")
        .long_about(
            "Serve SneakyCode's tools over the Model Context Protocol: JSON-RPC 2.0, one message \
             per line on stdin and stdout. Add it to an MCP host's configuration as a stdio \
             server; the host starts it. With --http, serve the Streamable HTTP transport at \
             http://ADDR/mcp instead, for hosts in another container or machine: every request \
             needs Authorization: Bearer TOKEN.",
        )
        .after_help(
            "Workspace: --root, else SNEAKY_ROOT, else workspace_root in the configuration, else \
             the client's first root (when the client offers roots; stdio only), else the nearest \
             directory at or above the current one holding sneaky.toml or .git.\n\
             Tool calls run side by side, at most `[mcp] workers` at once (default 8); \
             notifications/cancelled kills a running command's whole process tree.\n\
             HTTP token: --token-file, else SNEAKY_MCP_TOKEN, else a random one printed once \
             on stderr.\n\
             Tools denied by the configuration are not offered. Logs go to stderr.\n\
             Exit status: 0 at the end of input, when the client closes stdout, or on SIGINT \
             or SIGTERM (which first kill running commands' process trees; with --http, \
             within 10 s: running calls get 5 s to end, GET /healthz then answers 503), 1 when stdin \
             cannot be read or the address cannot be listened on, 2 on bad flags, a bad token \
             or a workspace or configuration that cannot be opened.",
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
        .arg(
            Arg::new("structured-content")
                .long("structured-content")
                .value_name("WHEN")
                .value_parser(["on", "off"])
                .hide_possible_values(true)
                .help("on: results carry structuredContent and tools declare outputSchema (for clients that read the JSON result); off: results are content blocks only, the text written for the model and an image block (for hosts that show structuredContent to the model instead of the text). Default: off for Codex CLI and Claude Code (by the clientInfo name they send), on for every other client"),
        )
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("ADDR")
                .help("Serve Streamable HTTP at http://ADDR/mcp instead of stdio (HOST:PORT, :PORT or PORT; the host defaults to 127.0.0.1)"),
        )
        .arg(
            Arg::new("token-file")
                .long("token-file")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("http")
                .help("With --http: read the bearer token from FILE (else SNEAKY_MCP_TOKEN, else a random one)"),
        )
        .arg(
            Arg::new("log-format")
                .long("log-format")
                .value_name("FORMAT")
                .value_parser(["text", "json"])
                .default_value("text")
                // Named in the help instead of clap's list, which clap_mangen renders as a
                // paragraph mandoc's lint warns about.
                .hide_possible_values(true)
                .help("Logs on stderr: text (lines) or json (JSON lines for a log collector: time and message, and one line per tool call with its session, tool, duration_ms and outcome, never its arguments)"),
        )
        .arg(
            Arg::new("allow-origin")
                .long("allow-origin")
                .value_name("ORIGIN")
                .action(ArgAction::Append)
                .requires("http")
                .help("With --http: also accept requests from this browser Origin (loopback origins always are); repeatable"),
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
    if matches
        .get_one::<String>("log-format")
        .is_some_and(|f| f == "json")
    {
        log::set_json_log();
    }
    let opts = Options {
        root: matches.get_one::<PathBuf>("root").cloned(),
        config: matches.get_one::<PathBuf>("config").cloned(),
        read_only: matches.get_flag("read-only"),
        structured_content: matches
            .get_one::<String>("structured-content")
            .and_then(|w| StructuredChoice::parse(w))
            .unwrap_or_default(),
    };
    // The tools this server runs, here and in their own processes, never read its token
    // (src/fs/pathlist.rs). Set before any thread starts.
    if let Some(file) = matches
        .get_one::<PathBuf>("token-file")
        .and_then(|f| std::path::absolute(f).ok())
    {
        std::env::set_var(crate::fs::pathlist::MCP_TOKEN_FILE_ENV, file);
    }
    let served = match matches.get_one::<String>("http") {
        Some(addr) => http::serve(
            opts,
            HttpOptions {
                addr: addr.clone(),
                token_file: matches.get_one::<PathBuf>("token-file").cloned(),
                allowed_origins: matches
                    .get_many::<String>("allow-origin")
                    .map(|v| v.cloned().collect())
                    .unwrap_or_default(),
            },
        ),
        None => {
            stop_on_signal();
            serve(opts, std::io::stdin(), std::io::stdout())
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::log(&e);
            ExitCode::from(e.exit_status().max(1) as u8)
        }
    }
}

/// SIGINT or SIGTERM (a host shutting the server down): take every running command's process
/// tree down, then end with status 0. Process-wide, so here at the entry point; signal-hook
/// installs handlers (a caught signal is reset to its default in programs we start, and no
/// signal mask is inherited) and one thread waits on them.
fn stop_on_signal() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("mcp-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let name = if signal == SIGINT {
                    "SIGINT"
                } else {
                    "SIGTERM"
                };
                log::log(format!("{name}: stopping, killing running commands"));
                crate::isolate::kill_all_children_trees();
                std::process::exit(0);
            }
        });
}
