//! sneaky-mcp at the protocol level: a live session over pipes, the edge cases of JSON-RPC
//! framing, version negotiation, cancellation, the roots round trip and the end of input.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Ws};

const WAIT: Duration = Duration::from_secs(30);

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

fn command(w: &Ws, args: &[&str], cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sneaky-mcp").expect("binary");
    util::fence(&mut cmd, w.outside())
        .current_dir(cwd)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Start the server with the workspace as its root.
fn start(w: &Ws, extra: &[&str]) -> Session {
    let root = w.root.to_str().expect("utf-8 root").to_string();
    let mut args = vec!["--root", root.as_str()];
    args.extend_from_slice(extra);
    Session::spawn(command(w, &args, &w.root))
}

impl Session {
    fn spawn(mut cmd: Command) -> Session {
        let mut child = cmd.spawn().expect("spawn sneaky-mcp");
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
        Session {
            child,
            stdin,
            lines,
        }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.recv();
        assert_eq!(reply["id"], id, "reply to {method}: {reply}");
        reply
    }

    /// The next message on stdout: one JSON-RPC 2.0 object per line, nothing else.
    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .expect("a message from sneaky-mcp within 30 s");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
        value
    }

    fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        self.initialize_as("suite", version, capabilities)
    }

    /// `initialize` from a client that names itself `client` in `clientInfo`.
    fn initialize_as(&mut self, client: &str, version: &str, capabilities: Value) -> Value {
        let reply = self.request(
            0,
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": client, "version": "1"}
            }),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        let reply = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        reply["result"].clone()
    }

    /// Close stdin; return the remaining messages, the exit status and stderr.
    fn finish(mut self) -> (Vec<Value>, i32, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(WAIT) {
            rest.push(serde_json::from_str(&line).expect("stdout line is JSON"));
        }
        let status = self.child.wait().expect("wait");
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut stderr).expect("stderr");
        }
        assert!(
            !stderr.contains("panicked"),
            "sneaky-mcp panicked: {stderr}"
        );
        (rest, status.code().expect("exit code"), stderr)
    }
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error: {reply}"))
}

