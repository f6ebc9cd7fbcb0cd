//! git: global options, known subcommands only (no aliases), and `git config` only for keys
//! that cannot name a program. Options are read where git reads them: the global ones (`-c`,
//! `-C`, `--git-dir` …) only before the subcommand, the subcommand's after it, so that
//! `git switch -c feature` is not git's `-c name=value`.

use super::context::RuleContext;
use super::paths::check_inside_root;
use super::words::UNKNOWN;

/// Git subcommands that may run. Anything else — aliases (which may be `!shell`), `difftool`,
/// `mergetool`, `bisect run`, `submodule foreach`, `filter-branch`, `help -w` … — is refused.
#[rustfmt::skip]
const GIT_SUBCOMMANDS: &[&str] = &[
    "add", "apply", "blame", "branch", "cat-file", "check-ignore", "checkout", "cherry-pick",
    "clean", "clone", "commit", "config", "describe", "diff", "diff-tree", "fetch", "for-each-ref",
    "format-patch", "grep", "init", "log", "ls-files", "ls-remote", "ls-tree", "merge", "merge-base", "mv",
    "name-rev", "pull", "push", "rebase", "reflog", "remote", "reset", "restore", "rev-list",
    "rev-parse", "revert", "rm", "shortlog", "show", "show-ref", "stash", "status", "switch",
    "symbolic-ref", "tag", "version", "worktree",
];

/// Git config keys a command may set (`git config`, `git -c`); every other key can name a
/// program git runs.
const GIT_CONFIG_SAFE_PREFIXES: &[&str] = &["user.", "color.", "advice.", "init."];

/// Single git config keys that only switch git's behaviour (no program, no path it runs).
#[rustfmt::skip]
const GIT_CONFIG_SAFE_KEYS: &[&str] = &[
    "commit.gpgsign", "tag.gpgsign", "core.quotepath", "core.autocrlf", "core.safecrlf",
    "core.filemode", "pull.rebase", "pull.ff", "merge.ff", "log.showsignature", "gc.auto",
    "maintenance.auto", "rebase.autosquash", "rebase.autostash", "push.autosetupremote",
    "diff.noprefix", "status.showuntrackedfiles",
];

/// Whether a command may set this git config key.
fn git_key_is_safe(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    GIT_CONFIG_SAFE_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p))
        || GIT_CONFIG_SAFE_KEYS.contains(&lower.as_str())
}

