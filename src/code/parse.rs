//! From a file's bytes to its [`FileTags`]: a tree-sitter parse with the language's grammar,
//! then the language's tags query (`Lang::tags_query`, ours, matched by `super::pattern`) for
//! the definitions, and, when everything is wanted ([`Part::All`]), one walk of the tree for
//! what is not code (comments, strings), the identifiers used and the syntax errors. outline
//! and find_symbol want only the definitions ([`Part::Defs`], [`Part::Focused`]): neither
//! walk nor syntax errors, and the parse sees only what can define (`super::skim`).
//!
//! The grammars are the largest thing any program here links (about 18 MB together), so this
//! module is reached only from `sneaky-outline` (its tool and its `--parse` helper,
//! `super::elsewhere::main`); the other programs hand bytes to that helper.
//!
//! The queries capture a definition's node as `@definition.<kind>` (a [`SymbolKind`] name),
//! its name as `@name` and, where the type a method belongs to is named rather than
//! enclosing it (Go's receiver, C++'s `A::f`), that type as `@receiver`. A definition without
//! `@name` is named by its declarator (C and C++ declarators nest: `*f(int)`).

use std::collections::{HashMap, HashSet};
use std::num::NonZeroU16;
use std::ops::ControlFlow;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tree_sitter::{Language, Node, ParseOptions, ParseState, Parser, Point, Range, Tree};

use super::doc::{self, Fence};
use super::pattern::{Match, Patterns, Scratch};
use super::skim;
use super::tags::Want;
use super::tags::{merged, Def, FileTags, Part, SymbolKind, SyntaxError, CUT_SHORT, MAX_ERRORS};
use super::Lang;

/// A parse that takes longer than this is given up (a pathological file must not hold a
/// tool): the file is then reported as not parsed.
pub const PARSE_TIME_LIMIT: Duration = Duration::from_secs(5);

/// Longest signature kept, in bytes (a definition's head on one line).
const MAX_SIGNATURE: usize = 200;

/// Longest identifier counted for repo_map (a longer "identifier" is data, not a name).
const MAX_IDENT: usize = 100;

fn language(lang: Lang) -> Language {
    match lang {
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
    }
}

/// A language's query, read, and what its captures mean, made once per process.
struct Tagger {
    patterns: Patterns,
    /// By capture index: the kind of a `@definition.<kind>` capture.
    kinds: Vec<Option<SymbolKind>>,
    name: Option<u32>,
    receiver: Option<u32>,
    roles: Roles,
    /// By kind id: whether a node of the kind can hold, at any depth, a node a pattern starts
    /// at (`holds`); the walk for definitions goes into no other.
    holds: Vec<bool>,
    /// By kind id: whether such a node can lie beneath one of the kind only inside braces
    /// (`super::braced`), or in JavaScript and TypeScript after an arrow (`arrows`).
    braced: Vec<bool>,
    arrows: bool,
    fields: Fields,
}

/// The fields a definition's name and head are read by, by id: `Node::child_by_field_name`
/// looks the name up among all the grammar's fields at each call (2 % of a cold outline of
/// Linux's headers, a definition a line).
struct Fields {
    body: Option<NonZeroU16>,
    members: Option<NonZeroU16>,
    declarator: Option<NonZeroU16>,
}

impl Fields {
    fn of(grammar: &Language) -> Fields {
        Fields {
            body: grammar.field_id_for_name("body"),
            members: grammar.field_id_for_name("members"),
            declarator: grammar.field_id_for_name("declarator"),
        }
    }
}

/// `node`'s child in the field `id` (none where the grammar has no such field).
fn field(node: Node<'_>, id: Option<NonZeroU16>) -> Option<Node<'_>> {
    node.child_by_field_id(id?.get())
}

fn tagger(lang: Lang) -> Result<&'static Tagger, String> {
    static TAGGERS: [OnceLock<Result<Tagger, String>>; Lang::ALL.len()] =
        [const { OnceLock::new() }; Lang::ALL.len()];
    let slot = &TAGGERS[usize::from(lang.id())];
    slot.get_or_init(|| {
        let grammar = language(lang);
        let patterns = Patterns::new(&grammar, lang.tags_query())
            .map_err(|e| format!("the {} tags query: {e}", lang.name()))?;
        let mut kinds = Vec::new();
        for capture in patterns.capture_names() {
            let kind = match capture.strip_prefix("definition.") {
                Some(kind) => Some(SymbolKind::from_name(kind).ok_or_else(|| {
                    format!("the {} tags query: unknown kind @{capture}", lang.name())
                })?),
                None => None,
            };
            kinds.push(kind);
        }
        Ok(Tagger {
            name: patterns.capture_index("name"),
            receiver: patterns.capture_index("receiver"),
            roles: Roles::of(&grammar),
            holds: holding(
                &grammar,
                &super::holds::kinds(lang)
                    .split_whitespace()
                    .collect::<Vec<_>>(),
            ),
            braced: holding(&grammar, &super::braced::kinds(lang)),
            arrows: matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx),
            fields: Fields::of(&grammar),
            kinds,
            patterns,
        })
    })
    .as_ref()
    .map_err(String::clone)
}

/// By kind id: whether the kind is a named kind of `names` (sorted).
fn holding(grammar: &Language, names: &[&str]) -> Vec<bool> {
    (0..grammar.node_kind_count())
        .map(|id| {
            let id = u16::try_from(id).unwrap_or(u16::MAX);
            grammar.node_kind_is_named(id)
                && grammar
                    .node_kind_for_id(id)
                    .is_some_and(|kind| names.binary_search(&kind).is_ok())
        })
        .collect()
}

/// Parse `source` as `lang` and take all its tags. An error when the parse was given up
/// (`PARSE_TIME_LIMIT`) or the language's query does not compile (a bug the tests catch).
pub fn tags(lang: Lang, source: &[u8]) -> Result<FileTags, String> {
    tags_for(lang, source, Want::All)
}

/// Parse `source` as `lang` for what is wanted of it:
/// - `Want::All`: everything ([`Part::All`]);
/// - `Want::Defs`: every definition and nothing else ([`Part::Defs`]): no walk over every
///   node for comments, strings and identifiers, no syntax errors, and a skimmed parse
///   (`skim`: the blocks that hold no definition left out) — outline;
/// - `Want::At(focus)`: only the definitions that overlap one of the byte ranges (a
///   definition named by what lies there, and those that enclose it; [`Part::Focused`]):
///   what find_symbol needs of a file that holds the name at those places, from a parse
///   of what is around them (`skim::focused`), the query run over those places alone;
/// - `Want::Skimmed(places, holes)`: the same from that skim, done as the file was read.
pub fn tags_for(lang: Lang, source: &[u8], want: Want<'_>) -> Result<FileTags, String> {
    let tagger = tagger(lang)?;
    let (part, defs) = match want {
        Want::All => (Part::All, None),
        Want::Defs => (Part::Defs, Some(only_definitions(tagger, lang, source)?)),
        Want::At(focus) => {
            let skim = skim::focused(lang, source, focus);
            let defs = focused_definitions(tagger, lang, source, &skim.places, &skim.holes)?;
            (Part::Focused, Some(defs))
        }
        Want::Skimmed(places, holes) => {
            let holes = given_holes(holes, source.len())
                .ok_or("the holes given are not sorted and apart within the file")?;
            let defs = focused_definitions(tagger, lang, source, places, &holes)?;
            (Part::Focused, Some(defs))
        }
    };
    if let Some(defs) = defs {
        return Ok(FileTags {
            defs,
            ..FileTags::empty(lang, part)
        });
    }
    let tree = parse(lang, source, &[])?;
    let root = tree.root_node();
    let defs = definitions(tagger, root, &Place::whole(source), &[], part);
    let names: HashSet<u32> = defs.iter().map(|d| d.name_byte).collect();
    let mut walk = Walk {
        source,
        roles: &tagger.roles,
        lang,
        fence: Fence::Prose,
        doc_row: None,
        def_names: &names,
        skips: Vec::new(),
        idents: HashMap::new(),
    };
    walk.node(root);
    let mut idents: Vec<(String, u32)> = walk.idents.into_iter().collect();
    idents.sort_unstable();
    let mut errors = Vec::new();
    if root.has_error() {
        syntax_errors(root, source, &mut errors);
    }
    Ok(FileTags {
        lang,
        part,
        defs,
        skips: merged(walk.skips),
        idents,
        errors,
    })
}

/// Holes handed over (`Want::Skimmed`), when they are sorted and apart and lie within the
/// file: only the last may reach past the bytes given, the rest of the file that was not
/// handed over (nothing there is parsed).
fn given_holes(holes: &[(u32, u32)], len: usize) -> Option<Holes> {
    let holes: Holes = holes
        .iter()
        .map(|&(start, end)| (start as usize, end as usize))
        .collect();
    let ordered = holes
        .iter()
        .all(|&(start, end)| start <= end && start <= len)
        && holes.windows(2).all(|w| w[0].1 <= w[1].0 && w[0].1 <= len);
    ordered.then_some(holes)
}

/// Every definition of `source` (`Part::Defs`: outline).
fn only_definitions(tagger: &Tagger, lang: Lang, source: &[u8]) -> Result<Vec<Def>, String> {
    // Definitions alone: the blocks that hold none and the comments are left out of the
    // parse (`skim`); should what is left not parse cleanly (the skim misread the file, or
    // the file has an error), the file is parsed with every body (`plain`), unless the skim
    // left out no code (`skimmed`), the errors lie away from the cuts, or, in C and C++,
    // the parse recovered from them (`macros_misread`).
    let Skimmed {
        holes,
        worth,
        no_code,
        plain,
    } = skimmed(lang, source);
    // The parser is given the bytes left, one after another (`Compact`), rather than the
    // ranges between the holes, whose every token's lexing looks the ranges through from
    // the first (tree-sitter's `ts_lexer_goto`); the places are mapped back.
    if worth {
        let compact = Compact::new(source, &holes);
        let tree = parse(lang, &compact.text, &[])?;
        let root = tree.root_node();
        if no_code
            || !root.has_error()
            || errors_away_from_cuts(root, &compact, source.len())
            || macros_misread(lang, root, compact.text.len())
        {
            let place = Place::compact(source, &compact);
            return Ok(definitions(tagger, root, &place, &[], Part::Defs));
        }
    }
    plain_definitions(tagger, lang, source, &plain, Part::Defs, &[])
}

/// The definitions of `source` named at `places` and those around them (`Part::Focused`:
/// find_symbol), from a parse without `holes` (`skim::focused`, which the walk that read the
/// file may have done: `Want::Skimmed`). Should that parse have an error (in C and C++, one
/// it did not recover from: [`macros_misread`], as for outline), or leaving the holes out
/// not be worth it, the file is parsed as for outline, with every body. (Errors away from
/// the cuts, which outline lets stand, do not do here: in one of ring's Rust files the
/// focused parse lost the `mod tests` around four functions that way.)
fn focused_definitions(
    tagger: &Tagger,
    lang: Lang,
    source: &[u8],
    places: &[(u32, u32)],
    holes: &[(usize, usize)],
) -> Result<Vec<Def>, String> {
    if places
        .iter()
        .all(|&(start, end)| skim::in_a_hole(holes, start, end))
    {
        return Ok(Vec::new());
    }
    if worth_skimming(holes, source) {
        let compact = Compact::new(source, holes);
        let tree = parse(lang, &compact.text, &[])?;
        let root = tree.root_node();
        // In C and C++, as outline's parse stands: the errors are the file's macros.
        if !root.has_error() || macros_misread(lang, root, compact.text.len()) {
            let place = Place::compact(source, &compact);
            let places = compact.focus(places);
            return Ok(definitions(tagger, root, &place, &places, Part::Focused));
        }
    }
    // That parse keeps every body: it needs the rest of the file, should it have been cut.
    if holes.last().is_some_and(|&(_, end)| end > source.len()) {
        return Err(CUT_SHORT.to_string());
    }
    let plain = skim::skim(lang, source).plain;
    plain_definitions(tagger, lang, source, &plain, Part::Focused, places)
}

/// The definitions of `source` for `part` at `focus` from a parse with every body kept, but
/// still without the comments and the annotations the grammar cannot read (`plain`:
/// `Skim::plain`): the file as its compiler reads it. Should that parse have an error, it
/// stands unless its recovery fell apart (`recovered`) or took too long
/// (`plain_parse_budget`): on libstdc++'s `bits/` and {fmt}, where a whole parse of 141
/// files has errors, it left fewer tokens outside any construct than the whole parse did in
/// 129 and more in one (gmock.h, where the recovery without one comment took the whole file
/// for an error, and 15 times as long). Then the file is parsed whole.
fn plain_definitions(
    tagger: &Tagger,
    lang: Lang,
    source: &[u8],
    plain: &[(usize, usize)],
    part: Part,
    focus: &[(u32, u32)],
) -> Result<Vec<Def>, String> {
    if !plain.is_empty() {
        let compact = Compact::new(source, plain);
        let tree = parse_within(lang, &compact.text, &[], Some(plain_parse_budget))?;
        if let Some(root) = tree
            .as_ref()
            .map(Tree::root_node)
            .filter(|&root| recovered(root, compact.text.len()))
        {
            let focus = compact.focus(focus);
            let place = Place::compact(source, &compact);
            return Ok(definitions(tagger, root, &place, &focus, part));
        }
    }
    let tree = parse(lang, source, &[])?;
    let place = Place::whole(source);
    Ok(definitions(tagger, tree.root_node(), &place, focus, part))
}

