//! The process protocol shared by every tool binary: arguments from one JSON object on stdin
//! or from flags → validated arguments → exactly one JSON envelope on stdout → exit status.
//!
//! Exit status: 0 success, 1 the operation failed, 2 bad input, 3 refused. Nothing else is
//! ever written to stdout, a closed stdout pipe is not an error, and a panic becomes an
//! `internal_error` envelope rather than a backtrace.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::Workspace;
use crate::permissions;
use crate::tools::{self, Context, Tool, ToolSpec};

/// The success or failure envelope (CONTRACT.md, "Output").
#[derive(Debug, Serialize)]
pub struct Envelope<'a> {
    pub ok: bool,
    pub tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

#[derive(Debug, Serialize)]
pub struct ErrorBody {
    pub code: &'static str,
    pub message: String,
}

impl<'a> Envelope<'a> {
    pub fn from_outcome(tool: &'a str, outcome: &Result<Value>) -> Envelope<'a> {
        match outcome {
            Ok(result) => Envelope {
                ok: true,
                tool,
                result: Some(result.clone()),
                error: None,
            },
            Err(e) => Envelope {
                ok: false,
                tool,
                result: None,
                error: Some(ErrorBody {
                    code: e.code(),
                    message: e.message.clone(),
                }),
            },
        }
    }
}

/// Open the workspace and load its configuration, as every entry point does.
pub fn open_context(root: Option<PathBuf>, config: Option<PathBuf>) -> Result<Context> {
    let root = match root {
        Some(r) => r,
        None => match std::env::var_os("SNEAKY_ROOT").filter(|v| !v.is_empty()) {
            Some(r) => PathBuf::from(r),
            None => std::env::current_dir().map_err(|e| Error::io("current directory", e))?,
        },
    };
    let mut ws = Workspace::open_root(&root)?;
    let (config, _) = Config::load(config.as_deref(), &mut ws)?;
    Ok(Context { ws, config })
}

/// Entry point of a tool binary: `fn main() -> ExitCode { protocol::main::<ReadFile>() }`.
/// Generic, so that a binary links its own tool and not the others.
pub fn main<T: Tool>() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("sneaky: internal error: {info}");
    }));
    let spec = &ToolSpec::of::<T>();
    let argv: Vec<OsString> = std::env::args_os().collect();
    let (outcome, pretty) = match std::panic::catch_unwind(|| run_process(spec, argv)) {
        Ok(Step::Exit(code)) => return code,
        Ok(Step::Done { outcome, pretty }) => (outcome, pretty),
        Err(_) => (
            Err(Error::new(
                ErrorKind::Internal,
                "the tool panicked; this is a bug in SneakyCode",
            )),
            false,
        ),
    };
    let status = match &outcome {
        Ok(_) => 0,
        Err(e) => e.exit_status(),
    };
    emit(&Envelope::from_outcome(spec.name(), &outcome), pretty);
    ExitCode::from(status as u8)
}

enum Step {
    /// --help, --version or --schema were printed.
    Exit(ExitCode),
    Done {
        outcome: Result<Value>,
        pretty: bool,
    },
}

fn run_process(spec: &ToolSpec, argv: Vec<OsString>) -> Step {
    let schema: Value = serde_json::from_str(spec.schema).unwrap_or(Value::Null);
    let command = build_command(spec, &schema);
    let matches = match command.try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind as K;
            if matches!(e.kind(), K::DisplayHelp | K::DisplayVersion) {
                let _ = e.print();
                return Step::Exit(ExitCode::SUCCESS);
            }
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad flags");
            let message = first.trim_start_matches("error: ").to_string();
            return Step::Done {
                outcome: Err(Error::invalid_args(format!("{message} (see --help)"))),
                pretty: false,
            };
        }
    };
    let pretty = matches.get_flag("pretty");
    if matches.get_flag("schema") {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(spec.schema.as_bytes());
        let _ = out.flush();
        return Step::Exit(ExitCode::SUCCESS);
    }
    match run_with_matches(spec, &schema, &matches, pretty) {
        // Already written (a compact success envelope, straight from the result).
        Ok(None) => Step::Exit(ExitCode::SUCCESS),
        Ok(Some(result)) => Step::Done {
            outcome: Ok(result),
            pretty,
        },
        Err(e) => Step::Done {
            outcome: Err(e),
            pretty,
        },
    }
}

