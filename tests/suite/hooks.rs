//! Hooks (docs/contract.md, "Hooks"): the user's PreToolUse and PostToolUse programs around
//! the tool binaries' calls, in Claude Code's protocol. They block (exit 2, `deny`), rewrite
//! (`updatedInput`) and annotate (`additionalContext` → `hook_context`); a hook that cannot
//! start, fails or runs too long blocks unless its entry fails open; a workspace's own
//! `sneaky.toml` never names hooks.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::util::{self, Ws};

/// An executable `/bin/sh` script outside the workspace; its path.
pub fn script(w: &Ws, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = w.outside().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write hook");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// `[[hooks.<event>]]` entries for the user's configuration.
pub fn entry(event: &str, matcher: &str, command: &str, extra: &str) -> String {
    format!(
        "[[hooks.{event}]]\nmatcher = {}\ncommand = {}\n{extra}\n",
        toml_str(matcher),
        toml_str(command)
    )
}

fn toml_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A binary's stdout and stderr with `--format text` and flags, in the workspace.
fn text_call(w: &Ws, bin: &str, args: &[&str]) -> String {
    use assert_cmd::cargo::CommandCargoExt;
    let mut cmd = std::process::Command::cargo_bin(bin).expect("binary");
    let out = util::fence(&mut cmd, w.outside())
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What the hook wrote to `file` (outside the workspace), as JSON lines.
pub fn recorded(w: &Ws, file: &str) -> Vec<Value> {
    std::fs::read_to_string(w.outside().join(file))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a recorded line is JSON"))
        .collect()
}

#[test]
fn exit_2_blocks_the_call_with_the_hooks_reason() {
    let w = util::ws();
    let hook = script(
        &w,
        "no-env.sh",
        "echo 'no writing secrets here' >&2\nexit 2",
    );
    w.user_config(&entry(
        "PreToolUse",
        "write_file|str_replace",
        hook.to_str().unwrap(),
        "",
    ));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": ".env", "content": "KEY=1\n"}),
    );
    let message = r.err("hook_denied", 3);
    assert!(message.contains("no writing secrets here"), "{message}");
    assert!(message.contains("no-env.sh"), "names the hook: {message}");
    assert!(!w.root.join(".env").exists(), "nothing ran");
    // A tool the matcher does not name is not held up.
    w.write("a.txt", "hello\n");
    assert_eq!(
        w.call("sneaky-read", json!({"file_path": "a.txt"})).ok()["content"],
        "hello\n"
    );
}

#[test]
fn a_deny_decision_blocks_and_allow_lets_through() {
    let w = util::ws();
    let hook = script(
        &w,
        "decide.sh",
        r#"input=$(cat)
case "$input" in
  *forbidden*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"that name is forbidden"}}' ;;
  *) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}' ;;
esac"#,
    );
    w.user_config(&entry("PreToolUse", "*", hook.to_str().unwrap(), ""));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "forbidden.txt", "content": "x"}),
    );
    let message = r.err("hook_denied", 3);
    assert!(message.contains("that name is forbidden"), "{message}");
    assert!(!w.root.join("forbidden.txt").exists());
    w.call(
        "sneaky-write",
        json!({"file_path": "fine.txt", "content": "x"}),
    )
    .ok();
    assert_eq!(w.read("fine.txt"), "x");
}

#[test]
fn updated_input_replaces_the_arguments() {
    let w = util::ws();
    // Whatever the call, the hook redirects the write to another file with its own content.
    let hook = script(
        &w,
        "rewrite.sh",
        r#"cat > /dev/null
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"file_path":"redirected.txt","content":"from the hook\n"}}}'"#,
    );
    w.user_config(&entry(
        "PreToolUse",
        "write_file",
        hook.to_str().unwrap(),
        "",
    ));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "asked.txt", "content": "from the model\n"}),
    );
    assert_eq!(r.ok()["path"], "redirected.txt");
    assert_eq!(w.read("redirected.txt"), "from the hook\n");
    assert!(!w.root.join("asked.txt").exists());
}

