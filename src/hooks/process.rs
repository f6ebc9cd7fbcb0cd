//! Running one hook program: the user's own, so outside the command sandbox, in a process group
//! of its own (a timeout kills everything it started), with the event's JSON on its stdin and
//! its stdout and stderr read up to a bound each (what comes past the bound is read and dropped,
//! so the program never blocks on a full pipe).
//!
//! A command made only of words (a path and plain arguments) is started directly; anything else
//! (quotes, `$VAR`, pipes, `~`) goes through `/bin/sh -c`, as Claude Code runs its hooks, so
//! that a line copied from its settings runs the same here.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Most bytes of a hook's stdout kept (`updatedInput` may carry a whole file's content).
pub const STDOUT_MAX: usize = 4 << 20;
/// Most bytes of a hook's stderr kept (a reason, a message).
pub const STDERR_MAX: usize = 64 << 10;

/// What a hook printed and how it ended.
#[derive(Debug)]
pub struct Ran {
    /// The exit code, or None when a signal ended it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// stdout was longer than [`STDOUT_MAX`] and was cut.
    pub stdout_cut: bool,
}

/// Why a hook gave no answer.
#[derive(Debug)]
pub enum Failed {
    /// It could not be started (no such program, not executable).
    Start(std::io::Error),
    /// It ran past its timeout and was killed with everything it started.
    TimedOut(Duration),
}

/// The variables a hook gets besides the host's environment.
pub struct Env<'a> {
    pub root: &'a Path,
    pub event: &'a str,
}

/// Run `command` with `stdin` in `env.root`, for at most `timeout`.
// Long: a hook process from spawn to its end: its stdin written from a thread, its output read
// until the deadline, its process group killed at the timeout; all share the child, its pid and
// the one deadline.
pub fn run(command: &str, stdin: Vec<u8>, env: &Env<'_>, timeout: Duration) -> Result<Ran, Failed> {
    let mut cmd = match plain_words(command) {
        Some(words) => {
            let mut cmd = Command::new(words[0]);
            cmd.args(&words[1..]);
            cmd
        }
        None => {
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c").arg(command);
            cmd
        }
    };
    cmd.current_dir(env.root)
        .env("SNEAKY_PROJECT_DIR", env.root)
        .env("CLAUDE_PROJECT_DIR", env.root)
        .env("SNEAKY_HOOK_EVENT", env.event)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(Failed::Start)?;
    let pid = child.id();
    // Written from a thread of its own: a hook that does not read its stdin must not hold us.
    if let Some(mut pipe) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = pipe.write_all(&stdin);
        });
    }
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>, bool)>();
    for (is_stdout, pipe, max) in [
        (
            true,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            STDOUT_MAX,
        ),
        (
            false,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            STDERR_MAX,
        ),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let (text, cut) = match pipe {
                Some(pipe) => read_bounded(pipe, max),
                None => (Vec::new(), false),
            };
            let _ = tx.send((is_stdout, text, cut));
        });
    }
    drop(tx);
    let deadline = started + timeout;
    let (mut stdout, mut stderr, mut stdout_cut) = (Vec::new(), Vec::new(), false);
    for _ in 0..2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((true, text, cut)) => {
                stdout = text;
                stdout_cut = cut;
            }
            Ok((false, text, _)) => stderr = text,
            Err(_) => {
                kill_group(pid);
                let _ = child.wait();
                return Err(Failed::TimedOut(timeout));
            }
        }
    }
    // Both pipes are closed: the hook has ended, or closed them and goes on (then it gets
    // until its timeout).
    let status = match wait_until(&mut child, deadline) {
        Some(status) => status,
        None => {
            kill_group(pid);
            let _ = child.wait();
            return Err(Failed::TimedOut(timeout));
        }
    };
    Ok(Ran {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdout_cut,
    })
}

/// The command's words when it has nothing a shell would interpret.
fn plain_words(command: &str) -> Option<Vec<&str>> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=,:@%".contains(c);
    let words: Vec<&str> = command.split_ascii_whitespace().collect();
    let all_plain = words.iter().all(|w| w.chars().all(plain));
    // `NAME=value program` is an assignment for the shell, not a program named so.
    let assigns = words.first().is_some_and(|w| w.contains('='));
    (all_plain && !assigns && !words.is_empty()).then_some(words)
}

fn read_bounded(mut pipe: impl Read, max: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 << 10];
    let mut cut = false;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = max.saturating_sub(kept.len());
                if n > room {
                    cut = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, cut)
}

/// Reap the child, waiting at most until `deadline`; None when it still runs then.
fn wait_until(child: &mut std::process::Child, deadline: Instant) -> Option<ExitStatus> {
    let mut pause = Duration::from_micros(20);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_commands_are_not_given_to_a_shell() {
        assert_eq!(
            plain_words("/usr/bin/check --mode=strict"),
            Some(vec!["/usr/bin/check", "--mode=strict"])
        );
        assert_eq!(plain_words("\"$CLAUDE_PROJECT_DIR\"/hook.sh"), None);
        assert_eq!(plain_words("jq . | tee log"), None);
        assert_eq!(plain_words("~/bin/hook"), None);
        assert_eq!(plain_words("LOG=/tmp/x /bin/hook"), None);
        assert_eq!(plain_words("  "), None);
    }

    #[test]
    fn output_past_the_bound_is_cut_and_drained() {
        let data = [b'x'; 100];
        let (kept, cut) = read_bounded(&data[..], 10);
        assert_eq!(kept.len(), 10);
        assert!(cut);
        let (kept, cut) = read_bounded(&data[..], 100);
        assert_eq!(kept.len(), 100);
        assert!(!cut);
    }

    #[test]
    fn a_slow_hook_is_killed_at_its_timeout() {
        let root = std::env::temp_dir();
        let env = Env {
            root: &root,
            event: "PreToolUse",
        };
        let started = Instant::now();
        let ran = run("sleep 5", Vec::new(), &env, Duration::from_millis(200));
        assert!(matches!(ran, Err(Failed::TimedOut(_))), "{ran:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn stdin_reaches_the_hook_and_its_output_comes_back() {
        let root = std::env::temp_dir();
        let env = Env {
            root: &root,
            event: "PreToolUse",
        };
        let ran = run(
            "cat; echo oops >&2; exit 7",
            b"{\"a\":1}".to_vec(),
            &env,
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(ran.code, Some(7));
        assert_eq!(ran.stdout, "{\"a\":1}");
        assert_eq!(ran.stderr, "oops\n");
    }
}
