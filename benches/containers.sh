#!/usr/bin/env bash
# benches/containers.sh [N...]: N workspaces (default 1, 4 and 16) served by `sneaky-mcp --http`
# in Podman containers (deploy/workspace.sh) against the same servers run directly on the host,
# side by side. Each workspace gets one client (all at once) making READS read_file, GREPS
# grep_files and COMMANDS run_command calls over HTTP; reported per setting: calls/s over all
# clients, p50 and p99 latency, failed calls, mean start time to a 200 from /healthz, and memory
# per workspace (resident memory of the server; in a container also of its conmon and init).
#
# Both sides run the same binaries with the same configuration (deploy/config.toml: network off,
# every layer required) as the same non-root uid per workspace (1001, 1002, …: the checkout's
# owner). As root, with podman (.ci/setup-podman.sh).
#
# Environment: SNEAKY_BINARIES (default target/release; built with --release when missing),
# SNEAKY_IMAGE (default sneaky:bench, built from those binaries by deploy/build-image.sh),
# READS=200 GREPS=20 COMMANDS=5.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
[ "$(id -u)" = 0 ] || { echo "containers.sh: run as root (containers and per-workspace uids)" >&2; exit 1; }
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 4 16)
bins="${SNEAKY_BINARIES:-${CARGO_TARGET_DIR:-target}/release}"
if [ ! -x "$bins/sneaky-mcp" ]; then
  cargo build --release --bins --locked
fi
bins=$(realpath "$bins")
image="${SNEAKY_IMAGE:-sneaky:bench}"
SNEAKY_BINARIES="$bins" bash deploy/build-image.sh "$image" >&2
export READS="${READS:-200}" GREPS="${GREPS:-20}" COMMANDS="${COMMANDS:-5}"

tmp=$(mktemp -d /tmp/sneaky-bench-containers.XXXXXX)
chmod 755 "$tmp"
names=()
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for name in "${names[@]}"; do
    SNEAKY_WS_STATE="$tmp/tokens" bash deploy/workspace.sh down "$name" >/dev/null 2>&1 || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/xdg/sneaky"
cp deploy/config.toml "$tmp/xdg/sneaky/config.toml"
chmod -R a+rX "$tmp/xdg"

# A workspace: a git repository with 50 source files (what grep walks) and a README.
make_ws() {
  local dir="$1" uid="$2" i
  mkdir -p "$dir/src"
  for i in $(seq 1 50); do
    printf 'pub fn f%d() -> u32 {\n    // a comment that grep does not want\n    %d\n}\n' "$i" "$i" >"$dir/src/m$i.rs"
  done
  printf '# bench\nhello\n' >"$dir/README.md"
  git init -q "$dir"
  git -C "$dir" add -A
  git -C "$dir" -c user.name=b -c user.email=b@b commit -qm init
  chown -R "$uid:$uid" "$dir"
}

wait_ready() {
  local port="$1" deadline=$((SECONDS + 60))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "containers.sh: nothing ready on $port" >&2; return 1; }
    sleep 0.02
  done
}

rss_kib() { # the resident memory of these pids, in KiB
  local total=0 pid kib
  for pid in "$@"; do
    kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
    total=$((total + ${kib:-0}))
  done
  echo "$total"
}

