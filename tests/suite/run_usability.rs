//! What a refusal says and the ways around it: a program the build made in the workspace
//! (`cc -o hello hello.c && ./hello`, `make run`) runs by default, and in the strict mode with
//! `tools.shell.exec_workspace_dirs`, whose refusal says so; a version manager's shim runs
//! the real program; git's network subcommands are judged under the network key.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Ws};

const HELLO_C: &str =
    "#include <stdio.h>\nint main(void) { puts(\"hello from the build\"); return 0; }\n";
const MAKEFILE: &str = "run: hello\n\t./hello\nhello: hello.c\n\tcc -o hello hello.c\n";

fn build_ws() -> Option<Ws> {
    if !util::require_cmd("cc") || !namespaces_or_skip("exec_workspace_dirs") {
        return None;
    }
    let w = util::ws();
    w.write("hello.c", HELLO_C);
    w.write("Makefile", MAKEFILE);
    w.write("sub/hello.c", HELLO_C);
    Some(w)
}

fn stdout(r: &Value) -> &str {
    r["stdout"].as_str().unwrap_or("")
}

/// With every layer in force, what the build makes runs, by path and from make's shell.
#[test]
fn the_build_output_runs_by_default() {
    let Some(w) = build_ws() else { return };
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "cc -o hello hello.c && ./hello"}),
        )
        .command_ran()
        .clone();
    assert_eq!(stdout(&r), "hello from the build\n", "{r}");
    assert!(
        r["sandbox"]
            .as_str()
            .is_some_and(|s| s.ends_with("programs: contained (any program but the deny list)")),
        "{r}"
    );
    let r = w
        .call("sneaky-run", json!({"command": "make -B run"}))
        .command_ran()
        .clone();
    assert!(stdout(&r).ends_with("hello from the build\n"), "{r}");
}

#[test]
fn a_refused_build_output_names_the_key_that_allows_it() {
    let Some(w) = build_ws() else { return };
    user_config(
        &w,
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"cc\"]\n",
    );
    // The policy refuses `./hello` up front, naming the key.
    let m = w
        .call(
            "sneaky-run",
            json!({"command": "cc -o hello hello.c && ./hello"}),
        )
        .err("command_denied", 3);
    assert!(m.contains("tools.shell.exec_workspace_dirs"), "{m}");
    // make runs it through its shell: the kernel refuses it, and the result says why.
    let reply = w.call("sneaky-run", json!({"command": "make run"}));
    let r = reply.command_ran();
    assert!(!stdout(r).contains("hello from the build"), "{r}");
    let stderr = r["stderr"].as_str().unwrap_or("");
    assert!(
        stderr.contains("sneaky-run: ./hello could not be executed")
            && stderr.contains("tools.shell.exec_workspace_dirs"),
        "{r}"
    );
}

/// The strict mode: the build output runs only from the directories the key names.
#[test]
fn exec_workspace_dirs_lets_the_build_output_run() {
    let Some(w) = build_ws() else { return };
    user_config(
        &w,
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"cc\"]\nexec_workspace_dirs = [\".\"]\n",
    );
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "cc -o hello hello.c && ./hello"}),
        )
        .command_ran()
        .clone();
    assert_eq!(stdout(&r), "hello from the build\n", "{r}");
    let r = w
        .call("sneaky-run", json!({"command": "make -B run"}))
        .command_ran()
        .clone();
    assert!(stdout(&r).ends_with("hello from the build\n"), "{r}");
    // Only the directories named: `build` (made for the call) runs, the root does not.
    user_config(
        &w,
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"cc\"]\nexec_workspace_dirs = [\"build\"]\n",
    );
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "cc -o build/app hello.c && build/app && ./build/app"}),
        )
        .command_ran()
        .clone();
    assert_eq!(
        stdout(&r),
        "hello from the build\nhello from the build\n",
        "{r}"
    );
    w.call("sneaky-run", json!({"command": "./hello"}))
        .err("command_denied", 3);
    let r = w.call("sneaky-run", json!({"command": "make run"}));
    assert!(!stdout(r.command_ran()).contains("hello from the build"));
    // A workspace cannot grant itself the key.
    std::fs::write(
        w.dir.path().join("xdg/sneaky/config.toml"),
        "[tools.shell]\nstrict = true\nextra_allowed_commands = [\"cc\"]\n",
    )
    .expect("write");
    w.write(
        "sneaky.toml",
        "[tools.shell]\nexec_workspace_dirs = [\".\"]\n",
    );
    w.call("sneaky-run", json!({"command": "./hello"}))
        .err("command_denied", 3);
}

