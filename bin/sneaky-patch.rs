//! `sneaky-patch`: the patch_apply tool (see `sneaky::tools`).
fn main() -> std::process::ExitCode {
    sneaky::protocol::main::<sneaky::tools::patch::PatchApply>()
}
