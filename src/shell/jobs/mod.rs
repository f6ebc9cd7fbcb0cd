//! Background jobs: commands that keep running after the call that started them
//! (run_command with `background: true`), read with job_output and fed with job_input.
//!
//! A job runs exactly as a foreground command does (the same policy check, launch spec and
//! launcher: src/shell/sandbox.rs), but its launcher is the child of a supervisor rather than
//! of the `sneaky-run` that was called. The supervisor (`supervisor`) is `sneaky-run` started
//! again with a hidden flag, one per workspace, detached from the caller; it owns the jobs
//! (each in its own PID namespace and pids cgroup, so ending a job takes its whole tree),
//! keeps their output in bounded files (`store`), ends each job at its lease, when the host
//! that started it ends, or when it is itself ended, and leaves once no job has run for a
//! while.
//!
//! The tools talk to it over a Unix socket in a private runtime directory (0700):
//! `$XDG_RUNTIME_DIR/sneaky/jobs-<hash of the root>`, else `/tmp/sneaky-<uid>/…`. One JSON
//! request per connection, answered by one JSON line (progress lines first while a call
//! waits). The supervisor answers only our own binaries in its own PID namespace: a sandboxed
//! command (in a PID namespace of its own, or running another program) is refused, so it
//! cannot start a job with a spec of its own making.

mod changes;
pub mod mirror;
pub mod store;
pub mod supervisor;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::launch::{LaunchSpec, LaunchStatus};
use super::runtime::base_path;
use crate::error::{Error, ErrorKind, Result};
use crate::proctable::start_time;

/// The hidden first argument of `sneaky-run` that starts a workspace's supervisor: it
/// detaches and starts the long-lived process ([`DAEMON_FLAG`]).
pub const SUPERVISOR_FLAG: &str = "--sneaky-jobs-supervisor";
/// The hidden first argument of the supervisor process itself.
pub const DAEMON_FLAG: &str = "--sneaky-jobs-daemon";
/// The hidden first argument of the process that holds a workspace's shared loopback.
pub const LOOPBACK_FLAG: &str = "--sneaky-jobs-loopback";
/// Set by a host (sneaky-mcp, sneaky-agent) for the tools it runs: its pid, and for a host
/// that serves many sessions `PID:TAG` with the session's tag. A job started by such a call
/// ends when that process does, or when the host ends the tag ([`end_owner`]).
pub const OWNER_ENV: &str = "SNEAKY_JOB_OWNER";
/// Set to `1` by sneaky-mcp for the run_command calls it runs: a call whose timeout is longer
/// than `tools.shell.yield_after_seconds` starts its command as a job, waits that long, and if
/// the command still runs returns with the job's id (an MCP host gives up waiting on a call
/// after its own limit). From a shell the variable is unset: commands run in the foreground.
pub const YIELD_ENV: &str = "SNEAKY_YIELD";
/// The longest a call waits for a job's output (wait_ms).
pub const MAX_WAIT_MS: u64 = 600_000;
/// The longest input one job_input call writes.
pub const MAX_INPUT_BYTES: usize = 1 << 20;

/// The process that started a job, by pid and start time (a reused pid is not it), and the
/// host's session, when it serves several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: i32,
    pub start: u64,
    #[serde(default)]
    pub tag: Option<String>,
}

impl Owner {
    /// The host named by [`OWNER_ENV`], when it is alive.
    pub fn from_env() -> Option<Owner> {
        let value = std::env::var(OWNER_ENV).ok()?;
        let (pid, tag) = match value.trim().split_once(':') {
            Some((pid, tag)) => (pid, Some(tag.to_string())),
            None => (value.trim(), None),
        };
        let pid: i32 = pid.parse().ok()?;
        Some(Owner {
            pid,
            start: start_time(pid)?,
            tag,
        })
    }

    pub fn alive(&self) -> bool {
        start_time(self.pid) == Some(self.start)
    }
}

