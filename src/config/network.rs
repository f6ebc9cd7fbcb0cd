//! `tools.shell.network`: what a command may reach.
//!
//! - `false` (the default): nothing, name lookups included;
//! - `true`: the host's whole network;
//! - a list of hosts (`"registry.example"`, `"registry.example:443"`, `"*.pkg.example"`),
//!   addresses and ranges (`"127.0.0.1:8080"`, `"[::1]:8080"`, `"10.20.0.0/16"`,
//!   `"fd00::/8"`, `"[fd00::/8]:443"`) and named lists (`"@rust"`, defined once under
//!   `[tools.shell.host_lists]`): only these, through a proxy the sandbox runs outside the
//!   command's network namespace (src/shell/proxy.rs). A port, when given, is enforced; without
//!   one every port is allowed. `*.suffix` allows every name below the suffix, not the suffix
//!   itself. Names are compared without case and without a trailing dot.
//!
//! A listed name means that name only: a request naming an address is allowed only when the
//! list names that address or a range holding it, and a listed name that resolves to an
//! address of this host or the networks around it ([`restricted_kind`], or one of the host's
//! own) reaches it only when the list names that address too. `localhost` is the one name that
//! means the loopback itself (RFC 6761): listing it reaches the host's loopback.
//!
//! An untrusted workspace's list is cut down to what the user's allows ([`Network::tighten`]).

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

/// The value of `tools.shell.network`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Network {
    #[default]
    Off,
    On,
    /// Entries as written (after [`Network::resolve`], no `@name` left).
    Hosts(Vec<String>),
}

/// Named host lists: `[tools.shell.host_lists]`, name → entries.
pub type HostLists = BTreeMap<String, Vec<String>>;

/// What `network` takes, in a refusal of anything else.
pub const EXPECTED: &str = "false, true or a list of hosts ([\"host\", \"host:port\", \"*.suffix\", \"10.0.0.0/8\", \"[::1]:port\", \"@list\"])";

impl Network {
    /// The whole network, unfiltered.
    pub fn all(&self) -> bool {
        *self == Network::On
    }

    /// The allowed hosts, when the network goes through the proxy (an empty list is off).
    pub fn hosts(&self) -> Option<&[String]> {
        match self {
            Network::Hosts(h) if !h.is_empty() => Some(h),
            _ => None,
        }
    }

    /// In words, for `--print-policy` and the run result's `sandbox` field.
    pub fn describe(&self) -> String {
        match self {
            Network::Off => "false".into(),
            Network::On => "true".into(),
            Network::Hosts(h) => format!("[{}]", h.join(", ")),
        }
    }

