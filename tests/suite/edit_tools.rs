//! The edit tools against hostile paths, protected files, permissions, hard links, dry runs,
//! size and binary limits, and the messages a model gets when an edit does not apply.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use serde_json::json;

use crate::util;

/// Names of entries in a directory of the workspace (temporary files would show here).
fn entries(w: &util::Ws, rel: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(w.root.join(rel))
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn nothing_outside_the_root_is_written_created_or_deleted() {
    let w = util::ws();
    let out = w.outside().to_path_buf();
    w.link(out.join("secret.txt"), "to_secret");
    w.link(&out, "to_outside_dir");
    w.link("../ws_evil", "rel_out");
    w.link("../dangling_new.txt", "dangling_out");
    w.link("loop_b", "loop_a");
    w.link("loop_a", "loop_b");
    let abs_outside = out.join("new.txt");
    for (bin, args) in [
        (
            "sneaky-write",
            json!({"file_path": "../new.txt", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": abs_outside.to_str().expect("utf8"), "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "to_secret", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "to_outside_dir/new.txt", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "rel_out/deeper/new.txt", "content": "x"}),
        ),
        (
            "sneaky-mkdir",
            json!({"directory_path": "to_outside_dir/newdir"}),
        ),
        ("sneaky-mkdir", json!({"directory_path": "../newdir"})),
        (
            "sneaky-rm",
            json!({"file_path": "to_outside_dir/secret.txt"}),
        ),
        ("sneaky-rm", json!({"file_path": "../secret.txt"})),
        (
            "sneaky-replace",
            json!({"file_path": "to_secret", "old_str": "SECRET", "new_str": "x"}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": "to_secret", "patch": "@@ -1 +1 @@\n-OUTSIDE SECRET\n+x\n"}),
        ),
    ] {
        let reply = w.call(bin, args.clone());
        reply.err("outside_workspace", 3);
    }
    assert_eq!(
        std::fs::read_to_string(out.join("secret.txt")).expect("read"),
        "OUTSIDE SECRET\n"
    );
    assert!(!out.join("new.txt").exists());
    assert!(!out.join("dangling_new.txt").exists());
    let msg = w
        .call(
            "sneaky-write",
            json!({"file_path": "loop_a", "content": "x"}),
        )
        .err("io_error", 1);
    assert!(msg.contains("symbolic links"), "{msg}");
    assert!(!out.join("newdir").exists());
    assert!(!out.join("ws_evil/deeper").exists());
}

#[test]
fn links_inside_are_followed_for_edits_and_removed_by_delete() {
    let w = util::ws();
    w.write("real.txt", "one\ntwo\n");
    w.link("real.txt", "alias.txt");
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "alias.txt", "old_str": "two", "new_str": "2"}),
    );
    assert_eq!(r.ok()["resolved_path"], "real.txt");
    assert_eq!(w.read("real.txt"), "one\n2\n");
    assert!(std::fs::symlink_metadata(w.root.join("alias.txt"))
        .expect("lstat")
        .file_type()
        .is_symlink());
    let r = w.call("sneaky-rm", json!({"file_path": "alias.txt"}));
    assert_eq!(r.ok()["kind"], "link");
    assert_eq!(w.read("real.txt"), "one\n2\n");
    // A link to outside is removed; its target stays.
    w.link(w.outside().join("secret.txt"), "out_link");
    w.call("sneaky-rm", json!({"file_path": "out_link"})).ok();
    assert!(w.outside().join("secret.txt").exists());
}

