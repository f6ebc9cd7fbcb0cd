//! The agent loop of `sneaky-agent run`: send the conversation, print the model's text, run
//! its tool calls in order (each through the checks, the permission gate and its binary),
//! send every result back under its call's id, as text written for a model
//! (`render::model`), until the model calls `finish`. The transcript keeps the JSON envelopes.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::error::ErrorKind;

use crate::tools::ToolSpec;

use super::approve::Gate;
use super::cli::RunOptions;
use super::exec::{error_envelope, error_line, is_ok, Runner};
use super::llm::{self, Client, Conversation, ImagePart, Provider, Reply, ToolCall, ToolResult};
use super::ui::{self, Paint, Waited, EXIT_INTERRUPTED};
use super::{prepare, EXIT_FAILED, EXIT_USAGE};
use crate::definitions::{self, Format};

const NUDGE: &str = "You replied without calling a tool. Continue the task with tool calls, \
                     or call finish with a summary for the person if it is done.";

/// Appends JSON lines to the --transcript file, one per event.
struct Transcript {
    file: Option<File>,
}

impl Transcript {
    fn open(path: Option<&Path>) -> Result<Transcript, String> {
        let file = match path {
            // The operator's own path, not a workspace path: it is not jailed.
            Some(path) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    // It holds the workspace's contents as the model saw them.
                    .mode(0o600)
                    .open(path)
                    .map_err(|e| format!("--transcript {}: {e}", path.display()))?,
            ),
            None => None,
        };
        Ok(Transcript { file })
    }

    fn log(&mut self, event: &str, mut fields: Value) {
        let Some(file) = &mut self.file else { return };
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        if let Value::Object(map) = &mut fields {
            map.insert("event".into(), event.into());
            map.insert("time".into(), time.into());
        }
        let _ = writeln!(file, "{fields}");
        let _ = file.flush();
    }
}

/// Output for the person: the model's text and the final message on stdout, the progress of
/// tool calls on stderr; --quiet keeps only the final message and errors.
struct Console {
    quiet: bool,
    err: Paint,
}

impl Console {
    fn text(&self, text: &str) {
        if self.quiet || text.trim().is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", for_terminal(text.trim_end(), &out));
        let _ = out.flush();
    }

    fn call(&self, call: &ToolCall) {
        if self.quiet {
            return;
        }
        let args = match &call.arguments {
            Ok(v) => v.to_string(),
            Err(_) => call.raw_arguments.to_string(),
        };
        // As text only: a control or bidirectional character a model put in a call is shown
        // as an escape, never acted on by the terminal.
        let (name, _) = crate::text::visible(&call.name);
        let (args, _) = crate::text::visible(&args);
        eprintln!(
            "{} {} {}",
            self.err.cyan("→"),
            self.err.bold(&name),
            self.err.dim(&crate::text::shorten(&args, 160))
        );
    }

    fn result(&self, envelope: &Value) {
        if self.quiet {
            return;
        }
        if is_ok(envelope) {
            eprintln!("  {}", self.err.green("ok"));
        } else {
            // A refusal may quote what the model sent (a command line): as text only.
            let (line, _) = crate::text::visible(&error_line(envelope));
            eprintln!("  {}", self.err.red(&crate::text::shorten(&line, 300)));
        }
    }

    fn error(&self, text: &str) {
        let (text, _) = crate::text::visible(text);
        eprintln!("{} {text}", self.err.red("sneaky-agent:"));
    }
}

/// What the model wrote, for stdout: on a terminal, as text only (`text::visible`), so that
/// it cannot clear the screen, set a scroll region or hide what a later approval prompt
/// shows; to a pipe or a file, as the model wrote it.
fn for_terminal(text: &str, out: &impl std::io::IsTerminal) -> String {
    if out.is_terminal() {
        crate::text::visible(text).0
    } else {
        text.to_string()
    }
}