/// A pyenv/asdf-style shim: a shell script in `<manager>/shims` that runs the manager, which
/// runs the real program beneath its own directory.
#[test]
fn a_version_manager_shim_runs_the_real_program() {
    if !namespaces_or_skip("a_version_manager_shim_runs_the_real_program") {
        return;
    }
    let w = util::ws();
    let mgr = w.outside().join("mgr");
    for d in ["shims", "libexec", "versions/1.0/bin"] {
        std::fs::create_dir_all(mgr.join(d)).expect("mkdir");
    }
    let script = |path: &Path, body: String| {
        std::fs::write(path, body).expect("write");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    script(
        &mgr.join("shims/fakepy"),
        format!(
            "#!/usr/bin/env bash\nset -e\nprogram=\"${{0##*/}}\"\nexec \"{}/libexec/mgr\" exec \"$program\" \"$@\"\n",
            mgr.display()
        ),
    );
    script(
        &mgr.join("libexec/mgr"),
        format!(
            "#!/usr/bin/env bash\nshift\nprogram=\"$1\"\nshift\nexec \"{}/versions/1.0/bin/$program\" \"$@\"\n",
            mgr.display()
        ),
    );
    // The real program: a binary of its own (a copy, so no other rule lets it run).
    util::copy_executable(Path::new("/bin/echo"), &mgr.join("versions/1.0/bin/fakepy"));
    user_config(&w, "[tools.shell]\nextra_allowed_commands = [\"fakepy\"]\n");
    let path = format!(
        "{}:{}",
        mgr.join("shims").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    use assert_cmd::cargo::CommandCargoExt;
    let mut cmd = std::process::Command::cargo_bin("sneaky-run").expect("binary");
    util::fence(&mut cmd, w.dir.path())
        .current_dir(&w.root)
        .env("PATH", path)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.dir.path().join("xdg"))
        .arg("fakepy shimmed ok");
    let reply = util::Reply::parse("sneaky-run", cmd.output().expect("run"));
    let r = reply.command_ran();
    assert_eq!(stdout(r), "shimmed ok\n", "{r}");
}

#[test]
fn git_network_subcommands_name_the_network_key() {
    if !namespaces_or_skip("git_network_subcommands_name_the_network_key") {
        return;
    }
    let w = util::ws();
    for command in [
        "git clone https://git.example/r.git",
        "git ls-remote https://git.example/r.git",
        "git fetch https://git.example/r.git",
        "git push origin main",
    ] {
        let m = w
            .call("sneaky-run", json!({"command": command}))
            .err("command_denied", 3);
        assert!(m.contains("tools.shell.network"), "{command}: {m}");
    }
    // A local repository needs no network: cloned in the sandbox, network off.
    let out = std::process::Command::new("git")
        .args(["init", "-q", "--initial-branch=main"])
        .arg(w.root.join("origin"))
        .output()
        .expect("git");
    assert!(out.status.success(), "{out:?}");
    let r = w
        .call(
            "sneaky-run",
            json!({"command": "git clone -q ./origin copy && git ls-remote ./origin && ls copy/.git/HEAD"}),
        )
        .command_ran()
        .clone();
    assert!(stdout(&r).contains("copy/.git/HEAD"), "{r}");
}
