//! `sneaky-mcp`: the tools over the Model Context Protocol (see `sneaky::mcp`).
fn main() -> std::process::ExitCode {
    sneaky::mcp::main()
}
