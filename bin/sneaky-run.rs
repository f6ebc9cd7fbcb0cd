//! `sneaky-run`: the run_command tool (see `sneaky::tools::run`); also the sandbox launcher
//! step it re-executes itself as (see `sneaky::sandbox`).
fn main() -> std::process::ExitCode {
    sneaky::sandbox::launcher_main().unwrap_or_else(|| sneaky::protocol::main("run_command"))
}
