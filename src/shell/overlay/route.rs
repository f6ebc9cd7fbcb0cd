//! What becomes of each path a command changed: applied and recorded, applied as a nested
//! repository's own git data, or discarded (what no tool may change); and which of them
//! someone else changed in the workspace while the command ran.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::errno::Errno;

use super::clock::Started;
use super::scan::Found;
use crate::error::{Error, ErrorKind};
use crate::fs::durable::{lstat_no_links, Git};
use crate::fs::jail::{Kind, Workspace, CONFIG_FILE_NAME};
use crate::fs::transition::To;

/// What becomes of a path the command changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// No tool may change it (the workspace's repository's `.git`, the root's `sneaky.toml`,
    /// protected paths): never applied.
    Discarded,
    /// A nested repository's git directory, or that of a repository the command made where
    /// the workspace had none (`git init`, `git clone`, `cargo new`), as git wrote it:
    /// applied, not recorded.
    NestedGit,
    /// A change of the workspace: recorded, or applied as untracked where git ignores it.
    Workspace,
}

/// What of a nested repository's git directory git writes as it works: objects, refs, the
/// index, logs, the state of a merge, rebase or bisect. The rest (config, hooks, info, …)
/// can make a later git run programs, and is applied only with `allow_vcs_writes`, as the
/// sandbox keeps it read-only in the workspace's own repository (src/shell/spec.rs).
const NESTED_GIT_DATA: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "index",
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_NAMES",
    "BISECT_EXPECTED_REV",
    "COMMIT_EDITMSG",
    "packed-refs",
    "description",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "shallow",
    "rr-cache",
];

/// The settings a command may give a repository it made (`git init`, `git clone` and
/// `cargo new` write only these): none makes git run a program or look elsewhere. A new
/// repository's `config` that sets anything else — `core.fsmonitor`, `core.hooksPath`,
/// `core.sshCommand`, `core.pager`, `core.editor`, `core.worktree`, `alias.*`, `filter.*`,
/// `diff.*.textconv`, `include.path`, `remote.*.uploadpack` … — is not applied (listed in
/// `discarded`, and a `sneaky-run:` line names the settings), as the config of an existing
/// repository is never changed by a command. `*` stands for a subsection (`remote "origin"`).
pub(crate) const PLAIN_GIT_CONFIG: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "core.abbrev",
    "core.sharedrepository",
    "extensions.objectformat",
    "extensions.refstorage",
    "init.defaultbranch",
    "user.name",
    "user.email",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.tagopt",
    "remote.*.mirror",
    "remote.*.prune",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "fetch.prune",
];

