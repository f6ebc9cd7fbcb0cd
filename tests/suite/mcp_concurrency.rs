//! sneaky-mcp runs calls side by side, cancels them (taking the command's process tree down),
//! reports progress, and serves Streamable HTTP behind a bearer token: at the protocol level
//! over pipes and raw HTTP here, then through the official Python and TypeScript clients
//! (tests/mcp/concurrency_test.py, tests/mcp/concurrency_test.mjs). The client tests need the
//! packages `.ci/setup-mcp.sh` and `.ci/setup-mcp16.sh` install; without them they say so and
//! skip, except under CI (`CI` set), where they fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Ws};

pub(crate) const WAIT: Duration = Duration::from_secs(30);

struct Stdio_ {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

fn sneaky_mcp(w: &Ws, args: &[&str]) -> Command {
    let mut cmd = Command::cargo_bin("sneaky-mcp").expect("binary");
    cmd.current_dir(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env_remove("SNEAKY_MCP_TOKEN")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .arg("--root")
        .arg(&w.root)
        .args(args);
    cmd
}

impl Stdio_ {
    fn start(w: &Ws) -> Stdio_ {
        let mut child = sneaky_mcp(w, &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn sneaky-mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut s = Stdio_ {
            child,
            stdin,
            lines,
        };
        s.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "suite", "version": "1"}}}),
        );
        assert_eq!(s.recv()["id"], 0);
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .expect("a message within 30 s");
        serde_json::from_str(&line).expect("a JSON line")
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}}));
    }

    /// Close stdin; the messages still to come and stderr.
    fn finish(mut self) -> (Vec<Value>, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(WAIT) {
            rest.push(serde_json::from_str(&line).expect("JSON"));
        }
        let status = self.child.wait().expect("wait");
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut stderr).expect("stderr");
        }
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        (rest, stderr)
    }
}

/// Live processes whose command line contains `marker`.
fn running(marker: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'));
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline.contains(marker) && !zombie
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}.{:06}",
        5000 + std::process::id() % 1000,
        nanos % 1_000_000
    )
}

#[test]
fn answers_leave_as_calls_end_each_with_its_id() {
    let w = util::ws();
    w.write("hello.txt", "hello\n");
    let mut s = Stdio_::start(&w);
    s.call(1, "run_command", json!({"command": "sleep 3 && echo slow"}));
    s.call(2, "read_file", json!({"file_path": "hello.txt"}));
    s.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    s.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    let order: Vec<Value> = (0..4).map(|_| s.recv()).collect();
    let ids: Vec<&Value> = order.iter().map(|m| &m["id"]).collect();
    assert_eq!(
        ids.last(),
        Some(&&json!(1)),
        "the long command answers last: {ids:?}"
    );
    let read = order.iter().find(|m| m["id"] == 2).expect("read answered");
    assert_eq!(read["result"]["structuredContent"]["content"], "hello\n");
    let run = order.iter().find(|m| m["id"] == 1).expect("run answered");
    assert_eq!(
        run["result"]["structuredContent"]["stdout"], "slow\n",
        "{run}"
    );
    // An id still running cannot be used again.
    s.call(5, "run_command", json!({"command": "sleep 1"}));
    s.call(5, "read_file", json!({"file_path": "hello.txt"}));
    let dup = s.recv();
    assert_eq!(dup["error"]["code"], -32600, "{dup}");
    assert_eq!(s.recv()["id"], 5);
    let (rest, _) = s.finish();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn a_cancelled_command_leaves_no_process_and_gets_no_answer() {
    let w = util::ws();
    let mut s = Stdio_::start(&w);
    let mark = marker();
    s.call(
        1,
        "run_command",
        json!({"command": format!("sleep {mark} | sleep {mark} && echo never")}),
    );
    wait_until("the command's sleeps", WAIT, || {
        running(&format!("sleep {mark}")).len() >= 2
    });
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 1, "reason": "test"}}),
    );
    let cancelled = Instant::now();
    wait_until("the process tree to go", Duration::from_secs(5), || {
        running(&format!("sleep {mark}")).is_empty()
    });
    eprintln!(
        "process tree gone {:?} after the cancellation",
        cancelled.elapsed()
    );
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(
        s.recv()["id"],
        2,
        "the server goes on, and the cancelled call is not answered"
    );
    let (rest, stderr) = s.finish();
    assert!(
        rest.is_empty(),
        "no answer for the cancelled request: {rest:?}"
    );
    assert!(
        stderr.contains("cancelled: the process tree was gone"),
        "{stderr}"
    );
}

#[test]
fn sigterm_takes_running_commands_down_and_ends_with_status_0() {
    let w = util::ws();
    let mut s = Stdio_::start(&w);
    let mark = marker();
    s.call(
        1,
        "run_command",
        json!({"command": format!("sleep {mark} | sleep {mark}")}),
    );
    wait_until("the command's sleeps", WAIT, || {
        running(&format!("sleep {mark}")).len() >= 2
    });
    let pid = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signal");
    let status = s.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    wait_until("the process tree to go", Duration::from_secs(5), || {
        running(&format!("sleep {mark}")).is_empty()
    });
}

