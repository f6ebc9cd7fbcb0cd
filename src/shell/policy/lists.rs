//! The lists the command checker consults: whether a program word may run (the mode in force
//! and the configured lists: `config::commands`, where their semantics live) with the refusal
//! message that names the key to edit, and the fixed lists of builtins and wrappers.
//!
//! In the contained mode (every layer in force) the kernel bounds what any program does, so
//! a word is refused only when it names a denied program: by its name as typed (`sudo`), or
//! by a path outside the workspace (`/usr/bin/sudo`, where the kernel also covers it). A path
//! inside the workspace is a file of the workspace, never an installed program: a copy of a
//! denied one runs contained like any other file. No builtin escapes the layers, so [`NEVER`]
//! and [`OPAQUE_WRAPPERS`] are refused only when the policy is strict, where it must see every
//! program that runs (src/shell/policy/programs.rs).

use std::path::{Component, Path, PathBuf};

use crate::config::commands::{denied_reason, EffectiveLists, Mode, Origin};
use crate::config::Shell;

/// Shell builtins and keywords that run strings as code, define or redefine commands, or
/// change the shell's state in ways the policy cannot follow. Refused when the policy is
/// strict, whatever the lists say (otherwise what they run is judged where the parser sees it,
/// and left to the kernel where it does not).
#[rustfmt::skip]
pub const NEVER: &[&str] = &[
    "eval", "exec", "source", ".", "trap", "alias", "unalias", "enable", "builtin", "hash", "set",
    "shopt", "declare", "typeset", "export", "readonly", "local", "unset", "let", "read",
    "readarray", "mapfile", "coproc", "fc", "history", "bind", "complete", "compgen", "compopt",
    "pushd", "popd", "dirs", "ulimit", "umask", "getopts", "function", "select", "caller", "disown",
    "suspend", "logout",
];

/// Programs that run another program given on their command line in a way the policy does
/// not look through. Refused when the policy is strict, whatever the lists say (otherwise the
/// kernel keeps a program the lists refuse from running; those that gain privilege are on the
/// deny list).
#[rustfmt::skip]
pub const OPAQUE_WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "runuser", "pkexec", "chroot", "setsid", "ionice", "taskset", "chrt",
    "prlimit", "strace", "ltrace", "gdb", "watch", "flock", "unbuffer", "script", "parallel",
    "busybox", "firejail", "bwrap", "unshare", "nsenter", "systemd-run", "fakeroot", "faketime",
    "proot", "setpriv", "capsh", "expect", "sg", "newgrp",
];

/// Shells: `sh -c 'literal script'` has its script checked in turn; when the policy is strict
/// that is the only form accepted, and only when the lists allow the shell.
pub const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];

/// Programs that cannot write files (so an argument naming `sneaky.toml` is harmless). Not
/// `xxd` (-r writes), `tree` (-o), `file` (-C), `sort` (-o).
#[rustfmt::skip]
pub(super) const READ_ONLY: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "stat", "du", "diff", "cmp",
    "comm", "nl", "tac", "rev", "basename", "dirname", "realpath", "readlink", "echo", "printf",
    "test", "[", "sha256sum", "sha1sum", "md5sum", "cksum", "od", "hexdump", "strings", "jq",
];

/// The lists as the checker consults them.
pub(super) struct Lists {
    effective: EffectiveLists,
    /// Asked for by an untrusted workspace's sneaky.toml and dropped.
    untrusted: Vec<String>,
    /// The workspace root: a program word that is a path beneath it names a file of the
    /// workspace, not an installed program.
    root: PathBuf,
}

impl Lists {
    pub(super) fn from_config(shell: &Shell, root: &Path) -> Lists {
        Lists {
            effective: EffectiveLists::from_config(shell),
            untrusted: shell.untrusted_requests.clone(),
            root: root.to_path_buf(),
        }
    }

