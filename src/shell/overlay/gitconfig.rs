//! What of git's configuration decides which paths are ignored (the user's excludes file, the
//! object format's hash length), read as git-config(1) reads its files.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `$XDG_CONFIG_HOME`, else `~/.config`, as git finds its per-user files.
pub(super) fn config_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

/// What of git's configuration (git-config(1)) deciding what is ignored: the system file,
/// the user's (`$XDG_CONFIG_HOME/git/config`, then `~/.gitconfig`, or `GIT_CONFIG_GLOBAL`)
/// and the repository's, the last setting winning; `include.path` is followed,
/// `includeIf` is not.
#[derive(Default)]
pub(super) struct GitConfig {
    pub(super) excludes_file: Option<PathBuf>,
    pub(super) hash_len: usize,
}

impl GitConfig {
    pub(super) fn read(common: Option<&Path>) -> GitConfig {
        let mut files = Vec::new();
        if std::env::var_os("GIT_CONFIG_NOSYSTEM").is_none() {
            files.push(
                std::env::var_os("GIT_CONFIG_SYSTEM")
                    .map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
            );
        }
        match std::env::var_os("GIT_CONFIG_GLOBAL") {
            Some(global) => files.push(PathBuf::from(global)),
            None => {
                files.extend(config_home().map(|c| c.join("git/config")));
                files.extend(std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".gitconfig")));
            }
        }
        files.extend(common.map(|c| c.join("config")));
        let mut config = GitConfig {
            excludes_file: None,
            hash_len: 20,
        };
        for file in files {
            config.read_file(&file, 0);
        }
        config
    }

    fn read_file(&mut self, file: &Path, depth: usize) {
        // Includes nest at most as deep as git lets them (10).
        if depth > 10 {
            return;
        }
        let Ok(text) = fs::read(file) else {
            return;
        };
        for (section, key, value) in config_entries(&text) {
            match (section.as_str(), key.as_str()) {
                ("core", "excludesfile") => {
                    self.excludes_file = Some(expand_home(&value));
                }
                ("extensions", "objectformat") => {
                    self.hash_len = if value.eq_ignore_ascii_case(b"sha256") {
                        32
                    } else {
                        20
                    };
                }
                ("include", "path") => {
                    let path = expand_home(&value);
                    let path = match file.parent() {
                        Some(dir) if path.is_relative() => dir.join(path),
                        _ => path,
                    };
                    self.read_file(&path, depth + 1);
                }
                _ => {}
            }
        }
    }
}

/// A path setting with `~/` standing for the home directory, as git reads it.
fn expand_home(value: &[u8]) -> PathBuf {
    match (value.strip_prefix(b"~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(std::ffi::OsStr::from_bytes(rest)),
        _ => PathBuf::from(std::ffi::OsStr::from_bytes(value)),
    }
}

/// The settings of a git configuration file: (section, key) lower-cased (a subsection kept
/// apart: `section "sub"` reads as `section.sub`), and the value with quotes, escapes and
/// comments resolved; a key without `=` is `true`.
// Long: a small reader of git's config syntax, one loop over lines with the section, quoting
// and continuation state that each line reads and changes.
fn config_entries(text: &[u8]) -> Vec<(String, String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.split(|b| *b == b'\n');
    while let Some(line) = lines.next() {
        let mut line = trim_ascii(line);
        if line.starts_with(b"[") {
            let Some(close) = line.iter().rposition(|b| *b == b']') else {
                continue;
            };
            let header = &line[1..close];
            section = match header.iter().position(|b| *b == b'"') {
                Some(q) => {
                    let name = String::from_utf8_lossy(trim_ascii(&header[..q])).to_lowercase();
                    let sub = String::from_utf8_lossy(&header[q + 1..])
                        .trim_end_matches('"')
                        .to_string();
                    format!("{name}.{sub}")
                }
                None => String::from_utf8_lossy(header).to_lowercase(),
            };
            line = trim_ascii(&line[close + 1..]);
            if line.is_empty() || line[0] == b'#' || line[0] == b';' {
                continue;
            }
        }
        if line.is_empty() || line[0] == b'#' || line[0] == b';' {
            continue;
        }
        let (key, rest) = match line.iter().position(|b| *b == b'=') {
            Some(eq) => (trim_ascii(&line[..eq]), Some(&line[eq + 1..])),
            None => (line, None),
        };
        let key = String::from_utf8_lossy(key).to_lowercase();
        let Some(rest) = rest else {
            out.push((section.clone(), key, b"true".to_vec()));
            continue;
        };
        // The value: quotes toggle, `\` escapes, a comment ends it, a final `\` continues it.
        let mut value = Vec::new();
        let mut quoted = false;
        let mut pending_space = 0;
        let mut chars: Vec<u8> = rest.to_vec();
        let mut i = 0;
        loop {
            if i >= chars.len() {
                break;
            }
            let c = chars[i];
            i += 1;
            match c {
                b'"' => quoted = !quoted,
                b'\\' if i >= chars.len() => {
                    // A line ending in `\`: the value goes on on the next line.
                    match lines.next() {
                        Some(next) => {
                            chars = next.strip_suffix(b"\r").unwrap_or(next).to_vec();
                            i = 0;
                        }
                        None => break,
                    }
                }
                b'\\' => {
                    let e = chars[i];
                    i += 1;
                    value.extend(std::iter::repeat(b' ').take(pending_space));
                    pending_space = 0;
                    value.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'b' => 8,
                        other => other,
                    });
                }
                b'#' | b';' if !quoted => break,
                b' ' | b'\t' | b'\r' if !quoted => {
                    if !value.is_empty() {
                        pending_space += 1;
                    }
                }
                other => {
                    value.extend(std::iter::repeat(b' ').take(pending_space));
                    pending_space = 0;
                    value.push(other);
                }
            }
        }
        out.push((section.clone(), key, value));
    }
    out
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_configuration_values_are_read_as_git_reads_them() {
        let text = b"# top\n[core]\n\tExcludesFile = ~/ignore # a comment\n\
                     [Core \"sub\"]\n\texcludesfile = no\n\
                     [extensions]\n\tobjectFormat = sha256\n\
                     [core] bare\n[user]\n\tname = \"A \\\"B\\\" ; c\" ; gone\n\
                     \tlong = one \\\n two\n";
        let entries = config_entries(text);
        let find = |s: &str, k: &str| {
            entries
                .iter()
                .filter(|(sec, key, _)| sec == s && key == k)
                .map(|(_, _, v)| String::from_utf8_lossy(v).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(find("core", "excludesfile"), ["~/ignore"]);
        assert_eq!(find("core.sub", "excludesfile"), ["no"]);
        assert_eq!(find("extensions", "objectformat"), ["sha256"]);
        assert_eq!(find("core", "bare"), ["true"]);
        assert_eq!(find("user", "name"), ["A \"B\" ; c"]);
        assert_eq!(find("user", "long"), ["one  two"]);
    }
}
