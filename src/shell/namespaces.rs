//! The namespace layer of the sandbox, set up by the launcher before the command exists:
//!
//! - a user namespace (also as root: capabilities then only count inside it, and no device
//!   node can be made, since mknod of a device needs CAP_MKNOD in the initial namespace), with
//!   the caller's own uid and gid mapped to themselves (files keep their owners);
//! - a mount namespace where every mount is read-only, nosuid, noexec and nodev (so nothing
//!   outside can be written, no timestamp, mode, owner or xattr outside can change, no disk
//!   can be opened, and only the exec set and the library directories can be mapped
//!   executable), the workspace, the private temporary directory and configured write paths
//!   bound writable, and the protected files inside them (.git's config and hooks, the
//!   workspace sneaky.toml, the active configuration) bound read-only on top; `.git` and the
//!   directories holding protected files become mount points, so they cannot be renamed away
//!   and replaced;
//! - a PID namespace, whose first process is the launcher's child: when it exits, the kernel
//!   kills every process left in the namespace, setsid and double-fork hoppers included;
//! - a network namespace when `network = false`: no interface but a loopback that is down;
//!   or, while the workspace has a supervisor of background jobs, the workspace's shared one
//!   (joined, not made): its loopback is up and every command of the workspace is on it, so
//!   a later command reaches a job's server (src/shell/jobs); nothing else is in it;
//!   with a host list (`network = [...]`), that namespace (its own, or the shared one) also
//!   holds the proxy's bridge (src/shell/proxy.rs);
//! - the host's Unix sockets: every pathname socket bound in the host's network namespace
//!   (as `/proc/net/unix` lists them when the call starts) outside the workspace, the private
//!   temp dir and `tools.shell.unix_sockets` gets `/dev/null` bound over it, so `connect()`
//!   and `sendto()` reach no daemon (ECONNREFUSED), however the program makes them. Landlock
//!   does not govern connecting to a pathname socket, nor does a read-only mount; refusing
//!   `socket(AF_UNIX)` in seccomp would also refuse the sockets a project's own programs and
//!   tests bind in the workspace, and a mount stays in force for raw system calls (nested
//!   namespaces inherit it locked). A socket a host daemon binds after the call started is
//!   not covered;
//! - an IPC namespace: the host's SysV shared memory, semaphores and message queues (and
//!   POSIX message queues) are out of reach.
//!
//! Mirrors what bubblewrap does for Codex (`--ro-bind / / --bind WS WS --unshare-all`),
//! directly through nix, which saves bwrap's extra exec and keeps the layers in one report.

use std::path::{Path, PathBuf};

use nix::mount::{mount, MsFlags};
use nix::sched::{unshare, CloneFlags};

use super::sys::{
    mount_setattr, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY,
};

/// Device nodes that stay usable: they reach no disk, no terminal, no other process.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What the launcher asks of this layer.
pub struct Request<'a> {
    pub write: &'a [PathBuf],
    pub read_only: &'a [PathBuf],
    pub pin: &'a [PathBuf],
    /// Unix sockets beneath these stay reachable (see the module's documentation).
    pub unix_sockets: &'a [PathBuf],
    /// Places of the read-deny list, covered last (src/shell/protect.rs).
    pub hide: &'a [PathBuf],
    /// The private temp dir: kept visible through a cover of `hide` that holds it.
    pub tmp: Option<&'a Path>,
    /// The only places where files may be mapped executable: the exec set and the library
    /// directories (everything else is noexec, so the ELF loader cannot be used to run a
    /// program Landlock would not let execute: `ld.so /usr/bin/rm`).
    pub exec: &'a [PathBuf],
    /// Denied programs inside `exec`: `/dev/null` is bound over each, so that it cannot be
    /// executed (a device is no program) nor read to be copied, however it is named.
    pub cover_exec: &'a [PathBuf],
    pub network: bool,
    /// The workspace's shared loopback: the process that holds its network namespace, by pid
    /// and start time (see [`hold_loopback`]).
    pub loopback: Option<(i32, u64)>,
    pub cwd: &'a Path,
    /// The workspace (`cwd`) as an overlay holding the command's changes.
    pub overlay: Option<&'a super::overlay::OverlaySpec>,
}

