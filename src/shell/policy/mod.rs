//! The command policy of run_command: which shell command lines may run at all, and whether
//! one only reads (its `effect`).
//!
//! The line is parsed with a real bash grammar (tree-sitter-bash, as Codex does) and walked
//! node by node: every program word the parser can see is judged against the lists, wherever
//! it stands. Node kinds this module does not know, and anything that does not parse, are
//! refused (fail closed). What a command can do is bounded by the kernel layers behind this
//! module (src/shell/sandbox.rs and the layers it sets up: the world read-only, writes only in
//! the workspace, held and undoable, and the private temp dir, the exec set, no network but the
//! list, no privilege gained); so the policy classifies, and refuses only what it can see the
//! lists refuse or an argument rule names.
//!
//! What is accepted when the layers are in force ([`contained`]):
//! - the whole bash language: lists, pipelines, `&`, subshells and `{ …; }` groups, `if`,
//!   `while`/`until`, `for` and `for ((…))`, `select`, `case`, functions, `[[ … ]]`, `(( … ))`,
//!   assignments alone or before a command, declarations (`export`, `local` …), parameter,
//!   arithmetic and brace expansion, `$(…)`, backticks and `<(…)`, here-documents with or
//!   without expansions, `$'…'`; a `$` bash leaves literal (`grep ':$'`) is no expansion;
//! - every program word the parser sees is judged: in a loop or condition, a substitution, a
//!   function body, a `bash -c`/`sh -c` script and a shell fed a heredoc or here-string (both
//!   parsed in turn, at most [`MAX_DEPTH`] deep), `eval`, `trap` and `alias` strings, the
//!   commands of `xargs`, `find -exec/-execdir/-ok/-okdir` and `fd -x/-X`, and behind `env`,
//!   `timeout`, `nice`, `nohup`, `stdbuf`, `time`, `command`, `exec`, `coproc` and `hash -p`;
//!   a name defined as a function earlier in the same shell is the function (its body is
//!   judged where it is defined);
//! - a program word known only at run time (`$CMD args`, `"$(which x)"`, a glob) is left to
//!   the kernel's exec set, and so is what `source FILE`, `bash FILE` or a shell reading a pipe
//!   runs: their text is not known to the parser;
//! - the argument rules (see [`rules::ARG_RULES`]; `git -c` with a key that can name a program,
//!   `sed` `e`/`w`, `rg --pre`, `sort --compress-program`, `tar --checkpoint-action`, writes to
//!   `sneaky.toml` or `.git` …) still refuse where the argument is literal. Where it is known
//!   only at run time the kernel decides, since it contains what any option can do: a program
//!   it runs must be in the exec set, a file it writes must be in the workspace (held for
//!   undo), where `sneaky.toml` and `.git`'s config and hooks are read-only mounts. For the
//!   same reason a literal write outside the workspace (`> /tmp/x`), `cd` anywhere, `find
//!   -delete`, and a wrapper the policy cannot look through are the kernel's to judge.
//!
//! When a layer that bounds a program's effect may be missing (`sandbox = false`,
//! `container_boundary`, a `require_layers` without one of the containing layers), or with
//! `tools.shell.strict = true` (config::commands::mode decides), the policy is strict, as it
//! was before the layers: only simple commands in lists and pipelines, `( … )`,
//! `!` and `[ … ]`, words it can read exactly (no expansion of any kind, no assignment),
//! redirections that write only inside the root, heredocs without expansions, `sh -c
//! 'literal'`, and the wrappers above; find's and fd's `-exec`, `-delete` and the like,
//! builtins that run or redefine code ([`NEVER`]) and wrappers it cannot look through
//! ([`OPAQUE_WRAPPERS`]) are refused.
//!
//! Refusals are `command_denied` (exit 3) and name the offending part.
//!
//! The `effect` ([`Effect`]) is `reads` when every program is one that only reads with the
//! arguments given (src/shell/policy/effect.rs) and nothing is written by a redirection;
//! anything else, including every program word known only at run time, is `writes`.
//!
//! This module does no I/O; every promise of the kernel holds even when this parser is fooled.
//!
//! Layout, by the question each file answers:
//! - `lists`: which programs may run at all (defaults, configuration, where each came from);
//! - `syntax`: walking the bash syntax tree (statements, control structures, functions,
//!   assignments, `[[ … ]]`, `[ … ]`);
//! - `words`: what one word's value is, or that it is known only at run time;
//! - `redirect`: redirections, heredocs and here-strings;
//! - `programs`: one simple command (its name, shells, builtins, arguments);
//! - `wrappers`: the programs that run another program (`env`, `xargs`, `find -exec` …);
//! - `effect`: which programs only read;
//! - `rules`: the argument-rule table; `git`, `sed`, `archive`: the rules that need parsing;
//! - `paths`: where a path written by a command may lead.

use std::path::Path;

use tree_sitter::{Node, Parser};

use crate::config::commands::EffectiveLists;
use crate::config::Shell;
use crate::error::{Error, ErrorKind, Result};

mod archive;
mod context;
mod effect;
mod git;
mod kinds;
pub mod lists;
mod paths;
mod programs;
mod redirect;
pub mod rules;
mod sed;
mod syntax;
mod words;
mod wrappers;

