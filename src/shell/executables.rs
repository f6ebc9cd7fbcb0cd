//! What the kernel lets a command execute (Landlock's execute right, and the mounts that are
//! not noexec), in the mode in force (src/config/commands.rs):
//!
//! - **Contained** ([`contained_places`]): the installed system beneath `/usr` ([`SYSTEM`]),
//!   PATH's other directories, the library directories, the workspace, the private temp dir,
//!   the helpers of the build tools found on PATH (the table below), the files a link in
//!   PATH's other directories leads to elsewhere, and `tools.shell.exec_paths`: one rule per
//!   directory, whatever the number of programs in it. A file anywhere else cannot execute (a
//!   binary dropped in a write path or `/dev/shm`, a memory file). The denied programs found
//!   on PATH are listed to be covered in the command's view ([`ExecSet::cover`]): they cannot
//!   execute from where they are installed, however they are started.
//! - **Strict** ([`executable_paths`]): only the programs the allowed list resolves to, the
//!   shell, their ELF loaders and script interpreters (unless the policy denies them), and
//!   each program's helpers (a small table: git's exec path, a compiler toolchain, npm's own
//!   files …), plus `tools.shell.exec_paths`. A program outside this set fails to exec
//!   (EACCES) however it is started: by an option of an allowed program, a planted hook or
//!   config key, a script, `find -exec`.
//!
//! Build tools run the project's own code by design: allowing `cargo` also lets the
//! workspace's `target/` execute (build scripts, tests), `npm` its `node_modules`, `go` the
//! private temporary directory where `go test` builds. That is the documented meaning of
//! putting a build tool in the allowed list.

use std::cell::RefCell;
use std::collections::BTreeSet;

// Hashed fast (src/fs/real.rs says why).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::AtFlags;
use nix::sys::stat::fstatat;

use crate::config::commands::STRICT_ALLOWED;

/// Where the exec set is computed from.
pub struct Inputs<'a> {
    /// The programs the lists allow (names or verbatim paths).
    pub programs: &'a [&'a str],
    /// The command's PATH.
    pub path: &'a OsStr,
    pub root: &'a Path,
    pub tmp: &'a Path,
    pub shell: &'a Path,
    /// tools.shell.exec_paths.
    pub extra: &'a [String],
    /// Whether the policy denies a program (by its path and by its name): such a program
    /// never joins the set as a script's `#!` interpreter.
    pub denied: &'a dyn Fn(&Path) -> bool,
}

/// Files and directories to grant the execute right on. Paths are not canonicalized (that
/// costs a readlink per component, on every call): Landlock and bind mounts both resolve
/// links to the inode, which is what counts.
pub fn executable_paths(inputs: &Inputs<'_>) -> ExecSet {
    let dirs: Vec<PathBuf> = std::env::split_paths(inputs.path)
        .filter(|d| d.is_absolute())
        .collect();
    let mut set = BTreeSet::new();
    let mut directories = BTreeSet::new();
    let mut add = |p: PathBuf, set: &mut BTreeSet<PathBuf>| {
        if !p.is_absolute() || set.contains(&p) {
            return false;
        }
        let Ok(meta) = std::fs::metadata(&p) else {
            return false;
        };
        let dir = meta.is_dir();
        if dir {
            directories.insert(p.clone());
        }
        set.insert(p);
        !dir
    };
    add(inputs.shell.to_path_buf(), &mut set);
    // `sh` runs make recipes, git aliases' and hooks' shells, `system()`: it is the shell
    // too, and can do nothing bash cannot.
    add(PathBuf::from("/bin/sh"), &mut set);
    let path = SearchPath::open(&dirs);
    // The loaders and interpreters (one level of `#!`, plus the program `env` names) of the
    // shell and of the programs that are neither in the default list nor in the helper
    // table (those are ELF binaries with the shell's loader or `sh` scripts; reading every
    // header would cost a file read per program on every call).
    let mut inspect: Vec<PathBuf> = vec![inputs.shell.to_path_buf()];
    for name in inputs.programs {
        let Some(found) = resolve(name, &path, inputs.root) else {
            continue;
        };
        for helper in helpers(name, &found, inputs, &path) {
            add(helper, &mut set);
        }
        for part in shim_parts(&found, &path) {
            if add(part.clone(), &mut set) {
                inspect.push(part);
            }
        }
        if !STRICT_ALLOWED.contains(name) {
            inspect.push(found.clone());
        }
        // Found as a regular file just now: no second look.
        set.insert(found);
    }
    for extra in inputs.extra {
        let extra = PathBuf::from(extra);
        if add(extra.clone(), &mut set) {
            inspect.push(extra);
        }
    }
    // A denied program does not become runnable by being named on the `#!` line of a script
    // the lists allow (the kernel only loads an interpreter it may execute). `sh` and `bash`
    // are the shell, which runs anyway.
    for file in inspect {
        for interp in interpreters(&file, &path) {
            let shell = interp.file_name().is_some_and(|n| n == "sh" || n == "bash");
            if shell || !(inputs.denied)(&interp) {
                add(interp, &mut set);
            }
        }
    }
    ExecSet {
        paths: set.into_iter().collect(),
        directories: directories.into_iter().collect(),
        cover: Vec::new(),
    }
}

