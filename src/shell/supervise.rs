//! Supervising a running command from run_command's side: start the launcher, read its
//! output, wait with a timeout, and make sure nothing it started is left.
//!
//! On timeout the launcher's process group gets SIGTERM, then SIGKILL after a grace period.
//! With the PID namespace in place, the launcher's death takes the namespace down (its init
//! dies with it: PR_SET_PDEATHSIG) and nothing can hide. Without it (degraded), every process
//! left in the command's session or group is killed, and, when this process is a child
//! subreaper (set by sneaky-run's entry point, never by library code), every orphan that was
//! re-parented to us.

use std::collections::HashSet;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use super::capture::{Captured, Output, Stream, Watch};
pub use super::gone::Gone;
use super::launch::{LaunchEnd, LaunchStatus};
use super::zygote::{Launch, Zygote};
use crate::error::{Error, ErrorKind, Result};
use crate::proctable;

/// Between SIGTERM and SIGKILL on timeout.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to hunt for left-over processes, and to wait for the output pipes to close.
const CLEANUP_LIMIT: Duration = Duration::from_secs(3);

/// How a command ended, with its output.
pub struct Finished {
    pub status: ExitStatus,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The launcher's report (None when no launcher ran or it said nothing).
    pub launch: Option<LaunchStatus>,
    /// What the launcher said after the command ended (src/shell/sandbox.rs, `END_PREFIX`).
    pub end: LaunchEnd,
    /// The launcher's own end, which the result need not wait for ([`Gone`]).
    pub launcher_gone: Gone,
}

impl Finished {
    pub fn signal(&self) -> Option<String> {
        self.status.signal().map(signal_name)
    }
}

/// How the command is started: a program (the launcher by exec, or bash itself when there is
/// none), or the launcher already forked and waiting (src/shell/zygote.rs).
pub enum Start {
    Exec(Command),
    Forked(Zygote, Launch),
}

type Pipe = Option<Box<dyn Output>>;
type Waiter = Box<dyn FnOnce() -> std::io::Result<ExitStatus> + Send>;

impl Start {
    /// Started: its pid, its stdout and stderr, and how to wait for its end.
    fn spawn(self) -> Result<(Pid, Pipe, Pipe, Waiter)> {
        match self {
            Start::Exec(mut cmd) => {
                cmd.stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = cmd
                    .spawn()
                    .map_err(|e| Error::io("starting the command", e))?;
                let pid = Pid::from_raw(child.id() as i32);
                let out = child.stdout.take().map(|p| Box::new(p) as Box<dyn Output>);
                let err = child.stderr.take().map(|p| Box::new(p) as Box<dyn Output>);
                Ok((pid, out, err, Box::new(move || child.wait())))
            }
            Start::Forked(zygote, l) => {
                let launched = zygote
                    .launch(&l)
                    .map_err(|e| Error::io("starting the command", e))?;
                let pid = launched.pid;
                Ok((
                    pid,
                    Some(Box::new(launched.stdout)),
                    Some(Box::new(launched.stderr)),
                    Box::new(move || wait_pid(pid)),
                ))
            }
        }
    }
}

