//! Hooks: the user's own programs around every tool call (docs/contract.md, "Hooks"), in Claude
//! Code's protocol so that its users' scripts work: the event as JSON on stdin; exit 2 blocks
//! with stderr as the reason; exit 0 may print `{"hookSpecificOutput": {...}}` to decide
//! (`permissionDecision`), change the call (`updatedInput`) or tell the model something
//! (`additionalContext`).
//!
//! Unlike Claude Code a PreToolUse hook fails closed: one that cannot start, exits non-zero
//! (other than 2), prints what is not a JSON object or runs past its timeout blocks the call,
//! naming the hook, unless its entry says `fail_open = true`. A PostToolUse hook never hides
//! or undoes the result; its failure is said beside it (`hook_context`).
//!
//! Hooks run once per call, in the process that received it (a host runs an isolated tool's
//! binary with [`RAN_FLAG`], and that binary runs none), before any person approves it. Only
//! the user's configuration names them (`config::Config::load` drops a workspace's). With none
//! configured a call costs one test of an empty list.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::catalog::ToolName;
use crate::error::{Error, ErrorKind, Result};

pub mod claude;
mod process;

pub use process::{STDERR_MAX, STDOUT_MAX};

/// Given first to a tool binary by a host that ran the call's hooks already (sneaky-mcp and
/// sneaky-agent, for run_command): the binary runs none, so that each call meets them once.
pub const RAN_FLAG: &str = "--hooks-ran";

/// A hook's timeout when its entry gives none, in seconds (Claude Code's).
pub const DEFAULT_TIMEOUT: u64 = 60;
/// The most a hook's stdin holds, in bytes: a PostToolUse result past it is shortened (its
/// longest strings cut, `tool_response_cut: true`); a call whose own arguments are past it
/// is not shown to a PreToolUse hook but blocked (or let through by `fail_open`).
pub const STDIN_MAX: usize = 8 << 20;
/// How many times in a session a Stop hook may send sneaky-agent back to work.
pub const STOP_BLOCKS_MAX: u32 = 3;

/// `[hooks]` of the user's configuration.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Hooks {
    #[serde(rename = "PreToolUse")]
    pub pre_tool_use: Vec<Hook>,
    #[serde(rename = "PostToolUse")]
    pub post_tool_use: Vec<Hook>,
    /// sneaky-agent only: when the model calls finish.
    #[serde(rename = "Stop")]
    pub stop: Vec<Hook>,
    /// The workspace `sneaky.toml` whose `[hooks]` were dropped (not read from TOML; for the
    /// hosts' note).
    #[serde(skip)]
    pub ignored_in_workspace: Option<std::path::PathBuf>,
}

/// One `[[hooks.<Event>]]` entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Hook {
    /// Tool names separated by `|`, or a regex matching the whole name; "" or "*": every tool.
    pub matcher: String,
    /// The program, with its arguments; through `/bin/sh -c` when it needs a shell.
    pub command: String,
    /// Seconds before the hook is killed (and, for PreToolUse, the call blocked).
    pub timeout: u64,
    /// A failing PreToolUse hook lets the call through (Claude Code's behaviour).
    pub fail_open: bool,
    /// The tool names and input fields the hook sees.
    pub names: Names,
}

impl Default for Hook {
    fn default() -> Self {
        Hook {
            matcher: String::new(),
            command: String::new(),
            timeout: DEFAULT_TIMEOUT,
            fail_open: false,
            names: Names::Sneaky,
        }
    }
}

/// `names`: ours, or Claude Code's (`claude`).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Names {
    #[default]
    Sneaky,
    Claude,
}

