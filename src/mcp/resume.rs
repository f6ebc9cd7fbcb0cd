//! What `sneaky-mcp --http` keeps of its event streams so that a client whose connection
//! dropped can resume one (`GET /mcp` with `Last-Event-ID`), and the bounds that make that
//! memory a matter of configuration, not of traffic.
//!
//! Every event of a stream is kept, numbered, until one of three bounds lets it go: the
//! stream ended more than `[mcp] resume_seconds` ago (a timer sweeps every second, whoever
//! calls), the session's events pass `resume_session_bytes`, or all sessions' events pass
//! `resume_total_bytes`. Past a byte bound the events already handed to a live connection go
//! first (the client has them unless that connection broke in the same moment), then the
//! oldest; an event larger than a bound is sent but never kept. A stream remembers which of
//! its events it let go, so that a client resuming past them is told so — with an error
//! answer for the call when its answer was among them — never left with a silent gap.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::config::Mcp;

/// What a kept event costs besides its bytes (its place in the queue, the counters).
const EVENT_OVERHEAD: usize = 64;
/// What a stream's record costs while it is kept (its state, its channel, its request ids).
const STREAM_OVERHEAD: usize = 512;
/// Events kept per stream, at most (progress every half second: half a minute of it).
const KEPT_EVENTS: usize = 64;

/// The bounds, from `[mcp]`.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub seconds: Duration,
    pub session_bytes: usize,
    pub total_bytes: usize,
}

impl Limits {
    pub fn of(mcp: &Mcp) -> Limits {
        let bytes = |b: u64| usize::try_from(b).unwrap_or(usize::MAX);
        Limits {
            seconds: Duration::from_secs(mcp.resume_seconds),
            session_bytes: bytes(mcp.resume_session_bytes),
            total_bytes: bytes(mcp.resume_total_bytes),
        }
    }

    /// The bounds as the configuration names them, for messages.
    pub fn describe(&self) -> String {
        format!(
            "ended streams are kept {} s ([mcp] resume_seconds), and at most {} bytes of events \
             per session (resume_session_bytes) and {} in all (resume_total_bytes)",
            self.seconds.as_secs(),
            self.session_bytes,
            self.total_bytes
        )
    }
}

/// What every session of a server shares: the bounds, and the bytes kept in all.
pub struct Keeper {
    pub limits: Limits,
    total: AtomicUsize,
    /// Orders events (and ended streams) by age across sessions.
    seq: AtomicU64,
}

impl Keeper {
    pub fn new(limits: Limits) -> Arc<Keeper> {
        Arc::new(Keeper {
            limits,
            total: AtomicUsize::new(0),
            seq: AtomicU64::new(0),
        })
    }

    /// Bytes kept for resumption by every session.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed)
    }

    fn add(&self, bytes: usize) {
        self.total.fetch_add(bytes, Ordering::Relaxed);
    }

    fn sub(&self, bytes: usize) {
        self.total.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Let the oldest go (those delivered first) until all sessions' streams are within the
    /// total bound. `sessions` are the streams of every session the server knows.
    pub fn trim_total(&self, sessions: &[Arc<Mutex<Streams>>]) {
        while self.total() > self.limits.total_bytes {
            let oldest = sessions
                .iter()
                .filter_map(|s| lock(s).oldest().map(|key| (key, s)))
                .min_by_key(|(key, _)| *key);
            let Some((_, streams)) = oldest else {
                return; // only running streams' records are left: they go with their calls
            };
            lock(streams).drop_oldest();
        }
    }
}

/// A frame for an event stream's connection: the event's number (0 for those that are not
/// kept: the priming event) and its bytes.
pub type Frame = (u64, Bytes);

/// One session's event streams: those running and, for a while after they end, those a client
/// may still resume.
pub struct Streams {
    keeper: Arc<Keeper>,
    next: u64,
    kept: BTreeMap<u64, StreamState>,
    /// What may go next in each stream (`StreamState::candidate`), in the order it goes:
    /// (not yet delivered, age, stream), so that making room costs a lookup, not a scan.
    order: BTreeSet<(bool, u64, u64)>,
    /// Bytes this session keeps (events and records).
    bytes: usize,
}

