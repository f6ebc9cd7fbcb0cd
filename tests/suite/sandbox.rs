//! The kernel is the boundary: every promise of run_command holds when the command policy is
//! fooled. Two corpora, each entry asserting that its effect did not happen (the file, the
//! device node, the metadata, the process, the packet):
//!
//! - `POLICY_CORPUS`: command lines through the real policy (refused, or run without effect);
//! - `PAYLOADS`: what a fooled policy would let run — a workspace script (in the strict mode,
//!   listed verbatim in `extra_allowed_commands`) stands in for any bypass, and runs the
//!   attack directly.
//!
//! Each runs in both modes: in the strict mode nothing changes at all (a denied program does
//! not run); in the contained mode (the default) the workspace's own files may change (a
//! program runs there, held and undoable), and nothing past them may.
//!
//! Tests that need user namespaces skip loudly when the kernel does not offer them.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::util::{self, Ws};

/// Whether the namespace layer is in force here; prints why not.
pub fn namespaces_or_skip(test: &str) -> bool {
    let w = util::ws();
    let reply = w.call("sneaky-run", json!({"command": "true"}));
    if reply.json["ok"] == false {
        // A layer is missing, and run_command refuses rather than run weaker.
        eprintln!(
            "SKIPPED {test}: a sandbox layer is unavailable here ({})",
            reply.json["error"]["message"]
        );
        return false;
    }
    let r = reply.command_ran().clone();
    let sandbox = r["sandbox"].as_str().unwrap_or("").to_string();
    if sandbox.contains("mount (read-only world)") {
        return true;
    }
    eprintln!("SKIPPED {test}: the namespace layer is unavailable here ({sandbox})");
    false
}

