//! The two shapes of the tools a session is served, settled at `initialize`.
//!
//! - **Structured** (protocol 2025-06-18 and later): `tools/list` declares each tool's
//!   `outputSchema`, and a successful result carries the tool's JSON `result` as
//!   `structuredContent` beside the text written for the model. The official SDK clients
//!   (TypeScript `Client.callTool`, Python `call_tool`) require that `structuredContent` once an
//!   `outputSchema` is declared, and programs built on them read it.
//! - **Text only**: no `outputSchema`, and results carry only content blocks (the text, and an
//!   image block for an image). For hosts that hand the model a result's `structuredContent` as
//!   JSON in place of its text, and with it an image's base64 as text: Codex CLI and Claude Code
//!   (tests/agents/hosts_test.mjs runs them against a mock model). Through them the model would
//!   read run_command's 49 characters as 730 and a 400 x 300 PNG as 480,841 characters of base64.
//!
//! Which shape a client gets: `--structured-content on|off` when given, else text only for the
//! clients in [`SHOWS_STRUCTURED`] (by `clientInfo.name`) and structured for every other.

use super::version::Version;

/// The `clientInfo.name` of the hosts that show the model `structuredContent` as JSON instead of
/// the text content: Codex CLI (and the Codex IDE extensions, which run the same core) and
/// Claude Code. tests/agents/hosts_test.mjs checks that the real hosts still send these names.
pub const SHOWS_STRUCTURED: &[&str] = &["codex-mcp-client", "claude-code"];

/// `--structured-content`: who decides whether results carry `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StructuredChoice {
    /// By the client's name (the default).
    #[default]
    ByClient,
    /// Always (as far as the protocol version has it).
    On,
    /// Never: every client gets text only.
    Off,
}

impl StructuredChoice {
    /// The flag's value (`on`, `off`); None for another word.
    pub fn parse(word: &str) -> Option<StructuredChoice> {
        match word {
            "on" => Some(StructuredChoice::On),
            "off" => Some(StructuredChoice::Off),
            _ => None,
        }
    }
}

/// What a session speaks: its protocol version and the shape of its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    pub version: Version,
    /// The structured shape was chosen (it is served when the version has structured output).
    structured: bool,
}

impl Dialect {
    /// The dialect of a session whose client proposed `version` and named itself `client`.
    pub fn new(version: Version, choice: StructuredChoice, client: Option<&str>) -> Dialect {
        let structured = match choice {
            StructuredChoice::On => true,
            StructuredChoice::Off => false,
            StructuredChoice::ByClient => !client.is_some_and(|c| SHOWS_STRUCTURED.contains(&c)),
        };
        Dialect {
            version,
            structured,
        }
    }

    /// Before `initialize` (a client that skips it gets the latest version's shape).
    pub fn before_initialize(choice: StructuredChoice) -> Dialect {
        Dialect::new(Version::LATEST, choice, None)
    }

    /// Whether tools declare `outputSchema` and results carry `structuredContent`.
    pub fn structured_output(self) -> bool {
        self.structured && self.version.has_structured_output()
    }

    /// How the log names the shape.
    pub fn describe(self) -> &'static str {
        if self.structured_output() {
            "results with structuredContent"
        } else {
            "results as content blocks only"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_that_show_structured_content_get_text_only() {
        let by_client = |name| Dialect::new(Version::LATEST, StructuredChoice::ByClient, name);
        assert!(!by_client(Some("codex-mcp-client")).structured_output());
        assert!(!by_client(Some("claude-code")).structured_output());
        assert!(by_client(Some("opencode")).structured_output());
        assert!(by_client(Some("mcp")).structured_output());
        assert!(by_client(None).structured_output());
        // The flag overrides the name, both ways.
        let on = Dialect::new(Version::LATEST, StructuredChoice::On, Some("claude-code"));
        assert!(on.structured_output());
        let off = Dialect::new(Version::LATEST, StructuredChoice::Off, Some("opencode"));
        assert!(!off.structured_output());
        // Versions before 2025-06-18 have no structured output whatever the choice.
        let old = Dialect::new(Version::V2025_03_26, StructuredChoice::On, None);
        assert!(!old.structured_output());
    }
}
