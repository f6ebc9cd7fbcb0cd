//! `sneaky-mcp --http` keeps for resumption what its configuration allows, not what its
//! traffic brings (issue 45): with small `[mcp] resume_*` bounds, hundreds of calls with
//! 100 KB answers leave the server's RSS (read from /proc) where it was after warm-up; a
//! client resuming within the bounds gets what it missed, and one resuming past them is told
//! so — an error answer for its call, a 410 for a stream let go — never a silent gap.
//! `benches/mcp_soak.py` runs the full soak (32 sessions, a minute, RSS sampled).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp_concurrency::{
    event_ids, http, initialize, start_http, HttpServer, ACCEPT, JSON, WAIT,
};
use crate::util::{self, Ws};

const TOKEN: &str = "t0ken-for-the-memory-suite-0123";

/// The server's resident set, in bytes.
fn rss(server: &HttpServer) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))
        .expect("the server's /proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// A configuration file outside the workspace with these `[mcp]` keys.
fn config(w: &Ws, mcp: &str) -> PathBuf {
    let path = w.outside().join("memory.toml");
    std::fs::write(&path, format!("[mcp]\n{mcp}")).expect("config");
    path
}

fn auth() -> String {
    format!("Bearer {TOKEN}")
}

/// A `tools/call` in `session`: its raw answer (an SSE stream for a walk or a command).
fn call(port: u16, session: &str, id: u64, tool: &str, args: Value) -> String {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}});
    let auth = auth();
    let (status, head, body) = http(
        port,
        "POST",
        &[
            ACCEPT,
            JSON,
            ("Authorization", &auth),
            ("Mcp-Session-Id", session),
        ],
        &msg.to_string(),
    );
    assert_eq!(status, 200, "{head}{body}");
    body
}

/// Hundreds of greps whose answers are ~120 KB each (event streams, so kept for resumption)
/// from four sessions: with bounds of 64 KiB per session and 256 KiB in all, the server's RSS
/// after them is within a few MiB of what it was after the same calls as warm-up. Kept for a
/// minute each, as they were, they would add ~30 MB.
#[test]
fn http_memory_stays_within_the_resume_bounds_whatever_the_calls() {
    let w = util::ws();
    let line = "x".repeat(100);
    let big: String = (0..1200).map(|n| format!("{n:05} hay {line}\n")).collect();
    w.write("big.txt", &big);
    let cfg = config(
        &w,
        "resume_seconds = 60\nresume_session_bytes = 65536\nresume_total_bytes = 262144\n",
    );
    let server = start_http(&w, Some(TOKEN), &["--config", cfg.to_str().expect("utf-8")]);
    let port = server.port;
    let auth = auth();
    let sessions: Vec<String> = (0..4).map(|_| initialize(port, &auth)).collect();
    let round = |calls: u64| {
        std::thread::scope(|scope| {
            for session in &sessions {
                scope.spawn(move || {
                    for id in 0..calls {
                        let body = call(
                            port,
                            session,
                            id + 10,
                            "grep_files",
                            json!({"pattern": "hay", "path": "big.txt"}),
                        );
                        assert!(body.contains("00999 hay"), "a whole answer: {}", body.len());
                        assert!(body.len() > 100_000, "{}", body.len());
                    }
                });
            }
        });
    };
    round(15);
    let warm = rss(&server);
    round(60);
    let after = rss(&server);
    let grown = after.saturating_sub(warm);
    eprintln!(
        "mcp_memory: RSS after warm-up {} KiB, after 240 more calls {} KiB",
        warm >> 10,
        after >> 10
    );
    assert!(
        grown < 10 << 20,
        "240 answers of ~120 KB grew the server's RSS by {} KiB ({} -> {} KiB): what it keeps \
         for resumption is not bounded by resume_session_bytes / resume_total_bytes",
        grown >> 10,
        warm >> 10,
        after >> 10
    );
}

