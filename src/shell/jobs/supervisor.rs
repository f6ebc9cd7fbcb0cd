//! The supervisor of a workspace's background jobs (see the module above for its place).
//!
//! Threads: the main thread starts every job's launcher (a launcher's parent-death signal
//! fires when the thread that started it ends, so that thread lives as long as the process);
//! one thread accepts connections and runs each request on a thread of its own; per job, a
//! waiter and a reader per output stream; a watcher ends jobs at their lease or when their
//! host is gone, and ends the supervisor once nothing has run for [`LINGER`]; a signal thread
//! ends every job and the supervisor on SIGTERM, SIGINT or SIGHUP. Killed outright, the
//! supervisor takes its jobs with it all the same: each launcher dies with it
//! (PR_SET_PDEATHSIG), and with the launcher its PID namespace.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{kill, killpg, SigSet, Signal};
use nix::unistd::Pid;

use super::changes::{self, HeldForJob};
use super::mirror::View;
use super::store::{self, Store};
use super::{JobInfo, JobView, Owner, Reply, Request, StartJob, Wait, MAX_INPUT_BYTES};
use crate::error::{Error, ErrorKind, Result};
use crate::proctable;
use crate::shell::cgroup::PidsCgroup;
use crate::shell::launch::{self, LaunchStatus};
use crate::shell::spec::VcsPlaceholders;

/// How long the supervisor stays once no job runs and nobody asked anything.
const LINGER: Duration = Duration::from_secs(120);
/// How often leases, hosts and idleness are checked.
const TICK: Duration = Duration::from_millis(100);
/// Between SIGTERM and SIGKILL when a job is ended.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long a call waits for a job's output to be complete once it exited.
const DRAIN_LIMIT: Duration = Duration::from_secs(3);
/// How long a start waits for the launcher's report (the sandbox set up, or why not).
const REPORT_LIMIT: Duration = Duration::from_secs(10);
/// How often a waiting call hears about progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Jobs running at once in a workspace.
const MAX_RUNNING: usize = 100;
/// Ended jobs remembered (their output readable); the oldest are forgotten first.
const MAX_ENDED: usize = 100;
/// How long writing input waits for a job that does not read it.
const INPUT_LIMIT: Duration = Duration::from_secs(5);

/// `sneaky-run --sneaky-jobs-supervisor DIR`: start the supervisor in a session of its own
/// and leave at once, so that it is nobody's child but init's (or an outer subreaper's).
pub fn starter_main(mut args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let Some(dir) = args.next() else {
        return ExitCode::from(2);
    };
    let _ = nix::unistd::setsid();
    let Ok(exe) = std::env::current_exe() else {
        return ExitCode::from(1);
    };
    let spawned = Command::new(exe)
        .arg(super::DAEMON_FLAG)
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// A job's state, behind the supervisor's one lock.
struct Job {
    id: String,
    command: String,
    started: Instant,
    started_unix: u64,
    lease: Duration,
    owner: Option<Owner>,
    tty: bool,
    /// The launcher: its process group and session are the job's.
    pid: i32,
    /// stdout, stderr.
    out: [Store; 2],
    /// Where the last read stopped, per stream.
    cursor: [u64; 2],
    /// Output streams still open.
    open: u8,
    /// How the launcher ended (its status mirrors the shell's).
    exit: Option<std::process::ExitStatus>,
    ended_by: Option<&'static str>,
    launch: Option<LaunchStatus>,
    /// The overlay that holds the job's changes, and once it has ended what became of them.
    changes: Option<JobChanges>,
    input: Arc<Mutex<Option<File>>>,
    /// Released once the job has ended: its pids cgroup (dropping it kills what is left in
    /// it), the repository's placeholders, and its private temp dir.
    held: Option<Held>,
    /// Whether the job counts as sandboxed and the layers in words, as the caller that
    /// started it described them from the launcher's report (it has the configuration).
    described: (bool, String),
    dir: PathBuf,
}

/// A job's held changes (src/shell/jobs/changes.rs).
struct JobChanges {
    held: HeldForJob,
    /// The workspace they are applied to.
    root: PathBuf,
    /// Held while the job runs and its changes are applied.
    lock: Option<nix::fcntl::Flock<File>>,
    /// Where the launcher hands over the job's view of the workspace, until it has.
    handover: Option<UnixListener>,
    /// The job's view, into which the workspace's changes are mirrored while it runs.
    view: Option<Arc<Mutex<View>>>,
    /// Once it has ended: applied, or why not.
    outcome: Option<std::result::Result<changes::Outcome, String>>,
}

struct Held {
    cgroup: Option<PidsCgroup>,
    placeholders: Option<VcsPlaceholders>,
    protected: Option<crate::shell::protect::Placeholders>,
    tmp: Option<crate::shell::tmpdir::PrivateTmp>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // The cgroup first: what is left of the job is killed before its files go.
        self.cgroup.take();
        self.placeholders.take();
        self.protected.take();
        self.tmp.take();
    }
}

impl Job {
    fn running(&self) -> bool {
        self.exit.is_none()
    }

    /// Exited, and its output is complete.
    fn finished(&self) -> bool {
        self.exit.is_some() && self.open == 0
    }

    fn totals(&self) -> u64 {
        self.out[0].total() + self.out[1].total()
    }

