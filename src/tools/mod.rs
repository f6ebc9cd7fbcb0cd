//! The tool table: every tool's LLM name, binary, default tier, command-line shape, schema and
//! entry point, in one place. Binaries, the driver, the MCP server, the generated schemas,
//! man pages and completions all read this table.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::jail::Workspace;
use crate::policy::Tier;

pub mod find;
pub mod finish;
pub mod grep;
pub mod list;
pub mod mkdir;
pub mod patch;
pub mod read;
pub mod replace;
pub mod rm;
pub mod run;
pub mod write;

/// What a tool runs with: the jailed workspace and the active configuration.
pub struct Context {
    pub ws: Workspace,
    pub config: Config,
}

/// The same surface for every tool: its argument type (which is also its schema), its result
/// type, and `run`.
pub trait Tool {
    type Args: DeserializeOwned + JsonSchema;
    type Output: Serialize + JsonSchema;
    fn run(args: Self::Args, ctx: &Context) -> Result<Self::Output>;
}

pub struct ToolSpec {
    /// The name an LLM calls the tool by (CONTRACT.md).
    pub name: &'static str,
    pub binary: &'static str,
    /// A short human title (MCP `title`).
    pub title: &'static str,
    pub default_tier: Tier,
    /// True for tools that never change anything (MCP `readOnlyHint`).
    pub read_only: bool,
    /// Parameters that may also be given positionally, in order.
    pub positional: &'static [&'static str],
    /// With arguments on the command line, stdin's text fills this parameter when not given.
    pub stdin_param: Option<&'static str>,
    /// The committed schema, `schemas/<name>.json`.
    pub schema: &'static str,
    /// The schema generated from the argument type (the source the file is made from).
    pub generate_schema: fn() -> Value,
    /// The schema of the `result` object (MCP `outputSchema`).
    pub output_schema: fn() -> Value,
    /// Validate JSON arguments and run.
    pub run: fn(Value, &Context) -> Result<Value>,
}

/// Every tool of the contract with its binary and default tier, implemented or not.
pub const CONTRACT_TOOLS: [(&str, &str, Tier); 11] = [
    ("read_file", "sneaky-read", Tier::Auto),
    ("list_dir", "sneaky-ls", Tier::Auto),
    ("grep_files", "sneaky-grep", Tier::Auto),
    ("find_files", "sneaky-find", Tier::Auto),
    ("write_file", "sneaky-write", Tier::Confirm),
    ("make_dir", "sneaky-mkdir", Tier::Confirm),
    ("delete_file", "sneaky-rm", Tier::Confirm),
    ("str_replace", "sneaky-replace", Tier::Confirm),
    ("patch_apply", "sneaky-patch", Tier::Confirm),
    ("run_command", "sneaky-run", Tier::Confirm),
    ("finish", "sneaky-finish", Tier::Auto),
];

macro_rules! spec {
    ($tool:ty, $name:literal, $title:literal, read_only = $ro:expr,
     positional = $pos:expr, stdin = $stdin:expr) => {
        ToolSpec {
            name: $name,
            binary: binary_of($name),
            title: $title,
            default_tier: default_tier_of($name),
            read_only: $ro,
            positional: $pos,
            stdin_param: $stdin,
            schema: include_str!(concat!("../../schemas/", $name, ".json")),
            generate_schema: generate_schema::<$tool>,
            output_schema: output_schema::<$tool>,
            run: run_json::<$tool>,
        }
    };
}

