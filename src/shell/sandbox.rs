//! The launcher: the step between run_command and the command, where the kernel layers are
//! put in place. `sneaky-run` starts itself again with a hidden first argument
//! ([`LAUNCH_FLAG`](super::launch::LAUNCH_FLAG), with the spec and the marker lines of
//! src/shell/launch.rs), or hands the same to a copy of itself it forked at its start
//! (src/shell/zygote.rs); that single-threaded process (the launcher):
//!
//! 1. dies with its parent (PR_SET_PDEATHSIG), so killing `sneaky-run` takes everything down,
//!    and marks every descriptor it inherited above 2 close-on-exec;
//! 2. starts its own session (`setsid`: a process group to signal, no controlling terminal);
//! 3. enters the namespaces (src/shell/namespaces.rs: user, mount with a read-only world, pid,
//!    ipc, net unless `network = true`; with a host list, the proxy is forked before and
//!    bridged into the new network namespace after: src/shell/proxy.rs), becomes non-dumpable (nothing can trace it or the init)
//!    and forks the PID namespace's first process, which mounts a
//!    fresh /proc, forbids executable memory files and nested user namespaces in the
//!    namespace, becomes the init that
//!    reaps everything, and on the shell's exit kills
//!    whatever is left in the namespace;
//! 4. confines itself (also when namespaces are unavailable): rlimits, every capability
//!    dropped, Landlock (execute only on the exec set, write only in the workspace, the private
//!    temp dir and configured paths, no device nodes, no TCP when `network = false`, signals and
//!    abstract sockets scoped), seccomp (no new namespaces, mounts, ptrace, keyrings, bpf,
//!    perf events, userfaultfd, io_uring or system administration, no core limit changes; no
//!    AF_INET/AF_INET6/AF_PACKET/AF_VSOCK sockets when `network = false`: src/shell/seccomp.rs);
//! 5. reports what it applied on one marker line of stderr, then runs
//!    `bash --noprofile --norc -c COMMAND`; once every process of the command has ended, the
//!    launcher ends stderr with what the network proxy refused ([`END_PREFIX`]).
//!
//! The copy forked ahead of time takes the death signal and the session as soon as it is
//! forked ([`detach`]), and the rest of steps 1 to 3 up to the mount view ([`begin`]:
//! non-dumpable, the pids cgroup, the unshare) as soon as the runner knows what they depend
//! on ([`Early`]: no host list, no shared loopback), while the runner still works out the
//! views (having asked that copy for the contained exec set first: src/shell/zygote.rs); the
//! launch that follows must be the one they were taken for ([`Early::fits`]), or it is
//! refused.
//!
//! Every layer that cannot be applied is named in the report; `tools.shell.require_layers`
//! turns a missing layer into a refusal (nothing runs). Inside a container ([`Container`], src/shell/container.rs),
//! the refusal names the engine option that gives the missing layer.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use super::cgroup;
use super::confine::{self, Confined};
use super::container::Container;
use super::launch::{
    Early, LaunchEnd, LaunchSpec, LaunchStatus, ShellEnd, END_PREFIX, SETUP_FAILED, STATUS_PREFIX,
};
use super::namespaces::{self, Entered, Unshared};
use super::proxy;
use super::sys::{close_inherited_fds, fork_single_threaded, Forked};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

/// The launcher step, run by `sneaky-run`'s main when its first argument is [`LAUNCH_FLAG`](super::launch::LAUNCH_FLAG):
/// `args` are the ones after the flag (the launch spec as JSON, then the command line).
pub fn launcher_main(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    launcher_main_after(args, None, None, None)
}

