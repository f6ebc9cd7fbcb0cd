//! The tools: one module per tool, each describing itself through `Tool` (arguments, result,
//! CLI shape, behaviour hints, man page text), and the one dispatch every surface uses.
//!
//! Beside the tools: `args` reads a tool's arguments from JSON (naming the one at fault),
//! `schema` generates the schemas `schemas/` holds, `outcome` picks a tool's text by name.
//!
//! Adding a tool takes four places written by hand: a module with a `Tool` impl (its `Doc`
//! holds its examples, the calls the tests make among them), its line in `catalog::tool_list!`
//! (with binary and tier), its `pub mod` line below (a test holds those lines to the list), and
//! its row in docs/contract.md's "Results"; its main in `bin/` and its `[[bin]]` are generated,
//! as README.md, "Contributing: adding a tool", says with the rest. Schemas, man pages, completions and the
//! MCP and agent definitions all derive from `spec`.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use crate::catalog::{Tier, ToolName};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::Workspace;

// One module per tool, declared here rather than inside `dispatch!` so that rustfmt and every
// other tool that reads the source sees them (`tools_are_the_listed_modules` below holds this
// list to `catalog::tool_list!` and to the files of src/tools).
pub mod find;
pub mod finish;
pub mod grep;
pub mod input;
pub mod jobs;
pub mod list;
pub mod map;
pub mod mkdir;
pub mod outline;
pub mod patch;
pub mod read;
pub mod refs;
pub mod replace;
pub mod rm;
pub mod run;
pub mod symbol;
pub mod undo;
pub mod write;

/// The dispatch half of the tool list (`catalog::tool_list!`): each tool's description by name,
/// and `by_tool`. A `const` check holds each module's `Tool::NAME` to the list's entry, so a
/// module cannot claim another tool's name.
macro_rules! dispatch {
    ($($variant:ident $name:literal $binary:literal $tier:ident $module:ident::$tool:ident,)*) => {
        $(const _: () = assert!(matches!(<$module::$tool as Tool>::NAME, ToolName::$variant));)*

        /// The description of every tool, by name.
        pub fn spec(name: ToolName) -> &'static ToolSpec {
            match name {
                $(ToolName::$variant => {
                    static SPEC: ToolSpec = ToolSpec::hosted::<$module::$tool>();
                    &SPEC
                })*
            }
        }

        /// The committed schema of a tool's result, `schemas/<name>.output.json` (what the
        /// hosts serve as MCP `outputSchema`; generated from the result type and checked for
        /// drift by the `generated` tests).
        fn committed_output_schema(name: ToolName) -> &'static str {
            match name {
                $(ToolName::$variant => include_str!(concat!("../../schemas/", $name, ".output.json")),)*
            }
        }

        /// `f.call::<T>()` for the tool type `T` of that name. Generic code that needs a tool's
        /// types (the schema generators) is reached this way rather than through fn pointers in
        /// `ToolSpec`, so that nothing but the code that regenerates `schemas/` links schemars'
        /// generator and every type's schema code: the binaries and the hosts read the
        /// committed schemas.
        fn by_tool<F: ForTool>(name: ToolName, f: F) -> F::Out {
            match name {
                $(ToolName::$variant => f.call::<$module::$tool>(),)*
            }
        }

        $(impl ListedTool for Listed<{ ToolName::$variant as usize }> {
            type Tool = $module::$tool;
        })*
    };
}
crate::catalog::tool_list!(dispatch);

pub mod outcome;

// Not tools: how every tool's arguments are read, and how the schemas are generated.
mod args;
mod schema;
pub use args::parse_args;
pub use schema::make_nullable;

/// The tool at a place in the list, as a type: `<Listed<{ ToolName::ReadFile as usize }> as
/// ListedTool>::Tool` is read_file's. A tool's generated main knows its place at compile time
/// (`catalog::binary_index` of its own name) and names its tool's type through this, so that
/// it links that tool alone (`protocol::tool_main`).
pub struct Listed<const PLACE: usize>;

/// See `Listed`; implemented for each place in the list.
pub trait ListedTool {
    type Tool: Tool;
}

