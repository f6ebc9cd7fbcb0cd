//! Background jobs (run_command with `background: true`, job_output, job_input) driven through
//! the real binaries: start, read, wait, input, kill, list; the whole tree gone after a kill
//! (forks, setsid, double forks); the lease; the supervisor killed; a host's end; many jobs;
//! the output bound; an HTTP session's end. Each test keeps its supervisor in its own runtime
//! directory (XDG_RUNTIME_DIR in its temp dir) and stops it at the end.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::util::{self, Reply, Ws};

/// The system's python3 by its real path (a version manager's shim runs more programs).
const PYTHON: &str = "/usr/bin/python3";

struct Jobs {
    w: Ws,
}

impl Jobs {
    fn new() -> Jobs {
        let w = util::ws();
        std::fs::create_dir_all(w.dir.path().join("run")).expect("mkdir run");
        Jobs { w }
    }

    fn runtime(&self) -> PathBuf {
        self.w.dir.path().join("run")
    }

    fn cmd(&self, bin: &str) -> Command {
        let mut cmd = Command::cargo_bin(bin).expect("binary");
        util::fence(&mut cmd, self.w.dir.path())
            .current_dir(&self.w.root)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("SNEAKY_JOB_OWNER")
            .env("SNEAKY_ROOT", &self.w.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", self.w.dir.path().join("xdg"))
            .env("XDG_STATE_HOME", self.w.dir.path().join("state"))
            .env("XDG_RUNTIME_DIR", self.runtime());
        cmd
    }

    fn call(&self, bin: &str, request: Value) -> Reply {
        let out = assert_cmd::Command::from_std(self.cmd(bin))
            .write_stdin(request.to_string())
            .timeout(Duration::from_secs(60))
            .output()
            .expect("run");
        Reply::parse(bin, out)
    }

    /// Start a background job; its result.
    fn start(&self, request: Value) -> Value {
        let mut request = request;
        request["background"] = json!(true);
        let r = self.call("sneaky-run", request);
        assert_eq!(r.status, 0, "{r:?}");
        r.ok().clone()
    }

    fn output(&self, request: Value) -> Value {
        self.call("sneaky-jobs", request).ok().clone()
    }

    fn allow_python(&self, extra: &str) {
        user_config(
            &self.w,
            &format!("[tools.shell]\nextra_allowed_commands = [\"{PYTHON}\"]\n{extra}"),
        );
    }

    /// The supervisor's pid, when one runs for this test.
    fn supervisor(&self) -> Option<i32> {
        let dir = self.runtime();
        processes(|cmdline| {
            cmdline.contains("--sneaky-jobs-daemon") && cmdline.contains(dir.to_str().unwrap())
        })
        .into_iter()
        .next()
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        if let Some(pid) = self.supervisor() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// Live (not zombie) processes whose command line passes `want`.
fn processes(want: impl Fn(&str) -> bool) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true);
        if zombie {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if want(&text) {
                found.push(pid);
            }
        }
    }
    found
}

/// Processes running `marker` (not the sneaky binaries that carry it in their arguments).
fn with_marker(marker: &str) -> Vec<i32> {
    processes(|c| c.contains(marker) && !c.contains("sneaky-"))
}