/// What was set up.
#[derive(Debug, Clone, Default)]
pub struct Entered {
    pub user: bool,
    pub pid: bool,
    pub net: bool,
    /// The PID namespace's own /proc is mounted (else the host's is visible, read-only).
    pub own_proc: bool,
    /// Why it is not (mounting it failed: a container's masked /proc paths).
    pub proc_error: Option<String>,
    /// A private /dev/shm was mounted (writable for the command).
    pub shm: Option<PathBuf>,
    /// The PID namespace's vm.memfd_noexec is 2: no anonymous memory file can be executed.
    pub memfd_noexec: bool,
    /// The network namespace is the workspace's shared loopback.
    pub loopback: bool,
    /// The port on the namespace's loopback where the host list's proxy listens.
    pub proxy_port: Option<u16>,
    /// The overlay over the workspace: None when not asked for, else whether it is mounted.
    pub overlay: Option<Result<(), String>>,
}

impl Entered {
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.user {
            parts.push("user");
        }
        parts.push("mount (read-only world)");
        parts.push("ipc");
        if self.pid && self.own_proc {
            parts.push("pid (own /proc)");
        } else if self.pid {
            parts.push("pid (host /proc visible)");
        }
        if self.proxy_port.is_some() && self.loopback {
            parts.push("net (the workspace's shared loopback, a proxy for the host list)");
        } else if self.proxy_port.is_some() {
            parts.push("net (loopback only, a proxy for the host list)");
        } else if self.loopback {
            parts.push("net (the workspace's shared loopback only)");
        } else if self.net {
            parts.push("net (no network)");
        }
        parts.join(" + ")
    }
}

/// Enter the namespaces and build the mount view. On error the caller decides whether to go
/// on without this layer (and say so) or refuse (tools.shell.require_layers).
pub fn enter(req: &Request<'_>) -> Result<Entered, String> {
    let unshared = unshare_all(req.network, req.loopback, None)?;
    enter_unshared(req, unshared)
}

/// A network namespace made ahead for the launcher forked ahead of time (src/shell/zygote.rs),
/// which has entered it before its first steps: making one is most of the namespaces' cost
/// (the kernel registers its sysctl tables and its loopback device; perf: `copy_net_ns` was
/// the biggest kernel item of a call; 0.6-0.7 ms here). The runner makes it on a thread of its
/// own ([`NetworkNamespace::start`]) when the call wants one (`network = false`, no shared
/// loopback, no host list), while that launcher works out the exec set on the other CPU, and
/// hands it over. Only as root, who can make one without a user namespace, enter it and go
/// back to the host's; the host's sockets are read before entering it ([`unshare_all`] covers
/// them). A namespace made this way belongs to the host's user namespace, not to the
/// sandbox's: the command holds no capability in it, as in one made with the others.
pub struct NetAhead {
    host: std::fs::File,
    host_sockets: Vec<PathBuf>,
}

impl NetAhead {
    /// The host's sockets, read ahead (by the launcher forked ahead of time while it waits:
    /// [`NetAhead::enter`] takes them), as root only.
    pub fn host_sockets() -> Option<Vec<PathBuf>> {
        nix::unistd::geteuid().is_root().then(host_unix_sockets)
    }

    /// Leave the host's network namespace, whose sockets are `host_sockets`, for `made` (a
    /// [`NetworkNamespace`]); None where that cannot be done (then the first steps make one,
    /// as without it).
    pub fn enter(made: std::os::fd::OwnedFd, host_sockets: Vec<PathBuf>) -> Option<NetAhead> {
        let host = std::fs::File::open("/proc/self/ns/net").ok()?;
        nix::sched::setns(made, CloneFlags::CLONE_NEWNET).ok()?;
        Some(NetAhead { host, host_sockets })
    }

