//! Scenario folders for the edit tools: `tests/scenarios/<name>/` holds `input/` (the workspace
//! before), `request.json` (`{"tool", "args", "error"?, "result"?}`) and `expected/` (the
//! workspace after, byte for byte; a `.gitkeep` stands for an empty directory). The whole tree
//! is compared, so a stray temporary file fails a scenario too.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sneaky::catalog::ToolName;

use crate::util;

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

#[test]
fn edit_scenarios() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut dirs: Vec<_> = std::fs::read_dir(&base)
        .expect("tests/scenarios")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("request.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 20, "scenarios missing: {}", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| {
            run_scenario(d).err().map(|e| {
                format!(
                    "{}: {e}",
                    d.file_name().unwrap_or_default().to_string_lossy()
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
