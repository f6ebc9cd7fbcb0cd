//! Which paths git ignores: the rules of the workspace's `.gitignore` files, the repository's
//! `info/exclude` and the user's excludes file, and the index (a tracked path is never
//! ignored). The paths git ignores are applied straight, not recorded.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::gitconfig::{config_home, GitConfig};
use super::gitindex::{read_index, GitDirs};
use crate::fs::glob;

/// Whether git ignores a path (by the workspace's `.gitignore` files, the repository's
/// `info/exclude` and the user's excludes file: `core.excludesFile` as git's configuration
/// sets it, else `$XDG_CONFIG_HOME/git/ignore`): it, or a directory above it, matches, and
/// git does not track it (a path in the index, or a directory holding one, is never ignored).
/// The patterns are gitignore(5)'s, matched by the tool set's glob matcher (src/fs/glob.rs)
/// rather than through a glob crate: the regular-expression engine one brings would more than
/// double sneaky-run's size.
pub(super) struct Ignored {
    root: PathBuf,
    per_dir: HashMap<String, Vec<Rule>>,
    exclude: Vec<Rule>,
    global: Vec<Rule>,
    repo: Option<GitDirs>,
    /// The index's paths, read the first time a changed path matches a rule.
    tracked: Option<Vec<Vec<u8>>>,
}

/// One line of an ignore file.
struct Rule {
    /// The pattern's segments (split at `/`); `**` matches any number of directories.
    segments: Vec<Vec<u8>>,
    /// No `/` but a trailing one: matches a name at any depth.
    anywhere: bool,
    negated: bool,
    dir_only: bool,
}

fn read_rules(file: &Path) -> Vec<Rule> {
    let Ok(text) = fs::read(file) else {
        return Vec::new();
    };
    text.split(|b| *b == b'\n').filter_map(parse_rule).collect()
}

fn parse_rule(line: &[u8]) -> Option<Rule> {
    let mut line = line.strip_suffix(b"\r").unwrap_or(line);
    // Trailing spaces are dropped unless escaped.
    while line.ends_with(b" ") && !line.ends_with(b"\\ ") {
        line = &line[..line.len() - 1];
    }
    if line.is_empty() || line.starts_with(b"#") {
        return None;
    }
    let (negated, mut line) = match line.strip_prefix(b"!") {
        Some(rest) => (true, rest),
        None => (false, line.strip_prefix(b"\\").unwrap_or(line)),
    };
    let dir_only = line.ends_with(b"/");
    if dir_only {
        line = &line[..line.len() - 1];
    }
    let anchored = line.contains(&b'/');
    let line = line.strip_prefix(b"/").unwrap_or(line);
    if line.is_empty() {
        return None;
    }
    Some(Rule {
        segments: line.split(|b| *b == b'/').map(<[u8]>::to_vec).collect(),
        anywhere: !anchored,
        negated,
        dir_only,
    })
}

impl Rule {
    /// `parts`: the path's components relative to the ignore file's directory.
    fn matches(&self, parts: &[&[u8]], is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        if self.anywhere {
            return parts
                .last()
                .is_some_and(|name| glob::component(&self.segments[0], name));
        }
        glob::components(&self.segments, parts, glob::Extent::Whole)
    }
}

/// The last rule of a file that matches decides: Some(ignored) or None (no opinion).
fn decide(rules: &[Rule], parts: &[&[u8]], is_dir: bool) -> Option<bool> {
    rules
        .iter()
        .rev()
        .find(|r| r.matches(parts, is_dir))
        .map(|r| !r.negated)
}

impl Ignored {
    pub(super) fn new(root: &Path) -> Ignored {
        let repo = GitDirs::of(root);
        let config = GitConfig::read(repo.as_ref().map(|r| r.common.as_path()));
        let global = match &config.excludes_file {
            Some(file) => read_rules(&root.join(file)),
            None => config_home()
                .map(|base| read_rules(&base.join("git/ignore")))
                .unwrap_or_default(),
        };
        Ignored {
            root: root.to_path_buf(),
            per_dir: HashMap::new(),
            exclude: repo
                .as_ref()
                .map(|r| read_rules(&r.common.join("info/exclude")))
                .unwrap_or_default(),
            global,
            tracked: None,
            repo: repo.map(|r| GitDirs {
                hash_len: config.hash_len,
                ..r
            }),
        }
    }

