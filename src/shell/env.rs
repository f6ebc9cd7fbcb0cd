//! The environment of a command: the caller's, minus secret-looking variables (unless listed
//! in `tools.shell.pass_env`) and minus everything that makes bash run code at start-up or
//! changes how it reads the line; PATH without relative entries or entries inside the root;
//! TMPDIR pointing at the command's private temporary directory; and the toolchains' caches
//! (cargo's home, npm's, pip's and go's caches) in the sandbox's private caches of the
//! workspace ([`private_caches`]), never the person's own, which their tools later run
//! outside the sandbox (a `build.rs` planted in `~/.cargo/registry` would run at their next
//! build).

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
    caches: Option<&Path>,
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
    env.push(("PATH".into(), command_path(root)));
    for name in ["TMPDIR", "TMP", "TEMP"] {
        env.push((name.into(), tmp.as_os_str().to_owned()));
    }
    // Outside the workspace everything is read-only: the caches tools write go to the
    // sandbox's private caches of the workspace (lasting from call to call), else to the
    // private temporary directory, unless the caller's variable names a place commands may
    // write (the workspace, or one of tools.shell.write_paths: a lasting cache of one's own).
    let writable = |value: &OsString| {
        let place = Path::new(value);
        place.is_absolute()
            && !place
                .components()
                .any(|c| c == std::path::Component::ParentDir)
            && (place.starts_with(root)
                || shell
                    .write_paths
                    .iter()
                    .any(|w| Path::new(w).is_absolute() && place.starts_with(w)))
    };
    for (name, sub) in CACHES {
        let at = match (caches, *sub) {
            (_, "cache") | (None, _) => tmp.join(sub),
            (Some(dir), _) => dir.join(sub),
        };
        // CARGO_HOME holds more than a cache: without private caches it stays the caller's.
        if caches.is_none() && *name == "CARGO_HOME" {
            continue;
        }
        match env.iter().position(|(k, _)| k == name) {
            Some(i) if writable(&env[i].1) => {}
            Some(i) => env[i].1 = at.into_os_string(),
            None => env.push((name.into(), at.into_os_string())),
        }
    }
    removed.sort();
    (env, removed)
}

/// The variables that place the caches tools write, and where each goes beneath the private
/// caches (`cache`, the XDG default for the rest, beneath the private temporary directory).
const CACHES: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", "cache"),
    ("CARGO_HOME", "cargo"),
    ("npm_config_cache", "npm"),
    ("PIP_CACHE_DIR", "pip"),
    ("GOCACHE", "go-build"),
    ("GOMODCACHE", "go-mod"),
];

/// The sandbox's private caches of the workspace whose root is `root`:
/// `$XDG_CACHE_HOME/sneaky/caches/<workspace>` (else `~/.cache/…`), made 0700 when missing,
/// where commands keep cargo's registry, npm's, pip's and go's caches from call to call.
/// Outside the workspace, apart from every cache the person's own tools use, and writable only
/// to commands of this workspace. None when there is no such place (no home, or one inside the
/// workspace): the caches then last only for the call, in its private temporary directory.
///
/// cargo's home holds its configuration too: the person's (`config.toml` or `config` in
/// `$CARGO_HOME`, else `~/.cargo`) is copied in, and one a command left there is removed, so
/// that commands build with the person's registries and settings and no other.
pub fn private_caches(root: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let home = std::env::var_os("HOME").and_then(absolute);
    let base = std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| home.as_ref().map(|h| h.join(".cache")))?;
    let dir = base
        .join("sneaky")
        .join("caches")
        .join(crate::fs::history::workspace_key(root));
    let outside = |d: &Path| crate::fs::real::path(d).is_ok_and(|real| !real.starts_with(root));
    if !outside(&base) && base.exists() {
        return None;
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    if !outside(&dir) {
        return None;
    }
    let own = std::env::var_os("CARGO_HOME")
        .and_then(absolute)
        .or_else(|| home.map(|h| h.join(".cargo")));
    own_cargo_config(&dir, own.as_deref())?;
    Some(dir)
}

/// Put the person's cargo configuration (`config.toml`, `config` in `own`) in the private
/// cargo home `caches/cargo`, and nothing else there by those names. Everything beneath
/// `caches` is the commands' to change, and this runs outside the sandbox, as the person: the
/// way is walked with no link followed (a `cargo` a command made a link to the person's
/// `~/.cargo`, or a `config.toml` made a link to their `~/.bashrc`, would have this write or
/// remove there), each name removed and made anew. None when it cannot be.
fn own_cargo_config(caches: &Path, own: Option<&Path>) -> Option<()> {
    use nix::fcntl::{open, openat, OFlag};
    use nix::sys::stat::mkdirat;
    use nix::sys::stat::Mode;
    use nix::unistd::{unlinkat, UnlinkatFlags};
    use std::io::Write;
    let dir_flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let top = open(caches, dir_flags, Mode::empty()).ok()?;
    let cargo = match openat(&top, "cargo", dir_flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(_) => {
            // Missing, or something other than a directory (a link): made a directory anew.
            let _ = unlinkat(&top, "cargo", UnlinkatFlags::NoRemoveDir);
            let _ = mkdirat(&top, "cargo", Mode::from_bits_truncate(0o700));
            openat(&top, "cargo", dir_flags, Mode::empty()).ok()?
        }
    };
    for name in ["config.toml", "config"] {
        match unlinkat(&cargo, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(_) => return None,
        }
        let Some(text) = own.and_then(|o| std::fs::read(o.join(name)).ok()) else {
            continue;
        };
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&cargo, name, flags, Mode::from_bits_truncate(0o600)).ok()?;
        std::fs::File::from(fd).write_all(&text).ok()?;
    }
    Some(())
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
    // git's author variables (GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_AUTHOR_DATE) name a
    // person, not a credential: the word AUTHOR is no AUTH (AUTHORIZATION still is).
    let n = name
        .to_ascii_uppercase()
        .split('_')
        .filter(|word| !matches!(*word, "AUTHOR" | "AUTHORS"))
        .collect::<Vec<_>>()
        .join("_");
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
        .map(|(_, v)| v.as_os_str());
    find_bash_on(path)
}

/// [`find_bash`] with the command's PATH, if it has one.
pub fn find_bash_on(path: Option<&std::ffi::OsStr>) -> Result<PathBuf> {
    let mut candidates = vec![PathBuf::from("/bin/bash"), PathBuf::from("/usr/bin/bash")];
    if let Some(p) = path {
        candidates.extend(std::env::split_paths(p).map(|d| d.join("bash")));
    }
    candidates.into_iter().find(|c| c.is_file()).ok_or_else(|| {
        Error::new(
            ErrorKind::IoError,
            "bash was not found (run_command needs it)",
        )
    })
}

/// The command's PATH ([`command_env`]'s): the caller's, as [`path_outside`] leaves it.
pub fn command_path(root: &Path) -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    path_outside(&path, root)
}

/// PATH without relative entries and without those inside the root: spelled inside it (what
/// a command finds there is the workspace's, whatever it leads to now: a link there can be
/// turned while the command runs), or leading into it by a symbolic link from outside.
fn path_outside(path: &std::ffi::OsStr, root: &Path) -> OsString {
    let dirs: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|d| d.is_absolute() && !d.starts_with(root))
        .filter(|d| crate::fs::real::path(d).map_or(true, |real| !real.starts_with(root)))
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
            "HTTP_AUTHORIZATION",
            "GIT_AUTHOR_TOKEN",
        ] {
            assert!(is_secret(n), "{n}");
        }
        for n in [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "LANG",
            "TERM",
            "USER",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
        ] {
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
