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
//! - ENOSYS: `clone3`, and on x86-64 the x32 ABI (see [`program`]);
//! - EACCES, with `network = false`: `socket()` of the families that leave the machine or the
//!   namespace.
//!
//! The filter is one classic BPF program written out here (`seccompiler` installs it): a
//! binary search over the call numbers, then the call's arguments where they decide. When a
//! filter is attached, the kernel runs it once for every call number to note the calls it
//! always allows (Linux 5.11+; a call so noted costs nothing per call afterwards): over a
//! chain of comparisons, as seccompiler generates them, that took 0.2 ms per command for these
//! calls, over the search a few microseconds (docs/sandbox.md, "Cost").

use seccompiler::{sock_filter, BpfProgram};

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
const CLONE_NEWTIME: u32 = 0x80;

/// The namespace flags of `clone` (whose low byte is the exit signal, so `CLONE_NEWTIME`, which
/// only `unshare` and `clone3` take, is not among them).
const CLONE_NAMESPACES: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// The `personality` values a program may set, as Docker's default profile allows them:
/// PER_LINUX, PER_LINUX32, UNAME26, both, and the query. The flags left out make readable
/// memory executable (READ_IMPLIES_EXEC), map page zero (MMAP_PAGE_ZERO, the way to exploit a
/// NULL dereference in the kernel), turn address randomization off (ADDR_NO_RANDOMIZE), or
/// bring other systems' ABIs along.
const PERSONALITIES: &[u32] = &[0, 0x0008, 0x0002_0000, 0x0002_0008, 0xffff_ffff];

/// A test of one argument of a call. Only the low 32 bits are read, except by [`Test::Set`]:
/// the arguments tested are `int`s or `unsigned int`s, of which the kernel reads no more (a
/// test of all 64 bits would let `setrlimit(RLIMIT_CORE | 1 << 32, …)` by).
#[derive(Debug, Clone)]
enum Test {
    /// Any of these bits is set.
    AnyBit(u8, u32),
    /// None of these bits is set.
    NoBit(u8, u32),
    /// The value is this one.
    Is(u8, u32),
    /// The value is one of these.
    OneOf(u8, Vec<u32>),
    /// The value is none of these.
    NoneOf(u8, Vec<u32>),
    /// The whole 64-bit argument (a pointer) is not 0.
    Set(u8),
}

/// What the filter answers a call with.
#[derive(Debug, Clone)]
struct Refusal {
    /// SECCOMP_RET_ERRNO with the errno.
    action: u32,
    /// All of these hold (none: always).
    when: Vec<Test>,
}

fn errno(errno: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA)
}

fn always(action: u32) -> Refusal {
    Refusal {
        action,
        when: Vec::new(),
    }
}

fn when(when: Vec<Test>) -> Refusal {
    Refusal {
        action: errno(libc::EPERM),
        when,
    }
}

/// The calls refused with EPERM only with some arguments.
///
/// - `unshare` and `clone` with any `CLONE_NEW*` flag: a new user namespace gives every
///   capability back inside it, and with them mounts, the other namespaces and the kernel code
///   behind them (netfilter, new file systems) that unprivileged exploits reach this way; the
///   other namespaces need CAP_SYS_ADMIN, which the command does not have. The kernel reads
///   `clone`'s flags from the argument's low half.
/// - `personality` other than [`PERSONALITIES`].
/// - `setrlimit(RLIMIT_CORE, …)` and `prlimit64(pid, RLIMIT_CORE, new, …)` with a new value:
///   no core dumps (see confine.rs's `limits`); reading the limit stays allowed.
/// - `memfd_create` without `MFD_NOEXEC_SEAL` where the PID namespace could not seal memory
///   files itself (src/shell/namespaces.rs, `seal_memfd_exec`).
fn by_argument(memfd_sealed: bool) -> Vec<(i64, Refusal)> {
    let core = libc::RLIMIT_CORE;
    let mut calls = vec![
        (
            libc::SYS_unshare,
            when(vec![Test::AnyBit(0, CLONE_NAMESPACES | CLONE_NEWTIME)]),
        ),
        (
            libc::SYS_clone,
            when(vec![Test::AnyBit(0, CLONE_NAMESPACES)]),
        ),
        (
            libc::SYS_personality,
            when(vec![Test::NoneOf(0, PERSONALITIES.to_vec())]),
        ),
        (libc::SYS_setrlimit, when(vec![Test::Is(0, core)])),
        (
            libc::SYS_prlimit64,
            when(vec![Test::Is(1, core), Test::Set(2)]),
        ),
    ];
    if !memfd_sealed {
        calls.push((
            libc::SYS_memfd_create,
            when(vec![Test::NoBit(1, libc::MFD_NOEXEC_SEAL)]),
        ));
    }
    calls
}

