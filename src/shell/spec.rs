//! What the sandbox is told for one command, from the configuration and the workspace:
//! where it may read, write and execute, and which files inside the writable places stay
//! read-only (the repository's metadata where programs hide, the configuration).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::executables::{contained_places, executable_paths, Contained, ExecSet, Inputs};
use super::launch::{LaunchSpec, Limits};
use crate::config::commands::{EffectiveLists, Mode};
use crate::config::{Config, Shell};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};

/// Build the launcher's instructions (with real paths remembered while it does: every PATH
/// directory, program and protected place is resolved from the same few directories).
/// `ahead`: the exec set worked out meanwhile ([`ExecAhead`]), if it was.
pub fn launch_spec(
    config: &Config,
    ws: &Workspace,
    tmp: &Path,
    bash: &Path,
    path_env: &OsStr,
    ahead: Option<ExecAhead>,
) -> Result<LaunchSpec> {
    crate::fs::real::remembered(|| build_spec(config, ws, tmp, bash, path_env, ahead))
}

/// The contained mode's exec set, worked out ahead from the moment the call knows its
/// configuration, while the call's own thread makes the temp dir, the environment and the
/// placeholders: the set was the longest step of a call's start before the launch, some 300
/// system calls and 1.7 million instructions on this machine's PATH (resolving PATH, its
/// links, the build tools' helpers and the denied programs). The launcher forked ahead of
/// time works it out where there is one (src/shell/zygote.rs): it waits for its launch on a
/// CPU of its own, where a thread of this process took turns with the call's own thread on
/// one CPU of two. Elsewhere a thread does. The temp dir does not exist yet: the set is worked
/// out without it and checked against it once it does ([`Contained::with_tmp`]), with the
/// PATH and bash it was worked out for, which [`launch_spec`] compares with the call's; where
/// either differs, or no set came, it is worked out again there, as it is without this.
pub struct ExecAhead(Box<dyn FnOnce() -> Option<Ahead>>);

/// A contained exec set worked out ahead, with the PATH and bash it was worked out for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ahead {
    /// PATH's value (its bytes, kept as a path's).
    #[serde(with = "super::raw_path::one")]
    path_env: PathBuf,
    #[serde(with = "super::raw_path::one")]
    bash: PathBuf,
    places: Contained,
}

/// What the contained exec set is worked out from: the workspace and the keys of
/// `tools.shell` it reads (PATH is read where it is worked out: the launcher forked ahead of
/// time has the runner's environment). As JSON, what that launcher is handed to work it out.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExecInputs {
    #[serde(with = "super::raw_path::one")]
    root: PathBuf,
    write_paths: Vec<String>,
    exec_paths: Vec<String>,
    extra_allowed_commands: Vec<String>,
    denied_commands: Option<Vec<String>>,
}

impl ExecInputs {
    /// None in the strict mode (its set is the allowed programs': worked out in
    /// [`launch_spec`]).
    pub fn of(shell: &Shell, root: &Path) -> Option<ExecInputs> {
        if crate::config::commands::mode(shell).is_strict() {
            return None;
        }
        Some(ExecInputs {
            root: root.to_path_buf(),
            write_paths: shell.write_paths.clone(),
            exec_paths: shell.exec_paths.clone(),
            extra_allowed_commands: shell.extra_allowed_commands.clone(),
            denied_commands: shell.denied_commands.clone(),
        })
    }

    /// The contained exec set but the temp dir, with the workspace standing in for it (it is
    /// not made yet); None where bash or a write path cannot be found.
    pub fn work(&self) -> Option<Ahead> {
        crate::fs::real::remembered(|| self.places_on(&super::env::command_path(&self.root)))
    }

    /// [`ExecInputs::work`] with PATH's value `path_env`.
    fn places_on(&self, path_env: &OsStr) -> Option<Ahead> {
        let shell = Shell {
            write_paths: self.write_paths.clone(),
            exec_paths: self.exec_paths.clone(),
            extra_allowed_commands: self.extra_allowed_commands.clone(),
            denied_commands: self.denied_commands.clone(),
            ..Shell::default()
        };
        let root = self.root.as_path();
        let bash = super::env::find_bash_on(Some(path_env)).ok()?;
        let write = write_paths(&shell, root, root).ok()?;
        let lists = EffectiveLists::in_mode(&shell, Mode::Contained);
        let call = Call {
            shell: &shell,
            lists: &lists,
            root,
            tmp: root,
            bash: &bash,
            path_env,
        };
        let places = call.contained(&write);
        Some(Ahead {
            path_env: path_env.into(),
            bash,
            places,
        })
    }
}