    fn lease_left(&self) -> Option<u64> {
        self.running()
            .then(|| self.lease.saturating_sub(self.started.elapsed()).as_secs())
    }

    fn exit_code(&self) -> Option<i32> {
        self.exit.and_then(|s| s.code())
    }

    fn signal(&self) -> Option<String> {
        self.exit.and_then(|s| s.signal()).map(|n| {
            Signal::try_from(n)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| format!("signal {n}"))
        })
    }

    fn info(&self) -> JobInfo {
        JobInfo {
            job_id: self.id.clone(),
            command: self.command.clone(),
            started: self.started_unix,
            state: if self.running() { "running" } else { "exited" }.to_string(),
            exit_code: self.exit_code(),
            signal: self.signal(),
            ended_by: self.ended_by.map(str::to_string),
            tty: self.tty,
            stdout_bytes: self.out[0].total(),
            stderr_bytes: self.out[1].total(),
            lease_left_s: self.lease_left(),
        }
    }

    /// What the call reads: each stream from `from`, at most `cap` bytes, never ending
    /// inside a character; with `advance`, the next read starts after it.
    fn view(&mut self, from: [u64; 2], wait: &Wait, matched: Option<bool>) -> JobView {
        let finished = self.finished();
        let mut texts = [String::new(), String::new()];
        let mut starts = [0; 2];
        let mut dropped = 0;
        let mut more = false;
        for i in 0..2 {
            let (start, mut bytes) = self.out[i].read(from[i], wait.cap);
            dropped += start.saturating_sub(from[i]);
            if start + (bytes.len() as u64) < self.out[i].total() {
                more = true;
            }
            if more || !finished {
                bytes.truncate(store::complete_utf8(&bytes));
            }
            let text = String::from_utf8_lossy(&bytes);
            texts[i] = if wait.strip_escapes {
                store::strip_escapes(&text)
            } else {
                text.into_owned()
            };
            starts[i] = start;
            self.cursor[i] = start + bytes.len() as u64;
        }
        let [stdout, stderr] = texts;
        let (sandboxed, sandbox) = self.described.clone();
        JobView {
            job_id: self.id.clone(),
            command: self.command.clone(),
            stdout,
            stderr,
            running: self.running(),
            exit_code: self.exit_code(),
            signal: self.signal(),
            ended_by: self.ended_by.map(str::to_string),
            matched,
            stdout_offset: starts[0],
            stderr_offset: starts[1],
            stdout_bytes: self.out[0].total(),
            stderr_bytes: self.out[1].total(),
            dropped_bytes: dropped,
            more,
            tty: self.tty,
            sandboxed,
            sandbox,
            elapsed_ms: self.started.elapsed().as_millis() as u64,
            lease_left_s: self.lease_left(),
            ..self.changes_view()
        }
    }

    /// What the job's view says of its changes: held while it runs, then what became of them.
    fn changes_view(&self) -> JobView {
        let Some(c) = &self.changes else {
            return JobView::default();
        };
        match &c.outcome {
            None => JobView {
                changes_held: true,
                ..JobView::default()
            },
            Some(Ok(o)) => JobView {
                changes: Some(o.changes.clone()),
                untracked: o.untracked.clone(),
                discarded: o.discarded.clone(),
                reduced: o.reduced.clone(),
                undo: o.undo.clone(),
                ..JobView::default()
            },
            Some(Err(why)) => JobView {
                changes_unavailable: Some(why.clone()),
                ..JobView::default()
            },
        }
    }

    /// Whether the output from `from` matches `re` (in the form the caller reads it).
    fn matches(&self, from: [u64; 2], re: &regex_lite::Regex, strip: bool) -> bool {
        (0..2).any(|i| {
            let (_, bytes) = self.out[i].read(from[i], store::BOUND as usize);
            let text = String::from_utf8_lossy(&bytes);
            if strip {
                re.is_match(&store::strip_escapes(&text))
            } else {
                re.is_match(&text)
            }
        })
    }
}

struct Table {
    jobs: Vec<Job>,
    next: u64,
    last_activity: Instant,
    /// The supervisor is ending: no new job.
    closing: bool,
    /// Hosts' sessions that ended (Request::EndOwner), while their host lives: a start of
    /// theirs still on its way is refused.
    ended_owners: Vec<Owner>,
}

struct Shared {
    table: Mutex<Table>,
    changed: Condvar,
    dir: PathBuf,
    /// A tag that tells this supervisor's job ids from an earlier one's.
    tag: String,
    spawn: Mutex<mpsc::Sender<SpawnOrder>>,
    /// The workspace's shared loopback (its holder's pid and start time), when one could be
    /// made.
    loopback: Option<(i32, u64)>,
}

fn lock(m: &Mutex<Table>) -> MutexGuard<'_, Table> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Table> {
        lock(&self.table)
    }

    fn touch(&self) {
        self.lock().last_activity = Instant::now();
    }
}

fn find<'a>(t: &'a mut Table, id: &str) -> Result<&'a mut Job> {
    t.jobs.iter_mut().find(|j| j.id == id).ok_or_else(|| {
        Error::new(
            ErrorKind::NotFound,
            format!("no job {id} in this workspace (list them with {{\"list\": true}})"),
        )
    })
}

/// A job for the main thread to start; the answer is its id.
struct SpawnOrder {
    start: Box<StartJob>,
    answer: mpsc::Sender<Result<String>>,
}

