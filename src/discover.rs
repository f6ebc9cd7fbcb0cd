//! Where the workspace root comes from (CONTRACT.md, "Input"), as git and cargo find their
//! project: `--root DIR`, else `SNEAKY_ROOT`, else `workspace_root` in the user's
//! configuration, else the nearest directory at or above the current one that holds a
//! `sneaky.toml` or a `.git`.
//!
//! A found root is never `/` or a home directory: a `.git` in `~` (a dotfiles repository) must
//! not turn a stray `sneaky-rm` into one on the whole home directory. Without any of these the
//! tools refuse to guess, with a message that says how to name the root (`--root`). Roots a
//! person named explicitly (flag, variable, configuration) are taken as given.
//!
//! Every binary, sneaky-agent and sneaky-mcp go through here, so they agree on the workspace.

use std::path::{Path, PathBuf};

use crate::config::{user_config_path, Config};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::CONFIG_FILE_NAME;

/// The files whose presence makes a directory a project root.
pub const MARKERS: [&str; 2] = [CONFIG_FILE_NAME, ".git"];

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
    root_above(&cwd, home_dir().as_deref())
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

/// The nearest directory at or above `start` holding a marker; refuses `/`, `home` and the
/// case where there is none.
pub fn root_above(start: &Path, home: Option<&Path>) -> Result<Found> {
    let home = home.and_then(|h| h.canonicalize().ok());
    let ceilings = ceilings();
    for dir in start.ancestors() {
        let Some(marker) = MARKERS
            .iter()
            .map(|m| dir.join(m))
            .find(|p| p.symlink_metadata().is_ok())
        else {
            if ceilings.iter().any(|c| c == dir) {
                break;
            }
            continue;
        };
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        if canonical == Path::new("/") || home.as_deref() == Some(canonical.as_path()) {
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
        return Ok(Found {
            root: dir.to_path_buf(),
            origin: Origin::Marker(marker),
        });
    }
    Err(Error::new(
        ErrorKind::InvalidArgs,
        format!(
            "no workspace: no sneaky.toml or .git in {} or any directory above it, and none of \
             --root, SNEAKY_ROOT or workspace_root names one; pass --root DIR (the tools do not \
             guess, so that / or a home directory never becomes the workspace)",
            start.display()
        ),
    ))
}

/// `SNEAKY_CEILING_DIRECTORIES`: absolute directories, `:`-separated, above which the search
/// for a project marker does not go (they are searched themselves), as git's
/// `GIT_CEILING_DIRECTORIES`: for a server started in a scratch directory, or a test that must
/// not find whatever project lies above its temporary directory.
fn ceilings() -> Vec<PathBuf> {
    std::env::var_os("SNEAKY_CEILING_DIRECTORIES")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| p.is_absolute())
                .map(|p| p.canonicalize().unwrap_or(p))
                .collect()
        })
        .unwrap_or_default()
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

    #[test]
    fn nearest_marker_wins() {
        let dir = tempfile::tempdir().expect("tmp");
        let top = dir.path().join("top");
        std::fs::create_dir_all(top.join(".git")).expect("mkdir");
        std::fs::create_dir_all(top.join("a/b/c")).expect("mkdir");
        std::fs::write(top.join("a/sneaky.toml"), "").expect("write");
        let found = root_above(&top.join("a/b/c"), None).expect("found");
        assert_eq!(found.root, top.join("a"));
        assert_eq!(found.origin, Origin::Marker(top.join("a/sneaky.toml")));
        let found = root_above(&top, None).expect("found");
        assert_eq!(found.root, top);
    }

    #[test]
    fn home_and_nothing_are_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".git")).expect("mkdir");
        std::fs::create_dir_all(home.join("scratch")).expect("mkdir");
        let e = root_above(&home.join("scratch"), Some(&home)).expect_err("home");
        assert_eq!(e.code(), "invalid_args");
        assert!(e.message().contains("--root"), "{}", e.message());
        assert!(e.message().contains("home directory"), "{}", e.message());
        let bare = dir.path().join("bare");
        std::fs::create_dir_all(&bare).expect("mkdir");
        let e = root_above(&bare, None).expect_err("nothing");
        assert!(e.message().contains("--root"), "{}", e.message());
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