fn system_prompt(root: &Path, offered: &[&ToolSpec]) -> String {
    let mut tools = String::new();
    for spec in offered {
        let description = spec.description();
        let first = description
            .split(". ")
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        tools.push_str(&format!("- {}: {first}.\n", spec.name()));
    }
    let finish = if offered.iter().any(|s| s.hints.ends_session) {
        "When the task is done, or cannot be done, call finish with a short summary for the \
         person; the session ends there."
    } else {
        "The finish tool is denied by the configuration; stop calling tools when you are done."
    };
    format!(
        "You are a careful coding agent working in the workspace at {root}. You act on it only \
         through these tools:\n{tools}\n\
         - Every path is relative to the workspace root; nothing outside it can be reached.\n\
         - Look before you change: list, search and read before you edit.\n\
         - A failed call returns `code: message` (for example `not_found: …`). An error is \
         information, not the end: read its code and message and adapt (outside_workspace: use a path inside the \
         workspace; tool_denied, command_denied or not_approved: the person does not allow \
         that call, so do not retry it unchanged).\n\
         - Tools that change files or run commands may need the person's approval, and the \
         person may say no.\n\
         - {finish}\n",
        root = root.display()
    )
}

fn read_task(task: &str) -> Result<String, String> {
    if task != "-" {
        return Ok(task.to_string());
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("reading the task from stdin: {e}"))?;
    if text.trim().is_empty() {
        return Err("the task on stdin is empty".into());
    }
    Ok(text)
}

/// What the session does after a call.
enum After {
    Continue,
    Finish(String),
    Quit,
}

/// Where the model is, how to reach it, and the tool-definition shape its API takes.
struct Endpoint {
    base_url: String,
    key: Option<String>,
    format: Format,
}

/// The base URL, key and tool format of the provider, from the options and the environment;
/// a malformed base URL is bad input, refused before any request.
fn endpoint(options: &RunOptions) -> Result<Endpoint, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (url_var, key_var, default_base, format) = match options.provider {
        Provider::OpenAi => (
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            llm::OPENAI_DEFAULT_BASE,
            Format::OpenAi,
        ),
        Provider::Anthropic => (
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
            llm::ANTHROPIC_DEFAULT_BASE,
            Format::Anthropic,
        ),
    };
    let (base_url, source) = match (&options.base_url, env(url_var)) {
        (Some(url), _) => (url.clone(), "--base-url".to_string()),
        (None, Some(url)) => (url, url_var.to_string()),
        (None, None) => (default_base.to_string(), "the default base URL".to_string()),
    };
    llm::check_base_url(&base_url).map_err(|why| format!("{source} {base_url:?}: {why}"))?;
    Ok(Endpoint {
        base_url,
        key: env(key_var),
        format,
    })
}

/// Everything a running session holds.
struct Session<'a> {
    options: &'a RunOptions,
    console: &'a Console,
    runner: Runner,
    client: Arc<Client>,
    conversation: Conversation,
    transcript: Transcript,
    gate: Gate,
    spinner: bool,
    /// Times a Stop hook sent the model back to work (at most `hooks::STOP_BLOCKS_MAX`).
    stop_blocks: u32,
}

pub fn run(options: RunOptions) -> ExitCode {
    let console = Console {
        quiet: options.quiet,
        err: Paint::stderr(),
    };
    match Session::start(&options, &console) {
        Ok(mut session) => session.drive(),
        Err(why) => {
            console.error(&why);
            ExitCode::from(EXIT_USAGE)
        }
    }
}

