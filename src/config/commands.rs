//! Which programs may run at all: the default lists, the configured ones, and where each
//! entry came from (for `sneaky-run --print-policy`, for the shell policy's refusals that name
//! the key to edit, and for merging an untrusted workspace's configuration).
//!
//! Semantics (documented in the README and the man page): `allowed_commands` replaces the
//! default allowed list, `extra_allowed_commands` adds to whichever allowed list is in force,
//! `denied_commands` replaces the default denied list. An entry in either allowed key overrides
//! the *default* denied list, never an explicit `denied_commands`. The allowed set is also what
//! the kernel lets execute (with each program's helpers), so it is transitive: a program that
//! is not allowed cannot run even when an allowed one starts it.

use super::Shell;

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
        self.allowed
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| self.denies(n).is_none())
            .collect()
    }

    /// Where `name`'s entry in the allowed list came from (None: not listed).
    pub fn allowed_origin(&self, name: &str) -> Option<Origin> {
        self.allowed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| *o)
    }

    /// Where the denied entry matching `name` (or its last path component) came from.
    pub fn denied_origin(&self, name: &str) -> Option<Origin> {
        let base = name.rsplit('/').next().unwrap_or(name);
        self.denied
            .iter()
            .find(|(n, _)| n == name || n == base)
            .map(|(_, o)| *o)
    }

    /// The denied list that overrules `name`, if one does: an explicit `denied_commands`
    /// always; the default denied list only when neither allowed key names it.
    pub fn denies(&self, name: &str) -> Option<Origin> {
        match (self.denied_origin(name), self.allowed_origin(name)) {
            (Some(Origin::Default), None | Some(Origin::Default)) => Some(Origin::Default),
            (Some(Origin::Default), Some(_)) | (None, _) => None,
            (Some(denied), _) => Some(denied),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowed_key_overrides_only_the_default_denied_list() {
        let shell = |allowed: Option<&[&str]>, extra: &[&str], denied: Option<&[&str]>| {
            let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            Shell {
                allowed_commands: allowed.map(list),
                extra_allowed_commands: list(extra),
                denied_commands: denied.map(list),
                ..Shell::default()
            }
        };
        let lists = EffectiveLists::from_config(&shell(None, &["rm"], None));
        assert_eq!(lists.denies("rm"), None);
        assert_eq!(lists.denies("curl"), Some(Origin::Default));
        assert_eq!(lists.denies("/usr/bin/curl"), Some(Origin::Default));
        assert!(lists.runnable().contains(&"rm"));
        let lists = EffectiveLists::from_config(&shell(Some(&["rm", "ls"]), &[], Some(&["rm"])));
        assert_eq!(lists.denies("rm"), Some(Origin::DeniedCommands));
        assert_eq!(lists.runnable(), vec!["ls"]);
        assert_eq!(lists.allowed_origin("ls"), Some(Origin::AllowedCommands));
    }
}
