//! The one line a command's stderr ends with when a layer of the sandbox stopped something:
//! what was refused (a host, a path, a program) and the configuration key and value that
//! would allow it. The kernel's own answers (EACCES, EROFS, a lookup that reaches no
//! resolver) name no key, and a refusal the model cannot read costs it a turn.
//!
//! How each refusal is known, and how far that goes:
//!
//! - **a host the proxy refused**: the proxy's own record, passed to the runner on a line
//!   the command cannot forge (src/shell/sandbox.rs, `END_PREFIX`). Certain; at most the
//!   first 16 refused hosts of a call are named.
//! - **a program outside the exec set** (EACCES): a "Permission denied" message naming it
//!   (bash's `NAME: Permission denied`, `bad interpreter`, env's `‘NAME’`, Python's
//!   `[Errno 13]`), believed only when the name leads (by path, or by PATH for a bare name)
//!   to an executable regular file that the exec set given to the launcher does not hold, or
//!   to a denied program it covered.
//! - **a write outside the writable places** (EROFS): a "Read-only file system" message (or
//!   `EROFS`, `os error 30`, `Errno 30`) naming an absolute path, on its line or on one of
//!   the few lines above it (cargo names the path above its `Caused by:`), believed only when
//!   the path lies outside the workspace, the private temp dir and `write_paths`.
//! - **a host with the network off, or looked up past the proxy**: a failed lookup message
//!   (curl, git and cargo's `Could not resolve host`, npm's `EAI_AGAIN`, Python's
//!   `Temporary failure in name resolution`, go's `dial tcp: lookup`, wget, ssh), naming the
//!   host when the message does (or a URL or `host='…'` on its line).
//!
//! Limits: a program that says nothing, or says it without the name or path (pip's "No
//! matching distribution" names no host: the line then says the network is off, not which
//! host), gives no line or a less precise one; a path given relative to a directory the
//! command changed into is taken relative to the workspace root. When several refusals show,
//! the proxy's record wins, then a protected path, then the one whose message comes last.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::proxy::Refusal;
use crate::config::network::{with_port, HostList, Requested};
use crate::config::Network;

/// What the sandbox was given, to judge whether a message is its refusal.
pub struct Facts<'a> {
    pub stderr: &'a str,
    /// The proxy's refusals (src/shell/sandbox.rs, `LaunchEnd`).
    pub refused: &'a [Refusal],
    pub network: &'a Network,
    pub root: &'a Path,
    /// The command's PATH, where a bare program name is looked up.
    pub path_env: &'a std::ffi::OsStr,
    /// The exec set and the writable places the launcher was given; None when the kernel
    /// layers that enforce them were not in force (then EACCES and EROFS are not theirs).
    pub given: Option<&'a Given>,
}

/// From the launch spec: what may execute and what may be written.
pub struct Given {
    pub exec: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    /// The denied programs covered in the command's view (src/shell/executables.rs).
    pub cover: Vec<PathBuf>,
    /// Which programs may run (src/config/commands.rs): what the line suggests.
    pub mode: crate::config::commands::Mode,
    /// `tools.shell.denied_commands` is set: a denied program is let run by taking it out
    /// there, not by `extra_allowed_commands`.
    pub denied_commands: bool,
}

/// The line to end stderr with (without its newline), if a layer stopped something.
/// `protected` is the protected paths' own line (src/shell/mod.rs), if any.
pub fn line(f: &Facts<'_>, protected: Option<String>) -> Option<String> {
    if let Some(line) = proxy_line(f.refused) {
        return Some(line);
    }
    if let Some(p) = protected {
        return Some(p.trim_matches('\n').to_string());
    }
    let lines: Vec<&str> = f.stderr.lines().collect();
    let given = f.given.map(|g| Canonical::of(g, f.root));
    let found = [
        given.as_ref().and_then(|g| exec_refused(&lines, f, g)),
        given.as_ref().and_then(|g| write_refused(&lines, g)),
        lookup_failed(&lines, f.network),
    ];
    // The refusal told last is the likeliest cause of the failure; on one line, the order
    // above.
    found
        .into_iter()
        .enumerate()
        .filter_map(|(rank, hit)| hit.map(|(at, line)| (at, std::cmp::Reverse(rank), line)))
        .max()
        .map(|(_, _, line)| line)
}

