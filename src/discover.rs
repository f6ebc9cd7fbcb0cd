//! Where the workspace root comes from (docs/contract.md, "Where the workspace is"), as git
//! and cargo find their project: `--root DIR`, else `SNEAKY_ROOT`, else `workspace_root` in
//! the user's configuration, else the nearest directory at or above the current one that
//! holds a `sneaky.toml` or a `.git`.
//!
//! A found root is never `/` or a home directory: a `.git` in `~` (a dotfiles repository) must
//! not turn a stray `sneaky-rm` into one on the whole home directory. Without any of these the
//! tools refuse to guess, with a message that says how to name the root (`--root`). Roots a
//! person named explicitly (flag, variable, configuration) are taken as given.
//!
//! The walk up stops below the directories listed in `SNEAKY_CEILING_DIRECTORIES` (as git's
//! `GIT_CEILING_DIRECTORIES` does): the starting directory is always looked at, and no listed
//! directory nor anything above one is. When the start is itself listed, the walk ends there
//! (git ignores such an entry and climbs on; a ceiling here never lets the walk out). Entries
//! are absolute paths separated by `:`; empty and relative entries are ignored. Entries and the
//! directories on the way up are compared by their real paths (links resolved), so a link to a
//! directory and the directory are one ceiling.
//! A test (or a person with a dotfiles repository above their projects) uses it to keep
//! whatever lies above a directory out of the search.
//!
//! Every binary, sneaky-agent and sneaky-mcp go through here, so they agree on the workspace.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::config::{user_config_path, Config};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::CONFIG_FILE_NAME;

/// The files whose presence makes a directory a project root.
pub const MARKERS: [&str; 2] = [CONFIG_FILE_NAME, ".git"];

/// The environment variable listing the directories the walk up does not enter.
pub const CEILING_VAR: &str = "SNEAKY_CEILING_DIRECTORIES";

/// How the root was chosen, for messages and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `--root DIR`.
    Flag,
    /// The `SNEAKY_ROOT` environment variable.
    Env,
    /// `workspace_root` in this configuration file.
    Config(PathBuf),
    /// This marker file (`…/sneaky.toml` or `…/.git`) found at or above the current directory.
    Marker(PathBuf),
}

impl Origin {
    /// "--root", "SNEAKY_ROOT", "workspace_root in /x/config.toml", "/x/.git".
    pub fn describe(&self) -> String {
        match self {
            Origin::Flag => "--root".to_string(),
            Origin::Env => "SNEAKY_ROOT".to_string(),
            Origin::Config(file) => format!("workspace_root in {}", file.display()),
            Origin::Marker(marker) => marker.display().to_string(),
        }
    }
}

/// A root and how it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub root: PathBuf,
    pub origin: Origin,
}

/// The root, by the whole search order; refuses to guess when nothing names one.
pub fn find_root(flag: Option<&Path>, config: Option<&Path>) -> Result<Found> {
    if let Some(found) = named_root(flag, config)? {
        return Ok(found);
    }
    let cwd = std::env::current_dir().map_err(|e| {
        Error::new(
            ErrorKind::InvalidArgs,
            format!("no workspace: the current directory cannot be read ({e}); pass --root DIR"),
        )
    })?;
    let ceilings = std::env::var_os(CEILING_VAR)
        .map(|v| ceilings(&v))
        .unwrap_or_default();
    root_above(&cwd, home_dir().as_deref(), &ceilings)
}

/// The ceilings a `SNEAKY_CEILING_DIRECTORIES` value lists: its absolute entries, each by its
/// real path when it exists (else as written, which then matches no real directory).
pub fn ceilings(value: &OsStr) -> Vec<PathBuf> {
    std::env::split_paths(value)
        .filter(|p| p.is_absolute())
        .map(|p| p.canonicalize().unwrap_or(p))
        .collect()
}

/// A root a person named: `--root`, `SNEAKY_ROOT`, or `workspace_root` in the configuration
/// given by `--config`/`SNEAKY_CONFIG` or else in the user's configuration file.
pub fn named_root(flag: Option<&Path>, config: Option<&Path>) -> Result<Option<Found>> {
    if let Some(root) = flag {
        return Ok(Some(Found {
            root: root.to_path_buf(),
            origin: Origin::Flag,
        }));
    }
    if let Some(root) = std::env::var_os("SNEAKY_ROOT").filter(|v| !v.is_empty()) {
        return Ok(Some(Found {
            root: PathBuf::from(root),
            origin: Origin::Env,
        }));
    }
    let from_env = std::env::var_os("SNEAKY_CONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let file = match config.map(Path::to_path_buf).or(from_env) {
        Some(file) => file,
        None => match user_config_path().filter(|p| p.is_file()) {
            Some(file) => file,
            None => return Ok(None),
        },
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        Error::new(
            ErrorKind::ConfigError,
            format!("config file {}: {e}", file.display()),
        )
    })?;
    let parsed = Config::parse(&text, &file.display().to_string())?;
    Ok(parsed.workspace_root.map(|root| Found {
        root: resolve_configured(&root, &file),
        origin: Origin::Config(file),
    }))
}

