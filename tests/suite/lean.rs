//! Lean binaries: each tool binary links only what its tool uses (generic mains, issue 11).
//! The bash grammar (tree-sitter-bash) belongs only where commands are parsed: sneaky-run (the
//! hosts, sneaky-mcp and sneaky-agent, run commands and check the policy through it); HTTPS
//! (rustls) only in sneaky-agent. Read from the symbol tables
//! of this build's binaries with `nm` (the linker drops what nothing references);
//! `benches/size.sh` checks the same on the stripped release binaries and measures the sizes.

use std::process::Command;

use crate::util;

/// Every tool binary, and whether it may link the bash grammar and rustls.
const BINARIES: [(&str, bool, bool); 13] = [
    ("sneaky-read", false, false),
    ("sneaky-ls", false, false),
    ("sneaky-grep", false, false),
    ("sneaky-find", false, false),
    ("sneaky-finish", false, false),
    ("sneaky-write", false, false),
    ("sneaky-mkdir", false, false),
    ("sneaky-rm", false, false),
    ("sneaky-replace", false, false),
    ("sneaky-patch", false, false),
    ("sneaky-run", true, false),
    ("sneaky-mcp", false, false),
    ("sneaky-agent", false, true),
];

/// The defined symbols of a binary.
fn symbols(bin: &str) -> Vec<String> {
    let path = assert_cmd::cargo::cargo_bin(bin);
    let out = Command::new("nm")
        .arg("--defined-only")
        .arg(&path)
        .output()
        .expect("run nm");
    assert!(
        out.status.success(),
        "nm {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

#[test]
fn the_bash_grammar_and_tls_are_linked_only_where_used() {
    if !util::require_cmd("nm") {
        return;
    }
    let mut wrong = Vec::new();
    for (bin, wants_grammar, wants_tls) in BINARIES {
        let symbols = symbols(bin);
        assert!(
            symbols.len() > 100,
            "{bin}: no symbol table to read (stripped?)"
        );
        let grammar = symbols.iter().any(|s| s == "tree_sitter_bash");
        let tls = symbols.iter().any(|s| s.contains("rustls"));
        if grammar != wants_grammar {
            wrong.push(format!("{bin}: links the bash grammar: {grammar}"));
        }
        if tls != wants_tls {
            wrong.push(format!("{bin}: links rustls: {tls}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