/// The exec set: every path, and which of them were directories when looked at (the
/// launcher grants a directory the right to list it too, without a second look).
pub struct ExecSet {
    pub paths: Vec<PathBuf>,
    pub directories: Vec<PathBuf>,
    /// Denied programs inside the set, each where it really is: covered in the command's
    /// view so that they cannot execute (nor be read and copied to run elsewhere).
    pub cover: Vec<PathBuf>,
}

/// The installed system: nothing a command writes can lie there (the world is read-only), so
/// when it holds PATH's system directories it is granted whole, one rule and one mount, and
/// the links of `/usr/bin` into `/usr/share` or `/usr/libexec` need no looking at. A write
/// path beneath it (or above it) takes that away: then only PATH's directories and the
/// library directories there may execute.
const SYSTEM: &str = "/usr";

/// The contained exec set but the workspace and the temp dir, which it always holds first
/// ([`Contained::into_set`]; see [`contained_places`]). As JSON, it is what the launcher
/// forked ahead of time answers when it worked the set out (src/shell/zygote.rs).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Contained {
    #[serde(with = "super::raw_path::many")]
    directories: Vec<PathBuf>,
    #[serde(with = "super::raw_path::many")]
    files: Vec<PathBuf>,
    #[serde(with = "super::raw_path::many")]
    cover: Vec<PathBuf>,
}

impl Contained {
    pub fn into_set(self, root: &Path, tmp: &Path) -> ExecSet {
        let mut directories = vec![root.to_path_buf(), tmp.to_path_buf()];
        directories.extend(self.directories);
        let mut paths = directories.clone();
        paths.extend(self.files);
        ExecSet {
            paths,
            directories,
            cover: self.cover,
        }
    }

    /// The set with the temp dir `tmp`, from places worked out before it was made: with the
    /// workspace standing in for it in [`Inputs::tmp`], and `write` without it. They are the
    /// places [`contained_places`] works out with it unless one lies beneath it (what lies
    /// beneath it is left out, and a link followed into it stops there; it is new, so nothing
    /// can lead there but a link naming it, and what such a link finds is beneath it) or it
    /// lies in or around the installed system (then whether that is granted whole depends on
    /// it). None then: they are worked out again, with it.
    pub fn with_tmp(self, root: &Path, tmp: &Path) -> Option<ExecSet> {
        let system = Path::new(SYSTEM);
        if tmp.starts_with(system) || system.starts_with(tmp) {
            return None;
        }
        if self
            .directories
            .iter()
            .chain(&self.files)
            .any(|p| within(p, tmp))
        {
            return None;
        }
        Some(self.into_set(root, tmp))
    }
}

/// The exec set of the contained mode (see the module's documentation) but the workspace
/// and the temp dir, which [`Contained::into_set`] adds. `denied`: the entries of the deny
/// list in force; `library`: the library directories (canonical); `write`: the places a
/// command may write.
pub fn contained_places(
    inputs: &Inputs<'_>,
    denied: &[&str],
    library: &[PathBuf],
    write: &[PathBuf],
) -> Contained {
    let system = Path::new(SYSTEM);
    let whole_system = system.is_dir()
        && !write
            .iter()
            .any(|w| w.starts_with(system) || system.starts_with(w));
    // Each directory where it really is (`/bin` is `/usr/bin` on a merged system): what the
    // system holds is not listed.
    let dirs: Vec<PathBuf> = std::env::split_paths(inputs.path)
        .filter(|d| d.is_absolute())
        .map(|d| crate::fs::real::path(&d).unwrap_or(d))
        .collect();
    let listed = |d: &Path| !(whole_system && d.starts_with(system));
    let path = SearchPath::open_listing(&dirs, &listed);
    let mut set = Places {
        beneath: vec![inputs.root.to_path_buf(), inputs.tmp.to_path_buf()],
        directories: Vec::new(),
        files: Vec::new(),
    };
    if whole_system {
        set.add(system.to_path_buf());
    }
    for dir in path.dirs.iter().map(|d| &d.path).chain(library) {
        set.add(dir.clone());
    }
    set.add(inputs.shell.to_path_buf());
    set.add(PathBuf::from("/bin/sh"));
    for interp in interpreters(inputs.shell, &path) {
        set.add(interp);
    }
    for name in WITH_HELPERS {
        if let Some(found) = path.find(name) {
            for helper in helpers(name, &found, inputs, &path) {
                set.add(helper);
            }
        }
    }
    for dir in path.dirs.iter().filter(|d| d.path.ends_with("shims")) {
        // A version manager's shims (see `shim_parts`), judged by one of them.
        let shim = dir.names.iter().flatten().find(|n| !dir.links.contains(*n));
        if let Some(shim) = shim {
            for part in shim_parts(&dir.path.join(shim), &path) {
                set.add(part);
            }
        }
    }
    for extra in inputs.extra {
        set.add(PathBuf::from(extra));
    }
    let mut seen = HashMap::new();
    for dir in path.dirs.iter().filter(|d| listed(&d.path)) {
        for link in &dir.links {
            if let Some(target) = outside_target(&dir.path, link, &set.beneath, &mut seen) {
                // Not looked at: one that does not lead to a file grants nothing (no rule is
                // made and no mount: src/shell/confine.rs and namespaces.rs skip it).
                if !set.files.contains(&target) {
                    set.files.push(target);
                }
            }
        }
    }
    Contained {
        directories: set.directories,
        files: set.files,
        cover: denied_files(&path, denied),
    }
}