    /// Back in the host's network namespace: for a launch that wants no new one of its own.
    pub fn leave(self) -> Result<(), String> {
        nix::sched::setns(&self.host, CloneFlags::CLONE_NEWNET)
            .map_err(|e| format!("returning to the host's network namespace: {e}"))
    }
}

/// A new network namespace, made on a thread of the runner: a thread's namespaces are its
/// own, so the runner's other threads stay in the host's. Its handle goes to the launcher
/// forked ahead of time, which enters it ([`NetAhead::enter`]).
pub struct NetworkNamespace(std::thread::JoinHandle<Option<std::os::fd::OwnedFd>>);

impl NetworkNamespace {
    /// Start making it (as root only: None otherwise, or where no thread can be started).
    pub fn start() -> Option<NetworkNamespace> {
        if !nix::unistd::geteuid().is_root() {
            return None;
        }
        std::thread::Builder::new()
            .name("network-ns".into())
            .spawn(|| {
                unshare(CloneFlags::CLONE_NEWNET).ok()?;
                let made = std::fs::File::open("/proc/thread-self/ns/net").ok()?;
                super::costs::mark("network-namespace");
                Some(std::os::fd::OwnedFd::from(made))
            })
            .ok()
            .map(NetworkNamespace)
    }

    /// Its handle, once made.
    pub fn made(self) -> Option<std::os::fd::OwnedFd> {
        self.0.join().ok().flatten()
    }
}

/// What [`unshare_all`] did: the namespaces are new, the mount view is still the host's.
pub struct Unshared {
    /// The pathname sockets bound in the host's network namespace (read before leaving it).
    host_sockets: Vec<PathBuf>,
    /// In a user namespace of our own or the loopback holder's.
    user: bool,
    /// In the workspace's shared loopback's network namespace.
    joined: bool,
}

/// The first half of [`enter`]: read the host's sockets, then unshare (or join the shared
/// loopback) and map our ids. Apart, so that the launcher forked ahead of time can do it while
/// the runner still works out the rest of the launch (src/shell/zygote.rs). `ahead`: the
/// network namespace that launcher made already, used when the launch wants a new one of its
/// own (else left first, for the host's).
pub fn unshare_all(
    network: bool,
    loopback: Option<(i32, u64)>,
    ahead: Option<NetAhead>,
) -> Result<Unshared, String> {
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    let ahead = match ahead {
        Some(made) if !network && loopback.is_none() => Some(made),
        Some(made) => {
            made.leave()?;
            None
        }
        None => None,
    };
    let made_ahead = ahead.is_some();
    // Read in the host's network namespace, before a new one hides its sockets.
    let host_sockets = match ahead {
        Some(made) => made.host_sockets,
        None => host_unix_sockets(),
    };
    // A shared loopback that cannot be joined (its holder just ended) is left for a network
    // namespace of the command's own, as without one.
    let joined = loopback
        .filter(|_| !network)
        .and_then(|(pid, start)| join_loopback(pid, start).ok());
    let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
    if !network && joined.is_none() && !made_ahead {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    let user = if joined == Some(true) {
        // Already in the holder's user namespace, where the holder mapped our ids.
        unshare(flags).map_err(|e| format!("unshare: {e}"))?;
        true
    } else {
        match unshare(flags | CloneFlags::CLONE_NEWUSER) {
            Ok(()) => true,
            // Root where user namespaces are off: the other namespaces still work; the launcher
            // drops every capability before the command runs.
            Err(_) if uid.is_root() => {
                unshare(flags).map_err(|e| format!("unshare: {e}"))?;
                false
            }
            Err(e) => return Err(format!("unshare (user namespaces unavailable?): {e}")),
        }
    };
    if user && joined != Some(true) {
        map_ids(uid.as_raw(), gid.as_raw())?;
    }
    super::costs::mark("namespaces");
    Ok(Unshared {
        host_sockets,
        user,
        joined: joined.is_some(),
    })
}

/// The second half of [`enter`]: the mount view, the host's sockets covered but those beneath
/// `req.unix_sockets`, the read-deny list.
pub fn enter_unshared(req: &Request<'_>, unshared: Unshared) -> Result<Entered, String> {
    let (shm, overlay) = build_mounts(req)?;
    super::costs::mark("mounts");
    let host_sockets: Vec<PathBuf> = unshared
        .host_sockets
        .into_iter()
        .filter(|p| !req.unix_sockets.iter().any(|a| p.starts_with(a)))
        .collect();
    cover_sockets(&host_sockets)?;
    super::costs::mark("socket-covers");
    super::protect::cover_denied(req.hide, req.tmp)?;
    super::costs::mark("read-deny-covers");
    Ok(Entered {
        user: unshared.user,
        pid: true,
        own_proc: true,
        proc_error: None,
        net: !req.network,
        shm,
        memfd_noexec: false,
        loopback: unshared.joined,
        proxy_port: None,
        overlay,
    })
}

/// Become the holder of a workspace's shared loopback (a process that does nothing else and
/// lives as long as the workspace's supervisor): a network namespace of its own, in a user
/// namespace of its own unless it is root, with the loopback up and no other interface.
pub fn hold_loopback() -> Result<(), String> {
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    if !uid.is_root() || unshare(CloneFlags::CLONE_NEWNET).is_err() {
        unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET)
            .map_err(|e| format!("unshare: {e}"))?;
        map_ids(uid.as_raw(), gid.as_raw())?;
    }
    super::sys::loopback_up().map_err(|e| format!("bringing the loopback up: {e}"))
}

