//! A command's changes: held in an overlay of the workspace, applied as one change that undo
//! takes back byte-exact (created, modified, deleted, renamed, a directory replaced by a file
//! and back, links, modes), the paths git ignores passed straight through and reported as
//! untracked; a dry run leaves the workspace byte-identical; a kill while the changes are
//! applied leaves every file old or new, and the history still undoes.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

use crate::util::{self, Ws};

/// A workspace that is a git repository ignoring `build/` and `*.log`, whose commands may use
/// the file programs the default list denies.
fn repo() -> Option<Ws> {
    if !util::require_cmd("git") {
        return None;
    }
    let w = util::ws();
    w.user_config(
        "[tools.shell]\ndenied_commands = []\n\
         extra_allowed_commands = [\"rm\", \"mv\", \"ln\", \"chmod\", \"rmdir\", \"mkdir\", \"cp\", \"touch\"]\n",
    );
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&w.root)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    w.write(".gitignore", "build/\n*.log\n")
        .write("a.txt", "one\r\ntwo\r\n")
        .write("b.txt", "bee\n")
        .write("d/x.txt", "x\n")
        .write("d/deep/y.txt", "y\n")
        .write("e/inside.txt", "e\n")
        .write("f", "a file\n")
        .write("m.sh", "#!/bin/sh\n")
        .write("build/old.o", "old object\n");
    std::fs::write(w.root.join("bin.dat"), [0u8, 159, 146, 150, 0, 255]).expect("write");
    w.link("b.txt", "l");
    Some(w)
}

/// The same trees, or a panic naming the paths that differ.
fn assert_same(
    now: &BTreeMap<String, (char, u32, Vec<u8>)>,
    expected: &BTreeMap<String, (char, u32, Vec<u8>)>,
    what: &str,
) {
    let differ: Vec<&String> = now
        .keys()
        .chain(expected.keys())
        .filter(|k| now.get(*k) != expected.get(*k))
        .collect();
    assert!(differ.is_empty(), "{what}: these differ: {differ:?}");
}

fn run(w: &Ws, request: Value) -> util::Reply {
    w.call("sneaky-run", request)
}

/// `request` in sneaky-run with its undo history in `state`, and `env` set.
fn run_in(w: &Ws, request: &str, state: &Path, env: &[(&str, &str)]) -> util::Reply {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("sneaky-run"));
    util::fence(&mut cmd, w.outside())
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env_remove("CARGO_TARGET_DIR")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", state)
        .envs(env.iter().copied());
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(request.as_bytes().to_vec())
        .output()
        .expect("run");
    util::Reply::parse("sneaky-run", out)
}

fn kinds(list: &Value) -> BTreeMap<String, String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|c| {
            (
                c["path"].as_str().expect("path").to_string(),
                c["kind"].as_str().expect("kind").to_string(),
            )
        })
        .collect()
}

fn expect_kinds(list: &Value, expected: &[(&str, &str)]) {
    let expected: BTreeMap<String, String> = expected
        .iter()
        .map(|(p, k)| (p.to_string(), k.to_string()))
        .collect();
    assert_eq!(kinds(list), expected);
}

