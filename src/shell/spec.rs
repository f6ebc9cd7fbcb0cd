//! What the sandbox is told for one command, from the configuration and the workspace:
//! where it may read, write and execute, and which files inside the writable places stay
//! read-only (the repository's metadata where programs hide, the configuration).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::executables::{executable_paths, Inputs};
use super::sandbox::{LaunchSpec, Limits};
use crate::config::commands::EffectiveLists;
use crate::config::{Config, Shell};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};

/// Build the launcher's instructions.
pub fn launch_spec(
    config: &Config,
    ws: &Workspace,
    tmp: &Path,
    bash: &Path,
    path_env: &OsStr,
) -> Result<LaunchSpec> {
    let shell = &config.tools.shell;
    let root = ws.root();
    let lists = EffectiveLists::from_config(shell);
    let programs = lists.runnable();
    let exec_set = executable_paths(&Inputs {
        programs: &programs,
        path: path_env,
        root,
        tmp,
        shell: bash,
        extra: &shell.exec_paths,
        denied: &|p: &Path| {
            let name = p.file_name().and_then(OsStr::to_str).unwrap_or("");
            lists.denies(&p.to_string_lossy()).is_some() && lists.denies(name).is_some()
        },
    });
    let mut exec_set = exec_set;
    for dir in workspace_exec_dirs(root, &shell.exec_workspace_dirs) {
        if !exec_set.paths.contains(&dir) {
            exec_set.paths.push(dir.clone());
        }
        exec_set.directories.push(dir);
    }
    let (pin, mut read_only) = if config.allow_vcs_writes {
        (Vec::new(), Vec::new())
    } else {
        vcs_metadata(root)
    };
    read_only.push(root.join(CONFIG_FILE_NAME));
    read_only.extend(ws.protected_paths().iter().cloned());
    let protected = super::protect::protected_view(ws)?;
    read_only.extend(protected.read_only.iter().cloned());
    let write = write_paths(shell, root, tmp)?;
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
    // What the read-deny list names, and SneakyCode's own state, are covered last; the
    // private temp dir lies inside the latter (src/shell/tmpdir.rs) and is kept visible
    // through its cover.
    let mut hide = super::protect::denied_places(config, ws)?;
    let written: Vec<PathBuf> = write.iter().filter(|w| *w != tmp).cloned().collect();
    hide.extend(super::protect::own_state(&written));
    // Outer directories first: a pin inside another must be made after it.
    pin.sort_by_key(|p| p.components().count());
    Ok(LaunchSpec {
        sandbox: shell.sandbox,
        read: read_paths(shell, root, tmp)?,
        write,
        exec: exec_set.paths,
        exec_dirs: exec_set.directories,
        map_exec: library_dirs(),
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
        container: super::sandbox::detect_container(),
        parent: std::process::id() as i32,
        // Made by the caller, which removes it after the call (src/shell/cgroup.rs).
        pids_cgroup: Err("not created".into()),
        tty: false,
        loopback: None,
        overlay: None,
    })
}

/// `SNEAKY_SANDBOX_SKIP` (a comma-separated list) names `layer`: leave it out, to see and
/// test how the sandbox refuses or degrades without it.
fn skipped(layer: &str) -> bool {
    std::env::var("SNEAKY_SANDBOX_SKIP").is_ok_and(|v| v.split(',').any(|l| l.trim() == layer))
}

/// With `tools.shell.sandbox = false`: only the session and the parent-death signal.
pub fn unsandboxed_spec(ws: &Workspace, bash: &Path) -> LaunchSpec {
    LaunchSpec {
        sandbox: false,
        read: Vec::new(),
        write: Vec::new(),
        exec: Vec::new(),
        exec_dirs: Vec::new(),
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
        if let Ok(c) = std::fs::canonicalize(d) {
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
                Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&at) {
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
