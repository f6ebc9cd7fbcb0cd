//! run_command: run one shell command line in the workspace, after the command policy
//! (src/shell/policy.rs) accepted every part of it, inside the Landlock sandbox
//! (src/shell/sandbox.rs).
//!
//! How it runs: `bash --noprofile --norc -c COMMAND` with the root as working directory, stdin
//! from /dev/null, in a new session (so its own process group, and no terminal), with an
//! environment scrubbed of secret-looking variables and of shell start-up hooks. stdout and
//! stderr are read by two threads into bounded head+tail buffers (`max_output_bytes` each):
//! memory stays bounded however much a command prints. On timeout the whole group gets
//! SIGTERM, then SIGKILL after a grace period; afterwards every process left in the session or
//! group, and every orphan re-parented to us (we are a child subreaper), is killed, so nothing
//! the command started outlives the call. The workspace's `sneaky.toml` is compared before
//! and after, and put back if the command changed it (Landlock cannot protect one file
//! beneath a writable directory).

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Cli, Context, Doc, Hints, Tool, ToolName};
use crate::config::{Shell, MAX_TIMEOUT};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};
use crate::shell::policy;
use crate::shell::sandbox::{self, LaunchSpec, LaunchStatus};

/// Commands this process is running now (launcher pids = their session and group ids), so
/// that a clean-up never takes another concurrent command's processes for orphans (the MCP
/// server runs calls in one process).
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn running() -> Vec<i32> {
    RUNNING.lock().map(|r| r.clone()).unwrap_or_default()
}

/// Longest command line accepted.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Between SIGTERM and SIGKILL on timeout.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to hunt for left-over processes, and to wait for the output pipes to close.
const CLEANUP_LIMIT: Duration = Duration::from_secs(3);
const READ_CHUNK: usize = 64 * 1024;

/// Run a shell command in the workspace root and return its exit code and output. Pipelines
/// (`|`) and lists (`&&`, `||`, `;`) are fine; every program in the line must be allowed by
/// the configuration, and command substitution, variable expansion, `eval`, `sh -c` and
/// similar are refused. Output redirection may only write inside the workspace. Commands run
/// sandboxed: they cannot write outside the workspace (use relative paths).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The shell command line to run, e.g. "cargo test 2>&1 | tail -20" or "git status".
    pub command: String,
    /// Timeout in seconds (default: tools.shell.default_timeout, 30; at most 3600). On
    /// expiry the command and everything it started are killed.
    #[serde(default)]
    pub timeout: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RunResult {
    /// The command's exit status; null when it was killed by a signal (see `signal`).
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The command ran out of time and was killed.
    pub timed_out: bool,
    /// stdout or stderr exceeded max_output_bytes: the head and the tail are kept and the
    /// dropped middle is marked.
    pub truncated: bool,
    /// The signal that ended the command (e.g. "SIGTERM"), if any.
    pub signal: Option<String>,
    /// The command ran under the Landlock sandbox.
    pub sandboxed: bool,
    /// What the sandbox enforced, or why there was none.
    pub sandbox: String,
    /// stdout was not valid UTF-8 and was decoded lossily (U+FFFD replacements).
    pub stdout_lossy: bool,
    /// stderr was not valid UTF-8 and was decoded lossily.
    pub stderr_lossy: bool,
    /// Bytes the command wrote to stdout / stderr, before truncation.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub duration_ms: u64,
    /// The programs the command line runs, as the policy checked them.
    pub programs: Vec<String>,
    /// Environment variables withheld from the command (secret-looking names, shell hooks).
    pub env_removed: Vec<String>,
    /// The command changed the workspace's sneaky.toml and it was put back.
    pub config_restored: bool,
}

pub struct RunCommand;

