//! run_command: the tool. It validates the arguments, has the command policy
//! (src/shell/policy) check the line, and hands it to src/shell (sandbox, supervision,
//! capture, environment), turning the outcome into the result.
//!
//! How it runs: `bash --noprofile --norc -c COMMAND` with the root as working directory, stdin
//! from /dev/null, in its own session, under the sandbox layers (src/shell/sandbox.rs), with
//! a scrubbed environment; output bounded head+tail; on timeout or when the call ends,
//! nothing it started is left.

use std::fmt::Write as _;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, Main, TextExample, Tool, ToolName};
use crate::config::MAX_TIMEOUT;
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::fs::history::Undoable;
use crate::render::human::Text;
use crate::shell::overlay::{Changed, Reduced};
use crate::shell::policy::Effect;
use crate::shell::{self, jobs, policy, Changes};

/// Longest command line accepted.
const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// Run a shell command in the workspace root and return its exit code and output. Any bash
/// is fine (pipelines, lists, loops, functions, variables, `$(…)`, heredocs, `bash -c`); any
/// program on PATH or in the workspace runs, except a deny list (sudo, docker …) wherever it
/// stands, and the few options of programs that run code the parser cannot see (`git -c
/// core.pager=…`, `sed 'e …'`) are refused. Commands run sandboxed: they cannot write outside
/// the workspace (use relative paths), and their changes can be undone. With `background` the
/// command keeps running after the call (a dev server, a watcher, a REPL) as a job that
/// job_output reads, waits for and kills, and job_input writes to.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The shell command line to run, e.g. "cargo test 2>&1 | tail -20" or "git status".
    pub command: String,
    /// Timeout in seconds (default: tools.shell.default_timeout, 30; at most 3600). On
    /// expiry the command and everything it started are killed.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Start the command as a background job and return while it still runs, with its output
    /// so far and a job_id for job_output and job_input. The job runs under the same sandbox;
    /// its changes to the workspace are held until it ends, then applied as one change that
    /// job_output reports (a command run meanwhile does not see them); it ends when job_output
    /// kills it, at its lease
    /// (tools.shell.max_job_seconds) or when the host that started it ends. Later commands
    /// reach the ports it listens on through localhost. Default: false.
    #[serde(default)]
    pub background: bool,
    /// With background: how long to wait for output before returning, in milliseconds
    /// (default 1000, or the timeout when wait_for is given; at most 600000). The call
    /// returns earlier when the job ends or its output matches wait_for.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// With background: a regular expression (Perl-like; \w, \d and \s are ASCII); the call
    /// returns as soon as the job's output matches it (e.g. "Listening on|Serving HTTP"), and
    /// `matched` says whether it did.
    #[serde(default)]
    pub wait_for: Option<String>,
    /// With background: run the job on a pseudo-terminal, for programs that act differently
    /// on one (interactive interpreters, prompts); its stderr then goes to stdout. Default:
    /// false.
    #[serde(default)]
    pub tty: bool,
    /// With background: remove terminal escape sequences (colours, cursor moves) from the
    /// output returned. Default: false.
    #[serde(default)]
    pub strip_escapes: bool,
    /// Run the command with its file changes held aside: they are reported (`changes`,
    /// `diff`) and not applied, and the workspace is left as it was. Not with background.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct RunResult {
    /// The command's exit status; null when it was killed by a signal (see `signal`).
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The command ran out of time and was killed.
    pub timed_out: bool,
    /// stdout or stderr exceeded max_output_bytes: the head and the tail are kept and the
    /// dropped middle is marked.
    pub truncated: bool,
    /// The signal that ended the command (e.g. "SIGTERM"), if any.
    pub signal: Option<String>,
    /// The command ran under the Landlock sandbox.
    pub sandboxed: bool,
    /// What the sandbox enforced, or why there was none.
    pub sandbox: String,
    /// stdout was not valid UTF-8 and was decoded lossily (U+FFFD replacements).
    pub stdout_lossy: bool,
    /// stderr was not valid UTF-8 and was decoded lossily.
    pub stderr_lossy: bool,
    /// Bytes the command wrote to stdout / stderr, before truncation.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub duration_ms: u64,
    /// The programs the command line runs, as the policy checked them.
    pub programs: Vec<String>,
    /// "reads" when every program the line runs only reads with the arguments given and
    /// nothing is written by a redirection; else "writes" (also for a program known only at
    /// run time). sneaky-agent asks the person only about "writes"; the command's changes are
    /// reported in either case.
    pub effect: Effect,
    /// Environment variables withheld from the command (secret-looking names, shell hooks).
    pub env_removed: Vec<String>,
    /// The command changed the workspace's sneaky.toml and it was put back.
    pub config_restored: bool,
    /// With background: the job's id, for job_output and job_input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// With background: the job still runs (exit_code is null until it ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    /// With background and wait_for: whether the output matched it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<bool>,
    /// The workspace files the command created, modified or deleted (a rename is a delete
    /// and a create; directories and links count), paths git ignores left out: applied as one
    /// change (`change_id`), or with dry_run held and not applied. Absent when the changes
    /// could not be held (see `changes_unavailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Changed>>,
    /// The paths git ignores that the command changed (build outputs): applied as they are,
    /// not recorded for undo (with dry_run: held, not applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<Changed>,
    /// Changes no tool may make (under .git, the workspace's sneaky.toml, protected paths):
    /// not applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<String>,
    /// What of the command's changes was applied reduced, or not at all: a command's changes
    /// are applied as git keeps files (regular files with plain permission bits, directories,
    /// links). A set-id or sticky bit and extended attributes (file capabilities included) are
    /// taken off; a FIFO, socket or device node is not applied. With dry_run: what would be.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reduced: Vec<Reduced>,
    #[serde(flatten)]
    pub undo: Undoable,
    /// With dry_run: the unified diff of `changes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The diff was cut at max_output_bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_truncated: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// With dry_run, for a host that ran `sneaky-run --hold-changes` (sneaky-agent's approval
    /// by effect): the id the held changes wait under, to be applied or dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// Why the command's changes were not held and recorded: it wrote the workspace
    /// directly, and they cannot be undone (the sandbox is off, or the kernel refused the
    /// overlay). tools.shell.require_layers = ["overlay"] refuses to run instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_unavailable: Option<String>,
    /// Over MCP: the command was still running after this many seconds
    /// (tools.shell.yield_after_seconds, for a call whose timeout is longer), so the call
    /// returned and it goes on as the background job `job_id`, ended at the call's timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yielded_after_s: Option<u64>,
}

