#!/usr/bin/env bash
# Installs the reference tools the scale and read-tool tests compare against: ripgrep (`rg`) and
# fd-find (`fdfind`) from Debian (tests/suite/read_tools.rs: file sets of grep -l/-c and find's
# filters against the real tools). Idempotent: does nothing when both are already installed.
set -euo pipefail
if command -v rg >/dev/null && command -v fdfind >/dev/null; then
  echo "setup-scale: rg $(rg --version | sed -n '1s/^ripgrep \([^ ]*\).*/\1/p') and fdfind $(fdfind --version | cut -d' ' -f2) already installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q ripgrep fd-find >/dev/null 2>&1 || {
  apt-get update -q >/dev/null
  apt-get install -y -q ripgrep fd-find >/dev/null
}
echo "setup-scale: installed rg $(rg --version | sed -n '1s/^ripgrep \([^ ]*\).*/\1/p') and fdfind $(fdfind --version | cut -d' ' -f2)"
