//! job_input: writing to a background job's stdin or terminal. Input makes a running program
//! do whatever it says (a line to a shell or an interpreter is a command of its own), so the
//! tool is confirm-tier by default, as run_command is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::render::human::Text;
use crate::shell::jobs::{self, Reply, Request, MAX_INPUT_BYTES};

/// Write to a background job's stdin (its terminal, for a job started with tty: true): a line
/// for an interpreter, an answer to a prompt. Include the newline the program waits for
/// ("print(6*7)\n"). The program does whatever the input tells it; read its answer with
/// job_output.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobInputArgs {
    /// The job, as run_command's result or job_output's list names it.
    pub job_id: String,
    /// The text to write, as is.
    #[serde(default)]
    pub input: String,
    /// Then close the job's input (end of file; on a terminal the end-of-file character), for
    /// a program that reads until its input ends. Default: false.
    #[serde(default)]
    pub eof: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct JobInputResult {
    pub job_id: String,
    /// Bytes the job took (fewer than given when it stopped reading for 5 seconds).
    pub bytes_written: u64,
    /// The input was closed after the write.
    pub eof: bool,
}

pub struct JobInput;

impl Tool for JobInput {
    const NAME: ToolName = ToolName::JobInput;
    const TITLE: &'static str = "Write to a background job";
    const HINTS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        isolated: true,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["job_id", "input"],
        stdin_param: Some("input"),
    };
    const DOC: Doc = Doc {
        summary: "write to a background job's stdin or terminal",
        example: r#"{"job_id": "3fa2-1", "input": "print(6 * 7)\n"}"#,
        pipeline:
            "printf 'print(6 * 7)\\n' | sneaky-input \"$job\" && sneaky-jobs \"$job\" --wait-ms 500",
        config: &[],
        env: &[(
            "XDG_RUNTIME_DIR",
            "where the jobs' supervisor listens: $XDG_RUNTIME_DIR/sneaky/ (else \
             /tmp/sneaky-UID/)",
        )],
        text: TextExample {
            files: &[],
            args: &["no-such-job", "x"],
            stdin: "",
            stdout: "",
            stderr:
                "sneaky-input: not_found: no job no-such-job in this workspace (no job runs here)\n",
            status: 1,
        },
        calls: Calls {
            before: &[(
                ToolName::RunCommand,
                r#"{"command": "cat", "background": true, "wait_ms": 0}"#,
            )],
            works: r#"{"job_id": "$JOB", "input": "hi\n"}"#,
            fails: r#"{"job_id": "no-such-job", "input": "x"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("job_input");
    type Args = JobInputArgs;
    type Output = JobInputResult;

    fn run(args: JobInputArgs, ctx: &Context) -> Result<JobInputResult> {
        if args.input.len() > MAX_INPUT_BYTES {
            return Err(Error::invalid_arg(
                "input",
                format!("longer than {MAX_INPUT_BYTES} bytes"),
            ));
        }
        if args.input.is_empty() && !args.eof {
            return Err(Error::invalid_arg(
                "input",
                "empty: give the text to write (or eof: true to close the input)",
            ));
        }
        let request = Request::Input {
            job_id: args.job_id.clone(),
            input: args.input,
            eof: args.eof,
        };
        match jobs::ask(ctx.ws.root(), &request, false, None)? {
            Reply::Written(n) => Ok(JobInputResult {
                job_id: args.job_id,
                bytes_written: n,
                eof: args.eof,
            }),
            _ => Err(Error::new(
                ErrorKind::Internal,
                "unexpected answer from the job supervisor",
            )),
        }
    }

    fn model_text(r: &JobInputResult) -> String {
        let eof = if r.eof { ", then closed its input" } else { "" };
        format!(
            "wrote {} bytes to job {}{eof}; job_output reads its answer",
            r.bytes_written, r.job_id
        )
    }

    fn human_text(r: &JobInputResult, _binary: &str) -> Text {
        Text {
            stdout: format!("{}\n", r.bytes_written),
            stderr: String::new(),
        }
    }

    const TEXT_FORMAT: &'static str = "the number of bytes written";
}
