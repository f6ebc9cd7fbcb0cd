//! Permission tiers: which tools run without asking (auto), which need a person's approval
//! (confirm, enforced by the driver) and which refuse to run at all (deny, enforced by every
//! binary). Defaults come from the tool table; `[permissions]` in the config moves tools
//! between tiers, and deny always wins.

pub use crate::catalog::{Tier, ToolName};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};

/// The tier of a tool under a configuration.
pub fn tier(config: &Config, tool: ToolName) -> Tier {
    let listed = |list: &[ToolName]| list.contains(&tool);
    if listed(&config.permissions.deny) {
        return Tier::Deny;
    }
    if listed(&config.permissions.confirm) {
        return Tier::Confirm;
    }
    if listed(&config.permissions.allow) {
        return Tier::Auto;
    }
    tool.default_tier()
}

/// Refuse a tool that the configuration denies.
pub fn check_not_denied(config: &Config, tool: ToolName) -> Result<()> {
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

    fn t(name: &str) -> ToolName {
        ToolName::from_name(name).unwrap_or_else(|| panic!("{name} is a tool"))
    }

    #[test]
    fn defaults_follow_the_contract() {
        let c = Config::default();
        for name in [
            "read_file",
            "list_dir",
            "grep_files",
            "find_files",
            "finish",
        ] {
            assert_eq!(tier(&c, t(name)), Tier::Auto, "{name}");
        }
        for name in [
            "write_file",
            "make_dir",
            "delete_file",
            "str_replace",
            "patch_apply",
            "run_command",
        ] {
            assert_eq!(tier(&c, t(name)), Tier::Confirm, "{name}");
        }
    }

    #[test]
    fn config_moves_tools_and_deny_wins() {
        let mut c = Config::default();
        c.permissions.allow = vec![t("write_file"), t("delete_file")];
        c.permissions.confirm = vec![t("read_file")];
        c.permissions.deny = vec![t("delete_file")];
        assert_eq!(tier(&c, t("write_file")), Tier::Auto);
        assert_eq!(tier(&c, t("read_file")), Tier::Confirm);
        assert_eq!(tier(&c, t("delete_file")), Tier::Deny);
        assert_eq!(
            check_not_denied(&c, t("delete_file"))
                .expect_err("denied")
                .code(),
            "tool_denied"
        );
    }
}