#[test]
fn the_hook_reads_claude_codes_fields_and_runs_in_the_root() {
    let w = util::ws();
    let log = w.outside().join("stdin.jsonl");
    let hook = script(
        &w,
        "record.sh",
        &format!(
            "cat >> {}\necho >> {}\npwd > {}",
            log.display(),
            log.display(),
            w.outside().join("cwd").display()
        ),
    );
    w.user_config(&entry("PreToolUse", "", hook.to_str().unwrap(), ""));
    w.write("a.txt", "hello\n");
    w.call("sneaky-read", json!({"file_path": "a.txt"})).ok();
    let seen = recorded(&w, "stdin.jsonl");
    assert_eq!(seen.len(), 1, "{seen:?}");
    let event = &seen[0];
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "read_file");
    assert_eq!(event["tool_input"], json!({"file_path": "a.txt"}));
    assert_eq!(
        event["cwd"],
        w.root.canonicalize().unwrap().to_str().unwrap()
    );
    assert!(event["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(event["tool_use_id"].as_str().is_some_and(|s| !s.is_empty()));
    let cwd = std::fs::read_to_string(w.outside().join("cwd")).unwrap();
    assert_eq!(cwd.trim(), w.root.canonicalize().unwrap().to_str().unwrap());
}

#[test]
fn post_tool_use_context_reaches_the_envelope() {
    let w = util::ws();
    let log = w.outside().join("post.jsonl");
    let hook = script(
        &w,
        "after.sh",
        &format!(
            r#"cat >> {}
echo >> {}
echo '{{"hookSpecificOutput":{{"hookEventName":"PostToolUse","additionalContext":"remember to run the tests"}}}}'"#,
            log.display(),
            log.display()
        ),
    );
    w.user_config(&entry(
        "PostToolUse",
        "write_file",
        hook.to_str().unwrap(),
        "",
    ));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x\n"}),
    );
    assert_eq!(r.ok()["path"], "a.txt");
    assert_eq!(r.json["hook_context"], "remember to run the tests");
    let seen = recorded(&w, "post.jsonl");
    assert_eq!(seen[0]["hook_event_name"], "PostToolUse");
    assert_eq!(seen[0]["tool_response"]["path"], "a.txt");
    assert_eq!(seen[0]["tool_response"]["created"], true);
    // With --format text, it is a note on stderr.
    let out = text_call(
        &w,
        "sneaky-write",
        &["b.txt", "--content", "y", "--format", "text"],
    );
    assert!(
        out.contains("sneaky-write: hook: remember to run the tests"),
        "{out}"
    );
}

#[test]
fn a_failing_post_hook_leaves_the_result_and_says_so() {
    let w = util::ws();
    let hook = script(&w, "broken.sh", "echo 'database is down' >&2\nexit 1");
    w.user_config(&entry("PostToolUse", "*", hook.to_str().unwrap(), ""));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "kept\n"}),
    );
    assert_eq!(r.ok()["bytes_written"], 5);
    assert_eq!(w.read("a.txt"), "kept\n");
    let said = r.json["hook_context"].as_str().unwrap_or_default();
    assert!(
        said.contains("broken.sh") && said.contains("failed") && said.contains("database is down"),
        "{said}"
    );
}

#[test]
fn a_hook_that_cannot_start_blocks_unless_it_fails_open() {
    let w = util::ws();
    let missing = w.outside().join("no-such-hook");
    let command = missing.to_str().unwrap();
    w.user_config(&entry("PreToolUse", "write_file", command, ""));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x"}),
    );
    let message = r.err("hook_denied", 3);
    assert!(
        message.contains("no-such-hook") && message.contains("cannot start"),
        "{message}"
    );
    assert!(!w.root.join("a.txt").exists());
    // Through a shell (exit 127) it is the same.
    let via_shell = format!("{command} --flag \"$HOME\"");
    w.user_config(&entry("PreToolUse", "write_file", &via_shell, ""));
    let message = w
        .call(
            "sneaky-write",
            json!({"file_path": "a.txt", "content": "x"}),
        )
        .err("hook_denied", 3);
    assert!(message.contains("exit 127"), "{message}");
    w.user_config(&entry(
        "PreToolUse",
        "write_file",
        command,
        "fail_open = true",
    ));
    w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x"}),
    )
    .ok();
    assert_eq!(w.read("a.txt"), "x");
}

#[test]
fn a_slow_hook_blocks_at_its_timeout_unless_it_fails_open() {
    let w = util::ws();
    let hook = script(&w, "slow.sh", "sleep 30");
    w.user_config(&entry(
        "PreToolUse",
        "",
        hook.to_str().unwrap(),
        "timeout = 1",
    ));
    let started = std::time::Instant::now();
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x"}),
    );
    let message = r.err("hook_denied", 3);
    assert!(
        message.contains("timeout") && message.contains("slow.sh"),
        "{message}"
    );
    util::took_at_most(
        started,
        std::time::Duration::from_secs(10),
        "a 1 s hook timeout",
    );
    assert!(!w.root.join("a.txt").exists());
    w.user_config(&entry(
        "PreToolUse",
        "",
        hook.to_str().unwrap(),
        "timeout = 1\nfail_open = true",
    ));
    w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x"}),
    )
    .ok();
    assert_eq!(w.read("a.txt"), "x");
}