impl Names {
    pub const ALL: [(&'static str, Names); 2] =
        [("sneaky", Names::Sneaky), ("claude", Names::Claude)];
}

impl Hooks {
    pub fn is_empty(&self) -> bool {
        self.pre_tool_use.is_empty() && self.post_tool_use.is_empty() && self.stop.is_empty()
    }

    /// The configuration's mistakes, said before any call: an empty command, a timeout of 0
    /// or over `max_timeout` (the configuration's bound, which it hands down: hooks sit
    /// beneath it), a matcher that is not a regex.
    pub fn validate(&self, max_timeout: u64) -> std::result::Result<(), String> {
        for (event, list) in self.events() {
            for (i, hook) in list.iter().enumerate() {
                let at = format!("hooks.{event}[{i}]");
                if hook.command.trim().is_empty() {
                    return Err(format!("{at}: command is empty"));
                }
                if hook.timeout == 0 || hook.timeout > max_timeout {
                    return Err(format!(
                        "{at}: timeout must be between 1 and {max_timeout} seconds"
                    ));
                }
                if let Matcher::Regex(Err(e)) = Matcher::of(&hook.matcher) {
                    return Err(format!(
                        "{at}: matcher {:?} is not a regex: {e}",
                        hook.matcher
                    ));
                }
            }
        }
        Ok(())
    }

    fn events(&self) -> [(&'static str, &Vec<Hook>); 3] {
        [
            ("PreToolUse", &self.pre_tool_use),
            ("PostToolUse", &self.post_tool_use),
            ("Stop", &self.stop),
        ]
    }

    /// Whether a PostToolUse hook matches this tool (a binary then keeps the result as a value
    /// for it rather than writing it straight out).
    pub fn post_matches(&self, tool: ToolName) -> bool {
        self.post_tool_use.iter().any(|h| h.matches(tool))
    }
}

enum Matcher<'a> {
    All,
    Names(std::str::Split<'a, char>),
    Regex(std::result::Result<regex_lite::Regex, regex_lite::Error>),
}

impl<'a> Matcher<'a> {
    fn of(text: &'a str) -> Matcher<'a> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            Matcher::All
        } else if text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            Matcher::Names(text.split('|'))
        } else {
            Matcher::Regex(regex_lite::Regex::new(&format!("^(?:{text})$")))
        }
    }
}

impl Hook {
    fn matches(&self, tool: ToolName) -> bool {
        let name = self.tool_name(tool);
        match Matcher::of(&self.matcher) {
            Matcher::All => true,
            Matcher::Names(mut names) => names.any(|n| n == name),
            Matcher::Regex(Ok(re)) => re.is_match(name),
            Matcher::Regex(Err(_)) => false,
        }
    }

    fn tool_name(&self, tool: ToolName) -> &'static str {
        match self.names {
            Names::Sneaky => tool.as_str(),
            Names::Claude => claude::tool_name(tool),
        }
    }

    /// How the hook is named in messages.
    fn shown(&self) -> String {
        let mut shown: String = self.command.chars().take(120).collect();
        if shown.len() < self.command.len() {
            shown.push('…');
        }
        format!("`{shown}`")
    }
}

/// Who is calling, for the hooks' stdin (`session_id`, `tool_use_id`).
#[derive(Debug, Clone)]
pub struct Caller {
    pub session_id: String,
    pub tool_use_id: String,
}

impl Caller {
    /// A one-call process (a tool binary): its own session.
    pub fn this_process() -> Caller {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = format!("sneaky-{}-{nanos:x}", std::process::id());
        Caller {
            tool_use_id: format!("{id}-1"),
            session_id: id,
        }
    }
}

/// What the PreToolUse hooks decided, when they let the call go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No hook decided: the call is approved as usual.
    Undecided,
    /// `allow`: no person is asked.
    Allow,
    /// `ask`: a person must approve it, even an auto-tier call; the hooks' reason.
    Ask(String),
}

/// The call as the PreToolUse hooks left it.
#[derive(Debug, Clone)]
pub struct Before {
    pub args: Value,
    pub verdict: Verdict,
    /// `additionalContext` of the hooks, for the caller beside the result.
    pub context: Vec<String>,
}

impl Before {
    /// The call unchanged (no hook ran).
    pub fn unhooked(args: Value) -> Before {
        Before {
            args,
            verdict: Verdict::Undecided,
            context: Vec::new(),
        }
    }

    /// For a surface where nobody is asked (sneaky-mcp, the binaries): `ask` blocks.
    pub fn unattended(self, tool: ToolName, surface: &str) -> Result<Before> {
        match &self.verdict {
            Verdict::Ask(reason) => Err(Error::new(
                ErrorKind::HookDenied,
                format!(
                    "a PreToolUse hook asks a person to approve this {} call ({reason}), and \
                     {surface} has nobody to ask: the call was not run",
                    tool.as_str()
                ),
            )),
            _ => Ok(self),
        }
    }
}

/// The workspace and the call, for running hooks.
pub struct Call<'a> {
    pub hooks: &'a Hooks,
    pub root: &'a Path,
    pub tool: ToolName,
    pub caller: &'a Caller,
}

