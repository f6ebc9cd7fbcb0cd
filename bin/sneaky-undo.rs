//! `sneaky-undo`: the undo tool (see `sneaky::tools::undo`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::undo::Undo>()
}
