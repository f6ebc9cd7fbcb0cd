//! A repository a command makes where the workspace had none (`git init`, `git clone`,
//! `cargo new`, at the root or in a directory) is applied as git wrote it, but never with what
//! would make the person's own git run a program outside the sandbox later: an executable
//! hook, or a configuration that sets anything but the plain settings git itself writes
//! (`core.fsmonitor`, `core.hooksPath`, an alias …) or sets them in a form a reader could see
//! otherwise. Each attack is judged on the host afterwards, by running the person's own git
//! where the planted program would run, with a marker file outside the workspace that it would
//! make.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::util::{self, Ws};

/// A fresh workspace (no repository) with the person's own git identity, or None (skipped).
fn fresh() -> Option<(Ws, PathBuf)> {
    if !util::require_cmd("git") || !crate::sandbox::namespaces_or_skip("a new repository") {
        return None;
    }
    let w = util::ws();
    w.write("app.txt", "hello\n");
    let gitconfig = w.outside().join("gitconfig");
    std::fs::write(
        &gitconfig,
        "[user]\n\tname = A Developer\n\temail = dev@example.test\n[init]\n\tdefaultBranch = main\n",
    )
    .expect("gitconfig");
    Some((w, gitconfig))
}

/// Run `command` in the sandbox with the defaults; it must succeed. Its result.
fn run(w: &Ws, gitconfig: &Path, command: &str) -> Value {
    let reply = w.call_env(
        "sneaky-run",
        &[],
        json!({ "command": command, "timeout": 120 })
            .to_string()
            .as_bytes(),
        &[("GIT_CONFIG_GLOBAL", gitconfig.as_os_str())],
    );
    reply.command_ran().clone()
}

/// The person's own git, on the host, in `dir` of the workspace: whether it succeeded.
fn host_git(w: &Ws, gitconfig: &Path, dir: &str, args: &[&str]) -> bool {
    Command::new("git")
        .args(args)
        .current_dir(w.root.join(dir))
        .env("GIT_CONFIG_GLOBAL", gitconfig)
        .env("GIT_EDITOR", "true")
        .output()
        .expect("git")
        .status
        .success()
}