use lists::Lists;
pub use lists::{NEVER, OPAQUE_WRAPPERS, SHELLS};
use syntax::{first_error, tree_depth};

/// The first argument that asks `sneaky-run` whether this policy would refuse a command (the
/// JSON arguments on stdin), without running anything: for the driver, which asks nobody to
/// approve a command that will be refused and does not link the shell grammar itself.
pub const CHECK_POLICY_FLAG: &str = "--check-policy";

/// Deepest syntax tree the checker walks (its walk is recursive).
const MAX_TREE_DEPTH: usize = 200;

/// Deepest nesting of scripts inside scripts (`sh -c '…'`, `eval`, a heredoc fed to a shell)
/// that is checked (deeper is refused).
const MAX_DEPTH: u8 = 3;

/// Whether a command only reads: the result's `effect`, by which sneaky-agent asks the person
/// only about commands that may write.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Every program is on the read-only list with arguments that do not write, and nothing
    /// is written by a redirection.
    Reads,
    /// Anything else.
    Writes,
}

/// The outcome of a successful check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// Every program the line runs whose name the parser can see, in order (wrapped programs
    /// and those of nested scripts included).
    pub programs: Vec<String>,
    pub effect: Effect,
}

/// Whether the kernel layers that bound what a program can do are sure to be in force when
/// the command runs (the sandbox on, and every containing layer required, so that a call
/// without one is refused rather than run weaker) and the strict mode was not chosen: then the
/// policy reads the whole language. Otherwise the policy is strict. The mode is
/// `config::commands::mode`'s (an allow list, `allowed_commands`, keeps the whole language:
/// the kernel's exec set holds the list for what the parser cannot see).
pub fn contained(shell: &Shell) -> bool {
    crate::config::commands::mode(shell).whole_language()
}

/// Check a command line. `root` is the canonical workspace root (absolute paths inside it are
/// accepted where a path must stay inside).
pub fn check(command: &str, shell: &Shell, root: &Path) -> Result<Approved> {
    let mut checker = Checker {
        lists: Lists::from_config(shell, root),
        effective: EffectiveLists::from_config(shell),
        root,
        programs: Vec::new(),
        network: shell.network.all() || shell.network.hosts().is_some(),
        workspace_exec: &shell.exec_workspace_dirs,
        strict: !contained(shell),
        writes: false,
        stdin: None,
        functions: Vec::new(),
    };
    checker.script(command, 0)?;
    Ok(Approved {
        programs: checker.programs,
        effect: if checker.writes {
            Effect::Writes
        } else {
            Effect::Reads
        },
    })
}

pub(crate) fn deny(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::CommandDenied, message)
}

struct Checker<'a> {
    lists: Lists,
    /// The same lists, asked only whether a name is denied (for builtins and the programs an
    /// opaque wrapper names).
    effective: EffectiveLists,
    root: &'a Path,
    programs: Vec<String>,
    /// tools.shell.network allows some network: git's network subcommands may run.
    network: bool,
    /// tools.shell.exec_workspace_dirs: programs there run by path.
    workspace_exec: &'a [String],
    /// The kernel layers may not all be in force: only what the policy can read exactly.
    strict: bool,
    /// Something may write: the effect is `writes`.
    writes: bool,
    /// The text on the standard input of the command being checked, when a heredoc or
    /// here-string gives it and it is known (a shell reading it runs it as a script).
    stdin: Option<String>,
    /// The functions defined so far in the script being checked.
    functions: Vec<syntax::Function>,
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
    /// Check a script: the line itself, or one found inside it (a `bash -c` string, an `eval`,
    /// a heredoc fed to a shell), `depth` scripts deep.
    fn script(&mut self, text: &str, depth: u8) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(deny(format!(
                "scripts nested deeper than {MAX_DEPTH} levels (`sh -c` inside `sh -c` …) are not checked"
            )));
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
        // A script's functions are its own (a child shell does not see its parent's), and its
        // offsets are its own text's.
        let outer = std::mem::take(&mut self.functions);
        let stdin = self.stdin.take();
        let checked = self.statement(root, src, depth);
        self.functions = outer;
        self.stdin = stdin;
        checked
    }

    fn text<'s>(&self, node: Node<'_>, src: &'s [u8]) -> &'s str {
        node.utf8_text(src).unwrap_or("")
    }

    /// Something the strict policy refuses: what, and why the policy is strict.
    fn strict_refusal(&self, part: &str, what: &str) -> Error {
        deny(format!(
            "`{part}`: {what} is not allowed: the policy is strict ({}), so it accepts only \
             simple commands, pipelines and lists whose every word it can read",
            self.lists.strict_reason().unwrap_or(
                "the kernel layers that contain what a command does may not all be in force: \
                 tools.shell.sandbox, container_boundary or require_layers"
            )
        ))
    }

    /// An expansion node (`$x`, `${…}`, `$(…)`, `$((…))`, `<(…)`) is used: refused when strict.
    fn dynamic_use(&self, node: Node<'_>, src: &[u8], part: &str) -> Result<()> {
        if self.strict {
            return Err(self.strict_refusal(
                part,
                &format!(
                    "{} (`{}`)",
                    kinds::describe_kind(node.kind()),
                    short(self.text(node, src))
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