#[test]
fn workspace_config_and_active_config_are_never_changed() {
    let w = util::ws();
    w.write("sneaky.toml", "max_file_size_bytes = 1048576\n");
    w.write("sub/keep.txt", "x\n");
    for (bin, args) in [
        (
            "sneaky-write",
            json!({"file_path": "sneaky.toml", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "./sub/../sneaky.toml", "content": "x"}),
        ),
        ("sneaky-rm", json!({"file_path": "sneaky.toml"})),
        (
            "sneaky-replace",
            json!({"file_path": "sneaky.toml", "old_str": "1048576", "new_str": "1"}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": "sneaky.toml", "patch": "@@ -1 +1 @@\n-max_file_size_bytes = 1048576\n+x\n"}),
        ),
    ] {
        let reply = w.call(bin, args);
        reply.err("protected_path", 3);
    }
    // Through a directory still to be made, `..` is refused before the name is reached.
    let gone = json!({"file_path": "./gone/../sneaky.toml", "content": "x"});
    w.call("sneaky-write", gone).err("invalid_args", 2);
    assert_eq!(w.read("sneaky.toml"), "max_file_size_bytes = 1048576\n");
    // The active config elsewhere, reached through a link and by its own name.
    w.write("conf/active.toml", "max_output_bytes = 65536\n");
    w.link("conf/active.toml", "alias.toml");
    for (path, args) in [
        (
            "conf/active.toml",
            vec!["--config", "conf/active.toml", "conf/active.toml"],
        ),
        (
            "alias.toml",
            vec!["--config", "conf/active.toml", "alias.toml"],
        ),
    ] {
        let reply = w.call_raw("sneaky-write", &args, b"overwritten");
        reply.err("protected_path", 3);
        let _ = path;
    }
    assert_eq!(w.read("conf/active.toml"), "max_output_bytes = 65536\n");
    // A directory named sneaky.toml in the root is refused too.
    std::fs::remove_file(w.root.join("sneaky.toml")).expect("rm");
    w.call("sneaky-mkdir", json!({"directory_path": "sneaky.toml"}))
        .err("protected_path", 3);
    // Elsewhere the name is an ordinary file.
    w.call(
        "sneaky-write",
        json!({"file_path": "sub/sneaky.toml", "content": "x = 1\n"}),
    )
    .ok();
}

#[test]
fn a_refused_edit_leaves_no_directory_behind() {
    let w = util::ws();
    w.write("old/keep.txt", "x\n");
    // The missing directories are made one by one; `.git` is refused when reached, and what
    // was made before it is taken back.
    for (bin, args) in [
        (
            "sneaky-write",
            json!({"file_path": "fresh/deep/.git/x.txt", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "old/new/.GIT/hooks/x", "content": "x"}),
        ),
        ("sneaky-mkdir", json!({"directory_path": "made/.git/hooks"})),
        // The new file's own name: the directories are made first, then the name is refused.
        (
            "sneaky-write",
            json!({"file_path": "newdir/.git", "content": "gitdir: ../evil\n"}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": "q1/q2/.git", "patch": "--- /dev/null\n+++ b/q1/q2/.git\n@@ -0,0 +1 @@\n+gitdir: ../evil\n"}),
        ),
        (
            "sneaky-patch",
            json!({"patch": "--- /dev/null\n+++ b/r1/ok.txt\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/r1/r2/.Git\n@@ -0,0 +1 @@\n+x\n"}),
        ),
    ] {
        // A dry run makes nothing, and answers as the edit would.
        if bin != "sneaky-mkdir" {
            let mut dry = args.clone();
            dry["dry_run"] = json!(true);
            w.call(bin, dry).err("protected_path", 3);
        }
        w.call(bin, args).err("protected_path", 3);
    }
    assert_eq!(entries(&w, "."), vec!["old"]);
    assert_eq!(entries(&w, "old"), vec!["keep.txt"]);
    // Only the root's sneaky.toml is the configuration; one in a new directory is a file.
    let dry = json!({"file_path": "cfg/sneaky.toml", "content": "x", "dry_run": true});
    assert_eq!(w.call("sneaky-write", dry).ok()["created"], true);
}

#[test]
fn a_path_may_not_climb_out_of_a_directory_the_edit_would_make() {
    let w = util::ws();
    w.write("a.txt", "x\n");
    std::fs::create_dir(w.root.join(".git")).expect("mkdir .git");
    // `new/sub/../../a.txt` would make new/sub only to leave them, and a dry run could not tell
    // what it reaches: refused, dry or not, before anything is made.
    let creates = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+z\n";
    for dry_run in [true, false] {
        for (bin, args) in [
            (
                "sneaky-write",
                json!({"file_path": "new/sub/../../a.txt", "content": "y\n"}),
            ),
            (
                "sneaky-write",
                json!({"file_path": "new/../.git/x", "content": "x"}),
            ),
            (
                "sneaky-patch",
                json!({"file_path": "new/../b.txt", "patch": creates}),
            ),
        ] {
            let mut args = args;
            args["dry_run"] = json!(dry_run);
            w.call(bin, args).err("invalid_args", 2);
        }
    }
    w.call("sneaky-mkdir", json!({"directory_path": "new/../b"}))
        .err("invalid_args", 2);
    // Climbing above the root that way is outside, as through directories that exist.
    for dry_run in [true, false] {
        let args = json!({"file_path": "new/../../x.txt", "content": "x", "dry_run": dry_run});
        w.call("sneaky-write", args).err("outside_workspace", 3);
    }
    w.call(
        "sneaky-mkdir",
        json!({"directory_path": "new/sub/../../../b"}),
    )
    .err("outside_workspace", 3);
    assert_eq!(entries(&w, "."), vec![".git", "a.txt"]);
    assert_eq!(w.read("a.txt"), "x\n");
    // Through a directory that exists, `..` is the kernel's: old/../a.txt is a.txt.
    std::fs::create_dir(w.root.join("old")).expect("mkdir old");
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "old/../a.txt", "content": "y\n"}),
    );
    assert_eq!(r.ok()["resolved_path"], "a.txt");
    // An edit of what exists goes by the kernel's paths: `new/..` names nothing.
    let replace = json!({"file_path": "new/../a.txt", "old_str": "y", "new_str": "z"});
    w.call("sneaky-replace", replace).err("not_found", 1);
}

