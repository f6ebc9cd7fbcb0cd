//! The network with a host list (`tools.shell.network = ["host", "host:port", "*.suffix",
//! "10.20.0.0/16"]`, src/config/network.rs): an HTTP proxy outside the command's network
//! namespace, and the bridge that makes it the only way out.
//!
//! - [`start`] (the launcher, before it enters the namespaces) forks the proxy: a process in
//!   the host's network namespace that answers HTTP `CONNECT host:port` and plain-HTTP
//!   requests (`GET http://host:port/…`), checks host and port against the list (no name is
//!   looked up before that), and answers 403 to what it refuses. A listed name is looked up
//!   once; every address it gives is checked, and the proxy connects only to a checked
//!   address (never looking the name up again, so a name that changes its answer between two
//!   lookups reaches nothing new): an address of this host or the networks around it
//!   (loopback, private, link-local …, src/config/network.rs `restricted_kind`, or one of the
//!   host's own) only when the list names it too. A request naming an address is allowed
//!   only when the list names that address or a range holding it. The proxy can read files
//!   (name resolution) but write and execute none (Landlock), dies with the launcher, lives
//!   in the call's process group and pids cgroup, and tells the launcher what it refused
//!   ([`Proxy::refused`]).
//! - [`bridge`] (the launcher, inside the command's new network namespace, where only a
//!   loopback exists) brings the loopback up, listens on an ephemeral port of 127.0.0.1 and
//!   hands the listening socket to the proxy over a Unix socket pair (SCM_RIGHTS): the proxy
//!   accepts the command's connections itself, and nothing of the proxy runs inside. The
//!   launcher keeps no copy. Given a namespace, this one function is the whole bridge.
//! - [`env`]: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (and their lower-case forms) name the
//!   bridge; `NO_PROXY` names the namespace's own loopback (servers the command starts
//!   itself), unless the list reaches the host's loopback (`localhost:8080`,
//!   `127.0.0.1:8080`): then that is the host's, reached through the proxy, and `NO_PROXY` is
//!   empty.
//!
//! Everything else fails inside the namespace: a direct connection has no route, a DNS query
//! reaches nothing (the resolver's address is not there), for raw system calls too.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{
    IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs,
};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

use super::sys::{fork_single_threaded, loopback_up, recv_fd, send_fd, Forked};
use crate::config::network::{
    canonical, restricted_kind, split_host_port, with_port, HostList, Requested, LOCALHOST,
};

/// A request head must arrive within this time, and fit in this many bytes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_HEAD: usize = 64 * 1024;
/// Connecting to an allowed host gives up after this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 256;
/// Each connection is two threads copying bytes (8 KiB buffers).
const THREAD_STACK: usize = 128 * 1024;
/// Refusals told to the launcher, at most: a command that tries a thousand hosts needs only
/// the first few named.
const MAX_RECORDED: usize = 16;

/// The launcher's end of the proxy: [`bridge`] hands it the listening socket, and
/// [`Proxy::refused`] reads what it refused.
pub struct Proxy {
    control: UnixStream,
}

/// A request the proxy refused: said in its 403 answer, and told to the launcher for the
/// line the command's stderr ends with (src/shell/hint.rs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The host as the request named it (a name, or an address without brackets).
    pub host: String,
    pub port: u16,
    /// For a listed name: the address it resolved to that the list does not name, and what
    /// kind of address that is ("loopback", "private" …).
    #[serde(default)]
    pub resolved: Option<(IpAddr, String)>,
}

impl Refusal {
    /// The host and port as a list entry writes them.
    pub fn target(&self) -> String {
        match self.host.parse::<IpAddr>() {
            Ok(ip) => with_port(ip, self.port),
            Err(_) => format!("{}:{}", self.host, self.port),
        }
    }

    /// The entry that would allow the request.
    pub fn entry(&self) -> String {
        match &self.resolved {
            Some((ip, _)) => with_port(*ip, self.port),
            None => self.target(),
        }
    }

