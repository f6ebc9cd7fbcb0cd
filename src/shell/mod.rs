//! Running commands for run_command: the policy that decides what may run (a friendly first
//! layer with clear messages) and the sandbox that enforces it underneath, whatever the
//! policy missed.
//!
//! - `policy`: parsing the command line and checking programs and their arguments;
//! - `spec`, `executables`: what the sandbox is told (read, write, execute, read-only files);
//! - `sandbox`: the launcher step (`sneaky-run` re-executed, or forked ahead by `zygote`) that
//!   sets up the layers;
//!   `namespaces`, `confine`, `seccomp` and `cgroup` are those layers, `sys` the raw system
//!   calls they need; `launch`: the launch spec and the marker lines the launcher writes, which
//!   the runner, the layers and the output's reader share; `container`: the container this
//!   runs in and the engine options that give a missing layer;
//! - `proxy`: the network with a host list (a proxy outside the command's network namespace);
//! - `supervise`, `capture`: starting, timing out, cleaning up, capturing output; `gone`: the
//!   launcher's own exit (the namespaces' teardown), which the result does not wait for, and
//!   what waits for it;
//! - `overlay`: the command's changes held in an overlay, then applied to the workspace (or
//!   shown, with dry_run) as one change undo takes back (one concern a file: src/shell/overlay/);
//! - `jobs`: background jobs (a supervisor per workspace, their output and input);
//!   `handover`: the workspace as a job sees it, handed from its launcher to the supervisor;
//!   `runtime`: where this user's runtime directories are;
//! - `env`: the command's environment; `tmpdir`: its private temporary directory; `guard`:
//!   the workspace configuration put back;
//! - `protect`: the read-deny list and the protected paths in the command's mount view;
//! - `hint`: the line a command's stderr ends with when a layer stopped something;
//! - `report`: what `sneaky-run --print-policy` prints; `costs`: where the time of a start and
//!   an end goes (benches/run_start.sh's cost table).
//!
//! The `sneaky-run` program's process-wide setup (signal watcher, subreaper, the launcher
//! dispatch) is in bin/sneaky-run/entry.rs, never here: a long-lived host links this library too.

pub mod capture;
pub mod cgroup;
pub mod confine;
pub mod container;
pub mod costs;
pub mod env;
pub mod executables;
pub mod gone;
pub mod guard;
pub mod handover;
pub mod hint;
pub mod jobs;
pub mod launch;
pub mod namespaces;
pub mod overlay;
pub mod policy;
pub mod protect;
pub mod proxy;
pub(crate) mod raw_path;
pub mod report;
pub mod runtime;
pub mod sandbox;
pub mod seccomp;
pub mod spec;
pub mod supervise;
mod sys;
pub mod tmpdir;
pub mod zygote;

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::Workspace;
use launch::LaunchStatus;
use supervise::Finished;

/// What running a command needs from the call: the workspace it runs in (its root is the
/// working directory, its `sneaky.toml` is watched) and the configuration (`tools.shell`, and
/// `allow_vcs_writes` for the sandbox's read-only files).
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub ws: &'a Workspace,
    pub config: &'a Config,
}

/// A finished command and what surrounded it.
pub struct Outcome {
    pub finished: Finished,
    pub env_removed: Vec<String>,
    pub config_restored: bool,
    /// Whether the sandbox layers were in force, and a description of them.
    pub sandboxed: bool,
    pub sandbox: String,
    /// The command's changes to the workspace, when they were held in an overlay; else why
    /// they were not (None: not asked for).
    pub changes: Option<std::result::Result<overlay::Applied, String>>,
}

/// Whether a command's changes go through an overlay (src/shell/overlay/).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    /// Written to the workspace directly, not recorded.
    Direct,
    /// Held in an overlay, then applied as one recorded change (where the overlay is
    /// unavailable: written directly, and the outcome says why).
    Record,
    /// Held in an overlay and reported, never applied (refused where it is unavailable).
    DryRun,
}

/// Run an approved command line in the workspace root, sandboxed as configured.
pub fn run(
    command: &str,
    programs: &[String],
    timeout: Duration,
    cap: usize,
    ctx: Context<'_>,
) -> Result<Outcome> {
    run_with_changes(command, programs, timeout, cap, ctx, Changes::Direct)
}