/// Every call the filter refuses, by number: the groups' calls (EPERM); `clone3` (ENOSYS: its
/// flags are in memory, which seccomp cannot read, so it cannot be refused for its namespace
/// flags alone; a C library that gets ENOSYS falls back to `clone`, whose flags are read, as
/// under Docker and Chromium); those of [`by_argument`]; `socket()` of `families` (EACCES).
fn refusals(memfd_sealed: bool, families: &[i32]) -> Result<Vec<(u32, Refusal)>, String> {
    let mut calls: Vec<(i64, Refusal)> = refused_calls()
        .map(|(_, nr)| (nr, always(errno(libc::EPERM))))
        .collect();
    calls.push((libc::SYS_clone3, always(errno(libc::ENOSYS))));
    calls.extend(by_argument(memfd_sealed));
    if !families.is_empty() {
        let families = families.iter().map(|&f| f as u32).collect();
        calls.push((
            libc::SYS_socket,
            Refusal {
                action: errno(libc::EACCES),
                when: vec![Test::OneOf(0, families)],
            },
        ));
    }
    let mut numbered = calls
        .into_iter()
        .map(|(nr, refusal)| {
            u32::try_from(nr)
                .map(|nr| (nr, refusal))
                .map_err(|_| format!("no call number {nr}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    numbered.sort_by_key(|(nr, _)| *nr);
    if numbered.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err("a call is refused twice".into());
    }
    Ok(numbered)
}

/// Apply the filter to this process, with `socket()` of `families` refused (none: the
/// network is on). What is refused, in words, for the `sandbox` field of a result.
pub fn apply(memfd_sealed: bool, families: &[i32]) -> Result<String, String> {
    let program = program(&refusals(memfd_sealed, families)?)?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())?;
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

/// Calls in a leaf of the search, compared one by one.
const LEAF: usize = 4;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

/// Where `struct seccomp_data` keeps the call's number, architecture and arguments (a little
/// endian machine's low half first).
const NR: u32 = 0;
const ARCH: u32 = 4;
fn low(arg: u8) -> u32 {
    16 + 8 * u32::from(arg)
}
fn high(arg: u8) -> u32 {
    low(arg) + 4
}

fn load(offset: u32) -> sock_filter {
    sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: offset,
    }
}

fn jump(op: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn ret(k: u32) -> sock_filter {
    sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

/// The filter. A call of another architecture (i386's `int 0x80` on x86-64) is killed: its
/// numbers are not these, so nothing here would hold for it. On x86-64, every call of the x32
/// ABI fails with ENOSYS: the kernel reports those under x86-64's audit architecture with the
/// number's bit 30 set, so a rule written for x86-64's numbers would not see them (where a
/// kernel has x32 enabled, `ptrace` is 521 | bit 30); ENOSYS is what a kernel without x32
/// answers. Then a binary search over `calls` (sorted by number) for the call's number.
fn program(calls: &[(u32, Refusal)]) -> Result<BpfProgram, String> {
    let mut program = vec![
        load(ARCH),
        jump(libc::BPF_JEQ, audit_arch()?, 1, 0),
        ret(KILL),
        load(NR),
    ];
    if cfg!(target_arch = "x86_64") {
        program.push(jump(libc::BPF_JGE, X32_SYSCALL_BIT, 0, 1));
        program.push(ret(errno(libc::ENOSYS)));
    }
    program.extend(search(calls)?);
    Ok(program)
}

/// A binary search over `calls` (sorted by number) for the loaded number: the call's refusal
/// when it is one of them, else ALLOW. Jumps go forward only, by at most 255 instructions.
fn search(calls: &[(u32, Refusal)]) -> Result<Vec<sock_filter>, String> {
    if calls.len() <= LEAF {
        let mut leaf = Vec::new();
        for (nr, refusal) in calls {
            let judge = judge(refusal)?;
            leaf.push(jump(libc::BPF_JEQ, *nr, 0, far(judge.len())?));
            leaf.extend(judge);
        }
        leaf.push(ret(ALLOW));
        return Ok(leaf);
    }
    let (below, above) = calls.split_at(calls.len() / 2);
    let first_above = above[0].0;
    let below = search(below)?;
    let above = search(above)?;
    let mut node = vec![jump(libc::BPF_JGE, first_above, far(below.len())?, 0)];
    node.extend(below);
    node.extend(above);
    Ok(node)
}

/// Where a test's jump goes: on to the next instruction, or to the end of the judgement (the
/// call is allowed: the test failed), or over `n` more instructions of the same test.
#[derive(Clone, Copy)]
enum To {
    Next,
    Allow,
    Skip(u8),
}

/// The instructions that judge one call by its arguments, ending in its refusal or ALLOW on
/// every path: each test falls through when it holds and jumps to ALLOW when it does not.
fn judge(refusal: &Refusal) -> Result<Vec<sock_filter>, String> {
    if refusal.when.is_empty() {
        return Ok(vec![ret(refusal.action)]);
    }
    // Each instruction with where its jumps go (a load's are not read).
    let mut code: Vec<(sock_filter, To, To)> = Vec::new();
    let load_low = |arg: u8| (load(low(arg)), To::Next, To::Next);
    let test = |op: u32, k: u32, jt: To, jf: To| (jump(op, k, 0, 0), jt, jf);
    for t in &refusal.when {
        match t {
            Test::AnyBit(arg, mask) => {
                code.push(load_low(*arg));
                code.push(test(libc::BPF_JSET, *mask, To::Next, To::Allow));
            }
            Test::NoBit(arg, mask) => {
                code.push(load_low(*arg));
                code.push(test(libc::BPF_JSET, *mask, To::Allow, To::Next));
            }
            Test::Is(arg, value) => {
                code.push(load_low(*arg));
                code.push(test(libc::BPF_JEQ, *value, To::Next, To::Allow));
            }
            Test::OneOf(arg, values) => {
                code.push(load_low(*arg));
                let last = values.len().saturating_sub(1);
                for (i, value) in values.iter().enumerate() {
                    // A match jumps past the remaining comparisons; no match at the last fails.
                    let (jt, jf) = if i == last {
                        (To::Next, To::Allow)
                    } else {
                        (To::Skip(far(last - i)?), To::Next)
                    };
                    code.push(test(libc::BPF_JEQ, *value, jt, jf));
                }
            }
            Test::NoneOf(arg, values) => {
                code.push(load_low(*arg));
                for value in values {
                    code.push(test(libc::BPF_JEQ, *value, To::Allow, To::Next));
                }
            }
            Test::Set(arg) => {
                code.push(load_low(*arg));
                code.push(test(libc::BPF_JEQ, 0, To::Next, To::Skip(2)));
                code.push((load(high(*arg)), To::Next, To::Next));
                code.push(test(libc::BPF_JEQ, 0, To::Allow, To::Next));
            }
        }
    }
    // The tests, then the refusal, then ALLOW.
    let allow_at = code.len() + 1;
    let mut judged = Vec::with_capacity(allow_at + 1);
    for (at, (mut insn, jt, jf)) in code.into_iter().enumerate() {
        let offset = |to: To| match to {
            To::Next => Ok(0),
            To::Skip(n) => Ok(n),
            To::Allow => far(allow_at - at - 1),
        };
        insn.jt = offset(jt)?;
        insn.jf = offset(jf)?;
        judged.push(insn);
    }
    judged.push(ret(refusal.action));
    judged.push(ret(ALLOW));
    Ok(judged)
}

/// A jump over `n` instructions, which classic BPF allows up to 255.
fn far(n: usize) -> Result<u8, String> {
    u8::try_from(n).map_err(|_| "the seccomp filter is too large".to_string())
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
        for name in [
            "clone",
            "clone3",
            "unshare",
            "personality",
            "setrlimit",
            "prlimit64",
        ] {
            assert!(doc.contains(&format!("`{name}`")), "{name}");
        }
    }

    /// Runs a seccomp program as the kernel would, over a call of architecture `arch`, number
    /// `nr` and arguments `args`, with the instructions [`program`] writes.
    fn run(program: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |offset: u32| match offset {
            NR => nr,
            ARCH => arch,
            o if o >= 16 && (o - 16) % 4 == 0 => {
                let arg = args[((o - 16) / 8) as usize];
                if (o - 16) % 8 == 0 {
                    arg as u32
                } else {
                    (arg >> 32) as u32
                }
            }
            o => panic!("load at {o}"),
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            pc += 1;
            let taken = |yes: bool| usize::from(if yes { i.jt } else { i.jf });
            match u32::from(i.code) {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => acc = word(i.k),
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => pc += taken(acc == i.k),
                c if c == libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K => pc += taken(acc >= i.k),
                c if c == libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K => {
                    pc += taken(acc & i.k != 0)
                }
                c if c == libc::BPF_RET | libc::BPF_K => return i.k,
                other => panic!("instruction {other:#x}"),
            }
        }
    }

    const NO_NETWORK: &[i32] = &[
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_PACKET,
        libc::AF_VSOCK,
    ];

    /// The filter's answer to a call with these arguments (the rest 0).
    fn answer(memfd_sealed: bool, families: &[i32], nr: i64, args: &[u64]) -> u32 {
        let program = program(&refusals(memfd_sealed, families).expect("calls")).expect("program");
        let mut all = [0u64; 6];
        all[..args.len()].copy_from_slice(args);
        run(&program, audit_arch().expect("arch"), nr as u32, all)
    }

    #[test]
    fn calls_refused_whatever_their_arguments() {
        let eperm = errno(libc::EPERM);
        let conditional: Vec<i64> = by_argument(false).iter().map(|(nr, _)| *nr).collect();
        let mut refused: Vec<u32> = refused_calls().map(|(_, nr)| nr as u32).collect();
        refused.sort_unstable();
        for nr in 0..1024u32 {
            if conditional.contains(&i64::from(nr)) || i64::from(nr) == libc::SYS_socket {
                continue;
            }
            let expected = if refused.binary_search(&nr).is_ok() {
                eperm
            } else if i64::from(nr) == libc::SYS_clone3 {
                errno(libc::ENOSYS)
            } else {
                ALLOW
            };
            for args in [[0u64; 6], [u64::MAX; 6]] {
                let got = answer(false, NO_NETWORK, i64::from(nr), &args);
                assert_eq!(got, expected, "call {nr} with {args:?}");
            }
        }
        let program = program(&refusals(false, &[]).expect("calls")).expect("program");
        let arch = audit_arch().expect("arch");
        let x32 = if cfg!(target_arch = "x86_64") {
            errno(libc::ENOSYS)
        } else {
            ALLOW
        };
        assert_eq!(run(&program, arch, 0x4000_0000 | 521, [0; 6]), x32);
        // Another architecture's numbers mean other calls: killed.
        assert_eq!(run(&program, 0x4000_0003, 39, [0; 6]), KILL);
    }

    #[test]
    fn calls_refused_by_their_arguments() {
        let eperm = errno(libc::EPERM);
        let new = |flag: i32| flag as u32 as u64;
        let sigchld = libc::SIGCHLD as u64;
        let cases: &[(i64, &[u64], u32)] = &[
            (libc::SYS_unshare, &[new(libc::CLONE_NEWUSER)], eperm),
            (libc::SYS_unshare, &[new(libc::CLONE_NEWNS)], eperm),
            (libc::SYS_unshare, &[0x80], eperm),
            (libc::SYS_unshare, &[new(libc::CLONE_FILES)], ALLOW),
            (libc::SYS_unshare, &[0], ALLOW),
            (
                libc::SYS_clone,
                &[new(libc::CLONE_NEWUSER) | sigchld],
                eperm,
            ),
            (libc::SYS_clone, &[new(libc::CLONE_NEWNET) | sigchld], eperm),
            (libc::SYS_clone, &[sigchld], ALLOW),
            (libc::SYS_clone, &[0x80], ALLOW),
            (
                libc::SYS_clone,
                &[new(libc::CLONE_VM | libc::CLONE_VFORK) | sigchld],
                ALLOW,
            ),
            (libc::SYS_personality, &[0], ALLOW),
            (libc::SYS_personality, &[8], ALLOW),
            (libc::SYS_personality, &[0xffff_ffff], ALLOW),
            (libc::SYS_personality, &[0x0004_0000], eperm),
            (libc::SYS_personality, &[0x0040_0000], eperm),
            (libc::SYS_setrlimit, &[4], eperm),
            (libc::SYS_setrlimit, &[4 | 1 << 32], eperm),
            (libc::SYS_setrlimit, &[3], ALLOW),
            (libc::SYS_prlimit64, &[0, 4, 0, 0x1000], ALLOW),
            (libc::SYS_prlimit64, &[0, 4, 0x1000, 0], eperm),
            (libc::SYS_prlimit64, &[0, 4, 0x7fff_0000_0000, 0], eperm),
            (libc::SYS_prlimit64, &[0, 4 | 1 << 32, 0x1000, 0], eperm),
            (libc::SYS_prlimit64, &[0, 3, 0x1000, 0], ALLOW),
            (libc::SYS_memfd_create, &[0x1000, 0], eperm),
            (libc::SYS_memfd_create, &[0x1000, 0x10], eperm),
            (libc::SYS_memfd_create, &[0x1000, 0x8], ALLOW),
            (
                libc::SYS_socket,
                &[libc::AF_INET as u64, 1],
                errno(libc::EACCES),
            ),
            (
                libc::SYS_socket,
                &[libc::AF_VSOCK as u64, 1],
                errno(libc::EACCES),
            ),
            (libc::SYS_socket, &[libc::AF_UNIX as u64, 1], ALLOW),
            (libc::SYS_socket, &[libc::AF_NETLINK as u64, 1], ALLOW),
        ];
        for (nr, args, expected) in cases {
            let got = answer(false, NO_NETWORK, *nr, args);
            assert_eq!(got, *expected, "call {nr} with {args:?}");
        }
        // Sealed memory files and the network on: those calls are left alone.
        assert_eq!(
            answer(true, &[], libc::SYS_memfd_create, &[0x1000, 0]),
            ALLOW
        );
        assert_eq!(
            answer(true, &[], libc::SYS_socket, &[libc::AF_INET as u64]),
            ALLOW
        );
        let bridged = [libc::AF_PACKET, libc::AF_VSOCK];
        assert_eq!(
            answer(false, &bridged, libc::SYS_socket, &[libc::AF_INET as u64]),
            ALLOW
        );
        assert_eq!(
            answer(false, &bridged, libc::SYS_socket, &[libc::AF_PACKET as u64]),
            errno(libc::EACCES)
        );
    }

    #[test]
    fn the_search_finds_its_calls_and_no_other() {
        for n in 0..80u32 {
            let calls: Vec<(u32, Refusal)> = (0..n)
                .map(|i| (3 * i + 1, always(errno(libc::EPERM))))
                .collect();
            let program = search(&calls).expect("search");
            for nr in 0..(3 * n + 3) {
                let expected = if nr % 3 == 1 && nr < 3 * n {
                    errno(libc::EPERM)
                } else {
                    ALLOW
                };
                let mut program = program.clone();
                program.insert(0, load(NR));
                assert_eq!(
                    run(&program, 0, nr, [0; 6]),
                    expected,
                    "{n} calls, call {nr}"
                );
            }
        }
        // Past what 8-bit jumps reach, an error rather than a wrong filter.
        let many: Vec<(u32, Refusal)> = (0..400).map(|i| (i, always(ALLOW))).collect();
        assert!(search(&many).is_err());
    }

    #[test]
    fn a_call_is_refused_in_one_place() {
        assert!(refusals(false, NO_NETWORK).is_ok());
        let program = program(&refusals(false, NO_NETWORK).expect("calls")).expect("program");
        assert!(program.len() < 400, "{}", program.len());
    }
}
