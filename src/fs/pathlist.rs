//! Lists of paths written as globs: the read-deny list (`deny_read`, `extra_deny_read`) and
//! the protected paths (`protected_paths`, `extra_protected_paths`), docs/contract.md.
//!
//! A pattern is absolute once resolved: `~/…` is beneath the home directory, `/…` is
//! absolute, anything else is relative to the workspace root. Within a component `*` matches
//! any run of characters, `?` one, `[abc]`/`[a-z]`/`[!x]` one of a set, `\` escapes; a
//! component `**` matches any number of components. A pattern names a place and everything
//! beneath it: `~/.ssh` covers `~/.ssh/id_ed25519`.
//!
//! The patterns are matched by the tool set's one glob matcher (src/fs/glob.rs).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::glob;

/// The built-in read-deny list: the usual credential stores, and the system's password
/// hashes and SSH host keys (only root can read them, and agents do run as root in
/// containers). Commands and file tools read none of it; `deny_read` replaces it,
/// `extra_deny_read` adds to it.
pub const DEFAULT_DENY_READ: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker/config.json",
    "~/.npmrc",
    "~/.yarnrc.yml",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.gem/credentials",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.password-store",
    "~/.local/share/keyrings",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_*_key",
];

/// The environment variable through which `sneaky-mcp --http --token-file FILE` tells the
/// tools it starts where its bearer token is, which then joins the read-deny list.
pub const MCP_TOKEN_FILE_ENV: &str = "SNEAKY_MCP_TOKEN_FILE";

/// The built-in protected paths: what makes a program run code when a person later opens the
/// project in an editor or an agent, or enters it in a shell (`.git` metadata is protected
/// apart, by `allow_vcs_writes`). `protected_paths` replaces it, `extra_protected_paths`
/// adds to it.
pub const DEFAULT_PROTECTED: &[&str] = &[
    ".vscode",
    ".idea",
    ".zed",
    ".devcontainer",
    ".envrc",
    ".mcp.json",
    ".claude",
    ".codex",
    ".cursor",
    ".gemini",
    ".husky",
];

/// Existing paths one list may expand to (a runaway `**` stops here).
pub const MAX_EXPANDED: usize = 4096;
/// Directories a `**` may look into while expanding one list.
const MAX_WALKED_DIRS: usize = 20_000;

/// One resolved pattern: its components (no empty ones, no `.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// As the configuration wrote it (for messages).
    pub given: String,
    parts: Vec<Vec<u8>>,
}

impl Pattern {
    /// Resolve `given` against the home directory and the workspace root.
    pub fn resolve(given: &str, home: Option<&Path>, root: &Path) -> Option<Pattern> {
        let mut absolute = PathBuf::new();
        place_of(given, home, root, &mut absolute).then(|| Pattern::absolute(given, &absolute))
    }

    fn absolute(given: &str, path: &Path) -> Pattern {
        let mut parts: Vec<Vec<u8>> = path
            .as_os_str()
            .as_bytes()
            .split(|b| *b == b'/')
            .filter(|c| !c.is_empty() && *c != b".")
            .map(<[u8]>::to_vec)
            .collect();
        // `dir/**` names what `dir` names (a place and everything beneath it).
        while parts.len() > 1 && parts.last().is_some_and(|p| p == b"**") {
            parts.pop();
        }
        Pattern {
            given: given.to_string(),
            parts,
        }
    }

    /// Whether `path` (absolute, without `..`) is this place or lies beneath it.
    pub fn covers(&self, path: &Path) -> bool {
        let comps = components(path);
        prefix_match(&self.parts, &comps)
    }

    /// Whether this pattern could cover `dir` or something beneath it.
    pub fn reaches(&self, dir: &Path) -> bool {
        reaches(self.parts.iter().map(Vec::as_slice), &components(dir))
    }

    /// The components before the first one with a glob character.
    fn literal_prefix(&self) -> PathBuf {
        let mut p = PathBuf::from("/");
        for part in self.parts.iter().take_while(|c| !has_glob(c)) {
            p.push(OsStr::from_bytes(part));
        }
        p
    }