/// Run the call; a compact success envelope is written directly (None), without an
/// intermediate JSON value, so a large result costs its own size once.
fn run_with_matches(
    spec: &ToolSpec,
    schema: &Value,
    matches: &ArgMatches,
    pretty: bool,
) -> Result<Option<Value>> {
    let root = matches.get_one::<PathBuf>("root").cloned();
    let config = matches.get_one::<PathBuf>("config").cloned();
    let ctx = open_context(root, config)?;
    permissions::check_not_denied(&ctx.config, spec.name)?;
    let limit = input_limit(&ctx.config);
    let args = match args_from_flags(spec, schema, matches)? {
        Some(mut args) => {
            if let Some(param) = spec.cli.stdin_param {
                if !args.contains_key(param) && !std::io::stdin().is_terminal() {
                    let text = read_stdin(limit)?;
                    let text = String::from_utf8(text).map_err(|_| {
                        Error::new(
                            ErrorKind::BinaryFile,
                            format!("{param} on stdin is not UTF-8"),
                        )
                    })?;
                    args.insert(param.to_string(), Value::String(text));
                }
            }
            Value::Object(args)
        }
        None => args_from_stdin(limit)?,
    };
    if pretty {
        return tools::call(spec, args, &ctx).map(Some);
    }
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    (spec.write_ok)(args, &ctx, &mut out)?;
    Ok(None)
}

/// Stdin is bounded: a request can hold at most a whole file's content, JSON-escaped.
fn input_limit(config: &Config) -> u64 {
    config.max_file_size_bytes.saturating_mul(4).max(64 * 1024)
}

fn read_stdin(limit: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("reading stdin", e))?;
    if buf.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InputTooLarge,
            format!("stdin is larger than {limit} bytes (4 × max_file_size_bytes)"),
        ));
    }
    Ok(buf)
}

fn args_from_stdin(limit: u64) -> Result<Value> {
    if std::io::stdin().is_terminal() {
        return Ok(Value::Object(Map::new()));
    }
    let bytes = read_stdin(limit)?;
    parse_request(&bytes)
}

/// Parse the JSON request text: one object (empty input means no arguments).
pub fn parse_request(bytes: &[u8]) -> Result<Value> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidJson,
            format!("stdin is not valid JSON: {e}"),
        )
    })?;
    if !value.is_object() {
        return Err(Error::new(
            ErrorKind::InvalidJson,
            "stdin must hold one JSON object with the tool's arguments",
        ));
    }
    Ok(value)
}

/// Write one envelope and a newline; a closed pipe is not an error.
pub fn emit(envelope: &Envelope<'_>, pretty: bool) {
    let text = if pretty {
        serde_json::to_string_pretty(envelope)
    } else {
        serde_json::to_string(envelope)
    };
    let text = text.unwrap_or_else(|e| {
        format!(
            r#"{{"ok":false,"tool":"{}","error":{{"code":"internal_error","message":"serializing the result: {}"}}}}"#,
            envelope.tool,
            e.to_string().replace('"', "'")
        )
    });
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// The schema's properties: (name, json type, description), sorted by name.
pub fn schema_properties(schema: &Value) -> Vec<(String, String, String)> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let ty = match prop.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .find(|t| *t != "null")
                    .unwrap_or("string")
                    .to_string(),
                _ => "string".to_string(),
            };
            let desc = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            (name.clone(), ty, desc)
        })
        .collect()
}

fn flag_name(param: &str) -> String {
    param.replace('_', "-")
}

/// `--root DIR`, as every program takes it; `help` says where the root comes from otherwise.
pub fn root_arg(help: &'static str) -> Arg {
    Arg::new("root")
        .long("root")
        .value_name("DIR")
        .value_parser(clap::value_parser!(PathBuf))
        .help(help)
}

/// `--config FILE`, as every program takes it.
pub fn config_arg() -> Arg {
    Arg::new("config")
        .long("config")
        .value_name("FILE")
        .value_parser(clap::value_parser!(PathBuf))
        .help("Configuration file (else SNEAKY_CONFIG, <root>/sneaky.toml, ~/.config/sneaky/config.toml)")
}

