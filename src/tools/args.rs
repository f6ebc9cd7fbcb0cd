//! A tool's arguments read from JSON: strictly, `null` for an optional one meaning "not given",
//! and every failure naming the argument at fault (`ArgFault`), found from the committed schema
//! only when the arguments fail, so that a tool binary does not link schemars' generator.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

use crate::error::{ArgFault, Error, Result};

/// Deserialize arguments strictly; every failure names the argument at fault (`ArgFault`). A
/// property given as `null` counts as not given, so hosts whose strict schemas make every
/// optional argument nullable (OpenAI strict function calling) can send `null` for "use the
/// default"; a required one given as `null` is refused as such, and an unknown one stays refused,
/// null or not. `schema` is the arguments' committed schema (`Tool::SCHEMA`), read only when
/// the arguments fail, for which properties there are and which are required: a tool binary
/// does not link schemars' generator for that.
pub fn parse_args<A: DeserializeOwned>(value: Value, schema: &str) -> Result<A> {
    let Value::Object(mut map) = value else {
        return Err(Error::invalid_args(format!(
            "arguments must be a JSON object, got {}",
            json_type(&value)
        )));
    };
    // Most calls are well formed: the arguments' shape is looked at only when this fails.
    if let Ok(args) = A::deserialize(&map) {
        return Ok(args);
    }
    let shape = ArgShape::of(schema);
    // `Option` fields take null as None already; a defaulted field refuses it, so every
    // optional null goes and the defaults apply.
    map.retain(|name, v| !(v.is_null() && shape.is_optional(name)));
    let error = match serde_path_to_error::deserialize(&map) {
        Ok(args) => return Ok(args),
        Err(e) => e,
    };
    let mut segments = error.path().iter();
    let top = match (segments.next(), segments.next()) {
        (Some(Segment::Map { key }), None) => Some(key.clone()),
        _ => None,
    };
    let place = error.path().to_string();
    let detail = error.into_inner().to_string();
    let fault = match top {
        Some(field) if map.get(&field).is_some_and(Value::is_null) && shape.is_required(&field) => {
            ArgFault::Null { field }
        }
        Some(field) if !shape.has(&field) => ArgFault::Unknown { field, detail },
        Some(field) => ArgFault::Refused {
            given: map.get(&field).cloned(),
            field: Some(field),
            detail,
        },
        // About the arguments as a whole: serde refuses an unknown name while it reads the
        // object, and only then counts what is missing.
        None if place == "." => match map.keys().find(|name| !shape.has(name)) {
            Some(field) => ArgFault::Unknown {
                field: field.clone(),
                detail,
            },
            None => match shape.required.iter().find(|name| !map.contains_key(*name)) {
                Some(field) => ArgFault::Missing {
                    field: field.clone(),
                },
                None => ArgFault::Refused {
                    field: None,
                    given: None,
                    detail,
                },
            },
        },
        None => ArgFault::Refused {
            field: Some(place),
            given: None,
            detail,
        },
    };
    Err(Error::bad_arg(fault))
}

/// The properties of an argument type and which of them are required, from its schema.
struct ArgShape {
    properties: Vec<String>,
    /// In the order the type declares them (the order serde reports them missing).
    required: Vec<String>,
}

