//! Cancellation of a tool call, as a long-lived host (sneaky-mcp) asks for it: one type for a
//! call run in this process (a read or a walk: list_dir, grep_files, find_files) and for one
//! run in its own binary (`crate::isolate`, which kills the tool's process tree when told).
//!
//! The host makes the call's flag current on the thread that runs the call ([`Cancel::run`]);
//! the walk takes the current flag when it starts (on that thread) and hands it to its own
//! threads, which stop taking work once it is set. The flag is per thread and put back when the
//! call returns, so calls running side by side on other threads never see each other's. Code
//! that waits on something else (an isolated call reading its tool's output) asks to be woken
//! instead ([`Cancel::on_cancel`]).
//!
//! Why not a field of `tools::Context`: sneaky-mcp opens the workspace once and every call of
//! the session shares that one Context (its directory handle and configuration), so a per-call
//! flag there would need a per-call Context. The tool binaries run one call per process and never
//! set a flag: [`Cancel::current`] is then a flag nobody sets.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A call's request to stop, shared between whoever cancels and the code that runs the call.
/// Cheap to clone; the default is a flag nobody can set.
#[derive(Clone, Default)]
pub struct Cancel(Option<Arc<Inner>>);

struct Inner {
    flag: AtomicBool,
    /// Called once on cancellation ([`Cancel::on_cancel`]).
    waiters: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("Cancel(never)"),
            Some(_) => write!(f, "Cancel(cancelled: {})", self.is_cancelled()),
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Cancel> = RefCell::new(Cancel::default());
}

impl Cancel {
    /// A flag that can be set.
    pub fn new() -> Cancel {
        Cancel(Some(Arc::new(Inner {
            flag: AtomicBool::new(false),
            waiters: Mutex::new(Vec::new()),
        })))
    }

    /// Set the flag and wake whoever asked to be woken; true when it was set already (then
    /// nobody is woken again).
    pub fn cancel(&self) -> bool {
        let Some(inner) = &self.0 else {
            return false;
        };
        if inner.flag.swap(true, Ordering::SeqCst) {
            return true;
        }
        let waiters = match inner.waiters.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        };
        for wake in waiters {
            wake();
        }
        false
    }

    pub fn is_cancelled(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|inner| inner.flag.load(Ordering::Relaxed))
    }

    /// Call `wake` once on cancellation (at once when already cancelled; never for a flag
    /// nobody can set).
    pub fn on_cancel(&self, wake: impl FnOnce() + Send + 'static) {
        let Some(inner) = &self.0 else {
            return;
        };
        {
            let mut waiters = match inner.waiters.lock() {
                Ok(w) => w,
                Err(p) => p.into_inner(),
            };
            if !self.is_cancelled() {
                waiters.push(Box::new(wake));
                return;
            }
        }
        wake();
    }

    /// The flag of the call running on this thread (one nobody sets outside [`Cancel::run`]).
    pub fn current() -> Cancel {
        CURRENT.with(|c| c.borrow().clone())
    }

    /// Run `f` with this flag current on this thread; the previous one is put back after,
    /// also when `f` panics.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Cancel>);
        impl Drop for Restore {
            fn drop(&mut self) {
                if let Some(previous) = self.0.take() {
                    CURRENT.with(|c| *c.borrow_mut() = previous);
                }
            }
        }
        let previous = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), self.clone()));
        let _restore = Restore(Some(previous));
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_current_only_inside_run_and_only_on_its_thread() {
        let flag = Cancel::new();
        assert!(!Cancel::current().is_cancelled());
        flag.run(|| {
            assert!(!Cancel::current().is_cancelled());
            flag.cancel();
            assert!(Cancel::current().is_cancelled());
            let elsewhere = std::thread::spawn(|| Cancel::current().is_cancelled()).join();
            assert!(matches!(elsewhere, Ok(false)));
        });
        assert!(!Cancel::current().is_cancelled());
        assert!(flag.cancel(), "already set");
        assert!(!Cancel::default().cancel(), "a default flag cannot be set");
        assert!(!Cancel::default().is_cancelled());
    }

    #[test]
    fn the_previous_flag_comes_back_after_a_panic() {
        let outer = Cancel::new();
        outer.cancel();
        outer.run(|| {
            let inner = Cancel::new();
            let panicked = std::panic::catch_unwind(|| inner.run(|| panic!("boom")));
            assert!(panicked.is_err());
            assert!(Cancel::current().is_cancelled(), "the outer flag is back");
        });
    }

    #[test]
    fn cancel_wakes_waiters_once_even_late() {
        let token = Cancel::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let early = tx.clone();
        token.on_cancel(move || {
            let _ = early.send("early");
        });
        assert!(!token.cancel());
        assert!(token.cancel(), "already set");
        token.on_cancel(move || {
            let _ = tx.send("late");
        });
        let got: Vec<_> = rx.try_iter().collect();
        assert_eq!(got, vec!["early", "late"]);
        assert!(token.is_cancelled());
    }

    #[test]
    fn a_flag_nobody_can_set_wakes_nobody() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        Cancel::default().on_cancel(move || {
            let _ = tx.send(());
        });
        assert!(!Cancel::default().cancel());
        assert!(rx.try_recv().is_err());
    }
}
