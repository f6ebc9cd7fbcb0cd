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
//! This module does no I/O; the sandbox (src/shell/sandbox.rs) is the second line behind it.

use std::path::{Component, Path, PathBuf};

use tree_sitter::{Node, Parser};

use crate::config::Shell;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::CONFIG_FILE_NAME;

/// Programs allowed when `tools.shell.allowed_commands` is not set: read-only inspection,
/// text tools, and the common build tools (which run the project's own code by design; the
/// sandbox keeps their writes inside the root).
#[rustfmt::skip]
pub const DEFAULT_ALLOWED: &[&str] = &[
    // inspection and text
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "fd", "fdfind",
    "tree", "file", "stat", "du", "df", "sort", "uniq", "cut", "tr", "diff", "cmp", "comm", "nl",
    "tac", "rev", "paste", "join", "column", "fold", "fmt", "expand", "unexpand", "seq", "basename",
    "dirname", "realpath", "readlink", "pwd", "echo", "printf", "true", "false", "test", "[",
    "exit", ":", "which", "type", "whoami", "id", "uname", "date", "sleep", "yes", "jq",
    "sha256sum", "sha1sum", "md5sum", "cksum", "xxd", "od", "hexdump", "strings", "sed",
    // workspace file changes (kept inside the root by the sandbox)
    "mkdir", "touch", "cp", "mv", "tee",
    // wrappers the policy looks through
    "timeout", "nice", "nohup", "stdbuf", "time", "env", "xargs", "command", "cd",
    // version control and build tools
    "git", "cargo", "rustc", "rustfmt", "make", "go", "gofmt",
];

/// Programs refused when `tools.shell.denied_commands` is not set (an explicit entry in
/// `allowed_commands` overrides this default list, never an explicit denied list).
#[rustfmt::skip]
pub const DEFAULT_DENIED: &[&str] = &[
    "rm", "rmdir", "shred", "dd", "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "fdisk", "parted",
    "mount", "umount", "swapon", "swapoff", "shutdown", "reboot", "halt", "poweroff", "init",
    "systemctl", "service", "sudo", "su", "doas", "pkexec", "chown", "chgrp", "chmod", "chattr",
    "passwd", "useradd", "userdel", "usermod", "crontab", "at", "kill", "pkill", "killall", "sh",
    "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "curl", "wget", "nc", "ncat",
    "netcat", "socat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "git-shell", "python",
    "python3", "perl", "ruby", "node", "awk", "gawk", "mawk", "nawk",
];

/// Shell builtins and keywords that run strings as code, define or redefine commands, or
/// change the shell's state in ways the policy cannot follow. Refused whatever the lists say.
#[rustfmt::skip]
pub const NEVER: &[&str] = &[
    "eval", "exec", "source", ".", "trap", "alias", "unalias", "enable", "builtin", "hash", "set",
    "shopt", "declare", "typeset", "export", "readonly", "local", "unset", "let", "read",
    "readarray", "mapfile", "coproc", "fc", "history", "bind", "complete", "compgen", "compopt",
    "pushd", "popd", "dirs", "ulimit", "umask", "getopts", "function", "select", "caller", "disown",
    "suspend", "logout",
];

/// Programs that run another program given on their command line in a way the policy does
/// not look through. Refused whatever the lists say.
#[rustfmt::skip]
pub const OPAQUE_WRAPPERS: &[&str] = &[
    "sudo", "doas", "su", "runuser", "pkexec", "chroot", "setsid", "ionice", "taskset", "chrt",
    "prlimit", "strace", "ltrace", "gdb", "watch", "flock", "unbuffer", "script", "parallel",
    "busybox", "firejail", "bwrap", "unshare", "nsenter", "systemd-run", "fakeroot", "faketime",
    "proot", "setpriv", "capsh", "expect", "sg", "newgrp",
];

/// Shells: accepted only as `sh -c 'literal script'` (the script checked in turn), and only
/// when the lists allow the shell.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];

/// Programs that cannot write files (so an argument naming `sneaky.toml` is harmless). Not
/// `xxd` (-r writes), `tree` (-o), `file` (-C), `sort` (-o).
#[rustfmt::skip]
const READ_ONLY: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "stat", "du", "diff", "cmp",
    "comm", "nl", "tac", "rev", "basename", "dirname", "realpath", "readlink", "echo", "printf",
    "test", "[", "sha256sum", "sha1sum", "md5sum", "cksum", "od", "hexdump", "strings", "jq",
];

