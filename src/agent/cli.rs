//! The command line of `sneaky-agent`, built once here so that parsing, `--help`, the man page
//! and the shell completions all come from the same definition.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::llm::Provider;
use crate::definitions::Format;

pub const DEFAULT_MAX_TURNS: u32 = 50;

const AFTER_HELP: &str = "\
Environment: OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY, SNEAKY_MODEL,
ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (with --provider anthropic), SNEAKY_ROOT, SNEAKY_CONFIG,
NO_COLOR.
Exit status: 0 the model called finish (run) or every call succeeded (pipe); 1 a failure
(the model server, --max-turns reached, a call failed in pipe mode, calls refused because
nobody could approve them); 2 bad usage or configuration (a malformed base URL too); 130
stopped by Ctrl-C or by answering quit.";

/// The clap command of `sneaky-agent` (also used to generate its man page and completions).
pub fn command() -> Command {
    Command::new("sneaky-agent")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Drive an LLM through the SneakyCode tools, asking before anything changes")
        .long_about(
            "Drive an LLM through the SneakyCode tools. `run` gives the model a task and runs \
             its tool calls through the tool binaries, within the workspace jail and the \
             permission policy, asking the person on the terminal before confirm-tier calls. \
             `tools` prints the tool definitions for an API; `pipe` runs tool calls read as JSON \
             lines, for other agent frameworks and jq.",
        )
        .subcommand_required(true)
        .arg_required_else_help(true)
        .after_help(AFTER_HELP)
        .subcommand(run_command())
        .subcommand(
            Command::new("tools")
                .about("Print the tool definitions as an API expects them")
                .long_about(
                    "Print the definitions of the tools the configuration allows (denied tools \
                     are left out), generated from the tool schemas, as one JSON array: the \
                     `tools` of an OpenAI Chat Completions request (with --strict, in the form \
                     strict function calling accepts: every property required, optional ones \
                     nullable, objects closed, no defaults; the tools read null as not given), \
                     of an OpenAI Responses request (strict), of an Anthropic Messages request, \
                     the functionDeclarations of a Gemini request (one type per schema, \
                     optional ones nullable), or the tools of an MCP tools/list result. Outside \
                     any project the user's configuration decides which tools are offered.",
                )
                .arg(
                    Arg::new("format")
                        .long("format")
                        .value_name("FORMAT")
                        .value_parser(["openai", "openai-responses", "anthropic", "mcp", "gemini"])
                        .default_value("openai")
                        .help("The API shape"),
                )
                .arg(
                    Arg::new("strict")
                        .long("strict")
                        .action(ArgAction::SetTrue)
                        .help(
                            "With --format openai: strict function calling (strict: true); \
                             openai-responses is always strict",
                        ),
                )
                .arg(root_arg())
                .arg(crate::protocol::config_arg()),
        )
        .subcommand(
            Command::new("pipe")
                .about("Run tool calls read as JSON lines on stdin, one result line each")
                .long_about(
                    "Read tool calls as JSON lines on stdin and print one result line per call, \
                     in the shape of the call: an OpenAI tool call \
                     {\"id\",\"type\":\"function\",\"function\":{\"name\",\"arguments\"}} gets \
                     {\"role\":\"tool\",\"tool_call_id\",\"content\"}; an Anthropic \
                     {\"type\":\"tool_use\",\"id\",\"name\",\"input\"} gets \
                     {\"type\":\"tool_result\",\"tool_use_id\",\"content\",\"is_error\"}; a plain \
                     {\"name\",\"arguments\"} gets the tool's envelope. Calls go through the same \
                     permission policy as `run`: confirm-tier calls are asked on the terminal, \
                     approved by --yes, or refused.",
                )
                .arg(yes_arg())
                .arg(root_arg())
                .arg(crate::protocol::config_arg()),
        )
}