pub static SPECS: &[ToolSpec] = &[
    spec!(
        read::ReadFile,
        "read_file",
        "Read file",
        read_only = true,
        positional = &["file_path"],
        stdin = None
    ),
    spec!(
        list::ListDir,
        "list_dir",
        "List directory",
        read_only = true,
        positional = &["directory_path"],
        stdin = None
    ),
    spec!(
        grep::GrepFiles,
        "grep_files",
        "Search file contents",
        read_only = true,
        positional = &["pattern", "path"],
        stdin = None
    ),
    spec!(
        find::FindFiles,
        "find_files",
        "Find files by name",
        read_only = true,
        positional = &["pattern", "path"],
        stdin = None
    ),
    spec!(
        finish::Finish,
        "finish",
        "Finish the task",
        read_only = true,
        positional = &["message"],
        stdin = None
    ),
    spec!(
        write::WriteFile,
        "write_file",
        "Write file",
        read_only = false,
        positional = &["file_path"],
        stdin = Some("content")
    ),
    spec!(
        mkdir::MakeDir,
        "make_dir",
        "Make directory",
        read_only = false,
        positional = &["directory_path"],
        stdin = None
    ),
    spec!(
        rm::DeleteFile,
        "delete_file",
        "Delete file",
        read_only = false,
        positional = &["file_path"],
        stdin = None
    ),
    spec!(
        replace::StrReplace,
        "str_replace",
        "Replace text in a file",
        read_only = false,
        positional = &["file_path"],
        stdin = None
    ),
    spec!(
        patch::PatchApply,
        "patch_apply",
        "Apply a unified diff",
        read_only = false,
        positional = &["file_path"],
        stdin = Some("patch")
    ),
    spec!(
        run::RunCommand,
        "run_command",
        "Run a shell command",
        read_only = false,
        positional = &["command"],
        stdin = None
    ),
];

const fn str_eq(a: &str, b: &str) -> bool {
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

const fn contract_index(name: &str) -> usize {
    let mut i = 0;
    while i < CONTRACT_TOOLS.len() {
        if str_eq(CONTRACT_TOOLS[i].0, name) {
            return i;
        }
        i += 1;
    }
    panic!("tool missing from CONTRACT_TOOLS")
}

const fn binary_of(name: &str) -> &'static str {
    CONTRACT_TOOLS[contract_index(name)].1
}

const fn default_tier_of(name: &str) -> Tier {
    CONTRACT_TOOLS[contract_index(name)].2
}

/// The implemented tool of that LLM name.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Default tier of any contract tool (implemented or not).
pub fn default_tier(name: &str) -> Option<Tier> {
    CONTRACT_TOOLS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, t)| *t)
}

pub fn names() -> Vec<&'static str> {
    CONTRACT_TOOLS.iter().map(|(n, _, _)| *n).collect()
}

/// Deserialize arguments strictly; every message names the offending field.
pub fn parse_args<A: DeserializeOwned>(value: Value) -> Result<A> {
    if !value.is_object() {
        return Err(Error::new(
            ErrorKind::InvalidArgs,
            format!("arguments must be a JSON object, got {}", json_type(&value)),
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let message = if path == "." || path.is_empty() {
            inner
        } else {
            format!("{path}: {inner}")
        };
        Error::invalid_args(message)
    })
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

fn run_json<T: Tool>(args: Value, ctx: &Context) -> Result<Value> {
    let args = parse_args::<T::Args>(args)?;
    let out = T::run(args, ctx)?;
    serde_json::to_value(out)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("serializing the result: {e}")))
}

fn generate_schema<T: Tool>() -> Value {
    let schema = schemars::schema_for!(T::Args);
    schema.to_value()
}

fn output_schema<T: Tool>() -> Value {
    // Results are serialized, never deserialized: the serialize contract makes fields with
    // `skip_serializing_if` optional, as they are on the wire (MCP clients validate this).
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T::Output>()
        .to_value();
    unwrap_descriptions(&mut schema);
    schema
}

/// The generated schema with the tool's name as its title, as committed in `schemas/`.
pub fn schema_file_text(spec: &ToolSpec) -> String {
    let mut schema = (spec.generate_schema)();
    unwrap_descriptions(&mut schema);
    if let Value::Object(map) = &mut schema {
        map.insert("title".into(), Value::String(spec.name.into()));
    }
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Doc comments are wrapped at 100 columns; an LLM reads the prose better unwrapped.
fn unwrap_descriptions(value: &mut Value) {
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

/// Shorten a line for display in results, marking what was cut.
pub fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => {
            let dropped = text.len() - cut;
            format!("{}… [{dropped} more bytes]", &text[..cut])
        }
    }
}

/// Resolve a `max_results`-style argument: default when absent, refused when 0 or over `bound`.
pub fn bounded_max(given: Option<u64>, default: u64, bound: u64) -> Result<u64> {
    match given {
        None => Ok(default),
        Some(0) => Err(Error::invalid_args("max_results: must be at least 1")),
        Some(n) if n > bound => Err(Error::invalid_args(format!("max_results: at most {bound}"))),
        Some(n) => Ok(n),
    }
}