impl ExecAhead {
    /// Start it on a thread; None in the strict mode, or where no thread can be started.
    pub fn start(shell: &Shell, root: &Path) -> Option<ExecAhead> {
        let inputs = ExecInputs::of(shell, root)?;
        let thread = std::thread::Builder::new()
            .name("exec-set".into())
            .spawn(move || inputs.work())
            .ok()?;
        Some(ExecAhead(Box::new(move || thread.join().ok().flatten())))
    }

    /// The set worked out elsewhere (the launcher forked ahead of time), which `answer`
    /// waits for.
    pub fn answered_by(answer: impl FnOnce() -> Option<Ahead> + 'static) -> ExecAhead {
        ExecAhead(Box::new(answer))
    }

    /// The set for this call, if it was worked out for its PATH, bash and temp dir.
    fn take(self, root: &Path, tmp: &Path, bash: &Path, path_env: &OsStr) -> Option<ExecSet> {
        let ahead = (self.0)()?;
        if ahead.bash != bash || ahead.path_env.as_os_str() != path_env {
            return None;
        }
        ahead.places.with_tmp(root, tmp)
    }
}

// Long: the launcher's instructions, field by field, from lists worked out here from one
// another (the write paths, the exec set, the protected view, the read-only places beneath the
// writable ones, the pins in order); split, those intermediate lists would be passed between
// the parts.
fn build_spec(
    config: &Config,
    ws: &Workspace,
    tmp: &Path,
    bash: &Path,
    path_env: &OsStr,
    ahead: Option<ExecAhead>,
) -> Result<LaunchSpec> {
    let shell = &config.tools.shell;
    let root = ws.root();
    let lists = EffectiveLists::from_config(shell);
    let write = write_paths(shell, root, tmp)?;
    let (pin, mut read_only) = if config.allow_vcs_writes {
        (Vec::new(), Vec::new())
    } else {
        vcs_metadata(root)
    };
    read_only.push(root.join(CONFIG_FILE_NAME));
    read_only.extend(ws.protected_paths().iter().cloned());
    let protected = super::protect::protected_view(ws)?;
    read_only.extend(protected.read_only.iter().cloned());
    // What the read-deny list names, and SneakyCode's own state, are covered last; the
    // private temp dir lies inside the latter (src/shell/tmpdir.rs) and is kept visible
    // through its cover.
    let mut hide = super::protect::denied_places(config, ws)?;
    let written: Vec<PathBuf> = write.iter().filter(|w| *w != tmp).cloned().collect();
    hide.extend(super::protect::own_state(&written));
    // Last: the set worked out ahead has had the most time.
    let exec_set = match ahead.and_then(|a| a.take(root, tmp, bash, path_env)) {
        Some(set) if !lists.mode.is_strict() => set,
        _ => Call {
            shell,
            lists: &lists,
            root,
            tmp,
            bash,
            path_env,
        }
        .exec_set(&write),
    };
    // A place of `write_paths` that lies beneath a protected place (reached through a link
    // out of the workspace) is protected with it.
    for w in absolute_paths(&shell.write_paths, "write_paths")? {
        if protected.read_only.iter().any(|p| w.starts_with(p)) {
            read_only.push(w);
        }
    }
    // Only what a command could otherwise write needs covering.
    read_only.retain(|p| write.iter().any(|w| p.starts_with(w)));
    let mut links = protected.links;
    links.retain(|p| write.iter().any(|w| p.starts_with(w) && p != w));
    // A directory holding a protected file could be renamed away and replaced by one with a
    // planted file of the same name: every directory between a writable root and a
    // protected file (or a link on the way to one) becomes a mount point (which cannot be
    // renamed or removed); the links themselves are pinned as links.
    let mut pin = pin;
    for p in &links {
        if !pin.contains(p) {
            pin.push(p.clone());
        }
    }
    for p in read_only.iter().chain(&links) {
        let Some(w) = write.iter().find(|w| p.starts_with(w)) else {
            continue;
        };
        for dir in p
            .ancestors()
            .skip(1)
            .take_while(|a| a != w && a.starts_with(w))
        {
            if !pin.iter().any(|x| x == dir) {
                pin.push(dir.to_path_buf());
            }
        }
    }
    // Outer directories first: a pin inside another must be made after it.
    pin.sort_by_key(|p| p.components().count());
    Ok(LaunchSpec {
        sandbox: shell.sandbox,
        read: read_paths(shell, root, tmp)?,
        read_dirs: Vec::new(),
        write,
        exec: exec_set.paths,
        exec_dirs: exec_set.directories,
        cover_exec: exec_set.cover,
        // The contained mode's exec set holds them already.
        map_exec: match lists.mode.is_strict() {
            true => library_dirs(),
            false => Vec::new(),
        },
        read_only,
        pin,
        hide,
        tmp: Some(tmp.to_path_buf()),
        unix_sockets: [root.to_path_buf(), tmp.to_path_buf()]
            .into_iter()
            .chain(absolute_paths(&shell.unix_sockets, "unix_sockets")?)
            .collect(),
        network: shell.network.all(),
        proxy_hosts: shell
            .network
            .hosts()
            .map(<[String]>::to_vec)
            .unwrap_or_default(),
        limits: Limits {
            processes: shell.max_processes,
            file_bytes: shell.max_file_bytes,
            cpu_seconds: shell.max_cpu_seconds,
        },
        require: shell.required_layers().0,
        require_by_default: shell.required_layers().1,
        container_boundary: shell.container_boundary,
        shell: bash.to_path_buf(),
        cwd: root.to_path_buf(),
        skip_namespaces: skipped("namespaces"),
        skip_proc: skipped("proc"),
        container: super::container::detect_container(),
        parent: std::process::id() as i32,
        // Made by the caller, which removes it after the call (src/shell/cgroup.rs).
        pids_cgroup: Err("not created".into()),
        tty: false,
        loopback: None,
        overlay: None,
        hand_view: None,
        costs: false,
        report_refused: false,
    })
}

