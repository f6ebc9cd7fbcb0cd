//! The protected paths (`protected_paths`) as every path reaches them. A program that opens
//! `.vscode/tasks.json` follows links: when the repository holds `.vscode -> vs`, what it runs
//! is `vs/tasks.json`, so `vs` is as protected as `.vscode`; so is each link on the way (one
//! replaced would lead elsewhere), and the place a dangling link names (one made there would
//! be read). [`Reach`] follows the list through the links the workspace holds now, as the
//! kernel would, one name at a time (an `lstat`, and a `readlink` per link: a few system calls
//! per literal path of the list):
//!
//! - every link met is a place of its own (the link itself);
//! - where the path ends is a place: the real directory or file; when a name on the way does
//!   not exist, the rest of the path as spelled beneath the last real directory (or that first
//!   missing name alone, when a `..` follows it and what it leads to cannot be told); a file
//!   met where the path would go on is a place too (replaced by a directory, it would let the
//!   path be made);
//! - the first missing name of a path inside the workspace is where a command gets a
//!   placeholder (src/shell/protect.rs);
//! - inside each protected directory of the workspace, every link (up to [`MAX_ENTRIES`]
//!   entries looked at in all) is followed the same way: `.vscode/tasks.json -> ../notes.json`
//!   makes `notes.json` protected;
//! - a glob names the places it matches now, each followed the same way.
//!
//! A place that is the workspace's root, or holds it (`.vscode -> .`, `.vscode -> /`), makes
//! the whole workspace protected: every write is refused, each time saying which link did it,
//! rather than the workspace going read-only without a word ([`Reach::whole`]).
//!
//! The file tools judge a write by where it really lands against the list and these places
//! (src/fs/jail.rs, `refuse_protected_entry`), and by the path as spelled against the list;
//! commands get the places read-only and the links pinned in their mount view
//! (src/shell/spec.rs).

use std::collections::{HashSet, VecDeque};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::pathlist::PathList;
use super::MAX_LINK_HOPS;

/// Entries of protected directories looked at for links, in all, per workspace opened.
pub const MAX_ENTRIES: usize = 4096;

/// What a place is to the protected path that reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// A link on the way (the link itself, not what it leads to).
    Link,
    /// Where the path ends, as it is now.
    End,
    /// Where the path would end: a name on the way does not exist.
    Beyond,
    /// A file (or other non-directory) where the path would go on.
    OnTheWay,
}

/// One place a protected path reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// Absolute, with no link in it (beyond its first missing name, as spelled).
    pub path: PathBuf,
    pub how: How,
    /// The entry of the list that leads here, as the configuration wrote it.
    pub given: String,
    /// The links followed to get here, each as `link -> target` (root-relative inside the
    /// workspace).
    pub through: Vec<String>,
}

impl Reached {
    /// How the list reaches this place, for messages: `.vscode`, or `.vscode, through the
    /// link .vscode -> vs`.
    pub fn describe(&self) -> String {
        match self.through.as_slice() {
            [] => self.given.clone(),
            [one] => format!("{}, through the link {one}", self.given),
            many => format!("{}, through the links {}", self.given, many.join(", ")),
        }
    }
}

/// The places the protected list reaches in one workspace, now.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    pub places: Vec<Reached>,
    /// The first missing name of each path that does not exist, inside the workspace.
    pub missing: Vec<PathBuf>,
}

impl Reach {
    /// Follow every entry of `list` through the workspace at `root` (canonical).
    pub fn of(list: &PathList, root: &Path) -> Reach {
        let mut walker = Walker {
            root,
            out: Reach::default(),
            walked: HashSet::new(),
            to_walk: Vec::new(),
            entries: 0,
        };
        for p in &list.patterns {
            if p.is_literal() {
                let path = p.literal_path();
                if let Ok(rel) = path.strip_prefix(root) {
                    walker.follow(root.to_path_buf(), components(rel), &p.given);
                }
            } else {
                let one = PathList {
                    patterns: vec![p.clone()],
                };
                for place in one.expand() {
                    if let Ok(rel) = place.strip_prefix(root) {
                        walker.follow(root.to_path_buf(), components(rel), &p.given);
                    }
                }
            }
        }
        walker.walk_directories();
        let mut out = walker.out;
        out.missing.sort();
        out.missing.dedup();
        out
    }

    /// The place that covers `path` (absolute, real: no link in it), if one does.
    pub fn covering(&self, path: &Path) -> Option<&Reached> {
        self.places.iter().find(|p| path.starts_with(&p.path))
    }

