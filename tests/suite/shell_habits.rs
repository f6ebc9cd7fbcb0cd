//! The shell user's habits, each through the real binaries: the workspace found
//! like git finds its repository, `sneaky-run … && echo pass` meaning what it says,
//! `--format text` for every tool, errors in the language of flags, and the nearest name for
//! a path that is not there.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Reply, Ws};

/// A binary run as a person runs it: from `cwd`, with HOME and the user configuration in
/// `home`, and nothing naming the root unless `env` does. The walk up for a marker stops at
/// `home`'s parent, the test's temp dir (`fenced`).
fn run_in(bin: &str, cwd: &Path, home: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = std::process::Command::cargo_bin(bin).expect("binary");
    fenced(&mut cmd, home)
        .current_dir(cwd)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    assert_cmd::Command::from_std(cmd)
        .write_stdin(Vec::new())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run")
}

/// The walk up stops at the test's temp dir, `home`'s parent.
fn fenced<'c>(cmd: &'c mut std::process::Command, home: &Path) -> &'c mut std::process::Command {
    util::fence(cmd, home.parent().expect("home is inside the temp dir"))
}

fn reply_in(bin: &str, cwd: &Path, home: &Path, args: &[&str]) -> Reply {
    Reply::parse(bin, run_in(bin, cwd, home, args, &[]))
}

/// `<tmp>/home` (no marker) and `<tmp>/proj` (a git repository with `src/deep/`).
struct Project {
    _dir: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
    bare: PathBuf,
}

fn project() -> Project {
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    let proj = dir.path().join("proj");
    let bare = dir.path().join("bare");
    for d in [&home, &bare, &proj.join(".git"), &proj.join("src/deep")] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(proj.join("src/main.rs"), "fn main() {}\n").expect("write");
    std::fs::write(proj.join("notes.txt"), "top\n").expect("write");
    Project {
        _dir: dir,
        home,
        proj,
        bare,
    }
}

// ---- 1. the workspace ---------------------------------------------------------------------

#[test]
fn from_a_subdirectory_the_project_is_the_workspace() {
    let p = project();
    let deep = p.proj.join("src/deep");
    let r = reply_in("sneaky-read", &deep, &p.home, &["src/main.rs"]);
    assert_eq!(r.ok()["content"], "fn main() {}\n");
    let r = reply_in("sneaky-ls", &deep, &p.home, &[]);
    assert!(util::strings(&r.ok()["entries"]).contains(&"notes.txt".to_string()));
    // The project's sneaky.toml applies from below too: here it refuses a command.
    std::fs::write(
        p.proj.join("sneaky.toml"),
        "[tools.shell]\nallowed_commands = [\"ls\"]\n",
    )
    .expect("write");
    reply_in("sneaky-run", &deep, &p.home, &["cat notes.txt"]).err("command_denied", 3);
    reply_in("sneaky-run", &deep, &p.home, &["ls src"]).command_ran();
    // The nearest marker wins: a sneaky.toml below the .git makes a nested workspace.
    std::fs::write(p.proj.join("src/sneaky.toml"), "").expect("write");
    let r = reply_in("sneaky-read", &deep, &p.home, &["main.rs"]);
    assert_eq!(r.ok()["content"], "fn main() {}\n");
}

#[test]
fn without_a_marker_the_tools_refuse_to_guess() {
    let p = project();
    for cwd in [p.bare.as_path(), Path::new("/"), p.home.as_path()] {
        for bin in ["sneaky-ls", "sneaky-read", "sneaky-run"] {
            let r = reply_in(bin, cwd, &p.home, &[]);
            let message = r.err("invalid_args", 2);
            assert!(message.contains("--root"), "{bin} in {cwd:?}: {message}");
        }
    }
    // A home directory is not guessed even when it holds a marker (a dotfiles repository),
    // nor is / when the search reaches it from below.
    std::fs::create_dir_all(p.home.join(".git")).expect("mkdir");
    std::fs::create_dir_all(p.home.join("scratch")).expect("mkdir");
    for cwd in [p.home.clone(), p.home.join("scratch")] {
        let message = reply_in("sneaky-ls", &cwd, &p.home, &[]).err("invalid_args", 2);
        assert!(message.contains("home directory"), "{message}");
        assert!(message.contains("--root"), "{message}");
    }
    // Named explicitly, they are taken as given.
    let home = p.home.to_str().expect("utf-8");
    reply_in("sneaky-ls", Path::new("/"), &p.home, &["--root", home]).ok();
}