/// How an argument rule recognises an offending argument.
#[derive(Debug, Clone, Copy)]
pub enum Match {
    /// The whole argument (for long options also `--opt=value`).
    Exact(&'static str),
    /// Any argument starting with this.
    Prefix(&'static str),
    /// A rule that needs the whole argument list (option values, subcommands, scripts).
    Check(fn(&[String], &Path) -> std::result::Result<(), String>),
}

#[derive(Debug, Clone, Copy)]
pub struct ArgRule {
    pub programs: &'static [&'static str],
    pub matches: Match,
    pub why: &'static str,
}

const FIND: &[&str] = &["find"];
const FD: &[&str] = &["fd", "fdfind"];
const GIT: &[&str] = &["git"];
const SED: &[&str] = &["sed"];
const RG: &[&str] = &["rg"];
const TEST: &[&str] = &["test", "["];
const PRINTF: &[&str] = &["printf"];

/// The argument rules for allowed programs that can run programs or write files, in one table.
/// A program listed here also refuses arguments that glob, brace or tilde expansion could turn
/// into something else (`-exe?`), since the policy must know each argument's value.
#[rustfmt::skip]
pub const ARG_RULES: &[ArgRule] = &[
    ArgRule { programs: FIND, matches: Match::Exact("-exec"), why: "runs a program" },
    ArgRule { programs: FIND, matches: Match::Exact("-execdir"), why: "runs a program" },
    ArgRule { programs: FIND, matches: Match::Exact("-ok"), why: "runs a program" },
    ArgRule { programs: FIND, matches: Match::Exact("-okdir"), why: "runs a program" },
    ArgRule { programs: FIND, matches: Match::Exact("-delete"), why: "deletes files" },
    ArgRule { programs: FIND, matches: Match::Prefix("-fprint"), why: "writes a file" },
    ArgRule { programs: FIND, matches: Match::Exact("-fls"), why: "writes a file" },
    ArgRule { programs: FD, matches: Match::Exact("-x"), why: "runs a program" },
    ArgRule { programs: FD, matches: Match::Exact("--exec"), why: "runs a program" },
    ArgRule { programs: FD, matches: Match::Exact("-X"), why: "runs a program" },
    ArgRule { programs: FD, matches: Match::Exact("--exec-batch"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Exact("-c"), why: "sets config that can run programs (core.pager, alias.x=!cmd …)" },
    ArgRule { programs: GIT, matches: Match::Prefix("--config-env"), why: "sets config that can run programs" },
    ArgRule { programs: GIT, matches: Match::Prefix("--exec-path"), why: "runs git commands from another directory" },
    ArgRule { programs: GIT, matches: Match::Prefix("--output"), why: "writes a file anywhere" },
    ArgRule { programs: GIT, matches: Match::Prefix("--upload-pack"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Prefix("--receive-pack"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Prefix("--exec"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Check(check_git), why: "" },
    ArgRule { programs: SED, matches: Match::Check(check_sed), why: "" },
    ArgRule { programs: RG, matches: Match::Prefix("--pre"), why: "runs a program on every file" },
    ArgRule { programs: TEST, matches: Match::Exact("-v"), why: "bash evaluates array subscripts, which can run commands" },
    ArgRule { programs: TEST, matches: Match::Exact("-R"), why: "bash evaluates array subscripts, which can run commands" },
    ArgRule { programs: PRINTF, matches: Match::Prefix("-v"), why: "assigns a shell variable" },
];

/// Git subcommands that may run. Anything else — aliases (which may be `!shell`), `difftool`,
/// `mergetool`, `bisect run`, `submodule foreach`, `filter-branch`, `help -w` … — is refused.
#[rustfmt::skip]
const GIT_SUBCOMMANDS: &[&str] = &[
    "add", "apply", "blame", "branch", "cat-file", "check-ignore", "checkout", "cherry-pick",
    "clean", "commit", "config", "describe", "diff", "diff-tree", "fetch", "for-each-ref",
    "format-patch", "grep", "init", "log", "ls-files", "ls-tree", "merge", "merge-base", "mv",
    "name-rev", "pull", "push", "rebase", "reflog", "remote", "reset", "restore", "rev-list",
    "rev-parse", "revert", "rm", "shortlog", "show", "show-ref", "stash", "status", "switch",
    "symbolic-ref", "tag", "version", "worktree",
];

/// Git config keys a command may set; every other key can name a program git runs.
const GIT_CONFIG_SAFE_PREFIXES: &[&str] = &["user.", "color.", "advice.", "init."];

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
    };
    checker.script(command, 0)?;
    Ok(Approved {
        programs: checker.programs,
    })
}

fn deny(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::CommandDenied, message)
}

struct Lists {
    allowed: Vec<String>,
    explicit_allowed: bool,
    denied: Vec<String>,
    explicit_denied: bool,
}

impl Lists {
    fn from_config(shell: &Shell) -> Lists {
        let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Lists {
            allowed: shell
                .allowed_commands
                .clone()
                .unwrap_or_else(|| own(DEFAULT_ALLOWED)),
            explicit_allowed: shell.allowed_commands.is_some(),
            denied: shell
                .denied_commands
                .clone()
                .unwrap_or_else(|| own(DEFAULT_DENIED)),
            explicit_denied: shell.denied_commands.is_some(),
        }
    }

    /// None when allowed; otherwise why not.
    fn refusal(&self, name: &str) -> Option<String> {
        let base = name.rsplit('/').next().unwrap_or(name);
        let listed = |list: &[String], n: &str| list.iter().any(|x| x == n);
        let in_denied = listed(&self.denied, name) || listed(&self.denied, base);
        let allowed = listed(&self.allowed, name);
        if in_denied && (self.explicit_denied || !(self.explicit_allowed && allowed)) {
            let which = if self.explicit_denied {
                "tools.shell.denied_commands"
            } else {
                "the default denied list"
            };
            return Some(format!("{name} is in {which}"));
        }
        if name.contains('/') && !allowed {
            return Some(format!(
                "{name}: a command given by path runs only when listed verbatim in tools.shell.allowed_commands"
            ));
        }
        if !allowed {
            let which = if self.explicit_allowed {
                "tools.shell.allowed_commands"
            } else {
                "the default allowed list"
            };
            return Some(format!("{name} is not in {which}"));
        }
        None
    }
}

/// An argument's exact value, and whether bash would expand it further (globs, braces, `~`).
#[derive(Debug, Clone)]
struct Word {
    value: String,
    expands: bool,
    /// Quoted or escaped somewhere (not allowed in a command name).
    quoted: bool,
}

struct Checker<'a> {
    lists: Lists,
    root: &'a Path,
    programs: Vec<String>,
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

fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

fn short(text: &str) -> String {
    crate::tools::shorten(text.trim(), 80)
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

    fn statement(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        match node.kind() {
            "program" | "list" | "pipeline" | "subshell" | "negated_command" => {
                for child in children(node) {
                    if child.is_named() {
                        self.statement(child, src, depth)?;
                    } else if !matches!(
                        child.kind(),
                        ";" | "&" | "&&" | "||" | "|" | "|&" | "\n" | "(" | ")" | "!"
                    ) {
                        return Err(deny(format!(
                            "`{}`: shell syntax `{}` is not allowed",
                            short(self.text(node, src)),
                            child.kind()
                        )));
                    }
                }
                Ok(())
            }
            // bash starts a comment only where a word starts; the grammar also after `]`
            // (`[ -f x ]#; rm …` is `[ -f x ]#` and then `rm …` for bash; found by fuzzing).
            "comment" => {
                let word_start = |b: &u8| b" \t\n;&|()".contains(b);
                let before = node.start_byte().checked_sub(1).and_then(|i| src.get(i));
                if before.map_or(true, word_start) {
                    Ok(())
                } else {
                    Err(deny(format!(
                        "`{}`: this `#` is part of a word for bash, not a comment",
                        short(self.text(node, src))
                    )))
                }
            }
            "command" => self.command(node, src, depth),
            "test_command" if node.child(0).is_some_and(|c| c.kind() == "[") => {
                let part = short(self.text(node, src));
                let mut args = Vec::new();
                self.bracket_test(node, src, &part, &mut args)?;
                self.simple("[", &args, &part, depth)
            }
            "redirected_statement" => {
                for child in children(node) {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, src, depth)?
                        }
                        _ if child.is_named() => self.statement(child, src, depth)?,
                        other => {
                            return Err(deny(format!(
                                "`{}`: shell syntax `{other}` is not allowed",
                                short(self.text(node, src))
                            )))
                        }
                    }
                }
                Ok(())
            }
            kind => Err(deny(format!(
                "`{}`: {} is not allowed (the policy accepts only simple commands, pipelines and lists)",
                short(self.text(node, src)),
                describe_kind(kind)
            ))),
        }
    }

    fn command(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let part = short(self.text(node, src));
        let mut name: Option<String> = None;
        let mut args: Vec<Word> = Vec::new();
        for child in children(node) {
            match child.kind() {
                "variable_assignment" | "variable_assignments" => {
                    return Err(deny(format!(
                        "`{part}`: variable assignments (`{}`) are not allowed",
                        short(self.text(child, src))
                    )))
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child, src, depth)?
                }
                "command_name" => name = Some(self.command_name(child, src, &part)?),
                _ if child.is_named() => args.push(self.word(child, src, &part)?),
                other => {
                    return Err(deny(format!(
                        "`{part}`: shell syntax `{other}` is not allowed"
                    )))
                }
            }
        }
        let Some(name) = name else {
            // Only redirections (`> file`): those were checked above.
            return Ok(());
        };
        self.simple(&name, &args, &part, depth)
    }

    /// `[ … ]` is the `test` builtin with words, but the grammar reads it as an expression
    /// (as in `[[ … ]]`): collect its words in order, and refuse the tokens that bash would
    /// read as redirections or list operators there (`[ a > b ]` writes a file `b`).
    fn bracket_test(
        &self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        args: &mut Vec<Word>,
    ) -> Result<()> {
        for child in children(node) {
            match child.kind() {
                "unary_expression" | "binary_expression" => {
                    self.bracket_test(child, src, part, args)?
                }
                "[" | "]" => {}
                "test_operator" | "!" | "=" | "==" | "!=" => args.push(Word {
                    value: self.text(child, src).to_string(),
                    expands: false,
                    quoted: false,
                }),
                other if !child.is_named() => {
                    return Err(deny(format!(
                        "`{part}`: `{other}` inside [ … ] is a redirection or shell operator for bash; quote it"
                    )))
                }
                _ => args.push(self.word(child, src, part)?),
            }
        }
        Ok(())
    }

    fn command_name(&self, node: Node<'_>, src: &[u8], part: &str) -> Result<String> {
        let kids: Vec<Node<'_>> = children(node);
        let text = self.text(node, src);
        let plain = kids.len() == 1 && kids[0].kind() == "word";
        let word = if plain {
            Some(self.word(kids[0], src, part)?)
        } else {
            None
        };
        match word {
            Some(w) if !w.quoted && !w.expands && valid_name(&w.value) => Ok(w.value),
            _ => Err(deny(format!(
                "`{part}`: the command name `{}` must be a plain word (no quotes, escapes, expansions or globs)",
                short(text)
            ))),
        }
    }

    fn redirect(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let part = short(self.text(node, src));
        match node.kind() {
            "file_redirect" => {
                let mut op = String::new();
                let mut targets = Vec::new();
                for child in children(node) {
                    match child.kind() {
                        "file_descriptor" => {}
                        k if !child.is_named() => op.push_str(k),
                        _ => targets.push(self.word(child, src, &part)?),
                    }
                }
                if targets.len() != 1 {
                    return Err(deny(format!(
                        "`{part}`: a redirection needs exactly one target"
                    )));
                }
                let target = &targets[0];
                let writes = !matches!(op.as_str(), "<" | "<&" | "<&-");
                let dup = matches!(op.as_str(), ">&" | "<&" | ">&-" | "<&-")
                    && (target.value == "-" || target.value.chars().all(|c| c.is_ascii_digit()))
                    && !target.quoted;
                if dup || !writes {
                    if target.expands && writes {
                        return Err(deny(format!("`{part}`: the redirection target expands")));
                    }
                    return Ok(());
                }
                if target.expands {
                    return Err(deny(format!(
                        "`{part}`: the redirection target `{}` would be expanded by the shell",
                        target.value
                    )));
                }
                check_write_path(&target.value, self.root)
                    .map_err(|why| deny(format!("`{part}`: output redirection {why}")))
            }
            "herestring_redirect" => {
                for child in children(node) {
                    if child.is_named() {
                        self.word(child, src, &part)?;
                    } else if child.kind() != "<<<" {
                        return Err(deny(format!(
                            "`{part}`: shell syntax `{}` is not allowed",
                            child.kind()
                        )));
                    }
                }
                Ok(())
            }
            "heredoc_redirect" => {
                let mut quoted_delimiter = false;
                let mut strip_tabs = false;
                let mut delimiter = String::new();
                for child in children(node) {
                    match child.kind() {
                        "<<" => {}
                        "<<-" => strip_tabs = true,
                        "heredoc_start" => {
                            let t = self.text(child, src);
                            quoted_delimiter = t.contains(['\'', '"', '\\']);
                            delimiter = t
                                .chars()
                                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                                .collect();
                        }
                        "heredoc_body" => {
                            let body = self.text(child, src);
                            let expanding = children(child)
                                .iter()
                                .any(|c| c.is_named() && c.kind() != "heredoc_content");
                            if !quoted_delimiter && (expanding || body.contains(['$', '`', '\\'])) {
                                return Err(deny(format!(
                                    "`{part}`: a heredoc with an unquoted delimiter must not contain `$`, backticks or backslashes (quote the delimiter: <<'EOF')"
                                )));
                            }
                            // bash ends the body at the first line equal to the delimiter; if
                            // the grammar read further, the two disagree: refuse.
                            let ends_early = body.split('\n').any(|line| {
                                let line = if strip_tabs {
                                    line.trim_start_matches('\t')
                                } else {
                                    line
                                };
                                line == delimiter
                            });
                            if ends_early {
                                return Err(deny(format!(
                                    "`{part}`: the heredoc body contains its own delimiter line"
                                )));
                            }
                        }
                        "heredoc_end" => {
                            let t = self.text(child, src);
                            let t = if strip_tabs {
                                t.trim_start_matches('\t')
                            } else {
                                t
                            };
                            if t != delimiter {
                                return Err(deny(format!(
                                    "`{part}`: the heredoc does not end with its delimiter `{delimiter}`"
                                )));
                            }
                        }
                        "file_redirect" | "herestring_redirect" => {
                            self.redirect(child, src, depth)?
                        }
                        "|" | "|&" | "&&" | "||" | ";" | "&" => {}
                        _ if child.is_named() => self.statement(child, src, depth)?,
                        other => {
                            return Err(deny(format!(
                                "`{part}`: shell syntax `{other}` is not allowed"
                            )))
                        }
                    }
                }
                Ok(())
            }
            other => Err(deny(format!(
                "`{part}`: {} is not allowed",
                describe_kind(other)
            ))),
        }
    }

    /// The exact value of an argument node, or a refusal naming what would be expanded.
    fn word(&self, node: Node<'_>, src: &[u8], part: &str) -> Result<Word> {
        let text = self.text(node, src);
        match node.kind() {
            "word" | "number" => unquoted(text, true)
                .map_err(|why| deny(format!("`{part}`: `{}` {why}", short(text)))),
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .ok_or_else(|| deny(format!("`{part}`: malformed quoted string")))?;
                Ok(Word {
                    value: inner.to_string(),
                    expands: false,
                    quoted: true,
                })
            }
            "string" => {
                if let Some(bad) = children(node)
                    .into_iter()
                    .find(|c| c.is_named() && c.kind() != "string_content")
                {
                    return Err(deny(format!(
                        "`{part}`: {} (`{}`) is not allowed",
                        describe_kind(bad.kind()),
                        short(self.text(bad, src))
                    )));
                }
                let inner = text
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .ok_or_else(|| deny(format!("`{part}`: malformed quoted string")))?;
                let value = double_quoted(inner)
                    .map_err(|why| deny(format!("`{part}`: `{}` {why}", short(text))))?;
                Ok(Word {
                    value,
                    expands: false,
                    quoted: true,
                })
            }
            "concatenation" => {
                let mut out = Word {
                    value: String::new(),
                    expands: false,
                    quoted: false,
                };
                let mut covered = 0usize;
                for child in children(node) {
                    if !child.is_named() {
                        return Err(deny(format!(
                            "`{part}`: `{}` is not allowed in a word",
                            child.kind()
                        )));
                    }
                    let w = self.word(child, src, part)?;
                    out.value.push_str(&w.value);
                    out.expands |= w.expands;
                    out.quoted |= w.quoted;
                    covered += child.byte_range().len();
                }
                if covered != node.byte_range().len() {
                    return Err(deny(format!(
                        "`{part}`: `{}` could not be read as one word",
                        short(text)
                    )));
                }
                Ok(out)
            }
            kind => Err(deny(format!(
                "`{part}`: {} (`{}`) is not allowed",
                describe_kind(kind),
                short(text)
            ))),
        }
    }

    /// One simple command: its name against the lists, wrappers unwrapped, arguments against
    /// the rule table.
    fn simple(&mut self, name: &str, args: &[Word], part: &str, depth: u8) -> Result<()> {
        if NEVER.contains(&name) {
            return Err(deny(format!(
                "`{part}`: the builtin `{name}` runs or redefines code and is never allowed"
            )));
        }
        if OPAQUE_WRAPPERS.contains(&name) {
            return Err(deny(format!(
                "`{part}`: `{name}` runs another program that the policy cannot check"
            )));
        }
        if let Some(why) = self.lists.refusal(name) {
            return Err(deny(format!("`{part}`: {why}")));
        }
        self.programs.push(name.to_string());
        let values: Vec<String> = args.iter().map(|w| w.value.clone()).collect();

        if name == "cd" {
            return match args {
                [dir] if !dir.expands && !dir.value.starts_with('-') => {
                    check_cd_path(&dir.value, self.root)
                        .map_err(|why| deny(format!("`{part}`: cd {why}")))
                }
                _ => Err(deny(format!(
                    "`{part}`: cd takes exactly one literal directory inside the root"
                ))),
            };
        }
        if SHELLS.contains(&name) {
            return match args {
                [flag, script] if flag.value == "-c" && !script.expands => {
                    self.script(&script.value, depth + 1)
                }
                _ => Err(deny(format!(
                    "`{part}`: a shell may only run `{name} -c 'script'`, and the script is checked"
                ))),
            };
        }
        if let Some(split) =
            unwrap_wrapper(name, &values).map_err(|why| deny(format!("`{part}`: {why}")))?
        {
            let inner = &args[split..];
            let Some((first, rest)) = inner.split_first() else {
                return Ok(());
            };
            if first.expands || !valid_name(&first.value) {
                return Err(deny(format!(
                    "`{part}`: the program run by {name} (`{}`) must be a plain name",
                    first.value
                )));
            }
            if name == "xargs"
                && (ARG_RULES
                    .iter()
                    .any(|r| r.programs.contains(&first.value.as_str()))
                    || SHELLS.contains(&first.value.as_str())
                    || is_wrapper(&first.value))
            {
                return Err(deny(format!(
                    "`{part}`: xargs would add unchecked arguments to {}",
                    first.value
                )));
            }
            return self.simple(&first.value, rest, part, depth);
        }

        let ruled: Vec<&ArgRule> = ARG_RULES
            .iter()
            .filter(|r| r.programs.contains(&name))
            .collect();
        if !ruled.is_empty() {
            // A glob that starts with a literal character other than `-` only ever expands to
            // names that start with it: never to an option such as `-exec`.
            if let Some(w) = args.iter().find(|w| {
                w.expands
                    && w.value
                        .starts_with(['-', '*', '?', '[', '{', '~', ']', '}'])
            }) {
                return Err(deny(format!(
                    "`{part}`: `{}` would be expanded by the shell and could become an option; quote it",
                    w.value
                )));
            }
            for rule in ruled {
                match rule.matches {
                    Match::Check(f) => {
                        f(&values, self.root).map_err(|why| deny(format!("`{part}`: {why}")))?
                    }
                    Match::Exact(opt) => {
                        if let Some(v) = values.iter().find(|v| {
                            *v == opt
                                || (opt.starts_with("--") && v.starts_with(&format!("{opt}=")))
                        }) {
                            return Err(deny(format!("`{part}`: {name} {v} {}", rule.why)));
                        }
                    }
                    Match::Prefix(prefix) => {
                        if let Some(v) = values.iter().find(|v| v.starts_with(prefix)) {
                            return Err(deny(format!("`{part}`: {name} {v} {}", rule.why)));
                        }
                    }
                }
            }
        }
        if !READ_ONLY.contains(&name) {
            if let Some(v) = values.iter().find(|v| names_config(v)) {
                return Err(deny(format!(
                    "`{part}`: {name} could change the configuration file ({v}); no tool may write it"
                )));
            }
        }
        Ok(())
    }
}