#[test]
fn malformed_json_gets_a_parse_error_and_serving_goes_on() {
    let w = util::ws();
    let mut s = start(&w, &[]);
    s.send_raw("this is not json");
    let reply = s.recv();
    assert_eq!(error_code(&reply), -32700);
    assert_eq!(reply["id"], Value::Null);
    s.send_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping""#);
    assert_eq!(error_code(&s.recv()), -32700);
    s.send_raw("");
    s.send_raw("   ");
    let pong = s.request(2, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let (rest, status, _) = s.finish();
    assert!(rest.is_empty(), "blank lines get no answer: {rest:?}");
    assert_eq!(status, 0);
}

/// A long-lived server asks again at each grep whether a denied file has a second name: a
/// hard link made between two calls, far beyond the files a thread opens looking at each, is
/// not read.
#[test]
fn a_hard_link_made_between_two_greps_is_not_read() {
    let w = util::ws();
    let creds = w.outside().join("creds");
    std::fs::create_dir_all(&creds).expect("mkdir");
    std::fs::write(creds.join("token"), "SNEAKY-SECRET-7\n").expect("write");
    w.user_config(&format!(
        "extra_deny_read = [{:?}]\n",
        creds.display().to_string()
    ));
    for i in 0..400 {
        w.write(&format!("many/f{i:03}.txt"), "SNEAKY-PLAIN\n");
    }
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    let args = json!({"pattern": "SNEAKY", "max_results": 1000});
    let first = s.call(1, "grep_files", args.clone()).to_string();
    assert_eq!(first.matches("SNEAKY-PLAIN").count() % 400, 0, "{first}");
    std::fs::hard_link(creds.join("token"), w.root.join("many/zz-token")).expect("link");
    let second = s.call(2, "grep_files", args).to_string();
    assert!(!second.contains("SNEAKY-SECRET"), "{second}");
    assert!(second.contains("SNEAKY-PLAIN"), "{second}");
    let (_, status, _) = s.finish();
    assert_eq!(status, 0);
}

#[test]
fn invalid_requests_and_bad_params_are_protocol_errors() {
    let w = util::ws();
    w.write("a.txt", "a\n");
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    s.send_raw(r#"{"id":5,"method":"ping"}"#);
    let reply = s.recv();
    assert_eq!((error_code(&reply), &reply["id"]), (-32600, &json!(5)));
    s.send_raw(r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#);
    assert_eq!(error_code(&s.recv()), -32600);
    s.send_raw(r#"{"jsonrpc":"2.0","id":7}"#);
    assert_eq!(error_code(&s.recv()), -32600);
    s.send_raw("42");
    assert_eq!(error_code(&s.recv()), -32600);

    let reply = s.request(8, "no/such/method", json!({}));
    assert_eq!(error_code(&reply), -32601);
    assert!(reply["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("no/such/method")));
    // An unknown notification is ignored without an answer.
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/whatever"}));
    // server/discover (the 2026 era's probe) is not ours: clients fall back to initialize.
    assert_eq!(
        error_code(&s.request(9, "server/discover", json!({}))),
        -32601
    );

    assert_eq!(
        error_code(&s.request(10, "tools/call", json!([1, 2]))),
        -32602
    );
    let bad_args = json!({"name": "read_file", "arguments": "a.txt"});
    assert_eq!(error_code(&s.request(11, "tools/call", bad_args)), -32602);
    let no_name = json!({"arguments": {}});
    assert_eq!(error_code(&s.request(12, "tools/call", no_name)), -32602);
    let unknown = json!({"name": "no_such_tool", "arguments": {}});
    assert_eq!(error_code(&s.request(13, "tools/call", unknown)), -32602);
    let driver_only = json!({"name": "finish", "arguments": {}});
    assert_eq!(
        error_code(&s.request(14, "tools/call", driver_only)),
        -32602
    );
    assert_eq!(error_code(&s.request(15, "initialize", json!({}))), -32602);

    // Bad arguments to a real tool are the tool's failure, not a protocol error.
    let result = s.call(16, "read_file", json!({"file_path": 3}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(failure_code(&result), "invalid_args");
    let result = s.call(17, "read_file", json!({"file_path": "a.txt"}));
    assert_eq!(result["structuredContent"]["content"], "a\n");
    assert_eq!(result["content"][0]["text"], "a.txt (lines 1-1 of 1)\na\n");
    let (rest, status, _) = s.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(status, 0);
}

#[test]
fn version_negotiation_and_shapes_per_version() {
    let w = util::ws();
    w.write("a.txt", "a\n");
    for (offered, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut s = start(&w, &[]);
        let reply = s.initialize(offered, json!({}));
        let result = &reply["result"];
        assert_eq!(result["protocolVersion"], answered, "offered {offered}");
        assert_eq!(result["serverInfo"]["name"], "sneaky-mcp");
        assert!(result["capabilities"]["tools"].is_object());
        let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
        let read = tools
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == "read_file"))
            .expect("read_file listed")
            .clone();
        let call = s.call(2, "read_file", json!({"file_path": "a.txt"}));
        let modern = answered >= "2025-06-18";
        assert_eq!(
            read.get("outputSchema").is_some(),
            modern,
            "{offered}: {read}"
        );
        assert_eq!(read.get("title").is_some(), modern, "{offered}");
        assert_eq!(call.get("structuredContent").is_some(), modern, "{offered}");
        assert_eq!(read.get("annotations").is_some(), answered >= "2025-03-26");
        assert_eq!(call["content"][0]["type"], "text");
        // Every version's text is what the model reads, not the JSON result.
        assert_eq!(call["content"][0]["text"], "a.txt (lines 1-1 of 1)\na\n");
        // The instructions describe failures as they are: no structuredContent, the text
        // starts with the code.
        let instructions = result["instructions"].as_str().expect("instructions");
        assert!(
            !instructions.contains("structuredContent"),
            "{instructions}"
        );
        let failed = s.call(3, "read_file", json!({"file_path": "missing.txt"}));
        assert!(failed.get("structuredContent").is_none(), "{failed}");
        let text = failed["content"][0]["text"].as_str().expect("text");
        let code = text.split(':').next().expect("code");
        assert!(
            instructions.contains(&format!("{code}:")),
            "{text} / {instructions}"
        );
        let (_, status, _) = s.finish();
        assert_eq!(status, 0);
    }
}

/// The two shapes (src/mcp/shape.rs): Codex CLI and Claude Code, by the `clientInfo.name` they
/// send (tests/agents/hosts_test.mjs checks those names against the real hosts), get tools
/// without `outputSchema` and results of content blocks only; every other client gets
/// `outputSchema` and `structuredContent`; `--structured-content` overrides both ways. The text
/// is the same in both.
#[test]
fn the_shape_of_the_tools_follows_the_client_and_the_flag() {
    let w = util::ws();
    w.write("a.txt", "a\n");
    for (client, flag, structured) in [
        ("codex-mcp-client", None, false),
        ("claude-code", None, false),
        ("opencode", None, true),
        ("suite", None, true),
        ("claude-code", Some("on"), true),
        ("codex-mcp-client", Some("on"), true),
        ("opencode", Some("off"), false),
    ] {
        let label = format!("{client} {flag:?}");
        let extra: Vec<&str> = flag.map_or(vec![], |f| vec!["--structured-content", f]);
        let mut s = start(&w, &extra);
        s.initialize_as(client, "2025-11-25", json!({}));
        let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
        let tools = tools.as_array().expect("tools");
        assert!(tools.len() > 5, "{label}: {tools:?}");
        for tool in tools {
            assert_eq!(
                tool.get("outputSchema").is_some(),
                structured,
                "{label}: {tool}"
            );
            // Everything else is listed alike.
            assert!(
                tool["title"].is_string() && tool["annotations"].is_object(),
                "{label}: {tool}"
            );
        }
        let read = s.call(2, "read_file", json!({"file_path": "a.txt"}));
        assert_eq!(
            read.get("structuredContent").is_some(),
            structured,
            "{label}: {read}"
        );
        assert_eq!(
            read["content"],
            json!([{"type": "text", "text": "a.txt (lines 1-1 of 1)\na\n"}]),
            "{label}"
        );
        let ran = s.call(3, "run_command", json!({"command": "echo hi"}));
        assert_eq!(
            ran.get("structuredContent").is_some(),
            structured,
            "{label}: {ran}"
        );
        assert_eq!(
            ran["content"][0]["text"], "exit code 0\n[stdout]\nhi",
            "{label}"
        );
        let (_, status, stderr) = s.finish();
        assert_eq!(status, 0);
        // The log says which client came and what it is served.
        let said = format!(
            "client {client:?} \"1\" (protocol 2025-11-25): {}",
            if structured {
                "results with structuredContent"
            } else {
                "results as content blocks only"
            }
        );
        assert!(stderr.contains(&said), "{label}: {stderr}");
    }
    // Not a word the flag knows.
    let out = command(&w, &["--structured-content", "maybe"], &w.root)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn tools_list_follows_the_table_and_the_config() {
    let w = util::ws();
    w.write("sneaky.toml", "[permissions]\ndeny = [\"grep_files\"]\n");
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert!(
        !names.contains(&"grep_files"),
        "denied tool listed: {names:?}"
    );
    assert!(!names.contains(&"finish"), "{names:?}");
    for spec in sneaky::tools::all() {
        let listed = names.contains(&spec.name());
        let expected = !matches!(spec.name(), "grep_files" | "finish");
        assert_eq!(listed, expected, "{}", spec.name());
    }
    for tool in tools.as_array().expect("tools") {
        let spec = sneaky::tools::find(tool["name"].as_str().expect("name")).expect("spec");
        let schema: Value = serde_json::from_str(spec.schema).expect("schema");
        assert_eq!(tool["inputSchema"], schema);
        assert_eq!(tool["description"], schema["description"]);
        assert_eq!(tool["title"], spec.title);
        assert_eq!(tool["outputSchema"], spec.output_schema());
        let a = &tool["annotations"];
        assert_eq!(a["readOnlyHint"], spec.hints.read_only);
        assert_eq!(a["openWorldHint"], false);
        assert_eq!(
            a["destructiveHint"],
            spec.hints.destructive,
            "{}",
            spec.name()
        );
        assert_eq!(
            a["idempotentHint"],
            spec.hints.idempotent,
            "{}",
            spec.name()
        );
    }
    let denied = s.call(2, "grep_files", json!({"pattern": "x"}));
    assert_eq!(denied["isError"], true);
    assert_eq!(failure_code(&denied), "tool_denied");
    let (_, status, _) = s.finish();
    assert_eq!(status, 0);
}

#[test]
fn structured_content_matches_the_output_schema() {
    let w = util::ws();
    w.write("src/lib.rs", "fn answer() {}\n// answer again\n")
        .write("notes.txt", "answer\n")
        .mkdir("empty");
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
    let schema_of = |name: &str| -> Value {
        tools
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .map(|t| t["outputSchema"].clone())
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    let calls = [
        ("read_file", json!({"file_path": "src/lib.rs"})),
        (
            "read_file",
            json!({"file_path": "src/lib.rs", "offset": 2, "limit": 1}),
        ),
        (
            "list_dir",
            json!({"directory_path": ".", "recursive": true}),
        ),
        ("grep_files", json!({"pattern": "answer"})),
        ("grep_files", json!({"pattern": "answer", "context": 1})),
        ("find_files", json!({"pattern": "*.rs"})),
        // Parsed through sneaky-outline's helper: the host links no grammar.
        ("outline", json!({"path": "src"})),
        (
            "find_symbol",
            json!({"name": "answer", "include_body": true}),
        ),
        ("find_references", json!({"name": "answer"})),
        ("repo_map", json!({"max_tokens": 256})),
    ];
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let result = s.call(100 + i as i64, tool, args.clone());
        assert_eq!(result["isError"], false, "{tool} {args}: {result}");
        let schema = schema_of(tool);
        let validator = jsonschema::validator_for(&schema).expect("output schema compiles");
        let structured = &result["structuredContent"];
        if let Err(e) = validator.validate(structured) {
            panic!(
                "{tool} {args}: structuredContent does not match outputSchema: {e}\n{structured}"
            );
        }
    }
    s.finish();
}

#[test]
fn cancellation_of_unknown_or_finished_requests_is_ignored() {
    let w = util::ws();
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    s.request(1, "ping", json!({}));
    let cancel = |id: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "user"}})
    };
    s.send(cancel(json!(1)));
    s.send(cancel(json!("never-sent")));
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}));
    let pong = s.request(2, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let (rest, status, _) = s.finish();
    assert!(rest.is_empty(), "cancellations get no answer: {rest:?}");
    assert_eq!(status, 0);
}

/// The roots round trip: no --root, the client offers roots, the server asks for them and holds
/// tool requests until the answer; a request cancelled meanwhile is never answered.
#[test]
fn workspace_from_the_clients_roots_and_cancelling_a_waiting_request() {
    let w = util::ws();
    w.write("from-roots.txt", "found through roots\n");
    let elsewhere = w.outside().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let mut s = Session::spawn(command(&w, &[], &elsewhere));
    s.initialize("2025-06-18", json!({"roots": {"listChanged": true}}));
    let ask = s.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    let ask_id = ask["id"].clone();
    assert!(ask_id.is_string() || ask_id.is_number());

    let read = json!({"name": "read_file", "arguments": {"file_path": "from-roots.txt"}});
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": read}));
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": read}));
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 1}}),
    );
    // Pings are answered while tool requests wait for the roots.
    assert_eq!(s.request(3, "ping", json!({}))["result"], json!({}));

    let uri = format!("file://{}", w.root.display()).replace(' ', "%20");
    s.send(json!({"jsonrpc": "2.0", "id": ask_id,
                  "result": {"roots": [{"uri": uri, "name": "ws"}]}}));
    let reply = s.recv();
    assert_eq!(reply["id"], 2, "request 1 was cancelled: {reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["content"],
        "found through roots\n"
    );
    let (rest, status, stderr) = s.finish();
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(status, 0);
    assert!(stderr.contains("client's first root"), "{stderr}");
}

