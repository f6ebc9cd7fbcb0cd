//! The argument rules: options of allowed programs that run other programs or write where
//! they must not, in one table. Rules that need to parse the argument list live beside it
//! (`git`, `sed`, `archive`). These are the friendly first layer with clear messages; the
//! kernel's exec allowlist and read-only world hold when a rule is missing.

use super::archive::{check_copy, check_tar};
use super::context::RuleContext;
use super::git::check_git;
use super::sed::check_sed;

/// How an argument rule recognises an offending argument.
#[derive(Debug, Clone, Copy)]
pub enum Match {
    /// The whole argument (for long options also `--opt=value`).
    Exact(&'static str),
    /// Any argument starting with this.
    Prefix(&'static str),
    /// A long option or any abbreviation of it that GNU getopt or git would accept
    /// (`--compress-prog=sh` is `--compress-program=sh`): `--` and at least three of its
    /// letters, with or without `=value`.
    Long(&'static str),
    /// A rule that needs the whole argument list (option values, subcommands, scripts).
    Check(fn(&[String], &RuleContext<'_>) -> std::result::Result<(), String>),
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
const SORT: &[&str] = &["sort"];
const TAR: &[&str] = &["tar"];
const ZIP: &[&str] = &["zip"];
const COPY: &[&str] = &["cp", "mv", "install"];

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
    ArgRule { programs: GIT, matches: Match::Long("output"), why: "writes a file anywhere" },
    ArgRule { programs: GIT, matches: Match::Long("upload-pack"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Long("receive-pack"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Long("exec"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Long("extcmd"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Long("open-files-in-pager"), why: "runs a program" },
    ArgRule { programs: GIT, matches: Match::Check(check_git), why: "" },
    ArgRule { programs: SED, matches: Match::Check(check_sed), why: "" },
    ArgRule { programs: RG, matches: Match::Prefix("--pre"), why: "runs a program on every file" },
    ArgRule { programs: RG, matches: Match::Long("search-zip"), why: "runs decompression programs" },
    ArgRule { programs: RG, matches: Match::Exact("-z"), why: "runs decompression programs" },
    ArgRule { programs: SORT, matches: Match::Long("compress-program"), why: "runs a program" },
    ArgRule { programs: TAR, matches: Match::Check(check_tar), why: "" },
    ArgRule { programs: ZIP, matches: Match::Long("unzip-command"), why: "runs a program" },
    ArgRule { programs: ZIP, matches: Match::Exact("-TT"), why: "runs a program" },
    ArgRule { programs: COPY, matches: Match::Check(check_copy), why: "" },
    ArgRule { programs: TEST, matches: Match::Exact("-v"), why: "bash evaluates array subscripts, which can run commands" },
    ArgRule { programs: TEST, matches: Match::Exact("-R"), why: "bash evaluates array subscripts, which can run commands" },
    ArgRule { programs: PRINTF, matches: Match::Prefix("-v"), why: "assigns a shell variable" },
];

/// The options of the rules above that hold only when the policy is strict. With the kernel
/// layers in force, the command find's `-exec` family or fd's `-x`/`-X` runs is judged where it
/// stands (src/shell/policy/wrappers.rs), and what `find -delete` removes lies in the
/// workspace, held and undoable.
pub(super) const STRICT_ONLY: &[&str] = &[
    "-exec",
    "-execdir",
    "-ok",
    "-okdir",
    "-delete",
    "-x",
    "--exec",
    "-X",
    "--exec-batch",
];

impl Match {
    /// The offending argument, if any (for `Check` rules see `check`).
    pub fn find<'a>(&self, values: &'a [String]) -> Option<&'a String> {
        match *self {
            Match::Exact(opt) => values.iter().find(|v| {
                *v == opt || (opt.starts_with("--") && v.starts_with(&format!("{opt}=")))
            }),
            Match::Prefix(prefix) => values.iter().find(|v| v.starts_with(prefix)),
            Match::Long(name) => values.iter().find(|v| abbreviates(v, name)),
            Match::Check(_) => None,
        }
    }
}

/// `--NAME`, `--NAME=…` or an abbreviation of NAME of at least three letters.
fn abbreviates(arg: &str, name: &str) -> bool {
    let Some(long) = arg.strip_prefix("--") else {
        return false;
    };
    let opt = long.split_once('=').map_or(long, |(o, _)| o);
    opt.len() >= 3.min(name.len()) && name.starts_with(opt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_options_match_their_abbreviations() {
        assert!(abbreviates("--compress-program=sh", "compress-program"));
        assert!(abbreviates("--compress-prog=sh", "compress-program"));
        assert!(abbreviates("--com", "compress-program"));
        assert!(!abbreviates("--co", "compress-program"));
        assert!(!abbreviates("--check", "compress-program"));
        assert!(!abbreviates("-compress-program", "compress-program"));
    }
}
