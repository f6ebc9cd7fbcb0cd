//! `sneaky-mkdir`: the make_dir tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::mkdir::MakeDir>()
}