impl<'a> Session<'a> {
    /// Check the options and open what the session needs; every Err is bad usage or
    /// configuration, found before the model is asked anything.
    fn start(options: &'a RunOptions, console: &'a Console) -> Result<Session<'a>, String> {
        let runner = prepare(&options.place)?;
        let model = options
            .model
            .clone()
            .or_else(|| std::env::var("SNEAKY_MODEL").ok().filter(|m| !m.is_empty()))
            .ok_or("no model: pass --model NAME or set SNEAKY_MODEL")?;
        let task = read_task(&options.task)?;
        let endpoint = endpoint(options)?;
        let mut transcript = Transcript::open(options.transcript.as_deref())?;
        ui::install_interrupt_handler();
        let client = Arc::new(Client::new(
            options.provider,
            &endpoint.base_url,
            model,
            endpoint.key,
        ));
        if let Some(file) = &runner.hooks().ignored_in_workspace {
            console.error(&crate::hooks::ignored_note(file));
        }
        let offered = definitions::offered(runner.config());
        let tools = definitions::definitions(&offered, endpoint.format);
        let conversation = Conversation::new(
            options.provider,
            system_prompt(runner.root(), &offered),
            &task,
            tools,
        );
        transcript.log(
            "start",
            json!({"task": task, "model": client.model(), "url": client.url(),
                   "root": runner.root().display().to_string()}),
        );
        Ok(Session {
            options,
            console,
            runner,
            client,
            conversation,
            transcript,
            gate: Gate::new(options.yes),
            spinner: !options.quiet && std::io::stderr().is_terminal(),
            stop_blocks: 0,
        })
    }

    /// The loop: ask the model, run its calls, send the results, until it calls finish.
    fn drive(&mut self) -> ExitCode {
        let mut idle_replies = 0;
        for turn in 1..=self.options.max_turns {
            if ui::interrupted() {
                return self.interrupted();
            }
            let reply = match self.ask_model(turn) {
                Ok(reply) => reply,
                Err(exit) => return exit,
            };
            self.console.text(&reply.text);
            self.conversation.push_assistant(&reply);
            if reply.calls.is_empty() {
                idle_replies += 1;
                if idle_replies >= 2 {
                    self.console
                        .error("the model stopped calling tools without calling finish");
                    return self.end("no_tool_calls", None, EXIT_FAILED);
                }
                self.conversation.push_user_text(NUDGE);
                continue;
            }
            idle_replies = 0;
            if let Some(exit) = self.run_calls(&reply.calls) {
                return exit;
            }
        }
        self.console.error(&format!(
            "stopped after {} model replies without the model calling finish (--max-turns {}); \
             raise --max-turns or make the task smaller",
            self.options.max_turns, self.options.max_turns
        ));
        self.end("max_turns", None, EXIT_FAILED)
    }

    /// Send the conversation and read the reply; Err is how the session ends instead.
    fn ask_model(&mut self, turn: u32) -> Result<Reply, ExitCode> {
        let body = self.conversation.request_body(self.client.model());
        self.transcript
            .log("request", json!({"turn": turn, "body": body}));
        let (client, spinner, quiet) = (Arc::clone(&self.client), self.spinner, self.options.quiet);
        let waited = ui::wait_for("waiting for the model", spinner, move || {
            client.send(&body, &|note: &str| {
                if spinner {
                    eprintln!("\r\x1b[K{note}");
                } else if !quiet {
                    eprintln!("{note}");
                }
            })
        });
        let reply_body = match waited {
            Waited::Done(Ok(body)) => body,
            Waited::Done(Err(e)) => {
                self.console.error(&e);
                return Err(self.end("model_error", Some(e), EXIT_FAILED));
            }
            Waited::Interrupted => return Err(self.interrupted()),
            Waited::Lost => {
                let why = "the request to the model failed unexpectedly".to_string();
                self.console.error(&why);
                return Err(self.end("model_error", Some(why), EXIT_FAILED));
            }
        };
        self.transcript
            .log("reply", json!({"turn": turn, "body": reply_body}));
        llm::parse_reply(self.options.provider, &reply_body).map_err(|e| {
            self.console
                .error(&format!("the model server's reply cannot be read: {e}"));
            self.end("bad_reply", Some(e), EXIT_FAILED)
        })
    }

    /// Run a reply's calls in order and send their results back; Some is how the session ends.
    fn run_calls(&mut self, calls: &[ToolCall]) -> Option<ExitCode> {
        let mut results = Vec::new();
        for call in calls {
            if ui::interrupted() {
                return Some(self.interrupted());
            }
            self.console.call(call);
            let (envelope, after) = handle_call(&self.runner, &mut self.gate, call);
            self.console.result(&envelope);
            self.transcript.log(
                "call",
                json!({"id": call.id, "name": call.name, "arguments": call.raw_arguments}),
            );
            self.transcript
                .log("result", json!({"id": call.id, "envelope": envelope}));
            match after {
                After::Continue => {}
                After::Finish(message) => match self.stop_hooks() {
                    // The model is told why it is not done, as the result of its finish.
                    Some(reason) => {
                        results.push(ToolResult {
                            id: call.id.clone(),
                            is_error: true,
                            content: reason,
                            image: None,
                        });
                        continue;
                    }
                    None => return Some(self.finish(&message)),
                },
                After::Quit => {
                    self.console.error("stopped: the person answered quit");
                    return Some(self.end("quit", None, EXIT_INTERRUPTED));
                }
            }
            results.push(ToolResult {
                id: call.id.clone(),
                is_error: !is_ok(&envelope),
                // What the model reads; the envelope stays in the transcript.
                content: crate::tools::outcome::model_envelope(&envelope),
                image: envelope
                    .get("result")
                    .filter(|_| is_ok(&envelope))
                    .and_then(ImagePart::of_result),
            });
        }
        self.conversation.push_results(results);
        None
    }

    /// The Stop hooks, when the model calls finish: Some(reason) when one keeps it working
    /// (`decision: "block"`), at most `hooks::STOP_BLOCKS_MAX` times a session.
    fn stop_hooks(&mut self) -> Option<String> {
        let hooks = self.runner.hooks();
        if hooks.stop.is_empty() || self.stop_blocks >= crate::hooks::STOP_BLOCKS_MAX {
            return None;
        }
        let caller = self.runner.caller("");
        let reason = crate::hooks::stop(hooks, self.runner.root(), &caller, self.stop_blocks > 0)?;
        self.stop_blocks += 1;
        self.console.error(&format!(
            "a Stop hook keeps the model working ({} of at most {}): {reason}",
            self.stop_blocks,
            crate::hooks::STOP_BLOCKS_MAX
        ));
        self.transcript.log("stop_hook", json!({"reason": reason}));
        Some(reason)
    }

    /// The model called finish: its message on stdout.
    fn finish(&mut self, message: &str) -> ExitCode {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", for_terminal(message, &out));
        let _ = out.flush();
        self.end("finish", Some(message.to_string()), 0)
    }

    fn interrupted(&mut self) -> ExitCode {
        self.console.error("interrupted; stopping");
        self.end("interrupted", None, EXIT_INTERRUPTED)
    }

    /// Log the end and give the exit status. Calls refused because nobody could approve them
    /// make any ending a failure, and the person is told which.
    fn end(&mut self, reason: &str, message: Option<String>, status: u8) -> ExitCode {
        let mut fields = json!({"reason": reason});
        if let Some(message) = message {
            fields["message"] = message.into();
        }
        let unapproved = self.gate.unapproved();
        let mut status = status;
        if !unapproved.is_empty() {
            self.console.error(&unapproved_note(unapproved));
            fields["unapproved"] = json!(unapproved);
            if status == 0 {
                status = EXIT_FAILED;
            }
        }
        self.transcript.log("end", fields);
        ExitCode::from(status)
    }
}

