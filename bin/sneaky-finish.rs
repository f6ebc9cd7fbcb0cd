//! `sneaky-finish`: the finish tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::finish::Finish>()
}