    /// Why, in words that name the key.
    pub fn reason(&self) -> String {
        match &self.resolved {
            None => "not in tools.shell.network".into(),
            Some((ip, kind)) => format!(
                "{} resolves to {ip}, {} {kind} address, which tools.shell.network does not \
                 name: a listed name reaches no address of this host or its networks by itself",
                self.host,
                if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                }
            ),
        }
    }

    /// The body of the 403 answer.
    fn message(&self) -> String {
        let or_range = if self.resolved.is_some() {
            " (or a range holding it)"
        } else {
            ""
        };
        format!(
            "sneaky-run: {} is {}; nothing was sent. Adding \"{}\"{or_range} to \
             tools.shell.network in your configuration allows it.\n",
            self.target(),
            match &self.resolved {
                None => self.reason(),
                Some(_) => format!("refused: {}", self.reason()),
            },
            self.entry()
        )
    }
}

impl Proxy {
    /// What the proxy refused so far, in the order it refused it (each once). Called once
    /// the command has ended: every refusal is told before its 403 is sent, so none of the
    /// command's is missing.
    pub fn refused(self) -> Vec<Refusal> {
        let mut text = Vec::new();
        if self.control.set_nonblocking(true).is_ok() {
            let _ = (&self.control).read_to_end(&mut text);
        }
        text.split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect()
    }
}