#[test]
fn a_command_s_changes_are_recorded_and_undone_byte_exact() {
    let Some(w) = repo() else { return };
    let before = util::tree(&w.root, false);
    let command = "echo three >> a.txt && mv b.txt b2.txt && rm -r d && rm -r e && \
                   echo now a file > e && rm f && mkdir f && echo in > f/in.txt && \
                   ln -sfn b2.txt l && ln -s a.txt l2 && chmod 700 m.sh && mkdir empty && \
                   printf '\\0\\1' > bin.dat && mkdir -p build && echo new > build/new.o && \
                   rm build/old.o && echo log > run.log";
    let reply = run(&w, json!({ "command": command }));
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    expect_kinds(
        &r["changes"],
        &[
            ("a.txt", "modified"),
            ("b.txt", "deleted"),
            ("b2.txt", "created"),
            ("bin.dat", "modified"),
            // Ignored, but a deletion of what was there: recorded all the same.
            ("build/old.o", "deleted"),
            ("d", "deleted"),
            ("d/deep", "deleted"),
            ("d/deep/y.txt", "deleted"),
            ("d/x.txt", "deleted"),
            ("e", "modified"),
            ("e/inside.txt", "deleted"),
            ("empty", "created"),
            ("f", "modified"),
            ("f/in.txt", "created"),
            ("l", "modified"),
            ("l2", "created"),
            ("m.sh", "modified"),
        ],
    );
    expect_kinds(
        &r["untracked"],
        &[("build/new.o", "created"), ("run.log", "created")],
    );
    let change = r["change_id"].as_str().expect("change_id").to_string();
    // The workspace holds what the command left.
    assert_eq!(w.read("a.txt"), "one\r\ntwo\r\nthree\n");
    assert_eq!(w.read("e"), "now a file\n");
    assert_eq!(w.read("f/in.txt"), "in\n");
    assert_eq!(
        std::fs::read_link(w.root.join("l")).expect("link"),
        Path::new("b2.txt")
    );
    assert!(w.root.join("empty").is_dir());
    let mode = std::fs::metadata(w.root.join("m.sh"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    assert_eq!(w.read("build/new.o"), "new\n");
    let after = util::tree(&w.root, false);
    // Undone: byte-exact, except what git ignores that the command made, which is not
    // recorded (the ignored file it deleted is back).
    let back = w.call("sneaky-undo", json!({}));
    assert_eq!(back.ok()["undone"], change.as_str(), "{}", back.json);
    let mut expected = before.clone();
    for p in ["build/new.o", "run.log"] {
        expected.insert(p.to_string(), after[p].clone());
    }
    assert_same(
        &util::tree(&w.root, false),
        &expected,
        "not restored byte-exact",
    );
    // And the undo undone: the command's result again.
    w.call("sneaky-undo", json!({})).ok();
    assert_same(&util::tree(&w.root, false), &after, "the undo undone");
    // A directory replaced by a file and back, by a second command, undone too.
    let before_back = util::tree(&w.root, false);
    let reply = run(
        &w,
        json!({"command": "rm e && mkdir e && echo again > e/again.txt"}),
    );
    expect_kinds(
        &reply.command_ran()["changes"],
        &[("e", "modified"), ("e/again.txt", "created")],
    );
    w.call("sneaky-undo", json!({})).ok();
    assert_same(&util::tree(&w.root, false), &before_back, "back");
    // The history lists the command.
    let list = w.call("sneaky-undo", json!({"list": true}));
    let tools: Vec<&str> = list.ok()["changes"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert!(tools.contains(&"run_command"), "{}", list.json);
}

#[test]
fn ignored_paths_inside_a_new_tracked_directory_land_after_it_and_stay_when_it_is_undone() {
    let Some(w) = repo() else { return };
    let reply = run(
        &w,
        json!({"command": "mkdir -p out/build && echo o > out/build/x.o && echo t > out/t.txt"}),
    );
    let r = reply.command_ran();
    expect_kinds(
        &r["changes"],
        &[("out", "created"), ("out/t.txt", "created")],
    );
    expect_kinds(
        &r["untracked"],
        &[("out/build", "created"), ("out/build/x.o", "created")],
    );
    assert_eq!(w.read("out/build/x.o"), "o\n");
    // Undo takes back what it recorded; the directory holds an untracked file it did not put
    // there, so it stays: a conflict, and nothing changes.
    let message = w.call("sneaky-undo", json!({})).err("conflict", 1);
    assert!(message.contains("out/build"), "{message}");
    assert_eq!(w.read("out/t.txt"), "t\n");
}

#[test]
fn a_command_that_changes_nothing_records_nothing() {
    let Some(w) = repo() else { return };
    let reply = run(
        &w,
        json!({"command": "cat a.txt > /dev/null && touch a.txt"}),
    );
    let r = reply.command_ran();
    assert_eq!(r["changes"], json!([]), "{}", reply.json);
    assert!(r.get("change_id").is_none(), "{}", reply.json);
    w.call("sneaky-undo", json!({})).err("not_found", 1);
}

#[test]
fn a_dry_run_leaves_the_workspace_byte_identical() {
    let Some(w) = repo() else { return };
    // The sandbox makes the repository's missing metadata directories once (so that they are
    // bound read-only like existing ones: src/shell/spec.rs); not part of any command's
    // changes.
    run(&w, json!({"command": "true"})).command_ran();
    let before = util::tree(&w.root, true);
    let reply = run(
        &w,
        json!({"command": "echo three >> a.txt && rm -r d && echo n > new.txt && \
                           mkdir -p build && echo o > build/o.o && git add a.txt", "dry_run": true}),
    );
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    assert_eq!(r["dry_run"], true);
    assert!(r.get("change_id").is_none(), "{}", reply.json);
    let diff = r["diff"].as_str().expect("diff");
    assert!(diff.contains("+three"), "{diff}");
    assert!(diff.contains("+++ b/new.txt"), "{diff}");
    assert!(diff.contains("-y"), "{diff}");
    assert_eq!(kinds(&r["changes"])["new.txt"], "created");
    assert_eq!(kinds(&r["untracked"])["build/o.o"], "created");
    // Nothing reached the workspace, .git included (git add ran in the overlay too).
    assert_same(&util::tree(&w.root, true), &before, "after a dry run");
    w.call("sneaky-undo", json!({})).err("not_found", 1);
    // From a shell: --dry-run.
    let shell = w.call_raw("sneaky-run", &["--dry-run", "echo x > x.txt"], b"");
    assert_eq!(
        shell.command_ran()["changes"],
        json!([{"path": "x.txt", "kind": "created"}])
    );
    assert!(!w.root.join("x.txt").exists());
}

#[test]
fn git_s_own_writes_go_straight_through_and_git_status_is_as_the_command_left_it() {
    let Some(w) = repo() else { return };
    let reply = run(&w, json!({"command": "git add a.txt && echo z >> b.txt"}));
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    // Only the work tree's file is a change; the index was written by git directly.
    assert_eq!(r["changes"], json!([{"path": "b.txt", "kind": "modified"}]));
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&w.root)
        .output()
        .expect("git");
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.contains("A  a.txt"), "{status}");
    assert!(status.contains("?? b.txt"), "{status}");
}

#[test]
fn without_the_overlay_the_command_runs_as_before_and_says_so_or_refuses_when_required() {
    let Some(w) = repo() else { return };
    // The namespace layer skipped: no mount namespace, so no overlay. The user lets commands
    // run with the layers the system offers (else the missing namespaces refuse first).
    w.user_config("[tools.shell]\nrequire_layers = []\n");
    let state = w.outside().join("state");
    let skip = |request: &str| {
        run_in(
            &w,
            request,
            &state,
            &[("SNEAKY_SANDBOX_SKIP", "namespaces")],
        )
    };
    let reply = skip(r#"{"command": "echo direct > direct.txt"}"#);
    let r = reply.command_ran();
    assert!(r.get("changes").is_none(), "{}", reply.json);
    assert!(
        r["changes_unavailable"]
            .as_str()
            .is_some_and(|s| s.contains("no mount namespace")),
        "{}",
        reply.json
    );
    assert_eq!(w.read("direct.txt"), "direct\n");
    // A dry run cannot hold anything without it: refused, nothing ran.
    let reply = skip(r#"{"command": "echo no > no.txt", "dry_run": true}"#);
    assert!(reply.json["ok"] == false, "{}", reply.json);
    assert!(!w.root.join("no.txt").exists());
    // require_layers = ["overlay"] refuses too.
    w.user_config("[tools.shell]\nrequire_layers = [\"overlay\"]\n");
    let reply = skip(r#"{"command": "echo no > no.txt"}"#);
    assert!(reply.json["ok"] == false, "{}", reply.json);
    assert!(!w.root.join("no.txt").exists());
}

/// With the overlay, the protected paths that do not exist are held by placeholders in its
/// upper layer: the command meets them there (and cannot write them), the workspace never has
/// them, and what the person makes at one of those names is what the next command sees.
#[test]
fn protected_paths_are_held_in_the_overlay_and_never_in_the_workspace() {
    let Some(w) = repo() else { return };
    let reply = run_meanwhile(
        &w,
        json!({"command": "test -S .envrc && test -S .vscode && echo x > marker.txt && sleep 1; \
                           echo no > .envrc; test ! -s .envrc"}),
        wrote("marker.txt"),
        || {
            for p in [".envrc", ".vscode", ".mcp.json", ".claude"] {
                assert!(
                    std::fs::symlink_metadata(w.root.join(p)).is_err(),
                    "{p} is in the workspace while the command runs"
                );
            }
        },
    );
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    expect_kinds(&r["changes"], &[("marker.txt", "created")]);
    assert!(std::fs::symlink_metadata(w.root.join(".envrc")).is_err());
    // A directory the person makes at one of the names: the next command sees it, read-only.
    w.write(".vscode/settings.json", "{}\n");
    let reply = run(
        &w,
        json!({"command": "cat .vscode/settings.json && echo no > .vscode/settings.json"}),
    );
    let r = reply.command_ran();
    assert_eq!(r["stdout"], "{}\n", "{}", reply.json);
    assert_ne!(r["exit_code"], 0, "{}", reply.json);
    assert_eq!(w.read(".vscode/settings.json"), "{}\n");
}

/// When the overlay cannot be mounted (here: the history's directory has a name overlayfs's
/// options cannot carry), the command writes the workspace itself, and the protected paths
/// the upper layer was to hold are held in the workspace instead, for the call only.
#[test]
fn without_a_mounted_overlay_the_protected_paths_are_held_in_the_workspace() {
    let Some(w) = repo() else { return };
    let request = json!({"command": "test -S .envrc && test -S .vscode && echo held > held.txt; \
                                     echo no > .envrc; echo yes > direct.txt"});
    let reply = run_in(&w, &request.to_string(), &w.outside().join("st,ate"), &[]);
    let r = reply.command_ran();
    assert!(
        r["changes_unavailable"]
            .as_str()
            .is_some_and(|s| s.contains("overlay")),
        "{}",
        reply.json
    );
    assert_eq!(w.read("direct.txt"), "yes\n", "{}", reply.json);
    assert_eq!(w.read("held.txt"), "held\n", "{}", reply.json);
    for p in [".envrc", ".vscode", ".mcp.json"] {
        assert!(
            std::fs::symlink_metadata(w.root.join(p)).is_err(),
            "{p} is left in the workspace: {}",
            reply.json
        );
    }
}

/// `sneaky-run` killed with SIGKILL at spread-out moments while a command's changes to many
/// files are applied: every file is the old content or the new, never torn; all of them
/// together (one commit); and once the next tool has settled what the killed one left, the
/// history still undoes.
#[test]
fn kill_9_while_a_command_s_changes_are_applied_leaves_old_or_new_and_undo_still_works() {
    let rounds: usize = std::env::var("SNEAKY_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let Some(w) = repo() else { return };
    let files = 200;
    let old = format!("{}\n", "A".repeat(4000));
    let new = format!("{}\n", "B".repeat(4000));
    for i in 0..files {
        w.write(&format!("many/f{i:03}.txt"), &old);
    }
    let which = |w: &Ws| -> Vec<bool> {
        (0..files)
            .map(|i| {
                let now = w.read(&format!("many/f{i:03}.txt"));
                assert!(now == old || now == new, "many/f{i:03}.txt is torn");
                now == new
            })
            .collect()
    };
    let flip = json!({"command": "sed -i y/AB/BA/ many/f*.txt"}).to_string();
    let started = std::time::Instant::now();
    run(&w, serde_json::from_str(&flip).expect("json")).command_ran();
    let full = started.elapsed();
    assert!(which(&w).iter().all(|b| *b));
    let mut seen = [0, 0];
    for i in 0..rounds {
        let before = which(&w)[0];
        let delay = full.mul_f64(1.5 * i as f64 / rounds as f64);
        let (mut child, feeder) = crate::edit_crash::spawn_tool("sneaky-run", &w, flip.as_bytes());
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let _ = feeder.join();
        // The next tool settles what the killed one left.
        let listed = w.call("sneaky-undo", json!({"list": true}));
        assert!(listed.ok()["changes"].is_array());
        let now = which(&w);
        assert!(
            now.iter().all(|b| *b == now[0]),
            "round {i}: some files flipped and others not"
        );
        seen[usize::from(now[0] != before)] += 1;
        // The newest change is taken back: the files flip.
        w.call("sneaky-undo", json!({})).ok();
        let back = which(&w);
        assert!(
            back.iter().all(|b| *b != now[0]),
            "round {i}: the undo did not take back"
        );
    }
    eprintln!(
        "command crash test: {rounds} kills over 0..{:?}: not landed {}, landed {}",
        full.mul_f64(1.5),
        seen[0],
        seen[1]
    );
}

/// The upper layers of the workspace's running commands (`<state>/sneaky/undo/<key>/scratch/
/// run-*/upper`).
fn uppers(w: &Ws) -> Vec<std::path::PathBuf> {
    let undo = w.outside().join("state/sneaky/undo");
    let mut out = Vec::new();
    for key in std::fs::read_dir(&undo).into_iter().flatten().flatten() {
        for run in std::fs::read_dir(key.path().join("scratch"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if run.file_name().to_string_lossy().starts_with("run-") {
                out.push(run.path().join("upper"));
            }
        }
    }
    out
}

/// Start `request` in sneaky-run, its reply to be read from the child's output.
fn start_run(w: &Ws, request: &Value) -> std::process::Child {
    use assert_cmd::cargo::CommandCargoExt;
    use std::io::Write;
    let mut cmd = std::process::Command::cargo_bin("sneaky-run").expect("binary");
    util::fence(&mut cmd, w.outside())
        .current_dir(&w.root)
        .env_remove("CARGO_TARGET_DIR")
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(request.to_string().as_bytes())
        .expect("request");
    child
}

/// Run `request` in sneaky-run; once `ready` says the command has got that far (given its
/// upper layer), do what a person does meanwhile; the reply.
fn run_meanwhile(
    w: &Ws,
    request: Value,
    ready: impl Fn(&Path) -> bool,
    person: impl FnOnce(),
) -> util::Reply {
    let child = start_run(w, &request);
    wait_for_upper(w, ready);
    person();
    util::Reply::parse("sneaky-run", child.wait_with_output().expect("wait"))
}

/// Wait until a running command's upper layer is as `ready` says.
fn wait_for_upper(w: &Ws, ready: impl Fn(&Path) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !uppers(w).iter().any(|u| ready(u)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never got there"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `rel` is in the upper layer: the command has written (or removed) it.
fn wrote(rel: &'static str) -> impl Fn(&Path) -> bool {
    move |upper: &Path| std::fs::symlink_metadata(upper.join(rel)).is_ok()
}

/// `rel` is a whiteout in the upper layer: the command has removed it (a directory: with all
/// it held).
fn removed(rel: &'static str) -> impl Fn(&Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    move |upper: &Path| {
        std::fs::symlink_metadata(upper.join(rel)).is_ok_and(|m| m.file_type().is_char_device())
    }
}

/// The error of a conflict: names each of `paths`, says where the command's changes are kept,
/// and nothing of them was applied (nor recorded).
fn expect_conflict(w: &Ws, reply: &util::Reply, paths: &[&str], not_applied: &str) {
    let message = reply.err("conflict", 1);
    for p in paths {
        assert!(message.contains(p), "{p} not named: {message}");
    }
    assert!(message.contains("kept in"), "{message}");
    assert!(!w.root.join(not_applied).exists(), "{not_applied} applied");
    w.call("sneaky-undo", json!({})).err("not_found", 1);
}

#[test]
fn a_file_a_person_edits_while_the_command_changes_it_is_never_overwritten() {
    let Some(w) = repo() else { return };
    // The command has read and changed its copy when the person saves theirs.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && echo cmd >> a.txt && sleep 1"}),
        wrote("a.txt"),
        || std::fs::write(w.root.join("a.txt"), "the person's\n").expect("write"),
    );
    expect_conflict(&w, &reply, &["a.txt"], "other.txt");
    assert_eq!(w.read("a.txt"), "the person's\n");
    // The command's version is where the error says.
    let message = reply.err("conflict", 1);
    let kept = message.rsplit("kept in ").next().expect("kept").trim();
    assert_eq!(
        std::fs::read(Path::new(kept).join("a.txt")).expect("kept a.txt"),
        b"one\r\ntwo\r\ncmd\n"
    );
    // The person saves while the command runs, before it writes the file (it overwrites it
    // without reading it): the command never saw the person's version either.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && sleep 1 && echo cmd > b.txt"}),
        wrote("other.txt"),
        || std::fs::write(w.root.join("b.txt"), "the person's\n").expect("write"),
    );
    expect_conflict(&w, &reply, &["b.txt"], "other.txt");
    assert_eq!(w.read("b.txt"), "the person's\n");
}

#[test]
fn deletions_creations_and_directories_changed_meanwhile_are_conflicts_too() {
    let Some(w) = repo() else { return };
    // The command deletes a file the person edits.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && rm b.txt && sleep 1"}),
        wrote("b.txt"),
        || std::fs::write(w.root.join("b.txt"), "edited\n").expect("write"),
    );
    expect_conflict(&w, &reply, &["b.txt"], "other.txt");
    assert_eq!(w.read("b.txt"), "edited\n");
    // Both create the same file.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && echo cmd > n.txt && sleep 1"}),
        wrote("n.txt"),
        || std::fs::write(w.root.join("n.txt"), "mine\n").expect("write"),
    );
    expect_conflict(&w, &reply, &["n.txt"], "other.txt");
    assert_eq!(w.read("n.txt"), "mine\n");
    std::fs::remove_file(w.root.join("n.txt")).expect("rm");
    // The person deletes a file the command changes: it is not brought back.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && echo cmd >> f && sleep 1"}),
        wrote("f"),
        || std::fs::remove_file(w.root.join("f")).expect("rm"),
    );
    expect_conflict(&w, &reply, &["f"], "other.txt");
    assert!(!w.root.join("f").exists());
    // The command removes a directory in which the person makes a file and edits another.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && rm -r d && sleep 1"}),
        removed("d"),
        || {
            std::fs::write(w.root.join("d/new.txt"), "new\n").expect("write");
            std::fs::write(w.root.join("d/deep/y.txt"), "y2\n").expect("write");
        },
    );
    expect_conflict(&w, &reply, &["d/new.txt", "d/deep/y.txt"], "other.txt");
    assert_eq!(w.read("d/new.txt"), "new\n");
    assert_eq!(w.read("d/deep/y.txt"), "y2\n");
    assert_eq!(w.read("d/x.txt"), "x\n");
    // The command makes a file where the person makes a directory.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && echo cmd > z && sleep 1"}),
        wrote("z"),
        || std::fs::create_dir(w.root.join("z")).expect("mkdir"),
    );
    expect_conflict(&w, &reply, &["z"], "other.txt");
    assert!(w.root.join("z").is_dir());
}

