//! Fault injection through the real binaries: a full disk, read-only files and directories,
//! and a file changed or deleted by another process between str_replace's read and its write.
//!
//! The faults are real, not simulated: a 64 KiB tmpfs mounted for the test (full disk), that
//! tmpfs remounted read-only, `chattr +i` (immutable, which binds root too), and a child run as
//! the unprivileged user `nobody` for plain mode bits (root bypasses them). Mounting and
//! switching users need root: as a normal user these tests skip loudly (`util::require_root`;
//! CI runs as root with SNEAKY_REQUIRE_ALL=1, where skipping fails). As root, a test that cannot
//! set up its fault fails, saying why, unless SNEAKY_NO_MOUNT=1 explicitly opts out.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::util::{self, Reply};

/// A tmpfs mounted on a temporary directory for one test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mount one, or None (loudly) when SNEAKY_NO_MOUNT=1 and mounting is impossible here.
    fn mount(test: &str, size: &str) -> Option<Tmpfs> {
        if !util::require_root("mount a tmpfs") {
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        let why = match out {
            Ok(o) if o.status.success() => return Some(Tmpfs { dir }),
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
            Err(e) => format!("cannot run mount: {e}"),
        };
        opt_out(test, &format!("mounting a tmpfs failed ({why})"));
        None
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount_ro(&self) {
        let st = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .expect("mount");
        assert!(st.success(), "remounting read-only failed");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A fault that cannot be set up fails the test, unless SNEAKY_NO_MOUNT=1 says to skip it.
fn opt_out(test: &str, why: &str) {
    if std::env::var("SNEAKY_NO_MOUNT").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: {why}; SNEAKY_NO_MOUNT=1 opts out");
        return;
    }
    panic!(
        "{test}: {why}. This fault-injection test needs root (CI runs as root); set \
         SNEAKY_NO_MOUNT=1 to skip it explicitly"
    );
}

/// Call a tool binary on `root` with a JSON request, as `uid` when given.
fn call(root: &Path, bin: &str, request: &Value, uid: Option<u32>) -> Reply {
    call_at(&assert_cmd::cargo::cargo_bin(bin), root, request, uid)
}

/// Call the binary at `exe` (named like a tool binary) on `root`, as `uid` when given.
fn call_at(exe: &Path, root: &Path, request: &Value, uid: Option<u32>) -> Reply {
    let bin = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The user's configuration is the one `util::Ws::user_config` writes beside the root (none
    // for a root of another making).
    let beside = root.parent().unwrap_or(root);
    // A copy made for another user may still be "Text file busy" (see util).
    let make = || {
        let mut cmd = Command::new(exe);
        cmd.current_dir(root)
            .env("SNEAKY_ROOT", root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", beside.join("xdg"))
            .env("XDG_STATE_HOME", beside.join("state"));
        if let Some(uid) = uid {
            cmd.uid(uid).gid(uid);
        }
        cmd
    };
    let out = util::output_retrying_busy(
        make,
        request.to_string().as_bytes(),
        std::time::Duration::from_secs(60),
    );
    Reply::parse(&bin, out)
}

/// Every entry name in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

const ORIGINAL: &str = "line one\nline two\nline three\n";

fn edits_of(path: &str, big: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "sneaky-write",
            json!({"file_path": path, "content": format!("{big}{ORIGINAL}")}),
        ),
        (
            "sneaky-replace",
            json!({"file_path": path, "old_str": "line two", "new_str": big}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": path, "patch": format!(
                "@@ -1,3 +1,{} @@\n line one\n{} line two\n line three\n",
                3 + big.lines().count(),
                big.lines().map(|l| format!("+{l}\n")).collect::<String>()
            )}),
        ),
    ]
}