/// The clap command of a tool binary, built from its schema so that flags, help, man pages and
/// completions cannot drift from the JSON interface.
pub fn build_command(spec: &ToolSpec, schema: &Value) -> Command {
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or(spec.title)
        .to_string();
    let about = description.lines().next().unwrap_or("").to_string();
    let mut cmd = Command::new(spec.binary())
        .version(env!("CARGO_PKG_VERSION"))
        .about(about)
        .long_about(description)
        .after_help(
            "Arguments come as one JSON object on stdin, or as the flags above \
             (then stdin is not parsed as JSON).\n\
             Output: one JSON object on stdout, {\"ok\":true,\"tool\":…,\"result\":{…}} or \
             {\"ok\":false,\"tool\":…,\"error\":{\"code\":…,\"message\":…}}.\n\
             Exit status: 0 success, 1 the operation failed, 2 bad input, 3 refused.",
        )
        .arg(root_arg(
            "Workspace root (else SNEAKY_ROOT, else the current directory)",
        ))
        .arg(config_arg())
        .arg(
            Arg::new("pretty")
                .long("pretty")
                .action(ArgAction::SetTrue)
                .help("Pretty-print the JSON result"),
        )
        .arg(
            Arg::new("schema")
                .long("schema")
                .action(ArgAction::SetTrue)
                .help("Print the JSON Schema of the input and exit"),
        );
    for (i, param) in spec.cli.positional.iter().enumerate() {
        cmd = cmd.arg(
            Arg::new(format!("pos:{param}"))
                .index(i + 1)
                .value_name(param.to_uppercase())
                .conflicts_with(*param)
                .help(format!("Same as --{}", flag_name(param))),
        );
    }
    for (name, ty, desc) in schema_properties(schema) {
        let help = desc.lines().next().unwrap_or("").to_string();
        let mut arg = Arg::new(name.clone())
            .long(flag_name(&name))
            .help(help)
            .long_help(desc);
        if let Some((c, _, _)) = spec
            .short
            .iter()
            .find(|(_, p, v)| *p == name && v.is_none())
        {
            arg = arg.short(*c);
        }
        arg = match ty.as_str() {
            "boolean" => arg.action(ArgAction::SetTrue),
            "array" => arg
                .value_name(name.to_uppercase())
                .action(ArgAction::Append)
                .allow_hyphen_values(true),
            "integer" => arg
                .value_name("N")
                .allow_negative_numbers(true)
                .value_parser(clap::value_parser!(i64)),
            _ => arg
                .value_name(name.to_uppercase())
                .allow_hyphen_values(true),
        };
        cmd = cmd.arg(arg);
    }
    for (c, param, value) in spec.short {
        if let Some(value) = value {
            cmd = cmd.arg(
                Arg::new(format!("short:{c}"))
                    .short(*c)
                    .action(ArgAction::SetTrue)
                    .help(format!("Same as --{} {value}", flag_name(param))),
            );
        }
    }
    cmd
}

/// Arguments given as flags or positionals, or None when there were none (then stdin is JSON).
fn args_from_flags(
    spec: &ToolSpec,
    schema: &Value,
    matches: &ArgMatches,
) -> Result<Option<Map<String, Value>>> {
    let mut args = Map::new();
    for (name, ty, _) in schema_properties(schema) {
        let value = match ty.as_str() {
            "boolean" => matches.get_flag(&name).then_some(Value::Bool(true)),
            "integer" => matches.get_one::<i64>(&name).map(|n| Value::from(*n)),
            "array" => matches
                .get_many::<String>(&name)
                .map(|vs| Value::Array(vs.map(|v| Value::String(v.clone())).collect())),
            _ => matches
                .get_one::<String>(&name)
                .map(|s| Value::String(s.clone())),
        };
        if let Some(v) = value {
            args.insert(name, v);
        }
    }
    for (c, param, value) in spec.short {
        if let Some(value) = value {
            if matches.get_flag(&format!("short:{c}")) && !args.contains_key(*param) {
                args.insert(param.to_string(), Value::String(value.to_string()));
            }
        }
    }
    for param in spec.cli.positional {
        if let Some(v) = matches.get_one::<String>(&format!("pos:{param}")) {
            args.insert(param.to_string(), Value::String(v.clone()));
        }
    }
    Ok((!args.is_empty()).then_some(args))
}