#[test]
fn cancelling_queued_calls_and_reads() {
    let w = util::ws();
    w.write("sneaky.toml", "[mcp]\nworkers = 1\n")
        .write("a.txt", "a\n");
    let mut s = Stdio_::start(&w);
    // One worker: the second call waits behind the first and is cancelled before it runs.
    s.call(1, "run_command", json!({"command": "sleep 1"}));
    s.call(2, "read_file", json!({"file_path": "a.txt"}));
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 2}}),
    );
    s.call(3, "read_file", json!({"file_path": "a.txt"}));
    assert_eq!(s.recv()["id"], 1);
    assert_eq!(s.recv()["id"], 3);
    let (rest, stderr) = s.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(
        stderr.contains("request 2 was cancelled before it ran"),
        "{stderr}"
    );
}

/// A read the serving thread would run itself while other calls run (no hand-over to a worker)
/// goes to a worker when a hook runs around it: a hook is the user's program, which may take
/// seconds, and pings are answered meanwhile.
#[test]
fn a_read_with_a_slow_hook_does_not_hold_up_pings() {
    let w = util::ws();
    w.write("a.txt", "a\n");
    let hook = crate::hooks::script(&w, "slow.sh", "cat > /dev/null\nsleep 2");
    w.user_config(&crate::hooks::entry(
        "PreToolUse",
        "read_file",
        hook.to_str().expect("utf-8 path"),
        "",
    ));
    let mut s = Stdio_::start(&w);
    s.call(1, "run_command", json!({"command": "sleep 3"}));
    s.call(2, "read_file", json!({"file_path": "a.txt"}));
    s.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let sent = Instant::now();
    let first = s.recv();
    assert_eq!(first["id"], 3, "the ping is answered first: {first}");
    assert!(
        sent.elapsed() < Duration::from_millis(1500),
        "the ping waited {:?}",
        sent.elapsed()
    );
    let read = s.recv();
    assert_eq!(read["id"], 2, "{read}");
    assert_eq!(read["result"]["structuredContent"]["content"], "a\n");
    assert_eq!(s.recv()["id"], 1);
    let (rest, _) = s.finish();
    assert!(rest.is_empty(), "{rest:?}");
}

/// A tree big enough that grep_files takes a while over it (no file matches the pattern).
fn big_tree(w: &Ws, dirs: usize, files: usize) {
    let line = "the quick brown fox jumps over the lazy dog, again and again\n".repeat(40);
    for d in 0..dirs {
        let dir = w.root.join(format!("big/d{d:04}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..files {
            std::fs::write(dir.join(format!("f{f:03}.txt")), &line).expect("write");
        }
    }
}

/// A cancelled walk stops early. With one worker, a grep over a large tree is
/// cancelled soon after it starts; it gets no answer, and the read queued behind it is answered
/// well before the uncancelled grep's time (the worker is free again).
#[test]
fn a_cancelled_grep_stops_early_and_frees_its_worker() {
    let w = util::ws();
    w.write("sneaky.toml", "[mcp]\nworkers = 1\n")
        .write("a.txt", "a\n");
    big_tree(&w, 120, 40);
    let mut s = Stdio_::start(&w);
    let grep = json!({"pattern": "needle[0-9]+ that is nowhere", "path": "big"});
    // Twice, so that the time measured is with the tree in the page cache, like the next one.
    let mut full = Duration::ZERO;
    for id in [10, 11] {
        s.call(id, "grep_files", grep.clone());
        let started = Instant::now();
        let whole = s.recv();
        full = started.elapsed();
        assert_eq!(whole["id"], id, "{whole}");
        assert_eq!(whole["result"]["isError"], false, "{whole}");
    }
    // The same grep again, cancelled after a tenth of its time, then a read behind it.
    s.call(2, "grep_files", grep);
    std::thread::sleep((full / 10).max(Duration::from_millis(5)));
    let cancelled = Instant::now();
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 2, "reason": "the user moved on"}}),
    );
    s.call(3, "read_file", json!({"file_path": "a.txt"}));
    let next = s.recv();
    let after_cancel = cancelled.elapsed();
    eprintln!("grep over the tree: {full:?}; the read answered {after_cancel:?} after the cancel");
    assert_eq!(next["id"], 3, "the cancelled grep gets no answer: {next}");
    assert!(
        after_cancel < full / 2,
        "the cancelled grep ran on: {after_cancel:?} after the cancellation, the whole grep \
         took {full:?}"
    );
    let (rest, stderr) = s.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(
        stderr.contains("request 2 was cancelled; its result is dropped"),
        "{stderr}"
    );
}

#[test]
fn progress_notifications_carry_elapsed_time_and_bytes() {
    let w = util::ws();
    let mut s = Stdio_::start(&w);
    s.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "seq 1 5000 && sleep 1.2"},
        "_meta": {"progressToken": "tok"}}}),
    );
    let mut progress = Vec::new();
    let answer = loop {
        let m = s.recv();
        if m["method"] == "notifications/progress" {
            progress.push(m["params"].clone());
        } else {
            break m;
        }
    };
    assert_eq!(answer["id"], 1);
    assert!(!progress.is_empty(), "no progress notifications");
    for p in &progress {
        assert_eq!(p["progressToken"], "tok");
        let message = p["message"].as_str().expect("message");
        assert!(message.contains("23893 bytes of output"), "{message}");
    }
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    // Without a token, no notifications.
    s.call(2, "run_command", json!({"command": "sleep 0.8"}));
    assert_eq!(s.recv()["id"], 2);
    s.finish();
}

