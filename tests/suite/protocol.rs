//! The process protocol: one envelope, exit statuses, validation that names the field, flags,
//! --schema/--help/--version, stdin bounds, config discovery, the deny list, closed pipes.

use std::io::Read;
use std::process::Stdio;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Reply};

#[test]
fn success_envelope_and_exit_zero() {
    let w = util::ws();
    w.write("a.txt", "hello\n");
    let r = w.call("sneaky-read", json!({"file_path": "a.txt"}));
    assert_eq!(r.json["ok"], true);
    assert_eq!(r.json["tool"], "read_file");
    assert_eq!(r.ok()["content"], "hello\n");
}

#[test]
fn bad_input_is_exit_two_and_names_the_field() {
    let w = util::ws();
    let r = w.call_raw("sneaky-read", &[], b"{not json");
    r.err("invalid_json", 2);
    let r = w.call_raw("sneaky-read", &[], b"[1,2]");
    r.err("invalid_json", 2);
    let msg = w.call("sneaky-read", json!({})).err("invalid_args", 2);
    assert!(msg.contains("file_path"), "{msg}");
    let msg = w
        .call("sneaky-read", json!({"file_path": "a", "bogus": 1}))
        .err("invalid_args", 2);
    assert!(msg.contains("bogus"), "{msg}");
    let msg = w
        .call("sneaky-ls", json!({"recursive": "yes"}))
        .err("invalid_args", 2);
    assert!(msg.starts_with("recursive"), "{msg}");
    let msg = w
        .call("sneaky-read", json!({"file_path": "a", "offset": -1}))
        .err("invalid_args", 2);
    assert!(msg.contains("offset"), "{msg}");
    let msg = w
        .call("sneaky-grep", json!({"pattern": "(unclosed"}))
        .err("invalid_args", 2);
    assert!(msg.contains("pattern"), "{msg}");
    let msg = w
        .call("sneaky-read", json!({"file_path": "a\u{0}b"}))
        .err("invalid_args", 2);
    assert!(msg.contains("NUL"), "{msg}");
    w.call_raw("sneaky-read", &["--bogus"], b"")
        .err("invalid_args", 2);
    w.call_raw("sneaky-read", &["a", "--offset", "x"], b"")
        .err("invalid_args", 2);
}

#[test]
fn failures_are_exit_one_and_refusals_exit_three() {
    let w = util::ws();
    w.mkdir("dir");
    w.call("sneaky-read", json!({"file_path": "missing.txt"}))
        .err("not_found", 1);
    w.call("sneaky-read", json!({"file_path": "dir"}))
        .err("not_a_file", 1);
    w.call("sneaky-read", json!({"file_path": "../secret.txt"}))
        .err("outside_workspace", 3);
}

#[test]
fn flags_and_positionals_equal_json() {
    let w = util::ws();
    w.write("src/a.rs", "one\ntwo\nthree\n");
    let by_json = w.call(
        "sneaky-read",
        json!({"file_path": "src/a.rs", "offset": 2, "limit": 1}),
    );
    let by_flags = w.call_raw(
        "sneaky-read",
        &["--file-path", "src/a.rs", "--offset", "2", "--limit", "1"],
        b"ignored, not JSON",
    );
    let by_pos = w.call_raw("sneaky-read", &["src/a.rs", "--offset=2", "--limit=1"], b"");
    assert_eq!(by_json.ok(), by_flags.ok());
    assert_eq!(by_json.ok(), by_pos.ok());
    // A positional alone is read without clap (protocol::plain_invocation): the same call.
    let whole = w.call("sneaky-read", json!({"file_path": "src/a.rs"}));
    let by_pos = w.call_raw("sneaky-read", &["src/a.rs"], b"ignored, not JSON");
    let by_flag = w.call_raw("sneaky-read", &["--file-path", "src/a.rs"], b"");
    assert_eq!(whole.ok(), by_pos.ok());
    assert_eq!(whole.ok(), by_flag.ok());
    let missing = w.call_raw("sneaky-read", &["src/b.rs"], b"");
    let missing_by_flag = w.call_raw("sneaky-read", &["--file-path=src/b.rs"], b"");
    assert_eq!(missing.json, missing_by_flag.json);
    missing.err("not_found", 1);
    let grep = w.call_raw("sneaky-grep", &["t.o", "src"], b"");
    assert_eq!(grep.ok()["matches"][0]["text"], "two");
    let ls = w.call_raw("sneaky-ls", &["--recursive"], b"");
    assert_eq!(util::strings(&ls.ok()["entries"]), ["src/", "src/a.rs"]);
}

