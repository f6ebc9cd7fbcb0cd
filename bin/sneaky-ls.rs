//! `sneaky-ls`: the list_dir tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::list::ListDir>()
}
