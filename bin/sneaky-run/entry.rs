//! The `sneaky-run` program's entry point (its `main` in bin/sneaky-run.rs hands over here),
//! and the process-wide state that belongs to the program rather than to library code a
//! long-lived host runs:
//!
//! - the launcher step, when `sneaky-run` was started as its own sandbox launcher;
//! - a workspace's supervisor of background jobs (src/shell/jobs), started the same way;
//! - `--print-policy`: the effective command lists and where each entry came from;
//! - `--check-policy`: whether the command policy would refuse a command;
//! - `--hold-changes`: a dry run keeps the changes it held, for the host to apply or drop
//!   (sneaky-agent's approval by effect; src/shell/overlay/);
//! - the child-subreaper flag (orphans of a command are re-parented to this process, so the
//!   clean-up finds them where the PID namespace is unavailable);
//! - SIGTERM, SIGINT and SIGHUP: a watcher thread kills the command's whole tree, lets the
//!   call finish (so a changed workspace `sneaky.toml` is put back), then this process exits
//!   with 128 + the signal. With the PID namespace, killing `sneaky-run` with SIGKILL also
//!   takes the tree down (the launcher and the namespace's init die with their parent).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use nix::sys::signal::{SigSet, Signal};

use sneaky::config::{Config, Source};
use sneaky::error::{Error, ErrorKind};
use sneaky::fs::jail::Workspace;
use sneaky::shell::policy::CHECK_POLICY_FLAG;
use sneaky::shell::{
    costs, gone, jobs, launch, overlay, policy, report, sandbox, supervise, zygote,
};
use sneaky::tools::run::RunCommand;

pub fn main() -> ExitCode {
    // The launcher's arguments are taken as they are (a command line need not be UTF-8).
    let mut raw = std::env::args_os().skip(1);
    match raw.next() {
        Some(f) if f == launch::LAUNCH_FLAG => return sandbox::launcher_main(raw),
        Some(f) if f == jobs::SUPERVISOR_FLAG => return jobs::supervisor::starter_main(raw),
        Some(f) if f == jobs::DAEMON_FLAG => return jobs::supervisor::daemon_main(raw),
        Some(f) if f == jobs::LOOPBACK_FLAG => return jobs::supervisor::loopback_main(),
        _ => {}
    }
    // Read lossily only to find this program's own modes: an argument that is not UTF-8 (a
    // command line as bytes) must reach the protocol's parser, which answers it in the
    // envelope, rather than panic here.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.iter().any(|a| a == "--print-policy") {
        return print_policy(&args);
    }
    if args.first().map(String::as_str) == Some(CHECK_POLICY_FLAG) {
        return check_policy(&args);
    }
    for (flag, apply) in [
        (overlay::APPLY_HELD_FLAG, true),
        (overlay::DROP_HELD_FLAG, false),
    ] {
        if args.first().map(String::as_str) == Some(flag) {
            return held(&args, apply);
        }
    }
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == overlay::HOLD_FLAG) {
        argv.remove(1);
        overlay::hold_dry_runs();
    }
    costs::from_env();
    costs::mark("runner-main");
    // While this process has one thread: the launcher, forked now rather than executed
    // when the command starts (src/shell/zygote.rs). In the fork, this returns its end.
    if let Some(code) = zygote::start() {
        return code;
    }
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let watcher = Watcher::start();
    let code = sneaky::protocol::main_with_args::<RunCommand>(argv);
    costs::mark("hint-result-written");
    // The result is out: a reader waiting for the end of this output need not also wait for
    // the launcher's exit (the namespaces' teardown), which this process waits for before it
    // exits, with what follows it (src/shell/gone.rs).
    stdout_to_null();
    gone::settle(SETTLE_LIMIT);
    let code = match watcher {
        Some(w) => w.finish(code),
        None => code,
    };
    costs::mark("watcher-ended");
    costs::write();
    code
}

/// How long this process waits at its end for a launcher to leave (its teardown takes
/// milliseconds; the pids cgroup's removal gives up after 3 s).
const SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// Point stdout at /dev/null, once everything this process had to say is written.
fn stdout_to_null() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
    }
}

/// The termination-signal watcher: SIGTERM, SIGINT and SIGHUP are blocked in every thread
/// and taken by one. On a signal it kills every child's process group and session (the
/// launchers), then gives the main thread time to finish the call (the command's end is then
/// reported, and a workspace `sneaky.toml` the command changed is put back) before leaving
/// with 128 + the signal. When the call ends first, the exit status is the call's.
struct Watcher {
    thread: std::thread::JoinHandle<Option<Signal>>,
    done: std::sync::mpsc::Sender<()>,
}

/// The termination signal the watcher took (0: none yet).
static TAKEN: AtomicI32 = AtomicI32::new(0);
/// How long a signalled process waits for the main thread to finish the call: long enough
/// for the launcher's death to be seen and the configuration put back (supervise's own
/// clean-up is bounded by 3 s); when no command was running, only a moment.
const FINISH_GRACE_RUNNING: Duration = Duration::from_secs(5);
const FINISH_GRACE_IDLE: Duration = Duration::from_millis(200);