/// What the exec set is worked out from: the call's configuration, lists, places, bash and
/// PATH.
struct Call<'a> {
    shell: &'a Shell,
    lists: &'a EffectiveLists,
    root: &'a Path,
    tmp: &'a Path,
    bash: &'a Path,
    path_env: &'a OsStr,
}

impl Call<'_> {
    /// What may execute, in the mode in force (src/shell/executables.rs): in the contained
    /// mode /usr, PATH's directories, the library directories, the workspace and the temp
    /// dir, with the denied programs covered; in the strict mode the allowed programs, their
    /// helpers and `exec_workspace_dirs`.
    fn exec_set(&self, write: &[PathBuf]) -> ExecSet {
        if !self.lists.mode.is_strict() {
            return self.contained(write).into_set(self.root, self.tmp);
        }
        let mut exec_set = self.inputs(executable_paths);
        for dir in workspace_exec_dirs(self.root, &self.shell.exec_workspace_dirs) {
            if !exec_set.paths.contains(&dir) {
                exec_set.paths.push(dir.clone());
            }
            exec_set.directories.push(dir);
        }
        exec_set
    }

    /// The contained mode's exec set but the workspace and the temp dir.
    fn contained(&self, write: &[PathBuf]) -> Contained {
        let denied: Vec<&str> = self.lists.denied_names().collect();
        self.inputs(|inputs| contained_places(inputs, &denied, &library_dirs(), write))
    }

    /// `work` on the exec set's inputs: the runnable programs, PATH, the places and what
    /// the lists deny (a program is denied when both its path and its name are).
    fn inputs<R>(&self, work: impl FnOnce(&Inputs<'_>) -> R) -> R {
        let programs = self.lists.runnable();
        let denied = |p: &Path| {
            let name = p.file_name().and_then(OsStr::to_str).unwrap_or("");
            self.lists.denies(&p.to_string_lossy()).is_some() && self.lists.denies(name).is_some()
        };
        work(&Inputs {
            programs: &programs,
            path: self.path_env,
            root: self.root,
            tmp: self.tmp,
            shell: self.bash,
            extra: &self.shell.exec_paths,
            denied: &denied,
        })
    }
}