/// `sneaky-run --sneaky-jobs-daemon DIR`: the supervisor itself.
pub fn daemon_main(mut args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let Some(dir) = args.next().map(PathBuf::from) else {
        return ExitCode::from(2);
    };
    // One supervisor per workspace: the lock is held for the process's life.
    let Ok(lock_file) = File::create(dir.join("lock")) else {
        return ExitCode::from(1);
    };
    let Ok(_held_lock) =
        nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock)
    else {
        return ExitCode::SUCCESS;
    };
    let mut signals = SigSet::empty();
    for s in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        signals.add(s);
    }
    if signals.thread_block().is_err() {
        return ExitCode::from(1);
    }
    let socket = super::socket_path(&dir);
    let _ = std::fs::remove_file(&socket);
    let Ok(listener) = UnixListener::bind(&socket) else {
        return ExitCode::from(1);
    };
    // Held (with the pipe whose end tells the holder to go) for the supervisor's life.
    let holder = start_loopback(&dir);
    let loopback = holder.as_ref().map(|h| h.1);
    let (spawn_tx, spawn_rx) = mpsc::channel::<SpawnOrder>();
    let tag = format!(
        "{:04x}",
        (SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros() as u64
            ^ u64::from(std::process::id()))
            & 0xffff
    );
    let shared = Arc::new(Shared {
        table: Mutex::new(Table {
            jobs: Vec::new(),
            next: 1,
            last_activity: Instant::now(),
            closing: false,
            ended_owners: Vec::new(),
        }),
        changed: Condvar::new(),
        dir,
        tag,
        spawn: Mutex::new(spawn_tx),
        loopback,
    });
    {
        let shared = shared.clone();
        std::thread::spawn(move || accept_loop(&shared, listener));
    }
    {
        let shared = shared.clone();
        std::thread::spawn(move || watch(&shared));
    }
    {
        let shared = shared.clone();
        std::thread::spawn(move || {
            if signals.wait().is_ok() {
                shutdown(&shared);
            }
        });
    }
    // The main thread starts every launcher and lives as long as the process.
    while let Ok(order) = spawn_rx.recv() {
        let started = spawn_job(&shared, order.start);
        let _ = order.answer.send(started);
    }
    drop(holder);
    ExitCode::SUCCESS
}

/// `sneaky-run --sneaky-jobs-loopback`: hold the workspace's shared loopback until the
/// supervisor ends (its end closes our stdin; its death kills us).
pub fn loopback_main() -> ExitCode {
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err()
        || nix::unistd::getppid().as_raw() == 1
    {
        return ExitCode::from(1);
    }
    if let Err(why) = crate::shell::namespaces::hold_loopback() {
        let _ = writeln!(std::io::stderr(), "{why}");
        return ExitCode::from(1);
    }
    let mut out = std::io::stdout();
    if out
        .write_all(b"ready\n")
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::from(1);
    }
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    ExitCode::SUCCESS
}

/// Start the holder of the workspace's shared loopback and name it in the runtime directory
/// for the workspace's commands (src/shell/jobs: `loopback`). None where it cannot be made
/// (no network namespaces here): then every command has a network namespace of its own.
fn start_loopback(dir: &Path) -> Option<(Child, (i32, u64))> {
    let exe = std::env::current_exe().ok()?;
    let mut child = Command::new(exe)
        .arg(super::LOOPBACK_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut ready = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut ready));
    if !matches!(read, Some(Ok(_))) || ready.trim() != "ready" {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    let pid = child.id() as i32;
    let start = super::start_time(pid)?;
    let file = super::loopback_path(dir);
    let partial = dir.join("loopback.new");
    std::fs::write(&partial, format!("{pid} {start}\n")).ok()?;
    std::fs::rename(&partial, &file).ok()?;
    Some((child, (pid, start)))
}

fn accept_loop(shared: &Arc<Shared>, listener: UnixListener) {
    for mut conn in listener.incoming().flatten() {
        if !peer_is_ours(&conn) {
            let refused = Error::new(
                ErrorKind::PermissionDenied,
                "the job supervisor answers only the SneakyCode binaries installed beside it \
                 (sneaky-run, sneaky-jobs, sneaky-input), never a sandboxed command",
            );
            let _ = conn.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = send(&mut conn, &Reply::error(&refused));
            continue;
        }
        shared.touch();
        let shared = shared.clone();
        std::thread::spawn(move || serve(&shared, conn));
    }
}

/// Only our own binaries, in our own PID namespace, may ask: a sandboxed command is in a PID
/// namespace of its own (or, where the namespaces are unavailable, runs a program other than
/// ours), and must not start jobs of its own design.
fn peer_is_ours(conn: &UnixStream) -> bool {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let Ok(cred) = getsockopt(&conn.as_fd(), PeerCredentials) else {
        return false;
    };
    if cred.uid() != nix::unistd::geteuid().as_raw() {
        return false;
    }
    let pid = cred.pid();
    let link = |p: String| std::fs::read_link(p).ok();
    let same_ns = link(format!("/proc/{pid}/ns/pid")).is_some()
        && link(format!("/proc/{pid}/ns/pid")) == link("/proc/self/ns/pid".into());
    let exe = link(format!("/proc/{pid}/exe"));
    let ours = std::env::current_exe().ok();
    let beside = match (&exe, &ours) {
        (Some(e), Some(o)) => {
            e.parent() == o.parent()
                && e.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("sneaky-"))
        }
        _ => false,
    };
    same_ns && beside
}