/// A `.git` in the parent of the test's temp dir (as a `/tmp/.git` is for every temp dir) is
/// what `SNEAKY_CEILING_DIRECTORIES` keeps out: `<tmp>/up/.git` above `<tmp>/up/fence/bare`.
#[test]
fn a_ceiling_keeps_a_marker_above_it_out() {
    let dir = tempfile::tempdir().expect("tmp");
    let up = dir.path().join("up");
    let fence = up.join("fence");
    let (home, bare) = (fence.join("home"), fence.join("bare"));
    for d in [&up.join(".git"), &home, &bare] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    // run_in fences at home's parent, `fence`: the .git above is not looked at.
    let message = reply_in("sneaky-ls", &bare, &home, &[]).err("invalid_args", 2);
    assert!(message.contains("SNEAKY_CEILING_DIRECTORIES"), "{message}");
    assert!(message.contains("--root"), "{message}");
    // With the ceiling one level higher (at the temp dir itself), the same call finds `up`.
    let out = run_in(
        "sneaky-ls",
        &bare,
        &home,
        &[],
        &[("SNEAKY_CEILING_DIRECTORIES", dir.path())],
    );
    let r = Reply::parse("sneaky-ls", out);
    assert_eq!(util::strings(&r.ok()["entries"]), [".git/", "fence/"]);
    // Several entries, one of them through a link, one relative (ignored): still fenced.
    let link = dir.path().join("link-to-fence");
    std::os::unix::fs::symlink(&fence, &link).expect("symlink");
    let value = format!(
        "relative:{}:{}",
        dir.path().join("elsewhere").display(),
        link.display()
    );
    let out = run_in(
        "sneaky-ls",
        &bare,
        &home,
        &[],
        &[("SNEAKY_CEILING_DIRECTORIES", Path::new(&value))],
    );
    Reply::parse("sneaky-ls", out).err("invalid_args", 2);
}

/// From src/, `main.rs` or `../notes.txt` are what a shell user types; paths are root-relative,
/// so these fail, and the message names the path that was meant.
#[test]
fn a_path_typed_from_the_current_directory_is_pointed_out() {
    let p = project();
    let src = p.proj.join("src");
    let message = reply_in("sneaky-read", &src, &p.home, &["main.rs"]).err("not_found", 1);
    assert!(
        message.ends_with("not to the current directory: did you mean src/main.rs?"),
        "{message}"
    );
    let deep = p.proj.join("src/deep");
    let message =
        reply_in("sneaky-read", &deep, &p.home, &["../mian.rs"]).err("outside_workspace", 3);
    assert!(message.ends_with("did you mean src/main.rs?"), "{message}");
    // Nothing is read outside, whatever the hint says, and a path that leaves the root from
    // the current directory too gets no hint.
    let message =
        reply_in("sneaky-read", &deep, &p.home, &["../../../x"]).err("outside_workspace", 3);
    assert!(!message.contains("did you mean"), "{message}");
}

#[test]
fn flag_variable_and_configuration_come_before_markers() {
    let p = project();
    let deep = p.proj.join("src/deep");
    std::fs::write(p.bare.join("bare.txt"), "bare\n").expect("write");
    let bare = p.bare.to_str().expect("utf-8");
    // --root over SNEAKY_ROOT over the marker.
    let out = run_in(
        "sneaky-read",
        &deep,
        &p.home,
        &["--root", bare, "bare.txt"],
        &[("SNEAKY_ROOT", &p.proj)],
    );
    assert_eq!(Reply::parse("sneaky-read", out).ok()["content"], "bare\n");
    let out = run_in(
        "sneaky-read",
        &deep,
        &p.home,
        &["bare.txt"],
        &[("SNEAKY_ROOT", &p.bare)],
    );
    assert_eq!(Reply::parse("sneaky-read", out).ok()["content"], "bare\n");
    // workspace_root in the user's configuration, relative to the file's directory.
    let config_dir = p.home.join(".config/sneaky");
    std::fs::create_dir_all(&config_dir).expect("mkdir");
    std::fs::write(
        config_dir.join("config.toml"),
        "workspace_root = \"../../../bare\"\n",
    )
    .expect("write");
    let r = reply_in("sneaky-read", &deep, &p.home, &["bare.txt"]);
    assert_eq!(r.ok()["content"], "bare\n");
    // Under a [section] it is that table's key: refused with a hint.
    std::fs::write(
        config_dir.join("config.toml"),
        "[permissions]\nworkspace_root = \"/tmp\"\n",
    )
    .expect("write");
    let message = reply_in("sneaky-read", &deep, &p.home, &["x"]).err("config_error", 2);
    assert!(message.contains("top-level key"), "{message}");
}

