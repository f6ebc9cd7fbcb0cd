//! `sneaky-agent`: the LLM driver (see `sneaky::agent`).
fn main() -> std::process::ExitCode {
    sneaky::agent::main()
}