/// Send a `run_command` with a progress token on a raw connection, read until the first
/// progress notification, then drop the connection while the command runs: the ids seen.
fn call_and_drop(port: u16, session: &str, id: u64, command: &str) -> Vec<(u64, u64)> {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "run_command", "arguments": {"command": command},
        "_meta": {"progressToken": "p"}}})
    .to_string();
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.set_read_timeout(Some(WAIT)).expect("timeout");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, \
         text/event-stream\r\nContent-Type: application/json\r\nAuthorization: {}\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{call}",
        auth(),
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
    assert!(!seen.contains(r#""result""#), "{seen}");
    event_ids(&seen)
}

/// Wait for the server's log line of the `n`th call that ended.
fn calls_ended(server: &HttpServer, n: usize) {
    let deadline = Instant::now() + WAIT;
    let mut ended = 0;
    while ended < n {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = server.stderr.recv_timeout(left).expect("a call's log line");
        if line.contains(r#""event":"call""#) {
            ended += 1;
        }
    }
}

fn resume(port: u16, session: &str, last: (u64, u64)) -> (u16, String, String) {
    let auth = auth();
    let last = format!("{}-{}", last.0, last.1);
    http(
        port,
        "GET",
        &[
            ACCEPT,
            ("Authorization", &auth),
            ("Mcp-Session-Id", session),
            ("Last-Event-ID", &last),
        ],
        "",
    )
}

/// With 16 KiB per session and 5 s: a dropped stream whose answer fits is resumed whole; one
/// whose answer (64 KiB of output) is over the bound gets an SSE comment naming the lost
/// events and a JSON-RPC error with the call's id, not a silent end; and once the time is
/// up, with no further call in the session, the stream is gone: 410 naming the key.
#[test]
fn http_resumption_within_the_bounds_works_and_past_them_gets_a_clear_error() {
    let w = util::ws();
    let cfg = config(
        &w,
        "resume_seconds = 5\nresume_session_bytes = 16384\nresume_total_bytes = 65536\n",
    );
    let server = start_http(
        &w,
        Some(TOKEN),
        &[
            "--config",
            cfg.to_str().expect("utf-8"),
            "--log-format",
            "json",
        ],
    );
    let port = server.port;
    let session = initialize(port, &auth());

    // Past the bound: the answer was never kept.
    let seen = call_and_drop(port, &session, 8, "sleep 1; seq 1 30000");
    calls_ended(&server, 1);
    let (status, head, body) = resume(port, &session, *seen.last().expect("ids"));
    assert_eq!(status, 200, "{head}{body}");
    assert!(
        body.contains(": sneaky-mcp: events") && body.contains("no longer kept"),
        "a comment names the lost events: {body}"
    );
    let error: Value = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).expect("JSON"))
        .expect("an answer for the call");
    assert_eq!(error["id"], 8, "{body}");
    assert_eq!(error["error"]["code"], -32603, "{body}");
    let message = error["error"]["message"].as_str().expect("a message");
    assert!(
        message.contains("no longer holds the answer") && message.contains("resume_session_bytes"),
        "{message}"
    );

    // Within the bounds: the rest, answer included.
    let seen = call_and_drop(port, &session, 9, "sleep 1; echo small");
    calls_ended(&server, 1);
    let (status, head, body) = resume(port, &session, *seen.last().expect("ids"));
    assert_eq!(status, 200, "{head}{body}");
    assert!(!body.contains("no longer kept"), "{body}");
    assert!(
        body.contains(r#""id":9"#) && body.contains(r#"[stdout]\nsmall"#),
        "{body}"
    );

    // The time is up, and no call since: the stream is let go all the same (the timer).
    std::thread::sleep(Duration::from_secs(5) + Duration::from_millis(2500));
    let (status, head, body) = resume(port, &session, seen[0]);
    assert_eq!(status, 410, "{head}{body}");
    assert!(body.contains("resume_seconds"), "{body}");
    // A stream this session never had is still 404.
    assert_eq!(resume(port, &session, (999, 0)).0, 404);
}
