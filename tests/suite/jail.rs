//! Escape attempts against every read tool: `..`, absolute paths, sibling-prefix directories,
//! links out (file, directory, chains, absolute, /proc/self/root), dangling links, cycles,
//! trailing slashes, and a link swapped in and out while the tools run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::util::{self, Ws};

const SECRETS: [&str; 2] = ["OUTSIDE SECRET", "EVIL SECRET"];

fn assert_no_secret(v: &Value) {
    let text = v.to_string();
    for s in SECRETS {
        assert!(!text.contains(s), "leaked {s}: {text}");
    }
    assert!(
        !text.contains("only_outside"),
        "leaked an outside name: {text}"
    );
}

/// A workspace with every kind of escaping link.
fn hostile() -> Ws {
    let w = util::ws();
    let out = w.outside().to_path_buf();
    std::fs::write(out.join("only_outside.txt"), "OUTSIDE SECRET\n").expect("write");
    w.write("inside.txt", "inside\n");
    w.mkdir("sub");
    w.link(out.join("secret.txt"), "abs_file_out")
        .link("../secret.txt", "rel_file_out")
        .link(&out, "dir_out")
        .link("../ws_evil", "evil_dir")
        .link("rel_file_out", "chain_out")
        .link("/proc/self/root", "proc_root")
        .link("/proc/self/cwd", "proc_cwd")
        .link("nowhere/at/all", "dangling")
        .link("cycle_b", "cycle_a")
        .link("cycle_a", "cycle_b")
        .link("..", "sub/up")
        .link(".", "sub/self_loop");
    w
}

#[test]
fn read_file_refuses_every_escape() {
    let w = hostile();
    let root = w.root.display().to_string();
    let outside = [
        "../secret.txt".to_string(),
        "sub/../../secret.txt".to_string(),
        "../ws_evil/secret.txt".to_string(),
        w.outside().join("secret.txt").display().to_string(),
        format!("{root}_evil/secret.txt"),
        format!("{root}/../secret.txt"),
        "abs_file_out".to_string(),
        "rel_file_out".to_string(),
        "dir_out/secret.txt".to_string(),
        "evil_dir/secret.txt".to_string(),
        "chain_out".to_string(),
        "proc_root/etc/hostname".to_string(),
        "proc_cwd/inside.txt".to_string(),
        "sub/up/../secret.txt".to_string(),
        "/etc/passwd".to_string(),
    ];
    for p in &outside {
        let r = w.call("sneaky-read", json!({"file_path": p}));
        assert_no_secret(&r.json);
        let code = r.json["error"]["code"].as_str().unwrap_or("ok");
        assert_eq!(code, "outside_workspace", "{p}: {}", r.json);
        assert_eq!(r.status, 3, "{p}");
    }
    w.call("sneaky-read", json!({"file_path": "dangling"}))
        .err("not_found", 1);
    w.call("sneaky-read", json!({"file_path": "cycle_a"}))
        .err("io_error", 1);
    w.call("sneaky-read", json!({"file_path": "inside.txt/"}))
        .err("not_a_directory", 1);
    // Links that stay inside are followed; absolute paths inside the root are accepted.
    let r = w.call("sneaky-read", json!({"file_path": "sub/up/inside.txt"}));
    assert_eq!(r.ok()["content"], "inside\n");
    let abs = format!("{root}/sub/self_loop/../inside.txt");
    assert_eq!(
        w.call("sneaky-read", json!({"file_path": abs})).ok()["content"],
        "inside\n"
    );
    // `~` is a name like any other.
    w.call("sneaky-read", json!({"file_path": "~/secret.txt"}))
        .err("not_found", 1);
}

