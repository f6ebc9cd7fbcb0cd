//! Applying a command's changes (and taking a change back) is a file tool: each path is
//! reached with no link followed and checked where it lands, and what lands is what git keeps.
//! The attacks of the round that found it otherwise, each judged on the host afterwards, as
//! root and as the unprivileged user `nobody`:
//!
//! - something that writes the workspace while a command's changes are applied (a background
//!   job did, before jobs ran over an overlay of their own; a person's editor, another tool)
//!   swaps a nested repository's `.git/objects` for a committed link (`../../.git/hooks`,
//!   `../../.claude`) once the first of thousands of ignored build files has landed: the
//!   nested repository's data must not be written through it (the workspace's own
//!   `.git/hooks/pre-commit`, a protected `.claude/settings.json`);
//! - a command leaves a set-user-id or set-group-id program (`cp -p --attributes-only
//!   /usr/bin/su tool` as root: a setuid-root shell), extended attributes (`user.*`, and
//!   overlayfs's own `user.overlay.*` on a file it modified; a file capability is refused in
//!   the sandbox already, which holds no CAP_SETFCAP, and would go the same way), a FIFO: the
//!   bits and attributes are taken off, the FIFO is not applied, and the result's `reduced`
//!   says so;
//! - undo through a directory swapped for a link after the change: refused, nothing written
//!   where the link points.
//!
//! Switching to `nobody` needs root; as a normal user those halves skip loudly.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Reply};

/// The system's python3 by its real path (a version manager's shim runs more programs).
const PYTHON: &str = "/usr/bin/python3";
const NOBODY: u32 = 65534;
const BINARIES: [&str; 4] = ["sneaky-run", "sneaky-rm", "sneaky-undo", "sneaky-write"];

/// A workspace and the user its tools run as (None: this process's, root in CI).
struct Room {
    dir: tempfile::TempDir,
    root: PathBuf,
    uid: Option<u32>,
    /// Copies of the binaries the user can reach (for `nobody`).
    bins: Option<PathBuf>,
}

impl Room {
    /// None (loudly) when the user cannot be switched to, or cannot reach a temporary
    /// directory.
    fn new(as_nobody: bool) -> Option<Room> {
        if as_nobody && !util::require_root("run the tools as the user nobody") {
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        if as_nobody {
            if let Some(blocked) = util::closed_ancestor(dir.path()) {
                util::skip(&format!(
                    "the user nobody cannot reach {}: {} is closed to others (set TMPDIR to a \
                     directory others can traverse)",
                    dir.path().display(),
                    blocked.display()
                ));
                return None;
            }
        }
        let root = dir.path().join("ws");
        for d in ["ws", "xdg/sneaky", "state", "run"] {
            std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        std::fs::write(
            dir.path().join("xdg/sneaky/config.toml"),
            format!(
                "[tools.shell]\ndenied_commands = []\nextra_allowed_commands = [\"cp\", \
                 \"chmod\", \"mkdir\", \"mkfifo\", \"{PYTHON}\"]\n"
            ),
        )
        .expect("config");
        let bins = as_nobody.then(|| util::copy_binaries_for_others(dir.path(), &BINARIES));
        Some(Room {
            dir,
            root,
            uid: as_nobody.then_some(NOBODY),
            bins,
        })
    }

    /// Hand everything made so far to the user the tools run as.
    fn hand_over(&self) {
        if let Some(uid) = self.uid {
            util::give_to(self.dir.path(), uid);
        }
    }

    fn write(&self, rel: &str, content: &str) -> &Room {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
        self
    }

    fn git(&self, dir: &str, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.root.join(dir))
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn call(&self, bin: &str, request: &Value) -> Reply {
        self.call_with(bin, &[], request)
    }

    fn call_with(&self, bin: &str, args: &[&str], request: &Value) -> Reply {
        let exe = match &self.bins {
            Some(bins) => bins.join(bin),
            None => assert_cmd::cargo::cargo_bin(bin),
        };
        let mut cmd = Command::new(exe);
        util::fence(&mut cmd, self.dir.path())
            .current_dir(&self.root)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("SNEAKY_JOB_OWNER")
            .env_remove("SNEAKY_CONFIG")
            .env("SNEAKY_ROOT", &self.root)
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"));
        if let Some(uid) = self.uid {
            cmd.uid(uid).gid(uid);
        }
        cmd.args(args);
        let out = assert_cmd::Command::from_std(cmd)
            .write_stdin(request.to_string())
            .timeout(Duration::from_secs(300))
            .output()
            .expect("run");
        Reply::parse(bin, out)
    }

    fn run(&self, command: &str) -> Reply {
        self.call("sneaky-run", &json!({"command": command, "timeout": 240}))
    }
}

/// Whether the tests that need python3 and git can run here (loudly when not).
fn tools_present() -> bool {
    util::require_cmd("git")
        && (Path::new(PYTHON).is_file() || util::skip("needs /usr/bin/python3"))
}

/// The extended attributes of `path` (the link itself when it is one), read by python.
fn xattrs(path: &Path) -> Vec<String> {
    let out = Command::new(PYTHON)
        .args([
            "-c",
            "import os, sys; print('\\n'.join(os.listxattr(sys.argv[1], follow_symlinks=False)))",
        ])
        .arg(path)
        .output()
        .expect("python");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty() && *l != "security.selinux")
        .map(str::to_string)
        .collect()
}

/// Every path beneath `dir` (links not followed) with its metadata.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, std::fs::Metadata)>) {
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let meta = e.metadata().expect("metadata");
        let is_dir = meta.is_dir();
        out.push((e.path(), meta));
        if is_dir {
            walk(&e.path(), out);
        }
    }
}

