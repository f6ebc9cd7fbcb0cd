//! `tools.shell.network` as a host list: only the listed hosts and ports, through the
//! sandbox's proxy; nothing else leaves the command's network namespace, name lookups
//! included, for the commands an agent types (curl, cargo) and for raw system calls (python3's
//! `socket`, a C probe). Every server is a local one on the host's loopback, and every test
//! asserts on what the server received, not only on what the command printed.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::run_exec::user_config;
use crate::sandbox::namespaces_or_skip;
use crate::util::{self, Ws};

const PYTHON: &str = "/usr/bin/python3";

/// An HTTP server on the host's loopback that answers every request with `body` and records
/// each request line it got; it lives as long as the test process.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(body: &'static str) -> Server {
        Server::serving(move |_| Some(body.as_bytes().to_vec()))
    }

    /// `files` maps a request path to its content (404 for the rest).
    fn serving(files: impl Fn(&str) -> Option<Vec<u8>> + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let files = Arc::new(files);
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (log, files) = (Arc::clone(&log), Arc::clone(&files));
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
                    let mut first = String::new();
                    if reader.read_line(&mut first).is_err() {
                        return;
                    }
                    loop {
                        let mut line = String::new();
                        match reader.read_line(&mut line) {
                            Ok(0) | Err(_) => break,
                            Ok(_) if line == "\r\n" => break,
                            Ok(_) => {}
                        }
                    }
                    let first = first.trim_end().to_string();
                    log.lock().expect("log").push(first.clone());
                    let path = first.split(' ').nth(1).unwrap_or("");
                    let (status, body) = match files(path) {
                        Some(b) => ("200 OK", b),
                        None => ("404 Not Found", b"no such file\n".to_vec()),
                    };
                    let mut conn = conn;
                    let _ = write!(
                        conn,
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = conn.write_all(&body);
                });
            }
        });
        Server { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }
}

fn run(w: &Ws, command: &str) -> Value {
    w.call("sneaky-run", json!({"command": command, "timeout": 60}))
        .json["result"]
        .clone()
}

fn out(r: &Value) -> String {
    format!(
        "{}{}",
        r["stdout"].as_str().unwrap_or(""),
        r["stderr"].as_str().unwrap_or("")
    )
}

fn ready(test: &str) -> bool {
    namespaces_or_skip(test) && util::require_cmd("curl")
}

/// The network as `network`, with curl, python3 and ./probe listed in
/// `extra_allowed_commands` (needless in the contained mode, the default, where they run).
fn config_with_curl(w: &Ws, network: &str, extra: &str) {
    user_config(
        w,
        &format!(
            "[tools.shell]\nnetwork = {network}\nextra_allowed_commands = [\"curl\", \"{PYTHON}\", \"./probe\"]\n{extra}"
        ),
    );
}

