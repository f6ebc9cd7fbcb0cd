//! Finding and reading the TOML configuration (CONTRACT.md, "Configuration").
//!
//! Search order, first found wins: `--config FILE`, `SNEAKY_CONFIG`, `<root>/sneaky.toml`,
//! `$XDG_CONFIG_HOME/sneaky/config.toml` (else `~/.config/sneaky/config.toml`). A file named
//! explicitly must exist; the others are optional. Unknown keys are errors that name the key,
//! and a broken file is always reported, never silently ignored. The search costs a few
//! `stat`s: it runs on every tool call.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::catalog::ToolName;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};

pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;
pub const DEFAULT_MAX_OUTPUT: u64 = 64 * 1024;
pub const DEFAULT_TIMEOUT: u64 = 30;
/// Upper bound for any command timeout, whatever the config or the call asks.
pub const MAX_TIMEOUT: u64 = 3600;
/// A config file larger than this is refused (it is certainly not a config).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// read_file / write_file limit, in bytes.
    pub max_file_size_bytes: u64,
    /// run_command output cap, in bytes, per stream.
    pub max_output_bytes: u64,
    /// The workspace when neither --root nor SNEAKY_ROOT is given (the seed's key); read from
    /// the user's configuration (`discover`), relative to the file's directory.
    pub workspace_root: Option<PathBuf>,
    pub permissions: Permissions,
    pub tools: Tools,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Permissions {
    pub deny: Vec<ToolName>,
    pub allow: Vec<ToolName>,
    pub confirm: Vec<ToolName>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Tools {
    pub shell: Shell,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Shell {
    /// Programs run_command may run; None means the built-in default list.
    pub allowed_commands: Option<Vec<String>>,
    /// Programs run_command refuses; None means the built-in default list.
    pub denied_commands: Option<Vec<String>>,
    pub default_timeout: u64,
    /// Restrict commands with Landlock where the kernel supports it.
    pub sandbox: bool,
    /// Allow network access from commands (false: Landlock denies TCP bind/connect).
    pub network: bool,
    /// Environment variables passed to commands even though their names look like secrets.
    pub pass_env: Vec<String>,
    /// Where sandboxed commands may read and execute (None: everywhere). The root and the
    /// command's private temporary directory are always readable.
    pub read_paths: Option<Vec<String>>,
    /// Extra places sandboxed commands may write, besides the root, a private temporary
    /// directory and /dev/null (e.g. a shared build cache). Absolute paths.
    pub write_paths: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_file_size_bytes: DEFAULT_MAX_FILE_SIZE,
            max_output_bytes: DEFAULT_MAX_OUTPUT,
            workspace_root: None,
            permissions: Permissions::default(),
            tools: Tools::default(),
        }
    }
}

impl Default for Shell {
    fn default() -> Self {
        Shell {
            allowed_commands: None,
            denied_commands: None,
            default_timeout: DEFAULT_TIMEOUT,
            sandbox: true,
            network: true,
            pass_env: Vec::new(),
            read_paths: None,
            write_paths: Vec::new(),
        }
    }
}

/// Where the active configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Defaults,
    File(PathBuf),
}