/// One raw HTTP/1.1 request; the status and the body.
pub(crate) fn http(
    port: u16,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    http_at(port, method, "/mcp", headers, body)
}

/// One raw HTTP/1.1 request to `path`.
fn http_at(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    stream.write_all(body.as_bytes()).expect("send body");
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

pub(crate) struct HttpServer {
    pub(crate) child: Child,
    pub(crate) port: u16,
    pub(crate) stderr: Receiver<String>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_http(w: &Ws, token: Option<&str>, extra: &[&str]) -> HttpServer {
    let mut args = vec!["--http", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut cmd = sneaky_mcp(w, &args);
    if let Some(token) = token {
        cmd.env("SNEAKY_MCP_TOKEN", token);
    }
    spawn_http(cmd)
}

/// Start `cmd` (sneaky-mcp --http on port 0, however wrapped) and wait for the port it says.
fn spawn_http(mut cmd: Command) -> HttpServer {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (tx, rx) = mpsc::channel();
    let mut server = HttpServer {
        child,
        port: 0,
        stderr: rx,
    };
    let stderr = server.child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut seen = Vec::new();
    while server.port == 0 {
        let line = server
            .stderr
            .recv_timeout(WAIT)
            .expect("the server says where it listens");
        if let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1) {
            // The port's digits, in a text line or a JSON one (`--log-format json`).
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            server.port = digits.parse().expect("port");
        }
        seen.push(line);
        assert!(seen.len() < 20, "{seen:?}");
    }
    server
}

pub(crate) const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
pub(crate) const JSON: (&str, &str) = ("Content-Type", "application/json");

pub(crate) fn initialize(port: u16, auth: &str) -> String {
    initialize_version(port, auth, "2025-06-18")
}

fn initialize_version(port: u16, auth: &str, version: &str) -> String {
    initialize_as(port, auth, version, "raw")
}

/// A session of a client that names itself `client` in `clientInfo`.
fn initialize_as(port: u16, auth: &str, version: &str, client: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": client, "version": "1"}}});
    let (status, head, body) = http(
        port,
        "POST",
        &[ACCEPT, JSON, ("Authorization", auth)],
        &init.to_string(),
    );
    assert_eq!(status, 200, "{head}{body}");
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_string()
}

#[test]
fn http_refuses_without_the_token_or_from_a_foreign_origin_and_runs_nothing() {
    let w = util::ws();
    w.write("hello.txt", "hi\n");
    let token = "t0ken-for-the-suite-0123456789";
    let server = start_http(
        &w,
        Some(token),
        &["--allow-origin", "https://agent.example"],
    );
    let port = server.port;
    let auth = format!("Bearer {token}");
    let session = initialize(port, &auth);
    let touch = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "touch ran.txt"}}})
    .to_string();
    let sid = ("Mcp-Session-Id", session.as_str());
    for auth in [
        None,
        Some("Bearer wrong-token-0123456789abc"),
        Some("Basic x"),
    ] {
        let mut headers = vec![ACCEPT, JSON, sid];
        if let Some(a) = auth {
            headers.push(("Authorization", a));
        }
        let (status, head, body) = http(port, "POST", &headers, &touch);
        assert_eq!(status, 401, "{auth:?}");
        assert!(head.contains("www-authenticate: bearer"), "{head}");
        // What is wanted and where it comes from, in the body and the challenge.
        assert!(
            body.contains("Authorization: Bearer TOKEN") && body.contains("SNEAKY_MCP_TOKEN"),
            "{body}"
        );
        let challenge = head
            .lines()
            .find(|l| l.starts_with("www-authenticate:"))
            .expect("a challenge");
        assert!(
            challenge.contains("error_description=\"a static bearer token is wanted")
                && challenge.contains("sneaky_mcp_token"),
            "{challenge}"
        );
        assert_eq!(
            challenge.contains("error=\"invalid_token\""),
            auth.is_some(),
            "{challenge}"
        );
    }
    // OAuth discovery finds that there is no OAuth server: 404 with a JSON reason, no 401.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let (status, head, body) = http_at(port, "GET", path, &[], "");
        assert_eq!(status, 404, "{path}: {head}");
        assert!(!head.contains("www-authenticate"), "{head}");
        let reason: Value = serde_json::from_str(&body).expect("a JSON body");
        assert!(
            reason["error_description"]
                .as_str()
                .is_some_and(|d| d.contains("no OAuth") && d.contains("Bearer")),
            "{body}"
        );
    }
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut h = vec![ACCEPT, JSON, sid, ("Authorization", auth.as_str())];
        h.extend_from_slice(extra);
        h
    };
    let (status, _, _) = http(
        port,
        "POST",
        &with(&[("Origin", "http://evil.example")]),
        &touch,
    );
    assert_eq!(status, 403);
    let (status, _, _) = http(port, "POST", &with(&[("Origin", "null")]), &touch);
    assert_eq!(status, 403);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!w.root.join("ran.txt").exists(), "a refused request ran");

    // The allowed origins, a known session: it runs; an in-process tool answers as JSON, a
    // command as an event stream.
    let read = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "read_file", "arguments": {"file_path": "hello.txt"}}})
    .to_string();
    for origin in ["http://localhost:3000", "https://agent.example"] {
        let (status, head, body) = http(port, "POST", &with(&[("Origin", origin)]), &read);
        assert_eq!(status, 200, "{origin}: {head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(body.contains(r#""content":"hi\n""#), "{body}");
    }
    let echo = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "echo hi"}}})
    .to_string();
    let (status, head, body) = http(port, "POST", &with(&[]), &echo);
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(body.contains("event: message\ndata: {"), "{body}");
    assert!(body.contains(r#""stdout":"hi\n""#), "{body}");
    // Bodies are bounded; sessions must exist; GET has no stream; the path is /mcp.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"x":"{}"}}}}"#,
        "x".repeat(5 * 1024 * 1024)
    );
    assert_eq!(http(port, "POST", &with(&[]), &big).0, 413);
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let unknown = [
        ACCEPT,
        JSON,
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", "nope"),
    ];
    assert_eq!(http(port, "POST", &unknown, ping).0, 404);
    let none = [ACCEPT, JSON, ("Authorization", auth.as_str())];
    assert_eq!(http(port, "POST", &none, ping).0, 400);
    assert_eq!(http(port, "GET", &with(&[]), "").0, 405);
    assert_eq!(
        http(port, "POST", &[JSON, sid, ("Authorization", &auth)], ping).0,
        406
    );
    let (status, _, body) = http(port, "POST", &with(&[]), ping);
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#)
    );
    assert_eq!(http(port, "DELETE", &with(&[]), "").0, 204);
    assert_eq!(
        http(port, "POST", &with(&[]), ping).0,
        404,
        "the session ended"
    );
}

