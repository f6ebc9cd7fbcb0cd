//! `sneaky-read`: the read_file tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::read::ReadFile>()
}
