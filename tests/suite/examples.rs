//! Every tool's own calls (`Doc::calls`) made for real through its binary, each in a fresh
//! workspace holding the files of its `--format text` example: the call that works succeeds and
//! its result reads back from its JSON into the result type unchanged (what a host holding only
//! the JSON relies on to render it), the call that fails fails with its code. A new tool brings
//! its cases in its module; nothing here names a tool. The same calls go through the official
//! TypeScript MCP client in `mcp_client`.

use serde_json::Value;

use sneaky::tools::{all, spec, ToolSpec};

use crate::util;

/// What stands for the id of the job the calls before started.
pub const JOB: &str = "$JOB";

/// A workspace holding the files of the tool's text example.
fn workspace(tool: &ToolSpec) -> util::Ws {
    let w = util::ws();
    for (path, content) in tool.doc.text.files {
        w.write(path, content);
    }
    w
}

/// A call of `tool`'s binary in `w`. The jobs a call starts end with this test process, their
/// owner, rather than with their lease.
fn call(w: &util::Ws, tool: &ToolSpec, args: &str) -> util::Reply {
    let owner = std::process::id().to_string();
    let args = json(tool, args).to_string();
    let env = [("SNEAKY_JOB_OWNER", std::ffi::OsStr::new(&owner))];
    w.call_env(tool.binary(), &[], args.as_bytes(), &env)
}

fn json(tool: &ToolSpec, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{}: {text:?}: {e}", tool.name()))
}

#[test]
fn every_tool_s_own_calls_work_fail_and_read_back() {
    for tool in all() {
        let w = workspace(tool);
        let calls = tool.doc.calls;
        let mut job = None;
        for (before, args) in calls.before {
            let before = spec(*before);
            let result = call(&w, before, args).ok().clone();
            job = result["job_id"].as_str().map(str::to_string).or(job);
        }
        let mut works = calls.works.to_string();
        if works.contains(JOB) {
            let job = job.as_deref().unwrap_or_else(|| {
                panic!("{}: {JOB} but no call before started a job", tool.name())
            });
            works = works.replace(JOB, job);
        }
        let reply = call(&w, tool, &works);
        assert_eq!(
            reply.json["ok"],
            true,
            "{}: {works}: {}",
            tool.name(),
            reply.json
        );
        let result = &reply.json["result"];
        if let Err(e) = tool.result_reads_back(result) {
            panic!("{}: the result of {works} {e}: {result}", tool.name());
        }
        let reply = call(&w, tool, calls.fails);
        let code = calls.fails_with.code();
        reply.err(code, calls.fails_with.exit_status());
    }
}