/// `SNEAKY_SANDBOX_SKIP` (a comma-separated list) names `layer`: leave it out, to see and
/// test how the sandbox refuses or degrades without it.
pub fn skipped(layer: &str) -> bool {
    std::env::var("SNEAKY_SANDBOX_SKIP").is_ok_and(|v| v.split(',').any(|l| l.trim() == layer))
}

/// With `tools.shell.sandbox = false`: only the session and the parent-death signal.
pub fn unsandboxed_spec(ws: &Workspace, bash: &Path) -> LaunchSpec {
    LaunchSpec {
        sandbox: false,
        read: Vec::new(),
        read_dirs: Vec::new(),
        write: Vec::new(),
        exec: Vec::new(),
        exec_dirs: Vec::new(),
        cover_exec: Vec::new(),
        map_exec: Vec::new(),
        read_only: Vec::new(),
        pin: Vec::new(),
        hide: Vec::new(),
        tmp: None,
        unix_sockets: Vec::new(),
        network: true,
        proxy_hosts: Vec::new(),
        limits: Limits {
            processes: 0,
            file_bytes: 0,
            cpu_seconds: 0,
        },
        require: Vec::new(),
        require_by_default: false,
        container_boundary: false,
        shell: bash.to_path_buf(),
        cwd: ws.root().to_path_buf(),
        skip_namespaces: true,
        skip_proc: true,
        container: None,
        parent: std::process::id() as i32,
        pids_cgroup: Err("sandbox off".into()),
        tty: false,
        loopback: None,
        overlay: None,
        hand_view: None,
        costs: false,
        report_refused: false,
    }
}

/// The repository's metadata that runs programs: `.git/config` (aliases, core.fsmonitor,
/// core.pager, filters …), hooks, per-worktree config, submodules' repositories, info. The
/// objects, refs, index and logs stay writable so that `git add` and `git commit` work; `.git`
/// itself is pinned (a mount point cannot be renamed away and replaced by a planted one).
/// With a `.git` file (`gitdir: …`), the file and the target's metadata.
/// Returns (directories to pin, paths to bind read-only).
fn vcs_metadata(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let dot_git = root.join(".git");
    let mut pin = Vec::new();
    let mut read_only = Vec::new();
    let git_dir = if dot_git.is_dir() {
        pin.push(dot_git.clone());
        Some(dot_git)
    } else if dot_git.is_file() {
        read_only.push(dot_git.clone());
        gitdir_target(&dot_git, root)
    } else {
        None
    };
    let Some(git_dir) = git_dir else {
        return (pin, read_only);
    };
    for name in [
        "config",
        "config.worktree",
        "hooks",
        "info",
        "modules",
        "commondir",
    ] {
        read_only.push(git_dir.join(name));
    }
    // A linked worktree's shared repository (not the placeholder, which names `.git` itself).
    if let Some(common) = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .filter(|c| c.trim() != ".")
    {
        let common = git_dir.join(common.trim());
        for name in ["config", "hooks"] {
            read_only.push(common.join(name));
        }
    }
    (pin, read_only)
}

/// The repository directory of the workspace: `.git`, or the one a `.git` file names.
fn git_dir_of(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        Some(dot_git)
    } else if dot_git.is_file() {
        gitdir_target(&dot_git, root)
    } else {
        None
    }
}

/// Metadata directories git does without (a repository made with `git init --template=`
/// has neither hooks nor info): created empty, as `git init` makes them, so that they are
/// bound read-only like existing ones.
const VCS_DIRS: &[&str] = &["hooks", "info", "modules"];

/// Metadata files that must not exist for git to work as usual, and what stands in for them
/// during a call: `commondir` naming the repository itself (git then finds everything where
/// it was) and an empty `config.worktree` (a comment). Both are removed after the call.
const VCS_PLACEHOLDERS: &[(&str, &str)] = &[
    ("commondir", ".\n"),
    (
        "config.worktree",
        "# sneaky-run: placeholder for this call, removed after it\n",
    ),
];

