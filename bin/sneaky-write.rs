//! `sneaky-write`: the write_file tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::write::WriteFile>()
}
