//! The seccomp layer: the system calls a sandboxed command cannot make. The launcher applies it
//! to itself last (src/shell/confine.rs), so it holds for every process of the command, and
//! nothing the command stacks on top can undo it (an errno outranks every later filter's
//! user notification or trace).
//!
//! It is a list of refusals, not of permissions: what it does not name is left to the other
//! layers. A refused call fails with an errno and never kills the process, so a program sees a
//! kernel that says no, as under Docker's default profile, and can go another way:
//!
//! - EPERM, whatever the arguments: the groups of [`REFUSED`], each with the reason a
//!   contained program has no use for it;
//! - EPERM, by argument ([`by_argument`]): `unshare` and `clone` with a `CLONE_NEW*` flag,
//!   `personality` with a flag that weakens the process, lowering RLIMIT_CORE, and, where the
//!   PID namespace could not forbid executable memory files, `memfd_create` without
//!   `MFD_NOEXEC_SEAL`;
//! - ENOSYS ([`unsupported`]): `clone3`, and on x86-64 the x32 ABI;
//! - EACCES, with `network = false` ([`no_network`]): `socket()` of the families that leave
//!   the machine or the namespace.
//!
//! Built with `seccompiler` (as Firecracker and Codex build theirs), but for the ENOSYS
//! filter, which compares the call's number by range. A call the filters leave alone whatever
//! its arguments costs nothing per call: the kernel notes it as allowed when the filter is
//! attached and no longer runs the filters for it (Linux 5.11+).

use std::collections::BTreeMap;

use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule,
};

/// A group of calls refused with EPERM whatever their arguments, and why.
pub struct Group {
    /// How the `sandbox` field of a result names the group (empty: not named there).
    pub label: &'static str,
    /// Why a contained program has no use for these calls.
    pub why: &'static str,
    pub calls: &'static [(&'static str, i64)],
}

/// `open_tree_attr` (Linux 6.15): newer than the libc crate; since Linux 5.1 a new call has
/// the same number on every architecture.
const SYS_OPEN_TREE_ATTR: i64 = 467;

/// Calls that exist on x86-64 only.
#[cfg(target_arch = "x86_64")]
const X86_ONLY: &[(&str, i64)] = &[
    ("iopl", libc::SYS_iopl),
    ("ioperm", libc::SYS_ioperm),
    ("uselib", libc::SYS_uselib),
];
#[cfg(not(target_arch = "x86_64"))]
const X86_ONLY: &[(&str, i64)] = &[];

