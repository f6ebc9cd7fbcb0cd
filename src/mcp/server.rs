//! The serving loop: one message at a time, in order, on the calling thread; the tools run
//! synchronously exactly as the binaries run them (`tools::call`).
//!
//! The workspace is opened once. With `--root` or `SNEAKY_ROOT` that happens before serving;
//! otherwise, when the client offers roots, the server asks for them (`roots/list`) after the
//! handshake and holds back `tools/list` and `tools/call` until the answer comes (pings and the
//! rest are served meanwhile); without roots, the project around the current directory (its
//! `sneaky.toml` or `.git`, as for the binaries: `discover`).

use std::collections::VecDeque;
use std::io::{self, Write};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::catalog;
use super::jsonrpc::{self, Inbox, Incoming, Message};
use super::roots;
use super::version::Version;
use crate::config::DEFAULT_MAX_FILE_SIZE;
use crate::discover;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;
use crate::tools::Context;

/// How long the server waits for the client's answer to `roots/list` before it falls back to
/// the project around the current directory.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(10);

/// Room for the JSON-RPC envelope around a file's worth of escaped content.
const LINE_SLACK: u64 = 64 * 1024;

pub struct Options {
    pub root: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub read_only: bool,
}

/// Where the workspace stands.
enum Workspace {
    /// To be chosen: the client's roots if it offers them, else the project around the current
    /// directory.
    Undecided,
    /// `roots/list` was sent; tool requests wait for its answer.
    AwaitingRoots {
        request_id: Value,
        since: Instant,
    },
    Open(Box<Context>),
    /// Opening failed; every tool call reports why.
    Failed(Error),
}

struct Server<W: Write> {
    opts: Options,
    out: W,
    workspace: Workspace,
    version: Version,
    client_has_roots: bool,
    next_request_id: u64,
    /// Tool requests held back until the workspace is known.
    waiting: VecDeque<(Value, String, Option<Value>)>,
    /// Messages read ahead of their turn.
    inbox: Inbox,
    line_limit: Arc<AtomicU64>,
}

/// Why serving ended early (EOF is a normal end, not an error).
enum Stop {
    /// Stdout is closed: the client is gone.
    OutputClosed,
    Io(io::Error),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop::OutputClosed
        } else {
            Stop::Io(e)
        }
    }
}

/// Serve MCP on `input`/`output` until EOF. Fails before serving if a workspace named by
/// `--root`/`SNEAKY_ROOT` cannot be opened, and later only if stdin cannot be read or stdout
/// fails other than by being closed.
pub fn serve<R, W>(opts: Options, input: R, output: W) -> Result<()>
where
    R: io::Read + Send + 'static,
    W: Write,
{
    let line_limit = Arc::new(AtomicU64::new(line_limit_for(DEFAULT_MAX_FILE_SIZE)));
    let mut server = Server {
        opts,
        out: output,
        workspace: Workspace::Undecided,
        version: Version::LATEST,
        client_has_roots: false,
        next_request_id: 1,
        waiting: VecDeque::new(),
        inbox: Inbox::default(),
        line_limit: Arc::clone(&line_limit),
    };
    // --root, SNEAKY_ROOT or workspace_root in the configuration, as for the tool binaries.
    let named_root =
        discover::named_root(server.opts.root.as_deref(), server.opts.config.as_deref())?;
    if let Some(found) = named_root {
        let ctx = protocol::open_found(&found, server.opts.config.clone())?;
        server.set_open(ctx, &found.origin.describe());
    }
    let rx = jsonrpc::spawn_reader(input, line_limit)
        .map_err(|e| Error::io("starting the stdin reader", e))?;
    match server.run(&rx) {
        Ok(()) | Err(Stop::OutputClosed) => Ok(()),
        Err(Stop::Io(e)) => Err(Error::io("serving MCP", e)),
    }
}

