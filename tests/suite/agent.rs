//! sneaky-agent run against scripted model servers: a thread on 127.0.0.1 answers a fixed
//! sequence of replies and records every request, so each test checks both what the driver
//! printed and exactly what it sent back to the model.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Output;
use std::sync::{Arc, Mutex};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Ws};

/// One scripted answer.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

pub fn ok(body: Value) -> Answer {
    Answer {
        status: 200,
        headers: vec![],
        body: body.to_string(),
    }
}

pub fn status(status: u16, headers: Vec<(&'static str, String)>, body: Value) -> Answer {
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Server {
    pub base: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// Serve `script` in order, one connection per answer; then stop listening.
pub fn serve(script: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&requests);
    std::thread::spawn(move || {
        for answer in script {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream);
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap();
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
            let length: usize = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .map(|(_, v)| v.parse().unwrap())
                .expect("the driver sends a content-length");
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            recorded.lock().unwrap().push(Request {
                path,
                headers,
                body: serde_json::from_slice(&body).expect("request body is JSON"),
            });
            let mut stream = reader.into_inner();
            let mut head = format!(
                "HTTP/1.1 {} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                answer.status,
                answer.body.len()
            );
            for (name, value) in &answer.headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(answer.body.as_bytes()).unwrap();
            stream.flush().unwrap();
        }
    });
    Server { base, requests }
}

/// An OpenAI Chat Completions reply with text and tool calls `(id, name, arguments text)`.
pub fn openai_reply(text: Option<&str>, calls: &[(&str, &str, &str)]) -> Answer {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    ok(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
    }))
}

pub fn finish_call(id: &str, message: &str) -> (String, String, String) {
    (
        id.to_string(),
        "finish".to_string(),
        json!({ "message": message }).to_string(),
    )
}

/// The path of a built binary of this package.
pub fn bin_path(name: &str) -> PathBuf {
    std::process::Command::cargo_bin(name)
        .unwrap()
        .get_program()
        .into()
}

/// The environment every agent run gets: none of the caller's keys, URLs or models.
pub fn agent_command(w: &Ws, args: &[&str]) -> std::process::Command {
    // setsid: no controlling terminal, even when the tests run in one, so that the driver
    // behaves as it does in CI (a confirm-tier call has no one to ask).
    let mut cmd = std::process::Command::new("setsid");
    cmd.arg("-w").arg(bin_path("sneaky-agent"));
    cmd.args(args);
    scrub(&mut cmd, w);
    cmd
}

pub fn scrub(cmd: &mut std::process::Command, w: &Ws) {
    for var in [
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SNEAKY_MODEL",
        "SNEAKY_ROOT",
        "SNEAKY_CONFIG",
    ] {
        cmd.env_remove(var);
    }
    // The temporary workspace is no project (no sneaky.toml, no .git): name it.
    cmd.current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .env("SNEAKY_RETRY_BASE_MS", "10")
        .env("NO_COLOR", "1");
}