fn is_wrapper(name: &str) -> bool {
    matches!(
        name,
        "timeout" | "nice" | "nohup" | "stdbuf" | "time" | "command" | "env" | "xargs"
    )
}

/// For a wrapper, the index in `args` where the wrapped command starts (`Some(args.len())` when
/// there is none); `None` when `name` is not a wrapper.
fn unwrap_wrapper(name: &str, args: &[String]) -> std::result::Result<Option<usize>, String> {
    // (options that take a value in the next argument, options without a value)
    let (with_value, flags): (&[&str], &[&str]) = match name {
        "timeout" => (
            &["-s", "-k"],
            &["--preserve-status", "--foreground", "-v", "--verbose"],
        ),
        "nice" => (&["-n"], &[]),
        "nohup" => (&[], &[]),
        "stdbuf" => (&["-i", "-o", "-e"], &[]),
        "time" => (&[], &["-p"]),
        "command" => (&[], &["-p"]),
        "env" => (
            &["-u"],
            &["-i", "--ignore-environment", "-0", "--null", "-"],
        ),
        "xargs" => (
            &["-n", "-P", "-L", "-s", "-d", "-I", "-E", "-a", "-l", "-i"],
            &[
                "-0",
                "--null",
                "-r",
                "--no-run-if-empty",
                "-t",
                "--verbose",
                "-x",
                "--exit",
                "-o",
                "--open-tty",
            ],
        ),
        _ => return Ok(None),
    };
    let long_with_value: &[&str] = match name {
        "timeout" => &["--signal=", "--kill-after="],
        "nice" => &["--adjustment="],
        "stdbuf" => &["--input=", "--output=", "--error="],
        "env" => &["--unset="],
        "xargs" => &[
            "--max-args=",
            "--max-procs=",
            "--max-lines=",
            "--max-chars=",
            "--delimiter=",
            "--replace=",
            "--eof=",
            "--arg-file=",
        ],
        _ => &[],
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if name == "env" {
            if a.contains('=') && !a.starts_with('-') {
                return Err(format!("env {a}: assignments are not allowed"));
            }
            if a.starts_with("-S")
                || a.starts_with("--split-string")
                || a.starts_with("-C")
                || a.starts_with("--chdir")
            {
                return Err(format!("env {a} is not allowed"));
            }
        }
        if name == "command" && (a == "-v" || a == "-V") {
            // `command -v x` only looks a name up.
            return Ok(Some(args.len()));
        }
        if flags.contains(&a) || long_with_value.iter().any(|p| a.starts_with(p)) {
            i += 1;
            continue;
        }
        if with_value.contains(&a) {
            i += 2;
            continue;
        }
        // Attached short values: -n10, -sKILL, -oL, -I{} …
        if a.len() > 2 && with_value.iter().any(|o| a.starts_with(o)) && !a.starts_with("--") {
            i += 1;
            continue;
        }
        if name == "nice"
            && a.len() > 1
            && a.starts_with('-')
            && a[1..].chars().all(|c| c.is_ascii_digit())
        {
            i += 1;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            return Err(format!("{name} option {a} is not understood by the policy"));
        }
        break;
    }
    if name == "timeout" {
        // The duration comes before the command.
        if i >= args.len() {
            return Ok(Some(args.len()));
        }
        i += 1;
    }
    Ok(Some(i.min(args.len())))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '[' | ':' | '@')
        })
        && (name == "[" || !name.contains('['))
}