fn git(w: &Ws, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(&w.root)
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A workspace that is a git repository with one commit, a payload script, an outside file,
/// and a file whose name is a sed option with a script in it.
fn attack_ws() -> Ws {
    let w = util::ws();
    w.write("f.txt", "a line\n");
    w.write("evil", "[core]\n\tfsmonitor = touch pwned\n");
    w.write("hook", "#!/bin/sh\ntouch pwned\n");
    // A file name that becomes sed's `-e` script when a glob expands to it: with the kernel
    // layers in force the policy leaves globs to the kernel, so the script runs, and it must
    // then be the kernel that keeps it in the workspace.
    w.write("-e1e cd ..;touch pwned", "");
    std::fs::write(w.outside().join("outside.txt"), "untouched\n").expect("write");
    git(&w, &["init", "-q"]);
    git(&w, &["config", "user.name", "T"]);
    git(&w, &["config", "user.email", "t@example.com"]);
    git(&w, &["add", "f.txt"]);
    git(&w, &["commit", "-qm", "one"]);
    w
}

/// Everything an attack could have changed, to compare before and after.
#[derive(Debug, PartialEq)]
struct World {
    files: Vec<(String, Option<String>)>,
    outside_meta: (i64, i64, u32),
    hooks: Vec<String>,
    /// Which of the files that run code when the project is opened are there.
    autorun: Vec<&'static str>,
}

/// Files that run code when a person opens the project (the built-in `protected_paths`).
const AUTORUN: &[&str] = &[
    ".vscode",
    ".envrc",
    ".mcp.json",
    ".claude",
    ".idea",
    ".husky",
];

fn world(w: &Ws) -> World {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let files = [
        ("f.txt", w.root.join("f.txt")),
        ("sneaky.toml", w.root.join("sneaky.toml")),
        (".git/config", w.root.join(".git/config")),
        ("outside.txt", w.outside().join("outside.txt")),
        ("../pwned", w.outside().join("pwned")),
        ("pwned", w.root.join("pwned")),
        (".vscode/tasks.json", w.root.join(".vscode/tasks.json")),
        (".envrc", w.root.join(".envrc")),
        (".mcp.json", w.root.join(".mcp.json")),
        (
            ".claude/settings.json",
            w.root.join(".claude/settings.json"),
        ),
    ]
    .into_iter()
    .map(|(n, p)| (n.to_string(), read(&p)))
    .collect();
    let m = std::fs::metadata(w.outside().join("outside.txt")).expect("outside");
    let mut hooks: Vec<String> = std::fs::read_dir(w.root.join(".git/hooks"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    hooks.sort();
    World {
        files,
        outside_meta: (m.mtime(), m.ctime(), m.mode()),
        hooks,
        autorun: AUTORUN
            .iter()
            .copied()
            .filter(|p| std::fs::symlink_metadata(w.root.join(p)).is_ok())
            .collect(),
    }
}

/// [`world`] but the workspace's own files, which a program may change in the contained mode:
/// what lies past them (outside, `.git`'s metadata, the configuration, the protected paths).
fn world_past_the_workspace(w: &Ws) -> World {
    let mut world = world(w);
    world.files.retain(|(n, _)| n != "f.txt" && n != "pwned");
    world
}

/// The strict mode, in the user's configuration (with `more` lines of `[tools.shell]`).
fn strict(w: &Ws, more: &str) {
    user_config(w, &format!("[tools.shell]\nstrict = true\n{more}"));
}

/// Device nodes anywhere in the workspace.
fn device_nodes(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_char_device() || ft.is_block_device() {
            found.push(e.path().display().to_string());
        } else if ft.is_dir() && !ft.is_symlink() {
            found.extend(device_nodes(&e.path()));
        }
    }
    found
}

fn assert_no_effect(w: &Ws, world: fn(&Ws) -> World, before: &World, label: &str, reply: &Value) {
    let after = world(w);
    assert_eq!(&after, before, "{label}: the world changed; reply: {reply}");
    let nodes = device_nodes(&w.root);
    assert!(
        nodes.is_empty(),
        "{label}: device nodes {nodes:?}; reply: {reply}"
    );
    assert!(!w.root.join(".git/hooks/pre-commit").exists(), "{label}");
}

/// (class, command line) through the real policy. Each would create `pwned`, change a
/// protected file, make a device node or touch something outside if it ran as the attacker
/// means (in the contained mode, `pwned` in the workspace and a change to `f.txt` are a
/// program's ordinary effect).
const POLICY_CORPUS: &[(&str, &str)] = &[
    ("sort compress program", "sort -S 1 --compress-program=sh f.txt"),
    ("sort compress abbreviated", "sort -S 1 --compress-prog=touch f.txt"),
    ("sort compress shortest", "sort --com=rm f.txt"),
    ("sort compress through xargs", "echo f.txt | xargs sort --compress-program=sh"),
    ("tar checkpoint action", "tar --checkpoint=1 --checkpoint-action=exec='touch pwned' -cf x.tar f.txt"),
    ("tar to-command", "tar -cf x.tar --to-command='touch pwned' f.txt"),
    ("tar compress program", "tar -cIsh -f x.tar f.txt"),
    ("sed script from a file name", "sed -n 1p *"),
    ("sed script from a glob", "sed -n 1p ?e*"),
    ("sed script from braces", "sed {-n,1e\\ touch\\ pwned} f.txt"),
    ("sed script from a range glob", "sed -s -n 1p [-]e*"),
    ("git safe key then rename", "git config user.x.fsmonitor 'touch pwned'; git config --rename-section user.x core; git status"),
    ("git rename-section subcommand", "git config rename-section user.x core"),
    ("git include", "git config include.path ../evil"),
    ("git config file", "git config --file .git/config core.fsmonitor 'touch pwned'"),
    ("git abbreviated upload-pack", "git fetch --upload-p='touch pwned' ."),
    ("redirect into .git/config", "cat evil >> .git/config"),
    ("cp into hooks", "cp hook .git/hooks/pre-commit"),
    ("cd into .git then cp", "cd .git && cp ../hook hooks/pre-commit"),
    ("cd into .git then redirect", "cd .git && cat ../evil > config"),
    ("tee into .git", "tee -a .git/config < evil"),
    ("mv .git away", "mv .git old-git"),
    ("glob into .git", "cp evil .gi?/config"),
    ("cp -R a device", "cp -R /dev/null devnode"),
    ("cp -a a device dir", "cp -a /dev/zero zero"),
    ("cp -r /dev", "mkdir d && cp -r /dev/null d/"),
    ("touch outside mtime", "touch -d 2000-01-01 ../outside.txt"),
    ("touch outside by reference", "touch -r f.txt ../outside.txt"),
    ("touch outside through a link", "mkdir -p l && cp -P ../outside.txt l/ ; touch -m ../outside.txt"),
    ("mv outside", "mv ../outside.txt ../moved.txt"),
    ("cp over outside", "cp f.txt ../outside.txt"),
    ("write outside temp", "echo x > /tmp/pwned-sneaky"),
    ("setsid hopper", "setsid sleep 1000"),
    ("nohup in background", "nohup sleep 424242 > /dev/null 2>&1 &"),
    ("python", "python3 -c 'open(\"pwned\",\"w\")'"),
    ("perl", "perl -e 'open F, \">pwned\"'"),
    ("env runs a denied program", "env perl -e 1"),
    ("timeout runs a denied program", "timeout 5 rm f.txt"),
    ("find exec", "find . -maxdepth 0 -exec touch ../pwned ;"),
    ("find exec through a shell", "find . -maxdepth 0 -exec sh -c 'cp hook .git/hooks/pre-commit' ;"),
    ("xargs runs a shell", "echo 'touch pwned' | xargs sh -c"),
    ("redirect into .envrc", "echo 'touch pwned' > .envrc"),
    ("cp into .vscode", "mkdir -p .vscode && cp f.txt .vscode/tasks.json"),
    ("tee into .mcp.json", "tee .mcp.json < evil"),
    ("mkdir an agent's settings", "mkdir -p .claude/commands && cp hook .claude/settings.json"),
    ("sed -i a new .envrc", "touch .envrc; sed -i 1i\\touch .envrc"),
];

#[test]
fn policy_corpus_has_no_effect() {
    if !namespaces_or_skip("policy_corpus_has_no_effect") {
        return;
    }
    let w = attack_ws();
    strict(&w, "");
    policy_corpus_in(&w, world);
    let w = attack_ws();
    policy_corpus_in(&w, world_past_the_workspace);
}

fn policy_corpus_in(w: &Ws, world: fn(&Ws) -> World) {
    let _ = std::fs::remove_file("/tmp/pwned-sneaky");
    for (class, command) in POLICY_CORPUS {
        let before = world(w);
        let reply = w.call("sneaky-run", json!({"command": command, "timeout": 10}));
        assert_no_effect(w, world, &before, class, &reply.json);
        assert!(!Path::new("/tmp/pwned-sneaky").exists(), "{class}");
        let left = processes_with("424242");
        assert!(left.is_empty(), "{class}: survivors {left:?}");
    }
}

/// (class, payload script body): what would run if the policy were fooled. The script is
/// run as `./p.sh` (listed in extra_allowed_commands), so nothing in it is checked by the
/// policy; only the kernel stands between it and its effect.
const PAYLOADS: &[(&str, &str)] = &[
    ("denied program by name", "python3 -c 'open(\"pwned\",\"w\")'"),
    ("denied program by path", "/usr/bin/perl -e 'open F, \">pwned\"'"),
    ("denied rm", "/usr/bin/rm -f f.txt; /bin/rm -f f.txt"),
    ("copied program", "cp /usr/bin/rm ./myrm && ./myrm -f f.txt"),
    ("loader runs a denied program", "/lib64/ld-linux-x86-64.so.2 /usr/bin/rm -f f.txt"),
    ("sort compress program", "printf 'x\\n' > big; sort -S 1 --compress-program=/usr/bin/rm big"),
    ("find exec denied", "find . -maxdepth 0 -exec /usr/bin/rm -f f.txt \\;"),
    ("git alias runs a denied program", "git -c alias.x='!perl -e 1 && touch pwned' x"),
    ("git fsmonitor runs a denied program", "git -c core.fsmonitor='rm -f f.txt' status"),
    ("plant .git/config", "cat evil >> .git/config"),
    ("replace .git/config", "cp evil new && mv new .git/config"),
    ("remove .git/config", "rm -f .git/config; unlink .git/config"),
    ("plant a hook", "cp hook .git/hooks/pre-commit"),
    ("move .git away", "mv .git gone && mkdir .git && cp evil .git/config"),
    ("git config writes", "git config core.fsmonitor 'touch pwned'"),
    ("rewrite sneaky.toml", "printf '[tools.shell]\\nsandbox = false\\n' > sneaky.toml"),
    ("write outside", "echo x > ../pwned; touch ../outside.txt; echo y >> ../outside.txt"),
    ("write real /tmp", "echo x > /tmp/pwned-sneaky"),
    ("mknod", "mknod devnode c 1 3; mkfifo fifo; rm -f fifo"),
    ("cp -R a device", "cp -R /dev/null devnode; cp -a /dev/zero zero"),
    ("metadata outside", "touch -d 2000-01-01 ../outside.txt; touch -h ../outside.txt; chmod 777 ../outside.txt"),
    ("xattr outside", "setfattr -n user.x -v 1 ../outside.txt"),
    ("read a disk", "head -c 512 /dev/vda > disk.bin; head -c 512 /dev/sda >> disk.bin; test -s disk.bin && touch pwned"),
    ("remount rw", "mount -o remount,rw / && touch /pwned-sneaky"),
    ("escape with unshare", "unshare -r sh -c 'touch ../pwned'"),
    ("plant editor tasks", "mkdir -p .vscode && echo '{\"tasks\":[]}' > .vscode/tasks.json"),
    ("plant .envrc", "echo 'touch pwned' > .envrc"),
    ("plant an MCP server", "echo '{\"mcpServers\":{}}' > .mcp.json"),
    ("plant agent settings", "mkdir -p .claude; echo '{}' > .claude/settings.json"),
    ("remove a placeholder then plant", "rmdir .vscode; rm -rf .vscode; mkdir .vscode; touch .vscode/tasks.json"),
    ("rename a placeholder then plant", "mv .claude old; mkdir .claude && echo '{}' > .claude/settings.json"),
    ("husky hook", "mkdir -p .husky && cp hook .husky/pre-commit"),
];

#[test]
fn payloads_of_a_fooled_policy_have_no_effect() {
    if !namespaces_or_skip("payloads_of_a_fooled_policy_have_no_effect") {
        return;
    }
    let w = attack_ws();
    strict(&w, "extra_allowed_commands = [\"./p.sh\"]\n");
    payloads_in(&w, world);
    let w = attack_ws();
    payloads_in(&w, world_past_the_workspace);
    assert!(POLICY_CORPUS.len() + PAYLOADS.len() >= 40);
}

fn payloads_in(w: &Ws, world: fn(&Ws) -> World) {
    let _ = std::fs::remove_file("/tmp/pwned-sneaky");
    for (class, body) in PAYLOADS {
        let script = w.root.join("p.sh");
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let before = world(w);
        let reply = w.call("sneaky-run", json!({"command": "./p.sh", "timeout": 10}));
        let r = reply.command_ran().clone();
        assert_eq!(r["sandboxed"], true, "{class}: {r}");
        assert_no_effect(w, world, &before, class, &r);
        assert!(!Path::new("/tmp/pwned-sneaky").exists(), "{class}: {r}");
        assert!(!Path::new("/pwned-sneaky").exists(), "{class}: {r}");
        let disk = std::fs::metadata(w.root.join("disk.bin"))
            .map(|m| m.len())
            .unwrap_or(0);
        assert_eq!(disk, 0, "{class}: read a disk: {r}");
    }
}

/// Processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) && !text.contains("sneaky-run") {
                found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// A C program that calls setsid and forks in a tight loop, each child renaming itself with
/// the marker (so survivors can be found), compiled outside the sandbox.
fn build_hopper(w: &Ws, marker: &str) -> bool {
    let src = w.dir.path().join("hopper.c");
    std::fs::write(
        &src,
        format!(
            r#"#include <unistd.h>
#include <string.h>
#include <sys/prctl.h>
int main(int argc, char **argv) {{
    prctl(PR_SET_NAME, "{marker}");
    for (;;) {{
        pid_t p = fork();
        if (p > 0) _exit(0);
        if (p == 0) {{ setsid(); strncpy(argv[0], "{marker}", strlen(argv[0])); }}
    }}
}}
"#
        ),
    )
    .expect("write");
    let out = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(w.root.join("hopper"))
        .arg(&src)
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        other => {
            eprintln!("SKIPPED the fork-hopper test: no C compiler ({other:?})");
            false
        }
    }
}

fn survivors(marker: &str) -> Vec<String> {
    // The hoppers rename themselves; /proc/PID/comm holds the marker.
    let mut found = processes_with(marker);
    for entry in std::fs::read_dir("/proc").expect("proc").flatten() {
        if let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) {
            if comm.trim() == marker {
                found.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    found
}

#[test]
fn setsid_fork_hoppers_do_not_survive_the_call() {
    if !namespaces_or_skip("setsid_fork_hoppers_do_not_survive_the_call") {
        return;
    }
    let w = util::ws();
    let marker = format!("hop{}", std::process::id() % 100000);
    if !build_hopper(&w, &marker) {
        return;
    }
    user_config(
        &w,
        "[tools.shell]\nextra_allowed_commands = [\"./hopper\"]\n",
    );
    // In the background, finishing at once; and in the foreground until the timeout.
    for (command, timeout) in [("./hopper & echo started", 10), ("./hopper; sleep 30", 1)] {
        let r = w
            .call(
                "sneaky-run",
                json!({"command": command, "timeout": timeout}),
            )
            .command_ran()
            .clone();
        assert_eq!(r["sandboxed"], true, "{r}");
        std::thread::sleep(Duration::from_millis(200));
        let left = survivors(&marker);
        assert!(left.is_empty(), "{command}: hoppers survived: {left:?}");
    }
}

/// With the sandbox off there is no PID namespace to end with the call, yet what a command
/// leaves running ends with it all the same: a background job, one in a session of its own,
/// and one that started its own session while its parent lives on (a process table entry
/// the command's session and group no longer name).
#[test]
fn without_the_sandbox_nothing_the_command_started_outlives_the_call() {
    let w = util::ws();
    // A script, which the policy does not look into (setsid is refused on a command line).
    user_config(
        &w,
        "[tools.shell]\nsandbox = false\nextra_allowed_commands = [\"./d.sh\"]\n",
    );
    let marker = format!("42{}", std::process::id() % 100000);
    w.write(
        "d.sh",
        &format!(
            "#!/bin/bash\nsleep {marker}1 &\nsetsid sleep {marker}2 &\n\
             bash -c 'setsid sleep {marker}3 & sleep {marker}4' &\nsleep 0.2\necho started\n"
        ),
    );
    let script = w.root.join("d.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let r = w
        .call("sneaky-run", json!({"command": "./d.sh", "timeout": 10}))
        .command_ran()
        .clone();
    assert_eq!(r["sandboxed"], false, "{r}");
    assert_eq!(r["stdout"], "started\n", "{r}");
    std::thread::sleep(Duration::from_millis(200));
    let left = processes_with(&marker);
    assert!(left.is_empty(), "survivors: {left:?}");
}

/// Start `sneaky-run COMMAND` in the background, wait until `marker` processes run, kill it
/// with `signal`, and return how long until none was left.
fn kill_and_time(w: &Ws, command: &str, marker: &str, signal: &str) -> Duration {
    use assert_cmd::cargo::CommandCargoExt;
    let mut child = Command::cargo_bin("sneaky-run")
        .expect("binary")
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
        .arg(command)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_with(marker).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        processes_with(marker).len() >= 2,
        "the command did not start"
    );
    let killed = Instant::now();
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    let _ = child.wait();
    while !processes_with(marker).is_empty() && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let took = killed.elapsed();
    let left = processes_with(marker);
    assert!(left.is_empty(), "{signal}: survivors {left:?}");
    took
}

#[test]
fn killing_sneaky_run_takes_the_whole_tree_down() {
    if !namespaces_or_skip("killing_sneaky_run_takes_the_whole_tree_down") {
        return;
    }
    let w = util::ws();
    for signal in ["KILL", "TERM"] {
        let marker = format!("{}.{}", 6000 + std::process::id() % 1000, signal.len());
        let command = format!("sleep {marker}1 & (sleep {marker}2 &) ; sleep {marker}3");
        let took = kill_and_time(&w, &command, &marker, signal);
        // The interface MCP cancellation relies on: well under 100 ms (a loaded machine gets
        // some slack; the figure is printed).
        eprintln!("SIG{signal}: the command tree was gone after {took:?}");
        assert!(took < Duration::from_millis(1000), "SIG{signal}: {took:?}");
    }
}

/// SIGTERM while a command runs: the tree is killed, the call still finishes (a workspace
/// `sneaky.toml` the command created or changed is put back) and sneaky-run leaves with
/// 128 + 15. Both with the namespace layer (the command can only create the file, in the
/// overlay that holds its changes, which never applies it) and without it (it can overwrite it).
#[test]
fn sigterm_still_puts_the_configuration_back() {
    use assert_cmd::cargo::CommandCargoExt;
    for skip_namespaces in [false, true] {
        let w = util::ws();
        let _ = std::fs::remove_file(w.root.join("sneaky.toml"));
        // Without namespaces the command runs only where the configuration accepts fewer
        // layers.
        let original = if skip_namespaces {
            user_config(&w, "");
            w.write("sneaky.toml", "[tools.shell]\nrequire_layers = []\n");
            Some("[tools.shell]\nrequire_layers = []\n")
        } else {
            None
        };
        w.write("new.txt", "[tools.shell]\nsandbox = false\n");
        let marker = format!(
            "{}.{}",
            7000 + std::process::id() % 1000,
            u8::from(skip_namespaces)
        );
        // A name the policy cannot read as the configuration's (a glob, a brace expansion).
        let write = if original.is_some() {
            "cp new.txt sneaky.tom?"
        } else {
            "tee sneaky.{toml,x} < new.txt > /dev/null"
        };
        let command = format!("{write}; sleep {marker}");
        let mut cmd = Command::cargo_bin("sneaky-run").expect("binary");
        cmd.current_dir(&w.root)
            .env("SNEAKY_ROOT", &w.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
            .env("XDG_STATE_HOME", w.dir.path().join("state"))
            .arg(&command)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if skip_namespaces {
            cmd.env("SNEAKY_SANDBOX_SKIP", "namespaces");
        }
        let mut child = cmd.spawn().expect("spawn");
        // The shell's own command line holds the marker too: wait for the file as well (in
        // the workspace only without the overlay; with it, `sleep` follows the write).
        let planted = || {
            !skip_namespaces
                || std::fs::read_to_string(w.root.join("sneaky.toml"))
                    .ok()
                    .as_deref()
                    == Some("[tools.shell]\nsandbox = false\n")
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while (processes_with(&marker).is_empty() || !planted()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(planted(), "the command did not change the configuration");
        assert!(
            !processes_with(&marker).is_empty(),
            "the command did not start"
        );
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signal");
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(128 + 15), "{status:?}");
        assert!(processes_with(&marker).is_empty(), "the command survived");
        match original {
            Some(text) => assert_eq!(w.read("sneaky.toml"), text),
            None => assert!(
                !w.root.join("sneaky.toml").exists(),
                "the planted file stayed"
            ),
        }
    }
}

/// Creates one socket of each family and says which the kernel refused.
const SOCKETS_C: &str = r#"#include <stdio.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
static void try(const char *name, int family, int type, int proto) {
    int s = socket(family, type, proto);
    printf("%s %s\n", name, s >= 0 ? "ok" : "refused");
}
int main(void) {
    int pair[2];
    printf("unix %s\n", socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0 ? "ok" : "refused");
    try("inet", AF_INET, SOCK_DGRAM, 0);
    try("inet6", AF_INET6, SOCK_STREAM, 0);
    try("packet", AF_PACKET, SOCK_RAW, 0);
    return 0;
}
"#;

/// Compile a C program into the workspace (outside the sandbox); false (and a loud skip
/// message) without a C compiler.
fn compile(w: &Ws, name: &str, source: &str) -> bool {
    let src = w.dir.path().join(format!("{name}.c"));
    std::fs::write(&src, source).expect("write");
    let out = Command::new("cc")
        .arg("-o")
        .arg(w.root.join(name))
        .arg(&src)
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        other => {
            eprintln!("SKIPPED part of a sandbox test: cannot compile {name}.c ({other:?})");
            false
        }
    }
}

#[test]
fn network_false_stops_udp_and_tcp_but_not_unix_sockets() {
    if !namespaces_or_skip("network_false_stops_udp_and_tcp_but_not_unix_sockets") {
        return;
    }
    let w = util::ws();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let port = udp.local_addr().expect("addr").port();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    tcp.set_nonblocking(true).expect("nonblocking");
    let tcp_port = tcp.local_addr().expect("addr").port();
    let payload = format!(
        "echo hello > /dev/udp/127.0.0.1/{port}\necho hello > /dev/tcp/127.0.0.1/{tcp_port}\n"
    );
    std::fs::write(w.root.join("p.sh"), format!("#!/bin/bash\n{payload}")).expect("write");
    std::fs::set_permissions(w.root.join("p.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let mut buf = [0u8; 64];
    user_config(
        &w,
        "[tools.shell]\nnetwork = false\nextra_allowed_commands = [\"./p.sh\"]\n",
    );
    let r = w
        .call("sneaky-run", json!({"command": "./p.sh"}))
        .command_ran()
        .clone();
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a UDP packet got through: {r}"
    );
    assert!(tcp.accept().is_err(), "a TCP connection got through: {r}");
    let sandbox = r["sandbox"].as_str().unwrap_or("");
    assert!(sandbox.contains("network denied"), "{r}");
    // AF_UNIX stays; AF_INET, AF_INET6 and AF_PACKET sockets cannot even be created.
    if compile(&w, "sock", SOCKETS_C) {
        user_config(
            &w,
            "[tools.shell]\nnetwork = false\nextra_allowed_commands = [\"./sock\"]\n",
        );
        let r = w
            .call("sneaky-run", json!({"command": "./sock"}))
            .command_ran()
            .clone();
        assert_eq!(
            r["stdout"], "unix ok\ninet refused\ninet6 refused\npacket refused\n",
            "{r}"
        );
    }

    // The control: with the network on, the same packet arrives.
    user_config(
        &w,
        "[tools.shell]\nnetwork = true\nextra_allowed_commands = [\"./p.sh\"]\n",
    );
    let r = w
        .call("sneaky-run", json!({"command": "./p.sh"}))
        .command_ran()
        .clone();
    let got = udp.recv_from(&mut buf);
    assert!(got.is_ok(), "no packet with the network on: {r}");
}

#[test]
fn git_make_and_cargo_work_under_the_default_presets() {
    if !namespaces_or_skip("git_make_and_cargo_work_under_the_default_presets") {
        return;
    }
    let w = attack_ws();
    let run = |command: &str, timeout: u64| {
        w.call(
            "sneaky-run",
            json!({"command": command, "timeout": timeout}),
        )
        .command_ran()
        .clone()
    };
    w.write("f.txt", "a changed line\n");
    let r = run("git status --short && git diff --stat", 30);
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(r["stdout"].as_str().unwrap_or("").contains("f.txt"), "{r}");
    let r = run(
        "git add f.txt && git commit -qm two && git log --oneline | wc -l",
        30,
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["stdout"].as_str().unwrap_or("").trim(), "2", "{r}");

    w.write(
        "Makefile",
        "all:\n\techo built > out.txt && sh -c 'cat out.txt'\n",
    );
    let r = run("make", 30);
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(r["stdout"].as_str().unwrap_or("").contains("built"), "{r}");

    w.write(
        "hello/Cargo.toml",
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    w.write(
        "hello/build.rs",
        "fn main() { println!(\"cargo:rerun-if-changed=build.rs\"); }\n",
    );
    w.write(
        "hello/src/main.rs",
        "fn main() { println!(\"hello from cargo\"); }\n",
    );
    let r = run("cd hello && cargo run --quiet --offline", 300);
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["stdout"], "hello from cargo\n", "{r}");
}

#[test]
fn the_file_tools_never_write_under_dot_git() {
    let w = attack_ws();
    w.mkdir("sub");
    w.link(".git", "gitlink");
    let config_before = w.read(".git/config");
    for (bin, request) in [
        (
            "sneaky-write",
            json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "gitlink/config", "content": "x"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": "sub/.git/config", "content": "[core]\n\tfsmonitor = touch pwned\n"}),
        ),
        (
            "sneaky-write",
            json!({"file_path": ".GIT/config", "content": "x"}),
        ),
        (
            "sneaky-replace",
            json!({"file_path": ".git/config", "old_str": "bare = false", "new_str": "bare = false\n\tfsmonitor = touch pwned"}),
        ),
        (
            "sneaky-patch",
            json!({"file_path": ".git/config", "patch": "@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = touch pwned\n"}),
        ),
        ("sneaky-rm", json!({"file_path": ".git/config"})),
        ("sneaky-rm", json!({"file_path": ".git/HEAD"})),
        ("sneaky-mkdir", json!({"directory_path": "sub/.git/hooks"})),
        ("sneaky-mkdir", json!({"directory_path": ".git/hooks/x"})),
    ] {
        let reply = w.call(bin, request.clone());
        let message = reply.err("protected_path", 3);
        assert!(message.contains(".git"), "{bin} {request}: {message}");
    }
    assert_eq!(w.read(".git/config"), config_before);
    assert!(!w.root.join("sub/.git").exists());
    assert!(!w.root.join(".git/hooks/pre-commit").exists());

    // Unless the user's configuration allows it.
    user_config(&w, "allow_vcs_writes = true\n");
    w.call(
        "sneaky-write",
        json!({"file_path": ".git/description", "content": "mine\n"}),
    )
    .ok();
    assert_eq!(w.read(".git/description"), "mine\n");
}

#[test]
fn a_workspace_config_may_tighten_but_not_loosen() {
    let w = attack_ws();
    // The user's configuration: network off, a short list.
    let dir = w.dir.path().join("xdg/sneaky");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("config.toml"),
        "[tools.shell]\nnetwork = false\nallowed_commands = [\"echo\", \"cat\", \"ls\"]\n",
    )
    .expect("write");
    // The cloned repository asks for more.
    w.write(
        "sneaky.toml",
        "[tools.shell]\nsandbox = false\nnetwork = true\nallowed_commands = [\"echo\", \"perl\"]\nextra_allowed_commands = [\"python3\"]\ndenied_commands = []\n",
    );
    let r = w
        .call("sneaky-run", json!({"command": "echo hi"}))
        .command_ran()
        .clone();
    assert_eq!(r["stdout"], "hi\n", "{r}");
    assert_ne!(
        r["sandbox"].as_str().unwrap_or("").get(..3),
        Some("off"),
        "{r}"
    );
    assert!(
        r["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("network denied"),
        "{r}"
    );
    let m = w
        .call("sneaky-run", json!({"command": "perl -e 1"}))
        .err("command_denied", 3);
    assert!(m.contains("trusted_workspaces"), "{m}");
    w.call("sneaky-run", json!({"command": "python3 -c 1"}))
        .err("command_denied", 3);
    // It narrowed the list: cat is no longer allowed.
    let m = w
        .call("sneaky-run", json!({"command": "cat f.txt"}))
        .err("command_denied", 3);
    assert!(m.contains("cat"), "{m}");

    // Trusted by the user, the workspace's file is taken as it is.
    let root = std::fs::canonicalize(&w.root).expect("root");
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "trusted_workspaces = [{:?}]\n[tools.shell]\nnetwork = false\n",
            root.display().to_string()
        ),
    )
    .expect("write");
    let r = w
        .call("sneaky-run", json!({"command": "echo hi"}))
        .command_ran()
        .clone();
    assert!(
        r["sandbox"].as_str().unwrap_or("").starts_with("off"),
        "{r}"
    );
}

#[test]
fn extra_allowed_commands_add_to_the_defaults_and_print_policy_says_where_from() {
    let w = attack_ws();
    strict(&w, "extra_allowed_commands = [\"npm\"]\n");
    // ls and git stay allowed (the default list is still in force).
    let r = w.call(
        "sneaky-run",
        json!({"command": "ls f.txt && git status --short"}),
    );
    assert_eq!(r.command_ran()["exit_code"], 0);
    let v = print_policy(&w);
    assert_eq!(v["mode"], "strict", "{v}");
    let from = |name: &str| {
        v["allowed_commands"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["name"] == name))
            .map(|e| e["from"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(
        from("npm").as_deref(),
        Some("tools.shell.extra_allowed_commands"),
        "{v}"
    );
    assert_eq!(from("ls").as_deref(), Some("default"), "{v}");
    assert!(
        v["config"].as_str().unwrap_or("").ends_with("config.toml"),
        "{v}"
    );
    // Refusals name the key that would change the answer.
    let m = w
        .call("sneaky-run", json!({"command": "perl -e 1"}))
        .err("command_denied", 3);
    assert!(m.contains("tools.shell.extra_allowed_commands"), "{m}");
    let m = w
        .call("sneaky-run", json!({"command": "rm f.txt"}))
        .err("command_denied", 3);
    assert!(
        m.contains("strict mode's denied list")
            && m.contains("tools.shell.strict = true")
            && m.contains("extra_allowed_commands"),
        "{m}"
    );
}

fn print_policy(w: &Ws) -> Value {
    use assert_cmd::cargo::CommandCargoExt;
    let out = Command::cargo_bin("sneaky-run")
        .expect("binary")
        .current_dir(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
        .args(["--print-policy", "--format", "json"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The contained mode: extra_allowed_commands lets an entry of the deny list run, and the
/// refusal of another gives its reason and the key.
#[test]
fn extra_allowed_commands_lift_an_entry_of_the_deny_list() {
    let w = attack_ws();
    user_config(&w, "[tools.shell]\nextra_allowed_commands = [\"docker\"]\n");
    let v = print_policy(&w);
    assert_eq!(v["mode"], "contained", "{v}");
    let denied = |name: &str| {
        v["denied_commands"]
            .as_array()
            .is_some_and(|a| a.iter().any(|e| e["name"] == name))
    };
    assert!(denied("sudo") && denied("docker") && !denied("rm"), "{v}");
    assert_eq!(v["allowed_commands"][0]["name"], "docker", "{v}");
    let r = w.call("sneaky-run", json!({"command": "rm f.txt && ls"}));
    assert_eq!(r.command_ran()["exit_code"], 0);
    assert!(!w.root.join("f.txt").exists());
    // The policy lets docker through (the kernel still holds: its daemon's socket is covered).
    let r = w.call(
        "sneaky-run",
        json!({"command": "command -v docker || true"}),
    );
    r.command_ran();
    let m = w
        .call("sneaky-run", json!({"command": "podman ps"}))
        .err("command_denied", 3);
    assert!(
        m.contains("built-in deny list") && m.contains("container engine"),
        "{m}"
    );
}

#[test]
fn required_layers_refuse_rather_than_run_weaker() {
    let w = util::ws();
    user_config(&w, "[tools.shell]\nrequire_layers = [\"all\"]\n");
    let reply = w.call("sneaky-run", json!({"command": "echo ran"}));
    if reply.status == 0 {
        // Every layer is available here: the command ran with all of them.
        let r = reply.command_ran();
        assert_eq!(r["stdout"], "ran\n");
        assert!(r["sandbox"].as_str().unwrap_or("").contains("mount"), "{r}");
    } else {
        let m = reply.err("io_error", 1);
        assert!(m.contains("require_layers"), "{m}");
    }
    user_config(&w, "[tools.shell]\nrequire_layers = [\"landlok\"]\n");
    let m = w
        .call("sneaky-run", json!({"command": "true"}))
        .err("config_error", 2);
    assert!(m.contains("landlok"), "{m}");
}

/// The lists in docs/sandbox.md as the code holds them: the deny list one line per reason
/// (the entries that share it, then the reason), the strict mode's lists as names.
#[test]
fn docs_list_the_default_lists() {
    use sneaky::config::commands::{DEFAULT_DENIED, STRICT_ALLOWED, STRICT_DENIED};
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sandbox.md"))
            .expect("docs/sandbox.md");
    let names = |list: &[&str]| {
        list.iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, why) in DEFAULT_DENIED {
        match by_reason.iter_mut().find(|(w, _)| w == why) {
            Some((_, list)) => list.push(name),
            None => by_reason.push((why, vec![name])),
        }
    }
    let deny_list = by_reason
        .iter()
        .map(|(why, list)| format!("- {}: {why}.", names(list)))
        .collect::<Vec<_>>()
        .join("\n");
    for (marker, expected) in [
        ("default-denied", deny_list),
        ("strict-allowed", names(STRICT_ALLOWED)),
        ("strict-denied", names(STRICT_DENIED)),
    ] {
        let start = format!("<!-- {marker} -->\n");
        let from = doc.find(&start).expect("start marker") + start.len();
        let to = doc[from..].find("\n<!--").expect("end marker") + from;
        assert_eq!(
            doc[from..to].trim(),
            expected,
            "docs/sandbox.md's {marker} list differs from src/config/commands.rs: put the \
             expected text (above) between its markers"
        );
    }
}

#[test]
fn the_active_configuration_is_read_only_whatever_its_name() {
    if !namespaces_or_skip("the_active_configuration_is_read_only_whatever_its_name") {
        return;
    }
    let w = attack_ws();
    w.write("conf/my.toml", "[tools.shell]\nnetwork = false\n");
    w.write("loose.toml", "[tools.shell]\nsandbox = false\n");
    let config = w.root.join("conf/my.toml");
    let config = config.to_str().expect("utf-8");
    for command in [
        "cp loose.toml conf/my.toml",
        "cat loose.toml > conf/my.toml",
        "mv loose.toml conf/my.toml",
        "mv conf old-conf",
        "sed -i s/false/true/ conf/my.toml",
    ] {
        let reply = w.call_raw("sneaky-run", &["--config", config, command], b"");
        assert_eq!(
            w.read("conf/my.toml"),
            "[tools.shell]\nnetwork = false\n",
            "{command}: {:?}",
            reply.json
        );
    }
    let r = w.call_raw("sneaky-run", &["--config", config, "true"], b"");
    assert!(
        r.command_ran()["sandbox"]
            .as_str()
            .unwrap_or("")
            .contains("network denied"),
        "{:?}",
        r.json
    );
}

/// A layer missing (simulated with SNEAKY_SANDBOX_SKIP=namespaces): refused by default,
/// naming the layer and the key; run weaker, and said so, only when the configuration
/// accepts it (`require_layers` without it, or `container_boundary`).
#[test]
fn without_namespaces_nothing_runs_unless_the_configuration_accepts_it() {
    use assert_cmd::cargo::CommandCargoExt;
    let w = attack_ws();
    let call = |w: &Ws| {
        let out = Command::cargo_bin("sneaky-run")
            .expect("binary")
            .current_dir(&w.root)
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
            .env("SNEAKY_SANDBOX_SKIP", "namespaces")
            .arg("echo ran; touch ../pwned; touch pwned")
            .output()
            .expect("run");
        util::Reply::parse("sneaky-run", out)
    };
    let m = call(&w).err("io_error", 1);
    assert!(
        m.contains("namespaces (skipped: SNEAKY_SANDBOX_SKIP")
            && m.contains("require_layers")
            && m.contains("container_boundary")
            && m.contains("nothing ran"),
        "{m}"
    );
    assert!(!w.root.join("pwned").exists(), "{m}");
    for accept in ["require_layers = []", "container_boundary = true"] {
        user_config(&w, &format!("[tools.shell]\n{accept}\n"));
        let reply = call(&w);
        let r = reply.command_ran();
        let sandbox = r["sandbox"].as_str().unwrap_or("");
        assert!(sandbox.contains("namespaces: unavailable (skipped"), "{r}");
        assert_eq!(
            sandbox.contains("boundary: the container"),
            accept.starts_with("container"),
            "{r}"
        );
        assert_eq!(r["stdout"], "ran\n");
        // Landlock still holds the writes.
        assert!(!w.outside().join("pwned").exists(), "{r}");
        std::fs::remove_file(w.root.join("pwned")).expect("ran");
    }
    user_config(&w, "[tools.shell]\nrequire_layers = [\"namespaces\"]\n");
    let m = call(&w).err("io_error", 1);
    assert!(
        m.contains("required by tools.shell.require_layers") && m.contains("nothing ran"),
        "{m}"
    );
    user_config(
        &w,
        "[tools.shell]\ncontainer_boundary = true\nrequire_layers = [\"seccomp\"]\n",
    );
    call(&w).command_ran();
    assert!(!w.outside().join("pwned").exists());
}

#[test]
fn npm_scripts_work_once_npm_is_allowed() {
    if !namespaces_or_skip("npm_scripts_work_once_npm_is_allowed") {
        return;
    }
    if Command::new("npm").arg("--version").output().is_err() {
        eprintln!("SKIPPED npm_scripts_work_once_npm_is_allowed: npm is not installed");
        return;
    }
    let w = util::ws();
    w.write(
        "package.json",
        r#"{"name":"x","version":"1.0.0","scripts":{"hello":"echo hello from npm && node -e \"console.log(6*7)\""}}"#,
    );
    user_config(
        &w,
        "[tools.shell]\nextra_allowed_commands = [\"npm\", \"node\"]\n",
    );
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "npm run --silent hello", "timeout": 120}),
        )
        .command_ran()
        .clone();
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["stdout"], "hello from npm\n42\n", "{r}");
}

#[test]
fn existing_device_nodes_cannot_be_opened() {
    if !namespaces_or_skip("existing_device_nodes_cannot_be_opened") {
        return;
    }
    let w = util::ws();
    // A random-number device outside the workspace and one inside it (as if planted before):
    // readable outside the sandbox, unusable inside (nodev), whatever the permissions.
    let outside = w.outside().join("urand");
    let inside = w.root.join("urand");
    let made = Command::new("mknod")
        .arg(&outside)
        .args(["c", "1", "9"])
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("mknod")
            .arg(&inside)
            .args(["c", "1", "9"])
            .status()
            .is_ok_and(|s| s.success());
    if !made {
        eprintln!("SKIPPED existing_device_nodes_cannot_be_opened: mknod needs root");
        return;
    }
    let _ = Command::new("chmod")
        .arg("666")
        .arg(&outside)
        .arg(&inside)
        .status();
    std::fs::write(
        w.root.join("p.sh"),
        "#!/bin/sh\nhead -c 16 ../urand > a; head -c 16 urand > b; head -c 16 /dev/urandom > c\n",
    )
    .expect("write");
    std::fs::set_permissions(w.root.join("p.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    user_config(&w, "[tools.shell]\nextra_allowed_commands = [\"./p.sh\"]\n");
    let r = w
        .call("sneaky-run", json!({"command": "./p.sh"}))
        .ok()
        .clone();
    let size = |n: &str| {
        std::fs::metadata(w.root.join(n))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    assert_eq!(size("a"), 0, "read a device outside: {r}");
    assert_eq!(size("b"), 0, "read a device inside: {r}");
    assert_eq!(size("c"), 16, "/dev/urandom stays usable: {r}");
}

/// The cost table's marks (benches/run_start.sh): with SNEAKY_RUN_COSTS, one line per call
/// in the file it names, the runner's, the launcher's, the init's and the end's steps in
/// time order; without it, no file.
#[test]
fn the_cost_marks_cover_a_call_from_the_runner_to_the_end() {
    if !namespaces_or_skip("cost marks") {
        return;
    }
    let w = util::ws();
    let file = w.outside().join("costs.txt");
    for _ in 0..2 {
        w.call_env(
            "sneaky-run",
            &[],
            br#"{"command": "true"}"#,
            &[("SNEAKY_RUN_COSTS", file.as_os_str())],
        )
        .command_ran();
    }
    let text = std::fs::read_to_string(&file).expect("the marks");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let marks: Vec<(&str, u64)> = lines[0]
        .split('\t')
        .map(|m| {
            let (name, ns) = m.split_once('=').expect("name=ns");
            (name, ns.parse().expect("nanoseconds"))
        })
        .collect();
    assert!(marks.windows(2).all(|p| p[0].1 <= p[1].1), "{text}");
    let names: Vec<&str> = marks.iter().map(|(n, _)| *n).collect();
    let at = |step: &str| {
        names
            .iter()
            .position(|n| *n == step)
            .unwrap_or_else(|| panic!("{step} missing: {names:?}"))
    };
    // The runner's, then the launcher's, the init's, the end's, the runner's again.
    let order = [
        "runner-main",
        "pids-cgroup",
        "launch-spec-exec-set-deny-list",
        "launcher-exec",
        "mounts",
        "landlock",
        "seccomp",
        "shell-ran",
        "init-reported",
        "command-ended",
        "overlay-scan-apply",
        "watcher-ended",
    ];
    assert!(order.windows(2).all(|p| at(p[0]) < at(p[1])), "{names:?}");
    // The launcher forked ahead of time took its first steps, the namespaces among them,
    // while the runner worked out the rest: before the launch reached it.
    let early = [
        "pids-cgroup",
        "launcher-session-pids-join",
        "namespaces",
        "launcher-exec",
    ];
    assert!(early.windows(2).all(|p| at(p[0]) < at(p[1])), "{names:?}");
    // That launcher worked out the exec set too, before its first steps (in the host's
    // namespaces), and the spec took it.
    let exec_set = ["exec-set", "launcher-session-pids-join", "launcher-exec"];
    assert!(
        exec_set.windows(2).all(|p| at(p[0]) < at(p[1])),
        "{names:?}"
    );
    assert!(
        at("exec-set") < at("launch-spec-exec-set-deny-list"),
        "{names:?}"
    );
    // As root, the runner made the network namespace on a thread, and the launcher entered
    // it before its first steps.
    if names.contains(&"network-namespace") {
        assert!(
            at("network-namespace-entered") < at("launcher-session-pids-join"),
            "{names:?}"
        );
    }
    // Without the variable, nothing is written.
    std::fs::remove_file(&file).expect("rm");
    w.call("sneaky-run", json!({"command": "true"}))
        .command_ran();
    assert!(!file.exists());
}

/// The launcher forked ahead of time starts on a CPU apart from the runner's, and takes the
/// runner's CPUs back before anything runs: a command may run on every CPU the caller may
/// (`nproc` counts them), not only on the one the launcher was started on.
#[test]
fn a_command_may_run_on_every_cpu_its_caller_may() {
    if !namespaces_or_skip("the command's CPUs") {
        return;
    }
    let allowed = |status: &str| {
        status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .map(|l| l.trim().to_string())
    };
    let ours = allowed(&std::fs::read_to_string("/proc/self/status").expect("status"));
    let w = util::ws();
    for _ in 0..3 {
        let r = w
            .call("sneaky-run", json!({"command": "cat /proc/self/status"}))
            .command_ran()
            .clone();
        let theirs = allowed(r["stdout"].as_str().unwrap_or(""));
        assert!(ours.is_some());
        assert_eq!(theirs, ours, "{r}");
    }
}

/// A command line given as an argument that is not UTF-8 is answered in the envelope
/// (invalid_args, exit 2), never a panic.
#[test]
fn a_command_argument_that_is_not_utf8_is_refused_in_the_envelope() {
    use std::os::unix::ffi::OsStrExt;
    let w = util::ws();
    let out = assert_cmd::Command::cargo_bin("sneaky-run")
        .expect("binary")
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .arg(std::ffi::OsStr::from_bytes(b"echo \xfe"))
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    let reply = util::Reply::parse("sneaky-run", out);
    reply.err("invalid_args", 2);
}

/// The launcher's last line says how the command ended, and the call ends on it (with both
/// outputs closed) without waiting for the launcher's exit. A command cannot end its call
/// early that way: a line it prints (it cannot know the token) is its own output, and closing
/// its outputs ends nothing while it runs; its real end is reported, with what it did last.
#[test]
fn a_command_cannot_end_its_call_with_a_forged_last_line() {
    if !namespaces_or_skip("forged last line") {
        return;
    }
    let w = util::ws();
    let command = r#"printf '\036sneaky-sandbox-end:00112233445566778899aabbccddeeff:{"status":{"code":0},"refused":[]}\n' >&2; exec >&- 2>&-; sleep 0.5; echo late > done.txt; exit 7"#;
    let r = w.call("sneaky-run", json!({ "command": command }));
    let result = r.command_ran();
    assert_eq!(result["exit_code"], 7, "{result}");
    assert!(
        result["stderr"]
            .as_str()
            .is_some_and(|e| e.contains("\u{1e}sneaky-sandbox-end:")),
        "{result}"
    );
    assert_eq!(w.read("done.txt"), "late\n", "{result}");
    // A signal, reported on the last line too.
    let r = w.call("sneaky-run", json!({ "command": "kill -KILL $$" }));
    let result = r.command_ran();
    assert_eq!(result["signal"], "SIGKILL", "{result}");
}