#[test]
fn permissions_owner_and_other_hard_links_are_kept() {
    let w = util::ws();
    w.write("script.sh", "#!/bin/sh\necho old\n");
    let path = w.root.join("script.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).expect("chmod");
    std::fs::hard_link(&path, w.root.join("other_link.sh")).expect("hard link");
    let ino_before = std::fs::metadata(&path).expect("stat").ino();
    w.call(
        "sneaky-replace",
        json!({"file_path": "script.sh", "old_str": "old", "new_str": "new"}),
    )
    .ok();
    let meta = std::fs::metadata(&path).expect("stat");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o750);
    assert_ne!(
        meta.ino(),
        ino_before,
        "replaced by rename, not written through"
    );
    assert_eq!(w.read("script.sh"), "#!/bin/sh\necho new\n");
    assert_eq!(w.read("other_link.sh"), "#!/bin/sh\necho old\n");
    assert_eq!(entries(&w, "."), vec!["other_link.sh", "script.sh"]);
}

#[test]
fn write_file_creates_and_reports() {
    let w = util::ws();
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a/b/c.txt", "content": "x\n"}),
    );
    let res = r.ok();
    assert_eq!(res["created"], true);
    assert_eq!(res["bytes_written"], 2);
    assert_eq!(res["path"], "a/b/c.txt");
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a/b/c.txt", "content": "y\n"}),
    );
    assert_eq!(r.ok()["created"], false);
    assert!(r.ok()["diff"].as_str().expect("diff").contains("-x\n+y\n"));
    // Flags, with the content on stdin.
    let r = w.call_raw("sneaky-write", &["notes.md"], b"# notes\n");
    assert_eq!(r.ok()["created"], true);
    assert_eq!(w.read("notes.md"), "# notes\n");
    // A directory is not a file; a trailing slash names none.
    w.call("sneaky-write", json!({"file_path": "a/b", "content": "x"}))
        .err("not_a_file", 1);
    w.call(
        "sneaky-write",
        json!({"file_path": "a/new/", "content": "x"}),
    )
    .err("invalid_args", 2);
    // A new file gets the usual mode (0666 less the umask), not the temp file's 0600.
    let mode = std::fs::metadata(w.root.join("notes.md"))
        .expect("stat")
        .permissions()
        .mode();
    assert_ne!(mode & 0o044, 0, "mode {mode:o}");
}

