"""Start sneaky-mcp as desktop hosts do, through the official Python MCP SDK's stdio client: no
--root, in a directory that is no project, with an empty home directory.

Usage: host_start_test.py SNEAKY_MCP_BINARY WORKSPACE_ROOT START_DIR HOME_DIR

WORKSPACE_ROOT holds hello.txt ("hello world\\n"); START_DIR (the server's working directory) and
HOME_DIR are empty and lie in no project (SNEAKY_CEILING_DIRECTORIES stops the search at
START_DIR). Run by tests/suite/mcp_client.rs with the venv that .ci/setup-mcp.sh makes. Prints one
line per check passed and exits non-zero on the first failure.
"""

import asyncio
import sys
import time
import warnings
from pathlib import Path

import mcp.types as types
from mcp import Client, StdioServerParameters

HANDSHAKE_TIMEOUT = 30

warnings.filterwarnings("ignore", message="ping is removed")
warnings.filterwarnings("ignore", message=".*roots.*")


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}")


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def server(binary, start, home, extra_args=()):
    # A desktop host's environment: what the SDK passes on by default, with an empty home and
    # no configuration; only the ceiling is the test's own.
    return StdioServerParameters(
        command=binary,
        args=list(extra_args),
        cwd=start,
        env={"HOME": home, "SNEAKY_CEILING_DIRECTORIES": start, "XDG_CONFIG_HOME": ""},
    )


async def all_tool_names(binary, root, start, home):
    """The tools a server with a workspace lists (the reference set)."""
    async with Client(server(binary, start, home, ["--root", root]), mode="legacy",
                      read_timeout_seconds=HANDSHAKE_TIMEOUT) as client:
        return {t.name for t in (await client.list_tools()).tools}


async def without_roots(binary, start, home, reference):
    """No --root and no roots: every tool listed; a call says how to give a root."""
    async with Client(server(binary, start, home), mode="legacy",
                      read_timeout_seconds=HANDSHAKE_TIMEOUT) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        check(names == reference, f"without a root every tool is listed ({len(names)} tools)")
        r = await client.call_tool("read_file", {"file_path": "hello.txt"})
        text = text_of(r)
        check(r.is_error and r.structured_content is None, f"a call is a tool error: {text}")
        check(text.startswith("invalid_args: no workspace"), "its text starts with the code")
        check("--root" in text and "roots" in text,
              "and says how to give a root (--root, or the host's roots)")


async def with_roots(binary, root, start, home, reference):
    """The host offers roots: its first root is the workspace."""
    uris = [Path(root).as_uri(), Path(start).as_uri()]

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in uris])

    async with Client(server(binary, start, home), mode="legacy", list_roots_callback=list_roots,
                      read_timeout_seconds=HANDSHAKE_TIMEOUT) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        check(names == reference, "with roots every tool is listed")
        r = await client.call_tool("read_file", {"file_path": "hello.txt"})
        check(not r.is_error and r.structured_content["content"] == "hello world\n",
              f"the host's first root is the workspace: {text_of(r)}")


async def roots_never_answered(binary, start, home, reference):
    """The host declares roots but never answers roots/list: tools/list does not wait."""
    asked = asyncio.Event()

    async def never(context):
        asked.set()
        await asyncio.sleep(3600)

    async with Client(server(binary, start, home), mode="legacy", list_roots_callback=never,
                      read_timeout_seconds=HANDSHAKE_TIMEOUT) as client:
        began = time.monotonic()
        names = {t.name for t in (await client.list_tools()).tools}
        took = time.monotonic() - began
        check(names == reference, "roots unanswered: every tool is listed")
        check(took < 1.0, f"roots unanswered: tools/list answered within 1 s ({took:.3f} s)")
        await asyncio.wait_for(asked.wait(), timeout=5)
        check(True, "the server did ask roots/list")


async def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    binary, root, start, home = sys.argv[1:]
    reference = await asyncio.wait_for(all_tool_names(binary, root, start, home), timeout=60)
    check(len(reference) > 4, f"the reference list has {len(reference)} tools")
    await asyncio.wait_for(without_roots(binary, start, home, reference), timeout=60)
    await asyncio.wait_for(with_roots(binary, root, start, home, reference), timeout=60)
    await asyncio.wait_for(roots_never_answered(binary, start, home, reference), timeout=60)
    print("all host start-up checks passed")


if __name__ == "__main__":
    asyncio.run(main())
