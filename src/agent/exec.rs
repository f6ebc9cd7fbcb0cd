//! Running one tool call for the driver: check it (known tool, not denied, arguments valid),
//! then run it through the one dispatch every surface uses (`tools::dispatch`). Tools whose
//! hints ask for isolation (run_command) run in their own binary instead, looked up beside our
//! own executable first (an installed or built set of binaries belongs together), then on PATH.
//! Every failure becomes an error envelope, because the model must be told, not the driver
//! crash.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::catalog::ToolName;
use crate::config::Config;
use crate::definitions;
use crate::error::{Error, ErrorKind, Result};
use crate::permissions::{self, Tier};
use crate::protocol::Envelope;
use crate::tools::{self, Context, ToolSpec};

use super::cli::Place;

/// The envelope of an outcome, as the binaries write it.
pub fn envelope(tool: &str, outcome: &Result<Value>) -> Value {
    serde_json::to_value(Envelope::from_outcome(tool, outcome)).unwrap_or(Value::Null)
}

/// `{"ok":false,"tool":…,"error":{"code":…,"message":…}}` for an error.
pub fn error_envelope(tool: &str, kind: ErrorKind, message: impl Into<String>) -> Value {
    envelope(tool, &Err(Error::new(kind, message)))
}

pub fn is_ok(envelope: &Value) -> bool {
    envelope.get("ok").and_then(Value::as_bool) == Some(true)
}

/// `code: message` of a failed envelope, for display.
pub fn error_line(envelope: &Value) -> String {
    let code = envelope["error"]["code"].as_str().unwrap_or("error");
    let message = envelope["error"]["message"].as_str().unwrap_or("");
    format!("{code}: {message}")
}

pub struct Runner {
    root: PathBuf,
    config_path: Option<PathBuf>,
    ctx: Context,
    bin_dir: Option<PathBuf>,
}

impl Runner {
    /// `root` is the absolute workspace root, given to isolated tools' binaries so that the
    /// driver and they agree on it whatever their current directories.
    pub fn new(root: PathBuf, place: &Place, ctx: Context) -> Runner {
        let bin_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf));
        Runner {
            root,
            config_path: place.config.clone(),
            ctx,
            bin_dir,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        &self.ctx.config
    }

    pub fn tier(&self, tool: ToolName) -> Tier {
        permissions::tier(&self.ctx.config, tool)
    }

    /// Everything that can be said about a call before it runs.
    pub fn check(&self, name: &str, args: &Value) -> Result<&'static ToolSpec> {
        let Some(tool) = ToolName::from_name(name) else {
            let offered: Vec<&str> = definitions::offered(&self.ctx.config)
                .iter()
                .map(|s| s.name())
                .collect();
            return Err(Error::new(
                ErrorKind::UnknownTool,
                format!(
                    "there is no tool named {name:?}; the tools are: {}",
                    offered.join(", ")
                ),
            ));
        };
        permissions::check_not_denied(&self.ctx.config, tool)?;
        let spec = tools::spec(tool);
        (spec.check_args)(args)?;
        self.precheck(tool, args)?;
        Ok(spec)
    }

    /// What a tool would refuse before doing anything, checked before anyone is asked to
    /// approve the call (the tool checks it again when it runs).
    fn precheck(&self, tool: ToolName, args: &Value) -> Result<()> {
        match tool {
            // Asked of sneaky-run itself, which holds the shell grammar (the driver does not
            // link it): the same configuration and root, and nothing runs.
            ToolName::RunCommand => self
                .run_binary(
                    tools::spec(tool),
                    &[crate::shell::entry::CHECK_POLICY_FLAG],
                    args,
                )
                .map(drop),
            _ => Ok(()),
        }
    }

    /// Run a checked call and return its envelope.
    pub fn execute(&self, spec: &ToolSpec, args: &Value) -> Value {
        let outcome = if spec.hints.isolated {
            self.execute_binary(spec, args)
        } else {
            tools::call(spec, args.clone(), &self.ctx)
        };
        envelope(spec.name(), &outcome)
    }

    fn binary_path(&self, binary: &str) -> PathBuf {
        if let Some(dir) = &self.bin_dir {
            let beside = dir.join(binary);
            if beside.is_file() {
                return beside;
            }
        }
        PathBuf::from(binary)
    }

    /// Run the tool's binary on checked arguments and read back its outcome.
    fn execute_binary(&self, spec: &ToolSpec, args: &Value) -> Result<Value> {
        self.run_binary(spec, &[], args)
    }

    /// Run the tool's binary with `flags` first, the arguments as JSON on stdin.
    fn run_binary(&self, spec: &ToolSpec, flags: &[&str], args: &Value) -> Result<Value> {
        let path = self.binary_path(spec.binary());
        let mut cmd = Command::new(&path);
        cmd.args(flags).arg("--root").arg(&self.root);
        if let Some(config) = &self.config_path {
            cmd.arg("--config").arg(config);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!(
                    "cannot run {}: {e} (looked beside sneaky-agent and on PATH; \
                     `cargo install --path .` installs every binary)",
                    spec.binary()
                ),
            )
        })?;
        let input = args.to_string();
        // The tool reads all of stdin before it answers; a thread keeps a large request from
        // dead-locking against a full stdout pipe all the same.
        let writer = child.stdin.take().map(|mut stdin| {
            std::thread::spawn(move || {
                let _ = stdin.write_all(input.as_bytes());
            })
        });
        let output = child.wait_with_output();
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        let output = output.map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!("waiting for {}: {e}", spec.binary()),
            )
        })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if let Ok(envelope) = serde_json::from_str::<Value>(stdout.trim()) {
            if let Some(outcome) = outcome_of(&envelope) {
                return outcome;
            }
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.lines().next().unwrap_or("").trim();
        let status = match output.status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        };
        Err(Error::new(
            ErrorKind::Internal,
            format!(
                "{} ended ({status}) without a JSON result{}",
                spec.binary(),
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                }
            ),
        ))
    }
}

/// The outcome a binary's envelope states, or None when it is not an envelope.
fn outcome_of(envelope: &Value) -> Option<Result<Value>> {
    match envelope.get("ok").and_then(Value::as_bool)? {
        true => Some(Ok(envelope.get("result").cloned().unwrap_or(Value::Null))),
        false => {
            let code = envelope.pointer("/error/code").and_then(Value::as_str)?;
            let message = envelope
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("");
            let kind = ErrorKind::from_code(code).unwrap_or(ErrorKind::Internal);
            Some(Err(Error::new(kind, message)))
        }
    }
}
