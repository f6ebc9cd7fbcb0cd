//! The command policy through the binary. With the kernel layers in force it accepts the
//! whole bash language and judges every program word it can see: the bypass corpus hides a
//! denied program (`touch`, by the configuration) in every construct, and each line must be
//! refused with `command_denied` (exit 3) with nothing run: the marker the payload would
//! create does not exist afterwards (inside or outside the root), and the files it would
//! change are unchanged. When a layer may be missing the policy is strict and refuses the
//! language beyond simple commands, as it did before the layers.

use serde_json::json;

use crate::util::{self, Ws};

/// The lists of these tests, explicit so that the default lists can change on their own:
/// `touch`, `rm` and `python3` denied, the shells allowed (so that what a script runs is
/// judged by the parser, not by the shell's own entry).
const LISTS: &str = "[tools.shell]\nallowed_commands = [\"ls\", \"cat\", \"echo\", \"printf\", \
\"grep\", \"git\", \"sed\", \"find\", \"xargs\", \"env\", \"timeout\", \"nice\", \"nohup\", \
\"command\", \"time\", \"sh\", \"bash\", \"rg\", \"tee\", \"cp\", \"sort\", \"true\", \"test\", \
\"[\", \"wc\", \"head\", \"cd\", \"setsid\", \"false\", \":\"]\ndenied_commands = [\"touch\", \"rm\", \"python3\"]\n";

/// A workspace with a readable file, a script that would create the marker, and a file
/// named `-exec` (so that an unquoted `-exe?` would glob to it), under [`LISTS`].
fn corpus_ws() -> Ws {
    let w = util::ws();
    w.write("f.txt", "a line\n");
    w.write("evil.sh", "touch pwned\n");
    w.write("-exec", "");
    std::fs::write(w.outside().join("outside.txt"), "untouched\n").expect("write");
    crate::run_exec::user_config(&w, LISTS);
    w
}

