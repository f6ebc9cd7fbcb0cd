//! The command policy of run_command: which shell command lines may run at all.
//!
//! The seed checked only the first word against allow/deny lists; every agent tool that did
//! that has been bypassed (`git status; rm -rf ~`, `$(…)`, `find -exec`, `git -c alias.x=!cmd`,
//! `sed 'e cmd'`, `env rm …`). Here the whole line is parsed with a real bash grammar
//! (tree-sitter-bash, as Codex does) and checked node by node, failing closed: only node kinds
//! this module understands are accepted, and everything else is refused.
//!
//! What is accepted:
//! - lists and pipelines (`;`, `&&`, `||`, `&`, `|`, `|&`, newlines), `( … )` subshells,
//!   `! cmd` and `[ … ]` tests, each simple command checked on its own;
//! - words made of plain text, `'single'` and `"double"` quotes without expansions, and
//!   backslash escapes — so the policy knows every argument's exact value;
//! - redirections: reads from anywhere; writes only to `/dev/null`, `/dev/stdout`,
//!   `/dev/stderr`, another descriptor (`2>&1`) or a literal path inside the root that is not
//!   the configuration file `sneaky.toml`; heredocs and here-strings without expansions.
//!
//! What is refused (`command_denied`, exit 3, naming the offending part): command and process
//! substitution, backticks, `$VAR`/`${…}`/`$((…))` expansions, `$'…'`, assignments (before a
//! command or alone), function definitions, control structures (`if`, `for`, `while`, `case`,
//! `[[ … ]]`, `((…))`, `{ …; }`), builtins that run or redefine code ([`NEVER`]), wrappers the
//! policy cannot look through ([`OPAQUE_WRAPPERS`]), quoted or escaped command names, names
//! with a `/` unless listed verbatim, programs in the denied list or missing from the allowed
//! list, the argument rules of [`ARG_RULES`], and anything that does not parse.
//!
//! Wrappers the policy can look through (`timeout`, `nice`, `nohup`, `stdbuf`, `time`,
//! `command`, `env` without assignments, `xargs` with an unruled program, and `sh/bash -c
//! 'literal'` when shells are allowed) have their options skipped and the wrapped command
//! checked as if it stood alone.
//!
//! `cd DIR` is accepted for a literal path inside the root without `..`, so the working
//! directory only ever moves down; paths in redirections and argument rules are then checked
//! as if the working directory were the root, which is conservative.
//!
//! This module does no I/O; the sandbox (src/shell/sandbox.rs and the kernel layers it sets
//! up) is the boundary behind it: every promise holds even when this parser is fooled.
//!
//! Layout, by the question each file answers:
//! - `lists`: which programs may run at all (defaults, configuration, where each came from);
//! - `syntax`: walking the bash syntax tree (lists, pipelines, commands, `[ … ]`);
//! - `words`: what one word's exact value is, or why it cannot be known;
//! - `redirect`: redirections and heredocs;
//! - `programs`: one simple command (wrappers looked through, argument rules applied);
//! - `rules`: the argument-rule table; `git`, `sed`, `archive`: the rules that need parsing;
//! - `paths`: where a path written by a command may lead.

use std::path::Path;

use tree_sitter::{Node, Parser};

use crate::config::Shell;
use crate::error::{Error, ErrorKind, Result};

mod archive;
mod git;
pub mod lists;
mod paths;
mod programs;
mod redirect;
pub mod rules;
mod sed;
mod syntax;
mod words;

use lists::Lists;
pub use lists::{NEVER, OPAQUE_WRAPPERS, SHELLS};
use syntax::{first_error, tree_depth};

/// The first argument that asks `sneaky-run` whether this policy would refuse a command (the
/// JSON arguments on stdin), without running anything: for the driver, which asks nobody to
/// approve a command that will be refused and does not link the shell grammar itself.
pub const CHECK_POLICY_FLAG: &str = "--check-policy";

/// Deepest syntax tree the checker walks (its walk is recursive).
const MAX_TREE_DEPTH: usize = 200;

/// Deepest nesting of `sh -c '…'` that is checked (deeper is refused).
const MAX_DEPTH: u8 = 3;

/// The outcome of a successful check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// Every program the line runs, in order (wrapped programs included).
    pub programs: Vec<String>,
}

/// Check a command line. `root` is the canonical workspace root (absolute paths inside it are
/// accepted where a path must stay inside).
pub fn check(command: &str, shell: &Shell, root: &Path) -> Result<Approved> {
    let mut checker = Checker {
        lists: Lists::from_config(shell),
        root,
        programs: Vec::new(),
        network: shell.network.all() || shell.network.hosts().is_some(),
        workspace_exec: &shell.exec_workspace_dirs,
    };
    checker.script(command, 0)?;
    Ok(Approved {
        programs: checker.programs,
    })
}

