//! `sneaky-symbol`: the find_symbol tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::symbol::FindSymbol>()
}