/// What a sandboxed launch can begin before its command is checked: the launcher forked ahead
/// of time works out the contained exec set (the longest step before the launch) while the
/// policy parses the command. For a foreground command; one the policy refuses leaves the
/// answer unread.
pub fn begin_before_the_check(shell: &crate::config::Shell, root: &std::path::Path) {
    if !shell.sandbox {
        return;
    }
    if let Some(inputs) = spec::ExecInputs::of(shell, root) {
        zygote::ask_exec_set(&inputs);
    }
}

/// Whether the launcher forked ahead of time may take its first steps, the namespaces among
/// them, before the launch: where they follow from the configuration alone, not with
/// `SNEAKY_SANDBOX_SKIP` naming the namespaces, a host list's proxy or a shared loopback to
/// join (the launch then takes them all, as an executed launcher does).
fn early_steps(shell: &crate::config::Shell, loopback: Option<(i32, u64)>) -> bool {
    let hosts = shell.network.hosts().is_some_and(|h| !h.is_empty());
    !hosts && loopback.is_none() && !spec::skipped("namespaces")
}

/// Have the launcher forked ahead of time take its first steps now, in the network namespace
/// `network` made for the launch, if one was.
fn begin_early(
    shell: &crate::config::Shell,
    pids_cgroup: &std::result::Result<std::path::PathBuf, String>,
    network: Option<namespaces::NetworkNamespace>,
    waiting: &zygote::Zygote,
) {
    // Not handed over: the first steps make one, as without it.
    if let Some(made) = network.and_then(namespaces::NetworkNamespace::made) {
        let _ = waiting.hand_network(&made);
    }
    let early = launch::Early {
        parent: std::process::id() as i32,
        pids_cgroup: pids_cgroup.clone(),
        processes: shell.max_processes,
        network: shell.network.all(),
        costs: costs::on(),
    };
    // Not sent: the launch takes every step itself.
    let _ = waiting.begin(&early);
}