pub struct RunCommand;

impl Tool for RunCommand {
    const NAME: ToolName = ToolName::RunCommand;
    const TITLE: &'static str = "Run a shell command";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: true,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["command"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "a shell command under a parsed command policy and a Landlock sandbox",
        example: r#"{"command": "cargo test --quiet", "timeout": 120}"#,
        pipeline: "sneaky-run 'git status --short' | jq -r '.result.stdout'",
        config: &[
            "max_output_bytes: cap on each of stdout and stderr",
            "tools.shell.strict: true: the strict mode, where only an allowed list runs (transitively: the kernel lets nothing else execute); by default, with every layer in force, any program but the deny list runs (docs/sandbox.md; sneaky-run --print-policy shows the mode and the lists)",
            "tools.shell.allowed_commands: an allow list (chooses the strict mode); replaces the strict mode's default list",
            "tools.shell.extra_allowed_commands: strict mode: programs added to the allowed list; otherwise entries of the built-in deny list let run",
            "tools.shell.denied_commands: programs refused; replaces the built-in deny list",
            "tools.shell.default_timeout: seconds when the call gives none",
            "tools.shell.sandbox, tools.shell.network: the sandbox layers (Landlock, namespaces, seccomp); network = false (the default) means no TCP or UDP, true the whole network, a list [\"host\", \"host:port\", \"*.suffix\", \"@name\"] only those hosts through the sandbox's proxy (HTTP_PROXY and friends set)",
            "tools.shell.host_lists: named host lists that network entries name as @name",
            "tools.shell.require_layers: layers that must be in force, else nothing runs (landlock, namespaces, seccomp, pids, proc: the command's own /proc, overlay, all; unset: all but overlay; []: run with what the system offers)",
            "tools.shell.container_boundary: a container is the boundary: a missing layer does not refuse",
            "tools.shell.read_paths, write_paths, exec_paths: extra places to read, write, execute",
            "tools.shell.exec_workspace_dirs: strict mode: workspace directories whose programs may run (what the build makes; \".\" for all of it)",
            "deny_read, extra_deny_read: paths commands cannot read (they find them empty); unset: the usual credential stores, /etc/shadow and the SSH host keys",
            "protected_paths, extra_protected_paths: workspace paths commands cannot write; unset: the files that run code when the project is opened",
            "tools.shell.max_processes, max_file_bytes, max_cpu_seconds: rlimits of commands",
            "tools.shell.max_job_seconds: the lease of a background job (3600): it is ended after that long",
            "tools.shell.yield_after_seconds: over MCP only (50): a call whose timeout is longer returns after that long, its command going on as a background job ended at the call's timeout",
            "tools.shell.pass_env: secret-looking variables passed anyway",
            "trusted_workspaces: workspaces whose own sneaky.toml may loosen your configuration",
            "allow_vcs_writes: let tools and commands change .git (config, hooks)",
        ],
        env: &[
            (
                "(credentials)",
                "variables named like *_API_KEY, *_TOKEN, *_SECRET*, *PASSWORD*, AWS_* are not passed to commands",
            ),
            (
                "XDG_RUNTIME_DIR",
                "background jobs: where the workspace's job supervisor keeps its socket and the \
                 jobs' output ($XDG_RUNTIME_DIR/sneaky/, else /tmp/sneaky-UID/)",
            ),
            (
                "SNEAKY_JOB_OWNER",
                "set by sneaky-mcp and sneaky-agent for the tools they run: the pid of the host, \
                 whose end ends the background jobs the call starts",
            ),
            (
                "SNEAKY_SANDBOX_SKIP",
                "namespaces: run without the namespace layer, to see how the sandbox degrades (tools.shell.require_layers still refuses); proc: without the command's own /proc (what a container's masked /proc does); overlay: without the overlay that holds a command's changes (written directly, not recorded for undo)",
            ),
            (
                "SNEAKY_CONTAINER_ROOT",
                "tests only: look for a container engine's markers (run/.containerenv, .dockerenv, proc/1/environ) beneath this directory instead of /; they change only what a refusal or the sandbox field says",
            ),
        ],
        text: TextExample {
            files: &[],
            args: &["echo out; echo err >&2; exit 3"],
            stdin: "",
            stdout: "out\n",
            stderr: "err\nsneaky-run: exit status 3\n",
            status: 1,
        },
        calls: Calls {
            before: &[],
            works: r#"{"command": "ls"}"#,
            fails: r#"{"command": "sudo ls"}"#,
            fails_with: ErrorKind::CommandDenied,
        },
    };
    const SCHEMA: &'static str = committed_schema!("run_command");
    const PRECHECK_FLAG: Option<&'static str> = Some(crate::shell::policy::CHECK_POLICY_FLAG);
    const MAIN: Main = Main::Own;
    type Args = RunArgs;
    type Output = RunResult;

    // Long: run_command's argument checks, each with its own error as the contract lists them,
    // then the policy and the choice of foreground or background.
    fn run(args: RunArgs, ctx: &Context) -> Result<RunResult> {
        let shell = &ctx.config.tools.shell;
        let timeout = match args.timeout {
            None => shell.default_timeout,
            Some(0) => return Err(Error::invalid_args("timeout: must be at least 1 second")),
            Some(t) if t > MAX_TIMEOUT => {
                return Err(Error::invalid_args(format!(
                    "timeout: at most {MAX_TIMEOUT} seconds"
                )))
            }
            Some(t) => t,
        };
        let command = args.command;
        if command.trim().is_empty() {
            return Err(Error::invalid_args("command: must not be empty"));
        }
        if command.len() > MAX_COMMAND_BYTES {
            return Err(Error::invalid_args(format!(
                "command: longer than {MAX_COMMAND_BYTES} bytes"
            )));
        }
        if command.contains('\0') {
            return Err(Error::invalid_args("command: contains a NUL character"));
        }
        let background =
            Background::of(&args.wait_ms, &args.wait_for, args.tty, args.strip_escapes);
        if !args.background {
            if let Some(field) = background.given() {
                return Err(Error::invalid_arg(
                    field,
                    "only applies with background: true",
                ));
            }
        } else if args.timeout.is_some() {
            return Err(Error::invalid_arg(
                "timeout",
                "a background job has no timeout: it runs until killed or until its lease \
                 (tools.shell.max_job_seconds) ends; use wait_ms for how long the call waits",
            ));
        }
        if !args.background {
            shell::begin_before_the_check(shell, ctx.ws.root());
        }
        crate::shell::costs::mark("request-config-policy");
        let approved = policy::check(&command, shell, ctx.ws.root())?;
        crate::shell::costs::mark("policy-check");
        let effect = approved.effect;
        let cap = usize::try_from(ctx.config.max_output_bytes).unwrap_or(usize::MAX);
        if args.background && args.dry_run {
            return Err(Error::invalid_arg(
                "dry_run",
                "does not apply with background: true (a job writes the workspace directly)",
            ));
        }
        if args.background {
            return background.start(&command, approved.programs, effect, timeout, cap, ctx);
        }
        if !args.dry_run && yields(timeout, shell) {
            // Started as a job that the call waits for; past the wait it goes on in the
            // background until the call's timeout, as a foreground command would have.
            let wait_ms = Some(shell.yield_after_seconds.saturating_mul(1000));
            let yielding = Background {
                lease: Some(timeout),
                ..Background::of(&wait_ms, &None, false, false)
            };
            let mut r = yielding.start(&command, approved.programs, effect, timeout, cap, ctx)?;
            if r.running == Some(true) {
                r.yielded_after_s = Some(shell.yield_after_seconds);
            }
            return Ok(r);
        }
        let outcome = shell::run_with_changes(
            &command,
            &approved.programs,
            Duration::from_secs(timeout),
            cap,
            shell::Context {
                ws: &ctx.ws,
                config: &ctx.config,
            },
            if args.dry_run {
                Changes::DryRun
            } else {
                Changes::Record
            },
        )?;
        Ok(result(outcome, approved.programs, effect, args.dry_run))
    }

    /// The status line, then stdout and stderr, each under a marker when there is any.
    fn model_text(r: &RunResult) -> String {
        let mut out = match r.exit_code {
            _ if r.running == Some(true) && r.yielded_after_s.is_some() => format!(
                "still running after {} s: it goes on as background job {}, ended at the call's \
                 timeout (job_output reads more, waits for it or kills it; job_input writes to it)",
                r.yielded_after_s.unwrap_or_default(),
                r.job_id.as_deref().unwrap_or("")
            ),
            _ if r.running == Some(true) => {
                let id = r.job_id.as_deref().unwrap_or("");
                let matched = match r.matched {
                    Some(true) => ", its output matched wait_for",
                    Some(false) => ", its output did not match wait_for yet",
                    None => "",
                };
                format!(
                    "job {id} is running in the background{matched} (job_output reads more, \
                     waits or kills it; job_input writes to it)"
                )
            }
            _ if r.timed_out => "timed out and was killed".to_string(),
            Some(code) => format!("exit code {code}"),
            None => match r.signal.as_deref().unwrap_or("") {
                "" => "killed".to_string(),
                signal => format!("killed by {signal}"),
            },
        };
        if !r.sandboxed && !r.sandbox.is_empty() {
            let _ = write!(out, " (not sandboxed: {})", r.sandbox);
        }
        if r.config_restored {
            out.push_str("\nnote: the command changed sneaky.toml; it was put back");
        }
        for (stream, body, lossy) in [
            ("stdout", &r.stdout, r.stdout_lossy),
            ("stderr", &r.stderr, r.stderr_lossy),
        ] {
            if body.is_empty() {
                continue;
            }
            let _ = write!(out, "\n[{stream}");
            if lossy {
                out.push_str(", not UTF-8: decoded lossily");
            }
            out.push_str("]\n");
            out.push_str(body.trim_end_matches('\n'));
        }
        if r.stdout.is_empty() && r.stderr.is_empty() {
            out.push_str(", no output");
        }
        out.push_str(&changes_text(r));
        out
    }

    /// The command's own streams, then, on stderr, how it ended when it did not succeed.
    fn human_text(r: &RunResult, binary: &str) -> Text {
        let mut text = Text {
            stdout: r.stdout.clone(),
            stderr: r.stderr.clone(),
        };
        if r.truncated {
            let _ = writeln!(
                text.stderr,
                "{binary}: the output was cut at max_output_bytes ({} bytes on stdout, {} on \
                 stderr)",
                r.stdout_bytes, r.stderr_bytes
            );
        }
        if let (Some(true), Some(id)) = (r.running, &r.job_id) {
            let _ = writeln!(
                text.stderr,
                "{binary}: job {id} runs in the background (sneaky-jobs {id} reads it, \
                 sneaky-jobs --kill {id} ends it)"
            );
        } else if r.timed_out {
            let _ = writeln!(text.stderr, "{binary}: timed out; the command was killed");
        } else if let Some(signal) = &r.signal {
            let _ = writeln!(text.stderr, "{binary}: killed by {signal}");
        } else if let Some(code) = r.exit_code.filter(|c| *c != 0) {
            let _ = writeln!(text.stderr, "{binary}: exit status {code}");
        }
        if r.dry_run || r.changes.as_ref().is_some_and(|c| !c.is_empty()) {
            let summary = changes_text(r);
            let _ = writeln!(text.stderr, "{binary}: {}", summary.trim_start());
        }
        if let Some(diff) = &r.diff {
            text.stderr.push_str(diff);
        }
        text
    }

    /// The command exited 0 in time, so that `sneaky-run 'make test' && echo pass` means what
    /// it says.
    /// A background job succeeded when it runs (and matched wait_for, if given) or exited 0.
    const SUCCEEDED: Option<fn(&RunResult) -> bool> = Some(|r| {
        (r.running == Some(true) && r.matched != Some(false))
            || (r.exit_code == Some(0) && !r.timed_out)
    });

    const TEXT_FORMAT: &'static str =
        "the command's stdout on stdout and its stderr on stderr; then, on stderr, its exit \
         status, signal or timeout when it did not succeed";

    fn changed(r: &RunResult) -> Vec<&str> {
        if r.dry_run {
            return Vec::new();
        }
        let changes = r.changes.iter().flatten().chain(&r.untracked);
        changes.map(|c| c.path.as_str()).collect()
    }
}

