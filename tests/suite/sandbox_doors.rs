//! The side doors: what a sandboxed command could still share with the host after the front
//! door (exec, writes, network) is shut. Every probe is a raw system call made by a program
//! the policy never reads (python3 with `ctypes`/`os`/`socket`, listed in
//! `extra_allowed_commands` as a fooled policy would let it run), and every test asserts that
//! the effect did not happen: the limit, the descriptor, the key, the segment, the file.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Ws};

/// The system's python3, by its real path (a version manager's shim on PATH is a script
/// that runs more programs than python).
const PYTHON: &str = "/usr/bin/python3";

/// Run `python3 probe.py` in the sandbox (python3 allowed, the rest of the configuration
/// from `extra_toml`) and return the result.
fn run_python(w: &Ws, code: &str, extra_toml: &str) -> Value {
    w.write("probe.py", code);
    user_config(
        w,
        &format!("[tools.shell]\nextra_allowed_commands = [\"{PYTHON}\"]\n{extra_toml}"),
    );
    let r = w
        .call(
            "sneaky-run",
            json!({"command": format!("{PYTHON} probe.py"), "timeout": 30}),
        )
        .command_ran()
        .clone();
    assert_eq!(r["sandboxed"], true, "{r}");
    r
}

fn stdout(r: &Value) -> &str {
    r["stdout"].as_str().unwrap_or("")
}

fn python_or_skip() -> bool {
    Path::new(PYTHON).is_file() || util::skip(&format!("needs {PYTHON}"))
}

#[test]
fn no_core_dump_can_reach_a_handler() {
    if !python_or_skip() || !namespaces_or_skip("no_core_dump_can_reach_a_handler") {
        return;
    }
    let w = util::ws();
    // RLIMIT_CORE = 1: below a file dump's first page, and the value at which the kernel
    // refuses pipe handlers; lowering it to 0 (which pipe handlers ignore) is refused.
    let r = run_python(
        &w,
        r#"import resource
print(resource.getrlimit(resource.RLIMIT_CORE))
for limit in [(0, 0), (0, 1), (1, 0)]:
    try:
        resource.setrlimit(resource.RLIMIT_CORE, limit)
        print("lowered", limit)
    except (OSError, ValueError):  # python reports EPERM as ValueError
        print("refused")
print(resource.getrlimit(resource.RLIMIT_CORE))
for line in open("/proc/self/limits"):
    if line.startswith("Max core file size"):
        print(line.split()[4:6])
"#,
        "",
    );
    assert_eq!(
        stdout(&r),
        "(1, 1)\nrefused\nrefused\nrefused\n(1, 1)\n['1', '1']\n",
        "{r}"
    );
}

/// Clear FD_CLOEXEC so that the descriptor is inherited by sneaky-run (as a careless caller
/// would leave it).
fn inheritable(file: &std::fs::File) {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    fcntl(file, FcntlArg::F_SETFD(FdFlag::empty())).expect("fcntl");
}

#[test]
fn no_inherited_descriptor_reaches_the_command() {
    if !python_or_skip() || !namespaces_or_skip("no_inherited_descriptor_reaches_the_command") {
        return;
    }
    let w = util::ws();
    let secret = std::fs::File::open(w.outside().join("secret.txt")).expect("open");
    let dir = std::fs::File::open(w.outside().join("ws_evil")).expect("open dir");
    inheritable(&secret);
    inheritable(&dir);
    let r = run_python(
        &w,
        r#"import os
left = []
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    if fd > 2:
        try:
            left.append((fd, os.readlink("/proc/self/fd/" + name)))
        except OSError:
            pass  # the listing's own descriptor, closed by now
print(left)
"#,
        "",
    );
    drop((secret, dir));
    assert_eq!(
        stdout(&r),
        "[]\n",
        "descriptors crossed into the command: {r}"
    );
}

/// Numbers of the system calls the probes make raw (from the libc crate, for this target).
fn syscall_numbers() -> String {
    format!(
        "SYS_keyctl, SYS_add_key, SYS_request_key, SYS_ptrace = {}, {}, {}, {}\n",
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_ptrace
    )
}

