//! What a parse of one file yields, as the navigation tools use it: its definitions (with the
//! tree of which encloses which), the byte ranges that are not code (comments, strings: a word
//! there is no reference), the identifiers its code uses (repo_map's graph) and its syntax
//! errors. Plain data with a compact encoding (`encode`/`decode`), which is what the parse
//! cache stores and what `sneaky-outline --parse` answers with; it holds no tree, so a program
//! reads it without any grammar.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Lang;

/// What a definition is. Each language's queries map their nodes onto these.
/// Inlined as a plain `enum` of names (its variants' notes are `//`, not `///`): strict
/// function-calling formats and Gemini's schema take neither `$ref` nor `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum SymbolKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Interface,
    Trait,
    Module,
    Type,
    Constant,
    Variable,
    Field,
    Macro,
    // A block of methods for a type (Rust's `impl`): a container, named by its type.
    Impl,
    Union,
    // A member of an enum.
    Variant,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 16] = [
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Module,
        SymbolKind::Type,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::Field,
        SymbolKind::Macro,
        SymbolKind::Impl,
        SymbolKind::Union,
        SymbolKind::Variant,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Module => "module",
            SymbolKind::Type => "type",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::Field => "field",
            SymbolKind::Macro => "macro",
            SymbolKind::Impl => "impl",
            SymbolKind::Union => "union",
            SymbolKind::Variant => "variant",
        }
    }

    pub fn from_name(name: &str) -> Option<SymbolKind> {
        SymbolKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// A kind whose members are methods and fields (a function directly inside is a method).
    pub fn holds_members(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Interface
                | SymbolKind::Trait
                | SymbolKind::Impl
                | SymbolKind::Union
        )
    }

    /// A function or method: what is inside it is local.
    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Method)
    }
}

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    pub name: String,
    pub kind: SymbolKind,
    /// 1-based line of its name (where ctags and an editor's "go to definition" put it).
    pub line: u32,
    /// 1-based byte column of its name.
    pub column: u32,
    /// Byte offset of its name (a reference found there is the definition itself).
    pub name_byte: u32,
    /// 1-based first and last line of the whole definition (its body included).
    pub start_line: u32,
    pub end_line: u32,
    /// Its head, whitespace collapsed: `pub fn walk(ws: &Workspace) -> Result<()>`.
    pub signature: String,
    /// Index in `FileTags::defs` of the definition that encloses it.
    pub parent: Option<u32>,
    /// The type it belongs to when that is named rather than enclosing it: a Go method's
    /// receiver, C++'s `Class::method` defined outside its class.
    pub owner: Option<String>,
}

/// A parse error: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub column: u32,
    /// What is wrong: `unexpected "}"`, `missing ";"`.
    pub text: String,
}

/// How much of a file's parse a [`FileTags`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Everything: definitions, what is not code, identifiers, syntax errors
    /// (find_references, repo_map, the edit tools' syntax errors).
    All,
    /// Every definition and nothing else: what outline and find_symbol use, made without the
    /// walk over every node of the tree (`parse::tags_for`).
    Defs,
    /// Only the definitions at some places of the file (find_symbol's parse of a file the
    /// cache does not hold); never cached.
    Focused,
}

impl Part {
    /// Whether tags holding this part serve a call that needs `need`.
    pub fn serves(self, need: Part) -> bool {
        match need {
            Part::All => self == Part::All,
            Part::Defs => matches!(self, Part::All | Part::Defs),
            Part::Focused => true,
        }
    }

    fn id(self) -> u32 {
        match self {
            Part::All => 0,
            Part::Defs => 1,
            Part::Focused => 2,
        }
    }

    fn from_id(id: u32) -> Option<Part> {
        [Part::All, Part::Defs, Part::Focused]
            .into_iter()
            .find(|p| p.id() == id)
    }
}

/// Why a parse of `Want::Skimmed` gave no tags when the bytes handed over stop at the start
/// of the last hole: the parse without the holes had an error, and the parse with every body
/// that stands in needs the rest of the file. The caller hands the file over whole.
pub const CUT_SHORT: &str = "cut short: the whole file is needed";

/// What a parse of a file is for (`super::parse::tags_for`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want<'a> {
    /// Everything ([`Part::All`](super::Part::All)).
    All,
    /// Every definition and nothing else ([`Part::Defs`](super::Part::Defs)).
    Defs,
    /// The definitions that overlap these byte ranges
    /// ([`Part::Focused`](super::Part::Focused)).
    At(&'a [(u32, u32)]),
    /// The same, of a parse without the holes given (`skim::focused`'s, whose places
    /// come first).
    Skimmed(&'a [(u32, u32)], &'a [(u32, u32)]),
}