/// The same, with the kernel layers off: the policy is strict (and nothing it accepts would
/// be contained, so the corpus must be refused by the policy alone).
fn strict_ws() -> Ws {
    let w = util::ws();
    w.write("f.txt", "a line\n");
    w.write("evil.sh", "touch pwned\n");
    w.write("-exec", "");
    std::fs::write(w.outside().join("outside.txt"), "untouched\n").expect("write");
    crate::run_exec::user_config(&w, "[tools.shell]\nsandbox = false\n");
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

/// (family, command line): `touch pwned`, denied, hidden in each construct the parser can see.
const HIDDEN: &[(&str, &str)] = &[
    ("plain", "touch pwned"),
    ("command substitution", "echo $(touch pwned)"),
    ("command substitution in quotes", "echo \"$(touch pwned)\""),
    ("backticks", "echo `touch pwned`"),
    ("process substitution", "cat <(touch pwned)"),
    ("process substitution (output)", "echo hi > >(touch pwned)"),
    ("in an expansion", "echo ${X:-$(touch pwned)}"),
    ("in arithmetic", "echo $(( $(touch pwned) + 1 ))"),
    ("assignment", "X=$(touch pwned)"),
    ("assignment before a command", "X=$(touch pwned) ls"),
    ("declaration", "export X=$(touch pwned)"),
    ("for body", "for f in a; do touch pwned; done"),
    ("for words", "for f in $(touch pwned); do :; done"),
    (
        "c-style for",
        "for ((i = 0; i < 1; i++)); do touch pwned; done",
    ),
    ("while condition", "while touch pwned; do break; done"),
    ("until body", "until false; do touch pwned; break; done"),
    ("if condition", "if touch pwned; then :; fi"),
    ("else branch", "if false; then :; else touch pwned; fi"),
    ("case", "case x in x) touch pwned;; esac"),
    (
        "select",
        "select x in a; do touch pwned; break; done < /dev/null",
    ),
    ("group", "ls && { touch pwned; }"),
    ("subshell", "(touch pwned)"),
    ("negation", "! touch pwned"),
    ("background", "touch pwned & wait"),
    ("pipeline", "ls | touch pwned"),
    ("[[ ]]", "[[ -n $(touch pwned) ]]"),
    ("(( ))", "(( $(touch pwned) ))"),
    ("function body", "f() { touch pwned; }; f"),
    (
        "function shadowing an allowed name",
        "ls() { touch pwned; }; ls",
    ),
    ("call before the definition", "touch pwned; touch() { :; }"),
    ("definition in a subshell", "(touch() { :; }); touch pwned"),
    ("bash -c", "bash -c 'touch pwned'"),
    ("sh -c", "sh -c 'ls; touch pwned'"),
    (
        "bash -lc with expansions",
        "bash -lc \"cd $HOME; touch pwned\"",
    ),
    ("nested shells", "bash -c \"sh -c 'touch pwned'\""),
    ("heredoc-fed bash", "bash <<'EOF'\ntouch pwned\nEOF"),
    ("heredoc-fed sh -s", "sh -s <<EOF\nls\ntouch pwned\nEOF"),
    ("here-string-fed bash", "bash <<< 'touch pwned'"),
    ("heredoc expansion", "cat <<EOF\n$(touch pwned)\nEOF"),
    ("eval", "eval 'touch pwned'"),
    ("trap", "trap 'touch pwned' EXIT"),
    ("alias", "alias ls='touch pwned'"),
    ("exec", "exec touch pwned"),
    ("coproc", "coproc touch pwned"),
    ("hash -p", "hash -p /usr/bin/touch ls; ls"),
    ("wrapper env", "env X=1 touch pwned"),
    ("wrapper env -S", "env -S 'touch pwned'"),
    ("wrapper timeout", "timeout 5 touch pwned"),
    ("wrapper nice", "nice -n 1 touch pwned"),
    ("wrapper nohup", "nohup touch pwned"),
    ("wrapper command", "command touch pwned"),
    ("wrapper time", "time touch pwned"),
    (
        "wrappers stacked",
        "timeout 5 env nice bash -c 'touch pwned'",
    ),
    ("xargs", "echo pwned | xargs touch"),
    ("xargs -I", "echo pwned | xargs -I{} touch {}"),
    ("xargs sh -c", "echo x | xargs sh -c 'touch pwned'"),
    ("find -exec", "find . -maxdepth 0 -exec touch pwned \\;"),
    ("find -execdir", "find . -maxdepth 0 -execdir touch pwned +"),
    ("find -ok", "find . -maxdepth 0 -ok touch pwned ;"),
    (
        "find -exec sh -c",
        "find . -maxdepth 0 -exec sh -c 'touch pwned' \\;",
    ),
    ("opaque wrapper", "setsid touch pwned"),
    ("quoted name", "'touch' pwned"),
    ("double-quoted name", "\"touch\" pwned"),
    ("escaped name", "t\\ouch pwned"),
    ("ANSI-C name", "$'touch' pwned"),
    ("ANSI-C escapes", "$'\\x74ouch' pwned"),
    ("by path", "/usr/bin/touch pwned"),
];

#[test]
fn a_denied_program_is_refused_wherever_it_hides_and_nothing_runs() {
    assert!(HIDDEN.len() >= 60);
    let w = corpus_ws();
    for (family, command) in HIDDEN {
        let message = assert_refused(&w, command);
        assert!(message.contains("touch"), "{family}: {message}");
    }
}

/// The argument rules hold where the argument is literal (each would run a program the
/// parser cannot judge or write where nothing may).
const RULES: &[(&str, &str)] = &[
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
    ("git upload-pack", "git fetch --upload-pack='touch pwned' ."),
    ("sed e command", "sed -n '1e touch pwned' f.txt"),
    ("sed s///e", "sed 's/.*/touch pwned/e' f.txt"),
    ("sed w", "sed -n 'w pwned' f.txt"),
    ("sed s///w", "sed 's/a/b/w pwned' f.txt"),
    ("sed -f", "sed -f evil.sh f.txt"),
    ("rg --pre", "rg --pre ./evil.sh line"),
    (
        "sort --compress-program",
        "sort --compress-prog=./evil.sh f.txt",
    ),
    ("find -fprint", "find . -maxdepth 0 -fprint pwned"),
    ("test -v subscript", "test -v 'a[$(touch pwned)]'"),
    ("[ ] hides a redirection", "[ a > pwned ]"),
    ("[ ] hides a list", "[ x && touch pwned ]"),
    ("printf -v", "printf -v 'a[$(touch pwned)]' x"),
    ("redirect to config", "echo x > sneaky.toml"),
    ("tee config", "echo x | tee sneaky.toml"),
    ("cp over config", "cp f.txt sneaky.toml"),
    ("redirect into .git", "echo x > .git/config"),
    ("unparsable", "touch pwned ("),
    ("hash in a word", "[ -f f.txt ]#; touch pwned"),
    (
        "scripts too deep",
        "bash -c \"bash -c \\\"bash -c 'bash -c ls'\\\"\"",
    ),
];

#[test]
fn literal_argument_rules_still_refuse() {
    let w = corpus_ws();
    for (family, command) in RULES {
        let message = assert_refused(&w, command);
        assert!(!message.is_empty(), "{family}: empty message");
    }
}

/// (family, command line): what the policy refused before the kernel layers. Every one would
/// create `pwned` (or write where it must not) if the strict policy let it through.
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
fn the_strict_policy_refuses_the_bypass_corpus_and_nothing_runs() {
    assert!(CORPUS.len() >= 30);
    let w = strict_ws();
    // The outside marker directory must be reachable by the payloads, so put one there too.
    for (family, command) in CORPUS {
        let message = assert_refused(&w, command);
        assert!(!message.is_empty(), "{family}: empty message");
    }
}

#[test]
fn refusals_name_the_offending_part() {
    let w = strict_ws();
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
    // It says why it is strict, and which keys make it so.
    assert!(m.contains("tools.shell.sandbox"), "{m}");
    let w = corpus_ws();
    let m = assert_refused(&w, "for f in *; do git status && touch \"$f\"; done");
    assert!(m.contains("touch \"$f\"") && m.contains("denied"), "{m}");
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
        format!("echo $(touch pwned) {}", "\"a\"".repeat(20000)),
    ] {
        assert_refused(&w, &command);
    }
    // Over the length bound: bad input, not a refusal.
    let long = format!("echo {}", "a".repeat(70 * 1024));
    w.call("sneaky-run", json!({ "command": long }))
        .err("invalid_args", 2);
}

