//! Redirections: reads from anywhere; writes only to `/dev/null`, `/dev/stdout`, `/dev/stderr`,
//! another descriptor or a literal path inside the root (not the configuration file, not under
//! `.git`); here-strings and heredocs without expansions.

use tree_sitter::Node;

use super::paths::check_write_path;
use super::syntax::describe_kind;
use super::{children, deny, short, Checker};
use crate::error::Result;

impl Checker<'_> {
    pub(super) fn redirect(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let part = short(self.text(node, src));
        match node.kind() {
            "file_redirect" => self.file_redirect(node, src, &part),
            "herestring_redirect" => {
                for child in children(node) {
                    if child.is_named() {
                        self.word(child, src, &part)?;
                    } else if child.kind() != "<<<" {
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

    fn file_redirect(&self, node: Node<'_>, src: &[u8], part: &str) -> Result<()> {
        let mut op = String::new();
        let mut targets = Vec::new();
        for child in children(node) {
            match child.kind() {
                "file_descriptor" => {}
                k if !child.is_named() => op.push_str(k),
                _ => targets.push(self.word(child, src, part)?),
            }
        }
        let [target] = targets.as_slice() else {
            return Err(deny(format!(
                "`{part}`: a redirection needs exactly one target"
            )));
        };
        let writes = !matches!(op.as_str(), "<" | "<&" | "<&-");
        let dup = matches!(op.as_str(), ">&" | "<&" | ">&-" | "<&-")
            && (target.value == "-" || target.value.chars().all(|c| c.is_ascii_digit()))
            && !target.quoted;
        if dup || !writes {
            if target.expands && writes {
                return Err(deny(format!("`{part}`: the redirection target expands")));
            }
            return Ok(());
        }
        if target.expands {
            return Err(deny(format!(
                "`{part}`: the redirection target `{}` would be expanded by the shell",
                target.value
            )));
        }
        check_write_path(&target.value, self.root)
            .map_err(|why| deny(format!("`{part}`: output redirection {why}")))
    }

    fn heredoc(&mut self, node: Node<'_>, src: &[u8], part: &str, depth: u8) -> Result<()> {
        let mut doc = Heredoc::default();
        for child in children(node) {
            match child.kind() {
                "<<" => {}
                "<<-" => doc.strip_tabs = true,
                "heredoc_start" => {
                    let t = self.text(child, src);
                    doc.quoted_delimiter = t.contains(['\'', '"', '\\']);
                    doc.delimiter = t
                        .chars()
                        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                        .collect();
                }
                "heredoc_body" => {
                    let expanding = children(child)
                        .iter()
                        .any(|c| c.is_named() && c.kind() != "heredoc_content");
                    doc.check_body(self.text(child, src), expanding)
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

    fn check_body(&self, body: &str, expanding: bool) -> std::result::Result<(), String> {
        if !self.quoted_delimiter && (expanding || body.contains(['$', '`', '\\'])) {
            return Err("a heredoc with an unquoted delimiter must not contain `$`, backticks or backslashes (quote the delimiter: <<'EOF')".into());
        }
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
