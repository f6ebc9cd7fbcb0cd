//! `sneaky-read`: the read_file tool (see `sneaky::tools`), and the hosts' image scaler and
//! PDF reader.
fn main() -> std::process::ExitCode {
    sneaky::media::main_or(sneaky::protocol::main::<sneaky::tools::read::ReadFile>)
}
