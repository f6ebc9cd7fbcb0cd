//! One `tools/call`, on a worker thread: check the request, run the tool — in this process
//! through the one dispatch (`tools::call`, under the call's `crate::cancel` flag, so that a
//! cancelled walk stops early), or in its own binary when its hints ask for
//! isolation (run_command: `crate::isolate`) — and answer. A cancelled call gets no answer (the
//! spec: no response for a cancelled request); its command's process tree is killed. When the
//! request carries `_meta.progressToken`, an isolated call reports `notifications/progress`
//! (elapsed seconds, bytes of output so far) every [`PROGRESS_EVERY`].

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::catalog;
use super::jsonrpc;
use super::log::{log, log_call, CallEnd};
use super::shape::Dialect;
use super::version::Version;
use crate::cancel::Cancel;
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::{Control, Ended, Isolation, Progress};
use crate::tools::{Context, ToolSpec};

/// How often a long call reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// Where a session's messages to the client go (stdout, an SSE stream …). Implementations
/// serialize; `send` never blocks for long and drops the message when the client is gone.
pub trait Outbound: Send + Sync {
    fn send(&self, message: &Value);
}

/// What every call of a server shares: the open workspace and how to run isolated tools.
pub struct Tools {
    pub ctx: Context,
    pub isolation: Isolation,
    pub read_only: bool,
}

impl Tools {
    pub fn new(ctx: Context, config_path: Option<std::path::PathBuf>, read_only: bool) -> Tools {
        let isolation = Isolation::new(ctx.ws.root().to_path_buf(), config_path, "sneaky-mcp");
        if let Some(file) = &ctx.config.hooks.ignored_in_workspace {
            log(crate::hooks::ignored_note(file));
        }
        Tools {
            ctx,
            isolation,
            read_only,
        }
    }
}

/// One call as the reading thread hands it over.
pub struct ToolCall {
    pub id: Value,
    pub params: Option<Value>,
    /// The session's protocol version and shape of results.
    pub dialect: Dialect,
    pub cancel: Cancel,
    pub out: Arc<dyn Outbound>,
    /// The session's running calls; this one leaves it just before it answers.
    pub in_flight: InFlight,
    /// The session's tag for the background jobs it starts, when the server serves several
    /// sessions (over HTTP): they end with the session.
    pub job_owner: Option<Arc<str>>,
    /// The session's name in log lines (over HTTP).
    pub session: Option<Arc<str>>,
    /// When the request came in: the call's logged duration includes its wait for a worker.
    pub received: Instant,
}