#[test]
fn roots_refused_by_the_client_fall_back_to_the_current_directory() {
    let w = util::ws();
    w.write("here.txt", "cwd\n");
    // The project around the current directory, found by its marker as the binaries find it.
    w.mkdir(".git");
    let mut s = Session::spawn(command(&w, &[], &w.root));
    s.initialize("2025-06-18", json!({"roots": {}}));
    let ask = s.recv();
    assert_eq!(ask["method"], "roots/list");
    s.send(json!({"jsonrpc": "2.0", "id": ask["id"],
                  "error": {"code": -32600, "message": "no roots here"}}));
    let result = s.call(1, "read_file", json!({"file_path": "here.txt"}));
    assert_eq!(result["structuredContent"]["content"], "cwd\n");
    let (_, status, _) = s.finish();
    assert_eq!(status, 0);
}

#[test]
fn sneaky_root_and_the_current_directory() {
    let w = util::ws();
    w.write("r.txt", "root file\n");
    let elsewhere = w.outside().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let mut cmd = command(&w, &[], &elsewhere);
    cmd.env("SNEAKY_ROOT", &w.root);
    let mut s = Session::spawn(cmd);
    s.initialize("2025-06-18", json!({"roots": {}}));
    // SNEAKY_ROOT wins over the client's roots: no roots/list is asked.
    let result = s.call(1, "read_file", json!({"file_path": "r.txt"}));
    assert_eq!(result["structuredContent"]["content"], "root file\n");
    s.finish();

    // No root named and no roots offered: the project around the current directory.
    w.mkdir(".git").mkdir("sub");
    let mut s = Session::spawn(command(&w, &[], &w.root.join("sub")));
    s.initialize("2024-11-05", json!({}));
    let result = s.call(1, "read_file", json!({"file_path": "r.txt"}));
    assert_eq!(result["isError"], false, "{result}");
    s.finish();
}