/// [`launcher_main`] in the launcher forked ahead of time, which may have taken the first
/// steps already ([`begin`]), or made a network namespace that they did not take (`ahead`:
/// left at once, for the host's), and which is handed the command's environment (`env`)
/// rather than started with it.
pub fn launcher_main_after(
    mut args: impl Iterator<Item = std::ffi::OsString>,
    begun: Option<Begun>,
    ahead: Option<namespaces::NetAhead>,
    env: Option<Vec<(OsString, OsString)>>,
) -> ExitCode {
    // Whatever the launch, it starts where an executed launcher would: in the host's network.
    if let Some(made) = ahead {
        if let Err(why) = made.leave() {
            return fail(&why);
        }
    }
    let spec = args
        .next()
        .and_then(|s| serde_json::from_str::<LaunchSpec>(&s.to_string_lossy()).ok());
    let command = args.next();
    let (Some(spec), Some(line)) = (spec, command) else {
        return fail("the launcher was called with bad arguments");
    };
    let command = CommandLine { line, env };
    super::costs::set(spec.costs);
    super::costs::mark("launcher-exec");
    // Descriptors the caller left open would cross into the command past every layer.
    if let Err(e) = close_inherited_fds() {
        return fail(&format!("closing inherited descriptors: {e}"));
    }
    // sneaky-run blocks SIGTERM/SIGINT/SIGHUP for its watcher thread, and a signal mask is
    // inherited across fork and exec: unblocked here, or the command could not be stopped by
    // the timeout's SIGTERM (it would wait out the grace period for SIGKILL every time).
    if SigSet::empty().thread_set_mask().is_err() {
        return fail("cannot clear the signal mask");
    }
    launch(&spec, command, begun)
}

fn fail(message: &str) -> ExitCode {
    report(&LaunchStatus {
        error: Some(message.to_string()),
        ..LaunchStatus::default()
    });
    ExitCode::from(SETUP_FAILED as u8)
}

fn report(status: &LaunchStatus) {
    let mut line = STATUS_PREFIX.to_vec();
    line.extend(serde_json::to_vec(status).unwrap_or_default());
    line.push(b'\n');
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(&line);
    let _ = err.flush();
}

// Long: the launcher's steps in the order the module comment gives (death signal, session,
// non-dumpable, the process limit, the proxy, the namespaces and the view handover,
// confinement, the report, exec); the order is a security property, read here in one place.
fn launch(spec: &LaunchSpec, command: CommandLine, begun: Option<Begun>) -> ExitCode {
    let steps = match begun {
        Some(begun) if begun.early.fits(spec) => begun.steps,
        Some(_) => return fail("the launch is not the one its first steps were taken for"),
        None => first_steps(
            spec.parent,
            spec.sandbox,
            &spec.pids_cgroup,
            spec.limits.processes,
        ),
    };
    let (processes, unshared) = match steps {
        Err(Stop::Silent) => return ExitCode::from(SETUP_FAILED as u8),
        Err(Stop::Failed(why)) => return fail(&why),
        Ok(None) => {
            report(&LaunchStatus {
                landlock: "off".into(),
                namespaces: "off".into(),
                seccomp: "off".into(),
                ..LaunchStatus::default()
            });
            return exec_shell(spec, command);
        }
        Ok(Some(done)) => done,
    };
    // A host list's proxy: forked while this process is single-threaded and still in the
    // host's network namespace (and after joining the cgroup, which then holds it too).
    let proxy = if spec.proxy_hosts.is_empty() || spec.skip_namespaces {
        None
    } else {
        match proxy::start(&spec.proxy_hosts) {
            Ok(p) => Some(p),
            Err(why) => return fail(&format!("starting the network proxy: {why}")),
        }
    };
    // Made here, before anything of the command runs; only the init (which reports it) and
    // this process hold it. The last line it marks says how the command ended, so that the
    // runner need not wait for this process's exit (`relay_end`).
    super::costs::mark("proxy");
    let end_token = if spec.report_refused {
        random_token()
    } else {
        None
    };
    let mut exec = spec.exec.clone();
    exec.extend(spec.map_exec.iter().cloned());
    let request = namespaces::Request {
        write: &spec.write,
        read_only: &spec.read_only,
        pin: &spec.pin,
        unix_sockets: &spec.unix_sockets,
        hide: &spec.hide,
        tmp: spec.tmp.as_deref(),
        exec: &exec,
        cover_exec: &spec.cover_exec,
        network: spec.network,
        loopback: spec.loopback,
        cwd: &spec.cwd,
        overlay: spec.overlay.as_ref(),
    };
    // Connected while the supervisor's socket is still in view (the namespaces cover it).
    let hand_view = spec
        .hand_view
        .as_deref()
        .and_then(|p| std::os::unix::net::UnixStream::connect(p).ok());
    let entered = if spec.skip_namespaces {
        Err("skipped: SNEAKY_SANDBOX_SKIP=namespaces".to_string())
    } else {
        match unshared {
            Some(unshared) => unshared.and_then(|u| namespaces::enter_unshared(&request, u)),
            None => namespaces::enter(&request),
        }
    };
    // Handed over, or the socket closed without it, before anything of the command runs.
    if let (
        Some(to),
        Ok(Entered {
            overlay: Some(Ok(())),
            ..
        }),
    ) = (hand_view, &entered)
    {
        super::handover::hand_view(&to, &spec.cwd);
    }
    match entered {
        Ok(mut entered) => {
            if let Some(p) = &proxy {
                match proxy::bridge(p, entered.loopback) {
                    Ok(port) => entered.proxy_port = Some(port),
                    Err(why) => return fail(&format!("the network proxy's bridge: {why}")),
                }
            }
            let end = end_token.map(|token| (proxy, token));
            run_as_init(spec, command, entered, &processes, end)
        }
        Err(why) if required(spec, "namespaces") => {
            let mut missing = vec![("namespaces", why.as_str())];
            if required(spec, "proc") {
                missing.push(("proc", NO_PID_NAMESPACE));
            }
            fail(&refusal(spec, &missing))
        }
        Err(why) => match confine_self(spec, None, &why, &processes, None) {
            Ok(()) => exec_shell(spec, command),
            Err(code) => code,
        },
    }
}