impl Call<'_> {
    /// Run the PreToolUse hooks that match, in order, each seeing the call as the ones before
    /// it left it. Err (`hook_denied`): the call is blocked.
    pub fn before(&self, args: Value) -> Result<Before> {
        let mut before = Before::unhooked(args);
        if self.hooks.pre_tool_use.is_empty() {
            return Ok(before);
        }
        for hook in self
            .hooks
            .pre_tool_use
            .iter()
            .filter(|h| h.matches(self.tool))
        {
            let stdin = self.stdin(hook, "PreToolUse", &before.args, None);
            if stdin.len() > STDIN_MAX {
                self.pre_failed(
                    hook,
                    format!(
                        "the call's input ({} bytes) is past the hooks' stdin bound ({STDIN_MAX})",
                        stdin.len()
                    ),
                )?;
                continue;
            }
            let env = process::Env {
                root: self.root,
                event: "PreToolUse",
            };
            let ran = match process::run(&hook.command, stdin, &env, timeout(hook)) {
                Ok(ran) => ran,
                Err(failed) => {
                    self.pre_failed(hook, describe_failure(&failed))?;
                    continue;
                }
            };
            match ran.code {
                Some(0) => {}
                Some(2) => {
                    let reason = first_lines(&ran.stderr);
                    return Err(self.denied(hook, &reason));
                }
                code => {
                    self.pre_failed(hook, exited(code, &ran.stderr))?;
                    continue;
                }
            }
            let output = match parse_output(&ran) {
                Ok(output) => output,
                Err(why) => {
                    self.pre_failed(hook, why)?;
                    continue;
                }
            };
            let Some(output) = output else { continue };
            match self.apply(hook, &output, &mut before) {
                Ok(()) => {}
                Err(Applied::Denied(reason)) => return Err(self.denied(hook, &reason)),
                Err(Applied::Malformed(why)) => self.pre_failed(hook, why)?,
            }
        }
        Ok(before)
    }

    /// Read one PreToolUse hook's JSON answer into the call.
    // Long: one PreToolUse answer read field by field as Claude Code defines it (continue,
    // decision and its older form, reason, updated input), each field able to end the call.
    fn apply(
        &self,
        hook: &Hook,
        output: &Map<String, Value>,
        before: &mut Before,
    ) -> std::result::Result<(), Applied> {
        let specific = match output.get("hookSpecificOutput") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                return Err(Applied::Malformed(
                    "hookSpecificOutput is not an object".into(),
                ))
            }
        };
        let text =
            |map: &Map<String, Value>, key: &str| -> std::result::Result<Option<String>, Applied> {
                match map.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(Applied::Malformed(format!("{key} is not a string"))),
                }
            };
        if output.get("continue") == Some(&Value::Bool(false)) {
            let why = text(output, "stopReason")?.unwrap_or_else(|| "\"continue\": false".into());
            return Err(Applied::Denied(why));
        }
        let reason = text(&specific, "permissionDecisionReason")?
            .or(text(output, "reason")?)
            .unwrap_or_default();
        // `decision: approve|block` is the older form Claude Code still reads.
        let decision = match text(&specific, "permissionDecision")? {
            Some(d) => Some(d),
            None => match text(output, "decision")?.as_deref() {
                Some("approve") => Some("allow".to_string()),
                Some("block") => Some("deny".to_string()),
                Some(other) => {
                    return Err(Applied::Malformed(format!(
                        "decision {other:?} is neither \"approve\" nor \"block\""
                    )))
                }
                None => None,
            },
        };
        match decision.as_deref() {
            None => {}
            Some("deny") => {
                let reason = if reason.is_empty() {
                    "denied".to_string()
                } else {
                    reason
                };
                return Err(Applied::Denied(reason));
            }
            Some("ask") => {
                let reason = if reason.is_empty() {
                    format!("{} asks", hook.shown())
                } else {
                    reason.clone()
                };
                before.verdict = Verdict::Ask(reason);
            }
            // `ask` from an earlier hook stands.
            Some("allow") if before.verdict == Verdict::Undecided => {
                before.verdict = Verdict::Allow
            }
            Some("allow") => {}
            Some(other) => {
                return Err(Applied::Malformed(format!(
                    "permissionDecision {other:?} is not \"allow\", \"deny\" or \"ask\""
                )))
            }
        }
        match specific.get("updatedInput") {
            None | Some(Value::Null) => {}
            Some(Value::Object(updated)) => {
                before.args = match hook.names {
                    Names::Sneaky => Value::Object(updated.clone()),
                    Names::Claude => claude::read_back(self.tool, &before.args, updated, self.root),
                };
            }
            Some(_) => return Err(Applied::Malformed("updatedInput is not an object".into())),
        }
        if let Some(context) = text(&specific, "additionalContext")?.filter(|c| !c.is_empty()) {
            before.context.push(context);
        }
        Ok(())
    }

    /// A PreToolUse hook gave no answer: the call is blocked, unless the entry fails open.
    fn pre_failed(&self, hook: &Hook, why: String) -> Result<()> {
        if hook.fail_open {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::HookDenied,
            format!(
                "the PreToolUse hook {} failed ({why}), so the {} call was blocked (hooks fail \
                 closed; `fail_open = true` on its entry lets calls through when it fails)",
                hook.shown(),
                self.tool.as_str()
            ),
        ))
    }

    fn denied(&self, hook: &Hook, reason: &str) -> Error {
        let reason = if reason.trim().is_empty() {
            "no reason given".to_string()
        } else {
            reason.trim().to_string()
        };
        Error::new(
            ErrorKind::HookDenied,
            format!(
                "the PreToolUse hook {} blocked this {} call: {reason}",
                hook.shown(),
                self.tool.as_str()
            ),
        )
    }

    /// Run the PostToolUse hooks that match on a result; what they say for the caller (their
    /// `additionalContext`, a `block` reason, or their failure), joined with `before`'s
    /// context. The result itself is never changed.
    pub fn after(&self, args: &Value, result: &Value, before: Vec<String>) -> Option<String> {
        let mut said = before;
        for hook in self
            .hooks
            .post_tool_use
            .iter()
            .filter(|h| h.matches(self.tool))
        {
            let stdin = self.stdin(hook, "PostToolUse", args, Some(result));
            let env = process::Env {
                root: self.root,
                event: "PostToolUse",
            };
            let failed = |why: String| {
                format!(
                    "the PostToolUse hook {} failed ({why}); the result above is the tool's, as \
                     it was",
                    hook.shown()
                )
            };
            let ran = match process::run(&hook.command, stdin, &env, timeout(hook)) {
                Ok(ran) => ran,
                Err(f) => {
                    said.push(failed(describe_failure(&f)));
                    continue;
                }
            };
            match ran.code {
                Some(0) => {}
                // Claude Code shows a PostToolUse hook's exit-2 stderr to the model.
                Some(2) => {
                    said.push(first_lines(&ran.stderr));
                    continue;
                }
                code => {
                    said.push(failed(exited(code, &ran.stderr)));
                    continue;
                }
            }
            let output = match parse_output(&ran) {
                Ok(Some(output)) => output,
                Ok(None) => continue,
                Err(why) => {
                    said.push(failed(why));
                    continue;
                }
            };
            if output.get("decision").and_then(Value::as_str) == Some("block") {
                if let Some(reason) = output.get("reason").and_then(Value::as_str) {
                    said.push(reason.to_string());
                }
            }
            let context = output
                .get("hookSpecificOutput")
                .and_then(|s| s.get("additionalContext"))
                .and_then(Value::as_str);
            if let Some(context) = context.filter(|c| !c.is_empty()) {
                said.push(context.to_string());
            }
        }
        let said: Vec<String> = said.into_iter().filter(|s| !s.trim().is_empty()).collect();
        (!said.is_empty()).then(|| said.join("\n"))
    }

    /// The JSON a hook reads (Claude Code's fields), bounded as [`STDIN_MAX`] says.
    fn stdin(&self, hook: &Hook, event: &str, args: &Value, result: Option<&Value>) -> Vec<u8> {
        let input = match hook.names {
            Names::Sneaky => args.clone(),
            Names::Claude => claude::input(self.tool, args, self.root),
        };
        let mut doc = json!({
            "session_id": self.caller.session_id,
            "cwd": self.root.to_string_lossy(),
            "hook_event_name": event,
            "tool_name": hook.tool_name(self.tool),
            "tool_input": input,
            "tool_use_id": self.caller.tool_use_id,
        });
        let Some(result) = result else {
            return serde_json::to_vec(&doc).unwrap_or_default();
        };
        doc["tool_response"] = result.clone();
        let mut text = serde_json::to_vec(&doc).unwrap_or_default();
        // Past the bound, the result's strings are cut shorter until it fits.
        let mut keep = STDIN_MAX / 2;
        while text.len() > STDIN_MAX && keep > 0 {
            let mut cut = result.clone();
            cut_strings(&mut cut, keep);
            doc["tool_response"] = cut;
            doc["tool_response_cut"] = Value::Bool(true);
            text = serde_json::to_vec(&doc).unwrap_or_default();
            keep /= 4;
        }
        text
    }
}

