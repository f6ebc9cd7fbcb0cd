//! The tool list an MCP client sees, built from the tools' self-descriptions and the active
//! configuration, and the shape of a `tools/call` result. Nothing here names a tool, so tools
//! added to the catalog are served without changes here.

use serde_json::{json, Map, Value};

use super::shape::Dialect;
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
pub fn list(config: &Config, read_only: bool, dialect: Dialect) -> Value {
    let tools: Vec<Value> = tools::all()
        .filter(|s| exposed(s, config, read_only))
        .map(|s| describe(s, dialect))
        .collect();
    json!({ "tools": tools })
}

/// One tool definition, with the fields the negotiated protocol version knows; `outputSchema`
/// only in the structured shape (`super::shape`).
pub fn describe(spec: &ToolSpec, dialect: Dialect) -> Value {
    definitions::mcp_tool(
        spec,
        McpFields {
            title: dialect.version.has_structured_output(),
            output_schema: dialect.structured_output(),
            annotations: dialect.version.has_annotations(),
        },
    )
}

/// The `tools/call` result for a tool's outcome. Its text is what the model reads
/// (`render::model`): the result written for a model, or `CODE: message` for a failure; an
/// image read is that text and an image block. In the structured shape a success also carries
/// the result object as `structuredContent` (described by `outputSchema`); a failure is
/// `isError: true` with no `structuredContent` in either shape, because hosts validate
/// `structuredContent` against `outputSchema` even on errors (the TypeScript SDK does, and
/// throws on a mismatch). No content block ever holds an image's base64 as text.
pub fn call_result(tool: &str, outcome: crate::error::Result<Value>, dialect: Dialect) -> Value {
    let text = match (ToolName::from_name(tool), &outcome) {
        (Some(name), _) => crate::tools::outcome::model_outcome(name, &outcome),
        (None, Ok(result)) => result.to_string(),
        (None, Err(e)) => model::error_text(e.code(), &e.message()),
    };
    let mut result = Map::new();
    // The text moved in, not copied as `json!` would.
    let mut block = Map::with_capacity(2);
    block.insert("type".into(), "text".into());
    block.insert("text".into(), Value::String(text));
    let mut content = vec![Value::Object(block)];
    if let Some(image) = outcome.as_ref().ok().and_then(image_block) {
        content.push(image);
    }
    result.insert("content".into(), Value::Array(content));
    let failed = outcome.is_err();
    if let (Ok(structured), true) = (outcome, dialect.structured_output()) {
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
    use crate::mcp::shape::StructuredChoice;
    use crate::mcp::version::Version;

    /// The dialect of a generic client (the structured shape) of that version.
    fn structured(version: Version) -> Dialect {
        Dialect::new(version, StructuredChoice::ByClient, None)
    }

    /// The text-only shape of that version.
    fn text_only(version: Version) -> Dialect {
        Dialect::new(version, StructuredChoice::Off, None)
    }

    #[test]
    fn every_listed_tool_has_object_schemas() {
        for spec in tools::all().filter(|s| !s.hints.ends_session) {
            let tool = describe(spec, structured(Version::LATEST));
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
            list(&config, read_only, structured(Version::LATEST))["tools"]
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
        let dialects = [
            structured(Version::LATEST),
            structured(Version::V2024_11_05),
            text_only(Version::LATEST),
        ];
        for dialect in dialects {
            let result = call_result("read_file", failed.clone(), dialect);
            assert_eq!(
                result,
                json!({"content": [{"type": "text", "text": "not_found: a.txt does not exist"}],
                       "isError": true})
            );
        }
        let ok = Ok(json!({"path": "a.txt", "content": "a\n", "total_lines": 1,
                           "start_line": 1, "end_line": 1, "truncated": false}));
        let result = call_result("read_file", ok.clone(), structured(Version::LATEST));
        assert_eq!(result["content"][0]["text"], "a.txt (lines 1-1 of 1)\na\n");
        assert_eq!(result["structuredContent"]["content"], "a\n");
        assert_eq!(result["isError"], false);
        let old = call_result("read_file", ok.clone(), structured(Version::V2024_11_05));
        assert!(old.get("structuredContent").is_none());
        let text = call_result("read_file", ok, text_only(Version::LATEST));
        assert_eq!(
            text,
            json!({"content": [{"type": "text", "text": "a.txt (lines 1-1 of 1)\na\n"}],
                   "isError": false})
        );
    }

    #[test]
    fn an_image_is_an_image_block_beside_the_text() {
        let ok = Ok(
            json!({"path": "a.png", "content": "iVBORw0KGgo=", "total_lines": 0,
                           "start_line": 1, "end_line": 0, "truncated": false,
                           "encoding": "base64", "mime_type": "image/png", "width": 2,
                           "height": 1, "original_width": 2, "original_height": 1}),
        );
        let dialects = [
            structured(Version::LATEST),
            structured(Version::V2024_11_05),
            text_only(Version::LATEST),
        ];
        for dialect in dialects {
            let result = call_result("read_file", ok.clone(), dialect);
            assert_eq!(
                result["content"],
                json!([{"type": "text", "text": "a.png (PNG image, 2x1 pixels)"},
                       {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}])
            );
        }
        let text = Ok(json!({"path": "a.txt", "content": "a\n", "total_lines": 1,
                             "start_line": 1, "end_line": 1, "truncated": false}));
        let result = call_result("read_file", text, structured(Version::LATEST));
        assert_eq!(result["content"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn older_versions_get_older_shapes() {
        let Some(spec) = find("read_file") else {
            panic!("read_file is in the table");
        };
        let old = describe(spec, structured(Version::V2024_11_05));
        assert!(old.get("annotations").is_none() && old.get("outputSchema").is_none());
        let mid = describe(spec, structured(Version::V2025_03_26));
        assert_eq!(mid["annotations"]["readOnlyHint"], true);
        assert!(mid.get("outputSchema").is_none());
    }

    #[test]
    fn the_text_only_shape_declares_no_output_schema() {
        for spec in tools::all().filter(|s| !s.hints.ends_session) {
            let tool = describe(spec, text_only(Version::LATEST));
            assert!(tool.get("outputSchema").is_none(), "{}", spec.name);
            assert_eq!(tool["inputSchema"]["type"], "object", "{}", spec.name);
            assert_eq!(tool["title"], spec.title, "{}", spec.name);
            assert!(tool["annotations"].is_object(), "{}", spec.name);
        }
    }
}
