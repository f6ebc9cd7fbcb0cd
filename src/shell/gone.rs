//! The launcher's exit, and what must follow it, apart from the call's result: a call's
//! launcher says how the command ended before it leaves, and its exit (the namespaces'
//! teardown) runs while the call goes on (src/shell/supervise.rs). What needs the launcher
//! gone waits here for it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The launcher's exit, and what must follow it. The launcher says how the command ended on
/// its last line, once every process of the command is gone, and closes its output
/// (src/shell/sandbox.rs, `relay_end`); only then does it leave, and its exit tears the
/// namespaces down (the mount namespace's end waits for an RCU grace period: a few tenths of
/// a millisecond on a quiet machine, milliseconds under load). The call's result does not wait
/// for that; what needs the launcher gone (the pids cgroup's removal, the overlay's upper
/// layer kept as the next call's spare) is queued here and runs once it has been reaped, and
/// `sneaky-run` waits for it before it exits ([`settle`]).
#[derive(Clone, Default)]
pub struct Gone(Arc<GoneState>);

#[derive(Default)]
struct GoneState {
    inner: Mutex<GoneInner>,
    changed: Condvar,
}

#[derive(Default)]
struct GoneInner {
    done: bool,
    after: Vec<Box<dyn FnOnce() + Send>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Gone {
    /// Run `f` once the launcher has been reaped: now, if it has been.
    pub fn then(&self, f: impl FnOnce() + Send + 'static) {
        let mut inner = locked(&self.0.inner);
        if inner.done {
            drop(inner);
            f();
        } else {
            inner.after.push(Box::new(f));
        }
    }

    /// Whether the launcher has been reaped and what was queued has run.
    pub fn is_done(&self) -> bool {
        locked(&self.0.inner).done
    }

    /// [`Gone::is_done`], waiting for it at most `limit`.
    pub fn wait(&self, limit: Duration) -> bool {
        let inner = locked(&self.0.inner);
        match self.0.changed.wait_timeout_while(inner, limit, |i| !i.done) {
            Ok((inner, _)) => inner.done,
            Err(p) => p.into_inner().0.done,
        }
    }

    /// The launcher has been reaped: run what waits for it (also what is queued meanwhile).
    pub(super) fn set(&self) {
        loop {
            let mut inner = locked(&self.0.inner);
            if inner.after.is_empty() {
                inner.done = true;
                self.0.changed.notify_all();
                return;
            }
            let after = std::mem::take(&mut inner.after);
            drop(inner);
            for f in after {
                f();
            }
        }
    }
}

/// Launchers whose calls have returned before they were reaped.
static PENDING: Mutex<Vec<Gone>> = Mutex::new(Vec::new());

/// Keep `gone` for [`settle`] if its launcher has not been reaped yet (forgetting those that
/// have, so that a long-lived host keeps no more than the calls in flight).
pub(super) fn remember(gone: &Gone) {
    if gone.is_done() {
        return;
    }
    let mut pending = locked(&PENDING);
    pending.retain(|g| !g.is_done());
    pending.push(gone.clone());
}

/// Wait at most `limit` for every launcher a returned call left (and what follows its end):
/// for a program that exits after its call (`sneaky-run`), so that nothing of the call is left
/// to the next one.
pub fn settle(limit: Duration) {
    let deadline = Instant::now() + limit;
    let pending = std::mem::take(&mut *locked(&PENDING));
    for gone in pending {
        gone.wait(deadline.saturating_duration_since(Instant::now()));
    }
}