/// The contained exec set as it grows, besides the workspace and the temp dir: a place beneath
/// one already in it is left out, and a directory added takes the place of what it holds (each
/// would cost a rule and a mount for nothing).
struct Places {
    /// What is in the set, and the workspace and the temp dir.
    beneath: Vec<PathBuf>,
    directories: Vec<PathBuf>,
    files: Vec<PathBuf>,
}

impl Places {
    fn add(&mut self, p: PathBuf) {
        if !p.is_absolute() || self.covers(&p) {
            return;
        }
        // Outside by its spelling, it may lie inside by where it leads (`/bin/sh` is
        // `/usr/bin/sh` on a merged system). One that does not exist grants nothing.
        let Ok(p) = crate::fs::real::path(&p) else {
            return;
        };
        if self.covers(&p) {
            return;
        }
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => {
                self.directories.retain(|d| !within(d, &p));
                self.files.retain(|f| !within(f, &p));
                self.beneath.push(p.clone());
                self.directories.push(p);
            }
            Ok(_) if !self.files.contains(&p) => self.files.push(p),
            _ => {}
        }
    }

    fn covers(&self, p: &Path) -> bool {
        self.beneath.iter().any(|b| within(p, b))
    }
}

/// `p` is `base` or lies beneath it, by their bytes: what `Path::starts_with` says of the
/// real, absolute paths compared here, at a fraction of its cost (it takes both apart into
/// components; the contained exec set asks this some ten thousand times a call). A spelling
/// it does not take apart (`a//b`, a trailing `/`) can only make it answer no where
/// `starts_with` would say yes, which costs a redundant place, never a missing one.
fn within(p: &Path, base: &Path) -> bool {
    let (p, base) = (p.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    p.starts_with(base) && (p.len() == base.len() || p[base.len()] == b'/' || base == b"/")
}

/// Where a link in one of PATH's directories leads, when that lies outside every place
/// already executable (`/usr/bin/mvn` → `/usr/share/maven/bin/mvn`): the program on PATH runs
/// only if its file may execute. A link to a name in the same directory leads to a program on
/// PATH itself; one elsewhere is followed link by link (`/etc/alternatives/java` → a JDK under
/// `/usr/lib`), one `readlink` a step, until it lands beneath an executable place (nothing to
/// add) or on what is no link. `seen` keeps each place's answer: many links lead to one file.
fn outside_target(
    dir: &Path,
    name: &OsStr,
    places: &[PathBuf],
    seen: &mut HashMap<PathBuf, Option<PathBuf>>,
) -> Option<PathBuf> {
    let target = std::fs::read_link(dir.join(name)).ok()?;
    if !target.is_absolute() && target.components().count() == 1 {
        return None;
    }
    let first = lexical(&dir.join(target));
    if let Some(known) = seen.get(&first) {
        return known.clone();
    }
    let mut at = first.clone();
    let mut answer = None;
    for _ in 0..8 {
        if places.iter().any(|p| within(&at, p)) {
            break;
        }
        match std::fs::read_link(&at) {
            Ok(next) => at = lexical(&at.parent().unwrap_or(Path::new("/")).join(next)),
            Err(_) => {
                answer = Some(at);
                break;
            }
        }
    }
    seen.insert(first, answer.clone());
    answer
}

/// `p` with `.` and `..` taken away by its spelling alone.
fn lexical(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The denied programs in PATH's directories, where each really is: a denied name in any of
/// them (what `sudo` or `/usr/bin/sudo` would run; a listed directory is asked only for the
/// names it holds, a big one with one `fstatat` per name), and a denied entry given as a path.
/// A link is followed to its file, which is covered only when it is itself a denied program: a
/// multi-call binary (BusyBox, which `su` may be a link to) runs every other program too, so
/// such a name is left to the policy, which refuses it by name, and to nosuid and
/// no_new_privs, which take its privilege.
fn denied_files(path: &SearchPath, denied: &[&str]) -> Vec<PathBuf> {
    let names: HashSet<&str> = denied
        .iter()
        .filter(|n| !n.contains('/'))
        .copied()
        .collect();
    let mut out = BTreeSet::new();
    for dir in &path.dirs {
        for name in &names {
            if dir
                .names
                .as_ref()
                .is_some_and(|listed| !listed.contains(OsStr::new(name)))
            {
                continue;
            }
            let Ok(st) = fstatat(&dir.fd, *name, AtFlags::AT_SYMLINK_NOFOLLOW) else {
                continue;
            };
            let at = dir.path.join(name);
            match st.st_mode & libc::S_IFMT {
                libc::S_IFREG => {
                    out.insert(at);
                }
                libc::S_IFLNK => {
                    let Ok(real) = crate::fs::real::path(&at) else {
                        continue;
                    };
                    let real_name = real.file_name().and_then(OsStr::to_str).unwrap_or("");
                    if names.contains(real_name) && real.is_file() {
                        out.insert(real);
                    }
                }
                _ => {}
            }
        }
    }
    for entry in denied.iter().filter(|n| Path::new(n).is_absolute()) {
        if let Ok(real) = crate::fs::real::path(entry) {
            if real.is_file() {
                out.insert(real);
            }
        }
    }
    out.into_iter().collect()
}

/// The command's PATH, each directory opened once (a directory named twice, such as `/bin`
/// and `/usr/bin` when one links to the other, once). A small directory is listed once and a
/// name checked against the listing; a big one (`/usr/bin`, a thousand entries) is asked with
/// one `fstatat` per name, which costs far less than listing it. Each answer is kept for the
/// helpers that ask again.
struct SearchPath {
    dirs: Vec<PathDir>,
    found: RefCell<HashMap<String, Option<PathBuf>>>,
    /// [`c_toolchain`]'s answer, asked for each of a dozen compilers.
    c_toolchain: std::cell::OnceCell<Vec<PathBuf>>,
}

struct PathDir {
    path: PathBuf,
    fd: std::fs::File,
    /// The names in a small directory (in every one, when asked); None for a big one.
    names: Option<HashSet<std::ffi::OsString>>,
    /// Which of those names are symbolic links (told by the listing itself: no `lstat`).
    links: HashSet<std::ffi::OsString>,
}

/// Directories up to this size (in bytes, as stat reports it: a few blocks, a few hundred
/// entries) are listed rather than probed.
const LIST_DIR_MAX_BYTES: u64 = 8192;

impl SearchPath {
    fn open(dirs: &[PathBuf]) -> SearchPath {
        SearchPath::open_listing(dirs, &|_| false)
    }

    /// `open`, listing every directory `list_all` names whatever its size (the contained
    /// mode reads those listings for their links).
    fn open_listing(dirs: &[PathBuf], list_all: &dyn Fn(&Path) -> bool) -> SearchPath {
        let mut seen = HashSet::new();
        let dirs = dirs
            .iter()
            .filter_map(|d| {
                let fd = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                    .open(d)
                    .ok()?;
                let st = fd.metadata().ok()?;
                if !seen.insert((st.dev(), st.ino())) {
                    return None;
                }
                let mut links = HashSet::new();
                let names = (list_all(d) || st.size() <= LIST_DIR_MAX_BYTES).then(|| {
                    // Sized for the listing at once (a directory's size is about 32 bytes a
                    // name on ext4 and tmpfs): growing a set rehashes every name it holds.
                    let guess = usize::try_from(st.size() / 32).unwrap_or(0).clamp(16, 4096);
                    let mut names = HashSet::with_capacity(guess);
                    for entry in std::fs::read_dir(d).into_iter().flatten().flatten() {
                        let name = entry.file_name();
                        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                            links.insert(name.clone());
                        }
                        names.insert(name);
                    }
                    names
                });
                Some(PathDir {
                    path: d.clone(),
                    fd,
                    names,
                    links,
                })
            })
            .collect();
        SearchPath {
            dirs,
            found: RefCell::new(HashMap::new()),
            c_toolchain: std::cell::OnceCell::new(),
        }
    }

    /// The first regular file (symbolic links followed) named `name` on the path.
    fn find(&self, name: &str) -> Option<PathBuf> {
        if let Some(known) = self.found.borrow().get(name) {
            return known.clone();
        }
        let hit = self
            .dirs
            .iter()
            .filter(|d| {
                d.names
                    .as_ref()
                    .map_or(true, |n| n.contains(OsStr::new(name)))
            })
            .find(|d| {
                fstatat(&d.fd, name, AtFlags::empty())
                    .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
            })
            .map(|d| d.path.join(name));
        self.found
            .borrow_mut()
            .insert(name.to_string(), hit.clone());
        hit
    }
}

/// A program name as bash would find it: a path (relative to the root, and then only where
/// it really lies inside the workspace) or the first match on PATH.
fn resolve(name: &str, path: &SearchPath, root: &Path) -> Option<PathBuf> {
    if name.contains('/') {
        if Path::new(name).is_absolute() {
            let p = PathBuf::from(name);
            return p.is_file().then_some(p);
        }
        return within_workspace(root, &root.join(name)).filter(|p| p.is_file());
    }
    path.find(name)
}

/// The real path of `p` (a place the workspace names: a helper directory such as `target`
/// or `node_modules`, a program listed as `./name`) when it lies inside the workspace; None
/// when it does not exist or leads out of it. A repository can ship `target` as a symbolic
/// link to a system bin directory, which would otherwise put every program there in the
/// exec set; resolving once here is what Landlock and the bind mounts then see.
fn within_workspace(root: &Path, p: &Path) -> Option<PathBuf> {
    let root = crate::fs::real::path(root).ok()?;
    let real = crate::fs::real::path(p).ok()?;
    real.starts_with(&root).then_some(real)
}

/// The programs with entries in the helper table ([`helpers`]).
const WITH_HELPERS: &[&str] = &[
    "git",
    "cargo",
    "rustc",
    "rustdoc",
    "rustfmt",
    "cargo-clippy",
    "clippy-driver",
    "cc",
    "gcc",
    "g++",
    "c++",
    "clang",
    "clang++",
    "ld",
    "make",
    "npm",
    "npx",
    "node",
    "yarn",
    "pnpm",
    "go",
];

/// The helper table: what an allowed program itself executes to do its job.
fn helpers(name: &str, found: &Path, inputs: &Inputs<'_>, path: &SearchPath) -> Vec<PathBuf> {
    if !WITH_HELPERS.contains(&name) {
        return Vec::new();
    }
    let real = crate::fs::real::path(found).unwrap_or_else(|_| found.to_path_buf());
    // The installation prefix (`/usr/local` for `/usr/local/bin/git`).
    let prefix = real
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/usr"));
    let mut out = Vec::new();
    match name {
        "git" => {
            for p in [&prefix, Path::new("/usr")] {
                out.push(p.join("libexec/git-core"));
                out.push(p.join("lib/git-core"));
            }
        }
        "cargo" | "rustc" | "rustdoc" | "rustfmt" | "cargo-clippy" | "clippy-driver" => {
            out.extend(rust_toolchain(&real, found));
            out.extend(c_toolchain(path));
            out.extend(within_workspace(inputs.root, &inputs.root.join("target")));
            // The caller's own choice (absolute, or relative to the root) is the caller's;
            // only a place the workspace names is held to the workspace.
            match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
                Some(t) if t.is_absolute() => out.push(t),
                Some(t) => out.extend(within_workspace(inputs.root, &inputs.root.join(t))),
                None => {}
            }
        }
        "cc" | "gcc" | "g++" | "c++" | "clang" | "clang++" | "ld" => out.extend(c_toolchain(path)),
        "make" => out.extend(["cc", "gcc", "ar"].iter().filter_map(|n| path.find(n))),
        "npm" | "npx" | "node" | "yarn" | "pnpm" => {
            out.extend(path.find("node"));
            out.extend(path.find("env"));
            // npm is a script inside its own package: the package's other scripts.
            if let Some(pkg) = real.parent().and_then(Path::parent) {
                if pkg.join("package.json").is_file() {
                    out.extend(private_dir(pkg));
                }
            }
            out.extend(within_workspace(
                inputs.root,
                &inputs.root.join("node_modules"),
            ));
        }
        "go" => {
            out.extend(private_dir(&prefix));
            out.push(inputs.tmp.to_path_buf());
            out.extend(c_toolchain(path));
        }
        _ => {}
    }
    out
}

