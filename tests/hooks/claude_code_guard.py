#!/usr/bin/env python3
"""A hook written for Claude Code, to the JSON shapes of its documentation (hooks reference:
PreToolUse and PostToolUse input, exit code 2, hookSpecificOutput), used unchanged by the tests
with `names = "claude"` (tests/suite/hooks.rs, and over MCP and sneaky-agent).

- Bash: a command using grep or `find -name` is blocked (exit 2, the reason on stderr), as in
  the documentation's "Bash command validation" example.
- Write/Edit: a protected file (.env, package-lock.json, .git/) is denied with
  permissionDecision; a new Python file written with Write gets a header (updatedInput).
- PostToolUse on Write/Edit: additionalContext for Claude.
- With HOOK_LOG set, every event read is appended to that file.
"""
import json
import os
import re
import sys

VALIDATION_RULES = [
    (
        r"\bgrep\b(?!.*\|)",
        "Use 'rg' (ripgrep) instead of 'grep' for better performance and features",
    ),
    (
        r"\bfind\s+\S+\s+-name\b",
        "Use 'rg --files | rg pattern' or 'rg --files -g pattern' instead of 'find -name' for better performance",
    ),
]

PROTECTED = [".env", "package-lock.json", ".git/"]
HEADER = "# Checked by the team's hook.\n"

try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

if os.environ.get("HOOK_LOG"):
    with open(os.environ["HOOK_LOG"], "a") as log:
        log.write(json.dumps(input_data) + "\n")

event = input_data.get("hook_event_name", "")
tool_name = input_data.get("tool_name", "")
tool_input = input_data.get("tool_input", {})

if event == "PostToolUse":
    if tool_name in ("Write", "Edit"):
        print(json.dumps({
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": f"Remember to run the tests for {tool_input.get('file_path', '')}",
            }
        }))
    sys.exit(0)

if tool_name == "Bash":
    command = tool_input.get("command", "")
    issues = [message for pattern, message in VALIDATION_RULES if re.search(pattern, command)]
    if issues:
        for message in issues:
            print(f"• {message}", file=sys.stderr)
        # Exit code 2 blocks tool call and shows stderr to Claude
        sys.exit(2)
    sys.exit(0)

if tool_name in ("Write", "Edit"):
    file_path = tool_input.get("file_path", "")
    if any(p in file_path for p in PROTECTED):
        print(json.dumps({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"{os.path.basename(file_path)} is a protected file",
            }
        }))
        sys.exit(0)
    if tool_name == "Write" and file_path.endswith(".py") and not tool_input.get("content", "").startswith(HEADER):
        updated = dict(tool_input)
        updated["content"] = HEADER + tool_input.get("content", "")
        print(json.dumps({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "header added",
                "updatedInput": updated,
            }
        }))
        sys.exit(0)

sys.exit(0)
