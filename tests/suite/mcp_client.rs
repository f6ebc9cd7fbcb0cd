//! The official Python MCP SDK's stdio client drives sneaky-mcp (tests/mcp/client_test.py).
//! Needs the virtual environment that `.ci/setup-mcp.sh` makes; without it this test skips
//! loudly (and fails in CI, where SNEAKY_REQUIRE_ALL=1).

use std::path::PathBuf;
use std::process::Command;

use crate::util;

fn venv_python() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    let target = if target.is_absolute() {
        target
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(target)
    };
    target.join("mcp-venv/bin/python")
}

#[test]
fn official_python_client_drives_the_server() {
    let python = venv_python();
    if !util::require_python_pkg(&python, "mcp", ".ci/setup-mcp.sh") {
        return;
    }
    let w = util::ws();
    w.write("hello.txt", "hello world\n")
        .write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let elsewhere = w.outside().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let binary = assert_cmd::cargo::cargo_bin("sneaky-mcp");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client_test.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&binary)
        .arg(&w.root)
        .arg(&elsewhere)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all MCP client checks passed"),
        "the Python MCP client failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