#[test]
fn a_hard_link_to_a_workspace_file_is_a_new_file_not_a_conflict() {
    // What rustc's incremental cache does on every rebuild: link the last session's files
    // under a new name. overlayfs copies the linked file up, and the new name carries the
    // mark of a file copied from the workspace, which the workspace does not hold.
    let Some(w) = repo() else { return };
    // The first name deleted by the person while the command ran: the link's content was
    // copied from a file that is gone, as with any file the command changed.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo other > other.txt && ln a.txt a2.txt && sleep 1"}),
        wrote("a2.txt"),
        || std::fs::remove_file(w.root.join("a.txt")).expect("rm"),
    );
    expect_conflict(&w, &reply, &["a2.txt"], "other.txt");
    // Left alone, the new names are applied as files of their own.
    let reply = run(
        &w,
        json!({"command": "ln b.txt linked.txt && mkdir -p build/s && ln build/old.o build/s/old.o"}),
    );
    assert_eq!(reply.ok()["exit_code"], 0, "{reply:?}");
    assert_eq!(w.read("linked.txt"), "bee\n");
    assert_eq!(w.read("build/s/old.o"), "old object\n");
    assert_eq!(w.read("b.txt"), "bee\n");
}

#[test]
fn work_on_other_files_meanwhile_or_just_before_is_no_conflict() {
    let Some(w) = repo() else { return };
    // The person edits another file, and makes one in a directory the command writes in.
    let reply = run_meanwhile(
        &w,
        json!({"command": "echo cmd >> a.txt && echo n > d/n.txt && sleep 1"}),
        wrote("a.txt"),
        || {
            std::fs::write(w.root.join("b.txt"), "the person's\n").expect("write");
            std::fs::write(w.root.join("d/mine.txt"), "mine\n").expect("write");
        },
    );
    let r = reply.command_ran();
    expect_kinds(
        &r["changes"],
        &[("a.txt", "modified"), ("d/n.txt", "created")],
    );
    assert_eq!(w.read("a.txt"), "one\r\ntwo\r\ncmd\n");
    assert_eq!(w.read("b.txt"), "the person's\n");
    assert_eq!(w.read("d/mine.txt"), "mine\n");
    // An edit right before the command, within the same tick of the clock that stamps change
    // times, is what the command started from: no conflict.
    for i in 0..5 {
        w.call(
            "sneaky-write",
            json!({"file_path": "b.txt", "content": format!("edit {i}\n")}),
        )
        .ok();
        let reply = run(&w, json!({"command": "echo cmd >> b.txt"}));
        assert_eq!(reply.command_ran()["exit_code"], 0, "{}", reply.json);
        assert_eq!(w.read("b.txt"), format!("edit {i}\ncmd\n"));
    }
}