/// Wait until no process carries `marker`, or fail after `limit`.
fn gone(marker: &str, limit: Duration) {
    let started = Instant::now();
    loop {
        let left = with_marker(marker);
        if left.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "processes with {marker} still alive after {limit:?}: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Wait until a process carries `marker` (a job started with wait_ms 0 may not run yet).
fn appears(marker: &str) {
    let started = Instant::now();
    while with_marker(marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{marker} never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn python_or_skip() -> bool {
    Path::new(PYTHON).is_file() || util::skip(&format!("needs {PYTHON}"))
}

#[test]
fn start_read_list_and_kill() {
    let j = Jobs::new();
    let r = j.start(json!({"command": "echo ready; sleep 3301; echo never", "wait_ms": 5000, "wait_for": "ready"}));
    assert_eq!(r["running"], true, "{r}");
    assert_eq!(r["matched"], true, "{r}");
    assert_eq!(r["stdout"], "ready\n");
    assert_eq!(r["exit_code"], Value::Null);
    assert_eq!(r["sandboxed"], true, "{r}");
    let id = r["job_id"].as_str().expect("job_id").to_string();
    assert!(!with_marker("sleep 3301").is_empty());

    // Nothing new since the start read it; offset 0 reads it again.
    let o = j.output(json!({"job_id": id}));
    assert_eq!(
        (o["stdout"].as_str(), o["running"].as_bool()),
        (Some(""), Some(true)),
        "{o}"
    );
    let o = j.output(json!({"job_id": id, "offset": 0}));
    assert_eq!(o["stdout"], "ready\n");
    assert_eq!(
        (&o["sandboxed"], &o["sandbox"]),
        (&r["sandboxed"], &r["sandbox"])
    );

    let list = j.output(json!({"list": true}));
    let jobs = list["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1, "{list}");
    assert_eq!(jobs[0]["job_id"], id.as_str());
    assert_eq!(jobs[0]["state"], "running");
    assert_eq!(jobs[0]["command"], "echo ready; sleep 3301; echo never");

    let k = j.output(json!({"job_id": id, "kill": true}));
    assert_eq!(k["running"], false, "{k}");
    assert_eq!(k["ended_by"], "kill");
    gone("sleep 3301", Duration::from_secs(3));
    let list = j.output(json!({"list": true}));
    assert_eq!(list["jobs"][0]["state"], "exited", "{list}");

    // A job that ends by itself: its exit code, and waiting returns at its end.
    let r = j.start(json!({"command": "sleep 0.2; echo done; exit 3", "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("job_id");
    let o = j.output(json!({"job_id": id, "wait_for": "never printed", "wait_ms": 10000}));
    assert_eq!(
        (o["running"].as_bool(), o["exit_code"].as_i64()),
        (Some(false), Some(3)),
        "{o}"
    );
    assert_eq!(o["matched"], false);
    assert_eq!(o["stdout"], "done\n");
    assert_eq!(o["ended_by"], Value::Null);

    // Unknown jobs, bad patterns, options without background.
    j.call("sneaky-jobs", json!({"job_id": "nope"}))
        .err("not_found", 1);
    j.call("sneaky-jobs", json!({"job_id": id, "wait_for": "("}))
        .err("invalid_args", 2);
    j.call("sneaky-run", json!({"command": "true", "wait_ms": 5}))
        .err("invalid_args", 2);
    // The policy holds for jobs as for any command.
    j.call(
        "sneaky-run",
        json!({"command": "sudo rm -rf x", "background": true}),
    )
    .err("command_denied", 3);
}

#[test]
fn the_shell_flow_with_flags_and_text() {
    let j = Jobs::new();
    let out = j
        .cmd("sneaky-run")
        .args(["--background", "--wait-for", "up", "echo up; sleep 3302"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("json");
    let id = r["result"]["job_id"].as_str().expect("id").to_string();
    let out = j
        .cmd("sneaky-jobs")
        .args([id.as_str(), "--offset", "0", "--format", "text"])
        .output()
        .expect("run");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "up\n");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("running"),
        "{out:?}"
    );
    let out = j
        .cmd("sneaky-jobs")
        .args(["--kill", id.as_str()])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    gone("sleep 3302", Duration::from_secs(3));
}

#[test]
fn input_reaches_cat_and_an_interpreter_on_a_terminal() {
    let j = Jobs::new();
    let r = j.start(json!({"command": "cat", "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("id").to_string();
    let w = j.call(
        "sneaky-input",
        json!({"job_id": id, "input": "hello cat\n"}),
    );
    assert_eq!(w.ok()["bytes_written"], 10);
    let o = j.output(json!({"job_id": id, "wait_for": "hello cat", "wait_ms": 5000}));
    assert_eq!(o["stdout"], "hello cat\n", "{o}");
    // End of input ends cat.
    j.call("sneaky-input", json!({"job_id": id, "eof": true}))
        .ok();
    let o = j.output(json!({"job_id": id, "wait_ms": 5000}));
    let o = if o["running"] == true {
        j.output(json!({"job_id": id, "wait_ms": 5000}))
    } else {
        o
    };
    assert_eq!(
        (o["running"].as_bool(), o["exit_code"].as_i64()),
        (Some(false), Some(0)),
        "{o}"
    );
    j.call("sneaky-input", json!({"job_id": id, "input": "late\n"}))
        .err("conflict", 1);

    if !python_or_skip() {
        return;
    }
    j.allow_python("");
    let r = j.start(json!({
        "command": format!("{PYTHON} -q"), "tty": true, "wait_for": ">>> ", "wait_ms": 10000,
        "strip_escapes": true,
    }));
    assert_eq!(r["matched"], true, "{r}");
    let id = r["job_id"].as_str().expect("id").to_string();
    j.call(
        "sneaky-input",
        json!({"job_id": id, "input": "print(6 * 7)\n"}),
    )
    .ok();
    let o = j.output(
        json!({"job_id": id, "wait_for": "42\n>>> ", "wait_ms": 10000, "strip_escapes": true}),
    );
    assert_eq!(o["matched"], true, "{o}");
    assert!(o["stdout"].as_str().unwrap_or("").contains("42\n"), "{o}");
    assert_eq!(o["tty"], true);
    // The interpreter knows it is on a terminal.
    j.call(
        "sneaky-input",
        json!({"job_id": id, "input": "import sys; print('tty', sys.stdin.isatty(), sys.stdout.isatty())\n"}),
    )
    .ok();
    let o = j.output(json!({"job_id": id, "wait_for": "tty \\w+ \\w+\r?\n", "wait_ms": 10000}));
    assert!(
        o["stdout"].as_str().unwrap_or("").contains("tty True True"),
        "{o}"
    );
    j.call("sneaky-input", json!({"job_id": id, "input": "exit()\n"}))
        .ok();
    let o = j.output(json!({"job_id": id, "wait_for": "^$never", "wait_ms": 10000}));
    assert_eq!(o["running"], false, "{o}");
}

#[test]
fn a_kill_takes_forks_setsid_and_double_forks() {
    if !python_or_skip() {
        return;
    }
    let j = Jobs::new();
    j.allow_python("");
    j.w.write(
        "spawn.py",
        r#"import os, sys, time
def child(tag, detach, double):
    if os.fork() == 0:
        if detach:
            os.setsid()
        if double and os.fork() != 0:
            os._exit(0)
        os.execv("/bin/sleep", ["sleep", tag])
child("3311", False, False)
child("3312", True, False)
child("3313", True, True)
print("spawned", flush=True)
time.sleep(3314)
"#,
    );
    user_config(
        &j.w,
        &format!("[tools.shell]\nextra_allowed_commands = [\"{PYTHON}\", \"/bin/sleep\"]\n"),
    );
    let r = j.start(
        json!({"command": format!("{PYTHON} spawn.py"), "wait_for": "spawned", "wait_ms": 10000}),
    );
    assert_eq!(r["matched"], true, "{r}");
    let id = r["job_id"].as_str().expect("id").to_string();
    for tag in ["sleep 3311", "sleep 3312", "sleep 3313"] {
        appears(tag);
    }
    j.output(json!({"job_id": id, "kill": true}));
    for tag in ["sleep 3311", "sleep 3312", "sleep 3313", "3314"] {
        gone(tag, Duration::from_secs(3));
    }
}

#[test]
fn a_forgotten_job_ends_at_its_lease() {
    let j = Jobs::new();
    user_config(&j.w, "[tools.shell]\nmax_job_seconds = 1\n");
    let r = j.start(json!({"command": "sleep 3321", "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("id").to_string();
    assert!(r["running"] == true, "{r}");
    appears("sleep 3321");
    let o = j.output(json!({"job_id": id, "wait_for": "never", "wait_ms": 10000}));
    assert_eq!(o["running"], false, "{o}");
    assert_eq!(o["ended_by"], "lease", "{o}");
    gone("sleep 3321", Duration::from_secs(3));
}

#[test]
fn killing_the_supervisor_ends_its_jobs() {
    let j = Jobs::new();
    j.start(json!({"command": "sleep 3331", "wait_ms": 0}));
    j.start(json!({"command": "sleep 3332 & sleep 3333", "wait_ms": 0}));
    for tag in ["sleep 3331", "sleep 3332", "sleep 3333"] {
        appears(tag);
    }
    let pid = j.supervisor().expect("a supervisor runs");
    let killed = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    assert!(killed.expect("kill").success());
    gone("sleep 333", Duration::from_secs(3));
    // A new supervisor takes over the workspace.
    let r = j.start(json!({"command": "echo again", "wait_for": "again", "wait_ms": 5000}));
    assert_eq!(r["stdout"], "again\n", "{r}");
    // Stopped politely, it ends its jobs too.
    j.start(json!({"command": "sleep 3334", "wait_ms": 0}));
    appears("sleep 3334");
    let pid = j.supervisor().expect("a supervisor runs");
    assert!(Command::new("kill")
        .arg(pid.to_string())
        .status()
        .expect("kill")
        .success());
    gone("sleep 3334", Duration::from_secs(5));
}

/// A stdio session of `sneaky-mcp` on `j`'s workspace, after the handshake; `call` sends a
/// tools/call and returns its structuredContent and text, with how long it took.
struct McpSession {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    next: i64,
}

impl McpSession {
    fn start(j: &Jobs) -> McpSession {
        let root = j.w.root.to_str().expect("utf-8").to_string();
        let mut child = j
            .cmd("sneaky-mcp")
            .args(["--root", root.as_str()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("sneaky-mcp");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut s = McpSession {
            child,
            stdin,
            lines,
            next: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        s
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").expect("write");
        self.stdin.flush().expect("flush");
        for line in self.lines.by_ref() {
            let v: Value = serde_json::from_str(&line.expect("line")).expect("json");
            if v["id"] == id {
                return v;
            }
        }
        panic!("sneaky-mcp ended before answering {method}");
    }

    fn call(&mut self, tool: &str, arguments: Value) -> (Value, String, Duration) {
        let started = Instant::now();
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (
            v["result"]["structuredContent"].clone(),
            text,
            started.elapsed(),
        )
    }

    /// job_output until the job has ended (at most `limit`): its last view and all stdout.
    fn until_ended(&mut self, job_id: &str, limit: Duration) -> (Value, String) {
        let deadline = Instant::now() + limit;
        let mut stdout = String::new();
        loop {
            let (view, _, _) = self.call("job_output", json!({"job_id": job_id, "wait_ms": 2000}));
            stdout.push_str(view["stdout"].as_str().unwrap_or_default());
            if view["running"] == false || Instant::now() > deadline {
                return (view, stdout);
            }
        }
    }
}

impl Drop for McpSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Over MCP only, a call whose timeout is longer than tools.shell.yield_after_seconds returns
/// once its command has run that long, and the command goes on as a background job (an MCP
/// host stops waiting after its own limit): job_output reads the rest, its changes are applied
/// when it ends, and it is ended at the call's timeout. A command that ends sooner is answered
/// as it ends, with its changes applied; one whose timeout is not longer runs in the
/// foreground; and `sneaky-run` from a shell waits, as before.
#[test]
fn over_mcp_a_command_longer_than_yield_after_seconds_goes_on_as_a_job() {
    if !crate::sandbox::namespaces_or_skip(
        "over_mcp_a_command_longer_than_yield_after_seconds_goes_on_as_a_job",
    ) {
        return;
    }
    let j = Jobs::new();
    // Long enough for a quick command to end within it on a loaded machine (the supervisor
    // starts with the first job).
    user_config(&j.w, "[tools.shell]\nyield_after_seconds = 4\n");
    let mut mcp = McpSession::start(&j);

    let (quick, text, _) = mcp.call(
        "run_command",
        json!({"command": "echo quick > quick.txt && echo said", "timeout": 30}),
    );
    assert_eq!(quick["running"], false, "{quick} {text}");
    assert_eq!(quick["exit_code"], 0, "{quick}");
    assert!(text.starts_with("exit code 0\n[stdout]\nsaid"), "{text}");
    assert_eq!(
        quick["changes"],
        json!([{"path": "quick.txt", "kind": "created"}])
    );
    assert!(j.w.root.join("quick.txt").exists());

    let (slow, text, took) = mcp.call(
        "run_command",
        json!({"command": "sleep 8 && echo late > late.txt && echo done", "timeout": 30}),
    );
    assert_eq!(slow["running"], true, "{slow}");
    assert_eq!(slow["yielded_after_s"], 4, "{slow}");
    assert!(took < Duration::from_millis(7900), "{took:?}");
    assert!(
        text.starts_with("still running after 4 s: it goes on as background job "),
        "{text}"
    );
    assert!(
        !j.w.root.join("late.txt").exists(),
        "its changes are held while it runs"
    );
    let id = slow["job_id"].as_str().expect("a job id").to_string();
    let (ended, stdout) = mcp.until_ended(&id, Duration::from_secs(20));
    assert_eq!(ended["exit_code"], 0, "{ended}");
    assert_eq!(stdout, "done\n");
    assert_eq!(
        ended["changes"],
        json!([{"path": "late.txt", "kind": "created"}])
    );
    assert!(j.w.root.join("late.txt").exists());

    // Ended at the call's timeout, as it would have been in the foreground.
    let (long, _, _) = mcp.call(
        "run_command",
        json!({"command": "sleep 3351", "timeout": 6}),
    );
    assert_eq!(long["running"], true, "{long}");
    let started = Instant::now();
    let id = long["job_id"].as_str().expect("a job id").to_string();
    let (ended, _) = mcp.until_ended(&id, Duration::from_secs(20));
    assert_eq!(ended["running"], false, "{ended}");
    assert_eq!(ended["ended_by"], "lease", "{ended}");
    assert!(started.elapsed() < Duration::from_secs(10));
    gone("sleep 3351", Duration::from_secs(3));

    // A timeout not longer than yield_after_seconds: the foreground, as before.
    let (fg, _, _) = mcp.call("run_command", json!({"command": "sleep 6", "timeout": 2}));
    assert_eq!(fg["timed_out"], true, "{fg}");
    assert!(fg.get("job_id").is_none(), "{fg}");
    drop(mcp);

    // From a shell the binary waits, whatever the timeout.
    let r = j.call(
        "sneaky-run",
        json!({"command": "sleep 2 && echo fg", "timeout": 30}),
    );
    let r = r.ok();
    assert_eq!(r["stdout"], "fg\n", "{r}");
    assert!(r.get("job_id").is_none(), "{r}");
}

/// One stdio session driven through its steps in order (a start, a read, a wait with progress,
/// a cancelled wait, the session's end), which is why it is long.
#[test]
fn an_mcp_sessions_end_ends_its_jobs() {
    let j = Jobs::new();
    let root = j.w.root.to_str().expect("utf-8").to_string();
    let mut mcp = j
        .cmd("sneaky-mcp")
        .args(["--root", root.as_str()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sneaky-mcp");
    let mut stdin = mcp.stdin.take().expect("stdin");
    let mut lines = BufReader::new(mcp.stdout.take().expect("stdout")).lines();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").expect("write");
        stdin.flush().expect("flush");
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "echo up; sleep 1.5; echo later; sleep 3341", "background": true, "wait_for": "up"},
        "_meta": {"progressToken": "p"}}}),
    );
    let mut call = None;
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("json");
        if v["id"] == 2 {
            call = Some(v);
            break;
        }
    }
    let call = call.expect("an answer");
    let job = &call["result"]["structuredContent"];
    assert_eq!(job["running"], true, "{call}");
    let id = job["job_id"].as_str().expect("id").to_string();
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "job_output", "arguments": {"job_id": id, "offset": 0}}}),
    );
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("json");
        if v["id"] == 3 {
            assert_eq!(v["result"]["structuredContent"]["stdout"], "up\n", "{v}");
            break;
        }
    }
    // A waiting job_output reports progress, then answers.
    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "job_output", "arguments": {"job_id": id, "wait_for": "later", "wait_ms": 10000},
        "_meta": {"progressToken": "w"}}}),
    );
    let mut progress = 0;
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("json");
        if v["method"] == "notifications/progress" && v["params"]["progressToken"] == "w" {
            progress += 1;
        }
        if v["id"] == 4 {
            assert_eq!(v["result"]["structuredContent"]["stdout"], "later\n", "{v}");
            break;
        }
    }
    assert!(progress > 0, "no progress while job_output waited");
    // Cancelling a waiting call stops the wait, not the job.
    send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "job_output", "arguments": {"job_id": id, "wait_for": "never", "wait_ms": 60000}}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
    );
    send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "job_output", "arguments": {"job_id": id}}}),
    );
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("json");
        assert_ne!(v["id"], 5, "a cancelled call gets no answer: {v}");
        if v["id"] == 6 {
            assert_eq!(v["result"]["structuredContent"]["running"], true, "{v}");
            break;
        }
    }
    assert!(!with_marker("sleep 3341").is_empty());
    drop(stdin);
    let _ = mcp.wait();
    gone("sleep 3341", Duration::from_secs(3));
}