impl Tool for RunCommand {
    const NAME: ToolName = ToolName::RunCommand;
    const TITLE: &'static str = "Run a shell command";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: true,
    };
    const CLI: Cli = Cli {
        positional: &["command"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        example: r#"{"command": "cargo test --quiet", "timeout": 120}"#,
        pipeline: "sneaky-run 'git status --short' | jq -r '.result.stdout'",
        config: &[
            "max_output_bytes: cap on each of stdout and stderr",
            "tools.shell.allowed_commands, tools.shell.denied_commands: the command policy",
            "tools.shell.default_timeout: seconds when the call gives none",
            "tools.shell.sandbox, tools.shell.network: the Landlock sandbox",
            "tools.shell.pass_env: secret-looking variables passed anyway",
        ],
        env: &[(
            "(credentials)",
            "variables named like *_API_KEY, *_TOKEN, *_SECRET*, *PASSWORD*, AWS_* are not passed to commands",
        )],
    };
    const SCHEMA: &'static str = committed_schema!("run_command");
    type Args = RunArgs;
    type Output = RunResult;

    fn run(args: RunArgs, ctx: &Context) -> Result<RunResult> {
        let shell = &ctx.config.tools.shell;
        let timeout = match args.timeout {
            None => shell.default_timeout,
            Some(0) => return Err(Error::invalid_args("timeout: must be at least 1 second")),
            Some(t) if t > MAX_TIMEOUT => {
                return Err(Error::invalid_args(format!(
                    "timeout: at most {MAX_TIMEOUT} seconds"
                )))
            }
            Some(t) => t,
        };
        let command = args.command;
        if command.trim().is_empty() {
            return Err(Error::invalid_args("command: must not be empty"));
        }
        if command.len() > MAX_COMMAND_BYTES {
            return Err(Error::invalid_args(format!(
                "command: longer than {MAX_COMMAND_BYTES} bytes"
            )));
        }
        if command.contains('\0') {
            return Err(Error::invalid_args("command: contains a NUL character"));
        }
        let approved = policy::check(&command, shell, ctx.ws.root())?;
        let cap = usize::try_from(ctx.config.max_output_bytes).unwrap_or(usize::MAX);
        run_approved(
            &command,
            approved.programs,
            Duration::from_secs(timeout),
            cap,
            ctx,
        )
    }
}

fn run_approved(
    command: &str,
    programs: Vec<String>,
    timeout: Duration,
    cap: usize,
    ctx: &Context,
) -> Result<RunResult> {
    let shell = &ctx.config.tools.shell;
    let root = ctx.ws.root().to_path_buf();
    let tmp = tempfile::Builder::new()
        .prefix("sneaky-run-")
        .tempdir()
        .map_err(|e| Error::io("creating the command's temporary directory", e))?;
    let (env, env_removed) = command_env(shell, &root, tmp.path());
    let bash = find_bash(&env)?;
    let config_before = ConfigSnapshot::take(&ctx.ws);

    // Orphans of the command are re-parented to us, so that none escapes the clean-up.
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let children_before = our_children();

    let launcher = sandbox::launcher_path();
    let mut cmd = match &launcher {
        Some(exe) => {
            let spec = LaunchSpec {
                landlock: shell.sandbox,
                read: read_paths(shell, &root, tmp.path())?,
                write: write_paths(shell, &root, tmp.path())?,
                network: shell.network,
                shell: bash,
            };
            let spec = serde_json::to_string(&spec)
                .map_err(|e| Error::new(ErrorKind::Internal, format!("launch spec: {e}")))?;
            let mut c = Command::new(exe);
            c.arg(sandbox::LAUNCH_FLAG).arg(spec).arg(command);
            c
        }
        None if shell.sandbox => {
            return Err(Error::new(
                ErrorKind::IoError,
                "the sandbox launcher (sneaky-run) was not found beside this program; \
                 install all SneakyCode binaries together or set tools.shell.sandbox = false",
            ))
        }
        None => {
            let mut c = Command::new(bash);
            c.args(["--noprofile", "--norc", "-c", command])
                .process_group(0);
            c
        }
    };
    cmd.current_dir(&root)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());

    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::io("starting the command", e))?;
    let pid = Pid::from_raw(child.id() as i32);
    if let Ok(mut r) = RUNNING.lock() {
        r.push(pid.as_raw());
    }
    let own_session = launcher.is_some();
    let stdout = Stream::start(child.stdout.take(), cap, false);
    let stderr = Stream::start(child.stderr.take(), cap, own_session);
    // Progress lines for a host that asked for them (sneaky-mcp; see crate::isolate).
    let progress = crate::isolate::ProgressReporter::from_env({
        let (out, err) = (Arc::clone(&stdout.shared), Arc::clone(&stderr.shared));
        move || lock(&out).capture.total + lock(&err).capture.total
    });

    let (status, timed_out) =
        wait_with_timeout(child, pid, own_session, &children_before, timeout)?;
    drop(progress);
    kill_leftovers(pid, own_session, &children_before);
    if let Ok(mut r) = RUNNING.lock() {
        r.retain(|p| *p != pid.as_raw());
    }
    let deadline = Instant::now() + CLEANUP_LIMIT;
    stdout.wait(deadline);
    stderr.wait(deadline);
    let duration_ms = started.elapsed().as_millis() as u64;

    let launch = stderr.status();
    if let Some(LaunchStatus {
        error: Some(why), ..
    }) = &launch
    {
        return Err(Error::new(
            ErrorKind::IoError,
            format!("the sandbox could not be set up, nothing ran: {why}"),
        ));
    }
    let config_restored = config_before.restore_if_changed(&ctx.ws)?;
    let (sandboxed, sandbox) = describe_sandbox(shell, launcher.is_some(), launch.as_ref());
    let out = stdout.finish();
    let err = stderr.finish();
    Ok(RunResult {
        exit_code: status.code(),
        signal: status.signal().map(signal_name),
        timed_out,
        truncated: out.truncated || err.truncated,
        stdout: out.text,
        stderr: err.text,
        sandboxed,
        sandbox,
        stdout_lossy: out.lossy,
        stderr_lossy: err.lossy,
        stdout_bytes: out.total,
        stderr_bytes: err.total,
        duration_ms,
        programs,
        env_removed,
        config_restored,
    })
}