/// Metadata that does not exist yet cannot be made by a command: the launcher binds
/// read-only only what exists, so the missing names are made to exist for the call (see
/// [`VCS_DIRS`], [`VCS_PLACEHOLDERS`]) and bound like the rest. A mount point cannot be
/// replaced, renamed or removed, and writing through it is refused, however the command
/// tries.
///
/// Dropping it removes the placeholder files, unless another call in the same repository
/// still uses them: each call holds a shared lock on them, and only the one that gets the
/// exclusive lock removes them (a placeholder left by a killed call is taken over by the
/// next one and removed by it).
pub struct VcsPlaceholders {
    held: Vec<(PathBuf, nix::fcntl::Flock<std::fs::File>)>,
}

impl VcsPlaceholders {
    pub fn make(config: &Config, ws: &Workspace) -> VcsPlaceholders {
        Self::make_at(ws.root(), config.allow_vcs_writes)
    }

    /// `make` for the workspace at `root` (a background job's supervisor has no open
    /// workspace).
    pub fn make_at(root: &Path, allow_vcs_writes: bool) -> VcsPlaceholders {
        let mut held = Vec::new();
        let git_dir = git_dir_of(root).filter(|d| !allow_vcs_writes && d.starts_with(root));
        let Some(git_dir) = git_dir else {
            return VcsPlaceholders { held };
        };
        for name in VCS_DIRS {
            let _ = std::fs::create_dir(git_dir.join(name));
        }
        for (name, content) in VCS_PLACEHOLDERS {
            let path = git_dir.join(name);
            if let Some(lock) = hold_placeholder(&path, content) {
                held.push((path, lock));
            }
        }
        VcsPlaceholders { held }
    }
}

