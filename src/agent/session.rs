//! The agent loop of `sneaky-agent run`: send the conversation, print the model's text, run
//! its tool calls in order (each through the checks, the permission gate and its binary),
//! send every result back under its call's id, until the model calls `finish`.

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
use super::llm::{self, Client, Conversation, Provider, ToolCall, ToolResult};
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
        let _ = writeln!(out, "{}", text.trim_end());
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
        eprintln!(
            "{} {} {}",
            self.err.cyan("→"),
            self.err.bold(&call.name),
            self.err.dim(&crate::tools::shorten(&args, 160))
        );
    }

    fn result(&self, envelope: &Value) {
        if self.quiet {
            return;
        }
        if is_ok(envelope) {
            eprintln!("  {}", self.err.green("ok"));
        } else {
            eprintln!(
                "  {}",
                self.err
                    .red(&crate::tools::shorten(&error_line(envelope), 300))
            );
        }
    }

    fn error(&self, text: &str) {
        eprintln!("{} {text}", self.err.red("sneaky-agent:"));
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
    let finish = if offered
        .iter()
        .any(|s| s.name == crate::catalog::ToolName::Finish)
    {
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
         - Each tool returns a JSON envelope: {{\"ok\":true,\"result\":{{…}}}} or \
         {{\"ok\":false,\"error\":{{\"code\",\"message\"}}}}. An error is information, not the \
         end: read its code and message and adapt (outside_workspace: use a path inside the \
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

pub fn run(options: RunOptions) -> ExitCode {
    let console = Console {
        quiet: options.quiet,
        err: Paint::stderr(),
    };
    let usage = |e: String| {
        console.error(&e);
        ExitCode::from(EXIT_USAGE)
    };
    let runner = match prepare(&options.place) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let model = match options
        .model
        .clone()
        .or_else(|| std::env::var("SNEAKY_MODEL").ok().filter(|m| !m.is_empty()))
    {
        Some(m) => m,
        None => return usage("no model: pass --model NAME or set SNEAKY_MODEL".into()),
    };
    let task = match read_task(&options.task) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (base_url, key, format) = match options.provider {
        Provider::OpenAi => (
            options
                .base_url
                .clone()
                .or_else(|| env("OPENAI_BASE_URL"))
                .unwrap_or_else(|| llm::OPENAI_DEFAULT_BASE.to_string()),
            env("OPENAI_API_KEY"),
            Format::OpenAi,
        ),
        Provider::Anthropic => (
            options
                .base_url
                .clone()
                .or_else(|| env("ANTHROPIC_BASE_URL"))
                .unwrap_or_else(|| llm::ANTHROPIC_DEFAULT_BASE.to_string()),
            env("ANTHROPIC_API_KEY"),
            Format::Anthropic,
        ),
    };
    let mut transcript = match Transcript::open(options.transcript.as_deref()) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    ui::install_interrupt_handler();
    let client = Arc::new(Client::new(options.provider, &base_url, model, key));
    let offered = definitions::offered(runner.config());
    let tools = definitions::definitions(&offered, format);
    let mut conversation = Conversation::new(
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
    let mut gate = Gate::new(options.yes);
    let spinner = !options.quiet && std::io::stderr().is_terminal();
    let mut idle_replies = 0;
    let interrupted = |transcript: &mut Transcript| {
        console.error("interrupted; stopping");
        transcript.log("end", json!({"reason": "interrupted"}));
        ExitCode::from(EXIT_INTERRUPTED)
    };

    for turn in 1..=options.max_turns {
        if ui::interrupted() {
            return interrupted(&mut transcript);
        }
        let body = conversation.request_body(client.model());
        transcript.log("request", json!({"turn": turn, "body": body}));
        let reply_body = {
            let client = Arc::clone(&client);
            let quiet = options.quiet;
            let body = body.clone();
            ui::wait_for("waiting for the model", spinner, move || {
                client.send(&body, &|note: &str| {
                    if spinner {
                        eprintln!("\r\x1b[K{note}");
                    } else if !quiet {
                        eprintln!("{note}");
                    }
                })
            })
        };
        let reply_body = match reply_body {
            Waited::Done(Ok(body)) => body,
            Waited::Done(Err(e)) => {
                console.error(&e);
                transcript.log("end", json!({"reason": "model_error", "message": e}));
                return ExitCode::from(EXIT_FAILED);
            }
            Waited::Interrupted => return interrupted(&mut transcript),
            Waited::Lost => {
                console.error("the request to the model failed unexpectedly");
                return ExitCode::from(EXIT_FAILED);
            }
        };
        transcript.log("reply", json!({"turn": turn, "body": reply_body}));
        let reply = match llm::parse_reply(options.provider, &reply_body) {
            Ok(r) => r,
            Err(e) => {
                console.error(&format!("the model server's reply cannot be read: {e}"));
                transcript.log("end", json!({"reason": "bad_reply", "message": e}));
                return ExitCode::from(EXIT_FAILED);
            }
        };
        console.text(&reply.text);
        conversation.push_assistant(&reply);
        if reply.calls.is_empty() {
            idle_replies += 1;
            if idle_replies >= 2 {
                console.error("the model stopped calling tools without calling finish");
                transcript.log("end", json!({"reason": "no_tool_calls"}));
                return ExitCode::from(EXIT_FAILED);
            }
            conversation.push_user_text(NUDGE);
            continue;
        }
        idle_replies = 0;
        let mut results = Vec::new();
        for call in &reply.calls {
            if ui::interrupted() {
                return interrupted(&mut transcript);
            }
            console.call(call);
            let (envelope, after) = handle_call(&runner, &mut gate, call);
            console.result(&envelope);
            transcript.log(
                "call",
                json!({"id": call.id, "name": call.name, "arguments": call.raw_arguments}),
            );
            transcript.log("result", json!({"id": call.id, "envelope": envelope}));
            match after {
                After::Continue => {}
                After::Finish(message) => {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{message}");
                    let _ = out.flush();
                    transcript.log("end", json!({"reason": "finish", "message": message}));
                    return ExitCode::SUCCESS;
                }
                After::Quit => {
                    console.error("stopped: the person answered quit");
                    transcript.log("end", json!({"reason": "quit"}));
                    return ExitCode::from(EXIT_INTERRUPTED);
                }
            }
            results.push(ToolResult {
                id: call.id.clone(),
                is_error: !is_ok(&envelope),
                content: envelope.to_string(),
            });
        }
        conversation.push_results(results);
    }
    console.error(&format!(
        "stopped after {} model replies without the model calling finish (--max-turns {}); \
         raise --max-turns or make the task smaller",
        options.max_turns, options.max_turns
    ));
    transcript.log("end", json!({"reason": "max_turns"}));
    ExitCode::from(EXIT_FAILED)
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
    let (envelope, quit) = gate.run(runner, &call.name, args);
    if quit {
        return (envelope, After::Quit);
    }
    // A successful envelope means the name was a known tool, so this is the real finish.
    if call.name == "finish" && is_ok(&envelope) {
        let message = envelope
            .pointer("/result/message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return (envelope, After::Finish(message));
    }
    (envelope, After::Continue)
}