pub(crate) fn deny(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::CommandDenied, message)
}

struct Checker<'a> {
    lists: Lists,
    root: &'a Path,
    programs: Vec<String>,
    /// tools.shell.network allows some network: git's network subcommands may run.
    network: bool,
    /// tools.shell.exec_workspace_dirs: programs there run by path.
    workspace_exec: &'a [String],
}

fn parse(text: &str) -> Result<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!("loading the bash grammar: {e}"),
            )
        })?;
    parser
        .parse(text, None)
        .ok_or_else(|| deny("the command could not be parsed"))
}

pub(crate) fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

pub(crate) fn short(text: &str) -> String {
    crate::text::shorten(text.trim(), 80)
}

impl Checker<'_> {
    fn script(&mut self, text: &str, depth: u8) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(deny("shells nested deeper than 3 levels are not checked"));
        }
        let tree = parse(text)?;
        let root = tree.root_node();
        let src = text.as_bytes();
        // The checks below recurse over the tree: bound its depth first, iteratively.
        if tree_depth(root) > MAX_TREE_DEPTH {
            return Err(deny(format!(
                "the command is nested more than {MAX_TREE_DEPTH} levels deep"
            )));
        }
        if root.has_error() {
            return Err(deny(format!(
                "the command does not parse as a complete shell command{}",
                first_error(root, src)
                    .map(|e| format!(" (near `{e}`)"))
                    .unwrap_or_default()
            )));
        }
        self.statement(root, src, depth)
    }

    fn text<'s>(&self, node: Node<'_>, src: &'s [u8]) -> &'s str {
        node.utf8_text(src).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(cmd: &str) -> Vec<String> {
        check(cmd, &Shell::default(), Path::new("/ws"))
            .unwrap_or_else(|e| panic!("{cmd}: {e}"))
            .programs
    }

    fn no(cmd: &str) -> String {
        let e = check(cmd, &Shell::default(), Path::new("/ws")).expect_err(cmd);
        assert_eq!(e.code(), "command_denied", "{cmd}");
        e.message()
    }

    /// Found by fuzzing: the grammar reads `#` right after `]` as a comment, bash as part of
    /// the word `]#`, and then runs what follows.
    #[test]
    fn a_hash_inside_a_word_is_not_a_comment() {
        no("[ -f X ]#; touch pwned");
        no("[ -f X ]#\n; rm -rf x");
        assert_eq!(ok("ls -l # note; rm x"), ["ls"]);
        assert_eq!(ok("ls;# note"), ["ls"]);
        assert_eq!(ok("[ -f X ] # note"), ["["]);
        assert_eq!(ok("# only a comment"), Vec::<String>::new());
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

    #[test]
    fn accepts_plain_lines() {
        assert_eq!(ok("git status"), ["git"]);
        assert_eq!(
            ok("git status && ls -la | grep x; echo done"),
            ["git", "ls", "grep", "echo"]
        );
        assert_eq!(
            ok("timeout 5 nice -n 3 grep -r 'a b' src"),
            ["timeout", "nice", "grep"]
        );
        ok("cat <<'EOF' > out.txt\nhello $USER\nEOF");
        ok("echo hi > a/b.txt 2>&1");
        ok("sed -n '1,5p;/x/d' f");
        ok("sed -i 's/a/b/g' src/x.rs");
        ok("find . -name '*.rs' -type f");
        ok("cd sub && cargo test");
        ok("git -C sub log --oneline");
        ok("git config user.name Me");
        ok("echo \"quoted \\\"x\\\"\" 'single' es\\ caped");
    }

    #[test]
    fn refuses_the_families() {
        for cmd in [
            "rm -rf /",
            "git status; rm -rf ~",
            "echo $(rm x)",
            "echo `rm x`",
            "cat <(rm x)",
            "eval 'rm x'",
            "FOO=1 git status",
            "env rm x",
            "xargs rm",
            "timeout 5 rm x",
            "bash -c 'rm x'",
            "find . -exec rm {} ;",
            "find . -delete",
            "git -c alias.x=!rm x",
            "git x",
            "sed 'e rm x' f",
            "sed 's/a/b/w out' f",
            "rg --pre rm x",
            "echo x > ../out",
            "echo x > sneaky.toml",
            "'rm' x",
            "r\\m x",
            "echo $HOME",
            "ls() { rm x; }; ls",
            "if true; then rm x; fi",
            "git status |",
            "cp x sneaky.toml",
            "find . -exe? rm",
            "test -v 'a[$(rm x)]'",
            "git --git-dir=~/x status",
        ] {
            no(cmd);
        }
    }
}
