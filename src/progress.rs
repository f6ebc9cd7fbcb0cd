//! Progress of a tool that runs in its own binary, a line protocol between a long-lived host
//! (`crate::isolate`) and the tool binary: the host sets [`ENV`] to an interval in
//! milliseconds; the tool (sneaky-run, through [`Reporter`]) then prints
//! `\x1esneaky-progress:{"bytes":N}` lines on its stderr at that interval while the command
//! runs, N being the bytes of output so far. stderr carries nothing else in JSON mode but a
//! crash message, which the host keeps for its error.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// The environment variable that asks a tool binary for progress lines, in milliseconds.
pub const ENV: &str = "SNEAKY_PROGRESS_MS";
/// Start of a progress line on the tool's stderr.
pub const PREFIX: &str = "\x1esneaky-progress:";
/// Bounds of the progress interval a tool accepts.
const MIN: Duration = Duration::from_millis(20);
const MAX: Duration = Duration::from_secs(60);

/// The bytes a progress line reports (the line without its ending); None for any other line.
pub fn parse_line(line: &str) -> Option<u64> {
    serde_json::from_str::<serde_json::Value>(line.strip_prefix(PREFIX)?)
        .ok()?
        .get("bytes")?
        .as_u64()
}

/// The tool-binary side of the progress protocol: while alive, prints a progress line on
/// stderr every interval with what `output_bytes` says. Started only when the host asked for
/// it through [`ENV`]; dropping it stops the printing.
pub struct Reporter {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reporter {
    pub fn from_env(output_bytes: impl Fn() -> u64 + Send + 'static) -> Option<Reporter> {
        let every = std::env::var(ENV).ok()?.trim().parse::<u64>().ok()?;
        let every = Duration::from_millis(every).clamp(MIN, MAX);
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    let line = format!("{PREFIX}{{\"bytes\":{}}}\n", output_bytes());
                    let mut err = std::io::stderr().lock();
                    if err.write_all(line.as_bytes()).is_err() {
                        return;
                    }
                    let _ = err.flush();
                }
            })
            .ok()?;
        Some(Reporter {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines() {
        assert_eq!(parse_line("\x1esneaky-progress:{\"bytes\":123}"), Some(123));
        assert_eq!(parse_line("\x1esneaky-progress:nope"), None);
        assert_eq!(parse_line("{\"bytes\":123}"), None);
    }
}
