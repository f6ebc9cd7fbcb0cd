//! `sneaky-agent pipe` with each input shape and `sneaky-agent tools` in each format.

use serde_json::{json, Value};

use crate::agent::{agent_command, ran, run};
use crate::util;

fn pipe(w: &util::Ws, args: &[&str], lines: &[Value]) -> (i32, Vec<Value>, String) {
    let mut input = String::new();
    for line in lines {
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let mut all = vec!["pipe"];
    all.extend_from_slice(args);
    let r = ran(run(agent_command(w, &all), input.as_bytes()));
    let out = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each output line is JSON"))
        .collect();
    (r.status, out, r.stderr)
}

fn content(line: &Value) -> Value {
    serde_json::from_str(line["content"].as_str().unwrap()).unwrap()
}

#[test]
fn pipe_answers_each_shape_in_its_own_shape() {
    let w = util::ws();
    w.write("a.txt", "alpha\n");
    let (status, out, _) = pipe(
        &w,
        &[],
        &[
            json!({"id": "call_1", "type": "function",
                   "function": {"name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}"}}),
            json!({"type": "tool_use", "id": "toolu_1", "name": "read_file",
                   "input": {"file_path": "a.txt"}}),
            json!({"name": "list_dir", "arguments": {"directory_path": "."}}),
        ],
    );
    assert_eq!(status, 0);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0]["role"], "tool");
    assert_eq!(out[0]["tool_call_id"], "call_1");
    assert_eq!(content(&out[0])["result"]["content"], "alpha\n");
    assert_eq!(out[1]["type"], "tool_result");
    assert_eq!(out[1]["tool_use_id"], "toolu_1");
    assert_eq!(out[1]["is_error"], false);
    assert_eq!(content(&out[1])["result"]["content"], "alpha\n");
    assert_eq!(out[2]["ok"], true);
    assert_eq!(out[2]["tool"], "list_dir");
    assert_eq!(out[2]["result"]["entries"], json!(["a.txt"]));
}

#[test]
fn pipe_reports_errors_in_the_call_shape_and_goes_on() {
    let w = util::ws();
    w.write("a.txt", "alpha\n");
    w.write("sneaky.toml", "[permissions]\ndeny = [\"grep_files\"]\n");
    let input = [
        json!({"id": "c1", "type": "function",
               "function": {"name": "read_file", "arguments": "{\"file_path\":\"../secret.txt\"}"}}),
        json!({"type": "tool_use", "id": "t1", "name": "grep_files", "input": {"pattern": "a"}}),
        json!({"id": "c2", "type": "function",
               "function": {"name": "read_file", "arguments": "{not json"}}),
        json!({"name": "no_such_tool", "arguments": {}}),
        json!({"hello": "world"}),
        json!({"name": "read_file", "arguments": {"file_path": "a.txt", "extra": 1}}),
        json!({"name": "read_file", "arguments": {"file_path": "a.txt"}}),
    ];
    let mut text: String = input.iter().map(|v| format!("{v}\n")).collect();
    text.push_str("this is not json\n\n");
    let r = ran(run(agent_command(&w, &["pipe"]), text.as_bytes()));
    assert_eq!(r.status, 1, "a failed call makes the exit status 1");
    let out: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        out.len(),
        8,
        "one line per non-blank input line: {}",
        r.stdout
    );
    assert_eq!(out[0]["tool_call_id"], "c1");
    assert_eq!(content(&out[0])["error"]["code"], "outside_workspace");
    assert_eq!(out[1]["tool_use_id"], "t1");
    assert_eq!(out[1]["is_error"], true);
    assert_eq!(content(&out[1])["error"]["code"], "tool_denied");
    assert_eq!(content(&out[2])["error"]["code"], "invalid_json");
    assert_eq!(out[3]["error"]["code"], "unknown_tool");
    assert_eq!(out[4]["error"]["code"], "invalid_json");
    assert_eq!(out[5]["error"]["code"], "invalid_args");
    assert!(out[5]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("extra"));
    assert_eq!(out[6]["result"]["content"], "alpha\n");
    assert_eq!(out[7]["error"]["code"], "invalid_json");
}

