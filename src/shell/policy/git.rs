//! git: global options, known subcommands only (no aliases), and `git config` only for keys
//! that cannot name a program.

use std::path::Path;

use super::paths::check_inside_root;
use super::rules::{GIT_CONFIG_SAFE_PREFIXES, GIT_SUBCOMMANDS};
/// git: global options before the subcommand (`-C`, `--git-dir`, `--work-tree` must stay in
/// the root), a known subcommand (no aliases), and the subcommand's own dangerous options.
pub(super) fn check_git(args: &[String], root: &Path) -> std::result::Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            break;
        }
        let path_opt = |v: &str| check_inside_root(v, root).map_err(|e| format!("git {a}: {e}"));
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
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
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

fn check_git_config(args: &[String]) -> std::result::Result<(), String> {
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
    let lower = key.to_ascii_lowercase();
    if GIT_CONFIG_SAFE_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p))
        && !args.iter().any(|a| a.contains('!'))
    {
        return Ok(());
    }
    Err(format!(
        "git config {key}: setting this key could make git run a program; only {} keys may be set",
        GIT_CONFIG_SAFE_PREFIXES.join("*, ") + "*"
    ))
}