fn serve(shared: &Arc<Shared>, conn: UnixStream) {
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    let Ok(reader) = conn.try_clone() else {
        return;
    };
    let mut line = String::new();
    let mut reader = BufReader::new(reader.take(4 * MAX_INPUT_BYTES as u64 + (1 << 20)));
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut out = conn;
    let reply = match serde_json::from_str::<Request>(&line) {
        Ok(request) => answer(shared, request, &mut out),
        Err(e) => Err(Error::new(ErrorKind::Internal, format!("job request: {e}"))),
    };
    let reply = reply.unwrap_or_else(|e| Reply::error(&e));
    let _ = send(&mut out, &reply);
    shared.touch();
}

fn send(out: &mut UnixStream, reply: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)
}

fn answer(shared: &Arc<Shared>, request: Request, out: &mut UnixStream) -> Result<Reply> {
    match request {
        Request::Start(start) => {
            let wait = start.wait.clone();
            let (tx, rx) = mpsc::channel();
            let order = SpawnOrder { start, answer: tx };
            let sent = shared
                .spawn
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send(order);
            if sent.is_err() {
                return Err(Error::new(
                    ErrorKind::IoError,
                    "the job supervisor is ending",
                ));
            }
            let id = rx
                .recv()
                .map_err(|_| Error::new(ErrorKind::IoError, "the job supervisor is ending"))??;
            receive_view(shared, &id);
            launched(shared, &id)?;
            let view = wait_and_read(shared, &id, &wait, out, Some([0, 0]))?;
            let launch = find(&mut shared.lock(), &id)?.launch.clone();
            Ok(Reply::Started(Box::new(view), launch.map(Box::new)))
        }
        Request::Describe {
            job_id,
            sandboxed,
            sandbox,
        } => {
            find(&mut shared.lock(), &job_id)?.described = (sandboxed, sandbox);
            Ok(Reply::Done)
        }
        Request::Read { job_id, wait } => {
            wait_and_read(shared, &job_id, &wait, out, None).map(|v| Reply::Job(Box::new(v)))
        }
        Request::Kill { job_id, wait } => {
            end_job(shared, &job_id, "kill")?;
            let wait = Wait { ms: 0, ..wait };
            wait_and_read(shared, &job_id, &wait, out, None).map(|v| Reply::Job(Box::new(v)))
        }
        Request::List => Ok(Reply::List(
            shared.lock().jobs.iter().map(Job::info).collect(),
        )),
        Request::Input { job_id, input, eof } => {
            write_input(shared, &job_id, input.into_bytes(), eof).map(Reply::Written)
        }
        Request::EndOwner { tag } => {
            end_owner(shared, out, tag);
            Ok(Reply::Done)
        }
        Request::Mirror { paths } => {
            mirror_jobs(shared, &paths);
            Ok(Reply::Done)
        }
    }
}

/// End the jobs of the asking host's session `tag`: the host is the peer of the connection,
/// so no host ends another's jobs.
fn end_owner(shared: &Arc<Shared>, conn: &UnixStream, tag: String) {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let Ok(cred) = getsockopt(&conn.as_fd(), PeerCredentials) else {
        return;
    };
    let Some(start) = super::start_time(cred.pid()) else {
        return;
    };
    let owner = Owner {
        pid: cred.pid(),
        start,
        tag: Some(tag),
    };
    let due: Vec<String> = {
        let mut t = shared.lock();
        let due = t
            .jobs
            .iter()
            .filter(|j| j.running() && j.ended_by.is_none() && j.owner.as_ref() == Some(&owner))
            .map(|j| j.id.clone())
            .collect();
        if !t.ended_owners.contains(&owner) {
            t.ended_owners.push(owner);
        }
        due
    };
    for id in due {
        let shared = shared.clone();
        std::thread::spawn(move || end_job(&shared, &id, "host"));
    }
}

