//! What a launch is, as the runner and the launcher both know it: the spec the launcher is
//! handed ([`LaunchSpec`]), the marker lines it writes on stderr ([`STATUS_PREFIX`],
//! [`END_PREFIX`]) and what they carry. Kept apart from the launcher (src/shell/sandbox.rs) so
//! that the layers it puts in place (namespaces, confine), the spec's builder and the output's
//! reader depend on the data, not on the launcher.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::container::Container;
use super::proxy;

/// The hidden first argument of `sneaky-run` that selects the launcher step.
pub const LAUNCH_FLAG: &str = "--sneaky-sandbox-exec";
/// The launcher's report starts stderr with this; the runner strips the line.
pub const STATUS_PREFIX: &[u8] = b"\x1esneaky-sandbox:";
/// The launcher's last line on stderr, once every process of the command has ended: this
/// prefix, the call's [`LaunchStatus::end_token`], `:`, and [`LaunchEnd`] as JSON. The
/// runner takes it only with the token the status line gave, which no process of the command
/// can know: a line the command prints to look like it is left as the command's output.
pub const END_PREFIX: &str = "\x1esneaky-sandbox-end:";
/// The launcher's exit status when it could not set up (nothing ran).
pub const SETUP_FAILED: i32 = 125;

/// What the launcher is told to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchSpec {
    /// Apply the sandbox layers (false: only the session and the parent-death signal).
    pub sandbox: bool,
    #[serde(with = "super::raw_path::many")]
    pub read: Vec<PathBuf>,
    /// Directories whose entries may be listed but whose files are read only where `read`
    /// grants them (a background job's way to the read-deny list's places: see
    /// `spec::carve_reads`).
    #[serde(default, with = "super::raw_path::many")]
    pub read_dirs: Vec<PathBuf>,
    #[serde(with = "super::raw_path::many")]
    pub write: Vec<PathBuf>,
    /// Files and directories whose programs may execute.
    #[serde(with = "super::raw_path::many")]
    pub exec: Vec<PathBuf>,
    /// Which entries of `exec` were directories when the runner looked (they may also be
    /// listed; a type changed meanwhile only makes Landlock report "partial").
    #[serde(with = "super::raw_path::many")]
    pub exec_dirs: Vec<PathBuf>,
    /// Denied programs inside the exec set, covered in the command's view so that they
    /// cannot execute from where they are installed (src/shell/executables.rs).
    #[serde(default, with = "super::raw_path::many")]
    pub cover_exec: Vec<PathBuf>,
    /// Where shared libraries live: mapped executable, never executed (everything else is
    /// mounted noexec).
    #[serde(with = "super::raw_path::many")]
    pub map_exec: Vec<PathBuf>,
    /// Inside the writable places, bound read-only (.git config and hooks, configuration).
    #[serde(with = "super::raw_path::many")]
    pub read_only: Vec<PathBuf>,
    /// Directories made mount points so they cannot be renamed away (.git), and symbolic
    /// links on the way to a protected path, pinned as links (and, when they lead to a
    /// directory, that directory too).
    #[serde(with = "super::raw_path::many")]
    pub pin: Vec<PathBuf>,
    /// Places of the read-deny list, covered in the command's view (src/shell/protect.rs).
    #[serde(default, with = "super::raw_path::many")]
    pub hide: Vec<PathBuf>,
    /// The private temp dir, kept visible through the cover of a place of `hide` that holds
    /// it (src/shell/tmpdir.rs).
    #[serde(default, with = "super::raw_path::maybe")]
    pub tmp: Option<PathBuf>,
    /// Where Unix sockets stay reachable: beneath the workspace and the private temp dir,
    /// and the sockets `tools.shell.unix_sockets` lists.
    #[serde(with = "super::raw_path::many")]
    pub unix_sockets: Vec<PathBuf>,
    /// The host's whole network (`tools.shell.network = true`).
    pub network: bool,
    /// `tools.shell.network` as a host list: reached only through the proxy
    /// (src/shell/proxy.rs); empty otherwise.
    #[serde(default)]
    pub proxy_hosts: Vec<String>,
    pub limits: Limits,
    /// The layers that must be in force (tools.shell.require_layers, or all by default).
    pub require: Vec<String>,
    /// `require` is the built-in default (the key is unset): Landlock in force in part
    /// counts, and the refusal says how to run weaker.
    #[serde(default)]
    pub require_by_default: bool,
    /// tools.shell.container_boundary: said in the report.
    #[serde(default)]
    pub container_boundary: bool,
    /// The shell binary to run, absolute.
    #[serde(with = "super::raw_path::one")]
    pub shell: PathBuf,
    /// The working directory (the workspace root).
    #[serde(with = "super::raw_path::one")]
    pub cwd: PathBuf,
    /// Do not enter namespaces (`SNEAKY_SANDBOX_SKIP=namespaces` in the runner's environment:
    /// to see and test how the sandbox degrades; `require_layers` still refuses).
    pub skip_namespaces: bool,
    /// Do not mount the PID namespace's own /proc (`SNEAKY_SANDBOX_SKIP=proc`: what a
    /// container's masked /proc paths do, without the container).
    #[serde(default)]
    pub skip_proc: bool,
    /// The container the runner found itself in ([`detect_container`]).
    #[serde(default)]
    pub container: Option<Container>,
    /// The runner's pid: the launcher checks it is still its parent after arming the
    /// parent-death signal (else the runner died in between).
    pub parent: i32,
    /// The call's pids cgroup, which the launcher joins before entering the namespaces
    /// (src/shell/cgroup.rs), or why there is none.
    pub pids_cgroup: Result<PathBuf, String>,
    /// A background job on a pseudo-terminal (its stdin and stdout): the shell's stderr goes
    /// there too, after the launcher's report on the real stderr.
    #[serde(default)]
    pub tty: bool,
    /// The workspace's shared loopback to join when `network = false` (its holder's pid and
    /// start time; src/shell/jobs), if the workspace has one.
    #[serde(default)]
    pub loopback: Option<(i32, u64)>,
    /// End stderr with what the proxy refused ([`END_PREFIX`]): for a call whose result the
    /// runner reads (not a background job, whose stderr is its log).
    #[serde(default)]
    pub report_refused: bool,
    /// The workspace as an overlay whose upper layer holds the command's changes
    /// (src/shell/overlay/); None: the command writes the workspace directly.
    #[serde(default)]
    pub overlay: Option<super::overlay::OverlaySpec>,
    /// A background job's: the Unix socket where its supervisor takes the workspace as the
    /// job sees it (the overlay's root), to mirror the workspace's later changes into it
    /// (src/shell/jobs/mirror.rs).
    #[serde(default, with = "super::raw_path::maybe")]
    pub hand_view: Option<PathBuf>,
    /// Take the launcher's cost marks and hand them back on the report line
    /// (src/shell/costs.rs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub costs: bool,
}