/// One raw HTTP/1.1 exchange with `sneaky-mcp --http` (the connection closes after it): the
/// status and the body.
fn http(port: u16, method: &str, session: Option<&str>, body: &str) -> (u16, String, String) {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Authorization: Bearer {HTTP_TOKEN}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(sid) = session {
        request.push_str(&format!("Mcp-Session-Id: {sid}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

const HTTP_TOKEN: &str = "jobs-suite-token-0123456789abcdef";

/// An HTTP session: its id.
fn http_session(port: u16) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, head, body) = http(port, "POST", None, &init.to_string());
    assert_eq!(status, 200, "{head}{body}");
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_string()
}

/// Start a background job in an HTTP session (the answer comes as server-sent events): its id.
fn http_start(port: u16, session: &str, command: &str) -> String {
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": command, "background": true,
                                             "wait_ms": 0}}});
    let (status, _, body) = http(port, "POST", Some(session), &call.to_string());
    assert_eq!(status, 200, "{body}");
    let answer: Value = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 2)
        .unwrap_or_else(|| panic!("no answer in {body}"));
    let job = &answer["result"]["structuredContent"];
    assert_eq!(job["running"], true, "{answer}");
    job["job_id"].as_str().expect("id").to_string()
}

/// Over HTTP one server serves many sessions: a session's end ends the jobs it started and
/// no others; the server's end ends the rest.
#[test]
fn an_http_sessions_end_ends_its_jobs_and_no_others() {
    let j = Jobs::new();
    let root = j.w.root.to_str().expect("utf-8").to_string();
    let mut server = j
        .cmd("sneaky-mcp")
        .args(["--root", root.as_str(), "--http", "127.0.0.1:0"])
        .env("SNEAKY_MCP_TOKEN", HTTP_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sneaky-mcp --http");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let port: u16 = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            l.split("listening on http://127.0.0.1:")
                .nth(1)
                .map(|p| p.trim_end_matches("/mcp").parse().expect("port"))
        })
        .expect("the server says where it listens");
    std::thread::spawn(move || lines.for_each(drop));
    let (a, b) = (http_session(port), http_session(port));
    let job_a = http_start(port, &a, "sleep 3371");
    let job_b = http_start(port, &b, "sleep 3372");
    appears("sleep 3371");
    appears("sleep 3372");
    let (status, head, _) = http(port, "DELETE", Some(&a), "");
    assert_eq!(status, 204, "{head}");
    gone("sleep 3371", Duration::from_secs(5));
    // The supervisor records the end once it has reaped the job, a moment after its process
    // is gone: the read waits for it (as one for a lease's end does).
    let o = j.output(json!({"job_id": job_a, "wait_for": "never", "wait_ms": 5000}));
    assert_eq!(o["running"], false, "{o}");
    assert_eq!(o["ended_by"], "host", "{o}");
    // Session B and its job go on.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!with_marker("sleep 3372").is_empty(), "B's job ended too");
    let o = j.output(json!({"job_id": job_b}));
    assert_eq!(o["running"], true, "{o}");
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string();
    assert_eq!(http(port, "POST", Some(&b), &ping).0, 200);
    // The server's end ends the jobs of the sessions it still had.
    let _ = server.kill();
    let _ = server.wait();
    gone("sleep 3372", Duration::from_secs(5));
    let o = j.output(json!({"job_id": job_b}));
    assert_eq!(o["ended_by"], "host", "{o}");
}

