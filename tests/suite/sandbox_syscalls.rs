//! The kernel surface a sandboxed command reaches: each system call the seccomp layer refuses
//! (src/shell/seccomp.rs), made raw by a C program the test compiles (`sandbox_syscalls.c`)
//! and runs as an allowed program, inside `sneaky-run` and, as the control, outside.
//!
//! Most of these calls also need a capability the command does not have, so the kernel would
//! answer EPERM by itself. The probe's `caught` mode tells the two apart: it puts a seccomp
//! filter of its own in front of the call that hands it to the probe instead of the kernel
//! (which then answers "reached"); a refusal by the sandbox's filter outranks that hand-over.
//! So "reached" outside and EPERM inside means the sandbox refused the call before the kernel
//! looked at it, whatever its arguments, and no call is ever run for real by that mode (the
//! control outside runs as root). The `raw` mode makes the harmless ones for real.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::json;

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Ws};

const PROBE_C: &str = include_str!("sandbox_syscalls.c");

/// What the probe printed: each call's result, by mode ("caught" or "raw") and name.
#[derive(Debug)]
struct Results {
    caught: BTreeMap<String, String>,
    raw: BTreeMap<String, String>,
    /// Everything else the command printed, for the messages.
    text: String,
}

impl Results {
    fn parse(text: &str) -> Results {
        let (caught, raw) = text.split_once("--\n").unwrap_or((text, ""));
        let lines = |s: &str| -> BTreeMap<String, String> {
            s.lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(name, result)| (name.to_string(), result.to_string()))
                .collect()
        };
        Results {
            caught: lines(caught),
            raw: lines(raw),
            text: text.to_string(),
        }
    }

    fn caught(&self, name: &str) -> &str {
        self.caught.get(name).map_or("missing", String::as_str)
    }

    fn raw(&self, name: &str) -> &str {
        self.raw.get(name).map_or("missing", String::as_str)
    }
}

/// A workspace holding the compiled probe (`./probe`, allowed verbatim), and a copy beside it
/// for the runs outside; None (the test skips) without namespaces or a C compiler.
fn probe_ws(test: &str) -> Option<Ws> {
    if !namespaces_or_skip(test) || !util::require_cmd("cc") {
        return None;
    }
    let w = util::ws();
    let src = w.outside().join("probe.c");
    std::fs::write(&src, PROBE_C).expect("write the probe");
    let out = Command::new("cc")
        .args(["-O1", "-pthread", "-o"])
        .arg(w.outside().join("probe"))
        .arg(&src)
        .output()
        .expect("cc");
    assert!(out.status.success(), "compiling the probe: {out:?}");
    std::fs::copy(w.outside().join("probe"), w.root.join("probe")).expect("copy");
    user_config(
        &w,
        "[tools.shell]\nextra_allowed_commands = [\"./probe\"]\n",
    );
    Some(w)
}