/// Make `path` hold `content` unless it exists with other content (then it is the
/// repository's own), and hold a shared lock on it. Retried when the file is removed in
/// between (by a call that just ended).
fn hold_placeholder(path: &Path, content: &str) -> Option<nix::fcntl::Flock<std::fs::File>> {
    use nix::fcntl::{Flock, FlockArg};
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    for _ in 0..3 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut f) => {
                if f.write_all(content.as_bytes()).is_err() {
                    let _ = std::fs::remove_file(path);
                    return None;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        let file = std::fs::File::open(path).ok()?;
        let lock = Flock::lock(file, FlockArg::LockShared).ok()?;
        let ours = std::fs::read_to_string(path).is_ok_and(|c| c == content);
        let same = match (lock.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if same {
            return ours.then_some(lock);
        }
    }
    None
}

impl Drop for VcsPlaceholders {
    fn drop(&mut self) {
        use nix::fcntl::FlockArg;
        for (path, lock) in self.held.drain(..) {
            if lock.relock(FlockArg::LockExclusiveNonblock).is_ok() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// The shared-library directories (canonical, existing, without duplicates).
fn library_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in [
        "/lib",
        "/lib64",
        "/usr/lib",
        "/usr/lib64",
        "/usr/local/lib",
        "/lib32",
        "/usr/lib32",
    ] {
        if let Ok(c) = crate::fs::real::path(d) {
            if !dirs.iter().any(|x| c.starts_with(x)) {
                dirs.retain(|x| !x.starts_with(&c));
                dirs.push(c);
            }
        }
    }
    dirs
}

fn gitdir_target(file: &Path, root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    Some(root.join(target))
}

fn absolute_paths(list: &[String], key: &str) -> Result<Vec<PathBuf>> {
    list.iter()
        .map(|p| {
            let path = PathBuf::from(p);
            if path.is_absolute() {
                Ok(path)
            } else {
                Err(Error::new(
                    ErrorKind::ConfigError,
                    format!("tools.shell.{key}: {p} is not an absolute path"),
                ))
            }
        })
        .collect()
}

fn read_paths(shell: &Shell, root: &Path, tmp: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = match &shell.read_paths {
        None => vec![PathBuf::from("/")],
        Some(list) => absolute_paths(list, "read_paths")?,
    };
    paths.push(root.to_path_buf());
    paths.push(tmp.to_path_buf());
    Ok(paths)
}

fn write_paths(shell: &Shell, root: &Path, tmp: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = vec![root.to_path_buf(), tmp.to_path_buf()];
    paths.extend(absolute_paths(&shell.write_paths, "write_paths")?);
    Ok(paths)
}

/// `tools.shell.exec_workspace_dirs` as real directories inside the workspace, made when
/// missing (a bind mount and a Landlock rule need them to exist before the call; the build
/// fills them). One that leads out of the workspace through a link is left out.
fn workspace_exec_dirs(root: &Path, dirs: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        let mut at = root.to_path_buf();
        let mut inside = true;
        for c in Path::new(d).components() {
            let std::path::Component::Normal(name) = c else {
                continue;
            };
            at.push(name);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                Ok(m) if m.file_type().is_symlink() => match crate::fs::real::path(&at) {
                    Ok(real) if real.starts_with(root) && real.is_dir() => at = real,
                    _ => inside = false,
                },
                Ok(_) => inside = false,
                Err(_) => inside = std::fs::create_dir(&at).is_ok(),
            }
            if !inside {
                break;
            }
        }
        if inside {
            out.push(at);
        }
    }
    out
}

/// The most Landlock rules [`carve_reads`] adds; past it the read grants stay as they were
/// (a home directory of thousands of entries), and the job reads as a command does.
const MAX_CARVED_RULES: usize = 4096;

/// For a background job, which outlives the moment its mount view was made: the read grants
/// taken apart on the way to each place of the read-deny list (`denied`: the places, or the
/// fixed part of a glob, absolute), so that a denied place made after the job started is not
/// readable to it. The mount view covers the places that exist when it starts
/// (src/shell/protect.rs), but a cover needs a place to exist, and a job lives for up to an
/// hour. Landlock grants rights by directory tree, on the inodes that exist when the rules are
/// made: each directory on the way to a denied place is granted only listing (`read_dirs`),
/// and each of its entries but the one leading on is granted reading as before. An entry made
/// there later (`~/.ssh` made while the job runs, or any other new name beside one on the
/// way) is covered by no rule: reading it fails with EACCES. Places beneath a writable
/// place (the workspace, the private temp dir, `write_paths`) are not taken apart: a job may
/// make entries anywhere there, which one rule per existing entry cannot allow.
pub fn carve_reads(spec: &mut LaunchSpec, denied: &[PathBuf]) {
    let writable = |p: &Path| spec.write.iter().any(|w| p.starts_with(w));
    // Where each place really is too (a home directory reached through a link).
    let mut targets: Vec<PathBuf> = Vec::new();
    for d in denied.iter().filter(|d| d.is_absolute() && !writable(d)) {
        targets.push(d.clone());
        if let Some(real) = real_location(d) {
            if !writable(&real) && !targets.contains(&real) {
                targets.push(real);
            }
        }
    }
    if targets.is_empty() {
        return;
    }
    // Each directory on the way to a denied place, and the place, by identity: an entry that
    // is another name for one of them (a link to `/` or to the home directory, a bind mount)
    // would grant the whole tree again, as a rule holds for an inode whatever path named it.
    let mut on_the_way = std::collections::HashSet::new();
    for t in &targets {
        for a in t.ancestors() {
            if let Ok(m) = std::fs::metadata(a) {
                use std::os::unix::fs::MetadataExt;
                on_the_way.insert((m.dev(), m.ino()));
            }
        }
    }
    let mut read = Vec::new();
    let mut dirs = Vec::new();
    let mut budget = MAX_CARVED_RULES;
    for r in &spec.read {
        let under: Vec<&Path> = targets
            .iter()
            .map(PathBuf::as_path)
            .filter(|t| t.starts_with(r))
            .collect();
        if under.is_empty() || writable(r) {
            read.push(r.clone());
            continue;
        }
        let (mut r_read, mut r_dirs) = (Vec::new(), Vec::new());
        let mut carving = Carving {
            read: &mut r_read,
            dirs: &mut r_dirs,
            budget: &mut budget,
            on_the_way: &on_the_way,
        };
        if carve(r, &under, &mut carving) {
            read.extend(r_read);
            dirs.extend(r_dirs);
        } else {
            read.push(r.clone());
        }
    }
    spec.read = read;
    spec.read_dirs = dirs;
}

/// What [`carve`] adds to, and what it checks against.
struct Carving<'a> {
    read: &'a mut Vec<PathBuf>,
    dirs: &'a mut Vec<PathBuf>,
    budget: &'a mut usize,
    on_the_way: &'a std::collections::HashSet<(u64, u64)>,
}