#[test]
fn a_project_cannot_move_its_own_root() {
    let p = project();
    std::fs::write(p.proj.join("sneaky.toml"), "workspace_root = \"/\"\n").expect("write");
    let message = reply_in("sneaky-ls", &p.proj.join("src"), &p.home, &[]).err("config_error", 2);
    assert!(message.contains("cannot move the workspace"), "{message}");
    // Naming itself is fine.
    std::fs::write(p.proj.join("sneaky.toml"), "workspace_root = \".\"\n").expect("write");
    reply_in("sneaky-ls", &p.proj.join("src"), &p.home, &[]).ok();
}

#[test]
fn outside_messages_name_the_root() {
    let p = project();
    let root = p.proj.canonicalize().expect("canonical");
    let root = root.to_str().expect("utf-8");
    for args in [&["../outside.txt"][..], &["/etc/passwd"], &["src/../../x"]] {
        let message =
            reply_in("sneaky-read", &p.proj.join("src"), &p.home, args).err("outside_workspace", 3);
        assert!(message.contains(root), "{message}");
    }
}

/// sneaky-mcp and sneaky-agent find the same workspace as the binaries.
#[test]
fn the_agent_and_the_mcp_server_discover_alike() {
    let p = project();
    let deep = p.proj.join("src/deep");
    let out = run_in("sneaky-agent", &deep, &p.home, &["tools"], &[]);
    assert!(out.status.success(), "{out:?}");
    // The definitions need no workspace (the user's configuration decides them outside a
    // project); running tools does, and the refusal says how to name one.
    let out = run_in("sneaky-agent", &p.bare, &p.home, &["tools"], &[]);
    assert!(out.status.success(), "{out:?}");
    let out = run_in("sneaky-agent", &p.bare, &p.home, &["pipe"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--root"));

    let session = |cwd: &Path| -> Value {
        let input = [
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":"2025-06-18","capabilities":{},
                "clientInfo":{"name":"t","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
                "name":"read_file","arguments":{"file_path":"src/main.rs"}}}),
        ]
        .map(|m| m.to_string() + "\n")
        .concat();
        let mut cmd = std::process::Command::cargo_bin("sneaky-mcp").expect("binary");
        fenced(&mut cmd, &p.home)
            .current_dir(cwd)
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .env("HOME", &p.home)
            .env("XDG_CONFIG_HOME", p.home.join(".config"));
        let out = assert_cmd::Command::from_std(cmd)
            .write_stdin(input)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        let reply = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["id"] == 2)
            .expect("a reply to the call");
        reply["result"].clone()
    };
    let ok = session(&deep);
    assert_eq!(ok["isError"], false, "{ok}");
    let refused = session(&p.bare);
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused.to_string().contains("--root"), "{refused}");
}

// ---- 2. sneaky-run's status ---------------------------------------------------------------

#[test]
fn sneaky_run_and_echo_pass_means_what_it_says() {
    let p = project();
    let shell = |line: &str| -> Output {
        let bin_dir = assert_cmd::cargo::cargo_bin("sneaky-run");
        let path = format!(
            "{}:{}",
            bin_dir.parent().expect("dir").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut bash = std::process::Command::new("bash");
        fenced(&mut bash, &p.home)
            .args(["-c", line])
            .current_dir(&p.proj)
            .env("PATH", path)
            .env("HOME", &p.home)
            .env("XDG_CONFIG_HOME", p.home.join(".config"))
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .output()
            .expect("bash")
    };
    let out = shell("sneaky-run 'false' >/dev/null && echo pass; echo status=$?");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "status=1\n");
    let out = shell("sneaky-run 'true' >/dev/null && echo pass");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "pass\n");

    // The envelope still holds the whole result.
    let r = reply_in("sneaky-run", &p.proj, &p.home, &["echo out; exit 7"]);
    assert_eq!(r.status, 1);
    assert_eq!(r.json["ok"], true);
    assert_eq!(r.json["result"]["exit_code"], 7);
    assert_eq!(r.json["result"]["stdout"], "out\n");
    let r = reply_in(
        "sneaky-run",
        &p.proj,
        &p.home,
        &["sleep 5", "--timeout", "1"],
    );
    assert_eq!(
        (r.status, &r.json["result"]["timed_out"]),
        (1, &json!(true))
    );
    // A refusal keeps its own status.
    reply_in("sneaky-run", &p.proj, &p.home, &["sudo ls"]).err("command_denied", 3);
}

