//! Which programs only read: the `effect` of a command is `reads` when every program it runs
//! is one of these with arguments that do not write (and nothing else in the line writes: see
//! `redirect` and the checker's `writes`). A program named by a path is never on the list
//! (`./ls` is whatever the workspace holds). This is for asking the person, not a boundary: a
//! `reads` command that changes something anyway has its changes held for approval.

use super::lists::SHELLS;
use super::words::Word;

/// Programs that only read whatever their arguments: none of their options writes a file or
/// runs a program. (The wrappers are here because the program they run is judged, and
/// classified, on its own.)
#[rustfmt::skip]
const ALWAYS_READS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "zgrep", "stat", "du", "df",
    "diff", "cmp", "comm", "nl", "tac", "rev", "basename", "dirname", "realpath", "readlink",
    "pwd", "echo", "printf", "true", "false", "test", "[", ":", "which", "type", "whereis",
    "whoami", "id", "groups", "uname", "date", "sleep", "jq", "sha1sum", "sha224sum",
    "sha256sum", "sha384sum", "sha512sum", "md5sum", "b2sum", "cksum", "od", "hexdump",
    "strings", "cut", "tr", "paste", "join", "column", "fold", "fmt", "expand", "unexpand",
    "seq", "yes", "nproc", "printenv", "base64", "base32", "numfmt", "ps", "pgrep", "pidof",
    "free", "uptime", "locale", "getconf", "tty", "cd", "exit", "wait", "fd", "fdfind",
    "timeout", "nice", "stdbuf", "time", "command", "xargs", "env",
];

/// Whether `name` with `args` only reads.
pub(super) fn reads(name: &str, args: &[Word]) -> bool {
    if ALWAYS_READS.contains(&name) || SHELLS.contains(&name) {
        // A shell's script is judged and classified on its own; one the parser cannot see
        // (a file, a pipe) makes the effect `writes` where the shell is checked.
        return true;
    }
    let Some(values) = options_known(args) else {
        return false;
    };
    match name {
        "sort" => !values
            .iter()
            .any(|v| v.starts_with("-o") || v.starts_with("--o") || v.starts_with("--compress")),
        "uniq" => positionals(&values, &["-f", "-s", "-w"]) <= 1,
        "tree" => !values.contains(&"-o"),
        "file" => !values
            .iter()
            .any(|v| *v == "-C" || v.starts_with("--compile")),
        "find" => !values
            .iter()
            .any(|v| matches!(*v, "-delete" | "-fls") || v.starts_with("-fprint")),
        "rg" => !values.iter().any(|v| v.starts_with("--pre")),
        "sed" => !values.iter().any(|v| {
            v.starts_with("--in-place")
                || (v.starts_with('-') && !v.starts_with("--") && short_has(v, 'i', &['e', 'f']))
        }),
        "git" => git_reads(&values),
        _ => false,
    }
}

/// The arguments' values, unless one is known only at run time or could become an option
/// when the shell expands it (`-*`).
fn options_known(args: &[Word]) -> Option<Vec<&str>> {
    args.iter()
        .map(|w| {
            if w.dynamic {
                None
            } else if w.expands {
                (!w.value.starts_with(['-', '*', '?', '[', '{', '~'])).then_some(w.value.as_str())
            } else {
                Some(w.value.as_str())
            }
        })
        .collect()
}

/// Whether a cluster of short options (`-ni`) holds `flag` before any of `with_value` (whose
/// value is the rest of the cluster).
fn short_has(cluster: &str, flag: char, with_value: &[char]) -> bool {
    for c in cluster.chars().skip(1) {
        if c == flag {
            return true;
        }
        if with_value.contains(&c) {
            return false;
        }
    }
    false
}

/// How many arguments are not options (nor the values of `with_value` options).
fn positionals(values: &[&str], with_value: &[&str]) -> usize {
    let mut n = 0;
    let mut skip = false;
    for v in values {
        if skip {
            skip = false;
        } else if with_value.contains(v) {
            skip = true;
        } else if !v.starts_with('-') || *v == "-" {
            n += 1;
        }
    }
    n
}

/// git subcommands that only read (with `--output`, none does).
#[rustfmt::skip]
const GIT_READS: &[&str] = &[
    "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame",
    "describe", "shortlog", "grep", "show-ref", "for-each-ref", "merge-base", "name-rev",
    "rev-list", "diff-tree", "diff-files", "diff-index", "check-ignore", "check-attr", "version",
    "count-objects", "cherry", "whatchanged", "var",
];