/// [`carve_reads`] beneath `dir`: false when the budget of rules ran out.
fn carve(dir: &Path, targets: &[&Path], c: &mut Carving<'_>) -> bool {
    use std::os::unix::fs::MetadataExt;
    if targets.contains(&dir) {
        return true; // the denied place itself: no grant
    }
    if *c.budget == 0 {
        return false;
    }
    *c.budget -= 1;
    c.dirs.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return true; // nothing to list: nothing to grant
    };
    for e in entries.flatten() {
        let child = dir.join(e.file_name());
        let under: Vec<&Path> = targets
            .iter()
            .copied()
            .filter(|t| t.starts_with(&child))
            .collect();
        if !under.is_empty() {
            if !carve(&child, &under, c) {
                return false;
            }
            continue;
        }
        // Another name for a directory on the way (or a dangling link): no grant; what it
        // names is reached, carved, by its own path.
        match std::fs::metadata(&child) {
            Ok(m) if !c.on_the_way.contains(&(m.dev(), m.ino())) => {}
            _ => continue,
        }
        if *c.budget == 0 {
            return false;
        }
        *c.budget -= 1;
        c.read.push(child);
    }
    true
}

/// Where `path` really is: its deepest existing ancestor resolved, the rest appended; None
/// when that is where it is written.
fn real_location(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
    let mut real = crate::fs::real::path(existing).ok()?;
    for name in rest.iter().rev() {
        real.push(name);
    }
    (real != path).then_some(real)
}

#[cfg(test)]
mod carve_tests {
    use super::*;

    #[test]
    fn reads_are_taken_apart_on_the_way_to_a_denied_place_only() {
        let d = tempfile::tempdir().expect("tempdir");
        let home = d.path().join("home");
        for sub in ["proj", ".config/gh", ".config/other", ".cache"] {
            std::fs::create_dir_all(home.join(sub)).expect("mkdir");
        }
        std::fs::write(home.join("notes.txt"), "x").expect("write");
        let mut spec = unsandboxed_spec_for_tests(d.path(), &home.join("proj"));
        // ~/.ssh does not exist yet; ~/.config/gh does.
        carve_reads(&mut spec, &[home.join(".ssh"), home.join(".config/gh")]);
        let mut read = spec.read.clone();
        read.sort();
        let mut expected: Vec<PathBuf> = [".cache", ".config/other", "notes.txt", "proj"]
            .iter()
            .map(|p| home.join(p))
            .collect();
        expected.push(home.join("proj")); // the workspace, granted on its own as well
        expected.sort();
        assert_eq!(read, expected);
        let mut dirs = spec.read_dirs.clone();
        dirs.sort();
        assert_eq!(dirs, vec![home.clone(), home.join(".config")]);
        // A link to a directory on the way (here the home directory itself) grants nothing.
        std::os::unix::fs::symlink(&home, home.join("proj/../loop")).expect("link");
        let mut spec = unsandboxed_spec_for_tests(d.path(), &home.join("proj"));
        carve_reads(&mut spec, &[home.join(".ssh")]);
        assert!(!spec.read.contains(&home.join("loop")), "{:?}", spec.read);
        std::fs::remove_file(home.join("loop")).expect("rm");
        // A place beneath a writable place is left alone.
        let mut spec = unsandboxed_spec_for_tests(d.path(), &home.join("proj"));
        carve_reads(&mut spec, &[home.join("proj/.env")]);
        assert_eq!(spec.read, vec![home.clone(), home.join("proj")]);
        assert!(spec.read_dirs.is_empty());
    }