/// The launcher's first steps, taken ([`begin`] in the launcher forked ahead of time, or
/// at the start of [`launch`]).
pub struct Begun {
    early: Early,
    steps: Steps,
}

/// None: the sandbox is off (only the death signal and the session were taken). Else the
/// process limit and, when taken ahead of the launch, the namespaces entered.
type Steps = Result<Option<(Processes, Option<Result<Unshared, String>>)>, Stop>;

/// How the first steps stopped the launch.
enum Stop {
    /// The runner is gone: nobody to tell.
    Silent,
    Failed(String),
}

/// The first steps for the launch `early` describes, including the namespaces; their
/// outcome goes with the launch, which must be the one they were taken for ([`Early::fits`]).
pub fn begin(early: Early, ahead: Option<namespaces::NetAhead>) -> Begun {
    super::costs::set(early.costs);
    let mut steps = first_steps(early.parent, true, &early.pids_cgroup, early.processes);
    if let Ok(Some((_, unshared))) = &mut steps {
        *unshared = Some(namespaces::unshare_all(early.network, None, ahead));
    }
    Begun { early, steps }
}

/// The death signal, the session, and with the sandbox on: non-dumpable, the process limit.
fn first_steps(
    parent: i32,
    sandbox: bool,
    pids_cgroup: &Result<PathBuf, String>,
    max_processes: u64,
) -> Steps {
    // Die with the runner; if it is already gone, the signal was missed: stop here.
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err()
        || nix::unistd::getppid().as_raw() != parent
    {
        return Err(Stop::Silent);
    }
    // A new session: its own process group (the runner kills the whole group) and no
    // controlling terminal (nothing can prompt on the user's tty). The launcher forked ahead
    // of time started it already ([`detach`]); asked again, setsid would fail.
    if !leads_own_session() {
        nix::unistd::setsid().map_err(|e| Stop::Failed(format!("setsid: {e}")))?;
    }
    if !sandbox {
        return Ok(None);
    }
    // Non-dumpable (inherited by the namespace's init, reset by exec for the command): no
    // process of the command may trace the init or the relay, read or write their memory
    // through /proc, or keep the namespace alive through them.
    nix::sys::prctl::set_dumpable(false)
        .map_err(|e| Stop::Failed(format!("prctl(PR_SET_DUMPABLE): {e}")))?;
    // Before the namespaces: afterwards the cgroup files are read-only here too.
    let processes = process_limit(pids_cgroup, max_processes);
    super::costs::mark("launcher-session-pids-join");
    Ok(Some((processes, None)))
}

