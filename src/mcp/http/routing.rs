//! What a request to the HTTP server gets: the origin, health, OAuth-discovery and token checks
//! in that order, then by method and path; a POST's headers, body and JSON-RPC message (or
//! batch), routed to the session's calls: a brief call answered as JSON, a walk or a command on
//! the worker pool with its answer in an event stream.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming as IncomingBody;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::mpsc::unbounded_channel;

use super::auth::{authorized, is_oauth_discovery, no_oauth_here, origin_allowed, unauthorized};
use super::reply::{accepted, header_str, json_response, method_not_allowed, plain};
use super::sessions::{delete, initialize, Session};
use super::sse::{resume, sse_response, SseOut};
use super::{lock, HttpBody, Shared, ENDPOINT, HEALTH};
use crate::mcp::calls::{self, Outbound, ToolCall};
use crate::mcp::jsonrpc::{self, Message, Parsed};
use crate::mcp::server;
use crate::mcp::version::Version;

pub(super) async fn handle(
    req: Request<IncomingBody>,
    shared: &Arc<Shared>,
    conn: u64,
) -> Response<HttpBody> {
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
pub(super) fn health(method: &Method, shared: &Shared) -> Response<HttpBody> {
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

/// What a POST must say about itself (it accepts JSON and SSE, sends JSON, and speaks a
/// protocol version we know); the refusal when it does not.
pub(super) fn check_post_headers(headers: &HeaderMap) -> Option<Response<HttpBody>> {
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
pub(super) async fn read_body(
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

pub(super) async fn post(req: Request<IncomingBody>, shared: &Arc<Shared>) -> Response<HttpBody> {
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

pub(super) fn notification(method: &str, params: Option<&Value>, session: &Session) {
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
pub(super) fn batch(
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

pub(super) fn still_running(id: &Value) -> Value {
    jsonrpc::error_response(
        id,
        jsonrpc::INVALID_REQUEST,
        format!("invalid request: request {id} is still running; ids must be unique"),
    )
}

pub(super) fn request(
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
pub(super) fn simple_reply(
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
pub(super) fn tool_call(
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
pub(super) fn stopping() -> Response<HttpBody> {
    let mut resp = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "service unavailable: the server is stopping; nothing was run",
    );
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

pub(super) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
