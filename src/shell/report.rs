//! `sneaky-run --print-policy`: the effective command lists, where each entry came from, and
//! the sandbox settings, as text or JSON.

use crate::config::commands::{EffectiveLists, Origin};
use crate::config::{Config, Source};

/// The report for `config`, read from `source`.
pub fn policy_report(config: &Config, source: &Source, json: bool) -> String {
    let shell = &config.tools.shell;
    let lists = EffectiveLists::from_config(shell);
    let from = match source {
        Source::Defaults => "built-in defaults".to_string(),
        Source::File(p) => p.display().to_string(),
    };
    let entries = |l: &[(String, Origin)]| {
        l.iter()
            .map(|(n, o)| serde_json::json!({"name": n, "from": o.describe()}))
            .collect::<Vec<_>>()
    };
    if json {
        let value = serde_json::json!({
            "config": from,
            "mode": if lists.mode.is_strict() { "strict" } else { "contained" },
            "mode_reason": lists.mode.describe(),
            "allowed_commands": entries(&lists.allowed),
            "denied_commands": entries(&lists.denied),
            "runnable": lists.runnable(),
            "untrusted_requests": shell.untrusted_requests,
            "sandbox": shell.sandbox,
            "network": shell.network.to_json(),
            "require_layers": shell.required_layers().0,
            "container_boundary": shell.container_boundary,
            "exec_paths": shell.exec_paths,
            "exec_workspace_dirs": shell.exec_workspace_dirs,
        });
        return value.to_string();
    }
    let mut out = format!(
        "configuration: {from}\nprograms: {}\n",
        lists.mode.describe()
    );
    let mut section = |title: &str, l: &[(String, Origin)]| {
        out.push_str(&format!("{title} ({}):\n", l.len()));
        for (n, o) in l {
            out.push_str(&format!("  {n:<16} {}\n", o.describe()));
        }
    };
    section(
        match lists.mode.is_strict() {
            true => "allowed commands",
            false => "let run despite the built-in deny list",
        },
        &lists.allowed,
    );
    section("denied commands", &lists.denied);
    if !shell.untrusted_requests.is_empty() {
        out.push_str(&format!(
            "ignored (the workspace's sneaky.toml is not trusted): {}\n",
            shell.untrusted_requests.join(", ")
        ));
    }
    out.push_str(&format!(
        "sandbox: {}; network: {}; require_layers: [{}]",
        shell.sandbox,
        shell.network.describe(),
        shell.required_layers().0.join(", ")
    ));
    out
}
