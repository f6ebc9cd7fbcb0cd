//! One test per scenario folder for the edit tools (run one with
//! `cargo test --test scenarios patch_crlf`): `tests/scenarios/<name>/` holds `input/` (the
//! workspace before), `request.json` (`{"tool", "args", "error"?, "result"?}`) and `expected/`
//! (the workspace after, byte for byte; a `.gitkeep` stands for an empty directory). The whole
//! tree is compared, so a stray temporary file fails a scenario too. Adding a scenario is
//! adding a folder. A test binary of its own (`harness = false`, libtest-mimic) so that each
//! folder is a test the usual filters and `--list` see.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "suite/util.rs"]
mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use sneaky::catalog::ToolName;

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    let trials = match scenario_dirs() {
        Ok(dirs) => dirs
            .into_iter()
            .map(|dir| {
                let name = dir
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                Trial::test(name, move || run_scenario(&dir).map_err(Failed::from))
            })
            .collect(),
        // A broken folder list is one failing test, not a silent empty run.
        Err(why) => vec![Trial::test("scenario_folders", move || {
            Err(Failed::from(why))
        })],
    };
    libtest_mimic::run(&args, trials).exit_code()
}

/// Every folder of tests/scenarios with a request.json, sorted; an error when there are too
/// few (a moved or emptied folder must not pass as "no scenarios").
fn scenario_dirs() -> Result<Vec<PathBuf>, String> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
        .map_err(|e| format!("{}: {e}", base.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    if let Some(bad) = dirs.iter().find(|d| !d.join("request.json").is_file()) {
        return Err(format!(
            "{}: a scenario folder without request.json",
            bad.display()
        ));
    }
    if dirs.len() < 20 {
        return Err(format!(
            "scenarios missing: only {} in {}",
            dirs.len(),
            base.display()
        ));
    }
    Ok(dirs)
}

/// Every entry under `root`: files with their bytes, directories as None.
fn snapshot(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let entry = entry.expect("entry");
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            let kind = entry.file_type().expect("type");
            if kind.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else if rel.ends_with(".gitkeep") {
                continue;
            } else {
                out.insert(rel, Some(std::fs::read(&path).expect("read")));
            }
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, content) in snapshot(from) {
        let dest = to.join(&rel);
        match content {
            None => std::fs::create_dir_all(&dest).expect("mkdir"),
            Some(bytes) => {
                std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
                std::fs::write(&dest, bytes).expect("write");
            }
        }
    }
}

fn show(tree: &BTreeMap<String, Option<Vec<u8>>>) -> String {
    tree.iter()
        .map(|(k, v)| match v {
            None => format!("  {k}/\n"),
            Some(b) => format!("  {k}: {:?}\n", String::from_utf8_lossy(b)),
        })
        .collect()
}

fn run_scenario(dir: &Path) -> Result<(), String> {
    let request: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("request.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("request.json: {e}"))?;
    let tool = request["tool"].as_str().ok_or("request.json: no tool")?;
    let bin = ToolName::from_name(tool).ok_or("unknown tool")?.binary();
    let w = util::ws();
    copy_tree(&dir.join("input"), &w.root);
    let reply = w.call(bin, request["args"].clone());
    match request.get("error").and_then(Value::as_str) {
        Some(code) => {
            if reply.json["ok"] != false || reply.json["error"]["code"] != code || reply.status == 0
            {
                return Err(format!("expected error {code}, got {}", reply.json));
            }
        }
        None => {
            if reply.status != 0 {
                return Err(format!("expected success, got {}", reply.json));
            }
            if let Some(Value::Object(want)) = request.get("result") {
                for (k, v) in want {
                    if reply.json["result"][k] != *v {
                        return Err(format!("result.{k}: want {v}, got {}", reply.json));
                    }
                }
            }
        }
    }
    check_returned_diff(dir, &request, &reply.json)?;
    let got = snapshot(&w.root);
    let want = snapshot(&dir.join("expected"));
    if got != want {
        return Err(format!(
            "tree differs.\nwant:\n{}got:\n{}",
            show(&want),
            show(&got)
        ));
    }
    Ok(())
}

/// The `diff` of a successful edit, applied to the input file, gives the expected file (when
/// the file is UTF-8: the diff is a JSON string, so other bytes show as U+FFFD in it).
fn check_returned_diff(dir: &Path, request: &Value, reply: &Value) -> Result<(), String> {
    let (Some(diff), Some(file)) = (
        reply["result"]["diff"].as_str(),
        request["args"]["file_path"].as_str(),
    ) else {
        return Ok(());
    };
    if diff.is_empty() || request["args"]["dry_run"] == true {
        return Ok(());
    }
    let old = std::fs::read(dir.join("input").join(file)).unwrap_or_default();
    let new = std::fs::read(dir.join("expected").join(file)).map_err(|e| e.to_string())?;
    if std::str::from_utf8(&old).is_err() {
        return Ok(());
    }
    let patch = sneaky::edit::parse(diff).map_err(|e| format!("returned diff: {e}"))?;
    let hunks: Vec<_> = patch.sections.into_iter().flat_map(|s| s.hunks).collect();
    let applied = sneaky::edit::apply(&old, &hunks, 0).map_err(|r| r.message)?;
    if applied.content != new {
        return Err(format!(
            "the returned diff does not turn input into expected:\n{diff}"
        ));
    }
    Ok(())
}
