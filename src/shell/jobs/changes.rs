//! A background job's changes to the workspace, held aside as a foreground command's are and
//! applied through the same step once the job has ended.
//!
//! A job runs over an overlay of the workspace like any command (src/shell/overlay/): what it
//! writes lands in an upper layer outside the workspace, and nothing reaches the workspace
//! while it runs. Applying a command's changes is a file tool's step (the jail, the protected
//! and deny lists, `.git`'s metadata discarded for every repository), so a job cannot write
//! what a command cannot, also where the place appeared after the job started (a repository
//! cloned into the workspace meanwhile: its hooks and config are discarded like any command's).
//!
//! The caller that starts the job makes the upper layer and hands it over (`job-<id>`); the
//! supervisor holds its lock while the job runs, and once the job's namespace (and with it
//! the overlay) is gone, keeps it as held changes and applies them with `sneaky-run
//! --apply-held`, run with the calling tool's environment so that the configuration and the
//! undo history are the ones the call that started the job used.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fs::history::Undoable;
use crate::shell::overlay::{self, Changed, Reduced};

/// What the supervisor is told of the overlay that holds a job's changes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeldForJob {
    /// The job's upper layer's directory (`job-<id>` in the undo history's scratch directory).
    #[serde(with = "crate::shell::raw_path::one")]
    pub dir: PathBuf,
    /// What of the calling tool's environment names its configuration and its undo history
    /// (see [`tool_env`]), for applying the changes as that call would have.
    pub tool_env: Vec<(OsString, OsString)>,
}

/// The variables of this process that decide where the configuration and the undo history
/// are, and which files the deny list holds (the MCP token file), and nothing else (a host's
/// API keys stay out of the supervisor).
pub fn tool_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            k.starts_with("SNEAKY_")
                || k.starts_with("XDG_")
                || matches!(k.as_ref(), "HOME" | "USER" | "LOGNAME" | "PATH" | "LANG")
        })
        .collect()
}

impl HeldForJob {
    /// The supervisor's hold on the upper layer for as long as the job runs and its changes
    /// are applied (taken before the job starts: the caller's own lock is still held then).
    pub fn lock(&self) -> Result<Flock<File>> {
        File::options()
            .write(true)
            .open(self.dir.join(overlay::JOB_LOCK))
            .map_err(|e| Error::io("taking the job's overlay", e))
            .and_then(|f| {
                Flock::lock(f, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
                    Error::io("locking the job's overlay", std::io::Error::from(e))
                })
            })
    }
}

/// What became of a job's changes: the fields of `sneaky-run --apply-held`'s result.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Outcome {
    #[serde(default)]
    pub changes: Vec<Changed>,
    #[serde(default)]
    pub untracked: Vec<Changed>,
    #[serde(default)]
    pub discarded: Vec<String>,
    #[serde(default)]
    pub reduced: Vec<Reduced>,
    #[serde(flatten)]
    pub undo: Undoable,
}

/// Apply a job's changes once it has ended. `overlay`: whether the launcher mounted the
/// overlay (Err: why not; the job then wrote the workspace directly, and there is nothing to
/// apply). Err: why the changes were not applied (and where they are kept, when they are).
pub fn apply(
    held: &HeldForJob,
    root: &Path,
    overlay: std::result::Result<(), String>,
) -> std::result::Result<Outcome, String> {
    if let Err(why) = overlay {
        overlay::job_dropped(&held.dir);
        return Err(format!(
            "the job's changes could not be held aside ({why}): it wrote the workspace directly, \
             and they cannot be undone"
        ));
    }
    wait_for_caller(&held.dir, CALLER_GRACE);
    let id = overlay::job_ended(&held.dir).map_err(|e| e.message())?;
    let exe = std::env::current_exe().map_err(|e| format!("finding sneaky-run: {e}"))?;
    let child = Command::new(exe)
        .arg(overlay::APPLY_HELD_FLAG)
        .arg("--root")
        .arg(root)
        .env_clear()
        .envs(held.tool_env.iter().map(|(k, v)| (k, v)))
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = child.map_err(|e| format!("applying the job's changes (held as {id}): {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(serde_json::json!({ "held": id }).to_string().as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("applying the job's changes (held as {id}): {e}"))?;
    read_envelope(&out.stdout).map_err(|why| format!("the job's changes were not applied: {why}"))
}

/// How long the changes of a job that ended at once wait for the call that started it to let
/// go of the upper layer.
const CALLER_GRACE: Duration = Duration::from_secs(5);

/// Until the call that started the job has let go of its lock on the upper layer (`lock` in
/// it, src/shell/overlay/scratch.rs), which it holds until the supervisor has answered the
/// start (`super::start`), or `grace` has passed: `--apply-held` takes that lock, and refuses
/// the changes while another process holds it.
fn wait_for_caller(dir: &Path, grace: Duration) {
    let deadline = Instant::now() + grace;
    loop {
        let free = File::open(dir.join("lock")).map_or(true, |f| {
            Flock::lock(f, FlockArg::LockExclusiveNonblock).is_ok()
        });
        if free || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The result, or the error's message, of `--apply-held`'s envelope.
fn read_envelope(stdout: &[u8]) -> std::result::Result<Outcome, String> {
    let envelope: serde_json::Value = serde_json::from_slice(stdout)
        .map_err(|e| format!("sneaky-run --apply-held answered no envelope ({e})"))?;
    if envelope["ok"] == serde_json::Value::Bool(true) {
        return serde_json::from_value(envelope["result"].clone())
            .map_err(|e| format!("sneaky-run --apply-held's result: {e}"));
    }
    Err(envelope["error"]["message"]
        .as_str()
        .unwrap_or("sneaky-run --apply-held failed")
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_is_read_into_the_outcome_or_its_error() {
        let ok = br#"{"ok":true,"tool":"run_command","result":{"changes":[{"path":"a.txt","kind":"created"}],"untracked":[],"discarded":["sub/.git/hooks/pre-commit"],"change_id":"c1"}}"#;
        let outcome = read_envelope(ok).expect("ok");
        assert_eq!(outcome.changes.len(), 1);
        assert_eq!(outcome.discarded, ["sub/.git/hooks/pre-commit"]);
        assert_eq!(outcome.undo.change_id.as_deref(), Some("c1"));
        let err = br#"{"ok":false,"tool":"run_command","error":{"code":"conflict","message":"while the job ran, someone else changed a.txt"}}"#;
        assert!(read_envelope(err)
            .unwrap_err()
            .contains("someone else changed a.txt"));
        assert!(read_envelope(b"not json").is_err());
    }
}
