//! The network with a host list (`tools.shell.network = ["host", "host:port", "*.suffix"]`,
//! src/config/network.rs): an HTTP proxy outside the command's network namespace, and the
//! bridge that makes it the only way out.
//!
//! - [`start`] (the launcher, before it enters the namespaces) forks the proxy: a process in
//!   the host's network namespace that answers HTTP `CONNECT host:port` and plain-HTTP
//!   requests (`GET http://host:port/…`), checks host and port against the list, connects
//!   only to what it allows and answers 403 to everything else (no name is looked up before
//!   the check). It can read files (name resolution) but write and execute none (Landlock),
//!   dies with the launcher, and lives in the call's process group and pids cgroup.
//! - [`bridge`] (the launcher, inside the command's new network namespace, where only a
//!   loopback exists) brings the loopback up, listens on an ephemeral port of 127.0.0.1 and
//!   hands the listening socket to the proxy over a Unix socket pair (SCM_RIGHTS): the proxy
//!   accepts the command's connections itself, and nothing of the proxy runs inside. The
//!   launcher keeps no copy. Given a namespace, this one function is the whole bridge.
//! - [`env`]: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (and their lower-case forms) name the
//!   bridge; `NO_PROXY` names the namespace's own loopback (servers the command starts
//!   itself), unless the list allows a loopback host (`localhost:8080`): then that is the
//!   host's, reached through the proxy, and `NO_PROXY` is empty.
//!
//! Everything else fails inside the namespace: a direct connection has no route, a DNS query
//! reaches nothing (the resolver's address is not there), for raw system calls too.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::sys::{fork_single_threaded, loopback_up, recv_fd, send_fd, Forked};
use crate::config::network::{split_host_port, HostPattern};

/// A request head must arrive within this time, and fit in this many bytes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_HEAD: usize = 64 * 1024;
/// Connecting to an allowed host gives up after this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 256;
/// Each connection is two threads copying bytes (8 KiB buffers).
const THREAD_STACK: usize = 128 * 1024;

/// The launcher's end of the proxy, until [`bridge`] hands it the listening socket.
pub struct Proxy {
    control: UnixStream,
}

/// Fork the proxy (the launcher is single-threaded here, before entering any namespace).
pub fn start(hosts: &[String]) -> Result<Proxy, String> {
    let allowed: Vec<HostPattern> = hosts
        .iter()
        .filter_map(|h| HostPattern::parse(h).ok())
        .collect();
    let (ours, theirs) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let launcher = nix::unistd::getpid();
    match fork_single_threaded().map_err(|e| format!("fork: {e}"))? {
        Forked::Child => {
            drop(ours);
            proxy_main(allowed, theirs, launcher)
        }
        Forked::Parent(_) => Ok(Proxy { control: ours }),
    }
}

/// Inside the command's network namespace: bring up the loopback (unless `loopback_up`
/// already: the workspace's shared one, whose holder did), listen on 127.0.0.1 and hand the
/// listener to the proxy. Returns the port the command's proxy variables name.
pub fn bridge(proxy: Proxy, loopback_is_up: bool) -> Result<u16, String> {
    if !loopback_is_up {
        loopback_up().map_err(|e| format!("bringing up the loopback: {e}"))?;
    }
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("listening on 127.0.0.1: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("the bridge's port: {e}"))?
        .port();
    send_fd(&proxy.control, listener.as_fd())
        .map_err(|e| format!("handing the bridge to the proxy: {e}"))?;
    Ok(port)
}

/// The command's proxy variables for the bridge on `port`.
pub fn env(port: u16, hosts: &[String]) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let loopback_listed = hosts
        .iter()
        .filter_map(|h| HostPattern::parse(h).ok())
        .any(|p| p.is_loopback());
    let no_proxy = if loopback_listed {
        String::new()
    } else {
        "localhost,127.0.0.1,::1".to_string()
    };
    let mut out = Vec::new();
    for name in ["http_proxy", "https_proxy", "all_proxy"] {
        out.push((name.to_string(), url.clone()));
        out.push((name.to_ascii_uppercase(), url.clone()));
    }
    out.push(("no_proxy".into(), no_proxy.clone()));
    out.push(("NO_PROXY".into(), no_proxy));
    out
}