/// Wait for the child `pid`; its end as `Child::wait` gives it.
fn wait_pid(pid: Pid) -> std::io::Result<ExitStatus> {
    use nix::sys::wait::{waitpid, WaitStatus};
    loop {
        match waitpid(pid, None) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(ExitStatus::from_raw((code & 0xff) << 8)),
            Ok(WaitStatus::Signaled(_, sig, core)) => {
                return Ok(ExitStatus::from_raw(
                    sig as i32 | if core { 0x80 } else { 0 },
                ))
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// What the wait for a command's end hears: the launcher (or bash) reaped, or one of its two
/// outputs at its end.
enum Event {
    Exited(std::io::Result<ExitStatus>),
    OutputEnded,
}

/// Start `cmd` (the launcher, or bash itself when there is none) with stdin from /dev/null and
/// both outputs captured, wait for it at most `timeout`, and clean up after it. `spawned` runs
/// as soon as it has started; `reaped` once the launcher has been reaped, which may be after
/// this returns ([`Gone`]).
pub fn supervise(
    start: Start,
    own_session: bool,
    timeout: Duration,
    cap: usize,
    spawned: impl FnOnce(),
    reaped: impl FnOnce() + Send + 'static,
) -> Result<Finished> {
    // Orphans count as the command's only when we are a subreaper (see `members`).
    let mut children_before = if is_subreaper() {
        our_children()
    } else {
        HashSet::new()
    };
    let started = Instant::now();
    let (pid, out, err, waiter) = start.spawn()?;
    // A forked launcher was our child before the command started: it is the command's now.
    children_before.remove(&pid.as_raw());
    spawned();
    let (tx, rx) = mpsc::channel();
    let outputs = usize::from(out.is_some()) + usize::from(err.is_some());
    let ended = |tx: &mpsc::Sender<Event>| -> Option<Box<dyn FnOnce() + Send>> {
        let tx = tx.clone();
        Some(Box::new(move || {
            let _ = tx.send(Event::OutputEnded);
        }))
    };
    let (gone, watch) = reap_when_gone(pid, waiter, reaped, tx.clone());
    let (stdout, stderr) = Stream::start_both(out, err, cap, own_session, || ended(&tx), watch);
    drop(tx);
    // Progress lines for a host that asked for them (sneaky-mcp; see crate::progress).
    let progress = crate::progress::Reporter::from_env({
        let (out, err) = (stdout.byte_counter(), stderr.byte_counter());
        move || out() + err()
    });
    let mut end = None;
    let mut ending = Ending {
        events: rx,
        outputs,
        stderr: &stderr,
        end: &mut end,
    };
    let (status, timed_out) =
        wait_with_timeout(&mut ending, pid, own_session, &children_before, timeout)?;
    drop(progress);
    // With the PID namespace in force the launcher waited for the namespace's init, whose
    // exit killed everything in it: there is nothing to hunt for.
    if !stderr.status().is_some_and(|s| s.namespaces_ok) {
        kill_leftovers(pid, own_session, &children_before, true);
    }
    let deadline = Instant::now() + CLEANUP_LIMIT;
    stdout.wait(deadline);
    stderr.wait(deadline);
    let launch = stderr.status();
    let end = end
        .or_else(|| {
            let token = launch.as_ref()?.end_token.as_deref()?;
            stderr.take_end(token)
        })
        .unwrap_or_default();
    super::gone::remember(&gone);
    Ok(Finished {
        status,
        timed_out,
        duration_ms: started.elapsed().as_millis() as u64,
        launch,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        end,
        launcher_gone: gone,
    })
}

/// Reap the launcher (or bash) once it has exited, run `reaped` then, and tell `events`; the
/// returned handle says when that is done. Done by the thread that reads the outputs, told by
/// a pidfd ([`Watch`]); where there is none, in a thread of its own that waits.
fn reap_when_gone(
    pid: Pid,
    waiter: Waiter,
    reaped: impl FnOnce() + Send + 'static,
    events: mpsc::Sender<Event>,
) -> (Gone, Option<Watch>) {
    let gone = Gone::default();
    let done = gone.clone();
    let then = Box::new(move || {
        let status = waiter();
        reaped();
        done.set();
        let _ = events.send(Event::Exited(status));
    });
    match super::sys::pidfd_open(pid) {
        Ok(fd) => (gone, Some(Watch { fd, then })),
        Err(_) => {
            std::thread::spawn(then);
            (gone, None)
        }
    }
}

/// The wait for a command's end: the launcher reaped, or its last line read (how the command
/// ended, once every process of it is gone) and both outputs closed.
struct Ending<'a> {
    events: mpsc::Receiver<Event>,
    /// Outputs not yet at their end.
    outputs: usize,
    stderr: &'a Stream,
    /// The launcher's last line, once taken off stderr.
    end: &'a mut Option<LaunchEnd>,
}

impl Ending<'_> {
    /// How the command ended, waiting at most until `deadline` (None: not yet).
    fn wait(&mut self, deadline: Instant) -> Option<std::io::Result<ExitStatus>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Event::Exited(status)) => return Some(status),
                Ok(Event::OutputEnded) => {
                    self.outputs = self.outputs.saturating_sub(1);
                    if self.outputs == 0 {
                        if let Some(status) = self.reported() {
                            return Some(Ok(status));
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => {
                    return Some(Err(std::io::Error::other("the launcher's waiter is gone")))
                }
            }
        }
    }

    /// How the launcher's last line says the command ended (a line carrying the token of its
    /// status line, which nothing of the command can know).
    fn reported(&mut self) -> Option<ExitStatus> {
        let token = self.stderr.status()?.end_token?;
        let end = self.stderr.take_end(&token)?;
        let status = end.status.as_ref().map(|s| s.exit_status());
        *self.end = Some(end);
        status
    }
}