/// Append `line` to `stderr` on a line of its own.
pub fn append(stderr: &mut String, line: &str) {
    if !stderr.is_empty() && !stderr.ends_with('\n') {
        stderr.push('\n');
    }
    stderr.push_str(line);
    stderr.push('\n');
}

fn proxy_line(refused: &[Refusal]) -> Option<String> {
    let first = refused.first()?;
    let mut entries: Vec<String> = Vec::new();
    for r in refused {
        let e = format!("\"{}\"", r.entry());
        if !entries.contains(&e) {
            entries.push(e);
        }
    }
    let others: Vec<String> = refused[1..].iter().map(Refusal::target).collect();
    let too = match others.len() {
        0 => String::new(),
        1 => format!("; it refused {} too", others[0]),
        n => format!("; it refused {n} more too ({})", others.join(", ")),
    };
    let range = if refused.iter().any(|r| r.resolved.is_some()) {
        ", an address also by a range holding it"
    } else {
        ""
    };
    Some(format!(
        "sneaky-run: the sandbox's network proxy refused {}: {}{too}; adding {} to \
         tools.shell.network in your configuration allows {}{range} (docs/sandbox.md)",
        first.target(),
        first.reason(),
        entries.join(", "),
        if entries.len() == 1 { "it" } else { "them" },
    ))
}

/// The exec set and the writable places, resolved once (Landlock holds the files the paths
/// led to when the call started), and only when a message may be a refusal: a call whose
/// stderr holds none (most calls) resolves nothing (some sixty `readlink`s on the result's
/// way, for this machine's exec set).
struct Canonical<'a> {
    given: &'a Given,
    root: &'a Path,
    resolved: std::cell::OnceCell<Resolved>,
}

struct Resolved {
    root: PathBuf,
    exec: Vec<PathBuf>,
    write: Vec<PathBuf>,
    cover: Vec<PathBuf>,
}

impl<'a> Canonical<'a> {
    fn of(given: &'a Given, root: &'a Path) -> Canonical<'a> {
        Canonical {
            given,
            root,
            resolved: std::cell::OnceCell::new(),
        }
    }

    fn resolved(&self) -> &Resolved {
        self.resolved.get_or_init(|| {
            let resolve = |list: &[PathBuf]| -> Vec<PathBuf> {
                list.iter()
                    .filter_map(|p| std::fs::canonicalize(p).ok())
                    .collect()
            };
            Resolved {
                root: std::fs::canonicalize(self.root).unwrap_or_else(|_| self.root.to_path_buf()),
                exec: resolve(&self.given.exec),
                write: resolve(&self.given.write),
                cover: resolve(&self.given.cover),
            }
        })
    }

    fn root(&self) -> &Path {
        &self.resolved().root
    }

    fn covers(&self, file: &Path) -> bool {
        self.resolved().cover.iter().any(|c| c == file)
    }

    fn strict(&self) -> bool {
        self.given.mode.is_strict()
    }

    fn may_execute(&self, file: &Path) -> bool {
        self.resolved().exec.iter().any(|e| file.starts_with(e))
    }

    fn may_write(&self, place: &Path) -> bool {
        self.resolved().write.iter().any(|w| place.starts_with(w))
    }
}

/// Quotes and brackets that messages put around a name.
const QUOTES: &[char] = &['\'', '"', '‘', '’', '`', '(', ')', '[', ']', ','];

/// Phrases of a refused write or read, not of an exec, before "Permission denied".
const NOT_EXEC: &[&str] = &[
    "cannot create",
    "cannot open",
    "cannot remove",
    "cannot touch",
    "cannot overwrite",
    "cannot stat",
    "cannot access",
    "failed to open",
    "Operation not permitted",
];

