//! undo: every edit tool's change taken back byte-exact (content, mode, links, directories), a
//! later change by anyone refused as a conflict, an undo undone, the list, the bound, and a
//! history that `git status` never sees.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use crate::util::{self, Ws};

fn undo(w: &Ws, request: Value) -> util::Reply {
    w.call("sneaky-undo", request)
}

/// Run `edit`, check it recorded a change, undo it, and check the tree is as before.
fn undone_exactly(w: &Ws, bin: &str, request: Value) -> String {
    let before = util::tree(&w.root, false);
    let reply = w.call(bin, request);
    let change = reply.ok()["change_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{bin}: no change_id in {}", reply.json))
        .to_string();
    assert_ne!(util::tree(&w.root, false), before, "{bin} changed nothing");
    let back = undo(w, json!({}));
    let result = back.ok();
    assert_eq!(result["undone"], change.as_str(), "{}", back.json);
    assert_eq!(
        util::tree(&w.root, false),
        before,
        "{bin}: not restored byte-exact"
    );
    result["change_id"]
        .as_str()
        .expect("the undo's id")
        .to_string()
}

#[test]
fn every_edit_tool_is_undone_byte_exact() {
    let w = util::ws();
    w.write("a.txt", "one\r\ntwo\r\n")
        .write("keep/b.txt", "b\n");
    std::fs::set_permissions(w.root.join("a.txt"), std::fs::Permissions::from_mode(0o750))
        .expect("chmod");
    w.link("a.txt", "link");
    undone_exactly(
        &w,
        "sneaky-write",
        json!({"file_path": "new/deep/n.txt", "content": "n\n"}),
    );
    undone_exactly(
        &w,
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "replaced\n"}),
    );
    undone_exactly(
        &w,
        "sneaky-replace",
        json!({"file_path": "a.txt", "old_str": "two", "new_str": "deux"}),
    );
    undone_exactly(&w, "sneaky-rm", json!({"file_path": "a.txt"}));
    undone_exactly(&w, "sneaky-rm", json!({"file_path": "link"}));
    undone_exactly(&w, "sneaky-mkdir", json!({"directory_path": "m/n/o"}));
    undone_exactly(
        &w,
        "sneaky-patch",
        json!({"file_path": "keep/b.txt", "patch": "@@ -1 +1 @@\n-b\n+B\n"}),
    );
    undone_exactly(
        &w,
        "sneaky-patch",
        json!({"file_path": "made/c.txt", "patch": "--- /dev/null\n+++ b/made/c.txt\n@@ -0,0 +1 @@\n+c\n"}),
    );
    // One multi-file patch: a change, a new file in a new directory, a deletion.
    let patch = "--- a/keep/b.txt\n+++ b/keep/b.txt\n@@ -1 +1 @@\n-b\n+bee\n\
                 --- /dev/null\n+++ b/fresh/f.txt\n@@ -0,0 +1 @@\n+f\n\
                 --- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\r\n-two\r\n";
    undone_exactly(&w, "sneaky-patch", json!({"patch": patch}));
    // Binary content (not written by a tool, but restored by one).
    std::fs::write(w.root.join("bin.dat"), [0u8, 159, 146, 150, 0, 255]).expect("write");
    undone_exactly(&w, "sneaky-rm", json!({"file_path": "bin.dat"}));
}

#[test]
fn a_later_change_is_a_conflict_and_nothing_changes() {
    let w = util::ws();
    w.write("a.txt", "one\n");
    w.call(
        "sneaky-replace",
        json!({"file_path": "a.txt", "old_str": "one", "new_str": "two"}),
    )
    .ok();
    w.write("a.txt", "two\nand a person's line\n");
    let message = undo(&w, json!({})).err("conflict", 1);
    assert!(message.contains("a.txt"), "{message}");
    assert!(message.contains("+and a person's line"), "{message}");
    assert_eq!(w.read("a.txt"), "two\nand a person's line\n");
    // write_file keeps what it left apart from what undo restores from: shown all the same,
    // and with it gone (a crash may lose it), the conflict is told without the diff.
    w.call(
        "sneaky-write",
        json!({"file_path": "b.txt", "content": "three\n"}),
    )
    .ok();
    w.write("b.txt", "three\nand another\n");
    let message = undo(&w, json!({})).err("conflict", 1);
    assert!(message.contains("+and another"), "{message}");
    let state = w.outside().join("state");
    for (path, (kind, _, _)) in util::tree(&state, false) {
        if path.contains("/shown/") && kind == 'f' {
            std::fs::remove_file(state.join(path)).expect("remove");
        }
    }
    let message = undo(&w, json!({})).err("conflict", 1);
    assert!(message.contains("b.txt was changed after"), "{message}");
    assert!(!message.contains("+and another"), "{message}");
    assert_eq!(w.read("b.txt"), "three\nand another\n");
    w.write("b.txt", "three\n");
    undo(&w, json!({})).ok();
    // A file put inside a directory the change made keeps that directory.
    w.call("sneaky-mkdir", json!({"directory_path": "d"})).ok();
    w.write("d/theirs.txt", "x\n");
    let message = undo(&w, json!({})).err("conflict", 1);
    assert!(message.contains("d/theirs.txt"), "{message}");
    assert_eq!(w.read("d/theirs.txt"), "x\n");
}

