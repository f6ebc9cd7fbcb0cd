//! Running a tool in its own binary (tools whose hints ask for isolation: run_command), for the
//! long-lived hosts (sneaky-mcp, sneaky-agent), with cancellation and progress.
//!
//! Why a process of its own: such a tool changes process-wide state (subreaper, signal
//! dispositions) and starts programs; in a server that runs calls concurrently that state would
//! leak between calls. The binary is looked up beside our own executable first (an installed or
//! built set of binaries belongs together), then on PATH, and gets the workspace root and the
//! configuration file explicitly, so that host and tool agree whatever their directories.
//!
//! Cancellation (`crate::cancel`): the tool process is stopped (SIGSTOP, so it can start
//! nothing more and reaps nothing), everything beneath it is killed with SIGKILL, looked up in
//! /proc again until none is left (the tool is a child subreaper, so orphans stay beneath it),
//! then the tool itself gets SIGTERM and SIGCONT so it can tidy up (put back a changed
//! `sneaky.toml`) and end; SIGKILL after [`TERM_GRACE`]. The tool binary itself also takes its
//! command tree down when killed; this host-side sweep makes cancellation not depend on it.
//!
//! Progress: the host asks the tool binary for progress lines on its stderr (the protocol is in
//! `crate::progress`, which the tool side uses too) and reads them while the call runs.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::cancel::Cancel;
use crate::error::{Error, ErrorKind, Result};
use crate::proctable::{self, Proc};
use crate::progress;
use crate::tools::ToolSpec;

/// How long a cancelled tool gets after SIGTERM before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long to hunt for processes beneath a cancelled tool.
const SWEEP_LIMIT: Duration = Duration::from_secs(3);
/// Lines of the tool's stderr kept for an error message.
const KEPT_STDERR_LINES: usize = 20;

/// How far an isolated call has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub elapsed: Duration,
    /// Bytes of output (stdout and stderr) the command has written so far.
    pub output_bytes: u64,
}

/// How an isolated call ended.
#[derive(Debug)]
pub enum Ended {
    Finished(Result<Value>),
    Cancelled(CancelReport),
}

/// What cancelling took.
#[derive(Debug, Clone, Copy)]
pub struct CancelReport {
    /// From the cancellation to the last process beneath the tool being gone.
    pub tree_gone_after: Duration,
    /// From the cancellation to the tool process itself being reaped.
    pub tool_gone_after: Duration,
    /// Processes still alive beneath the tool when the sweep gave up (0 normally).
    pub left_behind: usize,
}

/// Where and how isolated tools are started.
#[derive(Debug, Clone)]
pub struct Isolation {
    bin_dir: Option<PathBuf>,
    root: PathBuf,
    config: Option<PathBuf>,
    /// The host's name, for messages ("sneaky-mcp").
    host: &'static str,
}

/// What a call may be told on the way: the cancellation to watch, and where progress goes.
#[derive(Default)]
pub struct Control<'a> {
    /// Flags given to the binary before its own (`--check-policy`); none for a plain call.
    pub flags: &'a [&'a str],
    pub cancel: Option<&'a Cancel>,
    pub progress: Option<(&'a (dyn Fn(Progress) + Sync), Duration)>,
    /// The host's session that asks, when it serves several: its background jobs end with it
    /// (crate::shell::jobs::end_owner), not only with the host.
    pub job_owner: Option<&'a str>,
    /// The call may return before its command ends (crate::shell::jobs::YIELD_ENV): an MCP
    /// host, which stops waiting for a call after its own limit.
    pub yields: bool,
    /// The host ran the call's hooks already: the binary runs none (crate::hooks::RAN_FLAG).
    pub hooks_ran: bool,
}

enum Event {
    Stdout(Vec<u8>),
    StderrDone(Vec<String>),
    Progress(u64),
    Cancel,
}

