//! The host configuration snippets of docs/mcp.md work as written: each JSON snippet parses, and
//! each server entry with a `command` (a string and `args`, or opencode's array) is started the
//! way a desktop host starts it — from `/` (from the project when the snippet names no root, as
//! a CLI agent run there starts it), with an empty home and a bare environment, `sneaky-mcp`
//! found on PATH — with the workspace's path filled in (`${workspaceFolder}` as VS Code and
//! Cursor expand it, the example path `/home/me/projects/myapp` as a person edits it). It must
//! list its tools and read a file of that workspace (so the root it was given is the one used).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::util;

/// The placeholder a person replaces in the snippets that name the workspace.
const EXAMPLE_ROOT: &str = "/home/me/projects/myapp";

/// The ```json blocks of a Markdown text, each with the last bold label (`**VS Code**`) or
/// heading (`### opencode`) before it, and the name of the `<!-- agents-test: NAME -->` marker
/// just before it, if any (tests/agents/hosts_test.mjs runs those with the real hosts).
fn json_snippets(markdown: &str) -> Vec<(String, String, Option<String>)> {
    let mut snippets = Vec::new();
    let mut label = String::new();
    let mut marker: Option<String> = None;
    let mut block: Option<String> = None;
    for line in markdown.lines() {
        match &mut block {
            Some(text) if line.trim_start() == "```" => {
                snippets.push((label.clone(), std::mem::take(text), marker.take()));
                block = None;
            }
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None if line.trim_start() == "```json" => block = Some(String::new()),
            None => {
                if let Some(rest) = line.strip_prefix("**") {
                    if let Some(end) = rest.find("**") {
                        label = rest[..end].to_string();
                    }
                } else if let Some(heading) = line.strip_prefix("### ") {
                    label = heading.to_string();
                }
                marker = line
                    .strip_prefix("<!-- agents-test: ")
                    .and_then(|rest| rest.strip_suffix(" -->"))
                    .map(str::to_string);
            }
        }
    }
    snippets
}

/// initialize, tools/list and a read_file call over the server's stdio: (tool names, read text).
fn list_and_read(mut cmd: Command) -> (Vec<String>, Value) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the snippet's command");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // A request gets its answer; a notification (no id) none.
    let mut exchange = |message: Value| -> Value {
        writeln!(stdin, "{message}").expect("write");
        if message.get("id").is_none() {
            return Value::Null;
        }
        let line = lines.next().expect("an answer").expect("read");
        serde_json::from_str(&line).expect("JSON")
    };
    let init = exchange(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "host-snippet-test", "version": "1"}}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let listed = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let names = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list: {listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    let read = exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_path": "marker.txt"}}}));
    drop(stdin);
    let _ = child.wait();
    (names, read["result"].clone())
}

#[test]
fn every_host_snippet_of_docs_mcp_starts_a_server_that_lists_its_tools() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/mcp.md"))
        .expect("read docs/mcp.md");
    let snippets = json_snippets(&doc);
    let bin_dir = assert_cmd::cargo::cargo_bin("sneaky-mcp")
        .parent()
        .expect("the binaries' directory")
        .to_path_buf();
    let mut started = Vec::new();
    for (label, text, marker) in &snippets {
        let config: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("the {label} snippet is not JSON ({e}):\n{text}"));
        let Some(servers) = config
            .get("mcpServers")
            .or_else(|| config.get("servers"))
            .or_else(|| config.get("mcp"))
            .and_then(Value::as_object)
        else {
            // Settings of a host that tests/agents/hosts_test.mjs applies (Claude Code's
            // permissions) rather than a server entry.
            assert!(
                marker.is_some(),
                "the {label} snippet has no mcpServers/servers/mcp"
            );
            continue;
        };
        for (name, server) in servers {
            // `"command": "sneaky-mcp", "args": [...]`, or opencode's `"command": [...]`.
            let (command, args) = match server.get("command") {
                Some(Value::String(command)) => (
                    command.clone(),
                    server
                        .get("args")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                ),
                Some(Value::Array(words)) if !words.is_empty() => (
                    words[0].as_str().expect("a string command").to_string(),
                    words[1..].to_vec(),
                ),
                _ => {
                    assert!(
                        server.get("url").is_some(),
                        "{label} {name}: no command, no url"
                    );
                    continue;
                }
            };
            let w = util::ws();
            w.write("marker.txt", "the workspace of the snippet\n");
            let root = w.root.to_str().expect("UTF-8 root");
            let home = w.outside().join("empty-home");
            std::fs::create_dir_all(&home).expect("mkdir");
            let args: Vec<String> = args
                .iter()
                .map(|v| {
                    v.as_str()
                        .expect("string args")
                        .replace("${workspaceFolder}", root)
                        .replace(EXAMPLE_ROOT, root)
                })
                .collect();
            // A snippet that names no root is for a host that starts the server in the project
            // (a CLI agent, run there): started there, the server finds the project by its .git.
            let names_root = args.iter().any(|a| a == root);
            let start_in = if names_root {
                std::path::PathBuf::from("/")
            } else {
                std::fs::create_dir_all(w.root.join(".git")).expect("mkdir .git");
                w.root.clone()
            };
            let mut cmd = Command::new(&command);
            cmd.args(&args)
                .current_dir(&start_in)
                .env_clear()
                .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
                .env("HOME", &home);
            let (names, read) = list_and_read(cmd);
            assert!(
                names.len() >= 10 && names.iter().any(|n| n == "read_file"),
                "{label}: tools/list gave {names:?}"
            );
            assert_eq!(read["isError"], false, "{label}: {read}");
            let text = read["content"][0]["text"].as_str().unwrap_or("");
            assert!(
                text.contains("the workspace of the snippet"),
                "{label}: {text}"
            );
            started.push(label.clone());
        }
    }
    for host in ["Claude Desktop", "Cursor", "VS Code", "opencode"] {
        assert!(
            started.iter().any(|l| l.starts_with(host)),
            "no {host} snippet was started: {started:?}"
        );
    }
}
