//! The tool list an MCP client sees, built from the tool table (`tools::SPECS`) and the active
//! configuration, and the shape of a `tools/call` result.
//!
//! Nothing here names a tool except the behaviour hints that a tool's spec does not carry
//! (destructive, idempotent), so tools added to the table are served without changes here.

use serde_json::{json, Map, Value};

use super::version::Version;
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::policy::{self, Tier};
use crate::protocol::Envelope;
use crate::tools::{ToolSpec, SPECS};

/// Tools of the driver loop that mean nothing to an MCP host.
const DRIVER_ONLY: &[&str] = &["finish"];

/// Whether a tool is offered (listed and callable) under this configuration.
pub fn exposed(spec: &ToolSpec, config: &Config, read_only: bool) -> bool {
    if DRIVER_ONLY.contains(&spec.name) {
        return false;
    }
    match policy::tier(config, spec.name) {
        Tier::Deny => false,
        Tier::Auto => !read_only || spec.read_only,
        Tier::Confirm => !read_only,
    }
}

/// The tool a `tools/call` names, when it is one the server knows at all.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    SPECS
        .iter()
        .find(|s| s.name == name && !DRIVER_ONLY.contains(&s.name))
}

/// Why a known tool is not offered, as the tool error a call to it gets.
pub fn refusal(spec: &ToolSpec, config: &Config) -> Error {
    if policy::tier(config, spec.name) == Tier::Deny {
        return Error::new(
            ErrorKind::ToolDenied,
            format!(
                "{} is denied by the configuration (permissions.deny)",
                spec.name
            ),
        );
    }
    Error::new(
        ErrorKind::ToolDenied,
        format!(
            "{} is not available: sneaky-mcp runs with --read-only, which offers only the \
             auto-approved read tools",
            spec.name
        ),
    )
}

/// The `tools/list` result.
pub fn list(config: &Config, read_only: bool, version: Version) -> Value {
    let tools: Vec<Value> = SPECS
        .iter()
        .filter(|s| exposed(s, config, read_only))
        .map(|s| describe(s, version))
        .collect();
    json!({ "tools": tools })
}

/// One tool definition, with the fields the negotiated protocol version knows.
pub fn describe(spec: &ToolSpec, version: Version) -> Value {
    let input_schema: Value =
        serde_json::from_str(spec.schema).unwrap_or_else(|_| json!({"type": "object"}));
    let description = input_schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or(spec.title)
        .to_string();
    let mut tool = Map::new();
    tool.insert("name".into(), spec.name.into());
    if version.has_structured_output() {
        tool.insert("title".into(), spec.title.into());
    }
    tool.insert("description".into(), description.into());
    tool.insert("inputSchema".into(), input_schema);
    if version.has_structured_output() {
        tool.insert("outputSchema".into(), (spec.output_schema)());
    }
    if version.has_annotations() {
        tool.insert("annotations".into(), annotations(spec));
    }
    Value::Object(tool)
}

/// MCP's behaviour hints. `destructiveHint` and `idempotentHint` are only meaningful for tools
/// that change something; for the read tools they are stated anyway (false, true) so that a
/// host never falls back to the protocol's pessimistic defaults.
pub fn annotations(spec: &ToolSpec) -> Value {
    json!({
        "title": spec.title,
        "readOnlyHint": spec.read_only,
        "destructiveHint": destructive(spec),
        "idempotentHint": idempotent(spec),
        "openWorldHint": false,
    })
}

/// May the tool destroy or overwrite what is there? Creating a directory does not; a tool of
/// unknown effect is assumed to.
fn destructive(spec: &ToolSpec) -> bool {
    if spec.read_only {
        return false;
    }
    !matches!(spec.name, "make_dir")
}

/// Does a second identical call leave the workspace as the first did? Writing the same content
/// again, making an existing directory and deleting a deleted file change nothing more (the
/// repeat may report an error, but has no further effect). A replacement, a patch or a command
/// may act again.
fn idempotent(spec: &ToolSpec) -> bool {
    spec.read_only
        || matches!(
            spec.name,
            "make_dir" | "delete_file" | "write_file" | "finish"
        )
}

/// The `tools/call` result for a tool's outcome: success carries the result object as
/// structured content and as JSON text; failure is a result with `isError`, the error message as
/// text and the failure envelope (code and message) as structured content.
pub fn call_result(tool: &str, outcome: &crate::error::Result<Value>, version: Version) -> Value {
    let (text, structured, is_error) = match outcome {
        Ok(result) => (result.to_string(), result.clone(), false),
        Err(e) => {
            let envelope = Envelope::from_outcome(tool, outcome);
            let structured = serde_json::to_value(&envelope).unwrap_or(Value::Null);
            (e.message.clone(), structured, true)
        }
    };
    let mut result = Map::new();
    result.insert("content".into(), json!([{"type": "text", "text": text}]));
    if version.has_structured_output() {
        result.insert("structuredContent".into(), structured);
    }
    result.insert("isError".into(), is_error.into());
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_tool_has_object_schemas() {
        for spec in SPECS.iter().filter(|s| !DRIVER_ONLY.contains(&s.name)) {
            let tool = describe(spec, Version::LATEST);
            assert_eq!(tool["inputSchema"]["type"], "object", "{}", spec.name);
            assert_eq!(tool["outputSchema"]["type"], "object", "{}", spec.name);
            assert!(tool["description"].as_str().is_some_and(|d| d.len() > 20));
        }
    }

    #[test]
    fn read_only_mode_offers_auto_read_tools_only() {
        let mut config = Config::default();
        config.permissions.confirm = vec!["grep_files".into()];
        config.permissions.deny = vec!["find_files".into()];
        let names = |read_only| -> Vec<String> {
            list(&config, read_only, Version::LATEST)["tools"]
                .as_array()
                .map(|a| a.iter().map(|t| t["name"].to_string()).collect())
                .unwrap_or_default()
        };
        let all = names(false);
        let ro = names(true);
        assert!(all.contains(&"\"grep_files\"".to_string()));
        assert!(!all.contains(&"\"find_files\"".to_string()));
        assert!(!all.contains(&"\"finish\"".to_string()));
        assert!(!ro.contains(&"\"grep_files\"".to_string()));
        assert!(ro.contains(&"\"read_file\"".to_string()));
    }

    #[test]
    fn older_versions_get_older_shapes() {
        let Some(spec) = find("read_file") else {
            panic!("read_file is in the table");
        };
        let old = describe(spec, Version::V2024_11_05);
        assert!(old.get("annotations").is_none() && old.get("outputSchema").is_none());
        let mid = describe(spec, Version::V2025_03_26);
        assert_eq!(mid["annotations"]["readOnlyHint"], true);
        assert!(mid.get("outputSchema").is_none());
    }
}