impl Want<'_> {
    /// Its number on the parse helper's wire (src/code/elsewhere.rs).
    pub fn id(self) -> u8 {
        match self {
            Want::All => 0,
            Want::Defs => 1,
            Want::At(_) => 2,
            Want::Skimmed(..) => 3,
        }
    }
}

/// Sorted ranges with the overlapping and touching ones joined: [`FileTags::skips`], and
/// the holes of Python's skim (its function bodies and the comments and docstrings around
/// them).
pub fn merged<T: Ord + Copy>(mut ranges: Vec<(T, T)>) -> Vec<(T, T)> {
    ranges.sort_unstable();
    let mut out: Vec<(T, T)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// What the tools take from one file's parse: everything, or only its definitions (`part`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTags {
    pub lang: Lang,
    /// What of the parse this holds: with `Part::Defs` or `Part::Focused`, `skips`, `idents`
    /// and `errors` are empty because they were not looked for, not because there are none.
    pub part: Part,
    /// In source order (by start); parents come before their children.
    pub defs: Vec<Def>,
    /// Byte ranges (start, end) that are not code: comments, and strings without their
    /// interpolations. Sorted and apart.
    pub skips: Vec<(u32, u32)>,
    /// The identifiers the code uses, definitions' own names left out, with how often:
    /// sorted by name.
    pub idents: Vec<(String, u32)>,
    /// The first syntax errors, in source order (at most `MAX_ERRORS`).
    pub errors: Vec<SyntaxError>,
}

/// Syntax errors kept per file: opencode and Crush show the model 10 to 20 per file.
pub const MAX_ERRORS: usize = 20;

impl FileTags {
    /// Tags of `part` that hold nothing: a file where no definition is named at the places
    /// asked for (`skim::Focused::names_nothing`), or the rest of tags that hold only
    /// definitions.
    pub fn empty(lang: Lang, part: Part) -> FileTags {
        FileTags {
            lang,
            part,
            defs: Vec::new(),
            skips: Vec::new(),
            idents: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The enclosing definitions of `defs[i]`, innermost first.
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = &Def> + '_ {
        let mut next = self.defs.get(i).and_then(|d| d.parent);
        std::iter::from_fn(move || {
            let def = self.defs.get(usize::try_from(next?).ok()?)?;
            next = def.parent;
            Some(def)
        })
    }

    /// The name of what `defs[i]` belongs to: its owner when named (a Go receiver), else the
    /// definition that encloses it.
    pub fn container(&self, i: usize) -> Option<&str> {
        let def = self.defs.get(i)?;
        def.owner
            .as_deref()
            .or_else(|| self.ancestors(i).next().map(|d| d.name.as_str()))
    }

    /// The names from the outermost container down to `defs[i]` itself (a name path:
    /// `["Searcher", "search_path"]`).
    pub fn name_path(&self, i: usize) -> Vec<&str> {
        let mut path = Vec::new();
        let mut at = Some(i);
        while let Some(j) = at {
            let Some(def) = self.defs.get(j) else { break };
            path.push(def.name.as_str());
            if let Some(owner) = def.owner.as_deref() {
                path.extend(owner.rsplit("::").next());
                break;
            }
            at = def.parent.and_then(|p| usize::try_from(p).ok());
        }
        path.reverse();
        path
    }

    /// Whether the byte at `at` lies in a comment or a string.
    pub fn in_skip(&self, at: u32) -> bool {
        let i = self.skips.partition_point(|&(_, end)| end <= at);
        self.skips.get(i).is_some_and(|&(start, _)| start <= at)
    }

    /// The innermost definition whose lines hold `line`, if any (a reference's container).
    pub fn innermost_at(&self, line: u32) -> Option<usize> {
        let mut found = None;
        for (i, d) in self.defs.iter().enumerate() {
            if d.start_line > line {
                break;
            }
            if d.end_line >= line {
                found = Some(i);
            }
        }
        found
    }

    /// The compact form the cache and the parse helper use.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(256 + self.defs.len() * 48));
        w.0.extend_from_slice(MAGIC);
        w.u32(u32::from(self.lang.id()));
        w.u32(self.part.id());
        w.u32(len32(self.defs.len()));
        for d in &self.defs {
            w.str(&d.name);
            w.u32(kind_id(d.kind));
            for n in [d.line, d.column, d.name_byte, d.start_line, d.end_line] {
                w.u32(n);
            }
            w.str(&d.signature);
            w.u32(d.parent.map_or(0, |p| p.saturating_add(1)));
            w.str(d.owner.as_deref().unwrap_or(""));
        }
        w.u32(len32(self.skips.len()));
        let mut last = 0;
        for &(start, end) in &self.skips {
            // Deltas: ranges are sorted, so the numbers stay small.
            w.u32(start.wrapping_sub(last));
            w.u32(end.wrapping_sub(start));
            last = end;
        }
        w.u32(len32(self.idents.len()));
        for (name, count) in &self.idents {
            w.str(name);
            w.u32(*count);
        }
        w.u32(len32(self.errors.len()));
        for e in &self.errors {
            w.u32(e.line);
            w.u32(e.column);
            w.str(&e.text);
        }
        w.0
    }