#[test]
fn eof_ends_the_server_cleanly() {
    let w = util::ws();
    let s = start(&w, &[]);
    let (rest, status, _) = s.finish();
    assert!(rest.is_empty());
    assert_eq!(status, 0);

    // Requests still queued at EOF are answered before the server exits.
    let mut s = start(&w, &[]);
    for id in 1..=20 {
        s.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
    }
    let (rest, status, _) = s.finish();
    assert_eq!(rest.len(), 20);
    assert_eq!(status, 0);
}

#[test]
fn a_closed_stdout_is_not_a_crash() {
    let w = util::ws();
    let root = w.root.to_str().expect("utf-8").to_string();
    let mut child = command(&w, &["--root", &root], &w.root)
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    for id in 0..50 {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string() + "\n";
        if stdin.write_all(line.as_bytes()).is_err() {
            break; // the server has already gone
        }
    }
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn an_overlong_line_is_refused_and_serving_goes_on() {
    let w = util::ws();
    w.write("sneaky.toml", "max_file_size_bytes = 1024\n");
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    // 4 × 1024 + 64 KiB is the bound; this line is well over it.
    let content = "x".repeat(200_000);
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "read_file", "arguments": {"file_path": content}}});
    s.send(huge);
    let reply = s.recv();
    assert_eq!(error_code(&reply), -32600, "{reply}");
    assert!(reply["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("longer than")));
    assert_eq!(s.request(2, "ping", json!({}))["result"], json!({}));
    let (_, status, _) = s.finish();
    assert_eq!(status, 0);
}

#[test]
fn flags_help_version_and_a_bad_root() {
    let w = util::ws();
    let out = command(&w, &["--help"], &w.root).output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--root", "--config", "--read-only", "--version"] {
        assert!(help.contains(flag), "{help}");
    }
    let out = command(&w, &["--version"], &w.root).output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
    let out = command(&w, &["--bogus"], &w.root).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());

    let missing = w.outside().join("no-such-dir");
    let out = command(&w, &["--root", missing.to_str().expect("utf-8")], &w.root)
        .output()
        .expect("run");
    assert_ne!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "stdout stays clean");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-dir"));
}

