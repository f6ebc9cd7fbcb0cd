//! A developer's day, typed as a new user types it (issue 38): sixteen workflows, each a test
//! that calls `sneaky-run` once per command with the default configuration (only
//! `tools.shell.network` is given, where a registry is needed) and checks what the developer
//! expects to see: the output, the workspace afterwards, an undo that takes a change back.
//!
//! Nothing reaches the internet: a registry is a stand-in on the loopback, served from this
//! test's process (tests/workflows/registry.py: a PyPI simple index of the wheels
//! `.ci/setup-workflows.sh` downloads once, an npm registry of a package the test packs
//! itself) or a cargo local registry the test builds; Go needs no module. The toolchains come
//! from `.ci/setup-workflows.sh`; without one a test skips loudly (a failure in CI).
//!
//! Every call runs with this test's own XDG directories (the private caches of the sandbox,
//! the undo history, the jobs), a git identity and a pip configuration of its own, and
//! without the variables of this machine that would change what the tools do (a pip
//! `find-links`, no bytecode), so that it sees what a person's fresh shell sees.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};
use sha2::Digest;

use crate::run_exec::user_config;
use crate::util::{self, Reply, Ws};

/// A build's bound: the machine runs many tests at once.
const SLOW: u64 = 600;

struct Day {
    w: Ws,
    env: Vec<(String, OsString)>,
    registry: Option<Child>,
}

impl Drop for Day {
    fn drop(&mut self) {
        if let Some(child) = self.registry.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // A job left by a failed test: its supervisor ends with its runtime directory gone,
        // but not before its lease; end the jobs now.
        let listed = self.call("sneaky-jobs", json!({"list": true}));
        if let Some(jobs) = listed.json["result"]["jobs"].as_array() {
            for job in jobs.iter().filter(|j| j["state"] == "running") {
                self.call(
                    "sneaky-jobs",
                    json!({"job_id": job["job_id"], "kill": true}),
                );
            }
        }
    }
}

/// A workspace for one workflow, or None (skipped) when the sandbox or a program is missing.
fn day(needs: &[&str]) -> Option<Day> {
    if !needs.iter().all(|cmd| util::require_cmd(cmd))
        || !crate::sandbox::namespaces_or_skip("a developer's workflow")
    {
        return None;
    }
    let w = util::ws();
    let dir = w.dir.path().to_path_buf();
    for sub in ["run", "cache", "home"] {
        std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
    }
    // The person's git identity and pip configuration, as their own dotfiles would hold them.
    std::fs::write(
        dir.join("home/gitconfig"),
        "[user]\n\tname = A Developer\n\temail = dev@example.test\n[init]\n\tdefaultBranch = main\n",
    )
    .expect("gitconfig");
    std::fs::write(dir.join("home/pip.conf"), "[global]\n").expect("pip.conf");
    std::fs::write(dir.join("home/npmrc"), "").expect("npmrc");
    let env = vec![
        (
            "GIT_CONFIG_GLOBAL".into(),
            dir.join("home/gitconfig").into(),
        ),
        ("PIP_CONFIG_FILE".into(), dir.join("home/pip.conf").into()),
        (
            "npm_config_userconfig".into(),
            dir.join("home/npmrc").into(),
        ),
        ("GOPROXY".into(), "off".into()),
        ("GOTOOLCHAIN".into(), "local".into()),
    ];
    Some(Day {
        w,
        env,
        registry: None,
    })
}

impl Day {
    fn root(&self) -> &Path {
        &self.w.root
    }