    /// Why the strict mode is in force, when it is.
    pub(super) fn strict_reason(&self) -> Option<&'static str> {
        match self.effective.mode {
            Mode::Contained => None,
            Mode::Strict(why) => Some(why.describe()),
        }
    }

    /// None when `name` (a program word as typed) may run; otherwise why not, naming the key
    /// that would change the answer.
    pub(super) fn refusal(&self, name: &str) -> Option<String> {
        if self.untrusted.iter().any(|n| n == name) {
            return Some(format!(
                "{name} is listed in the workspace's sneaky.toml, but a workspace may only tighten your configuration (to let it add commands, add its root to trusted_workspaces in your user configuration, ~/.config/sneaky/config.toml)"
            ));
        }
        let strict = match self.effective.mode {
            Mode::Contained => None,
            Mode::Strict(why) => Some(why.describe()),
        };
        let in_force = strict
            .map(|why| format!(" (the strict mode is in force: {why})"))
            .unwrap_or_default();
        if !self.in_workspace(name) {
            let base = name.rsplit('/').next().unwrap_or(name);
            match self.effective.denies(name) {
                Some(Origin::Default) => {
                    let why = match denied_reason(base) {
                        Some(reason) => format!("is on the built-in deny list: it {reason}"),
                        None => "is in the strict mode's denied list".to_string(),
                    };
                    return Some(format!(
                        "{name} {why}{in_force} (to let it run, add {base} to tools.shell.extra_allowed_commands or set tools.shell.denied_commands)"
                    ));
                }
                Some(_) => {
                    return Some(format!(
                        "{name} is in tools.shell.denied_commands (remove it there to allow it)"
                    ))
                }
                None => {}
            }
        }
        strict?;
        if self.effective.allowed_origin(name).is_some() {
            return None;
        }
        if name.contains('/') {
            return Some(format!(
                "{name}: a command given by path runs only when listed verbatim in tools.shell.allowed_commands or tools.shell.extra_allowed_commands, or when it lies in one of tools.shell.exec_workspace_dirs (what the build makes in the workspace: docs/sandbox.md){in_force}"
            ));
        }
        let which = if self.effective.allowed_replaced {
            "tools.shell.allowed_commands"
        } else {
            "the strict mode's allowed list"
        };
        Some(format!(
            "{name} is not in {which}{in_force} (to allow it, add it to tools.shell.extra_allowed_commands)"
        ))
    }

    /// Whether a program word is a path to a file of the workspace (relative, or absolute
    /// beneath the root, without `..`): told by its spelling, as the policy does no I/O. A
    /// link there that leads to an installed program is the kernel's to stop.
    fn in_workspace(&self, name: &str) -> bool {
        if !name.contains('/') {
            return false;
        }
        let path = Path::new(name);
        let rel = match path.strip_prefix(&self.root) {
            Ok(rel) => rel,
            Err(_) if path.is_absolute() => return false,
            Err(_) => path,
        };
        rel.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    }
}

/// Variables whose value, in a program's environment, does not change what it runs or
/// writes (for the effect: other upper-case names may, `LD_PRELOAD`, `PATH`, `GIT_DIR` …).
const HARMLESS_ENV: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "TERM",
    "COLUMNS",
    "LINES",
    "PAGER",
    "GIT_PAGER",
    "RUST_BACKTRACE",
    "RUST_LOG",
];

/// A shell variable (lower case), or an environment variable that does not change what a
/// program runs or writes.
pub(super) fn harmless_variable(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_lowercase())
        || HARMLESS_ENV.contains(&name)
        || name.starts_with("LC_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(config: &str) -> Lists {
        let config = crate::config::Config::parse(config, "t").expect("parse");
        Lists::from_config(&config.tools.shell, Path::new("/ws"))
    }

    #[test]
    fn a_denied_name_matches_installed_programs_not_workspace_files() {
        let l = lists("");
        assert_eq!(l.strict_reason(), None);
        for word in [
            "python3",
            "rm",
            ".venv/bin/python",
            "./sudo",
            "/ws/bin/docker",
        ] {
            assert_eq!(l.refusal(word), None, "{word}");
        }
        for word in [
            "sudo",
            "/usr/bin/sudo",
            "../../usr/bin/sudo",
            "/opt/x/bin/docker",
        ] {
            let m = l.refusal(word).unwrap_or_else(|| panic!("{word} ran"));
            assert!(
                m.contains("deny list") && m.contains("extra_allowed_commands"),
                "{m}"
            );
        }
    }

    #[test]
    fn the_strict_mode_refuses_what_it_did_and_says_why() {
        let l = lists("[tools.shell]\nsandbox = false\n");
        assert!(l
            .strict_reason()
            .is_some_and(|w| w.contains("sandbox = false")));
        let m = l.refusal("python3").expect("refused");
        assert!(
            m.contains("strict") && m.contains("tools.shell.sandbox = false"),
            "{m}"
        );
        let m = l.refusal("rm").expect("refused");
        assert!(m.contains("strict mode's denied list"), "{m}");
        let m = l.refusal(".venv/bin/python").expect("refused");
        assert!(m.contains("given by path") && !m.contains("denied"), "{m}");
        assert_eq!(l.refusal("ls"), None);
    }
}