    /// As JSON: `false`, `true` or the list.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Network::Off => false.into(),
            Network::On => true.into(),
            Network::Hosts(h) => h.clone().into(),
        }
    }

    /// Replace each `@name` whose list `lists` defines by that list's entries (a list may not
    /// name another). Names it does not define stay, for a later `resolve` with other lists.
    pub fn resolve(&mut self, lists: &HostLists) {
        let Network::Hosts(entries) = self else {
            return;
        };
        let mut out: Vec<String> = Vec::new();
        for e in entries.drain(..) {
            let expanded = match e.strip_prefix('@').and_then(|n| lists.get(n)) {
                Some(list) => list.clone(),
                None => vec![e],
            };
            for x in expanded {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
        *entries = out;
    }

    /// The first `@name` no list defined.
    pub fn unresolved(&self) -> Option<&str> {
        match self {
            Network::Hosts(h) => h.iter().find_map(|e| e.strip_prefix('@')),
            _ => None,
        }
    }

    /// Check every entry's form (named lists are checked where they are defined).
    pub fn validate(&self, lists: &HostLists) -> Result<(), String> {
        if let Network::Hosts(h) = self {
            for e in h.iter().filter(|e| !e.starts_with('@')) {
                HostPattern::parse(e).map_err(|why| format!("network: {e:?}: {why}"))?;
            }
        }
        for (name, list) in lists {
            if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '@') {
                return Err(format!("host_lists: {name:?} is not a usable name"));
            }
            for e in list {
                if e.starts_with('@') {
                    return Err(format!(
                        "host_lists.{name}: {e:?}: a list cannot name another list"
                    ));
                }
                HostPattern::parse(e).map_err(|why| format!("host_lists.{name}: {e:?}: {why}"))?;
            }
        }
        Ok(())
    }

    /// What an untrusted workspace's `ws` keeps over the user's `self`: never more. `false`
    /// wins; `true` under a list is the list; a list under a list keeps only the entries
    /// the user's list covers entirely (same host or below a wildcard, same port or any).
    pub fn tighten(&self, ws: Network) -> Network {
        match (self, ws) {
            (Network::Off, _) | (_, Network::Off) => Network::Off,
            (Network::On, ws) => ws,
            (base, Network::On) => base.clone(),
            (Network::Hosts(base), Network::Hosts(ws)) => {
                let base: Vec<HostPattern> = base
                    .iter()
                    .filter_map(|b| HostPattern::parse(b).ok())
                    .collect();
                Network::Hosts(
                    ws.into_iter()
                        .filter(|w| {
                            HostPattern::parse(w).is_ok_and(|w| base.iter().any(|b| b.covers(&w)))
                        })
                        .collect(),
                )
            }
        }
    }
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Network;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Network, E> {
                Ok(if v { Network::On } else { Network::Off })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Network, A::Error> {
                let mut hosts = Vec::new();
                while let Some(h) = seq.next_element::<String>()? {
                    hosts.push(h);
                }
                Ok(Network::Hosts(hosts))
            }
        }
        d.deserialize_any(V)
    }
}

/// One allowed entry: a host name, a `*.` suffix, or an address or range of addresses, with
/// or without a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    target: Target,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// Lower case, no trailing dot.
    Name(String),
    /// The suffix after `*.`, as a name.
    Suffix(String),
    /// An address is a range of one.
    Range(IpRange),
}

/// Addresses sharing their first `prefix` bits with `network` (whose other bits are zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    network: IpAddr,
    prefix: u8,
}

/// What a request names: a host name (normalized) or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    Name(String),
    Address(IpAddr),
}

impl Requested {
    /// `host` as a client names it (an IPv6 address without brackets); None when it is
    /// neither a plausible name nor an address.
    pub fn parse(host: &str) -> Option<Requested> {
        match host.parse::<IpAddr>() {
            Ok(ip) => Some(Requested::Address(canonical(ip))),
            Err(_) => normalize_name(host).map(Requested::Name),
        }
    }
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that IPv4 address: connecting to
/// one reaches the other.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_canonical(),
        v4 => v4,
    }
}

/// An address as a list entry or a message names it, with its port: `10.0.0.1:80`,
/// `[::1]:80`.
pub fn with_port(ip: IpAddr, port: u16) -> String {
    SocketAddr::new(ip, port).to_string()
}

impl IpRange {
    /// `10.20.0.0/16`, `fd00::/8`, or one address (`127.0.0.1`, `::1`).
    fn parse(text: &str) -> Result<IpRange, String> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let Ok(ip) = addr.parse::<IpAddr>() else {
            return Err(if prefix.is_some() {
                "a range is an address and a prefix length (10.20.0.0/16, fd00::/8)".into()
            } else {
                "not a host name or IP address".into()
            });
        };
        let bits = if ip.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => match p.parse::<u8>() {
                Ok(n) if n <= bits && p.bytes().all(|b| b.is_ascii_digit()) => n,
                _ => {
                    return Err(format!(
                        "{p:?} is not a prefix length (0 to {bits} for an IPv{} address)",
                        if bits == 32 { 4 } else { 6 }
                    ))
                }
            },
        };
        let range = IpRange {
            network: mask(ip, prefix),
            prefix,
        };
        if range.network != ip {
            return Err(format!(
                "{addr} has bits set past the prefix /{prefix}: the range is {}",
                range.describe()
            ));
        }
        // An IPv4 address written as IPv6 is matched as IPv4.
        Ok(match (ip, canonical(ip)) {
            (IpAddr::V6(_), v4 @ IpAddr::V4(_)) if prefix >= 96 => IpRange {
                network: v4,
                prefix: prefix - 96,
            },
            _ => range,
        })
    }

    /// Whether `ip` (canonical) is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        ip.is_ipv4() == self.network.is_ipv4() && mask(ip, self.prefix) == self.network
    }

    /// Whether every address of `other` is in this range.
    fn holds(&self, other: &IpRange) -> bool {
        self.prefix <= other.prefix && self.contains(other.network)
    }

    fn describe(&self) -> String {
        let bits = if self.network.is_ipv4() { 32 } else { 128 };
        if self.prefix == bits {
            self.network.to_string()
        } else {
            format!("{}/{}", self.network, self.prefix)
        }
    }
}

