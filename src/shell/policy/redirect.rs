//! Redirections: reads from anywhere; writes checked where the target is literal (never the
//! configuration file, never under `.git`; when strict, only `/dev/null`, `/dev/stdout`,
//! `/dev/stderr`, another descriptor or a path inside the root); here-strings and heredocs,
//! whose expansions are checked as words (when strict, refused).

use tree_sitter::Node;

use super::kinds::describe_kind;
use super::paths::{check_write_path, names_config, names_vcs_metadata};
use super::{children, deny, short, Checker};
use crate::error::Result;

/// Where writing changes nothing.
const DISCARDS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

impl Checker<'_> {
    pub(super) fn redirect(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let part = short(self.text(node, src));
        match node.kind() {
            "file_redirect" => self.file_redirect(node, src, &part, depth),
            "herestring_redirect" => {
                for child in children(node) {
                    if child.is_named() && child.kind() != "file_descriptor" {
                        self.word(child, src, &part, depth)?;
                    } else if !child.is_named() && child.kind() != "<<<" {
                        return Err(deny(format!(
                            "`{part}`: shell syntax `{}` is not allowed",
                            child.kind()
                        )));
                    }
                }
                Ok(())
            }
            "heredoc_redirect" => self.heredoc(node, src, &part, depth),
            other => Err(deny(format!(
                "`{part}`: {} is not allowed",
                describe_kind(other)
            ))),
        }
    }

    fn file_redirect(&mut self, node: Node<'_>, src: &[u8], part: &str, depth: u8) -> Result<()> {
        let mut op = String::new();
        let mut target = None;
        for child in children(node) {
            match child.kind() {
                "file_descriptor" => {}
                k if !child.is_named() => op.push_str(k),
                // The words after the first are the command's arguments for bash (the grammar
                // puts `-type f` of `find / 2>/dev/null -type f` here): see `extra_words`.
                _ if target.is_none() => target = Some(self.word(child, src, part, depth)?),
                _ => {}
            }
        }
        let Some(target) = target else {
            // `>&-`, `2>&-`, `<&-`: a descriptor closed, nothing opened.
            if matches!(op.as_str(), ">&-" | "<&-") {
                return Ok(());
            }
            return Err(deny(format!(
                "`{part}`: a redirection needs exactly one target"
            )));
        };
        let target = &target;
        let writes = !matches!(op.as_str(), "<" | "<&" | "<&-");
        let dup = matches!(op.as_str(), ">&" | "<&" | ">&-" | "<&-")
            && (target.value == "-" || target.value.chars().all(|c| c.is_ascii_digit()))
            && !target.quoted
            && !target.dynamic;
        if dup || !writes {
            if self.strict && target.expands && writes {
                return Err(deny(format!("`{part}`: the redirection target expands")));
            }
            return Ok(());
        }
        let known = target.known();
        if !known.is_some_and(|v| DISCARDS.contains(&v)) {
            self.writes = true;
        }
        if self.strict {
            if target.expands || target.dynamic {
                return Err(deny(format!(
                    "`{part}`: the redirection target `{}` would be expanded by the shell",
                    target.value
                )));
            }
            return check_write_path(&target.value, self.root)
                .map_err(|why| deny(format!("`{part}`: output redirection {why}")));
        }
        // Where the target is known the friendly refusals hold; anywhere else the kernel
        // decides (the world is read-only, `sneaky.toml` and `.git`'s config and hooks too).
        match known {
            Some(v) if names_config(v) => Err(deny(format!(
                "`{part}`: output redirection to {v}: the configuration file must not be written"
            ))),
            Some(v) if names_vcs_metadata(v) => Err(deny(format!(
                "`{part}`: output redirection to {v}: .git is version-control metadata, read-only to commands"
            ))),
            _ => Ok(()),
        }
    }

    fn heredoc(&mut self, node: Node<'_>, src: &[u8], part: &str, depth: u8) -> Result<()> {
        let mut doc = Heredoc::default();
        for child in children(node) {
            match child.kind() {
                "<<" => {}
                "<<-" => doc.strip_tabs = true,
                "heredoc_start" => doc.start(self.text(child, src)),
                "heredoc_body" => {
                    let text = self.text(child, src);
                    if !doc.quoted_delimiter {
                        if self.strict {
                            let expanding = children(child)
                                .iter()
                                .any(|c| c.is_named() && c.kind() != "heredoc_content");
                            if expanding || text.contains(['$', '`', '\\']) {
                                return Err(deny(format!("`{part}`: a heredoc with an unquoted delimiter must not contain `$`, backticks or backslashes (quote the delimiter: <<'EOF')")));
                            }
                        } else {
                            self.heredoc_text(child, src, part, depth)?;
                        }
                    }
                    doc.check_body(text)
                        .map_err(|why| deny(format!("`{part}`: {why}")))?;
                }
                "heredoc_end" => doc
                    .check_end(self.text(child, src))
                    .map_err(|why| deny(format!("`{part}`: {why}")))?,
                "file_redirect" | "herestring_redirect" => self.redirect(child, src, depth)?,
                "|" | "|&" | "&&" | "||" | ";" | "&" => {}
                _ if child.is_named() => self.statement(child, src, depth)?,
                other => {
                    return Err(deny(format!(
                        "`{part}`: shell syntax `{other}` is not allowed"
                    )))
                }
            }
        }
        Ok(())
    }

    /// The text a heredoc or here-string gives on standard input, when the parser knows it
    /// (for a shell that runs it). A heredoc's expansions stay as written: the shell parses
    /// them as its own, and they are judged there too.
    pub(super) fn stdin_text(&mut self, node: Node<'_>, src: &[u8]) -> Option<String> {
        let kids = children(node);
        match node.kind() {
            "heredoc_redirect" => {
                let mut doc = Heredoc::default();
                let mut body = String::new();
                for child in kids {
                    match child.kind() {
                        "heredoc_start" => doc.start(self.text(child, src)),
                        "heredoc_body" => body = self.text(child, src).to_string(),
                        _ => {}
                    }
                }
                Some(if doc.quoted_delimiter {
                    body
                } else {
                    unescape_heredoc(&body)
                })
            }
            "herestring_redirect" => {
                let word = kids
                    .into_iter()
                    .find(|c| c.is_named() && c.kind() != "file_descriptor")?;
                if super::words::has_expansion(word) {
                    // Known only at run time (its commands are judged as the redirection's).
                    return None;
                }
                let part = short(self.text(node, src));
                let w = self.word(word, src, &part, 0).ok()?;
                w.known().map(str::to_string)
            }
            _ => None,
        }
    }
}