fn describe_sandbox(
    shell: &Shell,
    launcher: bool,
    status: Option<&LaunchStatus>,
) -> (bool, String) {
    if !shell.sandbox {
        return (false, "off (tools.shell.sandbox = false)".into());
    }
    let Some(status) = status.filter(|_| launcher) else {
        return (false, "unknown: the launcher did not report".into());
    };
    let abi = status.abi.map(|a| format!(" ABI {a}")).unwrap_or_default();
    let net = if shell.network { "" } else { "; TCP denied" };
    match status.enforced.as_str() {
        "full" => (
            true,
            format!("landlock{abi}: writes only beneath the workspace, a private temp dir and /dev/null{net}"),
        ),
        "partial" => (
            true,
            format!("landlock{abi} (partial: this kernel lacks some rights): writes only beneath the workspace, a private temp dir and /dev/null{net}"),
        ),
        _ => (false, "unavailable: this kernel does not support Landlock".into()),
    }
}

fn signal_name(n: i32) -> String {
    Signal::try_from(n)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {n}"))
}

/// Wait for the command; on timeout SIGTERM to everything it started, then SIGKILL.
fn wait_with_timeout(
    mut child: Child,
    pid: Pid,
    own_session: bool,
    children_before: &HashSet<i32>,
    timeout: Duration,
) -> Result<(ExitStatus, bool)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let gone = |e: RecvTimeoutError| {
        Error::new(
            ErrorKind::Internal,
            format!("lost the command's exit status: {e}"),
        )
    };
    let status = match rx.recv_timeout(timeout) {
        Ok(s) => {
            return s
                .map(|s| (s, false))
                .map_err(|e| Error::io("waiting for the command", e))
        }
        Err(RecvTimeoutError::Timeout) => {
            signal_everything(pid, own_session, children_before, Signal::SIGTERM);
            match rx.recv_timeout(KILL_GRACE) {
                Ok(s) => s,
                Err(RecvTimeoutError::Timeout) => {
                    signal_everything(pid, own_session, children_before, Signal::SIGKILL);
                    rx.recv_timeout(CLEANUP_LIMIT).map_err(gone)?
                }
                Err(e) => return Err(gone(e)),
            }
        }
        Err(e) => return Err(gone(e)),
    };
    status
        .map(|s| (s, true))
        .map_err(|e| Error::io("waiting for the command", e))
}

