#!/usr/bin/env bash
# deploy/workspace.sh up DIR PORT [NAME] | down [--keep-history] NAME — one Podman container
# per workspace, serving DIR as `sneaky-mcp --http` on 127.0.0.1:PORT (docs/containers.md says
# why each option is there).
#
#   up    starts the container NAME (default sneaky-PORT) from the image of
#         deploy/build-image.sh, waits until GET /healthz answers 200, and prints the URL and the
#         path of the workspace's bearer token: a file only the caller can read. Inside, the
#         token is a Podman secret mounted at /run/secrets/NAME-token for the checkout's owner
#         only, never in the environment or `podman inspect`, and named to sneaky-mcp with
#         --token-file, which puts it on every command's read-deny list.
#   down  stops and removes the container, its network, its secret, the token file and its home
#         volume (NAME-home: the undo history and the layers that hold a command's changes,
#         which overlayfs cannot keep on the container's own overlay root). With
#         --keep-history the volume stays, and the next `up` of the same checkout as NAME goes
#         on with its history (`down NAME` removes it then).
#
# Environment (defaults in brackets):
#   SNEAKY_IMAGE      the image [sneaky:latest]
#   SNEAKY_MEMORY     memory limit [2g]      SNEAKY_PIDS  process limit [2048]
#   SNEAKY_CPUS       CPU limit [2]
#   SNEAKY_WS_CONFIG  a configuration file to use instead of the image's (mounted read-only
#                     where the image keeps its own; a workspace's sneaky.toml still only
#                     tightens it)
#   SNEAKY_SECCOMP    a seccomp profile instead of Podman's default (Podman's allows the
#                     namespaces; Docker's does not: deploy/seccomp.json is Docker's plus them)
#   SNEAKY_WS_STATE   where token files go [${XDG_STATE_HOME:-~/.local/state}/sneaky/workspaces]
#   SNEAKY_WS_READY_SECONDS  how long `up` waits for /healthz [60]
set -euo pipefail

usage() {
  sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "workspace: $*" >&2
  exit 1
}

command -v podman >/dev/null || die "podman is not installed (Debian: apt-get install podman runc)"
command -v curl >/dev/null || die "curl is not installed (it checks /healthz)"
image="${SNEAKY_IMAGE:-sneaky:latest}"
state="${SNEAKY_WS_STATE:-${XDG_STATE_HOME:-$HOME/.local/state}/sneaky/workspaces}"
rootless=false
[ "$(id -u)" = 0 ] || rootless=true

# Runs a command in the container's network namespace (rootless: as the user namespace's root,
# which owns that network namespace).
in_netns() {
  local netns="$1"
  shift
  if $rootless; then
    podman unshare nsenter --net="$netns" "$@"
  else
    nsenter --net="$netns" "$@"
  fi
}

# The container's own firewall: it answers on its port and starts no connection (not to the
# host, not to another workspace, not beyond). Set from outside before the server starts; the
# container has no CAP_NET_ADMIN to change it.
firewall() {
  local netns="$1" tool
  # iptables lives in /usr/sbin, which a normal user's PATH may lack (rootless Podman).
  local PATH="$PATH:/usr/sbin:/sbin"
  for tool in iptables-restore ip6tables-restore; do
    in_netns "$netns" "$tool" -w <<'EOF'
*filter
:INPUT DROP [0:0]
:FORWARD DROP [0:0]
:OUTPUT DROP [0:0]
-A INPUT -i lo -j ACCEPT
-A OUTPUT -o lo -j ACCEPT
-A INPUT -p tcp --dport 8765 -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT
-A OUTPUT -p tcp --sport 8765 -m conntrack --ctstate ESTABLISHED -j ACCEPT
COMMIT
EOF
  done
}

