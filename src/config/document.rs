//! The configuration file read as a TOML document: parsed by toml's parser into its tree of
//! values with their places in the text, and the configuration read from that tree by the
//! readers below, which say what serde's derived `Deserialize` and toml's deserializer say,
//! word for word, where they refuse something (a test compares them on a corpus of broken
//! files). A serde deserializer instantiated for every configuration struct was about 110 KB
//! of each binary (toml's), or 60 KB (serde_json's, reading a JSON value of the file); these
//! readers are a few KB.
//!
//! A refusal is shown as toml shows it: the line and column, the line, and carets under the
//! key (an unknown key) or the value (a value of the wrong type or form).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::PathBuf;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::network::{HostLists, EXPECTED as NETWORK_EXPECTED};
use super::{Config, Mcp, Network, Permissions, Shell, Tools, Undo};
use crate::catalog::ToolName;
use crate::hooks::{Hook, Hooks, Names};

/// A refusal: the span it is about, and serde's words for it.
type Fault = (Range<usize>, String);

type Node<'i> = Spanned<DeValue<'i>>;

/// The name toml's deserializer gives the one key of the map it reads a date-time as.
const DATETIME_KEY: &str = "$__toml_private_datetime";

/// Read the configuration from the TOML `text`; the error is the message users see.
pub fn read(text: &str) -> Result<Config, String> {
    let root = DeTable::parse(text).map_err(|e| e.to_string())?;
    let root = Spanned::new(root.span(), DeValue::Table(root.into_inner()));
    config(&root).map_err(|(span, message)| {
        let mut shown = String::new();
        render(&mut shown, text, span, &message);
        shown
    })
}

fn config(node: &Node<'_>) -> Result<Config, Fault> {
    let Config {
        mut max_file_size_bytes,
        mut max_output_bytes,
        mut workspace_root,
        mut permissions,
        mut tools,
        mut trusted_workspaces,
        mut allow_vcs_writes,
        mut mcp,
        mut undo,
        mut deny_read,
        mut extra_deny_read,
        mut protected_paths,
        mut extra_protected_paths,
        mut hooks,
    } = Config::default();
    const FIELDS: &[&str] = &[
        "max_file_size_bytes",
        "max_output_bytes",
        "workspace_root",
        "permissions",
        "tools",
        "trusted_workspaces",
        "allow_vcs_writes",
        "mcp",
        "undo",
        "deny_read",
        "extra_deny_read",
        "protected_paths",
        "extra_protected_paths",
        "hooks",
    ];
    table(node, "Config", FIELDS, |key, value| {
        match key {
            "max_file_size_bytes" => max_file_size_bytes = unsigned(value, "u64")?,
            "max_output_bytes" => max_output_bytes = unsigned(value, "u64")?,
            "workspace_root" => workspace_root = Some(path(value)?),
            "permissions" => permissions = permissions_of(value)?,
            "tools" => tools = tools_of(value)?,
            "trusted_workspaces" => trusted_workspaces = list(value, path)?,
            "allow_vcs_writes" => allow_vcs_writes = boolean(value)?,
            "mcp" => mcp = mcp_of(value)?,
            "undo" => undo = undo_of(value)?,
            "deny_read" => deny_read = Some(strings(value)?),
            "extra_deny_read" => extra_deny_read = strings(value)?,
            "protected_paths" => protected_paths = Some(strings(value)?),
            "hooks" => hooks = hooks_of(value)?,
            _ => extra_protected_paths = strings(value)?,
        }
        Ok(())
    })?;
    Ok(Config {
        max_file_size_bytes,
        max_output_bytes,
        workspace_root,
        permissions,
        tools,
        trusted_workspaces,
        allow_vcs_writes,
        mcp,
        undo,
        deny_read,
        extra_deny_read,
        protected_paths,
        extra_protected_paths,
        hooks,
    })
}