/// The death signal and a session of its own, taken by the launcher forked ahead of time as
/// soon as it is forked, while it waits for its launch (src/shell/zygote.rs): they depend on
/// nothing the runner has yet to say, and a new session is a new scheduler group where
/// `kernel.sched_autogroup_enabled` is set (0.12 ms of the launch's path, measured, when it
/// was taken with the first steps). False when the runner `parent` is gone already.
pub fn detach(parent: i32) -> bool {
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err()
        || nix::unistd::getppid().as_raw() != parent
    {
        return false;
    }
    // Where it fails, the first steps ask again and say why.
    let _ = nix::unistd::setsid();
    true
}

/// This process leads a session of its own (it called setsid: a forked child never starts
/// as a session's leader).
fn leads_own_session() -> bool {
    nix::unistd::getsid(None).is_ok_and(|sid| sid == nix::unistd::getpid())
}

/// How the process limit holds, in words, and whether it does.
struct Processes {
    text: String,
    ok: bool,
}

/// Join the call's pids cgroup; where there is none, RLIMIT_NPROC is the only limit, which
/// the kernel does not apply to root.
fn process_limit(pids_cgroup: &Result<PathBuf, String>, max: u64) -> Processes {
    let why = match pids_cgroup {
        Ok(dir) => match cgroup::join(dir) {
            Ok(()) => {
                return Processes {
                    text: format!("cgroup pids.max {max}"),
                    ok: true,
                }
            }
            Err(e) => e,
        },
        Err(e) => e.clone(),
    };
    let root = nix::unistd::getuid().is_root();
    let exempt = if root {
        ", which root is exempt from"
    } else {
        ""
    };
    Processes {
        text: format!("RLIMIT_NPROC {max} only{exempt} (no pids cgroup: {why})"),
        ok: !root,
    }
}

fn required(spec: &LaunchSpec, layer: &str) -> bool {
    spec.require.iter().any(|l| l == layer || l == "all")
}

/// Apply the process-level layers to this process, check what is required, and report.
fn confine_self(
    spec: &LaunchSpec,
    entered: Option<&Entered>,
    ns_error: &str,
    processes: &Processes,
    end_token: Option<&str>,
) -> Result<(), ExitCode> {
    let mut write = spec.write.clone();
    write.extend(entered.and_then(|e| e.shm.clone()));
    let memfd_sealed = entered.is_some_and(|e| e.memfd_noexec);
    let bridged = entered.is_some_and(|e| e.loopback || e.proxy_port.is_some());
    let confined = confine::apply(spec, &write, memfd_sealed, bridged).map_err(|why| fail(&why))?;
    let mut status = status_of(spec, &confined, entered, ns_error, processes);
    status.end_token = end_token.map(str::to_string);
    super::costs::mark("report");
    status.costs = super::costs::take();
    let missing = missing_layers(spec, &status);
    if !missing.is_empty() {
        return Err(fail(&refusal(spec, &missing)));
    }
    report(&status);
    Ok(())
}

fn status_of(
    spec: &LaunchSpec,
    c: &Confined,
    entered: Option<&Entered>,
    ns_error: &str,
    processes: &Processes,
) -> LaunchStatus {
    LaunchStatus {
        landlock: c.landlock.clone(),
        abi: c.abi,
        namespaces: match entered {
            Some(e) => e.describe(),
            None => format!("unavailable ({ns_error})"),
        },
        namespaces_ok: entered.is_some(),
        seccomp: c.seccomp.clone(),
        seccomp_ok: c.seccomp_ok,
        processes: processes.text.clone(),
        processes_ok: processes.ok,
        overlay: match entered.map(|e| &e.overlay) {
            Some(Some(Ok(()))) => "in force".into(),
            Some(Some(Err(why))) => format!("unavailable ({why})"),
            Some(None) => "off".into(),
            None => "unavailable (no mount namespace)".into(),
        },
        overlay_ok: matches!(entered.map(|e| &e.overlay), Some(Some(Ok(())))),
        proc: match entered {
            Some(e) if e.own_proc => "own".into(),
            Some(e) => format!(
                "the outer /proc visible ({})",
                e.proc_error.as_deref().unwrap_or("not mounted")
            ),
            None => NO_PID_NAMESPACE.into(),
        },
        proc_ok: entered.is_some_and(|e| e.own_proc),
        container: spec.container.as_ref().map(Container::describe),
        error: None,
        end_token: None,
        costs: Vec::new(),
    }
}

