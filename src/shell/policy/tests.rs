//! The policy over the whole bash language: what each construct is accepted with (the programs
//! found in it), that a denied program is refused wherever it hides, the effect, and the strict
//! policy (a kernel layer may be missing), which refuses what the policy refused before the
//! layers.
//!
//! The lists are given explicitly (not the defaults, which change on their own): a few allowed
//! programs, and `rm`, `curl` and `sudo` denied.

use std::path::Path;

use tree_sitter::Node;

use super::*;

const ALLOWED: &[&str] = &[
    "ls", "cat", "grep", "echo", "printf", "git", "sed", "find", "fd", "xargs", "bash", "sh",
    "env", "timeout", "nice", "nohup", "stdbuf", "time", "command", "touch", "wc", "head", "cd",
    "test", "[", "true", "false", "sort", "tar", "rg", "cp", "mkdir", "make", "cargo", "which",
    "sleep", "setsid", "flock", "watch", "tee", "pwd", ":", "exit", "jq", "diff", "date",
];

fn shell() -> Shell {
    Shell {
        allowed_commands: Some(ALLOWED.iter().map(|s| s.to_string()).collect()),
        denied_commands: Some(vec!["rm".into(), "curl".into(), "sudo".into()]),
        ..Shell::default()
    }
}

fn strict_shell() -> Shell {
    Shell {
        sandbox: false,
        ..shell()
    }
}