/// Run the Stop hooks (sneaky-agent, when the model calls finish): Some(reason) when one says
/// `decision: "block"` (or exits 2), and the model should go on working. A failing Stop hook
/// does not keep the session going.
pub fn stop(hooks: &Hooks, root: &Path, caller: &Caller, active: bool) -> Option<String> {
    for hook in &hooks.stop {
        let stdin = json!({
            "session_id": caller.session_id,
            "cwd": root.to_string_lossy(),
            "hook_event_name": "Stop",
            "stop_hook_active": active,
        });
        let env = process::Env {
            root,
            event: "Stop",
        };
        let stdin = serde_json::to_vec(&stdin).unwrap_or_default();
        let Ok(ran) = process::run(&hook.command, stdin, &env, timeout(hook)) else {
            continue;
        };
        match ran.code {
            Some(2) => return Some(first_lines(&ran.stderr)),
            Some(0) => {}
            _ => continue,
        }
        if let Ok(Some(output)) = parse_output(&ran) {
            if output.get("decision").and_then(Value::as_str) == Some("block") {
                let reason = output.get("reason").and_then(Value::as_str).unwrap_or("");
                return Some(format!("a Stop hook asks you to go on: {reason}"));
            }
        }
    }
    None
}

/// What the hosts say when a workspace's `sneaky.toml` named hooks.
pub fn ignored_note(file: &Path) -> String {
    format!(
        "{} names [hooks]; hooks come only from your own configuration (a workspace cannot make \
         tools run its programs), so they are ignored",
        file.display()
    )
}