/// How a tool's binary starts: its main in `bin/<binary>.rs`.
#[derive(Debug, Clone, Copy)]
pub enum Main {
    /// The main generated from the catalog, the same for every tool (`protocol::tool_main`):
    /// the tool and nothing else.
    Generated,
    /// The generated main, with modes of the binary's own ahead of the tool: the function is
    /// handed the tool's main and runs it or one of its modes (outline: the parser, image
    /// scaler and PDF reader that the other binaries hand their work to).
    GeneratedWith(fn(fn() -> std::process::ExitCode) -> std::process::ExitCode),
    /// A main written by hand, which the generator leaves alone: the program has modes that
    /// belong to no library code (run_command: the sandbox launcher, the job supervisor, the
    /// policy checks, in bin/sneaky-run/entry.rs).
    Own,
}

/// Something done with a tool's types, chosen by name at run time (`by_tool`).
trait ForTool {
    type Out;
    fn call<T: Tool>(self) -> Self::Out;
}

struct OutputSchema;

impl ForTool for OutputSchema {
    type Out = Value;
    fn call<T: Tool>(self) -> Value {
        schema::output_schema::<T::Output>()
    }
}

struct ReadsBack<'a>(&'a Value);

impl ForTool for ReadsBack<'_> {
    type Out = std::result::Result<(), String>;
    fn call<T: Tool>(self) -> Self::Out {
        let typed: T::Output = serde_json::from_value(self.0.clone())
            .map_err(|e| format!("does not read back into the result type: {e}"))?;
        let again = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
        if &again == self.0 {
            Ok(())
        } else {
            Err(format!("reads back as {again}"))
        }
    }
}

struct GeneratedSchema;

impl ForTool for GeneratedSchema {
    type Out = Value;
    fn call<T: Tool>(self) -> Value {
        schema::generate_schema::<T::Args>()
    }
}

/// What a tool runs with: the jailed workspace and the active configuration.
pub struct Context {
    pub ws: Workspace,
    pub config: Config,
}

/// MCP's behaviour hints, stated by each tool about itself.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    /// Never changes anything.
    pub read_only: bool,
    /// May destroy or overwrite what is there.
    pub destructive: bool,
    /// A second identical call leaves the workspace as the first did.
    pub idempotent: bool,
    /// Runs in its own process when a long-lived host (agent, MCP server) calls it: the tool
    /// changes process-wide state or starts programs, so isolation is the point.
    pub isolated: bool,
    /// Takes time that grows with the tree it walks (seconds over a large one), so a host runs
    /// it off the thread that reads its requests.
    pub walks: bool,
    /// Ends an agent's loop: offered by the driver only (an MCP host has no loop to end).
    pub ends_session: bool,
}

/// The command-line shape of a tool binary beyond the flags made from its schema.
#[derive(Debug, Clone, Copy)]
pub struct Cli {
    /// Parameters that may also be given positionally, in order.
    pub positional: &'static [&'static str],
    /// With arguments on the command line, stdin's text fills this parameter when not given.
    pub stdin_param: Option<&'static str>,
}

/// A short flag, as rg and fd spell it: (letter, parameter, value). Without a value the letter
/// is another name for the parameter's flag (`-i` = `--case-insensitive`); with one it sets the
/// parameter to that value (`-l` = `--output-mode files_with_matches`).
pub type Short = (char, &'static str, Option<&'static str>);

/// What a tool's man page says beyond its flags.
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    /// What the tool does, in one line: its row of the tables in README.md ("The tools") and
    /// docs/contract.md, which are generated from it.
    pub summary: &'static str,
    /// An example JSON request.
    pub example: &'static str,
    /// A shell pipeline using the binary.
    pub pipeline: &'static str,
    /// The configuration keys that apply, each with what it does.
    pub config: &'static [&'static str],
    /// Environment variables that matter, with what they do.
    pub env: &'static [(&'static str, &'static str)],
    /// A call with `--format text` and what it prints, for the man page (and run as written by
    /// the tests).
    pub text: TextExample,
    /// A call that works and one that fails, made for real by the tests.
    pub calls: Calls,
}

/// Two calls of a tool, each made by the tests in a fresh workspace holding the files of
/// `Doc::text`, through the tool's binary (tests/suite/examples.rs, which also reads the
/// result of `works` back into the result type) and through the official TypeScript MCP client
/// (tests/mcp/ts_client_test.cjs): `works` succeeds, `fails` fails with `fails_with`. So a new
/// tool brings its own cases, and no table of calls in a test is kept by hand.
#[derive(Debug, Clone, Copy)]
pub struct Calls {
    /// Calls of other tools made first (LLM name, JSON arguments): an edit for undo to take
    /// back, a background job to talk to. `$JOB` in `works` stands for the `job_id` the last of
    /// them returned.
    pub before: &'static [(ToolName, &'static str)],
    /// JSON arguments of a call that succeeds.
    pub works: &'static str,
    /// JSON arguments of a call that fails with `fails_with`.
    pub fails: &'static str,
    pub fails_with: ErrorKind,
}