/// The proxy process: never returns.
fn proxy_main(allowed: Vec<HostPattern>, control: UnixStream, launcher: nix::unistd::Pid) -> ! {
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err()
        || nix::unistd::getppid() != launcher
    {
        std::process::exit(1);
    }
    // Its output would mix with the command's (and hold the runner's pipes open).
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
    read_only_self();
    let listener = match recv_fd(&control) {
        Ok(Some(fd)) => TcpListener::from(fd),
        // The launcher could not enter the namespace: no bridge, nothing to serve.
        _ => std::process::exit(0),
    };
    drop(control);
    serve(listener, allowed);
    std::process::exit(0)
}

/// Landlock for the proxy: read files (the resolver's configuration), write and execute
/// none. Best effort: without Landlock the proxy still only speaks to sockets.
fn read_only_self() {
    use landlock::{
        path_beneath_rules, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, ABI,
    };
    let abi = ABI::V5;
    let read = AccessFs::from_read(abi) & !AccessFs::Execute;
    let _ = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], read)))
        .and_then(|r| r.restrict_self());
}

/// Accept the command's connections until the listener fails (the process is killed with
/// the launcher).
pub fn serve(listener: TcpListener, allowed: Vec<HostPattern>) {
    let allowed = Arc::new(allowed);
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(conn) = conn else {
            // Out of descriptors or memory for a moment: not a reason to spin.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            drop(conn);
            continue;
        }
        active.fetch_add(1, Ordering::SeqCst);
        let (allowed, done) = (Arc::clone(&allowed), Arc::clone(&active));
        let spawned = std::thread::Builder::new()
            .stack_size(THREAD_STACK)
            .spawn(move || {
                handle(conn, &allowed);
                done.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A parsed request head: where to connect, and what to send there first.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// CONNECT: answer 200 and relay bytes; else the head to send upstream.
    forward: Option<Vec<u8>>,
}

fn handle(client: TcpStream, allowed: &[HostPattern]) {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let Ok(reader) = client.try_clone() else {
        return;
    };
    let mut reader = BufReader::with_capacity(8 * 1024, reader);
    let head = match read_head(&mut reader) {
        Ok(h) => h,
        Err(HeadError::TooLarge) => return respond(&client, 431, "request head too large\n"),
        Err(HeadError::Io) => return,
    };
    let target = match parse_head(&head) {
        Ok(t) => t,
        Err(why) => return respond(&client, 400, &format!("{why}\n")),
    };
    if !allowed.iter().any(|p| p.allows(&target.host, target.port)) {
        let shown = if target.host.contains(':') {
            format!("[{}]:{}", target.host, target.port)
        } else {
            format!("{}:{}", target.host, target.port)
        };
        return respond(
            &client,
            403,
            &format!("sneaky-run: {shown} is not in tools.shell.network; nothing was sent\n"),
        );
    }
    let Some(mut upstream) = connect(&target.host, target.port) else {
        return respond(&client, 502, "the allowed host could not be reached\n");
    };
    let sent = match &target.forward {
        None => (&client).write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        Some(head) => upstream.write_all(head),
    };
    // Bytes the client sent after its head (a TLS hello, a request body) go on too.
    let early = reader.buffer().to_vec();
    if sent.is_err() || upstream.write_all(&early).is_err() {
        return;
    }
    let _ = client.set_read_timeout(None);
    relay(client, upstream);
}

enum HeadError {
    TooLarge,
    Io,
}

/// Read up to the blank line that ends the head; the reader keeps what follows.
fn read_head(reader: &mut BufReader<TcpStream>) -> Result<Vec<u8>, HeadError> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .by_ref()
            .take((MAX_HEAD + 1 - head.len().min(MAX_HEAD)) as u64)
            .read_until(b'\n', &mut line)
            .map_err(|_| HeadError::Io)?;
        if n == 0 {
            return Err(HeadError::Io);
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        if line == b"\r\n" || line == b"\n" {
            // Blank lines before the request line are tolerated (RFC 9112, 2.2).
            if head.len() == line.len() {
                head.clear();
                continue;
            }
            return Ok(head);
        }
    }
}

/// Headers a proxy consumes or must not pass on (hop-by-hop).
const HOP_BY_HOP: &[&str] = &[
    "proxy-connection",
    "proxy-authorization",
    "connection",
    "keep-alive",
];

fn parse_head(head: &[u8]) -> Result<Target, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not text")?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("not an HTTP request line: {first:?}"));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || target.is_empty() {
        return Err(format!("not an HTTP/1 request line: {first:?}"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_host_port(target)?;
        let port = port.ok_or("CONNECT needs host:port")?;
        return Ok(Target {
            host,
            port,
            forward: None,
        });
    }
    let rest = target
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
        .ok_or("a proxy request names http://host/… (https goes through CONNECT)")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') || authority.is_empty() {
        return Err("the URL's host is missing or has user information".into());
    }
    let (host, port) = split_host_port(authority)?;
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    let mut forward = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or("").trim();
        if !HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            forward.push_str(line);
            forward.push_str("\r\n");
        }
    }
    // One request per connection upstream: the next one is checked on a new connection.
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port: port.unwrap_or(80),
        forward: Some(forward.into_bytes()),
    })
}