#[test]
fn a_host_list_lets_through_only_its_hosts_and_ports() {
    if !ready("a_host_list_lets_through_only_its_hosts_and_ports") {
        return;
    }
    let listed = Server::start("LISTED\n");
    let other = Server::start("OTHER\n");
    let w = util::ws();
    // A named list, reused by name.
    config_with_curl(
        &w,
        "[\"@mirror\"]",
        &format!(
            "[tools.shell.host_lists]\nmirror = [\"127.0.0.1:{}\"]\n",
            listed.port
        ),
    );
    let (a, b) = (listed.port, other.port);
    // Plain HTTP and a CONNECT tunnel (-p) to the listed host and port.
    let r = run(
        &w,
        &format!("curl -sS http://127.0.0.1:{a}/plain && curl -sS -p http://127.0.0.1:{a}/tunnel"),
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["stdout"], "LISTED\nLISTED\n", "{r}");
    let sandbox = r["sandbox"].as_str().unwrap_or("");
    assert!(
        sandbox.contains("through the sandbox's proxy") && sandbox.contains("loopback only"),
        "{r}"
    );
    // Another port, the same host by another name, and a direct connection: refused, and
    // the servers received nothing from them.
    for (cmd, want) in [
        (
            format!("curl -sS -i http://127.0.0.1:{b}/x"),
            "403 Forbidden",
        ),
        (format!("curl -sS -p http://127.0.0.1:{b}/x"), "403"),
        (
            format!("curl -sS -i http://localhost:{a}/x"),
            "403 Forbidden",
        ),
        (
            format!("curl -sS --noproxy '*' http://127.0.0.1:{a}/direct"),
            "Couldn't connect",
        ),
        (
            format!("curl -sS --noproxy '*' http://127.0.0.1:{b}/direct"),
            "Couldn't connect",
        ),
    ] {
        let r = run(&w, &cmd);
        assert!(out(&r).contains(want), "{cmd}: {r}");
    }
    let r = run(&w, &format!("curl -sS -i http://127.0.0.1:{b}/x"));
    assert!(
        out(&r).contains(&format!("127.0.0.1:{b} is not in tools.shell.network")),
        "the refusal names the key: {r}"
    );
    assert_eq!(
        listed.seen(),
        ["GET /plain HTTP/1.1", "GET /tunnel HTTP/1.1"],
        "the listed server got more than the two allowed requests"
    );
    assert!(other.seen().is_empty(), "{:?}", other.seen());

    // The control: with the network off, even the listed host is unreachable.
    config_with_curl(&w, "false", "");
    let r = run(&w, &format!("curl -sS http://127.0.0.1:{a}/off"));
    assert_ne!(r["exit_code"], 0, "{r}");
    assert_eq!(listed.seen().len(), 2, "{r}");
}

/// Raw system calls inside the namespace: a direct TCP connection to the host's loopback and
/// to an outside address, a UDP packet to a server on the host, a DNS query to the resolver,
/// a name lookup, a packet socket. Only the proxy answers.
const PROBE_PY: &str = r#"import socket, sys
A, B, U = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def attempt(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, "refused", e.errno)
def tcp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(addr)
    s.sendall(b"GET /raw HTTP/1.1\r\nHost: x\r\n\r\n")
    if not s.recv(100):
        raise OSError(0, "closed")
attempt("tcp-host-loopback-listed", lambda: tcp(("127.0.0.1", A)))
attempt("tcp-host-loopback-other", lambda: tcp(("127.0.0.1", B)))
attempt("tcp-outside", lambda: tcp(("192.0.2.1", 80)))
attempt("tcp6-outside", lambda: socket.create_connection(("2001:db8::1", 80), timeout=3))
def udp(addr, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(payload, addr)
    s.recvfrom(512)
attempt("udp-host", lambda: udp(("127.0.0.1", U), b"leak"))
ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")] or ["192.0.2.53"]
query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x06secret\x07example\x00\x00\x01\x00\x01"
attempt("udp-dns", lambda: udp((ns[0], 53), query))
attempt("udp-dns-public", lambda: udp(("192.0.2.53", 53), query))
attempt("lookup", lambda: socket.getaddrinfo("secret.example", 443))
attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
# Through the bridge: CONNECT to the listed port is tunnelled, to another answered 403.
import os
proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)[1]
def through(port):
    s = socket.create_connection(("127.0.0.1", int(proxy)), timeout=5)
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % port)
    got = b""
    while b"\r\n" not in got:
        more = s.recv(100)
        if not more:
            break
        got += more
    return got.split(b"\r\n")[0].decode()
print("proxy-listed", through(A))
print("proxy-other", through(B))
"#;

/// The same probes in C, as direct system calls: connect() to the host's loopback server
/// and sendto() of a UDP packet to the host's UDP server.
const PROBE_C: &str = r#"#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(atoi(argv[1]));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    printf("c-connect %s\n", connect(t, (struct sockaddr *)&a, sizeof a) == 0 ? "ok" : "refused");
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    a.sin_port = htons(atoi(argv[2]));
    sendto(u, "leak", 4, 0, (struct sockaddr *)&a, sizeof a);
    a.sin_port = htons(53);
    inet_pton(AF_INET, "192.0.2.53", &a.sin_addr);
    printf("c-udp-out %s\n", sendto(u, "leak", 4, 0, (struct sockaddr *)&a, sizeof a) == 4 ? "sent" : "refused");
    return 0;
}
"#;

