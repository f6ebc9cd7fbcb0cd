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
    // sneaky-agent says that the workspace's hooks are ignored.
    w.user_config("");
    let (_, r) = agent_run(&w, &[], &[]);
    assert!(
        r.stderr.contains("names [hooks]") && r.stderr.contains("ignored"),
        "{}",
        r.stderr
    );
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

/// tests/hooks/claude_code_guard.py: a hook written for Claude Code, run unchanged.
pub fn claude_guard() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hooks/claude_code_guard.py")
}

/// The user's configuration running the Claude Code hook with `names = "claude"` on Bash,
/// Write and Edit, before and after, logging what it reads to `log`.
pub fn claude_config(log: &std::path::Path) -> String {
    let command = format!("HOOK_LOG={} {}", log.display(), claude_guard().display());
    format!(
        "{}{}",
        entry(
            "PreToolUse",
            "Bash|Write|Edit",
            &command,
            "names = \"claude\""
        ),
        entry("PostToolUse", "Write|Edit", &command, "names = \"claude\"")
    )
}

#[test]
fn a_claude_code_hook_blocks_rewrites_and_annotates_unchanged() {
    if !util::require_cmd("python3") {
        return;
    }
    let w = util::ws();
    let log = w.outside().join("claude.jsonl");
    w.user_config(&claude_config(&log));
    let root = w.root.canonicalize().unwrap();

    // Write: a protected file is denied by permissionDecision.
    let r = w.call(
        "sneaky-write",
        json!({"file_path": ".env", "content": "KEY=1\n"}),
    );
    let message = r.err("hook_denied", 3);
    assert!(message.contains(".env is a protected file"), "{message}");
    assert!(!w.root.join(".env").exists());
    // The hook saw Claude Code's Write with an absolute file_path.
    let seen = recorded(&w, "claude.jsonl");
    assert_eq!(seen[0]["tool_name"], "Write");
    assert_eq!(
        seen[0]["tool_input"],
        json!({"file_path": root.join(".env").to_str().unwrap(), "content": "KEY=1\n"})
    );

    // Write: updatedInput in Claude Code's fields is read back (the header is written).
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "tool.py", "content": "print(1)\n"}),
    );
    assert_eq!(r.ok()["path"], "tool.py");
    assert_eq!(
        w.read("tool.py"),
        "# Checked by the team's hook.\nprint(1)\n"
    );
    // PostToolUse: its additionalContext comes back.
    let said = r.json["hook_context"].as_str().unwrap_or_default();
    assert!(said.contains("Remember to run the tests for"), "{said}");
    assert!(
        said.contains(root.join("tool.py").to_str().unwrap()),
        "{said}"
    );

    // Edit: old_string / new_string, and the call goes through.
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "tool.py", "old_str": "print(1)", "new_str": "print(2)"}),
    );
    r.ok();
    let edit = recorded(&w, "claude.jsonl")
        .into_iter()
        .find(|e| e["tool_name"] == "Edit")
        .expect("the hook saw the Edit");
    assert_eq!(edit["tool_input"]["old_string"], "print(1)");
    assert_eq!(edit["tool_input"]["new_string"], "print(2)");
    assert!(w.read("tool.py").ends_with("print(2)\n"));

    // Bash: exit 2 with the reason on stderr blocks the command.
    let r = w.call("sneaky-run", json!({"command": "grep -r TODO ."}));
    let message = r.err("hook_denied", 3);
    assert!(
        message.contains("Use 'rg' (ripgrep) instead of 'grep'"),
        "{message}"
    );
    let bash = recorded(&w, "claude.jsonl")
        .into_iter()
        .find(|e| e["tool_name"] == "Bash")
        .expect("the hook saw the Bash call");
    assert_eq!(bash["tool_input"], json!({"command": "grep -r TODO ."}));
}

