//! Every shell command in README.md runs here, so the README cannot rot. Each ```sh block runs
//! with `bash -euo pipefail` in a small demo project, with the freshly built binaries first on
//! PATH. Two blocks are the set-up commands themselves: `cargo install --path .` is replaced by
//! the binaries already on PATH (CI runs the real install, see .ci/run), and `bash .ci/test` is
//! the command that runs this very test.

use std::path::{Path, PathBuf};

fn sh_blocks(markdown: &str) -> Vec<String> {
    fenced_blocks(markdown, &["sh", "bash"])
}

/// The bodies of the fenced blocks whose language is one of `langs`.
fn fenced_blocks(markdown: &str, langs: &[&str]) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, l)
                if l.strip_prefix("```")
                    .is_some_and(|lang| langs.contains(&lang)) =>
            {
                current = Some(String::new())
            }
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn bin_dir() -> PathBuf {
    let exe = assert_cmd::cargo::cargo_bin("sneaky-read");
    exe.parent().expect("bin dir").to_path_buf()
}

fn demo_project(root: &Path) {
    let files = [
        ("README.md", "# Demo\n\nA demo project.\nTODO: write more\n"),
        ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
        (
            "src/lib.rs",
            &(1..=30)
                .map(|i| format!("// line {i} TODO\n"))
                .collect::<String>(),
        ),
    ];
    // The install block copies the generated man pages and completions from the checkout.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["man", "completions"] {
        std::fs::create_dir_all(root.join(sub)).expect("mkdir");
        for entry in std::fs::read_dir(repo.join(sub)).expect("read_dir") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), root.join(sub).join(entry.file_name())).expect("copy");
        }
    }
    for (rel, content) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }
}

#[test]
fn every_readme_command_runs() {
    if !crate::util::require_cmd("jq") {
        return;
    }
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let blocks = sh_blocks(&readme);
    assert!(blocks.len() >= 4, "README has too few shell examples");
    assert!(
        blocks.iter().any(|b| b.contains("cargo install --path .")),
        "README must show the install command"
    );
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for block in blocks {
        if block.trim() == "bash .ci/test" {
            continue;
        }
        let script = block.replace("cargo install --path . && ", "");
        let dir = tempfile::tempdir().expect("tmp");
        demo_project(dir.path());
        let out = std::process::Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join(".config"))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "README block failed:\n{script}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The JSON and TOML examples (envelopes, host snippets, the config file) parse.
#[test]
fn readme_json_and_toml_examples_parse() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let json = fenced_blocks(&readme, &["json"]);
    assert!(json.len() >= 3, "README has too few JSON examples");
    for block in json {
        serde_json::from_str::<serde_json::Value>(&block)
            .unwrap_or_else(|e| panic!("README JSON example does not parse: {e}\n{block}"));
    }
    for block in fenced_blocks(&readme, &["toml"]) {
        sneaky::config::Config::parse(&block, "README.md")
            .unwrap_or_else(|e| panic!("README config example is refused: {e}\n{block}"));
    }
}