#[test]
fn held_changes_are_not_applied_over_an_edit_made_after_the_dry_run() {
    let Some(w) = repo() else { return };
    let held = w.call_raw(
        "sneaky-run",
        &["--hold-changes"],
        json!({"command": "echo cmd >> a.txt && echo other > other.txt", "dry_run": true})
            .to_string()
            .as_bytes(),
    );
    let id = held.command_ran()["held"]
        .as_str()
        .expect("held")
        .to_string();
    std::fs::write(w.root.join("a.txt"), "the person's\n").expect("write");
    let reply = w.call_raw(
        "sneaky-run",
        &["--apply-held"],
        json!({ "held": id }).to_string().as_bytes(),
    );
    expect_conflict(&w, &reply, &["a.txt"], "other.txt");
    assert_eq!(w.read("a.txt"), "the person's\n");
}

fn git(w: &Ws, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(&w.root)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_tracked_file_that_matches_an_ignore_rule_is_a_recorded_change() {
    let Some(w) = repo() else { return };
    w.write("kept.log", "tracked log\n")
        .write("build/keep.txt", "tracked in build\n");
    git(&w, &["add", "-f", "kept.log", "build/keep.txt"]);
    // Each index format git writes: 2, 3 (an intent-to-add entry has the extended flags), 4
    // (paths prefix-compressed).
    for (i, version) in ["2", "3", "4"].iter().enumerate() {
        git(&w, &["update-index", "--index-version", version]);
        if *version == "3" {
            w.write("later.txt", "later\n");
            git(&w, &["add", "-N", "later.txt"]);
        }
        let reply = run(
            &w,
            json!({"command": format!("echo {i} >> kept.log && echo {i} >> build/keep.txt && \
                                       echo o >> build/old.o && echo n > new.log")}),
        );
        let r = reply.command_ran();
        // build/old.o is ignored, and overwritten: recorded too (build/ is not tagged as a
        // cache).
        expect_kinds(
            &r["changes"],
            &[
                ("build/keep.txt", "modified"),
                ("build/old.o", "modified"),
                ("kept.log", "modified"),
            ],
        );
        expect_kinds(&r["untracked"], &[("new.log", "created")]);
        w.call("sneaky-undo", json!({})).ok();
        assert_eq!(w.read("kept.log"), "tracked log\n");
        assert_eq!(w.read("build/keep.txt"), "tracked in build\n");
        std::fs::remove_file(w.root.join("new.log")).expect("rm");
    }
    // A directory git ignores but that holds a tracked file is recorded when it goes: undo
    // brings it, its tracked file and the ignored one back.
    let reply = run(&w, json!({"command": "rm -r build"}));
    let r = reply.command_ran();
    expect_kinds(
        &r["changes"],
        &[
            ("build", "deleted"),
            ("build/keep.txt", "deleted"),
            ("build/old.o", "deleted"),
        ],
    );
    assert!(
        r["untracked"].as_array().map_or(true, Vec::is_empty),
        "{}",
        reply.json
    );
    w.call("sneaky-undo", json!({})).ok();
    assert_eq!(w.read("build/keep.txt"), "tracked in build\n");
    assert!(w.read("build/old.o").starts_with("old object\n"));
}

#[test]
fn core_excludes_file_is_read_from_the_repository_and_the_user_s_git_configuration() {
    let Some(w) = repo() else { return };
    // The user's (XDG) configuration names one excludes file; the repository's names
    // another, and wins, as in git.
    let user_ignore = w.outside().join("user-ignore");
    std::fs::write(&user_ignore, "*.user\n").expect("write");
    std::fs::create_dir_all(w.outside().join("xdg/git")).expect("mkdir");
    std::fs::write(
        w.outside().join("xdg/git/config"),
        format!("[core]\n\texcludesFile = \"{}\"\n", user_ignore.display()),
    )
    .expect("write");
    let reply = run(&w, json!({"command": "echo a > a.user && echo b > b.repo"}));
    let r = reply.command_ran();
    expect_kinds(&r["changes"], &[("b.repo", "created")]);
    expect_kinds(&r["untracked"], &[("a.user", "created")]);
    let repo_ignore = w.outside().join("repo-ignore");
    std::fs::write(&repo_ignore, "*.repo\n").expect("write");
    git(
        &w,
        &[
            "config",
            "core.excludesFile",
            &repo_ignore.to_string_lossy(),
        ],
    );
    let reply = run(&w, json!({"command": "echo a > c.user && echo b > d.repo"}));
    let r = reply.command_ran();
    expect_kinds(&r["changes"], &[("c.user", "created")]);
    expect_kinds(&r["untracked"], &[("d.repo", "created")]);
}

#[test]
fn a_commit_in_a_nested_repository_is_kept_and_its_hooks_are_not_planted() {
    let Some(w) = repo() else { return };
    w.write("vendor/x/lib.txt", "lib\n");
    let sub = w.root.join("vendor/x");
    let in_sub = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&sub)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    in_sub(&["init", "-q"]);
    in_sub(&["config", "user.name", "t"]);
    in_sub(&["config", "user.email", "t@t"]);
    in_sub(&["add", "lib.txt"]);
    in_sub(&["commit", "-q", "-m", "one"]);
    let reply = run(
        &w,
        json!({"command": "echo more >> vendor/x/lib.txt && git -C vendor/x commit -q -am two && \
                           cd vendor/x/.git && echo 'echo planted' > hooks/post-commit && \
                           echo '[alias]' >> config"}),
    );
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    // The work tree's file is a recorded change; git's writes went through.
    expect_kinds(&r["changes"], &[("vendor/x/lib.txt", "modified")]);
    assert_eq!(in_sub(&["log", "--format=%s"]), "two\none\n");
    assert_eq!(in_sub(&["status", "--porcelain"]), "");
    // What makes git run programs is not applied, and says so.
    let discarded: Vec<&str> = r["discarded"]
        .as_array()
        .expect("discarded")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        discarded.contains(&"vendor/x/.git/hooks/post-commit")
            && discarded.contains(&"vendor/x/.git/config"),
        "{}",
        reply.json
    );
    assert!(!sub.join(".git/hooks/post-commit").exists());
    assert!(!std::fs::read_to_string(sub.join(".git/config"))
        .expect("config")
        .contains("[alias]"));
}