/// What of the git configuration `text` is not [`PLAIN_GIT_CONFIG`]: each setting as
/// `section.key` (`section.*.key` for a subsection's), and each line not in the plain form
/// `git config` writes, quoted; empty when everything is plain.
///
/// A guard, so it recognises rather than parses: git reads more forms than these (a setting
/// on its section's line, `[section.sub]`, a value continued with `\`, quotes, a byte-order
/// mark …), and a reader more lenient or less lenient than git's could be made to see one
/// key where git sees another. Any line outside the plain form makes the file not plain.
pub(super) fn unplain_settings(text: &[u8]) -> Vec<String> {
    let name_ok = |n: &[u8]| {
        n.first().is_some_and(u8::is_ascii_alphabetic)
            && n.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    };
    let mut out = Vec::new();
    let mut section: Option<(String, bool)> = None;
    let odd = |line: &[u8], out: &mut Vec<String>| {
        let shown: String = String::from_utf8_lossy(line).chars().take(60).collect();
        out.push(format!("the line {shown:?}"));
    };
    for line in text.split(|b| *b == b'\n') {
        let line = line.strip_prefix(b"\t").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix(b"[").and_then(|l| l.strip_suffix(b"]")) {
            // `[name]` or `[name "sub"]`, the subsection free of quotes and escapes.
            let (name, sub) = match header.iter().position(|b| *b == b' ') {
                None => (header, None),
                Some(sp) => (&header[..sp], Some(&header[sp + 1..])),
            };
            let sub_ok = sub.map_or(true, |s| {
                s.len() >= 2
                    && s.starts_with(b"\"")
                    && s.ends_with(b"\"")
                    && !s[1..s.len() - 1]
                        .iter()
                        .any(|b| matches!(b, b'"' | b'\\') || b.is_ascii_control())
            });
            section = if name_ok(name) && sub_ok {
                Some((String::from_utf8_lossy(name).to_lowercase(), sub.is_some()))
            } else {
                odd(line, &mut out);
                None
            };
            continue;
        }
        // `key = value`, the value free of what git would read otherwise (quotes, escapes,
        // comments, a continuation), under a plain section.
        let (key, value) = match line.iter().position(|b| *b == b'=') {
            Some(eq) => (&line[..eq], &line[eq + 1..]),
            None => (line, &b""[..]),
        };
        let key = key.strip_suffix(b" ").unwrap_or(key);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        let value_ok = !value.iter().any(|b| {
            matches!(b, b'"' | b'\\' | b'#' | b';') || (b.is_ascii_control() && *b != b'\t')
        }) && !value.ends_with(b" ");
        match &section {
            Some((name, sub)) if name_ok(key) && value_ok => {
                let key = String::from_utf8_lossy(key).to_lowercase();
                let setting = if *sub {
                    format!("{name}.*.{key}")
                } else {
                    format!("{name}.{key}")
                };
                if !PLAIN_GIT_CONFIG.contains(&setting.as_str()) && !out.contains(&setting) {
                    out.push(setting);
                }
            }
            _ => odd(line, &mut out),
        }
    }
    out
}

/// Whether `git_dir` (root-relative) is the git directory of a repository the command made
/// where the workspace has none: a real directory in the upper layer, and nothing of that name
/// in the workspace.
fn made_by_the_command(ws: &Workspace, upper: &Path, git_dir: &str) -> bool {
    std::fs::symlink_metadata(upper.join(git_dir)).is_ok_and(|m| m.is_dir())
        && matches!(lstat_no_links(ws, git_dir), Ok(None))
}

/// What becomes of the change of `path` to `to`, by its path (where it lands is checked
/// again, by the directory it lands in, when it is applied: src/fs/durable/landing.rs).
pub(super) fn route(
    ws: &Workspace,
    upper: &Path,
    path: &str,
    to: &To,
    vcs_writable: bool,
) -> Route {
    let absolute = ws.root().join(path);
    if path == CONFIG_FILE_NAME
        || ws.protected_paths().iter().any(|p| absolute.starts_with(p))
        || ws.protected_list().covering(&absolute).is_some()
    {
        return Route::Discarded;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let Some(at) = parts.iter().position(|c| c.eq_ignore_ascii_case(".git")) else {
        return Route::Workspace;
    };
    let git_dir = parts[..=at].join("/");
    // The workspace's own repository is bound through (git's writes went straight to it); a
    // `.git` in the upper layer at the root is one the command made where there was none.
    let made = made_by_the_command(ws, upper, &git_dir);
    if at == 0 && !made {
        return Route::Discarded;
    }
    if vcs_writable {
        return Route::NestedGit;
    }
    // A `.git` file (`gitdir: …`) or link could send git anywhere: only a directory counts.
    let in_upper = std::fs::symlink_metadata(upper.join(&git_dir)).is_ok_and(|m| m.is_dir());
    let in_workspace = lstat_no_links(ws, &git_dir)
        .is_ok_and(|st| st.is_some_and(|st| Kind::from_mode(st.st_mode) == Kind::Dir));
    if !(in_upper || in_workspace) {
        return Route::Discarded;
    }
    // git writes no symbolic link in its directory; one there would lead git's next writes
    // (and a later apply's lookups) elsewhere.
    if matches!(to, To::Link { .. }) {
        return Route::Discarded;
    }
    let data = match parts.get(at + 1) {
        None => matches!(to, To::Dir { .. } | To::Absent),
        Some(first) => NESTED_GIT_DATA.contains(first) || matches!(to, To::Absent),
    };
    // A new repository's configuration, when it sets only what runs nothing.
    let plain_config = || {
        made && parts.len() == at + 2
            && parts[at + 1] == "config"
            && matches!(to, To::File { .. })
            && std::fs::read(upper.join(path)).is_ok_and(|text| unplain_settings(&text).is_empty())
    };
    if data || plain_config() {
        Route::NestedGit
    } else {
        Route::Discarded
    }
}

/// Where a nested repository's git data may land (src/fs/durable/landing.rs): what git writes
/// as it works ([`NESTED_GIT_DATA`]) and what it removes, or with `allow_vcs_writes` whatever
/// it is; the `config` of a repository the command made, where [`route`] let it through; the
/// workspace's own `.git` only where the command made it.
pub(super) fn nested_git(path: &str, to: &To, vcs_writable: bool) -> Git<'static> {
    let parts: Vec<&str> = path.split('/').collect();
    let at = parts.iter().position(|c| c.eq_ignore_ascii_case(".git"));
    let config = at.is_some_and(|at| parts.len() == at + 2 && parts[at + 1] == "config");
    let names = match (vcs_writable || matches!(to, To::Absent), config) {
        (true, _) => None,
        (false, true) => Some(&["config"][..]),
        (false, false) => Some(NESTED_GIT_DATA),
    };
    Git::Nested {
        names,
        root: at == Some(0),
    }
}