/// git: global options before the subcommand (`-C`, `--git-dir`, `--work-tree` must stay in
/// the root), a known subcommand (no aliases), and the subcommand's own dangerous options.
pub(super) fn check_git(
    args: &[String],
    context: &RuleContext<'_>,
) -> std::result::Result<(), String> {
    let i = global_options(args, context)?;
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    if sub == UNKNOWN {
        // A subcommand known only at run time (an alias could run a shell command): what it
        // runs is in the kernel's exec set.
        return Ok(());
    }
    if !GIT_SUBCOMMANDS.contains(&sub.as_str()) {
        return Err(format!(
            "git {sub}: only git's own subcommands may run (aliases can run shell commands); allowed: {}",
            GIT_SUBCOMMANDS.join(", ")
        ));
    }
    let rest = &args[i + 1..];
    match sub.as_str() {
        "config" => check_git_config(rest),
        "rebase" => match rest.iter().find(|a| *a == "-x" || a.starts_with("--exec")) {
            Some(a) => Err(format!("git rebase {a} runs a program")),
            None => Ok(()),
        },
        "grep" => match rest
            .iter()
            .find(|a| a.starts_with("-O") || a.starts_with("--open-files-in-pager"))
        {
            Some(a) => Err(format!("git grep {a} runs a program")),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// git's global options, before the subcommand: checked, and the index of the first argument
/// after them (the subcommand, if any).
fn global_options(
    args: &[String],
    context: &RuleContext<'_>,
) -> std::result::Result<usize, String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            break;
        }
        // Where git works may be anywhere the kernel lets it write (not when strict).
        let path_opt = |v: &str| match context.inside_root {
            true => check_inside_root(v, context.root).map_err(|e| format!("git {a}: {e}")),
            false => Ok(()),
        };
        // Only here, before the subcommand, is `-c` git's own `-c name=value`; after it, `-c`
        // belongs to the subcommand (`switch -c`, `branch -c`, `commit -c`, `log -c`).
        if a == "-c" {
            config_setting(args.get(i + 1).map(String::as_str))?;
            i += 2;
            continue;
        }
        if a.starts_with("--config-env") {
            return Err(format!(
                "git {a} sets config that can run programs (core.pager, alias.x=!cmd …)"
            ));
        }
        if a.starts_with("--exec-path") {
            return Err(format!("git {a} runs git commands from another directory"));
        }
        match a {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                let v = args.get(i + 1).ok_or(format!("git {a} needs a value"))?;
                if a != "--namespace" {
                    path_opt(v)?;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(v) = a
            .strip_prefix("--git-dir=")
            .or_else(|| a.strip_prefix("--work-tree="))
        {
            path_opt(v)?;
        } else if let Some(v) = a.strip_prefix("-C").filter(|v| !v.is_empty()) {
            path_opt(v)?;
        } else if !matches!(
            a,
            "--no-pager"
                | "-P"
                | "--paginate"
                | "-p"
                | "--bare"
                | "--no-replace-objects"
                | "--literal-pathspecs"
                | "--no-optional-locks"
                | "--version"
                | "--help"
        ) && !a.starts_with("--namespace=")
        {
            return Err(format!(
                "git option {a} is not allowed before the subcommand"
            ));
        }
        i += 1;
    }
    Ok(i)
}

/// git's own `-c name=value`, before the subcommand: only a key that cannot name a program.
fn config_setting(setting: Option<&str>) -> std::result::Result<(), String> {
    match setting {
        // Known only at run time: what git then runs is in the kernel's exec set.
        Some(UNKNOWN) => Ok(()),
        Some(setting) => {
            let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
            if !git_key_is_safe(key) || value.contains('!') {
                return Err(format!(
                    "git -c {setting} sets config that can run programs (core.pager, \
                     alias.x=!cmd …); only {} keys may be set",
                    safe_keys()
                ));
            }
            Ok(())
        }
        None => Err("git -c needs a value".into()),
    }
}

fn check_git_config(args: &[String]) -> std::result::Result<(), String> {
    if args.iter().any(|a| a == UNKNOWN) {
        // What is set is known only at run time; the repository's config is read-only to
        // commands in the kernel's mount view.
        return Ok(());
    }
    let mut positional = Vec::new();
    for a in args {
        match a.as_str() {
            _ if a.starts_with("--get") || a == "--list" || a == "-l" => return Ok(()),
            // Options that only shape how a value is read or shown, or pick this repository.
            "--local" | "--worktree" | "--bool" | "--int" | "--bool-or-int" | "--path"
            | "--expiry-date" | "--null" | "-z" | "--name-only" | "--show-origin"
            | "--show-scope" | "--includes" | "--no-includes" | "--add" | "--unset"
            | "--unset-all" | "--replace-all" | "--fixed-value" => {}
            _ if a.starts_with("--type=") || a.starts_with("--default=") => {}
            // Everything else (--file, --global, --edit, --rename-section, --remove-section,
            // unknown options) is refused: renaming a section moves safe keys into core.*.
            _ if a.starts_with('-') => return Err(format!("git config {a} is not allowed")),
            _ => positional.push(a.as_str()),
        }
    }
    let (key, value_count) = match positional.as_slice() {
        [] => return Ok(()),
        ["get" | "list", ..] => return Ok(()),
        ["set" | "unset", key, rest @ ..] => (*key, rest.len()),
        [sub, ..] if !sub.contains('.') => {
            return Err(format!("git config {sub} is not allowed"));
        }
        [key, rest @ ..] => (*key, rest.len()),
    };
    if value_count == 0 && !args.iter().any(|a| a.starts_with("--unset")) {
        return Ok(()); // reading one key
    }
    if git_key_is_safe(key) && !args.iter().any(|a| a.contains('!')) {
        return Ok(());
    }
    Err(format!(
        "git config {key}: setting this key could make git run a program; only {} keys may be set",
        safe_keys()
    ))
}

fn safe_keys() -> String {
    GIT_CONFIG_SAFE_PREFIXES
        .iter()
        .map(|p| format!("{p}*"))
        .chain(GIT_CONFIG_SAFE_KEYS.iter().map(|k| k.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Options of git's network subcommands that take the next argument as their value (so it is
/// not the repository).
const VALUE_OPTIONS: &[&str] = &[
    "-b",
    "--branch",
    "-o",
    "--origin",
    "--depth",
    "--reference",
    "--reference-if-able",
    "--separate-git-dir",
    "--template",
    "-j",
    "--jobs",
    "--filter",
    "--shallow-since",
    "--shallow-exclude",
    "--deepen",
    "--server-option",
    "--bundle-uri",
    "--negotiation-tip",
    "--refmap",
    "--push-option",
    "--sort",
    "--recurse-submodules-default",
    "--signed",
    "--force-with-lease",
    "--repo",
    "--upload-pack",
    "--receive-pack",
    "--exec",
];

/// git's subcommands that reach another repository (`clone`, `fetch`, `pull`, `push`,
/// `ls-remote`, `remote update`/`prune`/`show`) are judged under `tools.shell.network`, as the
/// kernel judges their connections: with the network off they are refused, with a message
/// that says so, unless the repository they name is a local path.
pub(super) fn check_git_network(args: &[String], network: bool) -> std::result::Result<(), String> {
    if network {
        return Ok(());
    }
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        // Global options with a separate value (checked by check_git).
        i += if matches!(
            args[i].as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    let rest = &args[i + 1..];
    let takes_value = |j: usize| j > 0 && VALUE_OPTIONS.contains(&rest[j - 1].as_str());
    let mut positional = rest
        .iter()
        .enumerate()
        .filter(|(j, a)| !a.starts_with('-') && !takes_value(*j));
    let repository = match sub.as_str() {
        "clone" | "fetch" | "pull" | "push" | "ls-remote" => positional.next().map(|(_, a)| a),
        "remote" => match positional.next().map(|(_, a)| a.as_str()) {
            Some("update" | "prune") => None,
            Some("show") if !rest.iter().any(|a| a == "-n") => None,
            _ => return Ok(()),
        },
        _ => return Ok(()),
    };
    if repository.is_some_and(|r| is_local(r) || r == UNKNOWN) {
        return Ok(());
    }
    let what = match repository {
        Some(r) => format!("the repository {r}"),
        None => "the remote named in the repository's configuration".to_string(),
    };
    Err(format!(
        "git {sub} reaches {what} over the network, and tools.shell.network is off (the default): \
         set tools.shell.network in your configuration to allow it; a repository on a local \
         path (`git {sub} ../repo`, `file:///path`) needs no network"
    ))
}

/// A repository argument that names a local path rather than a remote or a URL.
fn is_local(repo: &str) -> bool {
    repo.starts_with('/')
        || repo.starts_with("./")
        || repo.starts_with("../")
        || repo == "."
        || repo == ".."
        || repo.starts_with("file://")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Network, Shell};

    fn check(cmd: &str, network: bool) -> Result<(), String> {
        check_with(cmd, if network { Network::On } else { Network::Off })
    }

    fn check_with(cmd: &str, network: Network) -> Result<(), String> {
        let shell = Shell {
            network,
            ..Shell::default()
        };
        super::super::check(cmd, &shell, Path::new("/ws"))
            .map(|_| ())
            .map_err(|e| e.message())
    }

    /// A subcommand's `-c` (a new branch, a copied branch, a reused message, a combined diff)
    /// is not git's own `-c name=value`, which only stands before the subcommand.
    #[test]
    fn options_are_read_per_subcommand() {
        for cmd in [
            "git switch -c feature",
            "git switch -C feature origin/main",
            "git checkout -b x",
            "git checkout -B x HEAD~1",
            "git branch -c a b",
            "git branch -C a b",
            "git commit -c HEAD",
            "git commit -C HEAD --amend",
            "git log -c -p",
            "git show -c HEAD",
            "git -C sub switch -c feature",
            "git --no-pager diff -c",
        ] {
            check(cmd, false).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        }
        for cmd in [
            "git -c core.pager=less log",
            "git -C sub -c alias.x=!rm x",
            "git --no-pager -c core.fsmonitor=x status",
            "git --config-env=core.pager=P log",
            "git --exec-path=/tmp status",
        ] {
            let m = check(cmd, false).expect_err(cmd);
            assert!(m.contains("run"), "{cmd}: {m}");
        }
        // The subcommand's own options that run programs stay refused.
        for cmd in [
            "git rebase -x 'rm x' main",
            "git rebase --exec='rm x' main",
            "git grep -Ovim x",
            "git diff --output=/tmp/x",
        ] {
            check(cmd, false).expect_err(cmd);
        }
    }

    /// clone, ls-remote, fetch, pull and push are judged alike, under the network key, with a
    /// message that says so (clone and ls-remote were refused as if they were aliases).
    #[test]
    fn network_subcommands_are_judged_by_the_network_key() {
        for cmd in [
            "git clone https://git.example/r.git",
            "git clone --depth 1 git@git.example:r.git dir",
            "git ls-remote origin",
            "git ls-remote https://git.example/r.git",
            "git fetch",
            "git fetch origin main",
            "git -C sub fetch --all",
            "git pull",
            "git pull --rebase origin main",
            "git push origin HEAD",
            "git push",
            "git remote update",
            "git remote show origin",
        ] {
            let m = check(cmd, false).expect_err(cmd);
            assert!(
                m.contains("tools.shell.network") && m.contains("over the network"),
                "{cmd}: {m}"
            );
            assert!(!m.contains("aliases"), "{cmd}: {m}");
            check(cmd, true).unwrap_or_else(|e| panic!("{cmd} with network: {e}"));
            // A host list lets git through its proxy, which judges the host.
            check_with(cmd, Network::Hosts(vec!["git.example".into()]))
                .unwrap_or_else(|e| panic!("{cmd} with a host list: {e}"));
        }
        for cmd in [
            "git clone ../other copy",
            "git clone -b main /srv/repo.git copy",
            "git clone file:///srv/repo.git",
            "git fetch ./other",
            "git pull .. main",
            "git ls-remote .",
            "git remote -v",
            "git remote show -n origin",
            "git status",
        ] {
            check(cmd, false).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        }
    }
}