/// What the person is told when calls were refused for lack of approval.
pub fn unapproved_note(tools: &[String]) -> String {
    format!(
        "calls to {} were refused: they need the person's approval, and there was no terminal \
         to ask on and no --yes. Run on a terminal, pass --yes, or move the tools to \
         permissions.allow",
        tools.join(", ")
    )
}

/// Check, gate and run one call; the envelope is what the model gets back.
fn handle_call(runner: &Runner, gate: &mut Gate, call: &ToolCall) -> (Value, After) {
    let args = match &call.arguments {
        Ok(args) => args,
        Err(why) => {
            return (
                error_envelope(
                    &call.name,
                    ErrorKind::InvalidJson,
                    format!("{why}; send the arguments as one JSON object"),
                ),
                After::Continue,
            )
        }
    };
    let (envelope, quit) = gate.run(runner, &call.name, args, &call.id);
    if quit {
        return (envelope, After::Quit);
    }
    // A successful envelope means the name was a known tool, so this is the real end; what
    // the person is told is the tool's text for a model (finish: its message).
    let ends = crate::tools::find(&call.name).is_some_and(|spec| spec.hints.ends_session);
    if ends && is_ok(&envelope) {
        let message = crate::tools::outcome::model_envelope(&envelope);
        return (envelope, After::Finish(message));
    }
    (envelope, After::Continue)
}
