//! Programs that run another program given on their command line: the wrappers the policy
//! looks through (`timeout`, `nice`, `nohup`, `stdbuf`, `time`, `command`, `env`, `xargs`), the
//! commands of `find -exec/-execdir/-ok/-okdir` and `fd -x/-X`, and, with the kernel layers in
//! force, what can be seen behind the wrappers it cannot look through (`setsid`, `flock`,
//! `watch` …): each program word is judged as if it stood alone.

use super::lists::SHELLS;
use super::rules::ARG_RULES;
use super::words::{valid_name, Word};
use super::{deny, Checker};
use crate::error::Result;

/// Where a wrapper's command starts.
pub(super) enum Unwrap {
    /// Not a wrapper the policy looks through.
    NotWrapper,
    /// The wrapped command starts at this argument (none when it is past the end).
    At(usize),
    /// `env -S 'text'`: the text is a command line.
    Script(String),
    /// An option known only at run time stands before the command, from this argument on:
    /// where the command starts is not known.
    Unknown(usize),
}

impl Checker<'_> {
    /// Where the command a wrapper runs starts, its options skipped.
    pub(super) fn unwrap(&mut self, name: &str, args: &[Word], part: &str) -> Result<Unwrap> {
        let Some(opts) = wrapper_options(name) else {
            return Ok(Unwrap::NotWrapper);
        };
        let refuse = |why: String| deny(format!("`{part}`: {why}"));
        let mut i = 0;
        while let Some(w) = args.get(i) {
            let Some(a) = w.known() else {
                return Ok(Unwrap::Unknown(i));
            };
            if a == "--" {
                i += 1;
                break;
            }
            if name == "env" {
                match self.env_option(a, args.get(i + 1)).map_err(refuse)? {
                    EnvOption::Plain => {}
                    EnvOption::Skip(n) => {
                        i += n;
                        continue;
                    }
                    EnvOption::Split(text, n) => {
                        // `env -S 'a b' c` runs `a b c`.
                        let mut line = vec![text];
                        line.extend(args[i + n..].iter().map(|w| w.script().to_string()));
                        return Ok(Unwrap::Script(line.join(" ")));
                    }
                }
            }
            if name == "command" && (a == "-v" || a == "-V") {
                // `command -v x` only looks a name up.
                return Ok(Unwrap::At(args.len()));
            }
            if opts.flags.contains(&a) || opts.long_with_value.iter().any(|p| a.starts_with(p)) {
                i += 1;
                continue;
            }
            if opts.with_value.contains(&a) {
                i += 2;
                continue;
            }
            // Attached short values: -n10, -sKILL, -oL, -I{} …; and options whose value can
            // only be attached (xargs -i{}, -l5, -eEND).
            let attached = a.len() > 2
                && !a.starts_with("--")
                && (opts
                    .with_value
                    .iter()
                    .chain(opts.attached_only)
                    .any(|o| a.starts_with(o)));
            let nice_number = name == "nice"
                && a.len() > 1
                && a.starts_with('-')
                && a[1..].chars().all(|c| c.is_ascii_digit());
            if attached || nice_number || opts.attached_only.contains(&a) {
                i += 1;
                continue;
            }
            if a.starts_with('-') && a.len() > 1 {
                return Err(refuse(format!(
                    "{name} option {a} is not understood by the policy"
                )));
            }
            break;
        }
        if name == "timeout" {
            // The duration comes before the command.
            if i >= args.len() {
                return Ok(Unwrap::At(args.len()));
            }
            i += 1;
        }
        Ok(Unwrap::At(i.min(args.len())))
    }

    /// One of `env`'s arguments before its command: an assignment, `-C DIR` or `-S TEXT`
    /// (refused when strict), or an ordinary option.
    fn env_option(
        &mut self,
        a: &str,
        next: Option<&Word>,
    ) -> std::result::Result<EnvOption, String> {
        if a.contains('=') && !a.starts_with('-') {
            if self.strict {
                return Err(format!("env {a}: assignments are not allowed"));
            }
            let name = a.split_once('=').map_or(a, |(n, _)| n);
            if !super::lists::harmless_variable(name) {
                self.writes = true;
            }
            return Ok(EnvOption::Skip(1));
        }
        let split = a.starts_with("-S") || a.starts_with("--split-string");
        let chdir = a.starts_with("-C") || a.starts_with("--chdir");
        if self.strict && (split || chdir) {
            return Err(format!("env {a} is not allowed"));
        }
        let attached = a
            .split_once('=')
            .map(|(_, v)| v)
            .or_else(|| (!a.starts_with("--") && a.len() > 2).then(|| &a[2..]));
        if split {
            return Ok(match (attached, next) {
                (Some(v), _) => EnvOption::Split(v.to_string(), 1),
                (None, Some(w)) => EnvOption::Split(w.script().to_string(), 2),
                (None, None) => EnvOption::Split(String::new(), 1),
            });
        }
        if chdir {
            return Ok(EnvOption::Skip(if attached.is_some() { 1 } else { 2 }));
        }
        Ok(EnvOption::Plain)
    }

    /// The command a wrapper runs, checked as if it stood alone.
    pub(super) fn wrapped(
        &mut self,
        wrapper: &str,
        inner: &[Word],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        let Some((first, rest)) = inner.split_first() else {
            return Ok(());
        };
        if self.strict {
            if first.expands || first.dynamic || !valid_name(&first.value) {
                return Err(deny(format!(
                    "`{part}`: the program run by {wrapper} (`{}`) must be a plain name",
                    first.value
                )));
            }
            let program = first.value.as_str();
            if wrapper == "xargs"
                && (ARG_RULES.iter().any(|r| r.programs.contains(&program))
                    || SHELLS.contains(&program)
                    || wrapper_options(program).is_some())
            {
                return Err(deny(format!(
                    "`{part}`: xargs would add unchecked arguments to {program}"
                )));
            }
        }
        if wrapper == "xargs" {
            // The arguments xargs adds are known only at run time.
            let mut with_input = rest.to_vec();
            with_input.push(Word {
                value: "(input)".into(),
                dynamic: true,
                ..Word::default()
            });
            return self.program(first, &with_input, part, depth);
        }
        self.program(first, rest, part, depth)
    }

    /// Arguments whose role is not known (after an option known only at run time, or behind a
    /// wrapper the policy cannot look through): a program the lists deny, named there
    /// literally, is refused all the same.
    pub(super) fn named_denied(&mut self, wrapper: &str, args: &[Word], part: &str) -> Result<()> {
        self.writes = true;
        for w in args {
            let Some(v) = w.known() else { continue };
            if self.effective.denies(v).is_some() {
                let why = self.lists.refusal(v).unwrap_or_default();
                return Err(deny(format!("`{part}`: {wrapper} would run {v}: {why}")));
            }
        }
        Ok(())
    }

    /// A wrapper the policy cannot look through, with the kernel layers in force: the programs
    /// it names that the lists deny are refused, and the command lines it is given as text
    /// (`watch 'cmd'`, `flock f -c 'cmd'`) are checked as scripts.
    pub(super) fn opaque(
        &mut self,
        name: &str,
        args: &[Word],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        self.named_denied(name, args, part)?;
        let scripts: Vec<&str> = match name {
            "watch" => args
                .iter()
                .map(Word::script)
                .filter(|v| v.contains(char::is_whitespace))
                .collect(),
            "flock" | "script" | "su" | "runuser" => args
                .windows(2)
                .filter(|w| matches!(w[0].known(), Some("-c" | "--command")))
                .map(|w| w[1].script())
                .collect(),
            _ => Vec::new(),
        };
        for text in scripts {
            self.script(text, depth + 1)?;
        }
        Ok(())
    }

    /// The commands `find -exec/-execdir/-ok/-okdir … ;` and `fd -x/-X …` run, each judged as
    /// if it stood alone (`{}` is the file found).
    pub(super) fn exec_commands(
        &mut self,
        name: &str,
        args: &[Word],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        let starts: &[&str] = match name {
            "find" => &["-exec", "-execdir", "-ok", "-okdir"],
            "fd" | "fdfind" => &["-x", "--exec", "-X", "--exec-batch"],
            _ => return Ok(()),
        };
        let mut i = 0;
        while i < args.len() {
            if !args[i].known().is_some_and(|a| starts.contains(&a)) {
                i += 1;
                continue;
            }
            let from = i + 1;
            let mut end = from;
            while end < args.len() {
                let a = &args[end];
                let plus = a.known() == Some("+") && end > from && args[end - 1].value == "{}";
                if a.known() == Some(";") || (name == "find" && plus) {
                    break;
                }
                end += 1;
            }
            let inner = &args[from..end];
            if let Some((first, rest)) = inner.split_first() {
                self.program(first, rest, part, depth)?;
            }
            i = end + 1;
        }
        Ok(())
    }
}