/// Wait for the launcher's report; a sandbox that could not be set up is the start's error
/// (nothing ran), as for a foreground command, and the job is forgotten.
fn launched(shared: &Shared, id: &str) -> Result<()> {
    let deadline = Instant::now() + REPORT_LIMIT;
    let mut t = shared.lock();
    loop {
        let job = find(&mut t, id)?;
        if let Some(LaunchStatus {
            error: Some(why), ..
        }) = &job.launch
        {
            let why = why.clone();
            // Nothing ran: its overlay holds nothing.
            if let Some(c) = job.changes.as_mut() {
                crate::shell::overlay::job_dropped(&c.held.dir);
                c.lock.take();
            }
            let dropped = forget(&mut t, id);
            drop(t);
            drop(dropped);
            return Err(Error::new(
                ErrorKind::IoError,
                format!("the sandbox could not be set up, nothing ran: {why}"),
            ));
        }
        if job.launch.is_some() || job.finished() || Instant::now() > deadline {
            return Ok(());
        }
        t = shared
            .changed
            .wait_timeout(t, Duration::from_millis(50))
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
}

/// Remove a job from the table with its files; what it still holds is returned, to be dropped
/// without the lock.
fn forget(t: &mut Table, id: &str) -> Option<Held> {
    let i = t.jobs.iter().position(|j| j.id == id)?;
    let mut job = t.jobs.remove(i);
    for s in &mut job.out {
        s.remove();
    }
    let _ = std::fs::remove_dir_all(&job.dir);
    job.held.take()
}

/// Wait as `wait` says, then read. `from`: where to read from instead of the cursor or
/// `wait.offset` (a new job: from the start).
fn wait_and_read(
    shared: &Shared,
    id: &str,
    wait: &Wait,
    out: &mut UnixStream,
    from: Option<[u64; 2]>,
) -> Result<JobView> {
    let re = match &wait.pattern {
        Some(p) => Some(regex_lite::Regex::new(p).map_err(|e| {
            Error::invalid_arg("wait_for", format!("not a valid regular expression: {e}"))
        })?),
        None => None,
    };
    let deadline = Instant::now() + Duration::from_millis(wait.ms.min(super::MAX_WAIT_MS));
    let mut next_progress = Instant::now() + PROGRESS_EVERY;
    let mut t = shared.lock();
    let from = {
        let job = find(&mut t, id)?;
        from.or(wait.offset.map(|o| [o, o])).unwrap_or(job.cursor)
    };
    let mut drain_until: Option<Instant> = None;
    let matched = loop {
        let job = find(&mut t, id)?;
        if let Some(re) = &re {
            if job.matches(from, re, wait.strip_escapes) {
                break Some(true);
            }
        } else if wait.any_output && (job.out[0].total() > from[0] || job.out[1].total() > from[1])
        {
            break None;
        }
        let now = Instant::now();
        if job.finished() {
            break re.as_ref().map(|_| false);
        }
        // Exited: its last output is on the way; wait for it even past the deadline.
        if job.exit.is_some() {
            let until = *drain_until.get_or_insert(now + DRAIN_LIMIT);
            if now > until {
                break re.as_ref().map(|_| false);
            }
        } else if now >= deadline {
            break re.as_ref().map(|_| false);
        }
        if now >= next_progress {
            let bytes = job.totals();
            drop(t);
            // The caller went away (a cancelled call): stop waiting; the job runs on.
            send(out, &Reply::Progress(bytes))
                .map_err(|e| Error::io("the caller stopped waiting", e))?;
            next_progress = Instant::now() + PROGRESS_EVERY;
            t = shared.lock();
            continue;
        }
        let until = deadline
            .min(next_progress)
            .max(now + Duration::from_millis(5));
        t = shared
            .changed
            .wait_timeout(t, until - now)
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    };
    let job = find(&mut t, id)?;
    Ok(job.view(from, wait, matched))
}

/// Start a job's launcher (on the main thread) and its threads.
// Long: admission, the job's private directory, its overlay taken over, the launch and its
// threads, with the supervisor's table locked from the top until the job is in it.
fn spawn_job(shared: &Arc<Shared>, start: Box<StartJob>) -> Result<String> {
    let mut t = shared.lock();
    if start
        .owner
        .as_ref()
        .is_some_and(|o| t.ended_owners.contains(o))
    {
        return Err(Error::new(
            ErrorKind::Conflict,
            "the MCP session that asked for this job has ended; nothing ran",
        ));
    }
    let (id, released) = admit(shared, &mut t)?;
    let dir = shared.dir.join(&id);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io("creating the job's directory", e))?;
    let (mut spec, held) = prepare(&start, shared.loopback);
    // The job's overlay is this supervisor's from now on (the caller holds its own lock until
    // the job has started).
    let job_changes = match &start.changes {
        Some(h) => match h.lock() {
            Ok(lock) => Some(JobChanges {
                held: h.clone(),
                root: start.root.clone(),
                lock: Some(lock),
                handover: handover(&dir, &mut spec),
                view: None,
                outcome: None,
            }),
            Err(e) => {
                drop(held);
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        },
        None => None,
    };
    let (child, streams) = match launch(&start, &spec) {
        Ok(launched) => launched,
        Err(e) => {
            drop(held);
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let now_unix = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    t.jobs.push(Job {
        id: id.clone(),
        command: start.command.clone(),
        started: Instant::now(),
        started_unix: now_unix,
        lease: Duration::from_secs(start.lease_secs),
        owner: start.owner.clone(),
        tty: start.tty,
        pid: child.id() as i32,
        out: [Store::new(&dir, "stdout"), Store::new(&dir, "stderr")],
        cursor: [0, 0],
        open: 2,
        exit: None,
        ended_by: None,
        launch: None,
        input: Arc::new(Mutex::new(streams.input)),
        changes: job_changes,
        held: Some(held),
        described: (false, String::new()),
        dir,
    });
    drop(t);
    drop(released);
    for (i, stream) in [streams.stdout, streams.stderr].into_iter().enumerate() {
        let shared = shared.clone();
        let id = id.clone();
        std::thread::spawn(move || read_stream(&shared, &id, i, stream));
    }
    {
        let shared = shared.clone();
        let id = id.clone();
        std::thread::spawn(move || wait_for_exit(&shared, &id, child));
    }
    Ok(id)
}

/// The socket where the launcher of a job whose changes are held hands over its view of the
/// workspace (src/shell/jobs/mirror.rs), named in its spec; None without the sandbox (no
/// overlay) or where it cannot be made (then the job sees the workspace as it first looked).
fn handover(dir: &Path, spec: &mut launch::LaunchSpec) -> Option<UnixListener> {
    if !spec.sandbox || spec.skip_namespaces {
        return None;
    }
    let path = dir.join("view");
    let listener = UnixListener::bind(&path).ok()?;
    spec.hand_view = Some(path);
    Some(listener)
}

/// Take the view the job's launcher hands over (before its report, which the start waits
/// for), for the mirror.
fn receive_view(shared: &Shared, id: &str) {
    let (listener, launcher, root, upper) = {
        let mut t = shared.lock();
        let Ok(job) = find(&mut t, id) else { return };
        let pid = job.pid;
        let Some(c) = job.changes.as_mut() else {
            return;
        };
        let Some(listener) = c.handover.take() else {
            return;
        };
        (listener, pid, c.root.clone(), c.held.dir.join("upper"))
    };
    let starting = || {
        let mut t = shared.lock();
        find(&mut t, id).is_ok_and(|j| j.launch.is_none() && j.running())
    };
    let view = crate::shell::handover::take_view(&listener, launcher, REPORT_LIMIT, starting);
    drop(listener);
    let _ = std::fs::remove_file(shared.dir.join(id).join("view"));
    let Some(view) = view else { return };
    let mut t = shared.lock();
    if let Ok(job) = find(&mut t, id) {
        if let Some(c) = job.changes.as_mut().filter(|_| job.exit.is_none()) {
            c.view = Some(Arc::new(Mutex::new(View::new(view, root, upper))));
        }
    }
}

/// Mirror the paths the tools changed into the view of every running job.
fn mirror_jobs(shared: &Shared, paths: &[String]) {
    let views: Vec<Arc<Mutex<View>>> = shared
        .lock()
        .jobs
        .iter()
        .filter(|j| j.running())
        .filter_map(|j| j.changes.as_ref().and_then(|c| c.view.clone()))
        .collect();
    for view in views {
        view.lock().unwrap_or_else(|p| p.into_inner()).mirror(paths);
    }
}

/// Room for one more job: refused while the supervisor ends or when too many run; the
/// oldest ended jobs are forgotten (what they held is returned, to be dropped without the
/// lock). The new job's id.
fn admit(shared: &Shared, t: &mut Table) -> Result<(String, Vec<Option<Held>>)> {
    if t.closing {
        return Err(Error::new(
            ErrorKind::IoError,
            "the job supervisor is ending",
        ));
    }
    if t.jobs.iter().filter(|j| j.running()).count() >= MAX_RUNNING {
        return Err(Error::new(
            ErrorKind::IoError,
            format!("{MAX_RUNNING} jobs already run in this workspace; end one first (job_output with kill)"),
        ));
    }
    let ended: Vec<String> = t
        .jobs
        .iter()
        .filter(|j| !j.running())
        .map(|j| j.id.clone())
        .collect();
    let released = ended
        .iter()
        .take(ended.len().saturating_sub(MAX_ENDED - 1))
        .map(|id| forget(t, id))
        .collect();
    let id = format!("{}-{}", shared.tag, t.next);
    t.next += 1;
    Ok((id, released))
}

/// The caller's launch spec as this supervisor runs it (its parent, the terminal, the shared
/// loopback, a pids cgroup), and what the job holds while it runs.
fn prepare(start: &StartJob, loopback: Option<(i32, u64)>) -> (launch::LaunchSpec, Held) {
    let mut spec = start.spec.clone();
    spec.parent = std::process::id() as i32;
    spec.tty = start.tty;
    if spec.sandbox && !spec.network {
        spec.loopback = loopback;
    }
    let placeholders = spec
        .sandbox
        .then(|| VcsPlaceholders::make_at(&start.root, start.allow_vcs_writes));
    let mut cgroup = None;
    if spec.sandbox {
        let made = PidsCgroup::create(spec.limits.processes);
        spec.pids_cgroup = made
            .as_ref()
            .map(|c| c.path().to_path_buf())
            .map_err(Clone::clone);
        cgroup = made.ok();
    }
    let protected = spec
        .sandbox
        .then(|| crate::shell::protect::Placeholders::hold_at(&start.protected_placeholders));
    let held = Held {
        cgroup,
        placeholders,
        protected,
        tmp: Some(crate::shell::tmpdir::PrivateTmp::adopt(&start.tmp)),
    };
    (spec, held)
}

/// A job's output streams (stdout, stderr: a terminal's one stream is its stdout) and its
/// input.
struct Streams {
    stdout: Option<Box<dyn Read + Send>>,
    stderr: Option<Box<dyn Read + Send>>,
    input: Option<File>,
}

/// Start the launcher with the spec, on pipes or, with `tty`, a pseudo-terminal for stdin
/// and stdout (stderr stays a pipe for the launcher's report).
fn launch(start: &StartJob, spec: &launch::LaunchSpec) -> Result<(Child, Streams)> {
    let spec_json = serde_json::to_string(spec)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("launch spec: {e}")))?;
    let exe = std::env::current_exe().map_err(|e| Error::io("finding sneaky-run", e))?;
    let mut cmd = Command::new(exe);
    cmd.arg(launch::LAUNCH_FLAG)
        .arg(spec_json)
        .arg(&start.command)
        .current_dir(&start.root)
        .env_clear()
        .envs(start.env.iter().map(|(k, v)| (k, v)))
        .stderr(Stdio::piped());
    let terminal = if start.tty {
        let size = nix::pty::Winsize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&size), None)
            .map_err(|e| Error::io("opening a pseudo-terminal", e.into()))?;
        let slave = pty.slave;
        let second = slave
            .try_clone()
            .map_err(|e| Error::io("opening a pseudo-terminal", e))?;
        cmd.stdin(Stdio::from(second)).stdout(Stdio::from(slave));
        Some(File::from(pty.master))
    } else {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        None
    };
    let mut child = cmd.spawn().map_err(|e| Error::io("starting the job", e))?;
    // The terminal's other end is the job's alone now (its end is seen as the job's end).
    drop(cmd);
    let boxed = |r: Box<dyn Read + Send>| Some(r);
    let stderr = child.stderr.take().and_then(|r| boxed(Box::new(r)));
    let streams = match terminal {
        Some(master) => Streams {
            stdout: master.try_clone().ok().and_then(|r| boxed(Box::new(r))),
            stderr,
            input: Some(master),
        },
        None => Streams {
            stdout: child.stdout.take().and_then(|r| boxed(Box::new(r))),
            stderr,
            input: child
                .stdin
                .take()
                .map(|w| File::from(std::os::fd::OwnedFd::from(w))),
        },
    };
    Ok((child, streams))
}