/// A version manager's shim (pyenv, rbenv, nodenv, asdf: a small shell script in a `shims`
/// directory that runs `exec MANAGER exec PROGRAM "$@"`) is resolved to what it runs: the
/// manager's own directory (`~/.pyenv`, `~/.asdf`: the shims directory's parent, where the
/// manager's scripts and every installed version of the real program live) and the manager
/// program the shim executes, when it lies elsewhere. Allowing a shimmed program allows what
/// its manager runs for it; nothing else on the way is added.
fn shim_parts(found: &Path, path: &SearchPath) -> Vec<PathBuf> {
    let Some(shims) = found.parent() else {
        return Vec::new();
    };
    if shims.file_name() != Some(OsStr::new("shims")) {
        return Vec::new();
    }
    let mut head = [0u8; 4096];
    let n = match std::fs::File::open(found).and_then(|mut f| f.read(&mut head)) {
        Ok(n) => n,
        Err(_) => return Vec::new(),
    };
    if !head.starts_with(b"#!") {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = shims.parent().and_then(private_dir).into_iter().collect();
    let text = String::from_utf8_lossy(&head[..n]);
    let manager = text.lines().find_map(|line| {
        let word = line
            .trim()
            .strip_prefix("exec ")?
            .split_whitespace()
            .next()?;
        let word = word.trim_matches(['"', '\'']);
        if word.starts_with('/') {
            Some(PathBuf::from(word))
        } else if !word.contains(['/', '$']) {
            path.find(word)
        } else {
            None
        }
    });
    out.extend(manager.filter(|m| m.is_file()));
    out
}

/// A rustup proxy runs the toolchains' binaries; a plain install has them beside cargo.
fn rust_toolchain(real: &Path, found: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if real
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("rustup"))
    {
        let home = std::env::var_os("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
        if let Some(home) = home {
            out.push(home.join("toolchains"));
        }
        // cargo's own subcommands (cargo-clippy, cargo-fmt) are proxies beside it.
        if let Some(bin) = found.parent().and_then(private_dir) {
            out.push(bin);
        }
    } else if let Some(bin) = real.parent() {
        match private_dir(bin) {
            Some(dir) => out.push(dir),
            // A distribution's /usr/bin/cargo: its siblings one by one, not all of /usr/bin.
            None => out.extend(
                [
                    "rustc",
                    "rustdoc",
                    "rustfmt",
                    "cargo-clippy",
                    "clippy-driver",
                ]
                .iter()
                .map(|n| bin.join(n)),
            ),
        }
        if let Some(lib) = bin.parent() {
            out.push(lib.join("lib/rustlib"));
        }
    }
    out
}

/// `dir` unless it is a shared system directory (granting all of /usr/bin would grant
/// every program).
fn private_dir(dir: &Path) -> Option<PathBuf> {
    const SHARED: &[&str] = &[
        "/",
        "/usr",
        "/usr/local",
        "/bin",
        "/sbin",
        "/usr/bin",
        "/usr/sbin",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/opt",
        "/usr/lib",
        "/lib",
        "/usr/libexec",
        "/home",
        "/root",
    ];
    (!SHARED.iter().any(|s| dir == Path::new(s))).then(|| dir.to_path_buf())
}

/// The C compiler driver, its internal programs and binutils (the linker of rustc and go);
/// worked out once per search path.
fn c_toolchain(path: &SearchPath) -> Vec<PathBuf> {
    path.c_toolchain
        .get_or_init(|| c_toolchain_of(path))
        .clone()
}

fn c_toolchain_of(path: &SearchPath) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "cc", "gcc", "c++", "g++", "ld", "ld.bfd", "ld.gold", "as", "ar",
    ]
    .iter()
    .filter_map(|n| path.find(n))
    .collect();
    for dir in ["/usr/lib/gcc", "/usr/libexec/gcc", "/usr/lib/llvm"] {
        out.push(PathBuf::from(dir));
    }
    // Cross-named binutils (x86_64-linux-gnu-ld …) that cc calls.
    let arch = std::env::consts::ARCH;
    for tool in ["ld", "ld.bfd", "as", "gcc"] {
        out.extend(path.find(&format!("{arch}-linux-gnu-{tool}")));
    }
    out
}