#[test]
fn read_only_offers_only_auto_read_tools() {
    let w = util::ws();
    w.write("sneaky.toml", "[permissions]\nconfirm = [\"find_files\"]\n");
    let mut s = start(&w, &["--read-only"]);
    s.initialize("2025-06-18", json!({}));
    let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    let expected: Vec<&str> = sneaky::tools::all()
        .filter(|s| s.hints.read_only && s.default_tier() == sneaky::permissions::Tier::Auto)
        .map(|s| s.name())
        .filter(|n| !matches!(*n, "find_files" | "finish"))
        .collect();
    assert_eq!(names, expected);
    assert!(names.contains(&"read_file"));
    let refused = s.call(2, "find_files", json!({"pattern": "*"}));
    assert_eq!(refused["isError"], true);
    assert_eq!(failure_code(&refused), "tool_denied");
    s.finish();
}

/// The code of a failed call: `isError`, text `CODE: message`, and no `structuredContent`
/// (which hosts would validate against the tool's `outputSchema`).
fn failure_code(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text part");
    let (code, message) = text.split_once(": ").expect("CODE: message");
    assert!(!message.is_empty(), "{text}");
    assert!(
        code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
        "{text}"
    );
    code.to_string()
}

/// What a model reads is what the plain tools print: `cat` under a one-line header, and rg's
/// own `--heading -n` and `--files` output (compared with rg itself when it is installed).
#[test]
fn model_text_reads_like_the_plain_tools() {
    let w = util::ws();
    let lib = "//! doc\nuse std::io;\n\npub fn answer() -> u32 {\n    42\n}\n\nfn helper() {}\n";
    w.write("src/lib.rs", lib)
        .write("src/bin/main.rs", "fn main() {\n    let answer = 42;\n}\n")
        .write("README.md", "The answer is 42.\n");
    let mut s = start(&w, &[]);
    s.initialize("2025-11-25", json!({}));
    let text = |s: &mut Session, id: i64, tool: &str, args: Value| -> String {
        let result = s.call(id, tool, args);
        assert_eq!(result["isError"], false, "{result}");
        result["content"][0]["text"]
            .as_str()
            .expect("text")
            .to_string()
    };
    let read = text(&mut s, 1, "read_file", json!({"file_path": "src/lib.rs"}));
    assert_eq!(read, format!("src/lib.rs (lines 1-8 of 8)\n{lib}"));
    let range = json!({"file_path": "src/lib.rs", "offset": 4, "limit": 2});
    let read = text(&mut s, 2, "read_file", range);
    assert_eq!(
        read,
        "src/lib.rs (lines 4-5 of 8)\npub fn answer() -> u32 {\n    42\n"
    );

    let calls: [(Value, &[&str]); 4] = [
        (json!({"pattern": "answer"}), &["--heading", "-n", "answer"]),
        (
            json!({"pattern": "fn", "context": 1}),
            &["--heading", "-n", "-C1", "fn"],
        ),
        (
            json!({"pattern": "42", "path": "src"}),
            &["--heading", "-n", "42", "src"],
        ),
        (json!({"pattern": "*.rs"}), &["--files", "-g", "*.rs"]),
    ];
    let rg = std::process::Command::new("rg").arg("--version").output();
    for (i, (args, rg_args)) in calls.into_iter().enumerate() {
        let tool = if rg_args[0] == "--files" {
            "find_files"
        } else {
            "grep_files"
        };
        let ours = text(&mut s, 10 + i as i64, tool, args);
        if rg.is_err() {
            eprintln!("rg is not installed: {tool} text not compared with rg");
            continue;
        }
        let out = std::process::Command::new("rg")
            .args(["--sort", "path", "--color", "never"])
            .args(rg_args)
            .current_dir(&w.root)
            .output()
            .expect("rg");
        let theirs = String::from_utf8_lossy(&out.stdout);
        assert_eq!(ours, theirs.trim_end(), "rg {rg_args:?}");
    }
    s.finish();
}

