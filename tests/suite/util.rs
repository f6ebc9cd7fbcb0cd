//! The shared harness: a temporary workspace, a way to call a tool binary with JSON or flags,
//! a strict reading of its one-line envelope, and the guards of tests that need something a
//! contributor's machine may lack (root, a command, a Python package): without it the test
//! skips with a SKIPPED line on stderr, unless SNEAKY_REQUIRE_ALL=1 (set by `.ci/test` as
//! root) makes the missing piece a failure.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

/// Keep a binary's walk up for a project marker inside `dir` (a test's temp dir): with
/// `SNEAKY_CEILING_DIRECTORIES` naming it, nothing at or above `dir` is looked at, so whatever
/// the machine holds above (a `/tmp/.git`, a dotfiles repository) cannot change the test.
pub fn fence<'c>(cmd: &'c mut std::process::Command, dir: &Path) -> &'c mut std::process::Command {
    cmd.env("SNEAKY_CEILING_DIRECTORIES", dir)
}

pub struct Ws {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
}

/// A workspace `<tmp>/ws` with a sibling `<tmp>/ws_evil` and a secret beside it.
pub fn ws() -> Ws {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).expect("mkdir ws");
    std::fs::create_dir_all(dir.path().join("ws_evil")).expect("mkdir evil");
    std::fs::write(dir.path().join("ws_evil/secret.txt"), "EVIL SECRET\n").expect("write");
    std::fs::write(dir.path().join("secret.txt"), "OUTSIDE SECRET\n").expect("write");
    Ws { dir, root }
}

