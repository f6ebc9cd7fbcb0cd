//! Tool definitions for models and hosts, derived from the tools' self-descriptions
//! (`tools::spec`) and their committed schemas, in the shape each consumer expects: OpenAI and
//! Anthropic tool lists for `sneaky-agent`, and MCP tool objects for `sneaky-mcp` (and
//! `sneaky-agent tools --format mcp`). One builder per shape, used by every surface.

use serde_json::{json, Map, Value};

use crate::config::Config;
use crate::permissions::{self, Tier};
use crate::tools::{self, ToolSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenAi,
    Anthropic,
    Mcp,
}

/// The fields of an MCP tool object, which depend on the negotiated protocol version.
#[derive(Debug, Clone, Copy)]
pub struct McpFields {
    /// `title` and `outputSchema` (2025-06-18 and later).
    pub structured: bool,
    /// `annotations` (2025-03-26 and later).
    pub annotations: bool,
}

impl McpFields {
    pub const LATEST: McpFields = McpFields {
        structured: true,
        annotations: true,
    };
}

/// The tools this configuration lets run, in catalog order.
pub fn offered(config: &Config) -> Vec<&'static ToolSpec> {
    tools::all()
        .filter(|spec| permissions::tier(config, spec.name) != Tier::Deny)
        .collect()
}

/// The schema as a parameter list: without the keys that describe the document itself
/// (`$schema`, `title`) and without the description, which goes beside it.
pub fn parameters(spec: &ToolSpec) -> Value {
    let mut schema = spec.schema_value();
    if let Value::Object(map) = &mut schema {
        for key in ["$schema", "title", "description"] {
            map.remove(key);
        }
    }
    schema
}

/// The definitions of `specs` as one JSON document in `format`.
pub fn definitions(specs: &[&ToolSpec], format: Format) -> Value {
    match format {
        Format::OpenAi => specs.iter().map(|spec| openai_tool(spec)).collect(),
        Format::Anthropic => specs.iter().map(|spec| anthropic_tool(spec)).collect(),
        Format::Mcp => {
            let tools: Vec<Value> = specs
                .iter()
                .map(|spec| mcp_tool(spec, McpFields::LATEST))
                .collect();
            json!({ "tools": tools })
        }
    }
}

pub fn openai_tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name(),
            "description": spec.description(),
            "parameters": parameters(spec),
        }
    })
}

pub fn anthropic_tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name(),
        "description": spec.description(),
        "input_schema": parameters(spec),
    })
}

/// One MCP tool object.
pub fn mcp_tool(spec: &ToolSpec, fields: McpFields) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), spec.name().into());
    if fields.structured {
        tool.insert("title".into(), spec.title.into());
    }
    tool.insert("description".into(), spec.description().into());
    tool.insert("inputSchema".into(), spec.schema_value());
    if fields.structured {
        tool.insert("outputSchema".into(), (spec.output_schema)());
    }
    if fields.annotations {
        tool.insert("annotations".into(), mcp_annotations(spec));
    }
    Value::Object(tool)
}

/// MCP's behaviour hints, as the tool states them. `destructiveHint` and `idempotentHint` are
/// only meaningful for tools that change something; for the read tools they are stated anyway
/// (false, true) so that a host never falls back to the protocol's pessimistic defaults.
pub fn mcp_annotations(spec: &ToolSpec) -> Value {
    json!({
        "title": spec.title,
        "readOnlyHint": spec.hints.read_only,
        "destructiveHint": spec.hints.destructive,
        "idempotentHint": spec.hints.idempotent,
        "openWorldHint": false,
    })
}
