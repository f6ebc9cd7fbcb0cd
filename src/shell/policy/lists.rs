//! The lists the command checker consults: the configured allowed and denied lists (see
//! `config::commands`, where their semantics live) with the refusal message that names the key
//! to edit, and the fixed lists no configuration changes.

use crate::config::commands::{EffectiveLists, Origin};
use crate::config::Shell;

/// Shell builtins and keywords that run strings as code, define or redefine commands, or
/// change the shell's state in ways the policy cannot follow. Refused whatever the lists say.
#[rustfmt::skip]
pub const NEVER: &[&str] = &[
    "eval", "exec", "source", ".", "trap", "alias", "unalias", "enable", "builtin", "hash", "set",
    "shopt", "declare", "typeset", "export", "readonly", "local", "unset", "let", "read",
    "readarray", "mapfile", "coproc", "fc", "history", "bind", "complete", "compgen", "compopt",
    "pushd", "popd", "dirs", "ulimit", "umask", "getopts", "function", "select", "caller", "disown",
    "suspend", "logout",
];

/// Programs that run another program given on their command line in a way the policy does
/// not look through. Refused whatever the lists say.
#[rustfmt::skip]
pub const OPAQUE_WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "runuser", "pkexec", "chroot", "setsid", "ionice", "taskset", "chrt",
    "prlimit", "strace", "ltrace", "gdb", "watch", "flock", "unbuffer", "script", "parallel",
    "busybox", "firejail", "bwrap", "unshare", "nsenter", "systemd-run", "fakeroot", "faketime",
    "proot", "setpriv", "capsh", "expect", "sg", "newgrp",
];

/// Shells: accepted only as `sh -c 'literal script'` (the script checked in turn), and only
/// when the lists allow the shell.
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
}

impl Lists {
    pub(super) fn from_config(shell: &Shell) -> Lists {
        Lists {
            effective: EffectiveLists::from_config(shell),
            untrusted: shell.untrusted_requests.clone(),
        }
    }

    /// None when allowed; otherwise why not, naming the key that would change the answer.
    pub(super) fn refusal(&self, name: &str) -> Option<String> {
        if self.untrusted.iter().any(|n| n == name) {
            return Some(format!(
                "{name} is listed in the workspace's sneaky.toml, but a workspace may only tighten your configuration (to let it add commands, add its root to trusted_workspaces in your user configuration, ~/.config/sneaky/config.toml)"
            ));
        }
        match self.effective.denies(name) {
            Some(Origin::Default) => {
                return Some(format!(
                    "{name} is in the default denied list (to allow it, add it to tools.shell.extra_allowed_commands or set tools.shell.denied_commands)"
                ))
            }
            Some(_) => {
                return Some(format!(
                    "{name} is in tools.shell.denied_commands (remove it there to allow it)"
                ))
            }
            None => {}
        }
        if self.effective.allowed_origin(name).is_some() {
            return None;
        }
        if name.contains('/') {
            return Some(format!(
                "{name}: a command given by path runs only when listed verbatim in tools.shell.allowed_commands or tools.shell.extra_allowed_commands, or when it lies in one of tools.shell.exec_workspace_dirs (what the build makes in the workspace: docs/sandbox.md)"
            ));
        }
        let which = if self.effective.allowed_replaced {
            "tools.shell.allowed_commands"
        } else {
            "the default allowed list"
        };
        Some(format!(
            "{name} is not in {which} (to allow it, add it to tools.shell.extra_allowed_commands)"
        ))
    }
}