    /// Whether the pattern has no glob character (it names exactly one place).
    pub fn is_literal(&self) -> bool {
        !self.parts.iter().any(|c| has_glob(c))
    }

    /// The one place a literal pattern names.
    pub fn literal_path(&self) -> PathBuf {
        self.literal_prefix()
    }
}

/// A resolved list of patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathList {
    pub patterns: Vec<Pattern>,
}

impl PathList {
    /// Resolve a configuration list. Patterns beneath a home directory that is itself a
    /// symbolic link are added once more with the real home, so that a real path (what the
    /// kernel reports for an open file) matches too.
    pub fn resolve(given: &[String], root: &Path) -> PathList {
        Bases::read(given, root).resolve(given)
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern that covers `path` (absolute, without `..`).
    pub fn covering(&self, path: &Path) -> Option<&Pattern> {
        self.patterns.iter().find(|p| p.covers(path))
    }

    /// The existing places the patterns name now (links not followed at the last component;
    /// nothing beneath a named directory is listed). At most [`MAX_EXPANDED`].
    pub fn expand(&self) -> Vec<PathBuf> {
        self.expand_all().0
    }

    /// `expand`, and whether that is every place: no limit was reached and no directory a
    /// wildcard looks into failed to list.
    fn expand_all(&self) -> (Vec<PathBuf>, bool) {
        let mut out: Vec<PathBuf> = Vec::new();
        let mut walk = Expansion {
            walked: 0,
            whole: true,
        };
        for p in &self.patterns {
            expand_pattern(p, &mut out, &mut walk);
            if out.len() >= MAX_EXPANDED {
                out.truncate(MAX_EXPANDED);
                walk.whole = false;
                break;
            }
        }
        out.sort();
        out.dedup();
        (out, walk.whole)
    }

    /// (device, inode) of every regular file the list covers that exists now, beneath named
    /// directories too: a hard link elsewhere is the same file.
    pub fn identities(&self) -> Identities {
        let (places, whole) = self.expand_all();
        let mut ids = Identities {
            ids: HashSet::new(),
            one_name_each: whole,
        };
        let mut budget = MAX_WALKED_DIRS;
        for place in places {
            collect_files(&place, &mut ids, &mut budget);
        }
        ids
    }
}

/// The files a list covers, by identity.
#[derive(Debug, Default)]
pub struct Identities {
    pub ids: HashSet<(u64, u64)>,
    /// Every file the list covers was seen, and each has one name (one link): no file
    /// elsewhere is one of them under another name.
    pub one_name_each: bool,
}

impl Identities {
    fn add(&mut self, file: &std::fs::Metadata) {
        self.ids.insert((file.dev(), file.ino()));
        self.one_name_each &= file.nlink() == 1;
    }
}

/// How far expanding a list went.
struct Expansion {
    /// Directories a `**` looked into.
    walked: usize,
    /// No limit was reached, and no directory a wildcard looks into failed to list but for
    /// not being there.
    whole: bool,
}

/// Whether a directory that failed to list may still hold files: it is there, but unreadable
/// (or a limit of the system stopped the listing).
fn listing_failed(e: &std::io::Error) -> bool {
    !matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// What resolving a list's patterns takes from outside the list, read once when the list is
/// set: the home directory (`HOME`) and, when it is a symbolic link, where it really is; and
/// the workspace root.
#[derive(Debug, Clone, Default)]
struct Bases {
    home: Option<PathBuf>,
    real_home: Option<PathBuf>,
    root: PathBuf,
}

impl Bases {
    fn read(given: &[String], root: &Path) -> Bases {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        // Only a pattern beneath `~` is resolved against the real home (a lookup of each of
        // its components).
        let real_home = home
            .as_deref()
            .filter(|_| given.iter().any(|g| g.starts_with('~')))
            .and_then(|h| std::fs::canonicalize(h).ok())
            .filter(|r| Some(r.as_path()) != home.as_deref());
        Bases {
            home,
            real_home,
            root: root.to_path_buf(),
        }
    }

    /// Hand `f` each pattern's place (absolute), in the list's order: a pattern beneath a home
    /// directory that is itself a symbolic link comes again with the real home, so that a
    /// real path (what the kernel reports for an open file) matches too.
    fn each(&self, given: &[String], mut f: impl FnMut(&str, &Path)) {
        let mut place = PathBuf::new();
        for g in given {
            if place_of(g, self.home.as_deref(), &self.root, &mut place) {
                f(g, &place);
            }
            if g.starts_with('~') && place_of(g, self.real_home.as_deref(), &self.root, &mut place)
            {
                f(g, &place);
            }
        }
    }

    fn resolve(&self, given: &[String]) -> PathList {
        let mut patterns = Vec::new();
        self.each(given, |g, place| patterns.push(Pattern::absolute(g, place)));
        PathList { patterns }
    }
}

/// Where the pattern `given` lies, written to `place`: `~/…` beneath `home`, `/…` as it is,
/// anything else beneath `root`. False when it names the home directory and there is none.
fn place_of(given: &str, home: Option<&Path>, root: &Path, place: &mut PathBuf) -> bool {
    place.clear();
    if let Some(rest) = given.strip_prefix("~/") {
        let Some(home) = home else { return false };
        place.push(home);
        place.push(rest);
    } else if given == "~" {
        let Some(home) = home else { return false };
        place.push(home);
    } else if given.starts_with('/') {
        place.push(given);
    } else {
        place.push(root);
        place.push(given);
    }
    true
}

/// A configuration list resolved the first time it is asked for: resolving the built-in lists
/// at every start cost about a sixth of a small read_file's instructions, and a read never
/// looks at the protected paths.
#[derive(Debug, Default)]
pub struct LazyPathList {
    given: Vec<String>,
    bases: Bases,
    resolved: OnceLock<PathList>,
}

impl LazyPathList {
    pub fn new(given: Vec<String>, root: &Path) -> LazyPathList {
        LazyPathList {
            bases: Bases::read(&given, root),
            given,
            resolved: OnceLock::new(),
        }
    }

    /// The list resolved (as [`PathList::resolve`] would have, when this was made).
    pub fn get(&self) -> &PathList {
        self.resolved
            .get_or_init(|| self.bases.resolve(&self.given))
    }
}

/// The read-deny list as the file tools apply it to one workspace.
#[derive(Debug)]
pub struct DenyRead {
    /// Every pattern: what commands cannot read, and whose files a hard link may reach.
    all: LazyPathList,
    /// The patterns that can cover something in the workspace; path checks are skipped
    /// when there is none (the usual case: the credential stores lie outside). Only these are
    /// resolved at once; which they are is told from each pattern's place alone.
    pub here: PathList,
    /// (device, inode) of every denied file, gathered the first time a file with more than
    /// one link is opened.
    ids: OnceLock<Identities>,
}

impl DenyRead {
    /// The list `given` applied to the workspace at `root`; None when no pattern of it names
    /// a place (each is beneath a home directory, and there is none).
    pub fn new(given: Vec<String>, root: &Path) -> Option<DenyRead> {
        let bases = Bases::read(&given, root);
        DenyRead::with_bases(given, bases)
    }

    fn with_bases(given: Vec<String>, bases: Bases) -> Option<DenyRead> {
        let dir = components(&bases.root);
        let mut places = 0;
        let mut here = Vec::new();
        bases.each(&given, |g, place| {
            places += 1;
            if reaches(components_of(place), &dir) {
                here.push(Pattern::absolute(g, place));
            }
        });
        (places > 0).then(|| DenyRead {
            all: LazyPathList {
                given,
                bases,
                resolved: OnceLock::new(),
            },
            here: PathList { patterns: here },
            ids: OnceLock::new(),
        })
    }

    /// Every pattern of the list, resolved.
    pub fn all(&self) -> &PathList {
        self.all.get()
    }

    /// The pattern that covers `path` (absolute, real), if one can lie in the workspace.
    pub fn by_path(&self, path: &Path) -> Option<&Pattern> {
        if self.here.is_empty() {
            return None;
        }
        self.here.covering(path)
    }

    /// Whether the file (device, inode) is a denied file under another name.
    pub fn by_identity(&self, dev: u64, ino: u64) -> bool {
        self.identities().ids.contains(&(dev, ino))
    }

    /// Whether every denied file has one name: then no other file is one of them, and a
    /// file need not be looked at (`fstat`) to tell. Looked at anew at each call (a walk asks
    /// once), so that a long-lived host sees a link made since its last call.
    pub fn one_name_each(&self) -> bool {
        self.all().identities().one_name_each
    }

    fn identities(&self) -> &Identities {
        self.ids.get_or_init(|| self.all().identities())
    }
}

fn collect_files(path: &Path, ids: &mut Identities, budget: &mut usize) {
    // Followed: a named place that is a link names what it points to.
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => {
            // A place that went away meanwhile holds no file; one that cannot be seen may.
            ids.one_name_each &= !listing_failed(&e);
            return;
        }
    };
    if meta.is_file() {
        ids.add(&meta);
        return;
    }
    if !meta.is_dir() {
        return;
    }
    if *budget == 0 {
        ids.one_name_each = false;
        return;
    }
    *budget -= 1;
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) => {
            ids.one_name_each &= !listing_failed(&e);
            return;
        }
    };
    for e in entries {
        let Ok(e) = e else {
            ids.one_name_each = false;
            continue;
        };
        match e.file_type() {
            Ok(ft) if ft.is_file() => match e.metadata() {
                Ok(m) => ids.add(&m),
                Err(_) => ids.one_name_each = false,
            },
            Ok(ft) if ft.is_dir() => collect_files(&e.path(), ids, budget),
            Ok(_) => {}
            Err(_) => ids.one_name_each = false,
        }
    }
}

