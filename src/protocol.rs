//! The process protocol shared by every tool binary: arguments from one JSON object on stdin
//! or from flags → validated arguments → exactly one JSON envelope on stdout → exit status.
//!
//! Exit status: 0 success, 1 the operation failed, 2 bad input, 3 refused; and for shell use,
//! `sneaky-run` exits 1 when the command ran but did not succeed, its envelope still `ok:true`
//! (docs/contract.md, "What comes out"). Nothing else is ever written to stdout, a closed
//! stdout pipe is not an error, and a panic becomes an `internal_error` envelope rather than a backtrace.
//! `--format text` prints the same outcome for people instead (`render::human`).
//!
//! Arguments given as flags get errors in the language of flags (`--new-str is required`,
//! did-you-mean for a mistyped flag); JSON arguments get them in the language of JSON.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::{Config, Source};
use crate::discover::{self, Found, Origin};
use crate::error::{ArgFault, Error, ErrorKind, Result};
use crate::fs::jail::{Workspace, CONFIG_FILE_NAME};
use crate::permissions;
use crate::render::human;
use crate::tools::{self, Context, TextRun, Tool, ToolSpec};

/// The success or failure envelope (docs/contract.md, "What comes out").
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
                    message: e.message(),
                }),
            },
        }
    }
}

/// Open the workspace and load its configuration, as every entry point does. Without `root`
/// the workspace is found as `discover` says (SNEAKY_ROOT, workspace_root, project markers).
pub fn open_context(root: Option<PathBuf>, config: Option<PathBuf>) -> Result<Context> {
    let found = match root {
        Some(root) => Found {
            root,
            origin: Origin::Flag,
        },
        None => discover::find_root(None, config.as_deref())?,
    };
    open_found(&found, config)
}

/// Open a root already chosen (by `discover`, or by an MCP client's roots).
pub fn open_found(found: &Found, config: Option<PathBuf>) -> Result<Context> {
    let mut ws = Workspace::open_root(&found.root)?;
    let (config, source) = Config::load(config.as_deref(), &mut ws)?;
    refuse_moved_root(&config, &source, &ws)?;
    Ok(Context { ws, config })
}

/// A project's own `sneaky.toml` may not send the tools elsewhere: `workspace_root` there must
/// name the project itself (a cloned repository cannot point its tools at `~`).
fn refuse_moved_root(config: &Config, source: &Source, ws: &Workspace) -> Result<()> {
    let (Some(wanted), Source::File(file)) = (&config.workspace_root, source) else {
        return Ok(());
    };
    let own = ws.root().join(CONFIG_FILE_NAME);
    if file != &own {
        return Ok(());
    }
    let wanted = discover::resolve_configured(wanted, file);
    if wanted.canonicalize().ok().as_deref() == Some(ws.root()) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::ConfigError,
        format!(
            "{}: workspace_root = {:?}: a project's own sneaky.toml cannot move the workspace \
             (it is {}); set workspace_root in your user configuration, or pass --root",
            own.display(),
            wanted.display().to_string(),
            ws.root().display()
        ),
    ))
}

/// How the outcome is shown: `--format json|text`, `--pretty`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    format: Format,
    pretty: bool,
}

/// The main of a tool's binary, the same in every `bin/<binary>.rs` the generator writes:
/// `PLACE` is the place in the catalog of the tool the binary is named for
/// (`catalog::binary_index(env!("CARGO_BIN_NAME"))`), so the binary links that tool alone.
pub fn tool_main<const PLACE: usize>() -> ExitCode
where
    tools::Listed<PLACE>: tools::ListedTool,
{
    type_main::<<tools::Listed<PLACE> as tools::ListedTool>::Tool>()
}

/// `tool_main` for the tool's type: its binary's own modes first, if it has any (`Tool::MAIN`).
fn type_main<T: Tool>() -> ExitCode {
    match T::MAIN {
        tools::Main::GeneratedWith(modes) => modes(main::<T>),
        tools::Main::Generated | tools::Main::Own => main::<T>(),
    }
}

