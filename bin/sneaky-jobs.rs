//! `sneaky-jobs`: the job_output tool (see `sneaky::tools::jobs`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::jobs::JobOutput>()
}