#[test]
fn raw_system_calls_reach_nothing_but_the_proxy() {
    if !ready("raw_system_calls_reach_nothing_but_the_proxy") {
        return;
    }
    if !Path::new(PYTHON).is_file() && !util::skip(&format!("needs {PYTHON}")) {
        return;
    }
    let listed = Server::start("LISTED\n");
    let other = Server::start("OTHER\n");
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp");
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let u = udp.local_addr().expect("addr").port();
    let w = util::ws();
    w.write("probe.py", PROBE_PY);
    config_with_curl(&w, &format!("[\"127.0.0.1:{}\"]", listed.port), "");
    let r = run(
        &w,
        &format!("{PYTHON} probe.py {} {} {u}", listed.port, other.port),
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    let lines: Vec<&str> = r["stdout"].as_str().unwrap_or("").lines().collect();
    let get = |name: &str| {
        lines
            .iter()
            .find(|l| l.split(' ').next() == Some(name))
            .map(|l| l[name.len() + 1..].to_string())
            .unwrap_or_else(|| panic!("no {name} line: {r}"))
    };
    // Direct connections find the namespace's own loopback (nothing listens: refused) or
    // no route at all.
    assert_eq!(get("tcp-host-loopback-listed"), "refused 111", "{r}");
    assert_eq!(get("tcp-host-loopback-other"), "refused 111", "{r}");
    assert_eq!(get("tcp-outside"), "refused 101", "{r}");
    assert!(get("tcp6-outside").starts_with("refused"), "{r}");
    assert!(get("udp-host").starts_with("refused"), "{r}");
    assert!(get("udp-dns").starts_with("refused"), "{r}");
    assert!(get("udp-dns-public").starts_with("refused"), "{r}");
    assert!(get("lookup").starts_with("refused"), "{r}");
    assert!(get("packet").starts_with("refused"), "{r}");
    assert_eq!(
        get("proxy-listed"),
        "HTTP/1.1 200 Connection established",
        "{r}"
    );
    assert_eq!(get("proxy-other"), "HTTP/1.1 403 Forbidden", "{r}");
    let mut buf = [0u8; 64];
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a UDP packet reached the host: {r}"
    );
    // Neither server saw a raw request: the listed one got only the probe's empty tunnel.
    assert_eq!(listed.seen(), [""], "{r}");
    assert!(other.seen().is_empty(), "{:?}", other.seen());

    // The C probe: the same holds for direct system calls from a compiled program.
    let src = w.outside().join("probe.c");
    std::fs::write(&src, PROBE_C).expect("write");
    let compiled = Command::new("cc")
        .arg("-o")
        .arg(w.root.join("probe"))
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if compiled {
        let probe = || run(&w, &format!("./probe {} {u}", other.port));
        let mut r = probe();
        // The bridge listens on a port of the command's own loopback picked as the host's
        // server's was (any free one): should the two be the same number, the probe's connect
        // reaches the bridge. Then once more (another call, another port).
        let bridge = format!("127.0.0.1:{} through", other.port);
        if r["sandbox"].as_str().is_some_and(|s| s.contains(&bridge)) {
            r = probe();
        }
        assert_eq!(r["stdout"], "c-connect refused\nc-udp-out refused\n", "{r}");
        assert!(
            udp.recv_from(&mut buf).is_err(),
            "a UDP packet reached the host: {r}"
        );
        assert!(other.seen().is_empty(), "{:?}", other.seen());
    } else {
        util::skip("no C compiler for the C probe");
    }

    // The control: the host's own UDP server works, so the silence above is the sandbox's.
    UdpSocket::bind("127.0.0.1:0")
        .expect("bind")
        .send_to(b"control", ("127.0.0.1", u))
        .expect("send");
    assert!(
        udp.recv_from(&mut buf).is_ok(),
        "the UDP server does not work"
    );
}