/// The same for a command's new files, which are linked into place from its upper layer
/// rather than copied: after a kill, all of them are there, whole, or none.
#[test]
fn kill_9_while_a_command_s_new_files_are_linked_in_leaves_all_or_none() {
    let rounds: usize = std::env::var("SNEAKY_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let Some(w) = repo() else { return };
    w.user_config(
        "[tools.shell]\ndenied_commands = []\nextra_allowed_commands = [\"mkdir\", \"seq\", \"split\"]\n",
    );
    let files = 300;
    let make = json!({"command": format!("mkdir new && seq {files} | split -a 3 -l 1 - new/f")})
        .to_string();
    let count = |w: &Ws| -> usize {
        let Ok(entries) = std::fs::read_dir(w.root.join("new")) else {
            return 0;
        };
        let mut n = 0;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(name.starts_with('f'), "a temporary left: {name}");
            let text = std::fs::read_to_string(e.path()).expect("read");
            assert!(
                text.ends_with('\n') && text.trim().parse::<usize>().is_ok(),
                "new/{name} is torn: {text:?}"
            );
            n += 1;
        }
        n
    };
    let started = std::time::Instant::now();
    run(&w, serde_json::from_str(&make).expect("json")).command_ran();
    let full = started.elapsed();
    assert_eq!(count(&w), files);
    w.call("sneaky-undo", json!({})).ok();
    assert!(!w.root.join("new").exists());
    let mut landed = 0;
    for i in 0..rounds {
        let delay = full.mul_f64(1.5 * i as f64 / rounds as f64);
        let (mut child, feeder) = crate::edit_crash::spawn_tool("sneaky-run", &w, make.as_bytes());
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let _ = feeder.join();
        let listed = w.call("sneaky-undo", json!({"list": true}));
        assert!(listed.ok()["changes"].is_array());
        let n = count(&w);
        assert!(n == 0 || n == files, "round {i}: {n} of {files} new files");
        if n == files {
            landed += 1;
            w.call("sneaky-undo", json!({})).ok();
            assert_eq!(count(&w), 0, "round {i}: the undo did not take them back");
        }
        // An empty directory made before the commit, left by the kill, is not a change to
        // keep: it goes before the next round.
        let _ = std::fs::remove_dir(w.root.join("new"));
    }
    eprintln!("new files crash test: {rounds} kills, landed {landed}");
}