/// Fork the proxy (the launcher is single-threaded here, before entering any namespace).
pub fn start(hosts: &[String]) -> Result<Proxy, String> {
    let allowed = HostList::parse(hosts);
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
pub fn bridge(proxy: &Proxy, loopback_is_up: bool) -> Result<u16, String> {
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
    let no_proxy = if HostList::parse(hosts).reaches_loopback() {
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
fn proxy_main(allowed: HostList, control: UnixStream, launcher: nix::unistd::Pid) -> ! {
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
    serve(listener, allowed, Recorder::new(control));
    std::process::exit(0)
}

/// The proxy's end of the control socket: each refusal once, as a JSON line.
struct Recorder {
    told: Mutex<(UnixStream, Vec<Refusal>)>,
}

impl Recorder {
    fn new(control: UnixStream) -> Recorder {
        // Never wait on the launcher: it reads only once the command has ended.
        let _ = control.set_nonblocking(true);
        Recorder {
            told: Mutex::new((control, Vec::new())),
        }
    }

    fn record(&self, refusal: &Refusal) {
        let mut told = self.told.lock().unwrap_or_else(|p| p.into_inner());
        let (control, seen) = &mut *told;
        if seen.len() >= MAX_RECORDED || seen.contains(refusal) {
            return;
        }
        seen.push(refusal.clone());
        if let Ok(mut line) = serde_json::to_vec(refusal) {
            line.push(b'\n');
            let _ = control.write_all(&line);
        }
    }
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
fn serve(listener: TcpListener, allowed: HostList, recorder: Recorder) {
    let allowed = Arc::new((allowed, recorder));
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
                handle(conn, &allowed.0, &allowed.1);
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

fn handle(client: TcpStream, allowed: &HostList, recorder: &Recorder) {
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
    let addrs = match decide(&target.host, target.port, allowed, lookup, own_addresses) {
        Ok(addrs) => addrs,
        Err(Refused::Policy(refusal)) => {
            // Told before the answer: once the command has ended, the launcher has it all.
            recorder.record(&refusal);
            return respond(&client, 403, &refusal.message());
        }
        Err(Refused::Lookup(why)) => {
            return respond(
                &client,
                502,
                &format!("{} could not be looked up: {why}\n", target.host),
            )
        }
    };
    let Some(mut upstream) = connect(&addrs) else {
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

/// Why a request is not served.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// The list does not allow it (a 403).
    Policy(Refusal),
    /// The listed name has no address (a 502).
    Lookup(String),
}

/// Where a request for `host` (as the client named it) on `port` may connect: the checked
/// addresses, in the order the lookup gave them. `lookup` is asked once, and only for a name
/// the list allows; `own` (this host's addresses) only when a looked-up address is not
/// restricted by its kind alone.
fn decide(
    host: &str,
    port: u16,
    allowed: &HostList,
    lookup: impl FnOnce(&str, u16) -> std::io::Result<Vec<SocketAddr>>,
    own: impl FnOnce() -> Vec<IpAddr>,
) -> Result<Vec<SocketAddr>, Refused> {
    let refused = |resolved| {
        Err(Refused::Policy(Refusal {
            host: host.to_string(),
            port,
            resolved,
        }))
    };
    let name = match Requested::parse(host) {
        Some(Requested::Address(ip)) if allowed.names_address(ip, port) => {
            return Ok(vec![SocketAddr::new(ip, port)])
        }
        Some(Requested::Name(name)) if allowed.allows_name(&name, port) => name,
        _ => return refused(None),
    };
    // Listing `localhost` asks for the loopback itself: not looked up (whatever a hosts file
    // says), and not restricted.
    if name == LOCALHOST {
        return Ok(vec![
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
        ]);
    }
    let found = lookup(&name, port).map_err(|e| Refused::Lookup(e.to_string()))?;
    let mut own = Some(own);
    let mut own_addresses: Option<Vec<IpAddr>> = None;
    let mut first_refused = None;
    let mut checked = Vec::new();
    for addr in found {
        let ip = canonical(addr.ip());
        let kind = restricted_kind(ip).map(str::to_string).or_else(|| {
            let mine =
                own_addresses.get_or_insert_with(|| own.take().map(|f| f()).unwrap_or_default());
            mine.iter()
                .any(|o| canonical(*o) == ip)
                .then(|| "this host's own".to_string())
        });
        match kind {
            Some(kind) if !allowed.names_address(ip, port) => {
                first_refused.get_or_insert((ip, kind));
            }
            _ => checked.push(SocketAddr::new(ip, port)),
        }
    }
    match (checked.is_empty(), first_refused) {
        (false, _) => Ok(checked),
        (true, Some(resolved)) => refused(Some(resolved)),
        (true, None) => Err(Refused::Lookup("no address".into())),
    }
}

/// The system's resolver, asked once.
fn lookup(name: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    Ok((name, port).to_socket_addrs()?.collect())
}

/// This host's addresses, on every interface, at the time of asking.
fn own_addresses() -> Vec<IpAddr> {
    let Ok(interfaces) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    interfaces
        .filter_map(|i| i.address)
        .filter_map(|a| {
            a.as_sockaddr_in()
                .map(|v4| IpAddr::V4(v4.ip()))
                .or_else(|| a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
        })
        .collect()
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

/// The first of the checked addresses that answers.
fn connect(addrs: &[SocketAddr]) -> Option<TcpStream> {
    addrs
        .iter()
        .find_map(|a| TcpStream::connect_timeout(a, CONNECT_TIMEOUT).ok())
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

    fn list(entries: &[&str]) -> HostList {
        HostList::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>())
    }

    /// `decide` with a resolver that answers `answer` for every name and counts its calls.
    fn decide_with(
        host: &str,
        port: u16,
        entries: &[&str],
        answer: &[&str],
        own: &[&str],
    ) -> (Result<Vec<SocketAddr>, Refused>, usize) {
        let calls = std::cell::Cell::new(0);
        let got = decide(
            host,
            port,
            &list(entries),
            |_, port| {
                calls.set(calls.get() + 1);
                Ok(answer
                    .iter()
                    .map(|a| SocketAddr::new(a.parse().unwrap(), port))
                    .collect())
            },
            || own.iter().map(|a| a.parse().unwrap()).collect(),
        );
        (got, calls.get())
    }

    fn sock(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_listed_name_reaches_only_addresses_its_kind_or_the_list_allows() {
        let public = ["93.184.216.34"];
        // A public answer is connected to as it was looked up: once.
        assert_eq!(
            decide_with("registry.example", 443, &["registry.example"], &public, &[]),
            (Ok(vec![sock("93.184.216.34:443")]), 1)
        );
        // Not listed: refused before any lookup.
        let (got, calls) = decide_with("evil.example", 443, &["registry.example"], &public, &[]);
        assert_eq!(calls, 0);
        let Err(Refused::Policy(r)) = got else {
            panic!("{got:?}")
        };
        assert_eq!(
            (r.target(), r.entry()),
            ("evil.example:443".into(), "evil.example:443".into())
        );
        assert!(r
            .message()
            .contains("evil.example:443 is not in tools.shell.network"));
        // A name that resolves to the loopback, a private network, this host, a mapped
        // loopback: refused, naming the address and what to add.
        for (answer, own, kind) in [
            ("127.0.0.1", "10.9.9.9", "loopback"),
            ("::ffff:127.0.0.1", "10.9.9.9", "loopback"),
            ("10.20.3.4", "10.9.9.9", "private"),
            ("169.254.169.254", "10.9.9.9", "link-local"),
            ("0.0.0.0", "10.9.9.9", "unspecified"),
            ("203.0.113.7", "203.0.113.7", "this host's own"),
        ] {
            let (got, _) = decide_with(
                "mirror.example",
                8080,
                &["mirror.example"],
                &[answer],
                &[own],
            );
            let Err(Refused::Policy(r)) = got else {
                panic!("{answer}: {got:?}")
            };
            let ip = canonical(answer.parse().unwrap());
            assert_eq!(r.resolved, Some((ip, kind.to_string())), "{answer}");
            assert_eq!(r.entry(), with_port(ip, 8080));
            let body = r.message();
            assert!(
                body.contains("tools.shell.network")
                    && body.contains(&format!("\"{}\"", with_port(ip, 8080)))
                    && body.contains(&format!("resolves to {ip}")),
                "{body}"
            );
        }
        // The address or a range holding it, listed too: allowed, on the ports it names.
        for extra in [
            "127.0.0.1",
            "127.0.0.0/8",
            "127.0.0.1:8080",
            "[::ffff:127.0.0.0/104]",
        ] {
            assert_eq!(
                decide_with(
                    "mirror.example",
                    8080,
                    &["mirror.example", extra],
                    &["127.0.0.1"],
                    &[]
                )
                .0,
                Ok(vec![sock("127.0.0.1:8080")]),
                "{extra}"
            );
        }
        assert!(matches!(
            decide_with(
                "mirror.example",
                8080,
                &["mirror.example", "127.0.0.1:22"],
                &["127.0.0.1"],
                &[]
            )
            .0,
            Err(Refused::Policy(_))
        ));
        // Of a mixed answer, only the checked addresses are connected to.
        assert_eq!(
            decide_with(
                "mirror.example",
                443,
                &["mirror.example"],
                &["10.0.0.1", "93.184.216.34", "::1"],
                &[]
            )
            .0,
            Ok(vec![sock("93.184.216.34:443")])
        );
        // No address at all: not a refusal.
        assert!(matches!(
            decide_with("mirror.example", 443, &["mirror.example"], &[], &[]).0,
            Err(Refused::Lookup(_))
        ));
    }

    #[test]
    fn an_address_is_reached_only_when_the_list_names_it() {
        let none: &[&str] = &[];
        for (host, entries, ok) in [
            ("127.0.0.1", &["127.0.0.1:8080"][..], true),
            ("127.0.0.1", &["127.0.0.0/8"][..], true),
            ("::ffff:127.0.0.1", &["127.0.0.1"][..], true),
            ("::1", &["[::1]:8080"][..], true),
            ("fd00::2", &["fd00::/8"][..], true),
            ("10.20.3.4", &["10.20.0.0/16:8080"][..], true),
            ("10.20.3.4", &["10.20.0.0/16:22"][..], false),
            ("10.21.3.4", &["10.20.0.0/16"][..], false),
            // A public address too: a name listed for it does not name the address.
            ("93.184.216.34", &["registry.example"][..], false),
            ("127.0.0.1", &["localhost"][..], false),
            ("127.0.0.1", &["*.0.1"][..], false),
        ] {
            let (got, calls) = decide_with(host, 8080, entries, none, none);
            assert_eq!(calls, 0, "{host}");
            assert_eq!(got.is_ok(), ok, "{host} {entries:?}: {got:?}");
        }
        // `localhost` means the loopback: not looked up.
        assert_eq!(
            decide_with("localhost", 3000, &["localhost:3000"], &["10.0.0.1"], &[]),
            (Ok(vec![sock("127.0.0.1:3000"), sock("[::1]:3000")]), 0)
        );
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
        assert_eq!(get(&["index.example", "127.0.0.0/8"], "no_proxy"), "");
        assert_eq!(get(&["localhost:3000"], "no_proxy"), "");
        assert_eq!(get(&["10.0.0.0/8"], "NO_PROXY"), "localhost,127.0.0.1,::1");
    }
}