/// An unquoted word: backslash escapes removed; `$`, backticks, quotes and shell operators
/// refused (the grammar should never leave them in a word; if it does, we do not guess).
fn unquoted(text: &str, first_word: bool) -> std::result::Result<Word, String> {
    let mut value = String::new();
    let mut expands = false;
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut at_start = first_word;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                quoted = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(n) => value.push(n),
                    None => return Err("ends with a lone backslash".into()),
                }
            }
            '$' => return Err("contains an expansion ($)".into()),
            '`' => return Err("contains a backtick command substitution".into()),
            '\'' | '"' => return Err("has quotes the policy cannot read".into()),
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                return Err(format!("contains the shell operator `{c}`"))
            }
            '*' | '?' | '[' | ']' | '{' | '}' => {
                expands = true;
                value.push(c);
            }
            // bash expands `~` at the start and after `=` or `:` (`--dir=~/x`, `a:~/b`).
            '~' if at_start || value.ends_with(['=', ':']) => {
                expands = true;
                value.push(c);
            }
            _ => value.push(c),
        }
        at_start = false;
    }
    Ok(Word {
        value,
        expands,
        quoted,
    })
}

/// The inside of a double-quoted string without expansions: `\"`, `\\`, `\$`, `` \` `` and
/// `\<newline>` are escapes, other backslashes are literal.
fn double_quoted(inner: &str) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n @ ('"' | '\\' | '$' | '`')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '$' => return Err("contains an expansion ($)".into()),
            '`' => return Err("contains a backtick command substitution".into()),
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// The path relative to the root, lexically, or None when it leaves the root.
fn root_relative(value: &str, root: &Path) -> Option<PathBuf> {
    let path = Path::new(value);
    let rel = if path.is_absolute() {
        path.strip_prefix(root).ok()?.to_path_buf()
    } else {
        path.to_path_buf()
    };
    let mut out = PathBuf::new();
    for comp in rel.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Whether the last component of a path is the configuration file's name.
fn names_config(value: &str) -> bool {
    Path::new(value)
        .file_name()
        .is_some_and(|n| n == CONFIG_FILE_NAME)
}

/// A path a command may write: inside the root, not the config file.
fn check_write_path(value: &str, root: &Path) -> std::result::Result<(), String> {
    if matches!(value, "/dev/null" | "/dev/stdout" | "/dev/stderr") {
        return Ok(());
    }
    if value.is_empty() {
        return Err("to an empty path".into());
    }
    if names_config(value) {
        return Err(format!(
            "to {value}: the configuration file must not be written"
        ));
    }
    if Path::new(value)
        .components()
        .any(|c| c == Component::ParentDir)
    {
        return Err(format!(
            "to {value}: `..` is not allowed in a path that is written"
        ));
    }
    match root_relative(value, root) {
        Some(_) => Ok(()),
        None => Err(format!("to {value}: outside the workspace root")),
    }
}

fn check_inside_root(value: &str, root: &Path) -> std::result::Result<(), String> {
    match root_relative(value, root) {
        Some(_) => Ok(()),
        None => Err(format!("{value} is outside the workspace root")),
    }
}

fn check_cd_path(value: &str, root: &Path) -> std::result::Result<(), String> {
    if Path::new(value)
        .components()
        .any(|c| c == Component::ParentDir)
    {
        return Err(format!(
            "{value}: `..` is not allowed (the directory may only move down)"
        ));
    }
    if value.is_empty() {
        return Err("needs a directory".into());
    }
    check_inside_root(value, root)
}

/// git: global options before the subcommand (`-C`, `--git-dir`, `--work-tree` must stay in
/// the root), a known subcommand (no aliases), and the subcommand's own dangerous options.
fn check_git(args: &[String], root: &Path) -> std::result::Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            break;
        }
        let path_opt = |v: &str| check_inside_root(v, root).map_err(|e| format!("git {a}: {e}"));
        match a {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                let v = args.get(i + 1).ok_or(format!("git {a} needs a value"))?;
                if a != "--namespace" {
                    path_opt(v)?;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(v) = a
            .strip_prefix("--git-dir=")
            .or_else(|| a.strip_prefix("--work-tree="))
        {
            path_opt(v)?;
        } else if let Some(v) = a.strip_prefix("-C").filter(|v| !v.is_empty()) {
            path_opt(v)?;
        } else if !matches!(
            a,
            "--no-pager"
                | "-P"
                | "--paginate"
                | "-p"
                | "--bare"
                | "--no-replace-objects"
                | "--literal-pathspecs"
                | "--no-optional-locks"
                | "--version"
                | "--help"
        ) && !a.starts_with("--namespace=")
        {
            return Err(format!(
                "git option {a} is not allowed before the subcommand"
            ));
        }
        i += 1;
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    if !GIT_SUBCOMMANDS.contains(&sub.as_str()) {
        return Err(format!(
            "git {sub}: only git's own subcommands may run (aliases can run shell commands); allowed: {}",
            GIT_SUBCOMMANDS.join(", ")
        ));
    }
    let rest = &args[i + 1..];
    match sub.as_str() {
        "config" => check_git_config(rest),
        "rebase" => match rest.iter().find(|a| *a == "-x" || a.starts_with("--exec")) {
            Some(a) => Err(format!("git rebase {a} runs a program")),
            None => Ok(()),
        },
        "grep" => match rest
            .iter()
            .find(|a| a.starts_with("-O") || a.starts_with("--open-files-in-pager"))
        {
            Some(a) => Err(format!("git grep {a} runs a program")),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn check_git_config(args: &[String]) -> std::result::Result<(), String> {
    let mut positional = Vec::new();
    for a in args {
        match a.as_str() {
            "-f" | "--file" | "--blob" | "--system" | "--global" | "-e" | "--edit" => {
                return Err(format!("git config {a} is not allowed"))
            }
            _ if a.starts_with("--file=") || a.starts_with("--blob=") => {
                return Err(format!("git config {a} is not allowed"))
            }
            _ if a.starts_with("--get") || a == "--list" || a == "-l" => return Ok(()),
            _ if a.starts_with('-') => {}
            _ => positional.push(a.as_str()),
        }
    }
    let (key, value_count) = match positional.as_slice() {
        [] => return Ok(()),
        ["get" | "list", ..] => return Ok(()),
        ["set" | "unset", key, rest @ ..] => (*key, rest.len()),
        [key, rest @ ..] => (*key, rest.len()),
    };
    if value_count == 0 && !args.iter().any(|a| a.starts_with("--unset")) {
        return Ok(()); // reading one key
    }
    let lower = key.to_ascii_lowercase();
    if GIT_CONFIG_SAFE_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p))
        && !args.iter().any(|a| a.contains('!'))
    {
        return Ok(());
    }
    Err(format!(
        "git config {key}: setting this key could make git run a program; only {} keys may be set",
        GIT_CONFIG_SAFE_PREFIXES.join("*, ") + "*"
    ))
}

/// sed: no script files, no `e`/`w`/`W` commands or `s///e`/`s///w` flags, and `-i` only on
/// files inside the root that are not the configuration file.
fn check_sed(args: &[String], root: &Path) -> std::result::Result<(), String> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut files: Vec<&str> = Vec::new();
    let mut in_place = false;
    let mut explicit_script = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if a == "--" {
            files.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (opt, val) = long
                .split_once('=')
                .map_or((long, None), |(o, v)| (o, Some(v)));
            match opt {
                "expression" => {
                    let v = match val {
                        Some(v) => v,
                        None => {
                            i += 1;
                            args.get(i - 1)
                                .map(String::as_str)
                                .ok_or("sed --expression needs a script")?
                        }
                    };
                    scripts.push(v);
                    explicit_script = true;
                }
                "file" => return Err("sed --file reads a script the policy cannot check".into()),
                "in-place" => in_place = true,
                "quiet" | "silent" | "regexp-extended" | "null-data" | "zero-terminated"
                | "separate" | "unbuffered" | "posix" | "debug" | "sandbox" | "follow-symlinks"
                | "line-length" | "binary" => {}
                _ => return Err(format!("sed option {a} is not understood by the policy")),
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let opts: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < opts.len() {
                match opts[k] {
                    'n' | 'r' | 'E' | 's' | 'u' | 'z' => k += 1,
                    'i' => {
                        in_place = true;
                        break; // the rest is a backup suffix
                    }
                    'e' => {
                        let rest: String = opts[k + 1..].iter().collect();
                        let script = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1)
                                .map(String::as_str)
                                .ok_or("sed -e needs a script")?
                        } else {
                            // Points into `a`: the attached script.
                            &a[a.len() - rest.len()..]
                        };
                        scripts.push(script);
                        explicit_script = true;
                        break;
                    }
                    'l' => {
                        if k + 1 == opts.len() {
                            i += 1;
                        }
                        break;
                    }
                    'f' => return Err("sed -f reads a script the policy cannot check".into()),
                    c => return Err(format!("sed option -{c} is not understood by the policy")),
                }
            }
            continue;
        }
        if !explicit_script && scripts.is_empty() {
            scripts.push(a);
        } else {
            files.push(a);
        }
    }
    for s in scripts {
        check_sed_script(s)?;
    }
    if in_place {
        for f in files {
            if names_config(f) {
                return Err(format!(
                    "sed -i {f}: the configuration file must not be written"
                ));
            }
            check_inside_root(f, root).map_err(|e| format!("sed -i: {e}"))?;
        }
    }
    Ok(())
}