/// The `.git/config` files of repositories the command made that are not applied for the
/// settings they hold, each with those settings (for the `sneaky-run:` line).
pub(super) fn refused_configs(
    ws: &Workspace,
    upper: &Path,
    discarded: &[String],
) -> Vec<(String, Vec<String>)> {
    discarded
        .iter()
        .filter_map(|path| {
            let git_dir = path.strip_suffix("/config")?;
            let last = git_dir.rsplit('/').next()?;
            if !last.eq_ignore_ascii_case(".git") || !made_by_the_command(ws, upper, git_dir) {
                return None;
            }
            let text = std::fs::read(upper.join(path)).ok()?;
            let settings = unplain_settings(&text);
            (!settings.is_empty()).then(|| (path.clone(), settings))
        })
        .collect()
}

/// The paths the command changed that someone else changed in the workspace while it ran
/// (see [`Started`]): applying the command's version would overwrite that work. Its
/// files, links and what it removes are compared by their change time; a directory the
/// command keeps as a directory is not (its change time moves with every entry made or
/// removed in it, and its entries are compared one by one). A file the command changed that
/// is gone from the workspace was deleted meanwhile, unless the command also removed paths,
/// one of which it may have renamed there (overlayfs marks a file copied up from the
/// workspace, not where from), or the file has another name the workspace still holds
/// (`linked_present`: a hard link the command made to a workspace file, which overlayfs
/// copies up first, every name carrying its origin). A path the workspace no longer reaches without a link (a
/// directory on its way swapped for one) was changed meanwhile too.
fn changed_meanwhile(
    ws: &Workspace,
    upper: &Path,
    all: &[Found],
    linked_present: &HashSet<u64>,
    started: Started,
    vcs_writable: bool,
) -> Vec<String> {
    // A clock set back while the command ran leaves change times that cannot be judged.
    let clock_went_back = Started::now().0 < started.0;
    let renames_possible = all.iter().any(|f| matches!(f.to, To::Absent));
    let mut out = Vec::new();
    for f in all {
        if route(ws, upper, &f.path, &f.to, vcs_writable) == Route::Discarded {
            continue;
        }
        let changed = match lstat_no_links(ws, &f.path) {
            Ok(Some(st))
                if Kind::from_mode(st.st_mode) == Kind::Dir && matches!(f.to, To::Dir { .. }) =>
            {
                false
            }
            Ok(Some(st)) => clock_went_back || started.changed_since(st.st_ctime, st.st_ctime_nsec),
            Err(Errno::ELOOP | Errno::EXDEV) => true,
            Ok(None) | Err(_) => match f.to {
                To::File { .. } | To::Link { .. } => {
                    let up = upper.join(&f.path);
                    !renames_possible
                        && crate::shell::sys::lgetxattr(&up, "user.overlay.origin").is_some()
                        && !std::fs::symlink_metadata(&up)
                            .is_ok_and(|m| m.nlink() > 1 && linked_present.contains(&m.ino()))
                }
                To::Absent | To::Dir { .. } => false,
            },
        };
        if changed {
            out.push(f.path.clone());
        }
    }
    out
}

