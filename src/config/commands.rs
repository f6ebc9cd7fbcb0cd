//! Which programs may run: the mode in force, the built-in lists, the configured ones, and
//! where each entry came from (for `sneaky-run --print-policy`, for the shell policy's
//! refusals that name the key to edit, for the kernel's exec set, and for merging an untrusted
//! workspace's configuration). docs/sandbox.md, "Which programs may run", is the user's
//! account of the same rules.
//!
//! Two modes:
//!
//! - **Contained** (the default, with every sandbox layer in force): a program's effect is
//!   bounded by the kernel, not by its name, so every program runs except the deny list
//!   ([`DEFAULT_DENIED`], or `denied_commands`): programs that escalate or act past the
//!   sandbox. A denied entry names installed programs (by name, and by their path outside the
//!   workspace); a copy in the workspace runs contained like any other file.
//!   `extra_allowed_commands` lifts an entry of the built-in deny list.
//! - **Strict**: only the allowed list runs ([`STRICT_ALLOWED`], replaced by
//!   `allowed_commands`, added to by `extra_allowed_commands`), [`STRICT_DENIED`] is refused
//!   too, and the kernel lets only the allowed programs and their helpers execute. Chosen by
//!   `strict = true` or by setting `allowed_commands` (an allow list), and it is what applies
//!   whenever a layer may not be in force ([`mode`]). The command policy then also reads only
//!   what it can read exactly, except under an allow list with every layer in force, where it
//!   reads the whole language ([`Mode::whole_language`]).
//!
//! An entry in either allowed key overrides the *default* denied list, never an explicit
//! `denied_commands`.

use super::Shell;

/// Programs the strict mode allows when `tools.shell.allowed_commands` is not set: read-only
/// inspection, text tools, and the common build tools (which run the project's own code by
/// design; the sandbox keeps their writes inside the root).
#[rustfmt::skip]
pub const STRICT_ALLOWED: &[&str] = &[
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

/// Why a program is on the built-in deny list: it gains privilege, or it drives something
/// that acts outside the sandbox. Under every layer each of these fails anyway (nosuid mounts
/// and no_new_privs; the daemons' sockets covered, the network off): the list makes the
/// refusal say why before anything runs, and keeps them out when a door is opened
/// (`unix_sockets`, `network`).
const ESCALATES: &str =
    "runs a command as another user or group: a privilege the sandbox never grants (nosuid, no_new_privs)";
const CONTAINERS: &str =
    "drives a container engine or cluster, whose daemon acts outside the sandbox";
const MACHINES: &str = "drives virtual machines through a service that acts outside the sandbox";
const SERVICES: &str = "asks the system's service manager to act on the host, outside the sandbox";

/// The built-in deny list, in force in both modes unless `tools.shell.denied_commands`
/// replaces it: each entry with its reason.
#[rustfmt::skip]
pub const DEFAULT_DENIED: &[(&str, &str)] = &[
    ("sudo", ESCALATES), ("su", ESCALATES), ("doas", ESCALATES), ("pkexec", ESCALATES),
    ("run0", ESCALATES), ("runuser", ESCALATES), ("sg", ESCALATES), ("newgrp", ESCALATES),
    ("docker", CONTAINERS), ("podman", CONTAINERS), ("nerdctl", CONTAINERS),
    ("buildah", CONTAINERS), ("ctr", CONTAINERS), ("crictl", CONTAINERS),
    ("kubectl", CONTAINERS), ("oc", CONTAINERS), ("helm", CONTAINERS), ("lxc", CONTAINERS),
    ("incus", CONTAINERS),
    ("virsh", MACHINES), ("virt-install", MACHINES), ("VBoxManage", MACHINES),
    ("vagrant", MACHINES), ("multipass", MACHINES),
    ("systemctl", SERVICES), ("systemd-run", SERVICES), ("service", SERVICES),
    ("shutdown", SERVICES), ("reboot", SERVICES), ("halt", SERVICES), ("poweroff", SERVICES),
];

/// Refused too in strict mode (with [`DEFAULT_DENIED`]) when `denied_commands` is not set:
/// programs that delete, change permissions, signal, reach the network or run code the
/// allowed list does not name.
#[rustfmt::skip]
pub const STRICT_DENIED: &[&str] = &[
    "rm", "rmdir", "shred", "dd", "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "fdisk", "parted",
    "mount", "umount", "swapon", "swapoff", "init", "chown", "chgrp", "chmod", "chattr", "passwd",
    "useradd", "userdel", "usermod", "crontab", "at", "kill", "pkill", "killall", "sh", "bash",
    "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "curl", "wget", "nc", "ncat", "netcat",
    "socat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "git-shell", "python", "python3",
    "perl", "ruby", "node", "awk", "gawk", "mawk", "nawk",
];

/// The layers that contain a program whatever it is: with each of them required (the
/// default), a command runs only where all are in force.
pub const CONTAINING_LAYERS: &[&str] = &["landlock", "namespaces", "seccomp", "pids", "proc"];

/// Which programs may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every layer is in force: any program but the deny list.
    Contained,
    /// Only the allowed list, and why this mode applies.
    Strict(Strictness),
}

