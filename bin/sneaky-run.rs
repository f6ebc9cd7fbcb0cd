//! `sneaky-run`: the run_command tool (see `sneaky::tools::run`); also the sandbox launcher
//! step it re-executes itself as (see `sneaky::shell::sandbox`).
fn main() -> std::process::ExitCode {
    sneaky::shell::sandbox::launcher_main()
        .unwrap_or_else(sneaky::protocol::main::<sneaky::tools::run::RunCommand>)
}