#[test]
fn limits_binary_and_dry_run() {
    let w = util::ws();
    w.write("sneaky.toml", "max_file_size_bytes = 100\n");
    w.call(
        "sneaky-write",
        json!({"file_path": "big.txt", "content": "x".repeat(101)}),
    )
    .err("file_too_large", 1);
    w.call(
        "sneaky-write",
        json!({"file_path": "nul.txt", "content": "a\u{0}b"}),
    )
    .err("binary_file", 1);
    std::fs::write(w.root.join("bin.dat"), b"ab\0cd\n").expect("write");
    w.call(
        "sneaky-replace",
        json!({"file_path": "bin.dat", "old_str": "ab", "new_str": "x"}),
    )
    .err("binary_file", 1);
    w.write("f.txt", &"y".repeat(90));
    w.call(
        "sneaky-replace",
        json!({"file_path": "f.txt", "old_str": "y", "new_str": "zz", "replace_all": true}),
    )
    .err("file_too_large", 1);
    w.write("g.txt", "a\nb\n");
    for (bin, args) in [
        (
            "sneaky-write",
            json!({"file_path": "g.txt", "content": "c\n", "dry_run": true}),
        ),
        (
            "sneaky-replace",
            json!({"file_path": "g.txt", "old_str": "a", "new_str": "A", "dry_run": true}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": "g.txt", "patch": "@@ -1,2 +1,2 @@\n-a\n+A\n b\n", "dry_run": true}),
        ),
    ] {
        let r = w.call(bin, args);
        let res = r.ok();
        assert_eq!(res["dry_run"], true);
        assert!(res["diff"].as_str().expect("diff").contains("+"), "{res}");
    }
    assert_eq!(w.read("g.txt"), "a\nb\n");
    w.call(
        "sneaky-write",
        json!({"file_path": "new/h.txt", "content": "c\n", "dry_run": true}),
    )
    .ok();
    assert!(!w.root.join("new").exists());
    assert_eq!(
        entries(&w, "."),
        vec!["bin.dat", "f.txt", "g.txt", "sneaky.toml"]
    );
}

#[test]
fn str_replace_explains_misses() {
    let w = util::ws();
    w.write(
        "app.py",
        "def main():\n\tif ready:\n\t\trun()\n\n\nx = 1\nx = 1\nx = 1\n",
    );
    // Indentation that differs, and not by one uniform shift: the hint says where.
    let msg = w
        .call("sneaky-replace", json!({"file_path": "app.py", "old_str": "  if ready:\n        run()", "new_str": "go()"}))
        .err("no_match", 1);
    assert!(
        msg.contains("lines 2-3") && msg.contains("whitespace"),
        "{msg}"
    );
    // Tabs written as spaces: forgiven (one place), new_str re-indented, and said so.
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "app.py", "old_str": "    if ready:\n        run()", "new_str": "    if ready:\n        run(1)", "dry_run": true}),
    );
    assert_eq!(r.ok()["rung"], "indentation", "{}", r.json);
    assert!(
        r.ok()["diff"]
            .as_str()
            .expect("diff")
            .contains("+\t\trun(1)"),
        "{}",
        r.json
    );
    let msg = w
        .call(
            "sneaky-replace",
            json!({"file_path": "app.py", "old_str": "def main():\n\tif steady:", "new_str": "x"}),
        )
        .err("no_match", 1);
    assert!(msg.contains("line 2"), "{msg}");
    let msg = w
        .call(
            "sneaky-replace",
            json!({"file_path": "app.py", "old_str": "x = 1", "new_str": "x = 2"}),
        )
        .err("multiple_matches", 1);
    assert!(msg.contains("3 times") && msg.contains("6, 7, 8"), "{msg}");
    w.call(
        "sneaky-replace",
        json!({"file_path": "app.py", "old_str": "", "new_str": "x"}),
    )
    .err("invalid_args", 2);
    w.call(
        "sneaky-replace",
        json!({"file_path": "missing.py", "old_str": "a", "new_str": "b"}),
    )
    .err("not_found", 1);
    // Deleting text, and the line reported.
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "app.py", "old_str": "\n\n\nx = 1\nx = 1\n", "new_str": "\n"}),
    );
    assert_eq!(r.ok()["line"], 3);
    assert_eq!(
        w.read("app.py"),
        "def main():\n\tif ready:\n\t\trun()\nx = 1\n"
    );
}