    /// A place that is the workspace's root or holds it: then every path in the workspace is
    /// protected.
    pub fn whole(&self, root: &Path) -> Option<&Reached> {
        self.places
            .iter()
            .find(|p| p.how != How::Link && root.starts_with(&p.path))
    }

    /// The places that exist and are no link: what a command's view binds read-only.
    pub fn existing(&self) -> impl Iterator<Item = &Path> {
        self.places
            .iter()
            .filter(|p| matches!(p.how, How::End | How::OnTheWay))
            .map(|p| p.path.as_path())
    }

    /// The links on the way: what a command's view pins, so that none is replaced.
    pub fn links(&self) -> impl Iterator<Item = &Path> {
        self.places
            .iter()
            .filter(|p| p.how == How::Link)
            .map(|p| p.path.as_path())
    }
}

struct Walker<'a> {
    root: &'a Path,
    out: Reach,
    /// Protected directories already walked for links.
    walked: HashSet<PathBuf>,
    /// Protected directories of the workspace still to walk, with the entry that named them.
    to_walk: Vec<(PathBuf, String)>,
    /// Entries of protected directories looked at so far.
    entries: usize,
}

impl Walker<'_> {
    /// Follow `rest` from the real directory `at`, recording what it meets.
    fn follow(&mut self, mut at: PathBuf, mut rest: VecDeque<OsString>, given: &str) {
        let mut through: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(name) = rest.pop_front() {
            if name == "." {
                continue;
            }
            if name == ".." {
                at.pop();
                continue;
            }
            let next = at.join(&name);
            let meta = std::fs::symlink_metadata(&next);
            let place = |path: PathBuf, how: How, through: &[String]| Reached {
                path,
                how,
                given: given.to_string(),
                through: through.to_vec(),
            };
            match meta {
                Ok(m) if m.file_type().is_symlink() => {
                    self.out
                        .places
                        .push(place(next.clone(), How::Link, &through));
                    hops += 1;
                    let Ok(target) = std::fs::read_link(&next) else {
                        return;
                    };
                    if hops > MAX_LINK_HOPS {
                        // A loop: nothing lies beyond it, and the links themselves are held.
                        return;
                    }
                    through.push(format!(
                        "{} -> {}",
                        self.shown(&next),
                        target.to_string_lossy()
                    ));
                    if target.is_absolute() {
                        at = PathBuf::from("/");
                    }
                    for c in components(&target).into_iter().rev() {
                        rest.push_front(c);
                    }
                }
                Ok(m) if m.is_dir() => at = next,
                Ok(m) if !is_placeholder(&m) => {
                    let how = if rest.is_empty() {
                        How::End
                    } else {
                        How::OnTheWay
                    };
                    self.out.places.push(place(next, how, &through));
                    return;
                }
                // Missing, or held by a placeholder already (the same to the list); a name
                // that cannot be looked at is taken as missing, which protects the most.
                _ => {
                    if next.starts_with(self.root) && next != self.root {
                        self.out.missing.push(next.clone());
                    }
                    let unknowable = rest.iter().any(|c| c == "..");
                    let mut beyond = next;
                    if !unknowable {
                        beyond.extend(rest.iter().filter(|c| *c != "."));
                    }
                    self.out.places.push(place(beyond, How::Beyond, &through));
                    return;
                }
            }
        }
        if at.starts_with(self.root) && at != self.root && !self.walked.contains(&at) {
            self.to_walk.push((at.clone(), given.to_string()));
        }
        self.out.places.push(Reached {
            path: at,
            how: How::End,
            given: given.to_string(),
            through,
        });
    }

    /// Follow every link inside the protected directories of the workspace (and inside those
    /// they lead to), within [`MAX_ENTRIES`].
    fn walk_directories(&mut self) {
        while let Some((dir, given)) = self.to_walk.pop() {
            if !self.walked.insert(dir.clone()) {
                continue;
            }
            let mut stack = vec![dir];
            while let Some(d) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in entries.flatten() {
                    if self.entries >= MAX_ENTRIES {
                        return;
                    }
                    self.entries += 1;
                    let Ok(t) = e.file_type() else { continue };
                    if t.is_symlink() {
                        self.follow(d.clone(), VecDeque::from([e.file_name()]), &given);
                    } else if t.is_dir() {
                        stack.push(e.path());
                    }
                }
            }
        }
    }

    /// A path for messages: root-relative inside the workspace, else absolute.
    fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// Whether `meta` is a placeholder where a protected path would be: a socket file (nobody but
