//! Generated files are committed; these tests regenerate them in memory and fail on drift.
//! Regenerate with: SNEAKY_REGENERATE=1 cargo test --test suite generated

use std::path::Path;

use sneaky::tools::{all, output_schema_file_text, schema_file_text};

pub const REGENERATE_HINT: &str =
    "run `SNEAKY_REGENERATE=1 cargo test --test suite generated` to update";

/// Compare a generated file with the committed one, or write it when regenerating.
pub fn check_or_write(path: &Path, expected: &str) {
    if std::env::var_os("SNEAKY_REGENERATE").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create dir");
        }
        std::fs::write(path, expected).expect("write generated file");
        return;
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is out of date with the code; {REGENERATE_HINT}",
        path.display()
    );
}

#[test]
fn schemas_match_the_argument_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for spec in all() {
        // What the hosts serve as outputSchema is the committed text.
        let output = output_schema_file_text(spec);
        check_or_write(&dir.join(format!("{}.output.json", spec.name())), &output);
        if std::env::var_os("SNEAKY_REGENERATE").is_none() {
            assert_eq!(
                spec.output_schema(),
                spec.generate_output_schema(),
                "{}: stale",
                spec.name()
            );
        }
        let text = schema_file_text(spec);
        check_or_write(&dir.join(format!("{}.json", spec.name())), &text);
        // The embedded copy is what --schema prints and what the flags are built from.
        if std::env::var_os("SNEAKY_REGENERATE").is_none() {
            assert_eq!(
                spec.schema,
                text,
                "{}: binary embeds a stale schema; rebuild",
                spec.name()
            );
        }
    }
}

/// The date the man pages carry; bump it with the version.
const MAN_DATE: &str = "2026-11-29";

/// What every program's ENVIRONMENT section says of the fence on the walk up.
const CEILING_HELP: &str = "colon-separated absolute directories the search for sneaky.toml or \
     .git does not enter: the current directory is always looked at, its parents only below \
     the first listed one (links resolved; empty and relative entries ignored)";

const COMMON_CONFIG: &[&str] = &[
    "workspace_root: the workspace when neither --root nor SNEAKY_ROOT is given (top-level key; \
     relative to the configuration file's directory; a project's own sneaky.toml cannot move it)",
    "permissions.deny, permissions.allow, permissions.confirm: the tool's tier",
];

fn roff_section(r: &mut roff::Roff, title: &str) {
    r.control("SH", [title]);
}

fn roff_item(r: &mut roff::Roff, term: &str, body: &str) {
    r.control("TP", []);
    r.text([roff::bold(term)]);
    r.text([roff::roman(body)]);
}

fn roff_example(r: &mut roff::Roff, lines: &str) {
    r.control("EX", []);
    for line in lines.lines() {
        r.text([roff::roman(line)]);
    }
    r.control("EE", []);
}

/// The tool's `Doc::text` example: the files it starts from, the shell line, what it prints.
fn text_example(r: &mut roff::Roff, spec: &sneaky::tools::ToolSpec) {
    let example = spec.doc.text;
    r.control("PP", []);
    let files: Vec<String> = example
        .files
        .iter()
        .map(|(path, content)| format!("{path} holding {content:?}"))
        .collect();
    r.text([roff::roman(if files.is_empty() {
        "For example, in an empty workspace:".to_string()
    } else {
        format!("For example, in a workspace with {}:", files.join(" and "))
    })]);
    r.control("PP", []);
    let mut line = String::from("$ ");
    if !example.stdin.is_empty() {
        line.push_str(&format!("printf '%s' {} | ", shell_quote(example.stdin)));
    }
    line.push_str(spec.binary());
    for arg in example.args {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    line.push_str(" --format text\n");
    let mut shown = line;
    shown.push_str(example.stdout);
    shown.push_str(example.stderr);
    if example.status != 0 {
        shown.push_str(&format!("$ echo $?\n{}\n", example.status));
    }
    roff_example(r, &shown);
}

/// A word as a POSIX shell reads it back: bare when it is plain, else in single quotes.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-=:".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The properties of a schema with their type and description, for the man pages.
fn described_properties(schema: &serde_json::Value) -> Vec<(String, String, String, bool)> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    sneaky::protocol::schema_properties(schema)
        .into_iter()
        .map(|(name, ty, desc)| {
            let req = required.contains(&name.as_str());
            (name, ty, desc, req)
        })
        .collect()
}

