//! Inside a container run_command keeps its promises or refuses: the own /proc counts as a
//! layer (`proc`), and a refusal names the engine option that gives the missing layer. No
//! engine is needed: `SNEAKY_SANDBOX_SKIP` leaves a layer out as a container would, and
//! `SNEAKY_CONTAINER_ROOT` points the detection at a directory holding an engine's marker.

use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Reply, Ws};

/// A directory that looks like the root of a container of `engine`.
fn marker_root(w: &Ws, engine: &str) -> std::path::PathBuf {
    let root = w.outside().join(format!("ctr-{engine}"));
    std::fs::create_dir_all(root.join("run")).expect("mkdir");
    std::fs::create_dir_all(root.join("proc/1")).expect("mkdir");
    match engine {
        "podman" => std::fs::write(root.join("run/.containerenv"), "").expect("marker"),
        "docker" => std::fs::write(root.join(".dockerenv"), "").expect("marker"),
        other => std::fs::write(
            root.join("proc/1/environ"),
            format!("PATH=/bin\0container={other}\0HOME=/\0"),
        )
        .expect("marker"),
    }
    root
}

fn call(w: &Ws, skip: &str, root: Option<&std::path::Path>, env: &[(&str, &str)]) -> Reply {
    let mut cmd = Command::cargo_bin("sneaky-run").expect("binary");
    cmd.current_dir(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
        .env("SNEAKY_SANDBOX_SKIP", skip)
        .arg("--root")
        .arg(&w.root)
        .arg("echo ran; touch pwned");
    match root {
        Some(root) => cmd.env("SNEAKY_CONTAINER_ROOT", root),
        // Nothing beneath an empty directory: no marker, whatever this machine is.
        None => cmd.env("SNEAKY_CONTAINER_ROOT", w.outside().join("no-container")),
    };
    for (k, v) in env {
        cmd.env(k, v);
    }
    Reply::parse("sneaky-run", cmd.output().expect("run"))
}

/// Without its own /proc (what Podman's masked /proc paths do) nothing runs by default: the
/// refusal names `proc`, and inside a container the engine option that gives it.
#[test]
fn without_its_own_proc_nothing_runs_and_the_refusal_names_the_engine_option() {
    if !namespaces_or_skip("without_its_own_proc_nothing_runs") {
        return;
    }
    let w = util::ws();
    let m = call(&w, "proc", None, &[]).err("io_error", 1);
    assert!(
        m.contains("proc (the outer /proc visible (skipped: SNEAKY_SANDBOX_SKIP=proc))")
            && m.contains("nothing ran")
            && !m.contains("inside this container"),
        "{m}"
    );
    assert!(!w.root.join("pwned").exists(), "{m}");
    let podman = marker_root(&w, "podman");
    let m = call(&w, "proc", Some(&podman), &[]).err("io_error", 1);
    assert!(
        m.contains("inside this container (podman (/run/.containerenv)): for proc, run it with `--security-opt unmask=/proc/*`")
            && m.contains("rootful only together with `--userns=auto`")
            && m.contains("container_boundary")
            && m.contains("nothing ran"),
        "{m}"
    );
    let docker = marker_root(&w, "docker");
    let m = call(&w, "proc", Some(&docker), &[]).err("io_error", 1);
    assert!(
        m.contains(
            "docker (/.dockerenv)): for proc, run it with `--security-opt systempaths=unconfined`"
        ),
        "{m}"
    );
    let lxc = marker_root(&w, "lxc");
    let m = call(&w, "proc", Some(&lxc), &[]).err("io_error", 1);
    assert!(
        m.contains("lxc (container=lxc in PID 1's environment)): for proc, run it with the engine's option that unmasks /proc"),
        "{m}"
    );
    let m = call(&w, "proc", None, &[("KUBERNETES_SERVICE_HOST", "10.0.0.1")]).err("io_error", 1);
    assert!(
        m.contains("kubernetes (KUBERNETES_SERVICE_HOST)): for proc, set `procMount: Unmasked`")
            && m.contains("`hostUsers: false`"),
        "{m}"
    );
    assert!(!w.root.join("pwned").exists());
}

/// Namespaces refused (a Docker-default-like seccomp profile refuses unshare): the refusal
/// names both layers the namespaces carry and the shipped seccomp profile.
#[test]
fn without_namespaces_in_a_container_the_refusal_names_the_seccomp_profile() {
    let w = util::ws();
    let docker = marker_root(&w, "docker");
    let m = call(&w, "namespaces", Some(&docker), &[]).err("io_error", 1);
    assert!(
        m.contains("namespaces (skipped: SNEAKY_SANDBOX_SKIP=namespaces)")
            && m.contains("proc (unavailable (no PID namespace))")
            && m.contains(
                "for namespaces, run it with `--security-opt seccomp=deploy/seccomp.json`"
            )
            && m.contains("for proc, run it with `--security-opt systempaths=unconfined`")
            && m.contains("nothing ran"),
        "{m}"
    );
    assert!(!w.root.join("pwned").exists(), "{m}");
}

/// `require_layers` without `proc` runs without it and says so; `proc` alone refuses;
/// `container_boundary` accepts the container and the result's `sandbox` names it.
#[test]
fn the_configuration_decides_about_the_own_proc_and_the_boundary() {
    if !namespaces_or_skip("the_configuration_decides_about_the_own_proc") {
        return;
    }
    let w = util::ws();
    let podman = marker_root(&w, "podman");
    user_config(
        &w,
        "[tools.shell]\nrequire_layers = [\"landlock\", \"namespaces\", \"seccomp\"]\n",
    );
    let reply = call(&w, "proc", Some(&podman), &[]);
    let r = reply.command_ran();
    assert_eq!(r["stdout"], "ran\n", "{r}");
    let sandbox = r["sandbox"].as_str().unwrap_or("");
    assert!(sandbox.contains("pid (host /proc visible)"), "{r}");
    assert!(!sandbox.contains("boundary"), "{r}");
    std::fs::remove_file(w.root.join("pwned")).expect("ran");
    user_config(&w, "[tools.shell]\nrequire_layers = [\"proc\"]\n");
    let m = call(&w, "proc", Some(&podman), &[]).err("io_error", 1);
    assert!(
        m.contains("required by tools.shell.require_layers") && m.contains("unmask=/proc/*"),
        "{m}"
    );
    user_config(&w, "[tools.shell]\ncontainer_boundary = true\n");
    let reply = call(&w, "proc", Some(&podman), &[]);
    let r = reply.command_ran();
    assert!(
        r["sandbox"].as_str().unwrap_or("").ends_with(
            "boundary: the container (tools.shell.container_boundary; podman (/run/.containerenv))"
        ),
        "{r}"
    );
    // The container, not every layer, is the boundary: the strict mode applies.
    assert!(
        r["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("programs: strict (tools.shell.container_boundary"),
        "{r}"
    );
    std::fs::remove_file(w.root.join("pwned")).expect("ran");
    let reply = call(&w, "proc", None, &[]);
    assert!(
        reply.command_ran()["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("no container marker found here"),
        "{}",
        reply.json
    );
    // With its own /proc (nothing skipped) the default runs, and says so.
    user_config(&w, "");
    let reply = call(&w, "", Some(&podman), &[]);
    assert!(
        reply.command_ran()["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("pid (own /proc)"),
        "{}",
        reply.json
    );
}

/// deploy/seccomp.json is Docker's default profile plus, unconditionally, the system calls
/// the namespace layer makes; everything Docker keeps behind a capability (or refuses) stays
/// so.
#[test]
fn the_shipped_seccomp_profile_allows_the_namespaces_and_nothing_more() {
    use serde_json::Value;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/seccomp.json");
    let text = std::fs::read_to_string(&path).expect("deploy/seccomp.json");
    let profile: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(profile["defaultAction"], "SCMP_ACT_ERRNO");
    let rules = profile["syscalls"].as_array().expect("syscalls");
    let unconditional = |rule: &Value| {
        rule["action"] == "SCMP_ACT_ALLOW"
            && rule["args"].as_array().is_none_or(Vec::is_empty)
            && rule
                .get("includes")
                .is_none_or(|i| i.as_object().is_none_or(|o| o.is_empty()))
            && rule
                .get("excludes")
                .is_none_or(|e| e.as_object().is_none_or(|o| o.is_empty()))
    };
    let names = |rule: &Value| -> Vec<String> {
        rule["names"]
            .as_array()
            .expect("names")
            .iter()
            .map(|n| n.as_str().expect("a name").to_string())
            .collect()
    };
    let allowed: Vec<String> = rules
        .iter()
        .filter(|r| unconditional(r))
        .flat_map(names)
        .collect();
    let added = ["mount", "mount_setattr", "setns", "umount2", "unshare"];
    for name in added {
        assert!(allowed.iter().any(|a| a == name), "{name} is not allowed");
        // Only there: no other rule of the profile conditions or refuses it.
        let rules_naming: Vec<&Value> = rules
            .iter()
            .filter(|r| names(r).iter().any(|n| n == name))
            .collect();
        assert_eq!(rules_naming.len(), 1, "{name}: {rules_naming:?}");
    }
    // What the sandbox does not need stays as Docker has it: behind a capability the
    // container does not hold, or refused.
    for name in [
        "bpf",
        "clone3",
        "fsopen",
        "fsmount",
        "move_mount",
        "open_tree",
        "pivot_root",
        "umount",
        "sethostname",
        "syslog",
        "perf_event_open",
        "kexec_load",
        "init_module",
        "open_by_handle_at",
        "keyctl",
        "userfaultfd",
        "reboot",
    ] {
        assert!(!allowed.iter().any(|a| a == name), "{name} allowed");
    }
    // Docker's conditional clone (no namespace flags without CAP_SYS_ADMIN) is kept: the
    // sandbox makes its namespaces with unshare.
    assert!(rules.iter().any(|r| names(r) == ["clone"]
        && r["args"][0]["op"] == "SCMP_CMP_MASKED_EQ"
        && r["args"][0]["value"] == 2_114_060_288u64));
    // Landlock's calls are in Docker's default already.
    for name in [
        "landlock_create_ruleset",
        "landlock_add_rule",
        "landlock_restrict_self",
        "seccomp",
    ] {
        assert!(allowed.iter().any(|a| a == name), "{name}");
    }
}

/// The reference image runs its server as a user other than root: the namespaces, the own
/// /proc and every other layer must hold for one (the launcher is non-dumpable, which makes
/// its /proc/self files root's; it maps its ids all the same).
#[test]
fn every_layer_holds_for_a_user_other_than_root() {
    use std::os::unix::process::CommandExt;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED every_layer_holds_for_a_user_other_than_root: needs root to become another user");
        return;
    }
    if !namespaces_or_skip("every_layer_holds_for_a_user_other_than_root") {
        return;
    }
    let w = util::ws();
    let (uid, gid) = (65_534, 65_534);
    let chown = Command::new("chown")
        .args(["-R", &format!("{uid}:{gid}")])
        .arg(w.dir.path())
        .status()
        .expect("chown");
    assert!(chown.success());
    // A copy the user can reach: the build's target/ may sit under a directory closed to
    // others (a 0700 home, a `mktemp -d` folder).
    let bins = util::copy_binaries_for_others(w.dir.path(), &["sneaky-run"]);
    let make = || {
        let mut cmd = Command::new(bins.join("sneaky-run"));
        cmd.current_dir(&w.root)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", w.dir.path())
            .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
            .env("XDG_STATE_HOME", w.dir.path().join("state"))
            .env("XDG_RUNTIME_DIR", w.dir.path().join("run"))
            .env("SNEAKY_CONTAINER_ROOT", w.outside().join("no-container"))
            .uid(uid)
            .gid(gid)
            .arg("--root")
            .arg(&w.root)
            .arg("echo ran; ls /proc | grep -c '^[0-9]'");
        cmd
    };
    let out = util::output_retrying_busy(make, b"", std::time::Duration::from_secs(60));
    let reply = Reply::parse("sneaky-run", out);
    let r = reply.command_ran();
    let sandbox = r["sandbox"].as_str().unwrap_or("");
    assert!(
        sandbox.contains("user + mount (read-only world)") && sandbox.contains("pid (own /proc)"),
        "{r}"
    );
    // The command's own processes only: bash, ls, grep (and nothing of the host's).
    let seen: u32 = r["stdout"]
        .as_str()
        .and_then(|s| s.lines().nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(u32::MAX);
    assert!(seen <= 4, "{r}");
}