/// [`run`], with the command's changes held as `changes` says.
// Long: the holds it takes before the launch (the pids cgroup, the repository's and the
// protected paths' placeholders, the overlay's upper layer) must outlive the command and go in
// a set order after it; one sequence keeps that order in sight, and what can stand alone
// (Setup, describe, the apply) already does.
pub fn run_with_changes(
    command: &str,
    programs: &[String],
    timeout: Duration,
    cap: usize,
    ctx: Context<'_>,
    changes: Changes,
) -> Result<Outcome> {
    // Taken first: what changes the workspace from here on counts as changed meanwhile when
    // the command's changes are applied (src/shell/overlay/clock.rs, `Started`).
    let started = overlay::Started::now();
    let shell = &ctx.config.tools.shell;
    let root = ctx.ws.root().to_path_buf();
    let launcher = sandbox::launcher_path();
    // Held until the command has ended; dropping it kills what is left in it and removes it.
    // Made first: the launcher forked ahead of time joins it in its first steps, which it
    // takes while this process works out the rest of the launch (`launch::Early`).
    let mut pids_cgroup = None;
    let mut cgroup_made = Err("not created".to_string());
    let sandboxed = shell.sandbox && launcher.is_some();
    let waiting = launcher.as_ref().and_then(|_| zygote::take());
    // Worked out meanwhile, while this thread makes the pids cgroup, the temp dir, the
    // environment and the placeholders: asked first, before the launcher's first steps.
    let mut exec_ahead = sandboxed
        .then(|| match &waiting {
            Some(waiting) => spec::ExecInputs::of(shell, &root)
                .and_then(|inputs| waiting.work_out_exec_set(&inputs)),
            None => spec::ExecAhead::start(shell, &root),
        })
        .flatten();
    let loopback = sandboxed.then(|| jobs::loopback(&root)).flatten();
    let early = sandboxed && waiting.is_some() && early_steps(shell, loopback);
    // Likewise, on a thread of its own: the network namespace of a launch that wants one,
    // which the forked launcher enters before its first steps (`namespaces::NetAhead`).
    let mut network_ahead = (early && !shell.network.all())
        .then(namespaces::NetworkNamespace::start)
        .flatten();
    if sandboxed {
        let made = cgroup::PidsCgroup::create(shell.max_processes);
        cgroup_made = made
            .as_ref()
            .map(|c| c.path().to_path_buf())
            .map_err(Clone::clone);
        pids_cgroup = made.ok();
        costs::mark("pids-cgroup");
    }
    let Setup {
        tmp,
        env,
        env_removed,
        bash,
        path_env,
        caches,
    } = Setup::new(shell, &root, programs, "sneaky-run-", "the command's")?;
    let config_before = guard::ConfigSnapshot::take(ctx.ws);
    costs::mark("setup-tmp-env-config-snapshot");
    // Likewise: the repository's placeholders are removed once the command has ended.
    let mut vcs_placeholders = None;
    let mut protected_placeholders = None;
    // The overlay's upper layer, removed once its changes are applied or reported.
    let mut scratch = None;
    let mut no_overlay = None;
    // What the sandbox lets execute and write, to judge the command's refusals by.
    let mut given = None;
    let start = match &launcher {
        Some(exe) => {
            let spec = if shell.sandbox {
                vcs_placeholders = Some(spec::VcsPlaceholders::make(ctx.config, ctx.ws));
                costs::mark("repository-placeholders");
                // The overlay first: the placeholders of the protected paths that do not exist
                // go in its upper layer rather than in the workspace (`Scratch::place`).
                if changes != Changes::Direct {
                    match hold_changes(ctx.ws, started) {
                        Ok(held) => scratch = Some(held),
                        Err(why)
                            if changes == Changes::DryRun || {
                                let (list, by_default) = shell.required_layers();
                                sandbox::overlay_required(&list, by_default)
                            } =>
                        {
                            return Err(overlay::unavailable(why))
                        }
                        Err(why) => no_overlay = Some(why),
                    }
                }
                costs::mark("overlay-upper-layer");
                let wanted = protect::wanted(ctx.ws);
                let (in_workspace, in_upper) = match scratch.as_mut() {
                    Some(held) => (held.place(ctx.ws.root(), wanted), held.placed().to_vec()),
                    None => (wanted, Vec::new()),
                };
                protected_placeholders = Some([
                    protect::Placeholders::make_at(&in_workspace),
                    protect::Placeholders::reserve(&in_upper),
                ]);
                costs::mark("protected-placeholders");
                // Only now: the forked launcher is busy with the exec set until about then
                // (its first steps would wait for it), and the network namespace is made.
                if let Some(waiting) = waiting.as_ref().filter(|_| early) {
                    begin_early(shell, &cgroup_made, network_ahead.take(), waiting);
                }
                let mut spec = spec::launch_spec(
                    ctx.config,
                    ctx.ws,
                    tmp.path(),
                    &bash,
                    &path_env,
                    exec_ahead.take(),
                )?;
                costs::mark("launch-spec-exec-set-deny-list");
                Setup::grant(caches.as_deref(), &mut spec);
                if let Some(held) = &scratch {
                    // Bound read-only over the placeholders in the upper layer, as over those
                    // in the workspace.
                    spec.read_only.extend(held.placed().iter().cloned());
                    if changes == Changes::DryRun {
                        spec.require.push("overlay".into());
                    }
                    spec.overlay = Some(held.spec(ctx.ws, changes == Changes::DryRun));
                }
                spec.loopback = loopback;
                spec.report_refused = true;
                given = Some(hint::Given {
                    exec: spec.exec.clone(),
                    write: spec.write.clone(),
                    cover: spec.cover_exec.clone(),
                    mode: crate::config::commands::mode(shell),
                    denied_commands: shell.denied_commands.is_some(),
                });
                spec.pids_cgroup = cgroup_made;
                spec
            } else if changes == Changes::DryRun {
                return Err(overlay::unavailable(
                    "the sandbox is off (tools.shell.sandbox = false)",
                ));
            } else {
                no_overlay = Some("the sandbox is off (tools.shell.sandbox = false)".to_string());
                spec::unsandboxed_spec(ctx.ws, &bash)
            };
            let spec = launch::LaunchSpec {
                costs: costs::on(),
                ..spec
            };
            let spec = serde_json::to_string(&spec)
                .map_err(|e| Error::new(ErrorKind::Internal, format!("launch spec: {e}")))?;
            match waiting {
                Some(waiting) => supervise::Start::Forked(
                    waiting,
                    zygote::Launch {
                        spec,
                        command: command.into(),
                        env,
                        cwd: root.clone().into_os_string(),
                    },
                ),
                None => {
                    let mut c = Command::new(exe);
                    c.arg(launch::LAUNCH_FLAG).arg(spec).arg(command);
                    c.current_dir(&root).env_clear().envs(env);
                    supervise::Start::Exec(c)
                }
            }
        }
        None if changes == Changes::DryRun => {
            return Err(overlay::unavailable(
                "the sandbox launcher (sneaky-run) was not found",
            ))
        }
        None if shell.sandbox => {
            return Err(Error::new(
                ErrorKind::IoError,
                "the sandbox launcher (sneaky-run) was not found beside this program; \
                 install all SneakyCode binaries together or set tools.shell.sandbox = false",
            ))
        }
        None => {
            let mut c = Command::new(&bash);
            c.args(["--noprofile", "--norc", "-c", command])
                .process_group(0);
            c.current_dir(&root).env_clear().envs(env);
            supervise::Start::Exec(c)
        }
    };
    // The pids cgroup goes once the launcher, the last process in it, has been reaped.
    let spawned = || {
        if let Some(held) = scratch.as_mut() {
            held.command_started();
        }
    };
    let reaped = move || drop(pids_cgroup);
    let mut finished =
        supervise::supervise(start, launcher.is_some(), timeout, cap, spawned, reaped)?;
    if let Some(status) = finished.launch.as_mut() {
        costs::add(std::mem::take(&mut status.costs));
    }
    costs::add(std::mem::take(&mut finished.end.costs));
    costs::mark("command-ended");
    drop(vcs_placeholders);
    drop(protected_placeholders);
    costs::mark("placeholders-removed");
    if let Some(LaunchStatus {
        error: Some(why), ..
    }) = &finished.launch
    {
        return Err(Error::new(
            ErrorKind::IoError,
            format!("the sandbox could not be set up, nothing ran: {why}"),
        ));
    }
    if let Some(held) = scratch.as_mut() {
        // The launcher leaves by itself only after the namespace's init, and with it every
        // process of the namespace, is gone (src/shell/sandbox.rs, `relay_end`); its exit
        // unmounts the overlay.
        held.command_ended(
            !finished.timed_out
                && finished.signal().is_none()
                && finished
                    .launch
                    .as_ref()
                    .is_some_and(|s| s.namespaces_ok && s.overlay_ok),
            finished.launcher_gone.clone(),
        );
    }
    let config_restored = config_before.restore_if_changed(ctx.ws)?;
    costs::mark("config-guard");
    let (sandboxed, sandbox) = describe(shell, finished.launch.as_ref());
    let changes = match (changes, scratch, finished.launch.as_ref()) {
        (Changes::Direct, _, _) => None,
        (_, Some(held), Some(status)) if status.overlay_ok => {
            let dry_run = changes == Changes::DryRun;
            match overlay::collect(ctx.ws, &held, ctx.config.undo.max_bytes, cap, dry_run) {
                Ok(mut applied) => {
                    if dry_run && overlay::holding() {
                        applied.held = Some(held.hold()?);
                    }
                    for note in [
                        applied.links_note(),
                        applied.reduced_note(),
                        applied.repository_note(),
                    ] {
                        if note.is_empty() {
                            continue;
                        }
                        let text = &mut finished.stderr.text;
                        if !text.is_empty() && !text.ends_with('\n') {
                            text.push('\n');
                        }
                        text.push_str(&note);
                    }
                    Some(Ok(applied))
                }
                Err(e) => return Err(held.keep_after(e)),
            }
        }
        (_, Some(_), Some(status)) => Some(Err(status.overlay.clone())),
        (_, _, _) => Some(Err(
            no_overlay.unwrap_or_else(|| "the launcher did not report".into())
        )),
    };
    costs::mark("overlay-scan-apply");
    // After the command's changes are applied: a program it built is then in the workspace.
    if shell.sandbox {
        let protected = protected_hint(&finished.stderr.text, ctx.ws);
        // EACCES and EROFS are the exec set's and the read-only world's only where Landlock
        // and the mount namespace were in force.
        let in_force = finished
            .launch
            .as_ref()
            .is_some_and(|s| s.namespaces_ok && matches!(s.landlock.as_str(), "full" | "partial"));
        let facts = hint::Facts {
            stderr: &finished.stderr.text,
            refused: &finished.end.refused,
            network: &shell.network,
            root: &root,
            path_env: &path_env,
            given: given.as_ref().filter(|_| in_force),
        };
        if let Some(line) = hint::line(&facts, protected) {
            hint::append(&mut finished.stderr.text, &line);
        }
    }
    // A command's sneaky.toml is never applied from the overlay: that too is putting it back.
    let config_restored = config_restored
        || matches!(&changes, Some(Ok(a)) if a.discarded.iter().any(|p| p == crate::fs::jail::CONFIG_FILE_NAME));
    // The temp dir goes once the launcher has left, not on the result's way: until then it is
    // a mount point in the launcher's mount namespace, and removing it detaches that mount,
    // which waits for an RCU grace period (0.12 ms of a call's end). `sneaky-run` waits for
    // it before it exits (src/shell/gone.rs).
    finished.launcher_gone.then(move || drop(tmp));
    Ok(Outcome {
        finished,
        env_removed,
        config_restored,
        sandboxed,
        sandbox,
        changes,
    })
}