#[test]
fn pipe_confirm_tier_needs_yes_without_a_terminal() {
    let w = util::ws();
    w.write("a.txt", "alpha\n");
    w.write("sneaky.toml", "[permissions]\nconfirm = [\"read_file\"]\n");
    let call = json!({"name": "read_file", "arguments": {"file_path": "a.txt"}});
    let (status, out, _) = pipe(&w, &[], std::slice::from_ref(&call));
    assert_eq!(status, 1);
    assert_eq!(out[0]["error"]["code"], "not_approved");
    let (status, out, _) = pipe(&w, &["--yes"], &[call]);
    assert_eq!(status, 0);
    assert_eq!(out[0]["result"]["content"], "alpha\n");
}

#[test]
fn pipe_runs_with_jq() {
    // The README's pipeline: a model's tool calls through jq into pipe mode.
    if !util::require_cmd("jq") {
        return;
    }
    let w = util::ws();
    w.write("src/main.rs", "fn main() {}\n");
    let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "find_files", "arguments": "{\"pattern\":\"*.rs\"}"}}]}}]});
    let agent = crate::agent::bin_path("sneaky-agent");
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "jq -c '.choices[0].message.tool_calls[]' | setsid -w '{}' pipe | jq -r '.content | fromjson | .result.files[]'",
            agent.display()
        ));
    crate::agent::scrub(&mut cmd, &w);
    let r = ran(run(cmd, reply.to_string().as_bytes()));
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "src/main.rs\n");
}

fn tools(w: &util::Ws, format: &str) -> Value {
    let r = ran(run(agent_command(w, &["tools", "--format", format]), b""));
    assert_eq!(r.status, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).expect("tools prints one JSON document")
}

fn check_parameters(schema: &Value) {
    assert_eq!(schema["type"], "object", "{schema}");
    assert!(schema["properties"].is_object(), "{schema}");
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    jsonschema::validator_for(schema).expect("parameters compile as JSON Schema");
}

#[test]
fn tools_in_every_format_cover_the_table_less_denied_tools() {
    let w = util::ws();
    w.write("sneaky.toml", "[permissions]\ndeny = [\"grep_files\"]\n");
    let expected: Vec<&str> = sneaky::tools::all()
        .map(|s| s.name())
        .filter(|n| *n != "grep_files")
        .collect();

    let openai = tools(&w, "openai");
    let list = openai.as_array().expect("an array");
    let names: Vec<&str> = list
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            let f = t["function"].as_object().unwrap();
            assert_eq!(f.len(), 3, "name, description, parameters: {t}");
            assert!(!f["description"].as_str().unwrap().is_empty());
            check_parameters(&f["parameters"]);
            f["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, expected);

    let anthropic = tools(&w, "anthropic");
    let names: Vec<&str> = anthropic
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let t = t.as_object().unwrap();
            assert_eq!(t.len(), 3, "name, description, input_schema");
            assert!(!t["description"].as_str().unwrap().is_empty());
            check_parameters(&t["input_schema"]);
            t["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, expected);

    let mcp = tools(&w, "mcp");
    let names: Vec<&str> = mcp
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap();
            let spec = sneaky::tools::find(name).unwrap();
            assert_eq!(t["title"], spec.title);
            assert!(!t["description"].as_str().unwrap().is_empty());
            // The same tool object sneaky-mcp lists (one builder for both).
            assert_eq!(
                *t,
                sneaky::definitions::mcp_tool(spec, sneaky::definitions::McpFields::LATEST)
            );
            jsonschema::validator_for(&t["inputSchema"]).expect("inputSchema compiles");
            assert_eq!(t["annotations"]["readOnlyHint"], spec.hints.read_only);
            name
        })
        .collect();
    assert_eq!(names, expected);

    // Default format is openai; the definitions match the committed schema's properties.
    let r = ran(run(agent_command(&w, &["tools"]), b""));
    assert_eq!(serde_json::from_str::<Value>(&r.stdout).unwrap(), openai);
    for t in list {
        let spec = sneaky::tools::find(t["function"]["name"].as_str().unwrap()).unwrap();
        let schema: Value = serde_json::from_str(spec.schema).unwrap();
        assert_eq!(
            t["function"]["parameters"]["properties"],
            schema["properties"]
        );
        assert_eq!(t["function"]["description"], schema["description"]);
    }
}

/// Keys anywhere in a schema (not property names).
fn keywords(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                out.push(key.clone());
                if key == "properties" {
                    value
                        .as_object()
                        .into_iter()
                        .flat_map(|p| p.values())
                        .for_each(|v| keywords(v, out));
                } else {
                    keywords(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keywords(v, out)),
        _ => {}
    }
}

