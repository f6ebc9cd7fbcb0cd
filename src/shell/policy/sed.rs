//! sed: no script files, no `e`/`w`/`W` commands or `s///e`/`s///w` flags, and `-i` only on
//! files inside the root that are not the configuration file. The script is read command by
//! command; whatever the reader does not understand is refused.

use super::context::RuleContext;
use super::paths::{check_inside_root, names_config};
use super::words::UNKNOWN;

type Verdict = std::result::Result<(), String>;

/// What sed's arguments say: the scripts, the files, and whether it edits in place.
#[derive(Default)]
struct SedArgs<'a> {
    scripts: Vec<&'a str>,
    files: Vec<&'a str>,
    in_place: bool,
    explicit_script: bool,
}

pub(super) fn check_sed(args: &[String], context: &RuleContext<'_>) -> Verdict {
    let parsed = parse_sed_args(args)?;
    // A script known only at run time is the kernel's: what `e` runs is in its exec set, and
    // what `w` writes lands where it lets writes land.
    for s in parsed.scripts.iter().filter(|s| **s != UNKNOWN) {
        check_sed_script(s)?;
    }
    if parsed.in_place {
        for f in parsed.files {
            if names_config(f) {
                return Err(format!(
                    "sed -i {f}: the configuration file must not be written"
                ));
            }
            if context.inside_root {
                check_inside_root(f, context.root).map_err(|e| format!("sed -i: {e}"))?;
            }
        }
    }
    Ok(())
}

fn parse_sed_args(args: &[String]) -> std::result::Result<SedArgs<'_>, String> {
    let mut out = SedArgs::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        if a == "--" {
            out.files.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            i += long_option(long, args.get(i).map(String::as_str), &mut out)?;
        } else if a.len() > 1 && a.starts_with('-') {
            i += short_options(a, args.get(i).map(String::as_str), &mut out)?;
        } else if !out.explicit_script && out.scripts.is_empty() {
            out.scripts.push(a);
        } else {
            out.files.push(a);
        }
    }
    Ok(out)
}

/// One `--option[=value]`; returns how many following arguments it consumed.
fn long_option<'a>(
    long: &'a str,
    next: Option<&'a str>,
    out: &mut SedArgs<'a>,
) -> std::result::Result<usize, String> {
    let (opt, val) = long
        .split_once('=')
        .map_or((long, None), |(o, v)| (o, Some(v)));
    match opt {
        "expression" => {
            let (script, used) = match val {
                Some(v) => (v, 0),
                None => (next.ok_or("sed --expression needs a script")?, 1),
            };
            out.scripts.push(script);
            out.explicit_script = true;
            Ok(used)
        }
        "file" => Err("sed --file reads a script the policy cannot check".into()),
        "in-place" => {
            out.in_place = true;
            Ok(0)
        }
        "quiet" | "silent" | "regexp-extended" | "null-data" | "zero-terminated" | "separate"
        | "unbuffered" | "posix" | "debug" | "sandbox" | "follow-symlinks" | "line-length"
        | "binary" => Ok(0),
        _ => Err(format!(
            "sed option --{opt} is not understood by the policy"
        )),
    }
}

/// A cluster of short options (`-ne 's/a/b/'`, `-i.bak`); returns how many following
/// arguments it consumed.
fn short_options<'a>(
    a: &'a str,
    next: Option<&'a str>,
    out: &mut SedArgs<'a>,
) -> std::result::Result<usize, String> {
    for (k, c) in a.char_indices().skip(1) {
        match c {
            'n' | 'r' | 'E' | 's' | 'u' | 'z' => {}
            'i' => {
                out.in_place = true;
                return Ok(0); // the rest is a backup suffix
            }
            'e' => {
                let rest = &a[k + 1..];
                let (script, used) = if rest.is_empty() {
                    (next.ok_or("sed -e needs a script")?, 1)
                } else {
                    (rest, 0)
                };
                out.scripts.push(script);
                out.explicit_script = true;
                return Ok(used);
            }
            'l' => return Ok(usize::from(k + 1 == a.len())),
            'f' => return Err("sed -f reads a script the policy cannot check".into()),
            c => return Err(format!("sed option -{c} is not understood by the policy")),
        }
    }
    Ok(0)
}

/// Walk a sed script command by command; refuse what executes or writes, and what we cannot
/// read.
pub(super) fn check_sed_script(script: &str) -> Verdict {
    let mut reader = SedReader {
        script,
        b: script.chars().collect(),
        i: 0,
    };
    loop {
        while reader.i < reader.b.len() && matches!(reader.b[reader.i], ' ' | '\t' | '\n' | ';') {
            reader.i += 1;
        }
        if reader.i >= reader.b.len() {
            return Ok(());
        }
        reader.addresses()?;
        let cmd = reader.command()?;
        reader.skip_ws();
        if cmd != '{' && !matches!(reader.peek(), None | Some(';' | '\n' | '}' | '#')) {
            return Err(format!(
                "sed script `{script}` could not be read by the policy"
            ));
        }
    }
}