struct StreamState {
    events: VecDeque<KeptEvent>,
    /// The number the next event gets (the priming event is 0).
    next: u64,
    /// The last event handed to a connection.
    delivered: u64,
    /// The last event let go before a client may have read it (0: none).
    dropped_through: u64,
    /// The connection the events go to now; None once it is gone or the stream has ended.
    live: Option<UnboundedSender<Frame>>,
    /// When the call ended (no event comes after), and its place among what may go.
    ended: Option<(Instant, u64)>,
    /// The requests the stream answers (one call, or a batch's).
    requests: Vec<Value>,
    /// The event that carries the answer, once sent.
    answer: Option<u64>,
}

impl StreamState {
    /// What of this stream goes next when room is needed, and its place: its oldest event
    /// (those delivered before the others), or, once its events are gone and its call has
    /// ended, its record. A running stream's record stays (its call still sends to it).
    fn candidate(&self) -> Option<(bool, u64)> {
        match (self.events.front(), self.ended) {
            (Some(e), _) => Some((e.n > self.delivered, e.seq)),
            (None, Some((_, seq))) => Some((false, seq)),
            (None, None) => None,
        }
    }
}

struct KeptEvent {
    n: u64,
    seq: u64,
    bytes: Bytes,
}

fn cost(event: &Bytes) -> usize {
    event.len() + EVENT_OVERHEAD
}

/// What a resumption finds.
pub enum Resumed {
    /// No stream with that number was ever opened in this session.
    Unknown,
    /// The stream was let go (its time was up, or a byte bound needed room).
    Gone,
    /// The stream has ended and nothing after that event is left to send.
    Done,
    /// The frames for the resuming connection: what the caller says of a gap (when some
    /// events after that one were let go), the events after it that are kept, then (when the
    /// stream runs) the rest as they come.
    Events {
        rx: UnboundedReceiver<Frame>,
        gap: Option<Gap>,
    },
}

/// Events a resuming client asked for that were let go.
pub struct Gap {
    /// The first and last event numbers let go.
    pub from: u64,
    pub through: u64,
    /// The requests whose answer was among them (their calls ended; the answer is lost).
    pub unanswered: Vec<Value>,
}

impl Streams {
    pub fn new(keeper: Arc<Keeper>) -> Streams {
        Streams {
            keeper,
            next: 0,
            kept: BTreeMap::new(),
            order: BTreeSet::new(),
            bytes: 0,
        }
    }

    /// Change stream `id` and keep its place in `order`; None when it is not kept.
    fn update<R>(&mut self, id: u64, change: impl FnOnce(&mut StreamState) -> R) -> Option<R> {
        let state = self.kept.get_mut(&id)?;
        let before = state.candidate();
        let result = change(state);
        let after = state.candidate();
        if before != after {
            if let Some((undelivered, seq)) = before {
                self.order.remove(&(undelivered, seq, id));
            }
            if let Some((undelivered, seq)) = after {
                self.order.insert((undelivered, seq, id));
            }
        }
        Some(result)
    }

    fn add(&mut self, bytes: usize) {
        self.bytes += bytes;
        self.keeper.add(bytes);
    }

    fn sub(&mut self, bytes: usize) {
        self.bytes -= bytes;
        self.keeper.sub(bytes);
    }

    /// Bytes this session keeps for resumption.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }

    /// A new stream for `requests`, primed: its first frame carries the id `STREAM-0` and
    /// `retry`, so that a client whose connection drops knows it can resume and when.
    pub fn open(
        &mut self,
        requests: Vec<Value>,
        retry: Duration,
    ) -> (u64, UnboundedReceiver<Frame>) {
        let id = self.next;
        self.next += 1;
        let (tx, rx) = unbounded_channel();
        let priming = format!("id: {id}-0\nretry: {}\ndata:\n\n", retry.as_millis());
        let _ = tx.send((0, Bytes::from(priming)));
        self.kept.insert(
            id,
            StreamState {
                events: VecDeque::new(),
                next: 1,
                delivered: 0,
                dropped_through: 0,
                live: Some(tx),
                ended: None,
                requests,
                answer: None,
            },
        );
        self.add(STREAM_OVERHEAD);
        self.trim();
        (id, rx)
    }

