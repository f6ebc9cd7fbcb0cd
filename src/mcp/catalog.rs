//! The tool list an MCP client sees, built from the tools' self-descriptions and the active
//! configuration, and the shape of a `tools/call` result. Nothing here names a tool, so tools
//! added to the catalog are served without changes here.

use serde_json::{json, Map, Value};

use super::version::Version;
use crate::catalog::ToolName;
use crate::config::Config;
use crate::definitions::{self, McpFields};
use crate::error::{Error, ErrorKind};
use crate::permissions::{self, Tier};
use crate::render::model;
use crate::tools::{self, ToolSpec};

/// Whether a tool is offered (listed and callable) under this configuration.
pub fn exposed(spec: &ToolSpec, config: &Config, read_only: bool) -> bool {
    if spec.hints.ends_session {
        return false;
    }
    match permissions::tier(config, spec.name) {
        Tier::Deny => false,
        Tier::Auto => !read_only || spec.hints.read_only,
        Tier::Confirm => !read_only,
    }
}

/// The tool a `tools/call` names, when it is one the server knows at all.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    tools::find(name).filter(|spec| !spec.hints.ends_session)
}

/// Why a known tool is not offered, as the tool error a call to it gets.
pub fn refusal(spec: &ToolSpec, config: &Config) -> Error {
    if permissions::tier(config, spec.name) == Tier::Deny {
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
    let tools: Vec<Value> = tools::all()
        .filter(|s| exposed(s, config, read_only))
        .map(|s| describe(s, version))
        .collect();
    json!({ "tools": tools })
}

/// One tool definition, with the fields the negotiated protocol version knows.
pub fn describe(spec: &ToolSpec, version: Version) -> Value {
    definitions::mcp_tool(
        spec,
        McpFields {
            structured: version.has_structured_output(),
            annotations: version.has_annotations(),
        },
    )
}

/// The `tools/call` result for a tool's outcome. Its text is what the model reads
/// (`render::model`): the result written for a model, or `CODE: message` for a failure. A
/// success also carries the result object as `structuredContent` (described by `outputSchema`);
/// a failure is `isError: true` with no `structuredContent`, because hosts validate
/// `structuredContent` against `outputSchema` even on errors (the TypeScript SDK does, and
/// throws on a mismatch).
pub fn call_result(tool: &str, outcome: crate::error::Result<Value>, version: Version) -> Value {
    let text = match (ToolName::from_name(tool), &outcome) {
        (Some(name), _) => crate::tools::outcome::model_outcome(name, &outcome),
        (None, Ok(result)) => result.to_string(),
        (None, Err(e)) => model::error_text(e.code(), &e.message()),
    };
    let mut result = Map::new();
    let mut content = vec![json!({"type": "text", "text": text})];
    if let Some(image) = outcome.as_ref().ok().and_then(image_block) {
        content.push(image);
    }
    result.insert("content".into(), Value::Array(content));
    let failed = outcome.is_err();
    if let (Ok(structured), true) = (outcome, version.has_structured_output()) {
        // Moved, not copied: a file's content is only in the answer once more.
        result.insert("structuredContent".into(), structured);
    }
    result.insert("isError".into(), failed.into());
    Value::Object(result)
}

/// An `image` content block (`data` in base64, `mimeType`) for a read_file result that holds
/// an image, so that the host shows it to the model; the text beside it says what it is.
fn image_block(result: &Value) -> Option<Value> {
    if result.get("encoding")?.as_str()? != "base64" {
        return None;
    }
    let mime = result.get("mime_type")?.as_str()?;
    crate::media::ImageKind::from_mime_type(mime)?;
    Some(json!({"type": "image", "data": result.get("content")?, "mimeType": mime}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_tool_has_object_schemas() {
        for spec in tools::all().filter(|s| !s.hints.ends_session) {
            let tool = describe(spec, Version::LATEST);
            assert_eq!(tool["inputSchema"]["type"], "object", "{}", spec.name);
            assert_eq!(tool["outputSchema"]["type"], "object", "{}", spec.name);
            assert!(tool["description"].as_str().is_some_and(|d| d.len() > 20));
        }
    }

    #[test]
    fn read_only_mode_offers_auto_read_tools_only() {
        let mut config = Config::default();
        config.permissions.confirm = vec![ToolName::GrepFiles];
        config.permissions.deny = vec![ToolName::FindFiles];
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
    fn failures_are_code_and_message_without_structured_content() {
        let failed = Err(Error::new(ErrorKind::NotFound, "a.txt does not exist"));
        for version in [Version::LATEST, Version::V2024_11_05] {
            let result = call_result("read_file", failed.clone(), version);
            assert_eq!(
                result,
                json!({"content": [{"type": "text", "text": "not_found: a.txt does not exist"}],
                       "isError": true})
            );
        }
        let ok = Ok(json!({"path": "a.txt", "content": "a\n", "total_lines": 1,
                           "start_line": 1, "end_line": 1, "truncated": false}));
        let result = call_result("read_file", ok.clone(), Version::LATEST);
        assert_eq!(result["content"][0]["text"], "a.txt (lines 1-1 of 1)\na\n");
        assert_eq!(result["structuredContent"]["content"], "a\n");
        assert_eq!(result["isError"], false);
        let old = call_result("read_file", ok, Version::V2024_11_05);
        assert!(old.get("structuredContent").is_none());
    }

    #[test]
    fn an_image_is_an_image_block_beside_the_text() {
        let ok = Ok(
            json!({"path": "a.png", "content": "iVBORw0KGgo=", "total_lines": 0,
                           "start_line": 1, "end_line": 0, "truncated": false,
                           "encoding": "base64", "mime_type": "image/png", "width": 2,
                           "height": 1, "original_width": 2, "original_height": 1}),
        );
        for version in [Version::LATEST, Version::V2024_11_05] {
            let result = call_result("read_file", ok.clone(), version);
            assert_eq!(
                result["content"],
                json!([{"type": "text", "text": "a.png (PNG image, 2x1 pixels)"},
                       {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
            );
        }
        let text = Ok(json!({"path": "a.txt", "content": "a\n", "total_lines": 1,
                             "start_line": 1, "end_line": 1, "truncated": false}));
        let result = call_result("read_file", text, Version::LATEST);
        assert_eq!(result["content"].as_array().map(Vec::len), Some(1));
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
