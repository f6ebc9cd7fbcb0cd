//! The process-level layers the launcher applies to itself just before the shell runs (they
//! hold for every descendant): rlimits, no capabilities, Landlock, seccomp.
//!
//! Landlock (best effort up to ABI 7): read beneath the read paths (default `/`) without the
//! execute right; execute only on the exec set (src/shell/executables.rs); every right but
//! execute and making device nodes beneath the workspace root, the private temporary
//! directory and configured write paths; read and write on `/dev/null`; no TCP bind/connect
//! when `network = false`; signals and abstract UNIX sockets scoped to the sandbox (ABI 6+),
//! so a command can neither signal nor talk to the agent.
//!
//! On a loopback-only network namespace (the workspace's shared loopback, src/shell/jobs, or
//! one holding a host list's proxy bridge, src/shell/proxy.rs), TCP and UDP stay, on that
//! loopback only; the rest of the `network = false` rules hold.
//!
//! seccomp, always (src/shell/seccomp.rs): new namespaces, mounts, ptrace, keyrings, bpf,
//! perf events, userfaultfd, io_uring and the kernel's administration refused, and lowering
//! RLIMIT_CORE (see [`limits`]); with `network = false`, `socket()` of the families that leave
//! the namespace or the machine.

use std::path::{Path, PathBuf};

use caps::CapSet;
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use nix::sys::resource::{setrlimit, Resource};

use super::launch::LaunchSpec;
use super::seccomp;

/// The Landlock ABI the ruleset is written for (this kernel's; older kernels get less, newer
/// ones the same).
const TARGET_ABI: ABI = ABI::V7;

/// What was applied.
pub struct Confined {
    pub landlock: String,
    pub abi: Option<i32>,
    pub seccomp: String,
    pub seccomp_ok: bool,
}

/// Apply every process-level layer to this process. `write` is the spec's write list plus
/// what the namespace layer added (a private /dev/shm).
/// `memfd_sealed`: the PID namespace already forbids executing memory files. `bridged`: the
/// command is in a network namespace whose only interface is a loopback (the workspace's
/// shared one: src/shell/jobs, or one holding the host list's proxy bridge:
/// src/shell/proxy.rs), so TCP and UDP stay usable there (nothing else is reachable).
pub fn apply(
    spec: &LaunchSpec,
    write: &[PathBuf],
    memfd_sealed: bool,
    bridged: bool,
) -> Result<Confined, String> {
    limits(spec)?;
    drop_capabilities();
    super::costs::mark("rlimits-capabilities");
    let no_network = !spec.network && !bridged;
    let (landlock, abi) =
        landlock(spec, write, no_network).map_err(|e| format!("landlock: {e}"))?;
    // AF_VSOCK reaches a VM's host and AF_PACKET the interfaces below IP: refused even on a
    // loopback-only namespace, where TCP and UDP stay.
    let families: &[i32] = if spec.network {
        &[]
    } else if bridged {
        &[libc::AF_PACKET, libc::AF_VSOCK]
    } else {
        &[
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_PACKET,
            libc::AF_VSOCK,
        ]
    };
    super::costs::mark("landlock");
    let (seccomp, seccomp_ok) = match seccomp::apply(memfd_sealed, families) {
        Ok(refused) => (refused, true),
        Err(e) => (format!("failed: {e}"), false),
    };
    super::costs::mark("seccomp");
    Ok(Confined {
        landlock,
        abi,
        seccomp,
        seccomp_ok,
    })
}