fn approve(cmd: &str, shell: &Shell) -> Approved {
    check(cmd, shell, Path::new("/ws")).unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

fn ok(cmd: &str) -> Vec<String> {
    approve(cmd, &shell()).programs
}

fn no(cmd: &str) -> String {
    refused(cmd, &shell())
}

fn refused(cmd: &str, shell: &Shell) -> String {
    let e = check(cmd, shell, Path::new("/ws")).expect_err(cmd);
    assert_eq!(e.code(), "command_denied", "{cmd}");
    e.message()
}

fn effect(cmd: &str) -> Effect {
    approve(cmd, &shell()).effect
}

#[test]
fn dump_tree() {
    if let Ok(cmd) = std::env::var("SNEAKY_DUMP") {
        let tree = parse(&cmd).expect("parse");
        fn show(node: Node<'_>, src: &[u8], indent: usize) {
            eprintln!(
                "{:indent$}{}{} {:?}",
                "",
                if node.is_named() { "" } else { "'" },
                node.kind(),
                node.utf8_text(src).unwrap_or("")
            );
            for child in children(node) {
                show(child, src, indent + 2);
            }
        }
        show(tree.root_node(), cmd.as_bytes(), 0);
    }
}

/// Found by fuzzing: the grammar reads `#` right after `]` as a comment, bash as part of
/// the word `]#`, and then runs what follows.
#[test]
fn a_hash_inside_a_word_is_not_a_comment() {
    for shell in [shell(), strict_shell()] {
        refused("[ -f X ]#; touch pwned", &shell);
        refused("[ -f X ]#\n; rm -rf x", &shell);
        assert_eq!(approve("ls -l # note; rm x", &shell).programs, ["ls"]);
        assert_eq!(approve("ls;# note", &shell).programs, ["ls"]);
        assert_eq!(approve("[ -f X ] # note", &shell).programs, ["["]);
        assert!(approve("# only a comment", &shell).programs.is_empty());
    }
}

/// Each construct of the language, with the programs the policy found in it (builtins that
/// are no program, and programs known only at run time, are not among them).
#[test]
fn the_whole_language_is_accepted_with_its_programs() {
    let mut wrong = Vec::new();
    for (cmd, programs) in [
        (
            "git status && ls -la | grep x; echo done",
            &["git", "ls", "grep", "echo"][..],
        ),
        ("for f in *.rs; do grep -n x \"$f\"; done", &["grep"]),
        ("for ((i = 0; i < 3; i++)); do echo $i; done", &["echo"]),
        ("select x in a b; do echo \"$x\"; break; done", &["echo"]),
        (
            "if git diff --quiet; then echo clean; elif true; then :; else echo dirty; fi",
            &["git", "echo", "true", ":", "echo"],
        ),
        ("while read -r l; do echo \"$l\"; done < f", &["echo"]),
        ("until false; do break; done", &["false"]),
        ("x=$(git rev-parse HEAD); echo \"$x\"", &["git", "echo"]),
        ("FOO=1 BAR=$(ls) make test", &["ls", "make"]),
        (
            "export PATH=\"$PWD/bin:$PATH\" N=3; local a; declare -a arr=(one \"$(pwd)\")",
            &["pwd"],
        ),
        ("f() { grep -r \"$1\" src; }; f foo; f bar", &["grep"]),
        ("function g { ls; }; g", &["ls"]),
        (
            "case \"$1\" in a|b) ls;; *.rs) cat x;; esac",
            &["ls", "cat"],
        ),
        (
            "shopt -s extglob; case $f in @(a|b).rs|!(*.md)) ls;; esac",
            &["ls"],
        ),
        (
            "[[ -f x && $(cat x) == y* && $v =~ ^a(b|c)$ ]] && echo ok",
            &["cat", "echo"],
        ),
        (
            "(( n = $(wc -l < f) + 1 )); echo $((n * 2))",
            &["wc", "echo"],
        ),
        (
            "echo {a,b}.txt ${x:-$(ls)} ${#arr[@]} $1 $@ $?",
            &["ls", "echo"],
        ),
        ("{ ls; cat f; } > out.txt 2>&1", &["ls", "cat"]),
        ("ls 2>&- <&-; exec >&- 2>&-", &["ls"]),
        ("(cd sub && make) || true", &["cd", "make", "true"]),
        ("sleep 1 & wait; ls &", &["sleep", "ls"]),
        ("! grep -q x f", &["grep"]),
        (
            "diff <(ls a) <(ls b) > >(cat)",
            &["ls", "ls", "diff", "cat"],
        ),
        ("echo `git log -1` \"in $(pwd)\"", &["git", "pwd", "echo"]),
        (
            "git commit -m \"$(cat <<'EOF'\nfix: the thing $x\n\nEOF\n)\"",
            &["cat", "git"],
        ),
        (
            "cat <<EOF > notes.txt\nat $(date) in $PWD\nEOF",
            &["cat", "date"],
        ),
        ("cat <<-'EOF'\n\t$(not run)\n\tEOF", &["cat"]),
        ("source .venv/bin/activate && ls", &["ls"]),
        (". ./env.sh; ls", &["ls"]),
        ("bash -c 'ls | wc -l'", &["bash", "ls", "wc"]),
        (
            "bash -euo pipefail -c \"git status; echo $HOME\"",
            &["bash", "git", "echo"],
        ),
        ("sh -c 'echo \"$1\"' _ arg", &["sh", "echo"]),
        ("bash script.sh arg", &["bash"]),
        ("bash <<'EOF'\nls\ncat f\nEOF", &["bash", "ls", "cat"]),
        (
            "bash -s <<EOF\necho \\$HOME $(pwd)\nEOF",
            &["bash", "pwd", "echo", "pwd"],
        ),
        ("sh <<< 'grep x f'", &["sh", "grep"]),
        ("curl_like=1; cat f | bash", &["cat", "bash"]),
        (
            "find . -name '*.rs' -exec grep -l foo {} \\;",
            &["find", "grep"],
        ),
        (
            "find . -type f -execdir wc -l {} + -o -ok echo {} ;",
            &["find", "wc", "echo"],
        ),
        ("find . -name '*.pyc' -delete", &["find"]),
        ("fd -e rs -x wc -l", &["fd", "wc"]),
        (
            "rg -l foo | xargs sed -i s/foo/bar/g",
            &["rg", "xargs", "sed"],
        ),
        (
            "ls | xargs -0 -n1 -I{} sh -c 'echo {}'",
            &["ls", "xargs", "sh", "echo"],
        ),
        ("ls | xargs -i echo {}", &["ls", "xargs", "echo"]),
        ("env FOO=1 -u BAR git status", &["env", "git"]),
        ("env -S 'ls -l' src", &["env", "ls"]),
        (
            "timeout 5 nice -n 3 stdbuf -oL nohup time command ls",
            &[
                "timeout", "nice", "stdbuf", "nohup", "time", "command", "ls",
            ],
        ),
        ("exec 3>&1; exec ls", &["ls"]),
        ("eval \"ls -l\"; eval \"$X\"", &["ls"]),
        ("trap 'echo done' EXIT; trap - INT; ls", &["echo", "ls"]),
        ("alias ll='ls -l'", &["ls"]),
        ("coproc cat", &["cat"]),
        (
            "$CMD --help; \"$(which ls)\" -l; ./*.sh; ~/bin/tool",
            &["which"],
        ),
        (
            "grep \":$\" f; grep -v \"^d.*\\.git$\" x; echo a$ \"$\" $ '$'",
            &["grep", "grep", "echo"],
        ),
        ("echo $'\\x72m' $\"hello\"", &["echo"]),
        ("'ls' -l; \"ca\"t f; e\\cho x", &["ls", "cat", "echo"]),
        (
            "git switch -c feature && git commit -c HEAD",
            &["git", "git"],
        ),
        (
            "git -c user.name=me -c commit.gpgsign=false commit -m x",
            &["git"],
        ),
        (
            "echo x > /tmp/out.txt; cd /; ls ../..",
            &["echo", "cd", "ls"],
        ),
        ("sed -i \"s/$OLD/$NEW/\" $(git ls-files)", &["git", "sed"]),
        ("setsid flock /tmp/l -c 'ls' ", &["setsid"]),
        (
            "find / -name java 2>/dev/null -type f -exec ls {} +",
            &["find", "ls"],
        ),
        (
            "if [ -f ~/.config/x.json ]; then cat ~/.config/x.json; fi",
            &["[", "cat"],
        ),
        (
            "git -C /other/repo status; sed -i s/a/b/ /usr/lib/x.py",
            &["git", "sed"],
        ),
    ] {
        let found = ok(cmd);
        if found != programs {
            wrong.push(format!("{cmd:?}: {found:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A program the lists deny is refused wherever the parser can see it.
#[test]
fn a_denied_program_is_refused_wherever_it_hides() {
    for cmd in [
        "rm -rf x",
        "git status; rm -rf ~",
        "for f in a; do rm $f; done",
        "for f in $(rm x); do :; done",
        "if true; then rm x; fi",
        "if rm x; then :; fi",
        "while true; do rm x; done",
        "until rm x; do :; done",
        "case x in x) rm x;; esac",
        "case $(rm x) in *) ;; esac",
        "select x in a; do rm x; done",
        "{ rm x; }",
        "(rm x)",
        "! rm x",
        "rm x &",
        "ls | rm x",
        "echo $(rm x)",
        "echo \"$(rm x)\"",
        "echo `rm x`",
        "cat <(rm x)",
        "echo > >(rm x)",
        "x=$(rm x)",
        "FOO=$(rm x) ls",
        "export A=$(rm x)",
        "local a=(\"$(rm x)\")",
        "echo ${a:-$(rm x)}",
        "echo $(( $(rm x) + 1 ))",
        "(( $(rm x) ))",
        "for ((i = $(rm x); i < 1; i++)); do :; done",
        "[[ $(rm x) ]]",
        "[ \"$(rm x)\" ]",
        "f() { rm x; }",
        "f() { rm x; }; f",
        "ls() { rm x; }; ls",
        "rm x; rm() { :; }",
        "(rm() { :; }); rm x",
        "f() { :; } | rm x",
        "bash -c 'rm x'",
        "sh -c \"ls; rm x\"",
        "bash -lc 'rm x'",
        "bash -c \"bash -c 'rm x'\"",
        "bash <<'EOF'\nrm x\nEOF",
        "bash <<EOF\nls\nrm x\nEOF",
        "sh -s <<< 'rm x'",
        "cat <<EOF\n$(rm x)\nEOF",
        "ls | xargs rm",
        "xargs -I{} rm {}",
        "xargs -n1 -- rm",
        "find . -exec rm {} \\;",
        "find . -name x -execdir rm {} +",
        "find . -ok rm {} ;",
        "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
        "fd x -x rm",
        "fd x --exec-batch rm",
        "env rm x",
        "env FOO=1 rm x",
        "env -S 'rm x'",
        "timeout 5 rm x",
        "nice -n 1 rm x",
        "nohup rm x",
        "command rm x",
        "exec rm x",
        "time rm x",
        "stdbuf -oL rm x",
        "coproc rm x",
        "builtin exec rm x",
        "eval 'rm x'",
        "eval rm x",
        "trap 'rm x' EXIT",
        "alias ls='rm x'",
        "hash -p /usr/bin/rm ls",
        "'rm' x",
        "\"rm\" x",
        "r\\m x",
        "$'rm' x",
        "$'\\x72m' x",
        "r''m x",
        "/usr/bin/rm x",
        "sudo ls",
        "setsid rm x",
        "setsid -f curl x",
        "flock /tmp/l -c 'rm x'",
        "watch -n 1 'rm x'",
        "xargs $OPTS rm",
        "timeout $T rm x",
        "find / -name x 2>/dev/null -type f -exec rm {} \\;",
        "echo x > /dev/null; find . >/dev/null -exec rm {} +",
    ] {
        let m = no(cmd);
        assert!(
            m.contains("rm") || m.contains("sudo") || m.contains("curl"),
            "{cmd}: {m}"
        );
    }
}

/// The argument rules still refuse where the argument is literal; scripts nest only so deep;
/// what the parser and bash might read differently is refused.
#[test]
fn literal_rules_and_limits_hold() {
    for cmd in [
        "git -c core.pager=less log",
        "git -c alias.x=!ls x",
        "git config core.fsmonitor x",
        "git x",
        "git --exec-path=. status",
        "git diff --output=x",
        "git fetch --upload-pack=x .",
        "sed 'e ls' f",
        "sed -n '1e ls' f",
        "sed 's/a/b/w out' f",
        "sed -f s.sed f",
        "rg --pre cat x",
        "sort --compress-program=gzip f",
        "tar --checkpoint-action=exec=ls -cf x .",
        "echo x > sneaky.toml",
        "echo x > ./sub/../sneaky.toml",
        "echo x >> .git/config",
        "cp x sneaky.toml",
        "cp hook .git/hooks/pre-commit",
        "test -v 'a[$(ls)]'",
        "printf -v 'a[$(ls)]' x",
        "let 'a[$(ls)]'",
        "find . -fprint out",
        "cp -R /dev/ x",
        "python3 x.py",
        "bash -c \"bash -c \\\"bash -c 'bash -c ls'\\\"\"",
        "eval \"eval \\\"eval 'eval ls'\\\"\"",
        "git status |",
        "touch pwned (",
        "echo x$/y",
        "xargs --frobnicate ls",
        "env -Q ls",
    ] {
        no(cmd);
    }
    // What a rule judges is known only at run time: the kernel contains it.
    for cmd in [
        "git $SUB",
        "git -c \"$KEY\" log",
        "sed \"$SCRIPT\" f",
        "rg $OPTS x",
        "find $DIR -name x",
        "echo x > \"$OUT\"",
        "cd \"$DIR\"",
    ] {
        ok(cmd);
    }
}

#[test]
fn the_effect_is_reads_only_for_readers() {
    for cmd in [
        "git status",
        "git log --oneline | head -5",
        "ls -la | grep x | wc -l",
        "cat f | head -n 3",
        "find . -name '*.rs' -exec grep -l x {} +",
        "rg -n foo src",
        "sed -n '1,5p' f",
        "for f in *.rs; do wc -l \"$f\"; done",
        "echo hi > /dev/null 2>&1",
        "ls 2>&-",
        "bash -c 'ls'",
        "cd src && ls",
        "x=1; echo $x",
        "LC_ALL=C sort f",
        "git diff HEAD~1 -- src | head",
        "git branch -a; git branch --show-current",
        "jq .a f.json",
        "ls | xargs grep x",
        "test -f x && echo yes",
    ] {
        assert_eq!(effect(cmd), Effect::Reads, "{cmd}");
    }
    for cmd in [
        "echo hi > f",
        "ls >> log.txt",
        "sed -i s/a/b/ f",
        "git commit -m x",
        "git branch feature",
        "touch f",
        "$CMD",
        "\"$(which ls)\"",
        "source x.sh",
        "bash script.sh",
        "cat f | bash",
        "eval \"$X\"",
        "find . -delete",
        "LD_PRELOAD=x.so ls",
        "PATH=.:$PATH; ls",
        "env GIT_EXTERNAL_DIFF=x git diff",
        "ls | xargs sort",
        "sort -o out f",
        "make",
        "{ ls; } > out",
        "ls | tee out",
        "cat <<EOF > f\nx\nEOF",
    ] {
        assert_eq!(effect(cmd), Effect::Writes, "{cmd}");
    }
}

/// With a layer that may be missing, the policy refuses what it refused before the layers.
#[test]
fn the_strict_policy_refuses_what_it_refused_before() {
    let strict = strict_shell();
    for cmd in [
        "rm -rf /",
        "git status; rm -rf ~",
        "echo $(ls)",
        "echo `ls`",
        "cat <(ls)",
        "eval 'ls'",
        "source ./x.sh",
        "FOO=1 git status",
        "PATH=.; ls",
        "env -S x ls",
        "env FOO=1 ls",
        "xargs sed",
        "xargs sh -c ls",
        "bash -c \"$X\"",
        "bash script.sh",
        "find . -exec ls {} ;",
        "find . -delete",
        "fd -x ls",
        "git -c alias.x=!ls x",
        "git x",
        "sed 'e ls' f",
        "rg --pre cat x",
        "echo x > ../out",
        "echo x > /tmp/out",
        "echo x > sneaky.toml",
        "'ls' x",
        "l\\s x",
        "$'ls' x",
        "echo $HOME",
        "echo \"$HOME\"",
        "echo $\"x\"",
        "ls() { cat x; }; ls",
        "if true; then ls; fi",
        "for f in a; do ls; done",
        "{ ls; }",
        "[[ -f x ]]",
        "(( 1 ))",
        "setsid ls",
        "cat <<EOF\n$HOME\nEOF",
        "cd ..",
        "git -C /other/repo status",
        "sed -i s/a/b/ /usr/lib/x.py",
        "find / -name x 2>/dev/null -exec ls {} +",
        "test -v 'a[$(ls)]'",
        "find . -exe? ls",
    ] {
        refused(cmd, &strict);
    }
    for cmd in [
        "git status && ls -la | grep x; echo done",
        "timeout 5 nice -n 3 grep -r 'a b' src",
        "cat <<'EOF' > out.txt\nhello $USER\nEOF",
        "echo hi > a/b.txt 2>&1",
        "sed -n '1,5p;/x/d' f",
        "sed -i 's/a/b/g' src/x.rs",
        "find . -name '*.rs' -type f",
        "cd sub && cargo test",
        "git -C sub log --oneline",
        "git switch -c feature",
        "echo \"quoted \\\"x\\\"\" 'single' es\\ caped",
        "grep \":$\" f",
        "grep -v \"^d.*\\.git$\" x",
        "bash -c 'ls -l'",
        "ls | xargs grep x",
    ] {
        approve(cmd, &strict);
    }
    // Every way a layer can be missing makes the policy strict.
    let container = Shell {
        container_boundary: true,
        ..shell()
    };
    let without_landlock = Shell {
        require_layers: Some(vec!["namespaces".into(), "seccomp".into()]),
        ..shell()
    };
    let none = Shell {
        require_layers: Some(Vec::new()),
        ..shell()
    };
    for s in [&container, &without_landlock, &none] {
        assert!(!contained(s));
        refused("echo $(ls)", s);
    }
    // Every containing layer must be required: without seccomp (the caller's keyrings), the
    // process limit or the own /proc (the outer processes' environments) a program acts past
    // the sandbox (src/config/commands.rs, CONTAINING_LAYERS).
    let both = Shell {
        require_layers: Some(vec!["landlock".into(), "namespaces".into()]),
        ..shell()
    };
    assert!(!contained(&both));
    let every = Shell {
        require_layers: Some(
            crate::config::commands::CONTAINING_LAYERS
                .iter()
                .map(|l| l.to_string())
                .collect(),
        ),
        ..shell()
    };
    assert!(contained(&every) && contained(&shell()));
}