/// Send a signal to the command's process group and to every process that belongs to it.
fn signal_everything(pid: Pid, own_session: bool, children_before: &HashSet<i32>, sig: Signal) {
    let _ = killpg(pid, sig);
    for p in members(pid, own_session, children_before) {
        let _ = kill(Pid::from_raw(p), sig);
    }
}

/// Kill whatever the command left behind (background jobs, daemons that changed their group
/// or session) and reap the orphans that were re-parented to us.
fn kill_leftovers(pid: Pid, own_session: bool, children_before: &HashSet<i32>) {
    let deadline = Instant::now() + CLEANUP_LIMIT;
    loop {
        let _ = killpg(pid, Signal::SIGKILL);
        let left = members(pid, own_session, children_before);
        for p in &left {
            let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
        }
        reap_orphans(children_before);
        if left.is_empty() || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn reap_orphans(children_before: &HashSet<i32>) {
    use nix::sys::wait::{waitpid, WaitPidFlag};
    // Never another running command's own child: its waiting thread must get its status.
    let others = running();
    for p in our_children() {
        if !children_before.contains(&p) && !others.contains(&p) {
            let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// (pid, state, ppid, pgrp, session) of every process, from /proc.
fn processes() -> Vec<(i32, char, i32, i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name may hold spaces and parentheses: fields start after the last ')'.
        let rest = stat.get(stat.rfind(')')? + 2..)?;
        let mut f = rest.split(' ');
        let state = f.next()?.chars().next()?;
        let ppid = f.next()?.parse().ok()?;
        let pgrp = f.next()?.parse().ok()?;
        let session = f.next()?.parse().ok()?;
        Some((pid, state, ppid, pgrp, session))
    })
    .collect()
}

/// Our child processes, from /proc/self/task/*/children (cheaper than a scan of /proc);
/// falls back to the scan where that file does not exist.
fn our_children() -> HashSet<i32> {
    let me = std::process::id() as i32;
    let from_tasks = std::fs::read_dir("/proc/self/task").ok().map(|tasks| {
        tasks
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
            .flat_map(|text| {
                text.split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect::<Vec<i32>>()
            })
            .collect::<HashSet<i32>>()
    });
    match from_tasks {
        Some(set) if std::path::Path::new(&format!("/proc/{me}/task/{me}/children")).exists() => {
            set
        }
        _ => processes()
            .into_iter()
            .filter(|p| p.2 == me)
            .map(|p| p.0)
            .collect(),
    }
}

/// Live processes that belong to the command: its group, its session (when it has its own),
/// and orphans re-parented to us since it started (but not another running command's own
/// processes or orphans).
fn members(pid: Pid, own_session: bool, children_before: &HashSet<i32>) -> Vec<i32> {
    let me = std::process::id() as i32;
    let id = pid.as_raw();
    let others: Vec<i32> = running().into_iter().filter(|p| *p != id).collect();
    processes()
        .into_iter()
        .filter(|&(p, state, ppid, pgrp, session)| {
            let orphan = ppid == me
                && !children_before.contains(&p)
                && !others.contains(&p)
                && !others.contains(&session)
                && !others.contains(&pgrp);
            p != me && state != 'Z' && (pgrp == id || (own_session && session == id) || orphan)
        })
        .map(|p| p.0)
        .collect()
}

/// The environment for commands: the caller's, minus secret-looking variables (unless
/// listed in tools.shell.pass_env) and minus everything that makes bash run code at start-up
/// or changes how it reads the line; PATH without relative entries or entries inside the
/// root; TMPDIR pointing at the private temporary directory.
fn command_env(shell: &Shell, root: &Path, tmp: &Path) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut env = Vec::new();
    let mut removed = Vec::new();
    for (name, value) in std::env::vars_os() {
        let text = name.to_string_lossy().into_owned();
        if is_shell_hook(&text) || (is_secret(&text) && !shell.pass_env.contains(&text)) {
            removed.push(text);
            continue;
        }
        if matches!(text.as_str(), "PATH" | "TMPDIR" | "TMP" | "TEMP") {
            continue;
        }
        env.push((name, value));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_absolute() && !d.starts_with(root))
        .collect();
    let path = std::env::join_paths(dirs).unwrap_or_else(|_| "/usr/bin:/bin".into());
    env.push(("PATH".into(), path));
    for name in ["TMPDIR", "TMP", "TEMP"] {
        env.push((name.into(), tmp.as_os_str().to_owned()));
    }
    removed.sort();
    (env, removed)
}

/// Variables that make bash run code or parse differently: never passed.
fn is_shell_hook(name: &str) -> bool {
    matches!(
        name,
        "BASH_ENV"
            | "ENV"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "IFS"
            | "CDPATH"
            | "GLOBIGNORE"
            | "PROMPT_COMMAND"
            | "PS4"
            | "BASH_XTRACEFD"
            | "BASH_COMPAT"
            | "EXECIGNORE"
            | "LD_PRELOAD"
            | "LD_AUDIT"
    ) || name.starts_with("BASH_FUNC_")
}

/// Names that look like credentials: `*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`,
/// `AWS_*`, `*_KEY`, auth sockets …
pub fn is_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "AUTH",
        "COOKIE",
        "SESSION_KEY",
    ];
    const PREFIXES: &[&str] = &[
        "AWS_",
        "AZURE_",
        "GCP_",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SSH_AUTH_SOCK",
    ];
    PARTS.iter().any(|p| n.contains(p))
        || PREFIXES.iter().any(|p| n.starts_with(p))
        || n.ends_with("_KEY")
        || n.ends_with("_PAT")
}