/// The overlay's upper layer, in the undo history's directory (its spec is the launcher's; a
/// dry run requires it: nothing runs without it, it would change the workspace).
pub(crate) fn hold_changes(
    ws: &Workspace,
    started: overlay::Started,
) -> std::result::Result<overlay::Scratch, String> {
    if std::env::var("SNEAKY_SANDBOX_SKIP")
        .is_ok_and(|v| v.split(',').any(|l| l.trim() == "overlay"))
    {
        return Err("skipped: SNEAKY_SANDBOX_SKIP=overlay".into());
    }
    overlay::Scratch::create(ws, started).map_err(|e| e.message())
}

/// What a command starts from, in the foreground or as a job: its private temporary
/// directory, its environment (and the names kept out of it), the bash that runs it, the
/// PATH the exec set is built from, and the sandbox's private caches of the workspace
/// (writable to it besides the workspace and the temporary directory: [`Setup::grant`]).
pub(crate) struct Setup {
    pub tmp: tmpdir::PrivateTmp,
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    pub env_removed: Vec<String>,
    pub bash: std::path::PathBuf,
    pub path_env: std::ffi::OsString,
    pub caches: Option<std::path::PathBuf>,
}

impl Setup {
    /// Refuses a configuration that asks for layers with the sandbox off. `prefix` names the
    /// temporary directory, `whose` the command in an error ("the command's", "the job's").
    pub(crate) fn new(
        shell: &crate::config::Shell,
        root: &std::path::Path,
        programs: &[String],
        prefix: &str,
        whose: &str,
    ) -> Result<Setup> {
        if !shell.sandbox && shell.require_layers.as_ref().is_some_and(|l| !l.is_empty()) {
            return Err(Error::new(
                ErrorKind::ConfigError,
                "tools.shell.require_layers asks for sandbox layers, but tools.shell.sandbox = false; nothing ran",
            ));
        }
        crate::fs::real::remembered(|| Setup::make(shell, root, programs, prefix, whose))
    }