/// Whether a skimmed parse of C or C++ whose error lies beside a cut still stands: its
/// recovery held ([`recovered`]). There the error is nearly always the file's own, a macro
/// the grammar cannot read, and the skimmed parse finds what the plain one finds, or more:
/// over the 222 such files of `/usr/include` (libstdc++, X11 and Linux's headers among
/// them), {fmt} and redis, 728 definitions differ one way and 2,597 the other, most of them
/// the same name at the same line as a method in its class rather than a function, or a
/// class the plain parse lost; of those only the plain parse found, nearly all are `__catch`
/// (a macro for `catch`) read as a function, or a local variable. The plain parse it spares
/// took half of outline's time on libstdc++'s `bits/` and two thirds on {fmt}. Elsewhere an
/// error is rarer than a skim's misreading: in Rust, three files of cargo's registry have an
/// error beside a cut and parse cleanly whole.
fn macros_misread(lang: Lang, root: Node<'_>, len: usize) -> bool {
    matches!(lang, Lang::C | Lang::Cpp) && recovered(root, len)
}

/// Whether every syntax error of a parse of `compact` lies on lines the skim left whole: no
/// hole was cut on the lines from an error's first to its last. Such an error is the file's
/// own (a macro or a directive the grammar cannot read), which a whole parse meets too, at
/// the cost of its recovery over every body; an error beside a cut may be the skim's
/// misreading, and the file is parsed whole. (On `/usr/include`, the cargo registry's
/// Rust, libstdc++'s `bits/` and leveldb, no file with such errors parses cleanly whole;
/// of those with an error beside a cut, three Rust files do.)
fn errors_away_from_cuts(root: Node<'_>, compact: &Compact, source_len: usize) -> bool {
    let text = &compact.text;
    // Where a hole was cut: before each run but the first (runs are apart), before the
    // first when it does not start the source, and at the end when one ends it.
    let mut seams: Vec<usize> = compact.runs.iter().skip(1).map(|&(at, _)| at).collect();
    if compact.runs.first().is_some_and(|&(_, from)| from > 0) {
        seams.insert(0, 0);
    }
    let kept_to = compact
        .runs
        .last()
        .map_or(0, |&(at, from)| from + (text.len() - at));
    if kept_to < source_len {
        seams.push(text.len());
    }
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        let error = node.is_error() || node.is_missing();
        if error {
            let first = memchr::memrchr(b'\n', &text[..node.start_byte()]).map_or(0, |n| n + 1);
            let last = memchr::memchr(b'\n', &text[node.end_byte()..])
                .map_or(text.len(), |n| node.end_byte() + n);
            let i = seams.partition_point(|&at| at < first);
            if seams.get(i).is_some_and(|&at| at <= last) {
                return false;
            }
        }
        if !error && node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return true;
            }
        }
    }
}

/// Whether a parse with errors still read most of the file as constructs: at most
/// [`LOOSE_TOKENS`] tokens, and one per [`LOOSE_BYTES_PER_TOKEN`] bytes of `len`, stand
/// loose in an error node. (The plain parses of libstdc++'s `bits/` and {fmt} that have
/// errors leave 0 to 52 loose, also in 470 KB of gtest.h; the one whose recovery fell apart
/// left 44,584 in 450 KB.)
fn recovered(root: Node<'_>, len: usize) -> bool {
    let limit = LOOSE_TOKENS + len / LOOSE_BYTES_PER_TOKEN;
    let mut loose = 0;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if !node.has_error() {
            continue;
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if node.is_error() && child.child_count() == 0 {
                loose += 1;
                if loose > limit {
                    return false;
                }
            }
            stack.push(child);
        }
    }
    true
}

/// What a plain parse may take of a thread's CPU time once it has met an error, for `len`
/// bytes: a recovery that falls apart may also take long (gmock.h's, 0.8 s where its whole
/// parse took 53 ms; the plain parses of libstdc++'s `bits/` and {fmt} with errors took at
/// most 162 ns a byte).
fn plain_parse_budget(len: usize) -> Duration {
    Duration::from_millis(10) + Duration::from_nanos(250 * len as u64)
}

const LOOSE_TOKENS: usize = 64;
const LOOSE_BYTES_PER_TOKEN: usize = 256;

/// A file's skim, for a parse of definitions.
struct Skimmed {
    /// What the skim leaves out ([`skim::Skim::holes`]).
    holes: Holes,
    /// Whether leaving `holes` out of the parse is worth it.
    worth: bool,
    /// Whether they leave out no code.
    no_code: bool,
    /// Those that are not code ([`skim::Skim::plain`]).
    plain: Holes,
}

/// The skim of `source` for a parse of its definitions. A skim that leaves out no code
/// (comments, and the annotations and guards the grammar cannot read) is worth a parse for
/// definitions however much it keeps, and its parse stands even with errors: they are the
/// file's own, which a whole parse meets too (with every macro the skim took out besides).
fn skimmed(lang: Lang, source: &[u8]) -> Skimmed {
    let skim = skim::skim(lang, source);
    let no_code = !skim.code && !skim.holes.is_empty();
    Skimmed {
        worth: no_code || worth_skimming(&skim.holes, source),
        holes: skim.holes,
        no_code,
        plain: skim.plain,
    }
}

type Holes = Vec<(usize, usize)>;

/// Whether leaving `holes` out of `source` saves enough to be worth the risk of parsing
/// twice: a skimmed parse with an error is followed by a plain one (`only_definitions`),
/// and the files that leave little out (C headers: declarations, no bodies) are those whose
/// parse has errors most often (macros tree-sitter cannot know: 88 of OpenSSL's 133
/// headers), so a file that would keep more than [`SKIM_KEEPS_AT_MOST`] of its bytes has
/// its plain parse at once (unless its skim leaves out no code: [`skimmed`]).
fn worth_skimming(holes: &[(usize, usize)], source: &[u8]) -> bool {
    // The last hole may run on past the bytes given (`given_holes`): they are the file's
    // start.
    let len = holes.last().map_or(0, |&(_, end)| end).max(source.len());
    worth_leaving_out(holes.iter().map(|&(start, end)| end - start).sum(), len)
}

/// Whether a parse without `left_out` bytes of a file of `len` is worth it
/// ([`worth_skimming`]).
pub fn worth_leaving_out(left_out: usize, len: usize) -> bool {
    left_out > 0 && (len - left_out.min(len)) as f64 <= SKIM_KEEPS_AT_MOST * len as f64
}

/// The share of a file's bytes a skimmed parse may keep (see [`worth_skimming`]).
const SKIM_KEEPS_AT_MOST: f64 = 0.75;

/// The tree of `source` without the byte ranges `holes` (sorted, apart), or why there is
/// none (the parse was given up).
fn parse(lang: Lang, source: &[u8], holes: &[(usize, usize)]) -> Result<Tree, String> {
    parse_within(lang, source, holes, None)?.ok_or_else(too_long)
}

fn too_long() -> String {
    format!("parsing took longer than {} s", PARSE_TIME_LIMIT.as_secs())
}

/// [`parse`], given up (`None`) should it meet an error and take more of this thread's CPU
/// time than `budget` of `source`'s length.
fn parse_within(
    lang: Lang,
    source: &[u8],
    holes: &[(usize, usize)],
    budget: Option<fn(usize) -> Duration>,
) -> Result<Option<Tree>, String> {
    // One parser per thread, kept from file to file: a new one allocates its stacks afresh.
    thread_local! {
        static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(Parser::new());
    }
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser
            .set_language(&language(lang))
            .map_err(|e| format!("the {} grammar: {e}", lang.name()))?;
        parser
            .set_included_ranges(&included(source, holes))
            .map_err(|e| format!("the ranges to parse: {e}"))?;
        let deadline = Instant::now() + PARSE_TIME_LIMIT;
        let budget = budget.map(|of| thread_cpu_time() + of(source.len()));
        let mut calls = 0u32;
        let mut over_budget = false;
        let mut give_up = |state: &ParseState| {
            calls = calls.wrapping_add(1);
            if Instant::now() > deadline {
                return ControlFlow::Break(());
            }
            // The thread's CPU time is a system call: looked at every 16th call (the parser
            // calls every few hundred bytes).
            if let Some(until) = budget.filter(|_| calls % 16 == 0 && state.has_error()) {
                if thread_cpu_time() > until {
                    over_budget = true;
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        };
        let len = source.len();
        let tree = parser.parse_with_options(
            &mut |i, _| if i < len { &source[i..] } else { &[] },
            None,
            Some(ParseOptions::new().progress_callback(&mut give_up)),
        );
        if tree.is_none() {
            // A parse given up would otherwise be resumed by the next one.
            parser.reset();
            if !over_budget {
                return Err(too_long());
            }
        }
        Ok(tree)
    })
}

/// The CPU time this thread has taken (zero should the clock fail).
fn thread_cpu_time() -> Duration {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

/// The ranges of `source` around `holes`, each with its rows and columns; none (the whole
/// source) without holes.
fn included(source: &[u8], holes: &[(usize, usize)]) -> Vec<Range> {
    let mut out = Vec::with_capacity(holes.len() + 1);
    if holes.is_empty() {
        return out;
    }
    // The position of each boundary, counted on from the last.
    let (mut at, mut row, mut line_start) = (0usize, 0usize, 0usize);
    let mut point = |to: usize| {
        for n in memchr::memchr_iter(b'\n', &source[at..to]) {
            row += 1;
            line_start = at + n + 1;
        }
        at = to;
        Point::new(row, to - line_start)
    };
    let mut start = (0, point(0));
    for &(hole_start, hole_end) in holes {
        let end = point(hole_start);
        if hole_start > start.0 {
            out.push(Range {
                start_byte: start.0,
                end_byte: hole_start,
                start_point: start.1,
                end_point: end,
            });
        }
        start = (hole_end, point(hole_end));
    }
    let end = point(source.len());
    out.push(Range {
        start_byte: start.0,
        end_byte: source.len(),
        start_point: start.1,
        end_point: end,
    });
    out
}

/// A definition as the query found it, before the tree of definitions is made.
struct Found {
    start: usize,
    end: usize,
    kind: SymbolKind,
    name: String,
    name_node_start: usize,
    line: u32,
    column: u32,
    start_line: u32,
    end_line: u32,
    signature: String,
    owner: Option<String>,
    pattern: usize,
    /// A C or C++ function declared, not defined (a `declaration` with a function's
    /// declarator): inside a function, a prototype or a variable that the grammar reads as
    /// one (`log::Writer log(file);`), neither of which defines anything.
    declared: bool,
}

/// The definitions in the tree: every match of the query, or, with a `focus`, the matches
/// whose outermost node overlaps one of its byte ranges (the definitions around it too).
/// For definitions alone, the walk passes by the nodes of `Tagger::braced`'s kinds that hold
/// no `{`; for everything (`Part::All`) it walks every node, and `benches/skim_same.py` holds
/// the two to the same definitions.
fn definitions<'t>(
    tagger: &Tagger,
    root: Node<'t>,
    place: &Place<'_>,
    focus: &[(u32, u32)],
    part: Part,
) -> Vec<Def> {
    let braced = part != Part::All;
    // Where the parsed text has a `{` (and a `=>`), for a node of a braced kind (comments
    // and strings count too: the walk then goes in, as it would without the list).
    let mut braces: Vec<usize> = Vec::new();
    if braced {
        braces.extend(memchr::memchr_iter(b'{', place.parsed));
        if tagger.arrows {
            braces.extend(memchr::memmem::find_iter(place.parsed, b"=>"));
            braces.sort_unstable();
        }
    }
    let descend = |node: Node<'t>| {
        let kind = usize::from(node.kind_id());
        if !tagger.holds.get(kind).copied().unwrap_or(true) {
            return node.has_error();
        }
        if !braced || !tagger.braced.get(kind).copied().unwrap_or(false) || node.has_error() {
            return true;
        }
        let first = braces.partition_point(|&at| at < node.start_byte());
        braces.get(first).is_some_and(|&at| at < node.end_byte())
    };
    let mut found: Vec<Found> = Vec::new();
    let mut matches = Vec::new();
    let mut scratch = Scratch::default();
    let mut look = |node: Node<'t>| {
        matches.clear();
        tagger
            .patterns
            .matches_at(node, place.parsed, &mut scratch, &mut matches);
        for m in &matches {
            found.extend(found_of(tagger, m, place));
        }
    };
    if focus.is_empty() {
        each_node(root, (0, usize::MAX), &descend, &mut look);
    }
    for &(start, end) in focus {
        let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
            continue;
        };
        each_node(root, (start, end.max(start + 1)), &descend, &mut look);
    }
    // One definition per name: where two patterns name the same node, the first pattern of
    // the query (the more precise one) wins; with a focus, ranges in one definition found it
    // once each.
    found.sort_by_key(|f| (f.name_node_start, f.pattern));
    found.dedup_by_key(|f| f.name_node_start);
    drop_nested_twins(&mut found);
    // Parents before children: by start, the larger first.
    found.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    tree_of(found)
}