/// The page's header and the sections clap_mangen renders from the command itself.
fn man_head(cmd: clap::Command) -> (clap_mangen::Man, Vec<u8>) {
    let has_subcommands = cmd.has_subcommands();
    let man = clap_mangen::Man::new(cmd)
        .date(MAN_DATE)
        .source(format!("sneaky {}", env!("CARGO_PKG_VERSION")))
        .manual("SneakyCode Manual");
    let mut out = Vec::new();
    man.render_title(&mut out).expect("render");
    man.render_name_section(&mut out).expect("render");
    man.render_synopsis_section(&mut out).expect("render");
    man.render_description_section(&mut out).expect("render");
    man.render_options_section(&mut out).expect("render");
    if has_subcommands {
        man.render_subcommands_section(&mut out).expect("render");
    }
    (man, out)
}

fn man_page(spec: &sneaky::tools::ToolSpec) -> String {
    let schema: serde_json::Value = serde_json::from_str(spec.schema).expect("schema");
    let cmd = sneaky::protocol::build_command(spec, &schema);
    let (man, mut out) = man_head(cmd);
    let doc = spec.doc;
    let mut r = roff::Roff::new();
    roff_section(&mut r, "INPUT");
    r.text([roff::roman(format!(
        "The tool {} reads one JSON object on stdin holding its arguments, or the same arguments \
         as the flags above (then stdin is not parsed as JSON). The arguments are checked against \
         the schema that --schema prints before anything runs.",
        spec.name()
    ))]);
    for (name, ty, desc, req) in described_properties(&schema) {
        let kind = if req {
            format!("{ty}, required")
        } else {
            format!("{ty}, optional")
        };
        roff_item(&mut r, &format!("{name} ({kind})"), &desc);
    }
    r.control("PP", []);
    r.text([roff::roman("Example request:")]);
    r.control("PP", []);
    roff_example(
        &mut r,
        &format!("echo '{}' | {}", doc.example, spec.binary()),
    );
    roff_section(&mut r, "RESULT");
    r.text([roff::roman(format!(
        "One line of JSON on stdout: {{\"ok\":true,\"tool\":\"{}\",\"result\":{{...}}}} on success, \
         {{\"ok\":false,\"tool\":\"{}\",\"error\":{{\"code\":...,\"message\":...}}}} on failure. The result holds:",
        spec.name(), spec.name()
    ))]);
    let output = spec.output_schema();
    for (name, ty, desc, _) in described_properties(&output) {
        roff_item(&mut r, &format!("{name} ({ty})"), &desc);
    }
    roff_section(&mut r, "TEXT FORMAT");
    r.text([roff::roman(format!(
        "With --format text the tool prints, for people, {}. A failure is one line \
         {}: CODE: message on stderr, and a result that was cut says so on stderr. The exit \
         status is the same as with JSON.",
        spec.text_format,
        spec.binary()
    ))]);
    text_example(&mut r, spec);
    roff_section(&mut r, "EXIT STATUS");
    for (code, meaning) in [
        ("0", "success"),
        (
            "1",
            if spec.succeeded.is_some() {
                "the command ran but did not succeed (non-zero exit, signal, timeout; the result \
                 is still ok:true with the full output), or the operation failed"
            } else {
                "the operation failed (not found, no match, patch rejected ...)"
            },
        ),
        (
            "2",
            "bad input: invalid JSON, a schema violation, bad flags, a broken config",
        ),
        (
            "3",
            "refused: outside the workspace, tool denied by config, command not allowed",
        ),
    ] {
        roff_item(&mut r, code, meaning);
    }
    roff_section(&mut r, "ERRORS");
    r.text([roff::roman("error.code is one of these stable words:")]);
    for kind in sneaky::error::ErrorKind::ALL {
        roff_item(
            &mut r,
            kind.code(),
            &format!("{} (exit {})", kind.meaning(), kind.exit_status()),
        );
    }
    roff_section(&mut r, "ENVIRONMENT");
    let mut env = vec![
        (
            "SNEAKY_ROOT",
            "workspace root when --root is not given (else workspace_root in the configuration, \
             else the nearest directory at or above the current one holding sneaky.toml or .git; \
             with none of these the tool refuses to guess, exit 2)",
        ),
        ("SNEAKY_CEILING_DIRECTORIES", CEILING_HELP),
        (
            "SNEAKY_CONFIG",
            "configuration file when --config is not given",
        ),
        (
            "XDG_CONFIG_HOME",
            "where the user configuration sneaky/config.toml is looked for (else ~/.config)",
        ),
    ];
    env.extend(doc.env.iter().copied());
    for (name, meaning) in env {
        roff_item(&mut r, name, meaning);
    }
    roff_section(&mut r, "CONFIGURATION");
    r.text([roff::roman(
        "TOML, the first found of: --config FILE, SNEAKY_CONFIG, <root>/sneaky.toml, \
         $XDG_CONFIG_HOME/sneaky/config.toml. Unknown keys are errors. Keys that apply:",
    )]);
    for line in COMMON_CONFIG.iter().chain(doc.config) {
        let (key, meaning) = line.split_once(": ").unwrap_or((line, ""));
        roff_item(&mut r, key, meaning);
    }
    roff_section(&mut r, "EXAMPLES");
    roff_example(&mut r, doc.pipeline);
    // The hosts, not every other tool: a new tool then changes its own page and the hosts'.
    roff_section(&mut r, "SEE ALSO");
    r.text([roff::roman(
        "sneaky-agent(1), sneaky-mcp(1), which list every tool; README.md, \"The tools\"",
    )]);
    r.to_writer(&mut out).expect("render");
    man.render_version_section(&mut out).expect("render");
    String::from_utf8(out).expect("utf8")
}