#[test]
fn fifty_jobs_at_once() {
    let j = Jobs::new();
    let mut ids = Vec::new();
    for n in 0..50 {
        let r =
            j.start(json!({"command": format!("echo job{n}; sleep 44{n:02}.25"), "wait_ms": 0}));
        ids.push(r["job_id"].as_str().expect("id").to_string());
    }
    let list = j.output(json!({"list": true}));
    let jobs = list["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 50);
    assert!(jobs.iter().all(|job| job["state"] == "running"), "{list}");
    for (n, id) in ids.iter().enumerate() {
        let o = j.output(json!({"job_id": id, "offset": 0, "wait_for": "job", "wait_ms": 5000}));
        assert_eq!(o["stdout"], format!("job{n}\n"));
    }
    for id in &ids {
        j.output(json!({"job_id": id, "kill": true}));
    }
    gone("sleep 44", Duration::from_secs(5));
}

#[test]
fn a_flood_stays_within_the_output_bound() {
    let j = Jobs::new();
    let r = j.start(json!({"command": "yes flood", "wait_ms": 2000}));
    let id = r["job_id"].as_str().expect("id").to_string();
    // One answer carries at most max_output_bytes of each stream.
    let cap = 65536;
    assert!(
        r["stdout"].as_str().expect("text").len() <= cap,
        "{}",
        r["stdout_bytes"]
    );
    let o = j.output(json!({"job_id": id, "offset": 0}));
    assert!(o["stdout"].as_str().expect("text").len() <= cap);
    assert!(o["more"] == true, "{}", o["stdout_bytes"]);
    let written = o["stdout_bytes"].as_u64().expect("bytes");
    let bound = sneaky::shell::jobs::store::BOUND;
    assert!(written > 2 * bound, "the flood wrote only {written} bytes");
    assert!(o["dropped_bytes"].as_u64().expect("dropped") > 0, "{o:?}");
    let on_disk = du(&j.runtime());
    assert!(
        on_disk <= 2 * bound + 64 * 1024,
        "{on_disk} bytes on disk for {written} bytes of output"
    );
    j.output(json!({"job_id": id, "kill": true}));
}

fn du(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        total += if meta.is_dir() {
            du(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

#[test]
fn an_agent_runs_jobs_end_with_it() {
    let j = Jobs::new();
    user_config(&j.w, "[permissions]\nallow = [\"run_command\"]\n");
    let mut cmd = crate::agent::agent_command(&j.w, &["pipe"]);
    cmd.env("XDG_RUNTIME_DIR", j.runtime())
        .env_remove("SNEAKY_JOB_OWNER")
        .env_remove("CARGO_TARGET_DIR");
    let mut agent = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sneaky-agent");
    let mut stdin = agent.stdin.take().expect("stdin");
    let call = json!({"id": "call_1", "type": "function", "function": {"name": "run_command",
        "arguments": json!({"command": "echo up; sleep 3351", "background": true,
                            "wait_for": "up"}).to_string()}});
    writeln!(stdin, "{call}").expect("write");
    stdin.flush().expect("flush");
    let mut lines = BufReader::new(agent.stdout.take().expect("stdout")).lines();
    let line = lines.next().expect("an answer").expect("line");
    assert!(line.contains("job_id"), "{line}");
    appears("sleep 3351");
    // The run ends with its input: its job ends with it.
    drop(stdin);
    let status = agent.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    gone("sleep 3351", Duration::from_secs(3));
}

#[test]
fn a_dev_server_answers_later_commands_on_the_workspaces_loopback() {
    if !python_or_skip()
        || !util::require_cmd("curl")
        || !crate::sandbox::namespaces_or_skip("a_dev_server_answers_later_commands")
    {
        return;
    }
    let j = Jobs::new();
    user_config(
        &j.w,
        &format!("[tools.shell]\nextra_allowed_commands = [\"{PYTHON}\", \"curl\"]\n"),
    );
    j.w.write("index.html", "hello from the job\n");
    let r = j.start(json!({
        "command": format!("{PYTHON} -m http.server 8080 --bind 127.0.0.1"),
        "wait_for": "Serving HTTP", "wait_ms": 15000,
    }));
    assert_eq!(r["matched"], true, "{r}");
    assert!(
        r["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("shared loopback"),
        "{r}"
    );
    let id = r["job_id"].as_str().expect("id").to_string();
    // A later command of the workspace reaches it.
    let c = j.call(
        "sneaky-run",
        json!({"command": "curl -s --max-time 5 http://127.0.0.1:8080/index.html"}),
    );
    let c = c.command_ran().clone();
    assert_eq!(c["stdout"], "hello from the job\n", "{c}");
    assert!(
        c["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("shared loopback"),
        "{c}"
    );
    // Its log shows the request.
    let o = j.output(json!({"job_id": id, "wait_for": "GET /index.html", "wait_ms": 5000}));
    assert_eq!(o["matched"], true, "{o}");
    // Nothing beyond the loopback: no route out.
    let c = j.call(
        "sneaky-run",
        json!({"command": "curl -s --max-time 3 http://192.0.2.1/"}),
    );
    assert_ne!(c.command_ran()["exit_code"], 0);
    // Another workspace has a loopback of its own: the server is not there.
    let other = Jobs::new();
    user_config(
        &other.w,
        "[tools.shell]\nextra_allowed_commands = [\"curl\"]\n",
    );
    other.start(json!({"command": "sleep 3361", "wait_ms": 0}));
    let c = other.call(
        "sneaky-run",
        json!({"command": "curl -s --max-time 3 http://127.0.0.1:8080/index.html"}),
    );
    let c = c.command_ran().clone();
    assert_ne!(c["exit_code"], 0, "{c}");
    assert!(
        c["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("shared loopback"),
        "{c}"
    );
    // Killed: no process left.
    j.output(json!({"job_id": id, "kill": true}));
    gone("http.server 8080", Duration::from_secs(3));
}

/// With a host list, a command on the workspace's shared loopback reaches a job's server
/// directly and the listed host (a server on the host's loopback) through the proxy bridged
/// into that namespace; an unlisted port is refused.
#[test]
fn a_host_list_works_on_the_workspaces_shared_loopback() {
    if !python_or_skip()
        || !util::require_cmd("curl")
        || !crate::sandbox::namespaces_or_skip("a_host_list_works_on_the_shared_loopback")
    {
        return;
    }
    let host = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = host.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for mut conn in host.incoming().flatten() {
            let mut line = String::new();
            let _ = BufReader::new(conn.try_clone().expect("clone")).read_line(&mut line);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nHOST\n",
            );
        }
    });
    let j = Jobs::new();
    user_config(
        &j.w,
        &format!(
            "[tools.shell]\nextra_allowed_commands = [\"{PYTHON}\", \"curl\"]\nnetwork = [\"127.0.0.1:{port}\"]\n"
        ),
    );
    j.w.write("index.html", "JOB\n");
    let r = j.start(json!({
        "command": format!("{PYTHON} -m http.server 8091 --bind 127.0.0.1"),
        "wait_for": "Serving HTTP", "wait_ms": 15000,
    }));
    assert_eq!(r["matched"], true, "{r}");
    let id = r["job_id"].as_str().expect("id").to_string();
    let c = j.call(
        "sneaky-run",
        json!({"command": format!(
            "curl -s --max-time 5 --noproxy '*' http://127.0.0.1:8091/index.html; \
             curl -s --max-time 5 http://127.0.0.1:{port}/; \
             curl -s --max-time 5 -o /dev/null -w '%{{http_code}}\\n' http://127.0.0.1:8091/"
        )}),
    );
    let c = c.command_ran().clone();
    assert_eq!(c["stdout"], "JOB\nHOST\n403\n", "{c}");
    let sandbox = c["sandbox"].as_str().unwrap_or("");
    assert!(
        sandbox.contains("shared loopback, a proxy for the host list"),
        "{c}"
    );
    j.output(json!({"job_id": id, "kill": true}));
    gone("http.server 8091", Duration::from_secs(3));
}

#[test]
fn only_our_binaries_outside_the_sandbox_reach_the_supervisor() {
    let j = Jobs::new();
    j.start(json!({"command": "sleep 3371", "wait_ms": 0}));
    let dirs: Vec<PathBuf> = std::fs::read_dir(j.runtime().join("sneaky"))
        .expect("runtime dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let socket = dirs[0].join("sock");
    // Private: the directories are the user's alone.
    use std::os::unix::fs::PermissionsExt;
    for dir in [j.runtime().join("sneaky"), dirs[0].clone()] {
        let mode = std::fs::metadata(&dir).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
    }
    // Another program (this test) is answered with a refusal and nothing else.
    let mut conn = std::os::unix::net::UnixStream::connect(&socket).expect("connect");
    // The refusal may come before the request is written.
    let _ = writeln!(conn, "{}", json!({"op": "list"}));
    let mut answer = String::new();
    BufReader::new(conn).read_line(&mut answer).expect("read");
    assert!(answer.contains("permission_denied"), "{answer}");
    // A sandboxed command cannot even connect.
    if python_or_skip() && crate::sandbox::namespaces_or_skip("only_our_binaries_reach") {
        j.allow_python("");
        let probe = format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({:?})\n    s.sendall(b'{{\"op\": \"list\"}}\\n')\n    print('answer', s.recv(200))\nexcept OSError as e:\n    print('refused', e)\n",
            socket.to_str().expect("utf-8")
        );
        j.w.write("probe.py", &probe);
        let r = j.call(
            "sneaky-run",
            json!({"command": format!("{PYTHON} probe.py")}),
        );
        let out = r.command_ran()["stdout"].as_str().unwrap_or("").to_string();
        assert!(out.starts_with("refused"), "{out}");
    }
}

#[test]
fn a_job_cannot_make_a_protected_path_after_its_start_call_ended() {
    if !python_or_skip()
        || !crate::sandbox::namespaces_or_skip("a_job_cannot_make_a_protected_path")
    {
        return;
    }
    let j = Jobs::new();
    j.allow_python("");
    j.w.write(
        "late.py",
        "import os, time\ntime.sleep(1)\nfor p in ['.vscode/tasks.json', '.envrc']:\n    try:\n        os.makedirs(os.path.dirname(p) or '.', exist_ok=True)\n        open(p, 'w').write('x')\n        print('wrote', p, flush=True)\n    except OSError as e:\n        print('refused', p, e.errno, flush=True)\nprint('done', flush=True)\n",
    );
    let r = j.start(json!({"command": format!("{PYTHON} late.py"), "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("id").to_string();
    let o = j.output(json!({"job_id": id, "wait_for": "done", "wait_ms": 15000}));
    let out = o["stdout"].as_str().unwrap_or("");
    assert!(!out.contains("wrote"), "{o}");
    assert!(!j.w.root.join(".vscode/tasks.json").exists());
    // (A placeholder, a socket file, may still be there a moment: never a regular file.)
    assert!(!j.w.root.join(".envrc").is_file());
}

/// A job (which writes the workspace directly, with no overlay) meets the protected paths as
/// a command does, through every link that reaches them (tests/suite/deny.rs).
#[test]
fn a_job_cannot_plant_an_autorun_file_through_a_link() {
    if !python_or_skip() || !crate::sandbox::namespaces_or_skip("a_job_through_a_link") {
        return;
    }
    let j = Jobs {
        w: crate::deny::linked_ws(),
    };
    std::fs::create_dir_all(j.runtime()).expect("mkdir run");
    let r = j.start(json!({"command": format!("{PYTHON} attempts.py"), "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("id").to_string();
    let o = j.output(json!({"job_id": id, "wait_for": "^done", "wait_ms": 20000}));
    let shown = o.to_string();
    assert!(shown.contains("done"), "{shown}");
    crate::deny::nothing_planted(&j.w, "job", &shown);
}

/// `sneaky-mcp --http` started for `j`'s workspace: the child and its port.
fn http_server(j: &Jobs) -> (std::process::Child, u16) {
    let root = j.w.root.to_str().expect("utf-8").to_string();
    let mut server = j
        .cmd("sneaky-mcp")
        .args(["--root", root.as_str(), "--http", "127.0.0.1:0"])
        .env("SNEAKY_MCP_TOKEN", HTTP_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sneaky-mcp --http");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let port: u16 = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            l.split("listening on http://127.0.0.1:")
                .nth(1)
                .map(|p| p.trim_end_matches("/mcp").parse().expect("port"))
        })
        .expect("the server says where it listens");
    std::thread::spawn(move || lines.for_each(drop));
    (server, port)
}

/// A foreground run_command in an HTTP session, on a thread: the JSON-RPC answers its event
/// stream carried.
fn http_command(
    port: u16,
    session: &str,
    id: u64,
    command: &str,
) -> std::thread::JoinHandle<Vec<Value>> {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": command}}})
    .to_string();
    let session = session.to_string();
    std::thread::spawn(move || {
        let (status, head, body) = http(port, "POST", Some(&session), &call);
        assert_eq!(status, 200, "{head}{body}");
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("id").is_some())
            .collect()
    })
}

/// SIGTERM stops `sneaky-mcp --http` gracefully: new connections are refused at once, a call
/// that ends within the grace period is answered, one that does not is cancelled (its process
/// tree gone, its answer says the server stopped), the sessions' background jobs end, and the
/// server exits with status 0 within its 10 s bound.
#[test]
fn sigterm_stops_http_gracefully_within_its_bound() {
    let j = Jobs::new();
    let (mut server, port) = http_server(&j);
    let session = http_session(port);
    let job = http_start(port, &session, "sleep 3391");
    appears("sleep 3391");
    let quick = http_command(port, &session, 3, "sleep 2 && echo finished-in-grace");
    let slow = http_command(port, &session, 4, "sleep 3392 | sleep 3392");
    appears("sleep 3392");
    std::thread::sleep(Duration::from_millis(300)); // the quick one runs too
    let signalled = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("signal");
    // The listener closes at once: a new connection (a probe) is refused.
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            signalled.elapsed() < Duration::from_secs(1),
            "still accepting after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = loop {
        if let Some(status) = server.try_wait().expect("wait") {
            break status;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(0));
    // The slow call had the 5 s grace period, then was cancelled.
    assert!(took >= Duration::from_millis(4500), "{took:?}");
    gone("sleep 3392", Duration::from_secs(1));
    let quick = quick.join().expect("quick call");
    assert_eq!(quick.len(), 1, "{quick:?}");
    let text = quick[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains("finished-in-grace"), "{quick:?}");
    let slow = slow.join().expect("slow call");
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert_eq!(slow[0]["error"]["code"], -32603, "{slow:?}");
    assert!(
        slow[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stopped")),
        "{slow:?}"
    );
    // The session's job was ended on the server's way out (read waiting for its end: the
    // supervisor records it once the job's held changes are applied, a moment after its
    // processes are gone).
    gone("sleep 3391", Duration::from_secs(3));
    let o = j.output(json!({"job_id": job, "wait_for": "never printed", "wait_ms": 10000}));
    assert_eq!(o["running"], false, "{o}");
    assert_eq!(o["ended_by"], "host", "{o}");
}

/// A job's changes are held aside and applied once it ends, through the same step as a
/// command's: a repository cloned into the workspace after the job started (here made on the
/// host while it runs) does not get the hooks and config the job writes into it, and what it
/// may write lands as one change that undo takes back.
#[test]
fn a_job_cannot_plant_hooks_in_a_repository_cloned_while_it_runs() {
    if !python_or_skip()
        || !util::require_cmd("git")
        || !crate::sandbox::namespaces_or_skip("a_job_cannot_plant_hooks")
    {
        return;
    }
    let j = Jobs::new();
    j.allow_python("");
    j.w.write(
        "plant.py",
        "import sys\n\
         sys.stdin.readline()\n\
         open('sub/.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ntouch /tmp/pwned\\n')\n\
         open('sub/.git/config', 'a').write('[core]\\n\\tfsmonitor = touch /tmp/pwned\\n')\n\
         open('made.txt', 'w').write('by the job\\n')\n\
         print('done', flush=True)\n",
    );
    let r = j.start(json!({"command": format!("{PYTHON} plant.py"), "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("id").to_string();
    assert_eq!(r["running"], true, "{r}");
    // A person clones a repository into the workspace while the job runs.
    let init = Command::new("git")
        .args(["init", "-q", "sub"])
        .current_dir(&j.w.root)
        .status()
        .expect("git init");
    assert!(init.success());
    let config_before = std::fs::read_to_string(j.w.root.join("sub/.git/config")).expect("config");
    // Told once the repository is there (a job that looked the name up before would not see it
    // appear: an overlay keeps what it has looked up).
    let fed = j.call("sneaky-input", json!({"job_id": id, "input": "go\n"}));
    assert_eq!(fed.status, 0, "{fed:?}");
    let o = j.output(json!({"job_id": id, "wait_for": "never printed", "wait_ms": 20000}));
    assert_eq!(o["running"], false, "{o}");
    assert!(o["stdout"].as_str().unwrap_or("").contains("done"), "{o}");
    // Nothing of what the job wrote under the new repository's .git reached it.
    assert!(
        !j.w.root.join("sub/.git/hooks/pre-commit").exists(),
        "the job planted a hook: {o}"
    );
    let config_after = std::fs::read_to_string(j.w.root.join("sub/.git/config")).expect("config");
    assert_eq!(
        config_before, config_after,
        "the job changed sub/.git/config: {o}"
    );
    let discarded = util::strings(&o["discarded"]);
    for planted in ["sub/.git/hooks/pre-commit", "sub/.git/config"] {
        assert!(discarded.iter().any(|d| d == planted), "{planted}: {o}");
    }
    // The rest is applied as one change, which undo takes back.
    assert_eq!(j.w.read("made.txt"), "by the job\n");
    let change = o["change_id"].as_str().expect("change_id").to_string();
    let u = j.call("sneaky-undo", json!({"change_id": change}));
    assert_eq!(u.status, 0, "{u:?}");
    assert!(!j.w.root.join("made.txt").exists());
}

/// A job that ends within its start's wait has its changes applied and reported by that start
/// (the call that started it lets go of the upper layer before it waits, and the supervisor
/// waits for that before applying them).
#[test]
fn a_job_that_ends_within_its_wait_has_its_changes_applied() {
    if !crate::sandbox::namespaces_or_skip(
        "a_job_that_ends_within_its_wait_has_its_changes_applied",
    ) {
        return;
    }
    let j = Jobs::new();
    let r = j.start(json!({"command": "echo quick > quick.txt", "wait_ms": 5000}));
    assert_eq!(r["running"], false, "{r}");
    assert_eq!(
        r["changes"],
        json!([{"path": "quick.txt", "kind": "created"}]),
        "{r}"
    );
    assert!(r.get("changes_unavailable").is_none(), "{r}");
    assert_eq!(j.w.read("quick.txt"), "quick\n");
}

/// While a job runs, what it writes is held: neither the workspace nor a later command sees
/// it until the job has ended.
#[test]
fn a_jobs_changes_reach_the_workspace_when_it_ends() {
    if !crate::sandbox::namespaces_or_skip("a_jobs_changes_reach_the_workspace_when_it_ends") {
        return;
    }
    let j = Jobs::new();
    let r = j.start(json!({"command": "echo held > out.txt; echo written; sleep 3303", "wait_for": "written", "wait_ms": 10000}));
    let id = r["job_id"].as_str().expect("id").to_string();
    assert_eq!(j.output(json!({"job_id": id}))["changes_held"], true, "{r}");
    assert!(
        !j.w.root.join("out.txt").exists(),
        "applied while the job runs"
    );
    let seen = j.call("sneaky-run", json!({"command": "cat out.txt"}));
    assert_ne!(
        seen.status, 0,
        "a later command saw the job's file: {seen:?}"
    );
    let o = j.output(json!({"job_id": id, "kill": true}));
    assert_eq!(o["running"], false, "{o}");
    assert_eq!(
        util::strings(
            &o["changes"]
                .as_array()
                .map(|c| c.iter().map(|x| x["path"].clone()).collect::<Vec<_>>())
                .map(Value::Array)
                .unwrap_or_default()
        ),
        ["out.txt"],
        "{o}"
    );
    assert_eq!(j.w.read("out.txt"), "held\n");
}

/// A place of the read-deny list made after a job started (here `~/.ssh`, made while it runs)
/// stays unreadable to it: its mount view was made before the place existed, and Landlock
/// grants no read there (src/shell/spec.rs, `carve_reads`). What existed beside it stays
/// readable.
#[test]
fn a_denied_place_made_while_a_job_runs_stays_unreadable_to_it() {
    if !python_or_skip() || !crate::sandbox::namespaces_or_skip("a_denied_place_made_while") {
        return;
    }
    let j = Jobs::new();
    j.allow_python("");
    let home = j.w.dir.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    std::fs::write(home.join("notes.txt"), "readable notes\n").expect("write");
    let key = home.join(".ssh/id_test");
    j.w.write(
        "probe.py",
        &format!(
            "import os, time\n\
             print(open({notes:?}).read().strip(), flush=True)\n\
             for _ in range(400):\n    \
                 if os.path.exists({key:?}):\n        break\n    \
                 time.sleep(0.05)\n\
             time.sleep(0.1)\n\
             try:\n    print('read', open({key:?}).read().strip(), flush=True)\n\
             except OSError as e:\n    print('refused', e.errno, flush=True)\n",
            notes = home.join("notes.txt"),
            key = key,
        ),
    );
    let mut cmd = j.cmd("sneaky-run");
    cmd.env("HOME", &home);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(
            json!({"command": format!("{PYTHON} probe.py"), "background": true, "wait_for": "notes", "wait_ms": 10000})
                .to_string(),
        )
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    let r = Reply::parse("sneaky-run", out);
    let id = r.ok()["job_id"].as_str().expect("id").to_string();
    assert!(
        r.ok()["stdout"]
            .as_str()
            .unwrap_or("")
            .contains("readable notes"),
        "{r:?}"
    );
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir .ssh");
    std::fs::write(&key, "SECRET-KEY-MARKER\n").expect("write key");
    // The whole line: output is matched as it arrives, and a line may arrive in two pieces.
    let o =
        j.output(json!({"job_id": id, "wait_for": "read .*\n|refused [0-9]+\n", "wait_ms": 20000}));
    let stdout = o["stdout"].as_str().unwrap_or("");
    assert!(
        !stdout.contains("SECRET-KEY-MARKER"),
        "the job read a denied key: {o}"
    );
    assert!(stdout.contains("refused 13"), "{o}");
}

/// A job that prints, for each path it reads on its input, the file's content or that it is
/// missing; its own change (`own.txt`) is made at its start.
const SHOW_PATHS: &str = "echo own > own.txt; while read p; do if [ -e \"$p\" ]; then cat \"$p\"; \
     else echo \"missing $p\"; fi; echo \"== $p\"; done";

impl Jobs {
    /// Ask a SHOW_PATHS job for `paths`; what it printed for them.
    fn show(&self, id: &str, paths: &[&str]) -> String {
        let input: String = paths.iter().map(|p| format!("{p}\n")).collect();
        let fed = self.call("sneaky-input", json!({"job_id": id, "input": input}));
        assert_eq!(fed.status, 0, "{fed:?}");
        let last = format!("== {}\n", paths[paths.len() - 1]);
        let o = self.output(json!({"job_id": id, "wait_for": last, "wait_ms": 20000}));
        assert_eq!(o["matched"], true, "{o}");
        o["stdout"].as_str().unwrap_or("").to_string()
    }

    fn edit(&self, bin: &str, request: Value) {
        let r = self.call(bin, request);
        assert_eq!(r.status, 0, "{bin}: {r:?}");
    }
}

/// The paths of a result's `changes`.
fn changed_paths(o: &Value) -> Vec<String> {
    o["changes"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|x| x["path"].as_str())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The edit tools' changes made while a job runs reach its view of the workspace (the
/// supervisor mirrors them through its overlay): a file it had read and the tools replaced
/// (str_replace, write_file), a file it had looked for before it was made, a file deleted,
/// a directory made. What the job wrote itself stays held and is all that its end applies:
/// the mirrored paths, equal to the workspace's, are no change of the job's.
#[test]
fn a_job_sees_what_the_tools_change_while_it_runs() {
    if !crate::sandbox::namespaces_or_skip("a_job_sees_what_the_tools_change_while_it_runs") {
        return;
    }
    let j = Jobs::new();
    j.w.write("app.txt", "v1\n")
        .write("conf.txt", "debug = false\n")
        .write("gone.txt", "still here\n");
    let r = j.start(json!({"command": SHOW_PATHS, "wait_ms": 0}));
    let id = r["job_id"].as_str().expect("id").to_string();
    let paths = [
        "app.txt",
        "conf.txt",
        "new.txt",
        "gone.txt",
        "dir/inner.txt",
    ];
    let before = j.show(&id, &paths);
    for seen in [
        "v1\n",
        "debug = false\n",
        "missing new.txt",
        "still here\n",
        "missing dir/inner.txt",
    ] {
        assert!(before.contains(seen), "{seen:?} in {before:?}");
    }
    j.edit(
        "sneaky-replace",
        json!({"file_path": "app.txt", "old_str": "v1", "new_str": "v2"}),
    );
    j.edit(
        "sneaky-write",
        json!({"file_path": "conf.txt", "content": "debug = true\n"}),
    );
    j.edit(
        "sneaky-write",
        json!({"file_path": "new.txt", "content": "made later\n"}),
    );
    j.edit("sneaky-rm", json!({"file_path": "gone.txt"}));
    j.edit(
        "sneaky-write",
        json!({"file_path": "dir/inner.txt", "content": "in a new directory\n"}),
    );
    let after = j.show(&id, &paths);
    for seen in [
        "v2\n",
        "debug = true\n",
        "made later\n",
        "missing gone.txt",
        "in a new directory\n",
    ] {
        assert!(after.contains(seen), "{seen:?} in {after:?}");
    }
    for stale in ["v1", "debug = false", "missing new.txt", "still here"] {
        assert!(!after.contains(stale), "{stale:?} in {after:?}");
    }
    let o = j.output(json!({"job_id": id, "kill": true}));
    assert_eq!(o["running"], false, "{o}");
    assert_eq!(changed_paths(&o), ["own.txt"], "{o}");
    assert_eq!(j.w.read("own.txt"), "own\n");
    assert_eq!(j.w.read("app.txt"), "v2\n");
    assert_eq!(j.w.read("conf.txt"), "debug = true\n");
    assert_eq!(j.w.read("dir/inner.txt"), "in a new directory\n");
    assert!(!j.w.root.join("gone.txt").exists());
}