up() {
  [ $# -ge 2 ] && [ $# -le 3 ] || usage
  local dir port name
  dir=$(realpath -e "$1") || die "no such directory: $1"
  [ -d "$dir" ] || die "not a directory: $dir"
  port="$2"
  [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die "PORT must be a number from 1 to 65535, not $port"
  name="${3:-sneaky-$port}"
  [[ "$name" =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ ]] || die "NAME may hold letters, digits, _ . and - only: $name"
  podman image exists "$image" || die "no image $image (build it with deploy/build-image.sh $image)"
  podman container exists "$name" && die "a container named $name exists (deploy/workspace.sh down $name)"
  # A home volume kept by `down --keep-history` holds the undo history of one checkout only.
  local home="$name-home"
  if podman volume exists "$home"; then
    local owner
    owner=$(podman volume inspect --format '{{index .Labels "sneaky.workspace"}}' "$home")
    [ "$owner" != "<no value>" ] || owner=
    [ "$owner" = "$dir" ] || die "the volume $home holds the history of ${owner:-another checkout}, not of $dir: remove it (deploy/workspace.sh down $name) or choose another NAME"
  else
    podman volume create --label sneaky.workspace="$dir" "$home" >/dev/null
  fi

  # The commands run as the checkout's owner, so that what they write belongs to that owner
  # and git finds the repository owned by the user running it.
  local uid gid
  uid=$(stat -c %u "$dir")
  gid=$(stat -c %g "$dir")
  local userns=()
  if $rootless; then
    [ "$uid" = "$(id -u)" ] || die "$dir belongs to uid $uid, not to you ($(id -u)): rootless Podman can serve only your own checkouts"
    # Your uid is the same uid inside; the container's root is one of your subordinate ids.
    userns=(--userns=keep-id)
  else
    # Rootful, the container's processes are host uid $uid: never root, with no capability
    # and no way to gain one, so the unmasked /proc below opens nothing root-only.
    [ "$uid" != 0 ] || die "$dir belongs to root: give the checkout to the user it should run as (chown -R USER $dir), or run rootless Podman as that user"
  fi

  mkdir -p "$state"
  chmod 700 "$state"
  local token_file="$state/$name.token"
  (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$token_file")

  local secret="$name-token" network="$name-net"
  podman secret rm "$secret" >/dev/null 2>&1 || true
  podman secret create "$secret" "$token_file" >/dev/null
  podman network exists "$network" || podman network create --disable-dns "$network" >/dev/null

  local config=()
  if [ -n "${SNEAKY_SECCOMP:-}" ]; then
    config+=(--security-opt "seccomp=$(realpath -e "$SNEAKY_SECCOMP")")
  fi
  if [ -n "${SNEAKY_WS_CONFIG:-}" ]; then
    config+=(-v "$(realpath -e "$SNEAKY_WS_CONFIG"):/etc/xdg/sneaky/config.toml:ro")
  fi

  if ! podman create \
    --name "$name" --hostname "$name" \
    --label sneaky.workspace="$dir" \
    --runtime runc \
    --init \
    "${userns[@]}" \
    --user "$uid:$gid" \
    --cap-drop=all \
    --security-opt no-new-privileges \
    --security-opt 'unmask=/proc/*' \
    --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 \
    --memory "${SNEAKY_MEMORY:-2g}" --pids-limit "${SNEAKY_PIDS:-2048}" --cpus "${SNEAKY_CPUS:-2}" \
    --network "$network" -p "127.0.0.1:$port:8765" \
    --secret "$secret,type=mount,uid=$uid,gid=$gid,mode=0400" \
    -v "$dir:/ws" \
    -v "$home:/home/sneaky:U" \
    "${config[@]}" \
    "$image" --root /ws --http 0.0.0.0:8765 --token-file "/run/secrets/$secret" --log-format json >/dev/null; then
    down "$name" >/dev/null 2>&1 || true
    die "podman could not create $name (see above)"
  fi

  local netns
  if ! podman init "$name" >/dev/null ||
    ! netns=$(podman inspect --format '{{.NetworkSettings.SandboxKey}}' "$name") ||
    [ -z "$netns" ] || ! firewall "$netns"; then
    down "$name" >/dev/null 2>&1 || true
    die "could not set up $name's network (see above)"
  fi
  if ! podman start "$name" >/dev/null; then
    down "$name" >/dev/null 2>&1 || true
    die "podman could not start $name (see above; is 127.0.0.1:$port taken?)"
  fi

  local deadline=$((SECONDS + ${SNEAKY_WS_READY_SECONDS:-60}))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ]; do
    if [ "$SECONDS" -ge "$deadline" ] || [ "$(podman inspect --format '{{.State.Running}}' "$name")" != true ]; then
      podman logs "$name" >&2 || true
      down "$name" >/dev/null 2>&1 || true
      die "$name did not become ready on 127.0.0.1:$port (its log is above)"
    fi
    sleep 0.1
  done
  echo "workspace $name: $dir on http://127.0.0.1:$port/mcp"
  echo "token: $token_file"
}

down() {
  local keep=false
  if [ "${1:-}" = --keep-history ]; then
    keep=true
    shift
  fi
  [ $# -eq 1 ] || usage
  local name="$1"
  [[ "$name" =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ ]] || die "not a workspace name: $name"
  local found=false
  if podman container exists "$name"; then
    podman rm -f -t 10 "$name" >/dev/null
    found=true
  fi
  if podman secret inspect "$name-token" >/dev/null 2>&1; then
    podman secret rm "$name-token" >/dev/null
    found=true
  fi
  if podman volume exists "$name-home"; then
    $keep || podman volume rm "$name-home" >/dev/null
    found=true
  fi
  if podman network exists "$name-net"; then
    podman network rm "$name-net" >/dev/null
    found=true
  fi
  rm -f "$state/$name.token"
  $found || die "no workspace named $name"
  if $keep && podman volume exists "$name-home"; then
    echo "workspace $name: removed; its undo history is kept in the volume $name-home"
  else
    echo "workspace $name: removed"
  fi
}

case "${1:-}" in
  up) shift && up "$@" ;;
  down) shift && down "$@" ;;
  *) usage ;;
esac