/// The last "Permission denied" that is the exec set's: (line index, the line to add).
fn exec_refused(lines: &[&str], f: &Facts<'_>, g: &Canonical<'_>) -> Option<(usize, String)> {
    lines.iter().enumerate().rev().find_map(|(at, line)| {
        if !line.contains("Permission denied") || NOT_EXEC.iter().any(|p| line.contains(p)) {
            return None;
        }
        // `bash: line 1: ./hello: Permission denied`, `/usr/bin/env: ‘perl’: Permission
        // denied`, `bash: ./t.pl: /usr/bin/perl: bad interpreter: Permission denied`,
        // `/bin/sh: 1: gzip: Permission denied`, `[Errno 13] Permission denied: './hello'`.
        line.rsplit(": ")
            .map(|part| part.trim().trim_matches(QUOTES))
            .filter(|part| !part.is_empty() && !part.contains(char::is_whitespace))
            .find_map(|name| refused_program(name, f, g))
            .map(|l| (at, l))
    })
}

/// The line for `name` (as the message wrote it) when it leads to an executable file
/// outside the exec set.
fn refused_program(name: &str, f: &Facts<'_>, g: &Canonical<'_>) -> Option<String> {
    let (path, by_path) = if name.contains('/') {
        (f.root.join(name), false)
    } else {
        (on_path(name, f.path_env)?, true)
    };
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return None;
    }
    let file = std::fs::canonicalize(&path).ok()?;
    let shown = if by_path {
        format!("{name} ({})", file.display())
    } else {
        name.to_string()
    };
    if g.covers(&file) {
        let base = file.file_name()?.to_string_lossy().into_owned();
        let how = match g.given.denied_commands {
            true => format!("taking \"{base}\" out of tools.shell.denied_commands"),
            false => format!("tools.shell.extra_allowed_commands = [\"{base}\"]"),
        };
        return Some(format!(
            "sneaky-run: {shown} could not be executed: it is on the deny list, which the \
             kernel holds however it is started; {how} in your configuration lets it run \
             (docs/sandbox.md)"
        ));
    }
    if g.may_execute(&file) {
        return None;
    }
    if !g.strict() {
        // The contained mode: any program may run from where programs are installed; a file
        // elsewhere needs a place in the exec set.
        return Some(format!(
            "sneaky-run: {shown} could not be executed: programs execute only from /usr, \
             PATH's directories, the library directories, the workspace and the private temp \
             dir; tools.shell.exec_paths = [\"{}\"] in your configuration allows it \
             (docs/sandbox.md)",
            file.display()
        ));
    }
    let (workspace, key, value) = if let Ok(rel) = file.strip_prefix(g.root()) {
        let dir = rel
            .parent()
            .map(|d| d.display().to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".".into());
        (
            ", and a program of the workspace only in tools.shell.exec_workspace_dirs",
            "exec_workspace_dirs",
            dir,
        )
    } else {
        let base = file.file_name().map(|n| n.to_string_lossy().to_string());
        let program = if by_path {
            Some(name.to_string())
        } else {
            // A file on PATH by its own name is a program the lists can name.
            base.filter(|b| {
                on_path(b, f.path_env).and_then(|p| std::fs::canonicalize(p).ok())
                    == Some(file.clone())
            })
        };
        match program {
            Some(p) => ("", "extra_allowed_commands", p),
            None => ("", "exec_paths", file.display().to_string()),
        }
    };
    Some(format!(
        "sneaky-run: {shown} could not be executed: the strict mode lets only allowed \
         programs execute{workspace}; tools.shell.{key} = [\"{value}\"] in your configuration \
         allows it (docs/sandbox.md)"
    ))
}

/// The first executable regular file named `name` in the directories of `path_env`.
fn on_path(name: &str, path_env: &std::ffi::OsStr) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    std::env::split_paths(path_env)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What messages say for EROFS.
const READ_ONLY: &[&str] = &[
    "Read-only file system",
    "read-only file system",
    "EROFS",
    "os error 30",
    "Errno 30",
];

/// How many lines above an EROFS message its path may stand.
const PATH_LINES_ABOVE: usize = 6;