const NO_PID_NAMESPACE: &str = "unavailable (no PID namespace)";

/// The required layers that are not in force, each with what the report says of it.
fn missing_layers<'s>(spec: &LaunchSpec, s: &'s LaunchStatus) -> Vec<(&'static str, &'s str)> {
    let mut missing = Vec::new();
    let landlock_ok = match s.landlock.as_str() {
        "full" => true,
        "partial" => spec.require_by_default,
        _ => false,
    };
    if required(spec, "landlock") && !landlock_ok {
        missing.push(("landlock", s.landlock.as_str()));
    }
    if required(spec, "namespaces") && !s.namespaces_ok {
        missing.push(("namespaces", s.namespaces.as_str()));
    }
    if required(spec, "seccomp") && !s.seccomp_ok {
        missing.push(("seccomp", s.seccomp.as_str()));
    }
    if required(spec, "pids") && !s.processes_ok {
        missing.push(("pids", s.processes.as_str()));
    }
    if required(spec, "proc") && !s.proc_ok {
        missing.push(("proc", s.proc.as_str()));
    }
    if spec.overlay.is_some()
        && overlay_required(&spec.require, spec.require_by_default)
        && !s.overlay_ok
    {
        missing.push(("overlay", s.overlay.as_str()));
    }
    missing
}

/// The overlay that holds a command's changes is required when named, or by an "all" the
/// configuration gives (not by the default's: without it a command runs as before, and its
/// result says its changes were not recorded).
pub fn overlay_required(require: &[String], by_default: bool) -> bool {
    require
        .iter()
        .any(|l| l == "overlay" || (l == "all" && !by_default))
}

/// Why nothing ran: the layers missing (with what stands in their place) and the key that
/// would let the command run without them.
fn refusal(spec: &LaunchSpec, missing: &[(&str, &str)]) -> String {
    let layers: Vec<String> = missing
        .iter()
        .map(|(layer, state)| format!("{layer} ({state})"))
        .collect();
    let how = if spec.require_by_default {
        "run_command refuses rather than run weaker. To run with the layers this system offers, \
         list the ones you need in tools.shell.require_layers (`require_layers = []` for none) \
         in your own configuration, or set tools.shell.container_boundary = true when a \
         container is the boundary; docs/sandbox.md, \"Containers\", gives the engine options \
         that keep every layer"
    } else {
        "they are required by tools.shell.require_layers"
    };
    let engine = spec
        .container
        .as_ref()
        .and_then(|c| c.options_for(missing))
        .map(|hint| format!("{hint}; "))
        .unwrap_or_default();
    format!(
        "sandbox layer not in force here: {}; {engine}{how}",
        layers.join("; ")
    )
}

/// The command line bash runs, and the environment it runs with when that is not this
/// process's own (the launcher forked ahead of time is handed it: replacing its own variable
/// by variable, each a scan of the whole environment, cost 190K instructions on the launch's
/// path).
struct CommandLine {
    line: OsString,
    env: Option<Vec<(OsString, OsString)>>,
}

fn exec_shell(spec: &LaunchSpec, command: CommandLine) -> ExitCode {
    let err = shell_command(spec, command).exec();
    let _ = writeln!(
        std::io::stderr(),
        "sneaky-run: cannot run {}: {err}",
        spec.shell.display()
    );
    ExitCode::from(127)
}