fn hooks_of(node: &Node<'_>) -> Result<Hooks, Fault> {
    let Hooks {
        mut pre_tool_use,
        mut post_tool_use,
        mut stop,
        ignored_in_workspace,
    } = Hooks::default();
    let fields = &["PreToolUse", "PostToolUse", "Stop"];
    table(node, "Hooks", fields, |key, value| {
        let hooks = list(value, hook_of)?;
        match key {
            "PreToolUse" => pre_tool_use = hooks,
            "PostToolUse" => post_tool_use = hooks,
            _ => stop = hooks,
        }
        Ok(())
    })?;
    Ok(Hooks {
        pre_tool_use,
        post_tool_use,
        stop,
        ignored_in_workspace,
    })
}

fn hook_of(node: &Node<'_>) -> Result<Hook, Fault> {
    let Hook {
        mut matcher,
        mut command,
        mut timeout,
        mut fail_open,
        mut names,
    } = Hook::default();
    let fields = &["matcher", "command", "timeout", "fail_open", "names"];
    table(node, "Hook", fields, |key, value| {
        match key {
            "matcher" => matcher = string(value)?,
            "command" => command = string(value)?,
            "timeout" => timeout = unsigned(value, "u64")?,
            "fail_open" => fail_open = boolean(value)?,
            _ => names = names_of(value)?,
        }
        Ok(())
    })?;
    Ok(Hook {
        matcher,
        command,
        timeout,
        fail_open,
        names,
    })
}

/// `names`: a unit variant's name, as serde reads an enum from a string.
fn names_of(node: &Node<'_>) -> Result<Names, Fault> {
    let DeValue::String(s) = node.get_ref() else {
        // toml's own words for an enum given neither as a string nor as a table.
        return Err((node.span(), "wanted string or table".to_string()));
    };
    Names::ALL
        .iter()
        .find(|(name, _)| *name == s.as_ref())
        .map(|(_, names)| *names)
        .ok_or_else(|| {
            (
                node.span(),
                format!("unknown variant `{s}`, expected `sneaky` or `claude`"),
            )
        })
}

fn permissions_of(node: &Node<'_>) -> Result<Permissions, Fault> {
    let Permissions {
        mut deny,
        mut allow,
        mut confirm,
    } = Permissions::default();
    table(
        node,
        "Permissions",
        &["deny", "allow", "confirm"],
        |key, value| {
            let tools = list(value, tool)?;
            match key {
                "deny" => deny = tools,
                "allow" => allow = tools,
                _ => confirm = tools,
            }
            Ok(())
        },
    )?;
    Ok(Permissions {
        deny,
        allow,
        confirm,
    })
}

fn tools_of(node: &Node<'_>) -> Result<Tools, Fault> {
    let Tools { mut shell } = Tools::default();
    table(node, "Tools", &["shell"], |_, value| {
        shell = shell_of(value)?;
        Ok(())
    })?;
    Ok(Tools { shell })
}

fn mcp_of(node: &Node<'_>) -> Result<Mcp, Fault> {
    let mut mcp = Mcp::default();
    const KEYS: &[&str] = &[
        "workers",
        "resume_seconds",
        "resume_session_bytes",
        "resume_total_bytes",
    ];
    table(node, "Mcp", KEYS, |key, value| {
        match key {
            "workers" => {
                mcp.workers = usize::try_from(unsigned(value, "usize")?).unwrap_or(usize::MAX)
            }
            "resume_seconds" => mcp.resume_seconds = unsigned(value, "u64")?,
            "resume_session_bytes" => mcp.resume_session_bytes = unsigned(value, "u64")?,
            _ => mcp.resume_total_bytes = unsigned(value, "u64")?,
        }
        Ok(())
    })?;
    Ok(mcp)
}

fn undo_of(node: &Node<'_>) -> Result<Undo, Fault> {
    let Undo { mut max_bytes } = Undo::default();
    table(node, "Undo", &["max_bytes"], |_, value| {
        max_bytes = unsigned(value, "u64")?;
        Ok(())
    })?;
    Ok(Undo { max_bytes })
}