/// The last EROFS whose path lies outside the writable places: (line index, the line).
fn write_refused(lines: &[&str], g: &Canonical<'_>) -> Option<(usize, String)> {
    lines.iter().enumerate().rev().find_map(|(at, line)| {
        if !READ_ONLY.iter().any(|m| line.contains(m)) {
            return None;
        }
        (at.saturating_sub(PATH_LINES_ABOVE)..=at)
            .rev()
            .flat_map(|i| absolute_paths(lines[i]).into_iter().rev())
            .find_map(|p| outside_writable(&p, g))
            .map(|l| (at, l))
    })
}

fn absolute_paths(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || QUOTES.contains(&c))
        .map(|w| w.trim_end_matches([':', '.', ';']))
        .filter(|w| w.starts_with('/') && w.len() > 1)
        .map(str::to_string)
        .collect()
}

/// The line for a write to `path` that the read-only world refused, if it is outside every
/// writable place.
fn outside_writable(path: &str, g: &Canonical<'_>) -> Option<String> {
    let path = Path::new(path);
    // The kernel's own file systems are read-only for every command; no key changes that.
    if ["/proc", "/sys", "/dev"]
        .iter()
        .any(|k| path.starts_with(k))
    {
        return None;
    }
    let existing = path.ancestors().find(|a| a.exists())?;
    let place = std::fs::canonicalize(existing).ok()?;
    if g.may_write(&place) || place.starts_with(g.root()) {
        return None;
    }
    // The directory to allow: the nearest one that exists (the path itself, when it is one).
    let dir = if place.is_dir() {
        place
    } else {
        place.parent()?.to_path_buf()
    };
    if dir == Path::new("/") {
        return None;
    }
    Some(format!(
        "sneaky-run: {} could not be written: commands write only in the workspace, their \
         private temp dir ($TMPDIR) and tools.shell.write_paths; tools.shell.write_paths = \
         [\"{}\"] in your configuration allows it (docs/sandbox.md)",
        path.display(),
        dir.display()
    ))
}

/// The last failed lookup (or unreachable network): (line index, the line). Nothing when
/// the command has the whole network.
fn lookup_failed(lines: &[&str], network: &Network) -> Option<(usize, String)> {
    if network.all() {
        return None;
    }
    let (at, host) = lines
        .iter()
        .enumerate()
        .rev()
        .find_map(|(at, line)| failed_host(line, network).map(|h| (at, h)))?;
    let line = match (network.hosts(), host) {
        (None, Some(host)) => format!(
            "sneaky-run: the network is off for commands (tools.shell.network = false), so \
             {host} could not be reached; tools.shell.network = [\"{host}\"] in your \
             configuration lets it through the sandbox's proxy (docs/sandbox.md)"
        ),
        (None, None) => "sneaky-run: the network is off for commands (tools.shell.network = \
             false), so the host the command tried could not be reached; a list of the hosts \
             it needs (tools.shell.network = [\"registry.example\"]) in your configuration \
             lets them through the sandbox's proxy (docs/sandbox.md)"
            .to_string(),
        (Some(listed), Some(host)) if mentions(listed, &host) => format!(
            "sneaky-run: {host} is in tools.shell.network, but the program looked it up \
             itself: the sandbox reaches the network only through its proxy, named in \
             HTTPS_PROXY and HTTP_PROXY, which this program did not use (docs/sandbox.md)"
        ),
        (Some(_), Some(host)) => format!(
            "sneaky-run: {host} is not in tools.shell.network (commands reach only the listed \
             hosts, through the sandbox's proxy); adding \"{host}\" to tools.shell.network in \
             your configuration allows it (docs/sandbox.md)"
        ),
        (Some(_), None) => "sneaky-run: a name lookup failed: commands reach the network only \
             through the sandbox's proxy (HTTPS_PROXY, HTTP_PROXY), to the hosts in \
             tools.shell.network (docs/sandbox.md)"
            .to_string(),
    };
    Some((at, line))
}

/// Whether some entry of the list allows `host` on some port.
fn mentions(listed: &[String], host: &str) -> bool {
    let list = HostList::parse(listed);
    match Requested::parse(host) {
        Some(Requested::Name(n)) => list.allows_name_on_any_port(&n),
        Some(Requested::Address(ip)) => list.names_address_on_any_port(ip),
        None => false,
    }
}

