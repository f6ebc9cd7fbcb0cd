//! Crash safety: `sneaky-write` is killed with SIGKILL at spread-out moments while it replaces
//! a large file. Every time, the file must hold exactly the old content or exactly the new.
//! CI runs 20 kills; set SNEAKY_CRASH_ITERATIONS for more.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::util;

/// A tool binary started in the workspace with `request` fed on stdin by a thread.
pub fn spawn_tool(
    name: &str,
    w: &util::Ws,
    request: &[u8],
) -> (std::process::Child, std::thread::JoinHandle<()>) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin(name))
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let request = request.to_vec();
    let feeder = std::thread::spawn(move || {
        // The child may be killed before it has read everything.
        let _ = stdin.write_all(&request);
    });
    (child, feeder)
}

/// No journal, backup or temporary name of an edit left in `dir`.
fn assert_no_leftovers(dir: &std::path::Path, i: usize) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            !name.contains("sneaky-") && !name.contains(".sneaky"),
            "iteration {i}: {name} left behind"
        );
    }
}

#[test]
fn kill_9_during_large_writes_leaves_old_or_new() {
    let iterations: usize = std::env::var("SNEAKY_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let w = util::ws();
    w.user_config("max_file_size_bytes = 67108864\n");
    let size = 12 << 20;
    let contents: [Vec<u8>; 2] = [
        [b"A".repeat(size), b"\n".to_vec()].concat(),
        [b"B".repeat(size), b"\n".to_vec()].concat(),
    ];
    let requests: Vec<Vec<u8>> = contents
        .iter()
        .map(|c| {
            serde_json::json!({"file_path": "big.txt", "content": String::from_utf8_lossy(c)})
                .to_string()
                .into_bytes()
        })
        .collect();
    let spawn = |request: &[u8]| spawn_tool("sneaky-write", &w, request);
    std::fs::write(w.root.join("big.txt"), &contents[0]).expect("write");
    // One uninterrupted run tells how long a write takes here.
    let started = Instant::now();
    let (mut child, feeder) = spawn(&requests[1]);
    assert!(child.wait().expect("wait").success());
    feeder.join().expect("feeder");
    let full = started.elapsed();
    assert!(std::fs::read(w.root.join("big.txt")).expect("read") == contents[1]);
    let mut current = 1;
    let (mut kept_old, mut got_new, mut leftovers) = (0, 0, 0);
    // Kill moments spread from the start to 1.5× a full run; on a loaded machine the timing
    // can drift, so extra kills at the extremes make sure both sides of the rename are
    // reached: immediately (the old content), and after 2×, 4×, … 256× a full run (the new
    // one, however slow the machine has become since the timed run).
    let spread = (0..iterations).map(|i| full.mul_f64(1.5 * i as f64 / iterations.max(1) as f64));
    let extremes = (1..=8).flat_map(|k| {
        [
            std::time::Duration::ZERO,
            full.mul_f64(f64::from(1u32 << k)),
        ]
    });
    for (i, delay) in spread.chain(extremes).enumerate() {
        if i >= iterations && kept_old > 0 && got_new > 0 {
            break;
        }
        let next = 1 - current;
        let (mut child, feeder) = spawn(&requests[next]);
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let _ = feeder.join();
        let now = std::fs::read(w.root.join("big.txt")).expect("read");
        if now == contents[current] {
            kept_old += 1;
        } else if now == contents[next] {
            got_new += 1;
            current = next;
        } else {
            panic!(
                "iteration {i} (killed after {delay:?}): big.txt is torn: {} bytes, neither old nor new",
                now.len()
            );
        }
        for entry in std::fs::read_dir(&w.root).expect("read_dir").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(".sneaky-") {
                leftovers += 1;
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    eprintln!(
        "crash test: {} kills over 0..{:?}: old kept {kept_old}, new {got_new}, \
         temporary names left {leftovers}",
        kept_old + got_new,
        full.mul_f64(1.5)
    );
    assert!(
        kept_old > 0 && got_new > 0,
        "kills never landed on both sides of the rename"
    );
}

/// `sneaky-write` killed at spread-out moments while it rewrites a file someone else has just
/// changed (so its old content is new to the undo history, which keeps the old file itself):
/// the file is the old content or the new; once the next tool has settled the history, a write
/// that landed is undone byte-exact, and one that did not leaves no name in the history to the
/// workspace's file (which a later change in place would alter).
#[test]
fn kill_9_during_a_journaled_write_leaves_a_history_that_undoes() {
    use std::os::unix::fs::MetadataExt;
    let rounds: usize = std::env::var("SNEAKY_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let w = util::ws();
    w.user_config("max_file_size_bytes = 67108864\n");
    let size = 2 << 20;
    let content = |tag: &str| format!("{}\n", tag.repeat(size / tag.len()));
    let request = |c: &str| {
        serde_json::json!({"file_path": "big.txt", "content": c})
            .to_string()
            .into_bytes()
    };
    let file = w.root.join("big.txt");
    std::fs::write(&file, content("first ")).expect("write");
    let started = Instant::now();
    w.call(
        "sneaky-write",
        serde_json::json!({"file_path": "big.txt", "content": content("timed ")}),
    )
    .ok();
    let full = started.elapsed();
    let (mut landed, mut not_landed) = (0, 0);
    for i in 0..rounds {
        let (old, new) = (content(&format!("old {i} ")), content(&format!("new {i} ")));
        std::fs::write(&file, &old).expect("write");
        let delay = full.mul_f64(1.5 * i as f64 / rounds as f64);
        let (mut child, feeder) = spawn_tool("sneaky-write", &w, &request(&new));
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let _ = feeder.join();
        let now = std::fs::read_to_string(&file).expect("read");
        assert!(
            now == old || now == new,
            "round {i}: big.txt is torn: {} bytes",
            now.len()
        );
        // The next tool settles what the killed one left.
        let listed = w.call("sneaky-undo", serde_json::json!({"list": true}));
        assert!(listed.ok()["changes"].is_array());
        let ino = std::fs::metadata(&file).expect("stat").ino();
        let histories = w.outside().join("state").join("sneaky").join("undo");
        for history in std::fs::read_dir(&histories).expect("history").flatten() {
            for blob in std::fs::read_dir(history.path().join("blobs"))
                .expect("blobs")
                .flatten()
            {
                assert_ne!(
                    blob.metadata().expect("blob").ino(),
                    ino,
                    "round {i}: the workspace's file is also a kept content"
                );
            }
        }
        if now == new {
            landed += 1;
            w.call("sneaky-undo", serde_json::json!({})).ok();
            assert!(
                std::fs::read_to_string(&file).expect("read") == old,
                "round {i}: the undo did not give back the old content byte-exact"
            );
        } else {
            not_landed += 1;
        }
    }
    eprintln!(
        "journaled write crash test: {rounds} kills over 0..{:?}: landed {landed}, not {not_landed}",
        full.mul_f64(1.5)
    );
}

/// A multi-file patch (three large files) killed at spread-out moments: once the next edit has
/// run (it finishes or rolls back what a killed one left), the three files are all old or all
/// new, and no journal, backup or temporary is left.
#[test]
fn kill_9_during_a_multi_file_patch_leaves_all_old_or_all_new() {
    let iterations: usize = std::env::var("SNEAKY_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let w = util::ws();
    w.user_config("max_file_size_bytes = 67108864\n");
    w.write("other.txt", "x\n");
    let size = 256 << 10;
    let files = ["one.txt", "sub/two.txt", "three.txt"];
    let line = |c: &str| format!("{}\n", c.repeat(size));
    let patch_to = |from: &str, to: &str| -> Vec<u8> {
        let mut p = String::new();
        for f in files {
            p.push_str(&format!(
                "--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-{}+{}",
                line(from),
                line(to)
            ));
        }
        serde_json::json!({ "patch": p }).to_string().into_bytes()
    };
    let requests = [patch_to("B", "A"), patch_to("A", "B")];
    let spawn = |request: &[u8]| spawn_tool("sneaky-patch", &w, request);
    // The next edit in the workspace recovers what a killed one left.
    let next_edit = || {
        let r = w.call(
            "sneaky-patch",
            serde_json::json!({"file_path": "other.txt", "patch": "@@ -1 +1 @@\n-x\n+y\n", "dry_run": true}),
        );
        assert_eq!(r.status, 0, "{}", r.json);
    };
    for f in files {
        w.write(f, &line("A"));
    }
    let started = Instant::now();
    let (mut child, feeder) = spawn(&requests[1]);
    assert!(child.wait().expect("wait").success());
    feeder.join().expect("feeder");
    let full = started.elapsed();
    let state = || -> Option<&str> {
        let all: Vec<String> = files.iter().map(|f| w.read(f)).collect();
        ["A", "B"]
            .into_iter()
            .find(|c| all.iter().all(|x| *x == line(c)))
    };
    assert_eq!(state(), Some("B"));
    let (mut kept_old, mut got_new) = (0, 0);
    let spread = (0..iterations).map(|i| full.mul_f64(1.5 * i as f64 / iterations.max(1) as f64));
    let extremes = (0..5).flat_map(|_| [std::time::Duration::ZERO, full.mul_f64(4.0)]);
    for (i, delay) in spread.chain(extremes).enumerate() {
        if i >= iterations && kept_old > 0 && got_new > 0 {
            break;
        }
        let before = state().expect("consistent");
        let next = usize::from(before == "A");
        let (mut child, feeder) = spawn(&requests[next]);
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let _ = feeder.join();
        next_edit();
        match state() {
            Some(s) if s == before => kept_old += 1,
            Some(_) => got_new += 1,
            None => panic!("iteration {i} (killed after {delay:?}): the files are half patched"),
        }
        assert_no_leftovers(&w.root, i);
        assert_no_leftovers(&w.root.join("sub"), i);
    }
    eprintln!(
        "multi-file crash test: {} kills over 0..{:?}: old kept {kept_old}, new {got_new}",
        kept_old + got_new,
        full.mul_f64(1.5)
    );
    assert!(
        kept_old > 0 && got_new > 0,
        "kills never landed on both sides"
    );
}
