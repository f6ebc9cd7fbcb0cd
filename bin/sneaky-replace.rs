//! `sneaky-replace`: the str_replace tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main("str_replace")
}
