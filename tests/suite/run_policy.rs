//! The bypass corpus of the strict mode: command lines that would run something its policy
//! must not allow. Each must be refused with `command_denied` (exit 3) and nothing may have
//! run: the marker the payload would create does not exist afterwards (inside or outside the
//! root), and the files it would change are unchanged. (The contained mode's promise, that a
//! denied program never runs however it is started, is tests/suite/deny_programs.rs.)

use serde_json::json;

use crate::util::{self, Ws};

/// A workspace in the strict mode with a readable file, a script that would create the
/// marker, and a file named `-exec` (so that an unquoted `-exe?` would glob to it).
fn corpus_ws() -> Ws {
    let w = util::ws();
    w.user_config("[tools.shell]\nstrict = true\n");
    w.write("f.txt", "a line\n");
    w.write("evil.sh", "touch pwned\n");
    w.write("-exec", "");
    std::fs::write(w.outside().join("outside.txt"), "untouched\n").expect("write");
    w
}

fn assert_refused(w: &Ws, command: &str) -> String {
    let reply = w.call("sneaky-run", json!({ "command": command }));
    let message = reply.err("command_denied", 3);
    for marker in ["pwned", "sneaky.toml"] {
        assert!(
            !w.root.join(marker).exists(),
            "{command:?} created {marker}"
        );
    }
    assert!(
        !w.outside().join("pwned").exists(),
        "{command:?} wrote outside the root"
    );
    assert_eq!(
        std::fs::read_to_string(w.outside().join("outside.txt")).expect("read"),
        "untouched\n",
        "{command:?} changed a file outside the root"
    );
    assert_eq!(w.read("f.txt"), "a line\n", "{command:?} changed f.txt");
    message
}

/// (family, command line). Every one would create `pwned` (or write where it must not) if
/// the policy let it through.
const CORPUS: &[(&str, &str)] = &[
    ("command substitution", "echo $(touch pwned)"),
    ("command substitution in quotes", "echo \"$(touch pwned)\""),
    ("backticks", "echo `touch pwned`"),
    ("process substitution", "cat <(touch pwned)"),
    ("process substitution (output)", "echo hi > >(touch pwned)"),
    ("eval", "eval 'touch pwned'"),
    ("exec", "exec touch pwned"),
    ("source", "source ./evil.sh"),
    ("dot", ". ./evil.sh"),
    ("shell -c", "bash -c 'touch pwned'"),
    ("sh -c", "sh -c 'touch pwned'"),
    ("wrapper env", "env sh -c 'touch pwned'"),
    ("wrapper env -S", "env -S 'sh -c touch\\ pwned'"),
    ("wrapper timeout", "timeout 5 sh -c 'touch pwned'"),
    ("wrapper nice", "nice -n 1 bash -c 'touch pwned'"),
    ("wrapper nohup", "nohup sh -c 'touch pwned'"),
    ("wrapper command", "command bash -c 'touch pwned'"),
    ("wrapper xargs shell", "echo x | xargs sh -c 'touch pwned'"),
    (
        "wrapper xargs ruled program",
        "echo '-exec touch pwned ;' | xargs find .",
    ),
    ("opaque wrapper", "setsid touch pwned"),
    ("list after allowed", "git status; sh -c 'touch pwned'"),
    ("newline", "git status\nbash -c 'touch pwned'"),
    ("and-list", "ls && bash -c 'touch pwned'"),
    ("pipeline", "ls | sh"),
    ("find -exec", "find . -maxdepth 0 -exec touch pwned ;"),
    ("find -execdir", "find . -maxdepth 0 -execdir touch pwned ;"),
    ("find -ok", "find . -maxdepth 0 -ok touch pwned ;"),
    ("find -fprint", "find . -maxdepth 0 -fprint pwned"),
    ("find -delete", "find . -name f.txt -delete"),
    (
        "find glob to -exec",
        "find . -maxdepth 0 -exe? touch pwned ;",
    ),
    ("git -c alias", "git -c alias.x='!touch pwned' x"),
    ("git -c pager", "git -c core.pager='touch pwned' -p log"),
    ("git --config-env", "git --config-env=core.pager=X log"),
    ("git alias via config", "git config alias.y '!touch pwned'"),
    (
        "git config command key",
        "git config core.fsmonitor 'touch pwned'",
    ),
    ("git unknown subcommand", "git y"),
    ("git --exec-path", "git --exec-path=. status"),
    ("git --output", "git diff --output=pwned"),
    ("git -C outside", "git -C .. status"),
    ("git upload-pack", "git fetch --upload-pack='touch pwned' ."),
    ("sed e command", "sed -n '1e touch pwned' f.txt"),
    ("sed s///e", "sed 's/.*/touch pwned/e' f.txt"),
    ("sed w", "sed -n 'w pwned' f.txt"),
    ("sed s///w", "sed 's/a/b/w pwned' f.txt"),
    ("sed -i outside", "sed -i 's/un/UN/' ../outside.txt"),
    ("sed -f", "sed -f evil.sh f.txt"),
    ("rg --pre", "rg --pre ./evil.sh line"),
    ("assignment prefix", "BASH_ENV=./evil.sh git status"),
    ("assignment alone", "PATH=.; ls"),
    ("quoted name", "'touch' pwned"),
    ("double-quoted name", "\"touch\" pwned"),
    ("escaped name", "t\\ouch pwned"),
    ("ANSI-C name", "$'touch' pwned"),
    ("variable expansion", "touch ${HOME}pwned"),
    ("arithmetic expansion", "echo $((1+1)) > pwned"),
    ("path to a shell", "/bin/sh -c 'touch pwned'"),
    ("workspace script", "./evil.sh"),
    ("function", "f() { touch pwned; }; f"),
    ("group", "ls && { touch pwned; }"),
    ("if", "if true; then touch pwned; fi"),
    ("while", "ls | while read f; do touch pwned; done"),
    ("trap", "trap 'touch pwned' EXIT"),
    ("alias", "alias ls='touch pwned'; ls"),
    ("hash", "hash -p ./evil.sh ls; ls"),
    ("test -v subscript", "test -v 'a[$(touch pwned)]'"),
    ("[ ] hides a redirection", "[ a > pwned ]"),
    ("[ ] hides a list", "[ x && touch pwned ]"),
    ("[ -v ] subscript", "[ -v 'a[$(touch pwned)]' ]"),
    ("printf -v", "printf -v 'a[$(touch pwned)]' x"),
    ("heredoc expansion", "cat <<EOF\n$(touch pwned)\nEOF"),
    ("redirect outside", "echo x > ../pwned"),
    ("redirect to config", "echo x > sneaky.toml"),
    ("redirect glob", "echo x > pwne?"),
    ("tee config", "echo x | tee sneaky.toml"),
    ("cp over config", "cp f.txt sneaky.toml"),
    ("cd outside", "cd .. && touch pwned"),
    ("unparsable", "touch pwned ("),
    ("denied program", "rm -f f.txt"),
    ("not allowed program", "python3 -c 'open(\"pwned\",\"w\")'"),
    ("hash in a word", "[ -f f.txt ]#; touch pwned"),
];

