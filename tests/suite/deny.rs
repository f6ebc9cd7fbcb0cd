//! The read-deny list (`deny_read`) and the protected paths (`protected_paths`): one list binds
//! the file tools and the commands alike. Every attempt asserts that its effect did not
//! happen: the secret is in no output, the autorun file is not there or unchanged. The
//! command probes include raw system calls (python3's `os`), not only the programs an agent
//! would type.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Ws};

const SECRET: &str = "SNEAKY-SECRET-0451";
pub const PYTHON: &str = "/usr/bin/python3";

/// A workspace with secrets inside (`.env`, `secrets/`) and outside (`<tmp>/creds/token`),
/// links to them, and a configuration that denies all three.
fn secret_ws() -> (Ws, PathBuf) {
    let w = util::ws();
    let creds = w.outside().join("creds");
    std::fs::create_dir_all(&creds).expect("mkdir");
    std::fs::write(creds.join("token"), format!("{SECRET}-outside\n")).expect("write");
    w.write(".env", &format!("KEY={SECRET}-env\n"));
    w.write("secrets/key.pem", &format!("{SECRET}-pem\n"));
    w.write("ok.txt", "plain\n");
    w.link(".env", "env-link");
    std::fs::hard_link(w.root.join(".env"), w.root.join("env-hardlink")).expect("link");
    user_config(
        &w,
        &format!(
            "extra_deny_read = [\".env\", \"secrets\", {:?}]\n[tools.shell]\nextra_allowed_commands = [{PYTHON:?}]\n",
            creds.display().to_string()
        ),
    );
    (w, creds)
}

fn text(v: &Value) -> String {
    v.to_string()
}

fn refused_by(reply: &util::Reply, key: &str) {
    let m = reply.err("protected_path", 3);
    assert!(m.contains(key), "{m}");
    assert!(!m.contains(SECRET), "{m}");
}

