//! One simple command: its name against the lists, the wrappers the policy can look through
//! (`timeout`, `env`, `xargs` …) unwrapped, `sh -c 'script'` checked as a script, and the
//! arguments against the rule table.

use super::lists::{READ_ONLY, SHELLS};
use super::paths::{check_cd_path, names_config, names_vcs_metadata};
use super::rules::{Match, ARG_RULES};
use super::words::{valid_name, Word};
use super::{deny, Checker};
use crate::error::Result;

/// Programs that write the paths they are given (so `.git/…` among their arguments would change
/// the repository's metadata, where config and hooks run programs).
#[rustfmt::skip]
const WRITES_ITS_PATHS: &[&str] = &[
    "cp", "mv", "tee", "touch", "mkdir", "ln", "install", "truncate", "sort", "tar", "unzip",
    "patch", "rsync", "dd",
];

impl Checker<'_> {
    /// One simple command: its name against the lists, wrappers unwrapped, arguments against
    /// the rule table.
    pub(super) fn simple(
        &mut self,
        name: &str,
        args: &[Word],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        if self.lists.never(name) {
            return Err(deny(format!(
                "`{part}`: the builtin `{name}` runs or redefines code and is never allowed"
            )));
        }
        if self.lists.opaque(name) {
            return Err(deny(format!(
                "`{part}`: `{name}` runs another program that the policy cannot check"
            )));
        }
        if !self.built_here(name) {
            if let Some(why) = self.lists.refusal(name) {
                return Err(deny(format!("`{part}`: {why}")));
            }
        }
        self.programs.push(name.to_string());
        let values: Vec<String> = args.iter().map(|w| w.value.clone()).collect();
        if name == "cd" {
            return self.cd(args, part);
        }
        if SHELLS.contains(&name) {
            return match args {
                [flag, script] if flag.value == "-c" && !script.expands => {
                    self.script(&script.value, depth + 1)
                }
                // A script file, or a script known only at run time: the kernel bounds it.
                _ if self.lists.contained() => Ok(()),
                _ => Err(deny(format!(
                    "`{part}`: a shell may only run `{name} -c 'script'`, and the script is checked"
                ))),
            };
        }
        if let Some(split) =
            unwrap_wrapper(name, &values).map_err(|why| deny(format!("`{part}`: {why}")))?
        {
            return self.wrapped(name, &args[split..], part, depth);
        }
        self.argument_rules(name, args, &values, part)?;
        if !READ_ONLY.contains(&name) {
            if let Some(v) = values.iter().find(|v| names_config(v)) {
                return Err(deny(format!(
                    "`{part}`: {name} could change the configuration file ({v}); no tool may write it"
                )));
            }
        }
        if WRITES_ITS_PATHS.contains(&name) {
            if let Some(v) = values.iter().find(|v| names_vcs_metadata(v)) {
                return Err(deny(format!(
                    "`{part}`: {name} could change {v}: .git is version-control metadata, read-only to commands"
                )));
            }
        }
        Ok(())
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

    fn cd(&self, args: &[Word], part: &str) -> Result<()> {
        match args {
            [dir] if !dir.expands && !dir.value.starts_with('-') => {
                check_cd_path(&dir.value, self.root)
                    .map_err(|why| deny(format!("`{part}`: cd {why}")))
            }
            _ => Err(deny(format!(
                "`{part}`: cd takes exactly one literal directory inside the root"
            ))),
        }
    }

    /// The command a wrapper runs, checked as if it stood alone.
    fn wrapped(&mut self, wrapper: &str, inner: &[Word], part: &str, depth: u8) -> Result<()> {
        let Some((first, rest)) = inner.split_first() else {
            return Ok(());
        };
        if first.expands || !valid_name(&first.value) {
            return Err(deny(format!(
                "`{part}`: the program run by {wrapper} (`{}`) must be a plain name",
                first.value
            )));
        }
        let program = first.value.as_str();
        if wrapper == "xargs"
            && (ARG_RULES.iter().any(|r| r.programs.contains(&program))
                || SHELLS.contains(&program)
                || is_wrapper(program))
        {
            return Err(deny(format!(
                "`{part}`: xargs would add unchecked arguments to {program}"
            )));
        }
        self.simple(program, rest, part, depth)
    }

    /// The rule table for a program that has rules: no argument that could expand into an
    /// option, and none of the offending options.
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
        if name == "git" {
            super::git::check_git_network(values, self.network)
                .map_err(|why| deny(format!("`{part}`: {why}")))?;
        }
        for rule in ruled {
            if let Match::Check(f) = rule.matches {
                f(values, self.root).map_err(|why| deny(format!("`{part}`: {why}")))?;
            } else if let Some(v) = rule.matches.find(values) {
                return Err(deny(format!("`{part}`: {name} {v} {}", rule.why)));
            }
        }
        Ok(())
    }
}