/// Over MCP, through the official TypeScript client (tests/mcp/ts_hooks_test.cjs): the Claude
/// Code hook blocks, rewrites and annotates; `ask` blocks; and a run_command call meets its
/// hook once, though sneaky-mcp runs it in sneaky-run.
#[test]
fn over_mcp_hooks_hold_once_per_call() {
    if !util::require_cmd("python3") {
        return;
    }
    let Some(node_modules) = crate::mcp_client::node_modules() else {
        return;
    };
    let w = util::ws();
    let log = w.outside().join("claude.jsonl");
    let ask = script(
        &w,
        "ask.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a person should see this read"}}'"#,
    );
    w.user_config(&format!(
        "{}{}",
        claude_config(&log),
        entry("PreToolUse", "read_file", ask.to_str().unwrap(), "")
    ));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/ts_hooks_test.cjs");
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
        .arg(&w.root)
        .arg(w.outside().join("xdg"))
        .arg(w.outside().join("state"))
        .env("NODE_PATH", &node_modules)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all TypeScript hook checks passed"),
        "the TypeScript client failed:\n{stdout}\n{stderr}"
    );
    let runs: Vec<Value> = recorded(&w, "claude.jsonl")
        .into_iter()
        .filter(|e| e["tool_input"]["command"] == "echo once")
        .collect();
    let events: Vec<&str> = runs
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(events, ["PreToolUse"], "once per call: {runs:?}");
}

/// sneaky-agent against a scripted model: `calls` in one reply (id, name, arguments), then
/// finish; the results the model was sent, by call id, and how the run ended.
fn agent_run(
    w: &Ws,
    calls: &[(&str, &str, Value)],
    extra: &[&str],
) -> (Vec<(String, String)>, agent::Ran) {
    let texts: Vec<(String, String, String)> = calls
        .iter()
        .map(|(id, name, args)| (id.to_string(), name.to_string(), args.to_string()))
        .collect();
    let refs: Vec<(&str, &str, &str)> = texts
        .iter()
        .map(|(i, n, a)| (i.as_str(), n.as_str(), a.as_str()))
        .collect();
    let finish = agent::finish_call("f", "done");
    let server = agent::serve(vec![
        agent::openai_reply(None, &refs),
        agent::openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let mut args = extra.to_vec();
    args.push("do it");
    let r = agent::run_openai(w, &server.base, &args);
    let requests = server.requests();
    let results = requests
        .get(1)
        .map(agent::openai_results)
        .unwrap_or_default();
    (results, r)
}

fn result_of<'a>(results: &'a [(String, String)], id: &str) -> &'a str {
    &results
        .iter()
        .find(|(i, _)| i == id)
        .expect("a result for the call")
        .1
}

use crate::agent;

#[test]
fn in_sneaky_agent_hooks_decide_before_the_person() {
    let w = util::ws();
    w.write("b.txt", "auto tier\n").write("c.txt", "keep me\n");
    let hook = script(
        &w,
        "decide.sh",
        r#"input=$(cat)
case "$input" in
  *'"tool_name":"write_file"'*) printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"file_path":"a.txt","content":"from the hook\n"}}}' ;;
  *'"tool_name":"read_file"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"reads need a look"}}' ;;
  *'"tool_name":"delete_file"'*) echo 'never delete' >&2; exit 2 ;;
