//! The contained mode (the default, every layer in force) and its deny list: a denied program
//! never runs from where it is installed, however a command starts it — refused by the policy
//! by name, or stopped by the kernel (covered in the command's view) when the policy cannot see
//! it: a loop, a substitution, `bash -c`, xargs, `find -exec`, a variable, `eval`, a copy, a
//! symbolic link, `/proc/self/fd`, a `#!` line, the ELF loader, and raw `execve`/`fexecve`/
//! `execveat` from python3 and from a C program. Beside each denied program stands an allowed
//! twin started the same ways, which must run every time: the forms do start programs.
//!
//! Also: nothing executes from a place outside PATH's directories, the workspace and the temp
//! dir (a write path, `/dev/shm`); the workspace's own programs run (a `./sudo` of its own
//! included); and the strict mode is what applies whenever a layer may be missing.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Reply, Ws};

/// A workspace, and a directory outside it put first on the command's PATH, holding a denied
/// script and a denied ELF program (a copy of `echo`), each with an allowed twin.
struct Installed {
    w: Ws,
    bin: PathBuf,
}

const DENIED_TOOL: &str = "marker-tool";
const DENIED_ELF: &str = "marker-elf";
const ALLOWED_TOOL: &str = "allowed-tool";
const ALLOWED_ELF: &str = "allowed-elf";