/// `ip` with every bit past the first `prefix` cleared.
fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let m = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & m))
        }
        IpAddr::V6(v6) => {
            let m = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & m))
        }
    }
}

impl HostPattern {
    pub fn parse(entry: &str) -> Result<HostPattern, String> {
        let (host, port) = split_host_port(entry)?;
        if host == "*" || host.is_empty() {
            return Err("not a host (for every host, network = true)".into());
        }
        let target = if let Some(rest) = host.strip_prefix("*.") {
            if rest.parse::<IpAddr>().is_ok() || rest.contains('/') {
                return Err("a wildcard goes before a name, not an address".into());
            }
            Target::Suffix(normalize_name(rest).ok_or("not a host name after *.")?)
        } else if host.contains('/') || host.parse::<IpAddr>().is_ok() {
            Target::Range(IpRange::parse(&host)?)
        } else {
            Target::Name(normalize_name(&host).ok_or("not a host name or IP address")?)
        };
        Ok(HostPattern { target, port })
    }

    fn port_allows(&self, port: u16) -> bool {
        !matches!(self.port, Some(p) if p != port)
    }

    /// Whether a request naming the host `name` (normalized, not an address) on `port` is
    /// allowed. An address entry allows no name, whatever it resolves to.
    pub fn allows_name(&self, name: &str, port: u16) -> bool {
        self.port_allows(port)
            && match &self.target {
                Target::Name(n) => n == name,
                Target::Suffix(s) => name
                    .strip_suffix(s.as_str())
                    .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
                Target::Range(_) => false,
            }
    }

    /// Whether this entry names `ip` (an address or a range holding it) on `port`. A name
    /// names no address, whatever it resolves to.
    pub fn names_address(&self, ip: IpAddr, port: u16) -> bool {
        self.port_allows(port) && matches!(&self.target, Target::Range(r) if r.contains(ip))
    }

    /// Whether everything `other` allows, this allows too.
    fn covers(&self, other: &HostPattern) -> bool {
        if self.port.is_some() && self.port != other.port {
            return false;
        }
        match (&self.target, &other.target) {
            (Target::Name(a), Target::Name(b)) => a == b,
            (Target::Suffix(s), Target::Name(n)) => {
                n.strip_suffix(s.as_str()).is_some_and(|r| r.ends_with('.'))
            }
            (Target::Suffix(s), Target::Suffix(t)) => {
                t == s || t.strip_suffix(s.as_str()).is_some_and(|r| r.ends_with('.'))
            }
            (Target::Range(r), Target::Range(q)) => r.holds(q),
            _ => false,
        }
    }

    /// `localhost`, or an address or range holding a loopback address: the list reaches the
    /// host's loopback through the proxy (the command's own loopback is its namespace's).
    pub fn is_loopback(&self) -> bool {
        match &self.target {
            Target::Name(n) => n == LOCALHOST,
            Target::Suffix(_) => false,
            // Two ranges are nested or apart.
            Target::Range(r) => [
                IpRange {
                    network: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
                    prefix: 8,
                },
                IpRange {
                    network: IpAddr::V6(Ipv6Addr::LOCALHOST),
                    prefix: 128,
                },
            ]
            .iter()
            .any(|lo| r.holds(lo) || lo.holds(r)),
        }
    }
}

