//! Writes the LLM-edit corpus (see `benches/llm_edits/corpus.rs`) to a directory, one folder
//! per case, for `benches/llm_edits.sh`:
//! `old` (the file), `patch` or `args.json` (str_replace's old_str/new_str), `expected` (absent
//! when only a refusal is right) and `meta` (`CLASS unique|ambiguous`).
//!
//! Usage: cargo run --example llm_edits_corpus -- OUTDIR [PER_CLASS] [SEED]
//! Sources: text files from the cargo registry sources (`$CARGO_HOME/registry/src`, else
//! `~/.cargo/registry/src`) and the file changes of the first-parent history of this
//! repository and of every git repository named in `LLM_EDITS_REPOS` (paths separated by
//! `:`; `benches/llm_edits.sh` brings a large test-heavy one).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/llm_edits/corpus.rs"]
mod corpus;

use std::path::{Path, PathBuf};
use std::process::Command;

use corpus::{Request, Source};

const EXTENSIONS: [&str; 8] = ["rs", "c", "h", "py", "go", "js", "toml", "md"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let p = e.path();
        if kind.is_dir() {
            walk(&p, out);
        } else if kind.is_file()
            && p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| EXTENSIONS.contains(&x))
        {
            out.push(p);
        }
    }
}

/// Every 7th usable registry file (sorted, so the same registry gives the same corpus).
fn registry_sources(limit: usize) -> Vec<Source> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    let mut files = Vec::new();
    walk(&home.join("registry/src"), &mut files);
    files.sort();
    files
        .iter()
        .step_by(7)
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            corpus::usable(&text).then(|| Source {
                name: p.display().to_string(),
                old: text,
                new: None,
            })
        })
        .take(limit)
        .collect()
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Real changes: modified text files of a repository's first-parent history (at most
/// `max_files` of them).
fn history_sources(root: &Path, max_commits: usize, max_files: usize) -> Vec<Source> {
    let mut out = Vec::new();
    let git = |args: &[&str]| git(root, args);
    let Some(list) = git(&[
        "rev-list",
        "--first-parent",
        &format!("--max-count={max_commits}"),
        "HEAD",
    ]) else {
        return out;
    };
    for commit in list.split_whitespace() {
        let parent = format!("{commit}^");
        let Some(names) = git(&["diff", "--name-only", "--diff-filter=M", &parent, commit]) else {
            continue;
        };
        for file in names.lines() {
            if out.len() >= max_files {
                return out;
            }
            if !Path::new(file)
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| EXTENSIONS.contains(&x))
            {
                continue;
            }
            let (Some(old), Some(new)) = (
                git(&["show", &format!("{parent}:{file}")]),
                git(&["show", &format!("{commit}:{file}")]),
            ) else {
                continue;
            };
            if corpus::usable(&old) && corpus::usable(&new) && old != new {
                out.push(Source {
                    name: format!("{}@{commit}:{file}", root.display()),
                    old,
                    new: Some(new),
                });
            }
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1).map(PathBuf::from) else {
        eprintln!("usage: llm_edits_corpus OUTDIR [PER_CLASS] [SEED]");
        std::process::exit(2);
    };
    let per_class: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    let seed: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(20261130);
    let mut sources = registry_sources(600);
    eprintln!("sources: {} registry files", sources.len());
    let mut repos = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR"))];
    if let Some(extra) = std::env::var_os("LLM_EDITS_REPOS") {
        repos.extend(std::env::split_paths(&extra));
    }
    for repo in &repos {
        let changes = history_sources(repo, 400, 600);
        eprintln!(
            "sources: {} history changes of {}",
            changes.len(),
            repo.display()
        );
        sources.extend(changes);
    }
    let cases = corpus::generate(&sources, per_class, seed);
    std::fs::create_dir_all(&dir).expect("outdir");
    for c in &cases {
        let d = dir.join(&c.name);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("old"), &c.old).expect("write");
        match &c.request {
            Request::Patch(p) => std::fs::write(d.join("patch"), p).expect("write"),
            Request::Replace { old_str, new_str } => std::fs::write(
                d.join("args.json"),
                serde_json::json!({"file_path": "f", "old_str": old_str, "new_str": new_str})
                    .to_string(),
            )
            .expect("write"),
        }
        if let Some(e) = &c.expected {
            std::fs::write(d.join("expected"), e).expect("write");
        }
        let tag = if c.unique { "unique" } else { "ambiguous" };
        std::fs::write(d.join("meta"), format!("{} {tag}\n", c.class)).expect("write");
    }
    eprintln!("{} cases in {}", cases.len(), dir.display());
}