// Long: one line per key of [tools.shell] (destructured so that a new field of Shell fails to
// compile here until it is read), not one step per line.
fn shell_of(node: &Node<'_>) -> Result<Shell, Fault> {
    let Shell {
        mut strict,
        mut allowed_commands,
        mut extra_allowed_commands,
        mut denied_commands,
        mut default_timeout,
        mut sandbox,
        mut network,
        mut host_lists,
        mut pass_env,
        mut read_paths,
        mut write_paths,
        mut exec_paths,
        mut exec_workspace_dirs,
        mut unix_sockets,
        mut require_layers,
        mut container_boundary,
        mut max_processes,
        mut max_file_bytes,
        mut max_cpu_seconds,
        mut max_job_seconds,
        mut yield_after_seconds,
        untrusted_requests,
    } = Shell::default();
    const FIELDS: &[&str] = &[
        "strict",
        "allowed_commands",
        "extra_allowed_commands",
        "denied_commands",
        "default_timeout",
        "sandbox",
        "network",
        "host_lists",
        "pass_env",
        "read_paths",
        "write_paths",
        "exec_paths",
        "exec_workspace_dirs",
        "unix_sockets",
        "require_layers",
        "container_boundary",
        "max_processes",
        "max_file_bytes",
        "max_cpu_seconds",
        "max_job_seconds",
        "yield_after_seconds",
    ];
    table(node, "Shell", FIELDS, |key, value| {
        match key {
            "strict" => strict = boolean(value)?,
            "allowed_commands" => allowed_commands = Some(strings(value)?),
            "extra_allowed_commands" => extra_allowed_commands = strings(value)?,
            "denied_commands" => denied_commands = Some(strings(value)?),
            "default_timeout" => default_timeout = unsigned(value, "u64")?,
            "sandbox" => sandbox = boolean(value)?,
            "network" => network = network_of(value)?,
            "host_lists" => host_lists = host_lists_of(value)?,
            "pass_env" => pass_env = strings(value)?,
            "read_paths" => read_paths = Some(strings(value)?),
            "write_paths" => write_paths = strings(value)?,
            "exec_paths" => exec_paths = strings(value)?,
            "exec_workspace_dirs" => exec_workspace_dirs = strings(value)?,
            "unix_sockets" => unix_sockets = strings(value)?,
            "require_layers" => require_layers = Some(strings(value)?),
            "container_boundary" => container_boundary = boolean(value)?,
            "max_processes" => max_processes = unsigned(value, "u64")?,
            "max_file_bytes" => max_file_bytes = unsigned(value, "u64")?,
            "max_cpu_seconds" => max_cpu_seconds = unsigned(value, "u64")?,
            "max_job_seconds" => max_job_seconds = unsigned(value, "u64")?,
            _ => yield_after_seconds = unsigned(value, "u64")?,
        }
        Ok(())
    })?;
    Ok(Shell {
        strict,
        allowed_commands,
        extra_allowed_commands,
        denied_commands,
        default_timeout,
        sandbox,
        network,
        host_lists,
        pass_env,
        read_paths,
        write_paths,
        exec_paths,
        exec_workspace_dirs,
        unix_sockets,
        require_layers,
        container_boundary,
        max_processes,
        max_file_bytes,
        max_cpu_seconds,
        max_job_seconds,
        yield_after_seconds,
        untrusted_requests,
    })
}

/// A struct (`#[serde(deny_unknown_fields, default)]`): a table, each key one of `fields`,
/// handed to `field` in the table's order; or, as serde's derive also reads a struct, an
/// array of the fields' values in their order (toml ignores elements past the last field).
/// A date-time reads as a map of one unknown key.
fn table<'i>(
    node: &Node<'i>,
    name: &str,
    fields: &[&'static str],
    mut field: impl FnMut(&'static str, &Node<'i>) -> Result<(), Fault>,
) -> Result<(), Fault> {
    match node.get_ref() {
        DeValue::Table(entries) => {
            for (key, value) in entries.iter() {
                let Some(known) = fields.iter().find(|f| **f == key.get_ref().as_ref()) else {
                    return Err((key.span(), unknown_field(key.get_ref().as_ref(), fields)));
                };
                field(known, value)?;
            }
            Ok(())
        }
        DeValue::Array(items) => {
            for (known, value) in fields.iter().zip(items.iter()) {
                field(known, value)?;
            }
            Ok(())
        }
        DeValue::Datetime(_) => Err((node.span(), unknown_field(DATETIME_KEY, fields))),
        _ => Err(refused(node, &format!("struct {name}"))?),
    }
}

