//! Running one tool call: check it (known tool, not denied, arguments valid against the
//! schema), then run the tool's binary with the arguments as JSON on stdin and read back its
//! envelope. The binary is looked up beside our own executable first (an installed or built
//! set of binaries belongs together), then on PATH. Every failure becomes an error envelope,
//! because the model must be told, not the driver crash.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::config::Config;
use crate::policy::{self, Tier};
use crate::tools::{self, ToolSpec};

use super::cli::Place;
use super::defs;

/// `{"ok":false,"tool":…,"error":{"code":…,"message":…}}`, as the binaries write it.
pub fn error_envelope(tool: &str, code: &str, message: impl Into<String>) -> Value {
    json!({"ok": false, "tool": tool, "error": {"code": code, "message": message.into()}})
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
    pub config: Config,
    bin_dir: Option<PathBuf>,
    /// Built on the first check: the first jsonschema validator of a process costs a few ms.
    validators: OnceCell<HashMap<&'static str, jsonschema::Validator>>,
}

impl Runner {
    /// `root` is the absolute workspace root every binary is given, so that the driver and
    /// the tools agree on it whatever their current directories.
    pub fn new(root: PathBuf, place: &Place, config: Config) -> Runner {
        let bin_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf));
        Runner {
            root,
            config_path: place.config.clone(),
            config,
            bin_dir,
            validators: OnceCell::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn tier(&self, tool: &str) -> Tier {
        policy::tier(&self.config, tool)
    }

    /// Everything that can be said about a call before it runs. Err is the envelope to send
    /// back instead of running.
    pub fn check(&self, name: &str, args: &Value) -> Result<&'static ToolSpec, Value> {
        let Some(spec) = tools::spec(name) else {
            let offered: Vec<&str> = defs::offered(&self.config).iter().map(|s| s.name).collect();
            return Err(error_envelope(
                name,
                "unknown_tool",
                format!(
                    "there is no tool named {name:?}; the tools are: {}",
                    offered.join(", ")
                ),
            ));
        };
        if let Err(e) = policy::check_not_denied(&self.config, name) {
            return Err(error_envelope(name, e.code(), e.message));
        }
        if !args.is_object() {
            return Err(error_envelope(
                name,
                "invalid_args",
                "the arguments must be a JSON object",
            ));
        }
        let validators = self.validators.get_or_init(|| {
            tools::SPECS
                .iter()
                .filter_map(|spec| {
                    jsonschema::validator_for(&defs::schema(spec))
                        .ok()
                        .map(|v| (spec.name, v))
                })
                .collect()
        });
        if let Some(validator) = validators.get(spec.name) {
            let problems: Vec<String> = validator
                .iter_errors(args)
                .map(|e| {
                    let at = e.instance_path().to_string();
                    if at.is_empty() {
                        e.to_string()
                    } else {
                        format!("{}: {e}", at.trim_start_matches('/'))
                    }
                })
                .collect();
            if !problems.is_empty() {
                return Err(error_envelope(
                    name,
                    "invalid_args",
                    format!(
                        "the arguments do not match the schema of {name}: {}",
                        problems.join("; ")
                    ),
                ));
            }
        }
        Ok(spec)
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

    /// Run the tool's binary on checked arguments and return its envelope.
    pub fn execute(&self, spec: &ToolSpec, args: &Value) -> Value {
        let path = self.binary_path(spec.binary);
        let mut cmd = Command::new(&path);
        cmd.arg("--root").arg(&self.root);
        if let Some(config) = &self.config_path {
            cmd.arg("--config").arg(config);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                return error_envelope(
                    spec.name,
                    "internal_error",
                    format!(
                        "cannot run {}: {e} (looked beside sneaky-agent and on PATH; \
                         `cargo install --path .` installs every binary)",
                        spec.binary
                    ),
                )
            }
        };
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
        let output = match output {
            Ok(output) => output,
            Err(e) => {
                return error_envelope(
                    spec.name,
                    "internal_error",
                    format!("waiting for {}: {e}", spec.binary),
                )
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        match serde_json::from_str::<Value>(stdout.trim()) {
            Ok(envelope) if envelope.get("ok").and_then(Value::as_bool).is_some() => envelope,
            _ => {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let why = stderr.lines().next().unwrap_or("").trim();
                let status = match output.status.code() {
                    Some(code) => format!("exit status {code}"),
                    None => "killed by a signal".to_string(),
                };
                error_envelope(
                    spec.name,
                    "internal_error",
                    format!(
                        "{} ended ({status}) without a JSON result{}",
                        spec.binary,
                        if why.is_empty() {
                            String::new()
                        } else {
                            format!(": {why}")
                        }
                    ),
                )
            }
        }
    }
}