/// The tool `T`'s part of its binary's main (what is left once its own modes are looked at).
/// Generic, so that a binary links its own tool and not the others.
pub fn main<T: Tool>() -> ExitCode {
    main_with_args::<T>(std::env::args_os().collect())
}

/// [`main`] with the arguments given (a binary that took a hidden flag of its own off them).
pub fn main_with_args<T: Tool>(mut argv: Vec<OsString>) -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("sneaky: internal error: {info}");
    }));
    // A host that ran the call's hooks already says so first (crate::hooks::RAN_FLAG).
    let run_hooks = argv.get(1).map_or(true, |a| a != crate::hooks::RAN_FLAG);
    if !run_hooks {
        argv.remove(1);
    }
    let spec = &ToolSpec::of::<T>();
    let fallback = Shown {
        format: format_in_argv(&argv),
        pretty: false,
    };
    // A success was written as it was made, with its exit status (`Tool::SUCCEEDED` for
    // run_command); what is left to write here is a failure.
    let (error, shown) = match std::panic::catch_unwind(|| run_process(spec, argv, run_hooks)) {
        Ok(Step::Exit(code)) => return code,
        Ok(Step::Failed { error, shown }) => (error, shown),
        Err(_) => (
            Error::new(
                ErrorKind::Internal,
                "the tool panicked; this is a bug in SneakyCode",
            ),
            fallback,
        ),
    };
    let status = u8::try_from(error.exit_status()).unwrap_or(1);
    let outcome = Err(error);
    match shown.format {
        Format::Json => emit(&Envelope::from_outcome(spec.name(), &outcome), shown.pretty),
        Format::Text => human::print(&crate::tools::outcome::human_outcome(spec, &outcome)),
    }
    ExitCode::from(status)
}

enum Step {
    /// --help, --version, --schema or the call's result were written.
    Exit(ExitCode),
    Failed {
        error: Error,
        shown: Shown,
    },
}

/// `--format text` (or `--format=text`) among raw arguments, for flags clap could not parse.
fn format_in_argv(argv: &[OsString]) -> Format {
    let mut prev_was_flag = false;
    for arg in argv.iter().skip(1) {
        let arg = arg.to_string_lossy();
        if arg == "--" {
            break;
        }
        if arg == "--format=text" || (prev_was_flag && arg == "text") {
            return Format::Text;
        }
        prev_was_flag = arg == "--format";
    }
    Format::Json
}

fn run_process(spec: &ToolSpec, argv: Vec<OsString>, run_hooks: bool) -> Step {
    let invocation = match plain_invocation(spec, &argv) {
        Some(invocation) => invocation,
        None => match invocation_by_clap(spec, argv) {
            Ok(invocation) => invocation,
            Err(step) => return step,
        },
    };
    let shown = invocation.shown;
    if invocation.schema {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(spec.schema.as_bytes());
        let _ = out.flush();
        return Step::Exit(ExitCode::SUCCESS);
    }
    match run_invocation(spec, invocation, run_hooks) {
        // Already written (a compact success envelope straight from the result, or the text).
        Ok(code) => Step::Exit(code),
        Err(error) => Step::Failed { error, shown },
    }
}

/// What a command line asks for, whichever way it was read.
#[derive(Debug, PartialEq)]
struct Invocation {
    shown: Shown,
    /// `--schema`: print the input's schema instead of running.
    schema: bool,
    root: Option<PathBuf>,
    config: Option<PathBuf>,
    /// The arguments given as flags or positionals; None when there were none (then stdin
    /// holds the JSON arguments).
    flags: Option<Map<String, Value>>,
}