/// In a workspace holding `files` (path, content), the binary run with `args` and `--format
/// text`, given `stdin`, prints `stdout` and `stderr` and exits with `status`.
#[derive(Debug, Clone, Copy)]
pub struct TextExample {
    pub files: &'static [(&'static str, &'static str)],
    pub args: &'static [&'static str],
    pub stdin: &'static str,
    pub stdout: &'static str,
    pub stderr: &'static str,
    pub status: i32,
}

impl TextExample {
    /// A call that prints `stdout` and nothing else, and succeeds.
    pub const fn prints(
        files: &'static [(&'static str, &'static str)],
        args: &'static [&'static str],
        stdin: &'static str,
        stdout: &'static str,
    ) -> TextExample {
        TextExample {
            files,
            args,
            stdin,
            stdout,
            stderr: "",
            status: 0,
        }
    }
}

/// The same surface for every tool: its self-description, its argument type (which is also its
/// schema), its result type, and `run`.
pub trait Tool {
    /// The catalog entry: LLM name, binary, default tier.
    const NAME: ToolName;
    /// A short human title (MCP `title`).
    const TITLE: &'static str;
    const HINTS: Hints;
    const CLI: Cli;
    /// Short flags beyond the long ones made from the schema (none unless a tool says so).
    const SHORT: &'static [Short] = &[];
    const DOC: Doc;
    /// The committed schema, `schemas/<name>.json` (`committed_schema!`).
    const SCHEMA: &'static str;
    /// The parameters that name workspace paths (a failure about one of them gets the nearest
    /// existing name as a suggestion).
    const PATH_PARAMS: &'static [&'static str] = &[];
    /// A flag that makes the tool's binary check a call without running it (what it would
    /// refuse), for a host to ask before a person approves an isolated tool's call.
    const PRECHECK_FLAG: Option<&'static str> = None;
    /// How the tool's binary starts (the generated main unless a tool says otherwise).
    const MAIN: Main = Main::Generated;
    type Args: DeserializeOwned + JsonSchema;
    type Output: Serialize + DeserializeOwned + JsonSchema;
    fn run(args: Self::Args, ctx: &Context) -> Result<Self::Output>;
    /// `run` as the long-lived hosts call it in their own process (`ToolSpec::hosted`). The
    /// same unless a tool hands part of its work to its binary so that the hosts need not link
    /// it (outline, find_symbol: parsing).
    fn run_hosted(args: Self::Args, ctx: &Context) -> Result<Self::Output> {
        Self::run(args, ctx)
    }
    /// `--format text` written while the tool works, for a tool whose text needs no global
    /// order (the searches): nothing is held whatever the size of the result. None (the
    /// default): the finished result is rendered by `render::human`.
    const STREAM_TEXT: Option<StreamText<Self::Args>> = None;
    /// What a model reads as the result (`render::model`): compact, in the shapes it knows
    /// from the plain tools.
    fn model_text(result: &Self::Output) -> String;
    /// `--format text` of the finished result (`render::human`): the data on stdout, notes
    /// on stderr, each note led by `binary`.
    fn human_text(result: &Self::Output, binary: &str) -> crate::render::human::Text;
    /// What `--format text` prints, in a sentence (man page and help).
    const TEXT_FORMAT: &'static str;
    /// For a tool whose call can finish with a result and still count as a failure for the
    /// exit status (run_command: the command exited non-zero, was killed or timed out): whether
    /// this result succeeded. None (the default): every result is a success.
    const SUCCEEDED: Option<fn(&Self::Output) -> bool> = None;
    /// The workspace paths (root-relative) this result says the call changed, told to the
    /// workspace's running background jobs so that they see the change
    /// (src/shell/jobs/mirror.rs). None (the default) for a tool that changes nothing.
    fn changed(_result: &Self::Output) -> Vec<&str> {
        Vec::new()
    }
    /// The result as a JSON value, for the hosts. serde copies every string into the value;
    /// a tool whose result holds a large one moves it in instead (read_file: the content).
    fn into_value(result: Self::Output) -> serde_json::Result<Value> {
        serde_json::to_value(result)
    }
    /// The result as compact JSON, the bytes `serde_json::to_writer` writes for it, for a tool
    /// whose result can be large enough that serde_json's writing shows (find_files: up to a
    /// million paths). None (the default): serde_json writes it.
    const WRITE_JSON: Option<WriteJson<Self::Output>> = None;
}