#[test]
fn empty_stdin_means_no_arguments() {
    let w = util::ws();
    w.write("f", "x");
    let r = w.call_raw("sneaky-ls", &[], b"");
    assert_eq!(util::strings(&r.ok()["entries"]), ["f"]);
    let r = w.call_raw("sneaky-finish", &[], b"  \n");
    assert_eq!(r.ok()["message"], "Task complete.");
}

#[test]
fn schema_help_and_version() {
    for spec in sneaky::tools::all() {
        let out = std::process::Command::cargo_bin(spec.binary())
            .expect("bin")
            .arg("--schema")
            .output()
            .expect("run");
        assert!(out.status.success());
        let printed: Value = serde_json::from_slice(&out.stdout).expect("schema JSON");
        let file: Value = serde_json::from_str(spec.schema).expect("file JSON");
        assert_eq!(printed, file, "{}", spec.binary());
        assert_eq!(printed["title"], spec.name());
        for flag in ["--help", "--version"] {
            let out = std::process::Command::cargo_bin(spec.binary())
                .expect("bin")
                .arg(flag)
                .output()
                .expect("run");
            assert!(out.status.success(), "{} {flag}", spec.binary());
            assert!(!out.stdout.is_empty());
        }
    }
}

/// The README's list of common flags is what each program takes: every tool binary the five,
/// sneaky-agent's subcommands and sneaky-mcp only --root and --config.
#[test]
fn common_flags_are_what_the_readme_says() {
    let longs = |cmd: &clap::Command| -> Vec<String> {
        cmd.get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect()
    };
    let tool_common = ["root", "config", "format", "pretty", "schema"];
    for spec in sneaky::tools::all() {
        let schema: Value = serde_json::from_str(spec.schema).expect("schema");
        let flags = longs(&sneaky::protocol::build_command(spec, &schema));
        for flag in tool_common {
            assert!(
                flags.iter().any(|f| f == flag),
                "{} lacks --{flag}",
                spec.binary()
            );
        }
    }
    let agent = sneaky::agent::command();
    let mut programs: Vec<(String, clap::Command)> = agent
        .get_subcommands()
        .map(|c| (format!("sneaky-agent {}", c.get_name()), c.clone()))
        .collect();
    programs.push(("sneaky-mcp".into(), sneaky::mcp::command()));
    for (name, cmd) in programs {
        let flags = longs(&cmd);
        for flag in ["root", "config"] {
            assert!(flags.iter().any(|f| f == flag), "{name} lacks --{flag}");
        }
        for flag in ["pretty", "schema"] {
            assert!(!flags.iter().any(|f| f == flag), "{name} has --{flag}");
        }
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README");
    assert!(readme.contains(
        "Every tool binary also takes `--root DIR`, `--config FILE`, `--format json|text`, `--pretty`,"
    ));
}

#[test]
fn pretty_prints_one_object() {
    let w = util::ws();
    w.write("a", "x");
    let out = std::process::Command::cargo_bin("sneaky-read")
        .expect("bin")
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .args(["a", "--pretty"])
        .output()
        .expect("run");
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(text.lines().count() > 1 && text.ends_with("}\n"));
    let v: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["result"]["content"], "x");
}

#[test]
fn root_from_flag_and_environment() {
    let w = util::ws();
    w.write("sub/inner.txt", "in");
    let other = tempfile::tempdir().expect("tmp");
    let root = w.root.join("sub");
    let root = root.to_str().expect("utf8");
    let r = w.call_raw("sneaky-read", &["--root", root, "inner.txt"], b"");
    assert_eq!(r.ok()["content"], "in");
    let out = std::process::Command::cargo_bin("sneaky-read")
        .expect("bin")
        .current_dir(other.path())
        .env("SNEAKY_ROOT", root)
        .arg("inner.txt")
        .output()
        .expect("run");
    let r = Reply::parse("sneaky-read", out);
    assert_eq!(r.ok()["content"], "in");
    w.call_raw("sneaky-read", &["--root", "/does/not/exist", "x"], b"")
        .err("not_found", 1);
}

#[test]
fn stdin_is_bounded() {
    let w = util::ws();
    w.write("sneaky.toml", "max_file_size_bytes = 1000\n");
    // The bound is 4 × max_file_size_bytes, but never below 64 KiB.
    let big = format!(
        "{{\"file_path\":\"a\",\"x\":\"{}\"}}",
        "y".repeat(200 * 1024)
    );
    w.call_raw("sneaky-read", &[], big.as_bytes())
        .err("input_too_large", 2);
}