/// The command lines of most calls read without clap: nothing after the program's name (the
/// arguments come as JSON on stdin), or only values for the positional parameters
/// (`sneaky-read src/main.rs`), each with or without `--root DIR` and `--config FILE` (a host
/// names the workspace: `sneaky-run --root DIR true`). Building the clap command from the
/// schema cost more than the rest of a small read (about 0.1 ms of a `sneaky-run` call's
/// start). Anything else (another flag, `--root=DIR`, a flag given twice or without its value,
/// `-`, `--`, a value that is not UTF-8 or that starts with `-`, more values than there are
/// positionals) is None and goes to clap, which reads it or says what is wrong with it;
/// `plain_command_lines_read_as_clap_reads_them` holds the two to one answer.
fn plain_invocation(spec: &ToolSpec, argv: &[OsString]) -> Option<Invocation> {
    let mut root = None;
    let mut config = None;
    let mut values = Vec::new();
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let slot = if arg == "--root" {
            &mut root
        } else if arg == "--config" {
            &mut config
        } else {
            values.push(arg);
            continue;
        };
        // clap takes neither an empty path nor a value that looks like a flag.
        let value = args
            .next()
            .filter(|v| !v.is_empty() && !v.as_encoded_bytes().starts_with(b"-"))?;
        if slot.replace(PathBuf::from(value)).is_some() {
            return None;
        }
    }
    if values.len() > spec.cli.positional.len() {
        return None;
    }
    let mut flags = Map::new();
    for (param, value) in spec.cli.positional.iter().zip(values) {
        let value = value.to_str().filter(|v| !v.starts_with('-'))?;
        flags.insert(param.to_string(), Value::String(value.to_string()));
    }
    Some(Invocation {
        shown: Shown {
            format: Format::Json,
            pretty: false,
        },
        schema: false,
        root,
        config,
        flags: (!flags.is_empty()).then_some(flags),
    })
}

/// Any command line, read by the clap command made from the tool's schema; `--help` and
/// `--version` are answered here, and a command line clap refuses is a failure.
fn invocation_by_clap(
    spec: &ToolSpec,
    argv: Vec<OsString>,
) -> std::result::Result<Invocation, Step> {
    let schema = committed_schema(spec);
    let fallback = Shown {
        format: format_in_argv(&argv),
        pretty: false,
    };
    let command = build_command(spec, &schema);
    let matches = match command.try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind as K;
            if matches!(e.kind(), K::DisplayHelp | K::DisplayVersion) {
                let _ = e.print();
                return Err(Step::Exit(ExitCode::SUCCESS));
            }
            return Err(Step::Failed {
                error: Error::invalid_args(clap_message(&e)),
                shown: fallback,
            });
        }
    };
    Ok(Invocation {
        shown: Shown {
            format: match matches
                .get_one::<String>("output-format")
                .map(String::as_str)
            {
                Some("text") => Format::Text,
                _ => Format::Json,
            },
            pretty: matches.get_flag("pretty"),
        },
        schema: matches.get_flag("schema"),
        root: matches.get_one::<PathBuf>("root").cloned(),
        config: matches.get_one::<PathBuf>("config").cloned(),
        flags: args_from_flags(spec, &schema, &matches),
    })
}

/// The tool's committed input schema as JSON, read when a command line needs clap or a
/// failure is said in flags (Null if it could not be read, which the drift tests rule out).
fn committed_schema(spec: &ToolSpec) -> Value {
    serde_json::from_str(spec.schema).unwrap_or(Value::Null)
}

/// clap's error in one line, with its "did you mean" tip: "unexpected argument '--prety' found;
/// did you mean '--pretty'? (see --help)".
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad flags");
    let mut message = first.trim_start_matches("error: ").to_string();
    for line in lines {
        if let Some(tip) = line.strip_prefix("tip: ") {
            let similar = tip
                .strip_prefix("a similar argument exists: ")
                .or_else(|| tip.strip_prefix("a similar value exists: "));
            match similar {
                Some(name) => message.push_str(&format!("; did you mean {name}?")),
                None => message.push_str(&format!("; {tip}")),
            }
        }
    }
    format!("{message} (see --help)")
}