impl Config {
    /// Parse TOML text; `origin` names the file in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Config> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let text = e.to_string();
            let hint = if text.contains("unknown field `workspace_root`") {
                "\n(workspace_root is a top-level key: put it above the first [section])"
            } else {
                ""
            };
            Error::new(
                ErrorKind::ConfigError,
                format!("{origin}: {}{hint}", text.trim_end()),
            )
        })?;
        config.validate(origin)?;
        Ok(config)
    }

    fn validate(&self, origin: &str) -> Result<()> {
        let bad = |msg: String| {
            Err(Error::new(
                ErrorKind::ConfigError,
                format!("{origin}: {msg}"),
            ))
        };
        if self.max_file_size_bytes == 0 {
            return bad("max_file_size_bytes must be at least 1".into());
        }
        if self.max_output_bytes == 0 {
            return bad("max_output_bytes must be at least 1".into());
        }
        let timeout = self.tools.shell.default_timeout;
        if timeout == 0 || timeout > MAX_TIMEOUT {
            return bad(format!(
                "tools.shell.default_timeout must be between 1 and {MAX_TIMEOUT} seconds"
            ));
        }
        Ok(())
    }

    /// Find and load the configuration for a workspace. Marks the active file as protected
    /// in the workspace so that no tool can change it.
    pub fn load(explicit: Option<&Path>, ws: &mut Workspace) -> Result<(Config, Source)> {
        let from_env = std::env::var_os("SNEAKY_CONFIG").filter(|v| !v.is_empty());
        if let Some(path) = explicit
            .map(Path::to_path_buf)
            .or(from_env.map(PathBuf::from))
        {
            let text = read_config_file(&path)?;
            let config = Config::parse(&text, &path.display().to_string())?;
            ws.protect_file(&path);
            return Ok((config, Source::File(path)));
        }
        let in_root = ws.root().join(CONFIG_FILE_NAME);
        if let Some(text) = read_root_config(ws)? {
            let config = Config::parse(&text, &in_root.display().to_string())?;
            ws.protect_file(&in_root);
            return Ok((config, Source::File(in_root)));
        }
        if let Some(path) = user_config_path() {
            if path.exists() {
                let text = read_config_file(&path)?;
                let config = Config::parse(&text, &path.display().to_string())?;
                ws.protect_file(&path);
                return Ok((config, Source::File(path)));
            }
        }
        Ok((Config::default(), Source::Defaults))
    }
}

/// `$XDG_CONFIG_HOME/sneaky/config.toml`, else `~/.config/sneaky/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("sneaky").join("config.toml"))
}

fn read_config_file(path: &Path) -> Result<String> {
    let file = std::fs::File::open(path).map_err(|e| {
        Error::new(
            ErrorKind::ConfigError,
            format!("config file {}: {e}", path.display()),
        )
    })?;
    read_bounded(file, &path.display().to_string())
}

/// The workspace's own `sneaky.toml` is read through the jail like any other file there.
fn read_root_config(ws: &Workspace) -> Result<Option<String>> {
    let rel = ws.relative(CONFIG_FILE_NAME)?;
    match ws.open_read(&rel) {
        Ok(file) => read_bounded(file, CONFIG_FILE_NAME).map(Some),
        Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::new(
            ErrorKind::ConfigError,
            format!("config file {CONFIG_FILE_NAME}: {}", e.message),
        )),
    }
}

fn read_bounded(file: std::fs::File, origin: &str) -> Result<String> {
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::new(ErrorKind::ConfigError, format!("config file {origin}: {e}")))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::new(
            ErrorKind::ConfigError,
            format!("config file {origin} is larger than {MAX_CONFIG_BYTES} bytes"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_when_empty() {
        let c = Config::parse("", "t").expect("parse");
        assert_eq!(c, Config::default());
        assert_eq!(c.max_file_size_bytes, 1_048_576);
        assert_eq!(c.tools.shell.default_timeout, 30);
    }

    #[test]
    fn contract_example_parses() {
        let c = Config::parse(
            r#"
max_file_size_bytes = 1048576
max_output_bytes    = 65536
[permissions]
deny    = ["delete_file"]
allow   = ["write_file"]
confirm = ["read_file"]
[tools.shell]
allowed_commands = ["git", "cargo", "ls"]
denied_commands  = ["rm", "sudo"]
default_timeout  = 30
"#,
            "t",
        )
        .expect("parse");
        assert_eq!(c.permissions.deny, vec![ToolName::DeleteFile]);
        assert_eq!(
            c.tools.shell.allowed_commands.as_deref(),
            Some(&["git".to_string(), "cargo".into(), "ls".into()][..])
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = Config::parse("max_file_size = 3", "t").expect_err("unknown");
        assert_eq!(e.code(), "config_error");
        assert!(e.message.contains("max_file_size"), "{}", e.message);
        let e = Config::parse("[tools.shell]\nallowed = []", "t").expect_err("unknown");
        assert!(e.message.contains("allowed"), "{}", e.message);
        let e = Config::parse("[permissions]\ndeny = [\"rm_rf\"]", "t").expect_err("tool");
        assert!(e.message.contains("rm_rf"), "{}", e.message);
        let e = Config::parse("max_file_size_bytes = \"big\"", "t").expect_err("type");
        assert!(e.message.contains("max_file_size_bytes"), "{}", e.message);
    }
}