/// Both modes in the sandbox, in one call.
fn inside(w: &Ws, names: &[&str]) -> Results {
    let names = names.join(" ");
    let r = w
        .call(
            "sneaky-run",
            json!({"command": format!("./probe caught {names} && echo -- && ./probe raw {names}"),
                   "timeout": 60}),
        )
        .command_ran()
        .clone();
    assert_eq!(r["sandboxed"], true, "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    Results::parse(r["stdout"].as_str().unwrap_or(""))
}

/// Both modes outside the sandbox, as the test runs (in the workspace's parent).
fn outside(w: &Ws, names: &[&str]) -> Results {
    let run = |mode: &str| {
        let out = Command::new(w.outside().join("probe"))
            .arg(mode)
            .args(names)
            .current_dir(w.outside())
            .output()
            .expect("the probe");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    Results::parse(&format!("{}--\n{}", run("caught"), run("raw")))
}

/// Each call refused by the sandbox's filter with `errno` (caught inside), and reaching the
/// kernel outside (so the probe's hand-over works here and the refusal is the sandbox's).
fn assert_refused(inside: &Results, outside: &Results, names: &[&str], errno: &str) {
    for name in names {
        assert_eq!(
            outside.caught(name),
            "reached",
            "{name}: the probe's own filter did not catch the call outside: {}",
            outside.text
        );
        assert_eq!(
            inside.caught(name),
            errno,
            "{name}: not refused by the sandbox's filter: {}",
            inside.text
        );
    }
}

const NAMESPACES: &[&str] = &[
    "unshare-user",
    "unshare-mount",
    "unshare-pid",
    "unshare-net",
    "unshare-ipc",
    "unshare-uts",
    "unshare-cgroup",
    "unshare-time",
    "clone-user",
    "clone-mount",
    "clone-pid",
    "clone-net",
    "clone-ipc",
    "clone-uts",
    "clone-cgroup",
    "setns",
];

#[test]
fn nested_namespaces_are_refused() {
    let Some(w) = probe_ws("nested_namespaces_are_refused") else {
        return;
    };
    let controls = ["fork", "unshare-files", "thread"];
    let names: Vec<&str> = NAMESPACES
        .iter()
        .chain(&["clone3", "clone3-user"])
        .chain(&controls)
        .copied()
        .collect();
    let (i, o) = (inside(&w, &names), outside(&w, &names));
    assert_refused(&i, &o, NAMESPACES, "EPERM");
    // clone3's flags are in memory, out of seccomp's sight: ENOSYS, so that the C library
    // falls back to clone, whose flags are read.
    assert_refused(&i, &o, &["clone3", "clone3-user"], "ENOSYS");
    // For real: a new user namespace (which would give every capability back inside it) is
    // made outside, where the host allows them, and not inside, by any of the three calls.
    let host = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").unwrap_or_default();
    if host.trim() != "0" {
        for name in ["unshare-user", "clone-user", "clone3-user"] {
            assert_eq!(o.raw(name), "ok", "{name} outside: {}", o.text);
        }
    }
    assert_eq!(i.raw("unshare-user"), "EPERM", "{}", i.text);
    assert_eq!(i.raw("clone-user"), "EPERM", "{}", i.text);
    assert_eq!(i.raw("clone3-user"), "ENOSYS", "{}", i.text);
    assert_eq!(i.raw("setns"), "EPERM", "{}", i.text);
    // What programs do every day still works: fork, unsharing a file table, threads (glibc's
    // pthread_create tries clone3 first and falls back to clone).
    for name in controls {
        assert_eq!(i.raw(name), "ok", "{name}: {}", i.text);
    }
    assert_eq!(i.caught("fork"), "reached", "{}", i.text);
    assert_eq!(i.caught("unshare-files"), "reached", "{}", i.text);
}

#[test]
fn the_command_user_namespace_admits_no_other() {
    if !namespaces_or_skip("the_command_user_namespace_admits_no_other") {
        return;
    }
    let w = util::ws();
    // Beneath seccomp: user.max_user_namespaces is 0 in the command's own user namespace, so
    // the kernel itself refuses a nested one (ENOSPC) where the filter is not in force.
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "cat /proc/sys/user/max_user_namespaces"}),
        )
        .command_ran()
        .clone();
    assert_eq!(r["stdout"], "0\n", "{r}");
    let host = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").expect("read");
    assert_ne!(host.trim(), "0", "the host's limit changed");
}

#[test]
#[cfg(target_arch = "x86_64")]
fn the_x32_abi_does_not_go_around_the_filter() {
    let Some(w) = probe_ws("the_x32_abi_does_not_go_around_the_filter") else {
        return;
    };
    // The x32 ABI's calls carry x86-64's audit architecture with bit 30 of the number set:
    // rules keyed on x86-64's numbers do not see them. A kernel built without x32 answers
    // ENOSYS itself, but the sandbox's filter answers first, on any kernel.
    let (i, o) = (inside(&w, &["x32"]), outside(&w, &["x32"]));
    assert_refused(&i, &o, &["x32"], "ENOSYS");
}

const ADMINISTRATION: &[&str] = &[
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "settimeofday",
    "clock_settime",
    "sethostname",
    "setdomainname",
    "vhangup",
    "lookup_dcookie",
    "nfsservctl",
];

/// The calls of the administration group that exist on x86-64 only.
#[cfg(target_arch = "x86_64")]
const X86_ADMINISTRATION: &[&str] = &["iopl", "ioperm", "uselib"];
#[cfg(not(target_arch = "x86_64"))]
const X86_ADMINISTRATION: &[&str] = &[];

#[test]
fn the_kernel_and_the_host_cannot_be_administered() {
    let Some(w) = probe_ws("the_kernel_and_the_host_cannot_be_administered") else {
        return;
    };
    let names: Vec<&str> = ADMINISTRATION
        .iter()
        .chain(X86_ADMINISTRATION)
        .copied()
        .collect();
    let (i, o) = (inside(&w, &names), outside(&w, &names));
    assert_refused(&i, &o, &names, "EPERM");
}

const INTERFACES: &[&str] = &[
    "perf_event_open",
    "bpf",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
    "ptrace",
    "keyctl",
];