    /// Read back what `encode` wrote; None for anything else (a damaged or older entry).
    pub fn decode(bytes: &[u8]) -> Option<FileTags> {
        FileTags::decode_for(bytes, Part::Focused, None)
    }

    /// Read back what `encode` wrote if it holds what a call needs (`Part::serves`), keeping
    /// with `keep` only the definitions whose name it passes and those that hold them (their
    /// containers): such tags are `Part::Focused`, and no other string is made (find_symbol
    /// on a file the cache holds).
    pub fn decode_for(
        bytes: &[u8],
        need: Part,
        keep: Option<&dyn Fn(&str) -> bool>,
    ) -> Option<FileTags> {
        let mut r = Reader(bytes.strip_prefix(MAGIC)?);
        let lang = Lang::from_id(u8::try_from(r.u32()?).ok()?)?;
        let part = Part::from_id(r.u32()?)?;
        if !part.serves(need) {
            return None;
        }
        let defs = read_defs(&mut r, keep)?;
        let whole = keep.is_none();
        let n = r.count()?;
        let mut skips = Vec::with_capacity(if whole { n } else { 0 });
        let mut last = 0u32;
        for _ in 0..n {
            let start = last.checked_add(r.u32()?)?;
            let end = start.checked_add(r.u32()?)?;
            if whole {
                skips.push((start, end));
            }
            last = end;
        }
        let n = r.count()?;
        let mut idents = Vec::with_capacity(if whole { n } else { 0 });
        for _ in 0..n {
            let (name, count) = (r.text()?, r.u32()?);
            if whole {
                idents.push((name.to_string(), count));
            }
        }
        let n = r.count()?;
        let mut errors = Vec::with_capacity(if whole { n } else { 0 });
        for _ in 0..n {
            let (line, column, text) = (r.u32()?, r.u32()?, r.text()?);
            if whole {
                errors.push(SyntaxError {
                    line,
                    column,
                    text: text.to_string(),
                });
            }
        }
        r.0.is_empty().then_some(FileTags {
            lang,
            part: if whole { part } else { Part::Focused },
            defs,
            skips,
            idents,
            errors,
        })
    }
}

/// The definitions of an encoded `FileTags`, with `keep` only those whose name it passes and
/// those that hold them (`FileTags::decode_for`).
fn read_defs(r: &mut Reader<'_>, keep: Option<&dyn Fn(&str) -> bool>) -> Option<Vec<Def>> {
    let n = r.count()?;
    let mut read = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.text()?;
        let kind = *SymbolKind::ALL.get(usize::try_from(r.u32()?).ok()?)?;
        let lines = [r.u32()?, r.u32()?, r.u32()?, r.u32()?, r.u32()?];
        let signature = r.text()?;
        let parent = r.u32()?.checked_sub(1);
        if parent.is_some_and(|p| p as usize >= read.len()) {
            return None;
        }
        let owner = r.text()?;
        read.push((name, kind, lines, signature, parent, owner));
    }
    // Which to keep: children come after their parents, so a pass from the end marks
    // each kept definition's containers before they are passed.
    let mut kept = vec![keep.is_none(); n];
    if let Some(keep) = keep {
        for (i, &(name, .., parent, _)) in read.iter().enumerate().rev() {
            if kept[i] || keep(name) {
                kept[i] = true;
                if let Some(p) = parent {
                    kept[p as usize] = true;
                }
            }
        }
    }
    let mut at = vec![0u32; n];
    let mut defs = Vec::with_capacity(if keep.is_some() { 4 } else { n });
    for (i, (name, kind, lines, signature, parent, owner)) in read.into_iter().enumerate() {
        if !kept[i] {
            continue;
        }
        at[i] = len32(defs.len());
        let [line, column, name_byte, start_line, end_line] = lines;
        defs.push(Def {
            name: name.to_string(),
            kind,
            line,
            column,
            name_byte,
            start_line,
            end_line,
            signature: signature.to_string(),
            parent: parent.map(|p| at[p as usize]),
            owner: Some(owner.to_string()).filter(|o| !o.is_empty()),
        });
    }
    Some(defs)
}

/// The first bytes of an encoded `FileTags`; a new layout gets a new one.
const MAGIC: &[u8] = b"SNTG2";

fn kind_id(kind: SymbolKind) -> u32 {
    SymbolKind::ALL
        .iter()
        .position(|k| *k == kind)
        .map_or(0, len32)
}

fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