fn shell_command(spec: &LaunchSpec, command: CommandLine) -> Command {
    let mut c = Command::new(&spec.shell);
    if let Some(env) = command.env {
        c.env_clear().envs(env);
    }
    c.arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(command.line);
    if spec.tty {
        if let Ok(terminal) = std::os::fd::AsFd::as_fd(&std::io::stdout()).try_clone_to_owned() {
            c.stderr(terminal);
        }
    }
    c
}

/// Fork the PID namespace's first process; this process waits for it and leaves the way it
/// left (same exit code, or the same signal).
fn run_as_init(
    spec: &LaunchSpec,
    command: CommandLine,
    entered: Entered,
    processes: &Processes,
    end: Option<(Option<proxy::Proxy>, String)>,
) -> ExitCode {
    // Close-on-exec: the write end stays with the init, never with the shell it starts.
    let (reader, writer) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
        Ok(p) => p,
        Err(e) => return fail(&format!("pipe: {e}")),
    };
    match fork_single_threaded() {
        Err(e) => fail(&format!("fork: {e}")),
        Ok(Forked::Child) => {
            drop(reader);
            let token = end.map(|(proxy, token)| {
                drop(proxy);
                token
            });
            init_main(spec, command, &entered, processes, writer, token)
        }
        Ok(Forked::Parent(child)) => {
            drop(writer);
            // The marks taken so far went with the init, which reports them.
            let _ = super::costs::take();
            // The timeout's SIGTERM goes to the whole process group. This relay outlives it
            // (the signal stays pending) so that the shell can act on it — run its trap, end
            // by it — and the relay then leaves the way the shell did. SIGKILL still ends
            // it, and the namespace with it (the init's parent-death signal).
            let _ = termination_signals().thread_block();
            relay_end(child, reader, end)
        }
    }
}

/// The relay's end: say how the shell ended as soon as the init has (every other process of
/// the namespace is gone by then), close the runner's pipes, then wait for the init's exit
/// (the PID namespace's end) and leave the way the shell did. The runner has its result from
/// the last line and the pipes' end, and does not wait for this exit, which tears down the
/// namespaces (src/shell/gone.rs).
fn relay_end(init: Pid, reader: OwnedFd, end: Option<(Option<proxy::Proxy>, String)>) -> ExitCode {
    let said = init_said(reader);
    let ended = match said {
        Some(ended) => ended,
        None => match reap_init(init) {
            Ok(WaitStatus::Exited(_, code)) => ShellEnd::Code(code as u8),
            Ok(WaitStatus::Signaled(_, sig, _)) => ShellEnd::Signal(sig as i32),
            _ => ShellEnd::Code(SETUP_FAILED as u8),
        },
    };
    super::costs::mark("init-reported");
    if let Some((proxy, token)) = end {
        report_end(&token, proxy, ended);
    }
    output_to_null();
    if said.is_some() {
        let _ = reap_init(init);
    }
    leave(ended)
}

/// Point stdout and stderr at /dev/null: the runner's pipes end when the last process holding
/// them lets go.
fn output_to_null() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// The init of the command's PID namespace: confine, run the shell, reap every process, and
/// when the shell is gone kill the rest (returning kills the namespace too).
fn init_main(
    spec: &LaunchSpec,
    command: CommandLine,
    entered: &Entered,
    processes: &Processes,
    out: OwnedFd,
    end_token: Option<String>,
) -> ExitCode {
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
        return ExitCode::from(SETUP_FAILED as u8);
    }
    let mut entered = entered.clone();
    let proc = if spec.skip_proc {
        Err("skipped: SNEAKY_SANDBOX_SKIP=proc".to_string())
    } else {
        namespaces::mount_proc()
    };
    match proc {
        // Without its own /proc the command would see the outer processes (in a container,
        // the server's command line): refused where `proc` is required, else said.
        Err(why) => {
            entered.own_proc = false;
            entered.proc_error = Some(why);
        }
        Ok(()) => entered.memfd_noexec = namespaces::seal_memfd_exec(),
    }
    // Only in a user namespace of the sandbox's: outside one this would be the host's limit.
    if entered.user {
        namespaces::forbid_user_namespaces();
    }
    super::costs::mark("init-fork-proc");
    if let Err(code) = confine_self(spec, Some(&entered), "", processes, end_token.as_deref()) {
        return code;
    }
    let mut shell = shell_command(spec, command);
    if let Some(port) = entered.proxy_port {
        shell.envs(proxy::env(port, &spec.proxy_hosts));
    }
    let shell = match shell.spawn() {
        Ok(child) => Pid::from_raw(child.id() as i32),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "sneaky-run: cannot run bash: {e}");
            return ExitCode::from(127);
        }
    };
    let ended = reap_until(shell);
    super::costs::mark("shell-ran");
    // Everything else in the namespace; the kernel also does this when we exit.
    let _ = nix::sys::signal::kill(Pid::from_raw(-1), Signal::SIGKILL);
    while waitpid(None::<Pid>, None).is_ok() {}
    super::costs::mark("init-reaped");
    let mut out = std::fs::File::from(out);
    let mut ended = ended.to_vec();
    if super::costs::on() {
        ended.extend(serde_json::to_vec(&super::costs::take()).unwrap_or_default());
    }
    // The runner's pipes: this process's copies go first (the relay closes its own once it
    // has reported), so that they end as soon as the command has.
    output_to_null();
    let _ = out.write_all(&ended);
    ExitCode::from(if ended[0] == 0 {
        ended[1]
    } else {
        128 + ended[1]
    })
}