/// A tool's own compact JSON writer for its result (`Tool::WRITE_JSON`).
pub type WriteJson<R> = fn(&R, &mut dyn std::io::Write) -> std::io::Result<()>;

/// A tool's streaming `--format text` runner: writes the text to `out` as it goes and says how
/// it ended, or returns None (before writing anything) when this call is not one it streams,
/// and then the finished result is rendered as usual.
pub type StreamText<A> =
    fn(&A, &Context, &mut (dyn std::io::Write + Send)) -> Option<Result<TextStreamed>>;

/// How a streamed text run ended, for the note on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextStreamed {
    pub end: crate::render::stream::Streamed,
    /// What one result is, in the note: "matches", "files", "paths".
    pub unit: &'static str,
}

/// The outcome of a `--format text` call: streamed already, or rendered from the typed result
/// (with whether it succeeded, for the exit status: `Tool::SUCCEEDED`).
pub enum TextRun {
    Streamed(TextStreamed),
    Rendered {
        text: crate::render::human::Text,
        succeeded: bool,
    },
}

/// The committed schema file of a tool, embedded: `committed_schema!("read_file")`.
macro_rules! committed_schema {
    ($name:literal) => {
        include_str!(concat!("../../schemas/", $name, ".json"))
    };
}
pub(crate) use committed_schema;

/// A tool's self-description as a value, so that tables and surfaces can hold any tool.
pub struct ToolSpec {
    pub name: ToolName,
    pub title: &'static str,
    pub hints: Hints,
    pub cli: Cli,
    pub short: &'static [Short],
    pub doc: Doc,
    /// The committed schema text.
    pub schema: &'static str,
    /// `Tool::PATH_PARAMS`.
    pub path_params: &'static [&'static str],
    /// `Tool::PRECHECK_FLAG`.
    pub precheck_flag: Option<&'static str>,
    /// Whether the tool's main is written by hand (`Main::Own`), so that the generated one is
    /// not written over it.
    pub own_main: bool,
    /// Validate JSON arguments without running (what a gate checks before it asks a person).
    pub check_args: fn(&Value) -> Result<()>,
    /// Validate JSON arguments and run.
    pub run: fn(Value, &Context) -> Result<Value>,
    /// Validate, run, and write the success envelope straight to `out` without building a
    /// JSON value first, so a large result costs its own size once (grep's 100,000 matches).
    /// Nothing is written when the call fails.
    /// With `pretty`, indented. Returns whether the result counts as a success
    /// (`Tool::SUCCEEDED`), for the exit status.
    pub write_ok: fn(Value, &Context, &mut dyn std::io::Write, bool) -> Result<bool>,
    /// For `--format text`, when the tool can stream it (`Tool::STREAM_TEXT`): validate, run,
    /// and write the text while running, or hand back the result for rendering.
    pub text_run: Option<TextRunner>,
    /// `Tool::model_text` of a JSON result, read back into the result type (a value that is
    /// not one of this tool's results is shown as its compact JSON).
    pub model_text: fn(&Value) -> String,
    /// `Tool::human_text` of a JSON result, read back likewise (one that is not: its compact
    /// JSON on stdout).
    pub human_text: fn(&Value) -> crate::render::human::Text,
    /// `Tool::TEXT_FORMAT`.
    pub text_format: &'static str,
    /// `Tool::SUCCEEDED` of a JSON result, when the tool has that rule (a value that is not
    /// one of its results did not succeed). A host needs the result to set the exit status.
    pub succeeded: Option<fn(&Value) -> bool>,
}

/// `ToolSpec::text_run`.
/// Given an observer, the result is rendered (never streamed) and handed to it as a value
/// first (for the PostToolUse hooks).
pub type TextRunner = fn(
    Value,
    &Context,
    &mut (dyn std::io::Write + Send),
    Option<&mut dyn FnMut(Value)>,
) -> Result<TextRun>;

