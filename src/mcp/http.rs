//! The Streamable HTTP transport (MCP 2025-03-26 and later): `sneaky-mcp --http ADDR` serves
//! the same tools at `http://ADDR/mcp`, so that an agent in another container or machine, or a
//! hosted API, can reach one workspace's tools.
//!
//! - `POST /mcp` carries one JSON-RPC message (in a 2025-03-26 session, also a batch: its
//!   answers come as one array). `initialize` opens a session and its answer
//!   carries `Mcp-Session-Id`, which every later request must send back (unknown: 404).
//!   Notifications and responses get `202 Accepted`. `ping`, `tools/list` and brief calls (a
//!   read, an edit: one file's work) are answered as `application/json`; a walk (list, grep,
//!   find) or a command (run_command) as a `text/event-stream` (SSE) that carries the call's
//!   `notifications/progress` and then its answer, and ends without an answer when the call is
//!   cancelled (`notifications/cancelled` in a POST of its own).
//! - Event streams are resumable: each is primed with an event that carries only an id and
//!   `retry`, every event has an id (`STREAM-N`, unique in the session), and a client whose
//!   connection dropped sends `GET /mcp` with `Last-Event-ID` to get the events after that one
//!   and then the rest as they come. What is kept is bounded by the configuration, not by the
//!   traffic (`super::resume`: `[mcp] resume_seconds`, `resume_session_bytes`,
//!   `resume_total_bytes`); a client resuming past what was let go is told so (410 for a stream
//!   let go, an SSE comment naming the missing events and an error answer for a call whose
//!   answer went with them), never left with a silent gap. A stream silent for 15 s gets a
//!   comment line, so that proxies keep it open.
//! - `DELETE /mcp` ends a session and cancels its running calls. `GET /mcp` without
//!   `Last-Event-ID` (a stream for messages the server starts on its own) gets `405`: this
//!   server asks the client nothing over HTTP, as the workspace is fixed when it starts (roots
//!   name the client's directories, which a remote server cannot see).
//! - `GET /healthz` answers `200 ok` without the token once the server serves (the workspace
//!   is open), for an engine's readiness probe; it says nothing else. Other methods get 405.
//!
//! Security: bound to 127.0.0.1 unless ADDR names another address; every request but
//! `/healthz` needs `Authorization: Bearer TOKEN` (`--token-file`, else `SNEAKY_MCP_TOKEN`,
//! else a random token printed once on stderr), checked before the body is read: without it, 401 and nothing runs;
//! the 401 says (body and `WWW-Authenticate` error description) that a bearer token is wanted
//! and where it comes from. OAuth discovery (`/.well-known/oauth-protected-resource` and the
//! like) gets 404 with a JSON reason, not 401, so that clients learn there is no OAuth here.
//! A request whose `Origin` is not a loopback origin or one given with `--allow-origin` gets 403
//! (DNS-rebinding protection). Bodies are bounded like stdio lines (4 × max_file_size_bytes +
//! 64 KiB: 413 beyond). Sessions are bounded in number and expire when idle.
//!
//! Tokio and hyper run only here: the stdio server never starts a runtime. Walks and isolated
//! calls run on the same worker pool as over stdio (a cancelled walk stops early); brief calls
//! (a read, an edit) on the runtime's threads, one per core.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming as IncomingBody};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::calls::{self, InFlight, Outbound, ToolCall, Tools};
use super::json_out;
use super::jsonrpc::{self, Message, Parsed};
use super::log::log;
use super::pool::Pool;
use super::resume::{Frame as Queued, Gap, Keeper, Limits, Resumed, Streams};
use super::server::{self, Options};
use super::shape::{Dialect, StructuredChoice};
use super::version::Version;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;

/// The one endpoint.
pub const ENDPOINT: &str = "/mcp";
/// The readiness endpoint: answered without the token.
pub const HEALTH: &str = "/healthz";
/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "SNEAKY_MCP_TOKEN";
/// Default port when ADDR names none.
pub const DEFAULT_PORT: u16 = 8765;
/// Sessions kept at once; beyond this the longest idle one without running calls goes.
const MAX_SESSIONS: usize = 256;
/// A session unused this long is forgotten.
const SESSION_IDLE: Duration = Duration::from_secs(3600);
/// How often expired sessions are looked for.
const EXPIRY_SWEEP: Duration = Duration::from_secs(60);
/// A client has this long to send a request's headers, from the moment it connects or its
/// previous answer was sent: a connection without the token lives at most this long (then 401
/// and closed), and no slow-drip or silent connection is held open longer.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections held open at once, at most (and at most half the descriptors the process may
/// open, the rest being for the work). Past it, the oldest connection that has not shown the
/// token yet is closed to make room, so clients without the token can neither crowd out those
/// with it nor use up the descriptors; when every one has shown it, the newcomer is closed.
const MAX_CONNECTIONS: usize = 256;
/// Connections without the token from one client address, at most: past it, that address's
/// oldest one is closed, so that one address flooding the server closes only its own (the
/// slots of others, and their new connections, stay).
const MAX_PER_ADDRESS: usize = 64;
/// The soft descriptor limit is raised to the hard one at start, up to this.
const WANTED_DESCRIPTORS: u64 = 65536;

/// Raise the soft RLIMIT_NOFILE towards the hard one (distributions start services at 1024
/// with a far higher hard limit): every connection and every call's pipes take descriptors.
fn raise_descriptor_limit() {
    if let Err(why) = crate::fs::durable::raise_descriptor_limit(WANTED_DESCRIPTORS) {
        log(why);
    }
}

/// `MAX_CONNECTIONS`, or half of RLIMIT_NOFILE when that is lower (at least 8).
fn connection_cap() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(u64::MAX, |(soft, _)| soft);
    let half = usize::try_from(soft / 2).unwrap_or(usize::MAX);
    half.clamp(8, MAX_CONNECTIONS)
}
/// How long a client waits before resuming a dropped event stream (SSE `retry`).
const RETRY: Duration = Duration::from_millis(1000);
/// How often ended event streams past `[mcp] resume_seconds` are let go, in every session.
const STREAM_SWEEP: Duration = Duration::from_secs(1);
/// A stream with nothing to say for this long gets a comment line, so that proxies that cut
/// idle connections (nginx after 60 s) leave a long, silent command's stream alone.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// A token shorter than this is refused (it would be guessable).
const MIN_TOKEN_LEN: usize = 16;
/// After SIGTERM or SIGINT, running calls have this long to end before they are cancelled.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// Cancelled calls' process trees are gone within this (isolate's TERM_GRACE and the kill).
const STOP_CANCEL: Duration = Duration::from_millis(2500);
/// The supervisor is asked to end the sessions' background jobs within this.
const STOP_JOBS: Duration = Duration::from_secs(1);
/// Connections write the answers of the calls that ended within this.
const STOP_FLUSH: Duration = Duration::from_millis(500);
/// The server has exited this long after SIGTERM or SIGINT at the latest, whatever hangs.
pub const STOP_BOUND: Duration = Duration::from_secs(10);