/// What one of env's arguments is.
enum EnvOption {
    /// An option of the table.
    Plain,
    /// Takes up this many arguments (an assignment, `-C DIR`).
    Skip(usize),
    /// `-S TEXT`: a command line, and the arguments it took up.
    Split(String, usize),
}

/// A wrapper's options: those that take a value in the next argument, those without a
/// value, the long forms with an attached `=value`, and those whose value can only be
/// attached.
struct WrapperOptions {
    with_value: &'static [&'static str],
    flags: &'static [&'static str],
    long_with_value: &'static [&'static str],
    attached_only: &'static [&'static str],
}

#[rustfmt::skip]
fn wrapper_options(name: &str) -> Option<WrapperOptions> {
    let (with_value, flags, long_with_value, attached_only): (&[&str], &[&str], &[&str], &[&str]) =
        match name {
            "timeout" => (
                &["-s", "-k"],
                &["--preserve-status", "--foreground", "-v", "--verbose"],
                &["--signal=", "--kill-after="],
                &[],
            ),
            "nice" => (&["-n"], &[], &["--adjustment="], &[]),
            "nohup" => (&[], &[], &[], &[]),
            "stdbuf" => (&["-i", "-o", "-e"], &[], &["--input=", "--output=", "--error="], &[]),
            "time" | "command" => (&[], &["-p"], &[], &[]),
            "env" => (
                &["-u"],
                &["-i", "--ignore-environment", "-0", "--null", "-", "-v", "--debug"],
                &["--unset="],
                &[],
            ),
            "xargs" => (
                &["-n", "-P", "-L", "-s", "-d", "-I", "-E", "-a"],
                &["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit",
                  "-o", "--open-tty", "-p", "--interactive", "--show-limits"],
                &["--max-args=", "--max-procs=", "--max-lines=", "--max-chars=", "--delimiter=",
                  "--replace=", "--eof=", "--arg-file=", "--process-slot-var="],
                &["-i", "-l", "-e", "--replace", "--max-lines", "--eof"],
            ),
            _ => return None,
        };
    Some(WrapperOptions { with_value, flags, long_with_value, attached_only })
}