/// Why the strict mode applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// `tools.shell.strict = true`.
    Configured,
    /// `tools.shell.allowed_commands` is set.
    AllowList,
    /// `tools.shell.sandbox = false`.
    SandboxOff,
    /// `tools.shell.container_boundary` without a `require_layers` that names every layer.
    ContainerBoundary,
    /// `tools.shell.require_layers` leaves a containing layer out.
    Layers,
}

impl Mode {
    pub fn is_strict(self) -> bool {
        matches!(self, Mode::Strict(_))
    }

    /// The command policy reads the whole bash language (src/shell/policy): every layer is in
    /// force and the strict mode was not chosen. An allow list keeps it: the kernel's exec set
    /// holds the list for the programs the parser cannot see.
    pub fn whole_language(self) -> bool {
        matches!(self, Mode::Contained | Mode::Strict(Strictness::AllowList))
    }

    /// The mode in words, for the result's `sandbox` field, `--print-policy` and refusals.
    pub fn describe(self) -> String {
        match self {
            Mode::Contained => "contained (any program but the deny list)".into(),
            Mode::Strict(why) => format!("strict ({})", why.describe()),
        }
    }
}

impl Strictness {
    pub fn describe(self) -> &'static str {
        match self {
            Strictness::Configured => "tools.shell.strict = true",
            Strictness::AllowList => "tools.shell.allowed_commands is set: an allow list",
            Strictness::SandboxOff => "tools.shell.sandbox = false: no layer contains the command",
            Strictness::ContainerBoundary => {
                "tools.shell.container_boundary: a layer may not be in force"
            }
            Strictness::Layers => {
                "tools.shell.require_layers leaves a layer out, so it may not be in force"
            }
        }
    }
}

/// The mode in force for this configuration. It is known before anything runs: a command
/// runs only with every layer `require_layers` names in force, so when it names every
/// containing layer (the default), every one is in force whenever a command runs at all.
pub fn mode(shell: &Shell) -> Mode {
    if shell.strict {
        return Mode::Strict(Strictness::Configured);
    }
    if !shell.sandbox {
        return Mode::Strict(Strictness::SandboxOff);
    }
    let (required, _) = shell.required_layers();
    let all = required.iter().any(|l| l == "all")
        || CONTAINING_LAYERS
            .iter()
            .all(|l| required.iter().any(|r| r == l));
    match all {
        false if shell.container_boundary => Mode::Strict(Strictness::ContainerBoundary),
        false => Mode::Strict(Strictness::Layers),
        true if shell.allowed_commands.is_some() => Mode::Strict(Strictness::AllowList),
        true => Mode::Contained,
    }
}

/// The reason a built-in deny list entry gives, if `name` is one.
pub fn denied_reason(name: &str) -> Option<&'static str> {
    DEFAULT_DENIED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why)
}

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
    pub mode: Mode,
    /// `allowed_commands` is set: the default allowed list is not in force.
    pub allowed_replaced: bool,
    /// Strict mode: the programs that may run. Contained mode: the entries of
    /// `extra_allowed_commands`, which lift entries of the built-in deny list.
    pub allowed: Vec<(String, Origin)>,
    pub denied: Vec<(String, Origin)>,
}

impl EffectiveLists {
    pub fn from_config(shell: &Shell) -> EffectiveLists {
        EffectiveLists::in_mode(shell, mode(shell))
    }

    /// The lists `shell` gives in `mode` (an untrusted workspace's strict configuration is
    /// merged with the user's lists as the strict mode reads them).
    pub fn in_mode(shell: &Shell, mode: Mode) -> EffectiveLists {
        let tag = |list: &[String], origin: Origin| {
            list.iter().map(|s| (s.clone(), origin)).collect::<Vec<_>>()
        };
        let defaults = |list: &mut dyn Iterator<Item = &str>| {
            list.map(|s| (s.to_string(), Origin::Default))
                .collect::<Vec<_>>()
        };
        let mut allowed = match (&shell.allowed_commands, mode) {
            (_, Mode::Contained) => Vec::new(),
            (Some(list), _) => tag(list, Origin::AllowedCommands),
            (None, _) => defaults(&mut STRICT_ALLOWED.iter().copied()),
        };
        for extra in &shell.extra_allowed_commands {
            if !allowed.iter().any(|(n, _)| n == extra) {
                allowed.push((extra.clone(), Origin::ExtraAllowedCommands));
            }
        }
        let denied = match (&shell.denied_commands, mode) {
            (Some(list), _) => tag(list, Origin::DeniedCommands),
            (None, Mode::Contained) => defaults(&mut DEFAULT_DENIED.iter().map(|(n, _)| *n)),
            (None, Mode::Strict(_)) => defaults(
                &mut DEFAULT_DENIED
                    .iter()
                    .map(|(n, _)| *n)
                    .chain(STRICT_DENIED.iter().copied()),
            ),
        };
        EffectiveLists {
            mode,
            allowed_replaced: shell.allowed_commands.is_some(),
            allowed,
            denied,
        }
    }

