//! The configuration file read as a TOML document: parsed once by toml's parser, turned into
//! the JSON value the tools deserialize their arguments from, and the configuration read from
//! that value. A tool binary already carries serde's code for reading types out of a JSON
//! value; deserializing straight from TOML would add a second deserializer instantiated for
//! every configuration type (about 100 KB of each binary).
//!
//! The parser's spans are kept beside the value, so a key or value the configuration refuses
//! is shown where it is, as toml's deserializer shows it: the line and column, the line, and
//! carets under the key (an unknown key) or the value (a value of the wrong type or form).

use std::fmt::Write as _;
use std::ops::Range;

use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The key toml's deserializer gives a date-time, read as a map of that one key (so that a
/// date-time where a number belongs reads "invalid type: map", as it did from TOML).
const DATETIME_KEY: &str = "$__toml_private_datetime";

/// Read `T` from the TOML `text`; the error is the message users see, as toml words it.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let root = DeTable::parse(text).map_err(|e| e.to_string())?;
    let document = table_value(root.get_ref()).map_err(|(span, message)| {
        let mut shown = String::new();
        render(&mut shown, text, span, &message);
        shown
    })?;
    let mut message = match T::deserialize(&document) {
        Ok(value) => return Ok(value),
        Err(error) => error.to_string(),
    };
    let path = culprit::<T>(&document, &message);
    // serde refuses an unknown key while it reads the key, everything else in the value.
    let at_key = matches!(path.last(), Some(Step::Key(key))
        if message.starts_with(&format!("unknown field `{key}`")));
    let (span, value) = locate(&root, &path, at_key);
    if let Some(words) = value.and_then(stand_in) {
        message = message.replacen(STAND_IN_WORDS, &words, 1);
    }
    let mut shown = String::new();
    render(&mut shown, text, span, &message);
    Err(shown)
}

/// One step of a path into the document: a key of a table, an index of an array.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where in `document` the refusal `message` is: the path to the value (or, for an unknown
/// key, the key) that `T` refuses. serde's error says what, not where; this narrows the
/// document down, one table entry or array item at a time, for as long as `T` still refuses
/// it with the same words, reading it with `T`'s own deserializer (a refusal is rare and a
/// configuration small) rather than linking a second one that tracks paths. Every table of
/// the configuration reads its keys independently and takes an empty table (its keys have
/// defaults), and every list an empty list, so the first entry still refused alone is the
/// one serde stopped at; a table or list still refused when emptied is refused as a whole.
fn culprit<T: DeserializeOwned>(document: &Value, message: &str) -> Vec<Step> {
    let refused = |doc: &Value| T::deserialize(doc).is_err_and(|e| e.to_string() == message);
    let mut doc = document.clone();
    // The path in the document, and the same path in `doc`, its narrowed copy.
    let mut path = Vec::new();
    let mut inside = Vec::new();
    loop {
        let narrowed: Vec<(Step, Value)> = match at(&doc, &inside) {
            Some(Value::Object(map)) => {
                if !inside.is_empty()
                    && refused(&replaced(&doc, &inside, Value::Object(Map::new())))
                {
                    break;
                }
                map.iter()
                    .map(|(key, value)| {
                        let mut one = Map::new();
                        one.insert(key.clone(), value.clone());
                        (Step::Key(key.clone()), Value::Object(one))
                    })
                    .collect()
            }
            Some(Value::Array(items)) => {
                if refused(&replaced(&doc, &inside, Value::Array(Vec::new()))) {
                    break;
                }
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| (Step::Index(i), Value::Array(vec![item.clone()])))
                    .collect()
            }
            _ => break,
        };
        let found = narrowed.into_iter().find_map(|(step, alone)| {
            let candidate = replaced(&doc, &inside, alone);
            refused(&candidate).then_some((step, candidate))
        });
        let Some((step, candidate)) = found else {
            break;
        };
        doc = candidate;
        // In the narrowed copy the one item left of a list is its first.
        inside.push(match step {
            Step::Index(_) => Step::Index(0),
            Step::Key(ref key) => Step::Key(key.clone()),
        });
        path.push(step);
    }
    path
}