/// JSON-RPC batches: a 2025-03-26 session gets one array of answers (nothing for a batch of
/// notifications); the other versions refuse them.
#[test]
fn batches_in_a_2025_03_26_session_and_refused_in_others() {
    let w = util::ws();
    w.write("a.txt", "a\n").write("src/b.rs", "fn b() {}\n");
    let mut s = start(&w, &[]);
    s.initialize("2025-03-26", json!({}));
    s.send(json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "read_file", "arguments": {"file_path": "a.txt"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "grep_files", "arguments": {"pattern": "fn b"}}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {}},
        {"jsonrpc": "1.0", "id": 6, "method": "ping"}
    ]));
    let line = s.lines.recv_timeout(WAIT).expect("the batch's answer");
    let answers: Value = serde_json::from_str(&line).expect("JSON");
    let answers = answers.as_array().expect("an array of answers");
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id}: {answers:?}"))
    };
    assert_eq!(answers.len(), 6, "{answers:?}");
    assert_eq!(by_id(1)["result"], json!({}));
    assert!(by_id(2)["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    assert_eq!(
        by_id(3)["result"]["content"][0]["text"],
        "a.txt (lines 1-1 of 1)\na\n"
    );
    assert!(by_id(4)["result"]["content"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("src/b.rs")));
    assert_eq!(error_code(by_id(5)), -32600);
    assert_eq!(error_code(by_id(6)), -32600);
    // Notifications only: nothing comes back; an empty batch is one error.
    s.send(json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]));
    s.send_raw("[]");
    let reply = s.recv();
    assert!(reply.is_object() && error_code(&reply) == -32600, "{reply}");
    assert_eq!(s.request(7, "ping", json!({}))["result"], json!({}));
    s.finish();

    for version in ["2025-06-18", "2024-11-05"] {
        let mut s = start(&w, &[]);
        s.initialize(version, json!({}));
        s.send(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]));
        let reply = s.recv();
        assert_eq!(error_code(&reply), -32600, "{version}: {reply}");
        assert_eq!(reply["id"], Value::Null);
        s.finish();
    }
}