struct Writer(Vec<u8>);

impl Writer {
    /// LEB128.
    fn u32(&mut self, mut n: u32) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn str(&mut self, s: &str) {
        self.u32(len32(s.len()));
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let mut n: u32 = 0;
        for shift in (0..35).step_by(7) {
            let (&b, rest) = self.0.split_first()?;
            self.0 = rest;
            n |= u32::from(b & 0x7f).checked_shl(shift)?;
            if b < 0x80 {
                return Some(n);
            }
        }
        None
    }

    /// A count of items, each at least a byte: never more than what is left.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u32()?).ok()?;
        (n <= self.0.len()).then_some(n)
    }

    fn text(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.u32()?).ok()?;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        std::str::from_utf8(s).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FileTags {
        FileTags {
            lang: Lang::Rust,
            part: Part::All,
            defs: vec![
                Def {
                    name: "Searcher".into(),
                    kind: SymbolKind::Struct,
                    line: 3,
                    column: 12,
                    name_byte: 40,
                    start_line: 3,
                    end_line: 9,
                    signature: "pub struct Searcher".into(),
                    parent: None,
                    owner: None,
                },
                Def {
                    name: "search_path".into(),
                    kind: SymbolKind::Method,
                    line: 300,
                    column: 8,
                    name_byte: 70_000,
                    start_line: 299,
                    end_line: 320,
                    signature: "fn search_path(&self) -> é".into(),
                    parent: Some(0),
                    owner: None,
                },
                Def {
                    name: "run".into(),
                    kind: SymbolKind::Method,
                    line: 400,
                    column: 1,
                    name_byte: 90_000,
                    start_line: 400,
                    end_line: 401,
                    signature: "func (s *Server) run()".into(),
                    parent: None,
                    owner: Some("Server".into()),
                },
            ],
            skips: vec![(0, 10), (12, 400), (100_000, 100_001)],
            idents: vec![("Path".into(), 3), ("walk".into(), 1)],
            errors: vec![SyntaxError {
                line: 4,
                column: 1,
                text: "missing \";\"".into(),
            }],
        }
    }

    #[test]
    fn encoding_round_trips_and_refuses_damage() {
        let tags = sample();
        let bytes = tags.encode();
        assert_eq!(FileTags::decode(&bytes), Some(tags.clone()));
        for cut in 0..bytes.len() {
            assert_eq!(FileTags::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let defs_only = FileTags {
            part: Part::Defs,
            ..tags.clone()
        };
        assert_eq!(FileTags::decode(&defs_only.encode()), Some(defs_only));
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(FileTags::decode(&longer), None);
        assert_eq!(tags.container(1), Some("Searcher"));
        assert_eq!(tags.name_path(1), ["Searcher", "search_path"]);
        assert_eq!(tags.container(2), Some("Server"));
        assert_eq!(tags.name_path(2), ["Server", "run"]);
        assert!(tags.in_skip(0) && tags.in_skip(9) && !tags.in_skip(10) && tags.in_skip(12));
        assert!(!tags.in_skip(400) && tags.in_skip(100_000) && !tags.in_skip(100_001));
        assert_eq!(tags.innermost_at(305), Some(1));
        assert_eq!(tags.innermost_at(5), Some(0));
        assert_eq!(tags.innermost_at(50), None);
    }

    /// Decoded for some names, tags keep those definitions and their containers, and nothing
    /// that is not a definition.
    #[test]
    fn a_decode_for_names_keeps_them_and_their_containers() {
        let tags = sample();
        let bytes = tags.encode();
        let only = |names: &[&str]| {
            let keep = |name: &str| names.contains(&name);
            FileTags::decode_for(&bytes, Part::Defs, Some(&keep)).unwrap()
        };
        let method = only(&["search_path"]);
        assert_eq!(method.part, Part::Focused);
        assert_eq!(method.defs, tags.defs[..2]);
        assert!(method.skips.is_empty() && method.idents.is_empty() && method.errors.is_empty());
        assert_eq!(method.name_path(1), ["Searcher", "search_path"]);
        let run = only(&["run"]);
        assert_eq!(run.defs, [tags.defs[2].clone()]);
        assert_eq!(run.container(0), Some("Server"));
        assert!(only(&["walk"]).defs.is_empty());
        let defs_only = FileTags {
            part: Part::Defs,
            ..tags.clone()
        }
        .encode();
        assert_eq!(FileTags::decode_for(&defs_only, Part::All, None), None);
        assert!(FileTags::decode_for(&defs_only, Part::Defs, None).is_some());
        for cut in 0..bytes.len() {
            let keep = |name: &str| name == "run";
            assert_eq!(
                FileTags::decode_for(&bytes[..cut], Part::Defs, Some(&keep)),
                None
            );
        }
    }
}