/// Man page sections of the two programs that are not per-call tools.
struct ProgramDoc {
    input_title: &'static str,
    input: &'static str,
    example: &'static str,
    exit: &'static [(&'static str, &'static str)],
    env: &'static [(&'static str, &'static str)],
    config: &'static [&'static str],
    pipeline: &'static str,
}

fn program_doc(name: &str) -> ProgramDoc {
    match name {
        "sneaky-mcp" => ProgramDoc {
            input_title: "PROTOCOL",
            input: "JSON-RPC 2.0, one message per line on stdin and stdout (the MCP stdio transport). \
                    Methods: initialize, ping, tools/list, tools/call; notifications/initialized and \
                    notifications/cancelled. Protocol versions 2025-11-25, 2025-06-18, 2025-03-26 and \
                    2024-11-05. tools/list offers the tools under their LLM names with their input and \
                    output schemas and annotations; tools denied by the configuration are not offered. \
                    A tool's failure is a result with isError true and the error envelope as \
                    structuredContent; JSON-RPC errors are only for protocol faults. Logs go to stderr.",
            example: r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"README.md"}}}"#,
            exit: &[
                ("0", "the input ended, or the client closed stdout"),
                ("1", "stdin could not be read"),
                ("2", "bad flags, or a workspace or configuration that cannot be opened"),
            ],
            env: &[
                ("SNEAKY_ROOT", "workspace root when --root is not given (else workspace_root in the configuration, else the client's first root, else the nearest directory at or above the current one holding sneaky.toml or .git)"),
                ("SNEAKY_CEILING_DIRECTORIES", CEILING_HELP),
                ("SNEAKY_CONFIG", "configuration file when --config is not given"),
                ("XDG_CONFIG_HOME", "where the user configuration sneaky/config.toml is looked for (else ~/.config)"),
            ],
            config: &[
                "workspace_root: the workspace when neither --root nor SNEAKY_ROOT is given",
                "permissions.deny: tools not offered at all",
                "permissions.allow, permissions.confirm: tiers (--read-only offers only auto-tier read tools)",
                "max_file_size_bytes, max_output_bytes, tools.shell.*: as for the tool binaries",
            ],
            pipeline: "printf '%s\\n' \\\n  '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}' \\\n  '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}' \\\n  '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}' \\\n  | sneaky-mcp | jq -r 'select(.id == 2) | .result.tools[].name'",
        },
        "sneaky-agent" => ProgramDoc {
            input_title: "TOOL CALLS",
            input: "run: a person gives a task; the model (OpenAI Chat Completions with tools, or \
                    Anthropic Messages with --provider anthropic) works on the workspace through the \
                    tool binaries, found beside sneaky-agent, else on PATH. Auto-tier calls run at \
                    once; confirm-tier calls are shown on /dev/tty, with the diff of a dry run for \
                    edits, and answered yes, no, always (this tool, this session) or quit; without a \
                    terminal and without --yes they are refused and the model is told. Denied tools \
                    are never offered. finish ends the run. \
                    pipe: reads tool calls as JSON lines (OpenAI, Anthropic or plain {name, \
                    arguments}) and prints one result line per call in the matching shape. \
                    tools: prints the tool definitions for openai, anthropic or mcp.",
            example: r#"{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"README.md\"}"}}"#,
            exit: &[
                ("0", "the model called finish (run), or every call succeeded (pipe)"),
                ("1", "a failure: the model server, --max-turns reached, a call failed (pipe)"),
                ("2", "bad usage or configuration"),
                ("130", "Ctrl-C, or quit at the approval prompt"),
            ],
            env: &[
                ("OPENAI_API_KEY", "key for the OpenAI-compatible provider"),
                ("OPENAI_BASE_URL", "base URL when --base-url is not given (default the OpenAI API)"),
                ("ANTHROPIC_API_KEY", "key for --provider anthropic"),
                ("ANTHROPIC_BASE_URL", "base URL for --provider anthropic when --base-url is not given"),
                ("SNEAKY_MODEL", "model when --model is not given"),
                ("SNEAKY_ROOT", "workspace root when --root is not given (else workspace_root in the configuration, else the nearest directory at or above the current one holding sneaky.toml or .git)"),
                ("SNEAKY_CEILING_DIRECTORIES", CEILING_HELP),
                ("SNEAKY_CONFIG", "configuration file when --config is not given"),
                ("NO_COLOR", "turns colours off"),
            ],
            config: &[
                "workspace_root: the workspace when neither --root nor SNEAKY_ROOT is given",
                "permissions.deny: tools never offered, and refused if called",
                "permissions.allow: tools run without asking",
                "permissions.confirm: tools that ask first",
            ],
            pipeline: "echo '{\"name\": \"grep_files\", \"arguments\": {\"pattern\": \"TODO\"}}' \\\n  | sneaky-agent pipe | jq -r '.result.matches[].path'",
        },
        other => panic!("no program doc for {other}"),
    }
}