// ---- 5. --format text ---------------------------------------------------------------------

struct TextRun {
    status: i32,
    stdout: String,
    stderr: String,
}

fn text(w: &Ws, bin: &str, args: &[&str], stdin: &str) -> TextRun {
    let mut cmd = std::process::Command::cargo_bin(bin).expect("binary");
    cmd.current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .arg("--format")
        .arg("text")
        .args(args);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(stdin.as_bytes().to_vec())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run");
    TextRun {
        status: out.status.code().expect("status"),
        stdout: String::from_utf8(out.stdout).expect("utf-8"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every tool's own text example (`Doc::text`, also in its man page), run as written.
#[test]
fn every_tool_prints_text_for_people() {
    for spec in sneaky::tools::all() {
        let example = spec.doc.text;
        let w = util::ws();
        for (path, content) in example.files {
            w.write(path, content);
        }
        let bin = spec.binary();
        let t = text(&w, bin, example.args, example.stdin);
        assert_eq!(
            (t.status, t.stdout.as_str(), t.stderr.as_str()),
            (example.status, example.stdout, example.stderr),
            "{bin} {:?}",
            example.args
        );
        assert!(
            !t.stdout.starts_with('{'),
            "{bin} printed JSON: {}",
            t.stdout
        );
    }
}

#[test]
fn text_failures_and_cut_results_go_to_stderr() {
    let w = util::ws();
    for i in 0..5 {
        w.write(&format!("f{i}.txt"), "needle\n");
    }
    let t = text(&w, "sneaky-read", &["missing.txt"], "");
    assert_eq!(t.status, 1);
    assert_eq!(t.stdout, "");
    assert_eq!(
        t.stderr,
        "sneaky-read: not_found: missing.txt does not exist\n"
    );
    // Bad flags are reported in the text format too.
    let t = text(&w, "sneaky-grep", &["--bogus"], "");
    assert_eq!(t.status, 2);
    assert!(
        t.stderr.starts_with("sneaky-grep: invalid_args: "),
        "{}",
        t.stderr
    );
    // A cut result: the data on stdout, the note on stderr. Streamed, the first results found
    // are shown; with --offset, the sorted page.
    let t = text(&w, "sneaky-grep", &["needle", "--max-results", "2"], "");
    assert_eq!(t.status, 0);
    assert_eq!(t.stdout.lines().count(), 2, "{}", t.stdout);
    assert!(t.stderr.contains("cut"), "{}", t.stderr);
    let t = text(
        &w,
        "sneaky-grep",
        &["needle", "--max-results", "2", "--offset", "0"],
        "",
    );
    assert_eq!(t.status, 0);
    assert_eq!(t.stdout, "f0.txt:1:needle\nf1.txt:1:needle\n");
    assert!(t.stderr.contains("--offset 2"), "{}", t.stderr);
    let t = text(&w, "sneaky-find", &["*.txt", "--max-results", "1"], "");
    assert_eq!(t.stdout.lines().count(), 1);
    assert!(t.stderr.contains("cut"), "{}", t.stderr);
    // Context lines as rg prints them.
    w.write("c.txt", "a\nb\nneedle\nc\n");
    let t = text(
        &w,
        "sneaky-grep",
        &["needle", "c.txt", "--context", "1"],
        "",
    );
    assert_eq!(t.stdout, "c.txt-2-b\nc.txt:3:needle\nc.txt-4-c\n");
}

// ---- 7. errors in the language of flags ---------------------------------------------------

#[test]
fn flag_errors_speak_flags() {
    let w = util::ws();
    w.write("f.txt", "a\na\n").write("change.patch", "");
    let r = w.call_raw("sneaky-replace", &["f.txt", "--old-str", "a"], b"");
    assert_eq!(r.err("invalid_args", 2), "--new-str is required");
    let r = w.call_raw("sneaky-replace", &["--old-str", "a", "--new-str", "b"], b"");
    assert_eq!(
        r.err("invalid_args", 2),
        "FILE_PATH (or --file-path) is required"
    );
    let r = w.call_raw(
        "sneaky-replace",
        &["f.txt", "--old-str", "a", "--new-str", "b"],
        b"",
    );
    let message = r.err("multiple_matches", 1);
    assert!(message.contains("--replace-all"), "{message}");
    assert!(!message.contains("replace_all"), "{message}");
    let r = w.call_raw("sneaky-read", &["f.txt", "--limit", "-3"], b"");
    let message = r.err("invalid_args", 2);
    assert!(message.starts_with("--limit: "), "{message}");
    // The same mistakes in JSON are told in JSON's words.
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "f.txt", "old_str": "a"}),
    );
    assert!(r.err("invalid_args", 2).contains("`new_str`"));
}