/// The name that means this host's loopback (RFC 6761): never looked up, and reaching the
/// loopback is what listing it asks for.
pub const LOCALHOST: &str = "localhost";

/// A host list, parsed: what the proxy checks a request against.
#[derive(Debug, Clone, Default)]
pub struct HostList(Vec<HostPattern>);

impl HostList {
    /// The entries of `network` (checked by [`Network::validate`] already; any other is left
    /// out).
    pub fn parse(entries: &[String]) -> HostList {
        HostList(
            entries
                .iter()
                .filter_map(|e| HostPattern::parse(e).ok())
                .collect(),
        )
    }

    /// Whether the list allows the name `name` (normalized) on `port`.
    pub fn allows_name(&self, name: &str, port: u16) -> bool {
        self.0.iter().any(|p| p.allows_name(name, port))
    }

    /// Whether the list names `ip` on `port`: the address itself or a range holding it.
    pub fn names_address(&self, ip: IpAddr, port: u16) -> bool {
        self.0.iter().any(|p| p.names_address(ip, port))
    }

    /// Whether some entry allows the name `name` (normalized), on some port.
    pub fn allows_name_on_any_port(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|p| p.allows_name(name, p.port.unwrap_or(1)))
    }

    /// Whether some entry names `ip`, on some port.
    pub fn names_address_on_any_port(&self, ip: IpAddr) -> bool {
        self.0
            .iter()
            .any(|p| p.names_address(ip, p.port.unwrap_or(1)))
    }

    /// Whether the list reaches the host's loopback (see [`HostPattern::is_loopback`]).
    pub fn reaches_loopback(&self) -> bool {
        self.0.iter().any(HostPattern::is_loopback)
    }
}

/// What kind of address `ip` is when a listed name may not reach it by itself: an address
/// of this host or of the networks around it (loopback, private, link-local …), where the
/// services a command should not reach through a name listed for a public host live.
pub fn restricted_kind(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => match v4.octets() {
            [0, ..] => Some("unspecified"),
            [127, ..] => Some("loopback"),
            [10, ..] | [192, 168, ..] => Some("private"),
            [172, b, ..] if (16..32).contains(&b) => Some("private"),
            [100, b, ..] if (64..128).contains(&b) => Some("shared (carrier-grade NAT)"),
            [169, 254, ..] => Some("link-local"),
            [a, ..] if (224..240).contains(&a) => Some("multicast"),
            [a, ..] if a >= 240 => Some("reserved or broadcast"),
            _ => None,
        },
        // NAT64's well-known prefix carries an IPv4 address to a translator, which reaches it
        // from its own network: judged as that address.
        IpAddr::V6(v6) if v6.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] => {
            let [.., a, b, c, d] = v6.octets();
            restricted_kind(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
        }
        IpAddr::V6(v6) if v6.is_unspecified() => Some("unspecified"),
        IpAddr::V6(v6) if v6.is_loopback() => Some("loopback"),
        IpAddr::V6(v6) => match v6.segments()[0] {
            s if s & 0xffc0 == 0xfe80 => Some("link-local"),
            // fc00::/7, and the site-local fec0::/10 it replaced.
            s if s & 0xfe00 == 0xfc00 || s & 0xffc0 == 0xfec0 => Some("private (unique local)"),
            s if s & 0xff00 == 0xff00 => Some("multicast"),
            _ => None,
        },
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (or range).
pub fn split_host_port(entry: &str) -> Result<(String, Option<u16>), String> {
    let port_of = |p: &str| -> Result<u16, String> {
        match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(format!("{p:?} is not a port (1 to 65535)")),
        }
    };
    if let Some(rest) = entry.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("an unclosed [")?;
        let port = match after {
            "" => None,
            p => Some(port_of(p.strip_prefix(':').ok_or("text after ]")?)?),
        };
        return Ok((host.to_string(), port));
    }
    if entry.matches(':').count() > 1 {
        return Ok((entry.to_string(), None));
    }
    match entry.rsplit_once(':') {
        Some((host, port)) => Ok((host.to_string(), Some(port_of(port)?))),
        None => Ok((entry.to_string(), None)),
    }
}