fn run_command() -> Command {
    Command::new("run")
        .about("Work on a task with an LLM")
        .after_help(
            "Environment: OPENAI_API_KEY (sent as a bearer token when set; local servers need \
             none), OPENAI_BASE_URL, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (--provider \
             anthropic), SNEAKY_MODEL, SNEAKY_ROOT, SNEAKY_CONFIG, NO_COLOR.\n\
             Exit status: 0 the model called finish; 1 the model server failed, --max-turns was \
             reached, the model stopped without finish, or calls were refused because nobody \
             could approve them (no terminal, no --yes); 2 bad usage or configuration, a \
             malformed base URL included (checked before any request); 130 Ctrl-C or quit at \
             the prompt.",
        )
        .long_about(
            "Give the model TASK and run its tool calls until it calls finish. Reads and \
             searches run at once; edits and commands (confirm tier) are shown, with the diff \
             of a dry run for edits, and asked on the terminal: yes, no, always (this tool, this \
             session) or quit.",
        )
        .arg(
            Arg::new("task")
                .value_name("TASK")
                .required(true)
                .help("What the model should do (`-` reads it from stdin)"),
        )
        .arg(
            Arg::new("provider")
                .long("provider")
                .value_name("PROVIDER")
                .value_parser(["openai", "anthropic"])
                .default_value("openai")
                .help(
                    "openai: any Chat Completions server with tools; anthropic: the Messages API",
                ),
        )
        .arg(
            Arg::new("base-url")
                .long("base-url")
                .value_name("URL")
                .help(
                "API base URL (else OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the provider's)",
            ),
        )
        .arg(
            Arg::new("model")
                .long("model")
                .value_name("MODEL")
                .help("Model name (else SNEAKY_MODEL)"),
        )
        .arg(yes_arg())
        .arg(
            Arg::new("max-turns")
                .long("max-turns")
                .value_name("N")
                .value_parser(clap::value_parser!(u32).range(1..))
                .default_value("50")
                .help("Stop with an error after N model replies without finish"),
        )
        .arg(root_arg())
        .arg(crate::protocol::config_arg())
        .arg(
            Arg::new("transcript")
                .long("transcript")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Append every request, reply, call and result to FILE as JSON lines"),
        )
        .arg(
            Arg::new("quiet")
                .long("quiet")
                .short('q')
                .action(ArgAction::SetTrue)
                .help("Print only the final message and errors"),
        )
}

fn yes_arg() -> Arg {
    Arg::new("yes")
        .long("yes")
        .short('y')
        .action(ArgAction::SetTrue)
        .help("Approve every confirm-tier call without asking (denied tools stay denied)")
}

fn root_arg() -> Arg {
    crate::protocol::root_arg(crate::protocol::ROOT_HELP)
}

/// Where the workspace and its configuration come from (passed through to every tool binary).
#[derive(Debug, Clone, Default)]
pub struct Place {
    pub root: Option<PathBuf>,
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub task: String,
    pub provider: Provider,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub yes: bool,
    pub max_turns: u32,
    pub place: Place,
    pub transcript: Option<PathBuf>,
    pub quiet: bool,
}

pub enum Invocation {
    Run(RunOptions),
    Tools {
        format: Format,
        place: Place,
    },
    /// A combination of options that means nothing, with why.
    Usage(String),
    Pipe {
        yes: bool,
        place: Place,
    },
}

fn place(m: &ArgMatches) -> Place {
    Place {
        root: m.get_one::<PathBuf>("root").cloned(),
        config: m.get_one::<PathBuf>("config").cloned(),
    }
}

fn string(m: &ArgMatches, id: &str) -> Option<String> {
    m.get_one::<String>(id).cloned()
}

fn tools_invocation(m: &ArgMatches) -> Invocation {
    let strict = m.get_flag("strict");
    let format = match (m.get_one::<String>("format").map(String::as_str), strict) {
        (Some("openai-responses"), _) => Format::OpenAiResponses,
        (Some("anthropic" | "mcp" | "gemini"), true) => {
            return Invocation::Usage(
                "--strict applies to --format openai (openai-responses is always strict)".into(),
            )
        }
        (Some("anthropic"), false) => Format::Anthropic,
        (Some("mcp"), false) => Format::Mcp,
        (Some("gemini"), false) => Format::Gemini,
        (_, true) => Format::OpenAiStrict,
        (_, false) => Format::OpenAi,
    };
    Invocation::Tools {
        format,
        place: place(m),
    }
}

/// Turn parsed matches into what to do.
pub fn invocation(matches: &ArgMatches) -> Option<Invocation> {
    match matches.subcommand()? {
        ("run", m) => Some(Invocation::Run(RunOptions {
            task: string(m, "task").unwrap_or_default(),
            provider: match m.get_one::<String>("provider").map(String::as_str) {
                Some("anthropic") => Provider::Anthropic,
                _ => Provider::OpenAi,
            },
            base_url: string(m, "base-url"),
            model: string(m, "model"),
            yes: m.get_flag("yes"),
            max_turns: m
                .get_one::<u32>("max-turns")
                .copied()
                .unwrap_or(DEFAULT_MAX_TURNS),
            place: place(m),
            transcript: m.get_one::<PathBuf>("transcript").cloned(),
            quiet: m.get_flag("quiet"),
        })),
        ("tools", m) => Some(tools_invocation(m)),
        ("pipe", m) => Some(Invocation::Pipe {
            yes: m.get_flag("yes"),
            place: place(m),
        }),
        _ => None,
    }
}