#[test]
fn a_mistyped_flag_gets_a_suggestion() {
    let w = util::ws();
    w.write("f.txt", "x\n");
    let r = w.call_raw("sneaky-read", &["f.txt", "--prety"], b"");
    let message = r.err("invalid_args", 2);
    assert!(message.contains("did you mean '--pretty'?"), "{message}");
    let r = w.call_raw("sneaky-grep", &["x", "--max-result", "3"], b"");
    let message = r.err("invalid_args", 2);
    assert!(message.contains("'--max-results'"), "{message}");
    let r = w.call_raw("sneaky-read", &["f.txt", "--format", "txt"], b"");
    let message = r.err("invalid_args", 2);
    assert!(message.contains("text"), "{message}");
}

#[test]
fn a_patch_file_name_given_to_patch_is_named_as_such() {
    let w = util::ws();
    w.write("f.txt", "x\n").write(
        "change.patch",
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-x\n+y\n",
    );
    let r = w.call_raw("sneaky-patch", &["f.txt", "--patch", "change.patch"], b"");
    let message = r.err("invalid_args", 2);
    assert!(message.contains("not a file name"), "{message}");
    assert!(message.contains("< change.patch"), "{message}");
    assert_eq!(w.read("f.txt"), "x\n");
    // A diff on stdin with no argument at all is not JSON: the message says how to hand it over.
    let patch = w.read("change.patch");
    let message = w
        .call_raw("sneaky-patch", &[], patch.as_bytes())
        .err("invalid_json", 2);
    assert!(message.contains("jq -Rs '{patch: .}'"), "{message}");
    assert_eq!(w.read("f.txt"), "x\n");
    // Either way the hints say, it applies.
    w.call("sneaky-patch", json!({ "patch": patch })).ok();
    assert_eq!(w.read("f.txt"), "y\n");
    let back = patch.replace("-x\n+y", "-y\n+x");
    w.call_raw("sneaky-patch", &["f.txt"], back.as_bytes()).ok();
    assert_eq!(w.read("f.txt"), "x\n");
}

#[test]
fn not_found_suggests_the_nearest_existing_name() {
    let w = util::ws();
    w.write("src/main.rs", "fn main() {}\n")
        .write("README.md", "# r\n");
    let cases: [(&str, &[&str], &str); 5] = [
        ("sneaky-read", &["src/mian.rs"], "src/main.rs"),
        ("sneaky-read", &["scr/main.rs"], "src/main.rs"),
        ("sneaky-read", &["readme"], "README.md"),
        ("sneaky-ls", &["scr"], "src"),
        ("sneaky-grep", &["main", "sr"], "src"),
    ];
    for (bin, args, guess) in cases {
        let message = w.call_raw(bin, args, b"").err("not_found", 1);
        assert!(
            message.ends_with(&format!("did you mean {guess}?")),
            "{bin} {args:?}: {message}"
        );
    }
    // Nothing alike: no guess.
    let message = w
        .call_raw("sneaky-read", &["zzzzzzzz.toml"], b"")
        .err("not_found", 1);
    assert!(!message.contains("did you mean"), "{message}");
}