esac"#,
    );
    let after = script(
        &w,
        "after.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post says hi"}}'"#,
    );
    w.user_config(&format!(
        "{}{}",
        entry("PreToolUse", "", hook.to_str().unwrap(), ""),
        entry("PostToolUse", "write_file", after.to_str().unwrap(), "")
    ));
    let calls = [
        (
            "w",
            "write_file",
            json!({"file_path": "a.txt", "content": "from the model\n"}),
        ),
        ("r", "read_file", json!({"file_path": "b.txt"})),
        ("d", "delete_file", json!({"file_path": "c.txt"})),
    ];
    // No terminal and no --yes: write_file (confirm tier) would be refused; the hook's allow
    // runs it, as the hook left it, and the model reads the PostToolUse context after it.
    let (results, r) = agent_run(&w, &calls, &[]);
    assert_eq!(w.read("a.txt"), "from the hook\n", "{}", r.stderr);
    let written = result_of(&results, "w");
    assert!(written.contains("hook_context: post says hi"), "{written}");
    // read_file is auto tier, but the hook asks: with nobody to ask, it is not run.
    let read = result_of(&results, "r");
    assert_eq!(agent::code(read), "not_approved", "{read}");
    // delete_file: exit 2 blocks it.
    let deleted = result_of(&results, "d");
    assert_eq!(agent::code(deleted), "hook_denied", "{deleted}");
    assert!(deleted.contains("never delete"), "{deleted}");
    assert_eq!(w.read("c.txt"), "keep me\n");
    // `ask` asks even with --yes.
    let (results, _) = agent_run(&w, &calls[1..2], &["--yes"]);
    assert_eq!(agent::code(result_of(&results, "r")), "not_approved");
}

#[test]
fn in_sneaky_agent_a_claude_code_hook_runs_unchanged() {
    if !util::require_cmd("python3") {
        return;
    }
    let w = util::ws();
    let log = w.outside().join("claude.jsonl");
    w.user_config(&claude_config(&log));
    let calls = [
        (
            "w",
            "write_file",
            json!({"file_path": "tool.py", "content": "print(1)\n"}),
        ),
        (
            "e",
            "write_file",
            json!({"file_path": ".env", "content": "KEY=1\n"}),
        ),
        ("g", "run_command", json!({"command": "grep -r TODO ."})),
    ];
    let (results, r) = agent_run(&w, &calls, &["--yes"]);
    assert_eq!(
        w.read("tool.py"),
        "# Checked by the team's hook.\nprint(1)\n",
        "{}",
        r.stderr
    );
    assert!(result_of(&results, "w").contains("hook_context: Remember to run the tests for"));
    let env = result_of(&results, "e");
    assert!(
        agent::code(env) == "hook_denied" && env.contains(".env is a protected file"),
        "{env}"
    );
    assert!(!w.root.join(".env").exists());
    let grep = result_of(&results, "g");
    assert!(
        agent::code(grep) == "hook_denied" && grep.contains("Use 'rg'"),
        "{grep}"
    );
}

