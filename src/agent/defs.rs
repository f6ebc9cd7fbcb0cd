//! Tool definitions for the model, generated from the tool table (`SPECS`) and its committed
//! schemas, in the shape each API expects. Only tools the configuration does not deny are
//! offered: a model cannot be tempted by a tool it may not use.

use serde_json::{json, Map, Value};

use crate::config::Config;
use crate::policy::{self, Tier};
use crate::tools::{ToolSpec, SPECS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenAi,
    Anthropic,
    Mcp,
}

/// The implemented tools this configuration lets run, in table order.
pub fn offered(config: &Config) -> Vec<&'static ToolSpec> {
    SPECS
        .iter()
        .filter(|spec| policy::tier(config, spec.name) != Tier::Deny)
        .collect()
}

/// The tool's committed schema (an empty object schema if it could not be read, which the
/// drift test rules out).
pub fn schema(spec: &ToolSpec) -> Value {
    serde_json::from_str(spec.schema).unwrap_or_else(|_| json!({"type": "object"}))
}

/// The schema's top-level description: what the model reads about the tool.
pub fn description(spec: &ToolSpec) -> String {
    schema(spec)
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or(spec.title)
        .to_string()
}

/// The schema as a parameter list: without the keys that describe the document itself
/// (`$schema`, `title`) and without the description, which goes beside it.
pub fn parameters(spec: &ToolSpec) -> Value {
    let mut schema = schema(spec);
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
        Format::OpenAi => Value::Array(
            specs
                .iter()
                .map(|spec| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": spec.name,
                            "description": description(spec),
                            "parameters": parameters(spec),
                        }
                    })
                })
                .collect(),
        ),
        Format::Anthropic => Value::Array(
            specs
                .iter()
                .map(|spec| {
                    json!({
                        "name": spec.name,
                        "description": description(spec),
                        "input_schema": parameters(spec),
                    })
                })
                .collect(),
        ),
        Format::Mcp => {
            let tools = specs
                .iter()
                .map(|spec| {
                    let mut annotations = Map::new();
                    annotations.insert("title".into(), spec.title.into());
                    annotations.insert("readOnlyHint".into(), spec.read_only.into());
                    if !spec.read_only {
                        annotations.insert("destructiveHint".into(), true.into());
                    }
                    annotations.insert("openWorldHint".into(), false.into());
                    json!({
                        "name": spec.name,
                        "title": spec.title,
                        "description": description(spec),
                        "inputSchema": parameters(spec),
                        "annotations": annotations,
                    })
                })
                .collect::<Vec<_>>();
            json!({ "tools": tools })
        }
    }
}