    /// Does git ignore `path` (root-relative; `is_dir` for the path itself)?
    pub(super) fn ignores(&mut self, path: &str, is_dir: bool) -> bool {
        let parts: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        (1..=parts.len()).any(|end| self.matches(&parts[..end], end < parts.len() || is_dir))
            && !self.tracks(path)
    }

    /// Whether git tracks `path`, or files beneath it.
    fn tracks(&mut self, path: &str) -> bool {
        let Some(repo) = &self.repo else {
            return false;
        };
        let paths = self.tracked.get_or_insert_with(|| read_index(repo));
        let path = path.as_bytes();
        let mut below = path.to_vec();
        below.push(b'/');
        let at = paths.partition_point(|p| p.as_slice() < path);
        if paths.get(at).is_some_and(|p| p == path) {
            return true;
        }
        let at_below = paths.partition_point(|p| p.as_slice() < below.as_slice());
        if paths.get(at_below).is_some_and(|p| p.starts_with(&below)) {
            return true;
        }
        // A sparse index's directory entry (`dir/`) stands for all it holds.
        at > 0 && paths[at - 1].ends_with(b"/") && path.starts_with(&paths[at - 1])
    }

    fn matches(&mut self, parts: &[&[u8]], is_dir: bool) -> bool {
        // The deepest .gitignore with an opinion decides, then exclude, then the global one.
        for depth in (0..parts.len()).rev() {
            let dir = parts[..depth]
                .iter()
                .map(|p| String::from_utf8_lossy(p))
                .collect::<Vec<_>>()
                .join("/");
            let root = &self.root;
            let rules = self
                .per_dir
                .entry(dir.clone())
                .or_insert_with(|| read_rules(&root.join(&dir).join(".gitignore")));
            if let Some(ignored) = decide(rules, &parts[depth..], is_dir) {
                return ignored;
            }
        }
        decide(&self.exclude, parts, is_dir)
            .or_else(|| decide(&self.global, parts, is_dir))
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(lines: &str, path: &str, is_dir: bool) -> bool {
        let rules: Vec<Rule> = lines
            .lines()
            .filter_map(|l| parse_rule(l.as_bytes()))
            .collect();
        let parts: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        (1..=parts.len())
            .any(|end| decide(&rules, &parts[..end], end < parts.len() || is_dir) == Some(true))
    }

    #[test]
    fn gitignore_patterns_match_as_git_documents_them() {
        assert!(ignored("*.log", "a/b/run.log", false));
        assert!(!ignored("*.log", "a/b/run.logs", false));
        assert!(ignored("build/", "out/build/x.o", false));
        assert!(!ignored("build/", "build", false));
        assert!(ignored("/target", "target/debug/app", false));
        assert!(!ignored("/target", "sub/target/x", false));
        assert!(ignored("doc/*.html", "doc/a.html", false));
        assert!(!ignored("doc/*.html", "doc/sub/a.html", false));
        assert!(ignored("**/tmp", "a/b/tmp", true));
        assert!(ignored("a/**/z", "a/z", false));
        assert!(ignored("a/**/z", "a/b/c/z", false));
        assert!(ignored("logs/**", "logs/x/y", false));
        assert!(ignored("*.o\n!keep.o", "x.o", false));
        assert!(!ignored("*.o\n!keep.o", "keep.o", false));
        assert!(ignored("f[0-9].txt", "f7.txt", false));
        assert!(!ignored("f[!0-9].txt", "f7.txt", false));
        assert!(ignored("?.c", "a.c", false));
        assert!(!ignored("# comment\n\n", "# comment", false));
        assert!(ignored("\\#lit", "#lit", false));
    }
}
