//! The stdio server: a reader thread parses lines, this thread routes them, a pool of workers
//! runs tool calls side by side (`[mcp] workers`), and each worker puts its answer on stdout as
//! soon as it is ready (one line under a lock; the last of the writers in line flushes, so answers
//! that end together leave in one write), in whatever order calls end, each with its request's id.
//! Pings, `initialize`, `tools/list` and cancellations are answered here at once, so they never
//! wait behind a long command.
//!
//! A session of protocol version 2025-03-26 may send JSON-RPC batches (that revision's MUST; the
//! others have none and refuse them): each answer of a batch goes into its `BatchOut`, which
//! writes them as one array once the batch's last call has ended.
//!
//! The workspace is opened once. With `--root` or `SNEAKY_ROOT` that happens before serving;
//! otherwise, when the client offers roots, the server asks for them (`roots/list`) after the
//! handshake and holds back `tools/call` until the answer comes (pings, `tools/list` and the
//! rest are served meanwhile); without roots, the project around the current directory (its
//! `sneaky.toml` or `.git`, as for the binaries: `discover`). Desktop hosts start servers in `/`
//! or the home directory, where there is none: the tools are listed all the same (by the
//! user's configuration), and a call says how to give a root.

use std::collections::VecDeque;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::calls::{self, BatchOut, InFlight, Outbound, ToolCall, Tools};
use super::catalog;
use super::jsonrpc::{self, Incoming, Message};
use super::log::{log, log_call, CallEnd};
use super::pool::Pool;
use super::roots;
use super::shape::{Dialect, StructuredChoice};
use super::version::Version;
use crate::config::{Config, DEFAULT_MAX_FILE_SIZE, DEFAULT_MCP_WORKERS};
use crate::discover;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;
use crate::render::json_out;
use crate::tools::Context;

/// How long the server waits for the client's answer to `roots/list` before it falls back to
/// the project around the current directory.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(10);

/// Room for the JSON-RPC envelope around a file's worth of escaped content.
const LINE_SLACK: u64 = 64 * 1024;

/// Messages read and answers not yet written; beyond this the reader and the workers wait
/// (a flood of input stays in the pipe, answers wait for the client to read).
const EVENTS: usize = 256;

pub struct Options {
    pub root: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub read_only: bool,
    /// `--structured-content`: the shape of the tools (`super::shape`).
    pub structured_content: StructuredChoice,
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
    Open(Arc<Tools>),
    /// Opening failed; every tool call reports why.
    Failed(Error),
}

struct Server<W: Write> {
    opts: Options,
    /// stdout, shared with the workers, which write their answers themselves.
    out: Arc<StdioOut<W>>,
    /// The same, for the calls this thread runs itself.
    unflushed: Arc<Unflushed<W>>,
    /// Messages from the reader and answers from the workers, in arrival order.
    events: Receiver<Event>,
    /// An event taken while looking ahead, to be handled next.
    next_event: Option<Event>,
    workspace: Workspace,
    dialect: Dialect,
    client_has_roots: bool,
    next_request_id: u64,
    /// Tool requests held back until the workspace is known (with the batch they came in).
    waiting: VecDeque<Waiting>,
    /// The batch being handled, which collects this thread's answers.
    batch: Option<Arc<BatchOut>>,
    line_limit: Arc<AtomicU64>,
    /// Started once the workspace (and so `[mcp] workers`) is known.
    pool: Option<Pool>,
    in_flight: InFlight,
    /// Writing stdout failed; serving stops at the next turn.
    write_failed: Option<io::Error>,
}

/// A tool request held back until the workspace is known.
struct Waiting {
    id: Value,
    method: String,
    params: Option<Value>,
    batch: Option<Arc<BatchOut>>,
}

