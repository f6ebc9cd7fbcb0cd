#!/usr/bin/env bash
# Installs the reference tools the code navigation tools are measured against
# (tests/suite/code_nav_ctags.rs, benches/code_nav.sh): universal-ctags (`ctags`, its
# definitions) and ripgrep (`rg -w`, the lines a name is on), from Debian. The trees measured
# need no download: crates' sources in cargo's registry (pinned by Cargo.lock), Python's
# standard library and g++'s C++ standard library headers (package g++, installed with them
# when missing). Idempotent: does nothing when both are already installed.
set -euo pipefail
is_universal() {
  command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q '^Universal Ctags'
}
have_cxx_headers() {
  ls /usr/include/c++/*/bits/stl_vector.h >/dev/null 2>&1
}
if is_universal && command -v rg >/dev/null && have_cxx_headers; then
  echo "setup-ctags: $(ctags --version | head -n 1 | cut -d, -f1) and rg $(rg --version | sed -n '1s/^ripgrep \([^ ]*\).*/\1/p') already installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q universal-ctags ripgrep g++ >/dev/null 2>&1 || {
  apt-get update -q >/dev/null
  apt-get install -y -q universal-ctags ripgrep g++ >/dev/null
}
is_universal || { echo "setup-ctags: ctags on PATH is not Universal Ctags: $(command -v ctags)" >&2; exit 1; }
echo "setup-ctags: installed $(ctags --version | head -n 1 | cut -d, -f1) and rg $(rg --version | sed -n '1s/^ripgrep \([^ ]*\).*/\1/p')"