/// Walk a sed script command by command; refuse what executes or writes, and what we cannot
/// read.
fn check_sed_script(script: &str) -> std::result::Result<(), String> {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], ' ' | '\t') {
            *i += 1;
        }
    };
    let to_eol = |i: &mut usize| {
        while *i < b.len() && b[*i] != '\n' {
            if b[*i] == '\\' {
                *i += 1;
            }
            *i += 1;
        }
    };
    // Skip a delimited part (regex or replacement) starting after the delimiter.
    let delimited = |i: &mut usize, d: char| -> std::result::Result<(), String> {
        while *i < b.len() && b[*i] != d {
            if b[*i] == '\\' {
                *i += 1;
            }
            *i += 1;
        }
        if *i >= b.len() {
            return Err(format!(
                "sed script `{script}` has an unterminated expression"
            ));
        }
        *i += 1;
        Ok(())
    };
    loop {
        while i < b.len() && matches!(b[i], ' ' | '\t' | '\n' | ';') {
            i += 1;
        }
        if i >= b.len() {
            return Ok(());
        }
        // Addresses: up to two, then `!`.
        for n in 0..2 {
            if n == 1 {
                if i < b.len() && b[i] == ',' {
                    i += 1;
                    skip_ws(&mut i);
                } else {
                    break;
                }
            }
            if i < b.len() && (b[i].is_ascii_digit() || (n == 1 && matches!(b[i], '+' | '~'))) {
                i += 1;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == '~') {
                    i += 1;
                }
            } else if i < b.len() && b[i] == '$' {
                i += 1;
            } else if i < b.len() && b[i] == '/' {
                i += 1;
                delimited(&mut i, '/')?;
                while i < b.len() && matches!(b[i], 'I' | 'M') {
                    i += 1;
                }
            } else if i + 1 < b.len() && b[i] == '\\' {
                let d = b[i + 1];
                i += 2;
                delimited(&mut i, d)?;
                while i < b.len() && matches!(b[i], 'I' | 'M') {
                    i += 1;
                }
            }
            skip_ws(&mut i);
        }
        while i < b.len() && b[i] == '!' {
            i += 1;
            skip_ws(&mut i);
        }
        let Some(&cmd) = b.get(i) else {
            return Err(format!("sed script `{script}` ends after an address"));
        };
        i += 1;
        match cmd {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'q' | 'Q' | 'l' | 'L' => {
                skip_ws(&mut i);
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' => {
                while i < b.len() && !matches!(b[i], ';' | '\n') {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | '#' => to_eol(&mut i),
            'w' | 'W' => {
                return Err(format!(
                    "sed script `{script}`: the `{cmd}` command writes a file"
                ))
            }
            'e' => {
                return Err(format!(
                    "sed script `{script}`: the `e` command runs a shell command"
                ))
            }
            's' | 'y' => {
                let Some(&d) = b.get(i) else {
                    return Err(format!("sed script `{script}` ends after `{cmd}`"));
                };
                if d == '\n' || d == '\\' {
                    return Err(format!("sed script `{script}`: unusual delimiter"));
                }
                i += 1;
                delimited(&mut i, d)?;
                delimited(&mut i, d)?;
                if cmd == 's' {
                    while i < b.len() {
                        match b[i] {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                            c if c.is_ascii_digit() => i += 1,
                            'e' => {
                                return Err(format!(
                                    "sed script `{script}`: the s///e flag runs a shell command"
                                ))
                            }
                            'w' => {
                                return Err(format!(
                                    "sed script `{script}`: the s///w flag writes a file"
                                ))
                            }
                            _ => break,
                        }
                    }
                }
            }
            c => {
                return Err(format!(
                    "sed script `{script}`: command `{c}` is not understood by the policy"
                ))
            }
        }
        skip_ws(&mut i);
        if cmd != '{' && i < b.len() && !matches!(b[i], ';' | '\n' | '}' | '#') {
            return Err(format!(
                "sed script `{script}` could not be read by the policy"
            ));
        }
    }
}

