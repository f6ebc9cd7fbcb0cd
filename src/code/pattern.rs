//! The tags queries (`queries/*.scm`) read and matched here rather than by tree-sitter's
//! `Query`, whose construction analyses every pattern against all of the grammar's parse
//! states: 49 ms for C++'s query and 13 ms for C's in a release build, a fixed cost of every
//! outline or find_symbol process that parses a file of the language, larger than the parse
//! of a whole tree of headers. The queries use a small part of the query language, which is
//! all this reads (anything else is an error the tests catch):
//!
//! - a node by kind, `(function_item …)`, or any named node, `(_)`;
//! - its children in order, each by kind and optionally by field, `name: (identifier)`
//!   (children of other kinds may come between them);
//! - alternatives, `[(identifier) (string)]`;
//! - captures, `@name`, after a node or an alternation;
//! - `(#eq? @capture "text")` and `(#any-of? @capture "text" …)`.
//!
//! A pattern matches at a node the same way tree-sitter's does: every assignment of the
//! pattern's children to the node's children in order is a match, so one declaration of
//! two names (`int a, b;`) gives two. The unit tests hold the matches to those of
//! tree-sitter's `Query` on samples of every language.

use std::num::NonZeroU16;

use tree_sitter::{Language, Node, TreeCursor};

/// A language's patterns, read once per process.
pub struct Patterns {
    patterns: Vec<Pattern>,
    /// By kind id: the patterns whose outermost node is of that kind.
    starts: Vec<Vec<usize>>,
    /// The patterns whose outermost node is any named node (`(_)`).
    anywhere: Vec<usize>,
    captures: Vec<String>,
}

/// One match: the pattern's index in the query and its captures, in pattern order.
pub struct Match<'t> {
    pub pattern: usize,
    pub captures: Vec<(u32, Node<'t>)>,
}

struct Pattern {
    alts: Vec<Alt>,
    predicates: Vec<Predicate>,
}

/// One way a node may look: its kind, its children's patterns in order, and the captures
/// that name it.
struct Alt {
    kind: Kind,
    children: Vec<Child>,
    captures: Vec<u32>,
}

enum Kind {
    Named(u16),
    AnyNamed,
}

/// A child's pattern: its field (when one is named) and the ways it may look.
struct Child {
    field: Option<NonZeroU16>,
    alts: Vec<Alt>,
}

/// A capture's text is one of these.
struct Predicate {
    capture: u32,
    texts: Vec<String>,
}

impl Patterns {
    /// Read the query `text` against `grammar`'s kinds and fields.
    pub fn new(grammar: &Language, text: &str) -> Result<Patterns, String> {
        let mut reader = Reader {
            grammar,
            text: text.as_bytes(),
            at: 0,
            captures: Vec::new(),
            predicates: Vec::new(),
        };
        let mut patterns = Vec::new();
        while reader.skip_space() {
            let alts = reader.item()?;
            let predicates = std::mem::take(&mut reader.predicates);
            patterns.push(Pattern { alts, predicates });
        }
        let mut starts = vec![Vec::new(); grammar.node_kind_count()];
        let mut anywhere = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            for alt in &pattern.alts {
                match alt.kind {
                    Kind::Named(id) => {
                        if let Some(list) = starts.get_mut(usize::from(id)) {
                            list.push(index);
                        }
                    }
                    Kind::AnyNamed => anywhere.push(index),
                }
            }
        }
        for list in starts.iter_mut().chain([&mut anywhere]) {
            list.dedup();
        }
        Ok(Patterns {
            patterns,
            starts,
            anywhere,
            captures: reader.captures,
        })
    }

    /// The kinds a pattern's outermost node can be, by kind id; None when a pattern starts
    /// at any named node (`(_)`). What src/code/holds.rs is generated from (a test of
    /// `parse`).
    #[cfg(test)]
    pub fn outermost(&self) -> Option<Vec<u16>> {
        if !self.anywhere.is_empty() {
            return None;
        }
        let ids = self
            .starts
            .iter()
            .enumerate()
            .filter(|(_, list)| !list.is_empty());
        Some(ids.filter_map(|(id, _)| u16::try_from(id).ok()).collect())
    }

    /// The names of the captures, by capture index.
    pub fn capture_names(&self) -> &[String] {
        &self.captures
    }

    pub fn capture_index(&self, name: &str) -> Option<u32> {
        let index = self.captures.iter().position(|c| c == name)?;
        u32::try_from(index).ok()
    }

    /// The matches of the patterns whose outermost node is `node`; `parsed` is the text the
    /// tree was parsed from (for the predicates). `scratch` is the search's memory, kept
    /// between calls so that a walk over a tree allocates only for the matches it finds.
    pub fn matches_at<'t>(
        &self,
        node: Node<'t>,
        parsed: &[u8],
        scratch: &mut Scratch<'t>,
        out: &mut Vec<Match<'t>>,
    ) {
        let started = self
            .starts
            .get(usize::from(node.kind_id()))
            .map_or(&[][..], Vec::as_slice);
        for &index in started.iter().chain(&self.anywhere) {
            let pattern = &self.patterns[index];
            each_way(&pattern.alts, node, scratch, &mut |s: &mut Scratch<'t>| {
                if pattern
                    .predicates
                    .iter()
                    .all(|p| p.holds(&s.captures, parsed))
                {
                    out.push(Match {
                        pattern: index,
                        captures: s.captures.clone(),
                    });
                }
            });
        }
    }
}