fn line_limit_for(max_file_size: u64) -> u64 {
    max_file_size.saturating_mul(4).saturating_add(LINE_SLACK)
}

pub fn log(message: impl std::fmt::Display) {
    let _ = writeln!(io::stderr(), "sneaky-mcp: {message}");
}

impl<W: Write> Server<W> {
    fn run(&mut self, rx: &Receiver<Incoming>) -> std::result::Result<(), Stop> {
        loop {
            let incoming = match self.inbox.pop() {
                Some(incoming) => incoming,
                None => match self.wait(rx)? {
                    Some(incoming) => incoming,
                    None => continue, // the roots answer timed out and was dealt with
                },
            };
            match incoming {
                Incoming::Message(Message::Request { id, method, params }) => {
                    // Look ahead: a cancellation may already be waiting behind this request.
                    self.inbox.drain(rx);
                    if self.inbox.take_cancelled(&id) {
                        log(format!(
                            "request {id} ({method}) was cancelled before it ran"
                        ));
                        continue;
                    }
                    self.request(id, method, params)?;
                }
                Incoming::Message(Message::Notification { method, params }) => {
                    self.notification(&method, params.as_ref())?;
                }
                Incoming::Message(Message::Response { id, outcome }) => {
                    self.inbox.drain(rx);
                    self.response(id, outcome)?;
                }
                Incoming::Fault(fault) => {
                    log(&fault.message);
                    self.send(&jsonrpc::error_response(
                        &fault.id,
                        fault.code,
                        fault.message,
                    ))?;
                }
                Incoming::Eof => {
                    if matches!(self.workspace, Workspace::AwaitingRoots { .. }) {
                        log("stdin closed before the client listed its roots");
                        self.open_fallback()?;
                    }
                    return Ok(());
                }
                Incoming::Failed(e) => {
                    log(format!("reading stdin: {e}"));
                    return Err(Stop::Io(e));
                }
            }
        }
    }

    /// The next message from the reader; None when waiting for roots timed out.
    fn wait(&mut self, rx: &Receiver<Incoming>) -> std::result::Result<Option<Incoming>, Stop> {
        let Workspace::AwaitingRoots { since, .. } = &self.workspace else {
            return Ok(Some(rx.recv().unwrap_or(Incoming::Eof)));
        };
        let left = ROOTS_TIMEOUT.saturating_sub(since.elapsed());
        match rx.recv_timeout(left) {
            Ok(incoming) => Ok(Some(incoming)),
            Err(RecvTimeoutError::Disconnected) => Ok(Some(Incoming::Eof)),
            Err(RecvTimeoutError::Timeout) => {
                log("the client did not answer roots/list in time");
                self.inbox.drain(rx);
                self.open_fallback()?;
                Ok(None)
            }
        }
    }