fn find_bash(env: &[(OsString, OsString)]) -> Result<PathBuf> {
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let mut candidates = vec![PathBuf::from("/bin/bash"), PathBuf::from("/usr/bin/bash")];
    if let Some(p) = path {
        candidates.extend(std::env::split_paths(&p).map(|d| d.join("bash")));
    }
    candidates.into_iter().find(|c| c.is_file()).ok_or_else(|| {
        Error::new(
            ErrorKind::IoError,
            "bash was not found (run_command needs it)",
        )
    })
}

fn absolute_paths(list: &[String], key: &str) -> Result<Vec<PathBuf>> {
    list.iter()
        .map(|p| {
            let path = PathBuf::from(p);
            if path.is_absolute() {
                Ok(path)
            } else {
                Err(Error::new(
                    ErrorKind::ConfigError,
                    format!("tools.shell.{key}: {p} is not an absolute path"),
                ))
            }
        })
        .collect()
}

fn read_paths(shell: &Shell, root: &Path, tmp: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = match &shell.read_paths {
        None => vec![PathBuf::from("/")],
        Some(list) => absolute_paths(list, "read_paths")?,
    };
    paths.push(root.to_path_buf());
    paths.push(tmp.to_path_buf());
    Ok(paths)
}

fn write_paths(shell: &Shell, root: &Path, tmp: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = vec![root.to_path_buf(), tmp.to_path_buf()];
    paths.extend(absolute_paths(&shell.write_paths, "write_paths")?);
    Ok(paths)
}

/// One output stream: a reader thread filling a bounded capture.
struct Stream {
    shared: Arc<Mutex<Shared>>,
    done: Option<mpsc::Receiver<()>>,
}

struct Shared {
    capture: Capture,
    status: Option<LaunchStatus>,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Stream {
    fn start<R: Read + Send + 'static>(
        pipe: Option<R>,
        cap: usize,
        launcher_status: bool,
    ) -> Stream {
        let shared = Arc::new(Mutex::new(Shared {
            capture: Capture::new(cap),
            status: None,
        }));
        let Some(mut pipe) = pipe else {
            return Stream { shared, done: None };
        };
        let (tx, rx) = mpsc::channel();
        let s = Arc::clone(&shared);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            // The launcher's status line comes first on stderr; collect it before the rest.
            let mut pending: Option<Vec<u8>> = launcher_status.then(Vec::new);
            loop {
                let n = match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut shared = lock(&s);
                match pending.as_mut() {
                    None => shared.capture.push(&buf[..n]),
                    Some(p) => {
                        p.extend_from_slice(&buf[..n]);
                        if let Some((status, rest)) = split_status(p) {
                            shared.status = status;
                            shared.capture.push(&rest);
                            pending = None;
                        }
                    }
                }
            }
            if let Some(p) = pending {
                lock(&s).capture.push(&p);
            }
            let _ = tx.send(());
        });
        Stream {
            shared,
            done: Some(rx),
        }
    }

    fn wait(&self, deadline: Instant) {
        if let Some(rx) = &self.done {
            let _ = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        }
    }

    fn status(&self) -> Option<LaunchStatus> {
        lock(&self.shared).status.clone()
    }

    fn finish(&self) -> Captured {
        lock(&self.shared).capture.finish()
    }
}

