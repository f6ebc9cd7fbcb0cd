//! `sneaky-run`: the run_command tool, its sandbox launcher step, --print-policy, --check-policy.
#[path = "sneaky-run/entry.rs"]
mod entry;
fn main() -> std::process::ExitCode {
    entry::main()
}