/// The value `path` leads to in `doc`.
fn at<'a>(doc: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |value, step| match step {
        Step::Key(key) => value.get(key.as_str()),
        Step::Index(i) => value.get(*i),
    })
}

/// `doc` with the value at `path` replaced by `by`.
fn replaced(doc: &Value, path: &[Step], by: Value) -> Value {
    let mut copy = doc.clone();
    let slot = path.iter().try_fold(&mut copy, |value, step| match step {
        Step::Key(key) => value.get_mut(key.as_str()),
        Step::Index(i) => value.get_mut(*i),
    });
    if let Some(slot) = slot {
        *slot = by;
    }
    copy
}

type Refusal = (Range<usize>, String);

fn table_value(table: &DeTable<'_>) -> Result<Value, Refusal> {
    let mut map = Map::new();
    for (key, value) in table.iter() {
        map.insert(key.get_ref().to_string(), value_of(value)?);
    }
    Ok(Value::Object(map))
}

fn value_of(value: &Spanned<DeValue<'_>>) -> Result<Value, Refusal> {
    if stand_in(value.get_ref()).is_some() {
        return Ok(Value::from(STAND_IN));
    }
    Ok(match value.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(n) => {
            let digits = n.as_str();
            match (
                i64::from_str_radix(digits, n.radix()),
                u64::from_str_radix(digits, n.radix()),
            ) {
                (Ok(i), _) => Value::from(i),
                (_, Ok(u)) => Value::from(u),
                _ => return Err((value.span(), "integer number overflowed".into())),
            }
        }
        DeValue::Float(f) => match f.as_str().parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Value::Number(n),
            None => return Err((value.span(), "floating-point number overflowed".into())),
        },
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => {
            let mut map = Map::new();
            map.insert(DATETIME_KEY.to_string(), Value::String(d.to_string()));
            Value::Object(map)
        }
        DeValue::Array(items) => Value::Array(
            items
                .iter()
                .map(value_of)
                .collect::<Result<Vec<Value>, Refusal>>()?,
        ),
        DeValue::Table(table) => table_value(table)?,
    })
}

/// A number a JSON value cannot hold (NaN, an infinity, an integer past u64 that fits 128
/// bits) goes in as this float, which no key takes (none takes a fraction), so that it is
/// refused as the type its key wants; the refusal's words for the float are then replaced by
/// serde's words for the number, which [`stand_in`] gives.
const STAND_IN: f64 = 0.5;
const STAND_IN_WORDS: &str = "floating point `0.5`";