#[test]
fn a_stop_hook_keeps_sneaky_agent_working_a_bounded_number_of_times() {
    let w = util::ws();
    let count = w.outside().join("stops");
    // Blocks the first finish only.
    let once = script(
        &w,
        "once.sh",
        &format!(
            r#"cat > /dev/null
if [ ! -e {c} ]; then touch {c}; echo '{{"decision":"block","reason":"the tests have not run"}}'; fi"#,
            c = count.display()
        ),
    );
    w.user_config(&entry("Stop", "", once.to_str().unwrap(), ""));
    let first = agent::finish_call("f1", "done too early");
    let second = agent::finish_call("f2", "done for real");
    let server = agent::serve(vec![
        agent::openai_reply(None, &[(&first.0, &first.1, &first.2)]),
        agent::openai_reply(None, &[(&second.0, &second.1, &second.2)]),
    ]);
    let r = agent::run_openai(&w, &server.base, &["do it"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "done for real");
    let results = agent::openai_results(&server.requests()[1]);
    assert!(
        result_of(&results, "f1").contains("the tests have not run"),
        "{results:?}"
    );

    // A hook that always blocks is obeyed three times, then the finish stands.
    let always = script(
        &w,
        "always.sh",
        r#"cat > /dev/null; echo '{"decision":"block","reason":"not yet"}'"#,
    );
    w.user_config(&entry("Stop", "", always.to_str().unwrap(), ""));
    let finishes: Vec<(String, String, String)> = (1..=4)
        .map(|i| agent::finish_call(&format!("f{i}"), &format!("attempt {i}")))
        .collect();
    let server = agent::serve(
        finishes
            .iter()
            .map(|f| agent::openai_reply(None, &[(&f.0, &f.1, &f.2)]))
            .collect(),
    );
    let r = agent::run_openai(&w, &server.base, &["do it"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "attempt 4");
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn sneaky_agent_pipe_names_each_call_to_its_hooks() {
    let w = util::ws();
    w.write("a.txt", "alpha\n");
    let log = w.outside().join("pipe.jsonl");
    let hook = script(
        &w,
        "record.sh",
        &format!("cat >> {l}\necho >> {l}", l = log.display()),
    );
    w.user_config(&format!(
        "{}{}",
        entry("PreToolUse", "", hook.to_str().unwrap(), ""),
        entry("PostToolUse", "", hook.to_str().unwrap(), "")
    ));
    let lines = [
        json!({"id": "call_1", "type": "function",
               "function": {"name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}"}}),
        json!({"name": "read_file", "arguments": {"file_path": "a.txt"}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let r = agent::ran(agent::run(
        agent::agent_command(&w, &["pipe"]),
        input.as_bytes(),
    ));
    assert_eq!(r.status, 0, "{}", r.stderr);
    let seen = recorded(&w, "pipe.jsonl");
    let ids: Vec<&str> = seen
        .iter()
        .map(|e| e["tool_use_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids.len(), 4, "{seen:?}");
    // Before and after of one call share its id: the line's own, else one of the run's.
    assert_eq!(ids[0], "call_1");
    assert_eq!(ids[1], "call_1");
    assert!(
        !ids[2].is_empty() && ids[2] == ids[3] && ids[2] != "call_1",
        "{ids:?}"
    );
    assert!(seen
        .iter()
        .all(|e| e["session_id"] == seen[0]["session_id"]));
}

/// Through a real terminal: the person is shown, and approves, the call as the hook left it;
/// a hook's `ask` puts the question even for an auto-tier read.
#[test]
fn the_person_approves_the_call_as_the_hooks_left_it() {
    if !util::require_cmd("script") {
        return;
    }
    let w = util::ws();
    w.write("a.txt", "old line\n").write("b.txt", "bee\n");
    let hook = script(
        &w,
        "edit-and-ask.sh",
        r#"input=$(cat)
case "$input" in
  *'"tool_name":"write_file"'*) printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"file_path":"a.txt","content":"hook line\n"}}}' ;;
  *'"tool_name":"read_file"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"reads need a look"}}' ;;
esac"#,
    );
    w.user_config(&entry("PreToolUse", "", hook.to_str().unwrap(), ""));
    let write = json!({"file_path": "a.txt", "content": "model line\n"}).to_string();
    let read = json!({"file_path": "b.txt"}).to_string();
    let finish = agent::finish_call("f", "done");
    let server = agent::serve(vec![
        agent::openai_reply(None, &[("w1", "write_file", &write)]),
        agent::openai_reply(None, &[("r1", "read_file", &read)]),
        agent::openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let (status, screen) = crate::agent_tty::run_in_pty_raw(&w, &server.base, "y\ny\n", false);
    let screen = screen.replace("\r\n", "\n");
    assert_eq!(status, 0, "{screen}");
    // What was shown for approval (below the model's own call line) and approved is the
    // hook's content, and it is what was written.
    let (_, asked) = screen
        .split_once("write_file wants to run")
        .expect("the write was asked about");
    assert!(asked.contains("+hook line"), "{screen}");
    assert!(!asked.contains("model line"), "{screen}");
    assert_eq!(w.read("a.txt"), "hook line\n");
    // read_file is auto tier: asked only because the hook asks, with its reason.
    assert!(screen.contains("Allow read_file?"), "{screen}");
    assert!(
        screen.contains("A hook asks for your approval: reads need a look"),
        "{screen}"
    );
    let results = agent::openai_results(&server.requests()[2]);
    let read = result_of(&results, "r1");
    assert!(read.contains("bee"), "{read}");
}