    fn make(
        shell: &crate::config::Shell,
        root: &std::path::Path,
        programs: &[String],
        prefix: &str,
        whose: &str,
    ) -> Result<Setup> {
        let tmp = tmpdir::PrivateTmp::create(prefix, whose)?;
        let caches = shell.sandbox.then(|| env::private_caches(root)).flatten();
        let (mut env, env_removed) = env::command_env(shell, root, tmp.path(), caches.as_deref());
        if programs.iter().any(|p| p == "cargo") && crate::config::commands::mode(shell).is_strict()
        {
            cargo_target_dir(&mut env, root);
        }
        let bash = env::find_bash(&env)?;
        let path_env = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        Ok(Setup {
            tmp,
            env,
            env_removed,
            bash,
            path_env,
            caches,
        })
    }

    /// The private caches, writable to the command (never executable: what runs is built in
    /// the workspace or the temporary directory).
    pub(crate) fn grant(caches: Option<&std::path::Path>, spec: &mut launch::LaunchSpec) {
        spec.write.extend(caches.map(std::path::Path::to_path_buf));
    }
}

/// In the strict mode cargo builds and runs build scripts and tests from its target directory,
/// which must exist before the call for the sandbox to let it execute: the workspace's
/// `target/` (shared by every crate in it) unless CARGO_TARGET_DIR says otherwise. In the
/// contained mode the whole workspace executes, and each package builds in its own `target/`
/// as it does outside the sandbox.
fn cargo_target_dir(
    env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>,
    root: &std::path::Path,
) {
    if env.iter().any(|(k, _)| k == "CARGO_TARGET_DIR") {
        return;
    }
    let target = root.join("target");
    if std::fs::create_dir_all(&target).is_ok() {
        env.push(("CARGO_TARGET_DIR".into(), target.into_os_string()));
    }
}