    /// Number, keep and send an event of stream `id`; `answer` when it carries the answer.
    /// Returns whether all sessions now keep more than the total bound (the caller then
    /// trims across sessions, without this session's lock held).
    pub fn send(&mut self, id: u64, message: impl FnOnce(u64) -> Bytes, answer: bool) -> bool {
        let limits = self.keeper.limits;
        let seq = self.keeper.next_seq();
        let sent = self.update(id, |state| {
            let n = state.next;
            state.next += 1;
            let event = message(n);
            if answer {
                state.answer = Some(n);
            }
            // A dropped connection: the events stay for a resumption.
            if state
                .live
                .as_ref()
                .is_some_and(|live| live.send((n, event.clone())).is_err())
            {
                state.live = None;
            }
            let mut freed = 0;
            if state.events.len() == KEPT_EVENTS {
                if let Some(old) = state.events.pop_front() {
                    state.dropped_through = state.dropped_through.max(old.n);
                    freed += cost(&old.bytes);
                }
            }
            let size = cost(&event);
            if size <= limits.session_bytes && size <= limits.total_bytes {
                state.events.push_back(KeptEvent {
                    n,
                    seq,
                    bytes: event,
                });
                (freed, size)
            } else {
                state.dropped_through = n;
                (freed, 0)
            }
        });
        let Some((freed, kept)) = sent else {
            return false;
        };
        self.sub(freed);
        self.add(kept);
        self.trim();
        self.keeper.total() > limits.total_bytes
    }

    /// The call of stream `id` has ended: nothing more comes.
    pub fn end(&mut self, id: u64) {
        let seq = self.keeper.next_seq();
        self.update(id, |state| {
            state.ended = Some((Instant::now(), seq));
            state.live = None; // the response ends once what was sent is written
        });
        if self.keeper.limits.seconds.is_zero() {
            self.forget(id);
        }
        // Its record may go now, should the running ones have kept the session over.
        self.trim();
    }

    /// A connection has taken event `n` of stream `id` to write.
    pub fn delivered(&mut self, id: u64, n: u64) {
        self.update(id, |state| state.delivered = state.delivered.max(n));
    }

    /// The events of stream `id` after `seen`, and the rest as they come while it runs; when
    /// some after `seen` were let go, `about_gap`'s frames come first.
    pub fn resume(
        &mut self,
        id: u64,
        seen: u64,
        about_gap: impl FnOnce(&Gap) -> Vec<Bytes>,
    ) -> Resumed {
        let Some(state) = self.kept.get_mut(&id) else {
            return if id < self.next {
                Resumed::Gone
            } else {
                Resumed::Unknown
            };
        };
        let gap = (state.dropped_through > seen).then(|| Gap {
            from: seen + 1,
            through: state.dropped_through,
            unanswered: match state.answer {
                Some(a) if a > seen && a <= state.dropped_through => state.requests.clone(),
                _ => Vec::new(),
            },
        });
        let mut missed = state.events.iter().filter(|e| e.n > seen).peekable();
        if state.ended.is_some() && missed.peek().is_none() && gap.is_none() {
            return Resumed::Done;
        }
        // Queued before the channel is attached (under this lock): nothing new overtakes them.
        let (tx, rx) = unbounded_channel();
        for frame in gap.as_ref().map(about_gap).unwrap_or_default() {
            let _ = tx.send((0, frame));
        }
        for event in missed {
            let _ = tx.send((event.n, event.bytes.clone()));
        }
        if state.ended.is_none() {
            state.live = Some(tx);
        }
        Resumed::Events { rx, gap }
    }

