//! job_output: reading, waiting for and ending the background jobs that run_command started
//! (`background: true`), and listing them. The jobs belong to the workspace's supervisor
//! (src/shell/jobs); this tool only asks it.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::render::human::Text;
use crate::shell::jobs::{self, JobInfo, JobView, Reply, Request, Wait};

/// Read a background job's output (a job that run_command started with background: true):
/// what it wrote since the last read, or from `offset`. `wait_ms` waits for new output or the
/// job's end, `wait_for` for output that matches a regular expression; `kill` ends the job and
/// everything it started; `{"list": true}` lists the workspace's jobs. Waiting here never
/// stops the job.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobOutputArgs {
    /// The job, as run_command's result or the list names it.
    #[serde(default)]
    pub job_id: Option<String>,
    /// List the workspace's jobs (command, start, state, exit code) instead of reading one.
    #[serde(default)]
    pub list: bool,
    /// Read again from this byte offset of each stream (0: everything still kept) instead of
    /// where the last read stopped.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Wait up to this many milliseconds for new output or for the job to end (default 0:
    /// answer at once; with wait_for, the default is tools.shell.default_timeout; at most
    /// 600000).
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// Wait until the new output matches this regular expression (Perl-like; \w, \d and \s
    /// are ASCII), the job ends, or wait_ms passes; `matched` says which.
    #[serde(default)]
    pub wait_for: Option<String>,
    /// End the job and every process it started (SIGTERM, then SIGKILL a second later), and
    /// return its last output. Default: false.
    #[serde(default)]
    pub kill: bool,
    /// Remove terminal escape sequences (colours, cursor moves) from the output returned.
    /// Default: false.
    #[serde(default)]
    pub strip_escapes: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct JobOutputResult {
    #[serde(flatten)]
    pub job: JobView,
    /// With list: the workspace's jobs, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobInfo>>,
}

pub struct JobOutput;