    /// The launcher forked ahead of time works the contained exec set out from
    /// [`ExecInputs`] alone: what it finds is what the call's whole configuration gives.
    #[test]
    fn the_exec_set_s_inputs_give_the_set_the_configuration_gives() {
        let d = tempfile::tempdir().expect("tempdir");
        let root = d.path().join("ws");
        let bin = d.path().join("bin");
        let extra = d.path().join("tools");
        let cache = d.path().join("cache");
        for dir in [&root, &bin, &extra, &cache] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        for name in ["sudo", "su", "make"] {
            std::fs::write(bin.join(name), "").expect("program");
        }
        let path = std::env::join_paths([bin.as_path(), Path::new("/usr/bin")]).expect("PATH");
        let text = |l: &[&Path]| l.iter().map(|p| p.display().to_string()).collect();
        let configs = [
            Shell::default(),
            Shell {
                denied_commands: Some(vec!["make".into()]),
                ..Shell::default()
            },
            Shell {
                extra_allowed_commands: vec!["sudo".into()],
                ..Shell::default()
            },
            Shell {
                exec_paths: text(&[&extra]),
                write_paths: text(&[&cache]),
                ..Shell::default()
            },
        ];
        for shell in &configs {
            let inputs = ExecInputs::of(shell, &root).expect("the contained mode");
            let bash = super::super::env::find_bash_on(Some(&path)).expect("bash");
            let lists = EffectiveLists::from_config(shell);
            let call = Call {
                shell,
                lists: &lists,
                root: &root,
                tmp: &root,
                bash: &bash,
                path_env: &path,
            };
            let whole = call.contained(&write_paths(shell, &root, &root).expect("write"));
            let worked =
                crate::fs::real::remembered(|| inputs.places_on(&path).expect("worked out").places);
            assert_eq!(worked, whole, "{shell:?}");
            // What the launcher is handed comes back as it was.
            let json = serde_json::to_vec(&inputs).expect("json");
            assert_eq!(
                serde_json::from_slice::<ExecInputs>(&json).ok(),
                Some(inputs)
            );
        }
        let strict = Shell {
            strict: true,
            ..Shell::default()
        };
        assert_eq!(ExecInputs::of(&strict, &root), None);
    }

    /// A spec that reads `read_root` and writes `root`.
    fn unsandboxed_spec_for_tests(read_root: &Path, root: &Path) -> LaunchSpec {
        let ws = crate::fs::jail::Workspace::open_root(root).expect("ws");
        let mut spec = unsandboxed_spec(&ws, Path::new("/bin/bash"));
        spec.read = vec![read_root.join("home"), root.to_path_buf()];
        spec.write = vec![root.to_path_buf()];
        spec
    }
}

#[cfg(test)]
mod early_tests {
    use super::super::launch::Early;
    use super::*;

    #[test]
    fn first_steps_fit_only_the_launch_they_were_taken_for() {
        let d = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::open_root(d.path()).expect("ws");
        let mut spec = unsandboxed_spec(&ws, Path::new("/bin/bash"));
        spec.sandbox = true;
        spec.skip_namespaces = false;
        spec.network = false;
        spec.limits.processes = 1024;
        spec.pids_cgroup = Ok(PathBuf::from("/sys/fs/cgroup/pids/sneaky-run-1-0"));
        let early = Early {
            parent: spec.parent,
            pids_cgroup: spec.pids_cgroup.clone(),
            processes: spec.limits.processes,
            network: spec.network,
            costs: false,
        };
        assert!(early.fits(&spec));
        // Whatever the namespaces or the steps before them depend on must be the same.
        let changes: [fn(&mut LaunchSpec); 8] = [
            |s| s.sandbox = false,
            |s| s.skip_namespaces = true,
            |s| s.proxy_hosts = vec!["registry.example".into()],
            |s| s.loopback = Some((1, 2)),
            |s| s.hand_view = Some(PathBuf::from("/run/view")),
            |s| s.network = !s.network,
            |s| s.pids_cgroup = Err("none".into()),
            |s| s.limits.processes += 1,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut other = spec.clone();
            change(&mut other);
            assert!(!early.fits(&other), "change {i}");
        }
        let mut other = spec.clone();
        other.parent += 1;
        assert!(!early.fits(&other));
    }
}
