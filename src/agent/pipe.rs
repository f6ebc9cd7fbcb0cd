//! `sneaky-agent pipe`: tool calls as JSON lines on stdin, one result line each on stdout, in
//! the shape the call came in, through the same checks, permission gate and binaries as `run`.
//! For other agent frameworks (hand over the model's tool calls, get back the messages to
//! append) and for jq.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::error::ErrorKind;

use super::approve::Gate;
use super::cli::Place;
use super::exec::{error_envelope, is_ok, Runner};
use super::llm::arguments_value;
use super::ui::EXIT_INTERRUPTED;
use super::{prepare, EXIT_FAILED, EXIT_USAGE};

/// The shape a call came in, which its result line keeps.
enum Shape {
    OpenAi { id: String },
    Anthropic { id: String },
    Plain,
}

struct Call {
    shape: Shape,
    name: String,
    arguments: Result<Value, String>,
}

/// Recognise one input line. Err is the envelope to print for a line that is no call at all.
fn parse_line(line: &str) -> Result<Call, Value> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        error_envelope(
            "",
            ErrorKind::InvalidJson,
            format!("the line is not JSON: {e}"),
        )
    })?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(function) = value.get("function").filter(|f| f.is_object()) {
        return Ok(Call {
            shape: Shape::OpenAi {
                id: text(value.get("id")),
            },
            name: text(function.get("name")),
            arguments: arguments_value(function.get("arguments").unwrap_or(&Value::Null)),
        });
    }
    if value.get("type").and_then(Value::as_str) == Some("tool_use") {
        return Ok(Call {
            shape: Shape::Anthropic {
                id: text(value.get("id")),
            },
            name: text(value.get("name")),
            arguments: arguments_value(value.get("input").unwrap_or(&Value::Null)),
        });
    }
    if let Some(name) = value.get("name").and_then(Value::as_str) {
        return Ok(Call {
            shape: Shape::Plain,
            name: name.to_string(),
            arguments: arguments_value(value.get("arguments").unwrap_or(&Value::Null)),
        });
    }
    Err(error_envelope(
        "",
        ErrorKind::InvalidJson,
        "the line is not a tool call: expected an OpenAI tool call \
         {\"id\",\"type\":\"function\",\"function\":{\"name\",\"arguments\"}}, an Anthropic \
         {\"type\":\"tool_use\",\"id\",\"name\",\"input\"} or {\"name\",\"arguments\"}",
    ))
}

fn result_line(shape: &Shape, envelope: &Value) -> Value {
    match shape {
        Shape::OpenAi { id } => json!({
            "role": "tool",
            "tool_call_id": id,
            "content": envelope.to_string(),
        }),
        Shape::Anthropic { id } => json!({
            "type": "tool_result",
            "tool_use_id": id,
            "content": envelope.to_string(),
            "is_error": !is_ok(envelope),
        }),
        Shape::Plain => envelope.clone(),
    }
}

pub fn pipe(yes: bool, place: &Place) -> ExitCode {
    let runner = match prepare(place) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sneaky-agent: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut gate = Gate::new(yes);
    let mut all_ok = true;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("sneaky-agent: reading stdin: {e}");
                return ExitCode::from(EXIT_FAILED);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let (shape, envelope, quit) = match parse_line(&line) {
            Err(envelope) => (Shape::Plain, envelope, false),
            Ok(call) => {
                let (envelope, quit) = run_call(&runner, &mut gate, &call);
                (call.shape, envelope, quit)
            }
        };
        all_ok &= is_ok(&envelope);
        let written =
            writeln!(out, "{}", result_line(&shape, &envelope)).and_then(|()| out.flush());
        if written.is_err() {
            // The reader went away: nobody is left to tell.
            return ExitCode::SUCCESS;
        }
        if quit {
            eprintln!("sneaky-agent: stopped: the person answered quit");
            return ExitCode::from(EXIT_INTERRUPTED);
        }
    }
    if !gate.unapproved().is_empty() {
        eprintln!(
            "sneaky-agent: {}",
            super::session::unapproved_note(gate.unapproved())
        );
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// The envelope of one call, and whether the person asked to stop.
fn run_call(runner: &Runner, gate: &mut Gate, call: &Call) -> (Value, bool) {
    let args = match &call.arguments {
        Ok(args) => args,
        Err(why) => {
            return (
                error_envelope(&call.name, ErrorKind::InvalidJson, why.clone()),
                false,
            )
        }
    };
    // The hooks are told the call's own id where its shape has one.
    let id = match &call.shape {
        Shape::OpenAi { id } | Shape::Anthropic { id } => id.as_str(),
        Shape::Plain => "",
    };
    gate.run(runner, &call.name, args, id)
}
