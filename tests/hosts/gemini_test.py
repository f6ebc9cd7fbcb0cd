"""The Google Gen AI Python SDK's own types take `sneaky-agent tools --format gemini`.

Usage: gemini_test.py EXPORTS_JSON

EXPORTS_JSON maps "gemini" to that export and "anthropic" to the Anthropic one (plain JSON
Schema, with `["integer", "null"]` types), which serves as the control: the SDK must refuse it,
or the check would prove nothing. Run by tests/suite/agent_pipe.rs with the venv that
.ci/setup-hosts.sh makes. Prints one line per check and exits non-zero on the first failure.
"""

import json
import sys

import pydantic
from google.genai import types


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok: {message}")


def schemas(schema):
    """The schema and every schema inside it."""
    yield schema
    for sub in (schema.properties or {}).values():
        yield from schemas(sub)
    if schema.items is not None:
        yield from schemas(schema.items)
    for sub in schema.any_of or []:
        yield from schemas(sub)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        exports = json.load(f)
    declarations = exports["gemini"]
    check(len(declarations) == len(exports["anthropic"]), f"{len(declarations)} declarations")

    # The SDK's models forbid unknown fields, and Type is an enum: a list of types, an
    # additionalProperties or a const would fail here.
    tool = types.Tool.model_validate({"functionDeclarations": declarations})
    check(len(tool.function_declarations) == len(declarations),
          "types.Tool takes every declaration as functionDeclarations")
    for raw, declaration in zip(declarations, tool.function_declarations):
        name = declaration.name
        check(declaration.description, f"{name}: has a description")
        parameters = declaration.parameters
        check(parameters is not None and parameters.type == types.Type.OBJECT,
              f"{name}: parameters are an OBJECT schema")
        for schema in schemas(parameters):
            check(schema.type is not None or schema.any_of, f"{name}: every schema has a type")
        required = set(parameters.required or [])
        for prop, schema in (parameters.properties or {}).items():
            check((prop in required) != bool(schema.nullable),
                  f"{name}.{prop}: nullable exactly when optional")
        dumped = declaration.model_dump(by_alias=True, exclude_none=True, mode="json")
        check(dumped["parameters"]["properties"].keys() == raw["parameters"]["properties"].keys(),
              f"{name}: the SDK keeps every parameter")

    # The control: the same tools in plain JSON Schema are refused by these types.
    refused = 0
    for tool_def in exports["anthropic"]:
        try:
            types.FunctionDeclaration.model_validate({
                "name": tool_def["name"], "description": tool_def["description"],
                "parameters": tool_def["input_schema"]})
        except (pydantic.ValidationError, ValueError, AttributeError):
            # The SDK's case-insensitive Type enum raises on a list of types before pydantic
            # can report it.
            refused += 1
    check(refused > 0, f"the control: {refused} plain JSON Schema declarations are refused")
    print("all Gemini SDK checks passed")


if __name__ == "__main__":
    main()