/// How a call waits for a job's output and what it reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Wait {
    pub ms: u64,
    /// A regular expression: stop waiting as soon as the new output matches it.
    pub pattern: Option<String>,
    /// Stop waiting as soon as there is any new output (job_output); else wait the whole time
    /// unless the pattern matches or the job ends (run_command).
    pub any_output: bool,
    /// Read from this offset of each stream instead of where the last read stopped.
    pub offset: Option<u64>,
    /// The most bytes of each stream one answer carries.
    pub cap: usize,
    pub strip_escapes: bool,
}

/// What the supervisor needs to start a job: everything a foreground command's runner has
/// after the policy check (the launch spec, the environment, the private temp dir).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartJob {
    pub command: String,
    pub spec: LaunchSpec,
    pub env: Vec<(OsString, OsString)>,
    /// The command's private temporary directory, removed when the job ends.
    #[serde(with = "crate::shell::raw_path::one")]
    pub tmp: PathBuf,
    #[serde(with = "crate::shell::raw_path::one")]
    pub root: PathBuf,
    pub allow_vcs_writes: bool,
    /// The protected paths' placeholders the caller made (src/shell/protect.rs), held by the
    /// supervisor for the job's life.
    #[serde(with = "crate::shell::raw_path::many")]
    pub protected_placeholders: Vec<PathBuf>,
    pub tty: bool,
    pub lease_secs: u64,
    pub owner: Option<Owner>,
    pub wait: Wait,
    /// The overlay that holds the job's changes, applied once it has ended (None: the job
    /// writes the workspace directly, and `changes_unavailable` says why).
    #[serde(default)]
    pub changes: Option<changes::HeldForJob>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Start(Box<StartJob>),
    Read {
        job_id: String,
        wait: Wait,
    },
    Kill {
        job_id: String,
        wait: Wait,
    },
    List,
    /// How the job's sandbox reads in words, from the caller that started it (which has the
    /// configuration the words depend on).
    Describe {
        job_id: String,
        sandboxed: bool,
        sandbox: String,
    },
    Input {
        job_id: String,
        input: String,
        eof: bool,
    },
    /// The asking host's session `tag` ended: end the jobs it started (those whose owner is
    /// the asking process with that tag), and start none for it from now on.
    EndOwner {
        tag: String,
    },
    /// The tools changed these paths of the workspace (root-relative): write them into the
    /// view of every running job (src/shell/jobs/mirror.rs).
    Mirror {
        paths: Vec<String>,
    },
}

/// A job and the output one call read from it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct JobView {
    /// The job's id, for job_output and job_input.
    pub job_id: String,
    /// The command line it runs.
    pub command: String,
    /// New output on stdout since the last read (or from `offset`).
    pub stdout: String,
    /// New output on stderr (empty for a job with a terminal: its stderr is the terminal).
    pub stderr: String,
    /// The job is still running.
    pub running: bool,
    /// Its exit status once it ended; null while it runs or when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it (e.g. "SIGTERM"), if any.
    pub signal: Option<String>,
    /// Why it was ended, when it did not end by itself: "kill" (job_output with kill),
    /// "lease" (tools.shell.max_job_seconds), "host" (the host that started it ended),
    /// "supervisor" (the supervisor was stopped).
    pub ended_by: Option<String>,
    /// With wait_for: whether the output matched it.
    pub matched: Option<bool>,
    /// The offset in each stream where the text above starts.
    pub stdout_offset: u64,
    pub stderr_offset: u64,
    /// Bytes the job has written to each stream so far (the next read starts after what
    /// was returned).
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// Output asked for that is no longer kept (each stream keeps its latest bytes only).
    pub dropped_bytes: u64,
    /// More output is there than one answer carries: read again.
    pub more: bool,
    /// The job runs on a pseudo-terminal.
    pub tty: bool,
    /// The job runs under the Landlock sandbox.
    pub sandboxed: bool,
    /// What the sandbox enforces, or why there is none.
    pub sandbox: String,
    /// Milliseconds since the job started.
    pub elapsed_ms: u64,
    /// Seconds left before its lease ends it (null once it ended).
    pub lease_left_s: Option<u64>,
    /// The job's changes to the workspace are held aside while it runs, as a command's are,
    /// and applied as one change (`change_id`) once it has ended: until then neither the
    /// workspace nor other commands see them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changes_held: bool,
    /// Once the job has ended and its changes were applied: the workspace files it created,
    /// modified or deleted, paths git ignores left out, as run_command's `changes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<crate::shell::overlay::Changed>>,
    /// The paths git ignores that the job changed: applied as they are, not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<crate::shell::overlay::Changed>,
    /// Changes no tool may make (under .git, the workspace's sneaky.toml, protected paths):
    /// not applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<String>,
    /// What of the job's changes was applied reduced, or not at all, as run_command's
    /// `reduced`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reduced: Vec<crate::shell::overlay::Reduced>,
    #[serde(flatten)]
    pub undo: crate::fs::history::Undoable,
    /// Why the job's changes were not held, or could not be applied (then where they are
    /// kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_unavailable: Option<String>,
}

