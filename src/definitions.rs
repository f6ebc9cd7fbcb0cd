//! Tool definitions for models and hosts, derived from the tools' self-descriptions
//! (`tools::spec`) and their committed schemas, in the shape each consumer expects: OpenAI Chat
//! Completions (plain or strict), OpenAI Responses and Anthropic tool lists for `sneaky-agent`,
//! and MCP tool objects for `sneaky-mcp` (and `sneaky-agent tools --format mcp`). One builder
//! per shape, used by every surface; every format is a JSON array of tools.
//!
//! Strict function calling (OpenAI's Structured Outputs) accepts a subset of JSON Schema: every
//! object closed (`additionalProperties: false`) with every property in `required`, optional
//! ones nullable instead, and no `default`. `strict_parameters` makes that form from the
//! committed schema; the tools read `null` as "not given", so it works end to end.

use serde_json::{json, Map, Value};

use crate::config::Config;
use crate::permissions::{self, Tier};
use crate::tools::{self, ToolSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Chat Completions `tools`: `{"type":"function","function":{name, description, parameters}}`.
    OpenAi,
    /// The same with `strict: true` and strict parameters.
    OpenAiStrict,
    /// Responses API `tools`: `{"type":"function", name, description, parameters, strict}`,
    /// strict (the API's default).
    OpenAiResponses,
    /// Messages API `tools`: `{name, description, input_schema}`.
    Anthropic,
    /// MCP tool objects, as `tools/list` lists them.
    Mcp,
    /// Gemini `functionDeclarations`: `{name, description, parameters}`, the parameters in the
    /// API's single-type Schema dialect (`gemini_parameters`).
    Gemini,
}

/// The fields of an MCP tool object, which depend on the negotiated protocol version.
#[derive(Debug, Clone, Copy)]
pub struct McpFields {
    /// `title` (2025-06-18 and later).
    pub title: bool,
    /// `outputSchema` (2025-06-18 and later; sneaky-mcp leaves it out for hosts that show
    /// `structuredContent` to the model: src/mcp/shape.rs).
    pub output_schema: bool,
    /// `annotations` (2025-03-26 and later).
    pub annotations: bool,
}

impl McpFields {
    pub const LATEST: McpFields = McpFields {
        title: true,
        output_schema: true,
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

/// The definitions of `specs` as one JSON array in `format`.
pub fn definitions(specs: &[&ToolSpec], format: Format) -> Value {
    let tool: fn(&ToolSpec) -> Value = match format {
        Format::OpenAi => openai_tool,
        Format::OpenAiStrict => openai_strict_tool,
        Format::OpenAiResponses => openai_responses_tool,
        Format::Anthropic => anthropic_tool,
        Format::Mcp => |spec| mcp_tool(spec, McpFields::LATEST),
        Format::Gemini => gemini_tool,
    };
    specs.iter().map(|spec| tool(spec)).collect()
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

pub fn openai_strict_tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name(),
            "description": spec.description(),
            "parameters": strict_parameters(spec),
            "strict": true,
        }
    })
}

pub fn openai_responses_tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": spec.name(),
        "description": spec.description(),
        "parameters": strict_parameters(spec),
        "strict": true,
    })
}

pub fn anthropic_tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name(),
        "description": spec.description(),
        "input_schema": parameters(spec),
    })
}

pub fn gemini_tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name(),
        "description": spec.description(),
        "parameters": gemini_parameters(spec),
    })
}

/// The parameter list in the Schema of Gemini's function declarations (an OpenAPI 3.0
/// subset), which takes one type per schema: `["integer", "null"]` becomes `"INTEGER"` with
/// `nullable: true` (the tools read null as not given), several types become `anyOf`, `oneOf`
/// becomes `anyOf`, and `additionalProperties` and `default` (which that dialect refuses or
/// ignores; the descriptions say the defaults) go.
pub fn gemini_parameters(spec: &ToolSpec) -> Value {
    let mut schema = parameters(spec);
    to_gemini(&mut schema);
    schema
}