/// Join the network namespace of the loopback's holder (and, when it has one, its user
/// namespace first, where we hold every capability as its owner). The holder is checked to
/// be the process that was recorded (its start time, after its namespace was opened), and the
/// namespace to hold no interface but the loopback: a namespace that leads anywhere else is
/// never joined. Whether we are now in the holder's user namespace.
fn join_loopback(pid: i32, start: u64) -> Result<bool, String> {
    use nix::sched::setns;
    let open = |ns: &str| {
        std::fs::File::open(format!("/proc/{pid}/ns/{ns}")).map_err(|e| format!("{ns}: {e}"))
    };
    let net = open("net")?;
    let user = open("user")?;
    let ours = std::fs::File::open("/proc/self/ns/net").map_err(|e| format!("own net: {e}"))?;
    if crate::proctable::start_time(pid) != Some(start) {
        return Err("the loopback's holder is gone".into());
    }
    let link = |p: String| std::fs::read_link(p).ok();
    let own_user = link(format!("/proc/{pid}/ns/user")) != link("/proc/self/ns/user".into());
    if own_user {
        setns(&user, CloneFlags::CLONE_NEWUSER).map_err(|e| format!("setns(user): {e}"))?;
    }
    setns(&net, CloneFlags::CLONE_NEWNET).map_err(|e| format!("setns(net): {e}"))?;
    let devices = std::fs::read_to_string("/proc/self/net/dev").unwrap_or_default();
    let names: Vec<&str> = devices
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    if names != ["lo"] {
        if own_user {
            // No way back to the user namespace we left: this process must not go on.
            std::process::exit(super::launch::SETUP_FAILED);
        }
        setns(&ours, CloneFlags::CLONE_NEWNET).map_err(|e| format!("setns(net) back: {e}"))?;
        return Err(format!(
            "the shared loopback holds other interfaces: {names:?}"
        ));
    }
    Ok(own_user)
}

/// Map our ids to themselves in the user namespace just made. A non-dumpable process's
/// /proc/self files belong to root of the namespace it was started in, so a user other than
/// root could not open them for writing: dumpable while they are written (nothing of the
/// command exists yet), then as it was.
fn map_ids(uid: u32, gid: u32) -> Result<(), String> {
    let dumpable = nix::sys::prctl::get_dumpable().unwrap_or(false);
    if !dumpable {
        nix::sys::prctl::set_dumpable(true).map_err(|e| format!("prctl(PR_SET_DUMPABLE): {e}"))?;
    }
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| format!("writing {file}: {e}"))
    };
    let written = write("/proc/self/setgroups", "deny".into())
        .and_then(|()| write("/proc/self/uid_map", format!("{uid} {uid} 1\n")))
        .and_then(|()| write("/proc/self/gid_map", format!("{gid} {gid} 1\n")));
    if !dumpable {
        nix::sys::prctl::set_dumpable(false).map_err(|e| format!("prctl(PR_SET_DUMPABLE): {e}"))?;
    }
    written
}