/// A job as `job_output {"list": true}` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct JobInfo {
    pub job_id: String,
    pub command: String,
    /// When it started, in seconds since the Unix epoch.
    pub started: u64,
    /// "running" or "exited".
    pub state: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub ended_by: Option<String>,
    pub tty: bool,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub lease_left_s: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// While a call waits: bytes of output the job has written so far.
    Progress(u64),
    Job(Box<JobView>),
    /// A job just started, with the launcher's report.
    Started(Box<JobView>, Option<Box<LaunchStatus>>),
    List(Vec<JobInfo>),
    Done,
    Written(u64),
    Error {
        code: String,
        message: String,
    },
}

impl Reply {
    pub fn error(e: &Error) -> Reply {
        Reply::Error {
            code: e.code().to_string(),
            message: e.message(),
        }
    }
}

/// The private directory of this user's supervisors: `$XDG_RUNTIME_DIR/sneaky`, else
/// `/tmp/sneaky-<uid>`; made 0700, and refused unless it is ours and closed to others.
fn runtime_base() -> Result<PathBuf> {
    let base = base_path();
    private_dir(&base)?;
    Ok(base)
}

/// The name of a workspace's directory: a digest of its root.
fn dir_name(root: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("jobs-{hex}")
}

fn private_dir(dir: &Path) -> Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Error::io(format!("creating {}", dir.display()), e)),
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    let uid = nix::unistd::geteuid().as_raw();
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "{} is not a private directory of this user (mode 0700): background jobs keep \
                 their state there; remove it or set XDG_RUNTIME_DIR",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// The workspace's runtime directory (made when `create`).
pub fn workspace_dir(root: &Path, create: bool) -> Result<PathBuf> {
    let dir = runtime_base()?.join(dir_name(root));
    if create {
        private_dir(&dir)?;
    }
    Ok(dir)
}

fn socket_path(dir: &Path) -> PathBuf {
    dir.join("sock")
}

/// The file where the supervisor names its loopback's holder ("PID START").
fn loopback_path(dir: &Path) -> PathBuf {
    dir.join("loopback")
}

/// The workspace's runtime directory when it exists and it and its parent are ours and
/// closed to others; made by nobody.
fn existing_workspace_dir(root: &Path) -> Option<PathBuf> {
    let base = base_path();
    let dir = base.join(dir_name(root));
    let uid = nix::unistd::geteuid().as_raw();
    let ours = |p: &Path| {
        std::fs::symlink_metadata(p)
            .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0)
    };
    (ours(&base) && ours(&dir)).then_some(dir)
}