/// What the serving thread waits for: a message read from stdin, or word that a worker could
/// not write stdout.
enum Event {
    In(Incoming),
    OutputFailed,
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

/// stdout, written by the serving thread and the workers: a message is one line, written whole
/// under the lock. A worker flushes when no other writer is in line behind it; the serving
/// thread leaves its own lines for the flush before it waits (`Server::wait`).
struct StdioOut<W: Write> {
    writer: Mutex<BufWriter<W>>,
    /// Writers holding or waiting for the lock.
    in_line: AtomicUsize,
    /// A worker's write failed (the first error); serving stops at the next turn.
    failed: Mutex<Option<io::Error>>,
    /// Wakes the serving thread when that happens.
    wake: SyncSender<Event>,
}

impl<W: Write> StdioOut<W> {
    fn writer(&self) -> MutexGuard<'_, BufWriter<W>> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Write one line; flush too when `flush` and nobody else is about to write.
    fn write_line(&self, line: &[u8], flush: bool) -> io::Result<()> {
        self.in_line.fetch_add(1, Ordering::SeqCst);
        let mut writer = self.writer();
        let written = writer.write_all(line);
        let last = self.in_line.fetch_sub(1, Ordering::SeqCst) == 1;
        match written {
            Ok(()) if flush && last => writer.flush(),
            other => other,
        }
    }

    fn flush(&self) -> io::Result<()> {
        self.writer().flush()
    }