#[test]
fn hard_links_the_command_makes_are_kept_and_those_it_breaks_are_named() {
    use std::os::unix::fs::MetadataExt;
    let Some(w) = repo() else { return };
    std::fs::hard_link(w.root.join("b.txt"), w.root.join("b-link.txt")).expect("link");
    let reply = run(
        &w,
        json!({"command": "echo more >> b.txt && echo n > n1.txt && ln n1.txt n2.txt"}),
    );
    let r = reply.command_ran();
    expect_kinds(
        &r["changes"],
        &[
            ("b.txt", "modified"),
            ("n1.txt", "created"),
            ("n2.txt", "created"),
        ],
    );
    // The command's version replaced b.txt; its other name kept the old content, and the
    // result says so.
    assert_eq!(w.read("b.txt"), "bee\nmore\n");
    assert_eq!(w.read("b-link.txt"), "bee\n");
    let stderr = r["stderr"].as_str().expect("stderr");
    assert!(
        stderr.contains("b.txt had other hard links") && stderr.contains("replaced"),
        "{stderr}"
    );
    // Two names the command made for one file are still one file.
    let ino = |p: &str| std::fs::metadata(w.root.join(p)).expect("stat").ino();
    assert_eq!(ino("n1.txt"), ino("n2.txt"));
    // The undo takes all of it back.
    w.call("sneaky-undo", json!({})).ok();
    assert_eq!(w.read("b.txt"), "bee\n");
    assert!(!w.root.join("n1.txt").exists() && !w.root.join("n2.txt").exists());
}

#[test]
fn a_workspace_on_a_bind_mount_gets_the_command_s_new_files() {
    // As in a container: the workspace and the undo history are two bind mounts of one file
    // system, between which a file cannot be linked (EXDEV) though both report one device.
    if !util::require_root("bind-mount a workspace") || !util::require_cmd("mount") {
        return;
    }
    let base = tempfile::tempdir().expect("tempdir");
    let (src, root) = (base.path().join("src"), base.path().join("ws"));
    std::fs::create_dir_all(&src).expect("mkdir");
    std::fs::create_dir_all(&root).expect("mkdir");
    let status = std::process::Command::new("mount")
        .args(["--bind"])
        .arg(&src)
        .arg(&root)
        .status()
        .expect("mount");
    assert!(status.success(), "mount --bind");
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sneaky-run"))
        .current_dir(&root)
        .env("SNEAKY_ROOT", &root)
        .env_remove("SNEAKY_CONFIG")
        .env_remove("CARGO_TARGET_DIR")
        .env("XDG_CONFIG_HOME", base.path().join("xdg"))
        .env("XDG_STATE_HOME", base.path().join("state"))
        .arg("echo made > made.txt")
        .output()
        .expect("run");
    let made = std::fs::read_to_string(root.join("made.txt"));
    let _ = std::process::Command::new("umount").arg(&root).status();
    let reply = util::Reply::parse("sneaky-run", out);
    let r = reply.command_ran();
    assert_eq!(made.as_deref().ok(), Some("made\n"), "{}", reply.json);
    expect_kinds(&r["changes"], &[("made.txt", "created")]);
}

/// The names in the workspace's scratch directory (`<state>/sneaky/undo/<key>/scratch`).
fn scratch_names(w: &Ws) -> Vec<String> {
    let undo = w.outside().join("state/sneaky/undo");
    let mut out: Vec<String> = std::fs::read_dir(&undo)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|key| {
            std::fs::read_dir(key.path().join("scratch"))
                .into_iter()
                .flatten()
        })
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The inode of the spare scratch directory's lock: the same one, the same directory.
fn spare_lock(w: &Ws) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let undo = w.outside().join("state/sneaky/undo");
    std::fs::read_dir(&undo)
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|key| std::fs::metadata(key.path().join("scratch/spare/lock")).ok())
        .map(|m| m.ino())
}

