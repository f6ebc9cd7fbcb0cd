"""The OpenAI and Anthropic Python SDKs take sneaky-agent's tool exports, against a local mock
of each API that checks what the real one checks, and the calls a model makes from them run
through `sneaky-agent pipe`.

Usage: sdk_test.py SNEAKY_AGENT WORKSPACE_ROOT EXPORTS_JSON

WORKSPACE_ROOT holds src/lib.rs containing "answer". EXPORTS_JSON maps each `sneaky-agent tools
--format` name ("openai", "openai-strict", "openai-responses", "anthropic") to its output. Run by
tests/suite/agent_pipe.rs with the venv that .ci/setup-hosts.sh makes. Prints one line per check
and exits non-zero on the first failure.
"""

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import openai
import pydantic
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}")


# --- OpenAI's rules for strict function calling (Structured Outputs, "Supported schemas").
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "description", "enum", "const",
    "anyOf", "$ref", "$defs", "items", "title", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6",
                  "uuid"}
TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def strict_problems(schema, where="parameters"):
    """What OpenAI's API would refuse in a strict function's parameters."""
    problems = []
    if not isinstance(schema, dict):
        return [f"{where}: not a schema object"]
    for key, value in schema.items():
        if key not in STRICT_KEYWORDS:
            problems.append(f"{where}: keyword {key!r} is not supported in strict mode")
        if key == "format" and value not in STRICT_FORMATS:
            problems.append(f"{where}: format {value!r} is not supported")
    types = schema.get("type")
    types = types if isinstance(types, list) else [types] if types else []
    problems += [f"{where}: unknown type {t!r}" for t in types if t not in TYPES]
    if "object" in types or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: 'additionalProperties' is required to be false")
        missing = [p for p in properties if p not in schema.get("required", [])]
        if missing:
            problems.append(f"{where}: 'required' must list every property; missing {missing}")
        for name, sub in properties.items():
            problems += strict_problems(sub, f"{where}.{name}")
    for key in ("anyOf",):
        for i, sub in enumerate(schema.get(key, [])):
            problems += strict_problems(sub, f"{where}.{key}[{i}]")
    if isinstance(schema.get("items"), dict):
        problems += strict_problems(schema["items"], f"{where}.items")
    for name, sub in schema.get("$defs", {}).items():
        problems += strict_problems(sub, f"{where}.$defs.{name}")
    return problems


# The calls the mock model makes: given arguments; every other (nullable) property null, as a
# model under strict function calling sends "not given".
GIVEN = {
    "grep_files": {"pattern": "answer"},
    "read_file": {"file_path": "src/lib.rs"},
    "find_files": {"pattern": "*.rs"},
}


def strict_arguments(name, parameters):
    args = {}
    for prop, schema in parameters["properties"].items():
        if prop in GIVEN[name]:
            args[prop] = GIVEN[name][prop]
        else:
            types = schema.get("type", [])
            assert "null" in types, f"{name}.{prop} is required and not nullable"
            args[prop] = None
    return args


class MockApis(BaseHTTPRequestHandler):
    """POST /v1/chat/completions, /v1/responses (OpenAI) and /v1/messages (Anthropic)."""

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def refuse(self, message):
        self.reply(400, {"error": {"message": message, "type": "invalid_request_error",
                                   "param": "tools", "code": "invalid_function_parameters"}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        route = {"/v1/chat/completions": self.api_chat, "/v1/responses": self.api_responses,
                 "/v1/messages": self.api_messages}.get(self.path)
        if route is None:
            return self.reply(404, {"error": {"message": f"no route {self.path}"}})
        route(body)

    def api_chat(self, body):
        tools = {}
        for tool in body.get("tools", []):
            function = tool.get("function", {})
            if tool.get("type") != "function" or function.get("strict") is not True:
                return self.refuse(f"{function.get('name')}: not a strict function tool")
            problems = strict_problems(function.get("parameters"))
            if problems:
                return self.refuse(f"Invalid schema for function '{function['name']}': "
                                   + "; ".join(problems))
            tools[function["name"]] = function["parameters"]
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": name,
                               "arguments": json.dumps(strict_arguments(name, tools[name]))}}
                 for i, name in enumerate(["grep_files", "read_file"])]
        self.reply(200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None,
                         "message": {"role": "assistant", "content": None, "refusal": None,
                                     "tool_calls": calls}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })

    def api_responses(self, body):
        tools = {}
        for tool in body.get("tools", []):
            extra = set(tool) - {"type", "name", "description", "parameters", "strict"}
            if tool.get("type") != "function" or extra or "function" in tool:
                return self.refuse(f"{tool.get('name')}: not a flat Responses function tool")
            if tool.get("strict") is not False:
                problems = strict_problems(tool.get("parameters"))
                if problems:
                    return self.refuse(f"Invalid schema for function '{tool['name']}': "
                                       + "; ".join(problems))
            tools[tool["name"]] = tool["parameters"]
        args = strict_arguments("find_files", tools["find_files"])
        self.reply(200, {
            "id": "resp_1", "object": "response", "created_at": 0, "model": body["model"],
            "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": body["tools"], "error": None, "incomplete_details": None,
            "instructions": None, "metadata": {}, "temperature": 1.0, "top_p": 1.0,
            "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_r1",
                        "name": "find_files", "arguments": json.dumps(args),
                        "status": "completed"}],
        })

    def api_messages(self, body):
        if self.headers.get("anthropic-version") is None:
            return self.refuse("anthropic-version header missing")
        for tool in body.get("tools", []):
            extra = set(tool) - {"name", "description", "input_schema", "cache_control"}
            schema = tool.get("input_schema", {})
            if extra or schema.get("type") != "object":
                return self.refuse(f"tools: {tool.get('name')}: extra {extra} or input_schema "
                                   "not an object")
        self.reply(200, {
            "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "grep_files",
                         "input": {"pattern": "answer", "path": "src"}}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        })