#[test]
fn http_token_is_generated_and_printed_once_when_none_is_given() {
    let w = util::ws();
    let mut child = sneaky_mcp(&w, &["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut token = None;
    let mut port = 0u16;
    for line in lines.by_ref().map_while(|l| l.ok()) {
        if let Some(t) = line.split("bearer token").nth(1) {
            token = t.rsplit(' ').next().map(str::to_string);
        }
        if let Some(rest) = line.split("listening on http://127.0.0.1:").nth(1) {
            port = rest.trim_end_matches("/mcp").parse().expect("port");
            break;
        }
    }
    let token = token.expect("a generated token on stderr");
    assert_eq!(token.len(), 64, "{token}");
    initialize(port, &format!("Bearer {token}"));
    let _ = child.kill();
    let _ = child.wait();

    // A short token is refused before serving.
    let out = sneaky_mcp(&w, &["--http", "127.0.0.1:0"])
        .env("SNEAKY_MCP_TOKEN", "short")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));
}

#[test]
fn http_cancellation_ends_the_stream_and_the_tree() {
    let w = util::ws();
    let token = "another-suite-token-0123456789";
    let server = start_http(&w, Some(token), &[]);
    let port = server.port;
    let auth = format!("Bearer {token}");
    let session = initialize(port, &auth);
    let mark = marker();
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": format!("sleep {mark}")}}})
    .to_string();
    let (s2, a2) = (session.clone(), auth.clone());
    let stream = std::thread::spawn(move || {
        http(
            port,
            "POST",
            &[
                ACCEPT,
                JSON,
                ("Authorization", &a2),
                ("Mcp-Session-Id", &s2),
            ],
            &call,
        )
    });
    wait_until("the sleep", WAIT, || {
        !running(&format!("sleep {mark}")).is_empty()
    });
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7}})
    .to_string();
    let headers = [
        ACCEPT,
        JSON,
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", &session),
    ];
    assert_eq!(http(port, "POST", &headers, &cancel).0, 202);
    wait_until("the tree to go", Duration::from_secs(5), || {
        running(&format!("sleep {mark}")).is_empty()
    });
    let (status, _, body) = stream.join().expect("stream");
    assert_eq!(status, 200);
    assert!(
        !body.contains("\"id\":7"),
        "a cancelled call is not answered: {body}"
    );
    let mut logged = Vec::new();
    while let Ok(line) = server.stderr.recv_timeout(Duration::from_secs(5)) {
        if line.contains("cancelled: the process tree was gone") {
            return;
        }
        logged.push(line);
    }
    panic!("the cancellation was not logged: {logged:?}");
}

/// Where the packages of `.ci/setup-mcp.sh` and `.ci/setup-mcp16.sh` live.
fn target_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    if target.is_absolute() {
        target
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(target)
    }
}