/// What the spare scratch directory holds, its work and upper directories' entries too.
fn spare_entries(w: &Ws) -> Vec<String> {
    let undo = w.outside().join("state/sneaky/undo");
    let spare = std::fs::read_dir(&undo)
        .into_iter()
        .flatten()
        .flatten()
        .map(|key| key.path().join("scratch/spare"))
        .find(|p| p.is_dir())
        .expect("a spare");
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    let mut out = names(&spare);
    for sub in ["upper", "work"] {
        out.extend(
            names(&spare.join(sub))
                .into_iter()
                // The placeholders of the protected paths (socket files) the upper layer holds.
                .filter(|n| {
                    use std::os::unix::fs::FileTypeExt;
                    let at = spare.join(sub).join(n);
                    !(sub == "upper"
                        && std::fs::symlink_metadata(at).is_ok_and(|m| m.file_type().is_socket()))
                })
                .map(|n| format!("{sub}/{n}")),
        );
    }
    out.sort();
    out
}

#[test]
fn a_command_that_changes_nothing_leaves_its_overlay_to_the_next_which_records_as_before() {
    let Some(w) = repo() else { return };
    let reply = run(&w, json!({"command": "true"}));
    assert_eq!(reply.command_ran()["changes"], json!([]), "{}", reply.json);
    assert_eq!(scratch_names(&w), ["spare"]);
    let first = spare_lock(&w).expect("a spare");
    for _ in 0..3 {
        run(&w, json!({"command": "cat a.txt > /dev/null"})).command_ran();
        assert_eq!(spare_lock(&w), Some(first), "the spare was not reused");
        // What the last overlay left in its work directory waits beside it, removed by the
        // next call; nothing piles up.
        assert_eq!(spare_entries(&w), ["lock", "spent", "upper", "work"]);
    }
    // The overlay mounted on a reused directory holds the next command's changes as a new
    // one does, and a dry run's too.
    let reply = run(
        &w,
        json!({"command": "echo new > n.txt && echo more >> a.txt"}),
    );
    expect_kinds(
        &reply.command_ran()["changes"],
        &[("a.txt", "modified"), ("n.txt", "created")],
    );
    assert_eq!(w.read("n.txt"), "new\n");
    let reply = run(
        &w,
        json!({"command": "echo dry > dry.txt", "dry_run": true}),
    );
    expect_kinds(&reply.command_ran()["changes"], &[("dry.txt", "created")]);
    assert!(!w.root.join("dry.txt").exists());
    w.call("sneaky-undo", json!({})).ok();
    assert!(!w.root.join("n.txt").exists());
    assert_eq!(w.read("a.txt"), "one\r\ntwo\r\n");
    // A command that left something in its upper layer leaves no spare of it.
    run(
        &w,
        json!({"command": "mkdir -p nd/sub && echo x > nd/sub/x.txt"}),
    )
    .command_ran();
    assert_eq!(w.read("nd/sub/x.txt"), "x\n");
    assert!(
        scratch_names(&w).iter().all(|n| n == "spare"),
        "{:?}",
        scratch_names(&w)
    );
}

#[test]
fn a_command_that_changes_the_workspace_root_itself_leaves_no_spare_that_shows_it() {
    let Some(w) = repo() else { return };
    let mode = |w: &Ws| {
        let reply = run(w, json!({"command": "stat -c %a ."}));
        reply.command_ran()["stdout"]
            .as_str()
            .expect("stdout")
            .to_string()
    };
    let before = mode(&w);
    assert!(spare_lock(&w).is_some());
    let reply = run(&w, json!({"command": "chmod 700 . && stat -c %a ."}));
    assert_eq!(reply.command_ran()["stdout"], "700\n", "{}", reply.json);
    assert_eq!(mode(&w), before);
}

#[test]
fn commands_at_once_never_share_an_upper_layer() {
    let Some(w) = repo() else { return };
    for round in 0..3 {
        // A spare waits, for one of them to take; the others make their own. Each writes a
        // path git ignores (applied straight, without the history's commit).
        run(&w, json!({"command": "true"})).command_ran();
        let children: Vec<_> = (0..4)
            .map(|i| {
                start_run(
                    &w,
                    &json!({"command": format!("echo {round} > build/c{round}-{i}.o && sleep 0.5")}),
                )
            })
            .collect();
        for (i, child) in children.into_iter().enumerate() {
            let reply = util::Reply::parse("sneaky-run", child.wait_with_output().expect("wait"));
            let r = reply.command_ran();
            assert!(r["untracked"].is_array(), "{}", reply.json);
            // A new name each round: what a command overwrites there is recorded.
            let name = format!("build/c{round}-{i}.o");
            expect_kinds(&r["untracked"], &[(name.as_str(), "created")]);
            assert_eq!(r["changes"], json!([]), "{}", reply.json);
            assert_eq!(w.read(&name), format!("{round}\n"));
        }
        let names = scratch_names(&w);
        assert!(
            names.iter().all(|n| n == "spare"),
            "round {round}: left {names:?}"
        );
    }
}

#[test]
fn commands_started_at_once_each_get_their_overlay() {
    let Some(w) = repo() else { return };
    // Each call removes the directories of killed calls (whose lock is free) as it starts:
    // never one another call is still making.
    for round in 0..8 {
        let children: Vec<_> = (0..8)
            .map(|_| start_run(&w, &json!({"command": "true"})))
            .collect();
        for child in children {
            let reply = util::Reply::parse("sneaky-run", child.wait_with_output().expect("wait"));
            assert_eq!(
                reply.command_ran()["changes"],
                json!([]),
                "round {round}: {}",
                reply.json
            );
        }
    }
}

#[test]
fn a_killed_command_s_overlay_is_removed_by_the_next_call_never_reused() {
    let Some(w) = repo() else { return };
    run(&w, json!({"command": "true"})).command_ran();
    let mut child = start_run(&w, &json!({"command": "echo killed > k.txt && sleep 30"}));
    wait_for_upper(&w, wrote("k.txt"));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        scratch_names(&w).iter().any(|n| n.starts_with("run-")),
        "{:?}",
        scratch_names(&w)
    );
    let reply = run(&w, json!({"command": "cat a.txt"}));
    assert_eq!(reply.command_ran()["changes"], json!([]), "{}", reply.json);
    assert_eq!(scratch_names(&w), ["spare"]);
    let reply = run(&w, json!({"command": "echo next > next.txt"}));
    expect_kinds(&reply.command_ran()["changes"], &[("next.txt", "created")]);
    assert!(!w.root.join("k.txt").exists());
}