/// Which layers were in force, in words, and whether the command counts as sandboxed
/// (Landlock in force: writes confined, the exec allowlist applied).
pub(crate) fn describe(
    shell: &crate::config::Shell,
    status: Option<&LaunchStatus>,
) -> (bool, String) {
    let programs = crate::config::commands::mode(shell).describe();
    if !shell.sandbox {
        return (
            false,
            format!("off (tools.shell.sandbox = false); programs: {programs}"),
        );
    }
    let Some(s) = status else {
        return (false, "unknown: the launcher did not report".into());
    };
    let abi = s.abi.map(|a| format!(" ABI {a}")).unwrap_or_default();
    let exec = match crate::config::commands::mode(shell) {
        crate::config::commands::Mode::Contained => {
            "exec only from /usr, PATH, the library directories, the workspace and the temp dir"
        }
        crate::config::commands::Mode::Strict(_) => "exec only allowed programs",
    };
    // The sandbox's private toolchain caches are writable too (src/shell/env.rs), as are
    // tools.shell.write_paths.
    let writes = "writes only in the workspace, a private temp dir, the sandbox's private \
                  caches and tools.shell.write_paths";
    let landlock = match s.landlock.as_str() {
        "full" => format!("landlock{abi}: {exec}, {writes}"),
        "partial" => {
            format!("landlock{abi} (partial: this kernel lacks some rights): {exec}, {writes}")
        }
        _ => "landlock unavailable (this kernel does not support it)".to_string(),
    };
    let net = match shell.network.hosts() {
        _ if shell.network.all() => String::new(),
        Some(hosts) if s.namespaces.contains("proxy") => format!(
            "; network: only {} through the sandbox's proxy (HTTP_PROXY, HTTPS_PROXY)",
            hosts.join(", ")
        ),
        Some(_) => "; network denied: TCP and UDP (the proxy for tools.shell.network needs the net namespace)".into(),
        None if s.namespaces.contains("shared loopback") => {
            "; network: only the workspace's shared loopback".into()
        }
        None => "; network denied: TCP and UDP".into(),
    };
    let sandboxed = matches!(s.landlock.as_str(), "full" | "partial");
    let boundary = match (shell.container_boundary, &s.container) {
        (false, _) => String::new(),
        (true, Some(found)) => {
            format!("; boundary: the container (tools.shell.container_boundary; {found})")
        }
        (true, None) => "; boundary: the container (tools.shell.container_boundary; no \
                         container marker found here)"
            .into(),
    };
    (
        sandboxed,
        format!(
            "{landlock}; namespaces: {}{net}; seccomp: {}; rlimits; processes: {}; programs: {programs}{boundary}",
            s.namespaces, s.seccomp, s.processes
        ),
    )
}

/// When the command's stderr says a write failed on a read-only file system and the path it
/// names is one of the protected paths, a line naming the key (the kernel's EROFS does not).
fn protected_hint(stderr: &str, ws: &Workspace) -> Option<String> {
    let list = ws.protected_list();
    if list.is_empty() {
        return None;
    }
    let root = ws.root();
    let hit = stderr
        .lines()
        .filter(|l| {
            // EROFS on what exists; what a placeholder (a socket file) answers otherwise.
            [
                "Read-only file system",
                "No such device or address",
                "Not a directory",
                "Device or resource busy",
                "File exists",
            ]
            .iter()
            .any(|m| l.contains(m))
        })
        .flat_map(|l| l.split([' ', ':', '\'', '"', '‘', '’', '`']))
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .find_map(|w| {
            let path = root.join(w.trim_start_matches("./"));
            match list.covering(&path) {
                Some(p) => Some((w.to_string(), p.given.clone())),
                None => ws
                    .protected_reach()
                    .covering(&path)
                    .map(|r| (w.to_string(), r.describe())),
            }
        })?;
    Some(format!(
        "{}sneaky-run: {} is a protected path ({}, protected_paths): commands cannot write it, \
         because a program may run what it holds when the project is opened; \
         protected_paths or extra_protected_paths in your own configuration changes that\n",
        if stderr.is_empty() || stderr.ends_with('\n') {
            ""
        } else {
            "\n"
        },
        hit.0,
        hit.1
    ))
}