# The load: one client per workspace, all at once; prints "calls calls_per_s p50_ms p99_ms failed".
load() {
  python3 - "$@" <<'EOF'
import http.client, json, os, statistics, sys, threading, time

READS, GREPS, COMMANDS = (int(os.environ[k]) for k in ("READS", "GREPS", "COMMANDS"))
targets = [(int(p), open(t).read().strip()) for p, t in zip(sys.argv[1::2], sys.argv[2::2])]
latencies, failures, lock = [], [0], threading.Lock()

def client(port, token):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    base = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"}
    def post(body, session=None):
        headers = dict(base, **({"Mcp-Session-Id": session} if session else {}))
        conn.request("POST", "/mcp", json.dumps(body), headers)
        r = conn.getresponse()
        data = r.read().decode()
        if "event-stream" in (r.getheader("Content-Type") or ""):
            lines = [l[5:].strip() for l in data.splitlines() if l.startswith("data:") and l[5:].strip()]
            data = lines[-1] if lines else "{}"
        return r, (json.loads(data) if data.strip() else {})
    r, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "1"}}})
    session = r.getheader("Mcp-Session-Id")
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    calls = ([("read_file", {"file_path": "README.md"})] * READS
             + [("grep_files", {"pattern": "fn f1[0-9]"})] * GREPS
             + [("run_command", {"command": "git status --short && ls src | wc -l"})] * COMMANDS)
    mine, failed = [], 0
    for n, (tool, args) in enumerate(calls, 1):
        t0 = time.perf_counter()
        _, answer = post({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": tool, "arguments": args}}, session)
        mine.append(time.perf_counter() - t0)
        result = answer.get("result", {})
        if "error" in answer or result.get("isError"):
            failed += 1
            if failed == 1:
                print(f"failed {tool}: {json.dumps(answer)[:300]}", file=sys.stderr)
    with lock:
        latencies.extend(mine)
        failures[0] += failed

threads = [threading.Thread(target=client, args=t) for t in targets]
start = time.perf_counter()
for t in threads: t.start()
for t in threads: t.join()
wall = time.perf_counter() - start
q = statistics.quantiles(latencies, n=100)
print(f"{len(latencies)} {len(latencies) / wall:.0f} {q[49] * 1000:.1f} {q[98] * 1000:.1f} {failures[0]}")
EOF
}

printf '%-10s %3s %8s %8s %8s %8s %7s %9s %10s\n' where N calls calls/s p50_ms p99_ms failed start_ms MiB/ws
for n in "${counts[@]}"; do
  for where in host container; do
    args=()
    starts=0
    mem=0
    for i in $(seq 1 "$n"); do
      uid=$((1000 + i))
      dir="$tmp/$where-$n-$i"
      make_ws "$dir" "$uid"
      port=$((19000 + i))
      [ "$where" = container ] && port=$((19500 + i))
      t0=$(date +%s%N)
      if [ "$where" = host ]; then
        home="$tmp/home-$where-$n-$i"
        mkdir -p "$home"
        head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$home/token"
        chmod 600 "$home/token"
        chown -R "$uid:$uid" "$home"
        setpriv --reuid "$uid" --regid "$uid" --clear-groups \
          env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" XDG_CONFIG_HOME="$tmp/xdg" \
          "$bins/sneaky-mcp" --root "$dir" --http "127.0.0.1:$port" --token-file "$home/token" \
          2>/dev/null &
        pids+=($!)
        wait_ready "$port"
        args+=("$port" "$home/token")
      else
        name="sneaky-bench-$i"
        names+=("$name")
        out=$(SNEAKY_IMAGE="$image" SNEAKY_WS_STATE="$tmp/tokens" bash deploy/workspace.sh up "$dir" "$port" "$name")
        args+=("$port" "$(sed -n 's/^token: //p' <<<"$out")")
      fi
      starts=$((starts + ($(date +%s%N) - t0) / 1000000))
    done
    result=$(load "${args[@]}")
    if [ "$where" = host ]; then
      mem=$(rss_kib "${pids[@]}")
      for pid in "${pids[@]}"; do kill "$pid"; wait "$pid" 2>/dev/null || true; done
      pids=()
    else
      for name in "${names[@]}"; do
        init=$(podman inspect --format '{{.State.Pid}}' "$name")
        conmon=$(podman inspect --format '{{.State.ConmonPid}}' "$name")
        mem=$((mem + $(rss_kib "$init" "$conmon" $(cat "/proc/$init/task/$init/children"))))
      done
      for name in "${names[@]}"; do
        SNEAKY_WS_STATE="$tmp/tokens" bash deploy/workspace.sh down "$name" >/dev/null
      done
      names=()
    fi
    read -r calls rate p50 p99 failed <<<"$result"
    printf '%-10s %3d %8d %8d %8s %8s %7d %9d %10.1f\n' "$where" "$n" "$calls" "$rate" "$p50" "$p99" \
      "$failed" $((starts / n)) "$(awk -v m="$mem" -v n="$n" 'BEGIN { print m / n / 1024 }')"
  done
done