impl ToolSpec {
    /// A tool as its own binary holds it: the result is written from the typed value, as JSON
    /// (`write_ok`) or as text (`text_run`), so the binary needs neither the result as a JSON
    /// value (`run` is refused here), nor the text a model reads, nor reading its result back
    /// from JSON (`model_text` and `human_text` only show the JSON). The hosts' form,
    /// `hosted`, has all of them.
    pub const fn of<T: Tool>() -> ToolSpec {
        ToolSpec {
            name: T::NAME,
            title: T::TITLE,
            hints: T::HINTS,
            cli: T::CLI,
            short: T::SHORT,
            doc: T::DOC,
            schema: T::SCHEMA,
            path_params: T::PATH_PARAMS,
            precheck_flag: T::PRECHECK_FLAG,
            own_main: matches!(T::MAIN, Main::Own),
            check_args: check_json::<T>,
            run: run_by_writing,
            write_ok: write_ok::<T>,
            text_run: Some(text_run::<T>),
            model_text: shown_as_json,
            human_text: printed_as_json,
            text_format: T::TEXT_FORMAT,
            succeeded: if T::SUCCEEDED.is_some() {
                Some(succeeded_json::<T>)
            } else {
                None
            },
        }
    }

    /// How the long-lived hosts (sneaky-mcp, sneaky-agent) hold a tool, as `spec` hands it
    /// out: as `of`, except that a tool that runs in a process of its own (`hints.isolated`)
    /// comes with everything but the means to run it here. The hosts run such a tool through
    /// its binary, so they need not link it (the shell grammar and the sandbox live only in
    /// sneaky-run); calling it in-process is refused. Evaluated at compile time only (for the
    /// statics of `spec`), so the branch not taken is never linked.
    pub const fn hosted<T: Tool>() -> ToolSpec {
        if T::HINTS.isolated {
            Self::isolated::<T>()
        } else {
            ToolSpec {
                run: run_json::<T>,
                // A host answers with the result as a value, never writes the envelope.
                write_ok: written_by_its_binary,
                text_run: None,
                model_text: model_text_json::<T>,
                human_text: human_text_json::<T>,
                ..Self::of::<T>()
            }
        }
    }

    /// `hosted` for an isolated tool: no means to run it in this process. Like `hosted`, only
    /// ever evaluated at compile time, so what `of` names and this replaces is not linked.
    const fn isolated<T: Tool>() -> ToolSpec {
        ToolSpec {
            run: run_elsewhere,
            write_ok: write_elsewhere,
            text_run: None,
            model_text: model_text_json::<T>,
            human_text: human_text_json::<T>,
            ..Self::of::<T>()
        }
    }

    /// The LLM name.
    pub fn name(&self) -> &'static str {
        self.name.as_str()
    }

    pub fn binary(&self) -> &'static str {
        self.name.binary()
    }

    pub fn default_tier(&self) -> Tier {
        self.name.default_tier()
    }

    /// The schema of the `result` object (MCP `outputSchema`), as committed.
    pub fn output_schema(&self) -> Value {
        serde_json::from_str(committed_output_schema(self.name))
            .unwrap_or_else(|_| serde_json::json!({"type": "object"}))
    }

    /// The schema of the `result` object generated from the result type (the source
    /// `schemas/<name>.output.json` is made from).
    pub fn generate_output_schema(&self) -> Value {
        by_tool(self.name, OutputSchema)
    }

    /// Whether a result the tool wrote (JSON) reads back into its result type and serializes
    /// to the same JSON again, so that a host holding only the JSON renders the typed result
    /// (`model_text`, `human_text`); the tests' check, never called by a binary.
    pub fn result_reads_back(&self, result: &Value) -> std::result::Result<(), String> {
        by_tool(self.name, ReadsBack(result))
    }

    /// The schema generated from the argument type (the source `schemas/` is made from).
    pub fn generate_schema(&self) -> Value {
        by_tool(self.name, GeneratedSchema)
    }

    /// The committed schema as JSON (an empty object schema if it could not be read, which the
    /// drift test rules out).
    pub fn schema_value(&self) -> Value {
        serde_json::from_str(self.schema).unwrap_or_else(|_| serde_json::json!({"type": "object"}))
    }

    /// The schema's top-level description: what a model reads about the tool.
    pub fn description(&self) -> String {
        self.schema_value()
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or(self.title)
            .to_string()
    }

    /// Does the tool take `dry_run` (and so can show its effect before it is approved)?
    pub fn supports_dry_run(&self) -> bool {
        self.schema_value().pointer("/properties/dry_run").is_some()
    }
}

/// The tool of that LLM name.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    ToolName::from_name(name).map(spec)
}

/// Every tool, in the catalog's order.
pub fn all() -> impl Iterator<Item = &'static ToolSpec> {
    ToolName::ALL.into_iter().map(spec)
}