#[test]
fn patch_apply_reports_offsets_fuzz_and_rejections() {
    let w = util::ws();
    let body: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    w.write("f.txt", &body);
    // Line numbers off by 10: found by context, reported as an offset.
    let patch =
        "--- a/f.txt\n+++ b/f.txt\n@@ -10,3 +10,3 @@\n line 20\n-line 21\n+LINE 21\n line 22\n";
    let r = w.call_raw("sneaky-patch", &["f.txt"], patch.as_bytes());
    let res = r.ok();
    assert_eq!(res["hunks_applied"], 1);
    assert_eq!(res["adjustments"][0]["offset"], 10);
    assert_eq!(res["adjustments"][0]["fuzz"], 0);
    assert!(w.read("f.txt").contains("LINE 21\n"));
    // A changed outer context line: applied with fuzz 1, and said so.
    let patch = "@@ -29,7 +29,7 @@\n line 29X\n line 30\n line 31\n-line 32\n+LINE 32\n line 33\n line 34\n line 35\n";
    let r = w.call(
        "sneaky-patch",
        json!({"file_path": "f.txt", "patch": patch}),
    );
    let res = r.ok();
    assert!(
        res["adjustments"][0]["fuzz"].as_u64().expect("fuzz") >= 1,
        "{res}"
    );
    // A rejected second hunk: nothing changes, the message names it and what it expected.
    let before = w.read("f.txt");
    let patch = "@@ -1,2 +1,2 @@\n-line 1\n+LINE 1\n line 2\n@@ -5,2 +5,2 @@\n-line five\n+LINE 5\n line 6\n";
    let msg = w
        .call(
            "sneaky-patch",
            json!({"file_path": "f.txt", "patch": patch}),
        )
        .err("patch_rejected", 1);
    assert!(
        msg.contains("hunk 2 of 2")
            && msg.contains("@@ -5,2 +5,2 @@")
            && msg.contains("|line five"),
        "{msg}"
    );
    assert_eq!(w.read("f.txt"), before);
    // Not a patch at all, and a patch for several files.
    w.call(
        "sneaky-patch",
        json!({"file_path": "f.txt", "patch": "hello"}),
    )
    .err("patch_rejected", 1);
    let two = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
    let msg = w
        .call("sneaky-patch", json!({"file_path": "f.txt", "patch": two}))
        .err("invalid_args", 2);
    assert!(msg.contains("2 files"), "{msg}");
    // Names in the headers are never opened.
    let patch = "--- a/../secret.txt\n+++ b/../secret.txt\n@@ -1 +1 @@\n-line 1\n+L1\n";
    w.call(
        "sneaky-patch",
        json!({"file_path": "f.txt", "patch": patch}),
    )
    .ok();
    assert_eq!(
        std::fs::read_to_string(w.outside().join("secret.txt")).expect("read"),
        "OUTSIDE SECRET\n"
    );
    assert_eq!(entries(&w, "."), vec!["f.txt"]);
}

#[test]
fn make_dir_and_delete_file() {
    let w = util::ws();
    let r = w.call("sneaky-mkdir", json!({"directory_path": "a/b"}));
    assert_eq!(r.ok()["created"], true);
    let r = w.call_raw("sneaky-mkdir", &["a/b"], b"");
    assert_eq!(r.ok()["created"], false);
    w.call("sneaky-mkdir", json!({"directory_path": "."})).ok();
    w.write("a/file", "x");
    w.call("sneaky-mkdir", json!({"directory_path": "a/file"}))
        .err("already_exists", 1);
    w.call("sneaky-mkdir", json!({"directory_path": "a/file/sub"}))
        .err("not_a_directory", 1);
    w.call("sneaky-rm", json!({"file_path": "a/b"}))
        .err("not_a_file", 1);
    w.call("sneaky-rm", json!({"file_path": "a/nope"}))
        .err("not_found", 1);
    let r = w.call_raw("sneaky-rm", &["a/file"], b"");
    assert_eq!(r.ok()["kind"], "file");
    assert!(!w.root.join("a/file").exists());
}