#[test]
fn file_tools_refuse_denied_paths_and_walks_skip_them() {
    let (w, _) = secret_ws();
    for path in [
        ".env",
        "./.env",
        "secrets/key.pem",
        "secrets/missing",
        "secrets",
        "env-link",
        "env-hardlink",
    ] {
        let r = w.call("sneaky-read", json!({"file_path": path}));
        refused_by(&r, "deny_read");
    }
    let r = w.call("sneaky-ls", json!({"directory_path": "secrets"}));
    refused_by(&r, "deny_read");
    let r = w.call("sneaky-grep", json!({"pattern": "SECRET", "path": ".env"}));
    refused_by(&r, "deny_read");
    // Walks: the denied entries are not reported, and no secret is read through a link.
    for (bin, args) in [
        (
            "sneaky-ls",
            json!({"directory_path": ".", "recursive": true}),
        ),
        ("sneaky-ls", json!({})),
        (
            "sneaky-find",
            json!({"pattern": "*", "hidden": true, "no_ignore": true}),
        ),
        (
            "sneaky-grep",
            json!({"pattern": "SNEAKY", "hidden": true, "no_ignore": true}),
        ),
        (
            "sneaky-grep",
            json!({"pattern": "SNEAKY", "hidden": true, "output_mode": "files_with_matches"}),
        ),
    ] {
        let r = w.call(bin, args.clone());
        let out = text(r.ok());
        assert!(!out.contains(SECRET), "{bin} {args}: {out}");
        assert!(
            !out.contains("\".env\"") && !out.contains("secrets") && !out.contains("key.pem"),
            "{bin} {args}: {out}"
        );
    }
    // What is not denied still reads.
    assert_eq!(
        w.call("sneaky-read", json!({"file_path": "ok.txt"})).ok()["content"],
        "plain\n"
    );
    // The edit tools read what they replace: refused too, and nothing changes.
    for (bin, args) in [
        ("sneaky-write", json!({"file_path": ".env", "content": "x"})),
        (
            "sneaky-write",
            json!({"file_path": "env-hardlink", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "env-link", "content": "x"}),
        ),
        (
            "sneaky-replace",
            json!({"file_path": ".env", "old_str": "KEY", "new_str": "K"}),
        ),
        (
            "sneaky-replace",
            json!({"file_path": "env-hardlink", "old_str": "KEY", "new_str": "K"}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": ".env", "patch": "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-x\n+y\n"}),
        ),
        ("sneaky-rm", json!({"file_path": "secrets/key.pem"})),
    ] {
        let r = w.call(bin, args.clone());
        assert_eq!(r.json["ok"], false, "{bin} {args}: {}", r.json);
        assert!(!text(&r.json).contains(SECRET), "{bin} {args}: {}", r.json);
    }
    assert_eq!(w.read(".env"), format!("KEY={SECRET}-env\n"));
    assert!(w.root.join("secrets/key.pem").exists());
}

/// The built-in list covers the home directory's credential stores; a workspace inside the
/// home directory (or the home directory itself) does not make them readable.
#[test]
fn the_built_in_list_covers_the_home_credential_stores() {
    let w = util::ws();
    let home = w.root.clone();
    w.write(".ssh/id_ed25519", &format!("{SECRET}-ssh\n"));
    w.write(".aws/credentials", &format!("{SECRET}-aws\n"));
    w.write(".netrc", &format!("{SECRET}-netrc\n"));
    w.write("notes.txt", "plain\n");
    let call = |bin: &str, args: Value| {
        use assert_cmd::cargo::CommandCargoExt;
        let mut cmd = std::process::Command::cargo_bin(bin).expect("binary");
        util::fence(&mut cmd, w.dir.path())
            .current_dir(&w.root)
            .env("HOME", &home)
            .env("SNEAKY_ROOT", &w.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
            .env("XDG_STATE_HOME", w.dir.path().join("state"));
        let out = assert_cmd::Command::from_std(cmd)
            .write_stdin(args.to_string())
            .output()
            .expect("run");
        util::Reply::parse(bin, out)
    };
    for path in [".ssh/id_ed25519", ".aws/credentials", ".netrc"] {
        refused_by(
            &call("sneaky-read", json!({"file_path": path})),
            "deny_read",
        );
    }
    let r = call("sneaky-grep", json!({"pattern": "SNEAKY", "hidden": true}));
    assert!(!text(r.ok()).contains(SECRET), "{}", r.json);
    if !namespaces_or_skip("the_built_in_list_covers_the_home_credential_stores") {
        return;
    }
    let r = call(
        "sneaky-run",
        json!({"command": "cat .ssh/id_ed25519 .aws/credentials .netrc; ls -a .ssh; cat notes.txt"}),
    );
    let r = r.command_ran_or_failed();
    assert!(!text(&r).contains(SECRET), "{r}");
    assert!(r["stdout"].as_str().unwrap_or("").contains("plain"), "{r}");
    // deny_read replaces the built-in list.
    w.user_config("deny_read = []\n");
    let r = call("sneaky-read", json!({"file_path": ".netrc"}));
    assert!(text(r.ok()).contains(SECRET));
}

trait RanOrFailed {
    fn command_ran_or_failed(&self) -> Value;
}

impl RanOrFailed for util::Reply {
    /// The result of a command that ran, whatever its exit status.
    fn command_ran_or_failed(&self) -> Value {
        assert_eq!(
            self.json["ok"], true,
            "the command did not run: {}",
            self.json
        );
        self.json["result"].clone()
    }
}

/// Commands meet the same list in the kernel: each attempt (the programs an agent types, and
/// raw system calls) must print no secret.
const READ_ATTEMPTS: &[(&str, &str)] = &[
    ("cat a denied file", "cat .env"),
    ("cat through a symbolic link", "cat env-link"),
    ("cat a denied directory's file", "cat secrets/key.pem"),
    ("list a denied directory", "ls -la secrets"),
    ("grep the workspace", "grep -r SNEAKY . || true"),
    ("cp then read", "cp .env copy.txt; cat copy.txt"),
    ("sed a denied file", "sed -n p .env"),
    ("head an outside denied file", "head -c 100 CREDS/token"),
    ("find and cat", "find . -name '*.pem' -exec cat {} +"),
    ("through /proc/self/root", "cat /proc/self/root/ROOT/.env /proc/self/root/CREDS/token"),
    ("through /proc/self/cwd", "cat /proc/self/cwd/.env"),
    ("tar a denied directory", "tar -cf - secrets CREDS 2>/dev/null | strings"),
    ("python open", "PY -c 'print(open(\".env\").read())'"),
    (
        "python raw os.open",
        "PY -c 'import os; fd=os.open(\"CREDS/token\", os.O_RDONLY); print(os.read(fd, 100))'",
    ),
    (
        "python openat from a directory handle",
        "PY -c 'import os; d=os.open(\"secrets\", os.O_RDONLY); print(os.listdir(d)); print(os.read(os.open(\"key.pem\", os.O_RDONLY, dir_fd=d), 99))'",
    ),
    (
        "python umount the cover",
        "PY -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print(l.umount2(b\"CREDS\", 2)); print(open(\"CREDS/token\").read())'",
    ),
    (
        "python rename the cover away",
        "PY -c 'import os; os.rename(\".env\", \"moved\"); print(open(\"moved\").read())'",
    ),
    (
        "python new mount namespace",
        "PY -c 'import os; os.unshare(os.CLONE_NEWUSER|os.CLONE_NEWNS); print(open(\"CREDS/token\").read())'",
    ),
];

#[test]
fn commands_cannot_read_the_read_deny_list() {
    if !Path::new(PYTHON).is_file() && !util::skip("needs /usr/bin/python3") {
        return;
    }
    if !namespaces_or_skip("commands_cannot_read_the_read_deny_list") {
        return;
    }
    let (w, creds) = secret_ws();
    // A hard link to a denied file is refused (the command could read the other name).
    let r = w.call("sneaky-run", json!({"command": "cat env-hardlink"}));
    let m = r.err("protected_path", 3);
    assert!(m.contains("hard link") && m.contains("deny_read"), "{m}");
    std::fs::remove_file(w.root.join("env-hardlink")).expect("rm");
    let root = std::fs::canonicalize(&w.root).expect("root");
    for (class, command) in READ_ATTEMPTS {
        let command = command
            .replace("CREDS", &creds.display().to_string())
            .replace("ROOT", &root.display().to_string())
            .replace("PY ", &format!("{PYTHON} "));
        let r = w.call("sneaky-run", json!({"command": command, "timeout": 20}));
        assert!(
            !text(&r.json).contains(SECRET),
            "{class}: the secret was read: {}",
            r.json
        );
        assert_eq!(w.read(".env"), format!("KEY={SECRET}-env\n"), "{class}");
    }
    assert!(
        w.read("copy.txt").is_empty(),
        "the copy holds what was denied"
    );
}

/// The built-in list covers the system's password hashes: a command run as root (as agents
/// are in containers, and as CI runs) reads nothing of them; a user who is not root is
/// refused by the file's mode first.
#[test]
fn commands_do_not_read_the_systems_password_hashes() {
    if !Path::new("/etc/shadow").exists() && !util::skip("needs /etc/shadow") {
        return;
    }
    if !namespaces_or_skip("commands_do_not_read_the_systems_password_hashes") {
        return;
    }
    let w = util::ws();
    let r = w.call(
        "sneaky-run",
        json!({"command": "cat /etc/shadow 2>/dev/null | wc -c"}),
    );
    assert_eq!(r.ok()["stdout"], "0\n", "{}", r.json);
}

/// A walk that searches many files opens the later ones without looking at them (one system
/// call less each) only while no denied file has a second name: a hard link to one, far
/// beyond the first files each thread opens, is still not read.
#[test]
fn grep_over_many_files_still_skips_a_hard_link_to_a_denied_file() {
    let (w, creds) = secret_ws();
    for i in 0..400 {
        w.write(&format!("many/f{i:03}.txt"), "SNEAKY-PLAIN\n");
    }
    std::fs::hard_link(creds.join("token"), w.root.join("many/zz-token")).expect("link");
    let args = json!({"pattern": "SNEAKY", "hidden": true, "max_results": 1000});
    let out = text(w.call("sneaky-grep", args.clone()).ok());
    assert!(!out.contains(SECRET), "{out}");
    assert!(
        !out.contains("zz-token") && !out.contains("env-hardlink"),
        "{out}"
    );
    assert_eq!(out.matches("SNEAKY-PLAIN").count(), 400, "{out}");
    // Without a second name anywhere, every file is still searched, the later ones opened
    // lean: the same 400 lines, and a large file read whole past its first read.
    for name in ["many/zz-token", "env-hardlink"] {
        std::fs::remove_file(w.root.join(name)).expect("rm");
    }
    let big = format!("{}SNEAKY-END\n", "filler line\n".repeat(20_000));
    w.write("many/zzz-big.txt", &big);
    let out = text(w.call("sneaky-grep", args).ok());
    assert!(!out.contains(SECRET), "{out}");
    assert_eq!(out.matches("SNEAKY-PLAIN").count(), 400, "{out}");
    assert!(out.contains("\"line\":20001"), "{out}");
}

/// Writes that would plant a file which runs code when a person opens the project: the
/// file tools refuse them naming the key, and nothing is created or changed.
#[test]
fn file_tools_never_write_protected_paths() {
    let w = util::ws();
    w.write(".envrc", "export A=1\n");
    w.write("f.txt", "x\n");
    w.link(".envrc", "envrc-link");
    w.user_config("extra_protected_paths = [\"Makefile\"]\n");
    for (bin, args) in [
        (
            "sneaky-write",
            json!({"file_path": ".vscode/tasks.json", "content": "{}"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": ".vscode/tasks.json", "content": "{}", "dry_run": true}),
        ),
        (
            "sneaky-write",
            json!({"file_path": ".envrc", "content": "touch pwned"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "envrc-link", "content": "touch pwned"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": ".mcp.json", "content": "{}"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "Makefile", "content": "all:\n"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "./.claude/settings.json", "content": "{}"}),
        ),
        (
            "sneaky-replace",
            json!({"file_path": ".envrc", "old_str": "A=1", "new_str": "A=2"}),
        ),
        (
            "sneaky-patch",
            json!({"patch": "--- /dev/null\n+++ b/.codex/config.toml\n@@ -0,0 +1 @@\n+x = 1\n"}),
        ),
        ("sneaky-rm", json!({"file_path": ".envrc"})),
        ("sneaky-mkdir", json!({"directory_path": ".cursor"})),
        ("sneaky-mkdir", json!({"directory_path": ".idea/x"})),
    ] {
        let r = w.call(bin, args.clone());
        let m = r.err("protected_path", 3);
        assert!(m.contains("protected_paths"), "{bin} {args}: {m}");
    }
    assert_eq!(w.read(".envrc"), "export A=1\n");
    for p in [
        ".vscode",
        ".mcp.json",
        "Makefile",
        ".claude",
        ".codex",
        ".cursor",
        ".idea",
    ] {
        assert!(!w.root.join(p).exists(), "{p} was made");
    }
    // Other files still write.
    w.call(
        "sneaky-write",
        json!({"file_path": "g.txt", "content": "y"}),
    )
    .ok();
}

/// The same writes by a command: what exists is read-only, what does not cannot be made,
/// and the placeholders that hold the names during the call are gone afterwards (and git
/// never sees them).
const AUTORUN_ATTEMPTS: &[(&str, &str)] = &[
    (
        "mkdir .vscode",
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json",
    ),
    ("redirect into .envrc", "echo 'touch pwned' >> .envrc"),
    ("cp over .envrc", "cp f.txt .envrc"),
    ("mv over .envrc", "cp f.txt n.txt; mv n.txt .envrc"),
    ("create .mcp.json", "cp f.txt .mcp.json"),
    (
        "tee into .claude",
        "mkdir -p .claude; tee .claude/settings.json < f.txt",
    ),
    ("sed -i .envrc", "sed -i s/A=1/A=2/ .envrc"),
    ("touch .idea", "touch .idea"),
    (
        "git checkout a tracked autorun file",
        "git show HEAD:f.txt > .husky",
    ),
    (
        "python creat",
        "PY -c 'import os; os.close(os.open(\".codex\", os.O_CREAT|os.O_WRONLY))'",
    ),
    (
        "python mkdir",
        "PY -c 'import os; os.makedirs(\".cursor/rules\")'",
    ),
    (
        "python rename over",
        "PY -c 'import os; open(\"n\",\"w\").write(\"x\"); os.rename(\"n\", \".gemini\")'",
    ),
    (
        "python symlink",
        "PY -c 'import os; os.symlink(\"f.txt\", \".zed\")'",
    ),
    (
        "python rmdir the placeholder",
        "PY -c 'import os; os.rmdir(\".devcontainer\"); os.mkdir(\".devcontainer\")'",
    ),
    (
        "python write the existing file",
        "PY -c 'open(\".envrc\",\"a\").write(\"touch pwned\")'",
    ),
    (
        "python unlink then create",
        "PY -c 'import os; os.unlink(\".envrc\"); open(\".envrc\",\"w\").write(\"touch pwned\")'",
    ),
];

#[test]
fn commands_cannot_plant_autorun_files() {
    if !Path::new(PYTHON).is_file() && !util::skip("needs /usr/bin/python3") {
        return;
    }
    if !namespaces_or_skip("commands_cannot_plant_autorun_files") {
        return;
    }
    let w = util::ws();
    w.write(".envrc", "export A=1\n");
    w.write("f.txt", "x\n");
    for args in [
        &["init", "-q"][..],
        &["add", "f.txt", ".envrc"],
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "one",
        ],
    ] {
        let out = std::process::Command::new("git")
            .current_dir(&w.root)
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "{out:?}");
    }
    user_config(
        &w,
        &format!("[tools.shell]\nextra_allowed_commands = [{PYTHON:?}]\n"),
    );
    let autorun = [
        ".vscode",
        ".mcp.json",
        ".claude",
        ".idea",
        ".husky",
        ".codex",
        ".cursor",
        ".gemini",
        ".zed",
        ".devcontainer",
    ];
    for (class, command) in AUTORUN_ATTEMPTS {
        let command = command.replace("PY ", &format!("{PYTHON} "));
        let r = w.call("sneaky-run", json!({"command": command, "timeout": 20}));
        assert_eq!(w.read(".envrc"), "export A=1\n", "{class}: {}", r.json);
        for p in autorun {
            assert!(
                !w.root.join(p).exists(),
                "{class}: {p} is there: {}",
                r.json
            );
        }
        assert!(!w.root.join("pwned").exists(), "{class}");
    }
    // The refusal names the key.
    let r = w.call("sneaky-run", json!({"command": "echo x > .envrc"}));
    let stderr = r.command_ran()["stderr"].as_str().unwrap_or("").to_string();
    assert!(
        stderr.contains("sneaky-run: .envrc is a protected path (.envrc, protected_paths)"),
        "{stderr}"
    );
    // Inside the call the names are held, and git does not see what holds them.
    let r = w.call(
        "sneaky-run",
        json!({"command": "git status --porcelain --untracked-files=all; ls -d .vscode"}),
    );
    let r = r.command_ran();
    let out = r["stdout"].as_str().unwrap_or("");
    assert!(out.ends_with(".vscode\n"), "{r}");
    for p in autorun {
        assert!(!out.contains(&format!("?? {p}")), "git sees {p}: {r}");
    }
    for p in autorun {
        assert!(!w.root.join(p).exists(), "the placeholder {p} stayed");
    }
}

#[test]
fn docs_list_the_built_in_lists() {
    use sneaky::fs::pathlist::{DEFAULT_DENY_READ, DEFAULT_PROTECTED};
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sandbox.md"))
            .expect("docs/sandbox.md");
    for (marker, list) in [
        ("default-deny-read", DEFAULT_DENY_READ),
        ("default-protected", DEFAULT_PROTECTED),
    ] {
        let start = format!("<!-- {marker} -->\n");
        let from = doc.find(&start).expect("start marker") + start.len();
        let to = doc[from..].find("\n<!--").expect("end marker") + from;
        let expected: Vec<String> = list.iter().map(|p| format!("`{p}`")).collect();
        assert_eq!(
            doc[from..to].trim(),
            expected.join(", "),
            "docs/sandbox.md's {marker} list differs from src/fs/pathlist.rs"
        );
    }
}

/// `sneaky-mcp --http --token-file FILE` tells the tools it runs where its token is
/// (SNEAKY_MCP_TOKEN_FILE), and they deny reading it.
#[test]
fn the_mcp_token_file_joins_the_read_deny_list() {
    use assert_cmd::cargo::CommandCargoExt;
    let w = util::ws();
    w.write("token.txt", &format!("{SECRET}-token\n"));
    let read = |env: bool| {
        let mut cmd = std::process::Command::cargo_bin("sneaky-read").expect("binary");
        util::fence(&mut cmd, w.dir.path())
            .env("SNEAKY_ROOT", &w.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
            .arg("token.txt");
        if env {
            cmd.env(
                sneaky::fs::pathlist::MCP_TOKEN_FILE_ENV,
                w.root.join("token.txt"),
            );
        }
        util::Reply::parse("sneaky-read", cmd.output().expect("run"))
    };
    assert!(text(read(false).ok()).contains(SECRET));
    refused_by(&read(true), "deny_read");
}

/// A repository's links that lead to, or through, a protected path: a committed
/// `.vscode -> vs`, a chain of links, an absolute link into the root, a link on the way of a
/// longer protected path, a dangling link, a link inside a protected directory, a glob's match
/// that is a link, and a link out of the workspace. Each write that would land where a
/// program later reads it is refused naming the key, and nothing is made.
#[test]
fn file_tools_judge_protected_paths_by_every_path_that_reaches_them() {
    let w = util::ws();
    let root = std::fs::canonicalize(&w.root).expect("root");
    w.mkdir("vs").link("vs", ".vscode");
    w.mkdir("c2/deep")
        .link("c2/deep", "c1")
        .link("c1", ".claude");
    w.mkdir("cx").link(root.join("cx"), ".codex");
    w.mkdir("real/app").link("real", "cfg");
    w.link("tools/cursor", ".cursor");
    w.write(".idea/misc.xml", "<x/>\n")
        .link("../notes.xml", ".idea/workspace.xml");
    w.write("sub/keep.txt", "k\n")
        .link("../env.sh", "sub/.envrc");
    w.link(w.outside().join("gem"), ".gemini");
    w.user_config("extra_protected_paths = [\"cfg/app/run.sh\", \"**/.envrc\"]\n");
    let write = |path: &str| {
        (
            "sneaky-write",
            json!({"file_path": path, "content": "touch pwned\n"}),
        )
    };
    for (bin, args) in [
        write(".vscode/tasks.json"),
        write("vs/tasks.json"),
        ("sneaky-rm", json!({"file_path": ".vscode"})),
        write(".claude/settings.json"),
        write("c2/deep/settings.json"),
        ("sneaky-rm", json!({"file_path": "c1"})),
        write("cx/config.toml"),
        write("real/app/run.sh"),
        write("cfg/app/run.sh"),
        write("tools/cursor/rules.md"),
        ("sneaky-mkdir", json!({"directory_path": "tools/cursor"})),
        write("notes.xml"),
        write("env.sh"),
        (
            "sneaky-patch",
            json!({"patch": "--- /dev/null\n+++ b/vs/settings.json\n@@ -0,0 +1 @@\n+{}\n"}),
        ),
    ] {
        let r = w.call(bin, args.clone());
        let m = r.err("protected_path", 3);
        assert!(m.contains("protected_paths"), "{bin} {args}: {m}");
    }
    // Where the refusal comes from a link, the message names it.
    let m = w
        .call(
            "sneaky-write",
            json!({"file_path": "c2/deep/x", "content": "x"}),
        )
        .err("protected_path", 3);
    assert!(m.contains(".claude -> c1, c1 -> c2/deep"), "{m}");
    // Out of the workspace nothing is written either.
    let r = w.call(
        "sneaky-write",
        json!({"file_path": ".gemini/x", "content": "x"}),
    );
    assert_eq!(r.json["ok"], false, "{}", r.json);
    for p in [
        "vs/tasks.json",
        "vs/settings.json",
        "c2/deep/settings.json",
        "cx/config.toml",
        "real/app/run.sh",
        "tools",
        "notes.xml",
        "env.sh",
    ] {
        assert!(!w.root.join(p).exists(), "{p} was made");
    }
    assert!(!w.outside().join("gem").exists());
    for (link, target) in [(".vscode", "vs"), ("c1", "c2/deep")] {
        let now = std::fs::read_link(w.root.join(link)).expect("still a link");
        assert_eq!(now, Path::new(target));
    }
    // What the links do not reach still writes.
    for p in [
        "real/other.txt",
        "c2/other.txt",
        "tools/other.txt",
        "sub/x.txt",
    ] {
        w.call("sneaky-write", json!({"file_path": p, "content": "y"}))
            .ok();
    }
}

/// `.vscode -> .` (or `..`) makes every file a place an editor reads: the whole workspace is
/// protected, and each refusal says so and names the link, rather than the workspace going
/// read-only without a word. Reading still works; a command is refused before it runs.
#[test]
fn a_protected_link_to_the_root_protects_the_whole_workspace_and_says_so() {
    for target in [".", ".."] {
        let w = util::ws();
        w.write("a.txt", "a\n").link(target, ".vscode");
        let r = w.call(
            "sneaky-write",
            json!({"file_path": "a.txt", "content": "b"}),
        );
        let m = r.err("protected_path", 3);
        assert!(
            m.contains("the whole workspace is a protected path")
                && m.contains(&format!(".vscode -> {target}")),
            "{target}: {m}"
        );
        assert_eq!(w.read("a.txt"), "a\n");
        let r = w.call("sneaky-read", json!({"file_path": "a.txt"}));
        assert!(text(r.ok()).contains('a'));
        let r = w.call("sneaky-run", json!({"command": "echo b > a.txt"}));
        let m = r.err("protected_path", 3);
        assert!(
            m.contains("nothing ran") && m.contains("the whole workspace"),
            "{target}: {m}"
        );
        assert_eq!(w.read("a.txt"), "a\n");
    }
}

/// What a command tries through the links a repository ships: each line writes where a
/// program later reads an autorun file, through a dangling link, a link to an existing
/// directory, a chain, or a link on the way of a longer protected path, or swaps a link (or a
/// directory on the way) for a directory of its own first.
const LINK_ATTEMPTS: &str = r#"
import os
def attempt(name, f):
    try:
        f()
        print("wrote", name, flush=True)
    except OSError as e:
        print("refused", name, e.errno, flush=True)
def write(p):
    open(p, "w").write("touch pwned\n")
def dangling():
    os.makedirs("tools/vscode", exist_ok=True); write(".vscode/tasks.json")
def dangling_deeper():
    os.makedirs("cur/sor", exist_ok=True); write(".cursor/rules")
def swap_link():
    os.unlink(".claude"); os.mkdir(".claude"); write(".claude/settings.json")
def rename_link():
    os.rename(".codex", "codex-old"); os.mkdir(".codex"); write(".codex/config.toml")
def swap_chain():
    os.rename("c1", "c1x"); os.mkdir("c1"); write("c1/config.toml")
def swap_dir_on_the_way():
    os.rename("zz", "zz2"); os.makedirs("zz/inner"); write("zz/inner/settings.json")
def swap_intermediate():
    os.rename("cfg", "cfg2"); os.makedirs("cfg/app"); write("cfg/app/run.sh")
attempt("dangling", dangling)
attempt("dangling deeper", dangling_deeper)
attempt("existing target", lambda: write("cl/settings.json"))
attempt("swap link", swap_link)
attempt("rename link", rename_link)
attempt("chain end", lambda: write("c2/config.toml"))
attempt("swap chain", swap_chain)
attempt("dir on the way", swap_dir_on_the_way)
attempt("link in a protected dir", lambda: write("notes.xml"))
attempt("intermediate target", lambda: write("real/app/run.sh"))
attempt("swap intermediate", swap_intermediate)
print("done", flush=True)
"#;

/// The links of [`LINK_ATTEMPTS`]' workspace, and where each leads.
const SHIPPED_LINKS: &[(&str, &str)] = &[
    (".vscode", "tools/vscode"),
    (".cursor", "cur/sor"),
    (".claude", "cl"),
    (".codex", "c1"),
    ("c1", "c2"),
    (".zed", "zz/inner"),
    (".idea/workspace.xml", "../notes.xml"),
    ("cfg", "real"),
];

/// A workspace holding [`SHIPPED_LINKS`], whose configuration lets python3 run and protects
/// `cfg/app/run.sh` too.
pub fn linked_ws() -> Ws {
    let w = util::ws();
    for dir in ["cur", "cl", "c2", "zz/inner", ".idea", "real/app"] {
        w.mkdir(dir);
    }
    for (link, target) in SHIPPED_LINKS {
        w.link(target, link);
    }
    user_config(
        &w,
        &format!(
            "extra_protected_paths = [\"cfg/app/run.sh\"]\n[tools.shell]\nextra_allowed_commands = [{PYTHON:?}]\n"
        ),
    );
    w.write("attempts.py", LINK_ATTEMPTS);
    w
}

/// Nothing planted, every link as shipped.
pub fn nothing_planted(w: &Ws, how: &str, out: &str) {
    for p in [
        "tools/vscode/tasks.json",
        "cur/sor/rules",
        "cl/settings.json",
        "c2/config.toml",
        "c1/config.toml",
        "zz/inner/settings.json",
        "notes.xml",
        "real/app/run.sh",
        "cfg/app/run.sh",
        ".claude/settings.json",
        ".codex/config.toml",
    ] {
        assert!(
            std::fs::symlink_metadata(w.root.join(p)).is_err(),
            "{how}: {p} was planted: {out}"
        );
    }
    for (link, target) in SHIPPED_LINKS {
        let now = std::fs::read_link(w.root.join(link));
        assert_eq!(
            now.ok().as_deref(),
            Some(Path::new(target)),
            "{how}: {link} changed: {out}"
        );
    }
    assert!(w.root.join("zz/inner").is_dir(), "{how}: {out}");
}

/// Run `command` with sneaky-run in `w`, as `uid` when given (the whole test directory is
/// then handed to that user first), with `SNEAKY_SANDBOX_SKIP` set to `skip`.
fn run_as(w: &Ws, command: &str, uid: Option<u32>, skip: &str) -> util::Reply {
    use std::os::unix::process::CommandExt;
    // A copy another user can reach: the build's target/ may sit under a directory closed to
    // others.
    let exe = match uid {
        Some(uid) => {
            let bins = util::copy_binaries_for_others(w.dir.path(), &["sneaky-run"]);
            util::give_to(w.dir.path(), uid);
            bins.join("sneaky-run")
        }
        None => assert_cmd::cargo::cargo_bin("sneaky-run"),
    };
    let make = || {
        let mut cmd = std::process::Command::new(&exe);
        util::fence(&mut cmd, w.dir.path())
            .current_dir(&w.root)
            .env("SNEAKY_ROOT", &w.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
            .env("XDG_STATE_HOME", w.outside().join("state"))
            .env("SNEAKY_SANDBOX_SKIP", skip);
        if let Some(uid) = uid {
            cmd.env("HOME", w.outside()).uid(uid).gid(uid);
        }
        cmd
    };
    let request = json!({"command": command, "timeout": 30}).to_string();
    let out =
        util::output_retrying_busy(make, request.as_bytes(), std::time::Duration::from_secs(60));
    util::Reply::parse("sneaky-run", out)
}

#[test]
fn commands_judge_protected_paths_by_every_path_that_reaches_them() {
    if !Path::new(PYTHON).is_file() && !util::skip("needs /usr/bin/python3") {
        return;
    }
    if !namespaces_or_skip("commands_judge_protected_paths_by_every_path_that_reaches_them") {
        return;
    }
    let command = format!("{PYTHON} attempts.py");
    // As root and as the user nobody; over the overlay that holds the command's changes, and
    // writing the workspace directly.
    let users: &[Option<u32>] = if util::is_root() {
        &[None, Some(65_534)]
    } else {
        &[None]
    };
    for uid in users {
        for skip in ["", "overlay"] {
            let w = linked_ws();
            let r = run_as(&w, &command, *uid, skip);
            let how = format!(
                "{} as {}",
                if skip.is_empty() { "overlay" } else { "direct" },
                uid.map_or("this user".to_string(), |u| format!("uid {u}"))
            );
            let shown = r.json.to_string();
            assert!(shown.contains("done"), "{how}: {shown}");
            nothing_planted(&w, &how, &shown);
        }
    }
}
