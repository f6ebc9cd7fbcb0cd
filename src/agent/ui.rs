//! What the person sees: colours (only on a terminal, never with NO_COLOR), a spinner on
//! stderr while the model thinks (only when stderr is a terminal), and Ctrl-C.
//!
//! Ctrl-C: the `ctrlc` handler only raises a flag; the driver checks it between steps (before
//! each model request, each tool call, and every 100 ms while it waits for the model, whose
//! request runs on a worker thread), so a run stops between two steps with a clear message
//! and exit status 130, never with a half-written file. A second Ctrl-C, or one while the
//! approval prompt waits for a line, exits at once.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

pub const EXIT_INTERRUPTED: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static PROMPTING: AtomicBool = AtomicBool::new(false);

pub fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) || PROMPTING.load(Ordering::SeqCst) {
            eprintln!("\nsneaky-agent: interrupted");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    });
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks the time the approval prompt blocks on the terminal (Ctrl-C then exits at once).
pub struct Prompting;

impl Prompting {
    pub fn start() -> Prompting {
        PROMPTING.store(true, Ordering::SeqCst);
        Prompting
    }
}

impl Drop for Prompting {
    fn drop(&mut self) {
        PROMPTING.store(false, Ordering::SeqCst);
    }
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

#[derive(Debug, Clone, Copy)]
pub struct Paint {
    on: bool,
}

impl Paint {
    pub fn stderr() -> Paint {
        Paint {
            on: !no_color() && std::io::stderr().is_terminal(),
        }
    }

    /// No colours at all.
    #[cfg(test)]
    pub fn plain() -> Paint {
        Paint { on: false }
    }

    /// For text written to the terminal device itself.
    pub fn tty() -> Paint {
        Paint { on: !no_color() }
    }

    fn wrap(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.wrap("1", text)
    }
    pub fn dim(self, text: &str) -> String {
        self.wrap("2", text)
    }
    pub fn red(self, text: &str) -> String {
        self.wrap("31", text)
    }
    pub fn green(self, text: &str) -> String {
        self.wrap("32", text)
    }
    pub fn yellow(self, text: &str) -> String {
        self.wrap("33", text)
    }
    pub fn cyan(self, text: &str) -> String {
        self.wrap("36", text)
    }

    /// A unified diff with added lines green, removed red and hunk headers cyan.
    pub fn diff(self, diff: &str) -> String {
        diff.lines()
            .map(|line| {
                if line.starts_with("+++") || line.starts_with("---") {
                    self.bold(line)
                } else if line.starts_with('+') {
                    self.green(line)
                } else if line.starts_with('-') {
                    self.red(line)
                } else if line.starts_with("@@") {
                    self.cyan(line)
                } else {
                    line.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why waiting for the worker ended without its value.
pub enum Waited<T> {
    Done(T),
    Interrupted,
    /// The worker died (a bug); the value will never come.
    Lost,
}

/// Run `work` on a worker thread and wait for it, with a spinner on stderr when `spinner`,
/// giving up (and leaving the worker behind) on Ctrl-C.
pub fn wait_for<T: Send + 'static>(
    label: &str,
    spinner: bool,
    work: impl FnOnce() -> T + Send + 'static,
) -> Waited<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    let mut frame = 0;
    let started = std::time::Instant::now();
    let clear = |spinner: bool| {
        if spinner {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    };
    loop {
        if interrupted() {
            clear(spinner);
            return Waited::Interrupted;
        }
        if spinner {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[K{} {label} {}s",
                FRAMES[frame % FRAMES.len()],
                started.elapsed().as_secs()
            );
            let _ = err.flush();
            frame += 1;
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(value) => {
                clear(spinner);
                return Waited::Done(value);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                clear(spinner);
                return Waited::Lost;
            }
        }
    }
}
