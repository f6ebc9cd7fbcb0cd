#!/usr/bin/env bash
# What the developer workflows (tests/suite/workflows.rs) need: the toolchains a new user types
# (Debian: Go, sqlite3, zip, fd-find, ripgrep, jq, python3-venv, Node.js with npm, make, gcc,
# git, curl), and the wheels a venv installs from the test's own package index on the loopback
# (pytest and what it needs; setuptools and wheel for `pip install -e .`), downloaded once
# from PyPI into "$target/workflows/wheels": the tests themselves reach no registry.
# Idempotent: what is already there is left as it is. As a normal user it only reports what is
# missing (those tests then skip loudly).
#
# "$target" is "${CARGO_TARGET_DIR:-target}", relative to the repository root when relative.
set -euo pipefail

cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$PWD/$target" ;;
esac

# command -> Debian package
declare -A PACKAGES=(
  [go]=golang-go [sqlite3]=sqlite3 [zip]=zip [unzip]=unzip [fdfind]=fd-find [rg]=ripgrep
  [jq]=jq [node]=nodejs [npm]=npm [make]=make [cc]=gcc [git]=git [curl]=curl
)
missing=()
for tool in "${!PACKAGES[@]}"; do
  command -v "$tool" >/dev/null || missing+=("${PACKAGES[$tool]}")
done
# The venv module needs ensurepip, which Debian ships apart (python3-venv).
python="${PYTHON:-python3}"
"$python" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup-workflows: missing ${missing[*]} (not root: the workflows that need them skip)"
  else
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
      apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
    }
    echo "setup-workflows: installed ${missing[*]}"
  fi
else
  echo "setup-workflows: go, sqlite3, zip, fdfind, rg, jq, node, npm, make, cc, git, curl present"
fi

# The wheels, for the python3 the tests run (pure-Python wheels: one set serves any 3.x).
wheels="$target/workflows/wheels"
have_wheels() {
  for name in pytest pluggy iniconfig packaging setuptools wheel; do
    compgen -G "$wheels/${name}-*.whl" >/dev/null || return 1
  done
}
if have_wheels; then
  echo "setup-workflows: $wheels already has pytest, setuptools and wheel"
else
  mkdir -p "$wheels"
  "$python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --dest "$wheels" 'pytest>=7,<10' 'setuptools>=68' 'wheel>=0.41'
  have_wheels
  echo "setup-workflows: downloaded $(ls "$wheels" | tr '\n' ' ')into $wheels"
fi