/// The ELF interpreter (PT_INTERP) of a binary, or the `#!` interpreter of a script (and the
/// program `#!/usr/bin/env NAME` names).
fn interpreters(file: &Path, path: &SearchPath) -> Vec<PathBuf> {
    let mut head = [0u8; 4096];
    let n = match std::fs::File::open(file).and_then(|mut f| f.read(&mut head)) {
        Ok(n) => n,
        Err(_) => return Vec::new(),
    };
    let head = &head[..n];
    if let Some(rest) = head.strip_prefix(b"#!") {
        let line = rest.split(|b| *b == b'\n').next().unwrap_or(b"");
        let text = String::from_utf8_lossy(line);
        let mut words = text.split_whitespace();
        let Some(interp) = words.next() else {
            return Vec::new();
        };
        let mut out = vec![PathBuf::from(interp)];
        if interp.ends_with("/env") {
            if let Some(p) = words
                .find(|w| !w.starts_with('-'))
                .and_then(|w| path.find(w))
            {
                out.push(p);
            }
        }
        return out;
    }
    elf_interpreter(head).into_iter().collect()
}

/// PT_INTERP from a 64-bit little-endian ELF header read into `head`.
fn elf_interpreter(head: &[u8]) -> Option<PathBuf> {
    if head.len() < 64 || &head[..4] != b"\x7fELF" || head[4] != 2 || head[5] != 1 {
        return None;
    }
    let u16_at = |o: usize| head.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u64_at = |o: usize| {
        head.get(o..o + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
    };
    let phoff = usize::try_from(u64_at(32)?).ok()?;
    let phentsize = usize::from(u16_at(54)?);
    let phnum = usize::from(u16_at(56)?);
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        if head.get(ph..ph + 4)? != [3, 0, 0, 0] {
            continue; // not PT_INTERP
        }
        let offset = usize::try_from(u64_at(ph + 8)?).ok()?;
        let size = usize::try_from(u64_at(ph + 32)?).ok()?;
        let bytes = head.get(offset..offset + size)?;
        let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
        return Some(PathBuf::from(OsStr::from_bytes_compat(&bytes[..end])));
    }
    None
}

