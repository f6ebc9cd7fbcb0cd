#!/usr/bin/env bash
# Installs the shells whose completion scripts the tests check (tests/suite/generated.rs):
# bash runs every completions/*.bash with COMP_WORDS; zsh -n and fish -n parse the others.
# Idempotent: nothing is installed when both shells are already there. As a normal user without
# them, the test says which are missing and skips that check loudly.
set -euo pipefail

missing=()
for shell in zsh fish; do
  command -v "$shell" >/dev/null || missing+=("$shell")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-shelluser: zsh and fish are installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-shelluser: not root; cannot install ${missing[*]} (the completion parse check skips them)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
}
echo "setup-shelluser: installed ${missing[*]}"