/// What `--http` and its companions say.
pub struct HttpOptions {
    /// `HOST:PORT`, `:PORT` or `PORT`; the host defaults to 127.0.0.1.
    pub addr: String,
    pub token_file: Option<PathBuf>,
    /// Origins accepted besides loopback ones, e.g. `https://agent.example.com`.
    pub allowed_origins: Vec<String>,
}

struct Session {
    dialect: Dialect,
    in_flight: InFlight,
    last_used: Mutex<Instant>,
    /// Its event streams, and what they keep for resumption (`super::resume`).
    streams: Arc<Mutex<Streams>>,
    /// The tag of the background jobs this session starts (SNEAKY_JOB_OWNER=PID:TAG): a
    /// random value apart from the session id, which tool processes are not shown.
    job_owner: Arc<str>,
    /// The workspace, where the session's jobs run.
    root: PathBuf,
    /// The session in log lines: the first 8 characters of its id (the client can match them;
    /// the 24 others keep the id unguessable from the log).
    label: Arc<str>,
}

/// However a session goes (DELETE, expiry, eviction), the background jobs it started end
/// with it; on the server's exit, the supervisor ends them as its host is gone.
impl Drop for Session {
    fn drop(&mut self) {
        let root = std::mem::take(&mut self.root);
        let tag = Arc::clone(&self.job_owner);
        // Off the runtime's threads: the supervisor is asked over a socket.
        std::thread::spawn(move || crate::shell::jobs::end_owner(&root, &tag));
    }
}

impl Session {
    /// A new event stream answering `requests`, primed (`Streams::open`).
    fn open_stream(&self, requests: Vec<Value>) -> (u64, UnboundedReceiver<Queued>) {
        lock(&self.streams).open(requests, RETRY)
    }
}

struct Shared {
    tools: Arc<Tools>,
    pool: Pool,
    token: String,
    token_whence: &'static str,
    allowed_origins: Vec<String>,
    /// `--structured-content`: the shape of each session's tools (`super::shape`).
    structured_content: StructuredChoice,
    body_limit: usize,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// What the sessions' event streams keep for resumption, in all, and its bounds.
    keeper: Arc<Keeper>,
    connections: Mutex<Connections>,
    /// Set on SIGTERM or SIGINT: no new connection, no new call; open connections close once
    /// their answers are out.
    stop: tokio::sync::watch::Sender<bool>,
}

impl Shared {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }
}

/// The open connections, by the order they came in.
struct Connections {
    cap: usize,
    next: u64,
    open: std::collections::BTreeMap<u64, Connection>,
}

/// One open connection: where from, whether it has shown the token, and how to close it.
struct Connection {
    addr: std::net::IpAddr,
    authorized: bool,
    abort: tokio::task::AbortHandle,
}

impl Connections {
    /// Room for one more from `addr`: true when there is (after closing that address's oldest
    /// connection without the token when it has `MAX_PER_ADDRESS` of them, then the oldest
    /// one without the token at all when the table is full), false when every open one has
    /// shown it.
    fn make_room(&mut self, addr: std::net::IpAddr) -> bool {
        let waiting = |c: &Connection| !c.authorized && c.addr == addr;
        if self.open.values().filter(|c| waiting(c)).count() >= MAX_PER_ADDRESS {
            self.close_oldest(waiting);
        }
        self.open.len() < self.cap || self.close_oldest(|c| !c.authorized)
    }

    /// Close the oldest connection that `pick` selects; whether there was one.
    fn close_oldest(&mut self, pick: impl Fn(&Connection) -> bool) -> bool {
        let oldest = self.open.iter().find(|(_, c)| pick(c)).map(|(id, _)| *id);
        match oldest.and_then(|id| self.open.remove(&id)) {
            Some(c) => {
                c.abort.abort();
                true
            }
            None => false,
        }
    }
}

/// Takes a connection out of the table when its task ends, however it ends.
struct Registered {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.shared.connections).open.remove(&self.id);
    }
}

type HttpBody = BoxBody<Bytes, Infallible>;

/// Serve until SIGTERM or SIGINT, which stop the server gracefully ([`stop_on_signal`]). Fails when the workspace,
/// the token or the address is unusable.
pub fn serve(opts: Options, http: HttpOptions) -> Result<()> {
    let addr = parse_addr(&http.addr)?;
    let token = load_token(http.token_file.as_deref())?;
    raise_descriptor_limit();
    let ctx = protocol::open_context(opts.root.clone(), opts.config.clone())?;
    let body_limit = usize::try_from(
        ctx.config
            .max_file_size_bytes
            .saturating_mul(4)
            .saturating_add(64 * 1024),
    )
    .unwrap_or(usize::MAX);
    let workers = ctx.config.mcp.workers;
    let keeper = Keeper::new(Limits::of(&ctx.config.mcp));
    log(format!(
        "workspace {}{}",
        ctx.ws.root().display(),
        if opts.read_only { ", read-only" } else { "" }
    ));
    let shared = Arc::new(Shared {
        tools: Arc::new(Tools::new(ctx, opts.config.clone(), opts.read_only)),
        pool: Pool::new(workers),
        token: token.value,
        token_whence: token.whence,
        allowed_origins: http.allowed_origins,
        structured_content: opts.structured_content,
        body_limit,
        sessions: Mutex::new(HashMap::new()),
        keeper,
        connections: Mutex::new(Connections {
            cap: connection_cap(),
            next: 0,
            open: Default::default(),
        }),
        stop: tokio::sync::watch::Sender::new(false),
    });
    // Brief calls (reads, edits: one file's work) run on the runtime's threads, one per core
    // (at most `[mcp] workers`): more threads than cores only add switches between them. Walks
    // and commands run on the pool, so that they never hold a runtime thread.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(workers).max(1))
        .thread_name("mcp-http")
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the HTTP runtime", e))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::new(ErrorKind::IoError, format!("cannot listen on {addr}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::io("reading the bound address", e))?;
        if !bound.ip().is_loopback() {
            log(format!(
                "listening on {bound}, beyond this machine: anyone who can reach it and holds \
                 the token can use the tools; put TLS in front (see docs/mcp.md)"
            ));
        }
        if token.generated {
            log(format!(
                "bearer token (printed once; set {TOKEN_ENV} or --token-file to choose one): {}",
                shared.token
            ));
        }
        log(format!("listening on http://{bound}{ENDPOINT}"));
        tokio::spawn(stop_on_signal(Arc::clone(&shared)));
        tokio::spawn(expire_sessions(Arc::clone(&shared)));
        tokio::spawn(expire_streams(Arc::clone(&shared)));
        accept_loop(listener, shared).await;
        // Stopping: the stop task ends the process once the running calls are dealt with.
        std::future::pending::<Result<()>>().await
    })
}

