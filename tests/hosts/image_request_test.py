"""The requests sneaky-agent sends after read_file returned images validate as the OpenAI and
Anthropic Python SDKs' own message types, with each image where that API takes one.

Usage: image_request_test.py REQUESTS_JSON

REQUESTS_JSON is {"openai": BODY, "anthropic": BODY}: the second request of each run of
tests/suite/media.rs, after two read_file calls (shot.png, 48 x 20, as it is; big.png,
2400 x 600, scaled down to 2000 x 500). Run with the venv that .ci/setup-hosts.sh makes. Prints
one line per check and exits non-zero on the first failure.
"""

import base64
import json
import struct
import sys
import pydantic
from anthropic.types import ImageBlockParam, MessageParam, TextBlockParam, ToolResultBlockParam
from openai.types.chat import ChatCompletionContentPartParam, ChatCompletionMessageParam


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}")


def validate(type_, value, what):
    """Validate one value as an SDK type. pydantic checks the items of an Iterable field only
    as they are consumed (lazily), so the nested parts are validated one by one, each as its
    own type, rather than through their container."""
    pydantic.TypeAdapter(type_).validate_python(value)
    return value


def png_size(data):
    raw = base64.b64decode(data, validate=True)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "a PNG"
    return struct.unpack(">II", raw[16:24])


def openai(body):
    for message in body["messages"]:
        validate(ChatCompletionMessageParam, message, "message")
    check(True, "every message validates as ChatCompletionMessageParam")
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    check([m["tool_call_id"] for m in tools] == ["c1", "c2"], "both tool results follow the calls")
    check(all(isinstance(m["content"], str) for m in tools), "tool messages hold text only")
    last = body["messages"][-1]
    check(last["role"] == "user", "the images follow in a user message")
    for part in last["content"]:
        validate(ChatCompletionContentPartParam, part, "content part")
    check(True, "each part of it validates as ChatCompletionContentPartParam")
    parts = [p for p in last["content"] if p["type"] == "image_url"]
    check(len(parts) == 2, "one image_url part per image")
    sizes = []
    for part in parts:
        url = part["image_url"]["url"]
        check(url.startswith("data:image/png;base64,"), "a data: URL of a PNG")
        sizes.append(png_size(url.split(",", 1)[1]))
    check(sizes == [(48, 20), (2000, 500)], f"the images as read_file returned them: {sizes}")


def anthropic(body):
    for message in body["messages"]:
        validate(MessageParam, message, "message")
    check(True, "every message validates as anthropic MessageParam")
    results = body["messages"][-1]["content"]
    for result in results:
        validate(ToolResultBlockParam, result, "tool_result")
    check(True, "each result validates as ToolResultBlockParam")
    check([r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"], "both tool_result blocks")
    sizes = []
    for result in results:
        blocks = result["content"]
        validate(TextBlockParam, blocks[0], "text block")
        validate(ImageBlockParam, blocks[1], "image block")
        check(blocks[0]["type"] == "text" and "PNG image" in blocks[0]["text"], "the text says what it is")
        source = blocks[1]["source"]
        check(blocks[1]["type"] == "image" and source["type"] == "base64"
              and source["media_type"] == "image/png", "an image block in the tool_result")
        sizes.append(png_size(source["data"]))
    check(sizes == [(48, 20), (2000, 500)], f"the images as read_file returned them: {sizes}")


def main():
    with open(sys.argv[1]) as f:
        requests = json.load(f)
    openai(requests["openai"])
    anthropic(requests["anthropic"])
    print("all image request checks passed")


if __name__ == "__main__":
    main()