pub(super) fn is_wrapper(name: &str) -> bool {
    wrapper_options(name).is_some()
}

/// A wrapper's options: those that take a value in the next argument, those without a
/// value, and the long forms with an attached `=value`.
struct WrapperOptions {
    with_value: &'static [&'static str],
    flags: &'static [&'static str],
    long_with_value: &'static [&'static str],
}

#[rustfmt::skip]
fn wrapper_options(name: &str) -> Option<WrapperOptions> {
    let (with_value, flags, long_with_value): (&[&str], &[&str], &[&str]) = match name {
        "timeout" => (
            &["-s", "-k"],
            &["--preserve-status", "--foreground", "-v", "--verbose"],
            &["--signal=", "--kill-after="],
        ),
        "nice" => (&["-n"], &[], &["--adjustment="]),
        "nohup" => (&[], &[], &[]),
        "stdbuf" => (&["-i", "-o", "-e"], &[], &["--input=", "--output=", "--error="]),
        "time" | "command" => (&[], &["-p"], &[]),
        "env" => (&["-u"], &["-i", "--ignore-environment", "-0", "--null", "-"], &["--unset="]),
        "xargs" => (
            &["-n", "-P", "-L", "-s", "-d", "-I", "-E", "-a", "-l", "-i"],
            &["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit", "-o",
              "--open-tty"],
            &["--max-args=", "--max-procs=", "--max-lines=", "--max-chars=", "--delimiter=",
              "--replace=", "--eof=", "--arg-file="],
        ),
        _ => return None,
    };
    Some(WrapperOptions { with_value, flags, long_with_value })
}

/// Options of `env` that change what runs (`-S` splits a string into a command line, `-C`
/// moves the working directory) or assign variables.
fn check_env_option(a: &str) -> std::result::Result<(), String> {
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
    Ok(())
}

/// For a wrapper, the index in `args` where the wrapped command starts (`Some(args.len())` when
/// there is none); `None` when `name` is not a wrapper.
fn unwrap_wrapper(name: &str, args: &[String]) -> std::result::Result<Option<usize>, String> {
    let Some(opts) = wrapper_options(name) else {
        return Ok(None);
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if name == "env" {
            check_env_option(a)?;
        }
        if name == "command" && (a == "-v" || a == "-V") {
            // `command -v x` only looks a name up.
            return Ok(Some(args.len()));
        }
        if opts.flags.contains(&a) || opts.long_with_value.iter().any(|p| a.starts_with(p)) {
            i += 1;
            continue;
        }
        if opts.with_value.contains(&a) {
            i += 2;
            continue;
        }
        // Attached short values: -n10, -sKILL, -oL, -I{} …
        let attached = a.len() > 2 && opts.with_value.iter().any(|o| a.starts_with(o));
        let nice_number = name == "nice"
            && a.len() > 1
            && a.starts_with('-')
            && a[1..].chars().all(|c| c.is_ascii_digit());
        if (attached && !a.starts_with("--")) || nice_number {
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