fn stand_in(value: &DeValue<'_>) -> Option<String> {
    match value {
        DeValue::Float(f) => {
            let x = f.as_str().parse::<f64>().ok()?;
            // Past f64's range is an error of its own (below), as it was for toml.
            let named = x.is_nan() || (x.is_infinite() && f.as_str().contains("inf"));
            named.then(|| format!("floating point `{x}`"))
        }
        DeValue::Integer(n) => {
            let (digits, radix) = (n.as_str(), n.radix());
            if i64::from_str_radix(digits, radix).is_ok()
                || u64::from_str_radix(digits, radix).is_ok()
            {
                return None;
            }
            match (
                i128::from_str_radix(digits, radix),
                u128::from_str_radix(digits, radix),
            ) {
                (Ok(i), _) => Some(format!("integer `{i}` as i128")),
                (_, Ok(u)) => Some(format!("integer `{u}` as u128")),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The key or value that `path` leads to: its span (the last key's own when `at_key`), and
/// the value. A path that leads into a value (the map a date-time is read as) stops there.
fn locate<'a, 'i>(
    root: &'a Spanned<DeTable<'i>>,
    path: &[Step],
    at_key: bool,
) -> (Range<usize>, Option<&'a DeValue<'i>>) {
    let mut span = root.span();
    let mut here: Option<&DeValue<'_>> = None;
    for (n, segment) in path.iter().enumerate() {
        let found = match (segment, here) {
            (Step::Key(key), None) => root
                .get_ref()
                .get_key_value(key.as_str())
                .map(|(k, v)| (Some(k), v)),
            (Step::Key(key), Some(DeValue::Table(t))) => {
                t.get_key_value(key.as_str()).map(|(k, v)| (Some(k), v))
            }
            (Step::Index(index), Some(DeValue::Array(items))) => {
                items.get(*index).map(|v| (None, v))
            }
            _ => None,
        };
        let Some((key, value)) = found else { break };
        span = match key {
            Some(key) if at_key && n + 1 == path.len() => key.span(),
            _ => value.span(),
        };
        here = Some(value.get_ref());
    }
    (span, here)
}

/// toml's rendering of a refusal: where, the line, carets under the span, the message.
fn render(out: &mut String, text: &str, span: Range<usize>, message: &str) {
    let (line, column) = position(text.as_bytes(), span.start);
    let line_number = line + 1;
    let gutter = " ".repeat(line_number.to_string().len() + 1);
    let content = text.split('\n').nth(line).unwrap_or_default();
    let carets = (span.end - span.start)
        .min(content.len().saturating_sub(column))
        .max(1);
    let _ = writeln!(
        out,
        "TOML parse error at line {line_number}, column {}",
        column + 1
    );
    let _ = writeln!(out, "{gutter}|");
    let _ = writeln!(out, "{line_number} | {content}");
    let _ = writeln!(
        out,
        "{gutter}|{} {}",
        " ".repeat(column),
        "^".repeat(carets)
    );
    let _ = writeln!(out, "{message}");
}

/// Line and column (in characters) of byte `index`, both from 0.
fn position(input: &[u8], index: usize) -> (usize, usize) {
    if input.is_empty() {
        return (0, index);
    }
    let safe = index.min(input.len() - 1);
    let past_end = index - safe;
    let line_start = input[..safe]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |nl| nl + 1);
    let line = input[..line_start].iter().filter(|b| **b == b'\n').count();
    let column = std::str::from_utf8(&input[line_start..=safe])
        .map(|s| s.chars().count() - 1)
        .unwrap_or(safe - line_start);
    (line, column + past_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Every refusal reads as toml's own deserializer words it (the tests build toml with
    /// its serde support for the comparison; the binaries do without it).
    #[test]
    fn refusals_read_as_toml_words_them() {
        let cases = [
            "max_file_size = 3",
            "\n\n  max_file_size = 3\n",
            "max_file_size_bytes = \"big\"",
            "max_file_size_bytes = -1",
            "max_file_size_bytes = 1.5",
            "max_file_size_bytes = nan",
            "max_file_size_bytes = 1979-05-27T07:32:00Z",
            "max_file_size_bytes = [1]",
            "max_file_size_bytes = { a = 1 }",
            "allow_vcs_writes = 1",
            "[tools.shell]\nallowed = []",
            "[tools.shell]\nallowed_commands = [\"ls\", 3]",
            "[tools.shell]\nallowed_commands = \"ls\"",
            "[tools.shell]\nnetwork = \"x\"",
            "[tools.shell]\nnetwork = [\"a\", 1]",
            "[tools.shell]\nnetwork = { a = 1 }",
            "[tools.shell.host_lists]\nrust = \"x\"",
            "[tools.shell.host_lists]\nrust = [1]",
            "[tools]\nshell = 3",
            "[tools]\nshells = {}",
            "tools.shell.default_timeout = \"x\"",
            "tools = { shell = { sandbox = \"no\" } }",
            "[permissions]\ndeny = \"read_file\"",
            "[permissions]\nallow = [{ a = 1 }]",
            "[mcp]\nworkers = \"8\"",
            "[mcp]\nworker = 8",
            "[undo]\nmax_bytes = true",
            "workspace_root = 3",
            "trusted_workspaces = [3]",
            "deny_read = [\"~/.ssh\", false]",
            "[[mcp]]\nworkers = 1",
            "zz = 1\nyy = 2",
            "[tools.shell]\nzz = 1\nallowed = 2",
            "# é\nmax_file_size_bytes = \"é\"",
            "max_file_size_bytes = 1\nmax_file_size_bytes = 2",
            "max_output_bytes = inf",
            "max_output_bytes = -inf",
            "max_output_bytes = 99999999999999999999",
            "max_output_bytes = 0xffffffffffffffffffffffffffffffff",
            "max_output_bytes = 999999999999999999999999999999999999999999",
            "[tools.shell]\nallowed_commands = [1e999]",
            "[tools.shell]\nallowed_commands = [nan]",
            "[tools.shell]\nallowed_commands = [\"ls\", -inf]",
            "[permissions]\nallow = [99999999999999999999]",
            "workspace_root = +inf",
            "[tools.shell]\nnetwork = nan",
            "[tools.shell.zz]\na = 1",
            "[tools.shell]\nshell = 1",
            "[tools.shell]\nzz = { a = [1] }",
            "[tools.shell]\nzz = [{ a = 1 }]",
            "tools = 1979-05-27",
            "[tools]\nshell = 07:32:00",
            "[tools.shell]\nnetwork = [\"a\", { b = 1 }]",
            "[tools.shell]\nhost_lists = { rust = [\"a\", 2] }",
            "[tools.shell]\nhost_lists = { rust = [\"a\"], js = \"b\" }",
            "[[tools.shell.host_lists.rust]]\na = 1",
            "max_output_bytes = 5\n[tools.shell]\ndefault_timeout = 3\nsandbox = 4",
            "max_file_size_bytes = ",
            "[tools.shell\n",
            "a = \"unclosed",
        ];
        let mut differ = Vec::new();
        for text in cases {
            let theirs = toml::from_str::<Config>(text)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let ours = from_str::<Config>(text).map(|_| ());
            assert!(theirs.is_err(), "{text:?} is accepted");
            if ours != theirs {
                differ.push(format!("{text:?}\n ours: {ours:?}\n toml: {theirs:?}"));
            }
        }
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }

    /// A tool name is refused after it was read as a string; toml's deserializer then marked
    /// the whole list, this marks the name.
    #[test]
    fn an_unknown_tool_is_marked_in_its_list() {
        let text = "[permissions]\ndeny = [\"read_file\", \"rm_rf\"]";
        let message = from_str::<Config>(text).map(|_| ()).expect_err("rm_rf");
        let expected = "TOML parse error at line 2, column 22\n  |\n2 | deny = [\"read_file\", \"rm_rf\"]\n  |                      ^^^^^^^\nunknown tool 'rm_rf' (known: ";
        assert!(message.starts_with(expected), "{message}");
        let theirs = toml::from_str::<Config>(text)
            .map(|_| ())
            .map_err(|e| e.to_string());
        let theirs = theirs.expect_err("rm_rf");
        assert_eq!(
            message.lines().skip(4).collect::<Vec<_>>(),
            theirs.lines().skip(4).collect::<Vec<_>>()
        );
    }

    #[test]
    fn what_toml_accepts_reads_the_same() {
        let text = "max_file_size_bytes = 0x10\nmax_output_bytes = 1_000\n\
                    workspace_root = '/w'\n[tools.shell]\nnetwork = [\"a.example\", \"@l\"]\n\
                    default_timeout = 0o17\n[tools.shell.host_lists]\nl = [\"b.example:443\"]\n\
                    [permissions]\ndeny = [\"read_file\"]\n";
        let theirs: Config = toml::from_str(text).expect("toml");
        let ours: Config = from_str(text).expect("ours");
        assert_eq!(ours, theirs);
        assert_eq!(ours.max_file_size_bytes, 16);
    }
}