fn is_subreaper() -> bool {
    nix::sys::prctl::get_child_subreaper().unwrap_or(false)
}

/// Wait for the command; on timeout SIGTERM to everything it started, then SIGKILL.
fn wait_with_timeout(
    ending: &mut Ending<'_>,
    pid: Pid,
    own_session: bool,
    children_before: &HashSet<i32>,
    timeout: Duration,
) -> Result<(ExitStatus, bool)> {
    let waited = |s: std::io::Result<ExitStatus>, timed_out| {
        s.map(|s| (s, timed_out))
            .map_err(|e| Error::io("waiting for the command", e))
    };
    if let Some(s) = ending.wait(Instant::now() + timeout) {
        return waited(s, false);
    }
    signal_everything(pid, own_session, children_before, Signal::SIGTERM);
    if let Some(s) = ending.wait(Instant::now() + KILL_GRACE) {
        return waited(s, true);
    }
    signal_everything(pid, own_session, children_before, Signal::SIGKILL);
    match ending.wait(Instant::now() + CLEANUP_LIMIT) {
        Some(s) => waited(s, true),
        None => Err(Error::new(
            ErrorKind::Internal,
            "lost the command's exit status: timed out",
        )),
    }
}

/// Send a signal to the command's process group and to every process that belongs to it.
fn signal_everything(pid: Pid, own_session: bool, children_before: &HashSet<i32>, sig: Signal) {
    let _ = killpg(pid, sig);
    for p in members(pid, own_session, children_before) {
        let _ = kill(Pid::from_raw(p), sig);
    }
}