fn program_man_page(cmd: clap::Command) -> String {
    let name = cmd.get_name().to_string();
    let doc = program_doc(&name);
    let (man, mut out) = man_head(cmd);
    let mut r = roff::Roff::new();
    roff_section(&mut r, doc.input_title);
    r.text([roff::roman(doc.input)]);
    r.control("PP", []);
    r.text([roff::roman("Example:")]);
    r.control("PP", []);
    roff_example(&mut r, doc.example);
    roff_section(&mut r, "EXIT STATUS");
    for (code, meaning) in doc.exit {
        roff_item(&mut r, code, meaning);
    }
    roff_section(&mut r, "ENVIRONMENT");
    for (var, meaning) in doc.env {
        roff_item(&mut r, var, meaning);
    }
    roff_section(&mut r, "CONFIGURATION");
    r.text([roff::roman(
        "TOML, the first found of: --config FILE, SNEAKY_CONFIG, <root>/sneaky.toml, \
         $XDG_CONFIG_HOME/sneaky/config.toml. Unknown keys are errors. Keys that apply:",
    )]);
    for line in doc.config {
        let (key, meaning) = line.split_once(": ").unwrap_or((line, ""));
        roff_item(&mut r, key, meaning);
    }
    roff_section(&mut r, "EXAMPLES");
    roff_example(&mut r, doc.pipeline);
    roff_section(&mut r, "SEE ALSO");
    let tools: Vec<String> = all().map(|s| format!("{}(1)", s.binary())).collect();
    r.text([roff::roman(tools.join(", "))]);
    r.to_writer(&mut out).expect("render");
    man.render_version_section(&mut out).expect("render");
    String::from_utf8(out).expect("utf8")
}

