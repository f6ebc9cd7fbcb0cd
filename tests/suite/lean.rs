//! Lean binaries: each tool binary links only what its tool uses (generic mains).
//! The bash grammar (tree-sitter-bash) belongs only where commands are parsed: sneaky-run (the
//! hosts, sneaky-mcp and sneaky-agent, run commands and check the policy through it), and
//! sneaky-outline and sneaky-symbol, which hold every grammar of the code navigation tools
//! (find_references, repo_map, the edit tools' syntax check and the hosts parse through
//! sneaky-outline: `sneaky::code::elsewhere`); HTTPS
//! (rustls) only in sneaky-agent; the image codecs and the PDF parser (lopdf) only in
//! sneaky-outline too, not in sneaky-read, whose start every read_file call pays
//! (`sneaky::media`). Read from the symbol tables of this build's binaries with `nm` (the
//! linker drops what nothing references);
//! `benches/size.sh` checks the same on the stripped release binaries and measures the sizes.
//!
//! The binaries are Cargo.toml's `[[bin]]` targets, held to the catalog: one per tool, plus the
//! two hosts, each a short main in `bin/`. A tool's main is the same generic one for every tool
//! (`generated::tool_binaries_are_generated_from_the_catalog`), which finds its tool from the
//! binary's name at compile time: what these tests read is that it still links that tool alone.

use std::path::Path;
use std::process::Command;

use sneaky::catalog::ToolName;

use crate::util;

/// The programs that are not one tool's binary.
const HOSTS: [&str; 2] = ["sneaky-mcp", "sneaky-agent"];

/// The `[[bin]]` targets of Cargo.toml: (name, path).
fn cargo_bins() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let manifest: toml::Table = text.parse().expect("Cargo.toml is TOML");
    manifest["bin"]
        .as_array()
        .expect("[[bin]] targets")
        .iter()
        .map(|bin| {
            let field = |key: &str| bin[key].as_str().expect("name and path").to_string();
            (field("name"), field("path"))
        })
        .collect()
}

#[test]
fn every_tool_has_its_binary_and_a_thin_main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bins = cargo_bins();
    let mut names: Vec<&str> = bins.iter().map(|(name, _)| name.as_str()).collect();
    names.sort_unstable();
    let mut want: Vec<&str> = ToolName::ALL.iter().map(|t| t.binary()).collect();
    want.extend(HOSTS);
    want.sort_unstable();
    assert_eq!(
        names, want,
        "Cargo.toml's [[bin]] targets against the catalog"
    );
    let mut files: Vec<String> = std::fs::read_dir(root.join("bin"))
        .expect("read bin/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|f| f.ends_with(".rs"))
        .map(|f| format!("bin/{f}"))
        .collect();
    files.sort_unstable();
    let mut paths: Vec<&str> = bins.iter().map(|(_, path)| path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        files, paths,
        "the mains in bin/ against the [[bin]] targets"
    );
    for (name, path) in &bins {
        assert_eq!(path, &format!("bin/{name}.rs"), "{name}");
        let main = std::fs::read_to_string(root.join(path)).expect("read the main");
        let lines = main.lines().filter(|l| !l.trim().is_empty()).count();
        assert!(
            lines <= 6,
            "{path}: a main hands over to the library ({lines} lines)"
        );
    }
}

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
fn the_grammars_tls_image_codecs_and_pdf_parser_are_linked_only_where_used() {
    if !util::require_cmd("nm") {
        return;
    }
    let mut wrong = Vec::new();
    for (bin, _) in cargo_bins() {
        let bin = bin.as_str();
        // find_symbol parses the few files of a common name as it walks, where handing
        // them to the helper took a third of a cold call (src/tools/symbol.rs).
        let parses_code = bin == ToolName::Outline.binary() || bin == ToolName::FindSymbol.binary();
        let wants_grammar = bin == ToolName::RunCommand.binary() || parses_code;
        let wants_tls = bin == "sneaky-agent";
        let symbols = symbols(bin);
        assert!(
            symbols.len() > 100,
            "{bin}: no symbol table to read (stripped?)"
        );
        let grammar = symbols.iter().any(|s| s == "tree_sitter_bash");
        // The image codecs: only the media helper scales images (sneaky-read and the hosts
        // hand them to it).
        let wants_codecs = bin == sneaky::media::HELPER_BINARY;
        let codecs = symbols.iter().any(|s| {
            ["zune_jpeg", "image_webp", "jpeg_encoder", "N3png", "N3gif"]
                .iter()
                .any(|mark| s.contains(mark))
        });
        if codecs != wants_codecs {
            wrong.push(format!("{bin}: links the image codecs: {codecs}"));
        }
        // The PDF parser: only the media helper reads PDFs (sneaky-read and the hosts hand
        // them to it).
        let pdf = symbols.iter().any(|s| s.contains("lopdf"));
        if pdf != wants_codecs {
            wrong.push(format!("{bin}: links lopdf: {pdf}"));
        }
        // The grammars of the code navigation tools: only sneaky-outline and sneaky-symbol
        // parse code in their own process.
        for grammar in [
            "tree_sitter_rust",
            "tree_sitter_python",
            "tree_sitter_javascript",
            "tree_sitter_typescript",
            "tree_sitter_tsx",
            "tree_sitter_go",
            "tree_sitter_java",
            "tree_sitter_c",
            "tree_sitter_cpp",
            "tree_sitter_c_sharp",
            "tree_sitter_ruby",
            "tree_sitter_php",
        ] {
            let linked = symbols.iter().any(|s| s == grammar);
            if linked != parses_code {
                wrong.push(format!("{bin}: links {grammar}: {linked}"));
            }
        }
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

/// The unwinder is linked in (build.rs), not loaded from libgcc_s.so.1 at every start, where
/// the C compiler has the static one.
#[test]
fn no_binary_loads_libgcc_s() {
    if !util::require_cmd("readelf") || !util::require_cmd("cc") {
        return;
    }
    let out = Command::new("cc")
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .expect("run cc");
    let archive = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !Path::new(&archive).is_absolute() {
        util::skip("cc has no libgcc_eh.a");
        return;
    }
    for (bin, _) in cargo_bins() {
        let path = assert_cmd::cargo::cargo_bin(&bin);
        let out = Command::new("readelf")
            .arg("--dynamic")
            .arg(&path)
            .output()
            .expect("run readelf");
        let dynamic = String::from_utf8_lossy(&out.stdout);
        assert!(
            dynamic.contains("(NEEDED)"),
            "{bin}: no dynamic section read: {dynamic}"
        );
        assert!(
            !dynamic.contains("libgcc_s"),
            "{bin} loads libgcc_s at start:\n{dynamic}"
        );
    }
}
