//! What one word's value is, read from its source text as bash reads it: exact where it can be
//! known (plain text, quotes, escapes, `$'…'`, a `$` bash leaves literal), known only at run
//! time where it holds a parameter, command or arithmetic expansion; globs, braces and `~` are
//! marked as expanding.
//!
//! The grammar finds the commands inside a word (`$(…)`, backticks, `<(…)`) and these are
//! checked where they stand; this reader is the authority on where bash starts an expansion,
//! and every expansion it finds must be one the grammar parsed at the same place, else the two
//! read the word differently and it is refused (fail closed).

use tree_sitter::Node;

use super::{children, deny, short, Checker};
use crate::error::Result;

/// What a rule sees for an argument known only at run time: NUL, which no real argument
/// holds (run_command refuses a command with one), so no option or path ever matches it.
pub(super) const UNKNOWN: &str = "\u{0}";

/// An argument's value, and what bash does to it beyond what the policy can know.
#[derive(Debug, Clone, Default)]
pub(super) struct Word {
    /// The exact value; for a word known only at run time, its source text (for messages).
    pub(super) value: String,
    /// Holds a parameter, command, process or arithmetic expansion: known only at run time.
    pub(super) dynamic: bool,
    /// Glob, brace or tilde expansion applies to the known text.
    pub(super) expands: bool,
    /// Quoted or escaped somewhere.
    pub(super) quoted: bool,
    /// The value with each expansion left as written (`cd $DIR && make` for `"cd $DIR &&
    /// make"`): what a shell given this word as a script parses, expansions and all.
    pub(super) template: String,
}

impl Word {
    pub(super) fn literal(value: &str) -> Word {
        Word {
            value: value.to_string(),
            template: value.to_string(),
            ..Word::default()
        }
    }

    fn push(&mut self, c: char) {
        self.value.push(c);
        self.template.push(c);
    }

    fn push_str(&mut self, s: &str) {
        self.value.push_str(s);
        self.template.push_str(s);
    }

    /// The exact value bash passes, when the policy knows it.
    pub(super) fn known(&self) -> Option<&str> {
        (!self.dynamic && !self.expands).then_some(self.value.as_str())
    }

    /// The text of a script given as this word: its value, with each expansion as written
    /// (parsed again as the shell will, it is judged again there).
    pub(super) fn script(&self) -> &str {
        &self.template
    }

    /// The value as the argument rules see it ([`UNKNOWN`] when known only at run time).
    pub(super) fn rule_value(&self) -> String {
        if self.dynamic {
            UNKNOWN.to_string()
        } else {
            self.value.clone()
        }
    }
}

/// Where the reader is: which characters are special depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// An ordinary word.
    Word,
    /// The right side of `[[ … =~ … ]]`, a `case` pattern: `(`, `)` and `|` are part of it.
    Regex,
    /// The body of a heredoc with an unquoted delimiter: quotes are plain characters.
    Heredoc,
}

/// The kinds of node that start an expansion the reader can find.
const EXPANSION_KINDS: &[&str] = &[
    "command_substitution",
    "process_substitution",
    "simple_expansion",
    "expansion",
    "arithmetic_expansion",
];

