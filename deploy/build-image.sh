#!/usr/bin/env bash
# deploy/build-image.sh [TAG]: builds the workspace image (default tag sneaky:latest) that
# deploy/workspace.sh runs, one container per workspace (docs/containers.md).
#
# The image is FROM scratch: the sneaky binaries, and what a workspace's commands need (bash,
# dash as /bin/sh, coreutils, git, grep, sed, find, diff) copied from this machine's Debian
# packages with the shared libraries they load. No registry is needed, so it builds offline.
# Inside: a non-root user `sneaky` (1000:1000; deploy/workspace.sh runs the container as the
# checkout's owner instead), `/ws` the workspace, a world-writable `/tmp` and home, the default
# configuration deploy/config.toml (network off, every sandbox layer required), and git told
# that `/ws` is safe whoever owns it.
#
# Environment:
#   SNEAKY_BINARIES=DIR  take the sneaky-* binaries from DIR instead of building them with
#                        `cargo build --release --bins --locked` (CI reuses its test build);
#                        debug binaries are stripped while staging.
#   ENGINE=podman|docker the engine (default: podman, else docker).
set -euo pipefail

cd "$(dirname "$0")/.."
tag="${1:-sneaky:latest}"

engine="${ENGINE:-}"
if [ -z "$engine" ]; then
  if command -v podman >/dev/null; then
    engine=podman
  elif command -v docker >/dev/null; then
    engine=docker
  else
    echo "build-image: neither podman nor docker is installed" >&2
    exit 1
  fi
fi

if [ -n "${SNEAKY_BINARIES:-}" ]; then
  bins="$SNEAKY_BINARIES"
else
  cargo build --release --bins --locked
  target="${CARGO_TARGET_DIR:-target}"
  bins="$target/release"
fi
# Every binary the package declares (bin/*.rs): sneaky-mcp starts the others beside itself.
names=()
for main in bin/*.rs; do
  names+=("$(basename "$main" .rs)")
done
for name in "${names[@]}"; do
  [ -x "$bins/$name" ] || { echo "build-image: $bins/$name is missing (set SNEAKY_BINARIES to a directory holding every sneaky binary)" >&2; exit 1; }
done

for pkg in bash dash coreutils git grep sed findutils diffutils; do
  dpkg -s "$pkg" >/dev/null 2>&1 || { echo "build-image: the Debian package $pkg is not installed here (apt-get install $pkg)" >&2; exit 1; }
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/rootfs"
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,usr/local/bin,etc/xdg/sneaky,ws,tmp,home/sneaky,proc,sys,dev,run}
# Debian 12 merges /bin, /sbin and /lib into /usr: the same links in the image.
for dir in bin sbin lib lib64; do
  ln -s "usr/$dir" "$root/$dir"
done
chmod 1777 "$root/tmp" "$root/home/sneaky"

# The files of the workspace's tools, as their packages list them, without documentation,
# translations and the parts of git that reach the network or need perl's libraries.
usr_path() {
  # /bin/x, /lib/x … are /usr/bin/x, /usr/lib/x … on a merged-/usr system.
  local top="${1#/}"
  top="/${top%%/*}"
  case "$top" in
    /bin | /sbin | /lib | /lib64) if [ -L "$top" ]; then echo "/usr$1"; return; fi ;;
  esac
  echo "$1"
}
list="$stage/files"
: >"$list"
for pkg in bash dash coreutils git grep sed findutils diffutils; do
  dpkg -L "$pkg" | while IFS= read -r path; do
    case "$path" in
      /usr/share/* | /etc/* | /usr/lib/git-core/git-daemon | /usr/lib/git-core/git-http-* | \
        /usr/lib/git-core/git-remote-http* | /usr/lib/git-core/git-remote-ftp* | \
        /usr/lib/git-core/git-imap-send | /usr/lib/git-core/git-shell | /usr/bin/git-shell | \
        /usr/bin/scalar | /usr/lib/git-core/scalar | /usr/lib/git-core/mergetools*) continue ;;
    esac
    [ -d "$path" ] && [ ! -L "$path" ] && continue
    [ -e "$path" ] || [ -L "$path" ] || continue
    usr_path "$path"
  done >>"$list"
done
# git init copies its templates; git's own files read nothing else from /usr/share.
find /usr/share/git-core/templates \( -type f -o -type l \) >>"$list"
# /bin/sh is dash, as on the host.
echo /usr/bin/sh >>"$list"

# The shared libraries of every ELF file above and of the sneaky binaries, each with the
# links that name it (libc.so.6 -> …), and the ELF loader by the path binaries name it.
libs="$stage/libs"
: >"$libs"
{
  cat "$list"
  for name in "${names[@]}"; do echo "$bins/$name"; done
} | while IFS= read -r file; do
  [ -f "$file" ] && [ ! -L "$file" ] || continue
  head -c 4 "$file" | grep -q 'ELF' || continue
  ldd "$file" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'
done | sort -u | while IFS= read -r lib; do
  lib=$(usr_path "$lib")
  while [ -L "$lib" ]; do
    echo "$lib"
    next=$(readlink "$lib")
    case "$next" in
      /*) lib=$(usr_path "$next") ;;
      *) lib="$(dirname "$lib")/$next" ;;
    esac
  done
  echo "$lib"
done >>"$libs"
cat "$libs" >>"$list"
sort -u -o "$list" "$list"
# tar keeps hard links (git's builtins are one file under 140 names) and symbolic links.
tar -C / -cf - --no-recursion -T <(sed 's|^/||' "$list") | tar -C "$root" -xf -

for name in "${names[@]}"; do
  install -m 0755 "$bins/$name" "$root/usr/local/bin/$name"
  # Debug builds carry line tables and symbols (hundreds of MB for all): the image needs neither.
  if command -v objcopy >/dev/null; then
    objcopy --strip-all "$root/usr/local/bin/$name"
  fi
done

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
sneaky:x:1000:1000:sneaky workspace:/home/sneaky:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
sneaky:x:1000:
nogroup:x:65534:
EOF
# The container runs as the checkout's owner (deploy/workspace.sh), whose uid is rarely in
# /etc/passwd here; /ws is the one repository the image serves, whoever owns it.
cat >"$root/etc/gitconfig" <<'EOF'
[safe]
	directory = /ws
[init]
	defaultBranch = main
EOF
install -m 0644 deploy/config.toml "$root/etc/xdg/sneaky/config.toml"

cat >"$stage/Containerfile" <<'EOF'
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    HOME=/home/sneaky \
    XDG_CONFIG_HOME=/etc/xdg \
    LANG=C.UTF-8
USER 1000:1000
WORKDIR /ws
EXPOSE 8765
ENTRYPOINT ["/usr/local/bin/sneaky-mcp"]
CMD ["--root", "/ws", "--http", "0.0.0.0:8765", "--log-format", "json"]
EOF
"$engine" build --quiet -t "$tag" -f "$stage/Containerfile" "$stage" >/dev/null
size=$("$engine" image inspect --format '{{.Size}}' "$tag")
echo "build-image: built $tag with $engine ($((size / 1000000)) MB; binaries from $bins)"