/// `request` to `bin` under a soft descriptor limit of 256 (distributions start programs at
/// 1024; lower here so that the test makes fewer files), with the workspace's usual
/// environment.
fn call_with_few_descriptors(w: &Ws, bin: &str, request: Value) -> util::Reply {
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "ulimit -Sn 256 && exec \"$0\""])
        .arg(assert_cmd::cargo::cargo_bin(bin));
    util::fence(&mut cmd, w.dir.path())
        .current_dir(&w.root)
        .env_remove("CARGO_TARGET_DIR")
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
        .env("XDG_STATE_HOME", w.dir.path().join("state"));
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin(request.to_string())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .expect("run");
    util::Reply::parse(bin, out)
}

/// A command that makes more files than the soft descriptor limit (a virtual environment, an
/// `npm install` before any .gitignore covers node_modules): a change holds every file open
/// until all are committed together, and all are applied, then undone.
#[test]
fn more_new_files_than_the_soft_descriptor_limit_are_applied_and_undone() {
    let Some(w) = repo() else { return };
    let r = call_with_few_descriptors(
        &w,
        "sneaky-run",
        json!({"command": "mkdir many && cd many && seq 1 600 | xargs touch", "timeout": 120}),
    );
    let result = r.ok();
    assert_eq!(
        result["changes"].as_array().map(Vec::len),
        Some(601),
        "{}",
        r.json
    );
    assert_eq!(
        std::fs::read_dir(w.root.join("many"))
            .expect("many")
            .count(),
        600
    );
    let undone = call_with_few_descriptors(&w, "sneaky-undo", json!({}));
    undone.ok();
    assert!(!w.root.join("many").exists(), "{}", undone.json);
}

/// What git ignores that a command overwrites is recorded like a deletion, and undo brings the
/// old content back; what it creates there, and what it overwrites in a tagged cache, is not.
#[test]
fn ignored_files_a_command_overwrites_are_undone_byte_for_byte() {
    let Some(w) = repo() else { return };
    w.write(".gitignore", "build/\n*.log\n.env\ndata/\ntarget/\n")
        .write(".env", "SECRET=hunter2\n")
        .write("data/notes.txt", "kept by hand\n")
        .write(
            "target/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .write("target/debug/app", "a build\n");
    let reply = run(
        &w,
        json!({"command": "echo SECRET=lost > .env && echo more >> data/notes.txt && \
                           echo new > data/new.txt && echo rebuilt > target/debug/app"}),
    );
    let r = reply.command_ran();
    assert_eq!(w.read(".env"), "SECRET=lost\n");
    let recorded = kinds(&r["changes"]);
    for path in [".env", "data/notes.txt"] {
        assert_eq!(
            recorded.get(path).map(String::as_str),
            Some("modified"),
            "{path}: {}",
            reply.json
        );
    }
    let untracked = kinds(&r["untracked"]);
    assert_eq!(
        untracked.get("data/new.txt").map(String::as_str),
        Some("created")
    );
    assert_eq!(
        untracked.get("target/debug/app").map(String::as_str),
        Some("modified"),
        "{}",
        reply.json
    );
    let back = w.call("sneaky-undo", json!({}));
    assert_eq!(back.ok()["undone"], r["change_id"], "{}", back.json);
    assert_eq!(w.read(".env"), "SECRET=hunter2\n");
    assert_eq!(w.read("data/notes.txt"), "kept by hand\n");
    assert_eq!(
        w.read("target/debug/app"),
        "rebuilt\n",
        "build output stays"
    );
}

/// What git ignores that a command deletes is recorded (the content nobody can make again
/// from the repository: a `.env`, data), and undo brings it back byte for byte, mode included;
/// a directory tagged as a cache (cargo's `target/`, with its `CACHEDIR.TAG`) is build output
/// and is not.
#[test]
fn ignored_files_a_command_deletes_are_undone_byte_for_byte() {
    let Some(w) = repo() else { return };
    w.write(".gitignore", "build/\n*.log\n.env\ndata/\ntarget/\n")
        .write(".env", "API_URL=http://localhost\nSECRET=hunter2\n")
        .write("data/sub/notes.txt", "kept by hand\n")
        .write(
            "target/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n# cargo's\n",
        )
        .write("target/debug/app", "a build\n");
    let blob: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    std::fs::write(w.root.join("data/blob.bin"), &blob).expect("write");
    std::fs::set_permissions(
        w.root.join("data/blob.bin"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("chmod");
    let ignored_now = |w: &Ws| {
        util::tree(&w.root, false)
            .into_iter()
            .filter(|(p, _)| p == ".env" || p.starts_with("data"))
            .collect::<BTreeMap<_, _>>()
    };
    let before = ignored_now(&w);
    for command in ["rm -rf .env data/ target/", "git clean -fdxq"] {
        let reply = run(&w, json!({ "command": command }));
        let r = reply.command_ran();
        assert!(!w.root.join(".env").exists() && !w.root.join("data").exists());
        assert!(!w.root.join("target").exists(), "{command}");
        let recorded = kinds(&r["changes"]);
        for path in [
            ".env",
            "data",
            "data/blob.bin",
            "data/sub",
            "data/sub/notes.txt",
        ] {
            assert_eq!(
                recorded.get(path).map(String::as_str),
                Some("deleted"),
                "{command}: {path} recorded: {}",
                reply.json
            );
        }
        let build_output = kinds(&r["untracked"]);
        assert_eq!(
            build_output.get("target/debug/app").map(String::as_str),
            Some("deleted"),
            "{command}: a tagged cache is not recorded: {}",
            reply.json
        );
        let back = w.call("sneaky-undo", json!({}));
        assert_eq!(back.ok()["undone"], r["change_id"], "{}", back.json);
        assert_same(&ignored_now(&w), &before, command);
        assert!(
            !w.root.join("target").exists(),
            "{command}: build output stays gone"
        );
        w.write(
            "target/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n",
        )
        .write("target/debug/app", "a build\n");
    }
}
