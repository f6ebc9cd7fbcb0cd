//! The environment of a command: the caller's, minus secret-looking variables (unless listed
//! in `tools.shell.pass_env`) and minus everything that makes bash run code at start-up or
//! changes how it reads the line; PATH without relative entries or entries inside the root;
//! TMPDIR pointing at the command's private temporary directory, and the usual caches
//! (XDG_CACHE_HOME, npm_config_cache, GOCACHE) there too unless set.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::Shell;
use crate::error::{Error, ErrorKind, Result};

/// The environment for commands: the caller's, minus secret-looking variables (unless
/// listed in tools.shell.pass_env) and minus everything that makes bash run code at start-up
/// or changes how it reads the line; PATH without relative entries or entries inside the
/// root; TMPDIR pointing at the private temporary directory.
pub fn command_env(
    shell: &Shell,
    root: &Path,
    tmp: &Path,
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut env = Vec::new();
    let mut removed = Vec::new();
    for (name, value) in std::env::vars_os() {
        let text = name.to_string_lossy().into_owned();
        if is_shell_hook(&text) || (is_secret(&text) && !shell.pass_env.contains(&text)) {
            removed.push(text);
            continue;
        }
        if matches!(text.as_str(), "PATH" | "TMPDIR" | "TMP" | "TEMP") {
            continue;
        }
        env.push((name, value));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    env.push(("PATH".into(), path_outside(&path, root)));
    for name in ["TMPDIR", "TMP", "TEMP"] {
        env.push((name.into(), tmp.as_os_str().to_owned()));
    }
    // Outside the workspace everything is read-only: caches that tools write by default go to
    // the private temporary directory unless the caller chose a place (add a lasting cache to
    // tools.shell.write_paths and set its variable).
    for (name, sub) in [
        ("XDG_CACHE_HOME", "cache"),
        ("npm_config_cache", "npm-cache"),
        ("GOCACHE", "go-build"),
    ] {
        if !env.iter().any(|(k, _)| k == name) {
            env.push((name.into(), tmp.join(sub).into_os_string()));
        }
    }
    removed.sort();
    (env, removed)
}

/// Variables that make bash run code or parse differently: never passed.
fn is_shell_hook(name: &str) -> bool {
    matches!(
        name,
        "BASH_ENV"
            | "ENV"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "IFS"
            | "CDPATH"
            | "GLOBIGNORE"
            | "PROMPT_COMMAND"
            | "PS4"
            | "BASH_XTRACEFD"
            | "BASH_COMPAT"
            | "EXECIGNORE"
            | "LD_PRELOAD"
            | "LD_AUDIT"
    ) || name.starts_with("BASH_FUNC_")
}

/// Names that look like credentials: `*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`,
/// `AWS_*`, `*_KEY`, auth sockets …
pub fn is_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "AUTH",
        "COOKIE",
        "SESSION_KEY",
    ];
    const PREFIXES: &[&str] = &[
        "AWS_",
        "AZURE_",
        "GCP_",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SSH_AUTH_SOCK",
    ];
    PARTS.iter().any(|p| n.contains(p))
        || PREFIXES.iter().any(|p| n.starts_with(p))
        || n.ends_with("_KEY")
        || n.ends_with("_PAT")
}

pub fn find_bash(env: &[(OsString, OsString)]) -> Result<PathBuf> {
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let mut candidates = vec![PathBuf::from("/bin/bash"), PathBuf::from("/usr/bin/bash")];
    if let Some(p) = path {
        candidates.extend(std::env::split_paths(&p).map(|d| d.join("bash")));
    }
    candidates.into_iter().find(|c| c.is_file()).ok_or_else(|| {
        Error::new(
            ErrorKind::IoError,
            "bash was not found (run_command needs it)",
        )
    })
}

/// PATH without relative entries and without those inside the root: spelled inside it (what
/// a command finds there is the workspace's, whatever it leads to now: a link there can be
/// turned while the command runs), or leading into it by a symbolic link from outside.
fn path_outside(path: &std::ffi::OsStr, root: &Path) -> OsString {
    let dirs: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|d| d.is_absolute() && !d.starts_with(root))
        .filter(|d| std::fs::canonicalize(d).map_or(true, |real| !real.starts_with(root)))
        .collect();
    std::env::join_paths(dirs).unwrap_or_else(|_| "/usr/bin:/bin".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised() {
        for n in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_REGION",
            "DB_PASSWORD",
            "MY_SECRET_X",
            "SSH_AUTH_SOCK",
        ] {
            assert!(is_secret(n), "{n}");
        }
        for n in ["PATH", "HOME", "CARGO_HOME", "LANG", "TERM", "USER"] {
            assert!(!is_secret(n), "{n}");
        }
    }

    #[test]
    fn path_keeps_no_entry_that_leads_into_the_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("real");
        let root = base.join("ws");
        std::fs::create_dir_all(root.join("bin")).expect("mkdir");
        std::fs::create_dir(base.join("tools")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("bin"), base.join("linked")).expect("link");
        std::os::unix::fs::symlink("/usr/bin", root.join("bin-link-out")).expect("link");
        let entries = [
            "relative/bin".to_string(),
            format!("{}/bin", root.display()),
            format!("{}/linked", base.display()),
            format!("{}/not-yet", root.display()),
            format!("{}/../tools", root.display()),
            format!("{}/bin-link-out", root.display()),
            format!("{}/tools", base.display()),
            "/usr/bin".to_string(),
        ];
        let kept = path_outside(std::ffi::OsStr::new(&entries.join(":")), &root);
        assert_eq!(
            kept.to_string_lossy(),
            format!("{}/tools:/usr/bin", base.display())
        );
    }
}