/// The calls of a session that are queued or running, by request id, so that a
/// `notifications/cancelled` reaches the right one.
#[derive(Clone, Default)]
pub struct InFlight(Arc<Mutex<HashMap<String, Cancel>>>);

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Cancel>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new call's cancellation token; None when a call with that id is still running.
    pub fn start(&self, id: &Value) -> Option<Cancel> {
        let mut map = self.lock();
        let key = jsonrpc::id_key(id);
        if map.contains_key(&key) {
            return None;
        }
        let token = Cancel::new();
        map.insert(key, token.clone());
        Some(token)
    }

    pub fn finish(&self, id: &Value) {
        self.lock().remove(&jsonrpc::id_key(id));
    }

    /// Cancel the call with that id, if it is still queued or running.
    pub fn cancel(&self, id: &Value) -> bool {
        let token = self.lock().get(&jsonrpc::id_key(id)).cloned();
        match token {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancel every call (the session ends).
    pub fn cancel_all(&self) {
        let tokens: Vec<Cancel> = self.lock().values().cloned().collect();
        for token in tokens {
            token.cancel();
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

/// Set when the stopping server cancels the calls still running after its grace period
/// (SIGTERM or SIGINT over HTTP): a call cancelled from then on was cancelled by the server,
/// not by its client, and is answered so.
static STOPPING: AtomicBool = AtomicBool::new(false);

pub fn set_stopping() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// The answer to a call the stopping server cancelled (a client-cancelled call gets none).
fn stopped_answer(id: &Value) -> Value {
    jsonrpc::error_response(
        id,
        jsonrpc::INTERNAL_ERROR,
        "sneaky-mcp stopped (SIGTERM or SIGINT) before this call ended: it was cancelled, and \
         a command's process tree killed",
    )
}

/// Run the call and send its answer, unless it was cancelled; log its end.
pub fn run(call: ToolCall, tools: &Tools) {
    let cancelled = || {
        if STOPPING.load(Ordering::SeqCst) {
            "stopped"
        } else {
            "cancelled"
        }
    };
    if call.cancel.is_cancelled() {
        call.in_flight.finish(&call.id);
        log(format!("request {} was cancelled before it ran", call.id));
        if STOPPING.load(Ordering::SeqCst) {
            call.out.send(&stopped_answer(&call.id));
        }
        log_end(&call, cancelled(), None);
        return;
    }
    let (reply, (outcome, code)) = answer(&call, tools);
    // Before the answer goes out: the client may reuse the id as soon as it has it.
    call.in_flight.finish(&call.id);
    let outcome = match reply {
        Some(reply) if !call.cancel.is_cancelled() => {
            call.out.send(&reply);
            outcome
        }
        _ if STOPPING.load(Ordering::SeqCst) => {
            call.out.send(&stopped_answer(&call.id));
            "stopped"
        }
        Some(_) => {
            log(format!(
                "request {} was cancelled; its result is dropped",
                call.id
            ));
            "cancelled"
        }
        None => "cancelled",
    };
    log_end(&call, outcome, code.filter(|_| outcome == "error"));
}

fn log_end(call: &ToolCall, outcome: &'static str, code: Option<&'static str>) {
    log_call(&CallEnd {
        session: call.session.as_deref(),
        tool: named_tool(call.params.as_ref()).map(ToolSpec::name),
        took: call.received.elapsed(),
        outcome,
        code,
    });
}

/// How a call ended for its log line: the outcome, and a tool error's code.
type Logged = (&'static str, Option<&'static str>);

const INVALID: Logged = ("invalid_params", None);

/// The response to send (None when the call was cancelled while it ran), and how it ended.
// Long: a tools/call from its params to its response: each malformed part answers
// invalid_params with its own message, then the call and its outcome for the log line.
fn answer(call: &ToolCall, tools: &Tools) -> (Option<Value>, Logged) {
    let id = &call.id;
    let Some(Value::Object(params)) = &call.params else {
        let reply = invalid_params(id, "tools/call: params must be an object");
        return (Some(reply), INVALID);
    };
    let Some(Value::String(name)) = params.get("name") else {
        let reply = invalid_params(id, "tools/call: params.name must be a string");
        return (Some(reply), INVALID);
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(args @ Value::Object(_)) => args.clone(),
        Some(_) => {
            let reply = invalid_params(id, "tools/call: params.arguments must be an object");
            return (Some(reply), INVALID);
        }
    };
    let Some(spec) = catalog::find(name) else {
        return (
            Some(invalid_params(id, format!("unknown tool: {name}"))),
            INVALID,
        );
    };
    // The user's hooks, once, here (an isolated tool's binary is told they ran).
    let hooks = &tools.ctx.config.hooks;
    let caller;
    let mut hooked = None;
    let mut arguments = arguments;
    if !hooks.is_empty() && catalog::exposed(spec, &tools.ctx.config, tools.read_only) {
        caller = hook_caller(call);
        let hook_call = crate::hooks::Call {
            hooks,
            root: tools.ctx.ws.root(),
            tool: spec.name,
            caller: &caller,
        };
        match hook_call
            .before(arguments)
            .and_then(|b| b.unattended(spec.name, "sneaky-mcp"))
        {
            Ok(before) => {
                arguments = before.args;
                hooked = Some((hook_call, before.context, arguments.clone()));
            }
            Err(e) => {
                let reply = catalog::call_result(spec.name(), Err(e), call.dialect);
                return (
                    Some(jsonrpc::response(id, reply)),
                    ("error", Some("hook_denied")),
                );
            }
        }
    }
    let outcome = if !catalog::exposed(spec, &tools.ctx.config, tools.read_only) {
        Err(catalog::refusal(spec, &tools.ctx.config))
    } else if spec.hints.isolated {
        match run_isolated(call, spec, &arguments, tools) {
            Some(outcome) => outcome,
            None => return (None, ("cancelled", None)),
        }
    } else {
        // A walk (list, grep, find) stops early once the call is cancelled.
        let flag = &call.cancel;
        run_guarded(|| flag.run(|| crate::tools::call(spec, arguments, &tools.ctx)))
    };
    let said = match (&hooked, &outcome) {
        (Some((hook_call, context, args)), Ok(result)) => {
            hook_call.after(args, result, context.clone())
        }
        _ => None,
    };
    if let Err(e) = &outcome {
        if e.kind == ErrorKind::Internal {
            log(format!("{name}: {}", e.message()));
        }
    }
    let logged = match &outcome {
        Ok(_) => ("ok", None),
        Err(e) => ("error", Some(e.code())),
    };
    let mut result = catalog::call_result(spec.name(), outcome, call.dialect);
    if let Some(said) = said {
        with_hook_context(&mut result, &said);
    }
    (Some(jsonrpc::response(id, result)), logged)
}

/// Who calls, for the hooks: the session (over HTTP), else this server; the request's id.
fn hook_caller(call: &ToolCall) -> crate::hooks::Caller {
    crate::hooks::Caller {
        session_id: match &call.session {
            Some(session) => session.to_string(),
            None => format!("sneaky-mcp-{}", std::process::id()),
        },
        tool_use_id: jsonrpc::id_key(&call.id),
    }
}

/// What the PostToolUse hooks said, in the text after the result (the model reads it there).
fn with_hook_context(result: &mut Value, said: &str) {
    let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    let note = format!("hook_context: {said}");
    match content.first_mut().and_then(|b| b.get_mut("text")) {
        Some(Value::String(text)) => {
            text.push_str("\n\n");
            text.push_str(&note);
        }
        _ => content.push(json!({"type": "text", "text": note})),
    }
}

/// The outcome of a tool run in its own binary, or None when cancelled.
fn run_isolated(
    call: &ToolCall,
    spec: &ToolSpec,
    arguments: &Value,
    tools: &Tools,
) -> Option<Result<Value>> {
    // Refuse what the binary would refuse before starting it.
    if let Err(e) = (spec.check_args)(arguments) {
        return Some(Err(e));
    }
    let token = progress_token(call.params.as_ref());
    let wants_progress = token.is_some();
    let out = Arc::clone(&call.out);
    let version = call.dialect.version;
    let report = move |p: Progress| {
        if let Some(token) = &token {
            out.send(&progress_notification(token, p, version));
        }
    };
    let control = Control {
        flags: &[],
        cancel: Some(&call.cancel),
        progress: wants_progress.then_some((&report as &(dyn Fn(Progress) + Sync), PROGRESS_EVERY)),
        job_owner: call.job_owner.as_deref(),
        // An MCP host stops waiting for a call after its own limit: a long command goes on as
        // a background job (tools.shell.yield_after_seconds).
        yields: true,
        // Run in `answer`, before the binary is started.
        hooks_ran: true,
    };
    match tools.isolation.run(spec, arguments, control) {
        Ended::Finished(outcome) => Some(outcome),
        Ended::Cancelled(r) => {
            log(format!(
                "request {} ({}) cancelled: the process tree was gone after {:.1} ms{}",
                call.id,
                spec.name(),
                r.tree_gone_after.as_secs_f64() * 1000.0,
                if r.left_behind > 0 {
                    format!(", {} processes could not be killed", r.left_behind)
                } else {
                    String::new()
                }
            ));
            None
        }
    }
}

/// The messages of a call run on the thread that handles its request, sent once it returns.
#[derive(Default)]
pub struct Collected(std::sync::Mutex<Vec<Value>>);

impl Collected {
    pub fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Outbound for Collected {
    fn send(&self, message: &Value) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(message.clone());
    }
}

/// The answers to one JSON-RPC batch, sent together as one array once every call of the batch
/// has ended (when the last holder lets go: the serving thread after the batch, and each call
/// when it ends), so that a cancelled call, which never answers, holds nothing up. Messages
/// that are not answers (progress, the server's own requests) go out at once.
pub struct BatchOut {
    inner: Arc<dyn Outbound>,
    answers: Mutex<Vec<Value>>,
}

impl BatchOut {
    pub fn new(inner: Arc<dyn Outbound>) -> BatchOut {
        BatchOut {
            inner,
            answers: Mutex::new(Vec::new()),
        }
    }
}

impl Outbound for BatchOut {
    fn send(&self, message: &Value) {
        if message.get("method").is_some() {
            self.inner.send(message);
        } else {
            self.answers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(message.clone());
        }
    }
}

impl Drop for BatchOut {
    fn drop(&mut self) {
        let answers = std::mem::take(self.answers.get_mut().unwrap_or_else(|p| p.into_inner()));
        // A batch of notifications (or of cancelled calls) gets nothing back.
        if !answers.is_empty() {
            self.inner.send(&Value::Array(answers));
        }
    }
}

fn named_tool(params: Option<&Value>) -> Option<&'static ToolSpec> {
    params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .and_then(catalog::find)
}

/// Whether a `tools/call` is over in about the time of one file's work (a read or an edit,
/// bounded by `max_file_size_bytes`), so that the thread reading requests may run it itself
/// without holding up pings and cancellations for long. Walks and isolated tools are not.
pub fn brief(params: Option<&Value>) -> bool {
    named_tool(params).is_some_and(|spec| !spec.hints.isolated && !spec.hints.walks)
}

/// Whether a `tools/call` is a brief read (`brief`, and the tool never changes anything) with
/// no hook configured to run around it: the work of reading one file and nothing else, which
/// the thread reading requests may run itself even while other calls run.
pub fn quick_read(params: Option<&Value>, config: &crate::config::Config) -> bool {
    config.hooks.is_empty()
        && named_tool(params)
            .is_some_and(|spec| spec.hints.read_only && !spec.hints.isolated && !spec.hints.walks)
}

/// `params._meta.progressToken`, when it is a string or an integer as the spec requires.
pub fn progress_token(params: Option<&Value>) -> Option<Value> {
    let token = params?.get("_meta")?.get("progressToken")?;
    (token.is_string() || token.is_i64() || token.is_u64()).then(|| token.clone())
}

fn progress_notification(token: &Value, p: Progress, version: Version) -> Value {
    let seconds = (p.elapsed.as_millis() as f64) / 1000.0;
    let mut params = json!({"progressToken": token, "progress": seconds});
    if version.has_progress_message() {
        params["message"] = json!(format!(
            "{seconds:.1} s, {} bytes of output so far",
            p.output_bytes
        ));
    }
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
}

/// A panicking tool is a bug; the server reports it as that call's failure and goes on.
fn run_guarded(f: impl FnOnce() -> Result<Value>) -> Result<Value> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(Error::new(
            ErrorKind::Internal,
            "the tool panicked; this is a bug in SneakyCode",
        ))
    })
}

pub fn invalid_params(id: &Value, message: impl Into<String>) -> Value {
    jsonrpc::error_response(id, jsonrpc::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_tokens() {
        let p = json!({"_meta": {"progressToken": "t1"}});
        assert_eq!(progress_token(Some(&p)), Some(json!("t1")));
        let p = json!({"_meta": {"progressToken": 7}});
        assert_eq!(progress_token(Some(&p)), Some(json!(7)));
        let p = json!({"_meta": {"progressToken": 1.5}});
        assert_eq!(progress_token(Some(&p)), None);
        assert_eq!(progress_token(Some(&json!({}))), None);
    }

    #[test]
    fn progress_shapes() {
        let p = Progress {
            elapsed: Duration::from_millis(1500),
            output_bytes: 42,
        };
        let n = progress_notification(&json!("t"), p, Version::LATEST);
        assert_eq!(n["params"]["progress"], 1.5);
        assert!(n["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("42 bytes")));
        let old = progress_notification(&json!("t"), p, Version::V2024_11_05);
        assert!(old["params"].get("message").is_none());
    }
}