impl Checker<'_> {
    /// The value of an argument node (checking the commands inside it).
    pub(super) fn word(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        depth: u8,
    ) -> Result<Word> {
        self.word_of(&[node], src, part, depth)
    }

    /// The value of one bash word that the grammar may have split into adjacent nodes
    /// (`$"x"y` is `$` and `"x"y` for it).
    pub(super) fn word_of(
        &mut self,
        nodes: &[Node<'_>],
        src: &[u8],
        part: &str,
        depth: u8,
    ) -> Result<Word> {
        let context = match nodes {
            [n] if matches!(n.kind(), "regex" | "extglob_pattern") => Context::Regex,
            _ => Context::Word,
        };
        self.read(nodes, src, part, depth, context)
    }

    /// The text of a heredoc body with an unquoted delimiter, its expansions checked.
    pub(super) fn heredoc_text(
        &mut self,
        body: Node<'_>,
        src: &[u8],
        part: &str,
        depth: u8,
    ) -> Result<Word> {
        self.read(&[body], src, part, depth, Context::Heredoc)
    }

    // Long: one pass over a word's characters, as bash reads them, whose state (inside double
    // quotes, after an unquoted brace, the word so far) every character's arm reads and
    // changes; split, that state would be handed through every part.
    fn read(
        &mut self,
        nodes: &[Node<'_>],
        src: &[u8],
        part: &str,
        depth: u8,
        context: Context,
    ) -> Result<Word> {
        let (Some(first), Some(last)) = (nodes.first(), nodes.last()) else {
            return Ok(Word::default());
        };
        let (start, end) = (first.start_byte(), last.end_byte());
        let text = std::str::from_utf8(src.get(start..end).unwrap_or_default()).unwrap_or("");
        let refuse = |why: String| deny(format!("`{part}`: `{}` {why}", short(text)));
        let mut w = Word::default();
        let mut i = 0;
        let mut in_double = false;
        // An unquoted brace: brace expansion applies when a comma or `..` goes with it.
        let mut brace = false;
        while let Some(c) = text[i..].chars().next() {
            let next = text[i + c.len_utf8()..].chars().next();
            match c {
                '\\' if context == Context::Word && !in_double => {
                    w.quoted = true;
                    match next {
                        Some('\n') => i += 2,
                        Some(n) => {
                            w.push(n);
                            i += 1 + n.len_utf8();
                        }
                        None => return Err(refuse("ends with a lone backslash".into())),
                    }
                    continue;
                }
                '\\' if in_double || context == Context::Heredoc => {
                    match next {
                        Some('\n') => {}
                        Some(n @ ('$' | '\\' | '`')) => w.push(n),
                        Some('"') if in_double => w.push('"'),
                        Some(n) => {
                            w.push('\\');
                            w.push(n);
                        }
                        None => {
                            w.push('\\');
                            i += 1;
                            continue;
                        }
                    }
                    i += 1 + next.map_or(0, char::len_utf8);
                    continue;
                }
                '\\' => {
                    // In a regex a backslash quotes the next character for the pattern.
                    w.push('\\');
                    if let Some(n) = next {
                        w.push(n);
                        i += n.len_utf8();
                    }
                    i += 1;
                    continue;
                }
                '"' if context != Context::Heredoc => {
                    w.quoted = true;
                    in_double = !in_double;
                    i += 1;
                    continue;
                }
                '\'' if !in_double && context != Context::Heredoc => {
                    let Some(close) = text[i + 1..].find('\'') else {
                        return Err(refuse("has an unterminated quote".into()));
                    };
                    w.quoted = true;
                    w.push_str(&text[i + 1..i + 1 + close]);
                    i += close + 2;
                    continue;
                }
                '$' if !in_double
                    && context == Context::Word
                    && next == Some('\'')
                    && self.strict =>
                {
                    return Err(refuse(
                        "uses ANSI-C quoting ($'…'), which is not allowed when strict".into(),
                    ));
                }
                '$' if !in_double
                    && context == Context::Word
                    && next == Some('"')
                    && self.strict =>
                {
                    return Err(refuse(
                        "is a translated string ($\"…\"), which is not allowed when strict".into(),
                    ));
                }
                '$' if !in_double && context == Context::Word && next == Some('\'') => {
                    let (value, len) = ansi_c(&text[i + 2..])
                        .ok_or_else(|| refuse("has an unterminated $'…'".into()))?;
                    w.quoted = true;
                    w.push_str(&value);
                    i += 2 + len;
                    continue;
                }
                '$' if !in_double && context == Context::Word && next == Some('"') => {
                    // A translated string: what it becomes depends on message catalogs.
                    w.dynamic = true;
                    w.quoted = true;
                    in_double = true;
                    i += 2;
                    continue;
                }
                '$' | '`' if c == '`' || next.is_some_and(starts_expansion) => {
                    let end = self.expansion(nodes, src, start + i, part, depth, &refuse)? - start;
                    w.template.push_str(text.get(i..end).unwrap_or_default());
                    w.dynamic = true;
                    i = end;
                    continue;
                }
                '<' | '>' if !in_double && next == Some('(') && context == Context::Word => {
                    let end = self.expansion(nodes, src, start + i, part, depth, &refuse)? - start;
                    w.template.push_str(text.get(i..end).unwrap_or_default());
                    w.dynamic = true;
                    i = end;
                    continue;
                }
                _ if in_double || context == Context::Heredoc => {}
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
                    if context == Context::Word =>
                {
                    return Err(refuse(format!("contains the shell operator `{c}`")));
                }
                '*' | '?' => w.expands = true,
                '[' if text[i..].contains(']') => w.expands = true,
                '{' | '}' => brace = true,
                '~' if i == 0 || w.value.ends_with(['=', ':']) => w.expands = true,
                _ => {}
            }
            w.push(c);
            i += c.len_utf8();
        }
        if in_double {
            return Err(refuse("has an unterminated quote".into()));
        }
        if brace && w.value.contains('{') && (w.value.contains(',') || w.value.contains("..")) {
            w.expands = true;
        }
        if w.dynamic {
            w.value = text.to_string();
        }
        Ok(w)
    }

    /// The expansion bash starts at byte `offset`: the grammar's node there is checked (its
    /// commands judged); returns where it ends. Refused when the grammar has none there.
    fn expansion(
        &mut self,
        nodes: &[Node<'_>],
        src: &[u8],
        offset: usize,
        part: &str,
        depth: u8,
        refuse: &dyn Fn(String) -> crate::error::Error,
    ) -> Result<usize> {
        let found = nodes.iter().find_map(|n| expansion_at(*n, src, offset));
        let Some(node) = found else {
            return Err(refuse(
                "could not be read the way bash reads it (an expansion the parser did not see)"
                    .into(),
            ));
        };
        self.inside_expansion(node, src, part, depth)?;
        Ok(node.end_byte())
    }

    /// Judge every command inside an expansion (a substitution's commands, those inside
    /// `${x:-$(…)}` or `$(( $(…) ))`).
    pub(super) fn inside_expansion(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        self.dynamic_use(node, src, part)?;
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                for child in children(node) {
                    match child.kind() {
                        "file_redirect" => self.redirect(child, src, depth)?,
                        _ if child.is_named() => self.statement(child, src, depth)?,
                        _ => {}
                    }
                }
                Ok(())
            }
            _ => self.nested(node, src, part, depth),
        }
    }

    /// Walk a node that is not a statement (an expansion's parts, an arithmetic expression)
    /// for the substitutions inside it.
    pub(super) fn nested(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        for child in children(node) {
            if EXPANSION_KINDS.contains(&child.kind()) {
                self.inside_expansion(child, src, part, depth)?;
            } else if matches!(child.kind(), "compound_statement" | "subshell") {
                self.statement(child, src, depth)?;
            } else {
                self.nested(child, src, part, depth)?;
            }
        }
        Ok(())
    }
}

