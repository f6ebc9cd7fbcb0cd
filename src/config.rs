//! Finding and reading the TOML configuration (docs/contract.md, "Configuration").
//!
//! Search order, first found wins: `--config FILE`, `SNEAKY_CONFIG`, `<root>/sneaky.toml`,
//! `$XDG_CONFIG_HOME/sneaky/config.toml` (else `~/.config/sneaky/config.toml`). A file named
//! explicitly must exist; the others are optional. Unknown keys are errors that name the key,
//! and a broken file is always reported, never silently ignored. The search costs a few
//! `stat`s: it runs on every tool call.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::catalog::ToolName;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};
use commands::EffectiveLists;

pub mod commands;
mod document;
pub mod network;

pub use network::Network;

pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;
pub const DEFAULT_MAX_OUTPUT: u64 = 64 * 1024;
pub const DEFAULT_TIMEOUT: u64 = 30;
/// Upper bound for any command timeout, whatever the config or the call asks.
pub const MAX_TIMEOUT: u64 = 3600;
/// Default RLIMIT_NPROC of commands (a build runs a few hundred at most).
pub const DEFAULT_MAX_PROCESSES: u64 = 1024;
/// Default RLIMIT_FSIZE of commands: no single file larger than 16 GiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 16 << 30;
/// The sandbox layers `tools.shell.require_layers` may name.
pub const LAYERS: &[&str] = &[
    "landlock",
    "namespaces",
    "seccomp",
    "pids",
    "proc",
    "overlay",
    "all",
];
/// Tool calls sneaky-mcp runs at the same time unless `[mcp] workers` says otherwise.
pub const DEFAULT_MCP_WORKERS: usize = 8;
pub const MAX_MCP_WORKERS: usize = 256;
/// Default `mcp.resume_seconds`: how long an ended event stream of `sneaky-mcp --http` can be
/// resumed.
pub const DEFAULT_RESUME_SECONDS: u64 = 60;
pub const MAX_RESUME_SECONDS: u64 = 3600;
/// Default `mcp.resume_session_bytes`: what one HTTP session's event streams keep for
/// resumption, at most.
pub const DEFAULT_RESUME_SESSION_BYTES: u64 = 2 << 20;
/// Default `mcp.resume_total_bytes`: what every session's event streams keep together, at most
/// (a small container's server stays well under 128 MiB with it).
pub const DEFAULT_RESUME_TOTAL_BYTES: u64 = 16 << 20;
/// A config file larger than this is refused (it is certainly not a config).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// read_file / write_file limit, in bytes.
    pub max_file_size_bytes: u64,
    /// run_command output cap, in bytes, per stream.
    pub max_output_bytes: u64,
    /// The workspace when neither --root nor SNEAKY_ROOT is given (the seed's key); read from
    /// the user's configuration (`discover`), relative to the file's directory.
    pub workspace_root: Option<PathBuf>,
    pub permissions: Permissions,
    pub tools: Tools,
    /// Workspace roots whose own `sneaky.toml` may loosen this configuration (only read from
    /// the user's configuration; a workspace cannot trust itself).
    pub trusted_workspaces: Vec<PathBuf>,
    /// Let the file tools and commands change `.git` (config, hooks …). Off by default:
    /// planted hooks and config keys run programs.
    pub allow_vcs_writes: bool,
    pub mcp: Mcp,
    pub undo: Undo,
    /// Paths no tool and no command reads (globs: `~/…`, absolute, or relative to the
    /// root); None: the built-in list of credential stores (src/fs/pathlist.rs).
    pub deny_read: Option<Vec<String>>,
    /// Added to the read-deny list in force.
    pub extra_deny_read: Vec<String>,
    /// Workspace paths no tool and no command writes (globs relative to the root); None:
    /// the built-in list of files that run code when the project is opened.
    pub protected_paths: Option<Vec<String>>,
    /// Added to the protected paths in force.
    pub extra_protected_paths: Vec<String>,
    /// `[hooks]`: the user's programs around every tool call (src/hooks). Only from the
    /// user's own configuration: a workspace's `sneaky.toml` that names hooks is not obeyed.
    pub hooks: crate::hooks::Hooks,
}

/// `[undo]`: the history of changes kept for `undo` (`fs::history`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Undo {
    /// Bytes the history of one workspace may take (entries and the contents they keep);
    /// past it the oldest changes are forgotten.
    pub max_bytes: u64,
}

/// Default `tools.shell.max_job_seconds`: a background job's lease.
pub const DEFAULT_MAX_JOB_SECONDS: u64 = 3600;

/// Default `tools.shell.yield_after_seconds`: over MCP, how long a command runs in the
/// foreground before it goes on as a background job (below the hosts' usual limits on a call).
pub const DEFAULT_YIELD_AFTER_SECONDS: u64 = 50;

/// Default `undo.max_bytes`.
pub const DEFAULT_UNDO_MAX_BYTES: u64 = 256 << 20;

