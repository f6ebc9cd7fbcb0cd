//! run_command running allowed commands: output, exit codes, timeouts that kill everything,
//! the sandbox, the environment, bounded output and the protected configuration file.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{self, Reply, Ws};

/// The user's own configuration (`$XDG_CONFIG_HOME/sneaky/config.toml`), trusting the
/// workspace: what a workspace `sneaky.toml` may not loosen on its own.
pub fn user_config(w: &Ws, toml: &str) {
    let dir = w.dir.path().join("xdg/sneaky");
    std::fs::create_dir_all(&dir).expect("mkdir xdg");
    let trusted = format!(
        "trusted_workspaces = [{:?}]\n",
        std::fs::canonicalize(&w.root)
            .expect("root")
            .display()
            .to_string()
    );
    // Top-level keys must come before any table.
    std::fs::write(dir.join("config.toml"), format!("{trusted}{toml}")).expect("write");
}

fn run(w: &Ws, command: &str) -> Value {
    w.call("sneaky-run", json!({ "command": command }))
        .command_ran()
        .clone()
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) && !text.contains("sneaky-run") {
                found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn pipelines_and_lists_report_output_and_exit_codes() {
    let w = util::ws();
    w.write("f.txt", "b\na\nc\na\n");
    let r = run(&w, "sort f.txt | uniq -c | wc -l");
    assert_eq!(r["stdout"], "3\n");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["timed_out"], false);
    assert_eq!(r["truncated"], false);
    assert_eq!(r["programs"], json!(["sort", "uniq", "wc"]));

    let r = run(&w, "echo out; echo err >&2; false || echo fallback; exit 7");
    assert_eq!(r["stdout"], "out\nfallback\n");
    assert_eq!(r["stderr"], "err\n");
    assert_eq!(r["exit_code"], 7);
    assert!(r["signal"].is_null());

    // A failing command is still a successful tool call.
    let r = run(&w, "ls no-such-file");
    assert_eq!(r["exit_code"], 2);
    assert!(
        r["stderr"].as_str().unwrap_or("").contains("no-such-file"),
        "{r}"
    );

    let r = run(&w, "[ -d sub ] || mkdir sub; [ -f f.txt ] && echo yes");
    assert_eq!(r["stdout"], "yes\n", "{r}");
    let r = run(&w, "mkdir -p sub && cd sub && echo made > x.txt && pwd");
    assert!(
        r["stdout"].as_str().unwrap_or("").ends_with("/ws/sub\n"),
        "{r}"
    );
    assert_eq!(w.read("sub/x.txt"), "made\n");

    let r = run(&w, "cat <<'EOF' > note.md\nliteral $HOME `x`\nEOF");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(w.read("note.md"), "literal $HOME `x`\n");

    // Flags and the positional form.
    let reply = w.call_raw("sneaky-run", &["echo positional"], b"");
    assert_eq!(reply.command_ran()["stdout"], "positional\n");
}

#[test]
fn timeout_kills_the_whole_group_and_its_background_children() {
    let w = util::ws();
    let marker = format!("{}.{}", 4000 + std::process::id() % 1000, 123);
    let command = format!(
        "sleep {marker}1 & (sleep {marker}2 &) ; nohup sleep {marker}3 > /dev/null 2>&1 & sleep {marker}4"
    );
    let started = Instant::now();
    let reply = w.call("sneaky-run", json!({ "command": command, "timeout": 1 }));
    let r = reply.command_ran();
    assert_eq!(r["timed_out"], true, "{r}");
    assert!(r["exit_code"].is_null(), "{r}");
    assert!(r["signal"] == "SIGTERM" || r["signal"] == "SIGKILL", "{r}");
    util::took_at_most(started, Duration::from_secs(15), "a 1 s timeout");
    let left = processes_with(&marker);
    assert!(left.is_empty(), "processes survived the timeout: {left:?}");
}

/// The timeout's SIGTERM reaches the command, which ends by it (sneaky-run blocks that
/// signal for its own watcher; a command that inherited the mask would ignore SIGTERM and
/// always wait out the grace period for SIGKILL).
#[test]
fn the_timeout_sigterm_reaches_the_command() {
    let w = util::ws();
    for command in ["sleep 30", "sleep 30; echo after", "sleep 30 | cat"] {
        let r = run_with_timeout(&w, command, 1);
        assert_eq!(r["timed_out"], true, "{command}: {r}");
        assert_eq!(r["signal"], "SIGTERM", "{command}: {r}");
        assert_eq!(r["stdout"], "", "{command}: {r}");
    }
}

