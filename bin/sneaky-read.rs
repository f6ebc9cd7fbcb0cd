//! `sneaky-read`: the read_file tool (see `sneaky::tools`), and the hosts' image scaler.
fn main() -> std::process::ExitCode {
    sneaky::media::scale::main_or(sneaky::protocol::main::<sneaky::tools::read::ReadFile>)
}
