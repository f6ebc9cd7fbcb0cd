//! `sneaky-input`: the job_input tool (see `sneaky::tools::input`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::input::JobInput>()
}
