"""Drive sneaky-mcp with the official Python MCP SDK's stdio client.

Usage: client_test.py SNEAKY_MCP_BINARY WORKSPACE_ROOT ELSEWHERE [structured|text]

WORKSPACE_ROOT must hold hello.txt ("hello world\\n") and src/lib.rs containing "fn answer";
a file secret.txt lies beside the root, outside it. ELSEWHERE is a directory that is not the
workspace (the server's working directory when the root must come from the client's roots).
The last argument is the shape of the tools the server is made to serve (its
--structured-content on or off, src/mcp/shape.rs): "structured" (the default) declares
outputSchema and carries structuredContent, which call_tool validates; "text" declares no
outputSchema and results are content blocks only, which call_tool must accept as they are.
Run by tests/suite/mcp_client.rs with the venv that .ci/setup-mcp.sh makes. Prints one line per
check passed and exits non-zero on the first failure.
"""

import asyncio
import sys
import warnings
from pathlib import Path

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

HANDSHAKE_TIMEOUT = 30

# "structured" or "text" (set from the command line).
SHAPE = "structured"

# ping is deprecated for the 2026 era's stateless protocol; sneaky-mcp speaks the handshake era.
warnings.filterwarnings("ignore", message="ping is removed")


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}")


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def shape_args():
    return ["--structured-content", "on" if SHAPE == "structured" else "off"]


def file_content(result, path):
    """The content read_file returned for PATH: structuredContent's in the structured shape
    (which must then be there), the text under its one-line header in the text shape (where
    structuredContent must not be)."""
    if SHAPE == "structured":
        return result.structured_content["content"]
    if result.structured_content is not None:
        return None
    header, _, content = text_of(result).partition("\n")
    return content if header.startswith(f"{path} (lines ") else None


def failure_code(result):
    """The code of a failed call: isError, text "CODE: message", no structuredContent (hosts
    validate structuredContent against the tool's outputSchema, even on errors)."""
    if not result.is_error or result.structured_content is not None:
        return None
    code, _, message = text_of(result).partition(": ")
    return code if message else None