impl ArgShape {
    fn of(schema: &str) -> ArgShape {
        let schema: Value = serde_json::from_str(schema).unwrap_or(Value::Null);
        let names = |key: &str| -> Vec<String> {
            match schema.get(key) {
                Some(Value::Object(map)) => map.keys().cloned().collect(),
                Some(Value::Array(list)) => list
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let properties = names("properties");
        let listed = names("required");
        let required = properties
            .iter()
            .filter(|p| listed.contains(p))
            .cloned()
            .collect();
        ArgShape {
            properties,
            required,
        }
    }

    fn has(&self, name: &str) -> bool {
        self.properties.iter().any(|p| p == name)
    }

    fn is_required(&self, name: &str) -> bool {
        self.required.iter().any(|p| p == name)
    }

    fn is_optional(&self, name: &str) -> bool {
        self.has(name) && !self.is_required(name)
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use schemars::JsonSchema;
    use serde_json::json;

    #[derive(Debug, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        name: String,
        #[serde(default = "dot")]
        path: String,
        #[serde(default)]
        limit: Option<u64>,
        #[serde(default)]
        tags: Vec<String>,
        other: u64,
    }

    fn dot() -> String {
        ".".into()
    }

    /// `Sample`'s schema, as a tool's committed one is made.
    fn sample_schema() -> String {
        schemars::schema_for!(Sample).to_value().to_string()
    }

    fn fault(args: Value) -> ArgFault {
        let e = parse_args::<Sample>(args, &sample_schema()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        let fault = e.arg().cloned().expect("an argument fault");
        assert_eq!(e.message(), fault.describe());
        fault
    }

    #[test]
    fn null_means_not_given() {
        let s: Sample = parse_args(
            json!({"name": "a", "path": null, "limit": null, "tags": null, "other": 1}),
            &sample_schema(),
        )
        .unwrap();
        assert_eq!(
            (
                s.name.as_str(),
                s.path.as_str(),
                s.limit,
                s.tags.len(),
                s.other
            ),
            ("a", ".", None, 0, 1)
        );
    }

    #[test]
    fn a_required_argument_given_as_null_is_named() {
        let f = fault(json!({"name": null, "other": 1}));
        assert_eq!(
            f,
            ArgFault::Null {
                field: "name".into()
            }
        );
        assert_eq!(f.describe(), "name: is required and must not be null");
        // Null for an optional one is fine even then: the required one is the fault.
        let f = fault(json!({"path": null, "other": null, "name": "a"}));
        assert_eq!(
            f,
            ArgFault::Null {
                field: "other".into()
            }
        );
    }

    #[test]
    fn a_missing_argument_is_named_in_declaration_order() {
        let f = fault(json!({"path": "x"}));
        assert_eq!(
            f,
            ArgFault::Missing {
                field: "name".into()
            }
        );
        assert_eq!(f.describe(), "missing field `name`");
        let f = fault(json!({"name": "a", "limit": null}));
        assert_eq!(
            f,
            ArgFault::Missing {
                field: "other".into()
            }
        );
        // A value of the wrong type is found first, as serde reads the object.
        let f = fault(json!({"name": 5}));
        assert_eq!(f.field(), Some("name"));
        assert!(matches!(f, ArgFault::Refused { .. }), "{f:?}");
    }

    #[test]
    fn unknown_arguments_stay_refused_null_or_not() {
        for extra in [json!(null), json!(3)] {
            let f = fault(json!({"name": "a", "other": 1, "extra": extra}));
            let ArgFault::Unknown { field, .. } = &f else {
                panic!("{f:?}");
            };
            assert_eq!(field, "extra");
            let message = f.describe();
            assert!(
                message.starts_with("extra: unknown field `extra`"),
                "{message}"
            );
            assert!(message.contains("`name`"), "{message}");
        }
    }

    #[test]
    fn a_wrong_value_names_its_argument() {
        let f = fault(json!({"name": "a", "other": 1, "limit": -3}));
        let ArgFault::Refused {
            field,
            given,
            detail,
        } = &f
        else {
            panic!("{f:?}");
        };
        assert_eq!((field.as_deref(), given), (Some("limit"), &Some(json!(-3))));
        assert!(detail.contains("-3"), "{detail}");
        assert!(f.describe().starts_with("limit: "), "{}", f.describe());
        // Inside an argument: the place is named, the value is not the whole argument's.
        let f = fault(json!({"name": "a", "other": 1, "tags": ["x", 4]}));
        assert!(
            matches!(&f, ArgFault::Refused { field: Some(p), given: None, .. } if p == "tags[1]"),
            "{f:?}"
        );
        let e = parse_args::<Sample>(json!(["a"]), &sample_schema()).unwrap_err();
        assert_eq!(e.message(), "arguments must be a JSON object, got an array");
    }
}