/// The rules of OpenAI's strict function calling (Structured Outputs): closed objects, every
/// property required (optional ones nullable), no `default`; the tool's arguments with every
/// optional property null are valid and mean the same as without them.
fn check_strict(name: &str, parameters: &Value) {
    assert_eq!(parameters["additionalProperties"], false, "{name}");
    let properties = parameters["properties"].as_object().expect("properties");
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .expect("required")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(required, names, "{name}: every property is required");
    let mut used = Vec::new();
    keywords(parameters, &mut used);
    assert!(
        !used.iter().any(|k| k == "default" || k == "format"),
        "{name}: {used:?}"
    );
    let spec = sneaky::tools::find(name).unwrap();
    let committed: Value = serde_json::from_str(spec.schema).unwrap();
    let originally: Vec<&str> = committed["required"]
        .as_array()
        .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default();
    let validator = jsonschema::validator_for(parameters).expect("strict parameters compile");
    assert_eq!(
        validator.is_valid(&json!({})),
        properties.is_empty(),
        "{name}: nothing may be left out"
    );
    let mut all_null = serde_json::Map::new();
    for (property, schema) in properties {
        let optional = !originally.contains(&property.as_str());
        let types = schema["type"].as_array();
        let nullable = types.is_some_and(|t| t.contains(&json!("null")));
        assert_eq!(nullable, optional, "{name}.{property}: {schema}");
        all_null.insert(
            property.clone(),
            if optional { Value::Null } else { json!("x") },
        );
    }
    let args = Value::Object(all_null);
    assert!(validator.is_valid(&args), "{name}: {args}");
    // The tool takes null as "not given": the arguments are accepted (whatever the call then
    // finds in the workspace).
    if let Err(e) = (spec.check_args)(&args) {
        panic!("{name}: {args} refused: {}", e.message());
    }
}

#[test]
fn tools_strict_and_responses_formats_follow_strict_function_calling() {
    let w = util::ws();
    let plain = tools(&w, "openai");
    let r = ran(run(
        agent_command(&w, &["tools", "--format", "openai", "--strict"]),
        b"",
    ));
    assert_eq!(r.status, 0, "{}", r.stderr);
    let strict: Value = serde_json::from_str(&r.stdout).unwrap();
    let responses = tools(&w, "openai-responses");
    let (strict, responses) = (strict.as_array().unwrap(), responses.as_array().unwrap());
    assert_eq!(strict.len(), plain.as_array().unwrap().len());
    assert_eq!(strict.len(), responses.len());
    for (chat, flat) in strict.iter().zip(responses) {
        let f = &chat["function"];
        let name = f["name"].as_str().unwrap();
        assert_eq!(chat["type"], "function");
        assert_eq!(f["strict"], true, "{name}");
        check_strict(name, &f["parameters"]);
        // Responses tools are flat: the function's fields beside "type".
        let mut expected = f.as_object().unwrap().clone();
        expected.insert("type".into(), json!("function"));
        assert_eq!(flat.as_object().unwrap(), &expected, "{name}");
    }
    for format in ["anthropic", "mcp"] {
        let r = ran(run(
            agent_command(&w, &["tools", "--format", format, "--strict"]),
            b"",
        ));
        assert_eq!(r.status, 2, "--strict with {format}");
        assert!(r.stderr.contains("--strict"), "{}", r.stderr);
    }
}

#[test]
fn pipe_takes_null_for_optional_arguments() {
    let w = util::ws();
    w.write("a.txt", "alpha\nbeta\n");
    let args = json!({"file_path": "a.txt", "offset": null, "limit": null}).to_string();
    let grep = json!({"pattern": "beta", "path": null, "file_pattern": null,
                      "case_insensitive": null, "context": null, "max_results": null});
    let (status, out, stderr) = pipe(
        &w,
        &[],
        &[
            json!({"id": "c1", "type": "function",
                   "function": {"name": "read_file", "arguments": args}}),
            json!({"name": "grep_files", "arguments": grep}),
        ],
    );
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(content(&out[0])["result"]["content"], "alpha\nbeta\n");
    assert_eq!(out[1]["result"]["matches"][0]["line"], 2, "{}", out[1]);
}

#[test]
fn tools_rejects_an_unknown_format() {
    let w = util::ws();
    let r = ran(run(
        agent_command(&w, &["tools", "--format", "cohere"]),
        b"",
    ));
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("cohere"));
}

