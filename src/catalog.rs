//! The catalog: the tools of the contract (CONTRACT.md, "Binaries") with their LLM names,
//! binaries and default tiers. It is the root of the crate's dependency graph and imports
//! nothing from the crate: configuration, permissions, the MCP server and the agent depend on
//! it, never the other way round.
//!
//! What a tool is beyond its name (arguments, result, CLI shape, hints, man page text) is
//! described by the tool's own module (`tools::Tool`); `tools::spec` maps a `ToolName` to that
//! description with an exhaustive match, so a name without a module does not compile.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Permission tiers: auto-approved, approved by a person (the driver asks), or refused.
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

/// Every tool of the contract, in the contract's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolName {
    ReadFile,
    ListDir,
    GrepFiles,
    FindFiles,
    WriteFile,
    MakeDir,
    DeleteFile,
    StrReplace,
    PatchApply,
    RunCommand,
    Finish,
}

impl ToolName {
    pub const ALL: [ToolName; 11] = [
        ToolName::ReadFile,
        ToolName::ListDir,
        ToolName::GrepFiles,
        ToolName::FindFiles,
        ToolName::WriteFile,
        ToolName::MakeDir,
        ToolName::DeleteFile,
        ToolName::StrReplace,
        ToolName::PatchApply,
        ToolName::RunCommand,
        ToolName::Finish,
    ];

    /// The name an LLM calls the tool by.
    pub const fn as_str(self) -> &'static str {
        self.entry().0
    }

    /// The binary that runs the tool from a shell.
    pub const fn binary(self) -> &'static str {
        self.entry().1
    }

    /// The tier when the configuration does not move the tool.
    pub const fn default_tier(self) -> Tier {
        self.entry().2
    }

    const fn entry(self) -> (&'static str, &'static str, Tier) {
        match self {
            ToolName::ReadFile => ("read_file", "sneaky-read", Tier::Auto),
            ToolName::ListDir => ("list_dir", "sneaky-ls", Tier::Auto),
            ToolName::GrepFiles => ("grep_files", "sneaky-grep", Tier::Auto),
            ToolName::FindFiles => ("find_files", "sneaky-find", Tier::Auto),
            ToolName::WriteFile => ("write_file", "sneaky-write", Tier::Confirm),
            ToolName::MakeDir => ("make_dir", "sneaky-mkdir", Tier::Confirm),
            ToolName::DeleteFile => ("delete_file", "sneaky-rm", Tier::Confirm),
            ToolName::StrReplace => ("str_replace", "sneaky-replace", Tier::Confirm),
            ToolName::PatchApply => ("patch_apply", "sneaky-patch", Tier::Confirm),
            ToolName::RunCommand => ("run_command", "sneaky-run", Tier::Confirm),
            ToolName::Finish => ("finish", "sneaky-finish", Tier::Auto),
        }
    }

    /// The tool of that LLM name.
    pub fn from_name(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The tool run by that binary.
    pub fn from_binary(binary: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.binary() == binary)
    }

    /// Every LLM name, comma-separated, for messages.
    pub fn known_list() -> String {
        ToolName::ALL.map(ToolName::as_str).join(", ")
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTool(pub String);

impl fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown tool '{}' (known: {})",
            self.0,
            ToolName::known_list()
        )
    }
}

impl std::error::Error for UnknownTool {}

impl FromStr for ToolName {
    type Err = UnknownTool;
    fn from_str(s: &str) -> Result<ToolName, UnknownTool> {
        ToolName::from_name(s).ok_or_else(|| UnknownTool(s.to_string()))
    }
}

impl Serialize for ToolName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Configuration lists of tools deserialize into names, so an unknown tool is a config error
/// that names it and lists the known ones.
impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ToolName, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_binaries_are_unique_and_round_trip() {
        for (i, tool) in ToolName::ALL.into_iter().enumerate() {
            assert_eq!(ToolName::from_name(tool.as_str()), Some(tool));
            assert_eq!(ToolName::from_binary(tool.binary()), Some(tool));
            assert_eq!(tool as usize, i, "ALL is in declaration order");
        }
        assert!("no_such_tool".parse::<ToolName>().is_err());
    }

    #[test]
    fn tiers_follow_the_contract() {
        let auto: Vec<_> = ToolName::ALL
            .into_iter()
            .filter(|t| t.default_tier() == Tier::Auto)
            .map(ToolName::as_str)
            .collect();
        assert_eq!(
            auto,
            [
                "read_file",
                "list_dir",
                "grep_files",
                "find_files",
                "finish"
            ]
        );
    }
}