/// Copy one output stream of a job into its store; stderr starts with the launcher's report.
fn read_stream(shared: &Shared, id: &str, i: usize, stream: Option<Box<dyn Read + Send>>) {
    let mut pending: Option<Vec<u8>> = (i == 1).then(Vec::new);
    if let Some(mut stream) = stream {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // A terminal whose every other end closed reads EIO: its end.
                Err(_) => break,
            };
            let mut data = buf[..n].to_vec();
            let mut status = None;
            if let Some(p) = &mut pending {
                p.extend_from_slice(&data);
                match crate::shell::capture::split_status(p) {
                    None => continue,
                    Some((s, rest)) => {
                        status = Some(s.unwrap_or_default());
                        data = rest;
                        pending = None;
                    }
                }
            }
            let mut t = shared.lock();
            if let Ok(job) = find(&mut t, id) {
                if let Some(s) = status {
                    job.launch = Some(s);
                }
                job.out[i].append(&data);
            }
            drop(t);
            shared.changed.notify_all();
        }
    }
    let mut t = shared.lock();
    if let Ok(job) = find(&mut t, id) {
        if let Some(rest) = pending.filter(|p| !p.is_empty()) {
            job.out[i].append(&rest);
        }
        if job.launch.is_none() && i == 1 {
            job.launch = Some(LaunchStatus::default());
        }
        job.open = job.open.saturating_sub(1);
    }
    drop(t);
    shared.changed.notify_all();
}