    /// Strict mode: the programs that may run (allowed and not overruled by the denied
    /// list). Contained mode has no such list: everything not denied runs.
    pub fn runnable(&self) -> Vec<&str> {
        if !self.mode.is_strict() {
            return Vec::new();
        }
        self.allowed
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| self.denies(n).is_none())
            .collect()
    }

    /// Whether `name` may run as far as the lists go (the mode's question).
    pub fn permits(&self, name: &str) -> bool {
        self.denies(name).is_none()
            && (!self.mode.is_strict() || self.allowed_origin(name).is_some())
    }

    /// Where `name`'s entry in the allowed list came from (None: not listed).
    pub fn allowed_origin(&self, name: &str) -> Option<Origin> {
        self.allowed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| *o)
    }

    /// Where the denied entry matching `name` (the entry itself, or a path whose last
    /// component it is) came from. Whether such a path is an installed program or a file of
    /// the workspace is the caller's question (src/shell/policy/lists.rs).
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

    /// The denied entries that are names (not paths) and still deny: what the kernel covers
    /// where it finds them installed.
    pub fn denied_names(&self) -> impl Iterator<Item = &str> {
        self.denied
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| self.denies(n).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(allowed: Option<&[&str]>, extra: &[&str], denied: Option<&[&str]>) -> Shell {
        let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Shell {
            allowed_commands: allowed.map(list),
            extra_allowed_commands: list(extra),
            denied_commands: denied.map(list),
            ..Shell::default()
        }
    }

    #[test]
    fn an_allowed_key_overrides_only_the_default_denied_list() {
        let lists = EffectiveLists::from_config(&Shell {
            strict: true,
            ..shell(None, &["rm"], None)
        });
        assert_eq!(lists.denies("rm"), None);
        assert_eq!(lists.denies("curl"), Some(Origin::Default));
        assert_eq!(lists.denies("/usr/bin/curl"), Some(Origin::Default));
        assert!(lists.runnable().contains(&"rm"));
        let lists = EffectiveLists::from_config(&shell(Some(&["rm", "ls"]), &[], Some(&["rm"])));
        assert_eq!(lists.denies("rm"), Some(Origin::DeniedCommands));
        assert_eq!(lists.runnable(), vec!["ls"]);
        assert_eq!(lists.allowed_origin("ls"), Some(Origin::AllowedCommands));
    }

    #[test]
    fn contained_mode_runs_everything_but_the_deny_list() {
        let lists = EffectiveLists::from_config(&Shell::default());
        assert_eq!(lists.mode, Mode::Contained);
        for name in ["python3", "rm", "curl", "npm", "bash", "./script.sh"] {
            assert!(lists.permits(name), "{name}");
        }
        for name in ["sudo", "docker", "/usr/bin/sudo"] {
            assert!(!lists.permits(name), "{name}");
        }
        // extra_allowed_commands lifts a built-in entry; denied_commands replaces the list.
        let lists = EffectiveLists::from_config(&shell(None, &["docker"], None));
        assert!(lists.permits("docker") && !lists.permits("podman"));
        assert!(!lists.denied_names().any(|n| n == "docker"));
        let lists = EffectiveLists::from_config(&shell(None, &["rm"], Some(&["rm", "sudo"])));
        assert_eq!(lists.mode, Mode::Contained);
        assert!(!lists.permits("rm") && lists.permits("docker"));
    }

    #[test]
    fn strict_mode_whenever_a_layer_may_be_missing() {
        let strict = |s: Shell| mode(&s);
        assert_eq!(strict(Shell::default()), Mode::Contained);
        let cases = [
            (
                Shell {
                    strict: true,
                    ..Shell::default()
                },
                Strictness::Configured,
            ),
            (shell(Some(&["ls"]), &[], None), Strictness::AllowList),
            (
                Shell {
                    sandbox: false,
                    ..Shell::default()
                },
                Strictness::SandboxOff,
            ),
            (
                Shell {
                    container_boundary: true,
                    ..Shell::default()
                },
                Strictness::ContainerBoundary,
            ),
            (
                Shell {
                    require_layers: Some(vec!["landlock".into(), "namespaces".into()]),
                    ..Shell::default()
                },
                Strictness::Layers,
            ),
            (
                Shell {
                    require_layers: Some(Vec::new()),
                    ..Shell::default()
                },
                Strictness::Layers,
            ),
        ];
        for (s, why) in cases {
            assert_eq!(strict(s), Mode::Strict(why));
        }
        let every = CONTAINING_LAYERS.iter().map(|l| l.to_string()).collect();
        for list in [vec!["all".to_string()], every] {
            let s = Shell {
                require_layers: Some(list),
                container_boundary: true,
                ..Shell::default()
            };
            assert_eq!(strict(s), Mode::Contained);
        }
        // The strict lists are today's: the interpreters and rm refused, ls allowed.
        let lists = EffectiveLists::from_config(&Shell {
            sandbox: false,
            ..Shell::default()
        });
        assert!(!lists.permits("python3") && !lists.permits("rm") && !lists.permits("npm"));
        assert!(lists.permits("ls") && !lists.permits("sudo"));
    }
}