#[test]
fn concurrent_writers_never_interleave() {
    let w = util::ws();
    w.write("f.txt", "start\n");
    let bin = assert_cmd::cargo::cargo_bin("sneaky-write");
    let contents: Vec<String> = (0..8).map(|i| format!("{i}").repeat(200_000 + i)).collect();
    let children: Vec<_> = contents
        .iter()
        .map(|c| {
            let mut child = std::process::Command::new(&bin)
                .current_dir(&w.root)
                .env("SNEAKY_ROOT", &w.root)
                .env_remove("SNEAKY_CONFIG")
                .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
                .env("XDG_STATE_HOME", w.outside().join("state"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("spawn");
            let request = json!({"file_path": "f.txt", "content": c}).to_string();
            std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), request.as_bytes())
                .expect("write stdin");
            child
        })
        .collect();
    let mut ok = 0;
    for child in children {
        let out = child.wait_with_output().expect("wait");
        let reply: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        if reply["ok"] == true {
            ok += 1;
        } else {
            assert_eq!(reply["error"]["code"], "conflict", "{reply}");
        }
    }
    assert!(ok >= 1);
    let now = w.read("f.txt");
    assert!(
        contents.contains(&now),
        "f.txt holds a mix: {} bytes",
        now.len()
    );
    assert_eq!(entries(&w, "."), vec!["f.txt"]);
}

#[test]
fn a_parent_swapped_for_a_link_out_never_leads_outside() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let w = util::ws();
    w.mkdir("d");
    let root = w.root.clone();
    let outside = w.outside().join("ws_evil");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root, outside) = (stop.clone(), root.clone(), outside.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::rename(root.join("d"), root.join("d_real"));
                let _ = std::os::unix::fs::symlink(&outside, root.join("d"));
                std::thread::yield_now();
                let _ = std::fs::remove_file(root.join("d"));
                let _ = std::fs::rename(root.join("d_real"), root.join("d"));
            }
        })
    };
    for i in 0..40 {
        let name = format!("d/f{i}.txt");
        let r = w.call("sneaky-write", json!({"file_path": name, "content": "x"}));
        if r.status != 0 {
            let code = r.json["error"]["code"].as_str().unwrap_or("");
            assert!(
                // io_error: the jail's walker can see a link vanish between lstat and readlink
                // (EINVAL); it fails closed.
                [
                    "outside_workspace",
                    "not_found",
                    "conflict",
                    "already_exists",
                    "not_a_directory",
                    "io_error"
                ]
                .contains(&code),
                "{}",
                r.json
            );
        }
        let _ = w.call("sneaky-rm", json!({"file_path": "d/secret.txt"}));
        let _ = w.call(
            "sneaky-mkdir",
            json!({"directory_path": format!("d/sub{i}")}),
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    let evil: Vec<String> = std::fs::read_dir(&outside)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        evil,
        vec!["secret.txt"],
        "something was created or deleted outside the root"
    );
}

