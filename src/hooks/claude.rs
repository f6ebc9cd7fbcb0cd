//! `names = "claude"`: a call as Claude Code's hooks see one of its own tools (its tool name and
//! input fields, paths absolute), and a hook's `updatedInput` read back into our arguments, so
//! that a script written for Claude Code runs unchanged. A tool without a counterpart keeps its
//! own name and fields.
//!
//! Reading back starts from the call's own arguments: a field the hook's view showed is set
//! from `updatedInput` (or removed when the hook left it out), and what the view could not show
//! (`dry_run`, `wait_for` …) stays as it was.

use std::path::Path;

use serde_json::{Map, Value};

use crate::catalog::ToolName;

/// How one field is shown: (our name, Claude Code's name, how the value is carried).
type Field = (&'static str, &'static str, Carry);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Carry {
    Same,
    /// A workspace path, shown absolute (Claude Code's tools take absolute paths).
    Path,
    /// Seconds here, milliseconds there (Bash's `timeout`).
    Millis,
    /// A list here, one string there (Grep's `type`: the first entry).
    OneOfList,
}

/// Claude Code's name of a tool with a counterpart, and its fields.
fn counterpart(tool: ToolName) -> Option<(&'static str, &'static [Field])> {
    use Carry::*;
    Some(match tool {
        ToolName::RunCommand => (
            "Bash",
            &[
                ("command", "command", Same),
                ("timeout", "timeout", Millis),
                ("background", "run_in_background", Same),
            ],
        ),
        ToolName::ReadFile => (
            "Read",
            &[
                ("file_path", "file_path", Path),
                ("offset", "offset", Same),
                ("limit", "limit", Same),
            ],
        ),
        ToolName::WriteFile => (
            "Write",
            &[
                ("file_path", "file_path", Path),
                ("content", "content", Same),
            ],
        ),
        ToolName::StrReplace => (
            "Edit",
            &[
                ("file_path", "file_path", Path),
                ("old_str", "old_string", Same),
                ("new_str", "new_string", Same),
                ("replace_all", "replace_all", Same),
            ],
        ),
        ToolName::GrepFiles => (
            "Grep",
            &[
                ("pattern", "pattern", Same),
                ("path", "path", Path),
                ("file_pattern", "glob", Same),
                ("type", "type", OneOfList),
                ("output_mode", "output_mode", Same),
                ("case_insensitive", "-i", Same),
                ("context", "-C", Same),
                ("before_context", "-B", Same),
                ("after_context", "-A", Same),
                ("max_results", "head_limit", Same),
            ],
        ),
        ToolName::FindFiles => (
            "Glob",
            &[("pattern", "pattern", Same), ("path", "path", Path)],
        ),
        ToolName::ListDir => ("LS", &[("directory_path", "path", Path)]),
        _ => return None,
    })
}

/// The tool's name as the hook sees it.
pub fn tool_name(tool: ToolName) -> &'static str {
    counterpart(tool).map_or(tool.as_str(), |(name, _)| name)
}

/// The call's arguments as Claude Code's tool would have them.
pub fn input(tool: ToolName, args: &Value, root: &Path) -> Value {
    let Some((_, fields)) = counterpart(tool) else {
        return args.clone();
    };
    let mut shown = Map::new();
    for (ours, theirs, carry) in fields {
        let Some(value) = args.get(*ours).filter(|v| !v.is_null()) else {
            continue;
        };
        let value = match carry {
            Carry::Same => value.clone(),
            Carry::Path => match value.as_str() {
                Some(p) if !Path::new(p).is_absolute() => {
                    Value::String(root.join(p).to_string_lossy().into_owned())
                }
                _ => value.clone(),
            },
            Carry::Millis => match value.as_u64() {
                Some(seconds) => Value::from(seconds.saturating_mul(1000)),
                None => value.clone(),
            },
            Carry::OneOfList => match value.as_array().and_then(|a| a.first()) {
                Some(first) => first.clone(),
                None => continue,
            },
        };
        shown.insert((*theirs).to_string(), value);
    }
    Value::Object(shown)
}

/// `updatedInput` in Claude Code's fields, read back into the call's arguments (`args`, as
/// they were when the hook saw them).
pub fn read_back(tool: ToolName, args: &Value, updated: &Map<String, Value>, root: &Path) -> Value {
    let Some((_, fields)) = counterpart(tool) else {
        return Value::Object(updated.clone());
    };
    let mut merged = args.as_object().cloned().unwrap_or_default();
    for (ours, theirs, carry) in fields {
        let Some(value) = updated.get(*theirs) else {
            merged.remove(*ours);
            continue;
        };
        let value = match carry {
            Carry::Same => value.clone(),
            // Absolute inside the root names the same file; our tools take it as given, and
            // refuse one outside the root as they would anyway.
            Carry::Path => match value.as_str().map(Path::new) {
                Some(p) => match p.strip_prefix(root) {
                    Ok(rel) if rel.as_os_str().is_empty() => Value::String(".".into()),
                    Ok(rel) => Value::String(rel.to_string_lossy().into_owned()),
                    Err(_) => value.clone(),
                },
                None => value.clone(),
            },
            // Rounded up: a hook's 1500 ms is not cut to 1 s.
            Carry::Millis => match value.as_u64() {
                Some(ms) => Value::from(ms.div_ceil(1000)),
                None => value.clone(),
            },
            Carry::OneOfList => match value {
                Value::String(_) => Value::Array(vec![value.clone()]),
                _ => value.clone(),
            },
        };
        merged.insert((*ours).to_string(), value);
    }
    Value::Object(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_round_trips() {
        let root = Path::new("/ws");
        let args =
            json!({"file_path": "src/a.rs", "old_str": "x", "new_str": "y", "dry_run": true});
        let shown = input(ToolName::StrReplace, &args, root);
        assert_eq!(
            shown,
            json!({"file_path": "/ws/src/a.rs", "old_string": "x", "new_string": "y"})
        );
        let mut updated = shown.as_object().cloned().unwrap();
        updated.insert("new_string".into(), json!("z"));
        let back = read_back(ToolName::StrReplace, &args, &updated, root);
        assert_eq!(
            back,
            json!({"file_path": "src/a.rs", "old_str": "x", "new_str": "z", "dry_run": true})
        );
    }

    #[test]
    fn bash_timeouts_are_milliseconds() {
        let root = Path::new("/ws");
        let args = json!({"command": "make", "timeout": 30});
        let shown = input(ToolName::RunCommand, &args, root);
        assert_eq!(shown, json!({"command": "make", "timeout": 30000}));
        let updated = json!({"command": "make -j2", "timeout": 1500});
        let back = read_back(
            ToolName::RunCommand,
            &args,
            updated.as_object().unwrap(),
            root,
        );
        assert_eq!(back, json!({"command": "make -j2", "timeout": 2}));
        assert_eq!(tool_name(ToolName::RunCommand), "Bash");
        assert_eq!(tool_name(ToolName::Outline), "outline");
    }
}