#[test]
fn config_is_found_in_order_and_errors_are_reported() {
    let w = util::ws();
    w.write("a.txt", "0123456789");
    // <root>/sneaky.toml
    w.write("sneaky.toml", "max_file_size_bytes = 5\n");
    w.call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("file_too_large", 1);
    // --config beats the root file
    let cfg = w.outside().join("explicit.toml");
    std::fs::write(&cfg, "max_file_size_bytes = 100\n").expect("write");
    let r = w.call_raw(
        "sneaky-read",
        &["--config", cfg.to_str().expect("utf8"), "a.txt"],
        b"",
    );
    assert_eq!(r.ok()["content"], "0123456789");
    // unknown keys name the key
    w.write("sneaky.toml", "max_file_size = 5\n");
    let msg = w
        .call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("config_error", 2);
    assert!(msg.contains("max_file_size"), "{msg}");
    // a missing explicit file is an error, not silently ignored
    w.call_raw("sneaky-read", &["--config", "/no/such.toml", "a.txt"], b"")
        .err("config_error", 2);
    // XDG config applies when the root has none
    std::fs::remove_file(w.root.join("sneaky.toml")).expect("rm");
    let xdg = w.outside().join("xdg/sneaky");
    std::fs::create_dir_all(&xdg).expect("mkdir");
    std::fs::write(xdg.join("config.toml"), "max_file_size_bytes = 3\n").expect("write");
    w.call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("file_too_large", 1);
}

#[test]
fn denied_tools_refuse_with_exit_three() {
    let w = util::ws();
    w.write(
        "sneaky.toml",
        "[permissions]\ndeny = [\"read_file\", \"grep_files\"]\n",
    );
    w.write("a.txt", "x");
    let msg = w
        .call("sneaky-read", json!({"file_path": "a.txt"}))
        .err("tool_denied", 3);
    assert!(msg.contains("read_file"));
    w.call("sneaky-grep", json!({"pattern": "x"}))
        .err("tool_denied", 3);
    w.call("sneaky-ls", json!({})).ok();
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let w = util::ws();
    for i in 0..2000 {
        w.write(&format!("f{i:04}.txt"), "needle\n");
    }
    let mut child = std::process::Command::cargo_bin("sneaky-grep")
        .expect("bin")
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .args(["needle", "--max-results", "100000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// The committed schemas and the serde types give the same verdict on the same requests.
#[test]
fn jsonschema_and_serde_agree() {
    let cases: &[(&str, Value)] = &[
        ("read_file", json!({"file_path": "a"})),
        (
            "read_file",
            json!({"file_path": "a", "offset": 2, "limit": 3}),
        ),
        ("read_file", json!({"file_path": "a", "offset": null})),
        ("read_file", json!({})),
        ("read_file", json!({"file_path": 3})),
        ("read_file", json!({"file_path": "a", "extra": true})),
        ("read_file", json!({"file_path": "a", "limit": -2})),
        ("read_file", json!({"file_path": "a", "limit": 1.5})),
        ("list_dir", json!({})),
        (
            "list_dir",
            json!({"directory_path": "x", "recursive": true}),
        ),
        ("list_dir", json!({"recursive": 1})),
        ("list_dir", json!({"directory_path": null})),
        ("grep_files", json!({"pattern": "x", "file_pattern": null})),
        (
            "grep_files",
            json!({"pattern": "x", "path": "a", "case_insensitive": true, "context": 2}),
        ),
        ("grep_files", json!({"path": "a"})),
        ("grep_files", json!({"pattern": ["x"]})),
        ("find_files", json!({"pattern": "*.rs", "max_results": 5})),
        ("find_files", json!({"pattern": "*.rs", "max_results": "5"})),
        ("find_files", json!({"pattern": "*.rs", "recursive": true})),
        ("finish", json!({})),
        ("finish", json!({"message": "done"})),
        ("finish", json!({"message": 1})),
    ];
    for (tool, request) in cases {
        let spec = sneaky::tools::find(tool).expect("spec");
        let schema: Value = serde_json::from_str(spec.schema).expect("schema");
        let validator = jsonschema::validator_for(&schema).expect("valid schema");
        let by_schema = validator.is_valid(request);
        let by_serde = serde_check(tool, request.clone());
        assert_eq!(
            by_schema, by_serde,
            "{tool} {request}: schema says {by_schema}, serde says {by_serde}"
        );
    }
}

fn serde_check(tool: &str, request: Value) -> bool {
    let spec = sneaky::tools::find(tool).expect("spec");
    (spec.check_args)(&request).is_ok()
}