fn limits(spec: &LaunchSpec) -> Result<(), String> {
    let l = spec.limits;
    for (resource, value, key) in [
        (Resource::RLIMIT_NPROC, l.processes, "max_processes"),
        (Resource::RLIMIT_FSIZE, l.file_bytes, "max_file_bytes"),
        (Resource::RLIMIT_CPU, l.cpu_seconds, "max_cpu_seconds"),
        // No core dumps anywhere: 1 byte is less than a file dump's first page, and the
        // kernel refuses to hand a dump to a pipe handler (`|prog` in core_pattern) when the
        // limit is exactly 1, whereas 0 does not stop it. The hard limit is 1 too, and
        // seccomp refuses lowering it to 0.
        (Resource::RLIMIT_CORE, 1, "core"),
    ] {
        setrlimit(resource, value, value)
            .map_err(|e| format!("setting tools.shell.{key} ({value}): {e}"))?;
    }
    Ok(())
}

/// Every capability gone (bounding, inheritable, ambient, then permitted and effective):
/// as root, or as the user namespace's owner, the command would otherwise keep them.
/// Failures are ignored: a process without capabilities cannot drop any, which is the goal.
fn drop_capabilities() {
    for cap in caps::all() {
        let _ = caps::drop(None, CapSet::Bounding, cap);
    }
    let _ = caps::clear(None, CapSet::Ambient);
    let _ = caps::clear(None, CapSet::Inheritable);
    let _ = caps::clear(None, CapSet::Permitted);
}

fn landlock(
    spec: &LaunchSpec,
    write: &[PathBuf],
    no_network: bool,
) -> Result<(String, Option<i32>), String> {
    let abi = TARGET_ABI;
    let e = |err: landlock::RulesetError| err.to_string();
    let read: BitFlags<AccessFs> = AccessFs::from_read(abi) & !AccessFs::Execute;
    let writable: BitFlags<AccessFs> =
        AccessFs::from_all(abi) & !(AccessFs::Execute | AccessFs::MakeChar | AccessFs::MakeBlock);
    let exec_file: BitFlags<AccessFs> = AccessFs::Execute | AccessFs::ReadFile;
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(e)?;
    if no_network {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(e)?;
    }
    let mut created = ruleset
        .scope(Scope::from_all(abi))
        .map_err(e)?
        .create()
        .map_err(e)?;
    // A read grant that is gone since the runner looked (a background job's may be many
    // entries of directories taken apart, `spec::carve_reads`) grants nothing, which only
    // takes reading away.
    for path in &spec.read {
        // A file takes only a file's rights (a directory's would make the ruleset partial).
        let rights = if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            read
        } else {
            read & AccessFs::from_file(abi)
        };
        if let Ok(r) = rule(path, rights) {
            created = created.add_rule(r).map_err(e)?;
        }
    }
    for path in &spec.read_dirs {
        if let Ok(r) = rule(path, AccessFs::ReadDir.into()) {
            created = created.add_rule(r).map_err(e)?;
        }
    }
    for path in write {
        created = created.add_rule(rule(path, writable)?).map_err(e)?;
    }
    let dirs: std::collections::HashSet<&PathBuf> = spec.exec_dirs.iter().collect();
    for path in &spec.exec {
        // A directory of helpers: read it and execute beneath it.
        let rights = if dirs.contains(path) {
            exec_file | AccessFs::ReadDir
        } else {
            exec_file
        };
        if let Ok(r) = rule(path, rights) {
            created = created.add_rule(r).map_err(e)?;
        }
    }
    created = created
        .add_rules(path_beneath_rules(
            [Path::new("/dev/null")],
            AccessFs::from_file(abi) & !AccessFs::Execute,
        ))
        .map_err(e)?;
    let status = created.restrict_self().map_err(e)?;
    let abi_number = match status.landlock {
        landlock::LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.unwrap_or(effective_abi as i32)),
        _ => None,
    };
    let enforced = match status.ruleset {
        RulesetStatus::FullyEnforced => "full",
        RulesetStatus::PartiallyEnforced => "partial",
        RulesetStatus::NotEnforced => "none",
    };
    Ok((enforced.into(), abi_number))
}

fn rule(path: &Path, rights: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, String> {
    let fd = PathFd::new(path).map_err(|err| format!("{}: {err}", path.display()))?;
    Ok(PathBeneath::new(fd, rights))
}