/// Lower case without a trailing dot, if `host` is a plausible DNS name.
fn normalize_name(host: &str) -> Option<String> {
    let h = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let ok = !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    ok.then_some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> HostPattern {
        HostPattern::parse(s).expect(s)
    }

    fn allows(entry: &str, host: &str, port: u16) -> bool {
        let p = p(entry);
        match Requested::parse(host) {
            Some(Requested::Name(n)) => p.allows_name(&n, port),
            Some(Requested::Address(ip)) => p.names_address(ip, port),
            None => false,
        }
    }

    #[test]
    fn entries_match_host_and_port() {
        assert!(allows("registry.example", "registry.example", 443));
        assert!(allows("registry.example", "Registry.Example.", 80));
        assert!(!allows("registry.example", "evil-registry.example", 443));
        assert!(!allows("registry.example", "registry.example.evil", 443));
        assert!(allows("registry.example:443", "registry.example", 443));
        assert!(!allows("registry.example:443", "registry.example", 22));
        assert!(allows("*.pkg.example", "a.pkg.example", 443));
        assert!(allows("*.pkg.example", "a.b.pkg.example", 443));
        assert!(!allows("*.pkg.example", "pkg.example", 443));
        assert!(!allows("*.pkg.example", "xpkg.example", 443));
        assert!(allows("127.0.0.1:8080", "127.0.0.1", 8080));
        assert!(!allows("127.0.0.1:8080", "localhost", 8080));
        assert!(allows("[::1]:8080", "::1", 8080));
        assert!(!allows("localhost", "a.localhost.", 1));
        assert!(!allows("x.example", "x.example\0", 1));
        assert!(!allows("x.example", "x.example/", 1));
        // A wildcard allows names only, never an address whose text ends the same way.
        assert!(!allows("*.0.1", "127.0.0.1", 80));
        for bad in [
            "*",
            "",
            ":80",
            "a.example:0",
            "a.example:65536",
            "a.example:+80",
            "a b.example",
            "*.10.0.0.1",
            "a..example",
            "[::1",
            "a/b",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(p("localhost:3000").is_loopback() && p("127.0.0.2").is_loopback());
        assert!(p("127.0.0.0/8").is_loopback() && p("::/0").is_loopback());
        assert!(!p("registry.example").is_loopback() && !p("10.0.0.0/8").is_loopback());
    }

    #[test]
    fn ranges_hold_their_addresses_and_only_them() {
        assert!(allows("10.20.0.0/16", "10.20.3.4", 5432));
        assert!(allows("10.20.0.0/16", "10.20.255.255", 1));
        assert!(!allows("10.20.0.0/16", "10.21.0.1", 5432));
        assert!(allows("10.20.0.0/16:5432", "10.20.3.4", 5432));
        assert!(!allows("10.20.0.0/16:5432", "10.20.3.4", 22));
        assert!(allows("fd00::/8", "fd12::1", 443));
        assert!(!allows("fd00::/8", "fe80::1", 443));
        assert!(allows("[fd00::/8]:443", "fd12::1", 443));
        assert!(!allows("[fd00::/8]:443", "fd12::1", 80));
        assert!(allows("0.0.0.0/0", "192.0.2.1", 1));
        assert!(!allows("0.0.0.0/0", "2001:db8::1", 1));
        // An IPv4 address written as IPv6 is that address, in a request and in an entry.
        assert!(allows("127.0.0.1:80", "::ffff:127.0.0.1", 80));
        assert!(allows("[::ffff:10.0.0.0/104]", "10.1.2.3", 80));
        // A range names addresses, never a name that resolves into it.
        assert!(!allows("127.0.0.0/8", "localhost", 80));
        for (bad, why) in [
            ("10.20.0.0/33", "not a prefix length"),
            ("10.20.0.0/-1", "not a prefix length"),
            ("10.20.0.0/", "not a prefix length"),
            ("fd00::/129", "not a prefix length"),
            ("10.20.1.0/16", "the range is 10.20.0.0/16"),
            ("fd00::1/8", "the range is fd00::/8"),
            ("registry.example/16", "an address and a prefix length"),
            ("*.10.0.0.0/8", "a wildcard goes before a name"),
            ("10.0.0.0/8:0", "not a port"),
        ] {
            match HostPattern::parse(bad) {
                Ok(p) => panic!("{bad:?} accepted: {p:?}"),
                Err(e) => assert!(e.contains(why), "{bad:?}: {e}"),
            }
        }
    }

    #[test]
    fn addresses_near_this_host_are_restricted() {
        for (ip, kind) in [
            ("127.0.0.1", "loopback"),
            ("127.9.9.9", "loopback"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("::", "unspecified"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("::ffff:192.168.1.1", "private"),
            ("fd00::2", "private (unique local)"),
            ("fc00::1", "private (unique local)"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("100.127.255.255", "shared (carrier-grade NAT)"),
            ("169.254.169.254", "link-local"),
            ("fe80::1", "link-local"),
            ("224.0.0.1", "multicast"),
            ("ff02::1", "multicast"),
            ("255.255.255.255", "reserved or broadcast"),
            ("64:ff9b::7f00:1", "loopback"),
            ("64:ff9b::a00:1", "private"),
        ] {
            let got = restricted_kind(ip.parse().unwrap());
            assert_eq!(got, Some(kind), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "172.32.0.1",
            "172.15.255.255",
            "100.128.0.1",
            "100.63.255.255",
            "2606:4700::1111",
            "11.0.0.1",
            "192.169.0.1",
            "64:ff9b::5db8:d822",
        ] {
            assert_eq!(restricted_kind(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn named_lists_are_expanded_and_unknown_ones_reported() {
        let lists: HostLists = [(
            "rust".to_string(),
            vec!["index.example".to_string(), "dl.example:443".to_string()],
        )]
        .into_iter()
        .collect();
        let mut n = Network::Hosts(vec!["@rust".into(), "@js".into(), "index.example".into()]);
        n.resolve(&lists);
        assert_eq!(
            n,
            Network::Hosts(vec![
                "index.example".into(),
                "dl.example:443".into(),
                "@js".into()
            ])
        );
        assert_eq!(n.unresolved(), Some("js"));
        let nested: HostLists = [("a".to_string(), vec!["@b".to_string()])].into();
        assert!(Network::Off.validate(&nested).is_err());
    }

    #[test]
    fn a_workspace_list_keeps_only_what_the_users_covers() {
        let base = Network::Hosts(vec![
            "*.pkg.example".into(),
            "index.example:443".into(),
            "127.0.0.1:8080".into(),
            "10.20.0.0/16".into(),
            "[fd00::/8]:443".into(),
        ]);
        let ws = Network::Hosts(vec![
            "a.pkg.example".into(),
            "*.b.pkg.example:443".into(),
            "*.pkg.example".into(),
            "pkg.example".into(),
            "index.example".into(),
            "index.example:443".into(),
            "127.0.0.1:8080".into(),
            "127.0.0.1:22".into(),
            "evil.example".into(),
            "10.20.3.0/24".into(),
            "10.20.3.4:5432".into(),
            "10.0.0.0/8".into(),
            "0.0.0.0/0".into(),
            "fd12::/16:443".into(),
            "[fd12::/16]:443".into(),
            "[fd12::1]".into(),
        ]);
        assert_eq!(
            base.tighten(ws),
            Network::Hosts(vec![
                "a.pkg.example".into(),
                "*.b.pkg.example:443".into(),
                "*.pkg.example".into(),
                "index.example:443".into(),
                "127.0.0.1:8080".into(),
                "10.20.3.0/24".into(),
                "10.20.3.4:5432".into(),
                "[fd12::/16]:443".into(),
            ])
        );
        assert_eq!(base.tighten(Network::On), base);
        assert_eq!(base.tighten(Network::Off), Network::Off);
        assert_eq!(Network::Off.tighten(Network::On), Network::Off);
        assert_eq!(Network::On.tighten(base.clone()), base);
    }
}