/// src/shell/protect.rs makes one there; a repository cannot hold one).
pub fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_socket()
}

/// The names of a path, `.` and `..` kept (an absolute path's root dropped).
fn components(path: &Path) -> VecDeque<OsString> {
    path.as_os_str()
        .as_bytes()
        .split(|b| *b == b'/')
        .filter(|c| !c.is_empty())
        .map(|c| std::ffi::OsStr::from_bytes(c).to_os_string())
        .collect()
}

/// `path` (relative to the root) with `.` dropped and each `..` taking back the name before
/// it, as spelled (links not looked at); None when it climbs above the root.
pub fn spelled(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn reach(root: &Path, list: &[&str]) -> Reach {
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        Reach::of(&PathList::resolve(&list, root), root)
    }

    fn rel(root: &Path, p: &Path) -> String {
        p.strip_prefix(root)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.display().to_string())
    }

    #[test]
    fn links_on_the_way_and_their_ends_are_places() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = &std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(root.join("c2/deep")).expect("mkdir");
        symlink("c2/deep", root.join("c1")).expect("link");
        symlink("c1", root.join(".claude")).expect("link");
        std::fs::create_dir_all(root.join("real/app")).expect("mkdir");
        symlink(root.join("real"), root.join("cfg")).expect("link");
        symlink("tools/vscode", root.join(".vscode")).expect("link");
        symlink("gone/../x", root.join(".zed")).expect("link");
        let r = reach(
            root,
            &[".claude", "cfg/app/run.sh", ".vscode", ".zed", ".idea"],
        );
        let places: Vec<(String, How)> = r
            .places
            .iter()
            .map(|p| (rel(root, &p.path), p.how))
            .collect();
        for want in [
            (".claude".to_string(), How::Link),
            ("c1".into(), How::Link),
            ("c2/deep".into(), How::End),
            ("cfg".into(), How::Link),
            ("real/app/run.sh".into(), How::Beyond),
            (".vscode".into(), How::Link),
            ("tools/vscode".into(), How::Beyond),
            // What lies past a missing name and `..` cannot be told: the name itself.
            ("gone".into(), How::Beyond),
            (".idea".into(), How::Beyond),
        ] {
            assert!(places.contains(&want), "{want:?} in {places:?}");
        }
        let missing: Vec<String> = r.missing.iter().map(|m| rel(root, m)).collect();
        assert_eq!(missing, [".idea", "gone", "real/app/run.sh", "tools"]);
        let deep = r
            .covering(&root.join("c2/deep/settings.json"))
            .expect("covered");
        assert_eq!(
            deep.describe(),
            ".claude, through the links .claude -> c1, c1 -> c2/deep"
        );
        assert!(r.covering(&root.join("c2/other")).is_none());
        assert!(r.whole(root).is_none());
    }

    #[test]
    fn links_inside_protected_directories_and_loops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = &std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(root.join(".idea/sub")).expect("mkdir");
        symlink("../../notes.xml", root.join(".idea/sub/workspace.xml")).expect("link");
        symlink("loop_b", root.join("loop_a")).expect("link");
        symlink("loop_a", root.join("loop_b")).expect("link");
        symlink("loop_a", root.join(".envrc")).expect("link");
        let r = reach(root, &[".idea", ".envrc"]);
        assert!(r.covering(&root.join("notes.xml")).is_some());
        assert!(r.missing.contains(&root.join("notes.xml")));
        for l in ["loop_a", "loop_b", ".envrc"] {
            assert!(r.links().any(|p| p == root.join(l)), "{l}");
        }
    }

    #[test]
    fn a_link_to_the_root_or_above_makes_the_whole_workspace_protected() {
        for target in [".", "..", "/", "sub/.."] {
            let dir = tempfile::tempdir().expect("tempdir");
            let root = &std::fs::canonicalize(dir.path())
                .expect("canonical")
                .join("ws");
            std::fs::create_dir_all(root.join("sub")).expect("mkdir");
            symlink(target, root.join(".vscode")).expect("link");
            let r = reach(root, &[".vscode"]);
            let whole = r.whole(root).expect(target);
            assert!(whole.describe().contains(".vscode -> "), "{target}");
        }
    }

    #[test]
    fn spelling_folds_dots() {
        assert_eq!(
            spelled(Path::new("a/../.vscode/./x")),
            Some(PathBuf::from(".vscode/x"))
        );
        assert_eq!(spelled(Path::new("../x")), None);
    }
}
