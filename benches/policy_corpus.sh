#!/usr/bin/env bash
# How much of what real agents type run_command's policy refuses: every command of the corpus
# benches/agent_commands/commands.jsonl.gz (real shell commands of Claude Code, Codex CLI,
# mini-swe-agent and SWE-agent, from public trajectories: benches/agent_commands/README.md)
# goes through `sneaky-run --check-policy` (the policy step only, nothing runs) on an empty
# temporary workspace, with the defaults (no configuration file of yours is read) or with the
# configuration given by --config. Prints the share refused overall and per agent, and the
# refusal reasons grouped (count, reason, an example), the programs refusals name; with
# --refused-out FILE also writes every refused command with its reason (JSON lines).
#
# A debug build is enough (the policy step is the same code); about 45 s for 6,400 commands
# on this 2-core machine with one check at a time (JOBS=2 halves it).
#
# Usage: benches/policy_corpus.sh [--config FILE] [--refused-out FILE] [--agent NAME]...
#                                 [--top N] [--no-rebase] [--corpus FILE]
# e.g.   benches/policy_corpus.sh
#        benches/policy_corpus.sh --config benches/agent_commands/interpreters.toml
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --bin sneaky-run -q
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
exec python3 benches/agent_commands/policy_check.py --sneaky-run "$TARGET/debug/sneaky-run" "$@"