impl Watcher {
    fn start() -> Option<Watcher> {
        let mut set = SigSet::empty();
        for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
            set.add(s);
        }
        set.thread_block().ok()?;
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let sig = set.wait().ok()?;
                TAKEN.store(sig as i32, Ordering::SeqCst);
                let grace = if supervise::kill_children_trees() {
                    FINISH_GRACE_RUNNING
                } else {
                    FINISH_GRACE_IDLE
                };
                if finished.recv_timeout(grace).is_err() {
                    std::process::exit(128 + sig as i32);
                }
                Some(sig)
            })
            .map_err(|_| {
                // No watcher: the signals must not stay blocked (they would be ignored).
                let _ = set.thread_unblock();
            })
            .ok()?;
        Some(Watcher { thread, done })
    }

    /// The main thread is done: leave with `code`, or, when the watcher took a signal
    /// meanwhile, with 128 + the signal. With no signal taken the thread is left to end with
    /// the process (waking and joining it would add two thread hand-offs to every call).
    fn finish(self, code: ExitCode) -> ExitCode {
        if TAKEN.load(Ordering::SeqCst) == 0 {
            return code;
        }
        let _ = self.done.send(());
        match self.thread.join() {
            Ok(Some(sig)) => ExitCode::from((128 + sig as i32) as u8),
            _ => code,
        }
    }
}

/// `sneaky-run --check-policy [--root DIR] [--config FILE]` with run_command's JSON arguments
/// on stdin: whether the command policy would refuse the command, without running anything.
/// For the driver, which asks nobody to approve a command that will be refused and does not
/// link the shell grammar itself. Answers with the usual envelope (`result: {"effect": "reads"
/// or "writes", "programs": […]}` when allowed) and exit status.
fn check_policy(args: &[String]) -> ExitCode {
    driver_call(args, |request, ctx| {
        let command = request
            .get("command")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        let approved = policy::check(command, &ctx.config.tools.shell, ctx.ws.root())?;
        Ok(serde_json::json!({
            "effect": approved.effect,
            "programs": approved.programs,
        }))
    })
}

/// `sneaky-run --apply-held|--drop-held [--root DIR] [--config FILE]` with `{"held": ID}` on
/// stdin: apply the changes a `--hold-changes` dry run held (the result holds `changes`,
/// `untracked`, `discarded`, `reduced` and `change_id` as a command's call does), or drop them. For the
/// driver, whose person approved (or not) a command by its effect.
fn held(args: &[String], apply: bool) -> ExitCode {
    driver_call(args, |request, ctx| {
        let id = request
            .get("held")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| Error::invalid_args("held: the id of the held changes is missing"))?;
        if !apply {
            overlay::discard_held(&ctx.ws, id)?;
            return Ok(serde_json::json!({}));
        }
        let cap = usize::try_from(ctx.config.max_output_bytes).unwrap_or(usize::MAX);
        let applied = overlay::apply_held(&ctx.ws, id, ctx.config.undo.max_bytes, cap)?;
        let changed = applied.changes.iter().chain(&applied.untracked);
        let paths: Vec<&str> = changed.map(|c| c.path.as_str()).collect();
        jobs::mirror::announce(&ctx.ws, &paths);
        let mut result = serde_json::json!({
            "changes": applied.changes,
            "untracked": applied.untracked,
            "discarded": applied.discarded,
        });
        if !applied.reduced.is_empty() {
            if let Some(map) = result.as_object_mut() {
                map.insert("reduced".into(), serde_json::json!(applied.reduced));
            }
        }
        if let (Ok(undo), Some(map)) = (serde_json::to_value(&applied.undo), result.as_object_mut())
        {
            if let Some(fields) = undo.as_object() {
                map.extend(fields.clone());
            }
        }
        Ok(result)
    })
}

/// A driver's call of sneaky-run's own (`--check-policy`, `--apply-held`, `--drop-held`): its
/// JSON request from stdin (at most 1 MiB) and the context of `--root` / `--config` go to
/// `body`; its outcome is answered as run_command's envelope, with the error's exit status.
fn driver_call(
    args: &[String],
    body: impl FnOnce(
        &serde_json::Value,
        &sneaky::tools::Context,
    ) -> sneaky::error::Result<serde_json::Value>,
) -> ExitCode {
    use std::io::Read;
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
    };
    let outcome: sneaky::error::Result<serde_json::Value> = (|| {
        let mut input = String::new();
        std::io::stdin()
            .take(1 << 20)
            .read_to_string(&mut input)
            .map_err(|e| Error::io("reading the arguments", e))?;
        let request: serde_json::Value = serde_json::from_str(&input)
            .map_err(|e| Error::new(ErrorKind::InvalidJson, e.to_string()))?;
        let ctx = sneaky::protocol::open_context(value("--root"), value("--config"))?;
        body(&request, &ctx)
    })();
    let status = match &outcome {
        Ok(_) => 0,
        Err(e) => u8::try_from(e.exit_status()).unwrap_or(1),
    };
    let envelope = sneaky::protocol::Envelope::from_outcome("run_command", &outcome);
    println!("{}", serde_json::to_string(&envelope).unwrap_or_default());
    ExitCode::from(status)
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
    let ctx = match sneaky::protocol::open_context(
        value("--root").map(PathBuf::from),
        value("--config").map(PathBuf::from),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sneaky-run: {}: {}", e.code(), e.message());
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
    let text = report::policy_report(
        &ctx.config,
        &source,
        value("--format").as_deref() == Some("json"),
    );
    println!("{text}");
    ExitCode::SUCCESS
}