#[test]
fn kernel_interfaces_a_command_has_no_use_for_are_refused() {
    let Some(w) = probe_ws("kernel_interfaces_a_command_has_no_use_for_are_refused") else {
        return;
    };
    let controls = ["process_vm_readv-child", "process_vm_readv-init"];
    let names: Vec<&str> = INTERFACES.iter().chain(&controls).copied().collect();
    let (i, o) = (inside(&w, &names), outside(&w, &names));
    assert_refused(&i, &o, INTERFACES, "EPERM");
    // For real, with what an unprivileged program may ask for (user-space counting of its own
    // task, a user-mode-only userfaultfd, an unprivileged fanotify group, a ring), which the
    // host's settings may allow outside (its results are in the message).
    for name in [
        "perf_event_open",
        "userfaultfd",
        "fanotify_init",
        "io_uring_setup",
    ] {
        assert_eq!(
            i.raw(name),
            "EPERM",
            "{name}: {} (outside: {})",
            i.text,
            o.text
        );
    }
    // process_vm_readv stays (MPI's cross-memory attach uses it): the kernel's ptrace access
    // check keeps it to the command's own processes; the namespace's init is not one.
    assert_eq!(i.raw("process_vm_readv-child"), "ok", "{}", i.text);
    assert_eq!(i.raw("process_vm_readv-init"), "EPERM", "{}", i.text);
}

#[test]
fn io_uring_is_refused_with_the_network_on_too() {
    let Some(w) = probe_ws("io_uring_is_refused_with_the_network_on_too") else {
        return;
    };
    user_config(
        &w,
        "[tools.shell]\nnetwork = true\nextra_allowed_commands = [\"./probe\"]\n",
    );
    let (i, o) = (
        inside(&w, &["io_uring_setup"]),
        outside(&w, &["io_uring_setup"]),
    );
    assert_refused(&i, &o, &["io_uring_setup"], "EPERM");
}

const MOUNTS: &[&str] = &[
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "open_tree_attr",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
];

#[test]
fn mounts_are_refused() {
    let Some(w) = probe_ws("mounts_are_refused") else {
        return;
    };
    let (i, o) = (inside(&w, MOUNTS), outside(&w, MOUNTS));
    assert_refused(&i, &o, MOUNTS, "EPERM");
    // For real: the kernel would have looked at the path or the flags first (ENOENT, EINVAL)
    // and opened the tree.
    assert_eq!(o.raw("mount"), "ENOENT", "{}", o.text);
    assert_eq!(o.raw("umount2"), "EINVAL", "{}", o.text);
    assert_eq!(o.raw("open_tree"), "ok", "{}", o.text);
    for name in ["mount", "umount2", "open_tree"] {
        assert_eq!(i.raw(name), "EPERM", "{name}: {}", i.text);
    }
}

#[test]
fn personality_keeps_only_the_harmless_values() {
    let Some(w) = probe_ws("personality_keeps_only_the_harmless_values") else {
        return;
    };
    let names = [
        "personality-query",
        "personality-linux32",
        "personality-no-aslr",
        "personality-read-implies-exec",
    ];
    let (i, o) = (inside(&w, &names), outside(&w, &names));
    assert_refused(
        &i,
        &o,
        &["personality-no-aslr", "personality-read-implies-exec"],
        "EPERM",
    );
    for name in names {
        assert_eq!(o.raw(name), "ok", "{name} outside: {}", o.text);
    }
    assert_eq!(i.raw("personality-query"), "ok", "{}", i.text);
    assert_eq!(i.raw("personality-linux32"), "ok", "{}", i.text);
    assert_eq!(i.raw("personality-no-aslr"), "EPERM", "{}", i.text);
}

#[test]
fn the_core_limit_cannot_be_lowered_through_bits_the_kernel_ignores() {
    let Some(w) = probe_ws("the_core_limit_cannot_be_lowered_through_bits_the_kernel_ignores")
    else {
        return;
    };
    // setrlimit and prlimit64 read the resource as an `unsigned int`: RLIMIT_CORE with bit 32
    // set is RLIMIT_CORE to the kernel, and lowering it to 0 would let a pipe handler in
    // core_pattern receive dumps again (see sandbox_doors.rs).
    let names = ["setrlimit-core", "prlimit64-core"];
    let (i, o) = (inside(&w, &names), outside(&w, &names));
    assert_refused(&i, &o, &names, "EPERM");
    for name in names {
        assert_eq!(o.raw(name), "ok", "{name} outside: {}", o.text);
        assert_eq!(i.raw(name), "EPERM", "{name}: {}", i.text);
    }
}

/// Every call the sandbox refuses is probed by a test here (`add_key` and `request_key` by
/// tests/suite/sandbox_doors.rs): a call added to the filter without a probe fails this test.
#[test]
fn every_refused_call_has_a_probe() {
    let probed: Vec<&str> = NAMESPACES
        .iter()
        .chain(ADMINISTRATION)
        .chain(INTERFACES)
        .chain(MOUNTS)
        .chain(&["add_key", "request_key"])
        .copied()
        .collect();
    for group in sneaky::shell::seccomp::REFUSED {
        for (name, _) in group.calls {
            assert!(probed.contains(name), "{name} is refused but never probed");
        }
    }
}