impl Isolation {
    /// `root` is the absolute workspace root; `config` the configuration file named to the
    /// host, if one was.
    pub fn new(root: PathBuf, config: Option<PathBuf>, host: &'static str) -> Isolation {
        let bin_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf));
        Isolation {
            bin_dir,
            root,
            config,
            host,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The tool's binary beside ours, else its bare name (looked up on PATH).
    pub fn binary_path(&self, binary: &str) -> PathBuf {
        if let Some(dir) = &self.bin_dir {
            let beside = dir.join(binary);
            if beside.is_file() {
                return beside;
            }
        }
        PathBuf::from(binary)
    }

    /// Run the tool's binary on `args` (already checked or not: the binary checks them again)
    /// and read back its outcome, unless cancelled first.
    pub fn run(&self, spec: &ToolSpec, args: &Value, control: Control<'_>) -> Ended {
        if control.cancel.is_some_and(Cancel::is_cancelled) {
            return Ended::Cancelled(CancelReport {
                tree_gone_after: Duration::ZERO,
                tool_gone_after: Duration::ZERO,
                left_behind: 0,
            });
        }
        let mut child = match self.spawn(spec, &control) {
            Ok(child) => child,
            Err(e) => return Ended::Finished(Err(e)),
        };
        let started = Instant::now();
        let (tx, rx) = mpsc::channel();
        start_io(&mut child, args.to_string(), &tx);
        if let Some(cancel) = control.cancel {
            let tx = tx.clone();
            cancel.on_cancel(move || {
                let _ = tx.send(Event::Cancel);
            });
        }
        drop(tx);
        let mut stdout = None;
        let mut stderr = None;
        while stdout.is_none() || stderr.is_none() {
            match rx.recv() {
                Ok(Event::Stdout(bytes)) => stdout = Some(bytes),
                Ok(Event::StderrDone(lines)) => stderr = Some(lines),
                Ok(Event::Progress(bytes)) => {
                    if let Some((report, _)) = control.progress {
                        report(Progress {
                            elapsed: started.elapsed(),
                            output_bytes: bytes,
                        });
                    }
                }
                Ok(Event::Cancel) => return Ended::Cancelled(kill_tree(&mut child)),
                Err(_) => break, // both readers are gone
            }
        }
        let status = match wait_or_cancel(&mut child, &rx) {
            Some(Ok(status)) => status,
            Some(Err(e)) => {
                return Ended::Finished(Err(Error::new(
                    ErrorKind::Internal,
                    format!("waiting for {}: {e}", spec.binary()),
                )))
            }
            None => return Ended::Cancelled(kill_tree(&mut child)),
        };
        Ended::Finished(outcome_from_output(
            spec.binary(),
            &stdout.unwrap_or_default(),
            &stderr.unwrap_or_default(),
            status,
        ))
    }

    fn spawn(&self, spec: &ToolSpec, control: &Control<'_>) -> Result<Child> {
        let path = self.binary_path(spec.binary());
        let mut cmd = Command::new(&path);
        cmd.args(control.flags);
        if control.hooks_ran {
            cmd.arg(crate::hooks::RAN_FLAG);
        }
        cmd.arg("--root").arg(&self.root);
        if let Some(config) = &self.config {
            cmd.arg("--config").arg(config);
        }
        if let Some((_, every)) = control.progress {
            cmd.env(progress::ENV, every.as_millis().to_string());
        }
        if control.yields {
            cmd.env(crate::shell::jobs::YIELD_ENV, "1");
        }
        let job_owner = control.job_owner;
        // A background job started by this call ends when this host (or its session) does.
        let pid = std::process::id();
        cmd.env(
            crate::shell::jobs::OWNER_ENV,
            match job_owner {
                Some(tag) => format!("{pid}:{tag}"),
                None => pid.to_string(),
            },
        );
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!(
                    "cannot run {}: {e} (looked beside {} and on PATH; `cargo install --path .` \
                     installs every binary)",
                    spec.binary(),
                    self.host
                ),
            )
        })
    }
}

/// Threads that feed the tool its arguments and read its two output streams into events.
fn start_io(child: &mut Child, input: String, tx: &mpsc::Sender<Event>) {
    if let Some(mut stdin) = child.stdin.take() {
        // The tool reads all of stdin before it answers; a thread keeps a large request from
        // dead-locking against a full output pipe all the same.
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    match child.stdout.take() {
        Some(mut out) => {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = out.read_to_end(&mut bytes);
                let _ = tx.send(Event::Stdout(bytes));
            });
        }
        None => {
            let _ = tx.send(Event::Stdout(Vec::new()));
        }
    }
    match child.stderr.take() {
        Some(err) => {
            let tx = tx.clone();
            std::thread::spawn(move || read_stderr(err, &tx));
        }
        None => {
            let _ = tx.send(Event::StderrDone(Vec::new()));
        }
    }
}

