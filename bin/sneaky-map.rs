//! `sneaky-map`: the repo_map tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::map::RepoMap>()
}