#[test]
fn output_that_is_not_json_or_an_unknown_decision_blocks() {
    let w = util::ws();
    for (name, body, said) in [
        ("text.sh", "echo looks fine to me", "not JSON"),
        ("half.sh", "echo '{\"hookSpecificOutput\": '", "not JSON"),
        (
            "maybe.sh",
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"maybe"}}'"#,
            "maybe",
        ),
        ("crash.sh", "exit 1", "exit 1"),
    ] {
        let hook = script(&w, name, body);
        w.user_config(&entry("PreToolUse", "", hook.to_str().unwrap(), ""));
        let r = w.call(
            "sneaky-write",
            json!({"file_path": "a.txt", "content": "x"}),
        );
        let message = r.err("hook_denied", 3);
        assert!(
            message.contains(name) && message.contains(said),
            "{name}: {message}"
        );
        assert!(!w.root.join("a.txt").exists(), "{name}");
    }
}

#[test]
fn ask_blocks_where_nobody_is_asked() {
    let w = util::ws();
    let hook = script(
        &w,
        "ask.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a person should look at this"}}'"#,
    );
    w.user_config(&entry("PreToolUse", "", hook.to_str().unwrap(), ""));
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x"}),
    );
    let message = r.err("hook_denied", 3);
    assert!(
        message.contains("a person should look at this"),
        "{message}"
    );
    assert!(!w.root.join("a.txt").exists());
}

#[test]
fn a_workspace_never_names_hooks() {
    let w = util::ws();
    let marker = w.outside().join("workspace-hook-ran");
    let hook = script(
        &w,
        "planted.sh",
        &format!("touch {}\nexit 2", marker.display()),
    );
    // Even a workspace the user trusts (which may loosen everything else) names no hooks.
    w.user_config(&format!(
        "trusted_workspaces = [{}]\n",
        toml_str(w.root.to_str().unwrap())
    ));
    w.write(
        "sneaky.toml",
        &entry("PreToolUse", "", hook.to_str().unwrap(), ""),
    );
    w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "x"}),
    )
    .ok();
    w.call("sneaky-read", json!({"file_path": "a.txt"})).ok();
    assert!(!marker.exists(), "the workspace's hook ran");
    // The user's own hooks still run beside such a file.
    let user_hook = script(&w, "user.sh", "echo 'the user says no' >&2\nexit 2");
    w.user_config(&entry("PreToolUse", "", user_hook.to_str().unwrap(), ""));
    let message = w
        .call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("hook_denied", 3);
    assert!(message.contains("the user says no"), "{message}");
    assert!(!marker.exists());
}

#[test]
fn a_run_command_call_meets_its_hooks_once() {
    let w = util::ws();
    let log = w.outside().join("calls.jsonl");
    let hook = script(
        &w,
        "count.sh",
        &format!("cat >> {}\necho >> {}", log.display(), log.display()),
    );
    w.user_config(&format!(
        "{}{}",
        entry("PreToolUse", "run_command", hook.to_str().unwrap(), ""),
        entry("PostToolUse", "run_command", hook.to_str().unwrap(), "")
    ));
    let r = w.call("sneaky-run", json!({"command": "echo hi"}));
    if r.json["ok"] == false
        && r.json["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("layer"))
    {
        util::skip("run_command needs the sandbox layers");
        return;
    }
    assert_eq!(r.command_ran()["stdout"], "hi\n");
    let seen = recorded(&w, "calls.jsonl");
    let events: Vec<&str> = seen
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["PreToolUse", "PostToolUse"]);
    assert_eq!(seen[1]["tool_response"]["stdout"], "hi\n");
}

#[test]
fn a_broken_hooks_table_is_a_configuration_error() {
    let w = util::ws();
    w.user_config("[[hooks.PreToolUse]]\nmatcher = \"(unclosed\"\ncommand = \"true\"\n");
    let message = w
        .call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("config_error", 2);
    assert!(
        message.contains("hooks.PreToolUse[0]: matcher"),
        "{message}"
    );
    w.user_config("[[hooks.PreToolUse]]\ncomand = \"true\"\n");
    let message = w
        .call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("config_error", 2);
    assert!(message.contains("unknown field `comand`"), "{message}");
}