#[test]
fn an_undo_is_a_change_and_can_be_undone() {
    let w = util::ws();
    w.write("a.txt", "one\n");
    let edit = w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "two\n"}),
    );
    let first = edit.ok()["change_id"].as_str().expect("id").to_string();
    let back = undo(&w, json!({"change_id": first}));
    let undo_id = back.ok()["change_id"].as_str().expect("id").to_string();
    assert_eq!(w.read("a.txt"), "one\n");
    let redo = undo(&w, json!({}));
    assert_eq!(redo.ok()["undone"], undo_id.as_str());
    assert_eq!(w.read("a.txt"), "two\n");
    let list = undo(&w, json!({"list": true}));
    let changes = list.ok()["changes"].as_array().expect("changes").clone();
    let tools: Vec<&str> = changes.iter().filter_map(|c| c["tool"].as_str()).collect();
    assert_eq!(tools, ["undo", "undo", "write_file"]);
    assert_eq!(changes[1]["undoes"], first.as_str());
    assert_eq!(changes[0]["paths"], json!(["a.txt"]));
}

/// Turn every digest of the history's entries into the SHA-256 that entries were written with
/// before BLAKE3, and rename the kept copies to match: the history as an older version left it.
fn as_written_before_blake3(w: &Ws) {
    use sha2::Digest as _;
    let undo_dir = w.outside().join("state/sneaky/undo");
    let history = std::fs::read_dir(&undo_dir)
        .expect("undo")
        .flatten()
        .next()
        .expect("a history")
        .path();
    let mut renamed = 0;
    for entry in std::fs::read_dir(history.join("entries"))
        .expect("entries")
        .flatten()
    {
        let mut json: Value =
            serde_json::from_slice(&std::fs::read(entry.path()).expect("read")).expect("json");
        for p in json["paths"].as_array_mut().expect("paths") {
            for side in ["before", "after"] {
                let state = p[side].as_object_mut().expect("state");
                let Some(Value::String(hex)) = state.remove("blake3") else {
                    continue;
                };
                let sha256 = |bytes: &[u8]| -> String {
                    sha2::Sha256::digest(bytes)
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect()
                };
                // A content no copy is kept of is what the workspace holds (the edit's result).
                let path = p["path"].as_str().expect("path").to_string();
                let mut old = sha256(&std::fs::read(w.root.join(&path)).unwrap_or_default());
                for dir in ["blobs", "shown"] {
                    let copy = history.join(dir).join(&hex);
                    if let Ok(bytes) = std::fs::read(&copy) {
                        old = sha256(&bytes);
                        std::fs::rename(&copy, history.join(dir).join(&old)).expect("rename");
                        renamed += 1;
                    }
                }
                let state = p[side].as_object_mut().expect("state");
                state.insert("sha256".into(), Value::String(old));
            }
        }
        std::fs::write(entry.path(), serde_json::to_vec(&json).expect("json")).expect("write");
    }
    assert!(renamed > 0);
}

#[test]
fn a_history_written_before_blake3_still_undoes_and_notices_changes() {
    let w = util::ws();
    w.write("a.txt", "one\n").write("b.txt", "bee\n");
    let id = |r: util::Reply| r.ok()["change_id"].as_str().expect("id").to_string();
    let write = id(w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "two\n"}),
    ));
    let replace = id(w.call(
        "sneaky-replace",
        json!({"file_path": "b.txt", "old_str": "bee", "new_str": "b"}),
    ));
    as_written_before_blake3(&w);
    let list = undo(&w, json!({"list": true})).ok()["changes"].clone();
    assert_eq!(list.as_array().expect("list").len(), 2, "{list}");
    // Unchanged since: undone byte-exact.
    undo(&w, json!({"change_id": replace})).ok();
    assert_eq!(w.read("b.txt"), "bee\n");
    // Changed since: a conflict, its difference shown from the older copy.
    w.write("a.txt", "two\nand a person's line\n");
    let message = undo(&w, json!({"change_id": write})).err("conflict", 1);
    assert!(message.contains("+and a person's line"), "{message}");
    w.write("a.txt", "two\n");
    let back = undo(&w, json!({"change_id": write}));
    let undo_id = back.ok()["change_id"].as_str().expect("id").to_string();
    assert_eq!(w.read("a.txt"), "one\n");
    // The undo's own entry holds both kinds of digest: it is undone too.
    assert_eq!(undo(&w, json!({})).ok()["undone"], undo_id.as_str());
    assert_eq!(w.read("a.txt"), "two\n");
}