pub const REFUSED: &[Group] = &[
    Group {
        label: "ptrace",
        why: "tracing or injecting into another process, the PID namespace's init included",
        calls: &[("ptrace", libc::SYS_ptrace)],
    },
    Group {
        label: "keyrings",
        why: "the caller's session and user keyrings",
        calls: &[
            ("keyctl", libc::SYS_keyctl),
            ("add_key", libc::SYS_add_key),
            ("request_key", libc::SYS_request_key),
        ],
    },
    Group {
        label: "namespaces",
        why: "joining another namespace (the launcher joins what it must before the filter)",
        calls: &[("setns", libc::SYS_setns)],
    },
    Group {
        label: "mounts",
        why: "the command's view of the files is built before it runs and is not its to change \
              (every mount it would need, the launcher made)",
        calls: &[
            ("mount", libc::SYS_mount),
            ("umount2", libc::SYS_umount2),
            ("pivot_root", libc::SYS_pivot_root),
            ("open_tree", libc::SYS_open_tree),
            ("open_tree_attr", SYS_OPEN_TREE_ATTR),
            ("move_mount", libc::SYS_move_mount),
            ("fsopen", libc::SYS_fsopen),
            ("fsconfig", libc::SYS_fsconfig),
            ("fsmount", libc::SYS_fsmount),
            ("fspick", libc::SYS_fspick),
            ("mount_setattr", libc::SYS_mount_setattr),
        ],
    },
    Group {
        label: "bpf, perf, userfaultfd, io_uring",
        why: "kernel interfaces that builds and tests do not need and that keep giving \
              privilege escalations: eBPF programs and maps, performance events, userfaultfd \
              (a page fault held open is the usual way to win a race in the kernel), io_uring \
              (its operations bypass seccomp)",
        calls: &[
            ("bpf", libc::SYS_bpf),
            ("perf_event_open", libc::SYS_perf_event_open),
            ("userfaultfd", libc::SYS_userfaultfd),
            ("io_uring_setup", libc::SYS_io_uring_setup),
            ("io_uring_enter", libc::SYS_io_uring_enter),
            ("io_uring_register", libc::SYS_io_uring_register),
        ],
    },
    Group {
        label: "file handles",
        why: "opening a file by its handle passes by the path (how Docker's \"shocker\" left \
              its container); a handle is good for nothing else",
        calls: &[
            ("name_to_handle_at", libc::SYS_name_to_handle_at),
            ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ],
    },
    Group {
        label: "fanotify",
        why: "watching whole file systems and mounts, beyond the command's own files",
        calls: &[("fanotify_init", libc::SYS_fanotify_init)],
    },
    Group {
        label: "system administration",
        why: "the kernel's and the host's state: modules, kexec, reboot, swap, process \
              accounting, quotas, the clock, the host's names, the kernel log, hanging up a \
              terminal (each also needs a capability the command does not have)",
        calls: &[
            ("init_module", libc::SYS_init_module),
            ("finit_module", libc::SYS_finit_module),
            ("delete_module", libc::SYS_delete_module),
            ("kexec_load", libc::SYS_kexec_load),
            ("kexec_file_load", libc::SYS_kexec_file_load),
            ("reboot", libc::SYS_reboot),
            ("swapon", libc::SYS_swapon),
            ("swapoff", libc::SYS_swapoff),
            ("acct", libc::SYS_acct),
            ("quotactl", libc::SYS_quotactl),
            ("quotactl_fd", libc::SYS_quotactl_fd),
            ("settimeofday", libc::SYS_settimeofday),
            ("clock_settime", libc::SYS_clock_settime),
            ("sethostname", libc::SYS_sethostname),
            ("setdomainname", libc::SYS_setdomainname),
            ("syslog", libc::SYS_syslog),
            ("vhangup", libc::SYS_vhangup),
        ],
    },
    Group {
        label: "",
        why: "the machine's I/O ports, and calls kernels have dropped or never needed \
              (nfsservctl, lookup_dcookie, uselib)",
        calls: &[
            ("lookup_dcookie", libc::SYS_lookup_dcookie),
            ("nfsservctl", libc::SYS_nfsservctl),
        ],
    },
];

/// The groups' calls and the x86-only ones (which join the last group).
fn refused_calls() -> impl Iterator<Item = (&'static str, i64)> {
    REFUSED
        .iter()
        .flat_map(|g| g.calls.iter().copied())
        .chain(X86_ONLY.iter().copied())
}

/// `CLONE_NEWTIME` (Linux 5.6), newer than the libc crate.
const CLONE_NEWTIME: i32 = 0x80;

/// The namespace flags of `clone` (whose low byte is the exit signal, so `CLONE_NEWTIME`, which
/// only `unshare` and `clone3` take, is not among them).
const CLONE_NAMESPACES: &[i32] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The `personality` values a program may set, as Docker's default profile allows them:
/// PER_LINUX, PER_LINUX32, UNAME26, both, and the query. The flags left out make readable
/// memory executable (READ_IMPLIES_EXEC), map page zero (MMAP_PAGE_ZERO, the way to exploit a
/// NULL dereference in the kernel), turn address randomization off (ADDR_NO_RANDOMIZE), or
/// bring other systems' ABIs along.
const PERSONALITIES: &[u64] = &[0, 0x0008, 0x0002_0000, 0x0002_0008, 0xffff_ffff];

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

fn backend(err: seccompiler::BackendError) -> String {
    err.to_string()
}

fn dword(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(backend)
}

fn qword(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, SeccompCmpArgLen::Qword, op, value).map_err(backend)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(backend)
}

/// One rule per flag: the call matches when any of them is set.
fn any_flag(index: u8, flags: &[i32]) -> Result<Vec<SeccompRule>, String> {
    flags
        .iter()
        .map(|&flag| {
            let bit = flag as u32 as u64;
            rule(vec![dword(index, SeccompCmpOp::MaskedEq(bit), bit)?])
        })
        .collect()
}

