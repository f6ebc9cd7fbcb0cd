//! Replays the committed, minimised fuzz corpus (fuzz/corpus/<target>/) through the same
//! checks the fuzz targets run (fuzz/checks.rs), without a fuzzing build.

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("read");
        check(&data);
        count += 1;
    }
    assert!(count > 0, "empty corpus for {target}");
}

#[test]
fn protocol_corpus() {
    replay("protocol", crate::checks::protocol);
}

#[test]
fn jail_paths_corpus() {
    replay("jail_paths", crate::checks::jail_paths);
}

#[test]
fn unidiff_corpus() {
    replay("unidiff", crate::checks::unidiff);
}

#[test]
fn str_replace_corpus() {
    replay("str_replace", crate::checks::str_replace);
}

#[test]
fn command_policy_corpus() {
    replay("command_policy", crate::checks::command_policy);
}

#[test]
fn mcp_line_corpus() {
    replay("mcp_line", crate::checks::mcp_line);
}
