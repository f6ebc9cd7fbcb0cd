//! The schemas of a tool's arguments and result, generated from their types with schemars as
//! the committed `schemas/` are made (and the drift tests compare): standard JSON Schema only,
//! every optional argument nullable, descriptions unwrapped for a model to read. Only the code
//! that regenerates or checks `schemas/` reaches this; the binaries read the committed files.

use schemars::JsonSchema;
use serde_json::Value;

pub(super) fn generate_schema<A: JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(A).to_value();
    standard_keywords(&mut schema);
    nullable_optionals(&mut schema);
    schema
}

/// Make every optional property of an argument schema accept `null`, as `parse_args` does
/// ("not given"): the schema and the parser then agree, and strict hosts can send null.
fn nullable_optionals(schema: &mut Value) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if !required.contains(name) {
            make_nullable(property);
        }
    }
}

/// Add `null` to what a schema accepts: to its `type` when it has one (and to its `enum`, which
/// would refuse it otherwise), else as an `anyOf` branch.
pub fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if map.contains_key("type") {
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
    }
    match map.get_mut("type") {
        Some(Value::String(ty)) if ty != "null" => {
            let ty = std::mem::take(ty);
            map.insert("type".into(), serde_json::json!([ty, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push("null".into());
            }
        }
        Some(_) => {}
        None => {
            let null_branch = serde_json::json!({"type": "null"});
            if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
                if !branches.contains(&null_branch) {
                    branches.push(null_branch);
                }
                return;
            }
            // The schema becomes the first branch; its description stays outside, once.
            let description = map.shift_remove("description");
            let inner = Value::Object(std::mem::take(map));
            map.insert("anyOf".into(), Value::Array(vec![inner, null_branch]));
            if let Some(description) = description {
                map.insert("description".into(), description);
            }
        }
    }
}

pub(super) fn output_schema<O: JsonSchema>() -> Value {
    // Results are serialized, never deserialized: the serialize contract makes fields with
    // `skip_serializing_if` optional, as they are on the wire (MCP clients validate this).
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<O>()
        .to_value();
    unwrap_descriptions(&mut schema);
    standard_keywords(&mut schema);
    schema
}

/// The formats JSON Schema 2020-12 defines; validators refuse or warn about any other.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The range of schemars' integer formats (`uint64`, `int32` …), which are not JSON Schema's:
/// stated as `minimum`/`maximum` instead. 64-bit bounds are left out (no JSON number a model
/// writes reaches them, and 20-digit limits only cost tokens).
fn integer_format_range(format: &str) -> Option<(Option<i64>, Option<i64>)> {
    Some(match format {
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "uint" | "uint64" | "uint128" => (Some(0), None),
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "int" | "int64" | "int128" => (None, None),
        _ => return None,
    })
}

/// Standard JSON Schema only, as hosts validate it (ajv in strict mode refuses unknown
/// formats): schemars' integer formats become `minimum`/`maximum` (a bound the type already
/// states is kept when tighter), other unknown formats are dropped, and so is `"default": null`
/// (an optional property's absence already says it).
fn standard_keywords(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let format = map
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(format) = format.filter(|f| !STANDARD_FORMATS.contains(&f.as_str())) {
                map.shift_remove("format");
                if let Some((min, max)) = integer_format_range(&format) {
                    tighten(map, "minimum", min, |old, new| new > old);
                    tighten(map, "maximum", max, |old, new| new < old);
                }
            }
            if map.get("default") == Some(&Value::Null) {
                map.shift_remove("default");
            }
            map.values_mut().for_each(standard_keywords);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_keywords),
        _ => {}
    }
}

/// Set `key` to `bound` unless the schema already has a bound at least as tight.
fn tighten(
    map: &mut serde_json::Map<String, Value>,
    key: &str,
    bound: Option<i64>,
    tighter: fn(f64, f64) -> bool,
) {
    let Some(bound) = bound else { return };
    let keep = match map.get(key).and_then(Value::as_f64) {
        Some(old) => !tighter(old, bound as f64),
        None => false,
    };
    if !keep {
        map.insert(key.into(), bound.into());
    }
}

/// Doc comments are wrapped at 100 columns; an LLM reads the prose better unwrapped.
pub(super) fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "description" {
                    if let Value::String(s) = v {
                        *s = s
                            .split("\n\n")
                            .map(|para| {
                                para.split('\n')
                                    .map(str::trim)
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            })
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                } else {
                    unwrap_descriptions(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_formats_become_bounds() {
        let mut schema = json!({"properties": {
            "a": {"type": ["integer", "null"], "format": "uint64", "minimum": 1, "default": null},
            "b": {"type": "integer", "format": "int32"},
            "c": {"type": "integer", "format": "uint8", "maximum": 20},
            "d": {"type": "string", "format": "date-time"},
            "format": {"type": "string"},
        }});
        standard_keywords(&mut schema);
        let mut mode = json!({"type": "string", "enum": ["a", "b"]});
        make_nullable(&mut mode);
        assert_eq!(
            mode,
            json!({"type": ["string", "null"], "enum": ["a", "b", null]})
        );
        assert_eq!(
            schema["properties"],
            json!({
                "a": {"type": ["integer", "null"], "minimum": 1},
                "b": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                "c": {"type": "integer", "maximum": 20, "minimum": 0},
                "d": {"type": "string", "format": "date-time"},
                "format": {"type": "string"},
            })
        );
    }
}