#[test]
fn keyrings_and_ptrace_are_refused_and_the_init_cannot_be_traced() {
    if !python_or_skip() || !namespaces_or_skip("keyrings_and_ptrace_are_refused") {
        return;
    }
    let w = util::ws();
    let code = format!(
        r#"import ctypes, os
{}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(*args)
    print(name, "ok" if rc >= 0 else os.strerror(ctypes.get_errno()))
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_GET_KEYRING_ID = 0
call("keyctl", SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1)
call("add_key", SYS_add_key, b"user", b"sneaky-probe", b"secret", 6, KEY_SPEC_SESSION_KEYRING)
call("request_key", SYS_request_key, b"user", b"sneaky-probe", None, 0)
PTRACE_ATTACH = 16
call("ptrace init", SYS_ptrace, PTRACE_ATTACH, 1, 0, 0)
pid = os.fork()
if pid == 0:
    import time
    time.sleep(5)
    os._exit(0)
call("ptrace child", SYS_ptrace, PTRACE_ATTACH, pid, 0, 0)
os.kill(pid, 9)
try:
    open("/proc/1/mem", "rb")
    print("init memory open")
except OSError as e:
    print("init memory", e.strerror)
"#,
        syscall_numbers()
    );
    let r = run_python(&w, &code, "");
    let denied = "Operation not permitted";
    assert_eq!(
        stdout(&r),
        format!(
            "keyctl {denied}\nadd_key {denied}\nrequest_key {denied}\nptrace init {denied}\n\
             ptrace child {denied}\ninit memory Permission denied\n"
        ),
        "{r}"
    );
}