    fn take_failure(&self) -> Option<io::Error> {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

thread_local! {
    /// A worker's answer as a line, serialized outside the lock; kept between calls, so that a
    /// file's worth of JSON costs no allocation or regrowth per answer.
    static LINE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Lines longer than this are not kept for the next answer.
const KEPT_LINE: usize = 1024 * 1024;

impl<W: Write + Send> StdioOut<W> {
    /// Serialize `message` as a line and write it (flushing as `write_line` says); a failure is
    /// kept for the serving thread, which stops at its next turn.
    fn send_line(&self, message: &Value, flush: bool) {
        let written = LINE.with(|line| {
            let mut line = line.borrow_mut();
            line.clear();
            json_out::write_value(&mut line, message);
            line.push(b'\n');
            let written = self.write_line(&line, flush);
            if line.capacity() > KEPT_LINE {
                *line = Vec::new();
            }
            written
        });
        if let Err(e) = written {
            let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
            if failed.is_none() {
                *failed = Some(e);
                // Full or closed: the serving thread is busy or gone and sees it anyway.
                let _ = self.wake.try_send(Event::OutputFailed);
            }
        }
    }
}

impl<W: Write + Send> Outbound for StdioOut<W> {
    fn send(&self, message: &Value) {
        self.send_line(message, true);
    }
}

/// stdout for a call the serving thread runs itself: its lines wait in the buffer for the
/// serving thread's flush before it next waits (`Server::wait`), so that the answers to
/// requests read together leave in one write.
struct Unflushed<W: Write>(Arc<StdioOut<W>>);

impl<W: Write + Send> Outbound for Unflushed<W> {
    fn send(&self, message: &Value) {
        self.0.send_line(message, false);
    }
}

/// Serve MCP on `input`/`output` until EOF. Fails before serving if a workspace named by
/// `--root`/`SNEAKY_ROOT` cannot be opened, and later only if stdin cannot be read or stdout
/// fails other than by being closed. Calls still running at EOF are answered before it returns.
pub fn serve<R, W>(opts: Options, input: R, output: W) -> Result<()>
where
    R: io::Read + Send + 'static,
    W: Write + Send + 'static,
{
    let line_limit = Arc::new(AtomicU64::new(line_limit_for(DEFAULT_MAX_FILE_SIZE)));
    let (tx, events) = mpsc::sync_channel(EVENTS);
    let dialect = Dialect::before_initialize(opts.structured_content);
    let out = Arc::new(StdioOut {
        writer: Mutex::new(BufWriter::with_capacity(64 * 1024, output)),
        in_line: AtomicUsize::new(0),
        failed: Mutex::new(None),
        wake: tx.clone(),
    });
    let mut server = Server {
        opts,
        unflushed: Arc::new(Unflushed(Arc::clone(&out))),
        out,
        events,
        next_event: None,
        workspace: Workspace::Undecided,
        dialect,
        client_has_roots: false,
        next_request_id: 1,
        waiting: VecDeque::new(),
        batch: None,
        line_limit: Arc::clone(&line_limit),
        pool: None,
        in_flight: InFlight::default(),
        write_failed: None,
    };
    // --root, SNEAKY_ROOT or workspace_root in the configuration, as for the tool binaries.
    let named_root =
        discover::named_root(server.opts.root.as_deref(), server.opts.config.as_deref())?;
    if let Some(found) = named_root {
        let ctx = protocol::open_found(&found, server.opts.config.clone())?;
        server.set_open(ctx, &found.origin.describe());
    }
    jsonrpc::spawn_reader(input, line_limit, move |incoming| {
        tx.send(Event::In(incoming)).is_ok()
    })
    .map_err(|e| Error::io("starting the stdin reader", e))?;
    let stopped = server.run();
    match server.finish(stopped) {
        Ok(()) | Err(Stop::OutputClosed) => Ok(()),
        Err(Stop::Io(e)) => Err(Error::io("serving MCP", e)),
    }
}

fn line_limit_for(max_file_size: u64) -> u64 {
    max_file_size.saturating_mul(4).saturating_add(LINE_SLACK)
}

impl<W: Write + Send + 'static> Server<W> {
    fn run(&mut self) -> std::result::Result<(), Stop> {
        loop {
            if let Some(e) = self.write_failed.take().or_else(|| self.out.take_failure()) {
                return Err(e.into());
            }
            let Some(event) = self.wait()? else {
                continue; // the roots answer timed out and was dealt with
            };
            let incoming = match event {
                Event::OutputFailed => continue, // taken at the top of the loop
                Event::In(incoming) => incoming,
            };
            match incoming {
                Incoming::Message(Message::Request { id, method, params }) => {
                    self.request(id, method, params);
                }
                Incoming::Message(Message::Notification { method, params }) => {
                    self.notification(&method, params.as_ref());
                }
                Incoming::Message(Message::Response { id, outcome }) => {
                    self.response(id, outcome);
                }
                Incoming::Batch(items) => self.batch(items),
                Incoming::Fault(fault) => {
                    log(&fault.message);
                    self.send(&jsonrpc::error_response(
                        &fault.id,
                        fault.code,
                        fault.message,
                    ));
                }
                Incoming::Eof => {
                    if matches!(self.workspace, Workspace::AwaitingRoots { .. }) {
                        log("stdin closed before the client listed its roots");
                        self.open_fallback();
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

    /// After the end of input (or of output): let running calls end and write their answers;
    /// when stdout no longer works, cancel them instead (nobody would read them).
    fn finish(&mut self, stopped: std::result::Result<(), Stop>) -> std::result::Result<(), Stop> {
        let mut result = match self.write_failed.take().or_else(|| self.out.take_failure()) {
            Some(e) if stopped.is_ok() => Err(e.into()),
            _ => stopped,
        };
        if result.is_err() {
            self.in_flight.cancel_all();
        }
        loop {
            let idle = self.pool.as_ref().map_or(true, Pool::is_idle);
            let event = match self.next_event.take() {
                Some(event) => Some(event),
                // Every job has ended, so every answer is already in the channel.
                None if idle => self.events.try_recv().ok(),
                None => self.events.recv_timeout(Duration::from_millis(5)).ok(),
            };
            // Workers write their answers themselves; a failure means nobody reads them.
            if let (Some(e), true) = (self.out.take_failure(), result.is_ok()) {
                self.in_flight.cancel_all();
                result = Err(e.into());
            }
            match event {
                Some(_) => {} // input after its end, or word of a failure taken above
                None if idle => break,
                None => {}
            }
        }
        if result.is_ok() {
            self.out.flush()?;
        }
        result
    }

    /// The next event: one already waiting, else (after flushing what was written) the next to
    /// come. None when waiting for roots timed out.
    fn wait(&mut self) -> std::result::Result<Option<Event>, Stop> {
        if let Some(event) = self.next_event.take() {
            return Ok(Some(event));
        }
        if let Ok(event) = self.events.try_recv() {
            return Ok(Some(event));
        }
        self.out.flush()?;
        let Workspace::AwaitingRoots { since, .. } = &self.workspace else {
            // The channel cannot close while this server holds a sender; were it to, that ends
            // the input too.
            return Ok(Some(self.events.recv().unwrap_or(Event::In(Incoming::Eof))));
        };
        let left = ROOTS_TIMEOUT.saturating_sub(since.elapsed());
        match self.events.recv_timeout(left) {
            Ok(event) => Ok(Some(event)),
            Err(RecvTimeoutError::Disconnected) => Ok(Some(Event::In(Incoming::Eof))),
            Err(RecvTimeoutError::Timeout) => {
                log("the client did not answer roots/list in time");
                self.open_fallback();
                Ok(None)
            }
        }
    }

    /// True when nothing else has arrived to be handled (a quick call may then run right here,
    /// without the hand-over to a worker).
    fn nothing_waiting(&mut self) -> bool {
        if self.next_event.is_some() {
            return false;
        }
        match self.events.try_recv() {
            Ok(event) => {
                self.next_event = Some(event);
                false
            }
            Err(_) => true,
        }
    }

    /// Write a message of this thread's own (never through the channel, which only this thread
    /// drains). A write error stops serving at the next turn of the loop.
    fn send(&mut self, message: &Value) {
        if let Some(batch) = &self.batch {
            batch.send(message);
            return;
        }
        if self.write_failed.is_some() {
            return;
        }
        let mut line = Vec::new();
        json_out::write_value(&mut line, message);
        line.push(b'\n');
        let written = self.out.write_line(&line, false);
        if let Err(e) = written {
            self.write_failed = Some(e);
        }
    }

    fn request(&mut self, id: Value, method: String, params: Option<Value>) {
        let reply = match method.as_str() {
            "initialize" => {
                let (reply, accepted) =
                    initialize(&id, params.as_ref(), self.opts.structured_content);
                if let Some(accepted) = accepted {
                    self.dialect = accepted.dialect;
                    self.client_has_roots = accepted.client_has_roots;
                }
                reply
            }
            "ping" => jsonrpc::response(&id, json!({})),
            // Never held back: the list needs no workspace (before one is open it follows the
            // user's configuration), and a host that never answers roots/list must not wait.
            "tools/list" => {
                self.workspace_ready();
                self.list(&id, params.as_ref())
            }
            "tools/call" => {
                if !self.workspace_ready() {
                    self.waiting.push_back(Waiting {
                        id,
                        method,
                        params,
                        batch: self.batch.clone(),
                    });
                    return;
                }
                match self.tool_request(id, &method, params) {
                    Some(reply) => reply,
                    None => return, // running on a worker, which answers
                }
            }
            _ => jsonrpc::error_response(
                &id,
                jsonrpc::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            ),
        };
        self.send(&reply);
    }

    /// A JSON-RPC batch: answered as one array (nothing when it holds no request) in a session
    /// of protocol version 2025-03-26, the one revision that has batches; refused in the others.
    fn batch(&mut self, items: Vec<std::result::Result<Message, jsonrpc::Fault>>) {
        if self.dialect.version != Version::V2025_03_26 {
            log(jsonrpc::BATCHES_REFUSED);
            self.send(&jsonrpc::error_response(
                &Value::Null,
                jsonrpc::INVALID_REQUEST,
                jsonrpc::BATCHES_REFUSED,
            ));
            return;
        }
        let batch = Arc::new(BatchOut::new(Arc::clone(&self.out) as Arc<dyn Outbound>));
        let outer = self.batch.replace(batch);
        for item in items {
            match item {
                Ok(Message::Request { id, method, .. }) if method == "initialize" => {
                    self.send(&jsonrpc::error_response(
                        &id,
                        jsonrpc::INVALID_REQUEST,
                        "invalid request: initialize cannot be part of a batch",
                    ));
                }
                Ok(Message::Request { id, method, params }) => self.request(id, method, params),
                Ok(Message::Notification { method, params }) => {
                    self.notification(&method, params.as_ref());
                }
                Ok(Message::Response { id, outcome }) => self.response(id, outcome),
                Err(fault) => {
                    self.send(&jsonrpc::error_response(
                        &fault.id,
                        fault.code,
                        fault.message,
                    ));
                }
            }
        }
        // The array leaves once the calls still running (each holds the batch) have ended.
        self.batch = outer;
    }

    fn notification(&mut self, method: &str, params: Option<&Value>) {
        match method {
            "notifications/initialized"
                if matches!(self.workspace, Workspace::Undecided) && self.client_has_roots =>
            {
                self.ask_for_roots();
            }
            // A host that had no folder open when asked may offer one later.
            "notifications/roots/list_changed"
                if self.client_has_roots && matches!(self.workspace, Workspace::Failed(_)) =>
            {
                self.ask_for_roots();
            }
            "notifications/cancelled" => {
                let Some(id) = params.and_then(|p| p.get("requestId")) else {
                    return;
                };
                let before = self.waiting.len();
                self.waiting.retain(|waiting| waiting.id != *id);
                if self.waiting.len() < before {
                    log(format!("request {id} was cancelled before it ran"));
                }
                self.in_flight.cancel(id);
            }
            _ => {} // other notifications need nothing from a tools server
        }
    }

    /// A response to the server's own request: only `roots/list` is ever asked.
    fn response(&mut self, id: Value, outcome: std::result::Result<Value, Value>) {
        let Workspace::AwaitingRoots { request_id, .. } = &self.workspace else {
            log(format!("ignoring a response to unknown request {id}"));
            return;
        };
        if *request_id != id {
            log(format!("ignoring a response to unknown request {id}"));
            return;
        }
        match outcome {
            Ok(result) => match roots::first_local_root(&result) {
                Some(root) => {
                    match protocol::open_context(Some(root.clone()), self.opts.config.clone()) {
                        Ok(ctx) => self.set_open(ctx, "the client's first root"),
                        Err(e) => {
                            log(format!("workspace {}: {}", root.display(), e.message()));
                            self.set_failed(e);
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
        self.serve_waiting();
    }

    fn ask_for_roots(&mut self) {
        let request_id = json!(format!("sneaky-roots-{}", self.next_request_id));
        self.next_request_id += 1;
        self.send(&jsonrpc::request(&request_id, "roots/list", None));
        self.workspace = Workspace::AwaitingRoots {
            request_id,
            since: Instant::now(),
        };
    }

    /// True when tool requests can be served now; may start the roots round trip.
    fn workspace_ready(&mut self) -> bool {
        match self.workspace {
            Workspace::Open(_) | Workspace::Failed(_) => true,
            Workspace::AwaitingRoots { .. } => false,
            Workspace::Undecided if self.client_has_roots => {
                self.ask_for_roots();
                false
            }
            Workspace::Undecided => {
                self.open_fallback_context();
                true
            }
        }
    }

    fn open_fallback(&mut self) {
        self.open_fallback_context();
        self.serve_waiting();
    }

    /// The project around the current directory (its sneaky.toml or .git), as for the binaries.
    fn open_fallback_context(&mut self) {
        let opened = discover::find_root(None, self.opts.config.as_deref()).and_then(|found| {
            protocol::open_found(&found, self.opts.config.clone()).map(|ctx| (ctx, found))
        });
        match opened {
            Ok((ctx, found)) => self.set_open(ctx, &found.origin.describe()),
            Err(e) => {
                log(format!("workspace: {}", e.message()));
                self.set_failed(how_to_give_a_root(e));
            }
        }
    }

    /// The `tools/list` answer: the open workspace's configuration decides what is offered;
    /// before one is open, the user's configuration (calls are checked again once it is).
    fn list(&self, id: &Value, params: Option<&Value>) -> Value {
        if let Workspace::Open(tools) = &self.workspace {
            return list_tools(id, params, &tools.ctx.config, tools.read_only, self.dialect);
        }
        match Config::load_user(self.opts.config.as_deref()) {
            Ok(config) => list_tools(id, params, &config, self.opts.read_only, self.dialect),
            Err(e) => jsonrpc::error_response(
                id,
                jsonrpc::INTERNAL_ERROR,
                format!("the configuration could not be read: {}", e.message()),
            ),
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
        self.pool = Some(Pool::new(ctx.config.mcp.workers));
        let tools = Tools::new(ctx, self.opts.config.clone(), self.opts.read_only);
        self.workspace = Workspace::Open(Arc::new(tools));
    }

    fn set_failed(&mut self, e: Error) {
        self.pool = Some(Pool::new(DEFAULT_MCP_WORKERS));
        self.workspace = Workspace::Failed(e);
    }

    fn serve_waiting(&mut self) {
        while let Some(waiting) = self.waiting.pop_front() {
            let outer = std::mem::replace(&mut self.batch, waiting.batch);
            if let Some(reply) = self.tool_request(waiting.id, &waiting.method, waiting.params) {
                self.send(&reply);
            }
            self.batch = outer;
        }
    }

    /// `tools/call`, once the workspace is open (or known to have failed): the answer, or None
    /// when a worker took the call and will answer.
    fn tool_request(&mut self, id: Value, method: &str, params: Option<Value>) -> Option<Value> {
        let brief = calls::brief(params.as_ref());
        let tools = match &self.workspace {
            Workspace::Open(tools) => tools,
            Workspace::Failed(e) => {
                let outcome = Err(e.clone());
                let tool = params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                log_call(&CallEnd {
                    session: None,
                    tool: catalog::find(tool).map(|spec| spec.name()),
                    took: Duration::ZERO,
                    outcome: "error",
                    code: Some(e.code()),
                });
                return Some(jsonrpc::response(
                    &id,
                    catalog::call_result(tool, outcome, self.dialect),
                ));
            }
            Workspace::Undecided | Workspace::AwaitingRoots { .. } => {
                return Some(jsonrpc::error_response(
                    &id,
                    jsonrpc::INTERNAL_ERROR,
                    "the workspace is not open yet",
                ));
            }
        };
        let tools = Arc::clone(tools);
        // A brief call (a read, an edit: one file's work) is run right here, without the
        // hand-over to a worker, when nothing else is running or waiting (a host calling one
        // tool at a time), and a brief read also while others are (a host keeping many reads in
        // flight: each would cost two thread wake-ups, more than the read itself) as long as
        // fewer than `[mcp] workers` calls are running, and no hook runs around it (a hook is a
        // program of the user's, which may take seconds). A walk or a command goes to a worker,
        // so that it can be cancelled and pings are answered while it runs.
        let here = method == "tools/call"
            && brief
            && ((self.in_flight.len() == 0 && self.nothing_waiting())
                || (self.in_flight.len() < tools.ctx.config.mcp.workers
                    && calls::quick_read(params.as_ref(), &tools.ctx.config)));
        let Some(cancel) = self.in_flight.start(&id) else {
            return Some(jsonrpc::error_response(
                &id,
                jsonrpc::INVALID_REQUEST,
                format!("invalid request: request {id} is still running; ids must be unique"),
            ));
        };
        let call = ToolCall {
            id,
            params,
            dialect: self.dialect,
            cancel,
            out: match (&self.batch, here) {
                (Some(batch), _) => Arc::clone(batch) as Arc<dyn Outbound>,
                (None, false) => Arc::clone(&self.out) as Arc<dyn Outbound>,
                (None, true) => Arc::clone(&self.unflushed) as Arc<dyn Outbound>,
            },
            in_flight: self.in_flight.clone(),
            // One session per process: its jobs end with the process.
            job_owner: None,
            session: None,
            received: Instant::now(),
        };
        match &self.pool {
            Some(pool) if !here => pool.submit(brief, move || calls::run(call, &tools)),
            _ => calls::run(call, &tools),
        }
        None
    }
}

/// What an accepted `initialize` settles for the session.
pub struct Accepted {
    pub dialect: Dialect,
    pub client_has_roots: bool,
}

/// The answer to `initialize`, and what it settles when the request was well formed: the
/// protocol version, and the shape of the tools for this client (`super::shape`).
pub fn initialize(
    id: &Value,
    params: Option<&Value>,
    choice: StructuredChoice,
) -> (Value, Option<Accepted>) {
    let Some(Value::Object(params)) = params else {
        return (
            calls::invalid_params(id, "initialize: params must be an object"),
            None,
        );
    };
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        return (
            calls::invalid_params(id, "initialize: params.protocolVersion must be a string"),
            None,
        );
    };
    let version = Version::negotiate(requested);
    let client = params.get("clientInfo");
    let name = client.and_then(|c| c.get("name")).and_then(Value::as_str);
    let dialect = Dialect::new(version, choice, name);
    // Quoted as Rust strings: the client's words, control characters escaped.
    log(format!(
        "client {:?} {:?} (protocol {}): {}",
        name.unwrap_or(""),
        client
            .and_then(|c| c.get("version"))
            .and_then(Value::as_str)
            .unwrap_or(""),
        version.as_str(),
        dialect.describe()
    ));
    let client_has_roots = params
        .get("capabilities")
        .and_then(|c| c.get("roots"))
        .is_some_and(Value::is_object);
    let mut server_info = json!({
        "name": "sneaky-mcp",
        "version": env!("CARGO_PKG_VERSION"),
    });
    if version.has_structured_output() {
        server_info["title"] = json!("SneakyCode");
    }
    let reply = jsonrpc::response(
        id,
        json!({
            "protocolVersion": version.as_str(),
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": server_info,
            "instructions": INSTRUCTIONS,
        }),
    );
    (
        reply,
        Some(Accepted {
            dialect,
            client_has_roots,
        }),
    )
}

/// The answer to `tools/list`: every tool offered, on one page.
pub fn list_tools(
    id: &Value,
    params: Option<&Value>,
    config: &Config,
    read_only: bool,
    dialect: Dialect,
) -> Value {
    if params.is_some_and(|p| !p.is_object()) {
        return calls::invalid_params(id, "tools/list: params must be an object");
    }
    // Every tool is on the one page, so no cursor is ever handed out: any cursor is invalid.
    if let Some(cursor) = params
        .and_then(|p| p.get("cursor"))
        .filter(|c| !c.is_null())
    {
        return calls::invalid_params(
            id,
            format!(
                "tools/list: invalid cursor {cursor}: every tool is listed on the first page, \
                 so there is no cursor to follow"
            ),
        );
    }
    jsonrpc::response(id, catalog::list(config, read_only, dialect))
}

/// A failure to find a workspace, told as what a person configuring an MCP host can do about
/// it (the host shows the model this text, and many hosts never show the server's stderr).
fn how_to_give_a_root(e: Error) -> Error {
    if e.kind != ErrorKind::InvalidArgs {
        return e; // a configuration that cannot be read says so itself
    }
    Error::new(
        e.kind,
        format!(
            "{}. For sneaky-mcp: add \"--root\", \"/path/to/project\" to its args in the MCP \
             host's configuration (or set SNEAKY_ROOT in its env), or use it from a host that \
             offers roots (open the project folder there: the host's first root becomes the \
             workspace)",
            e.message()
        ),
    )
}

const INSTRUCTIONS: &str = "SneakyCode's tools work inside one workspace directory: paths are \
relative to its root, and paths that lead outside it (by '..', absolute paths or symbolic links) \
are refused. A failed call returns isError and a text that starts with a stable code and a colon \
(such as not_found:, outside_workspace: or no_match:), then the reason.";