async def main_session(binary, root):
    server = StdioServerParameters(command=binary, args=["--root", root] + shape_args())
    # mode="auto" (the default): the client first probes server/discover (2026-07-28 era), which
    # sneaky-mcp answers with method-not-found, then falls back to the initialize handshake.
    async with Client(server, read_timeout_seconds=HANDSHAKE_TIMEOUT) as client:
        check(client.protocol_version in ("2025-11-25", "2025-06-18"),
              f"negotiated protocol version {client.protocol_version}")
        check(client.server_info is not None and client.server_info.name == "sneaky-mcp",
              "server identifies as sneaky-mcp")
        check(client.server_capabilities.tools is not None, "server offers tools")
        await client.send_ping()
        check(True, "ping answered")

        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("read_file", "list_dir", "grep_files", "find_files"):
            check(name in tools, f"{name} is listed")
        check("finish" not in tools, "finish (the driver's control tool) is not listed")
        for name, tool in tools.items():
            a = tool.annotations
            check(a is not None and a.open_world_hint is False, f"{name}: openWorldHint false")
            check(tool.title, f"{name}: has a title")
            check(tool.description and len(tool.description) > 20, f"{name}: has a description")
            check(tool.input_schema.get("type") == "object", f"{name}: inputSchema is an object")
            if SHAPE == "structured":
                check(tool.output_schema and tool.output_schema.get("type") == "object",
                      f"{name}: outputSchema is an object")
            else:
                check(tool.output_schema is None, f"{name}: no outputSchema (text shape)")
        for name in ("read_file", "list_dir", "grep_files", "find_files"):
            a = tools[name].annotations
            check(a.read_only_hint is True and a.idempotent_hint is True,
                  f"{name}: readOnlyHint and idempotentHint")
        for name in ("write_file", "delete_file", "str_replace", "patch_apply", "run_command"):
            if name in tools:
                a = tools[name].annotations
                check(a.read_only_hint is False and a.destructive_hint is True,
                      f"{name}: not read-only, destructive")
        if "make_dir" in tools:
            a = tools["make_dir"].annotations
            check(a.destructive_hint is False and a.idempotent_hint is True,
                  "make_dir: not destructive, idempotent")

        # call_tool validates structuredContent against outputSchema for successful results.
        r = await client.call_tool("read_file", {"file_path": "hello.txt"})
        check(not r.is_error, "read_file succeeds")
        check(file_content(r, "hello.txt") == "hello world\n", f"read_file content ({SHAPE})")
        check(text_of(r) == "hello.txt (lines 1-1 of 1)\nhello world\n",
              f"read_file text is the file under a one-line header: {text_of(r)!r}")

        r = await client.call_tool("grep_files", {"pattern": "fn answer"})
        check(not r.is_error, "grep_files succeeds")
        if SHAPE == "structured":
            matches = r.structured_content["matches"]
            check([m["path"] for m in matches] == ["src/lib.rs"],
                  f"grep_files finds src/lib.rs: {matches}")
        else:
            check(r.structured_content is None, "grep_files: no structuredContent (text shape)")
        check(text_of(r) == "src/lib.rs\n1:pub fn answer() -> u32 {",
              f"grep_files text is grouped by file: {text_of(r)!r}")

        if "write_file" in tools:
            r = await client.call_tool("write_file", {"file_path": "out/new.txt", "content": "made by mcp\n"})
            check(not r.is_error, f"write_file succeeds: {text_of(r)}")
            check((Path(root) / "out/new.txt").read_text() == "made by mcp\n", "write_file wrote the file")
            r = await client.call_tool("write_file", {"file_path": "../escape.txt", "content": "x"})
            check(r.is_error, "write_file outside the workspace is an error result")
            check(not (Path(root).parent / "escape.txt").exists(), "nothing was written outside")
        else:
            print("note: write_file is not in this build's tool table; write checks skipped")

        r = await client.call_tool("read_file", {"file_path": "../secret.txt"})
        check(r.is_error, "a path outside the workspace comes back as isError")
        check("SECRET" not in text_of(r), "the outside secret is not leaked")
        check(failure_code(r) == "outside_workspace",
              f"its text is outside_workspace: message, without structuredContent: {r}")
        r = await client.call_tool("read_file", {"file_path": str(Path(root).parent / "secret.txt")})
        check(failure_code(r) == "outside_workspace",
              "an absolute path outside is refused too")

        r = await client.call_tool("read_file", {"file_path": "hello.txt", "no_such_arg": 1})
        check(failure_code(r) == "invalid_args",
              f"an unknown argument is an invalid_args error result: {text_of(r)}")
        check("no_such_arg" in text_of(r), "the message names the field")
        r = await client.call_tool("read_file", {})
        check(failure_code(r) == "invalid_args",
              "a missing argument is an invalid_args error result")
        r = await client.call_tool("read_file", {"file_path": 42})
        check(failure_code(r) == "invalid_args",
              "a wrong type is an invalid_args error result")
        r = await client.call_tool("read_file", {"file_path": "missing.txt"})
        check(failure_code(r) == "not_found",
              "a missing file is a not_found error result")

        try:
            await client.call_tool("no_such_tool", {})
            check(False, "an unknown tool is a protocol error")
        except MCPError as e:
            check(e.error.code == types.INVALID_PARAMS, f"an unknown tool is -32602: {e}")

        for i in range(200):
            r = await client.call_tool("read_file", {"file_path": "hello.txt"})
            if r.is_error or file_content(r, "hello.txt") != "hello world\n":
                check(False, f"call {i + 1} of 200 failed: {text_of(r)}")
        check(True, "200 read_file calls in a row")

        await client.send_ping()
        check(True, "still answering after 200 calls")
        return set(tools)


async def roots_session(binary, root, elsewhere, all_tools):
    """No --root: the workspace is the client's first root, asked with roots/list."""
    root_uri = Path(root).as_uri()

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=root_uri, name="ws")])

    server = StdioServerParameters(command=binary, args=["--read-only"] + shape_args(),
                                   cwd=elsewhere)
    async with Client(server, mode="legacy", list_roots_callback=list_roots,
                      read_timeout_seconds=HANDSHAKE_TIMEOUT) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check(all(t.annotations.read_only_hint for t in tools.values()),
              f"--read-only lists read-only tools only: {sorted(tools)}")
        check("read_file" in tools, "--read-only keeps read_file")
        r = await client.call_tool("read_file", {"file_path": "hello.txt"})
        check(not r.is_error and file_content(r, "hello.txt") == "hello world\n",
              f"the workspace came from the client's roots: {text_of(r)}")
        if "write_file" in all_tools:
            r = await client.call_tool("write_file", {"file_path": "x.txt", "content": "x"})
            check(failure_code(r) == "tool_denied",
                  "write_file under --read-only is a tool_denied error result")
            check(not (Path(root) / "x.txt").exists(), "and wrote nothing")


async def main():
    global SHAPE
    if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["structured"], ["text"]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    binary, root, elsewhere = sys.argv[1:4]
    SHAPE = (sys.argv[4:] or ["structured"])[0]
    all_tools = await asyncio.wait_for(main_session(binary, root), timeout=300)
    await asyncio.wait_for(roots_session(binary, root, elsewhere, all_tools), timeout=120)
    print(f"all MCP client checks passed ({SHAPE} shape)")


if __name__ == "__main__":
    asyncio.run(main())
