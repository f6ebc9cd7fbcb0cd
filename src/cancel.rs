//! Cancellation of a tool call that runs in this process (a read or a walk: list_dir,
//! grep_files, find_files), as a long-lived host (sneaky-mcp) asks for it.
//!
//! The host makes the call's flag current on the thread that runs the call ([`Cancel::run`]);
//! the walk takes the current flag when it starts (on that thread) and hands it to its own
//! threads, which stop taking work once it is set. The flag is per thread and put back when the
//! call returns, so calls running side by side on other threads never see each other's.
//!
//! Why not a field of `tools::Context`: sneaky-mcp opens the workspace once and every call of
//! the session shares that one Context (its directory handle and configuration), so a per-call
//! flag there would need a per-call Context. The tool binaries run one call per process and never
//! set a flag: [`Cancel::current`] is then a flag nobody sets.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A call's request to stop, shared between whoever cancels and the code that runs the call.
/// Cheap to clone; the default is a flag nobody can set.
#[derive(Clone, Default, Debug)]
pub struct Cancel(Option<Arc<AtomicBool>>);

thread_local! {
    static CURRENT: RefCell<Cancel> = RefCell::new(Cancel::default());
}

impl Cancel {
    /// A flag that can be set.
    pub fn new() -> Cancel {
        Cancel(Some(Arc::new(AtomicBool::new(false))))
    }

    /// Set the flag; true when it was set already.
    pub fn cancel(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|flag| flag.swap(true, Ordering::SeqCst))
    }

    pub fn is_cancelled(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
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
}
