//! One test binary: every file in `tests/suite/` drives the real binaries on temporary
//! workspaces through the shared harness in `util.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "suite/util.rs"]
mod util;

#[path = "suite/agent.rs"]
mod agent;
#[path = "suite/agent_hosts.rs"]
mod agent_hosts;
#[path = "suite/agent_pipe.rs"]
mod agent_pipe;
#[path = "suite/agent_screen.rs"]
mod agent_screen;
#[path = "suite/agent_tty.rs"]
mod agent_tty;
#[path = "suite/apply_boundary.rs"]
mod apply_boundary;
#[path = "../fuzz/checks.rs"]
mod checks;
#[path = "suite/code_nav.rs"]
mod code_nav;
#[path = "suite/code_nav_ctags.rs"]
mod code_nav_ctags;
#[path = "suite/conformance.rs"]
mod conformance;
#[path = "suite/containers.rs"]
mod containers;
#[path = "suite/contract.rs"]
mod contract;
#[path = "../benches/llm_edits/corpus.rs"]
mod corpus;
#[path = "suite/deny.rs"]
mod deny;
#[path = "suite/deny_programs.rs"]
mod deny_programs;
#[path = "suite/edit_corpus.rs"]
mod edit_corpus;
#[path = "suite/edit_crash.rs"]
mod edit_crash;
#[path = "suite/edit_history.rs"]
mod edit_history;
#[path = "suite/edit_tools.rs"]
mod edit_tools;
#[path = "suite/examples.rs"]
mod examples;
#[path = "suite/faults.rs"]
mod faults;
#[path = "suite/fleet.rs"]
mod fleet;
#[path = "suite/fuzz_replay.rs"]
mod fuzz_replay;
#[path = "suite/generated.rs"]
mod generated;
#[path = "suite/hooks.rs"]
mod hooks;
#[path = "suite/host_snippets.rs"]
mod host_snippets;
#[path = "suite/jail.rs"]
mod jail;
#[path = "suite/jobs.rs"]
mod jobs;
#[path = "suite/layers.rs"]
mod layers;
#[path = "suite/lean.rs"]
mod lean;
#[path = "suite/load.rs"]
mod load;
#[path = "suite/mcp.rs"]
mod mcp;
#[path = "suite/mcp_client.rs"]
mod mcp_client;
#[path = "suite/mcp_concurrency.rs"]
mod mcp_concurrency;
#[path = "suite/mcp_memory.rs"]
mod mcp_memory;
#[path = "suite/media.rs"]
mod media;
#[path = "suite/new_repository.rs"]
mod new_repository;
#[path = "suite/own_state.rs"]
mod own_state;
#[path = "suite/pdf.rs"]
mod pdf;
#[path = "suite/props.rs"]
mod props;
#[path = "suite/props_edit.rs"]
mod props_edit;
#[path = "suite/protocol.rs"]
mod protocol;
#[path = "suite/read_tools.rs"]
mod read_tools;
#[path = "suite/readme.rs"]
mod readme;
#[path = "suite/refusal_lines.rs"]
mod refusal_lines;
#[path = "suite/run_exec.rs"]
mod run_exec;
#[path = "suite/run_policy.rs"]
mod run_policy;
#[path = "suite/run_usability.rs"]
mod run_usability;
#[path = "suite/sandbox.rs"]
mod sandbox;
#[path = "suite/sandbox_doors.rs"]
mod sandbox_doors;
#[path = "suite/sandbox_net.rs"]
mod sandbox_net;
#[path = "suite/sandbox_syscalls.rs"]
mod sandbox_syscalls;
#[path = "suite/shell_habits.rs"]
mod shell_habits;
#[path = "suite/text_stream.rs"]
mod text_stream;
#[path = "suite/undo.rs"]
mod undo;
#[path = "suite/undo_command.rs"]
mod undo_command;
#[path = "suite/workflows.rs"]
mod workflows;
