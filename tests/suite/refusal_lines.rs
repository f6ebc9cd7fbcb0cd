//! The line a command's stderr ends with when a kernel layer stopped it (src/shell/hint.rs):
//! a program outside the exec set (EACCES) and a write outside the writable places (EROFS)
//! each name the key and the value to add; adding that value lets the same command through.
//! The network's lines are tested with the proxy, in sandbox_net.rs.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Ws};

fn run(w: &Ws, command: &str) -> Value {
    w.call("sneaky-run", json!({"command": command, "timeout": 60}))
        .command_ran()
        .clone()
}

fn stderr(r: &Value) -> &str {
    r["stderr"].as_str().unwrap_or("")
}

fn last_line(r: &Value) -> &str {
    stderr(r).lines().last().unwrap_or("")
}

#[test]
fn a_program_outside_the_exec_set_names_exec_paths() {
    if !namespaces_or_skip("a_program_outside_the_exec_set_names_exec_paths") {
        return;
    }
    let w = util::ws();
    // A program neither on PATH nor in the workspace, run by a script the lists allow.
    let tool = w.outside().join("tools/probe-tool");
    std::fs::create_dir_all(tool.parent().expect("dir")).expect("mkdir");
    std::fs::write(&tool, "#!/bin/sh\necho RAN\n").expect("write");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    w.write("run.sh", &format!("#!/bin/sh\n{}\n", tool.display()));
    std::fs::set_permissions(
        w.root.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    user_config(
        &w,
        "[tools.shell]\nextra_allowed_commands = [\"./run.sh\"]\n",
    );
    let r = run(&w, "./run.sh");
    assert!(!r["stdout"].as_str().unwrap_or("").contains("RAN"), "{r}");
    let file = std::fs::canonicalize(&tool).expect("canonical");
    assert_eq!(
        last_line(&r),
        format!(
            "sneaky-run: {} could not be executed: programs execute only from /usr, PATH's \
             directories, the library directories, the workspace and the private temp dir; \
             tools.shell.exec_paths = [\"{}\"] in your configuration allows it \
             (docs/sandbox.md)",
            tool.display(),
            file.display()
        ),
        "{r}"
    );
    // The value the line gives, added: the program runs, and nothing is said.
    user_config(
        &w,
        &format!(
            "[tools.shell]\nextra_allowed_commands = [\"./run.sh\"]\nexec_paths = [\"{}\"]\n",
            file.display()
        ),
    );
    let r = run(&w, "./run.sh");
    assert_eq!(r["stdout"], "RAN\n", "{r}");
    assert!(!stderr(&r).contains("sneaky-run:"), "{r}");
}

#[test]
fn a_write_outside_the_writable_places_names_write_paths() {
    if !namespaces_or_skip("a_write_outside_the_writable_places_names_write_paths") {
        return;
    }
    let w = util::ws();
    let dir = w.outside().join("cache");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let dir = std::fs::canonicalize(&dir).expect("canonical");
    let line = |path: &std::path::Path| {
        format!(
            "sneaky-run: {} could not be written: commands write only in the workspace, their \
             private temp dir ($TMPDIR) and tools.shell.write_paths; tools.shell.write_paths = \
             [\"{}\"] in your configuration allows it (docs/sandbox.md)",
            path.display(),
            dir.display()
        )
    };
    user_config(&w, "[tools.shell]\n");
    let file = dir.join("made");
    let r = run(&w, &format!("touch {}", file.display()));
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(!file.exists());
    assert_eq!(last_line(&r), line(&file), "{r}");
    // A directory that does not exist yet: the nearest one that does is the value.
    let deep = dir.join("new");
    let r = run(&w, &format!("mkdir -p {}/deeper", deep.display()));
    assert_eq!(last_line(&r), line(&deep), "{r}");
    // The value the line gives, added: the same writes go through, and nothing is said.
    user_config(
        &w,
        &format!("[tools.shell]\nwrite_paths = [\"{}\"]\n", dir.display()),
    );
    let r = run(
        &w,
        &format!(
            "touch {} && mkdir -p {}/deeper",
            file.display(),
            deep.display()
        ),
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(file.exists() && deep.join("deeper").is_dir());
    assert!(!stderr(&r).contains("sneaky-run:"), "{r}");
}