    fn send(&mut self, message: &Value) -> io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        self.out.flush()
    }

    fn request(
        &mut self,
        id: Value,
        method: String,
        params: Option<Value>,
    ) -> std::result::Result<(), Stop> {
        let reply = match method.as_str() {
            "initialize" => self.initialize(&id, params),
            "ping" => jsonrpc::response(&id, json!({})),
            "tools/list" | "tools/call" => {
                if !self.workspace_ready()? {
                    self.waiting.push_back((id, method, params));
                    return Ok(());
                }
                self.tool_request(&id, &method, params)
            }
            _ => jsonrpc::error_response(
                &id,
                jsonrpc::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            ),
        };
        Ok(self.send(&reply)?)
    }

    fn initialize(&mut self, id: &Value, params: Option<Value>) -> Value {
        let Some(Value::Object(params)) = params else {
            return invalid_params(id, "initialize: params must be an object");
        };
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return invalid_params(id, "initialize: params.protocolVersion must be a string");
        };
        self.version = Version::negotiate(requested);
        self.client_has_roots = params
            .get("capabilities")
            .and_then(|c| c.get("roots"))
            .is_some_and(Value::is_object);
        let mut server_info = json!({
            "name": "sneaky-mcp",
            "version": env!("CARGO_PKG_VERSION"),
        });
        if self.version.has_structured_output() {
            server_info["title"] = json!("SneakyCode");
        }
        jsonrpc::response(
            id,
            json!({
                "protocolVersion": self.version.as_str(),
                "capabilities": { "tools": { "listChanged": false } },
                "serverInfo": server_info,
                "instructions": INSTRUCTIONS,
            }),
        )
    }

    fn notification(
        &mut self,
        method: &str,
        params: Option<&Value>,
    ) -> std::result::Result<(), Stop> {
        match method {
            "notifications/initialized"
                if matches!(self.workspace, Workspace::Undecided) && self.client_has_roots =>
            {
                self.ask_for_roots()?;
            }
            "notifications/cancelled" => {
                let Some(id) = params.and_then(|p| p.get("requestId")) else {
                    return Ok(());
                };
                self.inbox.forget_cancelled(id);
                let before = self.waiting.len();
                self.waiting.retain(|(waiting_id, _, _)| waiting_id != id);
                if self.waiting.len() < before {
                    log(format!("request {id} was cancelled before it ran"));
                }
            }
            _ => {} // other notifications need nothing from a tools server
        }
        Ok(())
    }

    /// A response to the server's own request: only `roots/list` is ever asked.
    fn response(
        &mut self,
        id: Value,
        outcome: std::result::Result<Value, Value>,
    ) -> std::result::Result<(), Stop> {
        let Workspace::AwaitingRoots { request_id, .. } = &self.workspace else {
            log(format!("ignoring a response to unknown request {id}"));
            return Ok(());
        };
        if *request_id != id {
            log(format!("ignoring a response to unknown request {id}"));
            return Ok(());
        }
        match outcome {
            Ok(result) => match roots::first_local_root(&result) {
                Some(root) => {
                    match protocol::open_context(Some(root.clone()), self.opts.config.clone()) {
                        Ok(ctx) => self.set_open(ctx, "the client's first root"),
                        Err(e) => {
                            log(format!("workspace {}: {}", root.display(), e.message));
                            self.workspace = Workspace::Failed(e);
                        }
                    }
                }
                None => {
                    log("the client listed no file:// root");
                    self.open_fallback_context();
                }
            },
            Err(error) => {
                log(format!("roots/list failed: {error}"));
                self.open_fallback_context();
            }
        }
        self.serve_waiting()
    }

    fn ask_for_roots(&mut self) -> io::Result<()> {
        let request_id = json!(format!("sneaky-roots-{}", self.next_request_id));
        self.next_request_id += 1;
        self.send(&jsonrpc::request(&request_id, "roots/list", None))?;
        self.workspace = Workspace::AwaitingRoots {
            request_id,
            since: Instant::now(),
        };
        Ok(())
    }

    /// True when tool requests can be served now; may start the roots round trip.
    fn workspace_ready(&mut self) -> io::Result<bool> {
        match self.workspace {
            Workspace::Open(_) | Workspace::Failed(_) => Ok(true),
            Workspace::AwaitingRoots { .. } => Ok(false),
            Workspace::Undecided if self.client_has_roots => {
                self.ask_for_roots()?;
                Ok(false)
            }
            Workspace::Undecided => {
                self.open_fallback_context();
                Ok(true)
            }
        }
    }

    fn open_fallback(&mut self) -> std::result::Result<(), Stop> {
        self.open_fallback_context();
        self.serve_waiting()
    }

    /// The project around the current directory (its sneaky.toml or .git), as for the binaries.
    fn open_fallback_context(&mut self) {
        let opened = discover::find_root(None, self.opts.config.as_deref()).and_then(|found| {
            protocol::open_found(&found, self.opts.config.clone()).map(|ctx| (ctx, found))
        });
        match opened {
            Ok((ctx, found)) => self.set_open(ctx, &found.origin.describe()),
            Err(e) => {
                log(format!("workspace: {}", e.message));
                self.workspace = Workspace::Failed(e);
            }
        }
    }

    fn set_open(&mut self, ctx: Context, origin: &str) {
        log(format!(
            "workspace {} (from {origin}){}",
            ctx.ws.root().display(),
            if self.opts.read_only {
                ", read-only"
            } else {
                ""
            }
        ));
        self.line_limit.store(
            line_limit_for(ctx.config.max_file_size_bytes),
            Ordering::Relaxed,
        );
        self.workspace = Workspace::Open(Box::new(ctx));
    }

    fn serve_waiting(&mut self) -> std::result::Result<(), Stop> {
        while let Some((id, method, params)) = self.waiting.pop_front() {
            if self.inbox.take_cancelled(&id) {
                log(format!(
                    "request {id} ({method}) was cancelled before it ran"
                ));
                continue;
            }
            let reply = self.tool_request(&id, &method, params);
            self.send(&reply)?;
        }
        Ok(())
    }

    /// `tools/list` or `tools/call`, once the workspace is open (or known to have failed).
    fn tool_request(&mut self, id: &Value, method: &str, params: Option<Value>) -> Value {
        let ctx = match &self.workspace {
            Workspace::Open(ctx) => ctx,
            Workspace::Failed(e) if method == "tools/list" => {
                return jsonrpc::error_response(
                    id,
                    jsonrpc::INTERNAL_ERROR,
                    format!("the workspace could not be opened: {}", e.message),
                );
            }
            Workspace::Failed(e) => {
                let outcome = Err(e.clone());
                let tool = params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return jsonrpc::response(id, catalog::call_result(tool, &outcome, self.version));
            }
            Workspace::Undecided | Workspace::AwaitingRoots { .. } => {
                return jsonrpc::error_response(
                    id,
                    jsonrpc::INTERNAL_ERROR,
                    "the workspace is not open yet",
                );
            }
        };
        if method == "tools/list" {
            if params.as_ref().is_some_and(|p| !p.is_object()) {
                return invalid_params(id, "tools/list: params must be an object");
            }
            return jsonrpc::response(
                id,
                catalog::list(&ctx.config, self.opts.read_only, self.version),
            );
        }
        call_tool(id, params, ctx, self.opts.read_only, self.version)
    }
}