fn git_reads(values: &[&str]) -> bool {
    if values
        .iter()
        .any(|v| v.starts_with("--output") || v.starts_with("--out="))
    {
        return false;
    }
    // Global options, with the value of those that take one.
    let mut i = 0;
    while let Some(v) = values.get(i) {
        match *v {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            _ if v.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = values.get(i) else {
        return true; // `git --version`, `git -h`
    };
    let rest = &values[i + 1..];
    let has = |opts: &[&str]| rest.iter().any(|v| opts.contains(v));
    let positional = rest.iter().any(|v| !v.starts_with('-'));
    match *sub {
        s if GIT_READS.contains(&s) => true,
        // Listing, not creating, moving or deleting.
        "branch" => {
            !has(&[
                "-d",
                "-D",
                "--delete",
                "-m",
                "-M",
                "--move",
                "-c",
                "-C",
                "--copy",
                "-f",
                "--force",
                "-u",
                "--unset-upstream",
                "--edit-description",
            ]) && !rest.iter().any(|v| v.starts_with("--set-upstream"))
                && (!positional
                    || has(&[
                        "-l",
                        "--list",
                        "--contains",
                        "--no-contains",
                        "--merged",
                        "--no-merged",
                        "--points-at",
                    ]))
        }
        "tag" => {
            !has(&["-d", "--delete", "-a", "-s", "-u", "-f", "-m", "-F"])
                && (!positional || has(&["-l", "--list"]))
        }
        "stash" => matches!(rest.first(), Some(&"list" | &"show")),
        "worktree" | "notes" => matches!(rest.first(), Some(&"list" | &"show")),
        "remote" => matches!(
            rest.first(),
            None | Some(&"-v" | &"--verbose" | &"get-url" | &"show")
        ),
        "reflog" => matches!(rest.first(), None | Some(&"show")),
        "config" => {
            rest.iter()
                .any(|v| v.starts_with("--get") || matches!(*v, "--list" | "-l"))
                || (rest.iter().filter(|v| !v.starts_with('-')).count() <= 1
                    && !rest
                        .iter()
                        .any(|v| v.starts_with("--unset") || *v == "--edit" || *v == "-e"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<Word> {
        args.iter().map(|a| Word::literal(a)).collect()
    }

    #[test]
    fn options_that_write_make_a_reader_write() {
        for (name, args) in [
            ("grep", &["-r", "x", "."][..]),
            ("sort", &["-u", "f"]),
            ("uniq", &["-c", "f"]),
            ("sed", &["-n", "1,5p", "f"]),
            ("sed", &["-ne", "s/a/i/p", "f"]),
            ("find", &[".", "-name", "x"]),
            ("rg", &["-n", "x"]),
            ("git", &["status"]),
            ("git", &["-C", "sub", "log", "--oneline"]),
            ("git", &["branch", "-a"]),
            ("git", &["branch", "--list", "feat*"]),
            ("git", &["config", "user.name"]),
            ("git", &["stash", "list"]),
        ] {
            assert!(reads(name, &words(args)), "{name} {args:?}");
        }
        for (name, args) in [
            ("sort", &["-o", "f", "f"][..]),
            ("uniq", &["in", "out"]),
            ("sed", &["-i", "s/a/b/", "f"]),
            ("sed", &["-ni", "p", "f"]),
            ("sed", &["--in-place=.bak", "p", "f"]),
            ("find", &[".", "-delete"]),
            ("find", &[".", "-fprint", "out"]),
            ("rg", &["--pre", "cat", "x"]),
            ("git", &["diff", "--output=x"]),
            ("git", &["commit", "-m", "x"]),
            ("git", &["branch", "feature"]),
            ("git", &["branch", "-D", "feature"]),
            ("git", &["tag", "v1"]),
            ("git", &["stash"]),
            ("git", &["config", "user.name", "Me"]),
            ("cp", &["a", "b"]),
            ("cargo", &["build"]),
            ("./ls", &[]),
        ] {
            assert!(!reads(name, &words(args)), "{name} {args:?}");
        }
        // An argument known only at run time could be an option that writes.
        let mut dynamic = Word::literal("$OPTS");
        dynamic.dynamic = true;
        assert!(!reads("sort", &[dynamic.clone()]));
        assert!(reads("cat", &[dynamic]));
    }
}
