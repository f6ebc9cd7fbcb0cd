//! Which programs may run at all: the default lists, the configured ones, and where each
//! entry came from (for `sneaky-run --print-policy` and for refusals that name the key to edit).
//!
//! Semantics (documented in the README and the man page): `allowed_commands` replaces the
//! default allowed list, `extra_allowed_commands` adds to whichever allowed list is in force,
//! `denied_commands` replaces the default denied list. An entry in either allowed key overrides
//! the *default* denied list, never an explicit `denied_commands`. The allowed set is also what
//! the kernel lets execute (with each program's helpers), so it is transitive: a program that
//! is not allowed cannot run even when an allowed one starts it.

use crate::config::Shell;

/// Programs allowed when `tools.shell.allowed_commands` is not set: read-only inspection,
/// text tools, and the common build tools (which run the project's own code by design; the
/// sandbox keeps their writes inside the root).
#[rustfmt::skip]
pub const DEFAULT_ALLOWED: &[&str] = &[
    // inspection and text
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "fd", "fdfind",
    "tree", "file", "stat", "du", "df", "sort", "uniq", "cut", "tr", "diff", "cmp", "comm", "nl",
    "tac", "rev", "paste", "join", "column", "fold", "fmt", "expand", "unexpand", "seq", "basename",
    "dirname", "realpath", "readlink", "pwd", "echo", "printf", "true", "false", "test", "[",
    "exit", ":", "which", "type", "whoami", "id", "uname", "date", "sleep", "yes", "jq",
    "sha256sum", "sha1sum", "md5sum", "cksum", "xxd", "od", "hexdump", "strings", "sed",
    // workspace file changes (kept inside the root by the sandbox)
    "mkdir", "touch", "cp", "mv", "tee",
    // wrappers the policy looks through
    "timeout", "nice", "nohup", "stdbuf", "time", "env", "xargs", "command", "cd",
    // version control and build tools
    "git", "cargo", "rustc", "rustfmt", "make", "go", "gofmt",
];

/// Programs refused when `tools.shell.denied_commands` is not set (an explicit entry in
/// `allowed_commands` overrides this default list, never an explicit denied list).
#[rustfmt::skip]
pub const DEFAULT_DENIED: &[&str] = &[
    "rm", "rmdir", "shred", "dd", "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "fdisk", "parted",
    "mount", "umount", "swapon", "swapoff", "shutdown", "reboot", "halt", "poweroff", "init",
    "systemctl", "service", "sudo", "su", "doas", "pkexec", "chown", "chgrp", "chmod", "chattr",
    "passwd", "useradd", "userdel", "usermod", "crontab", "at", "kill", "pkill", "killall", "sh",
    "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "curl", "wget", "nc", "ncat",
    "netcat", "socat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "git-shell", "python",
    "python3", "perl", "ruby", "node", "awk", "gawk", "mawk", "nawk",
];

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

/// Where an entry of the effective lists came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Default,
    AllowedCommands,
    ExtraAllowedCommands,
    DeniedCommands,
}

impl Origin {
    /// The configuration key (or the default list) as people read it.
    pub fn describe(self) -> &'static str {
        match self {
            Origin::Default => "default",
            Origin::AllowedCommands => "tools.shell.allowed_commands",
            Origin::ExtraAllowedCommands => "tools.shell.extra_allowed_commands",
            Origin::DeniedCommands => "tools.shell.denied_commands",
        }
    }
}

/// The effective allowed and denied lists, each entry with its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveLists {
    /// `allowed_commands` is set: the default allowed list is not in force.
    pub allowed_replaced: bool,
    pub allowed: Vec<(String, Origin)>,
    pub denied: Vec<(String, Origin)>,
}

impl EffectiveLists {
    pub fn from_config(shell: &Shell) -> EffectiveLists {
        let tag = |list: &[String], origin: Origin| {
            list.iter().map(|s| (s.clone(), origin)).collect::<Vec<_>>()
        };
        let defaults = |list: &[&str]| {
            list.iter()
                .map(|s| (s.to_string(), Origin::Default))
                .collect::<Vec<_>>()
        };
        let mut allowed = match &shell.allowed_commands {
            Some(list) => tag(list, Origin::AllowedCommands),
            None => defaults(DEFAULT_ALLOWED),
        };
        for extra in &shell.extra_allowed_commands {
            if !allowed.iter().any(|(n, _)| n == extra) {
                allowed.push((extra.clone(), Origin::ExtraAllowedCommands));
            }
        }
        let denied = match &shell.denied_commands {
            Some(list) => tag(list, Origin::DeniedCommands),
            None => defaults(DEFAULT_DENIED),
        };
        EffectiveLists {
            allowed_replaced: shell.allowed_commands.is_some(),
            allowed,
            denied,
        }
    }

    /// The programs that may run: allowed and not overruled by the denied list.
    pub fn runnable(&self) -> Vec<&str> {
        let lists = Lists {
            effective: self.clone(),
            untrusted: Vec::new(),
        };
        self.allowed
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| lists.refusal(n).is_none())
            .collect()
    }
}

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

    fn allowed_origin(&self, name: &str) -> Option<Origin> {
        self.effective
            .allowed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| *o)
    }

    fn denied_origin(&self, name: &str) -> Option<Origin> {
        let base = name.rsplit('/').next().unwrap_or(name);
        self.effective
            .denied
            .iter()
            .find(|(n, _)| n == name || n == base)
            .map(|(_, o)| *o)
    }

    /// None when allowed; otherwise why not, naming the key that would change the answer.
    pub(super) fn refusal(&self, name: &str) -> Option<String> {
        if self.untrusted.iter().any(|n| n == name) {
            return Some(format!(
                "{name} is listed in the workspace's sneaky.toml, but a workspace may only tighten your configuration (to let it add commands, add its root to trusted_workspaces in your user configuration, ~/.config/sneaky/config.toml)"
            ));
        }
        let allowed = self.allowed_origin(name);
        match (self.denied_origin(name), allowed) {
            (Some(Origin::Default), None | Some(Origin::Default)) => {
                return Some(format!(
                    "{name} is in the default denied list (to allow it, add it to tools.shell.extra_allowed_commands or set tools.shell.denied_commands)"
                ))
            }
            (Some(Origin::Default), Some(_)) | (None, _) => {}
            (Some(_), _) => {
                return Some(format!(
                    "{name} is in tools.shell.denied_commands (remove it there to allow it)"
                ))
            }
        }
        if allowed.is_some() {
            return None;
        }
        if name.contains('/') {
            return Some(format!(
                "{name}: a command given by path runs only when listed verbatim in tools.shell.allowed_commands or tools.shell.extra_allowed_commands"
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
