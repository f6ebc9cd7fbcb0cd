//! The sandbox behind the command policy: a tiny launcher step that restricts itself with
//! Landlock and then becomes the shell.
//!
//! Why a re-exec rather than `CommandExt::pre_exec`: building a Landlock ruleset allocates and
//! opens files, which is not async-signal-safe between `fork` and `exec` in a process that may
//! have other threads (the MCP server, the driver), and `pre_exec` needs `unsafe`. Instead
//! `sneaky-run` starts itself again with a hidden first argument ([`LAUNCH_FLAG`]); that fresh,
//! single-threaded process calls `setsid` (its own session and process group, no controlling
//! terminal), applies the ruleset with the safe `landlock` API, reports the outcome on one
//! marker line of stderr (before anything the command prints), and `exec`s
//! `bash --noprofile --norc -c COMMAND`. No `unsafe` anywhere; the cost is one extra exec
//! (about a millisecond).
//!
//! The ruleset (best effort up to Landlock ABI 7): read and execute beneath the configured
//! read paths (default `/`); every filesystem right beneath the workspace root, the private
//! temporary directory and any configured extra write paths; read and write on `/dev/null`;
//! no TCP bind/connect when `tools.shell.network = false`; signals and abstract UNIX sockets
//! scoped to the sandbox (ABI 6+), so a command cannot signal or talk to the agent.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use serde::{Deserialize, Serialize};

/// The hidden first argument of `sneaky-run` that selects the launcher step.
pub const LAUNCH_FLAG: &str = "--sneaky-sandbox-exec";
/// The launcher's report starts stderr with this; the runner strips the line.
pub const STATUS_PREFIX: &[u8] = b"\x1esneaky-sandbox:";
/// The launcher's exit status when it could not set up (nothing ran).
pub const SETUP_FAILED: i32 = 125;

/// The Landlock ABI the ruleset is written for (this kernel's; older kernels get less, newer
/// ones the same).
const TARGET_ABI: ABI = ABI::V7;

/// What the launcher is told to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchSpec {
    /// Apply Landlock (false: only the new session).
    pub landlock: bool,
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub network: bool,
    /// The shell binary to exec, absolute.
    pub shell: PathBuf,
}

/// The launcher's report, as JSON after [`STATUS_PREFIX`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LaunchStatus {
    /// "full", "partial", "none" (kernel without Landlock) or "off" (not requested).
    pub enforced: String,
    /// The Landlock ABI the kernel offers, when known.
    pub abi: Option<i32>,
    /// Set when setup failed; then the command did not run.
    pub error: Option<String>,
}

/// Called first by `sneaky-run`'s main: runs the launcher step when asked to, else returns
/// None and the binary goes on as a tool.
pub fn launcher_main() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(LAUNCH_FLAG.as_ref()) {
        return None;
    }
    let spec = args
        .next()
        .and_then(|s| serde_json::from_str::<LaunchSpec>(&s.to_string_lossy()).ok());
    let command = args.next();
    let (Some(spec), Some(command)) = (spec, command) else {
        report(&failed("the launcher was called with bad arguments"));
        return Some(ExitCode::from(SETUP_FAILED as u8));
    };
    Some(launch(&spec, command))
}

fn failed(message: &str) -> LaunchStatus {
    LaunchStatus {
        enforced: "none".into(),
        abi: None,
        error: Some(message.to_string()),
    }
}

fn report(status: &LaunchStatus) {
    let mut line = STATUS_PREFIX.to_vec();
    line.extend(serde_json::to_vec(status).unwrap_or_default());
    line.push(b'\n');
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(&line);
    let _ = err.flush();
}

fn launch(spec: &LaunchSpec, command: OsString) -> ExitCode {
    // A new session: its own process group (the runner kills the whole group) and no
    // controlling terminal (nothing can prompt on the user's tty).
    if let Err(e) = nix::unistd::setsid() {
        report(&failed(&format!("setsid: {e}")));
        return ExitCode::from(SETUP_FAILED as u8);
    }
    let status = if spec.landlock {
        match restrict(spec) {
            Ok(s) => s,
            Err(e) => {
                report(&failed(&format!("landlock: {e}")));
                return ExitCode::from(SETUP_FAILED as u8);
            }
        }
    } else {
        LaunchStatus {
            enforced: "off".into(),
            abi: None,
            error: None,
        }
    };
    report(&status);
    let err = Command::new(&spec.shell)
        .arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(command)
        .exec();
    let _ = writeln!(
        std::io::stderr(),
        "sneaky-run: cannot run {}: {err}",
        spec.shell.display()
    );
    ExitCode::from(127)
}

fn restrict(spec: &LaunchSpec) -> Result<LaunchStatus, String> {
    let abi = TARGET_ABI;
    let e = |err: landlock::RulesetError| err.to_string();
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(e)?;
    if !spec.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(e)?;
    }
    let ruleset = ruleset.scope(Scope::from_all(abi)).map_err(e)?;
    let mut created = ruleset.create().map_err(e)?;
    created = created
        .add_rules(path_beneath_rules(&spec.read, AccessFs::from_read(abi)))
        .map_err(e)?;
    for path in &spec.write {
        let fd = PathFd::new(path).map_err(|err| format!("{}: {err}", path.display()))?;
        created = created
            .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
            .map_err(e)?;
    }
    created = created
        .add_rules(path_beneath_rules(
            [Path::new("/dev/null")],
            AccessFs::from_file(abi),
        ))
        .map_err(e)?;
    let status = created.restrict_self().map_err(e)?;
    let abi_number = match status.landlock {
        landlock::LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.unwrap_or(effective_abi as i32)),
        _ => None,
    };
    let enforced = match status.ruleset {
        RulesetStatus::FullyEnforced => "full",
        RulesetStatus::PartiallyEnforced => "partial",
        RulesetStatus::NotEnforced => "none",
    };
    Ok(LaunchStatus {
        enforced: enforced.into(),
        abi: abi_number,
        error: None,
    })
}

/// The launcher binary: this program when it is `sneaky-run`, else `sneaky-run` beside it
/// (the driver and the MCP server are installed next to the tools).
pub fn launcher_path() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_name().is_some_and(|n| n == "sneaky-run") {
        return Some(exe);
    }
    let sibling = exe.parent()?.join("sneaky-run");
    sibling.is_file().then_some(sibling)
}