/// One definition per name, kind and line where one holds the other: `exports.f = function
/// f() {}` names its function twice. Apart they are two: on a minified file's one line, each
/// class has its `constructor`, and a callback's `let r` comes before the module's `r`
/// (dropping the second as the same lost it once the first, a local, went). `found` is in
/// the order of the names, so a line's definitions come together: each is held to those of
/// its line kept before it, one by one, or on a long (minified) line through a map by name.
fn drop_nested_twins(found: &mut Vec<Found>) {
    let twins = |a: &Found, b: &Found| {
        a.name == b.name
            && a.kind == b.kind
            && ((a.start <= b.start && b.end <= a.end) || (b.start <= a.start && a.end <= b.end))
    };
    let mut keep = vec![true; found.len()];
    let mut from = 0;
    while from < found.len() {
        let line = found[from].line;
        let to = from + found[from..].iter().take_while(|f| f.line == line).count();
        if to - from <= 32 {
            for i in from..to {
                keep[i] = !(from..i).any(|j| keep[j] && twins(&found[j], &found[i]));
            }
        } else {
            let mut kept: HashMap<(&str, SymbolKind), Vec<usize>> = HashMap::new();
            for i in from..to {
                let same = kept.entry((&found[i].name, found[i].kind)).or_default();
                keep[i] = !same.iter().any(|&j| twins(&found[j], &found[i]));
                if keep[i] {
                    same.push(i);
                }
            }
        }
        from = to;
    }
    let mut at = 0;
    found.retain(|_| {
        at += 1;
        keep[at - 1]
    });
}

/// Each node beneath and including `root` that overlaps the byte range `(start, end)`, in
/// document order, but for those beneath a node that `descend` says cannot hold a
/// definition.
fn each_node<'t>(
    root: Node<'t>,
    (start, end): (usize, usize),
    descend: &impl Fn(Node<'t>) -> bool,
    look: &mut impl FnMut(Node<'t>),
) {
    let mut cursor = root.walk();
    let everything = start == 0 && end == usize::MAX;
    'nodes: loop {
        let node = cursor.node();
        let overlaps = everything || (node.end_byte() > start && node.start_byte() < end);
        // A pattern starts at a named node (`Patterns`): a token is no definition, and a
        // node with only tokens beneath it (an empty body `{}`) holds none.
        if overlaps && node.is_named() {
            look(node);
        }
        let inside = overlaps && node.named_child_count() > 0 && descend(node);
        if inside && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'nodes;
            }
            if !cursor.goto_parent() {
                break 'nodes;
            }
        }
    }
}

/// The definition one match names, if it names one.
fn found_of(tagger: &Tagger, m: &Match<'_>, place: &Place<'_>) -> Option<Found> {
    let mut def = None;
    let (mut name, mut receiver) = (None, None);
    for &(index, node) in &m.captures {
        if Some(index) == tagger.name {
            name = Some(node);
        } else if Some(index) == tagger.receiver {
            receiver = Some(node);
        } else if let Some(Some(kind)) = tagger.kinds.get(index as usize) {
            def = Some((node, *kind));
        }
    }
    let (node, kind) = def?;
    let name_node = name.or_else(|| declared_name(node, &tagger.fields))?;
    // C#'s operators are named by their token (`operator ==(…)`: `operator==`) or, a
    // conversion, by its type, qualified or not (`implicit operator Money(decimal d)`:
    // `operator Money`).
    let operator = match node.kind() {
        "operator_declaration" => Some(("", "operator")),
        "conversion_operator_declaration" => Some((" ", "type")),
        _ => None,
    };
    let (name_node, qualifier) = match operator {
        Some((_, field)) => (node.child_by_field_name(field)?, None),
        None => unqualified(name_node),
    };
    let name = match operator {
        Some((space, _)) => format!("operator{space}{}", place.text(name_node)?.trim()),
        None => name_text(kind, name_node, place)?,
    };
    let owner = receiver
        .and_then(|r| type_name(r, place))
        .or_else(|| qualifier.and_then(|q| type_name(q, place)));
    let at = place.start_point(name_node);
    Some(Found {
        start: place.start(node),
        end: place.end(node),
        kind,
        name,
        name_node_start: place.start(name_node),
        line: line_number(at.row),
        column: line_number(at.column),
        start_line: line_number(place.start_point(node).row),
        end_line: line_number(end_row(place, node)),
        signature: signature(node, place, &tagger.fields),
        owner,
        pattern: m.pattern,
        declared: kind == SymbolKind::Function && node.kind() == "declaration",
    })
}

/// The bytes of a source left when its holes are cut out, and where each run of them
/// came from.
struct Compact {
    text: Vec<u8>,
    /// Each run kept: where it starts in `text` and in the source (in order).
    runs: Vec<(usize, usize)>,
}

impl Compact {
    fn new(source: &[u8], holes: &[(usize, usize)]) -> Compact {
        let mut text = Vec::with_capacity(source.len());
        let mut runs = Vec::with_capacity(holes.len() + 1);
        let mut at = 0;
        for &(start, end) in holes.iter().chain([&(source.len(), source.len())]) {
            if start > at {
                runs.push((text.len(), at));
                text.extend_from_slice(&source[at..start]);
            }
            at = end;
        }
        Compact { text, runs }
    }

    /// Where the source's byte `at` is in `text` (a byte left out: where its hole was).
    fn to_text(&self, at: u32) -> u32 {
        let at = at as usize;
        let i = self.runs.partition_point(|&(_, source)| source <= at);
        let Some(&(from, source)) = i.checked_sub(1).and_then(|i| self.runs.get(i)) else {
            return 0;
        };
        let len = self.runs.get(i).map_or(self.text.len(), |&(next, _)| next) - from;
        u32::try_from(from + (at - source).min(len)).unwrap_or(u32::MAX)
    }

    /// Where the source's byte ranges `focus` are in `text`.
    fn focus(&self, focus: &[(u32, u32)]) -> Vec<(u32, u32)> {
        focus
            .iter()
            .map(|&(start, end)| (self.to_text(start), self.to_text(end)))
            .collect()
    }

    /// Where a node that starts at `at` of `text` starts in the source (at the border of
    /// two runs: the later one's start).
    fn start(&self, at: usize) -> usize {
        let i = self.runs.partition_point(|&(from, _)| from <= at);
        self.runs
            .get(i.wrapping_sub(1))
            .map_or(at, |&(from, source)| source + (at - from))
    }

    /// Where a node that ends at `at` of `text` ends in the source (at the border of two
    /// runs: the earlier one's end).
    fn end(&self, at: usize) -> usize {
        let i = self.runs.partition_point(|&(from, _)| from < at);
        self.runs
            .get(i.wrapping_sub(1))
            .map_or(at, |&(from, source)| source + (at - from))
    }
}

/// Where the nodes of a tree lie in the source: their own places, or those of a parse of
/// its [`Compact`] text mapped back (bytes, and rows and columns from the source's lines).
struct Place<'a> {
    source: &'a [u8],
    /// The text the tree was parsed from (the query's predicates read it).
    parsed: &'a [u8],
    compact: Option<(&'a Compact, Vec<usize>)>,
}

impl<'a> Place<'a> {
    fn whole(source: &'a [u8]) -> Place<'a> {
        Place {
            source,
            parsed: source,
            compact: None,
        }
    }

    fn compact(source: &'a [u8], compact: &'a Compact) -> Place<'a> {
        let lines = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', source).map(|n| n + 1))
            .collect();
        Place {
            source,
            parsed: &compact.text,
            compact: Some((compact, lines)),
        }
    }

    fn start(&self, node: Node<'_>) -> usize {
        match &self.compact {
            Some((c, _)) => c.start(node.start_byte()),
            None => node.start_byte(),
        }
    }

    fn end(&self, node: Node<'_>) -> usize {
        match &self.compact {
            Some((c, _)) => c.end(node.end_byte()),
            None => node.end_byte(),
        }
    }

    fn point(&self, lines: &[usize], at: usize) -> Point {
        let row = lines
            .partition_point(|&start| start <= at)
            .saturating_sub(1);
        Point::new(row, at - lines.get(row).copied().unwrap_or(0))
    }

    fn start_point(&self, node: Node<'_>) -> Point {
        match &self.compact {
            Some((_, lines)) => self.point(lines, self.start(node)),
            None => node.start_position(),
        }
    }

    fn end_point(&self, node: Node<'_>) -> Point {
        match &self.compact {
            Some((_, lines)) => self.point(lines, self.end(node)),
            None => node.end_position(),
        }
    }

    /// A node's text in the source.
    fn text(&self, node: Node<'_>) -> Option<&'a str> {
        let (start, end) = (self.start(node), self.end(node));
        std::str::from_utf8(self.source.get(start..end.max(start))?).ok()
    }
}

/// Link each definition to the one enclosing it, drop what is local to a function (its
/// variables and constants), and make a function directly inside a class or impl a method.
fn tree_of(found: Vec<Found>) -> Vec<Def> {
    let mut defs: Vec<Def> = Vec::with_capacity(found.len());
    // The enclosing kept definitions: their range, index in `defs`, and whether what is
    // inside them is local (they are, or are inside, a function).
    let mut open: Vec<Open> = Vec::new();
    for f in found {
        while open.last().is_some_and(|o| o.end <= f.start) {
            open.pop();
        }
        // Two names of one node (`a, b = 1, 2`) are siblings, not parent and child.
        let enclosing = open
            .iter()
            .rev()
            .find(|o| (o.start, o.end) != (f.start, f.end));
        let parent = enclosing.map(|o| o.index);
        let local = enclosing.is_some_and(|o| o.local_inside);
        let parent_kind = parent.and_then(|p| defs.get(p)).map(|d| d.kind);
        let mut kind = f.kind;
        match kind {
            SymbolKind::Variable | SymbolKind::Constant if local => continue,
            SymbolKind::Function if local && f.declared => continue,
            SymbolKind::Variable if parent_kind.is_some_and(SymbolKind::holds_members) => {
                kind = SymbolKind::Field;
            }
            SymbolKind::Function
                if f.owner.is_some() || parent_kind.is_some_and(SymbolKind::holds_members) =>
            {
                kind = SymbolKind::Method;
            }
            _ => {}
        }
        let index = defs.len();
        defs.push(Def {
            name: f.name,
            kind,
            line: f.line,
            column: f.column,
            name_byte: u32::try_from(f.name_node_start).unwrap_or(u32::MAX),
            start_line: f.start_line,
            end_line: f.end_line,
            signature: f.signature,
            parent: parent.and_then(|p| u32::try_from(p).ok()),
            owner: f.owner,
        });
        open.push(Open {
            start: f.start,
            end: f.end,
            index,
            local_inside: local || kind.is_callable(),
        });
    }
    defs
}

/// A definition whose range the walk of `tree_of` is still inside.
struct Open {
    start: usize,
    end: usize,
    index: usize,
    local_inside: bool,
}

fn line_number(row: usize) -> u32 {
    u32::try_from(row.saturating_add(1)).unwrap_or(u32::MAX)
}

/// The last row a node's text is on (a node ending at a line's start ends on the line before).
fn end_row(place: &Place<'_>, node: Node<'_>) -> usize {
    let end = place.end_point(node);
    if end.column == 0 && end.row > place.start_point(node).row {
        end.row - 1
    } else {
        end.row
    }
}

/// The name a C or C++ declarator declares: follow `declarator` fields down (`*f(int)`,
/// `f[3]`, `A::f`) to the identifier. C++'s reference declarator (`T& f()`, `T&& f()`)
/// holds its declarator without a field name: its last named child; a conversion operator
/// (`operator bool() const`) is named by its `operator_cast` ([`name_text`]).
fn declared_name<'t>(node: Node<'t>, fields: &Fields) -> Option<Node<'t>> {
    let mut at = field(node, fields.declarator)?;
    // A macro after a function's parameters (`end() const _GLIBCXX_NOEXCEPT {`, `f()
    // OVERRIDE {`) is taken for its declarator, and the function's own declarator is left
    // in an error before it: the function is named by that one.
    if node.kind() == "function_definition"
        && matches!(at.kind(), "identifier" | "field_identifier")
    {
        let stray = node
            .children(&mut node.walk())
            .filter(|c| c.kind() == "ERROR")
            .find_map(|e| {
                e.named_children(&mut e.walk())
                    .find(|c| c.kind() == "function_declarator")
            });
        if let Some(declarator) = stray {
            at = declarator;
        }
    }
    for _ in 0..16 {
        let inner = match at.kind() {
            "operator_cast" => return Some(at),
            "reference_declarator" => at
                .named_child_count()
                .checked_sub(1)
                .and_then(|last| at.named_child(u32::try_from(last).ok()?)),
            _ => field(at, fields.declarator),
        };
        match inner {
            Some(inner) => at = inner,
            None => return Some(at),
        }
    }
    None
}

/// A qualified name (`A::f`, `ns::A::f`) split into its last name and its qualifier.
fn unqualified(node: Node<'_>) -> (Node<'_>, Option<Node<'_>>) {
    let mut at = node;
    let mut qualifier = None;
    while matches!(at.kind(), "qualified_identifier" | "scoped_identifier") {
        let (Some(name), scope) = (
            at.child_by_field_name("name"),
            at.child_by_field_name("scope")
                .or_else(|| at.child_by_field_name("path")),
        ) else {
            break;
        };
        qualifier = scope.or(qualifier);
        at = name;
    }
    (at, qualifier)
}