/// serde's words for an unknown field.
fn unknown_field(key: &str, fields: &[&str]) -> String {
    let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    let expected = match quoted.as_slice() {
        [] => return format!("unknown field `{key}`, there are no fields"),
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        more => format!("one of {}", more.join(", ")),
    };
    format!("unknown field `{key}`, expected {expected}")
}

/// An unsigned integer; `name` is the Rust type serde names (`u64`, `usize`).
fn unsigned(node: &Node<'_>, name: &str) -> Result<u64, Fault> {
    if let DeValue::Integer(n) = node.get_ref() {
        match i64::from_str_radix(n.as_str(), n.radix()) {
            Ok(i) => {
                return u64::try_from(i).map_err(|_| {
                    (
                        node.span(),
                        format!("invalid value: integer `{i}`, expected {name}"),
                    )
                })
            }
            Err(_) => {
                if let Ok(u) = u64::from_str_radix(n.as_str(), n.radix()) {
                    return Ok(u);
                }
            }
        }
    }
    Err(refused(node, name)?)
}

fn boolean(node: &Node<'_>) -> Result<bool, Fault> {
    match node.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        _ => Err(refused(node, "a boolean")?),
    }
}

/// A string; `expected` is what its type calls itself.
fn string_as(node: &Node<'_>, expected: &str) -> Result<String, Fault> {
    match node.get_ref() {
        DeValue::String(s) => Ok(s.to_string()),
        _ => Err(refused(node, expected)?),
    }
}

fn string(node: &Node<'_>) -> Result<String, Fault> {
    string_as(node, "a string")
}

fn path(node: &Node<'_>) -> Result<PathBuf, Fault> {
    string_as(node, "path string").map(PathBuf::from)
}

/// A tool's name; an unknown one is refused at the name.
fn tool(node: &Node<'_>) -> Result<ToolName, Fault> {
    string(node)?
        .parse()
        .map_err(|e: crate::catalog::UnknownTool| (node.span(), e.to_string()))
}

fn list<'i, T>(
    node: &Node<'i>,
    item: impl Fn(&Node<'i>) -> Result<T, Fault>,
) -> Result<Vec<T>, Fault> {
    match node.get_ref() {
        DeValue::Array(items) => items.iter().map(item).collect(),
        _ => Err(refused(node, "a sequence")?),
    }
}

fn strings(node: &Node<'_>) -> Result<Vec<String>, Fault> {
    list(node, string)
}

/// `network`: `false`, `true` or a list of hosts (src/config/network.rs).
fn network_of(node: &Node<'_>) -> Result<Network, Fault> {
    match node.get_ref() {
        DeValue::Boolean(true) => Ok(Network::On),
        DeValue::Boolean(false) => Ok(Network::Off),
        DeValue::Array(_) => strings(node).map(Network::Hosts),
        _ => Err(refused(node, NETWORK_EXPECTED)?),
    }
}

/// `host_lists`: a table of lists of hosts. A date-time reads as a map whose one value is
/// its text, which is not a list.
fn host_lists_of(node: &Node<'_>) -> Result<HostLists, Fault> {
    match node.get_ref() {
        DeValue::Table(entries) => {
            let mut lists = BTreeMap::new();
            for (name, hosts) in entries.iter() {
                lists.insert(name.get_ref().to_string(), strings(hosts)?);
            }
            Ok(lists)
        }
        DeValue::Datetime(d) => Err((
            node.span(),
            format!(
                "invalid type: string {:?}, expected a sequence",
                d.to_string()
            ),
        )),
        _ => Err(refused(node, "a map")?),
    }
}