/// [`changed_meanwhile`] as the apply step's check: a `conflict` naming what was changed.
pub(super) fn no_conflict(
    ws: &Workspace,
    upper: &Path,
    all: &[Found],
    linked_present: &HashSet<u64>,
    started: Started,
) -> crate::error::Result<()> {
    let vcs_writable = ws.vcs_writes_allowed();
    let meanwhile = changed_meanwhile(ws, upper, all, linked_present, started, vcs_writable);
    if meanwhile.is_empty() {
        Ok(())
    } else {
        Err(conflict(&meanwhile))
    }
}

/// The error of changes that would overwrite work done while the command ran.
fn conflict(paths: &[String]) -> Error {
    const SHOWN: usize = 20;
    let mut named = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        named.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    Error::new(
        ErrorKind::Conflict,
        format!(
            "while the command ran, someone else changed what it changed too, and applying its \
             changes would overwrite that: {named}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::unplain_settings;

    #[test]
    fn the_config_git_init_and_git_clone_write_is_plain() {
        let init = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        assert!(unplain_settings(init).is_empty());
        let clone = b"[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = /srv/my repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";
        assert!(unplain_settings(clone).is_empty());
        assert!(unplain_settings(b"").is_empty());
    }

    #[test]
    fn a_setting_that_runs_a_program_is_named() {
        for (text, setting) in [
            (
                &b"[core]\n\tfsmonitor = touch /tmp/x\n"[..],
                "core.fsmonitor",
            ),
            (b"[core]\n\thooksPath = /tmp/hooks\n", "core.hookspath"),
            (b"[Core]\n\tFSMonitor = x\n", "core.fsmonitor"),
            (b"[alias]\n\tst = !touch /tmp/x\n", "alias.st"),
            (b"[include]\n\tpath = /tmp/evil\n", "include.path"),
            (
                b"[filter \"lfs\"]\n\tclean = touch /tmp/x\n",
                "filter.*.clean",
            ),
            (b"[core \"x\"]\n\turl = y\n", "core.*.url"),
        ] {
            assert_eq!(
                unplain_settings(text),
                vec![setting.to_string()],
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn a_form_git_reads_otherwise_is_not_plain() {
        for text in [
            // On the section's line, and hidden in a header a lenient reader splits wrongly.
            &b"[core] fsmonitor = touch /tmp/x\n"[..],
            b"[core] fsmonitor = \"x]\"\n",
            b"[core]\n\tbare = false\n[core] fsmonitor = touch /tmp/x ; [core]\n",
            b"[core.sub]\n\tbare = false\n",
            // A value continued onto the next line, quoted, escaped, commented.
            b"[core]\n\tbare = false\\\nfsmonitor = x\n",
            b"[core]\n\tbare = \"false\"\n",
            b"[user]\n\tname = a;b\n",
            // Before any section, indented by spaces, a byte-order mark, a carriage return.
            b"\tbare = false\n",
            b"[core]\n  bare = false\n",
            b"\xef\xbb\xbf[core]\n\tbare = false\n",
            b"[core]\r\n\tbare = false\n",
            b"[remote \"a\\\"b\"]\n\turl = x\n",
        ] {
            assert!(
                !unplain_settings(text).is_empty(),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