/// `OsStr::from_bytes` without importing the Unix extension at every call site.
trait FromBytesCompat {
    fn from_bytes_compat(b: &[u8]) -> &OsStr;
}

impl FromBytesCompat for OsStr {
    fn from_bytes_compat(b: &[u8]) -> &OsStr {
        std::os::unix::ffi::OsStrExt::from_bytes(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole contained exec set, as the call's spec has it.
    fn contained_paths(
        inputs: &Inputs<'_>,
        denied: &[&str],
        library: &[PathBuf],
        write: &[PathBuf],
    ) -> ExecSet {
        contained_places(inputs, denied, library, write).into_set(inputs.root, inputs.tmp)
    }

    #[test]
    fn within_agrees_with_starts_with_on_real_paths() {
        let places = [
            "/",
            "/usr",
            "/usr/lib",
            "/usr/lib64",
            "/usr/lib/gcc",
            "/opt/a.b",
            "/opt/a",
        ];
        let asked = [
            "/",
            "/usr",
            "/usr/lib",
            "/usr/lib/gcc/x86_64",
            "/usr/lib64/ld.so",
            "/usr/libexec",
            "/usr/li",
            "/opt/a.b/c",
            "/opt/a/c",
            "/opt/ab",
            "/opt",
            "/home/u/.cargo/bin",
        ];
        for base in places {
            for p in asked {
                let (p, base) = (Path::new(p), Path::new(base));
                assert_eq!(
                    within(p, base),
                    p.starts_with(base),
                    "{p:?} within {base:?}"
                );
            }
        }
        // Spellings it does not take apart answer no, never a wrong yes.
        assert!(!within(Path::new("/usr//lib/x"), Path::new("/usr/lib")));
        assert!(!within(Path::new("/usr/lib/x"), Path::new("/usr/lib/")));
    }

    /// The contained set: PATH's directory whole, the file a link there leads to elsewhere,
    /// each denied program covered where it really is (not a multi-call binary a denied name
    /// leads to), and `/usr` whole unless a write path lies beneath it.
    #[test]
    fn the_contained_set_covers_the_denied_programs_where_they_are() {
        let t = tempfile::tempdir().expect("tempdir");
        let t = std::fs::canonicalize(t.path()).expect("canonical");
        let (bin, share) = (t.join("bin"), t.join("share"));
        for d in [&bin, &share] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        for f in [
            bin.join("tool"),
            bin.join("sudo"),
            bin.join("multicall"),
            share.join("x"),
        ] {
            std::fs::write(&f, "#!/bin/sh\n").expect("write");
        }
        std::os::unix::fs::symlink("../share/x", bin.join("linked")).expect("link");
        std::os::unix::fs::symlink("multicall", bin.join("su")).expect("link");
        std::os::unix::fs::symlink(bin.join("sudo"), bin.join("doas")).expect("link");
        let set = |write: &[PathBuf]| {
            contained_paths(
                &Inputs {
                    programs: &[],
                    path: bin.as_os_str(),
                    root: &t.join("ws"),
                    tmp: &t.join("tmp"),
                    shell: Path::new("/bin/bash"),
                    extra: &[],
                    denied: &|_| false,
                },
                &["sudo", "su", "doas"],
                &[],
                write,
            )
        };
        let all = set(&[]);
        assert!(all.directories.contains(&bin), "{:?}", all.paths);
        assert!(all.paths.contains(&share.join("x")), "{:?}", all.paths);
        assert!(!all.paths.contains(&share), "{:?}", all.paths);
        assert_eq!(
            all.cover,
            vec![bin.join("sudo")],
            "one file, however many names"
        );
        let usr = Path::new(SYSTEM);
        assert_eq!(all.directories.contains(&usr.to_path_buf()), usr.is_dir());
        let narrowed = set(&[usr.join("local/cache")]);
        assert!(
            !narrowed.paths.iter().any(|p| p == usr),
            "{:?}",
            narrowed.paths
        );
    }

    /// The set worked out before the temp dir exists (the workspace standing in for it) is
    /// the one worked out with it, unless something of it lies beneath the temp dir, or the
    /// temp dir lies in the installed system: then there is none.
    #[test]
    fn the_contained_set_worked_out_ahead_is_the_one_worked_out_with_the_temp_dir() {
        let t = tempfile::tempdir().expect("tempdir");
        let t = std::fs::canonicalize(t.path()).expect("canonical");
        let (bin, other, ws, tmp) = (t.join("bin"), t.join("other"), t.join("ws"), t.join("tmp"));
        for d in [&bin, &other, &ws, &tmp] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(other.join("x"), "#!/bin/sh\n").expect("write");
        std::fs::write(bin.join("sudo"), "#!/bin/sh\n").expect("write");
        std::os::unix::fs::symlink(other.join("x"), bin.join("linked")).expect("link");
        let places = |path: &OsStr, tmp: &Path| {
            contained_places(
                &Inputs {
                    programs: &[],
                    path,
                    root: &ws,
                    tmp,
                    shell: Path::new("/bin/bash"),
                    extra: &[],
                    denied: &|_| false,
                },
                &["sudo"],
                &[],
                std::slice::from_ref(&ws),
            )
        };
        let sets = |s: &ExecSet| (s.paths.clone(), s.directories.clone(), s.cover.clone());
        let with = contained_paths(
            &Inputs {
                programs: &[],
                path: bin.as_os_str(),
                root: &ws,
                tmp: &tmp,
                shell: Path::new("/bin/bash"),
                extra: &[],
                denied: &|_| false,
            },
            &["sudo"],
            &[],
            &[ws.clone(), tmp.clone()],
        );
        let ahead = places(bin.as_os_str(), &ws)
            .with_tmp(&ws, &tmp)
            .expect("nothing beneath the temp dir");
        assert_eq!(sets(&ahead), sets(&with));
        assert!(ahead.paths.contains(&other.join("x")), "{:?}", ahead.paths);
        assert_eq!(ahead.directories[..2], [ws.clone(), tmp.clone()]);
        // A PATH directory beneath the temp dir: left out with it, so worked out again.
        let inside = tmp.join("bin");
        std::fs::create_dir_all(&inside).expect("mkdir");
        let path = std::env::join_paths([&bin, &inside]).expect("PATH");
        assert!(places(&path, &ws).with_tmp(&ws, &tmp).is_none());
        // A link on PATH into the temp dir: what it leads to is beneath it.
        std::os::unix::fs::symlink(tmp.join("later"), bin.join("into")).expect("link");
        assert!(places(bin.as_os_str(), &ws).with_tmp(&ws, &tmp).is_none());
        std::fs::remove_file(bin.join("into")).expect("rm");
        // A temp dir in the installed system decides whether it is granted whole.
        let usr_tmp = Path::new(SYSTEM).join("tmp-of-a-call");
        assert!(places(bin.as_os_str(), &ws)
            .with_tmp(&ws, &usr_tmp)
            .is_none());
    }

    #[test]
    fn the_shell_its_loader_and_allowed_programs_are_executable() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let inputs = Inputs {
            programs: &["ls", "git", "no-such-program-xyz"],
            path: &path,
            root: Path::new("/nonexistent-root"),
            tmp: Path::new("/tmp"),
            shell: Path::new("/bin/bash"),
            extra: &[],
            denied: &|_| false,
        };
        let set = executable_paths(&inputs).paths;
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| std::fs::metadata(p).map(|m| (m.dev(), m.ino())).ok();
        let ids: Vec<_> = set.iter().filter_map(|p| id(p)).collect();
        let has = |p: &Path| id(p).is_some_and(|i| ids.contains(&i));
        assert!(has(Path::new("/bin/bash")), "{set:?}");
        let bash = std::fs::canonicalize("/bin/bash").expect("bash");
        if let Some(interp) = interpreters(&bash, &SearchPath::open(&[])).first() {
            assert!(has(interp), "{set:?}");
        }
        assert!(!has(Path::new("/bin/cat")), "cat was not allowed: {set:?}");
    }
}