    fn cmd(&self, bin: &str) -> Command {
        let dir = self.w.dir.path();
        let mut cmd = Command::cargo_bin(bin).expect("binary");
        util::fence(&mut cmd, dir)
            .current_dir(&self.w.root)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("SNEAKY_CONFIG")
            .env_remove("SNEAKY_JOB_OWNER")
            .env("SNEAKY_ROOT", &self.w.root)
            .env("XDG_CONFIG_HOME", dir.join("xdg"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .env("XDG_RUNTIME_DIR", dir.join("run"))
            .env("XDG_CACHE_HOME", dir.join("cache"));
        // What this machine sets that a person's shell does not: wheels found offline, no
        // bytecode written, a pip index of its own.
        for name in [
            "PIP_FIND_LINKS",
            "PIP_INDEX_URL",
            "PIP_EXTRA_INDEX_URL",
            "PIP_NO_INDEX",
            "PYTHONDONTWRITEBYTECODE",
            "GOFLAGS",
            "npm_config_registry",
        ] {
            cmd.env_remove(name);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    fn call(&self, bin: &str, request: Value) -> Reply {
        let out = assert_cmd::Command::from_std(self.cmd(bin))
            .write_stdin(request.to_string())
            .timeout(Duration::from_secs(SLOW + 60))
            .output()
            .expect("run");
        Reply::parse(bin, out)
    }

    /// Run `command` as typed; it must succeed. Its result.
    fn sh(&self, command: &str) -> Value {
        self.sh_with(json!({ "command": command }))
    }

    fn sh_with(&self, mut request: Value) -> Value {
        if request.get("timeout").is_none() {
            request["timeout"] = json!(SLOW);
        }
        let reply = self.call("sneaky-run", request.clone());
        let r = reply.command_ran().clone();
        assert_eq!(r["exit_code"], 0, "{request}: {r:#}");
        r
    }

    /// Run `command`, which must fail (a non-zero exit, not a refusal). Its result.
    fn sh_fails(&self, command: &str) -> Value {
        let reply = self.call("sneaky-run", json!({ "command": command, "timeout": SLOW }));
        let r = reply.command_ran().clone();
        assert_ne!(r["exit_code"], 0, "{command}: {r:#}");
        r
    }

    /// A program run on the host, in the workspace, as the person's own shell would: it must
    /// succeed; its stdout.
    fn host(&self, program: &str, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(args)
            .current_dir(&self.w.root)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("host program");
        assert!(out.status.success(), "{program} {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn write(&self, rel: &str, content: &str) {
        self.w.write(rel, content);
    }

    fn executable(&self, rel: &str, content: &str) {
        self.w.write(rel, content);
        std::fs::set_permissions(
            self.root().join(rel),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }

    fn read(&self, rel: &str) -> String {
        self.w.read(rel)
    }

    fn exists(&self, rel: &str) -> bool {
        std::fs::symlink_metadata(self.root().join(rel)).is_ok()
    }

    /// A repository with everything committed, made on the host (the project the person
    /// opens).
    fn committed_repo(&self) {
        self.host("git", &["init", "-q"]);
        self.host("git", &["add", "-A"]);
        self.host("git", &["commit", "-qm", "start"]);
    }

    /// The person's pip configuration names the stand-in index (as it would a mirror).
    fn pip_index(&self, address: &str) {
        std::fs::write(
            self.w.outside().join("home/pip.conf"),
            format!("[global]\nindex-url = http://{address}/simple\n"),
        )
        .expect("pip.conf");
    }

    /// Start the stand-in registry of `kind` over `dir`, and allow only its address.
    fn registry(&mut self, kind: &str, dir: &Path) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workflows/registry.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(kind)
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the stand-in registry");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its port");
        self.registry = Some(child);
        let address = format!("127.0.0.1:{}", line.trim());
        user_config(
            &self.w,
            &format!("[tools.shell]\nnetwork = [\"{address}\"]\n"),
        );
        address
    }
}

fn stdout(r: &Value) -> &str {
    r["stdout"].as_str().unwrap_or("")
}

fn stderr(r: &Value) -> &str {
    r["stderr"].as_str().unwrap_or("")
}

/// The paths of a result's `changes` (or `untracked`).
fn paths(r: &Value, key: &str) -> Vec<String> {
    r[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["path"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

// 1. git: init, add, commit in a fresh workspace.
#[test]
fn git_init_add_commit_in_a_fresh_workspace() {
    let Some(d) = day(&["git"]) else { return };
    d.write("README.md", "# notes\n");
    d.write("src/app.py", "print('hi')\n");
    let r = d.sh("git init");
    assert!(
        stdout(&r).contains("Initialized empty Git repository"),
        "{r}"
    );
    assert!(d.exists(".git/HEAD"), "git init made no repository: {r:#}");
    d.sh("git add -A");
    let r = d.sh("git commit -m first");
    assert!(stdout(&r).contains("first"), "{r}");
    let r = d.sh("git log --oneline");
    assert!(stdout(&r).ends_with(" first\n"), "{r}");
    assert_eq!(stdout(&d.sh("git status --porcelain")), "");
    // The person's own git sees the same history.
    assert_eq!(d.host("git", &["log", "--format=%s"]), "first\n");
    assert_eq!(
        d.host("git", &["ls-files"]),
        "README.md\nsrc/app.py\n",
        "what was committed"
    );
}

// 2. git: a branch, a stash, a rebase.
#[test]
fn git_switch_stash_rebase() {
    let Some(d) = day(&["git"]) else { return };
    d.write("app.txt", "line 1\n");
    d.write("notes.txt", "todo\n");
    d.committed_repo();
    d.sh("git switch -c feature");
    d.write("app.txt", "line 1\nfeature line\n");
    d.sh("git commit -am 'feature work'");
    // Work in progress put aside while main moves on.
    d.write("notes.txt", "todo\nhalf done\n");
    d.sh("git stash");
    assert_eq!(
        d.read("notes.txt"),
        "todo\n",
        "the stash put the change aside"
    );
    d.sh("git switch main");
    d.write("main.txt", "on main\n");
    d.sh("git add main.txt && git commit -m 'main moves'");
    d.sh("git switch feature");
    let r = d.sh("git rebase main");
    assert!(
        format!("{}{}", stdout(&r), stderr(&r)).contains("Successfully rebased"),
        "{r}"
    );
    d.sh("git stash pop");
    assert_eq!(d.read("notes.txt"), "todo\nhalf done\n");
    assert_eq!(d.read("main.txt"), "on main\n");
    assert_eq!(
        d.host("git", &["log", "--format=%s", "feature"]),
        "feature work\nmain moves\nstart\n"
    );
    assert_eq!(d.host("git", &["stash", "list"]), "");
}

// 3. git: the repository's installed hooks run, contained.
#[test]
fn git_installed_hooks_run_contained() {
    let Some(d) = day(&["git"]) else { return };
    d.write("app.txt", "ok\n");
    d.committed_repo();
    let outside = d.w.outside().join("hook-was-here");
    d.executable(
        ".git/hooks/pre-commit",
        &format!(
            "#!/bin/sh\necho 'pre-commit: checking' >&2\ntouch '{}' 2>/dev/null\n\
             if git diff --cached | grep -q 'DO NOT COMMIT'; then\n\
             \techo 'pre-commit: refused' >&2\n\texit 1\nfi\n",
            outside.display()
        ),
    );
    d.executable(
        ".git/hooks/pre-rebase",
        "#!/bin/sh\necho 'pre-rebase: checking' >&2\n",
    );
    d.write("app.txt", "ok\nbetter\n");
    let r = d.sh("git commit -am better");
    assert!(stderr(&r).contains("pre-commit: checking"), "{r}");
    assert!(!stderr(&r).contains("not set as executable"), "{r}");
    d.write("app.txt", "ok\nbetter\nDO NOT COMMIT\n");
    let r = d.sh_fails("git commit -am 'debug left in'");
    assert!(stderr(&r).contains("pre-commit: refused"), "{r}");
    assert_eq!(d.host("git", &["log", "-1", "--format=%s"]), "better\n");
    d.sh("git checkout app.txt && git switch -c topic HEAD~1");
    let r = d.sh("git rebase main");
    assert!(stderr(&r).contains("pre-rebase: checking"), "{r}");
    // The hook ran inside the sandbox: nothing written outside the workspace.
    assert!(!outside.exists(), "the hook wrote outside the workspace");
}

// 4. A venv, pip install from the registry, pytest.
#[test]
fn venv_pip_install_and_pytest() {
    let Some(mut d) = day(&["python3"]) else {
        return;
    };
    let Some(wheels) = wheels() else { return };
    let address = d.registry("pypi", &wheels);
    d.pip_index(&address);
    d.write("calc.py", "def add(a, b):\n    return a + b\n");
    // A package of tests, as pytest's documentation lays them out: pytest then puts the
    // project's root on sys.path, where `calc` is.
    d.write("tests/__init__.py", "");
    d.write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n\
         def test_add_negative():\n    assert add(-1, 1) == 0\n",
    );
    d.sh("python3 -m venv .venv");
    let r = d.sh(".venv/bin/pip install pytest");
    assert!(stdout(&r).contains("Successfully installed"), "{r}");
    let r = d.sh("source .venv/bin/activate && pytest -q");
    assert!(stdout(&r).contains("2 passed"), "{r}");
    // An edit that breaks a test: pytest says so, and again once it is fixed.
    d.write("calc.py", "def add(a, b):\n    return a - b\n");
    let r = d.sh_fails(".venv/bin/pytest -q");
    assert!(stdout(&r).contains("2 failed"), "{r}");
    // (Of another size: Python's bytecode cache knows a source by its size and its mtime in
    // whole seconds, and the three writes fall within one.)
    d.write("calc.py", "def add(a, b):\n    return a + b  # fixed\n");
    let r = d.sh(".venv/bin/python -m pytest -q");
    assert!(stdout(&r).contains("2 passed"), "{r}");
}

/// The wheels `.ci/setup-workflows.sh` downloads, or None (skipped).
fn wheels() -> Option<PathBuf> {
    let dir = crate::mcp_client::target_dir().join("workflows/wheels");
    let has = |name: &str| {
        std::fs::read_dir(&dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let file = e.file_name().to_string_lossy().into_owned();
                file.starts_with(&format!("{name}-")) && file.ends_with(".whl")
            })
        })
    };
    if ["pytest", "pluggy", "iniconfig", "packaging", "setuptools"]
        .iter()
        .all(|n| has(n))
    {
        return Some(dir);
    }
    util::skip(&format!(
        "needs the wheels of pytest and setuptools in {} (run `bash .ci/setup-workflows.sh`)",
        dir.display()
    ));
    None
}

// 5. npm install from the registry, npm test, npx.
#[test]
fn npm_install_test_and_npx() {
    let Some(mut d) = day(&["node", "npm", "npx", "tar"]) else {
        return;
    };
    let packages = d.w.outside().join("npm-packages");
    pack_npm(&packages);
    let address = d.registry("npm", &packages);
    std::fs::write(
        d.w.outside().join("home/npmrc"),
        format!("registry=http://{address}/\n"),
    )
    .expect("npmrc");
    d.write(
        "package.json",
        "{\n  \"name\": \"app\",\n  \"version\": \"0.1.0\",\n  \"private\": true,\n  \
         \"scripts\": {\"test\": \"node test.js\"}\n}\n",
    );
    d.write(
        "test.js",
        "const assert = require('assert');\nconst { greet } = require('greet-cli');\n\
         assert.strictEqual(greet('npm'), 'hello, npm');\nconsole.log('tests passed');\n",
    );
    let r = d.sh("npm install greet-cli");
    assert!(stdout(&r).contains("added 1 package"), "{r}");
    assert!(d.read("package.json").contains("\"greet-cli\""));
    assert!(d.exists("node_modules/greet-cli/index.js"));
    assert!(d.exists("package-lock.json"));
    let r = d.sh("npm test");
    assert!(stdout(&r).contains("tests passed"), "{r}");
    let r = d.sh("npx greet sandbox");
    assert_eq!(stdout(&r), "hello, sandbox\n", "{r}");
    // A fresh checkout installs from the lock file.
    std::fs::remove_dir_all(d.root().join("node_modules")).expect("rm");
    d.sh("npm ci");
    assert_eq!(stdout(&d.sh("npx greet again")), "hello, again\n");
}

/// The npm package `greet-cli` (a library and a `greet` program) packed as npm packs it.
fn pack_npm(dir: &Path) {
    let src = dir.join("src/package");
    std::fs::create_dir_all(src.join("bin")).expect("mkdir");
    std::fs::write(
        src.join("package.json"),
        r#"{"name": "greet-cli", "version": "1.0.0", "main": "index.js", "bin": {"greet": "bin/greet.js"}}"#,
    )
    .expect("write");
    std::fs::write(
        src.join("index.js"),
        "exports.greet = (name) => 'hello, ' + name;\n",
    )
    .expect("write");
    std::fs::write(
        src.join("bin/greet.js"),
        "#!/usr/bin/env node\nconsole.log(require('../index.js').greet(process.argv[2] || 'world'));\n",
    )
    .expect("write");
    std::fs::set_permissions(
        src.join("bin/greet.js"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    let status = Command::new("tar")
        .arg("czf")
        .arg(dir.join("greet-cli-1.0.0.tgz"))
        .arg("-C")
        .arg(dir.join("src"))
        .arg("package")
        .status()
        .expect("tar");
    assert!(status.success());
}

// 6. cargo new, build and test; an edit; build and test again.
#[test]
fn cargo_new_build_test_twice() {
    let Some(d) = day(&["cargo", "tar"]) else {
        return;
    };
    let registry = d.w.outside().join("crates");
    local_registry(&registry);
    d.sh("cargo new hello");
    d.sh("cd hello && cargo build");
    assert!(
        d.exists("hello/target/debug/hello"),
        "cargo builds in the package's own target/"
    );
    let r = d.sh("cd hello && cargo run");
    assert_eq!(stdout(&r), "Hello, world!\n", "{r}");
    // The package's own repository works, and ignores target/.
    assert_eq!(
        stdout(&d.sh("cd hello && git status --porcelain")),
        "?? .gitignore\n?? Cargo.lock\n?? Cargo.toml\n?? src/\n"
    );
    // The edit: a dependency (from a registry: a local stand-in for crates.io) and a test.
    d.write(
        ".cargo/config.toml",
        &format!(
            "[source.crates-io]\nreplace-with = \"stand-in\"\n\n[source.stand-in]\nlocal-registry = \"{}\"\n",
            registry.display()
        ),
    );
    let manifest = d.read("hello/Cargo.toml");
    d.write(
        "hello/Cargo.toml",
        &format!("{}\ngreet = \"0.1\"\n", manifest.trim_end()),
    );
    d.write(
        "hello/src/main.rs",
        "fn message() -> String {\n    greet::greet(\"cargo\")\n}\n\nfn main() {\n    println!(\"{}\", message());\n}\n\n\
         #[test]\nfn says_hello() {\n    assert_eq!(message(), \"hello, cargo\");\n}\n",
    );
    for _ in 0..2 {
        d.sh("cd hello && cargo build");
        let r = d.sh("cd hello && cargo test");
        assert!(stdout(&r).contains("test says_hello ... ok"), "{r}");
        let r = d.sh("cd hello && cargo run");
        assert_eq!(stdout(&r), "hello, cargo\n", "{r}");
        d.write(
            "hello/src/main.rs",
            &d.read("hello/src/main.rs")
                .replace("\n\n#[test]", "\n// edited\n\n#[test]"),
        );
    }
    // The registry's crate was unpacked in the sandbox's private cache, not the person's.
    let own = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("home");
    assert!(
        !own.join("registry/src").read_dir().is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.path().join("greet-0.1.0").exists())
        }),
        "the person's own cargo registry was written"
    );
}

/// A cargo local registry holding the crate `greet` 0.1.0 (its index and its `.crate`).
fn local_registry(dir: &Path) {
    let src = dir.join("src/greet-0.1.0");
    std::fs::create_dir_all(src.join("src")).expect("mkdir");
    std::fs::write(
        src.join("Cargo.toml"),
        "[package]\nname = \"greet\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("write");
    std::fs::write(
        src.join("src/lib.rs"),
        "pub fn greet(name: &str) -> String {\n    format!(\"hello, {name}\")\n}\n",
    )
    .expect("write");
    let krate = dir.join("greet-0.1.0.crate");
    let status = Command::new("tar")
        .arg("czf")
        .arg(&krate)
        .arg("-C")
        .arg(dir.join("src"))
        .arg("greet-0.1.0")
        .status()
        .expect("tar");
    assert!(status.success());
    let sum: String = sha2::Sha256::digest(std::fs::read(&krate).expect("crate"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::create_dir_all(dir.join("index/gr/ee")).expect("mkdir");
    std::fs::write(
        dir.join("index/gr/ee/greet"),
        format!(
            "{{\"name\":\"greet\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{sum}\",\"features\":{{}},\"yanked\":false}}\n"
        ),
    )
    .expect("index");
}

// 7. `make run` and `./a.out`.
#[test]
fn make_run_and_a_out() {
    let Some(d) = day(&["make", "cc"]) else {
        return;
    };
    d.write(
        "main.c",
        "#include <stdio.h>\nint main(void) { puts(\"hello from C\"); return 0; }\n",
    );
    d.write(
        "Makefile",
        "run: app\n\t./app\n\napp: main.c\n\tcc -o app main.c\n",
    );
    let r = d.sh("make run");
    assert!(stdout(&r).ends_with("./app\nhello from C\n"), "{r}");
    let r = d.sh("cc main.c && ./a.out");
    assert_eq!(stdout(&r), "hello from C\n", "{r}");
    assert_eq!(stdout(&d.sh("./a.out")), "hello from C\n");
    // An edit: make rebuilds what changed.
    d.write(
        "main.c",
        "#include <stdio.h>\nint main(void) { puts(\"hello again\"); return 0; }\n",
    );
    let r = d.sh("make run");
    assert!(stdout(&r).contains("cc -o app main.c"), "{r}");
    assert!(stdout(&r).ends_with("hello again\n"), "{r}");
}

// 8. A dev server as a background job, reached by curl.
#[test]
fn a_dev_server_job_reached_by_curl() {
    let Some(d) = day(&["python3", "curl"]) else {
        return;
    };
    d.write("index.html", "<h1>hello dev</h1>\n");
    let started = d.call(
        "sneaky-run",
        json!({
            "command": "python3 -u -m http.server 8000 --bind 127.0.0.1",
            "background": true, "wait_for": "Serving HTTP", "wait_ms": 30000,
        }),
    );
    let r = started.ok();
    assert_eq!(r["matched"], true, "{r}");
    let job = r["job_id"].as_str().expect("job_id").to_string();
    let r = d.sh("curl -s http://127.0.0.1:8000/index.html");
    assert_eq!(stdout(&r), "<h1>hello dev</h1>\n", "{r}");
    let r = d.sh("curl -s -o /dev/null -w '%{http_code}' http://localhost:8000/missing");
    assert_eq!(stdout(&r), "404", "{r}");
    // The server's log, then its end.
    let o = d.call(
        "sneaky-jobs",
        json!({"job_id": job, "wait_for": "GET /index.html", "wait_ms": 10000}),
    );
    assert_eq!(o.ok()["matched"], true, "{o:?}");
    let o = d.call("sneaky-jobs", json!({"job_id": job, "kill": true}));
    assert_eq!(o.ok()["running"], false, "{o:?}");
    let r = d.sh_fails("curl -s --max-time 5 http://127.0.0.1:8000/");
    assert_eq!(stdout(&r), "", "{r}");
}

// 9. `sed -i` over many files: a dry run first, then the change, then undo.
#[test]
fn sed_over_many_files_with_dry_run_and_undo() {
    let Some(d) = day(&["sed", "git"]) else {
        return;
    };
    for i in 0..60 {
        d.write(
            &format!("src/m{i:02}.rs"),
            &format!("use old_name::Thing;\npub fn f{i}() -> Thing {{ old_name::make() }}\n"),
        );
    }
    d.write("src/keep.txt", "old_name stays here\n");
    d.committed_repo();
    let before = util::tree(d.root(), false);
    let r = d.sh_with(json!({
        "command": "sed -i 's/old_name/new_name/g' src/*.rs", "dry_run": true,
    }));
    assert_eq!(r["dry_run"], true, "{r}");
    assert_eq!(paths(&r, "changes").len(), 60, "{r}");
    let diff = r["diff"].as_str().expect("diff");
    assert!(
        diff.contains("-use old_name::Thing;\n") && diff.contains("+use new_name::Thing;\n"),
        "{diff}"
    );
    assert_eq!(
        util::tree(d.root(), false),
        before,
        "a dry run changes nothing"
    );
    let r = d.sh("sed -i 's/old_name/new_name/g' src/*.rs");
    assert_eq!(paths(&r, "changes").len(), 60, "{r}");
    assert!(d.read("src/m07.rs").contains("new_name::make()"));
    assert_eq!(d.read("src/keep.txt"), "old_name stays here\n");
    assert_eq!(d.host("git", &["diff", "--name-only"]).lines().count(), 60);
    let undo = d.call("sneaky-undo", json!({}));
    assert_eq!(undo.ok()["undone"], r["change_id"], "{undo:?}");
    assert_eq!(
        util::tree(d.root(), false),
        before,
        "undo puts every file back"
    );
    assert_eq!(d.host("git", &["status", "--porcelain"]), "");
}

// 10. A committed script run by its path.
#[test]
fn a_committed_build_script() {
    let Some(d) = day(&["bash", "git"]) else {
        return;
    };
    d.executable(
        "scripts/build.sh",
        "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")/..\"\nmkdir -p build\n\
         for f in src/*.txt; do tr a-z A-Z < \"$f\" > \"build/$(basename \"$f\")\"; done\n\
         echo \"built $(ls build | wc -l) files\"\n",
    );
    d.write("src/a.txt", "alpha\n");
    d.write("src/b.txt", "beta\n");
    d.committed_repo();
    let r = d.sh("./scripts/build.sh");
    assert_eq!(stdout(&r), "built 2 files\n", "{r}");
    assert_eq!(d.read("build/a.txt"), "ALPHA\n");
    let r = d.sh("cd src && ../scripts/build.sh && bash ../scripts/build.sh");
    assert_eq!(stdout(&r), "built 2 files\nbuilt 2 files\n", "{r}");
}

// 11. A committed Python program, `#!/usr/bin/env python3`.
#[test]
fn a_committed_env_python3_script() {
    let Some(d) = day(&["python3", "git"]) else {
        return;
    };
    d.executable(
        "tools/report.py",
        "#!/usr/bin/env python3\nimport json, sys\n\nrows = json.load(open(sys.argv[1]))\n\
         total = sum(r['n'] for r in rows)\nprint(f'{len(rows)} rows, total {total}')\n\
         open('report.txt', 'w').write(f'total={total}\\n')\n",
    );
    d.write("data.json", "[{\"n\": 2}, {\"n\": 40}]\n");
    d.committed_repo();
    let r = d.sh("./tools/report.py data.json");
    assert_eq!(stdout(&r), "2 rows, total 42\n", "{r}");
    assert_eq!(d.read("report.txt"), "total=42\n");
    let r = d.sh("tools/report.py data.json | tr a-z A-Z");
    assert_eq!(stdout(&r), "2 ROWS, TOTAL 42\n", "{r}");
}

// 12. rg, fd, jq, sqlite3.
#[test]
fn rg_fd_jq_sqlite3() {
    let Some(d) = day(&["rg", "fdfind", "jq", "sqlite3"]) else {
        return;
    };
    d.write("src/main.rs", "fn main() {\n    // TODO: parse args\n}\n");
    d.write("src/lib.rs", "pub fn ok() {}\n");
    d.write("docs/notes.md", "TODO: write docs\n");
    d.write(
        "package.json",
        "{\"name\": \"app\", \"dependencies\": {\"left-pad\": \"1.3.0\", \"chalk\": \"5.0.0\"}}\n",
    );
    let r = d.sh("rg -n TODO --sort path");
    assert_eq!(
        stdout(&r),
        "docs/notes.md:1:TODO: write docs\nsrc/main.rs:2:    // TODO: parse args\n",
        "{r}"
    );
    let r = d.sh("fdfind -e rs | sort");
    assert_eq!(stdout(&r), "src/lib.rs\nsrc/main.rs\n", "{r}");
    let r = d.sh("jq -r '.dependencies | keys[]' package.json");
    assert_eq!(stdout(&r), "chalk\nleft-pad\n", "{r}");
    let r = d.sh(
        "sqlite3 app.db 'create table t(name text, n int); insert into t values (\"a\", 1), (\"b\", 41);'",
    );
    assert_eq!(paths(&r, "changes"), vec!["app.db"], "{r}");
    let r = d.sh("sqlite3 app.db 'select sum(n) from t'");
    assert_eq!(stdout(&r), "42\n", "{r}");
    let r = d.sh("sqlite3 -json app.db 'select name from t order by n' | jq -r '.[].name'");
    assert_eq!(stdout(&r), "a\nb\n", "{r}");
}

// 13. `make -j`, tar, zip.
#[test]
fn make_j_tar_zip() {
    let Some(d) = day(&["make", "cc", "tar", "gzip", "zip", "unzip"]) else {
        return;
    };
    let mut decls = String::new();
    let mut sum = String::from("0");
    for i in 1..=8 {
        d.write(
            &format!("src/f{i}.c"),
            &format!("int f{i}(void) {{ return {i}; }}\n"),
        );
        decls.push_str(&format!("int f{i}(void);\n"));
        sum.push_str(&format!(" + f{i}()"));
    }
    d.write(
        "src/main.c",
        &format!(
            "#include <stdio.h>\n{decls}int main(void) {{ printf(\"%d\\n\", {sum}); return 0; }}\n"
        ),
    );
    d.write(
        "Makefile",
        "SRC := $(wildcard src/*.c)\nOBJ := $(SRC:src/%.c=build/%.o)\n\napp: $(OBJ)\n\tcc -o $@ $^\n\n\
         build/%.o: src/%.c | build\n\tcc -c -o $@ $<\n\nbuild:\n\tmkdir -p build\n",
    );
    d.sh("make -j4");
    assert_eq!(stdout(&d.sh("./app")), "36\n");
    d.sh("tar czf dist.tar.gz app src Makefile");
    let r = d.sh("tar tzf dist.tar.gz | sort | head -3");
    assert_eq!(stdout(&r), "Makefile\napp\nsrc/\n", "{r}");
    d.sh("zip -qr dist.zip src Makefile");
    let r = d.sh(
        "mkdir -p out && tar xzf dist.tar.gz -C out && unzip -qo dist.zip -d out2 && ls out out2",
    );
    assert_eq!(
        stdout(&r),
        "out:\nMakefile\napp\nsrc\n\nout2:\nMakefile\nsrc\n",
        "{r}"
    );
    assert_eq!(d.read("out2/src/f3.c"), "int f3(void) { return 3; }\n");
}

// 14. go build and test (no module to download: GOPROXY=off).
#[test]
fn go_build_and_test() {
    let Some(d) = day(&["go"]) else { return };
    d.sh("go mod init example.com/hello");
    d.write(
        "main.go",
        "package main\n\nimport \"fmt\"\n\nfunc Add(a, b int) int { return a + b }\n\n\
         func main() { fmt.Println(\"sum\", Add(2, 3)) }\n",
    );
    d.write(
        "main_test.go",
        "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad sum\")\n\t}\n}\n",
    );
    let r = d.sh("go build -o hello . && ./hello");
    assert_eq!(stdout(&r), "sum 5\n", "{r}");
    let r = d.sh("go test ./...");
    assert!(stdout(&r).starts_with("ok  \texample.com/hello\t"), "{r}");
    // The build cache outlives the call: the same test again is a cached result.
    let r = d.sh("go test ./...");
    assert!(stdout(&r).contains("(cached)"), "{r}");
    d.write(
        "main.go",
        &d.read("main.go").replace("return a + b", "return a - b"),
    );
    let r = d.sh_fails("go test ./...");
    assert!(stdout(&r).contains("bad sum"), "{r}");
    d.sh("go vet ./...");
}

// 15. `rg -l | xargs sed -i`.
#[test]
fn rg_l_xargs_sed_i() {
    let Some(d) = day(&["rg", "xargs", "sed"]) else {
        return;
    };
    for i in 0..5 {
        d.write(&format!("src/a{i}.txt"), &format!("foo {i}\nfoo again\n"));
    }
    d.write("src/other.txt", "nothing here\n");
    let r = d.sh("rg -l foo | xargs sed -i s/foo/bar/g");
    let mut changed = paths(&r, "changes");
    changed.sort();
    assert_eq!(
        changed,
        (0..5).map(|i| format!("src/a{i}.txt")).collect::<Vec<_>>(),
        "{r}"
    );
    assert_eq!(d.read("src/a3.txt"), "bar 3\nbar again\n");
    assert_eq!(d.read("src/other.txt"), "nothing here\n");
    let r = d.sh("rg -c bar | sort");
    assert_eq!(stdout(&r).lines().count(), 5, "{r}");
}

// 16. `pip install -e .`
#[test]
fn pip_install_editable() {
    let Some(mut d) = day(&["python3"]) else {
        return;
    };
    let Some(wheels) = wheels() else { return };
    let address = d.registry("pypi", &wheels);
    d.pip_index(&address);
    d.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n\
         [project]\nname = \"mypkg\"\nversion = \"0.1.0\"\n\n[project.scripts]\nmypkg-hello = \"mypkg:main\"\n",
    );
    d.write(
        "src/mypkg/__init__.py",
        "def main():\n    print(\"hello from mypkg\")\n",
    );
    d.sh("python3 -m venv .venv");
    let r = d.sh(".venv/bin/pip install -e .");
    assert!(
        stdout(&r).contains("Successfully installed mypkg-0.1.0"),
        "{r}"
    );
    assert_eq!(stdout(&d.sh(".venv/bin/mypkg-hello")), "hello from mypkg\n");
    // Editable: an edit shows at once, with no reinstall.
    d.write(
        "src/mypkg/__init__.py",
        "def main():\n    print(\"edited in place\")\n",
    );
    let r = d.sh("source .venv/bin/activate && mypkg-hello");
    assert_eq!(stdout(&r), "edited in place\n", "{r}");
}

// The private caches are the commands' to change, and the step that puts the person's cargo
// configuration there runs outside the sandbox, as the person: a link a command leaves there
// must not make it write where the link leads.
/// A command leaves in the private cargo home what `plant` (given the victim directory
/// outside) makes; the next calls see the person's cargo configuration there, and nothing is
/// written outside: not `victim_file`, not the person's own configuration.
fn planted_in_the_private_cargo_home(plant: fn(&Path) -> String, victim_file: &str) {
    let Some(mut d) = day(&[]) else { return };
    let outside = d.w.outside().to_path_buf();
    let own = outside.join("own-cargo");
    std::fs::create_dir_all(&own).expect("mkdir");
    std::fs::write(own.join("config.toml"), "[net]\nretry = 3\n").expect("write");
    d.env.push(("CARGO_HOME".into(), own.clone().into()));
    let victim = outside.join("victim");
    std::fs::create_dir_all(&victim).expect("mkdir");
    std::fs::write(victim.join(victim_file), "precious\n").expect("write");
    let r = d.sh("cat \"$CARGO_HOME/config.toml\"");
    assert_eq!(
        stdout(&r),
        "[net]\nretry = 3\n",
        "the person's cargo config: {r}"
    );
    d.write("plant.sh", &plant(&victim));
    d.sh("bash plant.sh");
    let r = d.sh("cat \"$CARGO_HOME/config.toml\"");
    assert_eq!(
        std::fs::read_to_string(victim.join(victim_file)).expect("read"),
        "precious\n",
        "written through the planted link"
    );
    assert_eq!(stdout(&r), "[net]\nretry = 3\n", "{r}");
    assert_eq!(
        std::fs::read_to_string(own.join("config.toml")).expect("read"),
        "[net]\nretry = 3\n"
    );
}

#[test]
fn a_private_cargo_home_made_a_link_to_another_directory_leads_nowhere() {
    planted_in_the_private_cargo_home(
        |victim| {
            format!(
                "rm -rf \"$CARGO_HOME\" && ln -s {} \"$CARGO_HOME\"\n",
                victim.display()
            )
        },
        "config.toml",
    );
}

#[test]
fn a_private_cargo_config_made_a_link_to_a_file_leads_nowhere() {
    planted_in_the_private_cargo_home(
        |victim| {
            format!(
                "rm -f \"$CARGO_HOME/config.toml\" && ln -s {} \"$CARGO_HOME/config.toml\"\n",
                victim.join("bashrc").display()
            )
        },
        "bashrc",
    );
}