/// Run the call; a compact success envelope is written directly (None), without an
/// intermediate JSON value, so a large result costs its own size once.
fn run_invocation(spec: &ToolSpec, invocation: Invocation, run_hooks: bool) -> Result<ExitCode> {
    let shown = invocation.shown;
    let ctx = open_context(invocation.root, invocation.config)?;
    permissions::check_not_denied(&ctx.config, spec.name)?;
    let limit = input_limit(&ctx.config);
    let flags = invocation.flags;
    // No arguments at all, typed at a terminal: the person meant flags, not JSON.
    let by_flags = flags.is_some() || std::io::stdin().is_terminal();
    let args = match flags {
        Some(mut args) => {
            check_patch_flag(spec, &args)?;
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
        None => args_from_stdin(spec, limit)?,
    };
    // The success is written straight from the typed result, as JSON or as text; its exit
    // status comes with it (`Tool::SUCCEEDED`: run_command's).
    let paths = crate::fs::suggest::path_args(spec.path_params, &args);
    let outcome = if shown.format == Format::Text {
        call_text(spec, args, &ctx, run_hooks)
    } else {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
        tools::call_writing(spec, args, &ctx, &mut out, shown.pretty, run_hooks)
            .map(|succeeded| ExitCode::from(if succeeded { 0 } else { 1 }))
    };
    match outcome {
        Err(e) if by_flags && speaks_of_arguments(e.kind) => {
            let schema = committed_schema(spec);
            Err(Error::new(e.kind, in_flag_language(spec, &schema, &e)))
        }
        // A path typed relative to the current directory below the root: say which it meant.
        Err(e) if matches!(e.kind, ErrorKind::NotFound | ErrorKind::OutsideWorkspace) => {
            match std::env::current_dir() {
                Ok(cwd) => Err(crate::fs::suggest::relative_to_cwd(
                    e, &ctx.ws, &paths, &cwd,
                )),
                Err(_) => Err(e),
            }
        }
        other => other,
    }
}

/// `--format text`, written while the tool works for a tool that can (`Tool::STREAM_TEXT`):
/// stdout buffered (by line at a terminal, so a person sees results as they come), the note
/// of a cut on stderr; else the finished result's text.
fn call_text(spec: &ToolSpec, args: Value, ctx: &Context, run_hooks: bool) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    // Not the lock: the search threads write through it, and the lock may not cross threads;
    // the stream's own mutex keeps each piece whole.
    let mut out: Box<dyn Write + Send> = if stdout.is_terminal() {
        Box::new(stdout)
    } else {
        Box::new(std::io::BufWriter::with_capacity(64 * 1024, stdout))
    };
    match tools::call_text(spec, args, ctx, &mut *out, run_hooks)? {
        TextRun::Rendered { text, succeeded } => {
            drop(out);
            human::print(&text);
            Ok(ExitCode::from(if succeeded { 0 } else { 1 }))
        }
        TextRun::Streamed(streamed) => {
            drop(out);
            if let Some(note) = human::streamed_note(spec.name, streamed.end, streamed.unit) {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(note.as_bytes());
                let _ = err.flush();
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The failures whose messages talk about the arguments by name (others talk about paths,
/// where a file that happens to be called `old_str` must keep its name).
fn speaks_of_arguments(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::InvalidArgs | ErrorKind::MultipleMatches | ErrorKind::NoMatch
    )
}

/// `--patch change.patch` hands over a file name where the diff's text belongs: a unified diff
/// always has several lines, so a one-line value is a mistake worth naming.
fn check_patch_flag(spec: &ToolSpec, args: &Map<String, Value>) -> Result<()> {
    let Some(Value::String(value)) = args.get("patch") else {
        return Ok(());
    };
    if value.contains('\n') {
        return Ok(());
    }
    let file = spec
        .cli
        .positional
        .first()
        .map(|p| p.to_uppercase())
        .unwrap_or_else(|| "FILE".to_string());
    Err(Error::invalid_args(format!(
        "--patch takes the text of a diff, not a file name ({value:?}); give the diff on \
         stdin instead: {} {file} < {value}",
        spec.binary()
    )))
}

/// A failure about arguments, said in flags: a missing `new_str` is `--new-str is required`, a
/// refused `limit` is `--limit: …`, and a parameter a tool's message names in prose
/// (`set replace_all`) becomes its flag.
pub fn in_flag_language(spec: &ToolSpec, schema: &Value, err: &Error) -> String {
    match err.arg() {
        Some(_) => err.message_with(|fault| fault_in_flags(spec, schema, fault)),
        None => prose_in_flags(schema, &err.message()),
    }
}

fn fault_in_flags(spec: &ToolSpec, schema: &Value, fault: &ArgFault) -> String {
    let flag = |name: &str| format!("--{}", flag_name(name));
    let property = |name: &str| schema.get("properties").and_then(|p| p.get(name));
    match fault {
        ArgFault::Missing { field } if spec.cli.positional.contains(&field.as_str()) => {
            format!("{} (or {}) is required", field.to_uppercase(), flag(field))
        }
        ArgFault::Missing { field } if spec.cli.stdin_param == Some(field.as_str()) => {
            format!("{} is required (or give it on stdin)", flag(field))
        }
        ArgFault::Missing { field } => format!("{} is required", flag(field)),
        ArgFault::Null { field } => format!("{}: is required and must not be null", flag(field)),
        ArgFault::Refused {
            field: Some(field),
            given,
            detail,
        } if property(field).is_some() => {
            // A flag's integer is any i64; serde's words for a negative one name a Rust type.
            let negative = given.as_ref().and_then(Value::as_i64).filter(|n| *n < 0);
            let detail = match negative {
                Some(n) if property(field).is_some_and(is_unsigned) => {
                    format!("invalid value: integer `{n}`, expected a non-negative integer")
                }
                _ => detail.clone(),
            };
            format!("{}: {detail}", flag(field))
        }
        // An unknown argument cannot come from flags (clap refuses it first).
        other => other.describe(),
    }
}

/// An integer property that takes no negative value (`minimum` ≥ 0, as an unsigned Rust type
/// is described in the schemas).
fn is_unsigned(property: &Value) -> bool {
    property
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|m| m >= 0.0)
}

/// A tool's own message about its arguments names them in prose; each becomes its flag.
fn prose_in_flags(schema: &Value, message: &str) -> String {
    let mut out = message.to_string();
    for (name, _, _) in schema_properties(schema) {
        let flag = format!("--{}", flag_name(&name));
        out = out.replace(&format!("`{name}`"), &flag);
        if let Some(rest) = out.strip_prefix(&format!("{name}: ")) {
            out = format!("{flag}: {rest}");
        }
        if name.contains('_') {
            out = replace_word(&out, &name, &flag);
        }
    }
    out
}

/// Replace `word` where it stands alone (not part of a longer name or path).
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let joins = |c: char| c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let before_ok = !matches!(before, Some(c) if joins(c));
        // A word may end a sentence: a '.' after it is punctuation, not part of a path.
        let after_ok = !matches!(after, Some(c) if joins(c) && c != '.');
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { with } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
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

fn args_from_stdin(spec: &ToolSpec, limit: u64) -> Result<Value> {
    if std::io::stdin().is_terminal() {
        return Ok(Value::Object(Map::new()));
    }
    let bytes = read_stdin(limit)?;
    parse_request(&bytes).map_err(|e| match spec.cli.stdin_param {
        Some(param) if e.kind == ErrorKind::InvalidJson && !looks_like_json(&bytes) => {
            let schema = committed_schema(spec);
            Error::new(e.kind, plain_text_hint(spec, &schema, param, &e.message()))
        }
        _ => e,
    })
}

fn looks_like_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| matches!(b, b'{' | b'[' | b'"'))
}

/// `sneaky-patch < change.patch`: plain text on stdin where JSON was expected, because no
/// argument was given on the command line. Say how to hand it over.
fn plain_text_hint(spec: &ToolSpec, schema: &Value, param: &str, message: &str) -> String {
    let binary = spec.binary();
    let only_required = schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.len() == 1 && r[0] == param);
    let wrap = if only_required {
        format!(", or wrap it as JSON: jq -Rs '{{{param}: .}}' < FILE | {binary}")
    } else {
        String::new()
    };
    format!(
        "{message}; without arguments on the command line stdin holds the JSON arguments. To \
         give {param} as plain text on stdin, name the other arguments as flags ({binary} \
         --help){wrap}"
    )
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

/// Where the root comes from without `--root`, for help texts.
pub const ROOT_HELP: &str = "Workspace root (else SNEAKY_ROOT, else workspace_root in the \
     configuration, else the nearest directory at or above the current one holding sneaky.toml \
     or .git)";

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

/// The flags every tool binary takes besides its parameters (README, "The tools").
fn common_args() -> [Arg; 5] {
    [
        root_arg(ROOT_HELP),
        config_arg(),
        Arg::new("output-format")
            .long("format")
            .value_name("FORMAT")
            .value_parser(["json", "text"])
            .default_value("json")
            // Listed in the help text: clap_mangen's list of values does not pass mandoc's lint.
            .hide_possible_values(true)
            .help(
                "json: one JSON envelope (default); text: for people (raw content, \
                 path:line:text, the command's own output, diffs)",
            ),
        Arg::new("pretty")
            .long("pretty")
            .action(ArgAction::SetTrue)
            .help("Pretty-print the JSON result"),
        Arg::new("schema")
            .long("schema")
            .action(ArgAction::SetTrue)
            .help("Print the JSON Schema of the input and exit"),
    ]
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
             Exit status: 0 success, 1 the operation failed, 2 bad input, 3 refused \
             (sneaky-run: 1 also when the command ran but did not succeed).",
        )
        .args(common_args());
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
) -> Option<Map<String, Value>> {
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
    (!args.is_empty()).then_some(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{parse_args, read::ReadArgs, replace::ReplaceArgs, write::WriteArgs};
    use serde_json::json;

    /// The failure of `A`'s arguments in JSON's words and in the flags of tool `tool`.
    fn said<A: serde::de::DeserializeOwned>(tool: &str, args: Value) -> (String, String) {
        let spec = tools::find(tool).expect("a tool");
        let schema: Value = serde_json::from_str(spec.schema).expect("schema");
        let err = parse_args::<A>(args, spec.schema).err().expect("refused");
        (err.message(), in_flag_language(spec, &schema, &err))
    }

    /// What clap reads in `argv` (None when it answers `--help` or refuses the line).
    fn by_clap(spec: &ToolSpec, argv: &[OsString]) -> Option<Invocation> {
        invocation_by_clap(spec, argv.to_vec()).ok()
    }

    #[test]
    fn plain_command_lines_read_as_clap_reads_them() {
        use std::os::unix::ffi::OsStringExt;
        let lines: Vec<Vec<OsString>> = [
            &[][..],
            &["a.rs"],
            &["src/a b.rs", "two"],
            &["a", "b", "c"],
            &["help"],
            &["version"],
            &["ü/ñ.txt"],
            &["a=b"],
            &["+x"],
            &["-"],
            &["--"],
            &[""],
            &["-x"],
            &["-3"],
            &["--pretty"],
            &["--format", "text"],
            &["a.rs", "--pretty"],
            &["a.rs", "--", "-b"],
            &["--root", "/tmp", "a.rs"],
            &["a.rs", "--root", "/tmp"],
            &["--root", "/tmp"],
            &["--config", "c.toml", "--root", "/r", "a", "b"],
            &["--root", "/tmp", "--root", "/x"],
            &["--config", "a.toml", "x", "--config", "b.toml"],
            &["--root"],
            &["a.rs", "--config"],
            &["--root", ""],
            &["--root", "-x"],
            &["--root", "--"],
            &["--root", "--pretty"],
            &["--root=/tmp", "a.rs"],
            &["--root", "/tmp", "--pretty"],
            &["--root", "/tmp", "a", "b", "c", "d"],
            &["--schema"],
        ]
        .iter()
        .map(|line| line.iter().map(OsString::from).collect())
        .chain([vec![OsString::from_vec(b"a\xff.rs".to_vec())]])
        .chain([vec![
            OsString::from("--root"),
            OsString::from_vec(b"/tmp/\xff".to_vec()),
        ]])
        .collect();
        let mut plain = 0;
        for spec in tools::all() {
            for line in &lines {
                let argv: Vec<OsString> = std::iter::once(OsString::from(spec.binary()))
                    .chain(line.iter().cloned())
                    .collect();
                let Some(fast) = plain_invocation(spec, &argv) else {
                    continue;
                };
                plain += 1;
                assert_eq!(
                    Some(fast),
                    by_clap(spec, &argv),
                    "{} {line:?}",
                    spec.binary()
                );
            }
        }
        // Most calls take the plain way: JSON on stdin, or positional values only, with or
        // without the workspace named.
        let read = tools::find("read_file").expect("read_file");
        for line in [
            &["sneaky-read"][..],
            &["sneaky-read", "a.rs"],
            &["sneaky-read", "--root", "/w", "a.rs"],
            &["sneaky-read", "--config", "/c.toml", "--root", "/w"],
        ] {
            let argv: Vec<OsString> = line.iter().map(OsString::from).collect();
            assert!(plain_invocation(read, &argv).is_some(), "{line:?}");
        }
        assert!(plain >= tools::all().count() * 2, "{plain}");
    }

    #[test]
    fn argument_faults_are_said_in_flags() {
        let (json, flags) =
            said::<ReplaceArgs>("str_replace", json!({"file_path": "f", "old_str": "a"}));
        assert_eq!(json, "missing field `new_str`");
        assert_eq!(flags, "--new-str is required");
        let (_, flags) = said::<ReadArgs>("read_file", json!({}));
        assert_eq!(flags, "FILE_PATH (or --file-path) is required");
        let (_, flags) = said::<WriteArgs>("write_file", json!({"file_path": "f"}));
        assert_eq!(flags, "--content is required (or give it on stdin)");
        let (json, flags) = said::<ReplaceArgs>(
            "str_replace",
            json!({"file_path": "f", "old_str": "a", "new_str": null}),
        );
        assert_eq!(json, "new_str: is required and must not be null");
        assert_eq!(flags, "--new-str: is required and must not be null");
        let (json, flags) = said::<ReadArgs>("read_file", json!({"file_path": "f", "limit": -3}));
        assert_eq!(json, "limit: invalid value: integer `-3`, expected u64");
        assert_eq!(
            flags,
            "--limit: invalid value: integer `-3`, expected a non-negative integer"
        );
    }

    #[test]
    fn a_tools_prose_names_flags() {
        let spec = tools::find("str_replace").expect("a tool");
        let schema: Value = serde_json::from_str(spec.schema).expect("schema");
        let err = Error::new(
            ErrorKind::MultipleMatches,
            "old_str occurs 2 times in src/old_str.rs; set replace_all, or see `new_str`.",
        );
        assert_eq!(
            in_flag_language(spec, &schema, &err),
            "--old-str occurs 2 times in src/old_str.rs; set --replace-all, or see --new-str."
        );
        let err = Error::invalid_args("file_path: must name a file");
        assert_eq!(
            in_flag_language(spec, &schema, &err),
            "--file-path: must name a file"
        );
    }
}