/// Every tool is on the first page: a cursor (which this server never hands out) is invalid.
#[test]
fn tools_list_with_an_invalid_cursor_is_invalid_params() {
    let w = util::ws();
    let mut s = start(&w, &[]);
    s.initialize("2025-11-25", json!({}));
    let first = s.request(1, "tools/list", json!({}));
    assert!(first["result"].get("nextCursor").is_none(), "{first}");
    for cursor in [json!("bogus"), json!(2)] {
        let reply = s.request(2, "tools/list", json!({ "cursor": cursor }));
        assert_eq!(error_code(&reply), -32602, "{reply}");
        assert!(reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cursor")));
    }
    let reply = s.request(3, "tools/list", json!({ "cursor": null }));
    assert_eq!(reply["result"]["tools"], first["result"]["tools"]);
    s.finish();
}

/// Started in no project, the host offering roots but none yet: a call says how to give a
/// root; once the host says its roots changed, the server asks again and the first root is the
/// workspace.
#[test]
fn roots_that_come_later_open_the_workspace() {
    let w = util::ws();
    w.write("late.txt", "late root\n");
    let nowhere = w.outside().join("nowhere");
    std::fs::create_dir_all(&nowhere).expect("mkdir");
    let mut cmd = command(&w, &[], &nowhere);
    cmd.env("HOME", &nowhere)
        .env("SNEAKY_CEILING_DIRECTORIES", &nowhere);
    let mut s = Session::spawn(cmd);
    s.initialize("2025-06-18", json!({"roots": {"listChanged": true}}));
    let ask = s.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    s.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": []}}));
    let tools = s.request(1, "tools/list", json!({}));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() > 4),
        "{tools}"
    );
    let result = s.call(2, "read_file", json!({"file_path": "late.txt"}));
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.starts_with("invalid_args: no workspace"), "{text}");
    assert!(text.contains("--root") && text.contains("roots"), "{text}");

    s.send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}));
    let ask = s.recv();
    assert_eq!(ask["method"], "roots/list", "asked again: {ask}");
    let uri = format!("file://{}", w.root.display()).replace(' ', "%20");
    s.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": uri}]}}));
    let result = s.call(3, "read_file", json!({"file_path": "late.txt"}));
    assert_eq!(
        result["structuredContent"]["content"], "late root\n",
        "{result}"
    );
    let (_, status, _) = s.finish();
    assert_eq!(status, 0);
}