/// A cursor over a sed script.
struct SedReader<'a> {
    script: &'a str,
    b: Vec<char>,
    i: usize,
}

impl SedReader<'_> {
    fn peek(&self) -> Option<char> {
        self.b.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn skip_to_eol(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != '\n' {
            if self.b[self.i] == '\\' {
                self.i += 1;
            }
            self.i += 1;
        }
    }

    /// Skip a delimited part (regex or replacement) starting after the delimiter.
    fn delimited(&mut self, d: char) -> Verdict {
        while self.i < self.b.len() && self.b[self.i] != d {
            if self.b[self.i] == '\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        if self.i >= self.b.len() {
            return Err(format!(
                "sed script `{}` has an unterminated expression",
                self.script
            ));
        }
        self.i += 1;
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    /// Up to two addresses, then `!`s.
    fn addresses(&mut self) -> Verdict {
        for n in 0..2 {
            if n == 1 {
                if self.peek() != Some(',') {
                    break;
                }
                self.i += 1;
                self.skip_ws();
            }
            match self.peek() {
                Some(c) if c.is_ascii_digit() || (n == 1 && matches!(c, '+' | '~')) => {
                    self.i += 1;
                    while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '~') {
                        self.i += 1;
                    }
                }
                Some('$') => self.i += 1,
                Some('/') => {
                    self.i += 1;
                    self.delimited('/')?;
                    self.regex_flags();
                }
                Some('\\') if self.i + 1 < self.b.len() => {
                    let d = self.b[self.i + 1];
                    self.i += 2;
                    self.delimited(d)?;
                    self.regex_flags();
                }
                _ => {}
            }
            self.skip_ws();
        }
        while self.peek() == Some('!') {
            self.i += 1;
            self.skip_ws();
        }
        Ok(())
    }

    /// One command after its addresses; returns the command letter.
    fn command(&mut self) -> std::result::Result<char, String> {
        let script = self.script;
        let Some(cmd) = self.peek() else {
            return Err(format!("sed script `{script}` ends after an address"));
        };
        self.i += 1;
        match cmd {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'q' | 'Q' | 'l' | 'L' => {
                self.skip_ws();
                while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                    self.i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' => {
                while !matches!(self.peek(), None | Some(';' | '\n')) {
                    self.i += 1;
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | '#' => self.skip_to_eol(),
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
            's' | 'y' => self.substitution(cmd)?,
            c => {
                return Err(format!(
                    "sed script `{script}`: command `{c}` is not understood by the policy"
                ))
            }
        }
        Ok(cmd)
    }

    /// `s/re/replacement/flags` or `y/abc/xyz/`.
    fn substitution(&mut self, cmd: char) -> Verdict {
        let script = self.script;
        let Some(d) = self.peek() else {
            return Err(format!("sed script `{script}` ends after `{cmd}`"));
        };
        if d == '\n' || d == '\\' {
            return Err(format!("sed script `{script}`: unusual delimiter"));
        }
        self.i += 1;
        self.delimited(d)?;
        self.delimited(d)?;
        if cmd != 's' {
            return Ok(());
        }
        while let Some(c) = self.peek() {
            match c {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.i += 1,
                c if c.is_ascii_digit() => self.i += 1,
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts() {
        assert!(check_sed_script("s/a/b/g;5d;/x/,/y/p").is_ok());
        assert!(check_sed_script("1~2{p;d}").is_ok());
        assert!(check_sed_script("s|a|b|e").is_err());
        assert!(check_sed_script("1e ls").is_err());
        assert!(check_sed_script("/x/w out").is_err());
        assert!(check_sed_script("$!N;s/\\n/ /").is_ok());
    }

    #[test]
    fn sed_arguments() {
        let root = &RuleContext {
            root: std::path::Path::new("/ws"),
            inside_root: true,
        };
        let args = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert!(check_sed(&args(&["-n", "1p", "f"]), root).is_ok());
        assert!(check_sed(&args(&["-ne", "1p", "f"]), root).is_ok());
        assert!(check_sed(&args(&["-ne1e ls", "f"]), root).is_err());
        assert!(check_sed(&args(&["--expression=1e ls", "f"]), root).is_err());
        assert!(check_sed(&args(&["-i", "s/a/b/", "../x"]), root).is_err());
        assert!(check_sed(&args(&["-i.bak", "s/a/b/", "sneaky.toml"]), root).is_err());
        assert!(check_sed(&args(&["-f", "x"]), root).is_err());
        assert!(check_sed(&args(&["-l", "5", "p", "f"]), root).is_ok());
    }
}
