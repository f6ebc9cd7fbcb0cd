//! `sneaky-replace`: the str_replace tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::replace::StrReplace>()
}