fn connect(host: &str, port: u16) -> Option<TcpStream> {
    let addrs = (host, port).to_socket_addrs().ok()?;
    addrs
        .into_iter()
        .find_map(|a| TcpStream::connect_timeout(&a, CONNECT_TIMEOUT).ok())
}

fn respond(client: &TcpStream, status: u16, body: &str) {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    // One write: a client reading the status line gets it whole.
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = (&*client).write_all(response.as_bytes());
    let _ = client.shutdown(Shutdown::Write);
}

/// Copy both ways until both sides are done.
fn relay(client: TcpStream, upstream: TcpStream) {
    let (Ok(mut client_in), Ok(mut upstream_in)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let (mut client_out, mut upstream_out) = (client, upstream);
    let up = std::thread::Builder::new()
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let _ = std::io::copy(&mut client_in, &mut upstream_out);
            let _ = upstream_out.shutdown(Shutdown::Write);
        });
    let _ = std::io::copy(&mut upstream_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_name_their_target() {
        let t = parse_head(b"CONNECT registry.example:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.forward),
            ("registry.example", 443, None)
        );
        let t = parse_head(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 8443));
        assert!(parse_head(b"CONNECT registry.example HTTP/1.1\r\n\r\n").is_err());
        let t = parse_head(
            b"GET http://Index.Example:8080/a/b?c HTTP/1.1\r\nHost: index.example\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: x\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!((t.host.as_str(), t.port), ("Index.Example", 8080));
        assert_eq!(
            String::from_utf8(t.forward.unwrap()).unwrap(),
            "GET /a/b?c HTTP/1.1\r\nHost: index.example\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let t = parse_head(b"GET http://index.example?q HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(t.port, 80);
        assert!(String::from_utf8(t.forward.unwrap())
            .unwrap()
            .starts_with("GET /?q HTTP/1.0\r\n"));
        for bad in [
            &b"GET / HTTP/1.1\r\n\r\n"[..],
            b"GET https://index.example/ HTTP/1.1\r\n\r\n",
            b"GET http://user@index.example/ HTTP/1.1\r\n\r\n",
            b"GET http:///x HTTP/1.1\r\n\r\n",
            b"GET http://index.example/ SPDY/3\r\n\r\n",
            b"CONNECT a.example:443  HTTP/1.1\r\n\r\n",
            b"\xff\r\n\r\n",
        ] {
            assert!(
                parse_head(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn no_proxy_leaves_the_own_loopback_direct_unless_a_loopback_host_is_listed() {
        let get = |hosts: &[&str], name: &str| {
            let hosts: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
            env(3128, &hosts)
                .into_iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
                .unwrap()
        };
        assert_eq!(
            get(&["index.example"], "HTTPS_PROXY"),
            "http://127.0.0.1:3128"
        );
        assert_eq!(
            get(&["index.example"], "all_proxy"),
            "http://127.0.0.1:3128"
        );
        assert_eq!(
            get(&["index.example"], "NO_PROXY"),
            "localhost,127.0.0.1,::1"
        );
        assert_eq!(get(&["index.example", "127.0.0.1:8080"], "no_proxy"), "");
    }
}