/// False (after saying why) when an outside client is not installed; under CI a failure.
fn installed(what: &std::path::Path, setup: &str) -> bool {
    if what.exists() {
        return true;
    }
    let message = format!(
        "{} is missing: run `{setup}` to install the official client this test drives",
        what.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{message}");
    eprintln!("SKIPPED (loudly): {message}");
    false
}

fn run_client(mut cmd: Command, name: &str) {
    let w = util::ws();
    w.write("hello.txt", "hello world\n");
    let out = cmd
        .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
        .arg(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env_remove("SNEAKY_MCP_TOKEN")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .output()
        .expect("run the client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all concurrency checks passed"),
        "the {name} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn official_python_client_parallel_cancel_progress_and_http() {
    let python = target_dir().join("mcp-venv/bin/python");
    if !installed(&python, ".ci/setup-mcp.sh") {
        return;
    }
    let mut cmd = Command::new(python);
    cmd.arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/concurrency_test.py"));
    run_client(cmd, "Python MCP client");
}

#[test]
fn official_typescript_client_parallel_cancel_progress_and_http() {
    let modules = target_dir().join("mcp-node/node_modules/@modelcontextprotocol/sdk");
    if !installed(&modules, ".ci/setup-mcp16.sh") {
        return;
    }
    let mut cmd = Command::new("node");
    cmd.arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/concurrency_test.mjs"))
        .env(
            "SNEAKY_NODE_MODULES",
            target_dir().join("mcp-node/node_modules"),
        );
    run_client(cmd, "TypeScript MCP client");
}

/// Clients without the token cannot hold the server's connections: with few descriptors
/// (`ulimit -n 160`) and 200 connections opened and left idle, a client with the token is still
/// served at once (the oldest idle connections are closed to make room), and a client without it
/// is told 401 and its connection closed.
#[test]
fn idle_connections_without_the_token_do_not_lock_out_those_with_it() {
    let w = util::ws();
    let token = "a-long-enough-test-token-123";
    let bin = assert_cmd::cargo::cargo_bin("sneaky-mcp");
    let mut cmd = Command::new("bash");
    cmd.current_dir(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("SNEAKY_MCP_TOKEN", token)
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .args(["-c", "ulimit -n 160 && exec \"$0\" \"$@\""])
        .arg(&bin)
        .arg("--root")
        .arg(&w.root)
        .args(["--http", "127.0.0.1:0"]);
    let server = spawn_http(cmd);
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).expect("connect"))
        .collect();
    let started = std::time::Instant::now();
    let session = initialize(server.port, &format!("Bearer {token}"));
    assert!(!session.is_empty());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the client with the token waited {:?}",
        started.elapsed()
    );
    let (status, head, _) = http(server.port, "POST", &[ACCEPT, JSON], "{}");
    assert_eq!(status, 401, "{head}");
    assert!(head.contains("connection: close"), "{head}");
    drop(idle);
}

/// JSON-RPC batches over HTTP: a 2025-03-26 session gets one array (as JSON, or as an event
/// stream when a command is among the calls), 202 for a batch of notifications; a 2025-06-18
/// Over HTTP each session gets the shape of its client (src/mcp/shape.rs): a Claude Code session
/// no `outputSchema` and no `structuredContent`, another client's both, side by side on one
/// server; `--structured-content off` gives every session text only.
#[test]
fn http_sessions_get_the_shape_of_their_client() {
    let w = util::ws();
    w.write("hello.txt", "hi\n");
    let token = "t0ken-for-the-suite-0123456789";
    let by_client = start_http(&w, Some(token), &[]);
    let text_only = start_http(&w, Some(token), &["--structured-content", "off"]);
    let auth = format!("Bearer {token}");
    // Both sessions of the first server open before either is used.
    let sessions = [
        (&by_client, "claude-code", false),
        (&by_client, "raw", true),
        (&text_only, "raw", false),
    ]
    .map(|(server, client, structured)| {
        let session = initialize_as(server.port, &auth, "2025-11-25", client);
        (server.port, session, client, structured)
    });
    for (port, session, client, structured) in sessions {
        let headers = [
            ACCEPT,
            JSON,
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let label = format!("{client} on port {port}");
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let (status, _, body) = http(port, "POST", &headers, &list.to_string());
        assert_eq!(status, 200, "{label}: {body}");
        let listed: Value = serde_json::from_str(&body).expect("JSON");
        let tools = listed["result"]["tools"].as_array().expect("tools").clone();
        assert!(
            tools
                .iter()
                .all(|t| t.get("outputSchema").is_some() == structured),
            "{label}: {body}"
        );
        let read = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"file_path": "hello.txt"}}});
        let (status, _, body) = http(port, "POST", &headers, &read.to_string());
        assert_eq!(status, 200, "{label}: {body}");
        let answer: Value = serde_json::from_str(&body).expect("JSON");
        let result = &answer["result"];
        assert_eq!(
            result.get("structuredContent").is_some(),
            structured,
            "{label}: {body}"
        );
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": "hello.txt (lines 1-1 of 1)\nhi\n"}]),
            "{label}"
        );
    }
}