/// Run one call in this process, as every surface does: permissions, validation, run.
pub fn dispatch(name: ToolName, args: Value, ctx: &Context) -> Result<Value> {
    call(spec(name), args, ctx)
}

/// `dispatch` for a description already in hand (a binary holds only its own tool's).
pub fn call(spec: &ToolSpec, args: Value, ctx: &Context) -> Result<Value> {
    crate::permissions::check_not_denied(&ctx.config, spec.name)?;
    let paths = crate::fs::suggest::path_args(spec.path_params, &args);
    (spec.run)(args, ctx).map_err(|e| crate::fs::suggest::explain(e, &ctx.ws, &paths))
}

/// `call` for a binary printing compact JSON: the success envelope is written to `out` straight
/// from the result (nothing is written on failure, which gets the same explanation as `call`).
///
/// With `run_hooks` (false when the host that started this binary ran them: `hooks::RAN_FLAG`)
/// the configured hooks run around the call; nobody is asked here, so `ask` blocks.
pub fn call_writing(
    spec: &ToolSpec,
    args: Value,
    ctx: &Context,
    out: &mut dyn std::io::Write,
    pretty: bool,
    run_hooks: bool,
) -> Result<bool> {
    crate::permissions::check_not_denied(&ctx.config, spec.name)?;
    let hooks = &ctx.config.hooks;
    if !run_hooks || hooks.is_empty() {
        let paths = crate::fs::suggest::path_args(spec.path_params, &args);
        return (spec.write_ok)(args, ctx, out, pretty)
            .map_err(|e| crate::fs::suggest::explain(e, &ctx.ws, &paths));
    }
    let caller = crate::hooks::Caller::this_process();
    let call = crate::hooks::Call {
        hooks,
        root: ctx.ws.root(),
        tool: spec.name,
        caller: &caller,
    };
    let before = call.before(args)?.unattended(spec.name, spec.binary())?;
    let args = before.args;
    let paths = crate::fs::suggest::path_args(spec.path_params, &args);
    let explain = |e| crate::fs::suggest::explain(e, &ctx.ws, &paths);
    if before.context.is_empty() && !hooks.post_matches(spec.name) {
        return (spec.write_ok)(args, ctx, out, pretty).map_err(explain);
    }
    // The result is needed as a value for the PostToolUse hooks: written to memory, read back.
    let mut written = Vec::new();
    let succeeded = (spec.write_ok)(args.clone(), ctx, &mut written, false).map_err(explain)?;
    let mut envelope: Value = serde_json::from_slice(&written)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("reading the result back: {e}")))?;
    let result = envelope.get("result").cloned().unwrap_or(Value::Null);
    if let Some(said) = call.after(&args, &result, before.context) {
        envelope["hook_context"] = Value::String(said);
    }
    let shown = if pretty {
        serde_json::to_writer_pretty(&mut *out, &envelope)
    } else {
        serde_json::to_writer(&mut *out, &envelope)
    };
    if shown.is_ok() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
    Ok(succeeded)
}

/// `call` for `--format text`: streamed to `out` when the tool can, else rendered from the
/// result (`ToolSpec::text_run`); failures get the same explanation as `call`.
/// Hooks as for `call_writing`; what they say for the caller is a note on stderr.
pub fn call_text(
    spec: &ToolSpec,
    args: Value,
    ctx: &Context,
    out: &mut (dyn std::io::Write + Send),
    run_hooks: bool,
) -> Result<TextRun> {
    crate::permissions::check_not_denied(&ctx.config, spec.name)?;
    let hooks = &ctx.config.hooks;
    let caller;
    let mut hooked = None;
    let mut args = args;
    if run_hooks && !hooks.is_empty() {
        caller = crate::hooks::Caller::this_process();
        let call = crate::hooks::Call {
            hooks,
            root: ctx.ws.root(),
            tool: spec.name,
            caller: &caller,
        };
        let before = call.before(args)?.unattended(spec.name, spec.binary())?;
        args = before.args;
        let wanted = !before.context.is_empty() || hooks.post_matches(spec.name);
        hooked = wanted.then(|| (call, before.context, args.clone()));
    }
    let paths = crate::fs::suggest::path_args(spec.path_params, &args);
    let mut result = None;
    let mut keep = |value: Value| result = Some(value);
    let observer: Option<&mut dyn FnMut(Value)> = match hooked {
        Some(_) => Some(&mut keep),
        None => None,
    };
    let outcome = match spec.text_run {
        Some(text_run) => text_run(args, ctx, out, observer),
        None => (spec.run)(args, ctx).map(|result| {
            if let Some(observe) = observer {
                observe(result.clone());
            }
            TextRun::Rendered {
                text: (spec.human_text)(&result),
                succeeded: spec.succeeded.map_or(true, |succeeded| succeeded(&result)),
            }
        }),
    };
    let mut outcome = outcome.map_err(|e| crate::fs::suggest::explain(e, &ctx.ws, &paths))?;
    if let (Some((call, context, args)), Some(result)) = (hooked, result) {
        if let (Some(said), TextRun::Rendered { text, .. }) =
            (call.after(&args, &result, context), &mut outcome)
        {
            for line in said.lines() {
                text.stderr
                    .push_str(&format!("{}: hook: {line}\n", spec.binary()));
            }
        }
    }
    Ok(outcome)
}