enum Applied {
    Denied(String),
    Malformed(String),
}

fn timeout(hook: &Hook) -> Duration {
    Duration::from_secs(hook.timeout)
}

/// A hook's stdout: nothing, or one JSON object.
fn parse_output(ran: &process::Ran) -> std::result::Result<Option<Map<String, Value>>, String> {
    let text = ran.stdout.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if ran.stdout_cut {
        return Err(format!(
            "its output was longer than {STDOUT_MAX} bytes and was cut"
        ));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err("it printed JSON that is not an object".into()),
        Err(e) => {
            let start: String = text.chars().take(60).collect();
            Err(format!("its output is not JSON ({e}): {start:?}"))
        }
    }
}

fn describe_failure(failed: &process::Failed) -> String {
    match failed {
        process::Failed::Start(e) => format!("it cannot start: {e}"),
        process::Failed::TimedOut(t) => format!(
            "it ran past its timeout of {} s and was killed",
            t.as_secs()
        ),
    }
}

fn exited(code: Option<i32>, stderr: &str) -> String {
    let how = match code {
        Some(127) => "exit 127: not found".to_string(),
        Some(126) => "exit 126: not executable".to_string(),
        Some(code) => format!("exit {code}"),
        None => "killed by a signal".to_string(),
    };
    let said = first_lines(stderr);
    if said.is_empty() {
        how
    } else {
        format!("{how}: {said}")
    }
}

/// The start of what a hook said, for a message: its first lines, at most 2,000 characters.
fn first_lines(text: &str) -> String {
    let text = text.trim();
    let mut shown: String = text.chars().take(2000).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

/// Cut every string longer than `keep` bytes (at a character boundary), saying so.
fn cut_strings(value: &mut Value, keep: usize) {
    match value {
        Value::String(s) if s.len() > keep => {
            let mut end = keep;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            let dropped = s.len() - end;
            s.truncate(end);
            s.push_str(&format!("…[{dropped} bytes cut]"));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, keep)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, keep)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(matcher: &str) -> Hook {
        Hook {
            matcher: matcher.into(),
            command: "true".into(),
            ..Hook::default()
        }
    }

    #[test]
    fn matchers() {
        assert!(hook("").matches(ToolName::ReadFile));
        assert!(hook("*").matches(ToolName::ReadFile));
        assert!(hook("write_file|str_replace").matches(ToolName::StrReplace));
        assert!(!hook("write_file|str_replace").matches(ToolName::ReadFile));
        assert!(!hook("write").matches(ToolName::WriteFile));
        assert!(hook("write.*").matches(ToolName::WriteFile));
        assert!(hook("(read|write)_file").matches(ToolName::ReadFile));
        assert!(!hook("read").matches(ToolName::ReadFile));
        let mut claude = hook("Edit|Write");
        claude.names = Names::Claude;
        assert!(claude.matches(ToolName::StrReplace));
        assert!(!claude.matches(ToolName::ReadFile));
    }

    #[test]
    fn a_broken_matcher_is_refused_with_the_configuration() {
        let hooks = Hooks {
            pre_tool_use: vec![hook("(unclosed")],
            ..Hooks::default()
        };
        let e = hooks.validate(3600).unwrap_err();
        assert!(e.contains("hooks.PreToolUse[0]: matcher"), "{e}");
    }

    #[test]
    fn long_results_are_cut_to_fit() {
        let mut v = json!({"content": "é".repeat(10), "n": 1});
        cut_strings(&mut v, 5);
        assert_eq!(v["content"], "éé…[16 bytes cut]");
    }
}
