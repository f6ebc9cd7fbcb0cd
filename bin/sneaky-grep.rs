//! `sneaky-grep`: the grep_files tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::grep::GrepFiles>()
}