/// The text that names a definition (a Ruby `attr_reader :name`'s symbol without its colon,
/// a PHP `$variable` without its sign).
fn name_text(kind: SymbolKind, node: Node<'_>, place: &Place<'_>) -> Option<String> {
    let text = place.text(node)?;
    // Only a symbol's colon and a PHP variable's sign: `$` begins many a JavaScript name.
    let text = match node.kind() {
        "simple_symbol" => text.trim_start_matches(':'),
        "variable_name" => text.trim_start_matches('$'),
        // `operator bool() const`: `operator bool`.
        "operator_cast" => {
            let to = place.text(node.child_by_field_name("type")?)?;
            return Some(format!("operator {}", to.trim()));
        }
        _ => text,
    }
    .trim();
    if text.is_empty() || text.len() > 300 {
        return None;
    }
    let text = if kind == SymbolKind::Impl {
        type_base(text)
    } else {
        text
    };
    Some(text.to_string())
}

/// A type's own name from how it is written: `Foo<T>` → `Foo`, `crate::a::Foo` → `Foo`,
/// `*Server` → `Server`, `&'a mut Foo` → `Foo`.
fn type_base(text: &str) -> &str {
    let head = text.split('<').next().unwrap_or(text);
    let head = head.split('[').next().unwrap_or(head);
    let last = head.rsplit("::").next().unwrap_or(head);
    let last = last.rsplit('.').next().unwrap_or(last);
    last.rsplit(|c: char| c.is_whitespace() || c == '&' || c == '*')
        .find(|w| !w.is_empty() && !w.starts_with('\'') && *w != "mut" && *w != "dyn")
        .unwrap_or(last)
        .trim()
}

fn type_name(node: Node<'_>, place: &Place<'_>) -> Option<String> {
    let text = place.text(node)?;
    let base = type_base(text);
    (!base.is_empty()).then(|| base.to_string())
}

/// A definition's head on one line: from its start to its body (or the end of its first
/// line), whitespace collapsed, without the `{` or `:` that opens the body.
fn signature(node: Node<'_>, place: &Place<'_>, fields: &Fields) -> String {
    let source = place.source;
    let start = place.start(head_start(node));
    // A head that ends in `:` (Python's) ends there: a comment may follow it, and a skimmed
    // parse has left the body's lines out before the one where its block starts.
    let body = [fields.body, fields.members]
        .into_iter()
        .find_map(|f| field(node, f))
        .map(|b| {
            // The child before the body, but for comments (`Node::prev_sibling` would look
            // for it from the root down).
            let mut before = None;
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.id() == b.id() {
                    break;
                }
                if !child.is_extra() {
                    before = Some(child);
                }
            }
            match before {
                Some(colon) if colon.kind() == ":" => place.end(colon),
                _ => place.start(b),
            }
        })
        .filter(|&b| b > start);
    // Only the bytes a signature may take are looked through: a minified file's line runs
    // to its end, and a scan there for each of its definitions made its outline quadratic.
    let most = (start + MAX_SIGNATURE * 4).min(source.len());
    let first_line_end = memchr::memchr(b'\n', &source[start..most]).map_or(most, |n| start + n);
    let mut end = body
        .unwrap_or(first_line_end)
        .min(place.end(without_trailing_comments(node)))
        .min(most);
    if body.is_none() {
        // A one-line type or macro: its head, without what its braces hold.
        if let Some(brace) = memchr::memchr(b'{', &source[start..end]) {
            end = start + brace;
        }
    }
    let text = String::from_utf8_lossy(&source[start..end]);
    let mut out = String::with_capacity(text.len());
    for word in first_branch(&text).flat_map(str::split_whitespace) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    let kept = out
        .trim_end_matches(['{', ':', '=', ';', ' '])
        .trim_end()
        .len();
    out.truncate(kept);
    // No more characters than bytes: most heads are short enough as they are.
    if out.len() <= MAX_SIGNATURE {
        return out;
    }
    crate::text::shorten(&out, MAX_SIGNATURE)
}

/// `node`, or its last child that is not a comment when comments end it (TypeScript's
/// `type T = unknown // note`, where no `;` ends the declaration before the comment).
fn without_trailing_comments(node: Node<'_>) -> Node<'_> {
    let mut last = node.child(u32::try_from(node.child_count().saturating_sub(1)).unwrap_or(0));
    while let Some(child) = last.filter(|c| c.is_extra()) {
        last = child.prev_sibling();
    }
    match last {
        Some(child) if child.end_byte() < node.end_byte() => child,
        _ => node,
    }
}

/// The lines of a head as the skim reads C# (`skim::Lexer::directive`): without its
/// conditional directives (C#'s `F()` with `#if X` before its `=> …`), and without the
/// branches after an `#if`'s first (a head split between branches).
fn first_branch(text: &str) -> impl Iterator<Item = &str> {
    // Above 0: inside a branch after the first, at that many `#if`s' depth.
    let mut skipping = 0u32;
    text.split('\n').filter(move |line| {
        let word = line.trim_start().strip_prefix('#').and_then(|rest| {
            rest.trim_start()
                .split(|c: char| !c.is_ascii_alphabetic())
                .next()
        });
        match word {
            Some("if" | "ifdef" | "ifndef") => skipping += u32::from(skipping > 0),
            Some("elif" | "else") => skipping = skipping.max(1),
            Some("endif") => skipping = skipping.saturating_sub(1),
            _ => return skipping == 0,
        }
        false
    })
}

/// The kinds of annotations a definition's head may begin with, which its signature leaves
/// out: Java's `@Override` and `@SuppressWarnings(…)`, C#'s and PHP's `[Test]` and
/// `#[Attr]`, TypeScript's `@Input()`, C++'s `[[nodiscard]]`.
const ANNOTATIONS: &[&str] = &[
    "marker_annotation",
    "annotation",
    "attribute_list",
    "decorator",
    "attribute_declaration",
];

/// The first node of a definition's head that is not an annotation or a comment (Java's
/// `modifiers` are looked into: `@Serial private static …` starts at `private`), or the
/// definition itself when there is none. A head on one line would otherwise be only its
/// annotation (`@java.io.Serial` above a field).
fn head_start(node: Node<'_>) -> Node<'_> {
    let mut cursor = node.walk();
    if !cursor.goto_first_child() {
        return node;
    }
    loop {
        let child = cursor.node();
        if !child.is_extra() && !ANNOTATIONS.contains(&child.kind()) {
            if child.kind() == "modifiers" && cursor.goto_first_child() {
                continue;
            }
            return child;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == node {
                return node;
            }
        }
    }
}

/// What the walk does with a node, told by its kind (`Roles`).
const COMMENT: u8 = 1;
/// A string or other literal text whose words are not code (its interpolations are).
const TEXT: u8 = 2;
/// A child of a string that is part of its text rather than code inside it.
const TEXT_PART: u8 = 4;
/// A leaf of this kind is an identifier (a name the code uses).
const IDENTIFIER: u8 = 8;

/// The role of each node kind of a language, by kind id: told once per language from the
/// kinds' names, so that the walk over every node of a tree looks a byte up instead of
/// matching names.
struct Roles(Vec<u8>);

impl Roles {
    fn of(language: &Language) -> Roles {
        let count = language.node_kind_count();
        let mut roles = vec![0u8; count];
        for (id, role) in roles.iter_mut().enumerate() {
            let Ok(id) = u16::try_from(id) else { break };
            let Some(kind) = language.node_kind_for_id(id) else {
                continue;
            };
            let named = language.node_kind_is_named(id);
            *role = role_of(kind, named);
        }
        Roles(roles)
    }

    fn get(&self, node: Node<'_>) -> u8 {
        self.0
            .get(usize::from(node.kind_id()))
            .copied()
            .unwrap_or(0)
    }
}

/// The role of a kind, from its name and whether it is named (anonymous nodes, the keywords
/// and punctuation, are neither text nor identifiers).
fn role_of(kind: &str, named: bool) -> u8 {
    let mut role = 0;
    if is_comment(kind) {
        role |= COMMENT;
    }
    if named && is_text(kind) {
        role |= TEXT;
    }
    if is_text_part(kind) {
        role |= TEXT_PART;
    }
    if named && is_identifier(kind) {
        role |= IDENTIFIER;
    }
    role
}

/// Whether a node kind is a comment.
fn is_comment(kind: &str) -> bool {
    kind.contains("comment")
}

/// Whether a node kind is a string or other literal text whose words are not code (its
/// interpolations are, and are walked as code).
fn is_text(kind: &str) -> bool {
    const MARKS: [&str; 9] = [
        "string",
        "heredoc",
        "nowdoc",
        "char_literal",
        "character_literal",
        "rune_literal",
        "regex",
        "text_block",
        "jsx_text",
    ];
    kind == "text" || MARKS.iter().any(|m| kind.contains(m))
}

/// Whether a child of a string is part of its text rather than code inside it.
fn is_text_part(kind: &str) -> bool {
    const MARKS: [&str; 8] = [
        "string", "content", "fragment", "escape", "heredoc", "nowdoc", "quote", "regex",
    ];
    MARKS.iter().any(|m| kind.contains(m)) || kind.ends_with("_start") || kind.ends_with("_end")
}

/// Whether a leaf is an identifier (a name the code uses).
fn is_identifier(kind: &str) -> bool {
    kind.ends_with("identifier")
        || matches!(
            kind,
            "constant" | "name" | "word" | "variable_name" | "command_name"
        )
}

/// The one walk over the tree: comments and strings (not code), identifiers (with counts).
struct Walk<'a> {
    source: &'a [u8],
    roles: &'a Roles,
    lang: Lang,
    /// Where the last Rust doc comment left a fenced block, and the row it was on: a block
    /// runs on only through the doc lines right after it.
    fence: Fence,
    doc_row: Option<usize>,
    def_names: &'a HashSet<u32>,
    skips: Vec<(u32, u32)>,
    idents: HashMap<String, u32>,
}

impl Walk<'_> {
    /// Every node beneath `root`, with a cursor (a node's children are reached in one step
    /// each, where `Node::child(i)` counts from the first child again). The code inside a
    /// string (its interpolations) is walked after the rest, from a list rather than by
    /// recursion: a deeply nested file must not overflow the stack.
    fn node(&mut self, root: Node<'_>) {
        let mut pending = vec![root];
        let mut cursor = root.walk();
        while let Some(start) = pending.pop() {
            cursor.reset(start);
            'nodes: loop {
                let node = cursor.node();
                let role = self.roles.get(node);
                let descend = if role & COMMENT != 0 {
                    self.comment(node);
                    false
                } else if role & TEXT != 0 {
                    self.text(node, &mut pending);
                    false
                } else {
                    true
                };
                if descend {
                    if cursor.goto_first_child() {
                        continue;
                    }
                    if role & IDENTIFIER != 0 {
                        self.ident(node);
                    }
                }
                // On to the next sibling, or up until there is one (never above `start`).
                loop {
                    if cursor.goto_next_sibling() {
                        continue 'nodes;
                    }
                    if !cursor.goto_parent() {
                        break 'nodes;
                    }
                }
            }
        }
    }

    /// A comment is not code, except what a Rust doc comment holds as code and the names its
    /// prose writes as code (`super::doc`).
    fn comment(&mut self, node: Node<'_>) {
        let doc = if self.lang == Lang::Rust {
            node.child_by_field_name("doc")
        } else {
            None
        };
        let Some(doc) = doc else {
            self.prose(node.start_byte(), node.end_byte());
            return;
        };
        let row = node.start_position().row;
        let block = node.kind() == "block_comment";
        if block || self.doc_row.map_or(true, |last| last + 1 != row) {
            self.fence = Fence::Prose;
        }
        let base = doc.start_byte();
        let text = self.source.get(base..doc.end_byte()).unwrap_or(&[]);
        let mut at = node.start_byte();
        for (start, end) in doc::code_ranges(text, &mut self.fence) {
            self.prose(at, base + start);
            at = base + end;
        }
        self.prose(at, node.end_byte());
        if block {
            self.fence = Fence::Prose;
            self.doc_row = None;
        } else {
            self.doc_row = Some(row);
        }
    }

    /// A string: its range is not code except its code children (interpolations), which are
    /// walked later; and a Python module's `__all__` lists names, which are code.
    fn text<'t>(&mut self, node: Node<'t>, pending: &mut Vec<Node<'t>>) {
        if self.lang == Lang::Python {
            if exported_name(node, self.source) {
                return;
            }
            if is_docstring(node) {
                let base = node.start_byte();
                let text = self.source.get(base..node.end_byte()).unwrap_or(&[]);
                let mut at = base;
                for (start, end) in doc::docstring_code_ranges(text) {
                    self.prose(at, base + start);
                    at = base + end;
                }
                self.prose(at, node.end_byte());
                return;
            }
        }
        let mut at = node.start_byte();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() && self.roles.get(child) & TEXT_PART == 0 {
                    self.skip(at, child.start_byte());
                    at = child.end_byte();
                    pending.push(child);
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        self.skip(at, node.end_byte());
    }

    /// The prose of a comment or docstring: not code, but for the names written as code in
    /// it (`doc::prose_code_ranges`).
    fn prose(&mut self, start: usize, end: usize) {
        let text = self.source.get(start..end).unwrap_or(&[]);
        let mut at = start;
        for (a, b) in doc::prose_code_ranges(text) {
            self.skip(at, start + a);
            at = start + b;
        }
        self.skip(at, end);
    }

    fn skip(&mut self, start: usize, end: usize) {
        if start < end {
            let to32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            self.skips.push((to32(start), to32(end)));
        }
    }

    fn ident(&mut self, node: Node<'_>) {
        let start = u32::try_from(node.start_byte()).unwrap_or(u32::MAX);
        if self.def_names.contains(&start) {
            return;
        }
        let Some(text) = self.source.get(node.start_byte()..node.end_byte()) else {
            return;
        };
        if text.is_empty() || text.len() > MAX_IDENT {
            return;
        }
        let Ok(text) = std::str::from_utf8(text) else {
            return;
        };
        match self.idents.get_mut(text) {
            Some(n) => *n = n.saturating_add(1),
            None => {
                self.idents.insert(text.to_string(), 1);
            }
        }
    }
}