fn read_stderr(err: impl Read, tx: &mpsc::Sender<Event>) {
    let mut kept = Vec::new();
    let mut reader = BufReader::new(err);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if let Some(bytes) = progress::parse_line(text) {
            let _ = tx.send(Event::Progress(bytes));
        } else if kept.len() < KEPT_STDERR_LINES && !text.is_empty() {
            kept.push(text.to_string());
        }
    }
    let _ = tx.send(Event::StderrDone(kept));
}

/// After both pipes closed: the exit status, watching for a cancellation meanwhile (None).
fn wait_or_cancel(
    child: &mut Child,
    rx: &mpsc::Receiver<Event>,
) -> Option<std::io::Result<ExitStatus>> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(Ok(status)),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        match rx.recv_timeout(Duration::from_millis(2)) {
            Ok(Event::Cancel) => return None,
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Some(child.wait());
            }
        }
    }
}

/// The outcome a tool binary's stdout states, or an internal error that says why there is
/// none (its exit status and the first line of its stderr).
pub fn outcome_from_output(
    binary: &str,
    stdout: &[u8],
    stderr: &[String],
    status: ExitStatus,
) -> Result<Value> {
    let text = String::from_utf8_lossy(stdout);
    if let Ok(envelope) = serde_json::from_str::<Value>(text.trim()) {
        if let Some(outcome) = outcome_of(&envelope) {
            return outcome;
        }
    }
    let why = stderr.first().map(|l| l.trim()).unwrap_or("");
    let status = match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "killed by a signal".to_string(),
    };
    Err(Error::new(
        ErrorKind::Internal,
        format!(
            "{binary} ended ({status}) without a JSON result{}",
            if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            }
        ),
    ))
}

/// The outcome a binary's envelope states, or None when it is not an envelope.
pub fn outcome_of(envelope: &Value) -> Option<Result<Value>> {
    match envelope.get("ok").and_then(Value::as_bool)? {
        true => Some(Ok(envelope.get("result").cloned().unwrap_or(Value::Null))),
        false => {
            let code = envelope.pointer("/error/code").and_then(Value::as_str)?;
            let message = envelope
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("");
            let kind = ErrorKind::from_code(code).unwrap_or(ErrorKind::Internal);
            Some(Err(Error::new(kind, message)))
        }
    }
}

/// Take down a running tool and everything beneath it (see the module notes for the order).
fn kill_tree(child: &mut Child) -> CancelReport {
    let started = Instant::now();
    let pid = child.id() as i32;
    let left_behind = stop_and_clear_beneath(pid, started);
    let tree_gone_after = started.elapsed();
    let tool = Pid::from_raw(pid);
    let _ = kill(tool, Signal::SIGTERM);
    let _ = kill(tool, Signal::SIGCONT);
    let term_deadline = Instant::now() + TERM_GRACE;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) if Instant::now() > term_deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    CancelReport {
        tree_gone_after,
        tool_gone_after: started.elapsed(),
        left_behind,
    }
}

/// Stop the tool process `pid` and kill everything beneath it and in its command's process
/// groups and sessions; the number of processes still alive when the sweep gave up.
fn stop_and_clear_beneath(pid: i32, started: Instant) -> usize {
    let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
    wait_until_stopped(pid, started + Duration::from_millis(50));
    let deadline = started + SWEEP_LIMIT;
    let mut groups = HashSet::new();
    // Beneath the stopped tool (a subreaper: orphans stay beneath it), through the cheap
    // per-process children lists.
    let mut left_behind = sweep(pid, deadline, &mut groups, || {
        descendants(pid)
            .into_iter()
            .filter(|p| p.pid != pid)
            .collect()
    });
    // Then anyone else in the command's process groups and sessions (one full scan a round).
    if !groups.is_empty() {
        let in_groups = groups.clone();
        left_behind += sweep(pid, deadline, &mut groups, || {
            proctable::all()
                .into_iter()
                .filter(|p| p.pid != pid)
                .filter(|p| in_groups.contains(&p.pgrp) || in_groups.contains(&p.session))
                .collect()
        });
    }
    left_behind
}