fn expand_pattern(p: &Pattern, out: &mut Vec<PathBuf>, walk: &mut Expansion) {
    let mut current = vec![PathBuf::from("/")];
    for part in &p.parts {
        if current.is_empty() {
            return;
        }
        if part == b"**" {
            let mut all = Vec::new();
            for d in &current {
                all.push(d.clone());
                descendants(d, &mut all, walk);
            }
            current = all;
        } else if has_glob(part) {
            let mut next = Vec::new();
            for d in &current {
                let entries = match std::fs::read_dir(d) {
                    Ok(entries) => entries,
                    Err(e) => {
                        walk.whole &= !listing_failed(&e);
                        continue;
                    }
                };
                for e in entries.flatten() {
                    if glob::component(part, e.file_name().as_bytes()) {
                        next.push(d.join(e.file_name()));
                    }
                }
                if next.len() >= MAX_EXPANDED {
                    break;
                }
            }
            current = next;
        } else {
            for d in &mut current {
                d.push(OsStr::from_bytes(part));
            }
        }
    }
    out.extend(
        current
            .into_iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok()),
    );
}

/// Every directory beneath `dir` (links not followed), within the walk budget.
fn descendants(dir: &Path, out: &mut Vec<PathBuf>, walk: &mut Expansion) {
    if walk.walked >= MAX_WALKED_DIRS || out.len() >= MAX_EXPANDED * 4 {
        walk.whole = false;
        return;
    }
    walk.walked += 1;
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            walk.whole &= !listing_failed(&e);
            return;
        }
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            let sub = e.path();
            out.push(sub.clone());
            descendants(&sub, out, walk);
        }
    }
}

