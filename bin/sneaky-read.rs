//! A tool's binary, generated from the catalog (src/catalog.rs) by `SNEAKY_REGENERATE=1 cargo
//! test --test suite generated`: its tool is the one the binary is named for.
fn main() -> std::process::ExitCode {
    sneaky::protocol::tool_main::<{ sneaky::catalog::binary_index(env!("CARGO_BIN_NAME")) }>()
}
