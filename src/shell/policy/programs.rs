//! One simple command: its program word against the lists (a bash builtin that is no program
//! is no program: those that run text as code have the text checked), shells and the scripts
//! they are given, and the arguments against the rule table.

use super::context::RuleContext;
use super::effect;
use super::lists::{NEVER, OPAQUE_WRAPPERS, READ_ONLY, SHELLS};
use super::paths::{check_cd_path, names_config, names_vcs_metadata};
use super::rules::{Match, ARG_RULES, STRICT_ONLY};
use super::words::{valid_name, Word};
use super::wrappers::Unwrap;
use super::{deny, Checker};
use crate::config::commands::Origin;
use crate::error::Result;

/// Programs that write the paths they are given (so `.git/…` among their arguments would change
/// the repository's metadata, where config and hooks run programs).
#[rustfmt::skip]
const WRITES_ITS_PATHS: &[&str] = &[
    "cp", "mv", "tee", "touch", "mkdir", "ln", "install", "truncate", "sort", "tar", "unzip",
    "patch", "rsync", "dd",
];

/// bash builtins that are no program anywhere: nothing is executed for them, so they are not
/// judged against the lists (which name programs), unless `tools.shell.denied_commands` names
/// one. Those that run text as code (`eval`, `trap`, `alias`) have the text checked as a
/// script; `exec`, `builtin`, `coproc` and `hash -p` name a program, which is judged.
#[rustfmt::skip]
const BUILTINS: &[&str] = &[
    "eval", "exec", "source", ".", "trap", "alias", "unalias", "enable", "builtin", "hash", "set",
    "shopt", "declare", "typeset", "export", "readonly", "local", "unset", "let", "read",
    "readarray", "mapfile", "coproc", "fc", "history", "bind", "complete", "compgen", "compopt",
    "pushd", "popd", "dirs", "ulimit", "umask", "getopts", "caller", "disown", "suspend",
    "logout", "shift", "return", "break", "continue", "wait", "jobs", "fg", "bg", "times", "help",
];