fn components(path: &Path) -> Vec<&[u8]> {
    components_of(path).collect()
}

/// The components of a path, empty ones and `.` left out (a pattern's parts, before a final
/// `**` is dropped).
fn components_of(path: &Path) -> impl Iterator<Item = &[u8]> {
    path.as_os_str()
        .as_bytes()
        .split(|b| *b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
}

fn has_glob(part: &[u8]) -> bool {
    glob::has_wildcard(part)
}

/// The pattern's components match the first components of `path` (the path is the place or
/// lies beneath it).
fn prefix_match(pat: &[Vec<u8>], path: &[&[u8]]) -> bool {
    glob::components(pat, path, glob::Extent::Prefix)
}

/// Whether the pattern (its parts) could match `dir`, one of its ancestors, or something
/// beneath it. A final `**`, which a pattern drops, makes no difference here: the pattern
/// reaches whatever its first parts reach.
fn reaches<'a>(mut pat: impl Iterator<Item = &'a [u8]>, dir: &[&[u8]]) -> bool {
    let mut dir = dir.iter();
    loop {
        match (pat.next(), dir.next()) {
            (None, _) | (_, None) => return true,
            (Some(p), _) if p == b"**" => return true,
            (Some(p), Some(c)) if !glob::component(p, c) => return false,
            (Some(_), Some(_)) => {}
        }
    }
}

