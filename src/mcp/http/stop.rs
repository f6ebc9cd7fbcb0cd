//! The HTTP server's graceful stop on SIGTERM or SIGINT, within [`STOP_BOUND`]: no new
//! connections or calls, a grace period for running calls, then their cancellation, the
//! sessions' background jobs ended, and the connections' last answers written.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::unbounded_channel;

use super::sessions::Session;
use super::{first_of, lock, Shared};
use crate::mcp::calls;
use crate::mcp::log::log;

/// After SIGTERM or SIGINT, running calls have this long to end before they are cancelled.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Cancelled calls' process trees are gone within this (isolate's TERM_GRACE and the kill).
pub(super) const STOP_CANCEL: Duration = Duration::from_millis(2500);

/// The supervisor is asked to end the sessions' background jobs within this.
pub(super) const STOP_JOBS: Duration = Duration::from_secs(1);

/// Connections write the answers of the calls that ended within this.
pub(super) const STOP_FLUSH: Duration = Duration::from_millis(500);

/// The server has exited this long after SIGTERM or SIGINT at the latest, whatever hangs.
pub const STOP_BOUND: Duration = Duration::from_secs(10);

/// On SIGTERM or SIGINT, stop gracefully and exit with status 0 within [`STOP_BOUND`]: close
/// the listener (new connections are refused) and refuse new calls; give running calls
/// [`STOP_GRACE`] to end (a second signal cuts it short), then cancel the rest (their process
/// trees go, and they are answered that the server stopped); ask the job supervisor to end the
/// background jobs of every session; let the connections write what they still hold.
// Long: the server's stop in the order its comment gives (stop taking, grace, cancel, end jobs,
// flush), with the signal listeners that can cut the grace short.
pub(super) async fn stop_on_signal(shared: Arc<Shared>) {
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
pub(super) fn running_calls(shared: &Shared) -> usize {
    lock(&shared.sessions)
        .values()
        .map(|s| s.in_flight.len())
        .sum()
}