/// serde's refusal of `node` where `expected` belongs ("invalid type: integer `5`, expected a
/// string"); or, for a number no Rust number holds, toml's own refusal of it.
fn refused(node: &Node<'_>, expected: &str) -> Result<Fault, Fault> {
    let overflow = |what: &str| Err((node.span(), format!("{what} number overflowed")));
    let found = match node.get_ref() {
        DeValue::String(s) => format!("string {:?}", s.as_ref()),
        DeValue::Integer(n) => {
            let (digits, radix) = (n.as_str(), n.radix());
            if let Ok(i) = i64::from_str_radix(digits, radix) {
                format!("integer `{i}`")
            } else if let Ok(u) = u64::from_str_radix(digits, radix) {
                format!("integer `{u}`")
            } else if let Ok(i) = i128::from_str_radix(digits, radix) {
                format!("integer `{i}` as i128")
            } else if let Ok(u) = u128::from_str_radix(digits, radix) {
                format!("integer `{u}` as u128")
            } else {
                return overflow("integer");
            }
        }
        DeValue::Float(f) => {
            let text = f.as_str();
            match text.parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    let shown = x.to_string();
                    let point = if shown.contains('.') { "" } else { ".0" };
                    format!("floating point `{shown}{point}`")
                }
                Ok(x) if !x.is_infinite() || text.contains("inf") => {
                    format!("floating point `{x}`")
                }
                _ => return overflow("floating-point"),
            }
        }
        DeValue::Boolean(b) => format!("boolean `{b}`"),
        DeValue::Array(_) => "sequence".to_string(),
        DeValue::Table(_) | DeValue::Datetime(_) => "map".to_string(),
    };
    Ok((
        node.span(),
        format!("invalid type: {found}, expected {expected}"),
    ))
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
            "[[hooks.PreToolUse]]\ncommand = 3",
            "[[hooks.PreToolUse]]\ncommand = \"x\"\nnames = \"codex\"",
            "[[hooks.PreToolUse]]\ncommand = \"x\"\nnames = 3",
            "[[hooks.PreToolUse]]\ncommand = \"x\"\ntimeout = -1",
            "[[hooks.PreToolUse]]\ncommand = \"x\"\nfail_open = \"yes\"",
            "[[hooks.PreToolUse]]\ncmd = \"x\"",
            "[[hooks.Pre]]\ncommand = \"x\"",
            "[hooks]\nPreToolUse = \"x\"",
        ];
        let mut differ = Vec::new();
        for text in cases {
            let theirs = toml::from_str::<Config>(text)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let ours = read(text).map(|_| ());
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
        let message = read(text).map(|_| ()).expect_err("rm_rf");
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

    /// Random documents: every key of every table, and unknown ones, given values of every
    /// TOML type (numbers past every Rust number's range, NaN, date-times, arrays and tables of
    /// any of these), in tables, inline tables, dotted keys and arrays of tables. The reader
    /// accepts what toml's deserializer accepts, with the same result, and refuses the rest
    /// with the same words at the same place.
    #[test]
    fn random_documents_read_as_toml_reads_them() {
        let mut seed: u64 = 0x5eed_c0f1;
        let mut next = move |n: usize| -> usize {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            usize::try_from(seed >> 33).unwrap_or(0) % n.max(1)
        };
        const TOP: &[&str] = &[
            "max_file_size_bytes",
            "max_output_bytes",
            "workspace_root",
            "trusted_workspaces",
            "allow_vcs_writes",
            "deny_read",
            "extra_deny_read",
            "protected_paths",
            "extra_protected_paths",
            "zz",
        ];
        const SHELL: &[&str] = &[
            "strict",
            "allowed_commands",
            "extra_allowed_commands",
            "denied_commands",
            "default_timeout",
            "sandbox",
            "network",
            "host_lists",
            "pass_env",
            "read_paths",
            "write_paths",
            "exec_paths",
            "exec_workspace_dirs",
            "unix_sockets",
            "require_layers",
            "container_boundary",
            "max_processes",
            "max_file_bytes",
            "max_cpu_seconds",
            "max_job_seconds",
            "yield_after_seconds",
            "untrusted_requests",
            "shell",
        ];
        const MCP: &[&str] = &[
            "workers",
            "resume_seconds",
            "resume_session_bytes",
            "resume_total_bytes",
            "zz",
        ];
        const TABLES: &[(&str, &[&str])] = &[
            ("", TOP),
            ("[tools.shell]", SHELL),
            ("[tools]", &["shell", "zz"]),
            ("[permissions]", &["deny", "allow", "confirm", "zz"]),
            ("[mcp]", MCP),
            ("[[mcp]]", MCP),
            ("[undo]", &["max_bytes", "zz"]),
            ("[tools.shell.host_lists]", &["rust", "js", "zz"]),
            ("[tools.shell.zz]", &["a"]),
        ];
        const SCALARS: &[&str] = &[
            "0",
            "3",
            "-1",
            "0x10",
            "9223372036854775808",
            "99999999999999999999",
            "999999999999999999999999999999999999999999",
            "1.5",
            "2e300",
            "nan",
            "-inf",
            "1e999",
            "true",
            "false",
            "\"read_file\"",
            "\"ls\"",
            "\"/abs\"",
            "\"*.pkg.example\"",
            "1979-05-27T07:32:00Z",
            "07:32:00",
        ];
        fn value(next: &mut impl FnMut(usize) -> usize, depth: usize) -> String {
            match next(if depth > 1 { 1 } else { 4 }) {
                0 => SCALARS[next(SCALARS.len())].to_string(),
                1 | 2 => {
                    let items: Vec<String> = (0..next(4)).map(|_| value(next, depth + 1)).collect();
                    format!("[{}]", items.join(", "))
                }
                _ => {
                    let keys = ["workers", "shell", "max_bytes", "deny", "a", "network"];
                    let items: Vec<String> = (0..next(3))
                        .map(|i| {
                            format!("{}{i} = {}", keys[next(keys.len())], value(next, depth + 1))
                        })
                        .collect();
                    format!("{{ {} }}", items.join(", "))
                }
            }
        }
        let mut compared = (0, 0);
        for _ in 0..4000 {
            let mut text = String::new();
            let mut used = std::collections::BTreeSet::new();
            for _ in 0..1 + next(3) {
                let (header, keys) = TABLES[next(TABLES.len())];
                if !header.is_empty() && !header.starts_with("[[") && !used.insert(header) {
                    continue;
                }
                text.push_str(header);
                text.push('\n');
                let mut here = std::collections::BTreeSet::new();
                for _ in 0..next(4) {
                    let key = keys[next(keys.len())];
                    if here.insert(key) {
                        text.push_str(&format!("{key} = {}\n", value(&mut next, 0)));
                    }
                }
            }
            let theirs = toml::from_str::<Config>(&text).map_err(|e| e.to_string());
            if theirs
                .as_ref()
                .is_err_and(|m| m.contains("unknown tool") || m.contains("duplicate key"))
            {
                continue;
            }
            let ours = read(&text);
            match (&ours, &theirs) {
                (Ok(_), Ok(_)) => compared.0 += 1,
                _ => compared.1 += 1,
            }
            assert_eq!(ours, theirs, "{text}");
        }
        // Both outcomes were exercised.
        assert!(compared.0 > 100 && compared.1 > 1000, "{compared:?}");
    }

    #[test]
    fn what_toml_accepts_reads_the_same() {
        let text = "max_file_size_bytes = 0x10\nmax_output_bytes = 1_000\n\
                    workspace_root = '/w'\n[tools.shell]\nnetwork = [\"a.example\", \"@l\"]\n\
                    default_timeout = 0o17\n[tools.shell.host_lists]\nl = [\"b.example:443\"]\n\
                    [permissions]\ndeny = [\"read_file\"]\n\
                    [[hooks.PreToolUse]]\nmatcher = \"write_file\"\ncommand = \"/bin/check\"\n\
                    timeout = 5\nfail_open = true\nnames = \"claude\"\n\
                    [[hooks.PostToolUse]]\ncommand = \"after\"\n";
        let theirs: Config = toml::from_str(text).expect("toml");
        let ours: Config = read(text).expect("ours");
        assert_eq!(ours, theirs);
        assert_eq!(ours.max_file_size_bytes, 16);
        assert_eq!(ours.hooks.pre_tool_use[0].names, Names::Claude);
        assert_eq!(ours.hooks.post_tool_use[0].timeout, 5 * 12);
    }
}