/// `workspace_root` as written in a config file: `~/` is the home directory, and a relative
/// path is relative to the file's directory (as cargo reads paths in its config).
pub fn resolve_configured(root: &Path, config_file: &Path) -> PathBuf {
    if let (Ok(rest), Some(home)) = (root.strip_prefix("~"), home_dir()) {
        return home.join(rest);
    }
    if root.is_absolute() {
        return root.to_path_buf();
    }
    let dir = config_file.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    dir.join(root)
}

/// The nearest directory at or above `start` and below every one of `ceilings` (already
/// resolved, as `ceilings` returns them) holding a marker; `start` itself is looked at even
/// when it is a ceiling, and then nothing above it. Refuses `/`, `home` and the case where
/// there is none.
pub fn root_above(start: &Path, home: Option<&Path>, ceilings: &[PathBuf]) -> Result<Found> {
    let home = home.and_then(|h| h.canonicalize().ok());
    let mut stopped_at = None;
    for (i, dir) in start.ancestors().enumerate() {
        // Resolving costs a syscall per level: only when there are ceilings to compare.
        let ceiling = match ceilings {
            [] => None,
            _ => {
                let real = real_path(dir);
                ceilings.iter().find(|c| **c == real)
            }
        };
        if i > 0 && ceiling.is_some() {
            stopped_at = ceiling;
            break;
        }
        if let Some(found) = marker_in(dir, home.as_deref())? {
            return Ok(found);
        }
        if ceiling.is_some() {
            stopped_at = ceiling;
            break;
        }
    }
    let searched = match stopped_at {
        Some(ceiling) => format!(
            "any directory above it below {} ({CEILING_VAR})",
            ceiling.display()
        ),
        None => "any directory above it".to_string(),
    };
    Err(Error::new(
        ErrorKind::InvalidArgs,
        format!(
            "no workspace: no sneaky.toml or .git in {} or {searched}, and none of --root, \
             SNEAKY_ROOT or workspace_root names one; pass --root DIR (the tools do not guess, \
             so that / or a home directory never becomes the workspace)",
            start.display()
        ),
    ))
}

/// The root `dir` makes when it holds a marker; `/` and `home` are refused.
fn marker_in(dir: &Path, home: Option<&Path>) -> Result<Option<Found>> {
    let Some(marker) = MARKERS
        .iter()
        .map(|m| dir.join(m))
        .find(|p| p.symlink_metadata().is_ok())
    else {
        return Ok(None);
    };
    let canonical = real_path(dir);
    if canonical == Path::new("/") || home == Some(canonical.as_path()) {
        return Err(Error::new(
            ErrorKind::InvalidArgs,
            format!(
                "no workspace: the nearest project marker is {}, but {} is not taken as a \
                 workspace without being named; pass --root DIR (or set SNEAKY_ROOT, or \
                 workspace_root in ~/.config/sneaky/config.toml)",
                marker.display(),
                if canonical == Path::new("/") {
                    "/ (the whole filesystem)".to_string()
                } else {
                    format!("{} (a home directory)", canonical.display())
                }
            ),
        ));
    }
    Ok(Some(Found {
        root: dir.to_path_buf(),
        origin: Origin::Marker(marker),
    }))
}