#[test]
fn a_dry_run_shows_the_diff_and_changes_nothing() {
    let w = util::ws();
    w.write("a.txt", "one\n");
    w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "two\n"}),
    )
    .ok();
    let dry = undo(&w, json!({"dry_run": true}));
    let r = dry.ok();
    assert_eq!(r["dry_run"], true);
    assert!(r.get("change_id").is_none(), "{}", dry.json);
    assert!(
        r["diff"].as_str().expect("diff").contains("-two\n+one\n"),
        "{}",
        dry.json
    );
    assert_eq!(w.read("a.txt"), "two\n");
    assert_eq!(
        undo(&w, json!({"list": true})).ok()["changes"]
            .as_array()
            .expect("list")
            .len(),
        1
    );
}

#[test]
fn nothing_to_undo_and_unknown_changes_are_not_found() {
    let w = util::ws();
    undo(&w, json!({})).err("not_found", 1);
    undo(&w, json!({"change_id": "c1-2-3"})).err("not_found", 1);
    undo(&w, json!({"list": true, "dry_run": true})).err("invalid_args", 2);
}

#[test]
fn the_history_is_bounded_and_says_what_it_forgot() {
    let w = util::ws();
    // The user's configuration: a workspace's own sneaky.toml cannot change the bound.
    w.user_config("[undo]\nmax_bytes = 3000\n");
    let mut ids = Vec::new();
    let mut forgotten = 0;
    for i in 0..6 {
        let content = format!("{i}").repeat(1000);
        let r = w.call(
            "sneaky-write",
            json!({"file_path": "big.txt", "content": content}),
        );
        let result = r.ok();
        ids.push(result["change_id"].as_str().expect("id").to_string());
        forgotten += result["forgotten_changes"].as_u64().unwrap_or(0);
    }
    assert!(forgotten > 0, "nothing forgotten within 3000 bytes");
    undo(&w, json!({"change_id": ids[0]})).err("not_found", 1);
    let kept = undo(&w, json!({"list": true})).ok()["changes"]
        .as_array()
        .expect("list")
        .len();
    assert_eq!(kept as u64 + forgotten, 6);
    undo(&w, json!({})).ok();
    assert_eq!(w.read("big.txt"), "4".repeat(1000));
}

#[test]
fn git_status_never_sees_the_history() {
    if !util::require_cmd("git") {
        return;
    }
    let w = util::ws();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&w.root)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    w.write("a.txt", "one\n");
    git(&["add", "a.txt"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "one",
    ]);
    w.call(
        "sneaky-write",
        json!({"file_path": "a.txt", "content": "two\n"}),
    )
    .ok();
    assert_eq!(git(&["status", "--porcelain"]), " M a.txt\n");
    undo(&w, json!({})).ok();
    assert_eq!(git(&["status", "--porcelain", "--ignored"]), "");
}

/// `sneaky-undo` killed with SIGKILL at spread-out moments: the file is always the old content or
/// the new, never torn, and once the next tool has settled what the killed one left, the history
/// still undoes: the newest change is taken back and the file flips to the other content.
#[test]
fn kill_9_during_an_undo_leaves_old_or_new_and_the_history_still_undoes() {
    let rounds: usize = std::env::var("SNEAKY_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let w = util::ws();
    w.user_config("max_file_size_bytes = 67108864\n");
    let size = 2 << 20;
    let contents = [
        format!("{}\n", "A".repeat(size)),
        format!("{}\n", "B".repeat(size)),
    ];
    w.write("big.txt", &contents[0]);
    w.call(
        "sneaky-write",
        json!({"file_path": "big.txt", "content": contents[1]}),
    )
    .ok();
    let which = |w: &Ws| {
        let now = std::fs::read_to_string(w.root.join("big.txt")).expect("read");
        contents
            .iter()
            .position(|c| *c == now)
            .unwrap_or_else(|| panic!("big.txt is torn: {} bytes", now.len()))
    };
    let started = std::time::Instant::now();
    undo(&w, json!({})).ok();
    let full = started.elapsed();
    let mut seen = [0, 0];
    for i in 0..rounds {
        let before = which(&w);
        let delay = full.mul_f64(1.5 * i as f64 / rounds as f64);
        let (mut child, feeder) = crate::edit_crash::spawn_tool("sneaky-undo", &w, b"{}");
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let _ = feeder.join();
        // Old or new, never torn (`which` panics otherwise).
        which(&w);
        // The next call settles what the killed one left: a restore killed before its commit
        // point is rolled back, one past it is kept and recorded. Then an undo must flip the
        // file.
        let listed = undo(&w, json!({"list": true}));
        assert!(listed.ok()["changes"].is_array());
        let after = which(&w);
        seen[usize::from(after != before)] += 1;
        undo(&w, json!({})).ok();
        assert_ne!(
            which(&w),
            after,
            "round {i}: the undo after a kill did not take back"
        );
    }
    eprintln!(
        "undo crash test: {rounds} kills over 0..{:?}: undo not landed {}, landed {}",
        full.mul_f64(1.5),
        seen[0],
        seen[1]
    );
}