/// On the host, beneath the workspace (its own `.git` included): no set-id or sticky file, no
/// extended attribute, no FIFO, socket or device node.
fn assert_nothing_special_landed(root: &Path) {
    let mut all = Vec::new();
    walk(root, &mut all);
    for (path, meta) in all {
        let ft = meta.file_type();
        assert!(
            ft.is_file() || ft.is_dir() || ft.is_symlink(),
            "{}: a special file landed",
            path.display()
        );
        if ft.is_file() {
            assert_eq!(
                meta.mode() & 0o7000,
                0,
                "{}: a set-id bit landed ({:o})",
                path.display(),
                meta.mode()
            );
            assert!(
                xattrs(&path).is_empty(),
                "{}: extended attributes landed: {:?}",
                path.display(),
                xattrs(&path)
            );
        }
    }
}

/// The `(path, what)` pairs of a result's `reduced`.
fn reduced(r: &Value) -> Vec<(String, String)> {
    r["reduced"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x["path"].as_str().unwrap_or("").to_string(),
                        x["what"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Where the committed link of the swap points, and the file written through it.
#[derive(Clone, Copy)]
enum Through {
    /// `../../.git/hooks`: the person's next `git commit` runs `pre-commit` outside the sandbox.
    Hooks,
    /// `../../.claude`: a protected path (an agent's settings run commands).
    Claude,
}

/// Ignored build files the command leaves, applied before the nested repository's data: the
/// window in which the swap lands.
const BUILD_FILES: usize = 5000;

fn swap_during_the_apply(through: Through, as_nobody: bool) {
    if !tools_present() {
        return;
    }
    let Some(room) = Room::new(as_nobody) else {
        return;
    };
    let (link, name) = match through {
        Through::Hooks => ("../../.git/hooks", "pre-commit"),
        Through::Claude => ("../../.claude", "settings.json"),
    };
    room.git("", &["init", "-q"]);
    room.write(".gitignore", "build/\n")
        .write(".claude/README", "the project's agent settings\n")
        .write("a/lib.txt", "lib\n");
    room.git("a", &["init", "-q"]);
    std::os::unix::fs::symlink(link, room.root.join("a/lnk")).expect("link");
    room.write(
        "make.py",
        &format!(
            "import os\n\
             os.mkdir('build')\n\
             for i in range({BUILD_FILES}):\n    open('build/f%05d' % i, 'w').write('o')\n\
             p = 'a/.git/objects/{name}'\n\
             open(p, 'w').write('#!/bin/sh\\necho PLANTED\\n')\n\
             os.chmod(p, 0o755)\n"
        ),
    );
    room.hand_over();
    let planted = room.root.join(".git/hooks").join(name);
    let settings = room.root.join(".claude").join(name);
    // Whatever else writes the workspace while the changes are applied (a person's editor,
    // another tool, a job that wrote it directly): here a thread of this test, which waits for
    // the first build file to land, then swaps the nested repository's objects for the
    // committed link.
    let swapper = {
        let root = room.root.clone();
        std::thread::spawn(move || {
            let end = std::time::Instant::now() + Duration::from_secs(240);
            while !root.join("build/f00000").exists() {
                if std::time::Instant::now() > end {
                    return false;
                }
                std::hint::spin_loop();
            }
            std::fs::remove_dir_all(root.join("a/.git/objects")).expect("rm objects");
            std::fs::rename(root.join("a/lnk"), root.join("a/.git/objects")).expect("swap");
            true
        })
    };
    let reply = room.run(&format!("{PYTHON} make.py"));
    assert!(
        swapper.join().expect("swapper"),
        "no build file landed: {}",
        reply.json
    );
    assert!(std::fs::symlink_metadata(room.root.join("a/.git/objects"))
        .is_ok_and(|m| m.file_type().is_symlink()));
    // Judged on the host: nothing was written through the link.
    assert!(!planted.exists(), "{} was written", planted.display());
    assert!(!settings.exists(), "{} was written", settings.display());
    let message = reply.err("conflict", 1);
    assert!(
        message.contains(&format!("a/.git/objects/{name}"))
            && message.contains("a/.git/objects is now a symbolic link"),
        "{message}"
    );
}

#[test]
fn a_swap_to_the_workspace_s_git_hooks_during_the_apply_writes_nothing_there() {
    swap_during_the_apply(Through::Hooks, false);
}

#[test]
fn a_swap_to_the_workspace_s_git_hooks_during_the_apply_writes_nothing_there_as_nobody() {
    swap_during_the_apply(Through::Hooks, true);
}

#[test]
fn a_swap_to_a_protected_path_during_the_apply_writes_nothing_there() {
    swap_during_the_apply(Through::Claude, false);
}

#[test]
fn a_swap_to_a_protected_path_during_the_apply_writes_nothing_there_as_nobody() {
    swap_during_the_apply(Through::Claude, true);
}

/// Set-id bits, tracked and ignored; as root, a copy of `su`'s setuid-root attributes.
fn set_id_bits_are_taken_off(as_nobody: bool) {
    if !tools_present() {
        return;
    }
    let Some(room) = Room::new(as_nobody) else {
        return;
    };
    room.git("", &["init", "-q"]);
    room.write(".gitignore", "build/\n");
    room.hand_over();
    let mut command = "cp /bin/bash tool && chmod 6755 tool && mkdir build && \
                       cp /bin/bash build/tool && chmod 4755 build/tool && mkdir shared && \
                       chmod 3777 shared"
        .to_string();
    if !as_nobody {
        command.push_str(" && cp /bin/bash su-copy && cp -p --attributes-only /usr/bin/su su-copy");
    }
    let reply = room.run(&command);
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    let got = reduced(r);
    let mut want = vec![
        ("build/tool", "setuid bit removed"),
        ("shared", "setgid bit removed"),
        ("shared", "sticky bit removed"),
        ("tool", "setuid bit removed"),
        ("tool", "setgid bit removed"),
    ];
    if !as_nobody {
        want.push(("su-copy", "setuid bit removed"));
    }
    for (path, what) in &want {
        assert!(
            got.iter().any(|(p, w)| p == path && w == what),
            "{path}: {what} not reported: {got:?}"
        );
    }
    let stderr = r["stderr"].as_str().unwrap_or("");
    assert!(
        stderr.contains("sneaky-run: a command's changes were applied as git keeps files")
            && stderr.contains("tool (setuid bit removed)"),
        "{stderr}"
    );
    for p in ["tool", "build/tool", "su-copy"] {
        if let Ok(m) = std::fs::metadata(room.root.join(p)) {
            assert_eq!(m.mode() & 0o7777, 0o755, "{p}: {:o}", m.mode());
        }
    }
    assert_eq!(
        std::fs::metadata(room.root.join("shared"))
            .expect("shared")
            .mode()
            & 0o7777,
        0o777
    );
    assert_nothing_special_landed(&room.root);
}

#[test]
fn set_id_bits_a_command_sets_are_not_applied() {
    set_id_bits_are_taken_off(false);
}

#[test]
fn set_id_bits_a_command_sets_are_not_applied_as_nobody() {
    set_id_bits_are_taken_off(true);
}

/// Extended attributes (`user.*`) on new and modified files,
/// tracked and ignored, and a FIFO.
fn xattrs_and_special_files_are_not_applied(as_nobody: bool) {
    if !tools_present() {
        return;
    }
    let Some(room) = Room::new(as_nobody) else {
        return;
    };
    room.git("", &["init", "-q"]);
    room.write(".gitignore", "build/\n")
        .write("old.txt", "old\n")
        .write(
            "xattr.py",
            "import os, sys\nopen('old.txt', 'a').write('more\\n')\n\
             for p in sys.argv[1:]:\n    os.setxattr(p, 'user.note', b'x')\n",
        );
    room.hand_over();
    let command = format!(
        "cp /bin/true new && mkdir build && cp /bin/true build/new && \
         {PYTHON} xattr.py new build/new old.txt && mkfifo pipe"
    );
    let reply = room.run(&command);
    let r = reply.command_ran();
    assert_eq!(r["exit_code"], 0, "{}", reply.json);
    let got = reduced(r);
    let want = [
        ("build/new", "extended attribute user.note removed"),
        ("new", "extended attribute user.note removed"),
        ("old.txt", "extended attribute user.note removed"),
        ("pipe", "FIFO not applied"),
    ];
    for (path, what) in &want {
        assert!(
            got.iter().any(|(p, w)| p == path && w == what),
            "{path}: {what} not reported: {got:?}"
        );
    }
    assert!(
        !got.iter().any(|(_, w)| w.contains("user.overlay.")),
        "overlayfs's own attributes are not the command's: {got:?}"
    );
    assert!(std::fs::symlink_metadata(room.root.join("pipe")).is_err());
    assert!(room.root.join("new").is_file() && room.root.join("build/new").is_file());
    // Modified in the overlay (copied up, carrying overlayfs's own attributes): the workspace's
    // file has none.
    assert_eq!(
        std::fs::read_to_string(room.root.join("old.txt")).expect("old.txt"),
        "old\nmore\n"
    );
    assert_nothing_special_landed(&room.root);
}

#[test]
fn extended_attributes_and_fifos_a_command_makes_are_not_applied() {
    xattrs_and_special_files_are_not_applied(false);
}

#[test]
fn extended_attributes_and_fifos_a_command_makes_are_not_applied_as_nobody() {
    xattrs_and_special_files_are_not_applied(true);
}

/// A deletion taken back after its directory was swapped for a link (as anything writing the
/// workspace could): the
/// undo is refused, and nothing is written where the link points.
fn undo_through_a_swapped_link(as_nobody: bool) {
    let Some(room) = Room::new(as_nobody) else {
        return;
    };
    room.write("d/x.txt", "x\n").write("e/keep.txt", "e\n");
    room.hand_over();
    room.call("sneaky-rm", &json!({"file_path": "d/x.txt"}))
        .ok();
    std::fs::rename(room.root.join("d"), room.root.join("d.was")).expect("rename");
    std::os::unix::fs::symlink("e", room.root.join("d")).expect("link");
    let reply = room.call("sneaky-undo", &json!({}));
    let message = reply.err("conflict", 1);
    assert!(message.contains("d is now a symbolic link"), "{message}");
    assert!(
        !room.root.join("e/x.txt").exists(),
        "undo wrote through the link"
    );
    assert!(!room.root.join("d.was/x.txt").exists());
}

/// What an edit changed through a directory link that was there all along is recorded where it
/// really is, and undone there.
#[test]
fn an_edit_made_through_a_directory_link_is_undone() {
    let Some(room) = Room::new(false) else {
        return;
    };
    room.write("real/old.txt", "old\n");
    std::os::unix::fs::symlink("real", room.root.join("d")).expect("link");
    room.call(
        "sneaky-write",
        &json!({"file_path": "d/old.txt", "content": "new\n"}),
    )
    .ok();
    let undone = room.call("sneaky-undo", &json!({}));
    assert_eq!(
        undone.ok()["paths"],
        json!(["real/old.txt"]),
        "{}",
        undone.json
    );
    assert_eq!(
        std::fs::read_to_string(room.root.join("real/old.txt")).expect("read"),
        "old\n"
    );
}

#[test]
fn undo_through_a_directory_swapped_for_a_link_is_refused() {
    undo_through_a_swapped_link(false);
}

#[test]
fn undo_through_a_directory_swapped_for_a_link_is_refused_as_nobody() {
    undo_through_a_swapped_link(true);
}

/// Held changes applied later (a driver's approval by effect, a background job's): the
/// protected paths' placeholders the upper layer holds are not the command's, and are not
/// reported as reduced; what the command did leave is.
#[test]
fn held_changes_report_what_was_reduced_and_not_the_placeholders() {
    let Some(room) = Room::new(false) else {
        return;
    };
    room.write("a.txt", "a\n");
    let held = room.call_with(
        "sneaky-run",
        &["--hold-changes"],
        &json!({"command": "echo b > b.txt && mkfifo pipe", "dry_run": true}),
    );
    let r = held.command_ran();
    assert_eq!(
        reduced(r),
        [("pipe".to_string(), "FIFO not applied".to_string())]
    );
    let id = r["held"].as_str().expect("held id").to_string();
    let applied = room.call_with("sneaky-run", &["--apply-held"], &json!({"held": id}));
    assert_eq!(
        reduced(applied.ok()),
        [("pipe".to_string(), "FIFO not applied".to_string())],
        "{}",
        applied.json
    );
    assert_eq!(
        room.root.join("b.txt").metadata().map(|m| m.len()).ok(),
        Some(2)
    );
    assert!(std::fs::symlink_metadata(room.root.join("pipe")).is_err());
}