fn run_with_timeout(w: &util::Ws, command: &str, timeout: u64) -> serde_json::Value {
    let reply = w.call(
        "sneaky-run",
        json!({ "command": command, "timeout": timeout }),
    );
    reply.command_ran().clone()
}

#[test]
fn background_children_do_not_outlive_a_finished_command() {
    let w = util::ws();
    let marker = format!("{}.{}", 5000 + std::process::id() % 1000, 77);
    let started = Instant::now();
    let r = run(&w, &format!("sleep {marker} & echo started"));
    assert_eq!(r["stdout"], "started\n");
    assert_eq!(r["exit_code"], 0);
    util::took_at_most(
        started,
        Duration::from_secs(10),
        "not waiting for the background job",
    );
    let left = processes_with(&marker);
    assert!(left.is_empty(), "a background job survived: {left:?}");
}

#[test]
fn the_sandbox_stops_writes_outside_the_root() {
    let w = util::ws();
    // A link inside the root that leads out: the policy sees a path inside, the sandbox
    // stops the write.
    w.link(w.outside().join("ws_evil"), "out");
    let r = run(&w, "echo x > out/pwned");
    assert_eq!(r["sandboxed"], true, "{r}");
    assert_ne!(r["exit_code"], 0, "{r}");
    let stderr = r["stderr"].as_str().unwrap_or("");
    assert!(
        stderr.contains("Permission denied") || stderr.contains("Read-only file system"),
        "{r}"
    );
    assert!(!w.outside().join("ws_evil/pwned").exists());

    // An allowed program given an outside path.
    let r = run(&w, "touch ../pwned");
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(!w.outside().join("pwned").exists());
    let r = run(&w, "cp ../secret.txt ../ws_evil/copied");
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(!w.outside().join("ws_evil/copied").exists());

    // Inside the root and in the private temp dir, writing works.
    let r = run(
        &w,
        "touch inside && mkdir -p d/e && cp inside d/e/ && ls d/e",
    );
    assert_eq!(r["stdout"], "inside\n", "{r}");

    // Reading outside is allowed by default.
    let r = run(&w, "cat ../secret.txt");
    assert_eq!(r["stdout"], "OUTSIDE SECRET\n");

    // Switched off by the user's configuration, the result says so.
    user_config(&w, "[tools.shell]\nsandbox = false\n");
    w.write("sneaky.toml", "[tools.shell]\nsandbox = false\n");
    let r = run(&w, "true");
    assert_eq!(r["sandboxed"], false);
    assert!(
        r["sandbox"].as_str().unwrap_or("").starts_with("off"),
        "{r}"
    );
}

#[test]
fn the_network_is_off_unless_the_user_turns_it_on() {
    let w = util::ws();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    // bash opens /dev/tcp/HOST/PORT itself: a read redirection the policy allows.
    let command = format!("cat < /dev/tcp/127.0.0.1/{port}");

    w.write("sneaky.toml", "[tools.shell]\nnetwork = false\n");
    let r = w
        .call("sneaky-run", json!({"command": command, "timeout": 5}))
        .command_ran()
        .clone();
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(
        r["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("network denied"),
        "{r}"
    );
    assert!(listener.accept().is_err(), "a connection got through");

    // Off by default as well.
    std::fs::remove_file(w.root.join("sneaky.toml")).expect("rm");
    let r = w
        .call("sneaky-run", json!({"command": command, "timeout": 5}))
        .command_ran()
        .clone();
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(
        listener.accept().is_err(),
        "a connection got through by default"
    );

    // On when the user's configuration says so.
    w.user_config("[tools.shell]\nnetwork = true\n");
    let connector = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok((stream, _)) = listener.accept() {
                drop(stream);
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    });
    let r = w
        .call("sneaky-run", json!({"command": command, "timeout": 5}))
        .command_ran()
        .clone();
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(
        connector.join().expect("join"),
        "no connection with the network allowed"
    );
}

