//! Server-sent event streams: a walk's or a command's progress and answer as numbered events
//! (`SseOut`, `SseBody`, with a keep-alive comment when silent), and their resumption by
//! `GET /mcp` with `Last-Event-ID`, saying what was let go (`crate::mcp::resume` keeps them).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use super::reply::{header_str, method_not_allowed, plain};
use super::sessions::Session;
use super::{lock, HttpBody, Shared};
use crate::mcp::calls::Outbound;
use crate::mcp::jsonrpc;
use crate::mcp::log::log;
use crate::mcp::resume::{Frame as Queued, Gap, Resumed, Streams};
use crate::mcp::version::Version;
use crate::render::json_out;

/// How long a client waits before resuming a dropped event stream (SSE `retry`).
pub(super) const RETRY: Duration = Duration::from_millis(1000);

/// How often ended event streams past `[mcp] resume_seconds` are let go, in every session.
pub(super) const STREAM_SWEEP: Duration = Duration::from_secs(1);

/// A stream with nothing to say for this long gets a comment line, so that proxies that cut
/// idle connections (nginx after 60 s) leave a long, silent command's stream alone.
pub(super) const KEEP_ALIVE: Duration = Duration::from_secs(15);

impl Session {
    /// A new event stream answering `requests`, primed (`Streams::open`).
    pub(super) fn open_stream(&self, requests: Vec<Value>) -> (u64, UnboundedReceiver<Queued>) {
        lock(&self.streams).open(requests, RETRY)
    }
}

/// `GET /mcp` with `Last-Event-ID`: the events of that stream after that one, then the rest
/// as they come; 204 when the stream has ended and nothing is left (its call was cancelled,
/// or every event was delivered). Without `Last-Event-ID`, 405: this server starts no stream
/// of its own.
pub(super) fn resume(headers: &HeaderMap, shared: &Arc<Shared>) -> Response<HttpBody> {
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
pub(super) fn gap_comment(stream: u64, gap: &Gap, shared: &Shared) -> Bytes {
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
pub(super) fn lost_answers(gap: &Gap, session: &Session, shared: &Shared) -> Bytes {
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
pub(super) fn sse_response(
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

/// Let go of ended event streams past `[mcp] resume_seconds` in every session, whether or not
/// the session calls again.
pub(super) async fn expire_streams(shared: Arc<Shared>) {
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

/// Messages of one call (or batch), as numbered SSE events of its stream; the stream ends
/// when the call does (this is dropped).
pub(super) struct SseOut {
    streams: Arc<Mutex<Streams>>,
    id: u64,
    shared: Arc<Shared>,
}

impl SseOut {
    pub(super) fn new(session: &Session, id: u64, shared: &Arc<Shared>) -> SseOut {
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
pub(super) struct SseBody {
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
