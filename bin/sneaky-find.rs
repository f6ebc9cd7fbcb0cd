//! `sneaky-find`: the find_files tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::find::FindFiles>()
}
