//! Permission tiers: which tools run without asking (auto), which need a person's approval
//! (confirm, enforced by the driver) and which refuse to run at all (deny, enforced by every
//! binary). Defaults come from the tool table; `[permissions]` in the config moves tools
//! between tiers, and deny always wins.

use serde::Serialize;

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::tools;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Auto,
    Confirm,
    Deny,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Auto => "auto",
            Tier::Confirm => "confirm",
            Tier::Deny => "deny",
        }
    }
}

/// The tier of a tool under a configuration.
pub fn tier(config: &Config, tool: &str) -> Tier {
    let listed = |list: &[String]| list.iter().any(|t| t == tool);
    if listed(&config.permissions.deny) {
        return Tier::Deny;
    }
    if listed(&config.permissions.confirm) {
        return Tier::Confirm;
    }
    if listed(&config.permissions.allow) {
        return Tier::Auto;
    }
    tools::default_tier(tool).unwrap_or(Tier::Deny)
}

/// Refuse a tool that the configuration denies.
pub fn check_not_denied(config: &Config, tool: &str) -> Result<()> {
    if tier(config, tool) == Tier::Deny {
        return Err(Error::new(
            ErrorKind::ToolDenied,
            format!("{tool} is denied by the configuration (permissions.deny)"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_contract() {
        let c = Config::default();
        for t in [
            "read_file",
            "list_dir",
            "grep_files",
            "find_files",
            "finish",
        ] {
            assert_eq!(tier(&c, t), Tier::Auto, "{t}");
        }
        for t in [
            "write_file",
            "make_dir",
            "delete_file",
            "str_replace",
            "patch_apply",
            "run_command",
        ] {
            assert_eq!(tier(&c, t), Tier::Confirm, "{t}");
        }
        assert_eq!(tier(&c, "no_such_tool"), Tier::Deny);
    }

    #[test]
    fn config_moves_tools_and_deny_wins() {
        let mut c = Config::default();
        c.permissions.allow = vec!["write_file".into(), "delete_file".into()];
        c.permissions.confirm = vec!["read_file".into()];
        c.permissions.deny = vec!["delete_file".into()];
        assert_eq!(tier(&c, "write_file"), Tier::Auto);
        assert_eq!(tier(&c, "read_file"), Tier::Confirm);
        assert_eq!(tier(&c, "delete_file"), Tier::Deny);
        assert_eq!(
            check_not_denied(&c, "delete_file")
                .expect_err("denied")
                .code(),
            "tool_denied"
        );
    }
}