/// The clap commands of the programs that are not per-call tools.
fn programs() -> Vec<clap::Command> {
    vec![sneaky::mcp::command(), sneaky::agent::command()]
}

fn completions(cmd: &mut clap::Command, name: &str) -> Vec<(String, String)> {
    use clap_complete::Shell;
    [
        (Shell::Bash, format!("{name}.bash")),
        (Shell::Zsh, format!("_{name}")),
        (Shell::Fish, format!("{name}.fish")),
    ]
    .into_iter()
    .map(|(shell, file)| {
        let mut buf = Vec::new();
        clap_complete::generate(shell, cmd, name, &mut buf);
        let mut text = String::from_utf8(buf).expect("utf8");
        if shell == Shell::Bash {
            text = fix_bash_state_names(&text, name);
        }
        (file, text)
    })
    .collect()
}

/// clap_complete's bash script spells a hyphenated program's subcommand states two ways: its
/// loop sets `sneaky__agent__subcmd__run`, its case arms test `sneaky__subcmd__agent__subcmd__run`,
/// so no subcommand flag ever completes (clap-rs/clap#6421, #6529, unfixed in 4.6.12). Spell the
/// arms as the loop does; `bash_completion_completes_subcommand_flags` checks the result.
fn fix_bash_state_names(script: &str, name: &str) -> String {
    let wrong = format!("{}__subcmd__", name.replace('-', "__subcmd__"));
    let right = format!("{}__subcmd__", name.replace('-', "__"));
    script.replace(&wrong, &right)
}

#[test]
fn man_pages_and_completions_match_the_commands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for spec in all() {
        check_or_write(
            &root.join("man").join(format!("{}.1", spec.binary())),
            &man_page(spec),
        );
        let schema: serde_json::Value = serde_json::from_str(spec.schema).expect("schema");
        let mut cmd = sneaky::protocol::build_command(spec, &schema);
        for (file, text) in completions(&mut cmd, spec.binary()) {
            check_or_write(&root.join("completions").join(file), &text);
        }
    }
    for mut cmd in programs() {
        let name = cmd.get_name().to_string();
        check_or_write(
            &root.join("man").join(format!("{name}.1")),
            &program_man_page(cmd.clone()),
        );
        for (file, text) in completions(&mut cmd, &name) {
            check_or_write(&root.join("completions").join(file), &text);
        }
    }
}

