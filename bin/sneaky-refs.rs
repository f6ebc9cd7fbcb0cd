//! `sneaky-refs`: the find_references tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::refs::FindReferences>()
}
