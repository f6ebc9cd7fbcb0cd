//! `sneaky-outline`: the outline tool (see `sneaky::tools`), and the parse helper of the
//! programs that do not link the grammars (`sneaky::code::elsewhere`).
fn main() -> std::process::ExitCode {
    sneaky::code::elsewhere::main_or(sneaky::protocol::main::<sneaky::tools::outline::Outline>)
}