/// Messages of a lookup that failed, each followed by the host it names.
const NAMED_LOOKUPS: &[&str] = &[
    "Could not resolve host: ",
    "Could not resolve hostname ",
    "getaddrinfo EAI_AGAIN ",
    "getaddrinfo ENOTFOUND ",
    "unable to resolve host address ",
    "dial tcp: lookup ",
];

/// Messages of a lookup that failed, naming no host.
const LOOKUPS: &[&str] = &[
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "nodename nor servname provided",
    "failed to lookup address information",
    "getaddrinfo failed",
    "EAI_AGAIN",
];

/// Messages that, with the network off, tell that it is.
const OFF_SIGNS: &[&str] = &[
    "Network is unreachable",
    "Failed to connect to ",
    "No matching distribution found for ",
];

/// When `line` tells of a failed lookup (or, with the network off, of no route): Some, with
/// the host when the line names one.
fn failed_host(line: &str, network: &Network) -> Option<Option<String>> {
    for m in NAMED_LOOKUPS {
        if let Some(after) = line.split(m).nth(1) {
            let host = after
                .split(|c: char| c.is_whitespace() || c == ':' || QUOTES.contains(&c))
                .find(|w| !w.is_empty());
            return Some(host.and_then(host_of));
        }
    }
    // With the network off, no route anywhere, and pip's answer when its index is out of
    // reach (with a network, a package that is not there).
    let unreachable = network.hosts().is_none() && OFF_SIGNS.iter().any(|m| line.contains(m));
    if !LOOKUPS.iter().any(|m| line.contains(m)) && !unreachable {
        return None;
    }
    // curl: `Failed to connect to 192.0.2.1 port 80 after 0 ms`.
    if let Some(after) = line.split("Failed to connect to ").nth(1) {
        let mut words = after.split_whitespace();
        if let (Some(host), Some("port"), Some(port)) = (words.next(), words.next(), words.next()) {
            let port = port.parse::<u16>().ok();
            let target = host_of(host).zip(port).map(|(h, port)| match h.parse() {
                Ok(ip) => with_port(ip, port),
                Err(_) => format!("{h}:{port}"),
            });
            if target.is_some() {
                return Some(target);
            }
        }
    }
    // urllib3: `HTTPSConnectionPool(host='pypi.org', port=443)`; or a URL on the line.
    let named = line
        .split("host='")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .or_else(|| {
            line.split("://")
                .nth(1)
                .and_then(|r| r.split(['/', ':', ' ', '`', '\'', '"', ')']).next())
        });
    Some(named.and_then(host_of))
}

