//! `tools.shell.network`: what a command may reach.
//!
//! - `false` (the default): nothing, name lookups included;
//! - `true`: the host's whole network;
//! - a list of hosts (`"registry.example"`, `"registry.example:443"`, `"*.pkg.example"`,
//!   `"127.0.0.1:8080"`, `"[::1]:8080"`) and named lists (`"@rust"`, defined once under
//!   `[tools.shell.host_lists]`): only these, through a proxy the sandbox runs outside the
//!   command's network namespace (src/shell/proxy.rs). A port, when given, is enforced; without
//!   one every port of that host is allowed. `*.suffix` allows every name below the suffix,
//!   not the suffix itself. Names are compared without case and without a trailing dot; an IP
//!   address only matches itself (a name resolving to it does not).
//!
//! An untrusted workspace's list is cut down to what the user's allows ([`Network::tighten`]).

use std::collections::BTreeMap;
use std::fmt;

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
pub const EXPECTED: &str =
    "false, true or a list of hosts ([\"host\", \"host:port\", \"*.suffix\", \"@list\"])";

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

/// One allowed entry: a host name, a `*.` suffix or an IP address, with or without a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// Lower case, no trailing dot; for a wildcard, the suffix after `*.`; an IPv6 address
    /// without brackets.
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl HostPattern {
    pub fn parse(entry: &str) -> Result<HostPattern, String> {
        let (host, port) = split_host_port(entry)?;
        let (wildcard, host) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host.as_str()),
        };
        if host == "*" || host.is_empty() {
            return Err("not a host (for every host, network = true)".into());
        }
        let host = normalize_host(host).ok_or("not a host name or IP address")?;
        if wildcard && host.parse::<std::net::IpAddr>().is_ok() {
            return Err("a wildcard goes before a name, not an address".into());
        }
        Ok(HostPattern {
            host,
            wildcard,
            port,
        })
    }

    /// Whether a connection to `host` (as a client names it) on `port` is allowed.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let Some(host) = normalize_host(host) else {
            return false;
        };
        if self.wildcard {
            host.strip_suffix(&self.host)
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.'))
        } else {
            host == self.host
        }
    }

    /// Whether everything `other` allows, this allows too.
    fn covers(&self, other: &HostPattern) -> bool {
        if self.port.is_some() && self.port != other.port {
            return false;
        }
        match (self.wildcard, other.wildcard) {
            (false, false) => self.host == other.host,
            (false, true) => false,
            (true, _) => {
                let probe = if other.wildcard {
                    format!("x.{}", other.host)
                } else {
                    other.host.clone()
                };
                self.allows(&probe, other.port.unwrap_or(self.port.unwrap_or(0)))
            }
        }
    }

    /// A loopback address or `localhost`: reached on the host's loopback through the proxy
    /// (the command's own loopback is its namespace's).
    pub fn is_loopback(&self) -> bool {
        !self.wildcard
            && (self.host == "localhost"
                || self
                    .host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback()))
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address.
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

/// Lower case without a trailing dot, if `host` is a plausible DNS name or an IP address.
fn normalize_host(host: &str) -> Option<String> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Some(ip.to_string());
    }
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

    #[test]
    fn entries_match_host_and_port() {
        assert!(p("registry.example").allows("registry.example", 443));
        assert!(p("registry.example").allows("Registry.Example.", 80));
        assert!(!p("registry.example").allows("evil-registry.example", 443));
        assert!(!p("registry.example").allows("registry.example.evil", 443));
        assert!(p("registry.example:443").allows("registry.example", 443));
        assert!(!p("registry.example:443").allows("registry.example", 22));
        assert!(p("*.pkg.example").allows("a.pkg.example", 443));
        assert!(p("*.pkg.example").allows("a.b.pkg.example", 443));
        assert!(!p("*.pkg.example").allows("pkg.example", 443));
        assert!(!p("*.pkg.example").allows("xpkg.example", 443));
        assert!(p("127.0.0.1:8080").allows("127.0.0.1", 8080));
        assert!(!p("127.0.0.1:8080").allows("localhost", 8080));
        assert!(p("[::1]:8080").allows("::1", 8080));
        assert!(!p("localhost").allows("a.localhost.", 1));
        assert!(!p("x.example").allows("x.example\0", 1));
        assert!(!p("x.example").allows("x.example/", 1));
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
        assert!(!p("registry.example").is_loopback());
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
        ]);
        assert_eq!(
            base.tighten(ws),
            Network::Hosts(vec![
                "a.pkg.example".into(),
                "*.b.pkg.example:443".into(),
                "*.pkg.example".into(),
                "index.example:443".into(),
                "127.0.0.1:8080".into(),
            ])
        );
        assert_eq!(base.tighten(Network::On), base);
        assert_eq!(base.tighten(Network::Off), Network::Off);
        assert_eq!(Network::Off.tighten(Network::On), Network::Off);
        assert_eq!(Network::On.tighten(base.clone()), base);
    }
}