/// Whether a Python string is an entry of the module's `__all__` (`__all__ = [...]`,
/// `__all__ += (...)`, `__all__.extend([...])`): the name of what the module exports, which
/// a rename must change too (as Pyright's references count it).
fn exported_name(node: Node<'_>, source: &[u8]) -> bool {
    let Some(list) = node
        .parent()
        .filter(|l| matches!(l.kind(), "list" | "tuple"))
    else {
        return false;
    };
    let Some(holder) = list.parent() else {
        return false;
    };
    let target = match holder.kind() {
        "assignment" | "augmented_assignment" => holder.child_by_field_name("left"),
        "argument_list" => holder
            .parent()
            .filter(|call| call.kind() == "call")
            .and_then(|call| call.child_by_field_name("function"))
            .filter(|f| f.kind() == "attribute")
            .and_then(|f| f.child_by_field_name("object")),
        _ => None,
    };
    target.is_some_and(|t| t.kind() == "identifier" && t.utf8_text(source) == Ok("__all__"))
}

/// Whether a Python string is a docstring: the first statement of a module, class or
/// function, and all of it.
fn is_docstring(node: Node<'_>) -> bool {
    let Some(statement) = node
        .parent()
        .filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)
    else {
        return false;
    };
    let Some(body) = statement.parent() else {
        return false;
    };
    let first = body
        .named_child(0)
        .is_some_and(|n| n.id() == statement.id());
    let of_definition = match body.kind() {
        "module" => true,
        "block" => body
            .parent()
            .is_some_and(|d| matches!(d.kind(), "function_definition" | "class_definition")),
        _ => false,
    };
    first && of_definition
}

/// The error and missing nodes beneath `root`, in source order, at most `MAX_ERRORS`.
fn syntax_errors(root: Node<'_>, source: &[u8], out: &mut Vec<SyntaxError>) {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if out.len() >= MAX_ERRORS {
            return;
        }
        let at = node.start_position();
        let (line, column) = (line_number(at.row), line_number(at.column));
        if node.is_missing() {
            out.push(SyntaxError {
                line,
                column,
                text: format!("missing {}", quoted(node.kind())),
            });
            continue;
        }
        if node.is_error() {
            let text = node.utf8_text(source).unwrap_or("");
            let first = text.lines().next().unwrap_or("").trim();
            let shown = crate::text::shorten(first, 40);
            out.push(SyntaxError {
                line,
                column,
                text: if shown.is_empty() {
                    "syntax error".to_string()
                } else {
                    format!("unexpected {}", quoted(&shown))
                },
            });
            continue;
        }
        if !node.has_error() {
            continue;
        }
        for i in (0..node.child_count()).rev() {
            if let Some(child) = node.child(i as u32) {
                stack.push(child);
            }
        }
    }
}

fn quoted(text: &str) -> String {
    format!("{text:?}")
}