type Mounted = (Option<PathBuf>, Option<Result<(), String>>);

// Long: the mounts of the command's view in the order they must be made (private, the overlay,
// the read-only world, /dev, the writable places, the executable ones, the denied programs
// covered, the links pinned, the read-only binds): each applies on top of those before it.
fn build_mounts(req: &Request<'_>) -> Result<Mounted, String> {
    let none: Option<&str> = None;
    let err =
        |what: &str, p: &Path, e: &dyn std::fmt::Display| format!("{what} {}: {e}", p.display());
    let root = Path::new("/");
    mount(
        none,
        root,
        none,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        none,
    )
    .map_err(|e| err("making mounts private at", root, &e))?;
    // First of all, while the upper layer's file system is still writable here: every mount
    // below applies on top of the overlay as it did on the workspace.
    let overlay = req
        .overlay
        .map(|spec| super::overlay::mount_over(req.cwd, spec));
    super::costs::mark("overlay-mount");
    if let (Some(spec), Some(Err(_))) = (req.overlay, &overlay) {
        // The command writes the workspace itself: the protected paths the upper layer was to
        // hold are held there (bound read-only below), while it is still writable here.
        super::overlay::place_in_workspace(spec);
    }
    mount_setattr(
        root,
        true,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NODEV,
        0,
    )
    .map_err(|e| err("read-only", root, &e))?;
    // Every device node is unusable (a disk cannot be opened, whatever its permissions),
    // except the harmless ones programs expect.
    // One that does not exist is told by the bind itself (as below): no stat first.
    for dev in HARMLESS_DEVICES.iter().map(Path::new) {
        match mount(Some(dev), dev, none, MsFlags::MS_BIND, none) {
            Ok(()) => {}
            Err(nix::errno::Errno::ENOENT) => continue,
            Err(e) => return Err(err("binding", dev, &e)),
        }
        mount_setattr(dev, false, 0, MOUNT_ATTR_NODEV).map_err(|e| err("device", dev, &e))?;
    }
    for w in req.write {
        bind(w, false).map_err(|e| err("binding writable", w, &e))?;
    }
    for x in req.exec {
        // A writable place bound just above (the workspace, the temp dir) is a mount already:
        // it needs only its noexec taken away.
        if req.write.contains(x) {
            mount_setattr(x, true, 0, MOUNT_ATTR_NOEXEC).map_err(|e| err("executable", x, &e))?;
            continue;
        }
        // A helper directory that does not exist yet, or a file that went away: skipped
        // (then it cannot execute, which is the safe side). Asked of the bind itself rather
        // than with a stat first: one system call less per program, on every call.
        match mount(Some(x), x, none, MsFlags::MS_BIND | MsFlags::MS_REC, none) {
            Ok(()) => {}
            Err(nix::errno::Errno::ENOENT) => continue,
            Err(e) => return Err(err("binding executable", x, &e)),
        }
        mount_setattr(x, true, 0, MOUNT_ATTR_NOEXEC).map_err(|e| err("executable", x, &e))?;
    }
    for x in req.cover_exec {
        // A device is no program (execve: EACCES), reads find nothing and writes go nowhere.
        // One that went away since the runner looked is nothing to run.
        match mount(Some("/dev/null"), x, none, MsFlags::MS_BIND, none) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => return Err(err("covering the denied program", x, &e)),
        }
    }
    super::costs::mark("world-devices-exec-binds-deny-covers");
    let shm = private_shm();
    for p in req.pin {
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            pin_link(p).map_err(|e| err("pinning the link", p, &e))?;
        }
        // What a link leads to as well: a directory renamed away behind the link would let
        // one with planted files take its place.
        if p.is_dir() {
            mount(Some(p), p, none, MsFlags::MS_BIND, none).map_err(|e| err("pinning", p, &e))?;
        }
    }
    // A protected path that is a placeholder in the overlay's upper layer is named twice (as
    // protected, and as placed there): bound once, for a mount fewer to make and tear down.
    let mut bound = std::collections::HashSet::new();
    for p in req.read_only {
        if !bound.insert(p) {
            continue;
        }
        // Gone since the runner looked (or never there): nothing to hold. Told by the bind
        // itself rather than a stat first, one system call less per path on every call.
        bind_if_there(p, true).map_err(|e| err("binding read-only", p, &e))?;
    }
    // The working directory still points into the mount that was there before the binds.
    std::env::set_current_dir(req.cwd).map_err(|e| err("entering", req.cwd, &e))?;
    if let (Some(spec), Some(Ok(()))) = (req.overlay, &overlay) {
        super::overlay::settle(spec);
    }
    Ok((shm, overlay))
}