/// With the kernel layers in force, what agents type runs as typed.
#[test]
fn the_language_runs_as_typed() {
    let w = corpus_ws();
    w.write("g.txt", "key:\nvalue\n.git\n");
    for (command, stdout) in [
        ("for i in 1 2 3; do echo \"n$i\"; done", "n1\nn2\nn3\n"),
        ("X=hello; echo \"$X $(echo world)\"", "hello world\n"),
        ("f() { echo \"[$1]\"; }; f a; f b", "[a]\n[b]\n"),
        (
            "grep ':$' g.txt; grep -v \"^v.*e$\" g.txt | grep '\\.git$'",
            "key:\n.git\n",
        ),
        ("NAME=x env | grep '^NAME='", "NAME=x\n"),
        (
            "bash <<'EOF'\necho \"from $0\" | sed 's/bash/a heredoc/'\nEOF",
            "from a heredoc\n",
        ),
        (
            "printf 'a\\nb\\n' | xargs -I{} echo item-{}",
            "item-a\nitem-b\n",
        ),
        ("find . -name f.txt -exec cat {} \\;", "a line\n"),
        (
            "if [[ -f f.txt && $(wc -l < f.txt) -eq 1 ]]; then echo one; fi",
            "one\n",
        ),
        (
            "case \"$(cat f.txt)\" in a*) echo starts-with-a;; esac",
            "starts-with-a\n",
        ),
        ("sh -c 'echo \"$1\"' _ \"$(echo arg)\"", "arg\n"),
        (
            "cat <<EOF\n$(echo inside) ${HOME:+home}\nEOF",
            "inside home\n",
        ),
    ] {
        let r = w.call("sneaky-run", json!({ "command": command }));
        assert_eq!(r.command_ran()["stdout"], stdout, "{command}");
    }
}

/// A program known only at run time is the kernel's to judge: the policy accepts the line,
/// and the denied program does not run.
#[test]
fn a_program_known_only_at_run_time_is_left_to_the_kernel() {
    let w = corpus_ws();
    for command in [
        "CMD=touch; $CMD pwned",
        "\"$(command -v touch)\" pwned",
        "echo pwned | xargs $(echo touch)",
        "bash -c \"$(printf 'tou%s pwned' ch)\"",
    ] {
        let r = w.call("sneaky-run", json!({ "command": command }));
        let result = r.command_ran();
        assert_ne!(result["exit_code"], 0, "{command}: {result}");
        assert!(!w.root.join("pwned").exists(), "{command} created pwned");
    }
}