/// What a search for matches works with: the captures of the match being tried (a stack:
/// each step pushes its own and takes them off when it backs out), the children of the
/// nodes being matched (one list after another, as deep as the pattern goes) and a cursor
/// to list them with.
#[derive(Default)]
pub struct Scratch<'t> {
    captures: Vec<(u32, Node<'t>)>,
    children: Vec<(Option<NonZeroU16>, Node<'t>)>,
    cursor: Option<TreeCursor<'t>>,
}

impl Predicate {
    fn holds(&self, captures: &[(u32, Node<'_>)], parsed: &[u8]) -> bool {
        captures
            .iter()
            .filter(|(c, _)| *c == self.capture)
            .all(|(_, node)| {
                let text = parsed.get(node.start_byte()..node.end_byte());
                self.texts.iter().any(|t| Some(t.as_bytes()) == text)
            })
    }
}

impl Kind {
    fn admits(&self, node: Node<'_>) -> bool {
        node.is_named()
            && match *self {
                Kind::Named(id) => node.kind_id() == id,
                Kind::AnyNamed => true,
            }
    }
}

/// A step that goes on from a match found so far (its captures on the scratch's stack).
type Then<'a, 't> = dyn FnMut(&mut Scratch<'t>) + 'a;

/// Each way one of `alts` matches `node`, in order: `then` is called with the way's captures
/// pushed on the stack. The ways come in the order of the alternatives, then of the first
/// child pattern's choice of child, then of the next's, as tree-sitter's query gives them.
fn each_way<'t>(alts: &[Alt], node: Node<'t>, s: &mut Scratch<'t>, then: &mut Then<'_, 't>) {
    // The node's children with their fields, listed once for the alternatives that look at
    // them, at the end of the scratch's list (and taken off at the end).
    let mut listed: Option<(usize, usize)> = None;
    for alt in alts.iter().filter(|a| a.kind.admits(node)) {
        let mark = s.captures.len();
        s.captures.extend(alt.captures.iter().map(|&c| (c, node)));
        if alt.children.is_empty() {
            then(s);
        } else {
            let (from, to) = *listed.get_or_insert_with(|| list_children(node, s));
            in_order(&alt.children, (from, to), s, then);
        }
        s.captures.truncate(mark);
    }
    if let Some((from, _)) = listed {
        s.children.truncate(from);
    }
}

/// Each way `patterns` match children of the scratch's list in `from..to`, in order (other
/// children may come between them).
fn in_order<'t>(
    patterns: &[Child],
    (from, to): (usize, usize),
    s: &mut Scratch<'t>,
    then: &mut Then<'_, 't>,
) {
    let Some((first, rest)) = patterns.split_first() else {
        then(s);
        return;
    };
    for i in from..to {
        let (field, child) = s.children[i];
        if first.field.is_some() && first.field != field {
            continue;
        }
        each_way(&first.alts, child, s, &mut |s: &mut Scratch<'t>| {
            in_order(rest, (i + 1, to), s, then)
        });
    }
}

/// Put `node`'s children, each with the field it stands in, at the end of the scratch's
/// list; where they are in it.
fn list_children<'t>(node: Node<'t>, s: &mut Scratch<'t>) -> (usize, usize) {
    let from = s.children.len();
    let cursor = match &mut s.cursor {
        Some(cursor) => {
            cursor.reset(node);
            cursor
        }
        None => s.cursor.insert(node.walk()),
    };
    if cursor.goto_first_child() {
        loop {
            s.children.push((cursor.field_id(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    (from, s.children.len())
}

/// Reads a query's text: one pattern after another.
struct Reader<'a> {
    grammar: &'a Language,
    text: &'a [u8],
    at: usize,
    captures: Vec<String>,
    /// The predicates of the pattern being read.
    predicates: Vec<Predicate>,
}

impl Reader<'_> {
    /// Past white space and `;` comments; whether anything is left.
    fn skip_space(&mut self) -> bool {
        loop {
            match self.text.get(self.at) {
                Some(b) if b.is_ascii_whitespace() => self.at += 1,
                Some(b';') => {
                    while self.text.get(self.at).is_some_and(|&b| b != b'\n') {
                        self.at += 1;
                    }
                }
                Some(_) => return true,
                None => return false,
            }
        }
    }

    fn error(&self, what: &str) -> String {
        let line = self.text[..self.at.min(self.text.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        format!("line {line}: {what}")
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("`{}` expected", char::from(byte))))
        }
    }

    /// A name: letters, digits, `_`, `.`, `-`, `?`, `!` (capture names hold dots,
    /// predicates end in `?`).
    fn word(&mut self) -> &str {
        let start = self.at;
        while self.text.get(self.at).is_some_and(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'?' | b'!')
        }) {
            self.at += 1;
        }
        std::str::from_utf8(&self.text[start..self.at]).unwrap_or("")
    }

    /// A node or an alternation, and the captures after it: the ways it may look.
    fn item(&mut self) -> Result<Vec<Alt>, String> {
        let mut alts = match self.peek() {
            Some(b'(') => vec![self.node()?],
            Some(b'[') => {
                self.at += 1;
                let mut alts = Vec::new();
                while self.peek() != Some(b']') {
                    if self.peek().is_none() {
                        return Err(self.error("`]` expected"));
                    }
                    alts.extend(self.item()?);
                }
                self.at += 1;
                alts
            }
            _ => return Err(self.error("`(` or `[` expected")),
        };
        while self.peek() == Some(b'@') {
            self.at += 1;
            let capture = self.capture()?;
            for alt in &mut alts {
                alt.captures.push(capture);
            }
        }
        match self.peek() {
            Some(b'?' | b'*' | b'+') => Err(self.error("quantifiers are not read")),
            _ => Ok(alts),
        }
    }

    fn capture(&mut self) -> Result<u32, String> {
        let name = self.word().to_string();
        if name.is_empty() {
            return Err(self.error("a capture's name expected"));
        }
        let index = match self.captures.iter().position(|c| *c == name) {
            Some(index) => index,
            None => {
                self.captures.push(name);
                self.captures.len() - 1
            }
        };
        u32::try_from(index).map_err(|_| self.error("too many captures"))
    }

    /// `(kind child…)`, its children, and the predicates among them.
    fn node(&mut self) -> Result<Alt, String> {
        self.expect(b'(')?;
        self.skip_space();
        let name = self.word().to_string();
        let kind = match name.as_str() {
            "_" => Kind::AnyNamed,
            "" => return Err(self.error("a node's kind expected")),
            _ => {
                let id = self.grammar.id_for_node_kind(&name, true);
                if id == 0 {
                    return Err(self.error(&format!("no kind of node `{name}`")));
                }
                if self.grammar.node_kind_is_supertype(id) {
                    return Err(self.error(&format!("`{name}` is a supertype, not read")));
                }
                Kind::Named(id)
            }
        };
        let mut children = Vec::new();
        loop {
            match self.peek() {
                Some(b')') => {
                    self.at += 1;
                    return Ok(Alt {
                        kind,
                        children,
                        captures: Vec::new(),
                    });
                }
                Some(b'(') if self.text.get(self.at + 1) == Some(&b'#') => self.predicate()?,
                Some(b'(' | b'[') => children.push(Child {
                    field: None,
                    alts: self.item()?,
                }),
                Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                    let field = self.word().to_string();
                    self.expect(b':')?;
                    let Some(id) = self.grammar.field_id_for_name(&field) else {
                        return Err(self.error(&format!("no field `{field}`")));
                    };
                    children.push(Child {
                        field: Some(id),
                        alts: self.item()?,
                    });
                }
                None => return Err(self.error("`)` expected")),
                Some(_) => return Err(self.error("a child, a field or `)` expected")),
            }
        }
    }

    /// `(#eq? @capture "text")` or `(#any-of? @capture "text" …)`.
    fn predicate(&mut self) -> Result<(), String> {
        self.at += 2;
        let name = self.word().to_string();
        if !matches!(name.as_str(), "eq?" | "any-of?") {
            return Err(self.error(&format!("the predicate #{name} is not read")));
        }
        self.expect(b'@')?;
        let capture = self.capture()?;
        let mut texts = Vec::new();
        while self.peek() == Some(b'"') {
            self.at += 1;
            let start = self.at;
            while self
                .text
                .get(self.at)
                .is_some_and(|&b| b != b'"' && b != b'\\')
            {
                self.at += 1;
            }
            if self.text.get(self.at) != Some(&b'"') {
                return Err(self.error("a plain \"text\" expected"));
            }
            texts.push(String::from_utf8_lossy(&self.text[start..self.at]).into_owned());
            self.at += 1;
        }
        self.expect(b')')?;
        if texts.is_empty() || (name == "eq?" && texts.len() > 1) {
            return Err(self.error(&format!("#{name} wants a capture and text")));
        }
        self.predicates.push(Predicate { capture, texts });
        Ok(())
    }
}