#[test]
fn a_full_disk_fails_with_io_error_and_keeps_the_file() {
    let Some(fs) = Tmpfs::mount("a_full_disk_fails_with_io_error_and_keeps_the_file", "64k") else {
        return;
    };
    let root = fs.path().join("ws");
    std::fs::create_dir(&root).expect("mkdir");
    std::fs::write(root.join("f.txt"), ORIGINAL).expect("write");
    // Fill the file system to the last page.
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(fs.path().join("filler")).expect("filler");
        let chunk = vec![b'x'; 4096];
        loop {
            match filler.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc_enospc()) => break,
                Err(e) => panic!("filling: {e}"),
            }
        }
    }
    let big = "new text\n".repeat(2000);
    for (bin, request) in edits_of("f.txt", &big) {
        let reply = call(&root, bin, &request, None);
        let message = reply.err("io_error", 1);
        assert!(
            message.contains("No space left"),
            "{bin}: the message should say why: {message}"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("f.txt")).expect("read"),
            ORIGINAL
        );
        assert_eq!(names(&root), ["f.txt"], "{bin} left something behind");
    }
    // A new file: refused, and nothing named is left.
    let reply = call(
        &root,
        "sneaky-write",
        &json!({"file_path": "d/new.txt", "content": big}),
        None,
    );
    reply.err("io_error", 1);
    assert!(!root.join("d/new.txt").exists());
    // With space again the same edits go through: the failure was the full disk.
    std::fs::remove_file(fs.path().join("filler")).expect("rm filler");
    for (bin, request) in edits_of("f.txt", "more\n") {
        std::fs::write(root.join("f.txt"), ORIGINAL).expect("write");
        call(&root, bin, &request, None).ok();
    }
}

fn libc_enospc() -> i32 {
    nix::errno::Errno::ENOSPC as i32
}

