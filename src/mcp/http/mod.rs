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
//!
//! The files, one concern each: `admission.rs` (which connections are kept), `auth.rs` (the
//! token and the origins), `routing.rs` (what a request gets), `sessions.rs`, `sse.rs` (event
//! streams and their resumption), `reply.rs` (the plain responses), `stop.rs` (the graceful
//! stop); here, the shared state, the start and the accept loop.

mod admission;
mod auth;
mod reply;
mod routing;
mod sessions;
mod sse;
mod stop;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};

use super::calls::Tools;
use super::log::log;
use super::pool::Pool;
use super::resume::{Keeper, Limits};
use super::server::Options;
use super::shape::StructuredChoice;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;
use admission::{
    connection_cap, raise_descriptor_limit, Connection, Connections, Registered, HEADER_TIMEOUT,
};
use auth::load_token;
use routing::handle;
use sessions::{expire_sessions, Session};
use sse::expire_streams;
use stop::stop_on_signal;

/// The one endpoint.
pub const ENDPOINT: &str = "/mcp";

/// The readiness endpoint: answered without the token.
pub const HEALTH: &str = "/healthz";

/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "SNEAKY_MCP_TOKEN";

/// Default port when ADDR names none.
pub const DEFAULT_PORT: u16 = 8765;

/// What `--http` and its companions say.
pub struct HttpOptions {
    /// `HOST:PORT`, `:PORT` or `PORT`; the host defaults to 127.0.0.1.
    pub addr: String,
    pub token_file: Option<PathBuf>,
    /// Origins accepted besides loopback ones, e.g. `https://agent.example.com`.
    pub allowed_origins: Vec<String>,
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
}