/// Run python3 outside the sandbox (the test's side of a probe).
fn host_python(code: &str) -> String {
    let out = Command::new(PYTHON)
        .args(["-c", code])
        .output()
        .expect("python3");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const SHM_C: &str = r#"import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
key, flags = int(sys.argv[1]), int(sys.argv[2])
print(libc.shmget(key, 4096, flags), ctypes.get_errno())
"#;

#[test]
fn host_sysv_ipc_is_out_of_reach() {
    if !python_or_skip() || !namespaces_or_skip("host_sysv_ipc_is_out_of_reach") {
        return;
    }
    let w = util::ws();
    let key = 0x5ea_0000 + (std::process::id() % 0xffff) as i32;
    std::fs::write(w.outside().join("shm.py"), SHM_C).expect("write");
    let shm = w.outside().join("shm.py");
    let shm = shm.to_str().expect("utf-8");
    // IPC_CREAT | IPC_EXCL | 0600: a segment of the host's, made by the test.
    let made = host_python(&format!(
        "import sys; sys.argv = ['x', '{key}', '{}']; exec(open('{shm}').read())",
        0o1000 | 0o2000 | 0o600
    ));
    let id: i32 = made
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(-1);
    assert!(id >= 0, "could not create the host segment: {made}");
    w.write("shm.py", SHM_C);
    let r = run_python(
        &w,
        &format!(
            "import sys, subprocess\nsys.argv = ['x', '{key}', '0']\nexec(open('shm.py').read())\n"
        ),
        "",
    );
    host_python(&format!(
        "import ctypes; ctypes.CDLL(None).shmctl({id}, 0, None)"
    ));
    // shmget of the host's key finds nothing: ENOENT (2).
    assert_eq!(stdout(&r), "-1 2\n", "the host's segment is reachable: {r}");
}

/// Copies a denied program (rm) into a memory file and runs it, by path or by descriptor.
fn memfd_probe(how: &str, flags: u32) -> String {
    format!(
        r#"import os, sys
how, flags = {how:?}, {flags}
try:
    fd = os.memfd_create("x", flags)
except OSError as e:
    print("memfd_create", e.strerror)
    sys.exit(0)
os.write(fd, open("/usr/bin/rm", "rb").read())
try:
    if how == "path":
        os.execve("/proc/self/fd/%d" % fd, ["rm", "-f", "f.txt"], {{}})
    else:
        os.execve(fd, ["rm", "-f", "f.txt"], {{}})
except OSError as e:
    print("exec", e.strerror)
"#
    )
}

#[test]
fn no_program_runs_from_an_anonymous_memory_file() {
    if !python_or_skip() || !namespaces_or_skip("no_program_runs_from_an_anonymous_memory_file") {
        return;
    }
    let w = util::ws();
    w.write("f.txt", "keep me\n");
    // Without flags, and with MFD_EXEC (0x10).
    for (how, flags) in [("path", 0), ("fd", 0), ("path", 0x10), ("fd", 0x10)] {
        let r = run_python(&w, &memfd_probe(how, flags), "");
        assert!(
            w.root.join("f.txt").exists(),
            "{how} {flags}: a program ran from memory: {r}"
        );
        let out = stdout(&r);
        assert!(
            out.starts_with("exec ") || out.starts_with("memfd_create "),
            "{how} {flags}: {r}"
        );
    }
    // Memory files themselves keep working (data, shared memory).
    let r = run_python(
        &w,
        "import os\nfd = os.memfd_create('data')\nos.write(fd, b'abc')\nprint(os.pread(fd, 3, 0))\n",
        "",
    );
    assert_eq!(stdout(&r), "b'abc'\n", "{r}");
}

/// Connects to each socket path given and says what happened.
const CONNECT_PY: &str = r#"import socket, sys, os
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        s.sendall(b"hello")
        print("connected")
    except OSError as e:
        print("refused", e.strerror)
"#;

#[test]
fn unix_sockets_outside_the_workspace_are_unreachable_unless_listed() {
    if !python_or_skip() || !namespaces_or_skip("unix_sockets_outside") {
        return;
    }
    let w = util::ws();
    // Two host daemons' sockets beside the workspace; one will be listed.
    let daemon = w.outside().join("daemon.sock");
    let listed = w.outside().join("listed.sock");
    let mut listeners = Vec::new();
    for path in [&daemon, &listed] {
        let l = std::os::unix::net::UnixListener::bind(path).expect("bind");
        l.set_nonblocking(true).expect("nonblocking");
        listeners.push(l);
    }
    let accepted = |l: &std::os::unix::net::UnixListener| l.accept().is_ok();
    let probe = CONNECT_PY.replace(
        "sys.argv[1:]",
        &format!(
            "[{:?}, {:?}]",
            daemon.display().to_string(),
            listed.display().to_string()
        ),
    );
    let r = run_python(&w, &probe, "");
    assert_eq!(
        stdout(&r),
        "refused Connection refused\nrefused Connection refused\n",
        "{r}"
    );
    assert!(!accepted(&listeners[0]) && !accepted(&listeners[1]), "{r}");
    let r = run_python(
        &w,
        &probe,
        &format!("unix_sockets = [{:?}]\n", listed.display().to_string()),
    );
    assert_eq!(stdout(&r), "refused Connection refused\nconnected\n", "{r}");
    assert!(!accepted(&listeners[0]), "{r}");
    assert!(accepted(&listeners[1]), "the listed socket: {r}");
    // A socket the command binds in the workspace (a project's own server) stays usable.
    let r = run_python(
        &w,
        r#"import socket, os
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("own.sock")
srv.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(os.path.abspath("own.sock"))
print("own ok")
"#,
        "",
    );
    assert_eq!(stdout(&r), "own ok\n", "{r}");
}

#[test]
fn a_socket_bound_through_a_descriptor_is_covered_where_it_really_is() {
    if !python_or_skip() || !namespaces_or_skip("socket_bound_through_a_descriptor") {
        return;
    }
    let w = util::ws();
    // As conmon binds the attach socket of each Podman container: through a descriptor of its
    // directory, so /proc/net/unix lists /proc/self/fd/N/attach, which names nothing here.
    let dir = std::fs::File::open(w.outside()).expect("open dir");
    let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
    let listener = std::os::unix::net::UnixListener::bind(format!("/proc/self/fd/{fd}/attach"))
        .expect("bind through the descriptor");
    listener.set_nonblocking(true).expect("nonblocking");
    let real = w.outside().join("attach");
    assert!(real.exists(), "bound where the descriptor points");
    let probe = CONNECT_PY.replace(
        "sys.argv[1:]",
        &format!("[{:?}]", real.display().to_string()),
    );
    let r = run_python(&w, &probe, "");
    assert_eq!(stdout(&r), "refused Connection refused\n", "{r}");
    assert!(listener.accept().is_err(), "{r}");
}

#[test]
fn helper_directories_that_lead_out_of_the_workspace_grant_nothing() {
    if !namespaces_or_skip("helper_directories_that_lead_out") {
        return;
    }
    let w = util::ws();
    w.write("f.txt", "keep me\n");
    // The strict mode: cargo (allowed by default) lets the workspace's target/ execute; a
    // repository ships it as a link to a system bin directory. And a program listed verbatim
    // is a link out.
    w.link("/usr/bin", "target");
    w.link("/usr/bin/rm", "tool");
    w.write(
        "p.sh",
        "#!/bin/sh\ntarget/rm -f f.txt; /usr/bin/rm -f f.txt; /usr/bin/perl -e 'open F, \">pwned\"'\n",
    );
    std::fs::set_permissions(
        w.root.join("p.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    user_config(
        &w,
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"./p.sh\", \"./tool\"]\n",
    );
    for command in ["./p.sh", "./tool -f f.txt"] {
        let r = w
            .call("sneaky-run", json!({"command": command}))
            .command_ran()
            .clone();
        assert_eq!(r["sandboxed"], true, "{r}");
        assert!(w.root.join("f.txt").exists(), "{command}: rm ran: {r}");
        assert!(!w.root.join("pwned").exists(), "{command}: perl ran: {r}");
    }
}

/// Fork children that wait until the call ends, until fork fails (at most 200); print how
/// many forks succeeded, then the process's pids cgroup (`/proc/self/cgroup`'s pids line).
const FORK_LOOP_PY: &str = r#"import os, time
count = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    count += 1
print(count)
for line in open("/proc/self/cgroup"):
    parts = line.strip().split(":", 2)
    if "pids" in parts[1].split(",") or parts[1] == "":
        print(parts[2])
        break
"#;

/// The pids cgroup directory that `path` (from /proc/self/cgroup) names, when the host has
/// a cgroup v1 pids hierarchy at the usual place.
fn pids_cgroup_dir(path: &str) -> Option<std::path::PathBuf> {
    let mount = Path::new("/sys/fs/cgroup/pids");
    mount
        .is_dir()
        .then(|| mount.join(path.trim_start_matches('/')))
}

#[test]
fn max_processes_holds_for_root_and_the_cgroup_goes_with_the_call() {
    if !python_or_skip() || !namespaces_or_skip("max_processes_holds_for_root") {
        return;
    }
    if !nix::unistd::getuid().is_root() {
        util::skip("max_processes_holds_for_root: RLIMIT_NPROC binds other users already");
        return;
    }
    let w = util::ws();
    let r = run_python(&w, FORK_LOOP_PY, "max_processes = 20\n");
    let sandbox = r["sandbox"].as_str().unwrap_or("");
    if !sandbox.contains("processes: cgroup pids.max 20") {
        // No writable pids cgroup here: then the call says the limit does not hold.
        assert!(
            sandbox.contains("RLIMIT_NPROC 20 only, which root is exempt from"),
            "{r}"
        );
        util::skip("max_processes_holds_for_root: no writable pids cgroup");
        return;
    }
    let out = stdout(&r);
    let mut lines = out.lines();
    let forks: u32 = lines.next().and_then(|n| n.parse().ok()).unwrap_or(999);
    // The launcher, the namespace's init, bash and python count too.
    assert!(forks < 20, "{forks} forks under max_processes = 20: {r}");
    let cgroup = lines.next().unwrap_or("");
    assert!(
        cgroup.contains("sneaky-run-"),
        "not in the call's cgroup: {r}"
    );
    if let Some(dir) = pids_cgroup_dir(cgroup) {
        assert!(!dir.exists(), "{} outlived the call", dir.display());
    }
    // Nothing the loop started is left (the cgroup could only be removed empty, and no
    // process works in the workspace).
    let root = w.root.canonicalize().expect("root");
    let left: Vec<_> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|d| d == root))
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "processes outlived the call: {left:?}");
}

