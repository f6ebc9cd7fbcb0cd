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

/// Nesting bombs for the command policy: refused (or, for long flat lists, answered) quickly,
/// without exhausting the stack; the recursive checks run only below a bounded tree depth.
#[test]
fn command_policy_nesting_bombs_are_answered_quickly() {
    // Far beyond the checked depth (200), and long flat lists.
    let n = 5_000;
    let nested =
        |open: &str, mid: &str, close: &str| format!("{}{mid}{}", open.repeat(n), close.repeat(n));
    let bombs = [
        nested("(", "ls", ")"),
        nested("$(", "ls", ")"),
        nested("\"$(", "ls", ")\""),
        nested("{ ", "ls", "; }"),
        nested("if true; then ", "ls", "; fi"),
        nested("[ ", "x", " ]"),
        nested("! ", "ls", ""),
        nested("sh -c '", "ls", "'"),
        nested("<(", "ls", ")"),
        nested("ls $((", "1", "))"),
        "ls | ".repeat(n) + "ls",
        "ls && ".repeat(n) + "ls",
        "ls\n".repeat(n),
        "cat <<A\n".repeat(n) + &"A\n".repeat(n),
        format!("echo {}", "'a'\"b\"\\c".repeat(n)),
    ];
    for bomb in &bombs {
        let started = std::time::Instant::now();
        crate::checks::command_policy(bomb.as_bytes());
        let what = format!("checking {}…", &bomb[..40.min(bomb.len())]);
        crate::util::took_at_most(started, std::time::Duration::from_secs(10), &what);
    }
}