/// Kill whatever the command left behind (background jobs, daemons that changed their group
/// or session) and, with `reap`, reap the orphans that were re-parented to us.
fn kill_leftovers(pid: Pid, own_session: bool, children_before: &HashSet<i32>, reap: bool) {
    let deadline = Instant::now() + CLEANUP_LIMIT;
    loop {
        let _ = killpg(pid, Signal::SIGKILL);
        let left = members(pid, own_session, children_before);
        for p in &left {
            let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
        }
        if reap {
            reap_orphans(children_before);
        }
        if left.is_empty() || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn reap_orphans(children_before: &HashSet<i32>) {
    use nix::sys::wait::{waitpid, WaitPidFlag};
    if !is_subreaper() {
        return;
    }
    for p in our_children() {
        if !children_before.contains(&p) {
            let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Our child processes: those of the main thread, from /proc/self/task/<pid>/children (far
/// cheaper than a scan of /proc), or from the scan where that file does not exist. Only the
/// main thread's list is read: `sneaky-run`, the one program that uses this (as a child
/// subreaper), spawns from its main thread, and orphans are re-parented to it. Reading a file
/// under another thread's /proc/self/task/<tid> would also cost this process's parent
/// milliseconds of CPU when it reaps us (the kernel's /proc dentry flush at exit spins on
/// it), which every call would pay.
fn our_children() -> HashSet<i32> {
    let me = std::process::id() as i32;
    match std::fs::read_to_string(format!("/proc/self/task/{me}/children")) {
        Ok(text) => text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect(),
        Err(_) => proctable::all()
            .into_iter()
            .filter(|p| p.ppid == me)
            .map(|p| p.pid)
            .collect(),
    }
}

/// Live processes that belong to the command: its group, its session (when it has its own),
/// and orphans re-parented to us since it started.
fn members(pid: Pid, own_session: bool, children_before: &HashSet<i32>) -> Vec<i32> {
    let me = std::process::id() as i32;
    let id = pid.as_raw();
    // Orphans re-parented to us count only when we are a subreaper, which only sneaky-run's
    // entry point sets (one command per process: no other command's orphans to confuse).
    let subreaper = is_subreaper();
    if subreaper {
        if let Some(found) = descendants(children_before) {
            return found;
        }
    }
    proctable::all()
        .into_iter()
        .filter(|p| {
            let orphan = subreaper && p.ppid == me && !children_before.contains(&p.pid);
            p.pid != me
                && p.state != 'Z'
                && (p.pgrp == id || (own_session && p.session == id) || orphan)
        })
        .map(|p| p.pid)
        .collect()
}

/// Every live process descended from this one, but the children it had before the command
/// (`children_before`) and theirs; None where the kernel does not list a process's children.
///
/// For a child subreaper (sneaky-run) this holds every member [`members`] would find in a
/// scan of the whole process table, at the cost of the command's tree rather than of every
/// process on the machine (a scan took about half of the system calls of a call with the
/// sandbox off): a process joins a session or a process group only by being born in it, so
/// the command's group and session are descendants of the command, and an orphan is
/// re-parented to the nearest subreaper above it (this process, or one of the command's
/// own). Processes that left the command's session while their parent lives are found too.
fn descendants(children_before: &HashSet<i32>) -> Option<Vec<i32>> {
    let me = std::process::id() as i32;
    let mut queue: Vec<i32> = children_listed(me, &[me])?
        .into_iter()
        .filter(|p| !children_before.contains(p))
        .collect();
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    while let Some(p) = queue.pop() {
        if p == me || !seen.insert(p) {
            continue;
        }
        // A zombie's children went to a subreaper when it died, and a process gone meanwhile
        // has none to list.
        match proctable::read(p) {
            Some(proc) if proc.state != 'Z' => found.push(p),
            _ => continue,
        }
        queue.extend(children_of(p));
    }
    Some(found)
}

/// The children of every thread of process `pid` (a child belongs to the thread that forked
/// it; an orphan to the subreaper's first living thread).
fn children_of(pid: i32) -> Vec<i32> {
    let threads: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .filter_map(|t| t.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    children_listed(pid, &threads).unwrap_or_default()
}

/// The children of `threads` of process `pid`, from /proc/PID/task/TID/children; None when
/// the first of them cannot be read (the kernel lacks the file, or the process is gone).
fn children_listed(pid: i32, threads: &[i32]) -> Option<Vec<i32>> {
    let mut children = Vec::new();
    for (i, tid) in threads.iter().enumerate() {
        match std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/children")) {
            Ok(text) => children.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            ),
            Err(_) if i == 0 => return None,
            Err(_) => {}
        }
    }
    Some(children)
}

fn signal_name(n: i32) -> String {
    Signal::try_from(n)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {n}"))
}

/// Kill every child of this process with its process group and session, and whatever is
/// re-parented to us (for the termination-signal watcher of sneaky-run's entry point).
/// Nothing is reaped: the call in progress waits for its launcher and sees it killed.
/// Whether there was any child (a command was running).
pub fn kill_children_trees() -> bool {
    let none = HashSet::new();
    let children = our_children();
    for &child in &children {
        kill_leftovers(Pid::from_raw(child), true, &none, false);
        let _ = kill(Pid::from_raw(child), Signal::SIGKILL);
    }
    !children.is_empty()
}
