//! Every shell command in README.md and docs/agent.md runs here, so the docs cannot rot. Each
//! ```sh block runs with `bash -euo pipefail` in a small demo project (a git repository, with
//! HOME elsewhere, as a newcomer's checkout is), with the freshly built binaries first on PATH.
//! Two README blocks are the set-up commands themselves: `cargo install --path .` is replaced by
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
    // A project as a newcomer has one: a git repository, found from any directory inside it.
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .expect("git init");
    assert!(git.success(), "git init failed");
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
    for block in blocks {
        if block.trim() == "bash .ci/test" {
            continue;
        }
        run_block(&block.replace("cargo install --path . && ", ""), "README");
    }
}

/// The README's examples also work in this repository itself, as a newcomer tries them after
/// cloning it (its tracked files but the fuzz corpus, in a fresh git repository). The messages
/// the README shows are those of the demo project, so only success is checked here.
#[test]
fn every_readme_command_runs_in_this_repository() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo)
        .output()
        .expect("git ls-files");
    if !listed.status.success() {
        crate::util::skip("the checkout is not a git repository");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let clone = dir.path().join("sneakycode");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    for rel in listed.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = std::str::from_utf8(rel).expect("utf-8 path");
        if rel.starts_with("fuzz/") {
            continue;
        }
        let to = clone.join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        // A file deleted but not yet committed is simply not there.
        let _ = std::fs::copy(repo.join(rel), &to);
    }
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&clone)
        .status()
        .expect("git init");
    assert!(git.success());
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README.md");
    for block in sh_blocks(&readme) {
        if block.trim() == "bash .ci/test" {
            continue;
        }
        let script = block.replace("cargo install --path . && ", "");
        // As a person types it: no pipefail (`| head` closing jq's pipe early is no failure
        // here, where the README is longer than the demo's).
        let out = bash_in(&script, &clone, &home, "-eu");
        check_block(&script, "README (in this repository)", &out, false);
    }
}

/// The shell examples of docs/agent.md run too (docs/mcp.md's need an MCP host's own CLI).
#[test]
fn every_agent_doc_command_runs() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agent.md"))
        .expect("docs/agent.md");
    let blocks = sh_blocks(&doc);
    assert!(!blocks.is_empty(), "docs/agent.md has no shell example");
    for block in blocks {
        run_block(&block, "docs/agent.md");
    }
}

/// Run one block in a fresh demo project, as a newcomer would, and check what it shows.
fn run_block(script: &str, origin: &str) {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("project");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    demo_project(&project);
    let out = bash_in(script, &project, &home, "-euo pipefail");
    check_block(script, origin, &out, true);
}

/// `bash <options> -c script` in `dir`, with the fresh binaries first on PATH and nothing
/// naming the workspace: the tools find it as they would for a person, but no higher than the
/// test's temp dir (`home`'s parent).
fn bash_in(script: &str, dir: &Path, home: &Path, options: &str) -> std::process::Output {
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut bash = std::process::Command::new("bash");
    crate::util::fence(
        &mut bash,
        home.parent().expect("home is inside the temp dir"),
    )
    .args(options.split(' '))
    .args(["-c", script])
    .current_dir(dir)
    .env("PATH", &path)
    .env_remove("SNEAKY_ROOT")
    .env_remove("SNEAKY_CONFIG")
    .env("HOME", home)
    .env("XDG_CONFIG_HOME", home.join(".config"))
    .output()
    .expect("bash")
}

/// The block succeeded, and (with `shown`) printed each `# sneaky-…` message it promises.
fn check_block(script: &str, origin: &str, out: &std::process::Output, shown: bool) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{origin} block failed:\n{script}\nstdout: {stdout}\nstderr: {stderr}"
    );
    if !shown {
        return;
    }
    // A comment that shows a tool's message (`# sneaky-read: not_found: …`) is what the
    // block prints: the docs may not promise a message the tools do not give.
    for shown in script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# sneaky-"))
    {
        let line = format!("sneaky-{shown}");
        assert!(
            stdout.contains(&line) || stderr.contains(&line),
            "{origin} shows `{line}`, but the block printed:\n{stdout}{stderr}"
        );
    }
}