/// `host` when it is a name or an address (never the loopback: that is the namespace's own,
/// not a host the list could add).
fn host_of(host: &str) -> Option<String> {
    let host = host.trim_end_matches(['.', ',', ';']);
    match Requested::parse(host.trim_matches(['[', ']']))? {
        Requested::Name(n) if n == crate::config::network::LOCALHOST => None,
        Requested::Name(n) => Some(n),
        Requested::Address(ip) if ip.is_loopback() => None,
        Requested::Address(ip) => Some(ip.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(stderr: &'a str, network: &'a Network, root: &'a Path) -> Facts<'a> {
        Facts {
            stderr,
            refused: &[],
            network,
            root,
            path_env: std::ffi::OsStr::new(""),
            given: None,
        }
    }

    #[test]
    fn failed_lookups_name_their_host_when_the_message_does() {
        let off = Network::Off;
        for (line, host) in [
            ("curl: (6) Could not resolve host: example.com", Some("example.com")),
            (
                "warning: spurious network error (3 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)",
                Some("index.crates.io"),
            ),
            (
                "npm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
                Some("registry.npmjs.org"),
            ),
            (
                "ssh: Could not resolve hostname github.com: Temporary failure in name resolution",
                Some("github.com"),
            ),
            (
                "go: example.com/m@v1: Get \"https://proxy.golang.org/x\": dial tcp: lookup proxy.golang.org on 10.0.0.1:53: no such host",
                Some("proxy.golang.org"),
            ),
            (
                "wget: unable to resolve host address ‘example.org’",
                Some("example.org"),
            ),
            (
                "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded (Caused by NameResolutionError(\"Failed to resolve 'pypi.org' ([Errno -3] Temporary failure in name resolution)\"))",
                Some("pypi.org"),
            ),
            (
                "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(... [Errno -2] Name or service not known')': /simple/requests/",
                None,
            ),
            (
                "curl: (7) Failed to connect to 192.0.2.1 port 80 after 0 ms: Couldn't connect to server",
                Some("192.0.2.1:80"),
            ),
            (
                "ERROR: No matching distribution found for requests",
                None,
            ),
        ] {
            assert_eq!(
                failed_host(line, &off),
                Some(host.map(str::to_string)),
                "{line}"
            );
        }
        for line in [
            "error: could not compile `x`",
            "curl: (7) Failed to connect to 127.0.0.1 port 80 after 0 ms: Couldn't connect to server",
        ] {
            assert!(
                matches!(failed_host(line, &off), None | Some(None)),
                "{line}"
            );
        }
        let listed = Network::Hosts(vec!["pypi.org".into()]);
        assert_eq!(
            failed_host(
                "ERROR: No matching distribution found for requests",
                &listed
            ),
            None
        );
        // With the whole network a failed lookup is not the sandbox's doing.
        let root = Path::new("/");
        let f = facts(
            "curl: (6) Could not resolve host: example.com\n",
            &Network::On,
            root,
        );
        assert_eq!(line(&f, None), None);
        let f = facts(
            "curl: (6) Could not resolve host: example.com\n",
            &off,
            root,
        );
        let l = line(&f, None).unwrap();
        assert!(
            l.starts_with("sneaky-run: the network is off")
                && l.contains("tools.shell.network = [\"example.com\"]"),
            "{l}"
        );
        let listed = Network::Hosts(vec!["example.com:443".into()]);
        let f = facts(
            "curl: (6) Could not resolve host: example.com\n",
            &listed,
            root,
        );
        assert!(line(&f, None).unwrap().contains("looked it up itself"));
        let f = facts(
            "curl: (6) Could not resolve host: other.example\n",
            &listed,
            root,
        );
        assert!(line(&f, None)
            .unwrap()
            .contains("adding \"other.example\" to tools.shell.network"));
    }

    #[test]
    fn the_proxys_refusals_come_first_and_name_every_entry() {
        let refused = [
            Refusal {
                host: "a.example".into(),
                port: 443,
                resolved: None,
            },
            Refusal {
                host: "mirror.example".into(),
                port: 8080,
                resolved: Some(("10.20.3.4".parse().unwrap(), "private".into())),
            },
        ];
        let off = Network::Hosts(vec!["mirror.example".into()]);
        let f = Facts {
            refused: &refused,
            ..facts(
                "curl: (6) Could not resolve host: x.example\n",
                &off,
                Path::new("/"),
            )
        };
        let l = line(&f, Some("sneaky-run: protected\n".into())).unwrap();
        assert_eq!(
            l,
            "sneaky-run: the sandbox's network proxy refused a.example:443: not in \
             tools.shell.network; it refused mirror.example:8080 too; adding \"a.example:443\", \
             \"10.20.3.4:8080\" to tools.shell.network in your configuration allows them, an \
             address also by a range holding it (docs/sandbox.md)"
        );
    }

    #[test]
    fn paths_are_found_on_the_line_or_just_above() {
        assert_eq!(
            absolute_paths("mkdir: cannot create directory ‘/opt/q’: Read-only file system"),
            ["/opt/q"]
        );
        assert_eq!(
            absolute_paths("error: failed to create directory `/root/.cargo/registry/cache/x`"),
            ["/root/.cargo/registry/cache/x"]
        );
        assert_eq!(
            absolute_paths("OSError: [Errno 30] Read-only file system: '/tmp/x'"),
            ["/tmp/x"]
        );
        assert_eq!(
            absolute_paths(
                "npm error EROFS: read-only file system, mkdir '/usr/lib/node_modules/x'"
            ),
            ["/usr/lib/node_modules/x"]
        );
    }
}