pub fn run(cmd: std::process::Command, stdin: &[u8]) -> Output {
    assert_cmd::Command::from_std(cmd)
        .write_stdin(stdin.to_vec())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

pub struct Ran {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn ran(out: Output) -> Ran {
    let r = Ran {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!r.stderr.contains("panicked"), "panic: {}", r.stderr);
    r
}

/// `sneaky-agent run` against an OpenAI-compatible server at `base` with a test key.
pub fn run_openai(w: &Ws, base: &str, extra: &[&str]) -> Ran {
    let mut args = vec!["run", "--model", "test-model"];
    args.extend_from_slice(extra);
    let mut cmd = agent_command(w, &args);
    cmd.env("OPENAI_BASE_URL", format!("{base}/v1"))
        .env("OPENAI_API_KEY", "test-key");
    ran(run(cmd, b""))
}

/// The tool results (role "tool") the driver sent in a request, as (id, text): what the model
/// reads (src/render/model.rs), not the JSON envelope.
pub fn openai_results(request: &Request) -> Vec<(String, String)> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The code of a failed call's text `CODE: message`.
pub fn code(text: &str) -> &str {
    let (code, message) = text.split_once(": ").unwrap_or(("", ""));
    assert!(
        !message.is_empty() && code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
        "not CODE: message: {text}"
    );
    code
}

fn tool_names(request: &Request) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

pub fn config(w: &Ws, toml: &str) {
    w.write("sneaky.toml", toml);
}

#[test]
fn openai_conversation_runs_parallel_calls_and_feeds_every_result_back() {
    let w = util::ws();
    w.write("notes/a.txt", "hello from a\n");
    config(&w, "[permissions]\ndeny = [\"grep_files\"]\n");
    let finish = finish_call("c6", "All done: a.txt greets.");
    let server = serve(vec![
        openai_reply(
            Some("Let me look around."),
            &[
                ("c1", "read_file", r#"{"file_path":"notes/a.txt"}"#),
                ("c2", "read_file", r#"{"file_path":"../secret.txt"}"#),
                ("c3", "grep_files", r#"{"pattern":"hello"}"#),
                ("c4", "list_dir", r#"{"directory_path": "notes""#),
                ("c5", "frobnicate", r#"{}"#),
                ("c7", "list_dir", r#"{"directory_path":"notes","depth":3}"#),
            ],
        ),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let transcript = w.outside().join("transcript.jsonl");
    let r = run_openai(
        &w,
        &server.base,
        &[
            "--transcript",
            transcript.to_str().unwrap(),
            "Summarise the notes",
        ],
    );
    assert_eq!(r.status, 0, "stderr: {}", r.stderr);
    assert!(r.stdout.contains("Let me look around."), "{}", r.stdout);
    assert!(
        r.stdout.trim_end().ends_with("All done: a.txt greets."),
        "{}",
        r.stdout
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    check_openai_first_request(&requests[0], &w);

    // Every call answered, in order, under its own id.
    let results = openai_results(&requests[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5", "c7"]);
    assert_eq!(results[0].1, "notes/a.txt (lines 1-1 of 1)\nhello from a\n");
    assert_eq!(code(&results[1].1), "outside_workspace", "{}", results[1].1);
    assert!(!results[1].1.contains("OUTSIDE SECRET"));
    assert_eq!(code(&results[2].1), "tool_denied", "{}", results[2].1);
    assert_eq!(code(&results[3].1), "invalid_json", "{}", results[3].1);
    assert_eq!(code(&results[4].1), "unknown_tool", "{}", results[4].1);
    assert!(results[4].1.contains("read_file"));
    assert_eq!(code(&results[5].1), "invalid_args", "{}", results[5].1);
    assert!(results[5].1.contains("depth"));
    // The assistant message with its calls is sent back before the results.
    let sent = requests[1].body["messages"].as_array().unwrap();
    let assistant = &sent[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"].as_array().unwrap().len(), 6);
    assert_eq!(assistant["tool_calls"][0]["id"], "c1");

    check_transcript(&transcript);
}

/// The first request of the OpenAI conversation test: endpoint, key, model, the system prompt
/// naming the root, the task, and the offered tools (the denied one left out).
fn check_openai_first_request(first: &Request, w: &Ws) {
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.header("authorization"), Some("Bearer test-key"));
    assert_eq!(first.body["model"], "test-model");
    let messages = first.body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(messages[0]["content"]
        .as_str()
        .unwrap()
        .contains(w.root.canonicalize().unwrap().to_str().unwrap()));
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "Summarise the notes"})
    );
    // The denied tool is not offered; the others are, with their schemas.
    let names = tool_names(first);
    assert!(!names.contains(&"grep_files".to_string()), "{names:?}");
    for name in ["read_file", "list_dir", "find_files", "finish"] {
        assert!(
            names.contains(&name.to_string()),
            "{name} offered: {names:?}"
        );
    }
}

/// The transcript has every request, reply, call and result as JSON lines, and no key.
fn check_transcript(transcript: &std::path::Path) {
    let text = std::fs::read_to_string(transcript).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let count = |kind: &str| events.iter().filter(|e| e["event"] == kind).count();
    assert_eq!(count("request"), 2);
    assert_eq!(count("reply"), 2);
    assert_eq!(count("call"), 7);
    assert_eq!(count("result"), 7);
    assert_eq!(events.last().unwrap()["reason"], "finish");
    assert!(
        !text.contains("test-key"),
        "the key stays out of the transcript"
    );
}

/// The Anthropic model of the conversation test: three tool_use blocks, then finish.
fn anthropic_script() -> Vec<Answer> {
    vec![
        ok(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "stop_reason": "tool_use",
            "content": [
                {"type": "text", "text": "Reading the library."},
                {"type": "tool_use", "id": "toolu_a", "name": "read_file",
                 "input": {"file_path": "src/lib.rs"}},
                {"type": "tool_use", "id": "toolu_b", "name": "find_files",
                 "input": {"pattern": "*.rs"}},
                {"type": "tool_use", "id": "toolu_c", "name": "list_dir",
                 "input": {"directory_path": "/etc"}},
            ]
        })),
        ok(json!({
            "id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_d", "name": "finish",
                         "input": {"message": "answer() returns 42."}}]
        })),
    ]
}

#[test]
fn anthropic_conversation_pairs_results_with_tool_use_ids() {
    let w = util::ws();
    w.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    config(&w, "[permissions]\ndeny = [\"find_files\"]\n");
    let server = serve(anthropic_script());
    let mut cmd = agent_command(
        &w,
        &[
            "run",
            "--provider",
            "anthropic",
            "--base-url",
            &server.base,
            "--model",
            "claude-test",
            "What does answer return?",
        ],
    );
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test");
    let r = ran(run(cmd, b""));
    assert_eq!(r.status, 0, "stderr: {}", r.stderr);
    assert!(r.stdout.contains("Reading the library."));
    assert!(r.stdout.trim_end().ends_with("answer() returns 42."));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert!(first.body["system"].as_str().unwrap().contains("finish"));
    assert!(first.body["max_tokens"].as_u64().unwrap() > 0);
    let names: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["input_schema"]["type"] == "object");
            t["name"].as_str().unwrap()
        })
        .collect();
    assert!(names.contains(&"read_file") && !names.contains(&"find_files"));

    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "user, assistant, user(results)");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][1]["id"], "toolu_a");
    let blocks = messages[2]["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "tool_result");
            b["tool_use_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(ids, ["toolu_a", "toolu_b", "toolu_c"]);
    let text = |i: usize| blocks[i]["content"].as_str().unwrap();
    assert_eq!(blocks[0]["is_error"], false);
    assert_eq!(
        text(0),
        "src/lib.rs (lines 1-1 of 1)\npub fn answer() -> u32 { 42 }\n"
    );
    assert_eq!(blocks[1]["is_error"], true);
    assert_eq!(code(text(1)), "tool_denied");
    assert_eq!(blocks[2]["is_error"], true);
    assert_eq!(code(text(2)), "outside_workspace");
}

#[test]
fn rate_limits_and_server_errors_are_retried() {
    let w = util::ws();
    let finish = finish_call("f1", "retried fine");
    let server = serve(vec![
        status(
            429,
            vec![("retry-after", "0".into())],
            json!({"error": {"message": "slow down", "type": "rate_limit"}}),
        ),
        status(503, vec![], json!({"error": "loading model"})),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let started = std::time::Instant::now();
    let r = run_openai(&w, &server.base, &["go"]);
    assert_eq!(r.status, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout.trim_end(), "retried fine");
    assert!(
        r.stderr.contains("429") && r.stderr.contains("slow down"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("503"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 3);
    // The same request is sent again.
    assert_eq!(server.requests()[0].body, server.requests()[2].body);
    crate::util::took_at_most(started, std::time::Duration::from_secs(20), "two retries");
}

#[test]
fn retries_are_bounded() {
    let w = util::ws();
    let server = serve(
        (0..5)
            .map(|_| {
                status(
                    500,
                    vec![("retry-after", "0".into())],
                    json!({"error": "boom"}),
                )
            })
            .collect(),
    );
    let r = run_openai(&w, &server.base, &["go"]);
    assert_eq!(r.status, 1);
    assert!(
        r.stderr.contains("giving up") && r.stderr.contains("boom"),
        "{}",
        r.stderr
    );
    assert_eq!(server.requests().len(), 5);
}

#[test]
fn unauthorized_is_explained_and_not_retried() {
    let w = util::ws();
    let server = serve(vec![status(
        401,
        vec![],
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    )]);
    let r = run_openai(&w, &server.base, &["go"]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("401"), "{}", r.stderr);
    assert!(r.stderr.contains("OPENAI_API_KEY"), "{}", r.stderr);
    assert!(
        r.stderr.contains("Incorrect API key provided"),
        "{}",
        r.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn forbidden_is_explained() {
    let w = util::ws();
    let server = serve(vec![status(
        403,
        vec![],
        json!({"error": {"message": "no access"}}),
    )]);
    let r = run_openai(&w, &server.base, &["go"]);
    assert_eq!(r.status, 1);
    assert!(
        r.stderr.contains("403") && r.stderr.contains("test-model"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_unreachable_server_is_reported_plainly() {
    let w = util::ws();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = run_openai(&w, &format!("http://127.0.0.1:{port}"), &["go"]);
    assert_eq!(r.status, 1);
    assert!(
        r.stderr.contains("cannot reach the model server"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("connection refused"), "{}", r.stderr);
}

#[test]
fn max_turns_ends_the_run_with_a_clear_message() {
    let w = util::ws();
    w.write("a.txt", "a\n");
    let call = [("r1", "read_file", r#"{"file_path":"a.txt"}"#)];
    let server = serve(vec![openai_reply(None, &call), openai_reply(None, &call)]);
    let r = run_openai(&w, &server.base, &["--max-turns", "2", "loop forever"]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("--max-turns 2"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn confirm_tier_calls_without_a_terminal_are_refused_and_the_model_told() {
    let w = util::ws();
    w.write("a.txt", "confirm me\n");
    config(&w, "[permissions]\nconfirm = [\"read_file\"]\n");
    let finish = finish_call("f", "gave up");
    let server = serve(vec![
        openai_reply(None, &[("r1", "read_file", r#"{"file_path":"a.txt"}"#)]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let r = run_openai(&w, &server.base, &["read a"]);
    // The model finished, but a call was refused for want of approval: a failure, and said.
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "gave up");
    assert!(
        r.stderr.contains("calls to read_file were refused") && r.stderr.contains("--yes"),
        "{}",
        r.stderr
    );
    let results = openai_results(&server.requests()[1]);
    assert_eq!(code(&results[0].1), "not_approved");
    let message = &results[0].1;
    assert!(
        message.contains("no terminal") && message.contains("--yes"),
        "{message}"
    );

    // --yes approves it.
    let server = serve(vec![
        openai_reply(None, &[("r1", "read_file", r#"{"file_path":"a.txt"}"#)]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let r = run_openai(&w, &server.base, &["--yes", "read a"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let results = openai_results(&server.requests()[1]);
    assert_eq!(results[0].1, "a.txt (lines 1-1 of 1)\nconfirm me\n");
}

#[test]
fn a_reply_without_tool_calls_is_nudged_then_ends_the_run() {
    let w = util::ws();
    let server = serve(vec![
        openai_reply(Some("I think it is fine."), &[]),
        openai_reply(Some("Really, it is fine."), &[]),
    ]);
    let r = run_openai(&w, &server.base, &["check"]);
    assert_eq!(r.status, 1);
    assert!(r.stdout.contains("I think it is fine."));
    assert!(r.stderr.contains("without calling finish"), "{}", r.stderr);
    let requests = server.requests();
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(last["content"].as_str().unwrap().contains("finish"));
}

#[test]
fn quiet_prints_only_the_final_message() {
    let w = util::ws();
    w.write("a.txt", "a\n");
    let finish = finish_call("f", "the end");
    let server = serve(vec![
        openai_reply(
            Some("chatter"),
            &[("r1", "read_file", r#"{"file_path":"a.txt"}"#)],
        ),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let r = run_openai(&w, &server.base, &["--quiet", "go"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "the end\n");
    assert_eq!(r.stderr, "");
}

#[test]
fn usage_errors() {
    let w = util::ws();
    let cmd = agent_command(&w, &["run", "go"]);
    let r = ran(run(cmd, b""));
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("--model"), "{}", r.stderr);
    let cmd = agent_command(&w, &["run", "--model", "m", "--max-turns", "0", "go"]);
    assert_eq!(ran(run(cmd, b"")).status, 2);
    let cmd = agent_command(&w, &["run", "--model", "m", "--root", "/no/such/dir", "go"]);
    let r = ran(run(cmd, b""));
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("/no/such/dir"), "{}", r.stderr);
}

#[test]
fn a_malformed_base_url_is_bad_input_before_any_request() {
    let w = util::ws();
    // A server that would record a request if one were sent.
    let server = serve(vec![ok(json!({}))]);
    let port = server.base.trim_start_matches("http://").to_string();
    let with_query = format!("{}/v1?key=1", server.base);
    for (flag, env) in [
        (Some(port.as_str()), None),
        (Some("ftp://127.0.0.1/v1"), None),
        (None, Some("http://")),
        (None, Some(with_query.as_str())),
    ] {
        let mut args = vec!["run", "--model", "m"];
        if let Some(url) = flag {
            args.extend(["--base-url", url]);
        }
        args.push("go");
        let mut cmd = agent_command(&w, &args);
        if let Some(url) = env {
            cmd.env("OPENAI_BASE_URL", url);
        }
        let r = ran(run(cmd, b""));
        assert_eq!(r.status, 2, "{flag:?} {env:?}: {}", r.stderr);
        let named = if flag.is_some() {
            "--base-url"
        } else {
            "OPENAI_BASE_URL"
        };
        assert!(r.stderr.contains(named), "{}", r.stderr);
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_command_the_policy_denies_is_refused_before_anyone_is_asked() {
    let w = util::ws();
    let finish = finish_call("f", "done");
    let server = serve(vec![
        openai_reply(None, &[("r1", "run_command", r#"{"command":"sudo ls"}"#)]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    // No terminal and no --yes: had the gate come first, the call would be not_approved.
    let r = run_openai(&w, &server.base, &["list"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("were refused"), "{}", r.stderr);
    let results = openai_results(&server.requests()[1]);
    assert_eq!(code(&results[0].1), "command_denied", "{}", results[0].1);
}

#[test]
fn ctrl_c_while_waiting_for_the_model_stops_cleanly() {
    let w = util::ws();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // A model that never answers; it says when the request has come.
    let (asked, wait_for_ask) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let held = listener.accept();
        let _ = asked.send(());
        std::thread::sleep(std::time::Duration::from_secs(60));
        drop(held);
    });
    let transcript = w.outside().join("t.jsonl");
    let mut cmd = agent_command(
        &w,
        &[
            "run",
            "--model",
            "m",
            "--transcript",
            transcript.to_str().unwrap(),
            "go",
        ],
    );
    cmd.env("OPENAI_BASE_URL", format!("{base}/v1"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    wait_for_ask
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the driver sends its request");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let r = ran(child.wait_with_output().unwrap());
    crate::util::took_at_most(
        started,
        std::time::Duration::from_secs(5),
        "stopping on SIGINT",
    );
    assert_eq!(r.status, 130, "{}", r.stderr);
    assert!(r.stderr.contains("interrupted"), "{}", r.stderr);
    let text = std::fs::read_to_string(&transcript).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["reason"], "interrupted");
}

#[test]
fn tool_binaries_are_found_beside_the_agent_else_on_path() {
    let w = util::ws();
    w.write("a.txt", "found\n");
    // A copy of the agent alone in a directory: its tools must come from PATH.
    let lonely = w.outside().join("lonely");
    std::fs::create_dir_all(&lonely).unwrap();
    let agent = lonely.join("sneaky-agent");
    std::fs::copy(bin_path("sneaky-agent"), &agent).unwrap();
    let built = bin_path("sneaky-read").parent().unwrap().to_path_buf();
    // Tools that ask for isolation (run_command) run in their own binary; the others run
    // in the agent's process and need none.
    let call = r#"{"name":"run_command","arguments":{"command":"cat a.txt"}}"#;
    let pipe_with_path = |dir: &std::path::Path| {
        let mut cmd = std::process::Command::new("setsid");
        cmd.arg("-w").arg(&agent).arg("pipe").arg("--yes");
        scrub(&mut cmd, &w);
        cmd.env("PATH", format!("{}:/usr/bin:/bin", dir.display()));
        ran(run(cmd, format!("{call}\n").as_bytes()))
    };
    for (dir, works) in [(&built, true), (&lonely, false)] {
        let mut r = pipe_with_path(dir);
        // A copy just written can be "busy" while another test's fork still holds it open.
        for _ in 0..50 {
            if !r.stderr.contains("Text file busy") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            r = pipe_with_path(dir);
        }
        let out: Value = serde_json::from_str(r.stdout.trim()).unwrap();
        if works {
            assert_eq!(out["result"]["stdout"], "found\n", "{out}");
        } else {
            assert_eq!(out["error"]["code"], "internal_error", "{out}");
            let message = out["error"]["message"].as_str().unwrap();
            assert!(message.contains("cannot run sneaky-run"), "{message}");
        }
    }
}

#[test]
fn the_task_can_come_from_stdin_and_the_transcript_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let w = util::ws();
    let finish = finish_call("f", "read it");
    let server = serve(vec![openai_reply(
        None,
        &[(&finish.0, &finish.1, &finish.2)],
    )]);
    let transcript = w.outside().join("t.jsonl");
    let mut cmd = agent_command(
        &w,
        &[
            "run",
            "--model",
            "m",
            "--transcript",
            transcript.to_str().unwrap(),
            "-",
        ],
    );
    cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.base));
    let r = ran(run(cmd, b"a task\nover two lines\n"));
    assert_eq!(r.status, 0, "{}", r.stderr);
    let messages = server.requests()[0].body["messages"].clone();
    assert_eq!(messages[1]["content"], "a task\nover two lines\n");
    let mode = std::fs::metadata(&transcript).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "transcript mode {mode:o}");
    // Without a key, no authorization header is sent (local servers need none).
    assert_eq!(server.requests()[0].header("authorization"), None);
}

/// A git repository in the workspace whose configuration makes `git diff` (a command that only
/// reads, by its programs) write a file: `diff.external` names a program, as a cloned
/// repository's configuration can.
pub fn repository_whose_diff_writes(w: &Ws) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&w.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", w.dir.path())
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    w.write("a.txt", "one\n");
    git(&["init", "-q"]);
    git(&["add", "a.txt"]);
    git(&[
        "-c",
        "user.name=T",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "one",
    ]);
    w.write("a.txt", "one\ntwo\n");
    git(&["config", "diff.external", "touch pwned #"]);
}

/// Without a terminal to ask on, a command the policy classes as only reading runs (nobody
/// need approve it), one that writes is not run, and one that reads by its programs but
/// changed files anyway has its changes dropped, never applied silently.
#[test]
fn only_commands_that_write_need_the_persons_approval() {
    let w = util::ws();
    repository_whose_diff_writes(&w);
    let finish = finish_call("f", "done");
    let server = serve(vec![
        openai_reply(
            None,
            &[
                (
                    "r1",
                    "run_command",
                    r#"{"command":"cat a.txt | grep -c o"}"#,
                ),
                ("r2", "run_command", r#"{"command":"echo x > b.txt"}"#),
                ("r3", "run_command", r#"{"command":"git status --short"}"#),
                ("r4", "run_command", r#"{"command":"git diff"}"#),
            ],
        ),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let r = run_openai(&w, &server.base, &["look"]);
    assert_eq!(r.status, 1, "{}", r.stderr);
    let results = openai_results(&server.requests()[1]);
    let result = |id: &str| {
        results
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"))
    };
    let read = result("r1");
    assert!(
        read.starts_with("exit code 0") && read.contains("[stdout]\n2"),
        "{read}"
    );
    let status = result("r3");
    assert!(
        status.starts_with("exit code 0") && status.contains("M a.txt"),
        "{status}"
    );
    let write = result("r2");
    assert_eq!(code(&write), "not_approved", "{write}");
    assert!(!w.root.join("b.txt").exists());
    let surprise = result("r4");
    assert_eq!(code(&surprise), "not_approved", "{surprise}");
    assert!(surprise.contains("changed files"), "{surprise}");
    assert!(
        !w.root.join("pwned").exists(),
        "a reading command's change was applied"
    );
    assert!(
        r.stderr.contains("calls to run_command were refused"),
        "{}",
        r.stderr
    );
}