fn call_tool(
    id: &Value,
    params: Option<Value>,
    ctx: &Context,
    read_only: bool,
    version: Version,
) -> Value {
    let Some(Value::Object(mut params)) = params else {
        return invalid_params(id, "tools/call: params must be an object");
    };
    let Some(Value::String(name)) = params.remove("name") else {
        return invalid_params(id, "tools/call: params.name must be a string");
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(args @ Value::Object(_)) => args,
        Some(_) => return invalid_params(id, "tools/call: params.arguments must be an object"),
    };
    let Some(spec) = catalog::find(&name) else {
        return invalid_params(id, format!("unknown tool: {name}"));
    };
    let outcome = if catalog::exposed(spec, &ctx.config, read_only) {
        run_guarded(|| crate::tools::call(spec, arguments, ctx))
    } else {
        Err(catalog::refusal(spec, &ctx.config))
    };
    if let Err(e) = &outcome {
        if e.kind == ErrorKind::Internal {
            log(format!("{name}: {}", e.message));
        }
    }
    jsonrpc::response(id, catalog::call_result(spec.name(), &outcome, version))
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

fn invalid_params(id: &Value, message: impl Into<String>) -> Value {
    jsonrpc::error_response(id, jsonrpc::INVALID_PARAMS, message)
}

const INSTRUCTIONS: &str = "SneakyCode's tools work inside one workspace directory: paths are \
relative to its root, and paths that lead outside it (by '..', absolute paths or symbolic links) \
are refused. A failed call returns isError with the reason; structuredContent.error.code is a \
stable code such as not_found, outside_workspace or no_match.";
