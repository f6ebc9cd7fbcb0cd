//! The catalog: the tools of the contract (docs/contract.md, "Binaries and tools") with their
//! LLM names, binaries and default tiers. It is the root of the crate's dependency graph and imports
//! nothing from the crate: configuration, permissions, the MCP server and the agent depend on
//! it, never the other way round.
//!
//! The list of tools (`tool_list!`) is written once, here; the enum below and the dispatch in
//! `tools` (`tools::spec`) are generated from it, so neither can leave a tool out. What a tool
//! is beyond its name (arguments, result, CLI shape, hints, how it renders) is described by the
//! tool's own module (`tools::Tool`).

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

/// The one list of tools, in the contract's order: the enum variant, the name an LLM calls the
/// tool by, its binary, its default tier, and the type in `tools` that implements it. The
/// catalog below and the dispatch in `tools` are both generated from it (`tool_list!(m)` hands
/// the list to the macro `m`), so a tool is added by one line here and its module; everything
/// else about a tool (arguments, result, hints, how it renders) lives in that module.
macro_rules! tool_list {
    ($then:ident) => {
        $then! {
            ReadFile "read_file" "sneaky-read" Auto read::ReadFile,
            ListDir "list_dir" "sneaky-ls" Auto list::ListDir,
            GrepFiles "grep_files" "sneaky-grep" Auto grep::GrepFiles,
            FindFiles "find_files" "sneaky-find" Auto find::FindFiles,
            Outline "outline" "sneaky-outline" Auto outline::Outline,
            FindSymbol "find_symbol" "sneaky-symbol" Auto symbol::FindSymbol,
            FindReferences "find_references" "sneaky-refs" Auto refs::FindReferences,
            RepoMap "repo_map" "sneaky-map" Auto map::RepoMap,
            WriteFile "write_file" "sneaky-write" Confirm write::WriteFile,
            MakeDir "make_dir" "sneaky-mkdir" Confirm mkdir::MakeDir,
            DeleteFile "delete_file" "sneaky-rm" Confirm rm::DeleteFile,
            StrReplace "str_replace" "sneaky-replace" Confirm replace::StrReplace,
            PatchApply "patch_apply" "sneaky-patch" Confirm patch::PatchApply,
            RunCommand "run_command" "sneaky-run" Confirm run::RunCommand,
            Finish "finish" "sneaky-finish" Auto finish::Finish,
            Undo "undo" "sneaky-undo" Confirm undo::Undo,
            JobOutput "job_output" "sneaky-jobs" Auto jobs::JobOutput,
            JobInput "job_input" "sneaky-input" Confirm input::JobInput,
        }
    };
}
pub(crate) use tool_list;

/// The catalog half of the list: the enum, `ALL` and the name, binary and tier of each.
macro_rules! catalog {
    ($($variant:ident $name:literal $binary:literal $tier:ident $module:ident::$tool:ident,)*) => {
        /// Every tool of the contract, in the contract's order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ToolName {
            $($variant,)*
        }

        impl ToolName {
            /// Every tool, in the list's order.
            pub const ALL: [ToolName; [$($name),*].len()] = [$(ToolName::$variant),*];

            const fn entry(self) -> (&'static str, &'static str, Tier) {
                match self {
                    $(ToolName::$variant => ($name, $binary, Tier::$tier),)*
                }
            }
        }
    };
}
tool_list!(catalog);

impl ToolName {
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

/// The place in the list (`ToolName as usize`) of the tool whose binary is `binary`, worked out
/// at compile time: a tool's generated main finds its tool by its own name this way
/// (`env!("CARGO_BIN_NAME")`, see `protocol::tool_main`), and a main named for no tool does not
/// build.
pub const fn binary_index(binary: &str) -> usize {
    let mut i = 0;
    while i < ToolName::ALL.len() {
        if same_str(ToolName::ALL[i].binary(), binary) {
            return i;
        }
        i += 1;
    }
    panic!("not the binary of a tool in catalog::tool_list!")
}

/// `a == b` where a `const fn` needs it.
const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
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
    fn a_binary_name_finds_its_place_in_the_list() {
        for tool in ToolName::ALL {
            assert_eq!(binary_index(tool.binary()), tool as usize, "{tool}");
        }
        assert!(std::panic::catch_unwind(|| binary_index("sneaky-mcp")).is_err());
        assert!(std::panic::catch_unwind(|| binary_index("sneaky-rea")).is_err());
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
                "outline",
                "find_symbol",
                "find_references",
                "repo_map",
                "finish",
                "job_output"
            ]
        );
    }
}