/// The outermost expansion node beginning at `offset` within `node` (the grammar counts the
/// blanks before a substitution inside double quotes as part of it).
fn expansion_at<'t>(node: Node<'t>, src: &[u8], offset: usize) -> Option<Node<'t>> {
    if node.start_byte() > offset || node.end_byte() <= offset {
        return None;
    }
    let blank_before = src
        .get(node.start_byte()..offset)
        .is_some_and(|gap| gap.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n')));
    if blank_before && EXPANSION_KINDS.contains(&node.kind()) {
        return Some(node);
    }
    children(node)
        .into_iter()
        .find_map(|c| expansion_at(c, src, offset))
}

/// Whether a node holds an expansion the grammar parsed.
pub(super) fn has_expansion(node: Node<'_>) -> bool {
    EXPANSION_KINDS.contains(&node.kind()) || children(node).into_iter().any(has_expansion)
}

/// Whether bash reads `$` followed by `c` as the start of an expansion (otherwise the `$` is
/// literal: `grep ':$'`, `"a$"`, `$ x`).
pub(super) fn starts_expansion(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '_' | '{' | '(' | '[' | '@' | '*' | '#' | '?' | '-' | '$' | '!'
        )
}

/// The value of a `$'…'` string (its text after `$'`), and the bytes it took up to and
/// including the closing quote. Escapes bash does not know stay as written.
fn ansi_c(text: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => return Some((out, i + 1)),
            '\\' => {
                let (_, e) = chars.next()?;
                let simple = match e {
                    'a' => Some('\u{7}'),
                    'b' => Some('\u{8}'),
                    'e' | 'E' => Some('\u{1b}'),
                    'f' => Some('\u{c}'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    'v' => Some('\u{b}'),
                    '\\' | '\'' | '"' | '?' => Some(e),
                    _ => None,
                };
                if let Some(s) = simple {
                    out.push(s);
                    continue;
                }
                let (radix, max) = match e {
                    'x' => (16, 2),
                    'u' => (16, 4),
                    'U' => (16, 8),
                    '0'..='7' => (8, 2),
                    'c' => {
                        let (_, k) = chars.next()?;
                        out.push(char::from(k.to_ascii_uppercase() as u8 ^ 0x40));
                        continue;
                    }
                    other => {
                        out.push('\\');
                        out.push(other);
                        continue;
                    }
                };
                let mut digits = String::new();
                if radix == 8 {
                    digits.push(e);
                }
                while digits.len() < max + usize::from(radix == 8) {
                    match chars.peek() {
                        Some((_, d)) if d.is_digit(radix) => {
                            digits.push(*d);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                match u32::from_str_radix(&digits, radix)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(ch) if !digits.is_empty() => out.push(ch),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            _ => out.push(c),
        }
    }
    None
}

pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '[' | ':' | '@')
        })
        && (name == "[" || !name.contains('['))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings() {
        assert_eq!(ansi_c("rm'").map(|v| v.0), Some("rm".into()));
        assert_eq!(ansi_c("\\x72\\155'").map(|v| v.0), Some("rm".into()));
        assert_eq!(ansi_c("a\\'b' x").map(|v| v.0), Some("a'b".into()));
        assert_eq!(ansi_c("\\u0072m'").map(|v| v.0), Some("rm".into()));
        assert_eq!(ansi_c("\\q'").map(|v| v.0), Some("\\q".into()));
        assert_eq!(ansi_c("open"), None);
    }
}