fn run_elsewhere(_: Value, _: &Context) -> Result<Value> {
    Err(Error::new(
        ErrorKind::Internal,
        "this tool runs in a process of its own: call its binary (see crate::isolate)",
    ))
}

fn write_elsewhere(
    args: Value,
    ctx: &Context,
    _: &mut dyn std::io::Write,
    _: bool,
) -> Result<bool> {
    run_elsewhere(args, ctx).map(|_| false)
}

/// `ToolSpec::write_ok` of the hosts' specs (see `ToolSpec::hosted`).
fn written_by_its_binary(
    _: Value,
    _: &Context,
    _: &mut dyn std::io::Write,
    _: bool,
) -> Result<bool> {
    Err(Error::new(
        ErrorKind::Internal,
        "only a tool's own binary writes its envelope; a host takes the result from ToolSpec::run",
    ))
}

fn check_json<T: Tool>(args: &Value) -> Result<()> {
    parse_args::<T::Args>(args.clone(), T::SCHEMA).map(drop)
}

/// `ToolSpec::run` of the hosts' specs (see `ToolSpec::hosted`).
fn run_json<T: Tool>(args: Value, ctx: &Context) -> Result<Value> {
    let args = parse_args::<T::Args>(args, T::SCHEMA)?;
    let out = T::run_hosted(args, ctx)?;
    crate::shell::jobs::mirror::announce(&ctx.ws, &T::changed(&out));
    T::into_value(out)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("serializing the result: {e}")))
}

fn write_ok<T: Tool>(
    args: Value,
    ctx: &Context,
    out: &mut dyn std::io::Write,
    pretty: bool,
) -> Result<bool> {
    #[derive(Serialize)]
    struct Success<'a, R> {
        ok: bool,
        tool: &'a str,
        result: &'a R,
    }
    let args = parse_args::<T::Args>(args, T::SCHEMA)?;
    let result = T::run(args, ctx)?;
    crate::shell::jobs::mirror::announce(&ctx.ws, &T::changed(&result));
    let envelope = Success {
        ok: true,
        tool: T::NAME.as_str(),
        result: &result,
    };
    // serde_json writes a value in many small pieces (a quote, a key, a separator): into a
    // buffer of a known type each is a copy the compiler inlines, where through `out` (a
    // `dyn Write`) each was a call. Full chunks pass through `out` without another copy.
    use std::io::Write as _;
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, &mut *out);
    // A closed pipe is not an error (the protocol's rule).
    let written = match (pretty, T::WRITE_JSON) {
        (true, _) => serde_json::to_writer_pretty(&mut buffered, &envelope).is_ok(),
        (false, None) => serde_json::to_writer(&mut buffered, &envelope).is_ok(),
        // The envelope around it as serde_json writes `Success`.
        (false, Some(write_json)) => {
            let mut head = br#"{"ok":true,"tool":"#.to_vec();
            crate::render::json_out::write_str(&mut head, envelope.tool);
            head.extend_from_slice(br#","result":"#);
            buffered.write_all(&head).is_ok()
                && write_json(&result, &mut buffered).is_ok()
                && buffered.write_all(b"}").is_ok()
        }
    };
    if written {
        let _ = buffered.write_all(b"\n");
    }
    let _ = buffered.flush();
    drop(buffered);
    let _ = out.flush();
    Ok(T::SUCCEEDED.map_or(true, |succeeded| succeeded(&result)))
}

/// `ToolSpec::run` of a binary's own spec (see `ToolSpec::of`).
fn run_by_writing(_: Value, _: &Context) -> Result<Value> {
    Err(Error::new(
        ErrorKind::Internal,
        "a tool binary writes its result as it goes (ToolSpec::write_ok, text_run)",
    ))
}