/// What the command changed, in words: one line after the output (empty when nothing).
fn changes_text(r: &RunResult) -> String {
    let list = |c: &[Changed]| {
        c.iter()
            .map(|c| format!("{} ({})", c.path, c.kind))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    match &r.changes {
        Some(c) if r.dry_run && c.is_empty() && r.untracked.is_empty() => {
            out.push_str("\ndry run: the command changed no file")
        }
        Some(c) if r.dry_run => {
            let _ = write!(
                out,
                "\ndry run, nothing applied; it would change: {}",
                list(c)
            );
        }
        Some(c) if !c.is_empty() => {
            let _ = write!(out, "\nchanged: {}", list(c));
            if let Some(id) = &r.undo.change_id {
                let _ = write!(out, " (undo takes it back: change_id {id})");
            }
        }
        _ => {}
    }
    if !r.untracked.is_empty() {
        let _ = write!(
            out,
            "\nuntracked (git ignores them; not recorded): {}",
            list(&r.untracked)
        );
    }
    if !r.discarded.is_empty() {
        let _ = write!(
            out,
            "\nnot applied (no tool may change them): {}",
            r.discarded.join(", ")
        );
    }
    if let Some(why) = &r.undo.undo_unavailable {
        let _ = write!(out, "\nthe change cannot be undone: {why}");
    }
    if let Some(why) = &r.changes_unavailable {
        let _ = write!(out, "\nchanges not recorded: {why}");
    }
    let changed = r.changes.as_ref().is_some_and(|c| !c.is_empty()) || !r.untracked.is_empty();
    if r.effect == Effect::Reads && changed {
        out.push_str("\nnote: the policy classed this command as only reading (effect: reads), yet it changed files");
    }
    out
}

fn result(
    outcome: shell::Outcome,
    programs: Vec<String>,
    effect: Effect,
    dry_run: bool,
) -> RunResult {
    let f = outcome.finished;
    let signal = f.signal();
    let (applied, changes_unavailable) = match outcome.changes {
        Some(Ok(a)) => (Some(a), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    let applied_ref = applied.as_ref();
    RunResult {
        changes: applied_ref.map(|a| a.changes.clone()),
        untracked: applied_ref.map(|a| a.untracked.clone()).unwrap_or_default(),
        discarded: applied_ref.map(|a| a.discarded.clone()).unwrap_or_default(),
        reduced: applied_ref.map(|a| a.reduced.clone()).unwrap_or_default(),
        undo: applied_ref.map(|a| a.undo.clone()).unwrap_or_default(),
        diff: applied_ref.and_then(|a| a.diff.clone()),
        diff_truncated: applied_ref.is_some_and(|a| a.diff_truncated),
        held: applied_ref.and_then(|a| a.held.clone()),
        dry_run,
        changes_unavailable,
        exit_code: f.status.code(),
        signal,
        timed_out: f.timed_out,
        truncated: f.stdout.truncated || f.stderr.truncated,
        stdout: f.stdout.text,
        stderr: f.stderr.text,
        sandboxed: outcome.sandboxed,
        sandbox: outcome.sandbox,
        stdout_lossy: f.stdout.lossy,
        stderr_lossy: f.stderr.lossy,
        stdout_bytes: f.stdout.total,
        stderr_bytes: f.stderr.total,
        duration_ms: f.duration_ms,
        programs,
        effect,
        env_removed: outcome.env_removed,
        config_restored: outcome.config_restored,
        job_id: None,
        running: None,
        matched: None,
        yielded_after_s: None,
    }
}

/// Whether this call may return before its command ends: over MCP (sneaky-mcp sets
/// [`jobs::YIELD_ENV`]), when its timeout is longer than `tools.shell.yield_after_seconds`.
fn yields(timeout: u64, shell: &crate::config::Shell) -> bool {
    timeout > shell.yield_after_seconds
        && std::env::var_os(jobs::YIELD_ENV).is_some_and(|v| v == "1")
}

/// How long a background start waits when neither wait_ms nor wait_for says.
const DEFAULT_WAIT_MS: u64 = 1000;

/// The background options of a call.
struct Background<'a> {
    wait_ms: &'a Option<u64>,
    wait_for: &'a Option<String>,
    tty: bool,
    strip_escapes: bool,
    /// The job's lease in seconds when not tools.shell.max_job_seconds (a command that yields
    /// keeps its call's timeout).
    lease: Option<u64>,
}

impl<'a> Background<'a> {
    fn of(
        wait_ms: &'a Option<u64>,
        wait_for: &'a Option<String>,
        tty: bool,
        strip_escapes: bool,
    ) -> Self {
        Background {
            wait_ms,
            wait_for,
            tty,
            strip_escapes,
            lease: None,
        }
    }

    /// The first option given, for the message when background is not set.
    fn given(&self) -> Option<&'static str> {
        [
            ("wait_ms", self.wait_ms.is_some()),
            ("wait_for", self.wait_for.is_some()),
            ("tty", self.tty),
            ("strip_escapes", self.strip_escapes),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(name, _)| name)
    }

    /// Start the job and wait for its first output; the result as a command's, with its id.
    // Long: a background start: the wait's settings, the progress reporter and the job options
    // built for the one call to the supervisor, then its answer turned into a command's result.
    fn start(
        &self,
        command: &str,
        programs: Vec<String>,
        effect: Effect,
        timeout: u64,
        cap: usize,
        ctx: &Context,
    ) -> Result<RunResult> {
        let ms = match (*self.wait_ms, self.wait_for) {
            (Some(ms), _) if ms > jobs::MAX_WAIT_MS => {
                return Err(Error::invalid_arg(
                    "wait_ms",
                    format!("at most {}", jobs::MAX_WAIT_MS),
                ))
            }
            (Some(ms), _) => ms,
            (None, Some(_)) => timeout.saturating_mul(1000),
            (None, None) => DEFAULT_WAIT_MS,
        };
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let progress = crate::progress::Reporter::from_env({
            let counter = counter.clone();
            move || counter.load(std::sync::atomic::Ordering::Relaxed)
        });
        let opts = jobs::Background {
            tty: self.tty,
            wait: jobs::Wait {
                ms,
                pattern: self.wait_for.clone(),
                any_output: false,
                offset: None,
                cap,
                strip_escapes: self.strip_escapes,
            },
            progress: Some(counter),
            lease_secs: self.lease,
        };
        let (v, env_removed) = jobs::start(
            command,
            &programs,
            opts,
            shell::Context {
                ws: &ctx.ws,
                config: &ctx.config,
            },
        )?;
        drop(progress);
        Ok(RunResult {
            exit_code: v.exit_code,
            stdout: v.stdout,
            stderr: v.stderr,
            timed_out: false,
            truncated: v.more || v.dropped_bytes > 0,
            signal: v.signal,
            sandboxed: v.sandboxed,
            sandbox: v.sandbox,
            stdout_lossy: false,
            stderr_lossy: false,
            stdout_bytes: v.stdout_bytes,
            stderr_bytes: v.stderr_bytes,
            duration_ms: v.elapsed_ms,
            programs,
            effect,
            env_removed,
            config_restored: false,
            job_id: Some(v.job_id),
            running: Some(v.running),
            matched: v.matched,
            // Held while the job runs, applied once it has ended (job_output then says what
            // became of them); a job that ended within the wait has had them applied.
            changes: v.changes,
            untracked: v.untracked,
            discarded: v.discarded,
            reduced: v.reduced,
            undo: v.undo,
            diff: None,
            diff_truncated: false,
            dry_run: false,
            held: None,
            changes_unavailable: v.changes_unavailable,
            yielded_after_s: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::outcome::tests::command;
    use crate::tools::{self, ToolName};

    #[test]
    fn only_a_command_that_exited_zero_in_time_succeeded() {
        let spec = tools::spec(ToolName::RunCommand);
        let rule = spec.succeeded.expect("run_command has a status rule");
        let succeeded = |fields| rule(&command(fields));
        assert!(succeeded(json!({"exit_code": 0})));
        assert!(!succeeded(json!({"exit_code": 2})));
        assert!(!succeeded(json!({"exit_code": null, "signal": "SIGKILL"})));
        assert!(!succeeded(json!({"exit_code": 0, "timed_out": true})));
        // Not a whole result: not a success.
        assert!(!rule(&json!({"exit_code": 0})));
        // The other tools' results all succeed, so their JSON may go straight to stdout.
        let ruled: Vec<&str> = tools::all()
            .filter(|s| s.succeeded.is_some())
            .map(|s| s.name())
            .collect();
        assert_eq!(ruled, ["run_command"]);
    }
}