fn to_gemini(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.shift_remove("default");
    map.shift_remove("additionalProperties");
    if let Some(branches) = map.shift_remove("oneOf") {
        map.insert("anyOf".into(), branches);
    }
    if let Some(value) = map.shift_remove("const") {
        map.insert("enum".into(), Value::Array(vec![value]));
    }
    // Enum values are strings there; null among them is `nullable`.
    let mut nullable = false;
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        let before = values.len();
        values.retain(|v| !v.is_null());
        nullable = values.len() < before;
    }
    if let Some(given) = map.shift_remove("type") {
        let names: Vec<&str> = match &given {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        nullable |= names.contains(&"null");
        let types: Vec<String> = names
            .iter()
            .filter(|name| **name != "null")
            .map(|name| name.to_ascii_uppercase())
            .collect();
        match types.as_slice() {
            [one] => {
                map.insert("type".into(), one.clone().into());
            }
            [] => {}
            several => {
                let branches = several.iter().map(|t| json!({ "type": t })).collect();
                map.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if nullable {
        map.insert("nullable".into(), true.into());
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(to_gemini);
    }
    if let Some(items) = map.get_mut("items") {
        to_gemini(items);
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.iter_mut().for_each(to_gemini);
    }
}

/// The parameter list in the form strict function calling accepts.
pub fn strict_parameters(spec: &ToolSpec) -> Value {
    let mut schema = parameters(spec);
    make_strict(&mut schema);
    schema
}

/// Close every object schema, require all its properties (the optional ones made nullable),
/// drop `default`, and turn `oneOf` into `anyOf` (the only combinator strict mode takes; the
/// branches our schemas make are disjoint, so the two accept the same).
fn make_strict(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.shift_remove("default");
            if let Some(branches) = map.shift_remove("oneOf") {
                map.insert("anyOf".into(), branches);
            }
            let required: Vec<String> = match map.get("required") {
                Some(Value::Array(r)) => r
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                let mut all = Vec::new();
                for (name, property) in properties.iter_mut() {
                    if !required.contains(name) {
                        tools::make_nullable(property);
                    }
                    make_strict(property);
                    all.push(Value::String(name.clone()));
                }
                map.insert("required".into(), Value::Array(all));
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, value) in map.iter_mut() {
                if key != "properties" {
                    make_strict(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(make_strict),
        _ => {}
    }
}

/// One MCP tool object.
pub fn mcp_tool(spec: &ToolSpec, fields: McpFields) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), spec.name().into());
    if fields.title {
        tool.insert("title".into(), spec.title.into());
    }
    tool.insert("description".into(), spec.description().into());
    tool.insert("inputSchema".into(), spec.schema_value());
    if fields.output_schema {
        tool.insert("outputSchema".into(), spec.output_schema());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_form_closes_objects_requires_all_and_drops_defaults() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "x"},
                "mode": {"oneOf": [{"const": "a"}, {"const": "b"}], "description": "how"},
                "inner": {"type": "object", "properties": {"n": {"type": "integer"}},
                          "required": []},
                "default": {"type": "boolean"},
            },
            "required": ["default"],
        });
        make_strict(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": ["string", "null"]},
                    "mode": {"anyOf": [{"anyOf": [{"const": "a"}, {"const": "b"}]},
                                       {"type": "null"}], "description": "how"},
                    "inner": {"type": ["object", "null"],
                              "properties": {"n": {"type": ["integer", "null"]}},
                              "required": ["n"], "additionalProperties": false},
                    "default": {"type": "boolean"},
                },
                "required": ["name", "mode", "inner", "default"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn gemini_form_has_one_type_per_schema() {
        let mut schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "limit": {"type": ["integer", "null"], "minimum": 1, "default": 3},
                "globs": {"type": ["array", "null"], "items": {"type": "string"}, "default": []},
                "either": {"type": ["string", "integer"]},
                "mode": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "order": {"type": ["string", "null"], "enum": ["up", "down", null]},
            },
            "required": ["mode"],
        });
        to_gemini(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "OBJECT",
                "properties": {
                    "limit": {"type": "INTEGER", "nullable": true, "minimum": 1},
                    "globs": {"type": "ARRAY", "nullable": true, "items": {"type": "STRING"}},
                    "either": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
                    "mode": {"anyOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
                    "order": {"type": "STRING", "nullable": true, "enum": ["up", "down"]},
                },
                "required": ["mode"],
            })
        );
    }

    #[test]
    fn every_format_is_an_array_of_every_tool() {
        let specs: Vec<&ToolSpec> = tools::all().collect();
        for format in [
            Format::OpenAi,
            Format::OpenAiStrict,
            Format::OpenAiResponses,
            Format::Anthropic,
            Format::Mcp,
            Format::Gemini,
        ] {
            let doc = definitions(&specs, format);
            assert_eq!(
                doc.as_array().map(Vec::len),
                Some(specs.len()),
                "{format:?}"
            );
        }
    }
}
