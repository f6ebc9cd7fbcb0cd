//! Nothing of SneakyCode's own state is visible to a command or a job: the jobs' runtime
//! directories (every workspace's job output), the undo history (what edits replaced, in this
//! workspace and others), held changes, the MCP token file, and other calls' private temp
//! dirs (a running job's, a foreground call's still running). Markers are planted in each, by
//! the host that runs the command and by a second host of the same user whose XDG variables
//! are unset (its state in the default places), then a command and a job walk every file they
//! can read and look for them. As root and as the user nobody.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Reply};

const PYTHON: &str = "/usr/bin/python3";

/// The walk: every regular file beneath `/` the command can read, except the kernel's own
/// file systems (/proc, /sys, /dev) and directories tagged as caches (`CACHEDIR.TAG`: build
/// outputs, hundreds of thousands of files on a developer's machine). Only files changed since
/// the test started are read (up to 16 MiB each): a marker is made fresh for each run, so a
/// file that holds one was written since, and its change time says so (no program can set a
/// change time back). Prints `found KIND PATH` for each marker met, then `done READ`.
const WALK: &str = r#"
import os, sys
needle = ("SNEAKY-" + "OWN-" + sys.argv[1] + "-").encode()
since = float(sys.argv[2]) - 2
limit = 16 << 20
read = 0
seen = set()
stack = ["/"]
while stack:
    d = stack.pop()
    try:
        with os.scandir(d) as it:
            entries = list(it)
    except OSError:
        continue
    if any(e.name == "CACHEDIR.TAG" for e in entries):
        continue
    for e in entries:
        if e.path in ("/proc", "/sys", "/dev"):
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
                continue
            if not e.is_file(follow_symlinks=False):
                continue
            st = e.stat(follow_symlinks=False)
            if st.st_ctime < since or st.st_size > limit:
                continue
            with open(e.path, "rb") as f:
                data = f.read(limit)
        except OSError:
            continue
        read += 1
        at = data.find(needle)
        while at >= 0:
            rest = data[at + len(needle):at + len(needle) + 40]
            kind = rest.split(b"-END")[0].decode("ascii", "replace")
            if (kind, e.path) not in seen:
                seen.add((kind, e.path))
                print("found", kind, e.path, flush=True)
            at = data.find(needle, at + 1)
print("done", read, flush=True)
"#;

/// One test's world: two workspaces, a home, a TMPDIR, and the two hosts' state places, all
/// beneath one temporary directory owned by the user the tools run as.
struct World {
    dir: tempfile::TempDir,
    uid: Option<u32>,
    bins: PathBuf,
    run: String,
    since: f64,
}

/// Which host calls a tool: the one that runs the walking command (its XDG variables name
/// places of its own), or a second one of the same user with no XDG variables (its state in the
/// default places: `~/.local/state`, `$TMPDIR/sneaky-UID`).
#[derive(Clone, Copy, PartialEq)]
enum Host {
    Same,
    Second,
}