/// Multi-file patches (no file_path) whose headers try to leave the root or name one file
/// twice through a link: refused, and nothing anywhere is changed.
#[test]
fn multi_file_patch_headers_go_through_the_jail() {
    let w = util::ws();
    w.write("sub/a.txt", "a\n").write("keep.txt", "k\n");
    w.link("sub", "inside_link");
    w.link(w.outside().join("ws_evil"), "out_link");
    w.link(w.outside().join("secret.txt"), "secret_link.txt");
    let create = |name: &str| format!("--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+pwned\n");
    let modify = |name: &str, from: &str| {
        format!("--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-{from}\n+changed\n")
    };
    let keep = modify("keep.txt", "k");
    let cases = [
        (
            format!("{keep}{}", create("out_link/new.txt")),
            "outside_workspace",
        ),
        (
            format!("{keep}{}", create("../ws_evil/new.txt")),
            "outside_workspace",
        ),
        (
            format!("{keep}{}", modify("secret_link.txt", "OUTSIDE SECRET")),
            "outside_workspace",
        ),
        (
            format!(
                "{keep}{}",
                create(&w.outside().join("x.txt").display().to_string())
            ),
            "outside_workspace",
        ),
        (
            format!(
                "{}{}",
                modify("sub/a.txt", "a"),
                modify("inside_link/a.txt", "a")
            ),
            "invalid_args",
        ),
        (format!("{keep}{}", create(".git/config")), "protected_path"),
    ];
    for (patch, code) in cases {
        let r = w.call("sneaky-patch", json!({ "patch": patch }));
        r.err(code, if code == "invalid_args" { 2 } else { 3 });
        assert_eq!(w.read("keep.txt"), "k\n", "{patch}");
        assert_eq!(w.read("sub/a.txt"), "a\n", "{patch}");
    }
    assert_eq!(entries(&w, "../ws_evil"), vec!["secret.txt"]);
    assert!(!w.outside().join("x.txt").exists());
    assert!(!w.root.join(".git").exists());
    // A link that stays inside is followed, as for file_path.
    let r = w.call(
        "sneaky-patch",
        json!({ "patch": modify("inside_link/a.txt", "a") }),
    );
    assert_eq!(r.ok()["files"][0]["action"], "modified", "{}", r.json);
    assert_eq!(w.read("sub/a.txt"), "changed\n");
}

/// What a multi-file result says, and a dry run that changes nothing (not even directories).
#[test]
fn multi_file_patch_result_and_dry_run() {
    let w = util::ws();
    w.write("a.txt", "one\ntwo\n").write("gone.txt", "bye\n");
    let patch = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\ndiff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\ndiff --git a/new/dir/n.txt b/new/dir/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new/dir/n.txt\n@@ -0,0 +1 @@\n+hi\n";
    let r = w.call("sneaky-patch", json!({ "patch": patch, "dry_run": true }));
    let res = r.ok().clone();
    assert_eq!(res["hunks_applied"], 3);
    assert_eq!(res["path"], "a.txt");
    let actions: Vec<&str> = res["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["action"].as_str().expect("action"))
        .collect();
    assert_eq!(actions, ["modified", "deleted", "created"]);
    assert!(res["diff"]
        .as_str()
        .expect("diff")
        .contains("+++ /dev/null"));
    assert_eq!(entries(&w, "."), vec!["a.txt", "gone.txt"]);
    let r = w.call("sneaky-patch", json!({ "patch": patch }));
    r.ok();
    assert_eq!(w.read("a.txt"), "one\nTWO\n");
    assert_eq!(w.read("new/dir/n.txt"), "hi\n");
    assert_eq!(entries(&w, "."), vec!["a.txt", "new"]);
    // The same patch again: the deleted file is gone, so nothing applies and nothing changes.
    let r = w.call("sneaky-patch", json!({ "patch": patch }));
    assert_ne!(r.status, 0);
    assert_eq!(w.read("a.txt"), "one\nTWO\n");
}

/// A renamed file keeps its permission bits (an executable stays executable).
#[test]
fn multi_file_rename_keeps_the_mode() {
    let w = util::ws();
    w.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        w.root.join("run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .expect("chmod");
    let patch = "diff --git a/run.sh b/bin/run.sh\nsimilarity index 80%\nrename from run.sh\nrename to bin/run.sh\n--- a/run.sh\n+++ b/bin/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo hi\n+echo hello\n";
    let r = w.call("sneaky-patch", json!({ "patch": patch }));
    assert_eq!(r.ok()["files"][0]["action"], "renamed", "{}", r.json);
    assert_eq!(r.ok()["files"][0]["from"], "run.sh");
    assert_eq!(w.read("bin/run.sh"), "#!/bin/sh\necho hello\n");
    assert!(!w.root.join("run.sh").exists());
    let mode = std::fs::metadata(w.root.join("bin/run.sh"))
        .expect("meta")
        .mode()
        & 0o777;
    assert_eq!(mode, 0o750);
}