/// The calls refused with EPERM only with some arguments.
///
/// - `unshare` and `clone` with any `CLONE_NEW*` flag: a new user namespace gives every
///   capability back inside it, and with them mounts, the other namespaces and the kernel code
///   behind them (netfilter, new file systems) that unprivileged exploits reach this way; the
///   other namespaces need CAP_SYS_ADMIN, which the command does not have. Flags are a 32-bit
///   `int` (`unshare`) or the low half of `clone`'s first argument (the kernel reads no more).
/// - `personality` other than [`PERSONALITIES`].
/// - `setrlimit(RLIMIT_CORE, …)` and `prlimit64(pid, RLIMIT_CORE, new, …)` with a new value:
///   no core dumps (see confine.rs's `limits`); reading the limit stays allowed.
/// - `memfd_create` without `MFD_NOEXEC_SEAL` where the PID namespace could not seal memory
///   files itself (src/shell/namespaces.rs, `seal_memfd_exec`).
fn by_argument(memfd_sealed: bool) -> Result<Rules, String> {
    let mut unshare_flags = CLONE_NAMESPACES.to_vec();
    unshare_flags.push(CLONE_NEWTIME);
    let core = libc::RLIMIT_CORE as u64;
    let other_personality = PERSONALITIES
        .iter()
        .map(|&p| dword(0, SeccompCmpOp::Ne, p))
        .collect::<Result<Vec<_>, String>>()?;
    let mut rules: Rules = [
        (libc::SYS_unshare, any_flag(0, &unshare_flags)?),
        (libc::SYS_clone, any_flag(0, CLONE_NAMESPACES)?),
        (libc::SYS_personality, vec![rule(other_personality)?]),
        (
            libc::SYS_setrlimit,
            vec![rule(vec![qword(0, SeccompCmpOp::Eq, core)?])?],
        ),
        (
            libc::SYS_prlimit64,
            vec![rule(vec![
                qword(1, SeccompCmpOp::Eq, core)?,
                qword(2, SeccompCmpOp::Ne, 0)?,
            ])?],
        ),
    ]
    .into_iter()
    .collect();
    if !memfd_sealed {
        let seal = libc::MFD_NOEXEC_SEAL as u64;
        rules.insert(
            libc::SYS_memfd_create,
            vec![rule(vec![qword(1, SeccompCmpOp::MaskedEq(seal), 0)?])?],
        );
    }
    Ok(rules)
}

/// Apply every filter to this process: the refusals with EPERM, the ENOSYS one, and with
/// `families` not empty, `socket()` of those families refused with EACCES. What is refused, in
/// words, for the `sandbox` field of a result.
pub fn apply(memfd_sealed: bool, families: &[i32]) -> Result<String, String> {
    let mut rules = by_argument(memfd_sealed)?;
    for (_, nr) in refused_calls() {
        rules.insert(nr, Vec::new());
    }
    install(rules, libc::EPERM)?;
    seccompiler::apply_filter(&unsupported()?).map_err(|e| e.to_string())?;
    let mut refused: Vec<String> = REFUSED
        .iter()
        .filter(|g| !g.label.is_empty())
        .map(|g| g.label.to_string())
        .collect();
    refused.push("core limit changes".into());
    if !memfd_sealed {
        refused.push("executable memfd".into());
    }
    if !families.is_empty() {
        install(no_network(families)?, libc::EACCES)?;
        let names: Vec<&str> = families.iter().map(|&f| family_name(f)).collect();
        refused.push(format!("{} sockets", names.join("/")));
    }
    Ok(format!("{} refused", refused.join(", ")))
}

fn family_name(family: i32) -> &'static str {
    match family {
        libc::AF_INET => "AF_INET",
        libc::AF_INET6 => "AF_INET6",
        libc::AF_PACKET => "AF_PACKET",
        libc::AF_VSOCK => "AF_VSOCK",
        _ => "other",
    }
}

/// The rules of one filter, each match failing with `errno`, the rest allowed.
fn install(rules: Rules, errno: i32) -> Result<(), String> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch()?,
    )
    .map_err(backend)?;
    let program: BpfProgram = filter.try_into().map_err(backend)?;
    seccompiler::apply_filter(&program).map_err(|err| err.to_string())
}

