//! docs/contract.md against the code, where the two can be compared mechanically: the table of
//! binaries holds every `[[bin]]` of Cargo.toml and every tool of the catalog with its default
//! tier, and nothing else; the table of error codes holds every code of `ErrorKind` with its
//! exit status, and nothing else.

use std::path::Path;

use sneaky::catalog::ToolName;
use sneaky::error::ErrorKind;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).expect(rel)
}

/// The rows of the first table under the heading `heading`, each as its trimmed cells, the
/// header and the `|---|` line left out.
fn table_under(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let start = doc
        .lines()
        .position(|l| l.trim() == heading)
        .unwrap_or_else(|| panic!("docs/contract.md has no heading {heading:?}"));
    let rows: Vec<Vec<String>> = doc
        .lines()
        .skip(start + 1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert!(rows.len() > 2, "no table under {heading:?}");
    rows[2..].to_vec()
}

fn cargo_bins() -> Vec<String> {
    let manifest: toml::Table = toml::from_str(&read("Cargo.toml")).expect("Cargo.toml");
    manifest["bin"]
        .as_array()
        .expect("[[bin]]")
        .iter()
        .map(|b| b["name"].as_str().expect("bin name").to_string())
        .collect()
}

#[test]
fn the_binaries_table_lists_every_binary_and_tool() {
    let doc = read("docs/contract.md");
    let rows = table_under(&doc, "## Binaries and tools");
    let documented: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            assert_eq!(r.len(), 3, "a row of three cells: {r:?}");
            (
                r[0].clone(),
                r[1].trim_matches('`').to_string(),
                r[2].clone(),
            )
        })
        .collect();
    let bins = cargo_bins();
    for bin in &bins {
        assert!(
            documented.iter().any(|(_, b, _)| b == bin),
            "docs/contract.md, \"Binaries and tools\": no row for the binary {bin}"
        );
    }
    for (_, bin, _) in &documented {
        assert!(
            bins.contains(bin),
            "docs/contract.md names {bin}, which Cargo.toml does not build"
        );
    }
    for tool in ToolName::ALL {
        let row = (
            tool.as_str().to_string(),
            tool.binary().to_string(),
            tool.default_tier().as_str().to_string(),
        );
        assert!(
            documented.contains(&row),
            "docs/contract.md, \"Binaries and tools\": expected the row {row:?}"
        );
    }
    // The rows that are no tool are the two programs, marked as such.
    for (name, bin, tier) in &documented {
        if ToolName::from_binary(bin).is_none() {
            assert!(
                name.starts_with('(') && tier == "—",
                "{bin} is no tool: its row says what it is in parentheses, tier —"
            );
        }
    }
}

#[test]
fn the_error_table_lists_every_code_with_its_exit_status() {
    let doc = read("docs/contract.md");
    let rows = table_under(&doc, "### Error codes");
    let documented: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r[0].trim_matches('`').to_string(), r[1].clone()))
        .collect();
    for kind in ErrorKind::ALL {
        let row = (kind.code().to_string(), kind.exit_status().to_string());
        assert!(
            documented.contains(&row),
            "docs/contract.md, \"Error codes\": expected {} with exit {}",
            row.0,
            row.1
        );
    }
    for (code, _) in &documented {
        assert!(
            ErrorKind::from_code(code).is_some(),
            "docs/contract.md lists {code}, which is no error code"
        );
    }
}