/// The workspace's shared loopback, while its supervisor runs: the holder's pid and start
/// time, for a command's launcher to join (src/shell/namespaces.rs checks them again). Asks
/// nothing and creates nothing: a workspace without jobs has none.
pub fn loopback(root: &Path) -> Option<(i32, u64)> {
    let dir = existing_workspace_dir(root)?;
    let uid = nix::unistd::geteuid().as_raw();
    // Only a directory of ours that nobody else can write names it, and only a holder of ours.
    let text = std::fs::read_to_string(loopback_path(&dir)).ok()?;
    let (pid, start) = text.trim().split_once(' ')?;
    let holder: (i32, u64) = (pid.parse().ok()?, start.parse().ok()?);
    let owner = std::fs::metadata(format!("/proc/{}", holder.0)).ok()?.uid();
    (owner == uid && start_time(holder.0) == Some(holder.1)).then_some(holder)
}

/// Ask the workspace's supervisor. With `start`, one is started when none answers (only a
/// job's start needs one); otherwise no supervisor means no job, which is `not_found`.
/// `progress` receives the byte counts the supervisor reports while the call waits.
pub fn ask(
    root: &Path,
    request: &Request,
    start: bool,
    progress: Option<&AtomicU64>,
) -> Result<Reply> {
    let dir = workspace_dir(root, start)?;
    let stream = match UnixStream::connect(socket_path(&dir)) {
        Ok(s) => s,
        Err(_) if start => start_supervisor(&dir)?,
        Err(_) => return Err(no_jobs(request)),
    };
    exchange(stream, request, progress)
}

fn no_jobs(request: &Request) -> Error {
    match request {
        Request::Read { job_id, .. }
        | Request::Kill { job_id, .. }
        | Request::Input { job_id, .. } => Error::new(
            ErrorKind::NotFound,
            format!("no job {job_id} in this workspace (no job runs here)"),
        ),
        _ => Error::new(ErrorKind::NotFound, "no job runs in this workspace"),
    }
}

fn exchange(
    mut stream: UnixStream,
    request: &Request,
    progress: Option<&AtomicU64>,
) -> Result<Reply> {
    let lost = |e: std::io::Error| Error::io("talking to the job supervisor", e);
    let mut line = serde_json::to_vec(request)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("job request: {e}")))?;
    line.push(b'\n');
    stream.write_all(&line).map_err(lost)?;
    let mut reader = BufReader::new(stream);
    loop {
        let mut answer = String::new();
        if reader.read_line(&mut answer).map_err(lost)? == 0 {
            return Err(Error::new(
                ErrorKind::IoError,
                "the job supervisor ended without answering",
            ));
        }
        let reply: Reply = serde_json::from_str(&answer).map_err(|e| {
            Error::new(ErrorKind::Internal, format!("job supervisor's answer: {e}"))
        })?;
        match reply {
            Reply::Progress(bytes) => {
                if let Some(p) = progress {
                    p.store(bytes, Ordering::Relaxed);
                }
            }
            Reply::Error { code, message } => {
                let kind = ErrorKind::from_code(&code).unwrap_or(ErrorKind::Internal);
                return Err(Error::new(kind, message));
            }
            other => return Ok(other),
        }
    }
}

/// How long a starting supervisor may take to listen.
const START_LIMIT: Duration = Duration::from_secs(5);

