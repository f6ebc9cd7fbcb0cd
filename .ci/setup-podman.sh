#!/usr/bin/env bash
# What the workspace-container test (tests/suite/fleet.rs, which runs
# tests/containers/fleet_test.py) needs: Podman and runc from Debian (crun 1.8, Podman's
# other runtime there, refuses this VM's hybrid cgroup layout: docs/containers.md), catatonit
# for --init, iptables for the firewall deploy/workspace.sh puts in each container's network
# namespace, and curl for its readiness check. Idempotent; as a normal user it only reports
# what is missing (the test then skips loudly).
set -euo pipefail
missing=()
for tool in podman runc iptables curl; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -x /usr/libexec/podman/catatonit ] || [ -x /usr/bin/catatonit ] || missing+=(catatonit)
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-podman: $(podman --version), runc $(runc --version | sed -n '1s/^runc version //p') present"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-podman: missing ${missing[*]} (not root: the container test skips)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
packages=(podman runc catatonit iptables curl)
apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1 || {
  apt-get update -qq && apt-get install -y -qq "${packages[@]}" >/dev/null
}
echo "setup-podman: installed $(podman --version), runc $(runc --version | sed -n '1s/^runc version //p')"
