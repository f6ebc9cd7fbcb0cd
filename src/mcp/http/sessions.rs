//! The HTTP server's sessions: one per `initialize`, named by `Mcp-Session-Id`, bounded in
//! number, forgotten when idle (the longest idle one without a running call makes room), ended
//! by `DELETE`; the background jobs a session started end with it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;

use super::auth::random_hex;
use super::reply::{header_str, json_response, plain};
use super::{lock, HttpBody, Shared};
use crate::mcp::calls::InFlight;
use crate::mcp::log::log;
use crate::mcp::resume::Streams;
use crate::mcp::server;
use crate::mcp::shape::Dialect;

/// Sessions kept at once; beyond this the longest idle one without running calls goes.
pub(super) const MAX_SESSIONS: usize = 256;

/// A session unused this long is forgotten.
pub(super) const SESSION_IDLE: Duration = Duration::from_secs(3600);

/// How often expired sessions are looked for.
pub(super) const EXPIRY_SWEEP: Duration = Duration::from_secs(60);

pub(super) struct Session {
    pub(super) dialect: Dialect,
    pub(super) in_flight: InFlight,
    pub(super) last_used: Mutex<Instant>,
    /// Its event streams, and what they keep for resumption (`super::resume`).
    pub(super) streams: Arc<Mutex<Streams>>,
    /// The tag of the background jobs this session starts (SNEAKY_JOB_OWNER=PID:TAG): a
    /// random value apart from the session id, which tool processes are not shown.
    pub(super) job_owner: Arc<str>,
    /// The workspace, where the session's jobs run.
    pub(super) root: PathBuf,
    /// The session in log lines: the first 8 characters of its id (the client can match them;
    /// the 24 others keep the id unguessable from the log).
    pub(super) label: Arc<str>,
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

pub(super) fn initialize(
    id: &Value,
    params: Option<&Value>,
    shared: &Arc<Shared>,
) -> Response<HttpBody> {
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
pub(super) async fn expire_sessions(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(EXPIRY_SWEEP);
    loop {
        tick.tick().await;
        expire(&mut lock(&shared.sessions));
    }
}

pub(super) fn expire(sessions: &mut HashMap<String, Arc<Session>>) {
    sessions.retain(|_, s| s.in_flight.len() > 0 || lock(&s.last_used).elapsed() < SESSION_IDLE);
}

/// Drop expired sessions, and the longest idle one when full; false when all are busy.
pub(super) fn make_room(sessions: &mut HashMap<String, Arc<Session>>) -> bool {
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

pub(super) fn delete(headers: &HeaderMap, shared: &Arc<Shared>) -> Response<HttpBody> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::resume::{Keeper, Limits};
    use crate::mcp::shape::StructuredChoice;

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
}