fn text_run<T: Tool>(
    args: Value,
    ctx: &Context,
    out: &mut (dyn std::io::Write + Send),
    observer: Option<&mut dyn FnMut(Value)>,
) -> Result<TextRun> {
    let args = parse_args::<T::Args>(args, T::SCHEMA)?;
    let stream = T::STREAM_TEXT.filter(|_| observer.is_none());
    if let Some(streamed) = stream.and_then(|stream| stream(&args, ctx, out)) {
        return streamed.map(TextRun::Streamed);
    }
    let result = T::run(args, ctx)?;
    crate::shell::jobs::mirror::announce(&ctx.ws, &T::changed(&result));
    if let Some(observe) = observer {
        observe(serde_json::to_value(&result).map_err(|e| {
            Error::new(ErrorKind::Internal, format!("serializing the result: {e}"))
        })?);
    }
    Ok(TextRun::Rendered {
        text: T::human_text(&result, T::NAME.binary()),
        succeeded: T::SUCCEEDED.map_or(true, |succeeded| succeeded(&result)),
    })
}

/// `ToolSpec::model_text` of a binary's own spec (see `ToolSpec::of`).
fn shown_as_json(result: &Value) -> String {
    result.to_string()
}

/// `ToolSpec::human_text` of a binary's own spec (see `ToolSpec::of`).
fn printed_as_json(result: &Value) -> crate::render::human::Text {
    crate::render::human::Text {
        stdout: format!("{result}\n"),
        stderr: String::new(),
    }
}

fn model_text_json<T: Tool>(result: &Value) -> String {
    match <T::Output as serde::Deserialize>::deserialize(result) {
        Ok(result) => T::model_text(&result),
        Err(_) => result.to_string(),
    }
}

fn human_text_json<T: Tool>(result: &Value) -> crate::render::human::Text {
    match <T::Output as serde::Deserialize>::deserialize(result) {
        Ok(result) => T::human_text(&result, T::NAME.binary()),
        Err(_) => crate::render::human::Text {
            stdout: format!("{result}\n"),
            stderr: String::new(),
        },
    }
}

fn succeeded_json<T: Tool>(result: &Value) -> bool {
    let read = <T::Output as serde::Deserialize>::deserialize(result);
    match (T::SUCCEEDED, read) {
        (Some(succeeded), Ok(result)) => succeeded(&result),
        (Some(_), Err(_)) => false,
        (None, _) => true,
    }
}

/// The generated schema of the result, as committed in `schemas/<name>.output.json`.
pub fn output_schema_file_text(spec: &ToolSpec) -> String {
    let mut text = serde_json::to_string_pretty(&spec.generate_output_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// The generated schema with the tool's name as its title, as committed in `schemas/`.
pub fn schema_file_text(spec: &ToolSpec) -> String {
    let mut schema = spec.generate_schema();
    schema::unwrap_descriptions(&mut schema);
    if let Value::Object(map) = &mut schema {
        map.insert("title".into(), Value::String(spec.name().into()));
    }
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
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

#[cfg(test)]
mod tests {
    macro_rules! listed_modules {
        ($($variant:ident $name:literal $binary:literal $tier:ident $module:ident::$tool:ident,)*) => {
            const LISTED_MODULES: &[&str] = &[$(stringify!($module)),*];
        };
    }
    crate::catalog::tool_list!(listed_modules);

    /// Modules of src/tools that are not tools.
    const NOT_TOOLS: &[&str] = &["outcome", "args", "schema"];

    /// The tool modules are declared as plain `mod` lines (where rustfmt sees them), and those
    /// lines, the files of src/tools and the catalog's list name the same tools.
    #[test]
    fn tools_are_the_listed_modules() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
        let source = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
        let mut declared: Vec<&str> = source
            .lines()
            .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
            .filter(|m| !NOT_TOOLS.contains(m))
            .collect();
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter_map(|n| n.strip_suffix(".rs").map(str::to_string))
            .filter(|m| m != "mod" && !NOT_TOOLS.contains(&m.as_str()))
            .collect();
        let mut listed = LISTED_MODULES.to_vec();
        declared.sort();
        files.sort();
        listed.sort();
        assert_eq!(
            declared, listed,
            "src/tools/mod.rs's `pub mod` lines vs tool_list!"
        );
        assert_eq!(files, listed, "the files of src/tools vs tool_list!");
    }
}