/// session is refused as before.
#[test]
fn http_batches_in_a_2025_03_26_session() {
    let w = util::ws();
    w.write("hello.txt", "hi\n");
    let token = "t0ken-for-the-suite-0123456789";
    let server = start_http(&w, Some(token), &[]);
    let port = server.port;
    let auth = format!("Bearer {token}");
    let session = initialize_version(port, &auth, "2025-03-26");
    let headers = [
        ACCEPT,
        JSON,
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "read_file", "arguments": {"file_path": "hello.txt"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ]);
    let (status, head, body) = http(port, "POST", &headers, &batch.to_string());
    assert_eq!(status, 200, "{head}{body}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let answers: Value = serde_json::from_str(&body).expect("JSON");
    let ids: Vec<i64> = answers
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|a| a["id"].as_i64())
        .collect();
    assert_eq!(ids, [1, 2, 3], "{body}");
    assert_eq!(
        answers[2]["result"]["content"][0]["text"],
        "hello.txt (lines 1-1 of 1)\nhi\n"
    );

    let notes = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let (status, _, body) = http(port, "POST", &headers, &notes.to_string());
    assert_eq!((status, body.as_str()), (202, ""));

    let command = json!([
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "run_command", "arguments": {"command": "echo batched"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    ]);
    let (status, head, body) = http(port, "POST", &headers, &command.to_string());
    assert_eq!(status, 200, "{head}{body}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let data = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("an event");
    let answers: Value = serde_json::from_str(data).expect("JSON");
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{body}");
    assert!(data.contains(r#"[stdout]\nbatched"#), "{body}");

    let newer = initialize(port, &auth);
    let headers = [
        ACCEPT,
        JSON,
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", newer.as_str()),
    ];
    let (status, _, body) = http(port, "POST", &headers, &batch.to_string());
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("-32600"), "{body}");
}

/// The ids of the events in a raw SSE response (chunked or not: each event is one chunk).
pub(crate) fn event_ids(text: &str) -> Vec<(u64, u64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(|id| {
            let (s, n) = id.trim().split_once('-').expect("STREAM-N");
            (s.parse().expect("stream"), n.parse().expect("number"))
        })
        .collect()
}

/// Event streams carry ids and `retry`; a client whose connection dropped during a long
/// command resumes with `GET /mcp` and `Last-Event-ID` and gets the rest, answer included.
#[test]
fn http_event_streams_resume_after_a_dropped_connection() {
    let w = util::ws();
    let token = "t0ken-for-the-suite-0123456789";
    let server = start_http(&w, Some(token), &[]);
    let port = server.port;
    let auth = format!("Bearer {token}");
    let session = initialize(port, &auth);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": "sleep 2; echo resumed"},
        "_meta": {"progressToken": "p"}}})
    .to_string();
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.set_read_timeout(Some(WAIT)).expect("timeout");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, \
         text/event-stream\r\nContent-Type: application/json\r\nAuthorization: {auth}\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{call}",
        call.len()
    );
    conn.write_all(request.as_bytes()).expect("send");
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("notifications/progress") {
        let n = conn.read(&mut buf).expect("read the stream");
        assert!(n > 0, "the stream ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    drop(conn); // the connection drops while the command runs
    assert!(seen.contains("retry: 1000"), "{seen}");
    let ids = event_ids(&seen);
    let (stream, _) = ids[0];
    assert_eq!(ids[0], (stream, 0), "a priming event first: {seen}");
    assert!(!seen.contains("resumed"), "{seen}");
    let last = ids.last().expect("ids");
    let last_id = format!("{}-{}", last.0, last.1);

    let sid = ("Mcp-Session-Id", session.as_str());
    let authorization = ("Authorization", auth.as_str());
    let (status, head, body) = http(
        port,
        "GET",
        &[ACCEPT, authorization, sid, ("Last-Event-ID", &last_id)],
        "",
    );
    assert_eq!(status, 200, "{head}{body}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let resumed = event_ids(&body);
    assert!(
        resumed.iter().all(|(s, n)| *s == stream && *n > last.1),
        "only later events of that stream: {resumed:?} after {last_id}"
    );
    assert!(
        body.contains(r#""id":7"#) && body.contains(r#"[stdout]\nresumed"#),
        "{body}"
    );

    // Nothing left after the answer: 204. Unknown streams: 404. No Last-Event-ID: 405.
    let (s, n) = resumed.last().expect("the answer's id");
    let end = format!("{s}-{n}");
    let get = |last: &str| {
        http(
            port,
            "GET",
            &[ACCEPT, authorization, sid, ("Last-Event-ID", last)],
            "",
        )
        .0
    };
    assert_eq!(get(&end), 204);
    assert_eq!(get("999-0"), 404);
    assert_eq!(get("nonsense"), 400);
    assert_eq!(http(port, "GET", &[ACCEPT, authorization, sid], "").0, 405);
}

/// A TCP connection to 127.0.0.1:`port` from the source address `from` (any of 127/8).
fn connect_from(from: std::net::Ipv4Addr, port: u16) -> std::io::Result<TcpStream> {
    use nix::sys::socket::{bind, connect, socket, AddressFamily, SockFlag, SockType, SockaddrIn};
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let [a, b, c, d] = from.octets();
    bind(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrIn::new(a, b, c, d, 0),
    )?;
    connect(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrIn::new(127, 0, 0, 1, port),
    )?;
    Ok(TcpStream::from(fd))
}

/// Whether the server closed this connection (EOF or reset); waits up to `wait` for it.
fn closed_within(stream: &TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).expect("timeout");
    let mut byte = [0u8; 1];
    matches!((&*stream).read(&mut byte), Ok(0))
        || matches!((&*stream).read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset)
}

/// The bounds of `--http` against clients without the token: started with a soft descriptor
/// limit of 256 (the hard one higher), the server raises it; 2,500 idle connections from one
/// address close only that address's own older ones (another address's stay open), a client
/// with the token is served at once, and an idle connection is closed after the header
/// timeout.
#[test]
fn http_bounds_hold_against_2500_idle_connections_without_the_token() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("limit");
    if hard < 3000 && !util::skip("needs a hard descriptor limit of at least 3000") {
        return;
    }
    if soft < 3000 {
        setrlimit(Resource::RLIMIT_NOFILE, hard.min(8192), hard).expect("raise");
    }
    let w = util::ws();
    let token = "a-long-enough-test-token-123";
    let bin = assert_cmd::cargo::cargo_bin("sneaky-mcp");
    let mut cmd = Command::new("bash");
    cmd.current_dir(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("SNEAKY_MCP_TOKEN", token)
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .args(["-c", "ulimit -Sn 256 && exec \"$0\" \"$@\""])
        .arg(&bin)
        .arg("--root")
        .arg(&w.root)
        .args(["--http", "127.0.0.1:0"]);
    let server = spawn_http(cmd);
    let limits =
        std::fs::read_to_string(format!("/proc/{}/limits", server.child.id())).expect("limits");
    let raised: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .expect("soft limit");
    assert!(raised > 256, "the soft descriptor limit stayed {raised}");

    let neighbour = std::net::Ipv4Addr::new(127, 0, 0, 3);
    let flood = std::net::Ipv4Addr::new(127, 0, 0, 2);
    let theirs: Vec<TcpStream> = (0..10)
        .map(|_| connect_from(neighbour, server.port).expect("connect"))
        .collect();
    let opened = Instant::now();
    // In bursts: a burst beyond the listen backlog (1024) would have the kernel drop SYNs,
    // and each dropped one costs its client a second before it tries again.
    let mut idle: Vec<TcpStream> = Vec::new();
    for _ in 0..25 {
        for _ in 0..100 {
            idle.push(connect_from(flood, server.port).expect("connect"));
        }
        std::thread::sleep(Duration::from_millis(40));
    }
    let started = Instant::now();
    let session = initialize(server.port, &format!("Bearer {token}"));
    assert!(!session.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the client with the token waited {:?}",
        started.elapsed()
    );
    // The flood closed its own oldest connections, not the neighbour's (which the header
    // timeout closes only 10 s after they were opened): at most 64 of its own are left open.
    let age = opened.elapsed();
    for t in &theirs {
        assert!(
            !closed_within(t, Duration::from_millis(20)),
            "another address's connection was closed by the flood ({age:?} after it opened)"
        );
    }
    let still_open = idle
        .iter()
        .rev()
        .take(100)
        .filter(|s| !closed_within(s, Duration::from_millis(20)))
        .count();
    assert!(
        still_open <= 64,
        "{still_open} of the flood's connections open"
    );
    drop(idle);
    // Without the token: 401 and closed; and an idle one closed after the header timeout.
    let (status, head, _) = http(server.port, "POST", &[ACCEPT, JSON], "{}");
    assert_eq!(status, 401, "{head}");
    let silent = theirs.into_iter().next().expect("one");
    assert!(
        closed_within(&silent, Duration::from_secs(20)),
        "an idle connection without the token stayed open"
    );
}

/// `/healthz` answers 200 `ok` without the token (an engine's readiness probe), says nothing
/// of the server, refuses other methods with 405, and runs nothing; `/mcp` still wants the
/// token.
#[test]
fn http_healthz_answers_without_the_token_and_tells_nothing() {
    let w = util::ws();
    let token = "healthz-suite-token-0123456789";
    let server = start_http(&w, Some(token), &[]);
    let port = server.port;
    let (status, head, body) = http_at(port, "GET", "/healthz", &[], "");
    assert_eq!((status, body.as_str()), (200, "ok\n"), "{head}");
    assert!(head.contains("content-type: text/plain"), "{head}");
    assert!(!head.contains("www-authenticate"), "{head}");
    assert!(!head.contains("server:"), "{head}");
    assert!(!body.contains(token), "{body}");
    // A wrong token changes nothing: the probe needs none and gets the same.
    let (status, _, body) = http_at(
        port,
        "GET",
        "/healthz",
        &[("Authorization", "Bearer not-the-token-000000")],
        "",
    );
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    let (status, head, body) = http_at(port, "HEAD", "/healthz", &[], "");
    assert_eq!((status, body.as_str()), (200, ""), "{head}");
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let (status, head, _) = http_at(port, method, "/healthz", &[], "{}");
        assert_eq!(status, 405, "{method}: {head}");
        assert!(head.contains("allow: get, head"), "{method}: {head}");
    }
    // Only that path: a neighbour or the endpoint without the token is still 401.
    assert_eq!(http_at(port, "GET", "/healthz/x", &[], "").0, 401);
    assert_eq!(http_at(port, "GET", "/health", &[], "").0, 401);
    assert_eq!(http(port, "POST", &[ACCEPT, JSON], "{}").0, 401);
}

/// The JSON lines `--log-format json` wrote: each line must be one.
fn json_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn calls_logged(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["event"] == "call").collect()
}