/// Validate a configuration list: `key` names it in the message.
pub fn validate(key: &str, list: &[String], workspace_only: bool) -> Result<(), String> {
    for p in list {
        if p.is_empty() || p.contains('\0') {
            return Err(format!("{key}: {p:?} is not a path"));
        }
        if p.starts_with('~') && p != "~" && !p.starts_with("~/") {
            return Err(format!(
                "{key}: {p}: only ~/ (your own home directory) is understood"
            ));
        }
        let escapes = p.split('/').any(|c| c == "..");
        if workspace_only && (p.starts_with('/') || p.starts_with('~') || escapes) {
            return Err(format!(
                "{key}: {p} must be a path inside the workspace, relative to its root"
            ));
        }
        if escapes {
            return Err(format!("{key}: {p}: `..` is not allowed"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_covers_its_place_and_what_is_beneath() {
        let root = Path::new("/ws");
        let home = Path::new("/home/u");
        let p = |g: &str| Pattern::resolve(g, Some(home), root).expect("resolve");
        assert!(p("~/.ssh").covers(Path::new("/home/u/.ssh")));
        assert!(p("~/.ssh").covers(Path::new("/home/u/.ssh/id_rsa")));
        assert!(!p("~/.ssh").covers(Path::new("/home/u/.sshx")));
        assert!(!p("~/.ssh").covers(Path::new("/home/u")));
        assert!(p(".env").covers(Path::new("/ws/.env")));
        assert!(!p(".env").covers(Path::new("/ws/sub/.env")));
        assert!(p("**/.env").covers(Path::new("/ws/sub/.env")));
        assert!(p("**/.env").covers(Path::new("/ws/.env")));
        assert!(p("secrets/**").covers(Path::new("/ws/secrets/a/b")));
        assert!(p("/etc/ssh/*_key").covers(Path::new("/etc/ssh/ssh_host_rsa_key")));
        assert!(!p("/etc/ssh/*_key").covers(Path::new("/etc/ssh/ssh_host_rsa_key.pub")));
        assert!(Pattern::resolve("~/.ssh", None, root).is_none());
        // Which patterns matter for a workspace.
        assert!(p("~/.ssh").reaches(Path::new("/home/u")));
        assert!(p("~/.ssh").reaches(Path::new("/home/u/.ssh/x")));
        assert!(!p("~/.ssh").reaches(Path::new("/ws")));
        assert!(p("**/.env").reaches(Path::new("/ws")));
        assert!(p("/home/*/.ssh").reaches(Path::new("/home/u")));
    }

    /// The read-deny list as a workspace holds it: the patterns that reach the workspace are
    /// told from their places alone, and the rest resolved only when asked for; the same
    /// patterns, in the same order, as resolving the whole list and keeping those that reach.
    #[test]
    fn the_deny_list_resolved_late_is_the_list_resolved_at_once() {
        let given: Vec<String> = DEFAULT_DENY_READ
            .iter()
            .copied()
            .chain([
                "~",
                "~/",
                "~/projects/**",
                "**/.env",
                "**",
                "secrets/**",
                "*.pem",
                "/etc/ssh/*_key",
                "/home/*/.ssh",
                "/ws/sub/./x//y",
                "/",
            ])
            .map(str::to_string)
            .collect();
        let home = || Some(PathBuf::from("/home/u"));
        let homes = [
            (home(), None),
            (home(), Some(PathBuf::from("/data/u"))),
            (None, None),
        ];
        let roots = [
            "/ws",
            "/home/u",
            "/home/u/.ssh/keys",
            "/home/u/projects/a",
            "/data/u",
            "/",
        ];
        for (home, real_home) in homes {
            for root in roots {
                let bases = Bases {
                    home: home.clone(),
                    real_home: real_home.clone(),
                    root: PathBuf::from(root),
                };
                let whole = bases.resolve(&given);
                let reaching: Vec<Pattern> = whole
                    .patterns
                    .iter()
                    .filter(|p| p.reaches(Path::new(root)))
                    .cloned()
                    .collect();
                let deny = DenyRead::with_bases(given.clone(), bases).expect("places");
                assert_eq!(
                    deny.here.patterns, reaching,
                    "{home:?} {real_home:?} {root}"
                );
                assert_eq!(deny.all(), &whole);
            }
        }
        // A list of places beneath a home directory names nothing without one.
        let bases = Bases {
            root: PathBuf::from("/ws"),
            ..Bases::default()
        };
        assert!(DenyRead::with_bases(vec!["~/.ssh".into()], bases).is_none());
    }

    #[test]
    fn expansion_finds_what_exists() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in ["a/.env", "b/c/.env", "b/c/keep", "key.pem", "x.pem"] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "s").expect("write");
        }
        let list = PathList::resolve(
            &[
                "**/.env".to_string(),
                "*.pem".into(),
                "missing".into(),
                "b".into(),
            ],
            root,
        );
        let found: Vec<String> = list
            .expand()
            .iter()
            .map(|p| p.strip_prefix(root).expect("inside").display().to_string())
            .collect();
        assert_eq!(found, ["a/.env", "b", "b/c/.env", "key.pem", "x.pem"]);
        let ids = list.identities();
        // b/c/keep beneath the named directory b counts too.
        let keep = std::fs::metadata(root.join("b/c/keep")).expect("keep");
        assert!(ids.ids.contains(&(keep.dev(), keep.ino())));
        assert_eq!(ids.ids.len(), 5);
        assert!(ids.one_name_each);
        // A second name for a denied file, even outside every pattern, is seen by its count
        // of links.
        std::fs::hard_link(root.join("b/c/keep"), root.join("elsewhere")).expect("link");
        assert!(!list.identities().one_name_each);
    }

    #[test]
    fn one_name_each_needs_every_place_seen() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path();
        std::fs::write(root.join("key"), "k").expect("write");
        std::fs::write(root.join("plain"), "p").expect("write");
        // A wildcard beneath a file, or beneath nothing, can match nothing: still whole.
        let list = PathList::resolve(&["key".into(), "plain/*".into(), "gone/*".into()], root);
        let ids = list.identities();
        assert_eq!(ids.ids.len(), 1);
        assert!(ids.one_name_each);
        // More places than are looked at: not known to be whole.
        let many: Vec<String> = (0..MAX_EXPANDED + 1).map(|i| format!("f{i}")).collect();
        for name in &many {
            std::fs::write(root.join(name), "x").expect("write");
        }
        assert!(!PathList::resolve(&many, root).identities().one_name_each);
    }

    #[test]
    fn lists_are_checked() {
        assert!(validate("deny_read", &["~/.ssh".into(), "/etc/x".into()], false).is_ok());
        assert!(validate("deny_read", &["~bob/.ssh".into()], false).is_err());
        assert!(validate("deny_read", &["../x".into()], false).is_err());
        assert!(validate("protected_paths", &[".vscode".into()], true).is_ok());
        assert!(validate("protected_paths", &["/etc".into()], true).is_err());
        assert!(validate("protected_paths", &["a/../../x".into()], true).is_err());
    }
}