fn real_path(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary directory that is also the walk's ceiling: nothing the machine holds above
    /// it (a `/tmp/.git`, a dotfiles repository) takes part in a test.
    fn fenced() -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().expect("tmp");
        let ceiling = vec![dir.path().canonicalize().expect("canonical")];
        (dir, ceiling)
    }

    #[test]
    fn nearest_marker_wins() {
        let (dir, fence) = fenced();
        let top = dir.path().join("top");
        std::fs::create_dir_all(top.join(".git")).expect("mkdir");
        std::fs::create_dir_all(top.join("a/b/c")).expect("mkdir");
        std::fs::write(top.join("a/sneaky.toml"), "").expect("write");
        let found = root_above(&top.join("a/b/c"), None, &fence).expect("found");
        assert_eq!(found.root, top.join("a"));
        assert_eq!(found.origin, Origin::Marker(top.join("a/sneaky.toml")));
        let found = root_above(&top, None, &fence).expect("found");
        assert_eq!(found.root, top);
    }

    #[test]
    fn home_and_nothing_are_refused() {
        let (dir, fence) = fenced();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".git")).expect("mkdir");
        std::fs::create_dir_all(home.join("scratch")).expect("mkdir");
        let e = root_above(&home.join("scratch"), Some(&home), &fence).expect_err("home");
        assert_eq!(e.code(), "invalid_args");
        assert!(e.message().contains("--root"), "{}", e.message());
        assert!(e.message().contains("home directory"), "{}", e.message());
        let bare = dir.path().join("bare");
        std::fs::create_dir_all(&bare).expect("mkdir");
        let e = root_above(&bare, None, &fence).expect_err("nothing");
        assert!(e.message().contains("--root"), "{}", e.message());
        assert!(e.message().contains(CEILING_VAR), "{}", e.message());
    }

    /// `<tmp>/up/.git` above `<tmp>/up/fence/here`: found without a ceiling, not with one at
    /// `fence` or at `up` itself; a ceiling elsewhere changes nothing.
    #[test]
    fn a_ceiling_hides_what_lies_at_and_above_it() {
        let (dir, fence) = fenced();
        let up = dir.path().join("up");
        let here = up.join("fence/here");
        std::fs::create_dir_all(up.join(".git")).expect("mkdir");
        std::fs::create_dir_all(&here).expect("mkdir");
        let real = |p: &Path| p.canonicalize().expect("canonical");
        let with = |extra: &Path| [fence.clone(), vec![real(extra)]].concat();
        let found = root_above(&here, None, &fence).expect("below the fence");
        assert_eq!(found.root, up);
        for ceiling in [up.join("fence"), up.clone()] {
            let e = root_above(&here, None, &with(&ceiling)).expect_err("fenced off");
            assert_eq!(e.code(), "invalid_args");
            assert!(e.message().contains(CEILING_VAR), "{}", e.message());
        }
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        let found = root_above(&here, None, &with(&elsewhere)).expect("not an ancestor");
        assert_eq!(found.root, up);
        // A ceiling at the start leaves only the start.
        let e = root_above(&here, None, &with(&here)).expect_err("start is a ceiling");
        assert!(e.message().contains(CEILING_VAR), "{}", e.message());
    }

    /// Like git, the starting directory is looked at even when it is a ceiling.
    #[test]
    fn the_start_is_looked_at_even_as_a_ceiling() {
        let (dir, _) = fenced();
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(proj.join(".git")).expect("mkdir");
        let found = root_above(&proj, None, &[proj.canonicalize().expect("real")]).expect("found");
        assert_eq!(found.root, proj);
        assert_eq!(found.origin, Origin::Marker(proj.join(".git")));
    }

    #[test]
    fn the_variable_lists_absolute_real_paths() {
        let (dir, fence) = fenced();
        let real = &fence[0];
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(real, &link).expect("symlink");
        let value = format!("::relative/dir:{}:/no/such/dir:", link.display());
        assert_eq!(
            ceilings(OsStr::new(&value)),
            vec![real.clone(), PathBuf::from("/no/such/dir")]
        );
        assert!(ceilings(OsStr::new("")).is_empty());
    }

    /// A ceiling named through a link stops the walk at the directory the link points to.
    #[test]
    fn a_ceiling_named_through_a_link_is_the_real_directory() {
        let (dir, fence) = fenced();
        let up = dir.path().join("up");
        std::fs::create_dir_all(up.join(".git")).expect("mkdir");
        std::fs::create_dir_all(up.join("in/here")).expect("mkdir");
        let link = dir.path().join("to-in");
        std::os::unix::fs::symlink(up.join("in"), &link).expect("symlink");
        let value = format!("{}:{}", fence[0].display(), link.display());
        let e = root_above(&up.join("in/here"), None, &ceilings(OsStr::new(&value)))
            .expect_err("fenced off through the link");
        assert!(e.message().contains(CEILING_VAR), "{}", e.message());
    }

    #[test]
    fn configured_roots_resolve_beside_their_file() {
        let file = Path::new("/etc/sneaky/config.toml");
        assert_eq!(
            resolve_configured(Path::new("proj"), file),
            PathBuf::from("/etc/sneaky/proj")
        );
        assert_eq!(
            resolve_configured(Path::new("/srv/app"), file),
            PathBuf::from("/srv/app")
        );
    }
}