/// `--log-format json` over stdio: every stderr line is JSON, each call gets one line with its
/// time, tool, duration and outcome (a tool error's code), and neither an argument's value nor
/// a result's content appears.
#[test]
fn json_logs_one_line_per_call_without_arguments_over_stdio() {
    let w = util::ws();
    let secret = "sk-live-0123456789abcdefSECRET";
    w.write("notes.txt", &format!("key {secret}\n"));
    let mut child = sneaky_mcp(&w, &["--log-format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "suite", "version": "1"}}});
    let calls = [
        json!({"name": "read_file", "arguments": {"file_path": "notes.txt"}}),
        json!({"name": "read_file", "arguments": {"file_path": format!("{secret}.txt")}}),
        json!({"name": "run_command", "arguments": {"command": format!("echo {secret}")}}),
        json!({"name": format!("no-such-{secret}"), "arguments": {}}),
    ];
    writeln!(stdin, "{init}").expect("write");
    for (n, params) in calls.iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                          "params": params});
        writeln!(stdin, "{call}").expect("write");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(secret), "the call ran: {stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(secret), "{stderr}");
    let lines = json_lines(&stderr.lines().map(str::to_string).collect::<Vec<_>>());
    assert!(
        lines.iter().all(|l| l["time"]
            .as_str()
            .is_some_and(|t| t.len() == 24 && t.ends_with('Z'))),
        "{stderr}"
    );
    assert!(
        lines.iter().any(|l| l["msg"]
            .as_str()
            .is_some_and(|m| m.starts_with("workspace "))),
        "{stderr}"
    );
    let logged = calls_logged(&lines);
    assert_eq!(logged.len(), 4, "{stderr}");
    let summary: Vec<(Value, Value, Value)> = logged
        .iter()
        .map(|l| (l["tool"].clone(), l["outcome"].clone(), l["code"].clone()))
        .collect();
    for expected in [
        (json!("read_file"), json!("ok"), Value::Null),
        (json!("read_file"), json!("error"), json!("not_found")),
        (json!("run_command"), json!("ok"), Value::Null),
        (Value::Null, json!("invalid_params"), Value::Null),
    ] {
        assert!(summary.contains(&expected), "{expected:?} in {summary:?}");
    }
    for l in &logged {
        assert!(l["duration_ms"].is_u64(), "{l}");
        assert!(l.get("session").is_none(), "{l}");
        let keys: Vec<&String> = l.as_object().expect("object").keys().collect();
        assert!(
            keys.iter().all(
                |k| ["time", "event", "tool", "duration_ms", "outcome", "code"]
                    .contains(&k.as_str())
            ),
            "{l}"
        );
    }
}