/// Every command of the program (itself and its subcommands, recursively) with the words that
/// lead to it: `[]`, `["run"]` …
fn command_paths(cmd: &clap::Command) -> Vec<(Vec<String>, clap::Command)> {
    let mut out = vec![(Vec::new(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        for (mut words, c) in command_paths(sub) {
            words.insert(0, sub.get_name().to_string());
            out.push((words, c));
        }
    }
    out
}

/// Every program's clap command with its name.
fn every_command() -> Vec<(String, clap::Command)> {
    let mut out: Vec<(String, clap::Command)> = all()
        .map(|spec| {
            let schema: serde_json::Value = serde_json::from_str(spec.schema).expect("schema");
            (
                spec.binary().to_string(),
                sneaky::protocol::build_command(spec, &schema),
            )
        })
        .collect();
    out.extend(
        programs()
            .into_iter()
            .map(|c| (c.get_name().to_string(), c)),
    );
    out
}

/// The committed bash scripts complete as a person types: every long flag of every
/// (sub)command from a prefix, every subcommand name, and `--format`'s values. Each script is
/// sourced in a real bash and its function called with COMP_WORDS, as bash-completion does.
#[test]
fn bash_completion_completes_subcommand_flags() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    for (name, cmd) in every_command() {
        let mut checks = String::new();
        for (words, sub) in command_paths(&cmd) {
            let lead = std::iter::once(name.clone())
                .chain(words.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ");
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let flag = format!("--{long}");
                let prefix = &flag[..flag.len() - 1];
                checks.push_str(&format!("check {flag} {lead} {prefix}\n"));
            }
            for s in sub.get_subcommands() {
                let s = s.get_name();
                checks.push_str(&format!("check {s} {lead} {}\n", &s[..s.len() - 1]));
            }
            if sub.get_arguments().any(|a| a.get_long() == Some("format")) {
                let value = if name == "sneaky-agent" {
                    "mcp"
                } else {
                    "text"
                };
                checks.push_str(&format!("check {value} {lead} --format ''\n"));
            }
        }
        let script = format!(
            r#"source "$1"
func=$(complete -p {name} | sed -E 's/.*-F ([^ ]+).*/\1/')
check() {{
  local expect="$1"; shift
  COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
  COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=()
  "$func" "${{COMP_WORDS[0]}}" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
  local r; for r in "${{COMPREPLY[@]}}"; do [[ "$r" == "$expect" ]] && {{ n=$((n+1)); return 0; }}; done
  echo "'$*' does not complete to $expect (got: ${{COMPREPLY[*]}})"
}}
n=0
{checks}echo "checked $n"
"#
        );
        let file = dir.join(format!("{name}.bash"));
        let out = std::process::Command::new("bash")
            .args(["-c", &script, "bash"])
            .arg(&file)
            .output()
            .expect("bash");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let expected = checks.lines().count();
        assert!(
            out.status.success() && stdout.trim() == format!("checked {expected}"),
            "{}: {stdout}{}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The zsh and fish scripts parse (`zsh -n`, `fish -n`); .ci/setup-shelluser.sh installs both.
#[test]
fn zsh_and_fish_completions_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    for (shell, file_of) in [
        ("zsh", (|n: &str| format!("_{n}")) as fn(&str) -> String),
        ("fish", |n: &str| format!("{n}.fish")),
    ] {
        // .ci/setup-shelluser.sh installs both; without them the check skips loudly.
        if !crate::util::require_cmd(shell) {
            continue;
        }
        for (name, _) in every_command() {
            let file = dir.join(file_of(&name));
            let out = std::process::Command::new(shell)
                .arg("-n")
                .arg(&file)
                .output()
                .expect(shell);
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "{shell} -n {}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The markers around a generated table in a Markdown file; what lies between is replaced.
const TABLE_START: &str = "<!-- generated from each tool's definition (tests/suite/generated.rs): \
                           edit the tool, then regenerate -->";
const TABLE_END: &str = "<!-- end of the generated table -->";

/// `doc` with the text between the markers replaced by `table`; panics naming the file when the
/// markers are missing.
fn with_table(doc: &str, file: &str, table: &str) -> String {
    let start = doc
        .find(TABLE_START)
        .unwrap_or_else(|| panic!("{file} has no line {TABLE_START:?}"));
    let body = start + TABLE_START.len();
    let end = doc[body..]
        .find(TABLE_END)
        .map(|e| body + e)
        .unwrap_or_else(|| panic!("{file} has no line {TABLE_END:?} after the start marker"));
    format!("{}\n{table}{}", &doc[..body], &doc[end..])
}

/// README.md's table under "The tools" and docs/contract.md's under "Binaries and tools" come
/// from the catalog (name, binary, tier) and each tool's `Doc::summary`: a new tool is not
/// written into either by hand.
#[test]
fn tool_tables_are_generated_from_the_tools() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut readme =
        String::from("| tool (LLM name) | binary | tier | what it does |\n|---|---|---|---|\n");
    let mut contract = String::from("| tool | binary | default tier |\n|---|---|---|\n");
    for spec in all() {
        let (name, binary, tier) = (spec.name(), spec.binary(), spec.default_tier().as_str());
        readme.push_str(&format!(
            "| {name} | `{binary}` | {tier} | {} |\n",
            spec.doc.summary
        ));
        contract.push_str(&format!("| {name} | `{binary}` | {tier} |\n"));
    }
    // The two programs that are no tool.
    readme.push_str(
        "| (driver) | `sneaky-agent` | — | an LLM works on the workspace through the tools; you \
         approve changes |\n| (MCP server) | `sneaky-mcp` | — | the tools over the Model Context \
         Protocol |\n",
    );
    contract.push_str("| (driver) | `sneaky-agent` | — |\n| (MCP server) | `sneaky-mcp` | — |\n");
    for (file, table) in [("README.md", readme), ("docs/contract.md", contract)] {
        let path = root.join(file);
        let doc = std::fs::read_to_string(&path).expect("read a doc");
        check_or_write(&path, &with_table(&doc, file, &table));
    }
}

/// Every tool's main but one written by hand (`Tool::MAIN`): the same text for each, the tool
/// found from the binary's own name (`sneaky::protocol::tool_main`).
const GENERATED_MAIN: &str = "\
//! A tool's binary, generated from the catalog (src/catalog.rs) by `SNEAKY_REGENERATE=1 cargo
//! test --test suite generated`: its tool is the one the binary is named for.
fn main() -> std::process::ExitCode {
    sneaky::protocol::tool_main::<{ sneaky::catalog::binary_index(env!(\"CARGO_BIN_NAME\")) }>()
}
";

/// The markers around the tools' `[[bin]]` targets in Cargo.toml.
const BINS_START: &str = "# BEGIN the tools' binaries, generated from the catalog \
                          (tests/suite/generated.rs): edit src/catalog.rs, then regenerate\n";
const BINS_END: &str = "# END the tools' binaries\n";

/// A tool's `[[bin]]` target, as generated into Cargo.toml.
fn bin_target(binary: &str) -> String {
    format!("[[bin]]\nname = \"{binary}\"\npath = \"bin/{binary}.rs\"\ntest = false\n")
}

/// A tool's main (`bin/<binary>.rs`) and its `[[bin]]` target are generated from the catalog,
/// so a new tool is not written into either by hand; a tool missing or stale in either is
/// named.
#[test]
fn tool_binaries_are_generated_from_the_catalog() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regenerate = std::env::var_os("SNEAKY_REGENERATE").is_some();
    let mut wrong = Vec::new();
    for spec in all().filter(|spec| !spec.own_main) {
        let path = root.join("bin").join(format!("{}.rs", spec.binary()));
        if regenerate {
            std::fs::write(&path, GENERATED_MAIN).expect("write a main");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(GENERATED_MAIN) {
            wrong.push(format!(
                "{}: bin/{}.rs is missing or not the generated main",
                spec.name(),
                spec.binary()
            ));
        }
    }
    let manifest_path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).expect("read Cargo.toml");
    let start = manifest
        .find(BINS_START)
        .unwrap_or_else(|| panic!("Cargo.toml has no line {BINS_START:?}"))
        + BINS_START.len();
    let end = start
        + manifest[start..]
            .find(BINS_END)
            .unwrap_or_else(|| panic!("Cargo.toml has no line {BINS_END:?} after the start"));
    let targets: Vec<String> = all().map(|spec| bin_target(spec.binary())).collect();
    let block = targets.join("\n");
    if regenerate {
        let written = format!("{}{block}{}", &manifest[..start], &manifest[end..]);
        std::fs::write(&manifest_path, written).expect("write Cargo.toml");
    } else if manifest[start..end] != block {
        for (spec, target) in all().zip(&targets) {
            if !manifest[start..end].contains(target.as_str()) {
                wrong.push(format!(
                    "{}: no [[bin]] {} in Cargo.toml",
                    spec.name(),
                    spec.binary()
                ));
            }
        }
        wrong.push("Cargo.toml's generated [[bin]] targets are not the catalog's".into());
    }
    assert!(wrong.is_empty(), "{wrong:#?}\n{REGENERATE_HINT}");
}

/// The text of a file without its generated regions (the tool tables, the tools' `[[bin]]`
/// targets).
fn hand_written_part(text: &str) -> String {
    let mut kept = String::new();
    let mut rest = text;
    loop {
        let next = [(TABLE_START, TABLE_END), (BINS_START, BINS_END)]
            .into_iter()
            .filter_map(|(start, end)| rest.find(start).map(|at| (at, end)))
            .min_by_key(|(at, _)| *at);
        let Some((at, end)) = next else {
            kept.push_str(rest);
            return kept;
        };
        kept.push_str(&rest[..at]);
        rest = match rest[at..].find(end) {
            Some(e) => &rest[at + e + end.len()..],
            None => "",
        };
    }
}

/// Whether `word` stands in `text` on its own (not inside a longer name).
fn names(text: &str, word: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// The files of the repository a person writes (not `target/`, not the generated directories).
fn hand_written_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a directory") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            let generated = ["schemas", "man", "completions"].contains(&name.as_ref())
                && path.parent() == Some(Path::new(env!("CARGO_MANIFEST_DIR")));
            if !generated && !["target", ".git", "node_modules"].contains(&name.as_ref()) {
                hand_written_files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// The lists of the tools kept by hand besides the catalog's, each with why, and so where a new
/// tool is written: such a list must name every tool.
/// (file, the heading of the section that holds the list, why it is kept by hand)
const KEPT_BY_HAND: &[(&str, &str, &str)] = &[(
    "docs/contract.md",
    "### Results",
    "what each tool's result always holds, in words its output schema does not carry",
)];

/// The section of a Markdown text under `heading`, up to the next heading.
fn section<'t>(text: &'t str, heading: &str) -> &'t str {
    let Some(start) = text.find(&format!("\n{heading}\n")) else {
        return "";
    };
    let body = &text[start + heading.len() + 2..];
    &body[..body.find("\n#").unwrap_or(body.len())]
}

/// What a new tool takes, shown: no file but the catalog's list names every tool (or every one
/// but one, as a list would that a new tool has not joined yet) by its LLM name, its binary or
/// its type, outside the regions generated from the catalog, save the lists of
/// [`KEPT_BY_HAND`], which must name them all. A file that did would be one more place a new
/// tool must be written into by hand; with this, the places are its module, its line in
/// `tool_list!`, its `pub mod` line (which names modules, not tools, and is held to the list by
/// `tools::tests::tools_are_the_listed_modules`) and its row in docs/contract.md's "Results".
#[test]
fn no_file_but_the_catalog_lists_the_tools_by_hand() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    hand_written_files(root, &mut files);
    let tools: Vec<_> = all().collect();
    let forms: [(&str, Vec<String>); 3] = [
        (
            "LLM names",
            tools.iter().map(|t| t.name().to_string()).collect(),
        ),
        (
            "binaries",
            tools.iter().map(|t| t.binary().to_string()).collect(),
        ),
        (
            "types",
            tools.iter().map(|t| format!("{:?}", t.name)).collect(),
        ),
    ];
    let mut lists = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        if relative == Path::new("src/catalog.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let text = hand_written_part(&text);
        for (form, words) in &forms {
            let named = words.iter().filter(|w| names(&text, w)).count();
            let kept = KEPT_BY_HAND
                .iter()
                .find(|(f, _, _)| relative == Path::new(f));
            if let (Some((_, heading, _)), "LLM names") = (kept, *form) {
                let list = section(&text, heading);
                let missing: Vec<&String> = words.iter().filter(|w| !names(list, w)).collect();
                if !missing.is_empty() {
                    lists.push(format!(
                        "{}, {heading}: does not name {missing:?}",
                        relative.display()
                    ));
                }
            } else if kept.is_none() && named + 1 >= words.len() {
                lists.push(format!(
                    "{}: names {named} of the {} tools' {form}",
                    relative.display(),
                    words.len()
                ));
            }
        }
    }
    assert!(
        lists.is_empty(),
        "lists of the tools kept by hand (generate them from the catalog or each tool's own \
         description): {lists:#?}"
    );
}