#[test]
fn bypass_corpus_is_refused_and_nothing_runs() {
    assert!(CORPUS.len() >= 30);
    let w = corpus_ws();
    // The outside marker directory must be reachable by the payloads, so put one there too.
    for (family, command) in CORPUS {
        let message = assert_refused(&w, command);
        assert!(!message.is_empty(), "{family}: empty message");
    }
}

#[test]
fn refusals_name_the_offending_part() {
    let w = corpus_ws();
    let m = assert_refused(&w, "git status && rm -rf x");
    assert!(m.contains("rm -rf x") && m.contains("denied"), "{m}");
    let m = assert_refused(&w, "find . -exec touch pwned ;");
    assert!(m.contains("-exec"), "{m}");
    let m = assert_refused(&w, "echo $(touch pwned)");
    assert!(m.contains("command substitution"), "{m}");
    let m = assert_refused(&w, "git -c alias.x='!touch pwned' x");
    assert!(m.contains("-c"), "{m}");
    let m = assert_refused(&w, "sed -n '1e touch pwned' f.txt");
    assert!(m.contains("`e` command"), "{m}");
    let m = assert_refused(&w, "FOO=1 ls");
    assert!(m.contains("assignment"), "{m}");
}

#[test]
fn configured_lists_replace_the_defaults() {
    let w = corpus_ws();
    crate::run_exec::user_config(
        &w,
        "[tools.shell]\nallowed_commands = [\"echo\", \"bash\"]\ndenied_commands = [\"ls\"]\n",
    );
    // bash is allowed explicitly: `bash -c` runs, and its script is checked in turn.
    let r = w.call("sneaky-run", json!({"command": "bash -c 'echo inner'"}));
    assert_eq!(r.command_ran()["stdout"], "inner\n");
    let m = w
        .call("sneaky-run", json!({"command": "bash -c 'touch pwned'"}))
        .err("command_denied", 3);
    assert!(m.contains("touch"), "{m}");
    w.call("sneaky-run", json!({"command": "ls"}))
        .err("command_denied", 3);
    w.call("sneaky-run", json!({"command": "cat f.txt"}))
        .err("command_denied", 3);
    assert!(!w.root.join("pwned").exists());
}

#[test]
fn deeply_nested_input_is_refused_without_crashing() {
    let w = corpus_ws();
    for command in [
        format!("{}touch pwned{}", "( ".repeat(15000), " )".repeat(15000)),
        format!("{}touch pwned", "( ".repeat(20000)),
        format!("{}touch pwned", "! ".repeat(30000)),
        format!("echo {}", "\"a\"".repeat(20000)).replace("echo", "echo $(touch pwned)"),
    ] {
        assert_refused(&w, &command);
    }
    // Over the length bound: bad input, not a refusal.
    let long = format!("echo {}", "a".repeat(70 * 1024));
    w.call("sneaky-run", json!({ "command": long }))
        .err("invalid_args", 2);
}