/// Over HTTP each call's line names its session by the first 8 characters of its id; the token
/// is never logged; a cancelled call logs "cancelled". Without `--log-format json` nothing per
/// call is logged (the text lines stay as they were).
#[test]
fn json_logs_over_http_name_the_session_and_never_the_token() {
    let w = util::ws();
    w.write("hello.txt", "hi\n");
    let token = "log-suite-token-0123456789abcdef";
    let server = start_http(&w, Some(token), &["--log-format", "json"]);
    let port = server.port;
    let auth = format!("Bearer {token}");
    let session = initialize(port, &auth);
    let headers = [
        ACCEPT,
        JSON,
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let read = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "read_file", "arguments": {"file_path": "hello.txt"}}});
    assert_eq!(http(port, "POST", &headers, &read.to_string()).0, 200);
    let mut lines = Vec::new();
    let deadline = Instant::now() + WAIT;
    while calls_logged(&json_lines(&lines)).is_empty() {
        assert!(Instant::now() < deadline, "no call logged: {lines:?}");
        if let Ok(line) = server.stderr.recv_timeout(Duration::from_millis(100)) {
            lines.push(line);
        }
    }
    let parsed = json_lines(&lines);
    let logged = calls_logged(&parsed);
    assert_eq!(logged.len(), 1, "{lines:?}");
    assert_eq!(logged[0]["tool"], "read_file");
    assert_eq!(logged[0]["outcome"], "ok");
    assert_eq!(logged[0]["session"], session[..8], "{lines:?}");
    // A cancelled command.
    let mark = marker();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": format!("sleep {mark}")}}})
    .to_string();
    let (s2, a2) = (session.clone(), auth.clone());
    let stream = std::thread::spawn(move || {
        let headers = [
            ACCEPT,
            JSON,
            ("Authorization", a2.as_str()),
            ("Mcp-Session-Id", s2.as_str()),
        ];
        http(port, "POST", &headers, &call)
    });
    wait_until("the sleep", WAIT, || {
        !running(&format!("sleep {mark}")).is_empty()
    });
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 3}});
    assert_eq!(http(port, "POST", &headers, &cancel.to_string()).0, 202);
    stream.join().expect("stream");
    while calls_logged(&json_lines(&lines)).len() < 2 {
        assert!(
            Instant::now() < deadline,
            "no second call logged: {lines:?}"
        );
        if let Ok(line) = server.stderr.recv_timeout(Duration::from_millis(100)) {
            lines.push(line);
        }
    }
    let parsed = json_lines(&lines);
    let logged = calls_logged(&parsed);
    assert_eq!(
        (&logged[1]["tool"], &logged[1]["outcome"]),
        (&json!("run_command"), &json!("cancelled")),
        "{lines:?}"
    );
    assert!(!lines
        .iter()
        .any(|l| l.contains(token) || l.contains(&session) || l.contains(&mark)));
    // The text format logs no line per call.
    let plain = start_http(&w, Some(token), &[]);
    let session = initialize(plain.port, &auth);
    let headers = [
        ACCEPT,
        JSON,
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", session.as_str()),
    ];
    assert_eq!(http(plain.port, "POST", &headers, &read.to_string()).0, 200);
    std::thread::sleep(Duration::from_millis(300));
    let said: Vec<String> = plain.stderr.try_iter().collect();
    assert!(
        said.iter().all(|l| l.starts_with("sneaky-mcp: ")),
        "{said:?}"
    );
}