    /// Let go of the streams that ended more than `resume_seconds` before `now`.
    pub fn expire(&mut self, now: Instant) {
        let keep_for = self.keeper.limits.seconds;
        let old: Vec<u64> = self
            .kept
            .iter()
            .filter(|(_, s)| {
                s.ended
                    .is_some_and(|(at, _)| now.saturating_duration_since(at) >= keep_for)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in old {
            self.forget(id);
        }
    }

    fn forget(&mut self, id: u64) {
        if let Some(state) = self.kept.remove(&id) {
            if let Some((undelivered, seq)) = state.candidate() {
                self.order.remove(&(undelivered, seq, id));
            }
            let events: usize = state.events.iter().map(|e| cost(&e.bytes)).sum();
            self.sub(events + STREAM_OVERHEAD);
        }
    }

    /// Within the session's bound: let the oldest go, those delivered first.
    fn trim(&mut self) {
        while self.bytes > self.keeper.limits.session_bytes && self.drop_oldest() {}
    }

    /// What goes next here: (not yet delivered, age).
    fn oldest(&self) -> Option<(bool, u64)> {
        self.order
            .first()
            .map(|(undelivered, seq, _)| (*undelivered, *seq))
    }

    /// Let the oldest event go (or an ended stream's record once its events are gone); false
    /// when nothing can go.
    fn drop_oldest(&mut self) -> bool {
        let Some(&first) = self.order.first() else {
            return false;
        };
        let id = first.2;
        let popped = self.update(id, |state| {
            let event = state.events.pop_front()?;
            state.dropped_through = state.dropped_through.max(event.n);
            Some(cost(&event.bytes))
        });
        match popped {
            Some(Some(freed)) => self.sub(freed),
            Some(None) => self.forget(id),
            // Not kept: a place left behind would be picked again and again.
            None => {
                self.order.remove(&first);
            }
        }
        true
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        self.keeper.sub(self.bytes);
    }
}

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keeper(session_bytes: usize, total_bytes: usize) -> Arc<Keeper> {
        Keeper::new(Limits {
            seconds: Duration::from_secs(60),
            session_bytes,
            total_bytes,
        })
    }

    fn frames(mut rx: UnboundedReceiver<Frame>) -> Vec<Frame> {
        let mut all = Vec::new();
        while let Ok(frame) = rx.try_recv() {
            all.push(frame);
        }
        all
    }

    fn event(size: usize) -> impl FnOnce(u64) -> Bytes {
        move |_| Bytes::from(vec![b'x'; size])
    }

    #[test]
    fn a_session_keeps_within_its_bound_the_delivered_going_first() {
        let k = keeper(
            4 * (1000 + EVENT_OVERHEAD) + 2 * STREAM_OVERHEAD - 1,
            usize::MAX,
        );
        let mut s = Streams::new(Arc::clone(&k));
        let (a, _rx_a) = s.open(vec![Value::from(1)], Duration::from_secs(1));
        let (b, _rx_b) = s.open(vec![Value::from(2)], Duration::from_secs(1));
        s.send(a, event(1000), false); // a-1, not delivered
        s.send(b, event(1000), false); // b-1, delivered below
        s.delivered(b, 1);
        s.send(a, event(1000), false); // a-2
        assert!(s.bytes() <= k.limits.session_bytes);
        s.send(b, event(1000), true); // b-2: room is made by b-1 (delivered), not a-1
        assert!(s.bytes() <= k.limits.session_bytes, "{}", s.bytes());
        assert_eq!(k.total(), s.bytes());
        match s.resume(a, 0, |_| Vec::new()) {
            Resumed::Events { rx, gap } => {
                assert_eq!(frames(rx).len(), 2);
                assert!(gap.is_none());
            }
            _ => panic!("stream a resumes"),
        }
        s.end(b);
        match s.resume(b, 0, |_| vec![Bytes::from_static(b": gap\n\n")]) {
            Resumed::Events { rx, gap } => {
                let frames = frames(rx);
                assert_eq!(frames.len(), 2, "the gap's comment, then b-2");
                assert_eq!((frames[0].0, frames[1].0), (0, 2));
                let gap = gap.expect("b-1 is gone");
                assert_eq!((gap.from, gap.through), (1, 1));
                assert!(gap.unanswered.is_empty(), "the answer b-2 is kept");
            }
            _ => panic!("stream b resumes"),
        }
        drop(s);
        assert_eq!(k.total(), 0);
    }

    #[test]
    fn an_answer_let_go_is_named_and_a_stream_let_go_is_gone() {
        let k = keeper(usize::MAX, 4096);
        let mut one = Streams::new(Arc::clone(&k));
        let mut two = Streams::new(Arc::clone(&k));
        let (a, _rx) = one.open(vec![Value::from(7)], Duration::from_secs(1));
        one.send(a, event(1500), true);
        one.end(a);
        let (b, _rx) = two.open(vec![Value::from(8)], Duration::from_secs(1));
        let over = two.send(b, event(1500), true);
        assert!(over, "the total bound is passed");
        let sessions = [Arc::new(Mutex::new(one)), Arc::new(Mutex::new(two))];
        k.trim_total(&sessions);
        assert!(k.total() <= 4096);
        let mut one = lock(&sessions[0]);
        match one.resume(a, 0, |_| Vec::new()) {
            Resumed::Events { rx, gap } => {
                assert!(frames(rx).is_empty());
                let gap = gap.expect("the answer is gone");
                assert_eq!(gap.unanswered, [Value::from(7)]);
            }
            _ => panic!("the record of stream a is kept"),
        }
        // Seen through the answer: nothing is missing.
        assert!(matches!(one.resume(a, 1, |_| Vec::new()), Resumed::Done));
        assert!(matches!(one.resume(5, 0, |_| Vec::new()), Resumed::Unknown));
        one.forget(a);
        assert!(matches!(one.resume(a, 0, |_| Vec::new()), Resumed::Gone));
    }

    #[test]
    fn an_event_larger_than_a_bound_is_sent_not_kept() {
        let k = keeper(1024, usize::MAX);
        let mut s = Streams::new(Arc::clone(&k));
        let (a, mut rx) = s.open(vec![Value::from(1)], Duration::from_secs(1));
        s.send(a, event(4096), true);
        assert_eq!(s.bytes(), STREAM_OVERHEAD);
        assert_eq!(rx.try_recv().map(|f| f.0).ok(), Some(0));
        assert_eq!(rx.try_recv().map(|f| f.1.len()).ok(), Some(4096));
    }

    /// Whatever happens to a session's streams, its index of what goes next and its byte
    /// count agree with the streams themselves, and the bounds hold.
    #[test]
    fn random_traffic_keeps_the_index_and_the_counts_true() {
        let k = keeper(20_000, 30_000);
        let mut s = Streams::new(Arc::clone(&k));
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut receivers = Vec::new();
        for _ in 0..20_000 {
            let ids: Vec<u64> = s.kept.keys().copied().collect();
            let pick = |r: u64| ids.get(usize::try_from(r).unwrap_or(0) % ids.len().max(1));
            match next(7) {
                0 => receivers.push(s.open(vec![Value::from(1)], Duration::from_secs(1)).1),
                1 | 2 => {
                    if let Some(&id) = pick(next(64)) {
                        let size = usize::try_from(next(3000)).unwrap_or(0);
                        s.send(id, event(size), next(4) == 0);
                    }
                }
                3 => {
                    if let Some(&id) = pick(next(64)) {
                        let upto = s.kept[&id].next;
                        s.delivered(id, next(upto + 1));
                    }
                }
                4 => {
                    if let Some(&id) = pick(next(64)) {
                        s.end(id);
                    }
                }
                5 => s.expire(Instant::now() + Duration::from_secs(next(2) * 61)),
                _ => {
                    s.drop_oldest();
                }
            }
            let order: BTreeSet<(bool, u64, u64)> = s
                .kept
                .iter()
                .filter_map(|(id, st)| st.candidate().map(|(d, q)| (d, q, *id)))
                .collect();
            assert_eq!(order, s.order);
            let bytes: usize = s
                .kept
                .values()
                .map(|st| STREAM_OVERHEAD + st.events.iter().map(|e| cost(&e.bytes)).sum::<usize>())
                .sum();
            assert_eq!(bytes, s.bytes());
            assert_eq!(k.total(), s.bytes());
            let running = s.kept.values().filter(|st| st.ended.is_none()).count();
            assert!(
                s.bytes() <= k.limits.session_bytes.max(running * STREAM_OVERHEAD),
                "{} bytes, {running} running",
                s.bytes()
            );
            receivers.retain(|rx| !rx.is_closed());
        }
    }

    #[test]
    fn ended_streams_expire() {
        let k = keeper(usize::MAX, usize::MAX);
        let mut s = Streams::new(Arc::clone(&k));
        let (a, _rx) = s.open(vec![Value::from(1)], Duration::from_secs(1));
        let (b, _rx2) = s.open(vec![Value::from(2)], Duration::from_secs(1));
        s.send(a, event(100), true);
        s.end(a);
        s.expire(Instant::now() + Duration::from_secs(61));
        assert!(matches!(s.resume(a, 0, |_| Vec::new()), Resumed::Gone));
        // The running one stays, however old.
        assert!(matches!(
            s.resume(b, 0, |_| Vec::new()),
            Resumed::Events { .. }
        ));
        assert_eq!(s.bytes(), STREAM_OVERHEAD);
    }
}