fn installed() -> Option<Installed> {
    if !namespaces_or_skip("deny_programs") {
        return None;
    }
    let w = util::ws();
    let bin = w.outside().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir bin");
    for (name, text) in [
        (DENIED_TOOL, "#!/bin/sh\necho RAN-marker-tool\n"),
        (ALLOWED_TOOL, "#!/bin/sh\necho RAN-allowed-tool\n"),
    ] {
        std::fs::write(bin.join(name), text).expect("write tool");
        std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let echo = std::fs::canonicalize("/bin/echo").expect("echo");
    for name in [DENIED_ELF, ALLOWED_ELF] {
        std::fs::copy(&echo, bin.join(name)).expect("copy echo");
    }
    w.user_config(&format!(
        "[tools.shell]\ndenied_commands = [\"sudo\", \"{DENIED_TOOL}\", \"{DENIED_ELF}\"]\n"
    ));
    Some(Installed { w, bin })
}

impl Installed {
    fn run(&self, command: &str) -> Reply {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let request = json!({"command": command, "timeout": 30}).to_string();
        self.w.call_env(
            "sneaky-run",
            &[],
            request.as_bytes(),
            &[("PATH", OsStr::new(&path))],
        )
    }

    /// Run `command` and return its stdout and stderr together.
    fn output(&self, command: &str) -> String {
        let reply = self.run(command);
        assert_eq!(reply.json["ok"], true, "{command}: {}", reply.json);
        let r = &reply.json["result"];
        assert_eq!(r["sandboxed"], true, "{r}");
        assert!(
            r["sandbox"]
                .as_str()
                .unwrap_or("")
                .contains("programs: contained"),
            "{r}"
        );
        format!(
            "{}{}",
            r["stdout"].as_str().unwrap_or(""),
            r["stderr"].as_str().unwrap_or("")
        )
    }

    fn script(&self, name: &str, text: &str) {
        self.w.write(name, text);
        std::fs::set_permissions(
            self.w.root.join(name),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
}

/// Every way of starting a program `$1` (`$3`: its directory; `$2`: an ELF program there, run
/// with the argument it prints), each in a script the policy sees only as `./forms.sh`.
const FORMS: &str = r#"#!/bin/bash
T=$1; E=$2; B=$3
$T
"$T"
for p in "$T"; do "$p"; done
echo "$($T)"
echo "`$T`"
bash -c "$T"
sh -c "$T"
echo x | xargs "$T"
find . -maxdepth 0 -exec "$T" \;
env "$T"
timeout 5 "$T"
eval "$T"
f() { "$T"; }; f
exec 3<"$B/$T"; /proc/self/fd/3; exec 3<&-
cp "$B/$T" "./copy-$T"; chmod +x "./copy-$T"; "./copy-$T"
cat "$B/$T" | sh
ln -sf "$B/$T" "./link-$T"; "./link-$T"
"$B/$E" "RAN-$E"
/lib64/ld-linux-x86-64.so.2 "$B/$E" "RAN-$E"
printf '#!%s RAN-%s\n' "$B/$E" "$E" > "./interp-$E"; chmod +x "./interp-$E"; "./interp-$E"
echo DONE
"#;

/// How many times [`FORMS`] runs the script and the ELF program when nothing stops them.
const SCRIPT_FORMS: usize = 17;
const ELF_FORMS: usize = 3;

#[test]
fn a_denied_program_never_runs_by_any_form_of_the_shell() {
    let Some(i) = installed() else { return };
    i.script("forms.sh", FORMS);
    let bin = i.bin.display().to_string();
    let allowed = i.output(&format!("./forms.sh {ALLOWED_TOOL} {ALLOWED_ELF} {bin}"));
    assert_eq!(
        allowed.matches("RAN-allowed-tool").count(),
        SCRIPT_FORMS,
        "every form starts a program: {allowed}"
    );
    assert_eq!(
        allowed.matches("RAN-allowed-elf").count(),
        ELF_FORMS,
        "{allowed}"
    );
    assert!(allowed.contains("DONE"), "{allowed}");
    let denied = i.output(&format!("./forms.sh {DENIED_TOOL} {DENIED_ELF} {bin}"));
    assert!(denied.contains("DONE"), "{denied}");
    assert!(
        !denied.contains("RAN-marker"),
        "a denied program ran: {denied}"
    );
    // Its copy holds nothing: the file reads as empty where it is installed.
    let copy = std::fs::metadata(i.w.root.join(format!("copy-{DENIED_TOOL}"))).expect("copy");
    assert_eq!(copy.len(), 0);
}

/// What the policy sees: refused by name, by its installed path, behind a wrapper, in `bash
/// -c`, `xargs`; what it cannot judge is refused too, or left to the kernel, and never runs.
#[test]
fn a_denied_program_typed_in_any_form_never_runs() {
    let Some(i) = installed() else { return };
    let bin = i.bin.display().to_string();
    for command in [
        DENIED_TOOL.to_string(),
        format!("{bin}/{DENIED_TOOL}"),
        format!("ls && {DENIED_TOOL}"),
        format!("timeout 5 {DENIED_TOOL}"),
        format!("env {DENIED_TOOL}"),
        format!("bash -c '{DENIED_TOOL}'"),
        format!("sh -c 'ls; {DENIED_TOOL}'"),
        format!("echo x | xargs {DENIED_TOOL}"),
        format!("find . -maxdepth 0 -exec {DENIED_TOOL} \\;"),
        format!("for i in 1; do {DENIED_TOOL}; done"),
        format!("echo $({DENIED_TOOL})"),
        format!("X={DENIED_TOOL}; $X"),
        format!("eval {DENIED_TOOL}"),
        format!("cat {bin}/{DENIED_TOOL} | sh"),
        format!("{DENIED_ELF} RAN-{DENIED_ELF}"),
    ] {
        let reply = i.run(&command);
        if reply.json["ok"] == false {
            let m = reply.err("command_denied", 3);
            assert!(!m.is_empty(), "{command}");
            continue;
        }
        let r = &reply.json["result"];
        let out = format!("{}{}", r["stdout"], r["stderr"]);
        assert!(!out.contains("RAN-marker"), "{command}: ran: {r}");
    }
    // Started where the policy cannot see it, the kernel's refusal says which key lets it run.
    let reply = i.run(&format!("X={DENIED_TOOL}; $X"));
    let r = reply.command_ran();
    assert!(
        r["stderr"].as_str().unwrap_or("").ends_with(&format!(
            "could not be executed: it is on the deny list, which the kernel holds however it \
             is started; taking \"{DENIED_TOOL}\" out of tools.shell.denied_commands in your \
             configuration lets it run (docs/sandbox.md)\n"
        )),
        "{r}"
    );
    // By name, the refusal says which key and why.
    let m = i.run(DENIED_TOOL).err("command_denied", 3);
    assert!(m.contains("tools.shell.denied_commands"), "{m}");
    let m = i.run("sudo true").err("command_denied", 3);
    assert!(m.contains("denied_commands"), "{m}");
}

/// python3 making the system calls itself: `execv` by path, through a link in the workspace,
/// through `/proc/self/fd`, and `fexecve` of a descriptor; the allowed twin runs each way.
const RAW_EXEC_PY: &str = r#"import os, sys
b = sys.argv[1]
for name in sys.argv[2:]:
    p = os.path.join(b, name)
    for how in ["execv", "link", "procfd", "fexecve"]:
        pid = os.fork()
        if pid == 0:
            try:
                argv = [name, "RAN-" + name]
                if how == "execv":
                    os.execv(p, argv)
                elif how == "link":
                    link = "./pylink-" + name
                    if not os.path.lexists(link):
                        os.symlink(p, link)
                    os.execv(link, argv)
                elif how == "procfd":
                    fd = os.open(p, os.O_RDONLY)
                    os.set_inheritable(fd, True)  # a script's interpreter opens it again
                    os.execv("/proc/self/fd/%d" % fd, argv)
                else:
                    fd = os.open(p, os.O_RDONLY)
                    os.set_inheritable(fd, True)
                    os.execve(fd, argv, dict(os.environ))
            except OSError as e:
                print("%s %s refused: errno %d" % (name, how, e.errno), flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
"#;

#[test]
fn a_denied_program_never_runs_by_raw_exec_from_python() {
    let Some(i) = installed() else { return };
    if !util::require_cmd("python3") {
        return;
    }
    i.w.write("raw.py", RAW_EXEC_PY);
    let bin = i.bin.display().to_string();
    let allowed = i.output(&format!(
        "python3 raw.py {bin} {ALLOWED_TOOL} {ALLOWED_ELF}"
    ));
    assert_eq!(allowed.matches("RAN-allowed-tool").count(), 4, "{allowed}");
    assert_eq!(allowed.matches("RAN-allowed-elf").count(), 4, "{allowed}");
    let denied = i.output(&format!("python3 raw.py {bin} {DENIED_TOOL} {DENIED_ELF}"));
    assert!(!denied.contains("RAN-marker"), "{denied}");
    assert_eq!(denied.matches("refused: errno").count(), 8, "{denied}");
}

/// A C program: `execve` by path, `fexecve` and `execveat(AT_EMPTY_PATH)` of a descriptor.
const RAW_EXEC_C: &str = r#"#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        for (int how = 0; how < 3; how++) {
            pid_t pid = fork();
            if (pid == 0) {
                char *args[] = {argv[i], "RAN-C", NULL};
                int fd = open(argv[i], O_RDONLY);
                if (how == 0) execve(argv[i], args, environ);
                else if (how == 1) fexecve(fd, args, environ);
                else syscall(SYS_execveat, fd, "", args, environ, AT_EMPTY_PATH);
                printf("%s %d refused: %s\n", argv[i], how, strerror(errno));
                fflush(stdout);
                _exit(0);
            }
            waitpid(pid, NULL, 0);
        }
    }
    return 0;
}
"#;

#[test]
fn a_denied_program_never_runs_by_raw_exec_from_c() {
    let Some(i) = installed() else { return };
    if !util::require_cmd("cc") {
        return;
    }
    let src = i.w.outside().join("cexec.c");
    std::fs::write(&src, RAW_EXEC_C).expect("write");
    let out = std::process::Command::new("cc")
        .arg("-o")
        .arg(i.w.root.join("cexec"))
        .arg(&src)
        .output()
        .expect("cc");
    assert!(out.status.success(), "{out:?}");
    let bin = i.bin.display().to_string();
    let allowed = i.output(&format!("./cexec {bin}/{ALLOWED_TOOL} {bin}/{ALLOWED_ELF}"));
    assert_eq!(allowed.matches("RAN-allowed-tool").count(), 3, "{allowed}");
    assert_eq!(allowed.matches("RAN-C").count(), 3, "{allowed}");
    let denied = i.output(&format!("./cexec {bin}/{DENIED_TOOL} {bin}/{DENIED_ELF}"));
    assert!(
        !denied.contains("RAN-marker") && !denied.contains("RAN-C"),
        "{denied}"
    );
    assert_eq!(denied.matches("refused").count(), 6, "{denied}");
}

/// The built-in deny list as installed on this machine: each entry found on PATH cannot be
/// executed nor read (a multi-call binary that a denied name leads to is left out, as the
/// sandbox leaves it: docs/sandbox.md, "Known limits").
#[test]
fn the_installed_programs_of_the_built_in_deny_list_cannot_run() {
    if !namespaces_or_skip("the_installed_programs_of_the_built_in_deny_list_cannot_run")
        || !util::require_cmd("python3")
    {
        return;
    }
    use sneaky::config::commands::DEFAULT_DENIED;
    let names: Vec<&str> = DEFAULT_DENIED.iter().map(|(n, _)| *n).collect();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found: Vec<PathBuf> = std::env::split_paths(&path)
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .filter(|p| {
            std::fs::canonicalize(p).is_ok_and(|real| {
                real.is_file()
                    && real
                        .file_name()
                        .and_then(OsStr::to_str)
                        .is_some_and(|n| names.contains(&n))
            })
        })
        .collect();
    if found.is_empty() {
        util::skip("no program of the built-in deny list is installed here");
        return;
    }
    let w = util::ws();
    w.write(
        "probe.py",
        "import os, sys\nfor p in sys.argv[1:]:\n    size = len(open(p, 'rb').read())\n    try:\n        os.execv(p, [p, '--version'])\n    except OSError as e:\n        print(p, size, e.errno)\n",
    );
    let list: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    let reply = w.call(
        "sneaky-run",
        json!({"command": format!("python3 probe.py {}", list.join(" "))}),
    );
    let r = reply.command_ran();
    let lines: Vec<&str> = r["stdout"].as_str().unwrap_or("").lines().collect();
    assert_eq!(lines.len(), found.len(), "{r}");
    for (line, p) in lines.iter().zip(&list) {
        assert_eq!(*line, format!("{p} 0 13"), "{p} (size, errno): {r}");
    }
}

#[test]
fn nothing_executes_outside_path_the_workspace_and_the_temp_dir() {
    let Some(i) = installed() else { return };
    let outside = i.w.outside().join("cache");
    std::fs::create_dir_all(&outside).expect("mkdir");
    i.w.user_config(&format!(
        "[tools.shell]\nwrite_paths = [\"{}\"]\n",
        outside.display()
    ));
    i.script(
        "drop.sh",
        &format!(
            "#!/bin/sh\nfor d in {} /dev/shm \"$TMPDIR\" .; do\n  cp /bin/echo \"$d/dropped\" && \"$d/dropped\" \"RAN-in-$d\"\ndone\necho DONE\n",
            outside.display()
        ),
    );
    let out = i.output("./drop.sh");
    assert!(out.contains("DONE"), "{out}");
    assert!(
        out.contains("RAN-in-."),
        "the workspace's own program: {out}"
    );
    assert!(
        out.contains("RAN-in-/tmp/"),
        "the private temp dir's: {out}"
    );
    assert!(!out.contains("RAN-in-/dev/shm"), "{out}");
    assert!(
        !out.contains(&format!("RAN-in-{}", outside.display())),
        "a write path is no place to execute from: {out}"
    );
    assert!(
        out.contains("sneaky-run:") && out.contains("tools.shell.exec_paths"),
        "the refusal names the key: {out}"
    );
}

/// A file of the workspace is never an installed program: a project's own `./sudo` or
/// `.venv/bin/python` runs (contained), where the policy refused it by its name before.
#[test]
fn the_workspace_programs_run_whatever_their_names() {
    let Some(i) = installed() else { return };
    i.script(
        "sudo",
        "#!/bin/sh\necho workspace sudo, no privilege: $(id -u)\n",
    );
    i.script(".venv/bin/python", "#!/bin/sh\necho venv python\n");
    let out = i.output("./sudo && .venv/bin/python");
    assert!(
        out.contains("workspace sudo") && out.contains("venv python"),
        "{out}"
    );
}

fn sandbox_field(w: &Ws, config: &str) -> Value {
    w.user_config(config);
    let reply = w.call("sneaky-run", json!({"command": "python3 -c 'print(1)'"}));
    reply.json.clone()
}

/// The strict mode applies, and says so, wherever a layer may be missing: the sandbox off, a
/// `require_layers` without one, a container as the boundary; the default is contained.
#[test]
fn the_strict_mode_applies_whenever_a_layer_may_be_missing() {
    if !namespaces_or_skip("the_strict_mode_applies_whenever_a_layer_may_be_missing")
        || !util::require_cmd("python3")
    {
        return;
    }
    let w = util::ws();
    let v = sandbox_field(&w, "");
    assert_eq!(v["ok"], true, "{v}");
    assert!(
        v["result"]["sandbox"]
            .as_str()
            .is_some_and(|s| s.ends_with("programs: contained (any program but the deny list)")),
        "{v}"
    );
    for (config, why) in [
        (
            "[tools.shell]\nsandbox = false\n",
            "tools.shell.sandbox = false",
        ),
        (
            "[tools.shell]\nrequire_layers = [\"landlock\", \"seccomp\"]\n",
            "require_layers leaves a layer out",
        ),
        (
            "[tools.shell]\ncontainer_boundary = true\n",
            "container_boundary",
        ),
        (
            "[tools.shell]\nstrict = true\n",
            "tools.shell.strict = true",
        ),
    ] {
        let v = sandbox_field(&w, config);
        assert_eq!(v["error"]["code"], "command_denied", "{config}: {v}");
        let m = v["error"]["message"].as_str().unwrap_or("");
        assert!(
            m.contains("strict mode") && m.contains(why),
            "{config}: {m}"
        );
    }
    // What runs in the strict mode says so in its result.
    w.user_config("[tools.shell]\nsandbox = false\n");
    let r = w.call("sneaky-run", json!({"command": "true"}));
    let sandbox = r.command_ran()["sandbox"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        sandbox.ends_with(
            "programs: strict (tools.shell.sandbox = false: no layer contains the command)"
        ),
        "{sandbox}"
    );
}
