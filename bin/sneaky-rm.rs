//! `sneaky-rm`: the delete_file tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::rm::DeleteFile>()
}