/// Start the workspace's supervisor and connect to it. It must not stay beneath the caller
/// (a cancelled call's tree is killed, and `sneaky-run` kills its children on a signal): the
/// starter it runs detaches it and exits, and while that happens this process is no child
/// subreaper, so the supervisor goes to init (or an outer subreaper) rather than to us.
fn start_supervisor(dir: &Path) -> Result<UnixStream> {
    let exe = super::sandbox::launcher_path().ok_or_else(|| {
        Error::new(
            ErrorKind::IoError,
            "background jobs need sneaky-run beside this program; install all SneakyCode \
             binaries together",
        )
    })?;
    let was_subreaper = nix::sys::prctl::get_child_subreaper().unwrap_or(false);
    if was_subreaper {
        let _ = nix::sys::prctl::set_child_subreaper(false);
    }
    let started = std::process::Command::new(exe)
        .arg(SUPERVISOR_FLAG)
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if was_subreaper {
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
    started.map_err(|e| Error::io("starting the job supervisor", e))?;
    let deadline = Instant::now() + START_LIMIT;
    loop {
        match UnixStream::connect(socket_path(dir)) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > deadline => {
                return Err(Error::io("connecting to the job supervisor", e))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// End the jobs that this process's session `tag` started in the workspace (sent by a host
/// when a session ends; the supervisor takes the owner's pid from the connection, so a host
/// ends only its own sessions' jobs). Returns at once: the jobs end in the supervisor, and
/// a workspace without a supervisor has none. Written without [`Request`]'s types, which a
/// host that starts no job need not carry.
pub fn end_owner(root: &Path, tag: &str) {
    let Some(dir) = existing_workspace_dir(root) else {
        return;
    };
    let Ok(mut stream) = UnixStream::connect(socket_path(&dir)) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = serde_json::json!({"op": "end_owner", "tag": tag});
    if stream.write_all(format!("{request}\n").as_bytes()).is_ok() {
        // The answer says the supervisor took it; nothing in it is needed.
        let _ = BufReader::new(stream).read_line(&mut String::new());
    }
}

/// What run_command asks of a background start beyond the command.
pub struct Background {
    pub tty: bool,
    pub wait: Wait,
    /// Receives the bytes of output so far while the start waits (progress for a host).
    pub progress: Option<std::sync::Arc<AtomicU64>>,
    /// The job's lease in seconds, when not `tools.shell.max_job_seconds` (a command that
    /// yielded keeps its call's timeout).
    pub lease_secs: Option<u64>,
}

/// Start an approved command line as a background job of the workspace, sandboxed exactly as
/// a foreground command (the same launch spec, environment and launcher), and wait for its
/// first output as `opts.wait` says. Its changes are held aside and applied once it has
/// ended (src/shell/jobs/changes.rs).
// Long: the foreground command's sequence (src/shell/mod.rs, run_with_changes) with the
// supervisor in the middle: the placeholders and the held overlay are made before the launch
// spec names them, and handed to the supervisor with the spec.
pub fn start(
    command: &str,
    programs: &[String],
    opts: Background,
    ctx: super::Context<'_>,
) -> Result<(JobView, Vec<String>)> {
    let shell = &ctx.config.tools.shell;
    let root = ctx.ws.root().to_path_buf();
    let super::Setup {
        tmp,
        env,
        env_removed,
        bash,
        path_env,
        caches,
    } = super::Setup::new(shell, &root, programs, "sneaky-job-", "the job's")?;
    // The placeholders must exist before the launch spec lists what to bind read-only; the
    // supervisor holds its own for as long as the job runs.
    let _placeholders = shell
        .sandbox
        .then(|| super::spec::VcsPlaceholders::make(ctx.config, ctx.ws));
    // The job's changes are held in an overlay like a command's (src/shell/jobs/changes.rs);
    // the placeholders of protected names in the root go in its upper layer.
    let mut scratch = None;
    let mut no_overlay = None;
    if shell.sandbox {
        match super::hold_changes(ctx.ws, super::overlay::Started::now()) {
            Ok(held) => scratch = Some(held),
            Err(why) => {
                let (list, by_default) = shell.required_layers();
                if super::sandbox::overlay_required(&list, by_default) {
                    return Err(super::overlay::unavailable(why));
                }
                no_overlay = Some(why);
            }
        }
    }
    let wanted = if shell.sandbox {
        super::protect::wanted(ctx.ws)
    } else {
        Vec::new()
    };
    let (in_workspace, in_upper) = match scratch.as_mut() {
        Some(held) => (held.place(ctx.ws.root(), wanted), held.placed().to_vec()),
        None => (wanted, Vec::new()),
    };
    let protected = shell
        .sandbox
        .then(|| super::protect::Placeholders::make_at(&in_workspace));
    let job_changes = match scratch.as_mut().map(|held| held.for_job()) {
        Some(Err(e)) => return Err(e),
        Some(Ok(_)) => scratch.as_ref().map(|held| changes::HeldForJob {
            dir: held.dir().to_path_buf(),
            tool_env: changes::tool_env(),
        }),
        None => None,
    };
    let mut spec = if shell.sandbox {
        let mut spec =
            super::spec::launch_spec(ctx.config, ctx.ws, tmp.path(), &bash, &path_env, None)?;
        super::Setup::grant(caches.as_deref(), &mut spec);
        spec
    } else {
        super::spec::unsandboxed_spec(ctx.ws, &bash)
    };
    if let Some(held) = &scratch {
        spec.read_only.extend(in_upper.iter().cloned());
        spec.overlay = Some(held.spec(ctx.ws, false));
    }
    if shell.sandbox {
        // A job outlives the moment its mount view was made: a denied place made later stays
        // unreadable to it through Landlock (src/shell/spec.rs, `carve_reads`).
        let denied: Vec<PathBuf> =
            crate::fs::pathlist::PathList::resolve(&ctx.config.deny_read_list(), &root)
                .patterns
                .iter()
                .map(crate::fs::pathlist::Pattern::literal_path)
                .collect();
        super::spec::carve_reads(&mut spec, &denied);
    }
    // Started without waiting: the supervisor holds the job's lock on the upper layer once it
    // answers, and this call lets go of its own before it waits (below). A job that ends
    // within the wait has its changes applied by the supervisor, which takes that lock.
    let wait = opts.wait;
    let request = Request::Start(Box::new(StartJob {
        command: command.to_string(),
        spec,
        env,
        tmp: tmp.path().to_path_buf(),
        root: root.clone(),
        allow_vcs_writes: ctx.config.allow_vcs_writes,
        protected_placeholders: protected
            .as_ref()
            .map(super::protect::Placeholders::paths)
            .unwrap_or_default(),
        tty: opts.tty,
        lease_secs: opts.lease_secs.unwrap_or(shell.max_job_seconds),
        owner: Owner::from_env(),
        wait: Wait {
            ms: 0,
            pattern: None,
            ..wait.clone()
        },
        changes: job_changes,
    }));
    let reply = match ask(&root, &request, true, None) {
        Ok(reply) => reply,
        Err(e) => {
            if let Some(held) = scratch.as_mut() {
                held.job_refused();
            }
            return Err(e);
        }
    };
    // The supervisor holds the job's lock on the upper layer now; this call's goes.
    if let Some(mut held) = scratch.take() {
        held.command_started();
    }
    // The job's temporary directory is the supervisor's to remove now.
    let _ = tmp.keep();
    let Reply::Started(started, launch) = reply else {
        return Err(Error::new(
            ErrorKind::Internal,
            "unexpected answer from the job supervisor",
        ));
    };
    // The wait, reading the output from its start.
    let read = Request::Read {
        job_id: started.job_id.clone(),
        wait: Wait {
            offset: Some(0),
            ..wait
        },
    };
    let Reply::Job(mut view) = ask(&root, &read, false, opts.progress.as_deref())? else {
        return Err(Error::new(
            ErrorKind::Internal,
            "unexpected answer from the job supervisor",
        ));
    };
    let (sandboxed, sandbox) = super::describe(shell, launch.as_deref());
    if let Some(why) = no_overlay {
        view.changes_unavailable = Some(format!(
            "the job's changes could not be held aside ({why}): it writes the workspace \
             directly, and they cannot be undone"
        ));
    }
    view.sandboxed = sandboxed;
    view.sandbox = sandbox.clone();
    let describe = Request::Describe {
        job_id: view.job_id.clone(),
        sandboxed,
        sandbox,
    };
    // Only later reads' words depend on it; the job runs either way.
    let _ = ask(&root, &describe, false, None);
    Ok((*view, env_removed))
}