/// Wait for the launcher; then make sure nothing of the job is left and release what it held.
fn wait_for_exit(shared: &Shared, id: &str, mut child: Child) {
    let status = loop {
        match child.wait() {
            Ok(s) => break Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break None,
        }
    };
    let status = status.unwrap_or_else(|| std::process::ExitStatus::from_raw(9));
    let (pid, namespaces) = {
        let mut t = shared.lock();
        match find(&mut t, id) {
            Ok(job) => (
                job.pid,
                job.launch.as_ref().is_some_and(|l| l.namespaces_ok),
            ),
            Err(_) => return,
        }
    };
    // Without the PID namespace, what the job started may outlive its shell: its group and
    // session go too (the pids cgroup, dropped below, holds the rest).
    if !namespaces {
        kill_session(pid, Signal::SIGKILL);
    }
    // What the job held goes first (its pids cgroup kills whatever is left of it); then its
    // changes are applied, and only then is it seen as ended, so that a caller waiting for its
    // end reads what became of them.
    let (held, view, job_changes) = {
        let mut t = shared.lock();
        match find(&mut t, id) {
            Ok(job) => {
                let overlay = match &job.launch {
                    Some(l) if l.overlay_ok => Ok(()),
                    Some(l) => Err(l.overlay.clone()),
                    None => Err("the launcher did not report".to_string()),
                };
                (
                    job.held.take(),
                    job.changes.as_mut().and_then(|c| c.view.take()),
                    job.changes
                        .as_ref()
                        .map(|c| (c.held.clone(), c.root.clone(), overlay)),
                )
            }
            Err(_) => (None, None, None),
        }
    };
    drop(held);
    // The job's view goes once a mirror under way is done: the overlay, which it holds
    // mounted, must be gone before the changes are read from the upper layer.
    if let Some(view) = view {
        view.lock().unwrap_or_else(|p| p.into_inner()).close();
    }
    let outcome = job_changes.map(|(h, root, overlay)| changes::apply(&h, &root, overlay));
    {
        let mut t = shared.lock();
        t.last_activity = Instant::now();
        if let Ok(job) = find(&mut t, id) {
            if let (Some(c), Some(outcome)) = (job.changes.as_mut(), outcome) {
                c.outcome = Some(outcome);
                c.lock.take();
            }
            job.exit = Some(status);
        }
    }
    shared.changed.notify_all();
    // A terminal's reader sees its end only once no process holds the terminal.
    shared.changed.notify_all();
}