/// Split the launcher's status line off the start of stderr once it is complete (or once it
/// is clear there is none). None while more bytes are needed.
fn split_status(p: &[u8]) -> Option<(Option<LaunchStatus>, Vec<u8>)> {
    let prefix = sandbox::STATUS_PREFIX;
    let n = p.len().min(prefix.len());
    if p[..n] != prefix[..n] {
        return Some((None, p.to_vec()));
    }
    if p.len() < prefix.len() {
        return None;
    }
    match p.iter().position(|&b| b == b'\n') {
        Some(end) => {
            let status = serde_json::from_slice(&p[prefix.len()..end]).ok();
            Some((status, p[end + 1..].to_vec()))
        }
        None if p.len() > 4096 => Some((None, p.to_vec())),
        None => None,
    }
}

/// The first and last bytes of a stream, at most `cap` in all, and how many there were.
struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

struct Captured {
    text: String,
    truncated: bool,
    lossy: bool,
    total: u64,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        let head_cap = cap / 2;
        Capture {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        let room = self.head_cap - self.head.len();
        let (to_head, rest) = data.split_at(room.min(data.len()));
        self.head.extend_from_slice(to_head);
        if rest.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    fn finish(&self) -> Captured {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let kept = (self.head.len() + tail.len()) as u64;
        if kept == self.total {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            let (text, lossy) = decode(&all);
            return Captured {
                text,
                truncated: false,
                lossy,
                total: self.total,
            };
        }
        // Cut at character boundaries so that the cuts themselves do not look like bad UTF-8.
        let head = &self.head[..utf8_prefix_end(&self.head)];
        let skip = tail
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        let tail = &tail[skip..];
        let dropped = self.total - (head.len() + tail.len()) as u64;
        let (h, hl) = decode(head);
        let (t, tl) = decode(tail);
        Captured {
            text: format!(
                "{h}\n[… {dropped} bytes dropped: output exceeded max_output_bytes …]\n{t}"
            ),
            truncated: true,
            lossy: hl || tl,
            total: self.total,
        }
    }
}

fn decode(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8_lossy(bytes) {
        std::borrow::Cow::Borrowed(s) => (s.to_string(), false),
        std::borrow::Cow::Owned(s) => (s, true),
    }
}

/// Length of `b` without a trailing incomplete UTF-8 sequence.
fn utf8_prefix_end(b: &[u8]) -> usize {
    for back in 1..=3.min(b.len()) {
        let byte = b[b.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead
        }
        let need = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return b.len(),
        };
        return if need > back { b.len() - back } else { b.len() };
    }
    b.len()
}

/// The workspace's sneaky.toml before the command ran, to put it back if the command changed
/// it (Landlock rules can only add rights beneath the root, not take one file out). Compared
/// by inode, type and content, so a rename over it or a link swapped in counts as a change.
struct ConfigSnapshot {
    /// None: unknown (unreadable or too big) — then nothing is compared.
    state: Option<ConfigState>,
}

#[derive(PartialEq, Eq)]
enum ConfigState {
    Absent,
    File {
        content: Vec<u8>,
        mode: u32,
        ino: u64,
    },
    Link {
        target: OsString,
        ino: u64,
    },
}

impl ConfigSnapshot {
    fn take(ws: &Workspace) -> ConfigSnapshot {
        ConfigSnapshot {
            state: config_state(ws),
        }
    }

