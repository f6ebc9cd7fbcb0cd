//! The official MCP clients drive sneaky-mcp: the Python SDK's stdio client
//! (tests/mcp/client_test.py) and the TypeScript SDK's (tests/mcp/ts_client_test.cjs, which also
//! compiles every schema with ajv in strict mode).
//!
//! They need packages from PyPI and npm, which `.ci/setup-mcp.sh` and `.ci/setup-hosts.sh`
//! install under the target directory (CI runs them before the tests). Without them a test
//! skips loudly (`util::skip`), so that `cargo test` works for a contributor who has not run
//! the set-up scripts, and fails in CI, where SNEAKY_REQUIRE_ALL=1.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util;

/// The target directory, as the set-up scripts find it.
pub fn target_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    if target.is_absolute() {
        target
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(target)
    }
}

/// Where `.ci/setup-hosts.sh` puts the npm packages, when they are there (and node is).
pub fn node_modules() -> Option<PathBuf> {
    let dir = target_dir().join("hosts-npm/node_modules");
    let wanted = ["@modelcontextprotocol/sdk", "ajv", "gpt-tokenizer"];
    if let Some(missing) = wanted
        .iter()
        .find(|p| !dir.join(p).join("package.json").is_file())
    {
        util::skip(&format!(
            "needs the npm package {missing} in {} (run `bash .ci/setup-hosts.sh`)",
            dir.display()
        ));
        return None;
    }
    util::require_cmd("node").then_some(dir)
}

/// Every `sneaky-agent tools` export of the workspace, as one JSON file
/// `{"mcp": […], "openai": […], "openai-strict": […], "openai-responses": […], "anthropic": […]}`.
pub fn write_exports(w: &util::Ws, file: &Path) {
    let mut all = serde_json::Map::new();
    for (key, args) in [
        ("mcp", &["--format", "mcp"][..]),
        ("openai", &["--format", "openai"][..]),
        ("openai-strict", &["--format", "openai", "--strict"][..]),
        ("openai-responses", &["--format", "openai-responses"][..]),
        ("anthropic", &["--format", "anthropic"][..]),
    ] {
        let mut full = vec!["tools"];
        full.extend_from_slice(args);
        let out = crate::agent::agent_command(w, &full)
            .output()
            .expect("run sneaky-agent tools");
        assert!(out.status.success(), "tools {args:?}: {out:?}");
        let export: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        all.insert(key.into(), export);
    }
    std::fs::write(file, serde_json::Value::Object(all).to_string()).expect("write exports");
}