impl World {
    fn new(uid: Option<u32>) -> Option<World> {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        if uid.is_some() {
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
        let bins = util::copy_binaries_for_others(
            dir.path(),
            &["sneaky-run", "sneaky-jobs", "sneaky-write"],
        );
        for d in ["a", "b", "home", "tmp", "run", "xdg/sneaky"] {
            std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs_f64();
        let run = format!(
            "{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock")
                .subsec_nanos()
        );
        let w = World {
            dir,
            uid,
            bins,
            run,
            since,
        };
        let trusted: Vec<String> = ["a", "b"]
            .iter()
            .map(|r| w.root(r).display().to_string())
            .collect();
        std::fs::write(
            w.path("xdg/sneaky/config.toml"),
            format!(
                "trusted_workspaces = {trusted:?}\n[tools.shell]\nextra_allowed_commands = [{PYTHON:?}]\n"
            ),
        )
        .expect("config");
        std::fs::write(w.root("a").join("walk.py"), WALK).expect("walk.py");
        std::fs::write(w.root("a").join("visible.txt"), w.marker("VISIBLE")).expect("write");
        if let Some(uid) = uid {
            util::give_to(w.dir.path(), uid);
        }
        Some(w)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn root(&self, name: &str) -> PathBuf {
        self.path(name)
    }

    /// A marker of this run: `SNEAKY-OWN-<run>-<KIND>-END`.
    fn marker(&self, kind: &str) -> String {
        format!("SNEAKY-OWN-{}-{kind}-END\n", self.run)
    }

    /// A shell expression that prints the marker without its text being in the command line.
    fn print_marker(&self, kind: &str) -> String {
        format!("printf '%s%s' SNEAKY-OWN- '{}-{kind}-END'", self.run)
    }

    /// Call `bin` in workspace `ws` as `host`, with `args` and the JSON `request` on stdin.
    fn call(
        &self,
        host: Host,
        ws: &str,
        bin: &str,
        args: &[&str],
        request: Value,
        env: &[(&str, &Path)],
    ) -> Reply {
        let make = || {
            let mut cmd = std::process::Command::new(self.bins.join(bin));
            util::fence(&mut cmd, self.dir.path())
                .current_dir(self.root(ws))
                .env("SNEAKY_ROOT", self.root(ws))
                .env("HOME", self.path("home"))
                .env("TMPDIR", self.path("tmp"))
                .env("XDG_CONFIG_HOME", self.path("xdg"))
                .env_remove("SNEAKY_CONFIG")
                .env_remove("SNEAKY_JOB_OWNER")
                .env_remove("CARGO_TARGET_DIR")
                .env_remove("XDG_STATE_HOME")
                .env_remove("XDG_RUNTIME_DIR")
                .args(args);
            if host == Host::Same {
                cmd.env("XDG_STATE_HOME", self.path("state"))
                    .env("XDG_RUNTIME_DIR", self.path("run"));
            }
            for (k, v) in env {
                cmd.env(k, v);
            }
            if let Some(uid) = self.uid {
                cmd.uid(uid).gid(uid);
            }
            cmd
        };
        let out = util::output_retrying_busy(
            make,
            request.to_string().as_bytes(),
            Duration::from_secs(400),
        );
        Reply::parse(bin, out)
    }

    /// Plant the markers: what edits replaced (in this workspace and another, by both hosts),
    /// a held change, jobs' output and files in their temp dirs (by both hosts), a token file.
    /// Returns the jobs to end.
    fn plant(&self) -> Vec<(Host, String)> {
        for (host, ws, file, kind) in [
            (Host::Same, "a", "note.txt", "HISTORY-HERE"),
            (Host::Same, "b", "note.txt", "HISTORY-OTHER"),
            (Host::Second, "b", "other.txt", "HISTORY-DEFAULT"),
        ] {
            for content in [self.marker(kind), "clean\n".to_string()] {
                self.call(
                    host,
                    ws,
                    "sneaky-write",
                    &[],
                    json!({"file_path": file, "content": content}),
                    &[],
                )
                .ok();
            }
        }
        let held = self.call(
            Host::Same,
            "a",
            "sneaky-run",
            &["--hold-changes"],
            json!({"command": format!("{} > held.txt", self.print_marker("HELD")), "dry_run": true}),
            &[],
        );
        assert!(
            held.command_ran()["held"].is_string(),
            "nothing held: {}",
            held.json
        );
        assert!(!self.root("a").join("held.txt").exists());
        let mut jobs = Vec::new();
        for (host, kind) in [(Host::Same, "JOB-SAME"), (Host::Second, "JOB-DEFAULT")] {
            let r = self.call(
                host,
                "b",
                "sneaky-run",
                &[],
                json!({"command": format!(
                           "{} > \"$TMPDIR/job.txt\"; {}; echo; sleep 600",
                           self.print_marker(&format!("{kind}-TMPDIR")),
                           self.print_marker(kind)
                       ),
                       "background": true, "wait_for": "END", "wait_ms": 10000}),
                &[],
            );
            let id = r.ok()["job_id"].as_str().expect("job id").to_string();
            jobs.push((host, id));
        }
        std::fs::write(self.path("token.txt"), self.marker("TOKEN")).expect("token");
        if let Some(uid) = self.uid {
            std::os::unix::fs::chown(self.path("token.txt"), Some(uid), Some(uid)).expect("chown");
        }
        jobs
    }

    /// A foreground call of the second host in workspace b that leaves a marker in its temp
    /// dir and runs until `release` exists. Its reply.
    fn hold_a_call(&self, release: &Path) -> Reply {
        let command = format!(
            "{} > \"$TMPDIR/run.txt\"; while [ ! -e '{}' ]; do sleep 0.1; done",
            self.print_marker("RUN-TMPDIR"),
            release.display()
        );
        self.call(
            Host::Second,
            "b",
            "sneaky-run",
            &[],
            json!({"command": command, "timeout": 600}),
            &[],
        )
    }

    /// Wait until a file named `name` is somewhere beneath the hosts' TMPDIR.
    fn wait_for_temp_file(&self, name: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mut stack = vec![self.path("tmp")];
            let mut seen = Vec::new();
            while let Some(dir) = stack.pop() {
                for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    if e.file_name() == name {
                        return;
                    }
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                    seen.push(e.path());
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {name} beneath TMPDIR after a minute: {seen:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The walk's command line in workspace a.
    fn walk_command(&self) -> String {
        format!("{PYTHON} walk.py {} {}", self.run, self.since)
    }

    /// What a walk printed: the markers it met (kind and path), and how many files it read.
    fn judge(&self, how: &str, out: &str) {
        assert!(
            out.lines().any(|l| l.starts_with("done ")),
            "{how}: the walk did not finish: {out}"
        );
        let found: Vec<&str> = out.lines().filter(|l| l.starts_with("found ")).collect();
        // The walk works: it meets the marker left in the workspace on purpose.
        assert!(
            found.iter().any(|l| l.starts_with("found VISIBLE ")),
            "{how}: the walk missed the workspace's own marker: {out}"
        );
        let leaked: Vec<&&str> = found
            .iter()
            .filter(|l| !l.starts_with("found VISIBLE "))
            .collect();
        assert!(
            leaked.is_empty(),
            "{how}: SneakyCode's own state is visible: {leaked:#?}"
        );
    }

    fn end_jobs(&self, jobs: &[(Host, String)]) {
        for (host, id) in jobs {
            let _ = self.call(
                *host,
                "b",
                "sneaky-jobs",
                &[],
                json!({"job_id": id, "kill": true}),
                &[],
            );
        }
    }
}

/// Makes `path` when dropped: a held call ends even when the test fails.
struct Release(PathBuf);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, "");
    }
}

fn walk_as(uid: Option<u32>) {
    let Some(w) = World::new(uid) else { return };
    let jobs = w.plant();
    let release = Release(w.path("release"));
    let released = release.0.clone();
    std::thread::scope(|s| {
        let held = s.spawn(|| w.hold_a_call(&released));
        w.wait_for_temp_file("run.txt");
        walk(&w, uid);
        drop(release);
        held.join().expect("the held call").command_ran();
    });
    w.end_jobs(&jobs);
}

/// A command and a job walk every file they can read.
fn walk(w: &World, uid: Option<u32>) {
    let token = w.path("token.txt");
    let env = [(sneaky::fs::pathlist::MCP_TOKEN_FILE_ENV, token.as_path())];
    let who = uid.map_or("this user".to_string(), |u| format!("uid {u}"));
    // A command.
    let r = w.call(
        Host::Same,
        "a",
        "sneaky-run",
        &[],
        json!({"command": w.walk_command(), "timeout": 360}),
        &env,
    );
    let out = r.command_ran()["stdout"].as_str().unwrap_or("").to_string();
    w.judge(&format!("a command as {who}"), &out);
    // A job.
    let r = w.call(
        Host::Same,
        "a",
        "sneaky-run",
        &[],
        json!({"command": w.walk_command(), "background": true, "wait_ms": 0}),
        &env,
    );
    let id = r.ok()["job_id"].as_str().expect("job id").to_string();
    let o = w.call(
        Host::Same,
        "a",
        "sneaky-jobs",
        &[],
        json!({"job_id": id, "wait_for": "^done", "wait_ms": 360000}),
        &[],
    );
    let out = o.ok()["stdout"].as_str().unwrap_or("").to_string();
    w.judge(&format!("a job as {who}"), &out);
}

#[test]
fn commands_and_jobs_see_nothing_of_sneakycodes_own_state() {
    if !Path::new(PYTHON).is_file() && !util::skip("needs /usr/bin/python3") {
        return;
    }
    if !namespaces_or_skip("commands_and_jobs_see_nothing_of_sneakycodes_own_state") {
        return;
    }
    walk_as(None);
    if util::is_root() {
        walk_as(Some(65_534));
    }
}