fn discarded(r: &Value) -> Vec<String> {
    r["discarded"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// `git init` in `dir` and an executable pre-commit hook planted in the new repository: the
/// repository is applied, the hook is not, and the person's next commit runs none.
fn planted_hook(dir: &str) {
    let Some((w, gitconfig)) = fresh() else {
        return;
    };
    let marker = w.outside().join("hook-ran");
    let at = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    w.write(&format!("{at}notes.txt"), "a file to commit\n");
    // A script does it (the policy only classifies what it can see; the kernel and the apply
    // step are what must hold).
    w.write(
        "plant.sh",
        &format!(
            "git init -q {dir}\nfor hook in pre-commit post-checkout; do\n\
             \tprintf '#!/bin/sh\\ntouch {m}\\n' > {at}.git/hooks/$hook\n\
             \tchmod 755 {at}.git/hooks/$hook\ndone\n",
            m = marker.display()
        ),
    );
    let r = run(&w, &gitconfig, "bash plant.sh");
    let root = w.root.join(dir);
    assert!(
        root.join(".git/HEAD").is_file() && root.join(".git/config").is_file(),
        "the repository git init made is applied: {r:#}"
    );
    for hook in ["pre-commit", "post-checkout"] {
        assert!(
            !root.join(".git/hooks").join(hook).exists(),
            "the planted {hook} hook landed: {r:#}"
        );
        assert!(
            discarded(&r).contains(&format!("{at}.git/hooks/{hook}")),
            "{hook} is listed as not applied: {r:#}"
        );
    }
    assert!(host_git(&w, &gitconfig, dir, &["add", "-A"]));
    assert!(host_git(&w, &gitconfig, dir, &["commit", "-qm", "mine"]));
    assert!(host_git(
        &w,
        &gitconfig,
        dir,
        &["checkout", "-q", "-b", "topic"]
    ));
    assert!(!marker.exists(), "the person's own git ran a planted hook");
}

#[test]
fn a_hook_planted_in_a_repository_git_init_made_is_not_applied() {
    planted_hook("");
}

#[test]
fn a_hook_planted_in_a_nested_repository_git_init_made_is_not_applied() {
    planted_hook("sub");
}

/// `git init`, then `setup` (a command that gives the new repository a configuration that
/// runs a program writing the marker `{m}`): the repository is applied without that
/// configuration, stderr names the setting, and the person's own `git status`, commit and
/// `git st` run nothing.
fn planted_config(setup: &str, setting: &str) {
    let Some((w, gitconfig)) = fresh() else {
        return;
    };
    let marker = w.outside().join("config-ran");
    // A hook kept as a file of the workspace, where core.hooksPath would send git.
    w.write(
        "hooks/pre-commit",
        &format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    // A script does it, as in `planted_hook`.
    w.write(
        "plant.sh",
        &format!(
            "chmod +x hooks/pre-commit\ngit init -q\n{}\n",
            setup.replace("{m}", &marker.display().to_string())
        ),
    );
    let r = run(&w, &gitconfig, "bash plant.sh");
    assert!(
        w.root.join(".git/HEAD").is_file(),
        "the repository is applied: {r:#}"
    );
    assert!(
        !w.root.join(".git/config").exists(),
        "the config that sets {setting} landed: {r:#}"
    );
    assert!(discarded(&r).contains(&".git/config".to_string()), "{r:#}");
    let stderr = r["stderr"].as_str().unwrap_or("");
    assert!(
        stderr
            .contains("sneaky-run: .git/config of the repository the command made was not applied")
            && stderr.contains(setting),
        "stderr names the setting {setting}: {r:#}"
    );
    // The person's own git works in it, and runs nothing the command set.
    assert!(host_git(&w, &gitconfig, "", &["status", "--short"]));
    assert!(host_git(&w, &gitconfig, "", &["add", "-A"]));
    assert!(host_git(&w, &gitconfig, "", &["commit", "-qm", "mine"]));
    let _ = host_git(&w, &gitconfig, "", &["st"]);
    assert!(
        !marker.exists(),
        "the person's own git ran what {setting} set"
    );
}

#[test]
fn a_new_repository_s_core_fsmonitor_is_not_applied() {
    planted_config("git config core.fsmonitor 'touch {m}'", "core.fsmonitor");
}

#[test]
fn a_new_repository_s_core_hookspath_is_not_applied() {
    planted_config("git config core.hooksPath hooks", "core.hookspath");
}

#[test]
fn a_new_repository_s_alias_is_not_applied() {
    planted_config("git config alias.st '!touch {m}'", "alias.st");
}

#[test]
fn a_new_repository_s_config_in_a_form_a_reader_could_misread_is_not_applied() {
    // git reads a setting on its section's line (and a comment after `;`); a reader that
    // takes the header to end at the line's last `]` sees no setting there at all.
    planted_config(
        "printf '[core]\\n\\trepositoryformatversion = 0\\n[core] fsmonitor = touch {m} ; [core]\\n' > .git/config",
        "the line",
    );
}

#[test]
fn the_plain_config_of_a_new_repository_is_applied() {
    let Some((w, gitconfig)) = fresh() else {
        return;
    };
    let r = run(
        &w,
        &gitconfig,
        "git init -q && git config user.name 'In The Sandbox' && git add -A && git commit -qm first",
    );
    assert!(!discarded(&r).contains(&".git/config".to_string()), "{r:#}");
    assert!(
        w.read(".git/config").contains("name = In The Sandbox"),
        "{r:#}"
    );
    let log = Command::new("git")
        .args(["log", "--format=%an %s"])
        .current_dir(&w.root)
        .env("GIT_CONFIG_GLOBAL", &gitconfig)
        .output()
        .expect("git");
    assert_eq!(
        String::from_utf8_lossy(&log.stdout),
        "In The Sandbox first\n"
    );
}
