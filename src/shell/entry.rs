//! The `sneaky-run` program's entry point, and the process-wide state that belongs to it
//! rather than to library code a long-lived host runs (STYLE.md 15):
//!
//! - the launcher step, when `sneaky-run` was started as its own sandbox launcher;
//! - `--print-policy`: the effective command lists and where each entry came from;
//! - the child-subreaper flag (orphans of a command are re-parented to this process, so the
//!   clean-up finds them where the PID namespace is unavailable);
//! - SIGTERM, SIGINT and SIGHUP: a watcher thread kills the command's whole tree, then this
//!   process exits. With the PID namespace, killing `sneaky-run` with SIGKILL also takes the
//!   tree down (the launcher and the namespace's init die with their parent).

use std::path::PathBuf;
use std::process::ExitCode;

use nix::sys::signal::{SigSet, Signal};

use super::policy::{EffectiveLists, Origin};
use crate::config::{Config, Source};
use crate::fs::jail::Workspace;
use crate::tools::run::RunCommand;

/// `fn main() -> ExitCode { sneaky::shell::entry::main() }`
pub fn main() -> ExitCode {
    if let Some(code) = super::sandbox::launcher_main() {
        return code;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--print-policy") {
        return print_policy(&args);
    }
    let _ = nix::sys::prctl::set_child_subreaper(true);
    watch_termination_signals();
    crate::protocol::main::<RunCommand>()
}

/// Block the termination signals in every thread and handle them in one: kill every child's
/// process group and session (the launchers), then leave with 128 + the signal.
fn watch_termination_signals() {
    let mut set = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(s);
    }
    if set.thread_block().is_err() {
        return;
    }
    std::thread::spawn(move || {
        let Ok(sig) = set.wait() else {
            return;
        };
        super::supervise::kill_children_trees();
        std::process::exit(128 + sig as i32);
    });
}

/// `sneaky-run --print-policy [--root DIR] [--config FILE] [--format json|text]`.
fn print_policy(args: &[String]) -> ExitCode {
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .or_else(|| {
                args.iter()
                    .find_map(|a| a.strip_prefix(&format!("{flag}=")).map(str::to_string))
            })
    };
    let ctx = match crate::protocol::open_context(
        value("--root").map(PathBuf::from),
        value("--config").map(PathBuf::from),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sneaky-run: {}: {}", e.code(), e.message);
            return ExitCode::from(e.exit_status() as u8);
        }
    };
    let source = Workspace::open_root(ctx.ws.root())
        .ok()
        .and_then(|mut ws| {
            Config::load(
                value("--config").as_deref().map(std::path::Path::new),
                &mut ws,
            )
            .ok()
        })
        .map(|(_, s)| s)
        .unwrap_or(Source::Defaults);
    let text = policy_report(
        &ctx.config,
        &source,
        value("--format").as_deref() == Some("json"),
    );
    println!("{text}");
    ExitCode::SUCCESS
}

fn policy_report(config: &Config, source: &Source, json: bool) -> String {
    let shell = &config.tools.shell;
    let lists = EffectiveLists::from_config(shell);
    let from = match source {
        Source::Defaults => "built-in defaults".to_string(),
        Source::File(p) => p.display().to_string(),
    };
    let entries = |l: &[(String, Origin)]| {
        l.iter()
            .map(|(n, o)| serde_json::json!({"name": n, "from": o.describe()}))
            .collect::<Vec<_>>()
    };
    if json {
        let value = serde_json::json!({
            "config": from,
            "allowed_commands": entries(&lists.allowed),
            "denied_commands": entries(&lists.denied),
            "runnable": lists.runnable(),
            "untrusted_requests": shell.untrusted_requests,
            "sandbox": shell.sandbox,
            "network": shell.network,
            "require_layers": shell.require_layers,
            "exec_paths": shell.exec_paths,
        });
        return value.to_string();
    }
    let mut out = format!("configuration: {from}\n");
    let mut section = |title: &str, l: &[(String, Origin)]| {
        out.push_str(&format!("{title} ({}):\n", l.len()));
        for (n, o) in l {
            out.push_str(&format!("  {n:<16} {}\n", o.describe()));
        }
    };
    section("allowed commands", &lists.allowed);
    section("denied commands", &lists.denied);
    if !shell.untrusted_requests.is_empty() {
        out.push_str(&format!(
            "ignored (the workspace's sneaky.toml is not trusted): {}\n",
            shell.untrusted_requests.join(", ")
        ));
    }
    out.push_str(&format!(
        "sandbox: {}; network: {}; require_layers: [{}]",
        shell.sandbox,
        shell.network,
        shell.require_layers.join(", ")
    ));
    out
}