impl Ws {
    pub fn write(&self, rel: &str, content: &str) -> &Ws {
        let p = self.root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, content).expect("write");
        self
    }

    pub fn mkdir(&self, rel: &str) -> &Ws {
        std::fs::create_dir_all(self.root.join(rel)).expect("mkdir");
        self
    }

    pub fn link(&self, target: impl AsRef<Path>, rel: &str) -> &Ws {
        std::os::unix::fs::symlink(target, self.root.join(rel)).expect("symlink");
        self
    }

    /// The user's own configuration (`$XDG_CONFIG_HOME/sneaky/config.toml` of every call): what
    /// a workspace's `sneaky.toml` may not raise (sizes, limits) is raised here.
    pub fn user_config(&self, text: &str) -> &Ws {
        let path = self.dir.path().join("xdg/sneaky/config.toml");
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(path, text).expect("write config");
        self
    }

    pub fn outside(&self) -> &Path {
        self.dir.path()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).expect("read")
    }

    /// Call a tool binary with a JSON request on stdin.
    pub fn call(&self, bin: &str, request: Value) -> Reply {
        self.call_raw(bin, &[], request.to_string().as_bytes())
    }

    /// Call a tool binary with flags (and stdin bytes).
    pub fn call_raw(&self, bin: &str, args: &[&str], stdin: &[u8]) -> Reply {
        self.call_env(bin, args, stdin, &[])
    }

    /// `call_raw` with more variables in the binary's environment (`PATH` …).
    pub fn call_env(
        &self,
        bin: &str,
        args: &[&str],
        stdin: &[u8],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Reply {
        let mut cmd = std::process::Command::cargo_bin(bin).expect("binary");
        cmd.envs(env.iter().copied());
        // The test run's own CARGO_TARGET_DIR lies outside the workspace, where a sandboxed
        // command cannot write: a cargo run in the workspace builds in `<root>/target`, as it
        // does for a person who has not set the variable.
        fence(&mut cmd, self.dir.path())
            .current_dir(&self.root)
            .env_remove("CARGO_TARGET_DIR")
            .env("SNEAKY_ROOT", &self.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            // The sandbox's private toolchain caches of the workspace, beside it.
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .args(args);
        let out = assert_cmd::Command::from_std(cmd)
            .write_stdin(stdin.to_vec())
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .expect("run");
        Reply::parse(bin, out)
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: i32,
    pub json: Value,
    /// stdout as written, the newline and all.
    pub stdout: String,
    pub stderr: String,
}

impl Reply {
    /// Exactly one JSON object and one newline on stdout, or the test fails.
    pub fn parse(bin: &str, out: Output) -> Reply {
        let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            stdout.ends_with('\n'),
            "{bin}: stdout not newline-terminated: {stdout:?}"
        );
        assert_eq!(
            stdout.trim_end().lines().count(),
            1,
            "{bin}: more than one line: {stdout}"
        );
        assert!(!stderr.contains("panicked"), "{bin} panicked: {stderr}");
        let json: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
        let obj = json.as_object().expect("envelope is an object");
        let ok = obj["ok"].as_bool().expect("ok is a bool");
        assert!(obj["tool"].is_string());
        if ok {
            assert!(obj["result"].is_object(), "result: {json}");
        } else {
            assert!(obj["error"]["code"].is_string() && obj["error"]["message"].is_string());
        }
        Reply {
            status: out.status.code().expect("exit code"),
            json,
            stdout,
            stderr,
        }
    }

    pub fn ok(&self) -> &Value {
        assert_eq!(self.status, 0, "expected success: {}", self.json);
        &self.json["result"]
    }

    /// A run_command result (`ok:true`) whose exit status follows the command's: 0 when it
    /// exited 0, else 1 (docs/contract.md, "Exit status": `sneaky-run 'make test' && echo pass`).
    pub fn command_ran(&self) -> &Value {
        assert_eq!(self.json["ok"], true, "expected a result: {}", self.json);
        let result = &self.json["result"];
        let succeeded = result["exit_code"] == 0 && result["timed_out"] != true;
        assert_eq!(
            self.status,
            if succeeded { 0 } else { 1 },
            "sneaky-run's status must follow the command's: {}",
            self.json
        );
        result
    }

    /// Assert a failure with this code and exit status; returns the message.
    pub fn err(&self, code: &str, status: i32) -> String {
        assert_eq!(
            self.json["ok"], false,
            "expected failure {code}: {}",
            self.json
        );
        assert_eq!(self.json["error"]["code"], code, "{}", self.json);
        assert_eq!(self.status, status, "{}", self.json);
        self.json["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

/// Skip the calling test loudly: a `SKIPPED <test>: <why>` line written straight to stderr
/// (not through `eprintln!`, which the test harness captures for passing tests), or a failure
/// when SNEAKY_REQUIRE_ALL=1 says that everything must run (CI). Returns false, for
/// `if !util::require_…(…) { return; }`.
pub fn skip(why: &str) -> bool {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if std::env::var("SNEAKY_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{test} cannot run here: {why} (SNEAKY_REQUIRE_ALL=1: nothing may be skipped)");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    false
}

/// Whether this process runs as root (`/proc/self` belongs to the effective user).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// True when running as root; otherwise skips (see `skip`), saying what root is needed for.
pub fn require_root(why: &str) -> bool {
    is_root() || skip(&format!("needs root to {why}"))
}

/// True when `cmd` is a program on PATH; otherwise skips (see `skip`).
pub fn require_cmd(cmd: &str) -> bool {
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(dir.join(cmd))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    found || skip(&format!("needs the command `{cmd}` on PATH"))
}

/// True when `python` exists and imports `module`; otherwise skips (see `skip`), naming the
/// set-up script that installs it.
pub fn require_python_pkg(python: &Path, module: &str, setup: &str) -> bool {
    let imports = std::process::Command::new(python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    imports
        || skip(&format!(
            "needs the Python package `{module}` in {} (run `bash {setup}`)",
            python.display()
        ))
}

/// A bound on how long something took, which a loaded machine may exceed without anything
/// being wrong: past `bound` this writes a SLOW line to stderr, and fails only when
/// SNEAKY_TIMING=1 asks for strict timing (a quiet machine, e.g. before a release). Default
/// tests make no wall-clock asserts; hangs are caught by the harness's own timeouts.
pub fn took_at_most(started: std::time::Instant, bound: std::time::Duration, what: &str) {
    let took = started.elapsed();
    if took <= bound {
        return;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("SLOW {test}: {what} took {took:?} (bound {bound:?})");
    if std::env::var("SNEAKY_TIMING").as_deref() == Ok("1") {
        panic!("{line}; SNEAKY_TIMING=1 makes this a failure");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Everything under `root` (with `.git` when `with_git`): path -> (kind, mode, content or link
/// target).
pub fn tree(
    root: &std::path::Path,
    with_git: bool,
) -> std::collections::BTreeMap<String, (char, u32, Vec<u8>)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("under root");
            if rel.starts_with(".git") && !with_git {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777;
            let key = rel.to_string_lossy().into_owned();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("readlink");
                out.insert(key, ('l', 0, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                out.insert(key, ('d', mode, Vec::new()));
                stack.push(path);
            } else {
                out.insert(key, ('f', mode, std::fs::read(&path).expect("read")));
            }
        }
    }
    out
}

/// The tool binaries in `<dir>/bin` (0755), for a child run as another user: the build's own
/// target/ may sit under a directory that user cannot traverse (a 0700 home, a `mktemp -d`
/// folder), where exec fails with "Permission denied". Hard links where the file system
/// allows (no disk taken: a debug binary is ~50 MB and tests run many at once), copies
/// otherwise. A test that hands `dir` to that user does it with `give_to`, which leaves the
/// binaries root's.
pub fn copy_binaries_for_others(dir: &Path, bins: &[&str]) -> PathBuf {
    let to = dir.join("bin");
    std::fs::create_dir(&to).expect("mkdir bin");
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for bin in bins {
        let (from, copy) = (assert_cmd::cargo::cargo_bin(bin), to.join(bin));
        if std::fs::hard_link(&from, &copy).is_err() {
            copy_executable(&from, &copy);
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    to
}

/// `chown -R uid:uid dir`, except what `copy_binaries_for_others` put in `<dir>/bin`: those
/// may be the build's own binaries (hard links), which stay root's.
pub fn give_to(dir: &Path, uid: u32) {
    let owned = std::process::Command::new("chown")
        .args(["-R", &format!("{uid}:{uid}")])
        .arg(dir)
        .status()
        .expect("chown");
    assert!(owned.success());
    if let Ok(bins) = std::fs::read_dir(dir.join("bin")) {
        for bin in bins.flatten() {
            std::os::unix::fs::lchown(bin.path(), Some(0), Some(0)).expect("chown back");
        }
    }
}

/// Copy a program to run it from `to`, by a `cp` of its own: copied in this process, the new
/// file's descriptor open for writing would be inherited by whatever another test thread forks
/// meanwhile, and running the copy fails with "Text file busy" until that child executes its
/// own program. Only `cp` ever holds this one open for writing.
pub fn copy_executable(from: &Path, to: &Path) {
    let copied = std::process::Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .status()
        .expect("run cp");
    assert!(copied.success(), "copying {} failed", from.display());
}

/// The first directory on the way to `path` that others cannot traverse (no `o+x`), if any.
pub fn closed_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 == 0))
        .map(Path::to_path_buf)
}

/// Run the command `make` builds, with `stdin`, within `timeout`, trying again while its
/// program is "Text file busy": a binary copied in this process stays open for writing in a
/// child that another test thread forked during the copy, until that child executes its own
/// program ([`copy_executable`] avoids it; a copy made otherwise may still meet it).
pub fn output_retrying_busy(
    make: impl Fn() -> std::process::Command,
    stdin: &[u8],
    timeout: std::time::Duration,
) -> Output {
    let mut tries = 0;
    loop {
        match assert_cmd::Command::from_std(make())
            .write_stdin(stdin.to_vec())
            .timeout(timeout)
            .output()
        {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.expect("run"),
        }
    }
}