/// The JSON and TOML examples (envelopes, host snippets, the config file) parse.
#[test]
fn readme_json_and_toml_examples_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let json = fenced_blocks(&readme, &["json"]);
    assert!(json.len() >= 3, "README has too few JSON examples");
    for doc in ["docs/agent.md", "docs/mcp.md"] {
        let text = std::fs::read_to_string(root.join(doc)).expect(doc);
        for block in fenced_blocks(&text, &["json"]) {
            serde_json::from_str::<serde_json::Value>(&block)
                .unwrap_or_else(|e| panic!("{doc}: JSON example does not parse: {e}\n{block}"));
        }
    }
    for block in json {
        serde_json::from_str::<serde_json::Value>(&block)
            .unwrap_or_else(|e| panic!("README JSON example does not parse: {e}\n{block}"));
    }
    for block in fenced_blocks(&readme, &["toml"]) {
        sneaky::config::Config::parse(&block, "README.md")
            .unwrap_or_else(|e| panic!("README config example is refused: {e}\n{block}"));
    }
}

/// The keys the configuration loader knows in one table, read from its own "unknown field"
/// message (the loader is the one source of truth; its types derive no listing).
fn known_keys(table: &str) -> Vec<String> {
    let probe = format!("{table}\nzz_not_a_key = 1\n");
    let err = sneaky::config::Config::parse(&probe, "probe").expect_err("unknown key refused");
    let message = err.message();
    let listed = message
        .split("expected ")
        .nth(1)
        .unwrap_or_else(|| panic!("no key list in: {message}"));
    listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The README's configuration example shows every key the loader accepts, so that no setting
/// is documented nowhere (five `tools.shell` keys once were).
#[test]
fn every_config_key_is_in_the_readme() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let blocks = fenced_blocks(&readme, &["toml"]);
    let example: toml::Table = blocks
        .iter()
        .find(|b| b.contains("[tools.shell]"))
        .expect("README has a configuration example")
        .parse()
        .expect("the example is TOML");
    let shell = &example["tools"]["shell"];
    for (header, shown) in [
        ("", Some(&toml::Value::Table(example.clone()))),
        ("[permissions]", example.get("permissions")),
        ("[tools.shell]", Some(shell)),
        ("[mcp]", example.get("mcp")),
        ("[undo]", example.get("undo")),
        (
            "[[hooks.PreToolUse]]",
            example
                .get("hooks")
                .and_then(|h| h.get("PreToolUse"))
                .and_then(|list| list.get(0)),
        ),
    ] {
        let shown = shown
            .and_then(toml::Value::as_table)
            .unwrap_or_else(|| panic!("README example lacks {header}"));
        for key in known_keys(header) {
            assert!(
                shown.contains_key(&key),
                "the README's configuration example does not show `{key}` ({}); add it with \
                 its default and what it does",
                if header.is_empty() {
                    "top level"
                } else {
                    header
                }
            );
        }
    }
    // And no table beyond these three: a new section must be added here and to the README.
    assert_eq!(known_keys("[tools]"), ["shell"]);
}

/// The table under "The tools" has one row per tool of the catalog, with its binary and tier.
#[test]
fn the_tool_table_lists_every_tool() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("read README.md");
    let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| ")).collect();
    for spec in sneaky::tools::all() {
        let row = format!(
            "| {} | `{}` | {} |",
            spec.name(),
            spec.binary(),
            spec.default_tier().as_str()
        );
        assert!(
            rows.iter().any(|r| r.starts_with(&row)),
            "README.md's tool table has no row starting {row:?}"
        );
    }
}
