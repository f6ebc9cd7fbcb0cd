//! One test binary: every file in `tests/suite/` drives the real binaries on temporary
//! workspaces through the shared harness in `util.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "suite/util.rs"]
mod util;

#[path = "suite/generated.rs"]
mod generated;
#[path = "suite/jail.rs"]
mod jail;
#[path = "suite/props.rs"]
mod props;
#[path = "suite/protocol.rs"]
mod protocol;
#[path = "suite/read_tools.rs"]
mod read_tools;
#[path = "suite/readme.rs"]
mod readme;
#[path = "suite/run_exec.rs"]
mod run_exec;
#[path = "suite/run_policy.rs"]
mod run_policy;