/// The launcher's first steps, handed to the launcher forked ahead of time
/// (src/shell/zygote.rs) as soon as the runner knows them, before the rest of the launch:
/// the death signal, the session, the process limit and the namespaces then run while the
/// runner still works out the exec set and the views. Only where the namespaces to enter
/// follow from these fields alone (no host list's proxy, which needs the host's network; no
/// shared loopback to join; no view to hand over).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Early {
    pub parent: i32,
    pub pids_cgroup: Result<PathBuf, String>,
    pub processes: u64,
    pub network: bool,
    pub costs: bool,
}

impl Early {
    /// Whether `spec` is the launch these steps were taken for: the launcher refuses one
    /// that is not (a bug here must not leave a command in namespaces made for another).
    pub fn fits(&self, spec: &LaunchSpec) -> bool {
        spec.sandbox
            && !spec.skip_namespaces
            && spec.proxy_hosts.is_empty()
            && spec.loopback.is_none()
            && spec.hand_view.is_none()
            && self.parent == spec.parent
            && self.pids_cgroup == spec.pids_cgroup
            && self.processes == spec.limits.processes
            && self.network == spec.network
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Limits {
    pub processes: u64,
    pub file_bytes: u64,
    pub cpu_seconds: u64,
}

/// The launcher's report, as JSON after [`STATUS_PREFIX`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LaunchStatus {
    /// Landlock: "full", "partial", "none" (kernel without Landlock) or "off".
    pub landlock: String,
    /// The Landlock ABI the kernel offers, when known.
    pub abi: Option<i32>,
    /// The namespaces entered (e.g. "user + mount (read-only world) + pid"), or why none.
    pub namespaces: String,
    pub namespaces_ok: bool,
    /// The seccomp filter: what it refuses ("ptrace, keyrings, … refused"), or why it failed.
    pub seccomp: String,
    pub seccomp_ok: bool,
    /// How the process limit is held ("cgroup pids.max 1024", or RLIMIT_NPROC alone and why).
    #[serde(default)]
    pub processes: String,
    /// The process limit holds: a pids cgroup, or RLIMIT_NPROC for a user other than root.
    #[serde(default)]
    pub processes_ok: bool,
    /// The overlay that holds the command's changes: "in force", or why not.
    #[serde(default)]
    pub overlay: String,
    #[serde(default)]
    pub overlay_ok: bool,
    /// The PID namespace's own /proc: "own", or why the command would see the outer one.
    #[serde(default)]
    pub proc: String,
    #[serde(default)]
    pub proc_ok: bool,
    /// The container this runs in, in words ("podman (/run/.containerenv)").
    #[serde(default)]
    pub container: Option<String>,
    /// Set when setup failed; then the command did not run.
    pub error: Option<String>,
    /// The token of the launcher's last line ([`END_PREFIX`]), when it will write one.
    #[serde(default)]
    pub end_token: Option<String>,
    /// The launcher's cost marks, when its spec asked for them (src/shell/costs.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<(String, u64)>,
}

/// What the launcher says after the command has ended ([`END_PREFIX`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LaunchEnd {
    /// How the command's shell ended, said once every process of the command is gone and
    /// before the launcher leaves (the runner need not wait for the namespaces' teardown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ShellEnd>,
    /// The requests the network proxy refused, each once, in order.
    pub refused: Vec<proxy::Refusal>,
    /// The cost marks of the command's end, when the spec asked for them
    /// (src/shell/costs.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<(String, u64)>,
}

/// How the command's shell ended: its exit code, or the signal that ended it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ShellEnd {
    Code(u8),
    Signal(i32),
}

impl ShellEnd {
    /// As `waitpid` would have given it for the launcher, which leaves the same way.
    pub fn exit_status(&self) -> std::process::ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        match *self {
            ShellEnd::Code(code) => std::process::ExitStatus::from_raw(i32::from(code) << 8),
            ShellEnd::Signal(sig) => std::process::ExitStatus::from_raw(sig & 0x7f),
        }
    }
}