#[test]
fn an_untrusted_workspace_cannot_widen_the_host_list() {
    if !ready("an_untrusted_workspace_cannot_widen_the_host_list") {
        return;
    }
    let listed = Server::start("LISTED\n");
    let other = Server::start("OTHER\n");
    let w = util::ws();
    // The user's list, without trusting the workspace.
    w.user_config(&format!(
        "[tools.shell]\nnetwork = [\"@mine\"]\nextra_allowed_commands = [\"curl\"]\n[tools.shell.host_lists]\nmine = [\"127.0.0.1:{}\"]\n",
        listed.port
    ));
    // The workspace asks for more: another port, the whole host, everything.
    for asked in [
        format!("[\"127.0.0.1:{}\", \"@mine\"]", other.port),
        "[\"127.0.0.1\"]".to_string(),
        "true".to_string(),
    ] {
        w.write(
            "sneaky.toml",
            &format!("[tools.shell]\nnetwork = {asked}\nextra_allowed_commands = [\"curl\"]\n"),
        );
        let r = run(
            &w,
            &format!(
                "curl -sS http://127.0.0.1:{}/a; curl -sS http://127.0.0.1:{}/b",
                listed.port, other.port
            ),
        );
        let text = out(&r);
        assert!(!text.contains("OTHER"), "{asked}: {r}");
        assert!(other.seen().is_empty(), "{asked}: {:?}", other.seen());
        // `@mine` and `true` keep the user's entry; a whole host the user limited to one port
        // is not kept.
        assert_eq!(
            text.contains("LISTED"),
            asked != "[\"127.0.0.1\"]",
            "{asked}: {r}"
        );
    }
    // A list nobody defined is a configuration error that names it.
    w.write("sneaky.toml", "[tools.shell]\nnetwork = [\"@nowhere\"]\n");
    let msg = w
        .call("sneaky-run", json!({"command": "true"}))
        .err("config_error", 2);
    assert!(
        msg.contains("\"nowhere\"") && msg.contains("host_lists"),
        "{msg}"
    );
}

/// A sparse registry of one crate, served on the host's loopback: `cargo run` of a project
/// that depends on it fetches through the proxy with `network = ["127.0.0.1:PORT"]`.
#[test]
fn cargo_builds_through_the_proxy_from_a_local_registry() {
    if !ready("cargo_builds_through_the_proxy_from_a_local_registry")
        || !util::require_cmd("cargo")
        || !util::require_cmd("tar")
    {
        return;
    }
    let w = util::ws();
    let pkg = w.outside().join("pkg/tiny-0.1.0");
    std::fs::create_dir_all(pkg.join("src")).expect("mkdir");
    std::fs::write(
        pkg.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("write");
    std::fs::write(pkg.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").expect("write");
    let krate = w.outside().join("tiny-0.1.0.crate");
    let tarred = Command::new("tar")
        .arg("-C")
        .arg(w.outside().join("pkg"))
        .arg("-czf")
        .arg(&krate)
        .arg("tiny-0.1.0")
        .status()
        .expect("tar");
    assert!(tarred.success());
    let bytes = std::fs::read(&krate).expect("crate");
    let sum: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let entry = format!(
        "{{\"name\":\"tiny\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{sum}\",\"features\":{{}},\"yanked\":false}}\n"
    );
    let port_cell = Arc::new(Mutex::new(0u16));
    let port_for_config = Arc::clone(&port_cell);
    let registry = Server::serving(move |path| match path {
        "/index/config.json" => {
            let port = *port_for_config.lock().expect("port");
            Some(
                format!("{{\"dl\":\"http://127.0.0.1:{port}/dl/{{crate}}-{{version}}.crate\"}}")
                    .into_bytes(),
            )
        }
        "/index/ti/ny/tiny" => Some(entry.clone().into_bytes()),
        "/dl/tiny-0.1.0.crate" => Some(bytes.clone()),
        _ => None,
    });
    *port_cell.lock().expect("port") = registry.port;
    w.write(
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\ntiny = \"0.1\"\n",
    );
    w.write(
        "src/main.rs",
        "fn main() { println!(\"answer {}\", tiny::answer()); }\n",
    );
    w.write(
        ".cargo/config.toml",
        &format!(
            "[source.crates-io]\nreplace-with = \"mirror\"\n[source.mirror]\nregistry = \"sparse+http://127.0.0.1:{}/index/\"\n",
            registry.port
        ),
    );
    let cargo_run = |network: &str| {
        user_config(&w, &format!("[tools.shell]\nnetwork = {network}\n"));
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("sneaky-run"));
        util::fence(&mut cmd, w.outside())
            .current_dir(&w.root)
            .env_remove("CARGO_TARGET_DIR")
            // cargo's own home in the workspace: the registry cache is written there.
            .env("CARGO_HOME", w.root.join(".cargo-home"))
            .env("SNEAKY_ROOT", &w.root)
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
            .env("XDG_STATE_HOME", w.outside().join("state"))
            .args(["--timeout", "300", "cargo run -q"]);
        let out = cmd.output().expect("run");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v["result"].clone()
    };
    // The control first: with the network off, the registry cannot be reached.
    let r = cargo_run("false");
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(registry.seen().is_empty(), "{:?}", registry.seen());
    let r = cargo_run(&format!("[\"127.0.0.1:{}\"]", registry.port));
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["stdout"], "answer 42\n", "{r}");
    assert!(
        registry
            .seen()
            .contains(&"GET /dl/tiny-0.1.0.crate HTTP/1.1".to_string()),
        "{:?}",
        registry.seen()
    );
}