impl Tool for JobOutput {
    const NAME: ToolName = ToolName::JobOutput;
    const TITLE: &'static str = "Read a background job's output";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: true,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["job_id"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "a background job's new output; `wait_ms`, `wait_for`, `kill`, `list`",
        example: r#"{"job_id": "3fa2-1", "wait_for": "GET /", "wait_ms": 5000}"#,
        pipeline: "sneaky-jobs \"$job\" --wait-ms 2000 | jq -r .result.stdout",
        config: &[
            "tools.shell.max_job_seconds: the lease of a job (set when run_command starts it)",
            "max_output_bytes: the most of each stream one answer carries (more: read again)",
            "tools.shell.default_timeout: how long wait_for waits when wait_ms is not given",
        ],
        env: &[(
            "XDG_RUNTIME_DIR",
            "where the jobs' supervisor keeps its socket and the output files: \
             $XDG_RUNTIME_DIR/sneaky/ (else /tmp/sneaky-UID/), private to the user",
        )],
        text: TextExample::prints(&[], &["--list"], "", ""),
        calls: Calls {
            before: &[(
                ToolName::RunCommand,
                r#"{"command": "cat", "background": true, "wait_ms": 0}"#,
            )],
            works: r#"{"job_id": "$JOB"}"#,
            fails: r#"{"job_id": "no-such-job"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("job_output");
    type Args = JobOutputArgs;
    type Output = JobOutputResult;

    fn run(args: JobOutputArgs, ctx: &Context) -> Result<JobOutputResult> {
        let root = ctx.ws.root();
        if args.list {
            if args.job_id.is_some() || args.kill || args.wait_for.is_some() {
                return Err(Error::invalid_args(
                    "list: lists the jobs; give it alone, without job_id, kill or wait_for",
                ));
            }
            let jobs = match jobs::ask(root, &Request::List, false, None) {
                Ok(Reply::List(jobs)) => jobs,
                Ok(_) => return Err(unexpected()),
                Err(e) if e.kind == ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(e),
            };
            return Ok(JobOutputResult {
                job: JobView::default(),
                jobs: Some(jobs),
            });
        }
        let Some(job_id) = args.job_id else {
            return Err(Error::invalid_arg(
                "job_id",
                "name the job (run_command's result holds it), or list the jobs with list: true",
            ));
        };
        let ms = match (args.wait_ms, &args.wait_for) {
            (Some(ms), _) if ms > jobs::MAX_WAIT_MS => {
                return Err(Error::invalid_arg(
                    "wait_ms",
                    format!("at most {}", jobs::MAX_WAIT_MS),
                ))
            }
            (Some(ms), _) => ms,
            (None, Some(_)) => ctx.config.tools.shell.default_timeout.saturating_mul(1000),
            (None, None) => 0,
        };
        let wait = Wait {
            ms,
            pattern: args.wait_for,
            any_output: true,
            offset: args.offset,
            cap: usize::try_from(ctx.config.max_output_bytes).unwrap_or(usize::MAX),
            strip_escapes: args.strip_escapes,
        };
        let request = if args.kill {
            Request::Kill { job_id, wait }
        } else {
            Request::Read { job_id, wait }
        };
        let counter = std::sync::atomic::AtomicU64::new(0);
        let counter = std::sync::Arc::new(counter);
        let progress = crate::progress::Reporter::from_env({
            let counter = counter.clone();
            move || counter.load(std::sync::atomic::Ordering::Relaxed)
        });
        let reply = jobs::ask(root, &request, false, Some(&counter));
        drop(progress);
        match reply? {
            Reply::Job(job) => Ok(JobOutputResult {
                job: *job,
                jobs: None,
            }),
            _ => Err(unexpected()),
        }
    }

    /// The job's state, then its new output under markers; with list, one job a line.
    fn model_text(r: &JobOutputResult) -> String {
        if let Some(jobs) = &r.jobs {
            if jobs.is_empty() {
                return "no background jobs in this workspace".into();
            }
            return jobs.iter().map(list_line).collect::<Vec<_>>().join("\n");
        }
        let j = &r.job;
        let mut out = format!("job {}: {}", j.job_id, state(j));
        match j.matched {
            Some(true) => out.push_str("; the output matched wait_for"),
            Some(false) => out.push_str("; the output did not match wait_for"),
            None => {}
        }
        if j.dropped_bytes > 0 {
            let _ = write!(
                out,
                "; {} bytes asked for are no longer kept",
                j.dropped_bytes
            );
        }
        if j.more {
            out.push_str("; more output is waiting: read again");
        }
        for (stream, body) in [("stdout", &j.stdout), ("stderr", &j.stderr)] {
            if !body.is_empty() {
                let _ = write!(out, "\n[{stream}]\n{}", body.trim_end_matches('\n'));
            }
        }
        if j.stdout.is_empty() && j.stderr.is_empty() {
            out.push_str("; no new output");
        }
        out
    }

    /// The job's new output on the matching streams, then its state on stderr; with --list,
    /// one job a line.
    fn human_text(r: &JobOutputResult, binary: &str) -> Text {
        if let Some(jobs) = &r.jobs {
            let mut text = Text::default();
            for j in jobs {
                text.stdout.push_str(&list_line(j));
                text.stdout.push('\n');
            }
            return text;
        }
        let j = &r.job;
        let mut text = Text {
            stdout: j.stdout.clone(),
            stderr: j.stderr.clone(),
        };
        let _ = writeln!(text.stderr, "{binary}: job {}: {}", j.job_id, state(j));
        text
    }

    const TEXT_FORMAT: &'static str =
        "the job's new output, its stdout on stdout and its stderr on stderr, then on stderr \
         whether it runs or how it ended; with --list one job a line: id, state, command";
}

fn unexpected() -> Error {
    Error::new(
        ErrorKind::Internal,
        "unexpected answer from the job supervisor",
    )
}

/// "running", "exited with code 0", "killed by SIGTERM (kill)".
fn state(j: &JobView) -> String {
    if j.running {
        let held = if j.changes_held {
            "; its changes are held until it ends"
        } else {
            ""
        };
        return match j.lease_left_s {
            Some(s) => format!("running (lease ends in {s} s){held}"),
            None => format!("running{held}"),
        };
    }
    let how = match (j.exit_code, &j.signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(sig)) => format!("killed by {sig}"),
        (None, None) => "ended".into(),
    };
    let how = match &j.ended_by {
        Some(by) => format!("{how} (ended by {by})"),
        None => how,
    };
    match (&j.changes, &j.changes_unavailable) {
        (Some(c), _) => {
            let mut s = format!("{how}; its changes applied: {} path(s)", c.len());
            if let Some(id) = &j.undo.change_id {
                let _ = write!(s, " (undo takes them back: change_id {id})");
            }
            if !j.discarded.is_empty() {
                let _ = write!(s, "; not applied: {}", j.discarded.join(", "));
            }
            s
        }
        (None, Some(why)) => format!("{how}; {why}"),
        (None, None) => how,
    }
}

/// `id  state  command`.
fn list_line(j: &JobInfo) -> String {
    let state = match (j.state.as_str(), j.exit_code, &j.signal) {
        ("running", ..) => "running".to_string(),
        (_, Some(code), _) => format!("exit {code}"),
        (_, None, Some(sig)) => sig.clone(),
        (s, None, None) => s.to_string(),
    };
    format!("{}\t{state}\t{}", j.job_id, j.command)
}
