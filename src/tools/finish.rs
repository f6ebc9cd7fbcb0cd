//! finish: the agent loop's control tool. It only echoes its message back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::ErrorKind;
use crate::error::Result;
use crate::render::human::Text;

/// Signal that the task is complete and give the user a final message. Ends the agent loop.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishArgs {
    /// Final message to the user: what was done, and anything they should check.
    #[serde(default = "default_message")]
    pub message: String,
}

fn default_message() -> String {
    "Task complete.".to_string()
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct FinishResult {
    /// The final message, as given.
    pub message: String,
}

pub struct Finish;

impl Tool for Finish {
    const NAME: ToolName = ToolName::Finish;
    const TITLE: &'static str = "Finish the task";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: false,
        ends_session: true,
    };
    const CLI: Cli = Cli {
        positional: &["message"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "ends an agent loop with a message",
        example: r#"{"message": "Created the module and its tests."}"#,
        pipeline: "sneaky-finish 'All done' | jq -r .result.message",
        config: &[],
        env: &[],
        text: TextExample::prints(&[], &["--message", "done"], "", "done\n"),
        calls: Calls {
            before: &[],
            works: r#"{"message": "done"}"#,
            fails: r#"{"message": 5}"#,
            fails_with: ErrorKind::InvalidArgs,
        },
    };
    const SCHEMA: &'static str = committed_schema!("finish");
    type Args = FinishArgs;
    type Output = FinishResult;

    fn run(args: FinishArgs, _ctx: &Context) -> Result<FinishResult> {
        Ok(FinishResult {
            message: args.message,
        })
    }

    fn model_text(r: &FinishResult) -> String {
        r.message.clone()
    }

    fn human_text(r: &FinishResult, _binary: &str) -> Text {
        Text {
            stdout: format!("{}\n", r.message),
            stderr: String::new(),
        }
    }

    const TEXT_FORMAT: &'static str = "the message";
}