/// When a host is told to stop: take down every tool process it started (its children) with
/// everything beneath them, as a cancellation does. For a host's signal handler.
pub fn kill_all_children_trees() {
    let me = std::process::id() as i32;
    let started = Instant::now();
    let tools = children(me);
    for &pid in &tools {
        stop_and_clear_beneath(pid, Instant::now());
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
    }
    let deadline = started + TERM_GRACE;
    while Instant::now() < deadline
        && tools
            .iter()
            .any(|&p| !matches!(process_state(p), None | Some('Z')))
    {
        std::thread::sleep(Duration::from_millis(2));
    }
    for &pid in &tools {
        if !matches!(process_state(pid), None | Some('Z')) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

/// SIGKILL what `find` lists (and its groups) until it lists nothing alive or time is up;
/// the number still alive then.
fn sweep(
    tool: i32,
    deadline: Instant,
    groups: &mut HashSet<i32>,
    find: impl Fn() -> Vec<Proc>,
) -> usize {
    // Never our own group or session, nor the tool's (it is left to tidy up).
    let mut ours = own_groups();
    ours.insert(tool);
    loop {
        let found = find();
        for p in &found {
            for g in [p.pgrp, p.session] {
                if !ours.contains(&g) {
                    groups.insert(g);
                }
            }
        }
        let alive: Vec<i32> = found
            .iter()
            .filter(|p| p.state != 'Z')
            .map(|p| p.pid)
            .collect();
        if alive.is_empty() {
            return 0;
        }
        if Instant::now() > deadline {
            return alive.len();
        }
        for g in groups.iter() {
            let _ = killpg(Pid::from_raw(*g), Signal::SIGKILL);
        }
        for p in alive {
            let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn wait_until_stopped(pid: i32, deadline: Instant) {
    while Instant::now() < deadline {
        match process_state(pid) {
            Some('T') | Some('t') | Some('Z') | None => return,
            Some(_) => std::thread::sleep(Duration::from_micros(200)),
        }
    }
}

fn process_state(pid: i32) -> Option<char> {
    proctable::read(pid).map(|p| p.state)
}

/// Every process beneath `pid` (not `pid` itself), from the kernel's per-thread children
/// lists; from a full scan of /proc where those lists do not exist.
fn descendants(pid: i32) -> Vec<Proc> {
    if !Path::new(&format!("/proc/{pid}/task/{pid}/children")).exists() {
        return descendants_in(&proctable::all(), pid);
    }
    let mut found: Vec<Proc> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for child in children(parent) {
            if found.iter().any(|f| f.pid == child) {
                continue;
            }
            let Some(p) = proctable::read(child) else {
                continue; // gone meanwhile
            };
            found.push(p);
            parents.push(child);
        }
    }
    found
}

fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

fn descendants_in(table: &[Proc], pid: i32) -> Vec<Proc> {
    let mut found: Vec<Proc> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for p in table.iter().filter(|p| p.ppid == parent) {
            if !found.iter().any(|f| f.pid == p.pid) {
                found.push(*p);
                parents.push(p.pid);
            }
        }
    }
    found
}

/// Our own process group and session: never signalled as a whole.
fn own_groups() -> HashSet<i32> {
    let me = std::process::id() as i32;
    let mut ours = HashSet::from([0, 1, me]);
    if let Some(p) = proctable::read_self() {
        ours.insert(p.pgrp);
        ours.insert(p.session);
    }
    ours
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes() {
        let ok = outcome_of(&serde_json::json!({"ok": true, "result": {"a": 1}}));
        assert!(matches!(ok, Some(Ok(_))));
        let err = outcome_of(
            &serde_json::json!({"ok": false, "error": {"code": "not_found", "message": "m"}}),
        );
        assert!(matches!(err, Some(Err(e)) if e.kind == ErrorKind::NotFound));
        assert!(outcome_of(&serde_json::json!({"x": 1})).is_none());
    }
}