/// Make the symbolic link `path` a mount point of itself: it still leads where it led, and
/// it cannot be removed, renamed or replaced (EBUSY). `mount` follows a link it is given by
/// name; given `/proc/self/fd/N` for a handle on the link itself (`O_PATH | O_NOFOLLOW`), it
/// stops at the link.
fn pin_link(path: &Path) -> nix::Result<()> {
    use nix::fcntl::{open, OFlag};
    use std::os::fd::AsRawFd;
    let fd = open(
        path,
        OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    let by_handle = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    let none: Option<&str> = None;
    mount(Some(&by_handle), &by_handle, none, MsFlags::MS_BIND, none)
}

/// Bind `path` onto itself, writable (nodev, nosuid) or read-only.
fn bind(path: &Path, read_only: bool) -> std::io::Result<()> {
    bind_mount(path)?;
    bound_as(path, read_only)
}

/// Bind `path` (and the mounts beneath it) onto itself.
fn bind_mount(path: &Path) -> nix::Result<()> {
    let none: Option<&str> = None;
    mount(
        Some(path),
        path,
        none,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        none,
    )
}

/// [`bind`], nothing where `path` does not exist (the bind said so: nothing was mounted). Any
/// other failure, of the bind or of its attributes, is an error.
fn bind_if_there(path: &Path, read_only: bool) -> std::io::Result<()> {
    match bind_mount(path) {
        Ok(()) => bound_as(path, read_only),
        Err(nix::errno::Errno::ENOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The attributes of a bind of `path` just made: nodev and nosuid, and read-only or writable.
fn bound_as(path: &Path, read_only: bool) -> std::io::Result<()> {
    let (set, clear) = if read_only {
        (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)
    } else {
        (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, MOUNT_ATTR_RDONLY)
    };
    mount_setattr(path, true, set, clear)
}

/// A private, small /dev/shm (POSIX shared memory and semaphores keep working without the
/// host's /dev/shm being writable). None when it cannot be mounted; then shm is read-only.
fn private_shm() -> Option<PathBuf> {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return None;
    }
    mount(
        Some("tmpfs"),
        shm,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("size=64m,mode=1777"),
    )
    .ok()
    .map(|_| shm.to_path_buf())
}

/// Mount a /proc for the new PID namespace (called by its first process): the command sees
/// only its own processes, not the host's (whose environments could hold secrets).
pub fn mount_proc() -> Result<(), String> {
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|e| format!("mounting /proc: {e}"))
}

/// Forbid executing anonymous memory files in this PID namespace (called by its first
/// process, after [`mount_proc`]): with vm.memfd_noexec = 2 every memfd is created sealed
/// without the execute bits and `MFD_EXEC` is refused, so a program copied into memory
/// (memfd_create + fexecve, or execve of /proc/self/fd/N) cannot run, whatever path the
/// exec takes. The setting is per PID namespace (Linux 6.3+), inherited by nested ones, which
/// cannot lower it; writing it needs CAP_SYS_ADMIN in the namespace (dropped before the
/// command runs) and, for /proc/sys's file mode, the host's root. Where it cannot be
/// written, the seccomp layer refuses memfd_create without MFD_NOEXEC_SEAL instead
/// (src/shell/confine.rs): the kernel's own switch is preferred because ordinary uses of
/// memfd (data buffers, shared memory) keep working under it.
pub fn seal_memfd_exec() -> bool {
    std::fs::write("/proc/sys/vm/memfd_noexec", "2").is_ok()
}

/// Forbid new user namespaces beneath the command's own (called by the PID namespace's first
/// process, only in a user namespace the launcher made or joined, never the host's): with
/// `user.max_user_namespaces = 0` in this namespace, creating one in it or beneath it fails
/// with ENOSPC. The limit is per user namespace and checked in every ancestor of a new one;
/// writing it needs CAP_SYS_RESOURCE here, which the command does not keep. The seccomp layer
/// refuses the same first (EPERM: src/shell/seccomp.rs); this holds where it is not in force.
/// Where the file cannot be written (no /proc of the namespace's own), seccomp stands alone.
pub fn forbid_user_namespaces() {
    let _ = std::fs::write("/proc/sys/user/max_user_namespaces", "0");
}

/// The pathname sockets bound in this network namespace (a socket bound through /proc as the
/// directory it lies in: read before leaving the host's user namespace, which lets it be).
fn host_unix_sockets() -> Vec<PathBuf> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = table
        .lines()
        .skip(1)
        // Num RefCount Protocol Flags Type St Inode Path: the path is the rest of the line.
        .filter_map(|line| {
            let mut rest = line;
            let mut inode = "";
            for _ in 0..7 {
                let (field, after) = rest.trim_start().split_once(' ')?;
                inode = field;
                rest = after;
            }
            let path = Path::new(rest.trim_start());
            if path.starts_with("/proc") {
                return bound_through_proc(path, inode);
            }
            path.is_absolute().then(|| path.to_path_buf())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Where a socket bound through a descriptor (`/proc/self/fd/N/name`, as conmon binds the
/// attach sockets of Podman's containers to get past the length limit of a socket path) really
/// is. The listed path names the binder's descriptor N; in the command's view it would name the
/// command's own, so it is turned into the directory that descriptor is open on: the binder is
/// the process holding the socket (`socket:[INODE]` among its descriptors). None when the
/// binder cannot be found or read (gone, or another user's process seen by a non-root caller).
fn bound_through_proc(path: &Path, inode: &str) -> Option<PathBuf> {
    let mut parts = path.strip_prefix("/proc").ok()?.components();
    let owner = parts.next()?.as_os_str().to_str()?.to_string();
    if parts.next()?.as_os_str() != "fd" {
        return None;
    }
    let fd = parts.next()?.as_os_str().to_str()?.to_string();
    let rest = parts.as_path().to_path_buf();
    let holder = if owner == "self" || owner == "thread-self" {
        socket_holder(inode)?
    } else {
        owner
    };
    let dir = std::fs::read_link(format!("/proc/{holder}/fd/{fd}")).ok()?;
    dir.is_absolute().then(|| dir.join(rest))
}

/// The process that holds the socket whose inode is `inode`.
fn socket_holder(inode: &str) -> Option<String> {
    let wanted = format!("socket:[{inode}]");
    crate::proctable::pids()
        .find(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == wanted.as_str())
                })
        })
        .map(|pid| pid.to_string())
}

/// Bind /dev/null over each socket: it stays visible, and connecting to it is refused.
fn cover_sockets(sockets: &[PathBuf]) -> Result<(), String> {
    let none: Option<&str> = None;
    for s in sockets {
        match mount(Some("/dev/null"), s, none, MsFlags::MS_BIND, none) {
            // Gone since the table was read, or in a place this mount view cannot reach (a
            // component that is no directory here).
            Ok(())
            | Err(nix::errno::Errno::ENOENT)
            | Err(nix::errno::Errno::EACCES)
            | Err(nix::errno::Errno::ENOTDIR) => {}
            Err(e) => return Err(format!("covering the socket {}: {e}", s.display())),
        }
    }
    Ok(())
}
