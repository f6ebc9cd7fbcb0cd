//! `sneaky-agent`: the driver that lets an LLM work on a workspace through the tool binaries.
//!
//! - `cli`: the command line (also the source of the man page and completions).
//! - `exec`: checking a call (tool, policy, arguments) and running it.
//! - `approve`: the confirm tier: dry-run diff, the prompt on /dev/tty, --yes, "always".
//! - `llm`: the two wire formats and the blocking HTTP client with bounded retries.
//! - `session`: the agent loop of `run`; `pipe`: tool calls as JSON lines; `ui`: colours,
//!   spinner, Ctrl-C.
//!
//! Tool calls go through the one dispatch (`tools::dispatch`) in this process, as they do in
//! the binaries and sneaky-mcp; tools that ask for isolation (run_command) run in their own
//! binary, so that a command's process-wide needs never touch the driver.

mod approve;
pub mod cli;
mod exec;
mod llm;
mod pipe;
mod session;
mod ui;

use std::process::ExitCode;

pub use cli::command;

use crate::config::Config;
use crate::definitions;
use crate::error::ErrorKind;
use crate::protocol;
use cli::{Invocation, Place};
use exec::Runner;

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// Entry point of the `sneaky-agent` binary.
pub fn main() -> ExitCode {
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            use clap::error::ErrorKind as K;
            return match e.kind() {
                K::DisplayHelp | K::DisplayVersion => ExitCode::SUCCESS,
                K::DisplayHelpOnMissingArgumentOrSubcommand => ExitCode::from(EXIT_USAGE),
                _ => ExitCode::from(EXIT_USAGE),
            };
        }
    };
    match cli::invocation(&matches) {
        Some(Invocation::Run(options)) => session::run(options),
        Some(Invocation::Tools { format, place }) => print_tools(format, &place),
        Some(Invocation::Pipe { yes, place }) => pipe::pipe(yes, &place),
        Some(Invocation::Usage(why)) => {
            eprintln!("sneaky-agent: {why}");
            ExitCode::from(EXIT_USAGE)
        }
        None => ExitCode::from(EXIT_USAGE),
    }
}

/// Open the workspace and its configuration as the tools will, with the root made absolute so
/// that every binary gets the same one.
fn prepare(place: &Place) -> Result<Runner, String> {
    // The same discovery as the tool binaries (--root, SNEAKY_ROOT, workspace_root, markers).
    let root = crate::discover::find_root(place.root.as_deref(), place.config.as_deref())
        .map_err(|e| format!("{}: {}", e.code(), e.message()))?
        .root;
    let root = root
        .canonicalize()
        .map_err(|e| format!("workspace root {}: {e}", root.display()))?;
    let ctx = protocol::open_context(Some(root.clone()), place.config.clone())
        .map_err(|e| format!("{}: {}", e.code(), e.message()))?;
    Ok(Runner::new(root, place, ctx))
}

/// The configuration the tool definitions follow: the workspace's when there is one; outside
/// any project (the definitions need no workspace) the user's.
fn tools_config(place: &Place) -> Result<Config, String> {
    match crate::discover::find_root(place.root.as_deref(), place.config.as_deref()) {
        Ok(_) => prepare(place).map(|runner| runner.config().clone()),
        Err(e) if e.kind == ErrorKind::InvalidArgs => Config::load_user(place.config.as_deref())
            .map_err(|e| format!("{}: {}", e.code(), e.message())),
        Err(e) => Err(format!("{}: {}", e.code(), e.message())),
    }
}

fn print_tools(format: definitions::Format, place: &Place) -> ExitCode {
    let config = match tools_config(place) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("sneaky-agent: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let specs = definitions::offered(&config);
    let doc = definitions::definitions(&specs, format);
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
    ExitCode::SUCCESS
}