fn arch() -> Result<seccompiler::TargetArch, String> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|err: seccompiler::BackendError| err.to_string())
}

/// `socket()` of these families. AF_VSOCK is not network-namespaced (it reaches a VM's host)
/// and AF_PACKET reaches the interfaces below IP: both are refused even on a loopback-only
/// namespace.
fn no_network(families: &[i32]) -> Result<Rules, String> {
    let socket = families
        .iter()
        .map(|&f| rule(vec![dword(0, SeccompCmpOp::Eq, f as u64)?]))
        .collect::<Result<Vec<_>, String>>()?;
    Ok([(libc::SYS_socket, socket)].into_iter().collect())
}

/// The audit architecture the kernel reports for this process's calls (linux/audit.h).
fn audit_arch() -> Result<u32, String> {
    const EM_X86_64: u32 = 62;
    const EM_AARCH64: u32 = 183;
    const ARCH_64BIT_LE: u32 = 0x8000_0000 | 0x4000_0000;
    match std::env::consts::ARCH {
        "x86_64" => Ok(EM_X86_64 | ARCH_64BIT_LE),
        "aarch64" => Ok(EM_AARCH64 | ARCH_64BIT_LE),
        other => Err(format!("no seccomp filter for {other}")),
    }
}

/// Bit 30 of an x86-64 call's number selects the x32 ABI, under the same audit architecture.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The ENOSYS filter, written out because it compares a number by range:
///
/// - `clone3`: its flags are in memory, which seccomp cannot read, so it cannot be refused for
///   its namespace flags alone; a C library that gets ENOSYS falls back to `clone`, whose flags
///   the EPERM filter reads (as under Docker and Chromium).
/// - On x86-64, every call of the x32 ABI: the kernel reports it under x86-64's audit
///   architecture with the number's bit 30 set, so rules written for x86-64's numbers would not
///   see it (where the kernel has x32 enabled, `ptrace` would be number 521 | bit 30). ENOSYS is
///   what a kernel without x32 answers.
///
/// Calls of another architecture (i386's `int 0x80`) are left to the seccompiler filters,
/// which kill the process.
fn unsupported() -> Result<BpfProgram, String> {
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    let load = |offset: u32| sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: offset,
    };
    let jump = |op: u32, k: u32, jt: u8, jf: u8| sock_filter {
        code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let ret = |k: u32| sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let allow = libc::SECCOMP_RET_ALLOW;
    let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    let mut program = vec![
        load(ARCH),
        jump(libc::BPF_JEQ, audit_arch()?, 1, 0),
        ret(allow),
        load(NR),
    ];
    if cfg!(target_arch = "x86_64") {
        program.push(jump(libc::BPF_JGE, X32_SYSCALL_BIT, 2, 0));
    }
    program.extend([
        jump(libc::BPF_JEQ, libc::SYS_clone3 as u32, 1, 0),
        ret(allow),
        ret(enosys),
    ]);
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refused_call_is_named_once_and_documented() {
        let doc = include_str!("../../docs/sandbox.md");
        let mut seen = std::collections::BTreeSet::new();
        for (name, nr) in refused_calls() {
            assert!(seen.insert(nr), "{name} ({nr}) is listed twice");
            assert!(
                doc.contains(&format!("`{name}`")),
                "docs/sandbox.md does not name `{name}`"
            );
        }
        for name in ["clone", "clone3", "unshare", "personality"] {
            assert!(doc.contains(&format!("`{name}`")), "{name}");
        }
    }

    #[test]
    fn no_refused_call_is_also_refused_by_argument() {
        let conditional = by_argument(false).expect("rules");
        for (name, nr) in refused_calls() {
            assert!(!conditional.contains_key(&nr), "{name}");
        }
    }

    #[test]
    fn every_filter_compiles() {
        let mut rules = by_argument(false).expect("rules");
        for (_, nr) in refused_calls() {
            rules.insert(nr, Vec::new());
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch().expect("arch"),
        )
        .expect("filter");
        let program: BpfProgram = filter.try_into().expect("program");
        assert!(program.len() < 4096, "{}", program.len());
        let enosys = unsupported().expect("enosys");
        assert_eq!(
            enosys.len(),
            if cfg!(target_arch = "x86_64") { 8 } else { 7 }
        );
    }
}