impl Default for Undo {
    fn default() -> Self {
        Undo {
            max_bytes: DEFAULT_UNDO_MAX_BYTES,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Permissions {
    pub deny: Vec<ToolName>,
    pub allow: Vec<ToolName>,
    pub confirm: Vec<ToolName>,
}

/// `[mcp]`: the MCP server (sneaky-mcp).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Mcp {
    /// Tool calls run at the same time (the rest wait their turn); 1 to MAX_MCP_WORKERS.
    pub workers: usize,
    /// Over HTTP: seconds an ended event stream stays resumable (0 to MAX_RESUME_SECONDS).
    pub resume_seconds: u64,
    /// Over HTTP: bytes of events one session keeps for resumption; past it its oldest go.
    pub resume_session_bytes: u64,
    /// Over HTTP: bytes of events all sessions keep for resumption together; past it the
    /// oldest go, whichever session they belong to.
    pub resume_total_bytes: u64,
}

impl Default for Mcp {
    fn default() -> Self {
        Mcp {
            workers: DEFAULT_MCP_WORKERS,
            resume_seconds: DEFAULT_RESUME_SECONDS,
            resume_session_bytes: DEFAULT_RESUME_SESSION_BYTES,
            resume_total_bytes: DEFAULT_RESUME_TOTAL_BYTES,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Tools {
    pub shell: Shell,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Shell {
    /// The strict mode: only the allowed list runs, and the kernel lets only those programs
    /// (with their helpers) execute. Off by default: with every layer in force, any program
    /// but the deny list runs (src/config/commands.rs, `mode`).
    pub strict: bool,
    /// An allow list: the programs run_command may run (setting it chooses the strict mode);
    /// None means the strict mode's built-in list. The kernel lets only these execute (with
    /// each program's helpers): transitive.
    pub allowed_commands: Option<Vec<String>>,
    /// Strict mode: programs added to the allowed list in force. Contained mode: entries of
    /// the built-in deny list let run.
    pub extra_allowed_commands: Vec<String>,
    /// Programs run_command refuses; None means the built-in deny list (and in strict mode
    /// the strict one).
    pub denied_commands: Option<Vec<String>>,
    pub default_timeout: u64,
    /// Restrict commands with Landlock where the kernel supports it.
    pub sandbox: bool,
    /// What commands may reach: false (the default: a network namespace of their own,
    /// seccomp refuses the socket families), true, or a list of hosts reached through the
    /// sandbox's proxy (src/config/network.rs).
    pub network: Network,
    /// Named host lists that `network` entries name as `@name`.
    pub host_lists: network::HostLists,
    /// Environment variables passed to commands even though their names look like secrets.
    pub pass_env: Vec<String>,
    /// Where sandboxed commands may read and execute (None: everywhere). The root and the
    /// command's private temporary directory are always readable.
    pub read_paths: Option<Vec<String>>,
    /// Extra places sandboxed commands may write, besides the root, a private temporary
    /// directory and /dev/null (e.g. a shared build cache). Absolute paths.
    pub write_paths: Vec<String>,
    /// Extra files or directories whose programs may execute (helpers an allowed program
    /// runs that the built-in helper table does not know). Absolute paths.
    pub exec_paths: Vec<String>,
    /// Workspace directories (relative to the root; "." for all of it) whose files may
    /// execute, and whose programs the policy accepts by path (`./hello`, `build/app`): what
    /// the build makes there. Opt-in: a command can then run any program it writes there.
    pub exec_workspace_dirs: Vec<String>,
    /// Unix sockets outside the workspace that commands may connect to (absolute paths; e.g.
    /// an SSH agent's). Every other pathname socket of the host is covered in the command's
    /// mount view.
    pub unix_sockets: Vec<String>,
    /// Sandbox layers that must be in force, else nothing runs: any of "landlock",
    /// "namespaces", "seccomp", "pids" (the process limit holds: a pids cgroup, or
    /// RLIMIT_NPROC for a user other than root), "proc" (the PID namespace's own /proc, which
    /// a container's masked /proc paths can refuse), "overlay" (a command's changes are held and
    /// recorded: src/shell/overlay/; required only when named, or by an "all" given), or
    /// "all". Empty: run with what the kernel offers, and say so. Unset: every layer but the
    /// overlay ([`Shell::required_layers`]).
    pub require_layers: Option<Vec<String>>,
    /// The container this runs in is the boundary: a missing layer does not refuse the
    /// command (the result's `sandbox` says so). Only from the user's own configuration.
    pub container_boundary: bool,
    /// rlimits of every command process: processes (RLIMIT_NPROC, and the call's pids cgroup's
    /// pids.max where one can be made: see src/shell/cgroup.rs), the largest file it may write, CPU seconds per process.
    pub max_processes: u64,
    pub max_file_bytes: u64,
    pub max_cpu_seconds: u64,
    /// Seconds a background job may run before it is ended (its lease).
    pub max_job_seconds: u64,
    /// Over MCP (sneaky-mcp sets `SNEAKY_YIELD`): a call whose timeout is longer than this
    /// many seconds, still running after them, returns and goes on as a background job, ended
    /// at the call's timeout; from a shell a command always runs in the foreground.
    pub yield_after_seconds: u64,
    /// Programs a workspace `sneaky.toml` asked for that were dropped because the workspace
    /// is not trusted (not read from TOML; for messages).
    #[serde(skip)]
    pub untrusted_requests: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_file_size_bytes: DEFAULT_MAX_FILE_SIZE,
            max_output_bytes: DEFAULT_MAX_OUTPUT,
            workspace_root: None,
            permissions: Permissions::default(),
            tools: Tools::default(),
            trusted_workspaces: Vec::new(),
            allow_vcs_writes: false,
            mcp: Mcp::default(),
            undo: Undo::default(),
            deny_read: None,
            extra_deny_read: Vec::new(),
            protected_paths: None,
            extra_protected_paths: Vec::new(),
            hooks: crate::hooks::Hooks::default(),
        }
    }
}

impl Default for Shell {
    fn default() -> Self {
        Shell {
            strict: false,
            allowed_commands: None,
            extra_allowed_commands: Vec::new(),
            denied_commands: None,
            default_timeout: DEFAULT_TIMEOUT,
            sandbox: true,
            network: Network::Off,
            host_lists: network::HostLists::new(),
            pass_env: Vec::new(),
            read_paths: None,
            write_paths: Vec::new(),
            exec_paths: Vec::new(),
            exec_workspace_dirs: Vec::new(),
            unix_sockets: Vec::new(),
            require_layers: None,
            container_boundary: false,
            max_processes: DEFAULT_MAX_PROCESSES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_cpu_seconds: MAX_TIMEOUT,
            max_job_seconds: DEFAULT_MAX_JOB_SECONDS,
            yield_after_seconds: DEFAULT_YIELD_AFTER_SECONDS,
            untrusted_requests: Vec::new(),
        }
    }
}

/// Where the active configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Defaults,
    File(PathBuf),
}

impl Config {
    /// Parse TOML text; `origin` names the file in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Config> {
        let config: Config = document::read(text).map_err(|text| {
            let hint = if text.contains("unknown field `workspace_root`") {
                "\n(workspace_root is a top-level key: put it above the first [section])"
            } else {
                ""
            };
            Error::new(
                ErrorKind::ConfigError,
                format!("{origin}: {}{hint}", text.trim_end()),
            )
        })?;
        let mut config = config;
        let shell = &mut config.tools.shell;
        shell.network.resolve(&shell.host_lists);
        config.validate(origin)?;
        Ok(config)
    }

    fn validate(&self, origin: &str) -> Result<()> {
        let bad = |msg: String| {
            Err(Error::new(
                ErrorKind::ConfigError,
                format!("{origin}: {msg}"),
            ))
        };
        if self.max_file_size_bytes == 0 {
            return bad("max_file_size_bytes must be at least 1".into());
        }
        if self.max_output_bytes == 0 {
            return bad("max_output_bytes must be at least 1".into());
        }
        let timeout = self.tools.shell.default_timeout;
        if timeout == 0 || timeout > MAX_TIMEOUT {
            return bad(format!(
                "tools.shell.default_timeout must be between 1 and {MAX_TIMEOUT} seconds"
            ));
        }
        if self.mcp.workers == 0 || self.mcp.workers > MAX_MCP_WORKERS {
            return bad(format!(
                "mcp.workers must be between 1 and {MAX_MCP_WORKERS}"
            ));
        }
        if self.mcp.resume_seconds > MAX_RESUME_SECONDS {
            return bad(format!(
                "mcp.resume_seconds must be between 0 and {MAX_RESUME_SECONDS}"
            ));
        }
        for (key, list, inside) in [
            (
                "deny_read",
                self.deny_read.as_deref().unwrap_or_default(),
                false,
            ),
            ("extra_deny_read", &self.extra_deny_read[..], false),
            (
                "protected_paths",
                self.protected_paths.as_deref().unwrap_or_default(),
                true,
            ),
            (
                "extra_protected_paths",
                &self.extra_protected_paths[..],
                true,
            ),
        ] {
            if let Err(m) = crate::fs::pathlist::validate(key, list, inside) {
                return bad(m);
            }
        }
        if let Err(m) = self.hooks.validate(MAX_TIMEOUT) {
            return bad(m);
        }
        self.tools.shell.validate(origin)
    }

    /// The read-deny list in force: `deny_read` (or the built-in list), `extra_deny_read`,
    /// and the token file of the `sneaky-mcp` that started this tool, if it has one.
    pub fn deny_read_list(&self) -> Vec<String> {
        use crate::fs::pathlist::{DEFAULT_DENY_READ, MCP_TOKEN_FILE_ENV};
        let mut list: Vec<String> = match &self.deny_read {
            Some(l) => l.clone(),
            None => DEFAULT_DENY_READ.iter().map(|s| s.to_string()).collect(),
        };
        list.extend(self.extra_deny_read.iter().cloned());
        if let Some(token) = std::env::var_os(MCP_TOKEN_FILE_ENV)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
        {
            list.push(token.to_string_lossy().into_owned());
        }
        list
    }

    /// The protected paths in force: `protected_paths` (or the built-in list) and
    /// `extra_protected_paths`.
    pub fn protected_list(&self) -> Vec<String> {
        let mut list: Vec<String> = match &self.protected_paths {
            Some(l) => l.clone(),
            None => crate::fs::pathlist::DEFAULT_PROTECTED
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        list.extend(self.extra_protected_paths.iter().cloned());
        list
    }

    /// Find and load the configuration for a workspace. Marks the active file as protected
    /// in the workspace so that no tool can change it.
    pub fn load(explicit: Option<&Path>, ws: &mut Workspace) -> Result<(Config, Source)> {
        let from_env = std::env::var_os("SNEAKY_CONFIG").filter(|v| !v.is_empty());
        if let Some(path) = explicit
            .map(Path::to_path_buf)
            .or(from_env.map(PathBuf::from))
        {
            let text = read_config_file(&path)?;
            let origin = path.display().to_string();
            let config = all_lists_known(Config::parse(&text, &origin)?, &origin)?;
            ws.protect_file(&path);
            ws.allow_vcs_writes(config.allow_vcs_writes);
            ws.set_path_lists(config.deny_read_list(), config.protected_list());
            return Ok((config, Source::File(path)));
        }
        let in_root = ws.root().join(CONFIG_FILE_NAME);
        let user = match user_config_path().filter(|p| p.exists()) {
            Some(path) => {
                let text = read_config_file(&path)?;
                let origin = path.display().to_string();
                let config = all_lists_known(Config::parse(&text, &origin)?, &origin)?;
                ws.protect_file(&path);
                Some((config, path))
            }
            None => None,
        };
        if let Some(text) = read_root_config(ws)? {
            let origin = in_root.display().to_string();
            let mut config = Config::parse(&text, &origin)?;
            ws.protect_file(&in_root);
            let base = user.map(|(c, _)| c).unwrap_or_default();
            // Hooks are the user's programs: a workspace's file never names them, trusted or
            // not (what it names is dropped, and the hosts say so).
            let ignored = (!config.hooks.is_empty()).then(|| in_root.clone());
            let mut user_hooks = base.hooks.clone();
            user_hooks.ignored_in_workspace = ignored;
            // A workspace may name the user's host lists (defined once, reused everywhere).
            let shell = &mut config.tools.shell;
            shell.network.resolve(&base.tools.shell.host_lists);
            let config = all_lists_known(config, &origin)?;
            let mut config = if base.trusts(ws.root()) {
                config
            } else {
                tighten_only(base, config)
            };
            config.hooks = user_hooks;
            ws.allow_vcs_writes(config.allow_vcs_writes);
            ws.set_path_lists(config.deny_read_list(), config.protected_list());
            return Ok((config, Source::File(in_root)));
        }
        let (config, source) = match user {
            Some((config, path)) => (config, Source::File(path)),
            None => (Config::default(), Source::Defaults),
        };
        ws.allow_vcs_writes(config.allow_vcs_writes);
        ws.set_path_lists(config.deny_read_list(), config.protected_list());
        Ok((config, source))
    }

    /// The configuration that holds before any workspace is known: `explicit` (`--config`),
    /// else `SNEAKY_CONFIG`, else the user's file, else the defaults. What only lists the tools
    /// (sneaky-mcp before its root is known, `sneaky-agent tools` outside a project) needs no
    /// more; a workspace's own sneaky.toml can only narrow it further once one is open.
    pub fn load_user(explicit: Option<&Path>) -> Result<Config> {
        let from_env = std::env::var_os("SNEAKY_CONFIG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let path = match explicit.map(Path::to_path_buf).or(from_env) {
            Some(path) => path,
            None => match user_config_path().filter(|p| p.exists()) {
                Some(path) => path,
                None => return Ok(Config::default()),
            },
        };
        let text = read_config_file(&path)?;
        let origin = path.display().to_string();
        all_lists_known(Config::parse(&text, &origin)?, &origin)
    }

    /// Whether this (user) configuration lists `root` in `trusted_workspaces`.
    pub fn trusts(&self, root: &Path) -> bool {
        self.trusted_workspaces
            .iter()
            .any(|t| t == root || std::fs::canonicalize(t).is_ok_and(|c| c == root))
    }
}

/// Refuse a `tools.shell.network` entry `@name` that neither the file nor (for a workspace's
/// file) the user's configuration defines.
fn all_lists_known(config: Config, origin: &str) -> Result<Config> {
    match config.tools.shell.network.unresolved() {
        None => Ok(config),
        Some(name) => Err(Error::new(
            ErrorKind::ConfigError,
            format!(
                "{origin}: tools.shell.network: no host list named {name:?} (define it under [tools.shell.host_lists])"
            ),
        )),
    }
}

/// An untrusted workspace's `sneaky.toml` over the user's configuration (or the defaults):
/// it may tighten, never loosen. Kept from the workspace: what only narrows (denied tools and
/// commands, confirmations, required layers, network or sandbox off → on is refused). Every
/// size, cap, limit and timeout is the smaller of the two: a larger one is a way to exhaust
/// the memory, the disk or the time of whoever runs the tools. Taken from the user: trust
/// itself and the undo history's bound.
pub fn tighten_only(base: Config, ws: Config) -> Config {
    let permissions = Permissions {
        deny: union(&base.permissions.deny, &ws.permissions.deny),
        allow: intersection(&base.permissions.allow, &ws.permissions.allow),
        confirm: union(&base.permissions.confirm, &ws.permissions.confirm),
    };
    // A project may add to what is denied or protected, never take away.
    let deny_read = union(&base.deny_read_list(), &ws.deny_read_list());
    let protected_paths = union(&base.protected_list(), &ws.protected_list());
    let shell = tighten_shell(&base.tools.shell, ws.tools.shell);
    Config {
        max_file_size_bytes: base.max_file_size_bytes.min(ws.max_file_size_bytes),
        max_output_bytes: base.max_output_bytes.min(ws.max_output_bytes),
        permissions,
        tools: Tools { shell },
        trusted_workspaces: base.trusted_workspaces,
        allow_vcs_writes: base.allow_vcs_writes && ws.allow_vcs_writes,
        // A project may keep less for resumption, never more of the server's memory.
        mcp: Mcp {
            workers: base.mcp.workers.min(ws.mcp.workers),
            resume_seconds: base.mcp.resume_seconds.min(ws.mcp.resume_seconds),
            resume_session_bytes: base
                .mcp
                .resume_session_bytes
                .min(ws.mcp.resume_session_bytes),
            resume_total_bytes: base.mcp.resume_total_bytes.min(ws.mcp.resume_total_bytes),
        },
        deny_read: Some(deny_read),
        extra_deny_read: Vec::new(),
        protected_paths: Some(protected_paths),
        extra_protected_paths: Vec::new(),
        // The user's: a project can neither erase its history nor make it fill the disk.
        undo: base.undo,
        // Checked by the caller: a project may only name itself (protocol::refuse_moved_root).
        workspace_root: ws.workspace_root,
        // Set by the caller from the user's own configuration (`Config::load`).
        hooks: base.hooks,
    }
}

fn tighten_shell(base: &Shell, ws: Shell) -> Shell {
    use commands::{Mode, Strictness};
    // Strict when either asks for it (or the user's configuration falls back to it): the
    // workspace then gets at most the user's lists as the strict mode reads them.
    let strict = base.strict || ws.strict;
    let contained =
        !strict && ws.allowed_commands.is_none() && commands::mode(base) == Mode::Contained;
    let base_lists = match contained {
        true => EffectiveLists::in_mode(base, Mode::Contained),
        false => EffectiveLists::in_mode(base, Mode::Strict(Strictness::Configured)),
    };
    let (allowed_commands, extra_allowed_commands, dropped) = if contained {
        // Contained: what the workspace adds can only lift an entry of the deny list, which
        // the user's configuration must have lifted already.
        let (kept, dropped): (Vec<String>, Vec<String>) = ws
            .extra_allowed_commands
            .iter()
            .cloned()
            .partition(|n| base_lists.permits(n));
        (None, union(&base.extra_allowed_commands, &kept), dropped)
    } else {
        let base_runnable = base_lists.runnable();
        // What the workspace asks to run: its own list when it sets one, else the user's.
        let asked: Vec<String> = match &ws.allowed_commands {
            Some(list) => list.clone(),
            None => base_runnable.iter().map(|s| s.to_string()).collect(),
        };
        let (kept, dropped): (Vec<String>, Vec<String>) = union(&asked, &ws.extra_allowed_commands)
            .into_iter()
            .partition(|n| base_runnable.contains(&n.as_str()));
        (Some(kept), Vec::new(), dropped)
    };
    // The user's denied entries that still deny, plus whatever the workspace denies
    // explicitly; the built-in list stays itself (its refusals give their reasons) while
    // neither configuration replaces it.
    let denied_commands = match (&base.denied_commands, &ws.denied_commands) {
        (None, None) if contained => None,
        _ => Some(union(
            &base_lists
                .denied_names()
                .map(str::to_string)
                .collect::<Vec<_>>(),
            ws.denied_commands.as_deref().unwrap_or_default(),
        )),
    };
    let read_paths = match &base.read_paths {
        Some(list) => Some(list.clone()),
        None => ws.read_paths,
    };
    Shell {
        strict,
        allowed_commands,
        extra_allowed_commands,
        denied_commands,
        default_timeout: base.default_timeout.min(ws.default_timeout),
        sandbox: base.sandbox || ws.sandbox,
        network: base.network.tighten(ws.network),
        host_lists: base.host_lists.clone(),
        pass_env: intersection(&base.pass_env, &ws.pass_env),
        read_paths,
        write_paths: intersection(&base.write_paths, &ws.write_paths),
        exec_paths: intersection(&base.exec_paths, &ws.exec_paths),
        exec_workspace_dirs: intersection(&base.exec_workspace_dirs, &ws.exec_workspace_dirs),
        unix_sockets: intersection(&base.unix_sockets, &ws.unix_sockets),
        require_layers: match (&base.require_layers, &ws.require_layers) {
            (_, None) => base.require_layers.clone(),
            (None, Some(w)) if base.container_boundary => Some(w.clone()),
            (None, Some(_)) => None,
            (Some(b), Some(w)) => Some(union(b, w)),
        },
        // The user's: a workspace tightens through require_layers.
        container_boundary: base.container_boundary,
        max_processes: base.max_processes.min(ws.max_processes),
        max_file_bytes: base.max_file_bytes.min(ws.max_file_bytes),
        max_cpu_seconds: base.max_cpu_seconds.min(ws.max_cpu_seconds),
        max_job_seconds: base.max_job_seconds.min(ws.max_job_seconds),
        yield_after_seconds: base.yield_after_seconds.min(ws.yield_after_seconds),
        untrusted_requests: dropped,
    }
}

fn union<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in a.iter().chain(b) {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
}

fn intersection<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Vec<T> {
    b.iter().filter(|x| a.contains(x)).cloned().collect()
}

impl Shell {
    fn validate(&self, origin: &str) -> Result<()> {
        let bad = |msg: String| {
            Err(Error::new(
                ErrorKind::ConfigError,
                format!("{origin}: tools.shell.{msg}"),
            ))
        };
        if let Some(l) = self
            .require_layers
            .iter()
            .flatten()
            .find(|l| !LAYERS.contains(&l.as_str()))
        {
            return bad(format!(
                "require_layers: unknown layer {l:?} (known: {})",
                LAYERS.join(", ")
            ));
        }
        for (key, list) in [
            ("write_paths", &self.write_paths),
            ("exec_paths", &self.exec_paths),
            ("unix_sockets", &self.unix_sockets),
        ] {
            if let Some(p) = list.iter().find(|p| !Path::new(p).is_absolute()) {
                return bad(format!("{key}: {p} is not an absolute path"));
            }
        }
        if self.max_job_seconds == 0 {
            return bad("max_job_seconds must be at least 1".into());
        }
        // A call waits at most 600 s for a job (crate::shell::jobs::MAX_WAIT_MS).
        if !(1..=600).contains(&self.yield_after_seconds) {
            return bad("yield_after_seconds must be between 1 and 600".into());
        }
        if let Err(m) =
            crate::fs::pathlist::validate("exec_workspace_dirs", &self.exec_workspace_dirs, true)
        {
            return bad(m);
        }
        if let Err(why) = self.network.validate(&self.host_lists) {
            return bad(why);
        }
        if self.max_processes == 0 || self.max_file_bytes == 0 || self.max_cpu_seconds == 0 {
            return bad(
                "max_processes, max_file_bytes and max_cpu_seconds must be at least 1".into(),
            );
        }
        Ok(())
    }

    /// The layers that must be in force and whether that is the built-in default (every
    /// layer, Landlock in force at least in part: what an older kernel's Landlock lacks, the
    /// namespaces and seccomp hold). With `container_boundary` the default is none.
    pub fn required_layers(&self) -> (Vec<String>, bool) {
        match &self.require_layers {
            Some(list) => (list.clone(), false),
            None if self.container_boundary => (Vec::new(), false),
            None => (vec!["all".to_string()], true),
        }
    }
}

/// `$XDG_CONFIG_HOME/sneaky/config.toml`, else `~/.config/sneaky/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("sneaky").join("config.toml"))
}

fn read_config_file(path: &Path) -> Result<String> {
    let file = std::fs::File::open(path).map_err(|e| {
        Error::new(
            ErrorKind::ConfigError,
            format!("config file {}: {e}", path.display()),
        )
    })?;
    read_bounded(file, &path.display().to_string())
}

/// The workspace's own `sneaky.toml` is read through the jail like any other file there.
fn read_root_config(ws: &Workspace) -> Result<Option<String>> {
    let rel = ws.relative(CONFIG_FILE_NAME)?;
    match ws.open_read(&rel) {
        Ok(file) => read_bounded(file, CONFIG_FILE_NAME).map(Some),
        Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::new(
            ErrorKind::ConfigError,
            format!("config file {CONFIG_FILE_NAME}: {}", e.message()),
        )),
    }
}

fn read_bounded(file: std::fs::File, origin: &str) -> Result<String> {
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::new(ErrorKind::ConfigError, format!("config file {origin}: {e}")))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::new(
            ErrorKind::ConfigError,
            format!("config file {origin} is larger than {MAX_CONFIG_BYTES} bytes"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_when_empty() {
        let c = Config::parse("", "t").expect("parse");
        assert_eq!(c, Config::default());
        assert_eq!(c.max_file_size_bytes, 1_048_576);
        assert_eq!(c.tools.shell.default_timeout, 30);
    }

    #[test]
    fn contract_example_parses() {
        let c = Config::parse(
            r#"
max_file_size_bytes = 1048576
max_output_bytes    = 65536
[permissions]
deny    = ["delete_file"]
allow   = ["write_file"]
confirm = ["read_file"]
[tools.shell]
allowed_commands = ["git", "cargo", "ls"]
denied_commands  = ["rm", "sudo"]
default_timeout  = 30
"#,
            "t",
        )
        .expect("parse");
        assert_eq!(c.permissions.deny, vec![ToolName::DeleteFile]);
        assert_eq!(
            c.tools.shell.allowed_commands.as_deref(),
            Some(&["git".to_string(), "cargo".into(), "ls".into()][..])
        );
    }

    #[test]
    fn an_untrusted_workspace_only_tightens() {
        let base = Config::parse(
            "[tools.shell]\nallowed_commands = [\"bash\", \"echo\", \"ls\"]\nnetwork = false\n",
            "user",
        )
        .expect("user");
        // A workspace that asks for nothing about commands keeps the user's lists.
        let ws = Config::parse("max_file_size_bytes = 10\n", "ws").expect("ws");
        let merged = tighten_only(base.clone(), ws);
        let lists = EffectiveLists::from_config(&merged.tools.shell);
        assert_eq!(lists.runnable(), vec!["bash", "echo", "ls"]);
        assert_eq!(merged.max_file_size_bytes, 10);
        // One that asks for more gets the intersection, and what it lost is recorded.
        let ws = Config::parse(
            "[tools.shell]\nallowed_commands = [\"echo\", \"perl\"]\nextra_allowed_commands = [\"ls\", \"curl\"]\nnetwork = true\nsandbox = false\ndenied_commands = [\"ls\"]\n[permissions]\nallow = [\"run_command\"]\n",
            "ws",
        )
        .expect("ws");
        let merged = tighten_only(base, ws);
        let shell = &merged.tools.shell;
        let lists = EffectiveLists::from_config(shell);
        assert_eq!(lists.runnable(), vec!["echo"]);
        assert_eq!(shell.untrusted_requests, vec!["perl", "curl"]);
        assert!(shell.network == Network::Off && shell.sandbox);
        assert!(merged.permissions.allow.is_empty());
    }

    /// Contained mode (the default): a workspace can deny more and choose the strict mode, but
    /// neither lift an entry of the deny list nor leave a strict mode the user chose.
    #[test]
    fn an_untrusted_workspace_cannot_loosen_the_mode() {
        use commands::Mode;
        let parse = |t: &str| Config::parse(t, "t").expect("parse");
        let mode = |c: &Config| commands::mode(&c.tools.shell);
        let user = parse("[tools.shell]\nextra_allowed_commands = [\"docker\"]\n");
        let ws = parse(
            "[tools.shell]\nextra_allowed_commands = [\"docker\", \"sudo\"]\ndenied_commands = [\"curl\"]\n",
        );
        let merged = tighten_only(user.clone(), ws);
        assert_eq!(mode(&merged), Mode::Contained);
        let lists = EffectiveLists::from_config(&merged.tools.shell);
        assert!(lists.permits("docker") && lists.permits("python3"));
        assert!(!lists.permits("sudo") && !lists.permits("curl") && !lists.permits("podman"));
        assert_eq!(merged.tools.shell.untrusted_requests, vec!["sudo"]);
        // A workspace may choose the strict mode, with the user's lists read strictly.
        let merged = tighten_only(user.clone(), parse("[tools.shell]\nstrict = true\n"));
        assert!(mode(&merged).is_strict());
        let lists = EffectiveLists::from_config(&merged.tools.shell);
        assert!(lists.permits("ls") && lists.permits("docker") && !lists.permits("python3"));
        // And nothing given, it keeps the user's contained mode and the built-in list.
        let merged = tighten_only(user, parse("max_output_bytes = 10\n"));
        assert_eq!(mode(&merged), Mode::Contained);
        assert_eq!(merged.tools.shell.denied_commands, None);
        // A user's strict mode stays strict whatever the workspace says.
        let strict = parse("[tools.shell]\nstrict = true\n");
        let merged = tighten_only(strict, parse("[tools.shell]\nstrict = false\n"));
        assert!(mode(&merged).is_strict());
        let lists = EffectiveLists::from_config(&merged.tools.shell);
        assert!(!lists.permits("python3") && lists.permits("git"));
    }

    /// Every size, cap, limit and timeout a workspace raises stays the user's; one it lowers is
    /// taken. The keys come from the configuration's own list of keys per table, so a number
    /// key added later is covered.
    #[test]
    fn a_workspace_cannot_raise_any_number() {
        let keys = |table: &str| -> Vec<String> {
            let text = format!("{table}\nzz = 1\n");
            let message = Config::parse(&text, "probe")
                .expect_err("zz is unknown")
                .message();
            let listed = message.split("expected").nth(1).unwrap_or_default();
            let listed = listed.trim_start().trim_start_matches("one of");
            listed
                .split(',')
                .map(|k| k.split('`').nth(1).unwrap_or_default())
                .filter(|k| !k.is_empty())
                .map(str::to_string)
                .collect()
        };
        let mut checked = 0;
        for table in ["", "[tools.shell]", "[mcp]"] {
            let keys = keys(table);
            assert!(!keys.is_empty(), "no keys read for {table:?}");
            for key in keys {
                let with = |n: u64| Config::parse(&format!("{table}\n{key} = {n}\n"), "t");
                let (Ok(user), Ok(higher), Ok(lower)) = (with(2), with(3), with(1)) else {
                    continue; // not a number key
                };
                let untouched = format!("{:?}", tighten_only(user.clone(), Config::default()));
                let raised = format!("{:?}", tighten_only(user.clone(), higher));
                let lowered = format!("{:?}", tighten_only(user, lower));
                assert_eq!(raised, untouched, "{table} {key}: a workspace raised it");
                assert_ne!(
                    lowered, untouched,
                    "{table} {key}: a workspace could not lower it"
                );
                checked += 1;
            }
        }
        assert!(checked >= 7, "only {checked} number keys found");
    }

    #[test]
    fn a_workspace_can_only_remove_unix_sockets() {
        let base = Config::parse(
            "[tools.shell]\nunix_sockets = [\"/run/a.sock\", \"/run/b.sock\"]\n",
            "user",
        )
        .expect("user");
        let ws = Config::parse(
            "[tools.shell]\nunix_sockets = [\"/run/b.sock\", \"/run/docker.sock\"]\n",
            "ws",
        )
        .expect("ws");
        let merged = tighten_only(base, ws);
        assert_eq!(merged.tools.shell.unix_sockets, vec!["/run/b.sock"]);
        assert!(Config::parse("[tools.shell]\nunix_sockets = [\"a.sock\"]\n", "t").is_err());
        assert!(Shell::default().unix_sockets.is_empty());
    }

    /// Refusing rather than running weaker is the default; a workspace can neither lower the
    /// layers required nor declare itself a container boundary.
    #[test]
    fn a_workspace_cannot_lower_the_required_layers() {
        let parse = |t: &str| Config::parse(t, "t").expect("parse");
        let all = (vec!["all".to_string()], true);
        assert_eq!(Shell::default().required_layers(), all);
        let lowered = parse("[tools.shell]\nrequire_layers = []\ncontainer_boundary = true\n");
        let merged = tighten_only(Config::default(), lowered.clone());
        assert_eq!(merged.tools.shell.required_layers(), all);
        assert!(!merged.tools.shell.container_boundary);
        // The user's choice stands against a workspace without the key, and a workspace
        // may add to it.
        let user = parse("[tools.shell]\ncontainer_boundary = true\n");
        let merged = tighten_only(user.clone(), Config::default());
        assert_eq!(merged.tools.shell.required_layers(), (vec![], false));
        let tighter = parse("[tools.shell]\nrequire_layers = [\"seccomp\"]\n");
        let merged = tighten_only(user, tighter);
        assert_eq!(
            merged.tools.shell.required_layers(),
            (vec!["seccomp".to_string()], false)
        );
        let merged = tighten_only(
            parse("[tools.shell]\nrequire_layers = []\n"),
            Config::default(),
        );
        assert_eq!(merged.tools.shell.required_layers(), (vec![], false));
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = Config::parse("max_file_size = 3", "t").expect_err("unknown");
        assert_eq!(e.code(), "config_error");
        assert!(e.message().contains("max_file_size"), "{}", e.message());
        let e = Config::parse("[tools.shell]\nallowed = []", "t").expect_err("unknown");
        assert!(e.message().contains("allowed"), "{}", e.message());
        let e = Config::parse("[permissions]\ndeny = [\"rm_rf\"]", "t").expect_err("tool");
        assert!(e.message().contains("rm_rf"), "{}", e.message());
        let e = Config::parse("max_file_size_bytes = \"big\"", "t").expect_err("type");
        assert!(
            e.message().contains("max_file_size_bytes"),
            "{}",
            e.message()
        );
    }
}