/// The tree of a source as an S-expression, for writing queries (`sneaky-outline --tree`).
pub fn tree_text(lang: Lang, source: &[u8]) -> Option<String> {
    let mut parser = Parser::new();
    parser.set_language(&language(lang)).ok()?;
    let tree = parser.parse(source, None)?;
    Some(tree.root_node().to_sexp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        for lang in Lang::ALL {
            if let Err(e) = tagger(lang) {
                panic!("{e}");
            }
        }
    }

    /// A grammar's node types (what each kind's fields and children can be), as its crate
    /// ships them.
    fn node_types(lang: Lang) -> &'static str {
        match lang {
            Lang::Rust => tree_sitter_rust::NODE_TYPES,
            Lang::Python => tree_sitter_python::NODE_TYPES,
            Lang::JavaScript => tree_sitter_javascript::NODE_TYPES,
            Lang::TypeScript => tree_sitter_typescript::TYPESCRIPT_NODE_TYPES,
            Lang::Tsx => tree_sitter_typescript::TSX_NODE_TYPES,
            Lang::Go => tree_sitter_go::NODE_TYPES,
            Lang::Java => tree_sitter_java::NODE_TYPES,
            Lang::C => tree_sitter_c::NODE_TYPES,
            Lang::Cpp => tree_sitter_cpp::NODE_TYPES,
            Lang::CSharp => tree_sitter_c_sharp::NODE_TYPES,
            Lang::Ruby => tree_sitter_ruby::NODE_TYPES,
            Lang::Php => tree_sitter_php::PHP_NODE_TYPES,
            Lang::Bash => tree_sitter_bash::NODE_TYPES,
        }
    }

    /// The named kinds that can hold, at any depth, a node one of `lang`'s patterns starts at:
    /// a kind holds when one of its fields or children can be such a node or a kind that
    /// holds (supertypes stand for their subtypes).
    fn holding_kinds(lang: Lang) -> std::collections::BTreeSet<String> {
        use std::collections::{BTreeMap, BTreeSet};
        let types: serde_json::Value = serde_json::from_str(node_types(lang)).unwrap();
        let named = |list: &serde_json::Value| -> Vec<String> {
            let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
            list.iter()
                .filter(|t| t["named"] == true)
                .map(|t| t["type"].as_str().unwrap().to_string())
                .collect()
        };
        let mut subtypes: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in types
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["named"] == true)
        {
            let kind = t["type"].as_str().unwrap().to_string();
            if let Some(subs) = t.get("subtypes") {
                subtypes.insert(kind, named(subs));
                continue;
            }
            let mut list = named(&t["children"]["types"]);
            for field in t["fields"].as_object().into_iter().flat_map(|f| f.values()) {
                list.extend(named(&field["types"]));
            }
            children.insert(kind, list);
        }
        fn concrete(
            kind: &str,
            subtypes: &BTreeMap<String, Vec<String>>,
            out: &mut BTreeSet<String>,
        ) {
            match subtypes.get(kind) {
                Some(subs) => subs.iter().for_each(|s| concrete(s, subtypes, out)),
                None => {
                    out.insert(kind.to_string());
                }
            }
        }
        let children: BTreeMap<String, BTreeSet<String>> = children
            .into_iter()
            .map(|(kind, list)| {
                let mut all = BTreeSet::new();
                list.iter().for_each(|c| concrete(c, &subtypes, &mut all));
                (kind, all)
            })
            .collect();
        let grammar = language(lang);
        let starts: BTreeSet<String> = match tagger(lang).unwrap().patterns.outermost() {
            Some(ids) => ids
                .into_iter()
                .map(|id| grammar.node_kind_for_id(id).unwrap().to_string())
                .collect(),
            None => children.keys().cloned().collect(),
        };
        let mut holds = BTreeSet::new();
        loop {
            let more: Vec<&String> = children
                .iter()
                .filter(|(kind, list)| {
                    !holds.contains(*kind)
                        && list.iter().any(|c| starts.contains(c) || holds.contains(c))
                })
                .map(|(kind, _)| kind)
                .collect();
            if more.is_empty() {
                return holds;
            }
            holds.extend(more.into_iter().cloned());
        }
    }

    /// src/code/holds.rs is made from the grammars and the queries; regenerate it with
    /// `SNEAKY_REGENERATE=1 cargo test --lib code::parse::tests::the_kinds_that_hold`.
    /// Each kind of `super::braced`'s lists is one of its grammar's kinds that hold (a name
    /// the grammar does not have would be passed by in silence).
    #[test]
    fn the_braced_kinds_are_kinds_that_hold() {
        for lang in Lang::ALL {
            let holding = holding_kinds(lang);
            for kind in super::super::braced::kinds(lang) {
                assert!(holding.contains(kind), "{}: {kind}", lang.name());
            }
        }
    }

    #[test]
    fn the_kinds_that_hold_definitions_follow_the_grammars_and_queries() {
        let mut text = String::from(
            "//! Generated from the grammars' node types and the tags queries by\n\
             //! `SNEAKY_REGENERATE=1 cargo test --lib code::parse::tests::the_kinds_that_hold`: do\n\
             //! not edit. By language, the named node kinds that can hold, at any depth, a node a\n\
             //! pattern of its query starts at, one per line and sorted: the walk for definitions\n\
             //! (`parse::each_node`) goes into no other kind, as nothing it looks for can be there.\n\
             \n\
             use super::Lang;\n\
             \n\
             pub fn kinds(lang: Lang) -> &'static str {\n    match lang {\n",
        );
        for lang in Lang::ALL {
            text.push_str(&format!(
                "        Lang::{lang:?} => {},\n",
                lang_const(lang)
            ));
        }
        text.push_str("    }\n}\n");
        for lang in Lang::ALL {
            text.push_str(&format!("\nconst {}: &str = \"\n", lang_const(lang)));
            for kind in holding_kinds(lang) {
                text.push_str(&kind);
                text.push('\n');
            }
            text.push_str("\";\n");
        }
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/code/holds.rs");
        if std::env::var_os("SNEAKY_REGENERATE").is_some() {
            std::fs::write(&path, &text).unwrap();
            return;
        }
        assert!(
            std::fs::read_to_string(&path).unwrap_or_default() == text,
            "src/code/holds.rs is out of date: run `SNEAKY_REGENERATE=1 cargo test --lib \
             code::parse::tests::the_kinds_that_hold`"
        );
    }

    fn lang_const(lang: Lang) -> String {
        format!("{lang:?}").to_uppercase()
    }

    #[test]
    fn a_focused_parse_finds_the_definitions_there_and_around() {
        let source = b"mod outer {\n    pub struct Searcher;\n    impl Searcher {\n        fn search(&self) {}\n        fn other() { search(); }\n    }\n}\nfn search() {}\n";
        let text = std::str::from_utf8(source).unwrap();
        let full = tags(Lang::Rust, source).unwrap();
        let focus: Vec<(u32, u32)> = text
            .match_indices("search(")
            .map(|(at, _)| (at as u32, at as u32 + 6))
            .collect();
        let focused = tags_for(Lang::Rust, source, Want::At(&focus)).unwrap();
        let paths = |t: &FileTags| -> Vec<(String, u32, SymbolKind)> {
            (0..t.defs.len())
                .filter(|&i| t.defs[i].name == "search")
                .map(|i| (t.name_path(i).join("/"), t.defs[i].line, t.defs[i].kind))
                .collect()
        };
        assert_eq!(paths(&focused), paths(&full));
        assert_eq!(
            paths(&focused),
            [
                ("outer/Searcher/search".to_string(), 4, SymbolKind::Method),
                ("search".to_string(), 8, SymbolKind::Function)
            ]
        );
        // Only what overlaps the ranges: not the struct, and no comments or identifiers.
        assert!(focused.defs.len() < full.defs.len());
        assert!(focused
            .defs
            .iter()
            .all(|d| d.name != "Searcher" || d.kind == SymbolKind::Impl));
        assert!(focused.idents.is_empty() && !full.idents.is_empty());
    }

    #[test]
    fn csharp_operators_are_named_by_their_token_or_type() {
        let source = b"struct Money {\n    public static Money operator +(Money a, Money b) => a;\n    public static bool operator ==(Money a, Money b) { return true; }\n    [Obsolete]\n    public static implicit operator System.Decimal(Money m) => 0;\n    public static explicit operator Money(int cents) { return default; }\n}\n";
        for want in [Want::All, Want::Defs] {
            let found: Vec<(String, u32, SymbolKind)> = tags_for(Lang::CSharp, source, want)
                .unwrap()
                .defs
                .iter()
                .map(|d| (d.name.clone(), d.line, d.kind))
                .collect();
            assert_eq!(
                found,
                [
                    ("Money".to_string(), 1, SymbolKind::Struct),
                    ("operator+".to_string(), 2, SymbolKind::Method),
                    ("operator==".to_string(), 3, SymbolKind::Method),
                    ("operator System.Decimal".to_string(), 5, SymbolKind::Method),
                    ("operator Money".to_string(), 6, SymbolKind::Method),
                ]
            );
        }
    }

    #[test]
    fn csharp_reads_the_first_branch_of_an_if() {
        // A body under `#if` and its `;` under `#else`: the skimmed parse reads the first
        // branch, without the directives (in the head's signature too); the whole parse of
        // both has an error.
        let src = b"interface I\n{\n    I F(int a)\n#if NET\n        => this;\n#else\n        ;\n#endif\n#if A\n    void G();\n#else\n    void H();\n#endif\n#if B\n    [Test]\n    void J()\n#else\n    [SetUp]\n    void K()\n#endif\n    {\n    }\n}\n";
        let defs = tags_for(Lang::CSharp, src, Want::Defs).unwrap().defs;
        let got: Vec<(&str, u32, &str)> = defs
            .iter()
            .map(|d| (d.name.as_str(), d.end_line, d.signature.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("I", 23, "interface I"),
                ("F", 5, "I F(int a)"),
                ("G", 10, "void G()"),
                ("J", 22, "void J()")
            ]
        );
    }

    #[test]
    fn type_names_lose_their_decoration() {
        assert_eq!(type_base("Foo<T>"), "Foo");
        assert_eq!(type_base("crate::a::Foo<T>"), "Foo");
        assert_eq!(type_base("*Server"), "Server");
        assert_eq!(type_base("&'a mut Foo"), "Foo");
        assert_eq!(type_base("List[T]"), "List");
    }

    #[test]
    fn ranges_merge() {
        assert_eq!(
            merged(vec![(5, 9), (0, 2), (2, 3), (8, 12)]),
            vec![(0, 3), (5, 12)]
        );
    }

    /// Sources that exercise each skimmed language's rules (`skim`): bodies that go, and
    /// what must stay (fields, variants, local definitions, a callback's variables, type
    /// literals, anonymous classes, strings and comments that hold braces).
    const SKIM_SAMPLES: &[(Lang, &str)] = &[
        (
            Lang::Rust,
            "//! doc\n#![allow(x)]\n/// A\n#[derive(Debug)]\npub struct S { #[serde(default)] x: u8, y: Vec<u8> }\npub enum E { A { f: u8 }, B(u8), C = { 1 + 2 } }\nimpl S {\n    /// m\n    pub fn m(&self) -> &'static str { let c = '{'; let s = r#\"}\"#; \"}\" }\n    const K: u8 = { const L: u8 = 1; L };\n}\nfn outer() { fn inner() {} struct Local { a: u8 } let x = 1; static Y: u8 = 2; }\nmacro_rules! m { ($x:expr) => { fn gen() {} }; }\nm! { fn hidden() {} }\nconst F: fn() = || { const Z: u8 = 0; };\ntrait T { type A; fn f(&self) { if true { } } }\nmod inner_mod { pub fn g<T: Fn() -> u8>(t: T) -> impl Fn() { move || {} } }\nm!(a, { b(c) }, [d]);\nfn after() { if !(x) { y!() } }\n",
        ),
        (
            Lang::JavaScript,
            "// c\nconst a = 1, f = function () { var local = 1; }, g = (x) => { let y = x; };\nonmessage = function (ev) { let result = ev.data; };\nvar helper = (this && this.helper) || function (m) { var r = {}; return r; };\nexports.run = function run(x) { const s = `${x}}` + '}' + \"{\"; return /[{]/.test(s); };\nclass A extends B { static z = 1; #p = 2; constructor() { super(); this.q = () => { var w; }; } get v() { return 1; } m() { return { n() { var k; } }; } }\ndescribe('x', function () { var inCallback = 1; it('y', () => { const deep = 2; }); });\n(function () { var iife = 1; })();\nif (a) { var top = 1; }\nx&&(o.h=e=>e);\n",
        ),
        (
            Lang::TypeScript,
            "interface I { a: string; m(x: number): void; n?: { deep: number } }\ntype T = { k: string };\nenum E { A, B = 2 }\nnamespace N { export function f(o: { p: number }): void { let q: { r: string } = { r: '' }; } }\nexport const h = async (x: number): Promise<void> => { const y = 1; };\nabstract class C { abstract m(): void; private f = 1; g(a: string): string { return a; } }\nfunction j() { const lit = { a: 1 }; if (lit) { let b: number = 2; } }\n",
        ),
        (
            Lang::Go,
            "package p\n\nimport \"fmt\"\n\ntype S struct {\n\tA int\n\tB struct{ C int }\n}\n\ntype I interface{ M() int }\n\nconst K = 1\n\nvar V = func() int { var x = 1; return x }()\n\nvar tests = []struct{ f func() }{\n\t{func() {\n\t\tvar k int\n\t\t_ = k\n\t}},\n}\n\nfunc F(a int) int {\n\tvar local = 1\n\ttype T int\n\tx := struct{ D int }{1}\n\tvar i interface{} = x\n\tfmt.Println(`}`, '{', \"{\", i)\n\treturn local\n}\n\nfunc (s *S) M() int {\n\tif s.A > 0 {\n\t\treturn 1\n\t}\n\treturn 0\n}\n",
        ),
        (
            Lang::Go,
            "package q\n\nimport (\n\t\"fmt\" // x\n\ts \"strings\"\n)\n\nimport \"os\"\n\ntype List[T any] struct{ v []T }\n\nfunc (l *List[T]) Len(x, y int) (n int, err error) {\n\treturn len(l.v), nil\n}\n\nfunc Map[S ~[]E, E any](s S, f func(E) E) S {\n\tvar local = 1\n\treturn s\n}\n\nfunc asm(x int) int\n\nfunc ret(a int) interface{ M() } {\n\treturn nil\n}\n\nfunc withType(p struct{ A int }) interface{ M() } {\n\treturn nil\n}\n\nfunc table() {\n\ttests := []struct {\n\t\tin  string\n\t}{\n\t\t{\"a\"},\n\t\t{in: \"b\"},\n\t}\n\t_ = tests\n}\n\nvar cases = map[string]struct{ k int }{\"x\": {}, \"y\": {k: 1}}\n\nvar fns = []func(){func() { var inLiteral int; _ = inLiteral }}\n\nfunc multi(\n\ta int,\n) (\n\tc int,\n) {\n\treturn 0\n}\n",
        ),
        (
            Lang::Java,
            "package p;\npublic class A<T> extends B {\n  private int x = 1;\n  @Override public String toString() { return \"}\"; }\n  void run() { Runnable r = new Runnable() { int count; public void run() { } }; class Local { void m() {} } }\n  static { init(); }\n  enum E { X { void f() {} }, Y; int z; }\n  String s = \"\"\"\n    {\n    \"\"\";\n}\ninterface I { void m(); default int n() { return 1; } }\n",
        ),
        (
            Lang::CSharp,
            "namespace N {\n  public class A {\n    public int P { get; set; }\n    public int Q { get { return 1; } }\n    private int f;\n    public void M() { int Local(int x) => x; var s = $\"{f}}}\"; var v = @\"}{\"; if (f > 0) { f--; } }\n    public void N() { Run(() => { int Inner() => 2; }); }\n    public A() : base() { }\n  }\n  public record R(int X);\n  public struct S { public int Y; }\n  public interface I { void M(); }\n  public enum E { A, B }\n}\n",
        ),
        (
            Lang::Php,
            "<html><?php echo '}'; ?>\n<?php\nnamespace App;\nclass A {\n  public $x = '}';\n  const K = 1;\n  public function m() {\n    $s = <<<EOT\n}{\nEOT;\n    return function () { $y = 1; };\n  }\n}\nfunction f() {\n  $a = \"}\"; // }\n  # {\n  if ($a) { g(); }\n}\ninterface I { public function m(); }\ntrait T { public function t() { } }\nenum E: string { case A = 'a'; }\n",
        ),
        (
            Lang::C,
            "#include <stdio.h>\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\nstruct S { int a; struct { int b; } inner; };\ntypedef struct { int c; } T;\nenum E { X, Y };\nstatic int f(struct S *s) { return s->a; /* } */ }\nint g(void) {\n#ifdef A\n  return 1;\n#else\n  return 2;\n#endif\n}\nvoid h(void) { struct L { int d; } l; typedef int I; (void)l; }\nint arr[] = { 1, 2, 3 };\nconst char *str = \"}{\";\n",
        ),
        (
            Lang::Cpp,
            // A namespace that holds only members defined outside their classes.
            "namespace ns {\nA::A() : x_(0) {}\nA::~A() { delete p_; }\nchar* A::F(int n) { std::sort(a, b); return nullptr; }\n}\nnamespace m {\nvoid f() { std::sort(a, b); }\n}\n",
        ),
        (
            Lang::Cpp,
            // Namespaces that each hold one declaration of another shape.
            "namespace a {\nIterator* NewIterator(DB* db);\n}\nnamespace b {\nTEST(CRC, Results) { char buf[32]; }\n}\nnamespace c {\nbool operator<(const S& x, const S& y) { return x.a < y.a; }\n}\nnamespace d {\nstatic const int kLevels = 7;\n}\nnamespace e {\nint f() { int y = a * g(x); h(y); return y; }\n}\n",
        ),
        (
            Lang::Cpp,
            "namespace n {\nclass A : public B {\n public:\n  int f() const { return x; }\n  int x;\n  void g();\n};\nvoid A::g() { auto l = [](int a) { return a; }; }\ntemplate <class T> struct W { T v; };\nusing U = int;\n}\nint main() { std::string s(\"x\"); struct Local {}; }\n",
        ),
    ];

    /// The whole parse's definitions, and the skimmed parse's (with no fallback: it must
    /// parse cleanly), the same whether the parser is given the ranges between the holes
    /// (find_symbol's parse) or the bytes left one after another (outline's).
    fn whole_and_skimmed(lang: Lang, source: &[u8]) -> (Vec<Def>, Vec<Def>, usize) {
        let whole = tags(lang, source).unwrap().defs;
        let holes = skim::holes(lang, source);
        let tagger = tagger(lang).unwrap();
        let tree = parse(lang, source, &holes).unwrap();
        assert!(
            !tree.root_node().has_error(),
            "the skimmed parse of {} has an error",
            lang.name()
        );
        let ranged = definitions(
            tagger,
            tree.root_node(),
            &Place::whole(source),
            &[],
            Part::Defs,
        );
        let compact = Compact::new(source, &holes);
        let tree = parse(lang, &compact.text, &[]).unwrap();
        assert!(!tree.root_node().has_error(), "{}", lang.name());
        let place = Place::compact(source, &compact);
        let skimmed = definitions(tagger, tree.root_node(), &place, &[], Part::Defs);
        assert_eq!(skimmed, ranged, "{}", lang.name());
        (whole, skimmed, holes.len())
    }

    /// Our matcher (`pattern`) finds the matches tree-sitter's `Query` finds, pattern and
    /// captures alike, in every language: on the samples, on real files, and on every file
    /// of the trees `SNEAKY_MATCH_TREES` names (colon-separated; a check to run over big
    /// trees by hand).
    #[test]
    fn the_patterns_match_as_tree_sitters_query_does() {
        let mut sources: Vec<(Lang, Vec<u8>)> = SKIM_SAMPLES
            .iter()
            .chain(OTHER_SAMPLES)
            .map(|&(lang, s)| (lang, s.as_bytes().to_vec()))
            .collect();
        for (krate, path, lang) in [
            ("tree-sitter", "src/query.c", Lang::C),
            ("regex-syntax", "src/ast/parse.rs", Lang::Rust),
            ("tree-sitter-javascript", "grammar.js", Lang::JavaScript),
            ("blake3", "c/test.py", Lang::Python),
            (
                "seccompiler",
                "tools/generate_syscall_tables.sh",
                Lang::Bash,
            ),
        ] {
            sources.push((
                lang,
                std::fs::read(registry_crate(krate).join(path)).unwrap(),
            ));
        }
        let trees = std::env::var("SNEAKY_MATCH_TREES").unwrap_or_default();
        for tree in trees.split(':').filter(|t| !t.is_empty()) {
            let mut dirs = vec![std::path::PathBuf::from(tree)];
            while let Some(dir) = dirs.pop() {
                for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                    let (path, kind) = (entry.path(), entry.file_type().unwrap());
                    let lang = path.to_str().and_then(Lang::of_name);
                    match (kind.is_dir(), lang) {
                        (true, _) => dirs.push(path),
                        (false, Some(lang)) if kind.is_file() => {
                            sources.push((lang, std::fs::read(&path).unwrap()));
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut langs = HashSet::new();
        let mut total = 0;
        for (lang, source) in &sources {
            let tree = parse(*lang, source, &[]).unwrap();
            let (ours, theirs) = both_matches(*lang, tree.root_node(), source);
            assert_eq!(
                ours,
                theirs,
                "{}: {}",
                lang.name(),
                String::from_utf8_lossy(source)
            );
            total += ours.len();
            langs.insert(*lang);
        }
        assert_eq!(langs.len(), Lang::ALL.len() - 1, "every language but TSX");
        assert!(total > 500, "{total} matches");
    }

    /// A match as a set of (pattern, sorted captures by name and node), by our patterns and
    /// by tree-sitter's query.
    #[allow(clippy::type_complexity)]
    fn both_matches(
        lang: Lang,
        root: Node<'_>,
        source: &[u8],
    ) -> (
        std::collections::BTreeSet<(usize, Vec<(String, usize, usize)>)>,
        std::collections::BTreeSet<(usize, Vec<(String, usize, usize)>)>,
    ) {
        let tagger = tagger(lang).unwrap();
        let names = tagger.patterns.capture_names();
        let mut ours = std::collections::BTreeSet::new();
        let mut matches = Vec::new();
        let mut scratch = Scratch::default();
        let descend = |node: Node<'_>| {
            let kind = usize::from(node.kind_id());
            tagger.holds.get(kind).copied().unwrap_or(true) || node.has_error()
        };
        each_node(root, (0, usize::MAX), &descend, &mut |node| {
            matches.clear();
            tagger
                .patterns
                .matches_at(node, source, &mut scratch, &mut matches);
            for m in &matches {
                let mut captures: Vec<_> = m
                    .captures
                    .iter()
                    .map(|(c, n)| (names[*c as usize].clone(), n.start_byte(), n.end_byte()))
                    .collect();
                captures.sort();
                ours.insert((m.pattern, captures));
            }
        });
        let query = tree_sitter::Query::new(&language(lang), lang.tags_query()).unwrap();
        let names = query.capture_names();
        let mut theirs = std::collections::BTreeSet::new();
        use tree_sitter::StreamingIterator;
        let mut cursor = tree_sitter::QueryCursor::new();
        let mut found = cursor.matches(&query, root, source);
        while let Some(m) = found.next() {
            let mut captures: Vec<_> = m
                .captures
                .iter()
                .map(|c| {
                    let n = c.node;
                    (
                        names[c.index as usize].to_string(),
                        n.start_byte(),
                        n.end_byte(),
                    )
                })
                .collect();
            captures.sort();
            theirs.insert((m.pattern_index, captures));
        }
        (ours, theirs)
    }

    /// Samples of the languages parsed whole (no skim).
    const OTHER_SAMPLES: &[(Lang, &str)] = &[
        (
            Lang::Python,
            "import os
X = 1
class A(B):
    y: int = 2
    def m(self, a):
        z = 3
        def inner(): pass
@dec
def f(*a, **k):
    return lambda x: x
",
        ),
        (
            Lang::Ruby,
            "module M
  class A < B
    attr_reader :x, :y
    K = 1
    def m(a) = a
    def self.s; end
    alias n m
  end
end
",
        ),
        (
            Lang::Bash,
            "f() { local a=1; }
function g { echo; }
X=2
",
        ),
    ];

    /// A file the skim would leave little of out is parsed whole at once (a header of
    /// declarations); one whose bodies go is skimmed.
    #[test]
    fn only_a_skim_that_leaves_much_out_is_worth_a_second_parse() {
        let header = b"int v;\nstruct S { int x; };\nstatic int g(void) { return 1; }\n";
        let holes = skim::holes(Lang::C, header);
        assert_eq!(holes.len(), 1);
        assert!(!worth_skimming(&holes, header));
        let source =
            b"int f(int a) {\n  int b = a * 2;\n  if (b > 3) { return b - 1; }\n  return b;\n}\n";
        let holes = skim::holes(Lang::C, source);
        assert!(worth_skimming(&holes, source));
        assert!(!worth_skimming(&[], source));
    }

    #[test]
    fn a_skimmed_parse_finds_what_the_whole_parse_finds() {
        for &(lang, source) in SKIM_SAMPLES {
            let (whole, skimmed, holes) = whole_and_skimmed(lang, source.as_bytes());
            assert!(holes > 0, "{}: nothing left out", lang.name());
            assert_eq!(skimmed, whole, "{}", lang.name());
            let defs = tags_for(lang, source.as_bytes(), Want::Defs).unwrap();
            assert_eq!(defs.defs, whole);
            assert_eq!(defs.part, Part::Defs);
        }
    }

    /// The same on real files that are not ours: cargo's registry, as Cargo.lock pins the
    /// crates (benches/skim_same.py compares every file there, and more trees).
    #[test]
    fn a_skimmed_parse_of_real_files_finds_what_the_whole_parse_finds() {
        let files: &[(&str, &str, Lang)] = &[
            ("regex-syntax", "src/ast/parse.rs", Lang::Rust),
            ("regex-syntax", "src/hir/mod.rs", Lang::Rust),
            ("tokio", "src/runtime/builder.rs", Lang::Rust),
            ("tree-sitter", "src/subtree.c", Lang::C),
            ("tree-sitter", "src/tree_cursor.c", Lang::C),
            ("tree-sitter", "src/query.c", Lang::C),
            ("tree-sitter", "src/unicode/utf16.h", Lang::C),
            ("tree-sitter-javascript", "grammar.js", Lang::JavaScript),
            (
                "tree-sitter-typescript",
                "common/define-grammar.js",
                Lang::JavaScript,
            ),
            ("tree-sitter", "src/parser.c", Lang::C),
        ];
        let mut left_out = 0;
        for &(krate, path, lang) in files {
            let path = registry_crate(krate).join(path);
            let source = std::fs::read(&path).unwrap();
            let whole = tags(lang, &source).unwrap();
            let defs = tags_for(lang, &source, Want::Defs).unwrap().defs;
            assert_eq!(defs, whole.defs, "{}", path.display());
            // A file with syntax errors may be parsed whole after all (`tags_for`); one
            // without must be skimmed cleanly.
            if whole.errors.is_empty() {
                let (_, skimmed, holes) = whole_and_skimmed(lang, &source);
                assert_eq!(skimmed, whole.defs, "{}", path.display());
                left_out += holes;
            }
        }
        assert!(left_out > 1000, "only {left_out} ranges left out");
    }

    /// A crate's unpacked source in cargo's registry, at the version Cargo.lock pins.
    fn registry_crate(name: &str) -> std::path::PathBuf {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
        let mut lines = lock.lines();
        let mut version = None;
        while let Some(line) = lines.next() {
            if line == format!("name = \"{name}\"") {
                version = lines.next().map(|v| {
                    v.trim_start_matches("version = \"")
                        .trim_end_matches('"')
                        .to_string()
                });
                break;
            }
        }
        let version = version.unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
        let home = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo"))
            })
            .unwrap();
        std::fs::read_dir(home.join("registry/src"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|d| d.path().join(format!("{name}-{version}")))
            .find(|p| p.is_dir())
            .unwrap_or_else(|| panic!("{name}-{version} is not in cargo's registry"))
    }

    #[test]
    fn a_skimmed_parse_stands_when_its_errors_are_away_from_the_cuts() {
        let errors_away = |source: &[u8]| {
            let holes = skim::holes(Lang::Cpp, source);
            let compact = Compact::new(source, &holes);
            let tree = parse(Lang::Cpp, &compact.text, &[]).unwrap();
            assert!(tree.root_node().has_error());
            errors_away_from_cuts(tree.root_node(), &compact, source.len())
        };
        // A pointer to a member function the grammar cannot read, two lines above a body
        // that goes: the file's own error.
        assert!(errors_away(
            b"struct A {\n  void (B::*method)(int);\n};\nint f() { return 1; }\n"
        ));
        // The same error on the line of a cut: maybe the skim's.
        assert!(!errors_away(
            b"struct A {\n  void (B::*method)(int); int f() { return 1; }\n};\n"
        ));
    }

    /// {fmt}'s shape: a namespace opened and closed by macros alone on their lines, and
    /// annotations before constructors and methods. Neither the skimmed parse (errors beside
    /// its cuts) nor a whole one (its recovery lost the class and everything in it) reads
    /// it; with every body kept and only the macros and comments left out, it is clean.
    #[test]
    fn a_parse_without_the_macros_alone_keeps_the_bodies_when_the_skim_misreads() {
        let source = b"FMT_BEGIN_NAMESPACE\n\ntemplate <typename Char> class basic_string_view {\n public:\n  FMT_CONSTEXPR basic_string_view(const Char* s) : data_(s), size_(0) {\n#if FMT_HAS_BUILTIN(__builtin_strlen)\n    size_ = __builtin_strlen(s);\n#endif\n  }\n  FMT_CONSTEXPR auto size() const noexcept -> size_t { return size_; }\n\n private:\n  const Char* data_;\n  size_t size_;\n};\n\nFMT_END_NAMESPACE\n";
        let names = |t: &FileTags| -> Vec<(String, u32)> {
            t.defs.iter().map(|d| (d.name.clone(), d.line)).collect()
        };
        let whole = tags(Lang::Cpp, source).unwrap();
        assert!(!names(&whole).contains(&("basic_string_view".to_string(), 3)));
        let outline = tags_for(Lang::Cpp, source, Want::Defs).unwrap();
        assert_eq!(
            names(&outline),
            [
                ("basic_string_view".to_string(), 3),
                ("basic_string_view".to_string(), 5),
                ("size".to_string(), 10),
                ("data_".to_string(), 13),
                ("size_".to_string(), 14)
            ]
        );
        // find_symbol's parse of the places where a name is, mapped into the shorter text.
        let text = std::str::from_utf8(source).unwrap();
        let focus: Vec<(u32, u32)> = text
            .match_indices("size")
            .map(|(at, _)| (at as u32, at as u32 + 4))
            .collect();
        let focused = tags_for(Lang::Cpp, source, Want::At(&focus)).unwrap();
        assert!(names(&focused).contains(&("size".to_string(), 10)));
        assert!(names(&focused).contains(&("basic_string_view".to_string(), 3)));
    }

    /// libstdc++'s shape: a constructor after an annotation macro on its line that the skim
    /// does not take for one (`CONSTEXPR`, without an `_`: an error beside the cut of its
    /// body), and a body of `__try`/`__catch` (macros for `try` and
    /// `catch`). The skimmed parse recovered, and stands; the plain parse, which it spares,
    /// reads `__catch(...) { … }` as a function.
    #[test]
    fn a_cpp_skim_whose_error_is_a_macros_stands_when_it_recovered() {
        let source = b"namespace std _GLIBCXX_VISIBILITY(default)\n{\n  template<typename _Tp>\n    class list\n    {\n    public:\n      void\n      _M_fill(int __n)\n      {\n\t__try\n\t  {\n\t    for (; __n; --__n)\n\t      push_back(__n);\n\t  }\n\t__catch(...)\n\t  {\n\t    clear();\n\t    __throw_exception_again;\n\t  }\n      }\n\n      explicit CONSTEXPR list(int __n) : _M_n(__n) { _M_fill(__n); }\n\n      int _M_n;\n    };\n}\n";
        let compact = Compact::new(source, &skimmed(Lang::Cpp, source).holes);
        let tree = parse(Lang::Cpp, &compact.text, &[]).unwrap();
        assert!(!errors_away_from_cuts(
            tree.root_node(),
            &compact,
            source.len()
        ));
        assert!(macros_misread(
            Lang::Cpp,
            tree.root_node(),
            compact.text.len()
        ));
        assert!(!macros_misread(
            Lang::Rust,
            tree.root_node(),
            compact.text.len()
        ));
        let names = |t: &FileTags| -> Vec<(String, u32, &str)> {
            t.defs
                .iter()
                .map(|d| (d.name.clone(), d.line, d.kind.as_str()))
                .collect()
        };
        let whole = tags(Lang::Cpp, source).unwrap();
        assert!(names(&whole).contains(&("__catch".to_string(), 15, "function")));
        let outline = tags_for(Lang::Cpp, source, Want::Defs).unwrap();
        assert_eq!(
            names(&outline),
            [
                ("std".to_string(), 1, "module"),
                ("list".to_string(), 4, "class"),
                ("_M_fill".to_string(), 8, "method"),
                ("list".to_string(), 22, "method"),
                ("_M_n".to_string(), 24, "field")
            ]
        );
    }

    /// The places of `name` in `text`, as find_symbol's grep gives them (whole words).
    fn places_of(text: &str, name: &str) -> Vec<(u32, u32)> {
        let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        let bytes = text.as_bytes();
        text.match_indices(name)
            .filter(|&(at, _)| {
                !word(at.checked_sub(1).and_then(|i| bytes.get(i)))
                    && !word(bytes.get(at + name.len()))
            })
            .map(|(at, _)| (at as u32, (at + name.len()) as u32))
            .collect()
    }

    /// The bytes after the start of the last hole need not be handed over: the parse finds
    /// the same, or, where it needs the whole file, says so (`CUT_SHORT`).
    #[test]
    fn a_file_cut_at_its_last_hole_parses_as_it_would_whole() {
        let cut_parse = |source: &str, name: &str| {
            let places = places_of(source, name);
            let skim = skim::focused(Lang::Rust, source.as_bytes(), &places);
            let holes: Vec<(u32, u32)> = skim
                .holes
                .iter()
                .map(|&(s, e)| (s as u32, e as u32))
                .collect();
            let &(start, end) = holes.last().unwrap();
            assert_eq!(end as usize, source.trim_end().len(), "the rest is a hole");
            let want = Want::Skimmed(&skim.places, &holes);
            let whole = tags_for(Lang::Rust, source.as_bytes(), want);
            (
                tags_for(Lang::Rust, &source.as_bytes()[..start as usize], want),
                whole,
            )
        };
        let (cut, whole) = cut_parse(
            "impl S {\n    fn new() -> S {\n        S\n    }\n}\n\nfn later() {\n    1\n}\n",
            "new",
        );
        assert_eq!(cut, whole);
        assert_eq!(cut.unwrap().defs[1].name, "new");
        // An error where the name is: the parse with every body needs the rest.
        let (cut, whole) = cut_parse(
            "impl S {\n    fn new( -> S {\n        S\n    }\n}\n\nfn later() {\n    1\n}\n",
            "new",
        );
        assert_eq!(cut, Err(CUT_SHORT.to_string()));
        assert!(whole.is_ok());
        // Holes out of order are refused, not read.
        let want = Want::Skimmed(&[(3, 6)], &[(20, 30), (10, 12)]);
        assert!(tags_for(Lang::Rust, b"fn new() {}\nfn later() {}\n", want).is_err());
    }

    /// For every name of every sample, a parse for its places (the blocks and statements
    /// without one left out, the strings passed by) finds its definitions as the whole
    /// parse does: at the same places, of the same kind, head and span, in the same parent.
    #[test]
    fn a_focused_parse_finds_every_name_where_the_whole_parse_does() {
        let described = |tags: &FileTags, name: &str| -> Vec<String> {
            let mut found: Vec<String> = tags
                .defs
                .iter()
                .filter(|d| d.name == name)
                .map(|d| {
                    let parent = d.parent.map(|p| tags.defs[p as usize].name.clone());
                    format!(
                        "{:?} {} {}:{} {}-{} {:?} {:?} {:?}",
                        d.kind,
                        d.name,
                        d.line,
                        d.column,
                        d.start_line,
                        d.end_line,
                        d.signature,
                        d.owner,
                        parent
                    )
                })
                .collect();
            found.sort();
            found
        };
        let mut narrowed = 0;
        for &(lang, source) in SKIM_SAMPLES {
            let whole = tags(lang, source.as_bytes()).unwrap();
            let names: std::collections::BTreeSet<&str> = source
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
                .collect();
            for name in names {
                let places = places_of(source, name);
                let focused = tags_for(lang, source.as_bytes(), Want::At(&places)).unwrap();
                assert_eq!(
                    described(&focused, name),
                    described(&whole, name),
                    "{} {name}",
                    lang.name()
                );
                let skim = skim::focused(lang, source.as_bytes(), &places);
                let plain = skim::skim(lang, source.as_bytes());
                narrowed += usize::from(skim.holes != plain.holes);
            }
        }
        assert!(narrowed > 100, "{narrowed}");
    }

    /// What a parse for a name's places is given: the blocks kept for their definitions
    /// and the statements at the top level that hold no place go, the rest of the file once
    /// the last place is passed; a place in a string names nothing.
    #[test]
    fn a_focused_parse_reads_only_what_is_around_the_name() {
        let source = "use a::b;

struct S {
    x: u8,
}

impl S {
    fn new() -> S {
        S { x: 1 }
    }
    fn other(&self) {}
}

impl T {
    fn f() {}
    fn g() {}
}

/// Not `new`: a comment names nothing.
struct D {
    y: u8, // nor this new
}

const N: &str = \"new\";

fn later() {}
";
        let kept = |name: &str| {
            let places = places_of(source, name);
            let skim = skim::focused(Lang::Rust, source.as_bytes(), &places);
            let text = Compact::new(source.as_bytes(), &skim.holes).text;
            (String::from_utf8(text).unwrap(), skim.places.len())
        };
        // (The places in comments are none: the read ends at `new`'s impl.)
        assert_eq!(
            kept("new"),
            (
                "\nimpl S {\n    fn new(){}\n    \n}\n\n\n\n\n".to_string(),
                1
            )
        );
        // The place in the string and those in the other impl's head are held apart. (The
        // statements before the impl are passed over unread and cut as one, with the newline
        // between them.)
        assert_eq!(kept("T"), ("\nimpl T {}\n\n\n\n".to_string(), 1));
        let places = places_of(source, "N");
        assert_eq!(
            tags_for(Lang::Rust, source.as_bytes(), Want::At(&places))
                .unwrap()
                .defs
                .iter()
                .map(|d| (d.name.as_str(), d.line))
                .collect::<Vec<_>>(),
            [("N", 24)]
        );
    }

    /// find_symbol's parse of a file where the name is only used, in what the skim leaves
    /// out (a body, a parameter list, a comment), is not made: nothing is named there.
    #[test]
    fn a_name_only_in_the_skims_holes_needs_no_parse() {
        let source = b"// uses: walker\npub fn scan(walker: Walker) -> usize {\n    let n = walker.count();\n    n\n}\n\nfn later() {\n    struct Walker;\n}\n";
        let text = std::str::from_utf8(source).unwrap();
        let places = |name: &str| -> Vec<(u32, u32)> {
            text.match_indices(name)
                .map(|(at, _)| (at as u32, (at + name.len()) as u32))
                .collect()
        };
        let focused = |name: &str| -> Vec<(String, u32)> {
            tags_for(Lang::Rust, source, Want::At(&places(name)))
                .unwrap()
                .defs
                .into_iter()
                .map(|d| (d.name, d.line))
                .collect()
        };
        // In the comment, the parameters and the body: no parse (the function around the
        // body's use was listed before), and so no definition.
        assert!(skim::in_a_hole(&[(3, 9), (20, 30)], 20, 26));
        assert!(!skim::in_a_hole(&[(3, 9), (20, 30)], 8, 12));
        assert_eq!(focused("walker"), []);
        // `Walker` is defined in a body the skim keeps (it holds a definition).
        assert!(focused("Walker").contains(&("Walker".to_string(), 8)));
        // Nor where leaving the holes out is not worth it (a table is most of the file).
        let table = format!(
            "static T: [u8; 2000] = [{}];\nfn find(v: u8) -> Option<usize> {{\n    T.iter().position(|&x| x == v)\n}}\n",
            "1, ".repeat(2000)
        );
        let skim = skimmed(Lang::Rust, table.as_bytes());
        assert!(!skim.worth);
        let at = table.find("|&x|").unwrap() as u32 + 2;
        let tags = tags_for(Lang::Rust, table.as_bytes(), Want::At(&[(at, at + 1)])).unwrap();
        assert!(tags.defs.is_empty());
    }

    #[test]
    fn a_recovery_that_fell_apart_is_not_taken() {
        let recovered_of = |source: &[u8]| {
            let tree = parse(Lang::Cpp, source, &[]).unwrap();
            recovered(tree.root_node(), source.len())
        };
        assert!(recovered_of(b"int f() { return 1; }\n"));
        assert!(recovered_of(b"struct A { int a; };\nFOO(1, 2)\nint g();\n"));
        // Tokens that no construct holds, one after another.
        assert!(!recovered_of(") ] ) ] ) ]\n".repeat(40).as_bytes()));
    }

    #[test]
    fn a_place_in_the_source_maps_into_the_compact_text() {
        let source = b"aa/*x*/bb/*yy*/cc";
        let compact = Compact::new(source, &[(2, 7), (9, 15)]);
        assert_eq!(compact.text, b"aabbcc");
        let mapped: Vec<u32> = (0..=17).map(|at| compact.to_text(at)).collect();
        assert_eq!(
            mapped,
            [0, 1, 2, 2, 2, 2, 2, 2, 3, 4, 4, 4, 4, 4, 4, 4, 5, 6]
        );
    }

    #[test]
    fn signatures_begin_after_annotations_and_comments() {
        let signatures = |lang: Lang, source: &[u8]| -> Vec<(String, String)> {
            tags_for(lang, source, Want::Defs)
                .unwrap()
                .defs
                .iter()
                .map(|d| (d.name.clone(), d.signature.clone()))
                .collect()
        };
        let java = b"class A {\n    @java.io.Serial\n    private static final long ID = 1L;\n    @SuppressWarnings(\"unchecked\") // a cast\n    static int f(Object x) { return 0; }\n    @Override\n    public String toString() { return \"\"; }\n}\n";
        assert_eq!(
            signatures(Lang::Java, java),
            [
                ("A", "class A"),
                ("ID", "private static final long ID = 1L"),
                ("f", "static int f(Object x)"),
                ("toString", "public String toString()"),
            ]
            .map(|(n, s)| (n.to_string(), s.to_string()))
        );
        let csharp = b"class T {\n    [Test]\n    public void Run() { }\n}\n";
        assert_eq!(
            signatures(Lang::CSharp, csharp)[1],
            ("Run".to_string(), "public void Run()".to_string())
        );
        let typescript = b"class C {\n    @Input() name: string;\n    @HostListener(\"click\")\n    onClick(e: Event) { }\n}\n";
        assert_eq!(
            signatures(Lang::TypeScript, typescript)[1..],
            [
                ("name".to_string(), "name: string".to_string()),
                ("onClick".to_string(), "onClick(e: Event)".to_string())
            ]
        );
        // No `;` ends ajv's type alias before its comment, which the whole parse's node holds.
        let alias = b"export type V = unknown // a note\nclass E {}\n";
        let whole = tags(Lang::TypeScript, alias).unwrap().defs;
        assert_eq!(whole[0].signature, "type V = unknown");
        assert_eq!(signatures(Lang::TypeScript, alias)[0].1, "type V = unknown");
    }

    #[test]
    fn c_and_cpp_declarations_in_a_function_define_nothing() {
        // `log::Writer log(file);` reads as a function's declaration; in a function's body it
        // is a variable, and `int helper(int);` there a prototype: neither is a definition,
        // so the body can go from the skimmed parse. A local class's method still is one.
        let source = b"Status DB::NewDB() {\n  log::Writer log(file);\n  int helper(int);\n  struct R { void Report(int n) {} };\n  return s;\n}\nint main(void);\n";
        assert_eq!(
            skim::holes(Lang::Cpp, b"int f() {\n  log::Writer log(file);\n}\n"),
            [(9, 35)]
        );
        for want in [Want::All, Want::Defs] {
            let tags = tags_for(Lang::Cpp, source, want).unwrap();
            let defs: Vec<(&str, u32)> = tags
                .defs
                .iter()
                .map(|d| (d.name.as_str(), d.line))
                .collect();
            assert_eq!(defs, [("NewDB", 1), ("R", 4), ("Report", 4), ("main", 7)]);
        }
    }

    #[test]
    fn cpp_names_through_references_and_qualified_classes() {
        let source = b"struct DB::Writer {\n  int x;\n};\nclass DB::Impl : public Base {};\ntemplate <class T> struct Rebind<T, void> { };\nSlice& Slice::operator=(const Slice& o) { return *this; }\nstd::string&& take() { return std::move(s); }\nconst A& A::get() const { return *this; }\nstruct V {\n  iterator end() const _GLIBCXX_NOEXCEPT { return x; }\n  explicit operator bool() const noexcept { return true; }\n};\n";
        let tags = tags(Lang::Cpp, source).unwrap();
        let defs: Vec<(&str, u32)> = tags
            .defs
            .iter()
            .filter(|d| d.kind != SymbolKind::Field)
            .map(|d| (d.name.as_str(), d.line))
            .collect();
        assert_eq!(
            defs,
            [
                ("Writer", 1),
                ("Impl", 4),
                ("Rebind", 5),
                ("operator=", 6),
                ("take", 7),
                ("get", 8),
                ("V", 9),
                ("end", 10),
                ("operator bool", 11)
            ]
        );
    }

    #[test]
    fn javascript_names_keep_their_dollar_and_function_expressions_count() {
        let source = b"class V {\n  $dataError() {}\n}\nexports.f = function f() {};\napp.get = function getRouter() {};\nuse(function onMount(p) {});\n";
        let tags = tags(Lang::JavaScript, source).unwrap();
        let defs: Vec<(&str, u32)> = tags
            .defs
            .iter()
            .map(|d| (d.name.as_str(), d.line))
            .collect();
        assert_eq!(
            defs,
            [
                ("V", 1),
                ("$dataError", 2),
                ("f", 4),
                ("get", 5),
                ("getRouter", 5),
                ("onMount", 6)
            ]
        );
    }

    /// A minified file is one line: two classes' `constructor`s are two definitions, and a
    /// module's `r` is one though a callback before it declares a local `r` (each went once,
    /// as the same name, kind and line, and the class fields of a constructor's `let` with it).
    #[test]
    fn one_line_keeps_definitions_of_one_name_apart() {
        let source = b"class A{constructor(t){let e=t}}class B{constructor(t){let e=t}}var n=t=>{let r={};return r},r=1;";
        let tags = tags(Lang::JavaScript, source).unwrap();
        let defs: Vec<(&str, SymbolKind, Option<u32>)> = tags
            .defs
            .iter()
            .map(|d| (d.name.as_str(), d.kind, d.parent))
            .collect();
        assert_eq!(
            defs,
            [
                ("A", SymbolKind::Class, None),
                ("constructor", SymbolKind::Method, Some(0)),
                ("B", SymbolKind::Class, None),
                ("constructor", SymbolKind::Method, Some(2)),
                ("n", SymbolKind::Function, None),
                ("r", SymbolKind::Variable, None)
            ]
        );
    }

    /// The same on a line of a few definitions (held to one another one by one) and of many
    /// (through a map): `exports.fN = function fN() {}` is one definition, each class's
    /// `constructor` one of its own.
    #[test]
    fn twins_on_a_line_go_however_many_it_holds() {
        for n in [3, 40] {
            let source: String = (0..n)
                .map(|i| {
                    format!("class C{i}{{constructor(t){{}}}}exports.f{i}=function f{i}(){{}};")
                })
                .collect();
            let defs = tags(Lang::JavaScript, source.as_bytes()).unwrap().defs;
            let expected: Vec<(String, SymbolKind)> = (0..n)
                .flat_map(|i| {
                    [
                        (format!("C{i}"), SymbolKind::Class),
                        ("constructor".to_string(), SymbolKind::Method),
                        (format!("f{i}"), SymbolKind::Function),
                    ]
                })
                .collect();
            let got: Vec<(String, SymbolKind)> =
                defs.iter().map(|d| (d.name.clone(), d.kind)).collect();
            assert_eq!(got, expected, "{n} on the line");
        }
    }
}