impl Checker<'_> {
    /// A program word with its arguments: judged when the parser knows it; one known only at
    /// run time (`$CMD`, `"$(which x)"`, a glob) is left to the kernel's exec set.
    pub(super) fn program(
        &mut self,
        name: &Word,
        args: &[Word],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        match name.known() {
            Some(known) => self.simple(known, args, part, depth),
            None if self.strict => Err(deny(format!(
                "`{part}`: the program name `{}` must be a plain word",
                name.value
            ))),
            None => {
                self.writes = true;
                Ok(())
            }
        }
    }

    /// One simple command whose program name is known.
    pub(super) fn simple(
        &mut self,
        name: &str,
        args: &[Word],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        if self.strict {
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
        } else if BUILTINS.contains(&name) {
            return self.builtin(name, args, part, depth);
        }
        if !self.built_here(name) {
            if let Some(why) = self.lists.refusal(name) {
                return Err(deny(format!("`{part}`: {why}")));
            }
        }
        self.programs.push(name.to_string());
        if !effect::reads(name, args) {
            self.writes = true;
        }
        if name == "cd" {
            return if self.strict {
                self.cd(args, part)
            } else {
                Ok(())
            };
        }
        if SHELLS.contains(&name) {
            return self.shell(name, args, part, depth);
        }
        match self.unwrap(name, args, part)? {
            Unwrap::NotWrapper => {}
            Unwrap::At(split) => return self.wrapped(name, &args[split..], part, depth),
            Unwrap::Script(text) => return self.script(&text, depth + 1),
            Unwrap::Unknown(from) => return self.named_denied(name, &args[from..], part),
        }
        if !self.strict {
            if OPAQUE_WRAPPERS.contains(&name) {
                self.opaque(name, args, part, depth)?;
            }
            self.exec_commands(name, args, part, depth)?;
        }
        let values: Vec<String> = args.iter().map(Word::rule_value).collect();
        self.argument_rules(name, args, &values, part)?;
        let known = || args.iter().filter_map(Word::known);
        if !READ_ONLY.contains(&name) {
            if let Some(v) = known().find(|v| names_config(v)) {
                return Err(deny(format!(
                    "`{part}`: {name} could change the configuration file ({v}); no tool may write it"
                )));
            }
        }
        if WRITES_ITS_PATHS.contains(&name) {
            if let Some(v) = known().find(|v| names_vcs_metadata(v)) {
                return Err(deny(format!(
                    "`{part}`: {name} could change {v}: .git is version-control metadata, read-only to commands"
                )));
            }
        }
        Ok(())
    }

    /// A bash builtin that is no program (see [`BUILTINS`]).
    // Long: one arm per bash builtin the policy knows, each a few lines; the match is the list.
    fn builtin(&mut self, name: &str, args: &[Word], part: &str, depth: u8) -> Result<()> {
        if self.effective.denies(name) == Some(Origin::DeniedCommands) {
            return Err(deny(format!(
                "`{part}`: {name} is in tools.shell.denied_commands (remove it there to allow it)"
            )));
        }
        match name {
            "eval" => {
                let text: Vec<&str> = args.iter().map(Word::script).collect();
                self.script(&text.join(" "), depth + 1)
            }
            // trap [-lp] [[action] signal …]: the action is a script.
            "trap" => {
                let action = args
                    .iter()
                    .find(|w| !matches!(w.known(), Some("-p" | "-l" | "-P" | "--")));
                match action {
                    Some(w) if w.known() != Some("-") => self.script(w.script(), depth + 1),
                    _ => Ok(()),
                }
            }
            "alias" => {
                for w in args {
                    if let Some((_, text)) = w.script().split_once('=') {
                        self.script(text, depth + 1)?;
                    }
                }
                Ok(())
            }
            // exec [-cl] [-a name] [command [arguments]]: with no command, only redirections.
            "exec" => {
                let mut i = 0;
                while let Some(w) = args.get(i) {
                    match w.known() {
                        Some("-a") => i += 2,
                        Some("--") => {
                            i += 1;
                            break;
                        }
                        Some(o) if o.starts_with('-') && o.len() > 1 => i += 1,
                        _ => break,
                    }
                }
                match args.get(i) {
                    Some(program) => self.program(program, &args[i + 1..], part, depth),
                    None => Ok(()),
                }
            }
            // `builtin name …` runs bash's own `name`; `coproc cmd …` runs cmd beside the shell.
            "builtin" | "coproc" => match args.split_first() {
                Some((first, rest)) => self.program(first, rest, part, depth),
                None => Ok(()),
            },
            // hash -p PATH NAME: NAME then runs PATH.
            "hash" => {
                self.writes = true;
                match args.iter().position(|w| w.known() == Some("-p")) {
                    Some(i) => match args.get(i + 1) {
                        Some(path) => self.program(path, &[], part, depth),
                        None => Ok(()),
                    },
                    None => Ok(()),
                }
            }
            // An arithmetic string's array subscripts are expanded when it is evaluated
            // (`let 'a[$(cmd)]'`): a command there is one the parser cannot judge.
            "let" => match args
                .iter()
                .filter_map(Word::known)
                .find(|v| v.contains("$(") || v.contains('`'))
            {
                Some(v) => Err(deny(format!(
                    "`{part}`: let `{v}`: a command substitution inside an arithmetic string \
                     runs when bash evaluates it; write it outside the quotes"
                ))),
                None => Ok(()),
            },
            // What these run is not known to the parser (a file's text, a shared object, an
            // editor, completion commands); it runs under the kernel layers.
            "source" | "." | "enable" | "fc" | "complete" | "compgen" | "bind" => self.unseen(),
            _ => Ok(()),
        }
    }

    /// Code the parser cannot see runs (a file sourced, a string known only at run time): the
    /// kernel contains it; the effect is `writes`.
    pub(super) fn unseen(&mut self) -> Result<()> {
        self.writes = true;
        Ok(())
    }

    /// A shell: `-c SCRIPT` is checked as a script, and so is the text a heredoc or
    /// here-string gives it on standard input; a script file or a pipe is not known to the
    /// parser and runs under the kernel layers. When strict, only `sh -c 'literal'`.
    fn shell(&mut self, name: &str, args: &[Word], part: &str, depth: u8) -> Result<()> {
        if self.strict {
            return match args {
                [flag, script] if flag.value == "-c" && script.known().is_some() => {
                    self.script(&script.value, depth + 1)
                }
                _ => Err(deny(format!(
                    "`{part}`: a shell may only run `{name} -c 'script'`, and the script is checked"
                ))),
            };
        }
        let (mut i, mut command, mut from_stdin) = (0, false, false);
        while let Some(w) = args.get(i) {
            // A word known only at run time ends the options (were it an option, what then
            // runs is the kernel's).
            let Some(a) = w.known() else { break };
            match a {
                "--" | "-" => {
                    i += 1;
                    break;
                }
                "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => i += 2,
                _ if a.starts_with("--") => i += 1,
                _ if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 => {
                    let flags = &a[1..];
                    command |= a.starts_with('-') && flags.contains('c');
                    from_stdin |= flags.contains('s');
                    i += 1 + usize::from(flags.contains(['o', 'O']));
                }
                _ => break,
            }
        }
        let stdin = self.stdin.take();
        if command {
            return match args.get(i) {
                Some(script) => self.script(script.script(), depth + 1),
                None => Ok(()),
            };
        }
        if from_stdin || args.get(i).is_none() {
            if let Some(text) = stdin {
                return self.script(&text, depth + 1);
            }
        }
        self.unseen()
    }

    /// A program named by a path beneath one of `tools.shell.exec_workspace_dirs` (without
    /// `..`): what the build made there, which that key lets run.
    fn built_here(&self, name: &str) -> bool {
        if !name.contains('/') || self.workspace_exec.is_empty() {
            return false;
        }
        let path = std::path::Path::new(name);
        let rel = match path.strip_prefix(self.root) {
            Ok(rel) => rel,
            Err(_) if path.is_absolute() => return false,
            Err(_) => path,
        };
        use std::path::Component;
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return false;
        }
        let normal = |p: &std::path::Path| -> std::path::PathBuf {
            p.components()
                .filter(|c| matches!(c, Component::Normal(_)))
                .collect()
        };
        let rel = normal(rel);
        self.workspace_exec.iter().any(|d| {
            let d = normal(std::path::Path::new(d));
            rel.starts_with(&d) && rel != d
        })
    }

    /// When strict, `cd` only moves down, to a literal path inside the root.
    fn cd(&self, args: &[Word], part: &str) -> Result<()> {
        match args {
            [dir] if dir.known().is_some() && !dir.value.starts_with('-') => {
                check_cd_path(&dir.value, self.root)
                    .map_err(|why| deny(format!("`{part}`: cd {why}")))
            }
            _ => Err(deny(format!(
                "`{part}`: cd takes exactly one literal directory inside the root"
            ))),
        }
    }

    /// The rule table for a program that has rules: none of the offending options, where the
    /// arguments are literal. When strict, also no argument that could expand into an option.
    fn argument_rules(
        &self,
        name: &str,
        args: &[Word],
        values: &[String],
        part: &str,
    ) -> Result<()> {
        let mut ruled = ARG_RULES
            .iter()
            .filter(|r| r.programs.contains(&name))
            .peekable();
        if ruled.peek().is_none() {
            return Ok(());
        }
        // A glob that starts with a literal character other than `-` only ever expands to
        // names that start with it: never to an option such as `-exec`.
        if self.strict {
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
        }
        if name == "git" {
            super::git::check_git_network(values, self.network)
                .map_err(|why| deny(format!("`{part}`: {why}")))?;
        }
        let context = RuleContext {
            root: self.root,
            inside_root: self.strict,
        };
        for rule in ruled {
            match rule.matches {
                Match::Check(f) => {
                    f(values, &context).map_err(|why| deny(format!("`{part}`: {why}")))?
                }
                Match::Exact(option) if !self.strict && STRICT_ONLY.contains(&option) => {}
                _ => {
                    if let Some(v) = rule.matches.find(values) {
                        return Err(deny(format!("`{part}`: {name} {v} {}", rule.why)));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Whether a name may stand as a program when strict (no quotes or expansions).
pub(super) fn plain(w: &Word) -> bool {
    !w.quoted && !w.expands && !w.dynamic && valid_name(&w.value)
}