    /// True when it had to be put back.
    fn restore_if_changed(&self, ws: &Workspace) -> Result<bool> {
        use nix::fcntl::{openat, OFlag};
        use nix::sys::stat::Mode;
        use nix::unistd::{symlinkat, unlinkat, UnlinkatFlags};
        let Some(before) = &self.state else {
            return Ok(false);
        };
        if config_state(ws).as_ref() == Some(before) {
            return Ok(false);
        }
        let fd = ws.root_fd();
        let fail = |e: nix::errno::Errno| {
            Error::new(
                ErrorKind::IoError,
                format!("the command changed {CONFIG_FILE_NAME} and it could not be restored: {e}"),
            )
        };
        match unlinkat(fd, CONFIG_FILE_NAME, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(nix::errno::Errno::EISDIR) => {
                unlinkat(fd, CONFIG_FILE_NAME, UnlinkatFlags::RemoveDir).map_err(fail)?
            }
            Err(e) => return Err(fail(e)),
        }
        match before {
            ConfigState::Absent => {}
            ConfigState::Link { target, .. } => {
                symlinkat(target.as_os_str(), fd, CONFIG_FILE_NAME).map_err(fail)?
            }
            ConfigState::File { content, mode, .. } => {
                let file = openat(
                    fd,
                    CONFIG_FILE_NAME,
                    OFlag::O_WRONLY
                        | OFlag::O_CREAT
                        | OFlag::O_EXCL
                        | OFlag::O_NOFOLLOW
                        | OFlag::O_CLOEXEC,
                    Mode::from_bits_truncate(*mode & 0o7777),
                )
                .map_err(fail)?;
                let mut file = std::fs::File::from(file);
                std::io::Write::write_all(&mut file, content)
                    .map_err(|e| Error::io(format!("restoring {CONFIG_FILE_NAME}"), e))?;
            }
        }
        Ok(true)
    }
}

fn config_state(ws: &Workspace) -> Option<ConfigState> {
    use nix::fcntl::{readlinkat, AtFlags};
    use nix::sys::stat::fstatat;
    let st = match fstatat(ws.root_fd(), CONFIG_FILE_NAME, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(nix::errno::Errno::ENOENT) => return Some(ConfigState::Absent),
        Err(_) => return None,
    };
    let ino = st.st_ino;
    match crate::fs::jail::Kind::from_mode(st.st_mode) {
        crate::fs::jail::Kind::Symlink => {
            let target = readlinkat(ws.root_fd(), CONFIG_FILE_NAME).ok()?;
            Some(ConfigState::Link { target, ino })
        }
        crate::fs::jail::Kind::File => {
            let rel = ws.relative(CONFIG_FILE_NAME).ok()?;
            let file = ws.open_read(&rel).ok()?;
            let mut content = Vec::new();
            file.take(1024 * 1024 + 1).read_to_end(&mut content).ok()?;
            (content.len() <= 1024 * 1024).then_some(ConfigState::File {
                content,
                mode: st.st_mode,
                ino,
            })
        }
        // A directory or device there is not a config; anything else is left alone.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::new(10);
        c.push(b"0123456789abcdef");
        c.push(b"XYZ");
        let out = c.finish();
        assert!(out.truncated);
        assert_eq!(out.total, 19);
        assert!(out.text.starts_with("01234\n"), "{}", out.text);
        assert!(out.text.ends_with("\nefXYZ"), "{}", out.text);
        assert!(out.text.contains("9 bytes dropped"), "{}", out.text);
        let mut small = Capture::new(10);
        small.push(b"hello");
        let out = small.finish();
        assert_eq!((out.text.as_str(), out.truncated), ("hello", false));
    }

    #[test]
    fn cuts_fall_on_characters() {
        let mut c = Capture::new(6);
        c.push("ééééééééé".as_bytes());
        let out = c.finish();
        assert!(!out.lossy, "{}", out.text);
        let mut bad = Capture::new(100);
        bad.push(b"ok\xff");
        assert!(bad.finish().lossy);
    }

    #[test]
    fn secrets_are_recognised() {
        for n in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_REGION",
            "DB_PASSWORD",
            "MY_SECRET_X",
            "SSH_AUTH_SOCK",
        ] {
            assert!(is_secret(n), "{n}");
        }
        for n in ["PATH", "HOME", "CARGO_HOME", "LANG", "TERM", "USER"] {
            assert!(!is_secret(n), "{n}");
        }
    }
}
