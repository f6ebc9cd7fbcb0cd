//! Running one tool call for the driver: check it (known tool, not denied, arguments valid),
//! then run it through the one dispatch every surface uses (`tools::dispatch`). Tools whose
//! hints ask for isolation (run_command) run in their own binary instead, looked up beside our
//! own executable first (an installed or built set of binaries belongs together), then on PATH.
//! Every failure becomes an error envelope, because the model must be told, not the driver
//! crash.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::catalog::ToolName;
use crate::config::Config;
use crate::definitions;
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::{Control, Ended, Isolation};
use crate::permissions::{self, Tier};
use crate::protocol::Envelope;
use crate::shell::policy::Effect;
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
    /// Where isolated tools' binaries are, and the root and configuration they are given.
    isolation: Isolation,
    ctx: Context,
    /// This run's `session_id`, for the hooks.
    session_id: String,
    /// Calls without an id so far (their `tool_use_id` for the hooks).
    unnamed_calls: std::sync::atomic::AtomicU64,
}

impl Runner {
    /// `root` is the absolute workspace root, given to isolated tools' binaries so that the
    /// driver and they agree on it whatever their current directories.
    pub fn new(root: PathBuf, place: &Place, ctx: Context) -> Runner {
        Runner {
            isolation: Isolation::new(root, place.config.clone(), "sneaky-agent"),
            ctx,
            session_id: crate::hooks::Caller::this_process().session_id,
            unnamed_calls: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The user's hooks.
    pub fn hooks(&self) -> &crate::hooks::Hooks {
        &self.ctx.config.hooks
    }

    /// The id the hooks are told for a call: its own, or for a call without one (a `pipe`
    /// line) one of this run's.
    pub fn call_id(&self, given: &str) -> String {
        if !given.is_empty() {
            return given.to_string();
        }
        let n = self
            .unnamed_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{}-call-{}", self.session_id, n + 1)
    }

    /// This run as the hooks' caller, on the call `call_id` ([`Runner::call_id`]).
    pub fn caller(&self, call_id: &str) -> crate::hooks::Caller {
        crate::hooks::Caller {
            session_id: self.session_id.clone(),
            tool_use_id: call_id.to_string(),
        }
    }

    /// The PreToolUse hooks on a call of a known tool not denied (anything else is refused by
    /// [`Runner::check`] before the hooks would see it): the call as they left it, or None
    /// when no hook applies (the call stands as given). Err: they blocked it.
    pub fn before(
        &self,
        name: &str,
        args: &Value,
        call_id: &str,
    ) -> Result<Option<crate::hooks::Before>> {
        let hooks = &self.ctx.config.hooks;
        if hooks.pre_tool_use.is_empty() {
            return Ok(None);
        }
        let tool = ToolName::from_name(name)
            .filter(|t| permissions::check_not_denied(&self.ctx.config, *t).is_ok());
        let Some(tool) = tool else {
            return Ok(None);
        };
        let caller = self.caller(call_id);
        crate::hooks::Call {
            hooks,
            root: self.root(),
            tool,
            caller: &caller,
        }
        .before(args.clone())
        .map(Some)
    }

    /// The PostToolUse hooks on a successful envelope; what they (and the PreToolUse hooks:
    /// `context`) said goes in its `hook_context`.
    pub fn after(
        &self,
        spec: &ToolSpec,
        args: &Value,
        envelope: &mut Value,
        context: Vec<String>,
        call_id: &str,
    ) {
        let hooks = &self.ctx.config.hooks;
        if hooks.is_empty() || !is_ok(envelope) {
            return;
        }
        let caller = self.caller(call_id);
        let call = crate::hooks::Call {
            hooks,
            root: self.root(),
            tool: spec.name,
            caller: &caller,
        };
        let result = envelope.get("result").cloned().unwrap_or(Value::Null);
        if let Some(said) = call.after(args, &result, context) {
            envelope["hook_context"] = Value::String(said);
        }
    }

    pub fn root(&self) -> &Path {
        self.isolation.root()
    }

    pub fn config(&self) -> &Config {
        &self.ctx.config
    }

    pub fn tier(&self, tool: ToolName) -> Tier {
        permissions::tier(&self.ctx.config, tool)
    }

    /// Everything that can be said about a call before it runs.
    pub fn check(&self, name: &str, args: &Value) -> Result<&'static ToolSpec> {
        self.check_effect(name, args).map(|(spec, _)| spec)
    }

    /// [`Runner::check`], and for run_command the effect its policy classed the command with
    /// (`reads` or `writes`; None for other tools).
    pub fn check_effect(
        &self,
        name: &str,
        args: &Value,
    ) -> Result<(&'static ToolSpec, Option<Effect>)> {
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
        let effect = self
            .precheck(spec, args)?
            .and_then(|answer| serde_json::from_value(answer["effect"].clone()).ok());
        Ok((spec, effect))
    }

    /// What a tool would refuse before doing anything, checked before anyone is asked to
    /// approve the call (the tool checks it again when it runs), and what the check says.
    fn precheck(&self, spec: &ToolSpec, args: &Value) -> Result<Option<Value>> {
        // Asked of the tool's binary, which holds what the check needs (sneaky-run the shell
        // grammar, which the driver does not link): the same configuration and root, and
        // nothing runs.
        match spec.precheck_flag {
            Some(flag) => self.run_binary(spec, &[flag], args).map(Some),
            None => Ok(None),
        }
    }

    /// Run a checked call and return its envelope.
    pub fn execute(&self, spec: &ToolSpec, args: &Value) -> Value {
        let outcome = if spec.hints.isolated {
            self.run_binary(spec, &[], args)
        } else {
            tools::call(spec, args.clone(), &self.ctx)
        };
        envelope(spec.name(), &outcome)
    }

    /// Run a command's dry run keeping what it held (`sneaky-run --hold-changes`): the result's
    /// `held` names them, for [`Runner::keep_held`] or [`Runner::drop_held`].
    pub fn execute_holding(&self, spec: &ToolSpec, args: &Value) -> Value {
        envelope(
            spec.name(),
            &self.run_binary(spec, &[crate::shell::overlay::HOLD_FLAG], args),
        )
    }

    /// Apply the changes a held dry run of run_command kept: the envelope the model gets, the
    /// dry run's (its output, how it ended) with what was applied in place of what was held.
    pub fn keep_held(&self, id: &str, dry: Value) -> Value {
        let spec = tools::spec(ToolName::RunCommand);
        let flag = crate::shell::overlay::APPLY_HELD_FLAG;
        let applied = match self.run_binary(spec, &[flag], &serde_json::json!({ "held": id })) {
            Ok(applied) => applied,
            Err(e) => return envelope(spec.name(), &Err(e)),
        };
        let mut result = dry.get("result").cloned().unwrap_or(Value::Null);
        if let (Some(map), Some(applied)) = (result.as_object_mut(), applied.as_object()) {
            for key in ["diff", "diff_truncated", "held", "dry_run"] {
                map.remove(key);
            }
            map.extend(applied.clone());
        }
        envelope(spec.name(), &Ok(result))
    }

    /// Drop the changes a held dry run kept.
    pub fn drop_held(&self, id: &str) {
        let spec = tools::spec(ToolName::RunCommand);
        let flag = crate::shell::overlay::DROP_HELD_FLAG;
        let _ = self.run_binary(spec, &[flag], &serde_json::json!({ "held": id }));
    }

    /// Run the tool's binary (`flags` before its own) on checked arguments and read back its
    /// outcome, as the MCP server does, without cancellation or progress.
    fn run_binary(&self, spec: &ToolSpec, flags: &[&str], args: &Value) -> Result<Value> {
        let control = Control {
            flags,
            // Ran by the gate before the person was asked (a precheck or held changes run
            // no tool call, so none either).
            hooks_ran: true,
            ..Control::default()
        };
        match self.isolation.run(spec, args, control) {
            Ended::Finished(outcome) => outcome,
            // Nothing cancels a driver's call.
            Ended::Cancelled(_) => Err(Error::new(
                ErrorKind::Internal,
                format!("{} was cancelled", spec.binary()),
            )),
        }
    }
}