/// Requests sent to the sandbox's proxy as written (curl would rewrite a numeric host name
/// into an address before asking): for each argument, `CONNECT host:port` and a request
/// through the tunnel, or `GET http://…`; prints the proxy's status line, then the last line
/// of the body (the tunnelled server's, or the proxy's own answer).
const ASK_PY: &str = r#"import os, socket, sys
proxy = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def read_all(s):
    got = b""
    while True:
        more = s.recv(4096)
        if not more:
            return got
        got += more
for target in sys.argv[1:]:
    s = socket.create_connection(("127.0.0.1", proxy), timeout=20)
    if target.startswith("http://"):
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % target.encode())
        reply = read_all(s)
    else:
        s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            more = s.recv(1)
            if not more:
                break
            head += more
        if head.startswith(b"HTTP/1.1 200"):
            s.sendall(b"GET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = head + read_all(s)
    status = reply.split(b"\r\n")[0].decode()
    if b"\r\n\r\n" in reply:
        body = reply.split(b"\r\n\r\n", 1)[1]
    else:
        body = b""
    last = body.decode(errors="replace").strip().split("\n")[-1]
    print(target, "|", status, "|", last)
"#;

/// What the proxy answered `ask.py` for each target: (status line, last body line).
fn ask(w: &Ws, targets: &[String]) -> Vec<(String, String)> {
    w.write("ask.py", ASK_PY);
    let r = run(w, &format!("{PYTHON} ask.py {}", targets.join(" ")));
    assert_eq!(r["exit_code"], 0, "{r}");
    let text = r["stdout"].as_str().unwrap_or("").to_string();
    let answers: Vec<(String, String)> = text
        .lines()
        .map(|l| {
            let mut parts = l.splitn(3, " | ");
            let _target = parts.next();
            (
                parts.next().unwrap_or("").to_string(),
                parts.next().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(answers.len(), targets.len(), "{r}");
    answers
}

fn ready_with_python(test: &str) -> bool {
    ready(test) && (Path::new(PYTHON).is_file() || !util::skip(&format!("needs {PYTHON}")))
}

/// Names that are not addresses to the host list but that this host's resolver answers with
/// 127.0.0.1: a number (the resolver reads `2130706433` as 127.0.0.1 without a lookup, as it
/// reads `127.1`), and this host's own name where its resolver gives the loopback (here,
/// /etc/hosts does; a test cannot change DNS, so elsewhere only the first is tried).
fn loopback_names() -> Vec<String> {
    use std::net::ToSocketAddrs;
    let mut names = vec!["2130706433".to_string()];
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    let to_loopback = (host, 80).to_socket_addrs().is_ok_and(|mut a| {
        let all: Vec<_> = a.by_ref().collect();
        !all.is_empty() && all.iter().all(|a| a.ip().is_loopback())
    });
    if !host.is_empty() && host != "localhost" && to_loopback {
        names.push(host.to_string());
    } else {
        eprintln!("note: this host's name does not resolve to the loopback; tried {names:?} only");
    }
    names
}

#[test]
fn a_listed_name_reaches_no_loopback_port_unless_its_address_is_listed() {
    if !ready_with_python("a_listed_name_reaches_no_loopback_port_unless_its_address_is_listed") {
        return;
    }
    let server = Server::start("LOOPBACK\n");
    let p = server.port;
    let w = util::ws();
    for name in loopback_names() {
        let targets = [format!("http://{name}:{p}/plain"), format!("{name}:{p}")];
        // The name alone (every port of it): the proxy looks it up, finds the loopback, and
        // refuses, naming the key and the address to add.
        config_with_curl(&w, &format!("[\"{name}\"]"), "");
        for (status, body) in ask(&w, &targets) {
            assert_eq!(status, "HTTP/1.1 403 Forbidden", "{name}: {body}");
            assert!(
                body.contains("tools.shell.network")
                    && body.contains(&format!("\"127.0.0.1:{p}\""))
                    && body.contains("loopback"),
                "{name}: {body}"
            );
        }
        // The address listed for another port: still refused.
        let other = p.checked_add(1).unwrap_or(p - 1);
        config_with_curl(&w, &format!("[\"{name}\", \"127.0.0.1:{other}\"]"), "");
        for (status, body) in ask(&w, &targets) {
            assert_eq!(status, "HTTP/1.1 403 Forbidden", "{name}: {body}");
        }
        assert!(server.seen().is_empty(), "{name}: {:?}", server.seen());
        // The address listed with the port, or a range holding it: reached, by the name.
        for extra in [format!("127.0.0.1:{p}"), "127.0.0.0/8".to_string()] {
            config_with_curl(&w, &format!("[\"{name}\", \"{extra}\"]"), "");
            let answers = ask(&w, &targets);
            assert_eq!(
                answers,
                [
                    ("HTTP/1.1 200 OK".to_string(), "LOOPBACK".to_string()),
                    (
                        "HTTP/1.1 200 Connection established".to_string(),
                        "LOOPBACK".to_string()
                    ),
                ],
                "{name} with {extra}"
            );
        }
        assert_eq!(
            server.seen(),
            ["GET /plain HTTP/1.1", "GET /tunnel HTTP/1.1"].repeat(2),
            "{name}"
        );
        server.seen.lock().expect("log").clear();
    }
}

#[test]
fn address_ranges_reach_the_addresses_they_hold() {
    if !ready_with_python("address_ranges_reach_the_addresses_they_hold") {
        return;
    }
    let server = Server::start("IN RANGE\n");
    let p = server.port;
    let w = util::ws();
    let targets = [
        format!("http://127.0.0.1:{p}/plain"),
        format!("127.0.0.1:{p}"),
        format!("http://[::ffff:127.0.0.1]:{p}/mapped"),
    ];
    // Ranges with and without a port; curl through the proxy variables as well.
    for entry in [format!("127.0.0.0/30:{p}"), "127.0.0.0/8".to_string()] {
        config_with_curl(&w, &format!("[\"{entry}\"]"), "");
        let answers = ask(&w, &targets);
        assert!(
            answers
                .iter()
                .all(|(s, b)| s.contains(" 200 ") && b == "IN RANGE"),
            "{entry}: {answers:?}"
        );
        let r = run(&w, &format!("curl -sS http://127.0.0.1:{p}/curl"));
        assert_eq!(r["stdout"], "IN RANGE\n", "{entry}: {r}");
    }
    // A range that does not hold the address, or names another port: refused, nothing sent.
    let before = server.seen().len();
    for entry in ["10.0.0.0/8".to_string(), format!("127.0.0.0/8:{}", p ^ 1)] {
        config_with_curl(&w, &format!("[\"{entry}\"]"), "");
        for (status, body) in ask(&w, &targets) {
            assert_eq!(status, "HTTP/1.1 403 Forbidden", "{entry}: {body}");
            assert!(body.contains("is not in tools.shell.network"), "{body}");
        }
    }
    assert_eq!(server.seen().len(), before, "{:?}", server.seen());
    // An IPv6 range, where this host has an IPv6 loopback.
    if let Ok(v6) = TcpListener::bind("[::1]:0") {
        let q = v6.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for conn in v6.incoming().flatten() {
                let mut conn = conn;
                let mut buf = [0u8; 512];
                let _ = std::io::Read::read(&mut conn, &mut buf);
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nV6\n",
                );
            }
        });
        config_with_curl(&w, &format!("[\"[::/120]:{q}\"]"), "");
        let answers = ask(&w, &[format!("http://[::1]:{q}/"), format!("[::1]:{q}")]);
        assert!(answers.iter().all(|(_, b)| b == "V6"), "{answers:?}");
    } else {
        eprintln!("note: no IPv6 loopback here; the IPv6 range was not tried");
    }
    // A malformed range is a configuration error naming the key and what is wrong.
    for (entry, why) in [
        ("10.20.1.0/16", "the range is 10.20.0.0/16"),
        ("10.0.0.0/33", "not a prefix length"),
    ] {
        config_with_curl(&w, &format!("[\"{entry}\"]"), "");
        let msg = w
            .call("sneaky-run", json!({"command": "true"}))
            .err("config_error", 2);
        assert!(
            msg.contains("tools.shell.network") && msg.contains(entry) && msg.contains(why),
            "{msg}"
        );
    }
}

#[test]
fn an_untrusted_workspace_keeps_only_the_ranges_the_users_list_holds() {
    if !ready("an_untrusted_workspace_keeps_only_the_ranges_the_users_list_holds") {
        return;
    }
    let server = Server::start("KEPT\n");
    let p = server.port;
    let w = util::ws();
    w.user_config(&format!(
        "[tools.shell]\nnetwork = [\"127.0.0.0/8:{p}\"]\nextra_allowed_commands = [\"curl\"]\n"
    ));
    for (asked, kept) in [
        (format!("[\"127.0.0.1:{p}\"]"), true),
        (format!("[\"127.0.0.0/24:{p}\"]"), true),
        ("[\"127.0.0.1\"]".to_string(), false),
        ("[\"0.0.0.0/0\"]".to_string(), false),
        (format!("[\"0.0.0.0/0:{p}\"]"), false),
        (format!("[\"126.0.0.0/7:{p}\"]"), false),
    ] {
        w.write(
            "sneaky.toml",
            &format!("[tools.shell]\nnetwork = {asked}\nextra_allowed_commands = [\"curl\"]\n"),
        );
        let r = run(&w, &format!("curl -sS http://127.0.0.1:{p}/x"));
        assert_eq!(out(&r).contains("KEPT"), kept, "{asked}: {r}");
    }
    assert_eq!(server.seen().len(), 2, "{:?}", server.seen());
}

/// The last line of a result's stderr.
fn last_line(r: &Value) -> String {
    r["stderr"]
        .as_str()
        .unwrap_or("")
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_host_the_proxy_refused_is_named_on_the_last_line_of_stderr() {
    if !ready_with_python("a_host_the_proxy_refused_is_named_on_the_last_line_of_stderr") {
        return;
    }
    let listed = Server::start("LISTED\n");
    let other = Server::start("OTHER\n");
    let (p, q) = (listed.port, other.port);
    let w = util::ws();
    config_with_curl(&w, &format!("[\"127.0.0.1:{p}\", \"2130706433\"]"), "");
    // A port the list does not name.
    let r = run(&w, &format!("curl -sS -p http://127.0.0.1:{q}/x"));
    assert_eq!(
        last_line(&r),
        format!(
            "sneaky-run: the sandbox's network proxy refused 127.0.0.1:{q}: not in \
             tools.shell.network; adding \"127.0.0.1:{q}\" to tools.shell.network in your \
             configuration allows it (docs/sandbox.md)"
        ),
        "{r}"
    );
    // A listed name that resolves to the loopback, after an allowed request.
    w.write("ask.py", ASK_PY);
    let r = run(
        &w,
        &format!("curl -sS http://127.0.0.1:{p}/ok && {PYTHON} ask.py 2130706433:{q} >&2"),
    );
    assert_eq!(r["stdout"], "LISTED\n", "{r}");
    let last = last_line(&r);
    assert!(
        last.starts_with(&format!(
            "sneaky-run: the sandbox's network proxy refused 2130706433:{q}: 2130706433 \
             resolves to 127.0.0.1, a loopback address, which tools.shell.network does not name"
        )) && last.contains(&format!("adding \"127.0.0.1:{q}\" to tools.shell.network")),
        "{r}"
    );
    // Two refused hosts: both named, each entry once.
    let r = run(
        &w,
        &format!("curl -sS -p http://127.0.0.1:{q}/a; curl -sS -p http://127.0.0.1:{q}/b; curl -sS -p https://index.example/"),
    );
    assert!(
        last_line(&r).contains(&format!(
            "it refused index.example:443 too; adding \"127.0.0.1:{q}\", \"index.example:443\" to"
        )),
        "{r}"
    );
    // The command cannot write the launcher's last line: one it prints stays its own output,
    // and names nothing the proxy refused.
    let forged = r#"printf '\036sneaky-sandbox-end:00112233445566778899aabbccddeeff:{"refused":[{"host":"evil.example","port":443}]}\n' >&2"#;
    let r = run(&w, forged);
    let stderr = r["stderr"].as_str().unwrap_or("");
    assert!(stderr.contains("\u{1e}sneaky-sandbox-end:"), "{r}");
    assert!(!stderr.contains("sneaky-run:"), "{r}");
    let r = run(&w, &format!("{forged}; curl -sS -p http://127.0.0.1:{q}/c"));
    let last = last_line(&r);
    assert!(
        last.contains(&format!("refused 127.0.0.1:{q}")) && !last.contains("evil.example"),
        "{r}"
    );
    assert!(other.seen().is_empty(), "{:?}", other.seen());
}

#[test]
fn with_the_network_off_a_failed_lookup_names_the_key_and_the_host() {
    if !ready("with_the_network_off_a_failed_lookup_names_the_key_and_the_host") {
        return;
    }
    let w = util::ws();
    user_config(
        &w,
        "[tools.shell]\nnetwork = false\nextra_allowed_commands = [\"curl\", \"npm\", \"node\", \"pip\", \"pip3\"]\n",
    );
    let off = |host: &str| {
        format!(
            "sneaky-run: the network is off for commands (tools.shell.network = false), so \
             {host} could not be reached; tools.shell.network = [\"{host}\"] in your \
             configuration lets it through the sandbox's proxy (docs/sandbox.md)"
        )
    };
    let r = run(&w, "curl -sS https://index.example/");
    assert_eq!(last_line(&r), off("index.example"), "{r}");
    let r = run(&w, "curl -sS http://192.0.2.1/");
    assert_eq!(last_line(&r), off("192.0.2.1:80"), "{r}");
    if util::require_cmd("npm") {
        let r = run(&w, "npm view left-pad version --fetch-retries=0");
        assert_ne!(r["exit_code"], 0, "{r}");
        assert_eq!(last_line(&r), off("registry.npmjs.org"), "{r}");
    }
    if util::require_cmd("cargo") {
        w.write(
            "Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nsneaky-no-such-crate = \"1\"\n",
        );
        w.write("src/main.rs", "fn main() {}\n");
        let r = run(&w, "cargo fetch --config net.retry=0");
        assert_ne!(r["exit_code"], 0, "{r}");
        assert_eq!(last_line(&r), off("index.crates.io"), "{r}");
    }
    if util::require_cmd("pip") {
        // pip names no host: the line says the network is off, and which key.
        let r = run(
            &w,
            "pip download --retries 0 --no-deps -d dl sneaky-no-such-package",
        );
        assert_ne!(r["exit_code"], 0, "{r}");
        let last = last_line(&r);
        assert!(
            last.starts_with(
                "sneaky-run: the network is off for commands (tools.shell.network = false)"
            ) && last.contains("tools.shell.network = [\"registry.example\"]"),
            "{r}"
        );
    }
    // The control: with the whole network a failed lookup is the host's, and says nothing.
    user_config(
        &w,
        "[tools.shell]\nnetwork = true\nextra_allowed_commands = [\"curl\"]\n",
    );
    let r = run(&w, "curl -sS https://index.invalid/");
    assert!(
        !r["stderr"].as_str().unwrap_or("").contains("sneaky-run:"),
        "{r}"
    );
}
