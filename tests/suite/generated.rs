//! Generated files are committed; these tests regenerate them in memory and fail on drift.
//! Regenerate with: SNEAKY_REGENERATE=1 cargo test --test suite generated

use std::path::Path;

use sneaky::tools::{schema_file_text, SPECS};

pub const REGENERATE_HINT: &str =
    "run `SNEAKY_REGENERATE=1 cargo test --test suite generated` to update";

/// Compare a generated file with the committed one, or write it when regenerating.
pub fn check_or_write(path: &Path, expected: &str) {
    if std::env::var_os("SNEAKY_REGENERATE").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create dir");
        }
        std::fs::write(path, expected).expect("write generated file");
        return;
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is out of date with the code; {REGENERATE_HINT}",
        path.display()
    );
}

#[test]
fn schemas_match_the_argument_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for spec in SPECS {
        let text = schema_file_text(spec);
        check_or_write(&dir.join(format!("{}.json", spec.name)), &text);
        // The embedded copy is what --schema prints and what the flags are built from.
        if std::env::var_os("SNEAKY_REGENERATE").is_none() {
            assert_eq!(
                spec.schema, text,
                "{}: binary embeds a stale schema; rebuild",
                spec.name
            );
        }
    }
}