/// A heredoc body with an unquoted delimiter as the shell then reads it: `\$`, `` \` ``, `\\`
/// and `\<newline>` are escapes, other backslashes literal.
fn unescape_heredoc(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(n @ ('$' | '`' | '\\')) => out.push(n),
            Some(n) => {
                out.push('\\');
                out.push(n);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// What a heredoc's start said, to check its body and end against.
#[derive(Default)]
struct Heredoc {
    quoted_delimiter: bool,
    strip_tabs: bool,
    delimiter: String,
}

impl Heredoc {
    fn line<'a>(&self, line: &'a str) -> &'a str {
        if self.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        }
    }

    fn start(&mut self, text: &str) {
        self.quoted_delimiter = text.contains(['\'', '"', '\\']);
        self.delimiter = text
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
    }

    fn check_body(&self, body: &str) -> std::result::Result<(), String> {
        // bash ends the body at the first line equal to the delimiter; if the grammar read
        // further, the two disagree: refuse.
        if body.split('\n').any(|l| self.line(l) == self.delimiter) {
            return Err("the heredoc body contains its own delimiter line".into());
        }
        Ok(())
    }

    fn check_end(&self, end: &str) -> std::result::Result<(), String> {
        if self.line(end) != self.delimiter {
            return Err(format!(
                "the heredoc does not end with its delimiter `{}`",
                self.delimiter
            ));
        }
        Ok(())
    }
}

/// The words the grammar puts in a file redirection after its target: for bash they are
/// arguments of the command (`find / 2>/dev/null -type f`).
pub(super) fn extra_words(redirect: Node<'_>) -> Vec<Node<'_>> {
    if redirect.kind() != "file_redirect" {
        return Vec::new();
    }
    children(redirect)
        .into_iter()
        .filter(|c| c.is_named() && c.kind() != "file_descriptor")
        .skip(1)
        .collect()
}