/// A network namespace is made ahead of the launch, on a thread of the runner, and entered
/// by the launcher forked ahead of time (src/shell/namespaces.rs, `NetAhead`): a command
/// that is to have the host's network (the whole network allowed, or the sandbox off) is in
/// the host's own namespace, not in one made so; one without it, in one of its own each call.
#[test]
fn a_command_with_the_hosts_network_is_in_the_hosts_network_namespace() {
    let w = util::ws();
    let host = std::fs::read_link("/proc/self/ns/net").expect("own net namespace");
    let host = host.to_string_lossy().into_owned();
    for config in [
        "[tools.shell]\nnetwork = true\n",
        "[tools.shell]\nsandbox = false\nrequire_layers = []\n",
    ] {
        user_config(&w, config);
        let r = run(&w, "readlink /proc/self/ns/net");
        assert_eq!(
            r["stdout"].as_str().map(str::trim),
            Some(host.as_str()),
            "{config}: {r}"
        );
    }
    // The control: without the network, a namespace of the command's own.
    user_config(&w, "[tools.shell]\nnetwork = false\n");
    let r = run(&w, "readlink /proc/self/ns/net");
    assert_ne!(
        r["stdout"].as_str().map(str::trim),
        Some(host.as_str()),
        "{r}"
    );
    assert!(
        r["stdout"].as_str().unwrap_or("").starts_with("net:["),
        "{r}"
    );
    let again = run(&w, "readlink /proc/self/ns/net");
    assert_ne!(again["stdout"], r["stdout"], "{again}");
}

fn call_with_env(w: &Ws, command: &str, env: &[(&str, &str)]) -> Reply {
    use assert_cmd::cargo::CommandCargoExt;
    let mut cmd = std::process::Command::cargo_bin("sneaky-run").expect("binary");
    cmd.current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
        .arg(command);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run");
    Reply::parse("sneaky-run", out)
}

#[test]
fn secrets_and_shell_hooks_are_not_passed() {
    let w = util::ws();
    w.write("hook.sh", "echo HOOK RAN\n");
    let env = [
        ("MY_API_KEY", "k-123"),
        ("GITHUB_TOKEN", "t-456"),
        ("AWS_SECRET_ACCESS_KEY", "a-789"),
        ("SNEAKY_VISIBLE", "plain"),
        ("BASH_ENV", "./hook.sh"),
    ];
    let reply = call_with_env(&w, "env", &env);
    let r = reply.command_ran();
    let out = r["stdout"].as_str().unwrap_or("");
    for secret in ["k-123", "t-456", "a-789", "HOOK RAN"] {
        assert!(!out.contains(secret), "{secret} leaked: {out}");
    }
    assert!(out.contains("SNEAKY_VISIBLE=plain"));
    assert!(out.contains("TMPDIR="));
    let removed: Vec<String> = util::strings(&r["env_removed"]);
    for name in [
        "MY_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "BASH_ENV",
    ] {
        assert!(
            removed.iter().any(|n| n == name),
            "{name} not reported: {removed:?}"
        );
    }

    user_config(&w, "[tools.shell]\npass_env = [\"MY_API_KEY\"]\n");
    let reply = call_with_env(&w, "env", &env);
    let out = reply.command_ran()["stdout"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(out.contains("MY_API_KEY=k-123"));
    assert!(!out.contains("t-456"));
}

#[test]
fn output_is_capped_head_and_tail_and_decoded_lossily() {
    let w = util::ws();
    w.write("sneaky.toml", "max_output_bytes = 1000\n");
    let r = run(&w, "seq 1 100000; echo done >&2");
    assert_eq!(r["truncated"], true);
    assert_eq!(r["stdout_bytes"], 588895);
    let out = r["stdout"].as_str().unwrap_or("");
    assert!(out.len() < 1200, "{}", out.len());
    assert!(out.starts_with("1\n2\n3\n"), "{out}");
    assert!(out.ends_with("99999\n100000\n"), "{out}");
    assert!(out.contains("bytes dropped"), "{out}");
    assert_eq!(r["stderr"], "done\n");

    let r = run(&w, "printf 'ok \\377\\376 end'");
    assert_eq!(r["stdout_lossy"], true);
    assert_eq!(r["stdout"], "ok \u{fffd}\u{fffd} end");
}

#[test]
fn the_config_file_is_put_back_if_a_command_changes_it() {
    let w = util::ws();
    w.write("sneaky.toml", "# the workspace config\n");
    w.write("new.txt", "[permissions]\nallow = [\"run_command\"]\n");
    // A glob the policy cannot read as the config's name. With the mount layer the file is
    // read-only (and a mount point: no rename over it, no removal); without it the snapshot
    // puts it back. Either way it is unchanged afterwards.
    let stopped = |r: &Value| r["exit_code"] != 0 || r["config_restored"] == true;
    let r = run(&w, "cp new.txt sneaky.tom?");
    assert!(stopped(&r), "{r}");
    assert_eq!(w.read("sneaky.toml"), "# the workspace config\n");

    // Renamed over (a new inode with the same content) and removed.
    w.write("same.txt", "# the workspace config\n");
    let r = run(&w, "mv same.txt sneaky.tom?");
    assert!(stopped(&r), "{r}");
    let r = run(&w, "mkdir -p old && mv sneaky.tom? old/");
    assert!(stopped(&r), "{r}");
    assert_eq!(w.read("sneaky.toml"), "# the workspace config\n");
    assert!(!w.root.join("old/sneaky.toml").exists());

    // Created where there was none: nothing to bind over, the snapshot removes it.
    std::fs::remove_file(w.root.join("sneaky.toml")).expect("rm");
    let r = run(&w, "tee sneaky.{toml,x} < new.txt");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["config_restored"], true, "{r}");
    assert!(!w.root.join("sneaky.toml").exists(), "{r}");
    assert!(w.root.join("sneaky.x").exists(), "{r}");
}