fn run_client(what: &str, mut cmd: Command, done: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("run the {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(done),
        "the {what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn sample_workspace() -> util::Ws {
    let w = util::ws();
    w.write("hello.txt", "hello world\n")
        .write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    w
}

/// Both shapes of the tools (src/mcp/shape.rs): `--structured-content on` (outputSchema and
/// structuredContent, which the SDKs validate) and `off` (content blocks only, which they must
/// accept when no outputSchema is declared).
const SHAPES: [&str; 2] = ["structured", "text"];

#[test]
fn official_python_client_drives_the_server() {
    let python = target_dir().join("mcp-venv/bin/python");
    if !util::require_python_pkg(&python, "mcp", ".ci/setup-mcp.sh") {
        return;
    }
    for shape in SHAPES {
        let w = sample_workspace();
        let elsewhere = w.outside().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client_test.py");
        let mut cmd = Command::new(&python);
        cmd.arg(&script)
            .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
            .arg(&w.root)
            .arg(&elsewhere)
            .arg(shape)
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
            .env("XDG_STATE_HOME", w.outside().join("state"));
        run_client(
            "Python MCP client",
            cmd,
            &format!("all MCP client checks passed ({shape} shape)"),
        );
    }
}

/// Each tool's own calls (`Doc::calls`), as tests/mcp/ts_client_test.cjs makes them:
/// `{"calls": [{name, files, before, works, fails, code}], "unlisted": [names]}`, the tools an
/// MCP server does not serve (`ends_session`) in `unlisted`.
fn write_calls(file: &Path) {
    let parse = |name: &str, text: &str| -> serde_json::Value {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {text:?}: {e}"))
    };
    let (served, unlisted): (Vec<_>, Vec<_>) =
        sneaky::tools::all().partition(|tool| !tool.hints.ends_session);
    let calls: Vec<serde_json::Value> = served
        .into_iter()
        .map(|tool| {
            let calls = tool.doc.calls;
            let files: serde_json::Map<String, serde_json::Value> = tool
                .doc
                .text
                .files
                .iter()
                .map(|(path, content)| (path.to_string(), (*content).into()))
                .collect();
            let before: Vec<serde_json::Value> = calls
                .before
                .iter()
                .map(|(other, args)| {
                    serde_json::json!([other.as_str(), parse(other.as_str(), args)])
                })
                .collect();
            serde_json::json!({
                "name": tool.name(),
                "files": files,
                "before": before,
                "works": parse(tool.name(), calls.works),
                "fails": parse(tool.name(), calls.fails),
                "code": calls.fails_with.code(),
            })
        })
        .collect();
    let unlisted: Vec<&str> = unlisted.iter().map(|tool| tool.name()).collect();
    let all = serde_json::json!({"calls": calls, "unlisted": unlisted});
    std::fs::write(file, all.to_string()).expect("write the calls");
}

#[test]
fn official_typescript_client_calls_every_tool_and_gets_results() {
    let Some(node_modules) = node_modules() else {
        return;
    };
    for shape in SHAPES {
        let w = sample_workspace();
        let exports = w.outside().join("exports.json");
        write_exports(&w, &exports);
        let calls = w.outside().join("calls.json");
        write_calls(&calls);
        let base = w.outside().join("tools");
        std::fs::create_dir_all(&base).expect("mkdir");
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/ts_client_test.cjs");
        let mut cmd = Command::new("node");
        cmd.arg(&script)
            .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
            .arg(&base)
            .arg(&exports)
            .arg(&calls)
            .arg(shape)
            .env("NODE_PATH", &node_modules)
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
            .env("XDG_STATE_HOME", w.outside().join("state"));
        run_client(
            "TypeScript MCP client",
            cmd,
            &format!("all TypeScript MCP client checks passed ({shape} shape)"),
        );
    }
}

/// Started as desktop hosts start servers: no --root, in a directory that is no project, with
/// an empty home (tests/mcp/host_start_test.py).
#[test]
fn official_python_client_starts_the_server_as_desktop_hosts_do() {
    let python = target_dir().join("mcp-venv/bin/python");
    if !util::require_python_pkg(&python, "mcp", ".ci/setup-mcp.sh") {
        return;
    }
    let w = sample_workspace();
    let start = w.outside().join("start");
    let home = w.outside().join("home");
    std::fs::create_dir_all(&start).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/host_start_test.py");
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
        .arg(&w.root)
        .arg(&start)
        .arg(&home);
    run_client("Python MCP client", cmd, "all host start-up checks passed");
}

/// The same start-up through the TypeScript SDK's client (tests/mcp/ts_host_start_test.cjs).
#[test]
fn official_typescript_client_starts_the_server_as_desktop_hosts_do() {
    let Some(node_modules) = node_modules() else {
        return;
    };
    let w = sample_workspace();
    let start = w.outside().join("start");
    let home = w.outside().join("home");
    std::fs::create_dir_all(&start).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/ts_host_start_test.cjs");
    let mut cmd = Command::new("node");
    cmd.arg(&script)
        .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
        .arg(&w.root)
        .arg(&start)
        .arg(&home)
        .env("NODE_PATH", &node_modules);
    run_client(
        "TypeScript MCP client",
        cmd,
        "all TypeScript host start-up checks passed",
    );
}