#[test]
fn a_read_only_mount_refuses_every_change_clearly() {
    let Some(fs) = Tmpfs::mount("a_read_only_mount_refuses_every_change_clearly", "1m") else {
        return;
    };
    let root = fs.path().join("ws");
    std::fs::create_dir_all(root.join("sub")).expect("mkdir");
    std::fs::write(root.join("f.txt"), ORIGINAL).expect("write");
    fs.remount_ro();
    let mut requests = edits_of("f.txt", "added\n");
    requests.extend([
        (
            "sneaky-write",
            json!({"file_path": "sub/new.txt", "content": "x\n"}),
        ),
        ("sneaky-mkdir", json!({"directory_path": "sub/d"})),
        ("sneaky-rm", json!({"file_path": "f.txt"})),
    ]);
    for (bin, request) in requests {
        let reply = call(&root, bin, &request, None);
        let message = reply.err("io_error", 1);
        assert!(
            message.to_lowercase().contains("read-only file system"),
            "{bin}: {message}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("f.txt")).expect("read"),
        ORIGINAL
    );
    assert_eq!(names(&root), ["f.txt", "sub"]);
    assert!(names(&root.join("sub")).is_empty());
    // Reading still works.
    call(&root, "sneaky-read", &json!({"file_path": "f.txt"}), None).ok();
}

fn chattr(flag: &str, path: &Path) -> bool {
    Command::new("chattr")
        .arg(flag)
        .arg(path)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `chattr +i` binds root too: an immutable file, and an immutable directory.
#[test]
fn immutable_files_and_directories_are_refused_clearly() {
    let test = "immutable_files_and_directories_are_refused_clearly";
    // tmpfs supports the immutable flag (Linux 6.0+); the test's own mount keeps it contained.
    let Some(fs) = Tmpfs::mount(test, "1m") else {
        return;
    };
    let root = fs.path().join("ws");
    std::fs::create_dir_all(root.join("locked")).expect("mkdir");
    std::fs::write(root.join("f.txt"), ORIGINAL).expect("write");
    std::fs::write(root.join("locked/g.txt"), ORIGINAL).expect("write");
    if !chattr("+i", &root.join("f.txt")) || !chattr("+i", &root.join("locked")) {
        opt_out(test, "chattr +i failed on a tmpfs");
        return;
    }
    let mut requests = edits_of("f.txt", "added\n");
    requests.push(("sneaky-rm", json!({"file_path": "f.txt"})));
    requests.extend(edits_of("locked/g.txt", "added\n"));
    requests.extend([
        (
            "sneaky-write",
            json!({"file_path": "locked/new.txt", "content": "x\n"}),
        ),
        ("sneaky-rm", json!({"file_path": "locked/g.txt"})),
        ("sneaky-mkdir", json!({"directory_path": "locked/d"})),
    ]);
    let mut failures = Vec::new();
    for (bin, request) in &requests {
        let reply = call(&root, bin, request, None);
        if reply.json["ok"] == true {
            failures.push(format!("{bin} {request}: succeeded"));
            continue;
        }
        let code = reply.json["error"]["code"].as_str().unwrap_or("");
        if code != "permission_denied" {
            failures.push(format!("{bin} {request}: {}", reply.json));
        }
    }
    chattr("-i", &root.join("f.txt"));
    chattr("-i", &root.join("locked"));
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(
        std::fs::read_to_string(root.join("f.txt")).expect("read"),
        ORIGINAL
    );
    assert_eq!(
        std::fs::read_to_string(root.join("locked/g.txt")).expect("read"),
        ORIGINAL
    );
    assert_eq!(names(&root), ["f.txt", "locked"]);
    assert_eq!(names(&root.join("locked")), ["g.txt"]);
}

/// The binaries the mode tests run.
const EDIT_BINARIES: [&str; 5] = [
    "sneaky-write",
    "sneaky-replace",
    "sneaky-patch",
    "sneaky-mkdir",
    "sneaky-rm",
];

/// Plain mode bits, as an unprivileged user: a read-only file (0444) in a writable directory
/// is not replaced behind its owner's back, and a read-only directory (0555) takes no new file
/// and no rewrite.
#[test]
fn read_only_modes_are_refused_for_a_normal_user() {
    if !util::require_root("run the tools as the user nobody") {
        return;
    }
    let nobody = 65534;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    if let Some(blocked) = util::closed_ancestor(dir.path()) {
        util::skip(&format!(
            "the user nobody cannot reach the temporary directory {}: {} is closed to others \
             (set TMPDIR to a directory others can traverse)",
            dir.path().display(),
            blocked.display()
        ));
        return;
    }
    let bins = util::copy_binaries_for_others(dir.path(), &EDIT_BINARIES);
    let call =
        |root: &Path, bin: &str, request: &Value, uid| call_at(&bins.join(bin), root, request, uid);
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("ro_dir")).expect("mkdir");
    std::fs::write(root.join("ro.txt"), ORIGINAL).expect("write");
    std::fs::write(root.join("ro_dir/g.txt"), ORIGINAL).expect("write");
    for p in [
        &root,
        &root.join("ro_dir"),
        &root.join("ro.txt"),
        &root.join("ro_dir/g.txt"),
    ] {
        std::os::unix::fs::chown(p, Some(nobody), Some(nobody)).expect("chown");
    }
    let mode = |p: PathBuf, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod")
    };
    mode(root.join("ro.txt"), 0o444);
    mode(root.join("ro_dir/g.txt"), 0o644);
    mode(root.join("ro_dir"), 0o555);
    let mut requests = edits_of("ro.txt", "added\n");
    requests.extend(edits_of("ro_dir/g.txt", "added\n"));
    requests.extend([
        (
            "sneaky-write",
            json!({"file_path": "ro_dir/new.txt", "content": "x\n"}),
        ),
        ("sneaky-mkdir", json!({"directory_path": "ro_dir/d"})),
        ("sneaky-rm", json!({"file_path": "ro_dir/g.txt"})),
    ]);
    for (bin, request) in &requests {
        let reply = call(&root, bin, request, Some(nobody));
        let message = reply.err("permission_denied", 1);
        let path = request["file_path"]
            .as_str()
            .or(request["directory_path"].as_str())
            .expect("path");
        assert!(
            message.contains(path),
            "{bin}: the message names the path: {message}"
        );
        let why = if path == "ro.txt" {
            "read-only"
        } else {
            "directory"
        };
        if bin != &"sneaky-rm" && bin != &"sneaky-mkdir" {
            assert!(message.contains(why), "{bin} {path}: say why: {message}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(root.join("ro.txt")).expect("read"),
        ORIGINAL
    );
    assert_eq!(
        std::fs::read_to_string(root.join("ro_dir/g.txt")).expect("read"),
        ORIGINAL
    );
    assert_eq!(names(&root.join("ro_dir")), ["g.txt"]);
    let dry = call(
        &root,
        "sneaky-replace",
        &json!({"file_path": "ro.txt", "old_str": "two", "new_str": "2", "dry_run": true}),
        Some(nobody),
    );
    dry.ok();
    // The owner makes it writable: the same edit goes through, and the mode is kept.
    mode(root.join("ro.txt"), 0o644);
    call(
        &root,
        "sneaky-replace",
        &json!({"file_path": "ro.txt", "old_str": "two", "new_str": "2"}),
        Some(nobody),
    )
    .ok();
}

/// Another process replaces or deletes the file while str_replace works on it (between its
/// read and its rename, at spread-out moments across the first 60% of an edit). The other
/// process's change must never be undone: str_replace either ran wholly before it (ok), saw
/// its result (no_match / not_found), or refused with `conflict`. The last 40% of the edit,
/// holding the instant between the final check and the rename, is left out: that window of a
/// few microseconds cannot be closed with rename(2) (see the report in the load script).
///
/// On a loaded machine an edit's duration drifts, so the rounds come in batches of 16, each
/// timed afresh, until one lands between the read and the write (at most 8 batches).
#[test]
fn a_file_replaced_or_deleted_during_str_replace_is_a_conflict() {
    let w = crate::util::ws();
    w.user_config("max_file_size_bytes = 67108864\n");
    let pad = "padding line to make the edit take a while\n".repeat(100_000);
    let versions = [format!("KEY A\n{pad}"), format!("KEY B\n{pad}")];
    let request = json!({"file_path": "f.txt", "old_str": "KEY A", "new_str": "KEY C"});
    let mut outcomes: std::collections::BTreeMap<String, usize> = Default::default();
    for batch in 0..8 {
        // One undisturbed run tells how long an edit takes now.
        std::fs::write(w.root.join("f.txt"), &versions[0]).expect("write");
        let started = std::time::Instant::now();
        call(&w.root, "sneaky-replace", &request, None).ok();
        let full = started.elapsed();
        let rounds = 16;
        for i in 0..rounds {
            let delete = i % 2 == 1;
            let delay = full.mul_f64(0.6 * (i / 2) as f64 / (rounds / 2) as f64);
            let code = race_round(&w, &request, &versions, delete, delay);
            let what = if delete { "delete" } else { "replace" };
            *outcomes.entry(format!("{what}:{code}")).or_default() += 1;
        }
        eprintln!("race test, batch {batch}: an edit takes {full:?}; outcomes {outcomes:?}");
        if outcomes.keys().any(|k| k.ends_with(":conflict")) {
            return;
        }
    }
    panic!("no round landed between the read and the write: {outcomes:?}");
}

/// One round of the race above: str_replace on `versions[0]` while another thread, after
/// `delay`, deletes the file or renames `versions[1]` over it. Returns the reply's code.
fn race_round(
    w: &util::Ws,
    request: &Value,
    versions: &[String; 2],
    delete: bool,
    delay: std::time::Duration,
) -> String {
    let path = w.root.join("f.txt");
    std::fs::write(&path, &versions[0]).expect("write");
    let racer = {
        let (path, root, b) = (path.clone(), w.root.clone(), versions[1].clone());
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            if delete {
                std::fs::remove_file(&path).expect("rm");
            } else {
                let side = root.join("racer.new");
                std::fs::write(&side, b).expect("write");
                std::fs::rename(&side, &path).expect("rename");
            }
        })
    };
    let reply = call(&w.root, "sneaky-replace", request, None);
    racer.join().expect("racer");
    let code = if reply.json["ok"] == true {
        "ok".to_string()
    } else {
        reply.json["error"]["code"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    };
    assert!(
        ["ok", "conflict", "no_match", "not_found"].contains(&code.as_str()),
        "{}",
        reply.json
    );
    if code == "conflict" {
        assert!(reply.json["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nothing was written")));
    }
    // The other process's change stands.
    if delete {
        assert!(
            !path.exists(),
            "({code}, after {delay:?}): the deleted file came back"
        );
    } else {
        let now = std::fs::read_to_string(&path).expect("read");
        assert!(
            now == versions[1],
            "({code}, after {delay:?}): the other process's version was lost"
        );
    }
    let want: &[&str] = if delete { &[] } else { &["f.txt"] };
    assert_eq!(names(&w.root), want);
    code
}