#[test]
fn a_denied_interpreter_does_not_run_an_allowed_script() {
    if !python_or_skip() || !namespaces_or_skip("a_denied_interpreter") {
        return;
    }
    let w = util::ws();
    // The strict mode: python3 and perl are on its denied list; the scripts are allowed
    // verbatim. (The contained mode's counterpart: tests/suite/deny_programs.rs.)
    w.write(
        "probe.py",
        "#!/usr/bin/python3\nopen(\"pwned-py\", \"w\").write(\"ran\")\n",
    );
    w.write("probe.pl", "#!/usr/bin/perl\nopen F, \">pwned-pl\";\n");
    w.write(
        "env.py",
        "#!/usr/bin/env python3\nopen(\"pwned-env\", \"w\").write(\"ran\")\n",
    );
    for f in ["probe.py", "probe.pl", "env.py"] {
        std::fs::set_permissions(
            w.root.join(f),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
    }
    user_config(
        &w,
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"./probe.py\", \"./probe.pl\", \"./env.py\"]\n",
    );
    for command in ["./probe.py", "./probe.pl", "./env.py"] {
        let r = w
            .call("sneaky-run", json!({"command": command}))
            .command_ran()
            .clone();
        assert_eq!(r["sandboxed"], true, "{r}");
        assert_ne!(r["exit_code"], 0, "{command}: {r}");
    }
    for f in ["pwned-py", "pwned-pl", "pwned-env"] {
        assert!(!w.root.join(f).exists(), "{f}: the denied interpreter ran");
    }
    // Allowed by name, the interpreter runs the script.
    user_config(
        &w,
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"./probe.py\", \"python3\"]\n",
    );
    let r = w
        .call("sneaky-run", json!({"command": "./probe.py"}))
        .command_ran()
        .clone();
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(w.root.join("pwned-py").exists(), "{r}");
}

/// Try to make git metadata that does not exist in a repository made without templates, by
/// raw system calls: create (open O_CREAT), rename over, remove.
const PLANT_GIT_PY: &str = r#"import os
def attempt(what, f):
    try:
        f()
        print(what, "done")
    except OSError as e:
        print(what, "refused")
flags = os.O_WRONLY | os.O_CREAT
for path in [".git/hooks", ".git/info", ".git/modules"]:
    attempt("mkdir " + path, lambda: os.mkdir(path))
for path in [".git/commondir", ".git/hooks/pre-commit", ".git/config.worktree",
             ".git/info/attributes", ".git/modules/x"]:
    attempt("create " + path, lambda: os.close(os.open(path, flags, 0o755)))
open(".git/planted", "w").write("/tmp\n")
for path in [".git/commondir", ".git/config.worktree", ".git/hooks", ".git/info"]:
    attempt("rename onto " + path, lambda: os.rename(".git/planted", path))
    attempt("remove " + path, lambda: os.unlink(path) if not os.path.isdir(path) else os.rmdir(path))
"#;

fn git_in(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn git_metadata_that_does_not_exist_cannot_be_created() {
    if !python_or_skip() || !namespaces_or_skip("git_metadata_that_does_not_exist") {
        return;
    }
    let w = util::ws();
    git_in(&w.root, &["init", "-q", "--template=", "."]);
    git_in(&w.root, &["config", "user.name", "t"]);
    git_in(&w.root, &["config", "user.email", "t@e"]);
    for missing in ["hooks", "info", "commondir", "config.worktree", "modules"] {
        assert!(!w.root.join(".git").join(missing).exists(), "{missing}");
    }
    let r = run_python(&w, PLANT_GIT_PY, "");
    let out = stdout(&r);
    assert!(!out.contains("done"), "{r}");
    assert_eq!(out.lines().count(), 16, "{r}");
    let git = w.root.join(".git");
    // The placeholders are gone with the call; the directories stay, empty, as `git init`
    // would have made them.
    assert!(!git.join("commondir").exists(), "{r}");
    assert!(!git.join("config.worktree").exists(), "{r}");
    for dir in ["hooks", "info", "modules"] {
        let entries = std::fs::read_dir(git.join(dir)).expect(dir).count();
        assert_eq!(entries, 0, "{dir}: {r}");
    }
    // git's normal work goes on in the same repository, in the sandbox.
    user_config(&w, "");
    w.write("f.txt", "one\n");
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "git add -A && git commit -qm one \
                   && git checkout -qb topic && echo two >> f.txt && git stash -q \
                   && git stash pop -q && git status --short \
                   && git rev-parse --abbrev-ref HEAD"}),
        )
        .command_ran()
        .clone();
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(stdout(&r), " M f.txt\ntopic\n", "{r}");
    // `git gc` (which the policy does not let a command line run) works under the kernel
    // layers: packs, packed-refs, logs.
    let r = run_python(
        &w,
        "import subprocess\nprint(subprocess.run(['git', 'gc', '-q']).returncode)\n",
        "",
    );
    assert_eq!(stdout(&r), "0\n", "{r}");
    assert!(git.join("packed-refs").exists(), "{r}");
    assert!(!git.join("commondir").exists(), "{r}");
}
