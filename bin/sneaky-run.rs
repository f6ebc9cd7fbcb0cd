//! `sneaky-run`: the run_command tool (see `sneaky::tools::run`); also the sandbox launcher
//! step it re-executes itself as, and `--print-policy` (see `sneaky::shell::entry`).
fn main() -> std::process::ExitCode {
    sneaky::shell::entry::main()
}
