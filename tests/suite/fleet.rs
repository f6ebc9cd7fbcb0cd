//! One container per workspace (deploy/build-image.sh, deploy/workspace.sh, docs/containers.md):
//! tests/containers/fleet_test.py builds the image from this test build's binaries, starts four
//! workspaces in Podman, drives each through the official Python MCP client over HTTP (read,
//! grep, commands), runs the raw-syscall probe of tests/containers/probe.c inside (writes
//! outside, a denied program directly and through ld.so, .git/config, the other workspaces and
//! the host, the server's process, the token) and checks from outside that nothing happened;
//! then a workspace under a seccomp profile like Docker's default, where run_command refuses.
//!
//! It needs root, Podman and runc (`.ci/setup-podman.sh`), a C compiler
//! (`.ci/setup-sandbox.sh`) and the Python SDK (`.ci/setup-mcp.sh`); without them it skips
//! loudly, and fails in CI (SNEAKY_REQUIRE_ALL=1).

use std::path::PathBuf;
use std::process::Command;

use crate::util;

/// Ignored in the main run: while its containers run, their conmon processes hold attach
/// sockets named `/proc/self/fd/N/attach`, which a sandboxed command on the host cannot cover
/// (its launcher may then refuse, ENOTDIR), so another test's command could be refused
/// meanwhile. `.ci/test` runs it on its own after the rest
/// (`cargo test --test suite fleet:: -- --ignored`).
#[test]
#[ignore = "starts containers: .ci/test runs it alone, after the other tests"]
fn four_workspaces_in_containers_keep_every_promise() {
    if !util::require_root("run Podman containers with a firewall in their network namespaces") {
        return;
    }
    for tool in ["podman", "runc", "iptables", "curl", "cc"] {
        if !util::require_cmd(tool) {
            return;
        }
    }
    let python = crate::mcp_client::target_dir().join("mcp-venv/bin/python");
    if !util::require_python_pkg(&python, "mcp", ".ci/setup-mcp.sh") {
        return;
    }
    let binaries = assert_cmd::cargo::cargo_bin("sneaky-mcp")
        .parent()
        .expect("the binaries' directory")
        .to_path_buf();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(&python)
        .arg(repo.join("tests/containers/fleet_test.py"))
        .arg(&repo)
        .arg(&binaries)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .output()
        .expect("run the fleet test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all fleet checks passed"),
        "the fleet test failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

/// The image's configuration (deploy/config.toml) is one the loader takes, with the network off
/// and every layer required.
#[test]
fn the_image_configuration_keeps_the_network_off_and_requires_every_layer() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/config.toml");
    let text = std::fs::read_to_string(&path).expect("read deploy/config.toml");
    let config = sneaky::config::Config::parse(&text, "deploy/config.toml").expect("parses");
    let shell = &config.tools.shell;
    assert_eq!(shell.network, sneaky::config::Network::Off);
    assert_eq!(shell.require_layers, Some(vec!["all".to_string()]));
    assert!(!shell.container_boundary);
}
