//! What one word's exact value is, or why it cannot be known: plain text, single and double
//! quotes without expansions, backslash escapes; globs, braces and `~` are marked as expanding.

use tree_sitter::Node;

use super::syntax::describe_kind;
use super::{children, deny, short, Checker};
use crate::error::Result;

/// An argument's exact value, and whether bash would expand it further (globs, braces, `~`).
#[derive(Debug, Clone)]
pub(super) struct Word {
    pub(super) value: String,
    pub(super) expands: bool,
    /// Quoted or escaped somewhere (not allowed in a command name).
    pub(super) quoted: bool,
}

impl Checker<'_> {
    /// The exact value of an argument node, or a refusal naming what would be expanded.
    pub(super) fn word(&self, node: Node<'_>, src: &[u8], part: &str) -> Result<Word> {
        let text = self.text(node, src);
        match node.kind() {
            "word" | "number" => unquoted(text, true)
                .map_err(|why| deny(format!("`{part}`: `{}` {why}", short(text)))),
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .ok_or_else(|| deny(format!("`{part}`: malformed quoted string")))?;
                Ok(Word {
                    value: inner.to_string(),
                    expands: false,
                    quoted: true,
                })
            }
            "string" => {
                if let Some(bad) = children(node)
                    .into_iter()
                    .find(|c| c.is_named() && c.kind() != "string_content")
                {
                    return Err(deny(format!(
                        "`{part}`: {} (`{}`) is not allowed",
                        describe_kind(bad.kind()),
                        short(self.text(bad, src))
                    )));
                }
                let inner = text
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .ok_or_else(|| deny(format!("`{part}`: malformed quoted string")))?;
                let value = double_quoted(inner)
                    .map_err(|why| deny(format!("`{part}`: `{}` {why}", short(text))))?;
                Ok(Word {
                    value,
                    expands: false,
                    quoted: true,
                })
            }
            "concatenation" => {
                let mut out = Word {
                    value: String::new(),
                    expands: false,
                    quoted: false,
                };
                let mut covered = 0usize;
                for child in children(node) {
                    if !child.is_named() {
                        return Err(deny(format!(
                            "`{part}`: `{}` is not allowed in a word",
                            child.kind()
                        )));
                    }
                    let w = self.word(child, src, part)?;
                    out.value.push_str(&w.value);
                    out.expands |= w.expands;
                    out.quoted |= w.quoted;
                    covered += child.byte_range().len();
                }
                if covered != node.byte_range().len() {
                    return Err(deny(format!(
                        "`{part}`: `{}` could not be read as one word",
                        short(text)
                    )));
                }
                Ok(out)
            }
            kind => Err(deny(format!(
                "`{part}`: {} (`{}`) is not allowed",
                describe_kind(kind),
                short(text)
            ))),
        }
    }
}

pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '[' | ':' | '@')
        })
        && (name == "[" || !name.contains('['))
}

/// An unquoted word: backslash escapes removed; `$`, backticks, quotes and shell operators
/// refused (the grammar should never leave them in a word; if it does, we do not guess).
fn unquoted(text: &str, first_word: bool) -> std::result::Result<Word, String> {
    let mut value = String::new();
    let mut expands = false;
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut at_start = first_word;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                quoted = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(n) => value.push(n),
                    None => return Err("ends with a lone backslash".into()),
                }
            }
            '$' => return Err("contains an expansion ($)".into()),
            '`' => return Err("contains a backtick command substitution".into()),
            '\'' | '"' => return Err("has quotes the policy cannot read".into()),
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                return Err(format!("contains the shell operator `{c}`"))
            }
            '*' | '?' | '[' | ']' | '{' | '}' => {
                expands = true;
                value.push(c);
            }
            // bash expands `~` at the start and after `=` or `:` (`--dir=~/x`, `a:~/b`).
            '~' if at_start || value.ends_with(['=', ':']) => {
                expands = true;
                value.push(c);
            }
            _ => value.push(c),
        }
        at_start = false;
    }
    Ok(Word {
        value,
        expands,
        quoted,
    })
}

/// The inside of a double-quoted string without expansions: `\"`, `\\`, `\$`, `` \` `` and
/// `\<newline>` are escapes, other backslashes are literal.
fn double_quoted(inner: &str) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n @ ('"' | '\\' | '$' | '`')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '$' => return Err("contains an expansion ($)".into()),
            '`' => return Err("contains a backtick command substitution".into()),
            _ => out.push(c),
        }
    }
    Ok(out)
}
