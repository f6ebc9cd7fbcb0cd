//! What the model reads through the agent hosts people use — Codex CLI, Claude Code and
//! opencode, from npm — set up as docs/mcp.md says, against a mock model on the loopback
//! (tests/agents/hosts_test.mjs; what it checks is said there). The hosts come from
//! `.ci/setup-agents.sh`; without them the test skips loudly (`util::skip`), and fails in CI,
//! where SNEAKY_REQUIRE_ALL=1.

use std::path::PathBuf;
use std::process::Command;

use crate::mcp_client::target_dir;
use crate::util;

#[test]
fn the_model_reads_the_text_and_one_image_through_codex_claude_code_and_opencode() {
    let agents = target_dir().join("agents-npm");
    if let Some(missing) = ["codex", "claude", "opencode"]
        .iter()
        .find(|host| !agents.join("node_modules/.bin").join(host).exists())
    {
        util::skip(&format!(
            "needs the agent host {missing} in {} (run `bash .ci/setup-agents.sh`)",
            agents.display()
        ));
        return;
    }
    if !util::require_cmd("node") || !util::require_cmd("git") {
        return;
    }
    let w = util::ws();
    let work = w.outside().join("agents");
    let report = w.outside().join("report.json");
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = assert_cmd::cargo::cargo_bin("sneaky-mcp");
    let out = Command::new("node")
        .arg(manifest.join("tests/agents/hosts_test.mjs"))
        .arg("--bin")
        .arg(bin.parent().expect("the binaries' directory"))
        .arg("--agents")
        .arg(&agents)
        .arg("--docs")
        .arg(manifest.join("docs/mcp.md"))
        .arg("--work")
        .arg(&work)
        .arg("--report")
        .arg(&report)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all host checks passed"),
        "the host test failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    // The table of what each host gave the model, for the log of a run with --nocapture.
    println!("{stdout}");
}