#[test]
fn list_dir_refuses_escapes_and_walks_safely() {
    let w = hostile();
    for p in [
        "..",
        "dir_out",
        "evil_dir",
        "proc_root",
        "sub/up/..",
        "/tmp",
    ] {
        let r = w.call("sneaky-ls", json!({"directory_path": p}));
        r.err("outside_workspace", 3);
    }
    let r = w.call("sneaky-ls", json!({"recursive": true}));
    let entries = util::strings(&r.ok()["entries"]);
    assert_no_secret(&r.json);
    // Links are listed by name, never entered; the recursive walk terminates.
    assert!(entries.contains(&"dir_out".to_string()), "{entries:?}");
    assert!(entries.contains(&"sub/".to_string()));
    assert!(entries.contains(&"sub/up/".to_string()), "{entries:?}");
    assert!(entries
        .iter()
        .all(|e| !e.starts_with("sub/up/") || e == "sub/up/"));
    w.call("sneaky-ls", json!({"directory_path": "inside.txt"}))
        .err("not_a_directory", 1);
}

#[test]
fn grep_and_find_never_leave_the_root() {
    let w = hostile();
    let r = w.call("sneaky-grep", json!({"pattern": "SECRET|inside"}));
    assert_no_secret(&r.json);
    let paths: Vec<&str> = r.ok()["matches"]
        .as_array()
        .expect("array")
        .iter()
        .map(|m| m["path"].as_str().expect("path"))
        .collect();
    assert_eq!(paths, ["inside.txt"]);
    for p in ["..", "dir_out", "evil_dir", "abs_file_out", "proc_root"] {
        w.call("sneaky-grep", json!({"pattern": "SECRET", "path": p}))
            .err("outside_workspace", 3);
        w.call("sneaky-find", json!({"pattern": "*", "path": p}))
            .err("outside_workspace", 3);
    }
    let r = w.call("sneaky-find", json!({"pattern": "*"}));
    assert_no_secret(&r.json);
    let files = util::strings(&r.ok()["files"]);
    assert!(
        files.contains(&"dir_out".to_string()),
        "links are reported, not followed"
    );
    assert!(!files.iter().any(|f| f.contains("secret")), "{files:?}");
}

/// Swap `sub` between a real directory and a link to the outside as fast as possible while the
/// tools run; nothing outside may ever be read or listed.
#[test]
fn a_link_swapped_in_while_tools_run_never_leaks() {
    let w = util::ws();
    let out = w.outside().join("target");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("secret.txt"), "OUTSIDE SECRET\n").expect("write");
    std::fs::write(out.join("only_outside.txt"), "OUTSIDE SECRET\n").expect("write");
    w.write("sub/secret.txt", "inside\n");
    w.link(&out, "swap");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let root = w.root.clone();
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // Atomically exchange the directory and the link.
                let _ = nix::fcntl::renameat2(
                    nix::fcntl::AT_FDCWD,
                    &root.join("sub"),
                    nix::fcntl::AT_FDCWD,
                    &root.join("swap"),
                    nix::fcntl::RenameFlags::RENAME_EXCHANGE,
                );
                swaps += 1;
            }
            swaps
        })
    };
    let calls: [(&str, Value); 5] = [
        ("sneaky-read", json!({"file_path": "sub/secret.txt"})),
        ("sneaky-ls", json!({"directory_path": "sub"})),
        ("sneaky-ls", json!({"recursive": true})),
        ("sneaky-grep", json!({"pattern": "SECRET|inside"})),
        ("sneaky-find", json!({"pattern": "*.txt"})),
    ];
    let mut outcomes = std::collections::BTreeMap::new();
    for i in 0..60 {
        for (bin, req) in &calls {
            let r = w.call(bin, req.clone());
            assert_no_secret(&r.json);
            let code = r.json["error"]["code"].as_str().unwrap_or("ok").to_string();
            *outcomes.entry(format!("{bin} {code}")).or_insert(0) += 1;
            let _ = i;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().expect("swapper");
    assert!(swaps > 100, "the race barely ran ({swaps} swaps)");
    // The race was real: reads sometimes met the link (refused) and sometimes the directory.
    assert!(outcomes.contains_key("sneaky-read ok"), "{outcomes:?}");
    assert!(
        outcomes.contains_key("sneaky-read outside_workspace"),
        "{outcomes:?}"
    );
}