/// Reap children until `shell` ends; its end as [0, code] or [1, signal].
fn reap_until(shell: Pid) -> [u8; 2] {
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == shell => return [0, code as u8],
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == shell => return [1, sig as i32 as u8],
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return [1, Signal::SIGKILL as i32 as u8],
        }
    }
}

/// The signals that ask a process to end.
fn termination_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        set.add(s);
    }
    set
}

/// Leave the way the shell did (same exit code, or the same signal).
fn leave(ended: ShellEnd) -> ExitCode {
    match ended {
        ShellEnd::Code(code) => ExitCode::from(code),
        ShellEnd::Signal(sig) => die_by(sig),
    }
}

/// How the init says its shell ended: the two bytes it writes once every other process of the
/// namespace is gone (then its cost marks, when they are taken), read to the pipe's end. None
/// when the init ended without saying.
fn init_said(reader: OwnedFd) -> Option<ShellEnd> {
    let mut ended = Vec::new();
    let _ = std::fs::File::from(reader).read_to_end(&mut ended);
    if ended.len() > 2 {
        super::costs::add(serde_json::from_slice(&ended[2..]).unwrap_or_default());
        ended.truncate(2);
    }
    match ended.as_slice() {
        [0, code] => Some(ShellEnd::Code(*code)),
        [1, sig] => Some(ShellEnd::Signal(i32::from(*sig))),
        _ => None,
    }
}

/// Wait for the namespace's init to exit.
fn reap_init(init: Pid) -> nix::Result<WaitStatus> {
    loop {
        match waitpid(init, None) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => return other,
        }
    }
}

/// The launcher's last line: how the shell ended, what the proxy refused, and the cost marks
/// of the command's end when they are taken.
fn report_end(token: &str, proxy: Option<proxy::Proxy>, ended: ShellEnd) {
    let end = LaunchEnd {
        status: Some(ended),
        refused: proxy.map(|p| p.refused()).unwrap_or_default(),
        costs: super::costs::take(),
    };
    let mut line = format!("{END_PREFIX}{token}:").into_bytes();
    line.extend(serde_json::to_vec(&end).unwrap_or_default());
    line.push(b'\n');
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(&line);
    let _ = err.flush();
}

/// 128 random bits, as hex (None without /dev/urandom: then no last line is written).
fn random_token() -> Option<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// End this process by `sig` (default disposition), so the runner sees the same signal.
fn die_by(sig: i32) -> ExitCode {
    if let Ok(s) = Signal::try_from(sig) {
        let mut unblocked = SigSet::empty();
        unblocked.add(s);
        let _ = unblocked.thread_unblock();
        let _ = nix::sys::signal::raise(s);
        // A signal whose default is to be ignored: fall through.
    }
    ExitCode::from((128 + sig).clamp(0, 255) as u8)
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