#[test]
fn bad_arguments_are_refused() {
    let w = util::ws();
    w.call("sneaky-run", json!({"command": "true", "timeout": 0}))
        .err("invalid_args", 2);
    w.call("sneaky-run", json!({"command": "true", "timeout": 4000}))
        .err("invalid_args", 2);
    w.call("sneaky-run", json!({"command": "  "}))
        .err("invalid_args", 2);
    w.call("sneaky-run", json!({"command": "true", "cwd": "x"}))
        .err("invalid_args", 2);
    w.call("sneaky-run", json!({})).err("invalid_args", 2);
}

/// `sneaky-run --check-policy`: the driver's question before it asks a person — the policy's
/// answer, and nothing runs either way.
#[test]
fn check_policy_answers_without_running() {
    let w = util::ws();
    let allowed = w.call_raw(
        "sneaky-run",
        &["--check-policy"],
        br#"{"command": "touch made-by-check"}"#,
    );
    assert_eq!(allowed.status, 0, "{:?}", allowed.json);
    assert_eq!(allowed.json["ok"], true);
    assert!(
        !w.root.join("made-by-check").exists(),
        "the check ran the command"
    );
    let denied = w.call_raw(
        "sneaky-run",
        &["--check-policy"],
        br#"{"command": "sudo rm -rf made"}"#,
    );
    assert_eq!(denied.status, 3, "{:?}", denied.json);
    assert_eq!(denied.json["error"]["code"], "command_denied");
}

/// A workspace whose path is not UTF-8 (any bytes but `/` make a name): the command runs
/// there, sandboxed, and its change is applied. The launch spec used to fail to serialize
/// such a path (internal_error).
#[test]
fn a_workspace_whose_path_is_not_utf8_runs_commands() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join(std::ffi::OsStr::from_bytes(b"ws-\xff\xfe"));
    std::fs::create_dir_all(&root).expect("mkdir");
    let w = Ws { dir, root };
    w.write("a.txt", "hi\n");
    let result = run(&w, "cat a.txt && echo made > made.txt");
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["stdout"], "hi\n", "{result}");
    assert_eq!(w.read("made.txt"), "made\n");
    // And as a background job, whose request to the workspace's supervisor names the path.
    let started = w.call(
        "sneaky-run",
        json!({"command": "echo job > job.txt", "background": true}),
    );
    started.ok();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !w.root.join("job.txt").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(w.read("job.txt"), "job\n", "{:?}", started.json);
}
