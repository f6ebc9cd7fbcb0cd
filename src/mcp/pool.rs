//! The bounded pool of worker threads that runs tool calls, so that calls run side by side and
//! the thread reading requests stays free for pings, lists and cancellations. Threads start on
//! demand up to the bound (`[mcp] workers`); jobs beyond it wait in order.
//!
//! Brief jobs (a read, an edit: one file's work) beyond one running per core neither wake nor
//! start another thread: a worker that ends its job takes the next one from the queue within
//! milliseconds, and more busy threads than cores would only switch between themselves. Any other
//! job (a walk, a command) gets a thread at once when one is free or can be started.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

pub struct Pool {
    shared: Arc<Shared>,
    max_workers: usize,
    /// Brief jobs running at once before the next one waits for one of them to end.
    cores: usize,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is queued or the pool closes.
    work: Condvar,
    /// Signalled when a job ends (for `wait_idle`).
    done: Condvar,
}

#[derive(Default)]
struct State {
    /// Each with whether it is brief.
    jobs: VecDeque<(Job, bool)>,
    /// Workers waiting for a job.
    idle: usize,
    /// Jobs running now.
    running: usize,
    /// Brief jobs queued and running (those running or about to: a burst of brief jobs wakes
    /// no more threads than there are cores).
    brief: usize,
    /// Threads in `wait_idle`: a job's end signals `done` only when there are any (a signal is
    /// a system call even with nobody waiting; calls of a few tens of µs feel it).
    idle_waiters: usize,
    closed: bool,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pool {
    pub fn new(max_workers: usize) -> Pool {
        Pool {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                done: Condvar::new(),
            }),
            max_workers: max_workers.max(1),
            cores: std::thread::available_parallelism().map_or(2, |n| n.get()),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// Queue a job; it runs as soon as a worker is free (a brief one: as soon as a worker is
    /// free and fewer brief jobs than cores run, or when a running one ends).
    pub fn submit(&self, brief: bool, job: impl FnOnce() + Send + 'static) {
        let mut state = lock(&self.shared.state);
        let wake = !brief || state.brief < self.cores;
        state.brief += usize::from(brief);
        state.jobs.push_back((Box::new(job), brief));
        let waiting_for_worker = wake && state.jobs.len() > state.idle;
        // Only a worker in `wait` needs the signal: the others look at the queue (under this
        // lock) before they wait, and so does a worker started below.
        let notify = wake && state.idle > 0;
        drop(state);
        if waiting_for_worker {
            self.maybe_add_worker();
        }
        if notify {
            self.shared.work.notify_one();
        }
    }

    fn maybe_add_worker(&self) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        if threads.len() >= self.max_workers {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let spawned = std::thread::Builder::new()
            .name(format!("mcp-worker-{}", threads.len() + 1))
            .spawn(move || worker(&shared));
        match spawned {
            Ok(handle) => threads.push(handle),
            // Out of threads: the jobs wait for the workers there are.
            Err(e) => super::log::log(format!("cannot start a worker thread: {e}")),
        }
    }

    /// No job queued or running.
    pub fn is_idle(&self) -> bool {
        let state = lock(&self.shared.state);
        state.jobs.is_empty() && state.running == 0
    }

    /// Wait until every queued and running job has ended.
    pub fn wait_idle(&self) {
        let mut state = lock(&self.shared.state);
        while !state.jobs.is_empty() || state.running > 0 {
            if self.threads.lock().map(|t| t.is_empty()).unwrap_or(true) && !state.jobs.is_empty() {
                return; // no worker could be started: nothing will run them
            }
            state.idle_waiters += 1;
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
            state.idle_waiters -= 1;
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        lock(&self.shared.state).closed = true;
        self.shared.work.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

fn worker(shared: &Shared) {
    let mut state = lock(&shared.state);
    loop {
        if let Some((job, brief)) = state.jobs.pop_front() {
            state.running += 1;
            drop(state);
            // A panicking job is a bug the job itself reports; the worker lives on.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            state = lock(&shared.state);
            state.running -= 1;
            state.brief -= usize::from(brief);
            if state.idle_waiters > 0 {
                shared.done.notify_all();
            }
            continue;
        }
        if state.closed {
            return;
        }
        state.idle += 1;
        state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
        state.idle -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn runs_everything_with_at_most_n_at_once() {
        let pool = Pool::new(3);
        let now = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let total = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            let (now, peak, total) = (now.clone(), peak.clone(), total.clone());
            pool.submit(false, move || {
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(n, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
                now.fetch_sub(1, Ordering::SeqCst);
                total.fetch_add(1, Ordering::SeqCst);
            });
        }
        pool.wait_idle();
        assert_eq!(total.load(Ordering::SeqCst), 20);
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert!(peak.load(Ordering::SeqCst) >= 2, "jobs ran side by side");
    }

    #[test]
    fn brief_jobs_beyond_the_cores_wait_for_running_ones_and_all_run() {
        let pool = Pool::new(8);
        let now = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let total = Arc::new(AtomicUsize::new(0));
        for _ in 0..40 {
            let (now, peak, total) = (now.clone(), peak.clone(), total.clone());
            pool.submit(true, move || {
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(n, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
                now.fetch_sub(1, Ordering::SeqCst);
                total.fetch_add(1, Ordering::SeqCst);
            });
        }
        // A long job still gets a thread of its own while brief ones run.
        let long_started = Arc::new(AtomicUsize::new(0));
        let l = long_started.clone();
        pool.submit(false, move || {
            l.fetch_add(1, Ordering::SeqCst);
        });
        pool.wait_idle();
        assert_eq!(total.load(Ordering::SeqCst), 40);
        assert_eq!(long_started.load(Ordering::SeqCst), 1);
        assert!(peak.load(Ordering::SeqCst) <= pool.cores.max(1) + 1);
    }

    #[test]
    fn a_panicking_job_does_not_take_the_worker() {
        let pool = Pool::new(1);
        pool.submit(false, || panic!("boom"));
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        pool.submit(false, move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        pool.wait_idle();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }
}