/// Signal the launcher's process group and every process of its session.
fn kill_session(pid: i32, sig: Signal) {
    let _ = killpg(Pid::from_raw(pid), sig);
    let _ = kill(Pid::from_raw(pid), sig);
    for p in proctable::all() {
        if (p.session == pid || p.pgrp == pid) && p.state != 'Z' {
            let _ = kill(Pid::from_raw(p.pid), sig);
        }
    }
}

/// End a job and everything it started: SIGTERM to its shell's group (the shell and what it
/// runs can act on it), SIGKILL after [`KILL_GRACE`]; the launcher's death ends the PID
/// namespace, and the pids cgroup is emptied when the job is released.
fn end_job(shared: &Shared, id: &str, why: &'static str) -> Result<()> {
    let pid = {
        let mut t = shared.lock();
        let job = find(&mut t, id)?;
        if !job.running() {
            return Ok(());
        }
        job.ended_by.get_or_insert(why);
        job.pid
    };
    let _ = killpg(Pid::from_raw(pid), Signal::SIGTERM);
    let deadline = Instant::now() + KILL_GRACE;
    let mut t = shared.lock();
    loop {
        let job = find(&mut t, id)?;
        if !job.running() {
            return Ok(());
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        t = shared
            .changed
            .wait_timeout(t, deadline - now)
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
    drop(t);
    kill_session(pid, Signal::SIGKILL);
    let deadline = Instant::now() + DRAIN_LIMIT;
    let mut t = shared.lock();
    while find(&mut t, id)?.running() && Instant::now() < deadline {
        t = shared
            .changed
            .wait_timeout(t, Duration::from_millis(20))
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
    Ok(())
}

/// Write to a job's stdin (or its terminal); with `eof`, close it afterwards (on a terminal:
/// the end-of-file character).
fn write_input(shared: &Shared, id: &str, mut data: Vec<u8>, eof: bool) -> Result<u64> {
    let input = {
        let mut t = shared.lock();
        let job = find(&mut t, id)?;
        if !job.running() {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("job {id} has ended; it takes no more input"),
            ));
        }
        if eof && job.tty {
            data.push(0x04);
        }
        job.input.clone()
    };
    let written = Arc::new(AtomicU64::new(0));
    let (done_tx, done_rx) = mpsc::channel();
    {
        let written = written.clone();
        let tty = {
            let mut t = shared.lock();
            find(&mut t, id).map(|j| j.tty).unwrap_or(false)
        };
        std::thread::spawn(move || {
            let mut guard = input.lock().unwrap_or_else(|p| p.into_inner());
            let result = match guard.as_mut() {
                None => Err(Error::new(
                    ErrorKind::Conflict,
                    "the job's input was closed (eof) earlier",
                )),
                Some(file) => {
                    let mut r = Ok(());
                    for chunk in data.chunks(4096) {
                        if let Err(e) = file.write_all(chunk) {
                            r = Err(Error::io("writing to the job's input", e));
                            break;
                        }
                        written.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                    }
                    r
                }
            };
            if eof && !tty {
                guard.take();
            }
            let _ = done_tx.send(result);
        });
    }
    match done_rx.recv_timeout(INPUT_LIMIT) {
        Ok(Ok(())) | Err(_) => Ok(written.load(Ordering::Relaxed)),
        Ok(Err(e)) => Err(e),
    }
}

/// Leases, hosts, idleness.
fn watch(shared: &Arc<Shared>) {
    loop {
        std::thread::sleep(TICK);
        let mut due = Vec::new();
        let idle = {
            let mut t = shared.lock();
            t.ended_owners.retain(Owner::alive);
            for job in t
                .jobs
                .iter()
                .filter(|j| j.running() && j.ended_by.is_none())
            {
                if job.started.elapsed() >= job.lease {
                    due.push((job.id.clone(), "lease"));
                } else if job.owner.as_ref().is_some_and(|o| !o.alive()) {
                    due.push((job.id.clone(), "host"));
                }
            }
            !t.jobs.iter().any(Job::running) && t.last_activity.elapsed() > LINGER
        };
        for (id, why) in due {
            let shared = shared.clone();
            std::thread::spawn(move || end_job(&shared, &id, why));
        }
        if idle {
            shutdown(shared);
        }
    }
}

/// End every job and leave, removing the runtime directory.
fn shutdown(shared: &Shared) -> ! {
    let running: HashSet<i32> = {
        let mut t = shared.lock();
        t.closing = true;
        let _ = std::fs::remove_file(super::socket_path(&shared.dir));
        t.jobs
            .iter_mut()
            .filter(|j| j.running())
            .map(|j| {
                j.ended_by.get_or_insert("supervisor");
                j.pid
            })
            .collect()
    };
    for pid in &running {
        kill_session(*pid, Signal::SIGKILL);
    }
    let deadline = Instant::now() + DRAIN_LIMIT;
    let mut t = shared.lock();
    while t.jobs.iter().any(Job::running) && Instant::now() < deadline {
        t = shared
            .changed
            .wait_timeout(t, Duration::from_millis(20))
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
    let ids: Vec<String> = t.jobs.iter().map(|j| j.id.clone()).collect();
    let held: Vec<Option<Held>> = ids.iter().map(|id| forget(&mut t, id)).collect();
    drop(held);
    remove_dir(&shared.dir);
    std::process::exit(0)
}

fn remove_dir(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}