/// Accept connections until the server stops (then the listener closes: new connections are
/// refused).
async fn accept_loop(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let mut stop = shared.stop.subscribe();
    let mut stopped = std::pin::pin!(stop.wait_for(|s| *s));
    loop {
        let accepted = std::future::poll_fn(|cx| {
            if stopped.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            listener.poll_accept(cx).map(Some)
        })
        .await;
        let (stream, peer) = match accepted {
            None => return,
            Some(Ok(accepted)) => accepted,
            Some(Err(e)) => {
                // Out of descriptors and the like: wait a little rather than spin.
                log(format!("accepting a connection: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let mut connections = lock(&shared.connections);
        if !connections.make_room(peer.ip()) {
            log("refusing a connection: every open one holds the token");
            continue;
        }
        let id = connections.next;
        connections.next += 1;
        let registered = Registered {
            shared: Arc::clone(&shared),
            id,
        };
        let shared = Arc::clone(&shared);
        let mut stop = shared.stop.subscribe();
        let task = tokio::spawn(async move {
            let _registered = registered;
            let service = service_fn(move |req| {
                let shared = Arc::clone(&shared);
                async move { Ok::<_, Infallible>(handle(req, &shared, id).await) }
            });
            // A client that goes away mid-request is not the server's problem.
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                // A client that pipelines gets its answers in one write where they are ready.
                .pipeline_flush(true)
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let stopping = stop.wait_for(|s| *s);
            if !first_of(connection.as_mut(), stopping).await {
                // The answer being written (a call's event stream until the call ends) goes
                // out, then the connection closes; an idle one closes at once.
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        });
        connections.open.insert(
            id,
            Connection {
                addr: peer.ip(),
                authorized: false,
                abort: task.abort_handle(),
            },
        );
    }
}

/// Whether `a` is ready before `b` (true) or `b` first (false); the other is dropped.
async fn first_of(a: impl Future, b: impl Future) -> bool {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    std::future::poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() {
            Poll::Ready(true)
        } else if b.as_mut().poll(cx).is_ready() {
            Poll::Ready(false)
        } else {
            Poll::Pending
        }
    })
    .await
}

/// On SIGTERM or SIGINT, stop gracefully and exit with status 0 within [`STOP_BOUND`]: close
/// the listener (new connections are refused) and refuse new calls; give running calls
/// [`STOP_GRACE`] to end (a second signal cuts it short), then cancel the rest (their process
/// trees go, and they are answered that the server stopped); ask the job supervisor to end the
/// background jobs of every session; let the connections write what they still hold.
// Long: the server's stop in the order its comment gives (stop taking, grace, cancel, end jobs,
// flush), with the signal listeners that can cut the grace short.
async fn stop_on_signal(shared: Arc<Shared>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let (tx, mut signals) = unbounded_channel::<&'static str>();
    let tx2 = tx.clone();
    tokio::spawn(async move {
        while int.recv().await.is_some() {
            let _ = tx.send("SIGINT");
        }
    });
    tokio::spawn(async move {
        while term.recv().await.is_some() {
            let _ = tx2.send("SIGTERM");
        }
    });
    let Some(name) = signals.recv().await else {
        return;
    };
    // Whatever hangs below (a supervisor that does not answer, a stuck worker), the bound holds.
    let _ = std::thread::Builder::new()
        .name("mcp-stop".into())
        .spawn(|| {
            std::thread::sleep(STOP_BOUND.saturating_sub(Duration::from_millis(300)));
            log("stopped: time was up");
            std::process::exit(0);
        });
    let _ = shared.stop.send(true);
    let running = running_calls(&shared);
    log(format!(
        "{name}: stopping: no new connections or calls{}",
        if running > 0 {
            format!(
                "; {running} running calls have {} s to end (signal again to cancel them now)",
                STOP_GRACE.as_secs()
            )
        } else {
            String::new()
        }
    ));
    let calls_ended = async {
        while running_calls(&shared) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let _ = tokio::time::timeout(STOP_GRACE, first_of(calls_ended, signals.recv())).await;
    let sessions: Vec<Arc<Session>> = lock(&shared.sessions).values().cloned().collect();
    let running = running_calls(&shared);
    if running > 0 {
        log(format!(
            "cancelling {running} running calls (their process trees go)"
        ));
        // From here a cancelled call was cancelled by the stop (one its client cancelled
        // during the grace period gets no answer, as always) and is answered so.
        calls::set_stopping();
        for s in &sessions {
            s.in_flight.cancel_all();
        }
    }
    let worker_shared = Arc::clone(&shared);
    let pool_done = tokio::task::spawn_blocking(move || worker_shared.pool.wait_idle());
    let _ = tokio::time::timeout(STOP_CANCEL, pool_done).await;
    // The sessions' jobs: each asked for at once, as each session's end would.
    let asked: Vec<_> = sessions
        .iter()
        .map(|s| {
            let (root, tag) = (s.root.clone(), Arc::clone(&s.job_owner));
            tokio::task::spawn_blocking(move || crate::shell::jobs::end_owner(&root, &tag))
        })
        .collect();
    let _ = tokio::time::timeout(STOP_JOBS, async {
        for a in asked {
            let _ = a.await;
        }
    })
    .await;
    let _ = tokio::time::timeout(STOP_FLUSH, async {
        while !lock(&shared.connections).open.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    log("stopped");
    std::process::exit(0);
}

/// Calls queued or running, in every session.
fn running_calls(shared: &Shared) -> usize {
    lock(&shared.sessions)
        .values()
        .map(|s| s.in_flight.len())
        .sum()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

async fn handle(req: Request<IncomingBody>, shared: &Arc<Shared>, conn: u64) -> Response<HttpBody> {
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        if !origin_allowed(origin, &shared.allowed_origins) {
            return plain(
                StatusCode::FORBIDDEN,
                "forbidden: this Origin is not allowed",
            );
        }
    }
    if req.uri().path() == HEALTH {
        return health(req.method(), shared);
    }
    if is_oauth_discovery(req.uri().path()) {
        return no_oauth_here(shared);
    }
    if !authorized(req.headers(), &shared.token) {
        return unauthorized(req.headers(), shared);
    }
    if let Some(c) = lock(&shared.connections).open.get_mut(&conn) {
        c.authorized = true;
    }
    if req.uri().path() != ENDPOINT {
        return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
    }
    match *req.method() {
        Method::POST => post(req, shared).await,
        Method::DELETE => delete(req.headers(), shared),
        Method::GET => resume(req.headers(), shared),
        _ => method_not_allowed(),
    }
}

/// `GET /healthz`: 200 and `ok` without a token, for an engine's readiness and liveness
/// probes (the listener is bound only once the workspace is open, so an answer means ready).
/// It tells nothing about the server, the workspace or its sessions. Other methods: 405.
fn health(method: &Method, shared: &Shared) -> Response<HttpBody> {
    let mut resp = match *method {
        Method::GET | Method::HEAD if shared.stopping() => {
            plain(StatusCode::SERVICE_UNAVAILABLE, "stopping")
        }
        Method::GET | Method::HEAD => plain(StatusCode::OK, "ok"),
        _ => {
            let mut resp = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed: GET /healthz",
            );
            resp.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            resp
        }
    };
    // A probe comes back on a connection of its own; it keeps none open without the token.
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// 401, saying what is wanted and where it comes from: clients such as the MCP Inspector start
/// an OAuth flow on a bare 401, which fails here without ever telling the person that a
/// bearer token was wanted.
fn unauthorized(headers: &HeaderMap, shared: &Shared) -> Response<HttpBody> {
    let mut resp = plain(
        StatusCode::UNAUTHORIZED,
        &format!(
            "unauthorized: sneaky-mcp wants the header Authorization: Bearer TOKEN, where TOKEN \
             is {}. It has no OAuth server: give the token to the client as that header \
             (e.g. the MCP Inspector's Authentication > Bearer Token, or \"headers\" in a \
             host's server configuration).",
            shared.token_whence
        ),
    );
    // RFC 6750: an error code only when credentials were sent; the description always, as
    // clients show it.
    let error = if headers.contains_key(header::AUTHORIZATION) {
        "error=\"invalid_token\", "
    } else {
        ""
    };
    let challenge = format!(
        "Bearer realm=\"sneaky-mcp\", {error}error_description=\"a static bearer token is \
         wanted (no OAuth): Authorization: Bearer TOKEN with {}\"",
        shared.token_whence
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    // Without the token a client keeps no connection open.
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// The well-known documents an OAuth client looks for first (RFC 9728 protected resource
/// metadata, RFC 8414 authorization server metadata, OpenID discovery), at the root or with
/// the resource's path after them.
fn is_oauth_discovery(path: &str) -> bool {
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ]
    .iter()
    .any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// 404 without a challenge: there is no OAuth here, so a client learns it at discovery rather
/// than in a failed registration.
fn no_oauth_here(shared: &Shared) -> Response<HttpBody> {
    let body = json!({
        "error": "not_found",
        "error_description": format!(
            "sneaky-mcp has no OAuth authorization server: it takes a static bearer token in \
             the header Authorization: Bearer TOKEN, where TOKEN is {}",
            shared.token_whence
        ),
    });
    let mut resp = json_response(StatusCode::NOT_FOUND, &body);
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// What a POST must say about itself (it accepts JSON and SSE, sends JSON, and speaks a
/// protocol version we know); the refusal when it does not.
fn check_post_headers(headers: &HeaderMap) -> Option<Response<HttpBody>> {
    if !accepts_json_and_sse(headers) {
        return Some(plain(
            StatusCode::NOT_ACCEPTABLE,
            "not acceptable: Accept must list application/json and text/event-stream",
        ));
    }
    if !header_str(headers, header::CONTENT_TYPE.as_str())
        .is_some_and(|t| t.trim().starts_with("application/json"))
    {
        return Some(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported media type: the body must be application/json",
        ));
    }
    if let Some(version) = header_str(headers, "mcp-protocol-version") {
        if Version::parse(version).is_none() {
            return Some(plain(
                StatusCode::BAD_REQUEST,
                &format!("bad request: unsupported MCP-Protocol-Version {version}"),
            ));
        }
    }
    None
}

/// The request body, at most `limit` bytes (413 beyond).
async fn read_body(
    req: Request<IncomingBody>,
    limit: usize,
) -> std::result::Result<Bytes, Box<Response<HttpBody>>> {
    match Limited::new(req.into_body(), limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(Box::new(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("payload too large: at most {limit} bytes (4 × max_file_size_bytes + 64 KiB)"),
        ))),
        Err(e) => Err(Box::new(plain(
            StatusCode::BAD_REQUEST,
            &format!("bad request: {e}"),
        ))),
    }
}

async fn post(req: Request<IncomingBody>, shared: &Arc<Shared>) -> Response<HttpBody> {
    if let Some(refused) = check_post_headers(req.headers()) {
        return refused;
    }
    let session_id = header_str(req.headers(), "mcp-session-id").map(str::to_string);
    let body = match read_body(req, shared.body_limit).await {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    let refuse = |fault: jsonrpc::Fault| {
        let reply = jsonrpc::error_response(&fault.id, fault.code, fault.message);
        json_response(StatusCode::BAD_REQUEST, &reply)
    };
    let message = match jsonrpc::parse(&body) {
        Ok(Parsed::One(message)) => message,
        Ok(Parsed::Batch(_)) if shared.stopping() => return stopping(),
        Ok(Parsed::Batch(items)) => {
            let session = session_id
                .as_deref()
                .and_then(|sid| lock(&shared.sessions).get(sid).cloned());
            return match session {
                Some(session) if session.dialect.version == Version::V2025_03_26 => {
                    *lock(&session.last_used) = Instant::now();
                    batch(items, &session, shared)
                }
                _ => refuse(jsonrpc::Fault {
                    id: Value::Null,
                    code: jsonrpc::INVALID_REQUEST,
                    message: jsonrpc::BATCHES_REFUSED.to_string(),
                }),
            };
        }
        Err(fault) => return refuse(fault),
    };
    // A cancellation still reaches a running call; nothing new starts.
    if matches!(message, Message::Request { .. }) && shared.stopping() {
        return stopping();
    }
    if let Message::Request { id, method, params } = &message {
        match method.as_str() {
            "initialize" => return initialize(id, params.as_ref(), shared),
            "ping" | "tools/list" | "tools/call" => {}
            // Outside a session too (e.g. a newer client's `server/discover` probe, which
            // must learn that this server speaks the initialize handshake).
            _ => {
                let reply = jsonrpc::error_response(
                    id,
                    jsonrpc::METHOD_NOT_FOUND,
                    format!("method not found: {method}"),
                );
                return json_response(StatusCode::OK, &reply);
            }
        }
    }
    let session = match session_id {
        None => {
            return plain(
                StatusCode::BAD_REQUEST,
                "bad request: Mcp-Session-Id header required (initialize first)",
            )
        }
        Some(sid) => match lock(&shared.sessions).get(&sid) {
            Some(session) => Arc::clone(session),
            None => return plain(StatusCode::NOT_FOUND, "not found: unknown or ended session"),
        },
    };
    *lock(&session.last_used) = Instant::now();
    match message {
        Message::Notification { method, params } => {
            notification(&method, params.as_ref(), &session);
            accepted()
        }
        Message::Response { .. } => accepted(), // the server asks nothing over HTTP
        Message::Request { id, method, params } => request(id, &method, params, &session, shared),
    }
}

fn notification(method: &str, params: Option<&Value>, session: &Session) {
    if method == "notifications/cancelled" {
        if let Some(id) = params.and_then(|p| p.get("requestId")) {
            session.in_flight.cancel(id);
        }
    }
}

/// A JSON-RPC batch in a 2025-03-26 session: its answers as one JSON array, or, when a walk or a
/// command is among its calls, as an event stream carrying their progress and then the array;
/// 202 when it holds no request.
// Long: a batch's answers go either to one JSON array or to an event stream, chosen from its
// items; both ends are built and handed to the same loop over the items here.
fn batch(
    items: Vec<std::result::Result<Message, jsonrpc::Fault>>,
    session: &Arc<Session>,
    shared: &Arc<Shared>,
) -> Response<HttpBody> {
    let streams = items.iter().any(|item| {
        matches!(item, Ok(Message::Request { method, params, .. })
            if method == "tools/call" && !calls::brief(params.as_ref()))
    });
    let collected = Arc::new(calls::Collected::default());
    let (inner, rx): (Arc<dyn Outbound>, _) = if streams {
        let requests = items
            .iter()
            .filter_map(|item| match item {
                Ok(Message::Request { id, .. }) => Some(id.clone()),
                Err(fault) => Some(fault.id.clone()),
                _ => None,
            })
            .collect();
        let (stream, rx) = session.open_stream(requests);
        let out = SseOut::new(session, stream, shared);
        (Arc::new(out), Some((stream, rx)))
    } else {
        (Arc::clone(&collected) as Arc<dyn Outbound>, None)
    };
    let out = Arc::new(calls::BatchOut::new(inner));
    let mut requests = 0;
    for item in items {
        let (id, method, params) = match item {
            Ok(Message::Request { id, method, params }) => (id, method, params),
            Ok(Message::Notification { method, params }) => {
                notification(&method, params.as_ref(), session);
                continue;
            }
            Ok(Message::Response { .. }) => continue,
            Err(fault) => {
                requests += 1;
                out.send(&jsonrpc::error_response(
                    &fault.id,
                    fault.code,
                    fault.message,
                ));
                continue;
            }
        };
        requests += 1;
        match method.as_str() {
            "tools/call" => {
                let Some(cancel) = session.in_flight.start(&id) else {
                    out.send(&still_running(&id));
                    continue;
                };
                let call = ToolCall {
                    id,
                    params,
                    dialect: session.dialect,
                    cancel,
                    out: Arc::clone(&out) as Arc<dyn Outbound>,
                    in_flight: session.in_flight.clone(),
                    job_owner: Some(Arc::clone(&session.job_owner)),
                    session: Some(Arc::clone(&session.label)),
                    received: Instant::now(),
                };
                if calls::brief(call.params.as_ref()) {
                    calls::run(call, &shared.tools);
                } else {
                    let tools = Arc::clone(&shared.tools);
                    shared.pool.submit(false, move || calls::run(call, &tools));
                }
            }
            "initialize" => out.send(&jsonrpc::error_response(
                &id,
                jsonrpc::INVALID_REQUEST,
                "invalid request: initialize cannot be part of a batch",
            )),
            method => out.send(&simple_reply(&id, method, params.as_ref(), session, shared)),
        }
    }
    // The array is sent when the last call of the batch lets go of it.
    drop(out);
    if requests == 0 {
        return accepted();
    }
    if let Some((stream, rx)) = rx {
        return sse_response(rx, Some((&session.streams, stream)));
    }
    match collected.take().pop() {
        Some(answers) => json_response(StatusCode::OK, &answers),
        None => accepted(), // every call of it was cancelled
    }
}

fn still_running(id: &Value) -> Value {
    jsonrpc::error_response(
        id,
        jsonrpc::INVALID_REQUEST,
        format!("invalid request: request {id} is still running; ids must be unique"),
    )
}

fn request(
    id: Value,
    method: &str,
    params: Option<Value>,
    session: &Arc<Session>,
    shared: &Arc<Shared>,
) -> Response<HttpBody> {
    if method == "tools/call" {
        return tool_call(id, params, session, shared);
    }
    json_response(
        StatusCode::OK,
        &simple_reply(&id, method, params.as_ref(), session, shared),
    )
}

/// The answer to a request other than `tools/call` and `initialize`.
fn simple_reply(
    id: &Value,
    method: &str,
    params: Option<&Value>,
    session: &Session,
    shared: &Shared,
) -> Value {
    match method {
        "ping" => jsonrpc::response(id, json!({})),
        "tools/list" => server::list_tools(
            id,
            params,
            &shared.tools.ctx.config,
            shared.tools.read_only,
            session.dialect,
        ),
        _ => jsonrpc::error_response(
            id,
            jsonrpc::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        ),
    }
}

/// A brief call runs here and is answered as JSON; a walk or a command runs on the worker pool
/// and its progress and answer come as server-sent events.
fn tool_call(
    id: Value,
    params: Option<Value>,
    session: &Arc<Session>,
    shared: &Arc<Shared>,
) -> Response<HttpBody> {
    let Some(cancel) = session.in_flight.start(&id) else {
        return json_response(StatusCode::OK, &still_running(&id));
    };
    let brief = calls::brief(params.as_ref());
    let collected = Arc::new(calls::Collected::default());
    let (out, rx): (Arc<dyn Outbound>, _) = if brief {
        (Arc::clone(&collected) as Arc<dyn Outbound>, None)
    } else {
        let (stream, rx) = session.open_stream(vec![id.clone()]);
        let out = SseOut::new(session, stream, shared);
        (Arc::new(out), Some((stream, rx)))
    };
    let call = ToolCall {
        id,
        params,
        dialect: session.dialect,
        cancel,
        out,
        in_flight: session.in_flight.clone(),
        job_owner: Some(Arc::clone(&session.job_owner)),
        session: Some(Arc::clone(&session.label)),
        received: Instant::now(),
    };
    let Some((stream, rx)) = rx else {
        // One file's work (milliseconds): run on this runtime thread, answer as JSON.
        calls::run(call, &shared.tools);
        if let Some(reply) = collected.take().pop() {
            return json_response(StatusCode::OK, &reply);
        }
        // Cancelled meanwhile: an event stream that ends without an answer (and without an
        // id, as there is nothing to resume).
        return sse_response(unbounded_channel().1, None);
    };
    let tools = Arc::clone(&shared.tools);
    shared.pool.submit(false, move || calls::run(call, &tools));
    sse_response(rx, Some((&session.streams, stream)))
}

/// 503 while the server stops: the request was not run.
fn stopping() -> Response<HttpBody> {
    let mut resp = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "service unavailable: the server is stopping; nothing was run",
    );
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// 405, naming what the endpoint takes.
fn method_not_allowed() -> Response<HttpBody> {
    let mut resp = plain(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed: POST a JSON-RPC message, DELETE to end a session, GET with \
         Last-Event-ID to resume an event stream",
    );
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    resp
}

/// `GET /mcp` with `Last-Event-ID`: the events of that stream after that one, then the rest
/// as they come; 204 when the stream has ended and nothing is left (its call was cancelled,
/// or every event was delivered). Without `Last-Event-ID`, 405: this server starts no stream
/// of its own.
fn resume(headers: &HeaderMap, shared: &Arc<Shared>) -> Response<HttpBody> {
    let Some(last) = header_str(headers, "last-event-id") else {
        return method_not_allowed();
    };
    let Some(sid) = header_str(headers, "mcp-session-id") else {
        return plain(
            StatusCode::BAD_REQUEST,
            "bad request: Mcp-Session-Id header required",
        );
    };
    let Some(session) = lock(&shared.sessions).get(sid).cloned() else {
        return plain(StatusCode::NOT_FOUND, "not found: unknown or ended session");
    };
    *lock(&session.last_used) = Instant::now();
    let Some((stream_id, seen)) = last
        .trim()
        .split_once('-')
        .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
    else {
        return plain(
            StatusCode::BAD_REQUEST,
            &format!("bad request: Last-Event-ID {last:?} is no event id of this server"),
        );
    };
    let about_gap = |gap: &Gap| {
        let mut frames = vec![gap_comment(stream_id, gap, shared)];
        if !gap.unanswered.is_empty() {
            frames.push(lost_answers(gap, &session, shared));
        }
        frames
    };
    let resumed = lock(&session.streams).resume(stream_id, seen, about_gap);
    match resumed {
        Resumed::Unknown => plain(
            StatusCode::NOT_FOUND,
            &format!("not found: no event stream {stream_id} was opened in this session"),
        ),
        Resumed::Gone => plain(
            StatusCode::GONE,
            &format!(
                "gone: event stream {stream_id} is no longer kept, so the events after {last} \
                 are lost ({}); a call it answered has ended: check its effect before calling \
                 again",
                shared.keeper.limits.describe()
            ),
        ),
        Resumed::Done => Response::builder()
            .status(StatusCode::NO_CONTENT)
            .body(Full::new(Bytes::new()).boxed())
            .unwrap_or_else(|_| plain(StatusCode::NO_CONTENT, "")),
        Resumed::Events { rx, gap } => {
            if let Some(gap) = gap {
                log(format!(
                    "session {}: resuming event stream {stream_id} after {last}: events {} to {} \
                     were let go{}",
                    session.label,
                    gap.from,
                    gap.through,
                    if gap.unanswered.is_empty() {
                        ""
                    } else {
                        ", the answer among them"
                    }
                ));
            }
            sse_response(rx, Some((&session.streams, stream_id)))
        }
    }
}

/// The SSE comment in front of a resumed stream that lost events: which, and why.
fn gap_comment(stream: u64, gap: &Gap, shared: &Shared) -> Bytes {
    Bytes::from(format!(
        ": sneaky-mcp: events {stream}-{} to {stream}-{} of this stream are no longer kept ({}); \
         {}\n\n",
        gap.from,
        gap.through,
        shared.keeper.limits.describe(),
        if gap.unanswered.is_empty() {
            "progress notifications only (each says all so far)"
        } else {
            "the answer was among them"
        }
    ))
}

/// The answer a resuming client gets for a call whose answer was let go: a JSON-RPC error
/// with the call's id (an array for a batch), so that its request fails with the reason
/// rather than waiting for an answer that will never come.
fn lost_answers(gap: &Gap, session: &Session, shared: &Shared) -> Bytes {
    let message = format!(
        "sneaky-mcp no longer holds the answer to this call: the call ended, but its answer was \
         let go before the client resumed the event stream ({}). Its effect, if any, took place: \
         check it before calling again",
        shared.keeper.limits.describe()
    );
    let errors: Vec<Value> = gap
        .unanswered
        .iter()
        .map(|id| jsonrpc::error_response(id, jsonrpc::INTERNAL_ERROR, message.clone()))
        .collect();
    let batch = session.dialect.version == Version::V2025_03_26 && errors.len() > 1;
    let mut event = b"event: message\ndata: ".to_vec();
    match (batch, errors.first()) {
        (false, Some(one)) if errors.len() == 1 => json_out::write_value(&mut event, one),
        _ => json_out::write_value(&mut event, &Value::Array(errors)),
    }
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// An event stream's response; `stream` names the session's streams and the stream, whose
/// events are marked delivered as the connection takes them.
fn sse_response(
    rx: UnboundedReceiver<Queued>,
    stream: Option<(&Arc<Mutex<Streams>>, u64)>,
) -> Response<HttpBody> {
    let body = SseBody {
        rx,
        keep_alive: Box::pin(tokio::time::sleep(KEEP_ALIVE)),
        stream: stream.map(|(streams, id)| (Arc::downgrade(streams), id)),
    };
    let mut resp = Response::new(body.boxed());
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

fn initialize(id: &Value, params: Option<&Value>, shared: &Arc<Shared>) -> Response<HttpBody> {
    let (reply, accepted) = server::initialize(id, params, shared.structured_content);
    let Some(accepted) = accepted else {
        return json_response(StatusCode::OK, &reply);
    };
    let (session_id, job_owner) = match random_hex(16).and_then(|s| Ok((s, random_hex(16)?))) {
        Ok(ids) => ids,
        Err(e) => {
            log(format!("making a session id: {e}"));
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot make a session id",
            );
        }
    };
    {
        let mut sessions = lock(&shared.sessions);
        if !make_room(&mut sessions) {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions with running calls; try again later",
            );
        }
        sessions.insert(
            session_id.clone(),
            Arc::new(Session {
                dialect: accepted.dialect,
                in_flight: InFlight::default(),
                last_used: Mutex::new(Instant::now()),
                streams: Arc::new(Mutex::new(Streams::new(Arc::clone(&shared.keeper)))),
                job_owner: job_owner.into(),
                root: shared.tools.isolation.root().to_path_buf(),
                label: session_id.get(..8).unwrap_or_default().into(),
            }),
        );
    }
    let mut resp = json_response(StatusCode::OK, &reply);
    if let Ok(value) = HeaderValue::from_str(&session_id) {
        resp.headers_mut().insert("mcp-session-id", value);
    }
    resp
}

/// Forget sessions as they expire, not only when a new one needs room: the background jobs
/// they started end with them.
async fn expire_sessions(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(EXPIRY_SWEEP);
    loop {
        tick.tick().await;
        expire(&mut lock(&shared.sessions));
    }
}

/// Let go of ended event streams past `[mcp] resume_seconds` in every session, whether or not
/// the session calls again.
async fn expire_streams(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(STREAM_SWEEP);
    loop {
        tick.tick().await;
        let all: Vec<Arc<Mutex<Streams>>> = lock(&shared.sessions)
            .values()
            .map(|s| Arc::clone(&s.streams))
            .collect();
        let now = Instant::now();
        for streams in all {
            lock(&streams).expire(now);
        }
    }
}

fn expire(sessions: &mut HashMap<String, Arc<Session>>) {
    sessions.retain(|_, s| s.in_flight.len() > 0 || lock(&s.last_used).elapsed() < SESSION_IDLE);
}

/// Drop expired sessions, and the longest idle one when full; false when all are busy.
fn make_room(sessions: &mut HashMap<String, Arc<Session>>) -> bool {
    expire(sessions);
    if sessions.len() < MAX_SESSIONS {
        return true;
    }
    let idle = sessions
        .iter()
        .filter(|(_, s)| s.in_flight.len() == 0)
        .min_by_key(|(_, s)| *lock(&s.last_used))
        .map(|(k, _)| k.clone());
    match idle {
        Some(key) => {
            sessions.remove(&key);
            true
        }
        None => false,
    }
}

fn delete(headers: &HeaderMap, shared: &Arc<Shared>) -> Response<HttpBody> {
    let Some(sid) = header_str(headers, "mcp-session-id") else {
        return plain(
            StatusCode::BAD_REQUEST,
            "bad request: Mcp-Session-Id header required",
        );
    };
    match lock(&shared.sessions).remove(sid) {
        Some(session) => {
            session.in_flight.cancel_all();
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Full::new(Bytes::new()).boxed())
                .unwrap_or_else(|_| plain(StatusCode::NO_CONTENT, ""))
        }
        None => plain(StatusCode::NOT_FOUND, "not found: unknown or ended session"),
    }
}

/// Messages of one call (or batch), as numbered SSE events of its stream; the stream ends
/// when the call does (this is dropped).
struct SseOut {
    streams: Arc<Mutex<Streams>>,
    id: u64,
    shared: Arc<Shared>,
}

impl SseOut {
    fn new(session: &Session, id: u64, shared: &Arc<Shared>) -> SseOut {
        SseOut {
            streams: Arc::clone(&session.streams),
            id,
            shared: Arc::clone(shared),
        }
    }
}

impl Outbound for SseOut {
    fn send(&self, message: &Value) {
        let stream = self.id;
        let event = |n: u64| {
            // Newlines inside strings are escaped: the JSON is one `data:` line.
            let mut event = format!("id: {stream}-{n}\nevent: message\ndata: ").into_bytes();
            json_out::write_value(&mut event, message);
            event.extend_from_slice(b"\n\n");
            // Kept as long as it is: the vector's spare capacity would be kept with it.
            Bytes::from(event.into_boxed_slice())
        };
        let answer = message.is_array() || message.get("method").is_none();
        let over = lock(&self.streams).send(stream, event, answer);
        if over {
            // Across sessions, with no session's lock held (the sessions' lock comes first).
            let all: Vec<Arc<Mutex<Streams>>> = lock(&self.shared.sessions)
                .values()
                .map(|s| Arc::clone(&s.streams))
                .collect();
            self.shared.keeper.trim_total(&all);
        }
    }
}

impl Drop for SseOut {
    fn drop(&mut self) {
        lock(&self.streams).end(self.id);
    }
}

/// The response body of an SSE stream: ends when its sender is dropped; a comment line when
/// nothing was sent for `KEEP_ALIVE`. The events it takes are marked delivered in their
/// stream, which lets them go first when a bound needs room.
struct SseBody {
    rx: UnboundedReceiver<Queued>,
    keep_alive: Pin<Box<tokio::time::Sleep>>,
    stream: Option<(std::sync::Weak<Mutex<Streams>>, u64)>,
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, Infallible>>> {
        let frame = match self.rx.poll_recv(cx) {
            Poll::Ready(Some((n, bytes))) => {
                if let Some((streams, id)) = self.stream.as_ref().filter(|_| n > 0) {
                    if let Some(streams) = streams.upgrade() {
                        lock(&streams).delivered(*id, n);
                    }
                }
                bytes
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => match self.keep_alive.as_mut().poll(cx) {
                Poll::Ready(()) => Bytes::from_static(b": keep-alive\n\n"),
                Poll::Pending => return Poll::Pending,
            },
        };
        let next = tokio::time::Instant::now() + KEEP_ALIVE;
        self.keep_alive.as_mut().reset(next);
        Poll::Ready(Some(Ok(Frame::data(frame))))
    }
}

fn plain(status: StatusCode, text: &str) -> Response<HttpBody> {
    let mut resp = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

fn accepted() -> Response<HttpBody> {
    let mut resp = Response::new(Full::new(Bytes::new()).boxed());
    *resp.status_mut() = StatusCode::ACCEPTED;
    resp
}

fn json_response(status: StatusCode, message: &Value) -> Response<HttpBody> {
    let mut body = Vec::new();
    json_out::write_value(&mut body, message);
    let mut resp = Response::new(Full::new(Bytes::from(body)).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let accept: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.split(';').next().unwrap_or("").trim())
        .collect();
    accept.contains(&"*/*")
        || (accept.contains(&"application/json") && accept.contains(&"text/event-stream"))
}

/// `Authorization: Bearer TOKEN`, compared in constant time.
fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = header_str(headers, header::AUTHORIZATION.as_str()) else {
        return false;
    };
    let Some((scheme, given)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && same_secret(given.trim().as_bytes(), token.as_bytes())
}

fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Loopback origins (any scheme and port) and the ones allowed explicitly.
fn origin_allowed(origin: &HeaderValue, allowed: &[String]) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim().trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false; // "null" and other opaque origins
    };
    if !matches!(scheme, "http" | "https") {
        return false;
    }
    let host = if let Some(v6) = rest.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        rest.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip: IpAddr| ip.is_loopback())
}

/// `HOST:PORT`, `[V6]:PORT`, `:PORT`, `PORT` or `HOST`; the host defaults to 127.0.0.1 and the
/// port to [`DEFAULT_PORT`].
pub fn parse_addr(text: &str) -> Result<SocketAddr> {
    let bad = || {
        Error::invalid_args(format!(
            "--http {text}: expected HOST:PORT, :PORT or PORT (e.g. 127.0.0.1:{DEFAULT_PORT})"
        ))
    };
    let text = text.trim();
    if let Ok(port) = text.trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(ip) = text
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<IpAddr>()
    {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().map_err(|_| bad())?),
        None => (text, DEFAULT_PORT),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(bad())
}

struct Token {
    value: String,
    generated: bool,
    /// Where a client's user finds it, for the 401 (never the value, nor the file's path).
    whence: &'static str,
}

/// `--token-file`, else `SNEAKY_MCP_TOKEN`, else a fresh random one.
fn load_token(file: Option<&std::path::Path>) -> Result<Token> {
    let given = match file {
        Some(path) => Some((
            std::fs::read_to_string(path).map_err(|e| {
                Error::new(
                    ErrorKind::ConfigError,
                    format!("--token-file {}: {e}", path.display()),
                )
            })?,
            format!("--token-file {}", path.display()),
        )),
        None => std::env::var(TOKEN_ENV)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .map(|t| (t, TOKEN_ENV.to_string())),
    };
    match given {
        Some((text, origin)) => {
            let value = text.trim().to_string();
            if value.len() < MIN_TOKEN_LEN || value.chars().any(|c| c.is_whitespace()) {
                return Err(Error::new(
                    ErrorKind::ConfigError,
                    format!(
                        "{origin}: the token must be at least {MIN_TOKEN_LEN} characters \
                         without spaces"
                    ),
                ));
            }
            Ok(Token {
                value,
                generated: false,
                whence: if file.is_some() {
                    "the content of the --token-file the server was started with"
                } else {
                    "the SNEAKY_MCP_TOKEN the server was started with"
                },
            })
        }
        None => Ok(Token {
            value: random_hex(32).map_err(|e| Error::io("making a token", e))?,
            generated: true,
            whence: "the random token the server printed on its stderr when it started (start \
                     it with SNEAKY_MCP_TOKEN or --token-file to choose one)",
        }),
    }
}

fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let a = |s: &str| parse_addr(s).map(|a| a.to_string()).ok();
        assert_eq!(a("8080").as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(a(":9000").as_deref(), Some("127.0.0.1:9000"));
        assert_eq!(a("0.0.0.0:1").as_deref(), Some("0.0.0.0:1"));
        assert_eq!(a("[::1]:7").as_deref(), Some("[::1]:7"));
        assert_eq!(a("localhost:5").as_deref(), Some("127.0.0.1:5"));
        assert_eq!(a("127.0.0.1").as_deref(), Some("127.0.0.1:8765"));
        assert_eq!(a("example.com:80"), None);
        assert_eq!(a("1.2.3.4:99999"), None);
    }

    #[test]
    fn origins() {
        let ok = |o: &str, allowed: &[&str]| {
            let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
            origin_allowed(&HeaderValue::from_str(o).expect("header"), &allowed)
        };
        assert!(ok("http://localhost:3000", &[]));
        assert!(ok("http://127.0.0.1", &[]));
        assert!(ok("https://[::1]:8443", &[]));
        assert!(!ok("http://evil.example", &[]));
        assert!(!ok("http://localhost.evil.example", &[]));
        assert!(!ok("null", &[]));
        assert!(!ok("file://", &[]));
        assert!(ok(
            "https://agent.example.com",
            &["https://agent.example.com/"]
        ));
    }

    #[test]
    fn bearer_tokens() {
        let mut h = HeaderMap::new();
        let token = "0123456789abcdef0123";
        assert!(!authorized(&h, token));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer 0123456789abcdef0123"),
        );
        assert!(authorized(&h, token));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer 0123456789abcdef0124"),
        );
        assert!(!authorized(&h, token));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic 0123456789abcdef0123"),
        );
        assert!(!authorized(&h, token));
    }

    /// A session last used `idle` ago, with a running call when `busy`.
    fn session(root: &std::path::Path, idle: Duration, busy: bool) -> Arc<Session> {
        let session = Session {
            dialect: Dialect::before_initialize(StructuredChoice::ByClient),
            in_flight: InFlight::default(),
            last_used: Mutex::new(Instant::now().checked_sub(idle).expect("instant")),
            streams: Arc::new(Mutex::new(Streams::new(Keeper::new(Limits::of(
                &crate::config::Mcp::default(),
            ))))),
            job_owner: "test".into(),
            root: root.to_path_buf(),
            label: "test".into(),
        };
        if busy {
            session.in_flight.start(&Value::from(1)).expect("call");
        }
        Arc::new(session)
    }

    #[test]
    fn idle_sessions_expire_and_the_longest_idle_makes_room() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let long = SESSION_IDLE + Duration::from_secs(1);
        let mut sessions = HashMap::new();
        sessions.insert("fresh".to_string(), session(root, Duration::ZERO, false));
        sessions.insert("expired".to_string(), session(root, long, false));
        sessions.insert("busy".to_string(), session(root, long, true));
        expire(&mut sessions);
        let mut left: Vec<&str> = sessions.keys().map(String::as_str).collect();
        left.sort();
        assert_eq!(left, ["busy", "fresh"]);
        // Full: the longest idle without a running call goes, not a busy one.
        for i in sessions.len()..MAX_SESSIONS {
            let idle = Duration::from_secs(if i == 7 { 600 } else { 60 });
            sessions.insert(format!("s{i}"), session(root, idle, false));
        }
        assert_eq!(sessions.len(), MAX_SESSIONS);
        assert!(make_room(&mut sessions));
        assert!(!sessions.contains_key("s7"));
        assert!(sessions.contains_key("busy"));
        // All busy: no room, and nobody is dropped.
        let mut busy: HashMap<String, Arc<Session>> = (0..MAX_SESSIONS)
            .map(|i| (format!("b{i}"), session(root, long, true)))
            .collect();
        assert!(!make_room(&mut busy));
        assert_eq!(busy.len(), MAX_SESSIONS);
    }

    #[test]
    fn accept_headers() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        assert!(accepts_json_and_sse(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!accepts_json_and_sse(&h));
        h.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        assert!(accepts_json_and_sse(&h));
    }
}