fn describe_kind(kind: &str) -> String {
    match kind {
        "command_substitution" => "command substitution".into(),
        "process_substitution" => "process substitution".into(),
        "simple_expansion" | "expansion" => "variable expansion".into(),
        "arithmetic_expansion" => "arithmetic expansion".into(),
        "brace_expression" => "brace expansion".into(),
        "ansi_c_string" => "ANSI-C quoting ($'…')".into(),
        "translated_string" => "a translated string ($\"…\")".into(),
        "function_definition" => "a function definition".into(),
        "variable_assignment" | "variable_assignments" => "a variable assignment".into(),
        "if_statement"
        | "while_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "case_statement" => "a control structure".into(),
        "compound_statement" => "a `{ …; }` group".into(),
        "test_command" => "a `[[ … ]]` test".into(),
        "declaration_command" => "a declaration (declare/export/local …)".into(),
        "unset_command" => "unset".into(),
        other => format!("`{other}`"),
    }
}

/// The depth of a syntax tree, walked with a cursor (no recursion).
fn tree_depth(root: Node<'_>) -> usize {
    let mut cursor = root.walk();
    let (mut depth, mut max) = (0usize, 0usize);
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            max = max.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return max;
            }
            depth -= 1;
        }
    }
}

fn first_error<'s>(node: Node<'_>, src: &'s [u8]) -> Option<&'s str> {
    if node.is_error() || node.is_missing() {
        return node.utf8_text(src).ok().map(|t| t.get(..40).unwrap_or(t));
    }
    children(node).into_iter().find_map(|c| first_error(c, src))
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
        e.message
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
            eprintln!("{}", tree.root_node().to_sexp());
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

    #[test]
    fn sed_scripts() {
        assert!(check_sed_script("s/a/b/g;5d;/x/,/y/p").is_ok());
        assert!(check_sed_script("1~2{p;d}").is_ok());
        assert!(check_sed_script("s|a|b|e").is_err());
        assert!(check_sed_script("1e ls").is_err());
        assert!(check_sed_script("/x/w out").is_err());
        assert!(check_sed_script("$!N;s/\\n/ /").is_ok());
    }
}