#[test]
fn pipe_says_when_calls_were_refused_for_want_of_approval() {
    let w = util::ws();
    w.write("sneaky.toml", "[permissions]\nconfirm = [\"read_file\"]\n");
    w.write("a.txt", "alpha\n");
    let call = json!({"name": "read_file", "arguments": {"file_path": "a.txt"}});
    let (status, out, stderr) = pipe(&w, &[], std::slice::from_ref(&call));
    assert_eq!(status, 1);
    assert_eq!(out[0]["error"]["code"], "not_approved", "{}", out[0]);
    assert!(
        stderr.contains("calls to read_file were refused") && stderr.contains("--yes"),
        "{stderr}"
    );
    let (status, out, stderr) = pipe(&w, &["--yes"], &[call]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(out[0]["result"]["content"], "alpha\n");
    assert!(!stderr.contains("refused"), "{stderr}");
}

/// The OpenAI SDK takes the strict export through `chat.completions.parse` and the Responses
/// export as `FunctionToolParam`s, the Anthropic SDK takes the anthropic export, each against a
/// mock of its API on 127.0.0.1 that applies the API's rules; the calls made from them run
/// through `sneaky-agent pipe`, null optional arguments included (tests/hosts/sdk_test.py).
#[test]
fn openai_and_anthropic_sdks_take_the_exports() {
    let python = crate::mcp_client::target_dir().join("hosts-venv/bin/python");
    if !util::require_python_pkg(&python, "openai", ".ci/setup-hosts.sh")
        || !util::require_python_pkg(&python, "anthropic", ".ci/setup-hosts.sh")
    {
        return;
    }
    let w = util::ws();
    w.write("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let exports = w.outside().join("exports.json");
    crate::mcp_client::write_exports(&w, &exports);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/sdk_test.py");
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(crate::agent::bin_path("sneaky-agent"))
        .arg(&w.root)
        .arg(&exports)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .output()
        .expect("run the SDK test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all SDK checks passed"),
        "the SDK test failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

/// The definitions need no workspace: outside any project they follow the user's configuration.
#[test]
fn tools_outside_a_project_follow_the_users_configuration() {
    let w = util::ws();
    let nowhere = w.outside().join("nowhere");
    let xdg = w.outside().join("xdg");
    std::fs::create_dir_all(&nowhere).expect("mkdir");
    std::fs::create_dir_all(xdg.join("sneaky")).expect("mkdir");
    std::fs::write(
        xdg.join("sneaky/config.toml"),
        "[permissions]\ndeny = [\"grep_files\"]\n",
    )
    .expect("write");
    for format in ["openai", "mcp"] {
        let mut cmd = agent_command(&w, &["tools", "--format", format]);
        cmd.current_dir(&nowhere)
            .env_remove("SNEAKY_ROOT")
            .env("HOME", &nowhere)
            .env("SNEAKY_CEILING_DIRECTORIES", &nowhere);
        let r = ran(run(cmd, b""));
        assert_eq!(r.status, 0, "{format}: {}", r.stderr);
        let tools: Value = serde_json::from_str(&r.stdout).expect("JSON");
        let names: Vec<String> = tools
            .as_array()
            .expect("an array")
            .iter()
            .map(|t| {
                let name = if format == "openai" {
                    &t["function"]["name"]
                } else {
                    &t["name"]
                };
                name.as_str().expect("a name").to_string()
            })
            .collect();
        assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
        assert!(
            !names.iter().any(|n| n == "grep_files"),
            "denied: {names:?}"
        );
    }
}

/// `--format gemini` is what the Google Gen AI SDK's own types accept (one type per schema),
/// where the plain JSON Schema form is refused (tests/hosts/gemini_test.py).
#[test]
fn tools_gemini_format_is_accepted_by_the_google_genai_sdk() {
    let python = crate::mcp_client::target_dir().join("hosts-venv/bin/python");
    if !util::require_python_pkg(&python, "google.genai", ".ci/setup-hosts.sh") {
        return;
    }
    let w = util::ws();
    let exports = json!({
        "gemini": tools(&w, "gemini"),
        "anthropic": tools(&w, "anthropic"),
    });
    let file = w.outside().join("exports.json");
    std::fs::write(&file, exports.to_string()).expect("write exports");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/gemini_test.py");
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(&file)
        .output()
        .expect("run the Gemini SDK check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all Gemini SDK checks passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