/// `undo` over MCP: listed, and it takes back an edit and a command's changes (each result
/// matching its outputSchema).
#[test]
fn undo_takes_back_an_edit_and_a_command_s_changes() {
    let w = util::ws();
    w.write("a.txt", "one\n");
    let mut s = start(&w, &[]);
    s.initialize("2025-06-18", json!({}));
    let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
    let schema_of = |name: &str| -> Value {
        tools
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .map(|t| t["outputSchema"].clone())
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    let mut call = |id: i64, tool: &str, args: Value| -> Value {
        let result = s.call(id, tool, args.clone());
        assert_eq!(result["isError"], false, "{tool} {args}: {result}");
        let schema = schema_of(tool);
        let validator = jsonschema::validator_for(&schema).expect("output schema compiles");
        let structured = result["structuredContent"].clone();
        if let Err(e) = validator.validate(&structured) {
            panic!("{tool}: structuredContent does not match outputSchema: {e}\n{structured}");
        }
        structured
    };
    let write = call(
        2,
        "write_file",
        json!({"file_path": "a.txt", "content": "two\n"}),
    );
    let write_id = write["change_id"].as_str().expect("change_id").to_string();
    let run = call(3, "run_command", json!({"command": "echo three >> a.txt"}));
    assert_eq!(
        run["changes"],
        json!([{"path": "a.txt", "kind": "modified"}]),
        "{run}"
    );
    let run_id = run["change_id"].as_str().expect("change_id").to_string();
    assert_eq!(w.read("a.txt"), "two\nthree\n");
    let back = call(4, "undo", json!({}));
    assert_eq!(back["undone"], run_id.as_str());
    assert_eq!(w.read("a.txt"), "two\n");
    let back = call(5, "undo", json!({"change_id": write_id}));
    assert_eq!(back["undone"], write_id.as_str());
    assert_eq!(w.read("a.txt"), "one\n");
    let list = call(6, "undo", json!({"list": true}));
    let tools: Vec<&str> = list["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert_eq!(tools, ["undo", "undo", "run_command", "write_file"]);
    s.finish();
}