def pipe(agent, root, lines):
    """Run tool calls through `sneaky-agent pipe`; one parsed result line per call."""
    text = "".join(json.dumps(line) + "\n" for line in lines)
    out = subprocess.run([agent, "pipe", "--root", root], input=text, capture_output=True,
                         text=True, timeout=120, check=False)
    check(out.returncode == 0, f"sneaky-agent pipe succeeds: {out.stderr.strip()}")
    return [json.loads(line) for line in out.stdout.splitlines()]


def chat_completions(base, agent, root, exported):
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="test-key", max_retries=0)
    strict = exported["openai-strict"]
    adapter = pydantic.TypeAdapter(ChatCompletionFunctionToolParam)
    for tool in strict:
        adapter.validate_python(tool)
    check(True, f"{len(strict)} strict tools validate as ChatCompletionFunctionToolParam")
    for tool in strict:
        problems = strict_problems(tool["function"]["parameters"])
        check(not problems, f"{tool['function']['name']}: strict schema rules hold {problems}")
    plain_problems = [p for t in exported["openai"]
                      for p in strict_problems(t["function"]["parameters"])]
    check(plain_problems, "the plain (non-strict) export breaks the strict rules, as it may")
    try:
        client.chat.completions.parse(model="gpt-test", tools=exported["openai"],
                                      messages=[{"role": "user", "content": "x"}])
        check(False, "parse() refuses non-strict tools")
    except ValueError as e:
        check("strict" in str(e), f"parse() refuses non-strict tools: {e}")

    completion = client.chat.completions.parse(
        model="gpt-test", tools=strict,
        messages=[{"role": "user", "content": "Where is answer defined?"}])
    calls = completion.choices[0].message.tool_calls
    check(len(calls) == 2, "the mock accepted the strict tools and answered two calls")
    for call in calls:
        parsed = call.function.parsed_arguments
        check(isinstance(parsed, dict) and parsed == json.loads(call.function.arguments),
              f"parse() parsed {call.function.name}'s arguments: {parsed}")
    results = pipe(agent, root, [
        {"id": c.id, "type": "function",
         "function": {"name": c.function.name, "arguments": c.function.arguments}}
        for c in calls])
    envelopes = [json.loads(r["content"]) for r in results]
    check(all(e["ok"] for e in envelopes), f"null optional arguments run: {envelopes}")
    check(envelopes[0]["result"]["matches"][0]["path"] == "src/lib.rs", "grep found answer")
    check("answer" in envelopes[1]["result"]["content"], "read_file read src/lib.rs")


def responses(base, agent, root, exported):
    tools = exported["openai-responses"]
    adapter = pydantic.TypeAdapter(FunctionToolParam)
    keys = FunctionToolParam.__required_keys__ | FunctionToolParam.__optional_keys__
    for tool in tools:
        adapter.validate_python(tool)
        check(set(tool) <= keys and tool["strict"] is True,
              f"{tool['name']} validates as FunctionToolParam (strict, no other keys)")
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="test-key", max_retries=0)
    response = client.responses.create(model="gpt-test", input="Find the Rust files",
                                       tools=tools)
    call = response.output[0]
    check(call.type == "function_call" and call.name == "find_files",
          "the Responses mock accepted the tools and answered a call")
    [result] = pipe(agent, root, [{"name": call.name, "arguments": json.loads(call.arguments)}])
    check(result["ok"] and "src/lib.rs" in result["result"]["files"],
          f"the Responses call ran: {result}")


def messages(base, agent, root, exported):
    tools = exported["anthropic"]
    adapter = pydantic.TypeAdapter(ToolParam)
    for tool in tools:
        adapter.validate_python(tool)
    check(True, f"{len(tools)} tools validate as anthropic ToolParam")
    client = anthropic.Anthropic(base_url=base, api_key="test-key", max_retries=0)
    message = client.messages.create(model="claude-test", max_tokens=100, tools=tools,
                                     messages=[{"role": "user", "content": "find answer"}])
    block = message.content[0]
    check(block.type == "tool_use" and block.name == "grep_files",
          "the Messages mock accepted the tools and answered a tool_use")
    [result] = pipe(agent, root, [{"type": "tool_use", "id": block.id, "name": block.name,
                                   "input": block.input}])
    check(result["is_error"] is False and result["tool_use_id"] == "toolu_1",
          f"the tool_use ran: {result}")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    agent, root, exports_path = sys.argv[1:]
    with open(exports_path, encoding="utf-8") as f:
        exported = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", 0), MockApis)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        chat_completions(base, agent, root, exported)
        responses(base, agent, root, exported)
        messages(base, agent, root, exported)
    finally:
        server.shutdown()
    print(f"openai {openai.__version__}, anthropic {anthropic.__version__}")
    print("all SDK checks passed")


if __name__ == "__main__":
    main()
