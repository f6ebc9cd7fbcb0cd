//! What a parse for definitions alone may leave out, found by a small lexer per language
//! before the tree-sitter parse: the insides of brace blocks that hold no definition (a
//! function's body, mostly) and comments; in Rust also attributes, macros' token trees (which
//! tree-sitter parses no items in), `use` declarations and a function's parameters, return
//! type and `where` clause (its signature is taken from the source's bytes); in Go likewise a
//! function's parameters and results (not a method's receiver, which names its type) and the
//! inside of `import ( … )`; in Java, C#, JavaScript and TypeScript the inside of the
//! parentheses after a name that hold no block (a method's parameters, a call's arguments:
//! `Lexer::arguments`; in C++ only where a function's parameters may stand:
//! `Lexer::cpp_parameters_go`), and in JavaScript and TypeScript of an array that is a value and
//! holds no block or arrow (`static params = [ … ]`). The parser is given the rest
//! (`Parser::set_included_ranges`): it sees `fn f(){}`, every node keeps its byte offset,
//! line and column, and the definitions come out as a whole parse gives them, at a fraction
//! of its cost (on tokio's source, 9 % of the bytes are left to parse).
//!
//! A block is left whole when its inside holds a token that can begin a definition of the
//! language's tags query (`queries/*.scm`) — the keywords, and the shapes that define without
//! one (a C++ or Java method `Type name(`, a JavaScript method `name() {`, a TypeScript
//! property `name:`) — or when it is a body of members (`struct`, `enum`, `class` … before
//! it); a kept block's own blocks are looked at one by one. Variables and constants count
//! only outside a function that is itself a definition (inside one they are local, and
//! `parse::tree_of` drops them; a callback's are not). Nothing is left out where two tokens
//! would join: a block keeps its braces, a comment goes only beside whitespace.
//!
//! The lexer knows each language's comments and strings (raw, nested, interpolated, heredocs,
//! PHP's text outside `<?php`) well enough to find its braces. Where it could still misread,
//! the parse of what is left has an error and the file is parsed again with every body,
//! only the comments and the annotations and guards the grammar cannot read left out
//! (`Skim::plain`; whole, should that parse's recovery fall apart:
//! `parse::only_definitions`), but for C and C++, whose errors are the macros' more often
//! than the skim's, when the parse recovered (`parse::macros_misread`); C++ in a file read
//! as C (`namespace`, `template`, `::`: a `.c`, or a header that `Lang::of_file` did not
//! take for C++) is parsed whole from the start. A minified file is skimmed like any
//! other (it once was parsed whole: laravel's 713 KB
//! `scripts.js` took 0.13 s of the tree's 0.5 s). `benches/skim_same.py` holds the skimmed
//! parse's definitions to the whole parse's file by file over real trees (every file of
//! cargo's registry, Go's standard library, npm, C and C++ headers: none that parses cleanly
//! differs); the unit tests in `parse` do it on samples of each language and a few real
//! files.
//!
//! In C and C++ the skim also leaves out what tree-sitter's grammars cannot read and a
//! compiler's preprocessor would have taken away: macros that annotate a declaration
//! (`class LEVELDB_EXPORT DB`, `namespace std _GLIBCXX_VISIBILITY(default)`, `void Lock()
//! EXCLUSIVE_LOCK_FUNCTION()`; `Lexer::annotation` names the places) and the `extern "C"`
//! guards for C++ readers. A whole parse of such a file has errors, after which the
//! skimmed parse used to be thrown away for a whole one; now it reads cleanly (on leveldb,
//! 7 files of 132 still have errors instead of 27).
//!
//! In C# the skim reads an `#if` as a compiler that takes its first branch does: the
//! conditional directives and the branches after the first are left out (`Lexer::directive`),
//! since the grammar reads a directive as a node holding whole declarations, and one inside a
//! method's head is an error. ctags follows the first branch too.
//!
//! Python's function bodies and the insides of its brackets that hold a value are left out by
//! `super::skim_python`; Ruby and Bash (blocks by keywords) are parsed whole.
//!
//! find_symbol wants only the definitions where its name is ([`focused`]): the skim then
//! also names the blocks it kept ([`Skim::kept`]), the statements at the top level
//! ([`Skim::statements`]) and the items in a block of items ([`Skim::members`]), and the
//! strings ([`Skim::strings`]), and stops at the first statement past the name's last place
//! ([`skim_until`]). A place written as a member (`x.len()`, `Vec::new()`) is passed by
//! before the skim, and one in a string or in what the skim leaves out after it. On 10,000
//! files of cargo's registry, the files that hold `new` left 13.5 MB to parse after the
//! skim alone, 1.9 MB with the top-level statements cut, and 0.5 MB (in 1,387 files) with
//! the items and member places too; find_symbol `new` took 1.14 s, 0.53 s, then 0.26 s.
//! In C and C++ the statements inside an `#if` count as well (nearly every header is inside
//! its guard), where what goes keeps each `#if` with its `#endif` ([`Skim::branches`]): for
//! `len` in `/usr/include`'s 1,319 files that hold it, 3.8 MB were left to parse instead of
//! 34.7 MB.

use super::Lang;

/// The byte ranges (start, end) to leave out of a parse of `source` for its definitions:
/// sorted, apart, each the inside of a `{ … }` (the braces stay). Empty when nothing can be
/// left out or the language is not skimmed.
pub fn holes(lang: Lang, source: &[u8]) -> Vec<(usize, usize)> {
    skim(lang, source).holes
}

/// What a skim leaves out of a parse.
pub struct Skim {
    /// The byte ranges, sorted and apart.
    pub holes: Vec<(usize, usize)>,
    /// Whether any of them is code (a body, parameters, a declaration); none is when they
    /// are comments and the annotations and guards the grammar cannot read, whose leaving
    /// out reads the file as its compiler does.
    pub code: bool,
    /// Those that are not code alone (comments, and the annotations and guards the grammar
    /// cannot read), wherever they are, also inside the code left out: what a parse that
    /// keeps every body may still leave out (`parse::only_definitions`, when the skimmed
    /// parse is not worth it or misread the file).
    pub plain: Vec<(usize, usize)>,
    /// The insides of the blocks kept (they hold a definition, or members) that an empty
    /// `{}` may stand for, innermost first: what find_symbol may still leave out where the
    /// name is not (`parse::around`).
    pub kept: Vec<(usize, usize)>,
    /// With [`skim_until`]: where the statements at the file's top level start that may
    /// go whole (after one that surely ended, outside an `#if` in a declaration's head), in
    /// order, and the file's end after the last when it may go too.
    pub statements: Vec<usize>,
    /// With [`skim_until`]: in each block of items (an `impl`, a module, a class's body, a
    /// namespace) that was closed, where its items start that may go whole, as
    /// [`Skim::statements`] at the top level, and the block's end after the last when it may
    /// go too.
    pub members: Vec<Vec<usize>>,
    /// With [`skim_until`]: the string literals read (with their quotes), in order.
    pub strings: Vec<(usize, usize)>,
    /// With [`skim_until`], in C and C++: where the conditional directives read start
    /// (`#if`, `#else`, `#endif` …, but those of a declaration's head, which go), in order,
    /// and what each does to the branches open ([`Branch`]). A statement or a block goes
    /// whole only with its branches balanced ([`balanced`]): else what is left would hold
    /// an `#if` without its `#endif`.
    pub branches: Vec<(usize, Branch)>,
    /// Whether the whole file was read: [`skim_until`] stops at the first statement past
    /// its place, and its `plain` and `kept` then cover only the bytes before.
    pub whole: bool,
}

/// The holes of [`holes`], and whether code is among them.
pub fn skim(lang: Lang, source: &[u8]) -> Skim {
    skim_until(lang, source, None)
}

/// [`skim`], and with `until` (a byte of the source) also the statements at the top level
/// ([`Skim::statements`]), read no further than the first that starts at or past `until`:
/// where find_symbol has no place of the name left, the rest of the file may go whole.
pub fn skim_until(lang: Lang, source: &[u8], until: Option<usize>) -> Skim {
    skim_places(lang, source, until, &[])
}

/// [`skim_until`] for the places of a name at `places` (their starts, in order): a block
/// that holds none of them is passed over unread ([`Lexer::pass_block`]).
fn skim_places(lang: Lang, source: &[u8], until: Option<usize>, places: &[usize]) -> Skim {
    let nothing = Skim {
        holes: Vec::new(),
        code: false,
        plain: Vec::new(),
        kept: Vec::new(),
        statements: Vec::new(),
        members: Vec::new(),
        strings: Vec::new(),
        branches: Vec::new(),
        whole: true,
    };
    if lang == Lang::Python {
        let holes = super::skim_python::holes(source);
        let code = !holes.is_empty();
        return Skim {
            holes,
            code,
            ..nothing
        };
    }
    let Some(rules) = Rules::of(lang) else {
        return nothing;
    };
    let mut lexer = Lexer::new(source, rules, until);
    lexer.places = places;
    lexer.run();
    if lexer.cpp_in_c {
        return nothing;
    }
    let whole = !lexer.stopped;
    let (holes, code, plain, kept) = (lexer.holes, lexer.code, lexer.plain, lexer.kept);
    let (statements, members, strings) = (lexer.statements, lexer.members, lexer.strings);
    let branches = lexer.branches;
    // Sorted and apart by construction; should a misread file break that, it is parsed
    // whole rather than wrongly.
    let ordered = |holes: &[(usize, usize)]| {
        holes
            .iter()
            .all(|&(start, end)| start <= end && end <= source.len())
            && holes.windows(2).all(|w| w[0].1 <= w[1].0)
    };
    if ordered(&holes) && ordered(&plain) {
        Skim {
            holes,
            code,
            plain,
            kept,
            statements,
            members,
            strings,
            branches,
            whole,
        }
    } else {
        nothing
    }
}

impl Lexer<'_> {
    fn new(source: &[u8], rules: Rules, until: Option<usize>) -> Lexer<'_> {
        Lexer {
            src: source,
            // A byte order mark is no token: a directive after it still starts its line.
            at: if source.starts_with(b"\xEF\xBB\xBF") {
                3
            } else {
                0
            },
            rules,
            blocks: Vec::new(),
            holes: Vec::new(),
            head: Head::default(),
            paren: 0,
            line_start: true,
            last_word: (0, 0),
            token_at: 0,
            templates: Vec::new(),
            html: rules.lang == Lang::Php,
            macro_parens: Vec::new(),
            sig: Sig::None,
            cpp_in_c: false,
            code: false,
            plain: Vec::new(),
            kept: Vec::new(),
            until,
            statements: Vec::new(),
            strings: Vec::new(),
            ended: true,
            ended_before: true,
            members: Vec::new(),
            stopped: false,
            directive_end: None,
            conditionals: Vec::new(),
            branches: Vec::new(),
            scanned_to: 0,
            arguments: None,
            places: &[],
        }
    }
}

/// find_symbol's skim of a file that holds its name at some places ([`focused`]).
pub struct Focused {
    /// What a parse for the definitions there leaves out ([`around`]).
    pub holes: Vec<(usize, usize)>,
    /// The places where a definition may be named: not in what the skim leaves out (a
    /// comment, a body that holds no definition), nor in a string literal (but
    /// TypeScript's `declare module "m"`). `x` of unicode-width's test table, 1.4 MB of
    /// strings in one array, took a parse of 0.25 s; and a block or statement that holds
    /// the name only in a comment goes (for `new` in 10,000 files, 1.12 MB parsed instead of
    /// 1.87 MB).
    pub places: Vec<(u32, u32)>,
}

impl Focused {
    /// Whether no place is left: every one is written as a member, or lies in what the skim
    /// leaves out (a body that holds no definition, a comment, a parameter list) or in a
    /// string, where no definition is named, whether or not leaving the holes out is worth
    /// it: then no parse is needed. A common name is used in most files and defined in few,
    /// and one used only in a function beside 2.5 MB of tables (encoding_rs's `data.rs`) took
    /// a plain parse of 0.66 s.
    pub fn names_nothing(&self) -> bool {
        self.places.is_empty()
    }
}

/// The skim of `source` for the definitions that may be named at `focus` (byte ranges, in
/// order), as find_symbol's walk reads the file: the parse helper is handed the holes, and
/// a file named nowhere is not handed over at all.
pub fn focused(lang: Lang, source: &[u8], focus: &[(u32, u32)]) -> Focused {
    focused_on(lang, source, &maybe_named(lang, source, focus))
}

/// [`focused`] for places that [`maybe_named`] kept already (the walk looks at them before
/// it reads a file's cache entry).
pub fn focused_on(lang: Lang, source: &[u8], focus: &[(u32, u32)]) -> Focused {
    let Some(last) = focus.iter().map(|&(_, end)| end as usize).max() else {
        return Focused {
            holes: Vec::new(),
            places: Vec::new(),
        };
    };
    let starts: Vec<usize> = focus.iter().map(|&(start, _)| start as usize).collect();
    let skim = skim_places(lang, source, Some(last), &starts);
    let named = |&&(start, end): &&(u32, u32)| {
        (matches!(lang, Lang::TypeScript | Lang::Tsx) || !in_a_hole(&skim.strings, start, end))
            && !in_a_hole(&skim.holes, start, end)
    };
    let places: Vec<(u32, u32)> = focus.iter().filter(named).copied().collect();
    Focused {
        holes: around(source, &places, &skim),
        places,
    }
}

/// The places of `focus` where a definition may be named, as the bytes around each tell:
/// not those written as a member or inside a path ([`a_member`]), nor as a parameter
/// ([`a_parameter`]) or a type ([`a_type`]), nor in a comment ([`commented`],
/// [`Comments`]) or, in C and C++, in a preprocessor line but for the name it defines
/// ([`in_a_directive`]). Those need no skim, and a file with none left no parse. Most
/// places of a common name in C are such: of the 16,945 lines of `data` in `/usr/include`,
/// 8,000 are in comments. C and C++ are told alike here (a header's language is told
/// after: `Lang::of_header`).
pub fn maybe_named(lang: Lang, source: &[u8], focus: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut comments = Comments::of(lang);
    focus
        .iter()
        .filter(|&&(start, end)| {
            let (start, end) = (start as usize, end as usize);
            !a_member(lang, source, start, end)
                && !commented(lang, source, start)
                && !comments.in_one(source, start)
                && !a_parameter(lang, source, start, end)
                && !a_type(lang, source, start, end)
                && !in_a_directive(lang, source, start)
        })
        .copied()
        .collect()
}

/// Whether `lang` writes comments as `//` and `/* */` and has no literal that holds them
/// unquoted (JavaScript's regular expressions may: `/a\/*/`).
fn slashed_comments(lang: Lang) -> bool {
    matches!(
        lang,
        Lang::Rust | Lang::Go | Lang::Java | Lang::C | Lang::Cpp | Lang::CSharp
    )
}

/// Whether the bytes of a line before a comment's opening may be code that holds it: they
/// hold a quote (a string or character literal may hold the opening; Rust's lifetimes and
/// C++'s digit separators make this only careful), or another comment's opening.
fn may_hold_a_comment(before: &[u8]) -> bool {
    before.iter().any(|b| matches!(b, b'"' | b'\'' | b'`'))
        || memchr::memmem::find(before, b"/*").is_some()
        || memchr::memmem::find(before, b"//").is_some()
}

/// Whether the place at `start` follows `//` on its line, where that begins a comment in
/// `lang` and nothing before it on the line could quote it: the rest of the line is a
/// comment (or, rarely, inside a string), where no definition is named. A common name is
/// written in prose often (`/// Makes a new one.`, `int len; // the data's length`).
fn commented(lang: Lang, source: &[u8], start: usize) -> bool {
    if !slashed_comments(lang) {
        return false;
    }
    let before = &source[..start.min(source.len())];
    let line = memchr::memrchr(b'\n', before).map_or(0, |n| n + 1);
    let text = &before[line..];
    memchr::memmem::find(text, b"//").is_some_and(|at| !may_hold_a_comment(&text[..at]))
}

/// Whether places, taken in order, lie in a block comment (`/* … */`), as the bytes back
/// to the last place tell: the last opening or closing among them, and else what was told
/// of the last place. An opening counts only where nothing before it on its line could
/// quote it ([`may_hold_a_comment`]); where it may, the places after it are taken as code.
/// Each byte is looked at once for a file's places.
struct Comments {
    slashed: bool,
    /// Where the bytes looked at end.
    seen: usize,
    open: bool,
}

impl Comments {
    fn of(lang: Lang) -> Comments {
        Comments {
            slashed: slashed_comments(lang),
            seen: 0,
            open: false,
        }
    }

    /// Whether the place at `start` (after those asked about before) is in a comment.
    fn in_one(&mut self, source: &[u8], start: usize) -> bool {
        if !self.slashed || start < self.seen {
            return false;
        }
        let start = start.min(source.len());
        // The last `/` of an opening or a closing (`*/*` opens, `/*/` closes).
        for slash in memchr::memrchr_iter(b'/', &source[self.seen..start]) {
            let slash = self.seen + slash;
            if source.get(slash + 1) == Some(&b'*') {
                let line = memchr::memrchr(b'\n', &source[..slash]).map_or(0, |n| n + 1);
                self.open = !may_hold_a_comment(&source[line..slash]);
                break;
            }
            if slash > 0 && source[slash - 1] == b'*' {
                self.open = false;
                break;
            }
        }
        self.seen = start;
        self.open
    }
}

/// Whether the place at `start` is in a C or C++ preprocessor line (one that begins with
/// `#`, its `\`-continued lines with it) and is not the name a `#define` defines: the
/// other words of a directive name no definition (`#define BIO_get_buf(b, data) …`,
/// `#if defined(data)`), and the body of a macro is not parsed as code.
fn in_a_directive(lang: Lang, source: &[u8], start: usize) -> bool {
    if !matches!(lang, Lang::C | Lang::Cpp) {
        return false;
    }
    let start = start.min(source.len());
    // Back to the first of the lines joined by `\` at their ends.
    let mut line = memchr::memrchr(b'\n', &source[..start]).map_or(0, |n| n + 1);
    while line > 0 {
        let end = &source[..line - 1];
        if !end.strip_suffix(b"\r").unwrap_or(end).ends_with(b"\\") {
            break;
        }
        line = memchr::memrchr(b'\n', end).map_or(0, |n| n + 1);
    }
    let blank = |b: &u8| b.is_ascii_whitespace() || *b == b'\\';
    let text = &source[line..start];
    let Some(hash) = text.iter().position(|b| !blank(b)) else {
        return false;
    };
    if text[hash] != b'#' {
        return false;
    }
    let rest = &text[hash + 1..];
    let word = rest.iter().position(|b| !blank(b)).unwrap_or(rest.len());
    let names_the_macro = rest[word..]
        .strip_prefix(b"define")
        .is_some_and(|after| after.first().is_some_and(blank) && after.iter().all(blank));
    !names_the_macro
}

/// Whether the name at `start..end` of `source` is a C or C++ parameter's: after its type
/// (a word, then perhaps `*`, `&` and qualifiers) and before the `,` or `)` that ends it,
/// inside parentheses opened on the way back before a `;`, `{` or `}` (`size_t strnlen(const
/// char *s, size_t len);`). A parameter names no definition, and most places of a common
/// name are such (8,590 of the 9,660 lines of `len` in `/usr/include` put a `)` or a `,`
/// after it); a function pointer's name (`int (*len)(void)`) is not (no type before it in
/// its parentheses), nor a variable's (`int len, n;`: no parenthesis open).
fn a_parameter(lang: Lang, source: &[u8], start: usize, end: usize) -> bool {
    if !matches!(lang, Lang::C | Lang::Cpp) {
        return false;
    }
    let after = source.get(end..).unwrap_or_default();
    let next = after.iter().find(|b| !b.is_ascii_whitespace());
    if !matches!(next, Some(b',' | b')')) {
        return false;
    }
    // Back over the declarator's `*`, `&` and qualifiers to the type's last byte.
    let mut at = start.min(source.len());
    loop {
        let before = &source[..at];
        let Some(i) = before.iter().rposition(|b| !b.is_ascii_whitespace()) else {
            return false;
        };
        if matches!(before[i], b'*' | b'&') {
            at = i;
            continue;
        }
        let word = before[..=i]
            .iter()
            .rev()
            .take_while(|&&b| is_word(b))
            .count();
        if word == 0 {
            return false;
        }
        at = i + 1 - word;
        if !matches!(
            &before[at..=i],
            b"const" | b"volatile" | b"restrict" | b"__restrict"
        ) {
            break;
        }
    }
    in_a_list(source, at)
}

/// Whether a parenthesis or a template's parameters (`template <`) open before `at` of C or
/// C++ `source`: the bytes back to a statement's or a block's edge tell. What is written
/// there names no definition but a function pointer's (`int (*f)(void)`).
fn in_a_list(source: &[u8], at: usize) -> bool {
    let (mut parens, mut angles) = (0usize, 0usize);
    let before = &source[..at.min(source.len())];
    for (i, &b) in before.iter().enumerate().rev().take(PARAMETERS_LOOK_BACK) {
        match b {
            b')' => parens += 1,
            b'(' if parens == 0 => return true,
            b'(' => parens -= 1,
            b'>' if i == 0 || before[i - 1] != b'-' => angles += 1,
            b'<' if angles > 0 => angles -= 1,
            b'<' if word_before(before, i).0 == b"template" => return true,
            b';' | b'{' | b'}' => return false,
            _ => {}
        }
    }
    false
}

/// Whether the name at `start..end` of C or C++ `source` is written as a type or a scope,
/// not as what a declaration names, as what follows it tells: `*` or `&` (`FILE *f`), `::`
/// (`std::`), `>` (a template's argument), template arguments themselves (`vector<int> v`;
/// a specialization's, `struct hash<T> {`, are followed by `{`, `(`, `:` or `=`), or a word
/// (`size_t n`) but for an annotation's (a word of no small letters or that begins with
/// `__`, as in `int x __THROW;`, or C++'s `final` and `asm`); inside a parameter list
/// ([`in_a_list`]), any word, or a `,` or `)` after a `,` (`f(char *, size_t)`). A type's
/// name is written in many files, and only a few define it: over `/usr/include`, this
/// leaves 3 of the 745 files that hold `FILE` where a definition may be named.
fn a_type(lang: Lang, source: &[u8], start: usize, end: usize) -> bool {
    let (start, end) = (start.min(source.len()), end.min(source.len()));
    if matches!(lang, Lang::Java | Lang::CSharp) {
        return a_managed_type(source, start, end);
    }
    // (A macro's name is followed by what it stands for: `#define value pValue`.)
    if !matches!(lang, Lang::C | Lang::Cpp) || word_before(source, start).0 == b"define" {
        return false;
    }
    let mut next = space_after(source, end);
    if source.get(next) == Some(&b'<') {
        // (C is read as C++ is: a `.h` header's language is not told yet, `maybe_named`.)
        if matches!(source.get(next + 1), Some(b'<' | b'=')) {
            return true;
        }
        let Some(close) = angle_close(source, next) else {
            return false;
        };
        next = space_after(source, close + 1);
    }
    match source.get(next..).unwrap_or_default() {
        [b'*' | b'&' | b'>', ..] | [b':', b':', ..] => true,
        [b, ..] if is_word_start(*b) => {
            let word = word_at(source, next);
            let annotation = word.starts_with(b"__")
                || !word.iter().any(u8::is_ascii_lowercase)
                || matches!(word, b"final" | b"asm");
            !annotation || in_a_list(source, start)
        }
        [b',' | b')', ..] => {
            let before = space_before(source, start);
            before > 0 && source[before - 1] == b',' && in_a_list(source, start)
        }
        _ => false,
    }
}

/// [`a_type`] in Java and C#: before a `.` or `::` (a qualifier: `java.lang.String`,
/// `System.IO`; but for a C# namespace's own name, `namespace A.B`), before a word but for
/// those a declaration's name goes on with (`extends`, `implements`, `permits`, `where`),
/// before a `>` (a type argument), or before type arguments followed by such a word, a `>`
/// or a `,` (`List<String> names`, `Map<List<String>, T>`). In Java, `String` is written
/// in most files and defined in none.
fn a_managed_type(source: &[u8], start: usize, end: usize) -> bool {
    let mut next = space_after(source, end);
    if source.get(next) == Some(&b'<') {
        let Some(close) = angle_close(source, next) else {
            return false;
        };
        next = space_after(source, close + 1);
        if matches!(source.get(next), Some(b'>' | b',')) {
            return true;
        }
    }
    match source.get(next..).unwrap_or_default() {
        [b'>', ..] => true,
        [b'.', ..] | [b':', b':', ..] => {
            let line = memchr::memrchr(b'\n', &source[..start]).map_or(0, |n| n + 1);
            !source[line..start]
                .trim_ascii_start()
                .starts_with(b"namespace")
        }
        [b, ..] if is_word_start(*b) => !matches!(
            word_at(source, next),
            b"extends" | b"implements" | b"permits" | b"where"
        ),
        _ => false,
    }
}

/// The `>` that closes the template arguments opened at `open`, if it comes before a `;`,
/// `{` or `}` and within [`PARAMETERS_LOOK_BACK`] bytes of it.
fn angle_close(source: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let rest = source.get(open..)?;
    for (i, &b) in rest.iter().enumerate().take(PARAMETERS_LOOK_BACK) {
        match b {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// C++: the `>` that closes the template's parameter list opened at `open` (its `<`),
/// counting only the angle brackets outside parentheses and brackets (`bool = (N > 1)`,
/// `typename = decltype(a->b)`); none when a `;`, a brace, a string, a character, a
/// comment, a directive, `>=` or `->` comes first (a `<` that was an operator:
/// `bool = __w < static_cast<size_t>(…)>` is counted as opening and runs on to the
/// declaration's `{`), nor within [`PARAMETERS_LOOK_BACK`] bytes.
fn template_close(source: &[u8], open: usize) -> Option<usize> {
    let (mut angles, mut parens) = (0usize, 0usize);
    let rest = source.get(open..)?;
    for (i, &b) in rest.iter().enumerate().take(PARAMETERS_LOOK_BACK) {
        match b {
            b'(' | b'[' => parens += 1,
            b')' | b']' => parens = parens.checked_sub(1)?,
            b'<' if parens == 0 => angles += 1,
            b'>' if parens == 0 => {
                if rest.get(i + 1) == Some(&b'=') || (i > 0 && rest[i - 1] == b'-') {
                    return None;
                }
                angles -= 1;
                if angles == 0 {
                    return Some(open + i);
                }
            }
            b';' | b'{' | b'}' | b'"' | b'\'' | b'/' | b'#' => return None,
            _ => {}
        }
    }
    None
}

/// How far [`in_a_list`] looks back for the bracket a list opens with, and [`angle_close`]
/// and [`template_close`] on for the `>` that closes template arguments or parameters.
const PARAMETERS_LOOK_BACK: usize = 2048;

/// Whether the name at `start..end` of `source` is written as a member or inside a path,
/// where `lang` names no definition: after a `.` on its line (Rust, Go, Java, C, C++;
/// JavaScript assigns methods so, `A.prototype.f = function`, and C# implements an
/// interface's method as `void I.f()`), after C's `->`, or in Rust after `::` and before
/// `(`, `::` or `!` (`S::new(`, but not `impl a::S {`). Most places of a common name are
/// such (`x.len()`, `Vec::new()`), and a file holding the name only so needs no skim.
fn a_member(lang: Lang, source: &[u8], start: usize, end: usize) -> bool {
    if !matches!(
        lang,
        Lang::Rust | Lang::Go | Lang::Java | Lang::C | Lang::Cpp
    ) {
        return false;
    }
    let before = &source[..start.min(source.len())];
    let before = before
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(&before[..0], |i| &before[..=i]);
    if before.ends_with(b"::") {
        if lang != Lang::Rust {
            return false;
        }
        let after = source.get(end..).unwrap_or_default();
        let next = after.iter().find(|&&b| b != b' ' && b != b'\t');
        return matches!(next, Some(b'(' | b':' | b'!'));
    }
    before.ends_with(b".") || (matches!(lang, Lang::C | Lang::Cpp) && before.ends_with(b"->"))
}

/// The holes of a skim for find_symbol's parse of `source`, which holds the name at
/// `focus`: the skim's, and besides, where no place of the name is, the inside of each
/// block the skim kept ([`Skim::kept`]: a class's members, an `impl`, a struct's
/// fields), and each statement at the top level ([`Skim::statements`]) or item in a block
/// of items ([`Skim::members`]; up to the newline before the next, which may begin a
/// directive), the outermost whole. Every definition the query would take (one named at a
/// place, and those around it) lies outside them, and a block's head and braces stay, so
/// what is left parses as before around the places.
fn around(source: &[u8], focus: &[(u32, u32)], skim: &Skim) -> Vec<(usize, usize)> {
    let holes = &skim.holes;
    let mut places: Vec<(usize, usize)> = focus
        .iter()
        .map(|&(start, end)| (start as usize, (end as usize).max(start as usize + 1)))
        .collect();
    places.sort_unstable();
    // The furthest end of the places up to each one (they may overlap).
    let mut reach = Vec::with_capacity(places.len());
    for &(_, end) in &places {
        reach.push(reach.last().map_or(end, |&r: &usize| r.max(end)));
    }
    let holds = |start: usize, end: usize| {
        let i = places.partition_point(|&(s, _)| s < end);
        i > 0 && reach[i - 1] > start
    };
    let runs = std::iter::once(&skim.statements).chain(&skim.members);
    let statements = runs.flat_map(|starts| starts.windows(2)).map(|w| {
        let end = memchr::memrchr(b'\n', &source[w[0]..w[1]]).map_or(w[1], |n| w[0] + n);
        (w[0], end)
    });
    let mut blocks: Vec<(usize, usize)> = skim.kept.iter().copied().chain(statements).collect();
    blocks.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut cuts: Vec<(usize, usize)> = holes.to_vec();
    let mut cut_to = 0;
    for (start, end) in blocks {
        if start >= cut_to
            && start < end
            && !holds(start, end)
            && balanced(&skim.branches, start, end)
        {
            cuts.push((start, end));
            cut_to = end;
        }
    }
    if cuts.len() == holes.len() {
        return cuts;
    }
    // One range where holes and cuts meet (a block's inside holds its holes).
    super::tags::merged(cuts)
}

/// What a conditional directive does to the branches open ([`Skim::branches`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// `#if`, `#ifdef`, `#ifndef`: opens one.
    Open,
    /// `#else`, `#elif`: ends one, and opens the next.
    Next,
    /// `#endif`: ends one.
    Close,
}

/// Whether the conditional directives in `start..end` (`branches`: [`Skim::branches`])
/// close every branch they open, and none they do not: then leaving those bytes out leaves
/// no `#if` without its `#endif`, nor an `#else` without its `#if`.
fn balanced(branches: &[(usize, Branch)], start: usize, end: usize) -> bool {
    let first = branches.partition_point(|&(at, _)| at < start);
    let mut open = 0usize;
    for &(at, branch) in &branches[first..] {
        if at >= end {
            break;
        }
        match branch {
            Branch::Open => open += 1,
            Branch::Next if open > 0 => {}
            Branch::Close if open > 0 => open -= 1,
            Branch::Next | Branch::Close => return false,
        }
    }
    open == 0
}

/// Whether the bytes `start..end` lie inside one of `holes` (sorted, apart).
pub fn in_a_hole(holes: &[(usize, usize)], start: u32, end: u32) -> bool {
    let (start, end) = (start as usize, end as usize);
    let i = holes.partition_point(|&(_, hole_end)| hole_end < end);
    holes.get(i).is_some_and(|&(s, e)| s <= start && end <= e)
}

/// Whether leaving `start..end` out of `src` joins no two tokens: whitespace (or the source's
/// edge) stands on one side of it.
fn apart(src: &[u8], start: usize, end: usize) -> bool {
    let space = |at: Option<&u8>| at.map_or(true, u8::is_ascii_whitespace);
    space(start.checked_sub(1).and_then(|i| src.get(i))) || space(src.get(end))
}

/// Add the hole `start..end` to `holes`: joined to the last one when only whitespace lies
/// between them, else on its own where it is [`apart`].
fn joined(src: &[u8], holes: &mut Vec<(usize, usize)>, start: usize, end: usize) {
    if let Some(last) = holes.last_mut() {
        if last.1 <= start
            && src[last.1..start].iter().all(u8::is_ascii_whitespace)
            && apart(src, last.0, end)
        {
            last.1 = end;
            return;
        }
    }
    if apart(src, start, end) {
        holes.push((start, end));
    }
}

/// What a word is to the skim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// Any other name.
    Name,
    /// Begins a definition wherever it is (`fn`, `struct`, `class`, `typedef` …).
    Def,
    /// Begins a variable or constant: a definition only outside a function.
    LocalDef,
    /// Begins a definition and names a body of members after it (`struct S {`).
    Container,
    /// A keyword that is neither a type nor a name before `(` (`if`, `return`, `new` …).
    Keyword,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    None,
    Word(Word),
    /// `fn`, `func`, `function`: what makes the block after it a function's body.
    Callable,
    Punct(u8),
    /// `=>` (and `->` in Java)
    Arrow,
    Literal,
}

/// A language's rules.
#[derive(Clone, Copy)]
struct Rules {
    lang: Lang,
}

impl Rules {
    fn of(lang: Lang) -> Option<Rules> {
        match lang {
            Lang::Rust
            | Lang::C
            | Lang::Cpp
            | Lang::Go
            | Lang::Java
            | Lang::CSharp
            | Lang::JavaScript
            | Lang::TypeScript
            | Lang::Tsx
            | Lang::Php => Some(Rules { lang }),
            Lang::Python | Lang::Ruby | Lang::Bash => None,
        }
    }

    fn typescript(self) -> bool {
        matches!(self.lang, Lang::TypeScript | Lang::Tsx)
    }

    fn javascript(self) -> bool {
        matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
    }

    fn c_like(self) -> bool {
        matches!(self.lang, Lang::C | Lang::Cpp)
    }

    /// Whether a string may begin with the word character `b` (`Lexer::string`): Rust's
    /// `b"`, `c"`, `r"`, C++'s raw `R"(`, `u8R"(`, `LR"(`, C#'s `$"`.
    fn string_prefix(self, b: u8) -> bool {
        match self.lang {
            Lang::Rust => matches!(b, b'b' | b'c' | b'r'),
            Lang::Cpp => matches!(b, b'R' | b'u' | b'L' | b'U'),
            Lang::CSharp => b == b'$',
            _ => false,
        }
    }

    /// Whether `Type name(` defines (a method, a local function, a C++ declaration).
    fn typed_calls_define(self) -> bool {
        matches!(self.lang, Lang::C | Lang::Cpp | Lang::Java | Lang::CSharp)
    }

    /// What `word` is in this language.
    fn word(self, word: &[u8]) -> Tok {
        use Word::*;
        let w = |x: Word| Tok::Word(x);
        match self.lang {
            Lang::Rust => match word {
                b"fn" => Tok::Callable,
                // What may stand before `!(` or `!{` without a macro's name.
                b"if" | b"while" | b"match" | b"return" | b"in" | b"else" | b"let" | b"for"
                | b"break" | b"yield" | b"as" | b"move" => w(Keyword),
                b"struct" | b"enum" | b"union" => w(Container),
                b"type" | b"trait" | b"mod" | b"macro_rules" | b"impl" => w(Def),
                b"const" | b"static" => w(LocalDef),
                _ => w(Name),
            },
            Lang::C | Lang::Cpp => match word {
                b"struct" | b"union" | b"enum" => w(Container),
                b"class" if self.lang == Lang::Cpp => w(Container),
                b"typedef" => w(Def),
                b"using" | b"namespace" | b"template" | b"concept" if self.lang == Lang::Cpp => {
                    w(Def)
                }
                b"return" | b"new" | b"delete" | b"throw" | b"else" | b"case" | b"goto"
                | b"sizeof" | b"co_return" | b"co_yield" | b"co_await" | b"do" | b"if"
                | b"while" | b"for" | b"switch" | b"typeid" | b"decltype" | b"alignof"
                | b"noexcept" | b"operator" => w(Keyword),
                _ => w(Name),
            },
            Lang::Go => match word {
                b"func" => Tok::Callable,
                b"struct" | b"interface" => w(Container),
                b"type" => w(Def),
                b"const" | b"var" => w(LocalDef),
                _ => w(Name),
            },
            Lang::Java => match word {
                b"class" | b"interface" | b"enum" | b"record" => w(Container),
                b"return" | b"new" | b"throw" | b"else" | b"case" | b"yield" | b"assert"
                | b"instanceof" | b"if" | b"while" | b"for" | b"switch" | b"catch"
                | b"synchronized" | b"do" | b"try" => w(Keyword),
                _ => w(Name),
            },
            Lang::CSharp => match word {
                b"class" | b"interface" | b"enum" | b"record" | b"struct" => w(Container),
                b"delegate" | b"event" | b"namespace" => w(Def),
                b"return" | b"new" | b"throw" | b"else" | b"case" | b"yield" | b"await" | b"is"
                | b"as" | b"in" | b"out" | b"ref" | b"if" | b"while" | b"for" | b"foreach"
                | b"switch" | b"catch" | b"lock" | b"using" | b"fixed" | b"typeof" | b"sizeof"
                | b"nameof" | b"default" | b"when" | b"and" | b"or" | b"not" | b"do" | b"try"
                | b"checked" | b"unchecked" => w(Keyword),
                _ => w(Name),
            },
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match word {
                b"function" => Tok::Callable,
                b"class" => w(Container),
                b"interface" | b"enum" if self.typescript() => w(Container),
                b"namespace" | b"module" | b"declare" | b"abstract" | b"type"
                    if self.typescript() =>
                {
                    w(Def)
                }
                b"var" | b"let" | b"const" => w(LocalDef),
                b"if" | b"for" | b"while" | b"switch" | b"catch" | b"with" | b"return"
                | b"typeof" | b"new" | b"delete" | b"void" | b"throw" | b"else" | b"case"
                | b"do" | b"in" | b"of" | b"instanceof" | b"await" | b"yield" | b"try"
                | b"finally" | b"default" => w(Keyword),
                _ => w(Name),
            },
            Lang::Php => {
                let lower = word.to_ascii_lowercase();
                match &lower[..] {
                    b"class" | b"interface" | b"trait" | b"enum" => w(Container),
                    b"function" | b"const" | b"namespace" => w(Def),
                    _ => w(Name),
                }
            }
            Lang::Python | Lang::Ruby | Lang::Bash => w(Name),
        }
    }
}

/// How far the value of a JavaScript definition (`const f = …`) reads as a function:
/// `function …`, `async function …`, `(a, b) =>`, `a =>`, `async (a) =>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    No,
    /// Just after the `=` or `:`.
    Start,
    /// After a name (`a` of `a =>`, or `async`).
    Param,
    /// TypeScript: inside a generic arrow function's type parameters (`<T>(x: T) =>`), this
    /// many `<` deep.
    TypeParams(u32),
    /// Inside the parameters' parentheses, opened at this depth.
    Params(u32),
    /// After them (TypeScript: and a return type).
    AfterParams,
    /// A function: `function` or `=>` seen.
    Func,
}

/// The tokens of the statement before a `{` (since the last `;`, `{` or `}` at its level):
/// what tells a body of members, a function's body and a block that may go.
#[derive(Debug, Clone, Copy)]
struct Head {
    /// A member-holding keyword, and nothing since that makes it something else (`struct S
    /// *f(` is a function).
    container: bool,
    /// A function's head: `fn name`, a Go `func` first, a JavaScript `function` or method.
    callable: bool,
    /// `fn` or `function` was the token before (its name comes next).
    after_callable: bool,
    /// A JavaScript `function` seen.
    function: bool,
    /// JavaScript: after `const f =`, `a.f =` or `f:`, whether the value is a function
    /// (then a definition, and what its body declares is local).
    value: Value,
    first: Tok,
    last: Tok,
    prev: Tok,
    /// `new` seen (Java's anonymous classes: `new T() {`).
    new: bool,
    /// A JavaScript method's head: `name(` at the head's own level, not after a control word.
    method: bool,
    /// TypeScript: a `:` right after a `)` (a method's return type follows).
    returns: bool,
    /// JavaScript: a conditional's `?` seen, so a `:` after a `)` is its other branch
    /// (`c ? f(x) : (y) => {`), not a return type.
    ternary: bool,
    /// How many of the head's tokens, from its first, are names (`readonly x` of `readonly
    /// x: T`).
    words: u32,
    /// The head began with that `name(` (or `name?(`): in TypeScript, with `): T` after it, a
    /// method's signature (`toString(): string;` in an object type), a definition.
    signature: bool,
    /// A control word seen (`if`, `for` …).
    control: bool,
    /// The last word was an attribute's (`__attribute__`, `alignas`), whose parentheses
    /// follow.
    attribute: bool,
    /// C's and C++'s `extern` or `namespace` seen: a block opened now holds declarations.
    declarations: bool,
    /// Rust's `impl`, `mod`, `trait` or `extern`, or C#'s or TypeScript's `namespace` seen:
    /// a block opened now holds items, one after another (`Open::items`).
    items: bool,
    /// Java's `enum`: its body begins with the constants, and a member without the `;`
    /// after them would parse as one (`private Document(…) {` as a constant with a body):
    /// it is no block of items.
    constants: bool,
    /// JavaScript: a `let`, `const` or `var` seen at the head's level, whose declarators
    /// a `,` separates (`let a = 1, f = () => …`): after one, the next is declared too.
    declaring: bool,
    tokens: u32,
    /// Where the first token is.
    start: usize,
}

impl Default for Head {
    fn default() -> Head {
        Head {
            container: false,
            callable: false,
            after_callable: false,
            function: false,
            value: Value::No,
            first: Tok::None,
            last: Tok::None,
            prev: Tok::None,
            new: false,
            method: false,
            returns: false,
            ternary: false,
            signature: false,
            words: 0,
            control: false,
            attribute: false,
            declarations: false,
            items: false,
            constants: false,
            declaring: false,
            tokens: 0,
            start: 0,
        }
    }
}

/// Where the lexer is in a Rust or Go function's head, whose parameters, return type and
/// `where` clause define nothing: they are left out (`fn f(x: u8) -> u8 {` is parsed as
/// `fn f(){`, `func (s *S) f(x int) error {` as `func (s *S) f(){`; the signature is taken
/// from the source's bytes). A Go head that names `struct` or `interface` past its name (a
/// field or method of a type written there is a definition) is kept whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sig {
    None,
    /// After Go's `func` at the top level: a receiver or the name comes.
    GoFunc,
    /// Inside a Go method's receiver `(…)` (kept: it names the method's type), opened at
    /// this paren depth.
    Receiver(u32),
    /// After a Go method's receiver: its name comes.
    Received,
    /// After `fn name` (or its generic parameters).
    Name,
    /// Inside `<…>` (Go: `[…]`) after the name, this deep.
    Generics(u32),
    /// Inside the parameters: where they start, the paren depth outside, `holes` before.
    Params(usize, u32, usize),
    /// After them: where, and `holes` before.
    Ret(usize, usize),
}

/// A block the lexer is in.
struct Open {
    /// The byte after its `{`.
    inside: usize,
    /// Inside a function: its variables and constants are local.
    local: bool,
    /// Inside a body of members: nothing in it may go.
    keep_all: bool,
    /// Itself a body of members (its parent then holds a definition).
    container: bool,
    /// It holds a definition (or a block that does).
    has_def: bool,
    /// It holds any token (an empty `struct{}` defines nothing).
    content: bool,
    /// It may go when it holds no definition (C#: only bodies of statements).
    may_go: bool,
    /// `holes` before it opened (a block that goes takes its inner holes with it).
    holes_from: usize,
    /// The paren depth outside it (a closure's block inside a call's parens).
    paren: u32,
    /// A Rust macro's `name! { … }`: a token tree, which defines nothing (tree-sitter
    /// parses no items in it), so it always goes.
    macro_body: bool,
    /// A C++ namespace's or an `extern "C"` block's body: what is in it is declared as at a
    /// file's top level (unlike a function's body or an initializer's braces).
    declarations: bool,
    /// Its inside is items, one after another, as a file's top level is (an `impl`, a
    /// module, a class's body, a namespace): [`Skim::members`] are recorded in it.
    items: bool,
    /// With `items` and [`skim_until`]: where its items start that may go whole.
    members: Vec<usize>,
    /// C's and C++'s braces of an initializer (`= { … }`, and the braces inside it): data,
    /// where a conditional directive chooses between values rather than definitions.
    initializer: bool,
    /// A JavaScript function expression's body, the value of a name (`const x = function
    /// () {`): local to that function, unless a call follows it (an immediately invoked
    /// function: `function () { … }()`), whose variables are the name's.
    function_value: bool,
    /// The head outside it, which the statement goes on with after the block (`let x = S
    /// { … }.f();`): kept as it was before the `{`.
    head: Head,
}

struct Lexer<'a> {
    src: &'a [u8],
    at: usize,
    rules: Rules,
    blocks: Vec<Open>,
    holes: Vec<(usize, usize)>,
    head: Head,
    paren: u32,
    /// Only whitespace since the last newline (a C `#` directive starts a line).
    line_start: bool,
    /// Where the last word read is.
    last_word: (usize, usize),
    /// Where the token being read starts.
    token_at: usize,
    /// JavaScript template strings open around `${ … }`: the block depth of each `${`.
    templates: Vec<usize>,
    /// PHP outside `<?php … ?>`: text, not code.
    html: bool,
    /// Rust macros' `name!( … )` and `name![ … ]` open: where each one's inside starts, the
    /// block depth and paren depth outside it, and `holes` before it.
    macro_parens: Vec<(usize, usize, u32, usize)>,
    sig: Sig,
    /// C++ in a file read as C (a C++ header named `.h`): the whole parse of it has errors,
    /// from which the parse without the bodies recovers another way; it is parsed whole.
    cpp_in_c: bool,
    /// Code was left out (not only comments, annotations and guards: see [`Skim::code`]).
    code: bool,
    /// [`Skim::plain`].
    plain: Vec<(usize, usize)>,
    /// [`Skim::kept`].
    kept: Vec<(usize, usize)>,
    /// [`skim_until`]'s place.
    until: Option<usize>,
    /// [`Skim::statements`].
    statements: Vec<usize>,
    /// [`Skim::strings`].
    strings: Vec<(usize, usize)>,
    /// A statement at the top level (or an item in an items block: `Open::items`) surely
    /// ended with the last token (a `;`, a function's body, a line in Go), or nothing was
    /// read yet: a word after it starts another.
    ended: bool,
    /// `ended` before the token being read (a `}` that closes an items block: whether its
    /// last item ended).
    ended_before: bool,
    /// With [`skim_until`]: the items blocks' [`Skim::members`].
    members: Vec<Vec<usize>>,
    /// Read no further than `until`.
    stopped: bool,
    /// Where the last preprocessor line ended.
    directive_end: Option<usize>,
    /// C and C++: per `#if` open, whether it began inside a declaration's head (whose
    /// branches then go as C#'s do, `Lexer::directive`).
    conditionals: Vec<bool>,
    /// With [`skim_until`]: [`Skim::branches`].
    branches: Vec<(usize, Branch)>,
    /// How far the last [`Lexer::pass_statements`] looked.
    scanned_to: usize,
    /// Java, C#, JavaScript, TypeScript, PHP and C++: the outermost parentheses after a
    /// name open (a method's parameters, a call's or an annotation's arguments): where their
    /// inside starts and `holes` before it. Nothing in them defines unless a block or an arrow
    /// function is written there, which keeps them (`None` again); else their inside is left
    /// out at the `)`, and `f(int a, Map<K, V> b) {` is parsed as `f() {`. In JavaScript
    /// and TypeScript an array that is a value (`static params = [ … ]`, `x = […]`) goes
    /// likewise at its `]`: the byte that closes them is the third.
    arguments: Option<(usize, usize, u8)>,
    /// With [`skim_places`]: where the places of the name start, in order.
    places: &'a [usize],
}

/// C#'s contextual keywords after which parentheses are no call's arguments but an
/// expression that `()` would not stand for: `var (a, b) = …` deconstructs, and a query's
/// clauses take an expression (`select (string)p["t"]`, `where (a > b)`).
const CSHARP_NOT_CALLS: &[&[u8]] = &[
    b"var", b"select", b"where", b"orderby", b"group", b"by", b"on", b"equals", b"into", b"let",
    b"join", b"from",
];

/// C++'s words after which parentheses hold an expression, a type or an attribute
/// that `()` would not stand for (`sizeof(x)`, `decltype(a + b)`, `__attribute__((packed))`,
/// `noexcept(…)`), or a statement's condition.
const CPP_NOT_CALLS: &[&[u8]] = &[
    b"if",
    b"while",
    b"for",
    b"switch",
    b"catch",
    b"return",
    b"case",
    b"sizeof",
    b"alignof",
    b"_Alignof",
    b"__alignof__",
    b"alignas",
    b"_Alignas",
    b"decltype",
    b"__decltype",
    b"typeof",
    b"__typeof__",
    b"__typeof",
    b"noexcept",
    b"static_assert",
    b"_Static_assert",
    b"__attribute__",
    b"__attribute",
    b"__declspec",
    b"asm",
    b"__asm__",
    b"__asm",
    b"requires",
    b"operator",
    b"defined",
    b"typeid",
    b"throw",
    b"new",
    b"delete",
    b"_Generic",
    b"co_await",
    b"co_yield",
    b"co_return",
    b"__extension__",
    b"_Pragma",
    b"__pragma",
];

/// The words that may follow a C++ function's parameters ([`Lexer::cpp_parameters_go`]).
const CPP_AFTER_PARAMETERS: &[&[u8]] = &[
    b"const",
    b"volatile",
    b"noexcept",
    b"override",
    b"final",
    b"throw",
    b"requires",
    b"try",
    b"mutable",
];

/// TypeScript's type operators, after which parentheses hold a type (`x as (A | B)[]`,
/// `T extends (infer U)[]`), not a call's arguments; and `require`, whose string the grammar
/// wants in `import x = require("m")`.
const TYPESCRIPT_NOT_CALLS: &[&[u8]] = &[
    b"as",
    b"satisfies",
    b"extends",
    b"keyof",
    b"is",
    b"infer",
    b"asserts",
    b"readonly",
    b"unique",
    b"require",
];

/// C#'s modifiers, after which `(` opens a tuple type.
const CSHARP_MODIFIERS: &[&[u8]] = &[
    b"public",
    b"private",
    b"protected",
    b"internal",
    b"static",
    b"readonly",
    b"async",
    b"override",
    b"virtual",
    b"abstract",
    b"sealed",
    b"extern",
    b"unsafe",
    b"partial",
    b"const",
    b"volatile",
    b"required",
    b"file",
];

/// Whether a word is in capitals (digits and `_` besides), as a C macro's name is.
fn capitals(word: &[u8]) -> bool {
    word.iter().any(u8::is_ascii_uppercase)
        && word
            .iter()
            .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// JavaScript's and TypeScript's words after which a statement goes on at the next line
/// (`x as` over `Foo`, `class A extends` over `B`, `public` over a method).
const GOES_ON_AFTER: &[&[u8]] = &[
    b"as",
    b"satisfies",
    b"extends",
    b"implements",
    b"keyof",
    b"is",
    b"infer",
    b"unique",
    b"asserts",
    b"from",
    b"async",
    b"get",
    b"set",
    b"static",
    b"public",
    b"private",
    b"protected",
    b"readonly",
    b"override",
    b"abstract",
    b"declare",
    b"export",
    b"import",
    b"accessor",
];

/// The words that go on with the statement before them at the start of a line (`class A`
/// over `extends B`, `if (a) f()` over `else g()`).
const GOES_ON_BEFORE: &[&[u8]] = &[
    b"extends",
    b"implements",
    b"in",
    b"instanceof",
    b"as",
    b"satisfies",
    b"of",
    b"from",
    b"else",
    b"catch",
    b"finally",
    b"is",
];

/// Past white space and comments from `at`.
fn space_after(src: &[u8], mut at: usize) -> usize {
    loop {
        match src.get(at..) {
            Some([b, ..]) if b.is_ascii_whitespace() => at += 1,
            Some([b'/', b'*', ..]) => {
                at = memchr_str(&src[at + 2..], b"*/").map_or(src.len(), |n| at + 2 + n + 2);
            }
            Some([b'/', b'/', ..]) => {
                at = memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |n| at + n);
            }
            _ => return at,
        }
    }
}

/// The word that starts at `at` (empty when none does).
fn word_at(src: &[u8], at: usize) -> &[u8] {
    let rest = src.get(at..).unwrap_or_default();
    if !rest.first().copied().is_some_and(is_word_start) {
        return &[];
    }
    let len = rest.iter().position(|&b| !is_word(b)).unwrap_or(rest.len());
    &rest[..len]
}

/// Back from `at` past white space.
fn space_before(src: &[u8], mut at: usize) -> usize {
    while at > 0 && src[at - 1].is_ascii_whitespace() {
        at -= 1;
    }
    at
}

/// The word that ends, but for white space, before `at`, and where it starts (empty, at
/// `at`, when something else stands there).
fn word_before(src: &[u8], at: usize) -> (&[u8], usize) {
    let end = space_before(src, at);
    let mut start = end;
    while start > 0 && is_word(src[start - 1]) {
        start -= 1;
    }
    if start == end || !is_word_start(src[start]) {
        return (&[], at);
    }
    (&src[start..end], start)
}

/// Calling conventions and export macros whose names have no `_` (Windows', JNI's): like
/// a macro with arguments, one stands between a function's type and its name (`LRESULT
/// CALLBACK WndProc(…)`, `JNIEXPORT jint JNICALL Java_p_C_f(…)`).
const CONVENTIONS: [&[u8]; 7] = [
    b"WINAPI",
    b"WINAPIV",
    b"APIENTRY",
    b"CALLBACK",
    b"NTAPI",
    b"JNICALL",
    b"JNIEXPORT",
];

/// Whether a word may be a macro that annotates a declaration: in capitals with an
/// underscore (`LEVELDB_EXPORT`), or a calling convention (`CONVENTIONS`).
fn macro_name(word: &[u8]) -> bool {
    underscored_capitals(word) || CONVENTIONS.contains(&word)
}

/// Whether a word is a name the C and C++ standards keep for the implementation, in lower
/// case (`__glibcxx_class_requires`), and not one of the compilers' keywords spelled so
/// (`__attribute__`, `__declspec`, `__asm`, `__builtin_…`): alone on its line with its
/// arguments, a library's macro that stands for declarations or for nothing (libstdc++'s
/// concept checks in a class's body, which tree-sitter's grammar cannot read).
fn reserved_macro(word: &[u8]) -> bool {
    const KEYWORDS: &[&[u8]] = &[
        b"__declspec",
        b"__asm",
        b"__inline",
        b"__restrict",
        b"__thread",
        b"__cdecl",
        b"__stdcall",
        b"__fastcall",
        b"__vectorcall",
        b"__thiscall",
        b"__forceinline",
        b"__unaligned",
        b"__based",
        b"__try",
        b"__except",
        b"__finally",
        b"__leave",
        b"__alignof",
        b"__typeof",
        b"__extension",
        b"__volatile",
        b"__const",
        b"__signed",
        b"__label",
        b"__real",
        b"__imag",
        b"__complex",
        b"__auto_type",
        b"__has_include",
        b"__decltype",
        b"__nullptr",
    ];
    word.starts_with(b"__")
        && word.get(2).is_some_and(u8::is_ascii_lowercase)
        && !word.ends_with(b"__")
        && !word.starts_with(b"__builtin")
        && !word.starts_with(b"__int")
        && !word.starts_with(b"__ptr")
        && !word.starts_with(b"__is_")
        && !KEYWORDS.contains(&word)
}

/// Whether a word is in capitals with an underscore, at least 4 bytes: a C macro's name.
fn underscored_capitals(word: &[u8]) -> bool {
    word.len() >= 4 && word.contains(&b'_') && capitals(word)
}

/// Whether `before`, the word before a macro with arguments, is a function's type that an
/// attribute macro may follow: a name, not a keyword (`Rules::word`), nor a qualifier that
/// makes the type after it (`const STACK_OF(X509) f(void)`: the macro is the type).
fn type_word(rules: Rules, before: &[u8]) -> bool {
    const QUALIFIERS: [&[u8]; 6] = [
        b"const",
        b"volatile",
        b"unsigned",
        b"signed",
        b"long",
        b"short",
    ];
    !before.is_empty()
        && rules.word(before) == Tok::Word(Word::Name)
        && !QUALIFIERS.contains(&before)
}

/// Whether the macro `word` at `start` is a thread-safety or attribute macro after a
/// declared name or an array's size (`stats_[kNumLevels] GUARDED_BY(mutex_);`).
fn annotates_declarator(src: &[u8], start: usize, word: &[u8]) -> bool {
    const ANNOTATIONS: [&[u8]; 5] = [
        b"GUARDED",
        b"ALIGNED",
        b"ATTRIBUTE",
        b"UNUSED",
        b"DEPRECATED",
    ];
    let annotates = word.ends_with(b"_BY")
        || ANNOTATIONS
            .iter()
            .any(|w| word.windows(w.len()).any(|x| x == *w));
    let (before, before_at) = word_before(src, start);
    let declarator =
        (before_at < start && !before.is_empty()) || src[..start].trim_ascii_end().ends_with(b"]");
    annotates && declarator
}

/// Whether a macro alone on its line (`args`: with arguments) may go before `next`, the
/// word `next_word` and the byte after it.
fn alone_before(args: bool, next: u8, next_word: &[u8], after_next: u8) -> bool {
    if args {
        // A macro call that stands for declarations (`DECLARE_ASN1_ITEM(X)`), or annotates
        // the one after it; not before a name and `(`, a function whose type it may be
        // (`STACK_OF(X)` on the line before `f(void)`), unless that is such a call too.
        matches!(next, b'#' | b'}' | 0)
            || (!next_word.is_empty() && (after_next != b'(' || capitals(next_word)))
    } else {
        matches!(next, b'#' | b'}') || (!next_word.is_empty() && after_next != b'(')
    }
}

/// Whether a call of a reserved name's macro (`reserved_macro`) stands alone: on its own
/// line (`between` it and the next token, `next`), before another declaration, a directive,
/// the block's end or another such call.
fn reserved_alone(between: &[u8], next: u8, next_word: &[u8], after_next: u8) -> bool {
    between.contains(&b'\n')
        && (alone_before(true, next, next_word, after_next)
            || (after_next == b'(' && reserved_macro(next_word)))
}

/// Whether what is before `at` (its word `before`) begins a declaration without naming
/// its type: a specifier, a template's parameters, an attribute.
fn specifiers_before(src: &[u8], at: usize, before: &[u8]) -> bool {
    matches!(
        before,
        b"extern" | b"static" | b"inline" | b"friend" | b"virtual" | b"constexpr"
    ) || after_template_parameters(src, at)
        || after_attribute(src, at)
}

/// Whether `at` follows an attribute: `[[nodiscard]]`, `__attribute__((pure))`,
/// `__declspec(dllexport)`, `alignas(8)`.
fn after_attribute(src: &[u8], at: usize) -> bool {
    let end = space_before(src, at);
    src[..end].ends_with(b"]]")
        || matching(src, end, b'(', b')').is_some_and(|open| {
            matches!(
                word_before(src, open).0,
                b"__attribute__" | b"__attribute" | b"__declspec" | b"alignas"
            )
        })
}

/// Whether a class's body or base list opens at `at`, past spaces: `{`, or `:` that is not
/// `::`.
fn opens_class(src: &[u8], at: usize) -> bool {
    let at = space_after(src, at);
    match src.get(at) {
        Some(b'{') => true,
        Some(b':') => src.get(at + 1) != Some(&b':'),
        _ => false,
    }
}

/// Whether `before`, the word at `before_at`, is the name of a class, struct or union just
/// declared, also after an export macro (`class U_I18N_API RegexPattern` before `U_FINAL :`).
fn class_name_before(src: &[u8], before_at: usize, before: &[u8]) -> bool {
    if before.is_empty() || !is_word_start(before[0]) {
        return false;
    }
    let (mut key, key_at) = word_before(src, before_at);
    if macro_name(key) {
        key = word_before(src, key_at).0;
    }
    matches!(key, b"class" | b"struct" | b"union")
}

/// Whether a function's name and `(` follow `at`, after a pointer's `*` or `&` and macros
/// (`U_EXPORT2 f(`, `JEMALLOC_NOTHROW * JEMALLOC_ATTR(malloc) je_malloc(`): a declaration's
/// type ends before `at`.
fn names_function(src: &[u8], at: usize) -> bool {
    let mut at = space_after(src, at);
    while matches!(src.get(at), Some(b'*' | b'&')) {
        at = space_after(src, at + 1);
    }
    for n in 0..4 {
        let word = word_at(src, at);
        if word.is_empty() {
            return false;
        }
        let after = space_after(src, at + word.len());
        let call = src.get(after) == Some(&b'(');
        if !macro_name(word) {
            return call;
        }
        // A name in capitals, followed by its arguments, is the function when nothing else
        // is (`T U_EXPORT2 MY_FUNC(int);`).
        at = match call.then(|| parens_end(src, after)).flatten() {
            Some(close) => space_after(src, close),
            None => after,
        };
        if call && n == 0 && !is_word_start(src.get(at).copied().unwrap_or(0)) {
            return true;
        }
    }
    false
}

/// Whether the C statement from `start` to its `;` at `semi` declares functions and nothing
/// else: a type, then `name(…)` and annotations (`__THROW`, `__attribute__((…))`,
/// `OPENSSL_DEPRECATED`, `__asm__("…")`) up to the `;`. Not with a `=`, a brace, a directive
/// or `typedef` anywhere in it, nor a `,` before the name (`int a, f(void);` declares `a`),
/// nor a declarator in parentheses (`int (*fp)(int);`), nor without a type (a macro's call:
/// `DEFINE_FOO(x);`).
fn c_prototype(src: &[u8], start: usize, semi: usize) -> bool {
    let text = &src[start..semi];
    if memchr::memchr3(b'=', b'{', b'#', text).is_some() || memchr_str(text, b"typedef").is_some() {
        return false;
    }
    let annotation = |word: &[u8]| word.starts_with(b"__") || macro_name(word);
    let mut end = semi;
    loop {
        end = space_before(src, end);
        if end <= start {
            return false;
        }
        let (word, word_at) = if src[end - 1] == b')' {
            let Some(open) = matching(src, end, b'(', b')') else {
                return false;
            };
            word_before(src, open)
        } else {
            word_before(src, end)
        };
        if word.is_empty() || word_at <= start {
            return false;
        }
        if annotation(word) {
            end = word_at;
            continue;
        }
        // The name, after its `(…)`; a type before it, and no second declarator.
        let before = &src[start..word_at];
        return src[end - 1] == b')'
            && before.iter().copied().any(is_word_start)
            && !depth_zero_comma(before);
    }
}

/// Whether `text` holds a `,` outside parentheses.
fn depth_zero_comma(text: &[u8]) -> bool {
    let mut depth = 0u32;
    for &b in text {
        match b {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Whether a `*` or `&` ends a type just before `at` (`const char * U_EXPORT2 f(…)`).
fn after_pointer(src: &[u8], at: usize) -> bool {
    let end = space_before(src, at);
    let mut type_end = end;
    while type_end > 0 && matches!(src[type_end - 1], b'*' | b'&') {
        type_end -= 1;
    }
    type_end < end && !word_before(src, type_end).0.is_empty()
}

/// Whether the body of members whose inside starts at `inside` is the class, struct or union
/// `name` (`class FMT_API Formatter {`, `class vector<bool, _Alloc> : …{`).
fn names_class(src: &[u8], inside: usize, name: &[u8]) -> bool {
    let open = inside.saturating_sub(1);
    let from = open.saturating_sub(4096);
    let head_start = src[from..open]
        .iter()
        .rposition(|b| matches!(b, b';' | b'{' | b'}'))
        .map_or(from, |i| from + i + 1);
    let mut words = src[head_start..open]
        .split(|&b| !is_word(b))
        .filter(|w| !w.is_empty());
    while let Some(word) = words.next() {
        if matches!(word, b"class" | b"struct" | b"union") {
            // Past the annotation macros between the keyword and the name.
            return words.find(|w| !capitals(w)) == Some(name);
        }
    }
    false
}

/// The words before a C++ access label's `:` (Qt's `signals:`, `public slots:` too).
const ACCESS_LABELS: [&[u8]; 7] = [
    b"public",
    b"private",
    b"protected",
    b"signals",
    b"slots",
    b"Q_SIGNALS",
    b"Q_SLOTS",
];

/// Whether `at` follows a C++ access label (`ACCESS_LABELS`).
fn after_label(src: &[u8], at: usize) -> bool {
    let end = space_before(src, at);
    if end < 2 || src[end - 1] != b':' || src[end - 2] == b':' {
        return false;
    }
    ACCESS_LABELS.contains(&word_before(src, end - 1).0)
}

/// Whether the `(` at `open` follows `operator` and its symbol (`operator==(`, `operator()(`).
fn after_operator(src: &[u8], open: usize) -> bool {
    let mut end = space_before(src, open);
    let symbol = src[..end]
        .iter()
        .rev()
        .take_while(|b| b"=!<>+-*/%&|^~[]()".contains(b))
        .count();
    if symbol == 0 || symbol > 3 {
        return false;
    }
    end -= symbol;
    word_before(src, end).0 == b"operator"
}

/// Whether the `)` before `at` (a `{`) closes the arguments of `new T(…)`, `new a.b.T<U>(…)`:
/// the block is an anonymous class's body, not the block of a statement whose head holds a
/// `new` (Java's `try (var in = new FileInputStream(f)) {`).
fn after_new_call(src: &[u8], at: usize) -> bool {
    let Some(open) = matching(src, space_before(src, at), b'(', b')') else {
        return false;
    };
    let mut end = space_before(src, open);
    if let Some(lt) = matching(src, end, b'<', b'>') {
        end = space_before(src, lt);
    }
    let mut start = end;
    while start > 0 && (is_word(src[start - 1]) || src[start - 1] == b'.') {
        start -= 1;
    }
    start < end && word_before(src, start).0 == b"new"
}

/// Whether a template's parameters, `template<…>`, end just before `at`.
fn after_template_parameters(src: &[u8], at: usize) -> bool {
    matching(src, space_before(src, at), b'<', b'>')
        .is_some_and(|lt| word_before(src, lt).0 == b"template")
}

/// Where the `open` that the `close` ending just before `end` closes is (nested pairs
/// skipped), within a statement: none past a `;`, `{` or `}`.
fn matching(src: &[u8], end: usize, open: u8, close: u8) -> Option<usize> {
    if end == 0 || src[end - 1] != close {
        return None;
    }
    let mut depth = 0u32;
    let mut i = end;
    while i > 0 && end - i < 4096 {
        i -= 1;
        match src[i] {
            c if c == close => depth += 1,
            c if c == open => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
    }
    None
}

/// Whether the head before the `{` at `brace` ends in a C# method's constraints after its
/// parameters (`Send<T>(T r) where T : IRequest, new() {`): the body of a method, as after a
/// bare `)`.
fn constraints_after_params(src: &[u8], brace: usize) -> bool {
    let mut at = brace;
    while at > 0 && brace - at < 400 {
        let (word, start) = word_before(src, at);
        if word == b"where" {
            let before = space_before(src, start);
            if before > 0 && src[before - 1] == b')' {
                return true;
            }
        }
        if word.is_empty() {
            match src[at - 1] {
                b';' | b'{' | b'}' | b'=' => return false,
                _ => at -= 1,
            }
        } else {
            at = start;
        }
    }
    false
}

/// Whether the block whose inside starts at `inside` is an enum's body: `enum` among the
/// words just before its `{` (`typedef enum {`, `enum class E : int {`).
fn enum_body(src: &[u8], inside: usize) -> bool {
    let mut at = inside.saturating_sub(1);
    for _ in 0..6 {
        while at > 0 && (src[at - 1].is_ascii_whitespace() || src[at - 1] == b':') {
            at -= 1;
        }
        let (word, start) = word_before(src, at);
        if word.is_empty() {
            return false;
        }
        if word == b"enum" {
            return true;
        }
        at = start;
    }
    false
}

/// The end of the parentheses that open at `at`, past their `)`; `None` where a brace or
/// `;` comes first (not an argument list), or after 2,000 bytes.
fn parens_end(src: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut i = at;
    while i < src.len() && i < at + 2000 {
        match src[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' | b'\'' => {
                let quote = src[i];
                i += 1;
                while i < src.len() && src[i] != quote && src[i] != b'\n' {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'}' | b';' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `at` follows a function declarator's parameters, and any of `const`,
/// `volatile`, `override`, `final`, `noexcept`, `&`, `&&` after them: a `)` whose `(` has a
/// name before it that is no keyword (`f(int) const`, not `(int) x` or `if (x)`).
fn after_params(src: &[u8], at: usize) -> bool {
    let mut end = at;
    loop {
        end = space_before(src, end);
        let (word, start) = word_before(src, end);
        // Qualifiers, and annotation macros before this one (`() _GLIBCXX_TXN_SAFE_DYN
        // _GLIBCXX_NOTHROW;`).
        if matches!(
            word,
            b"const" | b"volatile" | b"override" | b"final" | b"noexcept"
        ) || underscored_capitals(word)
        {
            end = start;
        } else if end > 0 && src[end - 1] == b'&' {
            end -= 1;
        } else {
            break;
        }
    }
    if end == 0 || src[end - 1] != b')' {
        return false;
    }
    // Back to the matching `(`.
    let mut depth = 0u32;
    let mut i = end;
    while i > 0 && end - i < 2000 {
        i -= 1;
        match src[i] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    let (name, _) = word_before(src, i);
                    if after_operator(src, i) {
                        return true;
                    }
                    return !name.is_empty()
                        && !matches!(
                            name,
                            b"if"
                                | b"while"
                                | b"for"
                                | b"switch"
                                | b"return"
                                | b"sizeof"
                                | b"decltype"
                                | b"alignof"
                                | b"catch"
                                | b"noexcept"
                        );
                }
            }
            b'{' | b'}' | b';' => return false,
            _ => {}
        }
    }
    false
}

fn is_word_start(b: u8) -> bool {
    CLASSES[b as usize] & WORD_START != 0
}

fn is_word(b: u8) -> bool {
    CLASSES[b as usize] & WORD != 0
}

/// What each byte is to the lexer's loops, looked up once a byte rather than compared with
/// each kind in turn: the skim reads every byte of a file up to its last place.
static CLASSES: [u8; 256] = classes();
/// A letter of a word: ASCII letters and digits, `_`, `$`, and every byte of a UTF-8 letter.
const WORD: u8 = 1;
/// A letter a word may begin with (not a digit).
const WORD_START: u8 = 2;
/// White space other than a newline.
const BLANK: u8 = 4;
/// A byte where a block passed over unread may hold a brace that counts or hide one: a
/// brace, a quote, a comment's `/`, a C directive's `#` ([`Lexer::pass_block`]).
const PASS_STOP: u8 = 8;
/// Besides those, a byte where statements passed over unread may end or nest: brackets
/// and `;` ([`Lexer::pass_statements`]).
const STATEMENT_STOP: u8 = 16;

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let letter = c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80;
        if letter {
            t[b] |= WORD | WORD_START;
        }
        if c.is_ascii_digit() {
            t[b] |= WORD;
        }
        if c.is_ascii_whitespace() && c != b'\n' {
            t[b] |= BLANK;
        }
        if matches!(c, b'{' | b'}' | b'"' | b'\'' | b'`' | b'/' | b'#') {
            t[b] |= PASS_STOP | STATEMENT_STOP;
        }
        if matches!(c, b'(' | b')' | b'[' | b']' | b';') {
            t[b] |= STATEMENT_STOP;
        }
        b += 1;
    }
    t
}

/// Whether `bytes` begin with the end of a line (after blanks).
fn line_ends(bytes: &[u8]) -> bool {
    let blanks = run_of(bytes, BLANK);
    bytes.get(blanks).map_or(true, |&b| b == b'\n')
}

/// How many bytes at the start of `bytes` are of the class `class` ([`CLASSES`]).
fn run_of(bytes: &[u8], class: u8) -> usize {
    bytes
        .iter()
        .position(|&b| CLASSES[b as usize] & class == 0)
        .unwrap_or(bytes.len())
}

impl Lexer<'_> {
    fn peek(&self, n: usize) -> u8 {
        self.src.get(self.at + n).copied().unwrap_or(0)
    }

    fn starts(&self, s: &[u8]) -> bool {
        self.src[self.at..].starts_with(s)
    }

    fn run(&mut self) {
        while self.at < self.src.len() {
            if self.html {
                self.skip_html();
                continue;
            }
            let b = self.src[self.at];
            if b == b'\n' {
                self.newline();
                self.line_start = true;
                self.at += 1;
                continue;
            }
            if CLASSES[b as usize] & BLANK != 0 {
                self.at += run_of(&self.src[self.at..], BLANK);
                continue;
            }
            let line_start = std::mem::replace(&mut self.line_start, false);
            // Most tokens are words, and a word begins no comment, directive or attribute,
            // nor a string but for a few prefixes (`r"`, `u8R"(`, `$"`).
            let word = is_word_start(b) && !self.rules.string_prefix(b);
            if !word && self.comment() {
                continue;
            }
            if self.until.is_some() && (is_word_start(b) || b == b'#') {
                if self.statement() {
                    return;
                }
                if self.pass_statements() {
                    continue;
                }
            }
            // (A directive ends no statement, nor goes on with one.)
            if line_start && b == b'#' && (self.rules.c_like() || self.rules.lang == Lang::CSharp) {
                if self.rules.c_like() && self.cplusplus_guard() {
                    continue;
                }
                self.directive();
                continue;
            }
            self.ended_before = std::mem::replace(&mut self.ended, false);
            self.token_at = self.at;
            if b == b'#' && self.rules.lang == Lang::Rust && self.attribute() {
                continue;
            }
            if !word && self.literal() {
                continue;
            }
            if is_word_start(b) {
                if self.read_word() {
                    return;
                }
                continue;
            }
            if b.is_ascii_digit() {
                while self.at < self.src.len()
                    && (is_word(self.src[self.at]) || self.src[self.at] == b'.')
                {
                    self.at += 1;
                }
                self.token(Tok::Literal);
                continue;
            }
            self.punct(b);
        }
        self.end();
    }

    /// The word at the lexer, read and told what it is to a head. True when the file is C++
    /// read as C (`namespace`, `template` in a `.c`: [`Lexer::cpp_in_c`]), which is parsed
    /// whole, and the lexer stops.
    fn read_word(&mut self) -> bool {
        let (src, start) = (self.src, self.at);
        self.at += run_of(&src[start..], WORD);
        let text = &src[start..self.at];
        if self.rules.lang == Lang::C && matches!(text, b"namespace" | b"template") {
            self.cpp_in_c = true;
            return true;
        }
        let mut tok = self.rules.word(text);
        if tok == Tok::Word(Word::Def) && self.php_closure(start) {
            tok = Tok::Word(Word::Name);
        }
        if self.rules.c_like() && tok == Tok::Word(Word::Name) && self.annotation(start) {
            return false;
        }
        self.last_word = (start, self.at);
        self.word(tok, start);
        if self.rules.lang == Lang::Cpp && text == b"template" {
            self.template_parameters();
        }
        false
    }

    /// A string at `at`, passed over (and kept in `strings` for [`skim_until`]).
    fn literal(&mut self) -> bool {
        let start = self.at;
        if !self.string() {
            return false;
        }
        if self.until.is_some() {
            self.strings.push((start, self.at));
        }
        self.token(Tok::Literal);
        true
    }

    /// At the file's end.
    fn end(&mut self) {
        if self.until.is_some() && self.blocks.is_empty() && self.statement_starts() {
            self.statements.push(self.src.len());
        }
        // Blocks never closed (an unbalanced file, or braces split by `#if`) are kept whole.
        while let Some(open) = self.blocks.pop() {
            self.holes.truncate(open.holes_from);
        }
    }

    /// Where a word or a directive begins, a statement at the file's top level may start
    /// ([`Skim::statements`]); the first past `until` ends the read (true).
    fn statement(&mut self) -> bool {
        if !self.statement_starts() {
            return false;
        }
        if let Some(open) = self.blocks.last_mut() {
            open.members.push(self.at);
            return false;
        }
        self.statements.push(self.at);
        // Not inside an `#if` (a header's guard): the rest would go with its `#endif`.
        if self.conditionals.is_empty() && self.until.is_some_and(|until| self.at >= until) {
            self.statements.push(self.src.len());
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether a statement at the file's top level may start here, one that may go whole
    /// ([`Skim::statements`]): the last one ended, and nothing is open (a block, brackets, a
    /// function's head, a template string, an `#if`).
    fn statement_starts(&self) -> bool {
        self.ended
            && self.at_items()
            && self.paren == 0
            && self.head.tokens == 0
            && !self.conditionals.contains(&true)
            && self.macro_parens.is_empty()
            && self.arguments.is_none()
            && self.templates.is_empty()
            && self.sig == Sig::None
            && !self.html
    }

    /// A newline (`run` passes it over).
    fn newline(&mut self) {
        // A JavaScript statement ends at its line's end where the language puts a
        // semicolon: after what ends an expression, before a word that cannot go on with it
        // (`const a = f(x)` over `const b = new A(1)` and a block). A TypeScript member
        // likewise, before the next member's key (`[key: string]: string` over `Accept: T`
        // in an object type).
        if self.rules.javascript() && self.paren == 0 && self.head.tokens > 0 {
            let ends = match self.head.last {
                Tok::Word(Word::Name) => !GOES_ON_AFTER.contains(&self.last_word()),
                Tok::Literal | Tok::Punct(b')' | b']') => true,
                _ => false,
            };
            let key_ends = self.rules.typescript()
                && matches!(
                    self.head.last,
                    Tok::Word(_) | Tok::Literal | Tok::Punct(b')' | b']' | b'>' | b'}')
                );
            if (ends && self.statement_begins(self.at)) || (key_ends && self.key_begins(self.at)) {
                self.head = Head::default();
                self.ended = self.at_items();
            }
        }
        // A Go function without a body (written in assembly) ends at its line's end.
        if self.rules.lang == Lang::Go && matches!(self.sig, Sig::Ret(..)) && self.paren == 0 {
            self.sig = Sig::None;
        }
        // A Go declaration ends at its line's end where Go puts a semicolon (after a
        // name, a literal or a closing bracket): the next line's `func` or `import`
        // begins one of its own.
        if self.rules.lang == Lang::Go
            && self.blocks.is_empty()
            && self.paren == 0
            && matches!(
                self.head.last,
                Tok::Word(_) | Tok::Literal | Tok::Punct(b')' | b']' | b'}')
            )
        {
            self.head = Head::default();
            self.ended = true;
        }
    }

    /// The last word read.
    fn last_word(&self) -> &[u8] {
        self.src
            .get(self.last_word.0..self.last_word.1)
            .unwrap_or_default()
    }

    /// Whether a word that begins a statement comes after white space and comments from
    /// `at` (not one that goes on with an expression or a declaration's head: `extends`,
    /// `in`, `as` …).
    fn statement_begins(&self, at: usize) -> bool {
        let word = word_at(self.src, space_after(self.src, at));
        !word.is_empty() && !GOES_ON_BEFORE.contains(&word)
    }

    /// Whether a key begins after white space and comments from `at`: `name:` or `name?:`
    /// (not `name::`).
    fn key_begins(&self, at: usize) -> bool {
        let start = space_after(self.src, at);
        let word = word_at(self.src, start);
        if word.is_empty() {
            return false;
        }
        let mut after = space_after(self.src, start + word.len());
        if self.src.get(after) == Some(&b'?') {
            after += 1;
        }
        self.src.get(after) == Some(&b':') && self.src.get(after + 1) != Some(&b':')
    }

    /// A comment at `at`, passed over, and left out of the parse (`hole`).
    fn comment(&mut self) -> bool {
        let start = self.at;
        let found = self.comment_end();
        // Not one right after a preprocessor line: a directive ends at a newline that
        // tree-sitter takes only right after it, and past white space at its end it takes a
        // later one, after such a comment (a `#define` then ends on the comment's line).
        let after_directive = self
            .directive_end
            .is_some_and(|end| self.src[end..start].iter().all(u8::is_ascii_whitespace));
        if found && !after_directive {
            self.hole(start, self.at);
        }
        found
    }

    /// Leave a comment's bytes out: where a token or whitespace stands on either side of it
    /// (a line comment ends before its newline), so that no two tokens join. Comments apart
    /// only by whitespace are left out as one.
    fn hole(&mut self, start: usize, end: usize) {
        let src = self.src;
        joined(src, &mut self.plain, start, end);
        let from = self.blocks.last().map_or(0, |o| o.holes_from);
        if self.holes.len() > from {
            joined(src, &mut self.holes, start, end);
        } else if apart(src, start, end) {
            self.holes.push((start, end));
        }
    }

    /// Leave code out (a body, parameters, a declaration): see [`Skim::code`]. Comments,
    /// annotations and guards go through [`Lexer::hole`].
    fn cut(&mut self, start: usize, end: usize) {
        self.code = true;
        self.holes.push((start, end));
    }

    /// A C prototype at the file's level, whose `;` the lexer just passed, left out whole:
    /// outline and find_symbol name no declaration of a function (nor does ctags, by
    /// default), and most of a C header is these (the half of OpenSSL's that is not
    /// `#define`s).
    fn prototype(&mut self) {
        let start = self.head.start;
        if self.rules.lang != Lang::C
            || !self.blocks.is_empty()
            || self.head.tokens < 4
            || !c_prototype(self.src, start, self.at - 1)
        {
            return;
        }
        // In place of the comments and annotations left out inside it (and of one that
        // reaches in from before it).
        let from = self.holes.partition_point(|&(_, end)| end <= start);
        let start = self.holes.get(from).map_or(start, |&(at, _)| at.min(start));
        if apart(self.src, start, self.at) {
            self.cut_inside(start, self.at, from);
        }
    }

    /// Leave out a block's or brackets' inside, from `inside` to `end`, in place of the holes
    /// found in it (those from `holes_from` on).
    fn cut_inside(&mut self, inside: usize, end: usize, holes_from: usize) {
        if end > inside {
            self.holes.truncate(holes_from);
            self.cut(inside, end);
        }
    }

    fn comment_end(&mut self) -> bool {
        // Every comment starts with one of these (`//`, `/*`, PHP's `#`): most tokens are
        // told apart here, before the comparisons below.
        if !matches!(self.peek(0), b'/' | b'#') {
            return false;
        }
        let lang = self.rules.lang;
        let line =
            self.starts(b"//") || (lang == Lang::Php && self.starts(b"#") && self.peek(1) != b'[');
        if line {
            // To the newline, found with memchr: past C's continuations (a backslash at a
            // line's end) and up to PHP's `?>`, which ends a line comment and the code.
            let other = if self.rules.c_like() {
                b'\\'
            } else if lang == Lang::Php {
                b'?'
            } else {
                b'\n'
            };
            loop {
                let rest = &self.src[self.at.min(self.src.len())..];
                let Some(n) = memchr::memchr2(b'\n', other, rest) else {
                    self.at = self.src.len();
                    return true;
                };
                self.at += n;
                match self.src[self.at] {
                    b'\n' => return true,
                    b'\\' => {
                        self.at += 1;
                        if self.peek(0) == b'\r' {
                            self.at += 1;
                        }
                        self.at += 1;
                    }
                    _ if self.starts(b"?>") => return true,
                    _ => self.at += 1,
                }
            }
        }
        if self.starts(b"/*") {
            self.at += 2;
            let mut depth = 1;
            // Rust's block comments nest.
            let nested = lang == Lang::Rust;
            loop {
                let rest = &self.src[self.at.min(self.src.len())..];
                let found = if nested {
                    memchr::memchr2(b'*', b'/', rest)
                } else {
                    memchr::memchr(b'*', rest)
                };
                let Some(n) = found else {
                    self.at = self.src.len();
                    break;
                };
                self.at += n;
                if self.starts(b"*/") {
                    self.at += 2;
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                } else if nested && self.starts(b"/*") {
                    self.at += 2;
                    depth += 1;
                } else {
                    self.at += 1;
                }
            }
            return true;
        }
        false
    }

    /// A Rust attribute `#[…]` or `#![…]`, left out: it defines nothing, and the items and
    /// fields it stands on are nodes of their own.
    fn attribute(&mut self) -> bool {
        let start = self.at;
        let open = if self.peek(1) == b'[' {
            2
        } else if self.peek(1) == b'!' && self.peek(2) == b'[' {
            3
        } else {
            return false;
        };
        self.at += open;
        let mut depth = 1;
        while self.at < self.src.len() && depth > 0 {
            let c = self.src[self.at];
            if self.comment_end() || self.rust_string() {
                continue;
            }
            match c {
                b'[' => depth += 1,
                b']' => depth -= 1,
                _ => {}
            }
            self.at += 1;
        }
        self.hole(start, self.at);
        true
    }

    /// A preprocessor line (with its continuations): a block holding one is kept (it may
    /// define a macro, or split braces between `#if` branches), but for an initializer's
    /// braces, where only a `#define` defines (generated tables choose their values by
    /// `#if`; tree-sitter reads no directive there, and a whole parse of such a table is
    /// slow error recovery). Braces split between branches there are read as a misread
    /// and end in a parse error, and a whole parse.
    ///
    /// C#'s directives define nothing (`#define` names a symbol for `#if`) and keep no block:
    /// a method's `#if`, `#region` or `#pragma` goes with its body, which a whole parse reads
    /// with errors where an `#if` splits an `if … else` chain.
    fn directive(&mut self) {
        let hash = self.at;
        let name = word_at(self.src, space_after(self.src, self.at + 1));
        let defines = self.rules.lang != Lang::CSharp
            && (name == b"define" || !self.blocks.last().is_some_and(|o| o.initializer));
        self.pass_line(self.src.len());
        self.directive_end = Some(self.at);
        if defines {
            self.def();
        }
        if self.rules.lang == Lang::CSharp {
            match name {
                b"if" | b"endif" => self.cut(hash, self.at),
                b"else" | b"elif" => self.other_branches(hash),
                _ => {}
            }
        } else if self.rules.c_like() {
            self.conditional(name, hash);
        }
    }

    /// C and C++: an `#if` inside a declaration's head (libstdc++'s `swap(stack& s)`, then
    /// `noexcept(…)` under `#if` and another under `#else`, then the body) is read as C#'s
    /// are: its first branch without the directives, the others left out. The grammar reads
    /// a directive only between declarations or statements, and a whole parse of such a
    /// file has an error there. Elsewhere every branch is read, as before.
    fn conditional(&mut self, name: &[u8], hash: usize) {
        match name {
            b"if" | b"ifdef" | b"ifndef" => {
                // (An access label ends a head as a `;` does: `public:` then `#if`.)
                // (Comments may stand between, so not `after_label`.)
                let labelled =
                    self.head.last == Tok::Punct(b':') && ACCESS_LABELS.contains(&self.last_word());
                let in_head = self.head.tokens > 0
                    && !labelled
                    && !self.blocks.last().is_some_and(|o| o.initializer);
                self.conditionals.push(in_head);
                if in_head {
                    self.cut(hash, self.at);
                } else {
                    self.branch(hash, Branch::Open);
                }
            }
            b"else" | b"elif" if self.conditionals.last() == Some(&true) => {
                self.conditionals.pop();
                self.other_branches(hash);
            }
            b"else" | b"elif" => self.branch(hash, Branch::Next),
            // (Every `#endif` takes its `#if` off, in the guard.)
            b"endif" if self.conditionals.pop() == Some(true) => self.cut(hash, self.at),
            b"endif" => self.branch(hash, Branch::Close),
            _ => {}
        }
    }

    /// A conditional directive at `hash` that stays ([`Skim::branches`]).
    fn branch(&mut self, hash: usize, branch: Branch) {
        if self.until.is_some() {
            self.branches.push((hash, branch));
        }
    }

    /// C#: an `#if`'s first branch is read as if its directives were not there, and the
    /// branches after it (from an `#else` or `#elif` line, here at `hash`, to its `#endif`
    /// line) are left out, as a compiler that takes the first branch reads the file.
    /// tree-sitter's grammar reads a directive as a node that holds whole declarations or
    /// statements: one inside a method's head (a body under `#if`, its `;` under `#else`:
    /// serilog's `ILogger.cs`) is a parse error, and a whole parse of such a file was
    /// mostly error recovery. As ctags does, the outline follows the first branch.
    fn other_branches(&mut self, hash: usize) {
        let src = self.src;
        let mut line = (self.at + 1).min(src.len());
        let mut depth = 0u32;
        let blank = |mut at: usize| {
            while src.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
                at += 1;
            }
            at
        };
        while line < src.len() {
            let sign = blank(line);
            if src[sign] == b'#' {
                match word_at(src, blank(sign + 1)) {
                    b"if" | b"ifdef" | b"ifndef" => depth += 1,
                    b"endif" if depth == 0 => {
                        let end =
                            memchr::memchr(b'\n', &src[line..]).map_or(src.len(), |n| line + n);
                        self.cut(hash, end);
                        self.at = end;
                        return;
                    }
                    b"endif" => depth -= 1,
                    _ => {}
                }
            }
            line = memchr::memchr(b'\n', &src[line..]).map_or(src.len(), |n| line + n + 1);
        }
    }

    /// C's `extern "C"` guard for C++ readers, left out whole:
    /// `#ifdef __cplusplus` (or `#if defined(__cplusplus)`), one line `extern "C" {` or `}`,
    /// `#endif`. Its brace is half of a pair split across two guards, which no grammar
    /// reads (the whole parse of such a header has an error); without it the declarations
    /// between stand at the top level, as a C compiler sees them.
    fn cplusplus_guard(&mut self) -> bool {
        let src = self.src;
        let line_end =
            |from: usize| memchr::memchr(b'\n', &src[from..]).map_or(src.len(), |n| from + n);
        let squeezed = |from: usize, to: usize| -> Vec<u8> {
            let mut text: Vec<u8> = src[from..to]
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            // A comment after the directive or the brace (`} /* extern "C" */`).
            if let Some(at) = text.windows(2).position(|w| w == b"/*" || w == b"//") {
                text.truncate(at);
            }
            text
        };
        let first = line_end(self.at);
        if !matches!(
            &squeezed(self.at, first)[..],
            b"#ifdef__cplusplus" | b"#ifdefined(__cplusplus)" | b"#ifdefined__cplusplus"
        ) || first >= src.len()
        {
            return false;
        }
        let second = line_end(first + 1);
        if !matches!(&squeezed(first + 1, second)[..], b"extern\"C\"{" | b"}")
            || second >= src.len()
        {
            return false;
        }
        let third = line_end(second + 1);
        if squeezed(second + 1, third) != b"#endif" {
            return false;
        }
        self.hole(self.at, third);
        self.at = third;
        true
    }

    /// A C or C++ macro that annotates a declaration where the grammar expects none, left
    /// out with its arguments (the word at `start`, the lexer just past it): tree-sitter
    /// reads the declaration around it wrongly or with an error, and the file would be
    /// parsed whole again for nothing (every `.h` of libstdc++ opens with `namespace std
    /// _GLIBCXX_VISIBILITY(default) {`). A macro is a word in capitals with an underscore
    /// (`LEVELDB_EXPORT`), and only these places take one:
    /// - after a namespace's name, before its `{`;
    /// - between `class`, `struct` or `union` and the name, when a body or base list
    ///   follows the name, or another such macro and then one (`class LEVELDB_EXPORT DB :
    ///   public X {`);
    /// - first in a declaration, before its type and name (`OSSL_DEPRECATEDIN_3_0 int
    ///   f(void);`, `LEVELDB_EXPORT Cache* NewLRUCache(size_t)`), also after an access label,
    ///   a template's parameters, an attribute or `static`, `friend`, `virtual` …
    ///   (`template<typename _Tp> _GLIBCXX20_CONSTEXPR inline void`, `[[nodiscard]]
    ///   _GLIBCXX20_CONSTEXPR bool`);
    /// - there, before a constructor or destructor (`_GLIBCXX20_CONSTEXPR\n
    ///   _Bit_reference(…)` in `struct _Bit_reference`) or another macro (`Q_OBJECT\n
    ///   Q_PROPERTY(…)`), but not before another name and `(`, whose type it may be;
    /// - alone on its line where a declaration may start, before anything but a name and
    ///   `(` (`_GLIBCXX_BEGIN_NAMESPACE_VERSION`), also with arguments, a macro that stands
    ///   for declarations (`DECLARE_ASN1_ITEM(X509)`, without a `;`);
    /// - after a function's or operator's parameters (and `const`, `override`, other such
    ///   macros …), before its `;`, body, initializers or another such macro (`void Lock()
    ///   EXCLUSIVE_LOCK_FUNCTION(mu_);`, `operator=(bool) _GLIBCXX_NOEXCEPT`);
    /// - after a declared name or an array's size, a thread-safety or attribute macro
    ///   (`int total GUARDED_BY(mu);`, `typedef _Arg argument_type _GLIBCXX17_DEPRECATED;`);
    /// - after a class's, struct's or union's name, before its body or base list (`class
    ///   U_I18N_API RegexPattern U_FINAL : public UObject {`);
    /// - between a function's type and its name, past a pointer's `*` and other such macros
    ///   (`static inline void _X_ATTRIBUTE_PRINTF(1, 0) VErrorF(…)`, `U_CAPI int32_t
    ///   U_EXPORT2 u_strlen(…)`, `void * JEMALLOC_ATTR(malloc) je_malloc(…)`): after a name,
    ///   not a keyword (`Rules::word`) or a qualifier, where it is the type (`const
    ///   STACK_OF(X509) f(void)`).
    ///
    /// What stands before the macro is read past the macros already left out before it, so
    /// that a run of them is read as one (`template<…> FMT_CONSTEVAL FMT_ALWAYS_INLINE
    /// fstring(…)`).
    fn annotation(&mut self, start: usize) -> bool {
        let src = self.src;
        let Some(reserved) = self.macro_at(start) else {
            return false;
        };
        let word = &src[start..self.at];
        let after_word = space_after(src, self.at);
        let args = match src.get(after_word) {
            Some(b'(') => parens_end(src, after_word),
            _ => None,
        };
        let end = args.unwrap_or(self.at);
        let next_at = space_after(src, end);
        let next = src.get(next_at).copied().unwrap_or(0);
        // What stands before, past the macros left out just before this one (`template<…>
        // FMT_CONSTEVAL FMT_ALWAYS_INLINE fstring(…)`, `void * JEMALLOC_ATTR(malloc)
        // JEMALLOC_ALLOC_SIZE(1) je_malloc(…)`).
        let lead = self.past_holes(start);
        let (before, before_at) = word_before(src, lead);
        let (second, _) = word_before(src, before_at);
        let next_word = word_at(src, next_at);
        let after_next_at = space_after(src, next_at + next_word.len());
        let after_next = src.get(after_next_at).copied().unwrap_or(0);
        // A declaration starts here: its statement has no token yet, or the lexer's last is
        // a `}` (a function's body, after which the statement goes on as far as the lexer
        // knows: `struct S { … } s;`), or it follows an access label (`public:`).
        let fresh =
            self.head.tokens == 0 || self.head.last == Tok::Punct(b'}') || after_label(src, start);
        let ends_declarator = matches!(next, b';' | b'{' | b':' | b'=' | b',')
            || (is_word_start(next) && capitals(next_word));
        let place = if reserved {
            fresh
                && args.is_some()
                && reserved_alone(&src[end..next_at], next, next_word, after_next)
        } else if second == b"namespace" && !before.is_empty() {
            next == b'{'
        } else if matches!(before, b"class" | b"struct" | b"union") {
            !next_word.is_empty()
                && (matches!(after_next, b'{' | b':') || {
                    let then = word_at(src, after_next_at);
                    then == b"final"
                        || (macro_name(then) && opens_class(src, after_next_at + then.len()))
                })
        } else if class_name_before(src, before_at, before) {
            opens_class(src, end)
        } else if fresh || specifiers_before(src, lead, before) {
            let own_line = fresh && src[end..next_at].contains(&b'\n');
            let alone = own_line && alone_before(args.is_some(), next, next_word, after_next);
            // Before `name(` a word may be the type of a function `name`; not before a
            // macro call (`Q_OBJECT` over `Q_PROPERTY(…)`), nor before a constructor (the
            // class's name, after `_GLIBCXX20_CONSTEXPR`) or a destructor.
            let before_constructor = args.is_none()
                && (next == b'~'
                    || (after_next == b'('
                        && !next_word.is_empty()
                        && (capitals(next_word)
                            || self.blocks.last().is_some_and(|o| {
                                o.container && names_class(src, o.inside, next_word)
                            }))));
            alone
                || before_constructor
                || (!next_word.is_empty()
                    && (is_word_start(after_next)
                        || matches!(after_next, b'*' | b'&' | b':' | b'<' | b'#')))
        } else if after_params(src, lead) {
            ends_declarator
        } else if names_function(src, end) {
            type_word(self.rules, before) || (before.is_empty() && after_pointer(src, lead))
        } else {
            matches!(next, b';' | b',' | b'=' | b'{') && annotates_declarator(src, start, word)
        };
        if !place {
            return false;
        }
        self.hole(start, end);
        self.at = end;
        true
    }

    /// Whether the word from `start` to here may be a macro that `annotation` leaves out: a
    /// macro's name or a reserved one (`reserved_macro`: then `Some(true)`), at the head's
    /// level, not in an enum's body (where words in capitals are its enumerators).
    fn macro_at(&self, start: usize) -> Option<bool> {
        let src = self.src;
        let word = &src[start..self.at];
        let reserved = reserved_macro(word);
        let candidate = (macro_name(word) || reserved)
            && self.paren == self.blocks.last().map_or(0, |o| o.paren)
            && start
                .checked_sub(1)
                .map_or(true, |i| src[i].is_ascii_whitespace())
            && !self.blocks.last().is_some_and(|o| enum_body(src, o.inside));
        candidate.then_some(reserved)
    }

    /// Back from `at` past white space and the annotations and comments left out just
    /// before it.
    fn past_holes(&self, at: usize) -> usize {
        let mut at = space_before(self.src, at);
        for &(start, end) in self.plain.iter().rev() {
            if end < at || space_before(self.src, end) > at {
                break;
            }
            at = space_before(self.src, start.min(at));
        }
        at
    }

    /// PHP's text outside `<?php … ?>`.
    fn skip_html(&mut self) {
        match memchr_str(&self.src[self.at..], b"<?") {
            Some(n) => {
                self.at += n + 2;
                if self.src[self.at..].len() >= 3
                    && self.src[self.at..self.at + 3].eq_ignore_ascii_case(b"php")
                {
                    self.at += 3;
                } else if self.peek(0) == b'=' {
                    self.at += 1;
                }
                self.html = false;
            }
            None => self.at = self.src.len(),
        }
    }

    /// A string, character or other literal text at `at`, passed over.
    fn string(&mut self) -> bool {
        let b = self.src[self.at];
        match self.rules.lang {
            Lang::Rust => self.rust_string(),
            Lang::C | Lang::Cpp => {
                if self.rules.lang == Lang::Cpp && self.cpp_raw_string() {
                    return true;
                }
                if b == b'"' || b == b'\'' {
                    self.quoted(b, true);
                    return true;
                }
                false
            }
            Lang::Go => match b {
                b'"' | b'\'' => {
                    self.quoted(b, true);
                    true
                }
                b'`' => {
                    self.until(1, b"`");
                    true
                }
                _ => false,
            },
            Lang::Java => {
                if b == b'"' && self.starts(b"\"\"\"") {
                    self.at += 3;
                    while self.at < self.src.len() && !self.starts(b"\"\"\"") {
                        self.at += if self.src[self.at] == b'\\' { 2 } else { 1 };
                    }
                    self.at = (self.at + 3).min(self.src.len());
                    return true;
                }
                if b == b'"' || b == b'\'' {
                    self.quoted(b, true);
                    return true;
                }
                false
            }
            Lang::CSharp => self.csharp_string(),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match b {
                b'"' | b'\'' => {
                    self.quoted(b, true);
                    true
                }
                b'`' => {
                    self.at += 1;
                    self.template();
                    true
                }
                b'/' if self.regex_may_start() => {
                    self.regex();
                    true
                }
                _ => false,
            },
            Lang::Php => self.php_string(),
            Lang::Python | Lang::Ruby | Lang::Bash => false,
        }
    }

    /// A string from its quote at `at` to the same quote unescaped; with `line`, also to the
    /// end of the line (an unterminated one stops there).
    fn quoted(&mut self, quote: u8, line: bool) {
        self.at += 1;
        loop {
            let rest = &self.src[self.at.min(self.src.len())..];
            let found = if line {
                memchr::memchr3(quote, b'\\', b'\n', rest)
            } else {
                memchr::memchr2(quote, b'\\', rest)
            };
            let Some(n) = found else {
                self.at = self.at.max(self.src.len());
                return;
            };
            self.at += n;
            if self.src[self.at] == b'\\' {
                self.at += 2;
                continue;
            }
            // The closing quote, or the newline that ends a string of one line.
            self.at += 1;
            return;
        }
    }

    /// Past `skip` bytes, then to the end of `end` (or of the source).
    fn until(&mut self, skip: usize, end: &[u8]) {
        self.at += skip;
        match memchr_str(&self.src[self.at.min(self.src.len())..], end) {
            Some(n) => self.at += n + end.len(),
            None => self.at = self.src.len(),
        }
    }

    fn rust_string(&mut self) -> bool {
        let rest = &self.src[self.at..];
        // Prefixes: b"", c"", r"", br"", cr"", r#""#.
        let mut p = 0;
        if matches!(rest.first(), Some(b'b' | b'c')) {
            p = 1;
        }
        let raw = rest.get(p) == Some(&b'r');
        if raw {
            let mut q = p + 1;
            while rest.get(q) == Some(&b'#') {
                q += 1;
            }
            if rest.get(q) != Some(&b'"') {
                return false;
            }
            // `r#ident` is a raw identifier, not a string.
            let hashes = q - p - 1;
            let mut end = vec![b'"'];
            end.extend(std::iter::repeat(b'#').take(hashes));
            self.until(q + 1, &end);
            return true;
        }
        match rest.get(p) {
            Some(b'"') => {
                self.at += p;
                self.quoted(b'"', false);
                true
            }
            Some(b'\'') => {
                self.at += p;
                self.char_or_lifetime();
                true
            }
            _ => false,
        }
    }

    /// `'a'`, `'\n'`, `'é'` is a character; `'a` (`'static`, a label) is a lifetime.
    fn char_or_lifetime(&mut self) {
        let rest = &self.src[self.at..];
        if rest.get(1) == Some(&b'\\') {
            self.quoted(b'\'', true);
            return;
        }
        // One character (UTF-8: up to 4 bytes), then the closing quote.
        let width = match rest.get(1) {
            Some(&c) if c < 0x80 => 1,
            Some(&c) if c >= 0xf0 => 4,
            Some(&c) if c >= 0xe0 => 3,
            Some(_) => 2,
            None => 1,
        };
        if rest.get(1 + width) == Some(&b'\'') {
            self.at += 2 + width;
        } else {
            self.at += 1;
            while self.at < self.src.len() && is_word(self.src[self.at]) {
                self.at += 1;
            }
        }
    }

    /// C++'s `R"delim( … )delim"` (with `u8R`, `LR`, `uR`, `UR`).
    fn cpp_raw_string(&mut self) -> bool {
        let rest = &self.src[self.at..];
        // Most tokens begin with none of the prefixes' letters.
        if !rest.first().is_some_and(|&b| self.rules.string_prefix(b)) {
            return false;
        }
        let prefix = [&b"R\""[..], b"u8R\"", b"LR\"", b"uR\"", b"UR\""]
            .into_iter()
            .find(|p| rest.starts_with(p));
        let Some(prefix) = prefix else { return false };
        // Not inside a longer name (`FOOR"` is not a raw string's start).
        if self.at > 0 && is_word(self.src[self.at - 1]) {
            return false;
        }
        let after = &rest[prefix.len()..];
        let Some(open) = after.iter().take(17).position(|&c| c == b'(') else {
            return false;
        };
        let mut end = vec![b')'];
        end.extend_from_slice(&after[..open]);
        end.push(b'"');
        self.until(prefix.len() + open + 1, &end);
        true
    }

    fn csharp_string(&mut self) -> bool {
        let rest = &self.src[self.at..];
        let dollars = rest.iter().take_while(|&&c| c == b'$').count();
        let at_sign = rest.get(dollars) == Some(&b'@') || (dollars == 0 && rest.starts_with(b"@$"));
        let skip = dollars + usize::from(at_sign) + usize::from(rest.starts_with(b"@$"));
        let quotes = rest[skip..].iter().take_while(|&&c| c == b'"').count();
        if quotes == 0 {
            if dollars == 0 && !at_sign && rest[0] == b'\'' {
                self.quoted(b'\'', true);
                return true;
            }
            return false;
        }
        let interpolated = dollars > 0 || rest.starts_with(b"@$");
        if quotes >= 3 && !at_sign {
            // A raw string: to the same run of quotes; its holes `{…}` hold no quotes we
            // could miss. (`@""""` is a verbatim string of one doubled quote.)
            let end = vec![b'"'; quotes];
            self.until(skip + quotes, &end);
            return true;
        }
        self.at += skip + 1;
        let verbatim = at_sign;
        while self.at < self.src.len() {
            let c = self.src[self.at];
            if c == b'\\' && !verbatim {
                self.at += 2;
                continue;
            }
            if c == b'"' {
                if verbatim && self.peek(1) == b'"' {
                    self.at += 2;
                    continue;
                }
                self.at += 1;
                return true;
            }
            if c == b'\n' && !verbatim {
                return true;
            }
            if interpolated && c == b'{' {
                if self.peek(1) == b'{' {
                    self.at += 2;
                    continue;
                }
                self.interpolation();
                continue;
            }
            self.at += 1;
        }
        true
    }

    /// A C# interpolation `{ … }`, strings inside it passed over.
    fn interpolation(&mut self) {
        let mut depth = 0;
        while self.at < self.src.len() {
            let c = self.src[self.at];
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return;
                    }
                }
                b'"' | b'@' | b'$' | b'\'' if self.csharp_string() => continue,
                b'\n' => return,
                _ => {}
            }
            self.at += 1;
        }
    }

    fn php_string(&mut self) -> bool {
        let b = self.src[self.at];
        if b == b'\'' || b == b'"' || b == b'`' {
            self.quoted(b, false);
            return true;
        }
        if self.starts(b"<<<") {
            let mut p = self.at + 3;
            while matches!(self.src.get(p), Some(b' ' | b'\t')) {
                p += 1;
            }
            let quote = matches!(self.src.get(p), Some(b'\'' | b'"'));
            if quote {
                p += 1;
            }
            let start = p;
            while p < self.src.len() && is_word(self.src[p]) {
                p += 1;
            }
            let id = &self.src[start..p];
            if id.is_empty() {
                return false;
            }
            // To a line that starts (after indentation) with the identifier, not followed by
            // a word character.
            let mut line = match memchr_str(&self.src[p..], b"\n") {
                Some(n) => p + n + 1,
                None => self.src.len(),
            };
            while line < self.src.len() {
                let mut q = line;
                while matches!(self.src.get(q), Some(b' ' | b'\t')) {
                    q += 1;
                }
                if self.src[q..].starts_with(id)
                    && !self.src.get(q + id.len()).is_some_and(|&c| is_word(c))
                {
                    self.at = q + id.len();
                    return true;
                }
                line = match memchr_str(&self.src[line..], b"\n") {
                    Some(n) => line + n + 1,
                    None => self.src.len(),
                };
            }
            self.at = self.src.len();
            return true;
        }
        false
    }

    /// A JavaScript template string's text after its backtick, to its end or to a `${`,
    /// whose code the main loop lexes (`}` at the same block depth comes back here).
    fn template(&mut self) {
        while self.at < self.src.len() {
            match self.src[self.at] {
                b'\\' => self.at += 2,
                b'`' => {
                    self.at += 1;
                    return;
                }
                b'$' if self.peek(1) == b'{' => {
                    self.at += 2;
                    self.templates.push(self.blocks.len());
                    // The `${` opens no block of its own: `}` at this depth ends it.
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    /// Whether a `/` here starts a regular expression: not after what ends an operand.
    fn regex_may_start(&self) -> bool {
        if matches!(self.peek(1), b'/' | b'*') {
            return false;
        }
        !matches!(
            self.head.last,
            Tok::Word(Word::Name | Word::LocalDef | Word::Def | Word::Container)
                | Tok::Literal
                | Tok::Punct(b')' | b']' | b'}')
        )
    }

    fn regex(&mut self) {
        self.at += 1;
        let mut class = false;
        while self.at < self.src.len() {
            match self.src[self.at] {
                b'\\' => self.at += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => {
                    self.at += 1;
                    while self.at < self.src.len() && is_word(self.src[self.at]) {
                        self.at += 1;
                    }
                    return;
                }
                b'\n' => return,
                _ => {}
            }
            self.at += 1;
        }
    }

    /// A Rust function's head at punctuation `b` (just passed): its parameters and what
    /// follows them to the body (or `;`) are left out.
    fn signature(&mut self, b: u8) {
        let pos = self.at - 1;
        let (open, close) = if self.rules.lang == Lang::Go {
            (b'[', b']')
        } else {
            (b'<', b'>')
        };
        self.sig = match (self.sig, b) {
            (Sig::GoFunc, b'(') => Sig::Receiver(self.paren),
            (Sig::Receiver(paren), b')') if self.paren == paren + 1 => Sig::Received,
            (Sig::Receiver(paren), _) => Sig::Receiver(paren),
            (Sig::Name, c) if c == open => Sig::Generics(1),
            (Sig::Generics(d), c) if c == open => Sig::Generics(d + 1),
            (Sig::Generics(1), c) if c == close => Sig::Name,
            (Sig::Generics(d), c) if c == close => Sig::Generics(d - 1),
            (Sig::Generics(d), _) => Sig::Generics(d),
            (Sig::Name, b'(') => Sig::Params(self.at, self.paren, self.holes.len()),
            (Sig::Params(inside, paren, from), b')') if self.paren == paren + 1 => {
                self.holes.truncate(from);
                if pos > inside {
                    self.cut(inside, pos);
                }
                Sig::Ret(self.at, self.holes.len())
            }
            (Sig::Params(..), b'{' | b'}' | b';') => Sig::None,
            (Sig::Params(inside, paren, from), _) => Sig::Params(inside, paren, from),
            (Sig::Ret(after, from), b'{' | b';') if self.paren == 0 => {
                self.holes.truncate(from);
                if pos > after {
                    self.cut(after, pos);
                }
                Sig::None
            }
            (Sig::Ret(..), b'{' | b'}' | b';') => Sig::None,
            (Sig::Ret(after, from), _) => Sig::Ret(after, from),
            _ => Sig::None,
        };
    }

    /// A Rust `use` declaration from its word at `start`, passed over to its `;` and left
    /// out.
    fn use_declaration(&mut self, start: usize) {
        let mut depth = 0u32;
        while self.at < self.src.len() {
            if self.comment_end() {
                continue;
            }
            match self.src[self.at] {
                b'{' => depth += 1,
                b'}' => depth = depth.saturating_sub(1),
                b';' if depth == 0 => {
                    self.at += 1;
                    self.holes.truncate(self.holes_floor(start));
                    self.cut(start, self.at);
                    return;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// A word in a Go function's head: the name after `func` or the receiver; `struct` or
    /// `interface` keeps the rest of the head.
    fn go_signature_word(&mut self, tok: Tok) {
        self.sig = match (self.sig, tok) {
            (Sig::GoFunc | Sig::Received, Tok::Word(Word::Name)) => Sig::Name,
            (Sig::Generics(_) | Sig::Params(..) | Sig::Ret(..), Tok::Word(Word::Container)) => {
                Sig::None
            }
            (Sig::Receiver(_) | Sig::Generics(_) | Sig::Params(..) | Sig::Ret(..), _) => self.sig,
            _ => Sig::None,
        };
    }

    /// Go's `import ( … )` after its word: the inside of the parentheses is left out (Go
    /// allows `import ()`). False, and nothing passed over, for `import "path"`.
    fn go_imports(&mut self) -> bool {
        let mut p = self.at;
        while p < self.src.len() && self.src[p].is_ascii_whitespace() {
            p += 1;
        }
        if self.src.get(p) != Some(&b'(') {
            return false;
        }
        self.at = p + 1;
        let inside = self.at;
        while self.at < self.src.len() {
            if self.comment_end() || self.string() {
                continue;
            }
            if self.src[self.at] == b')' {
                if self.at > inside {
                    self.cut(inside, self.at);
                }
                self.at += 1;
                self.head = Head::default();
                return true;
            }
            self.at += 1;
        }
        // Never closed: the rest of the file was inside (it does not parse).
        true
    }

    /// How many holes lie before `start` (those after it are inside what is left out).
    fn holes_floor(&self, start: usize) -> usize {
        self.holes.partition_point(|&(_, end)| end <= start)
    }

    /// Whether a `(`, `[` or `{` here opens a Rust macro's token tree (`name!(`).
    fn macro_call(&self) -> bool {
        self.rules.lang == Lang::Rust
            && self.head.last == Tok::Punct(b'!')
            && self.head.prev == Tok::Word(Word::Name)
    }

    /// The block the lexer is in holds a definition (none does inside a macro's
    /// parentheses, which all go).
    fn def(&mut self) {
        if !self.macro_parens.is_empty() {
            return;
        }
        if let Some(open) = self.blocks.last_mut() {
            open.has_def = true;
        }
    }

    /// Whether the innermost block is a `switch`'s body.
    fn in_switch(&self) -> bool {
        self.blocks.last().is_some_and(|o| {
            let open = o.inside.saturating_sub(1);
            matching(self.src, space_before(self.src, open), b'(', b')')
                .is_some_and(|paren| word_before(self.src, paren).0 == b"switch")
        })
    }

    fn local(&self) -> bool {
        self.blocks.last().is_some_and(|o| o.local)
    }

    /// Where items follow one another: the file's top level, or a block of items.
    fn at_items(&self) -> bool {
        self.blocks.last().map_or(true, |o| o.items)
    }

    /// In a C++ namespace's or an `extern "C"` block's body.
    fn in_declarations(&self) -> bool {
        self.blocks.last().is_some_and(|o| o.declarations)
    }

    fn token(&mut self, tok: Tok) {
        if let Some(open) = self.blocks.last_mut() {
            open.content = true;
        }
        // `D(x) ? function (t) {`: a function's own head follows the call, which was no
        // method's.
        if tok == Tok::Callable && self.rules.javascript() {
            self.head.method = false;
        }
        self.head.value = match (self.head.value, tok) {
            (Value::No, _) => Value::No,
            (Value::Start | Value::Param, Tok::Callable) => Value::Func,
            (Value::Start | Value::Param, Tok::Word(Word::Name)) => Value::Param,
            (Value::Start | Value::Param, Tok::Punct(b'(')) => {
                Value::Params(self.paren.saturating_sub(1))
            }
            (Value::Start | Value::Param, Tok::Punct(b'<')) if self.rules.typescript() => {
                Value::TypeParams(1)
            }
            (Value::TypeParams(d), Tok::Punct(b'<')) => Value::TypeParams(d + 1),
            (Value::TypeParams(1), Tok::Punct(b'>')) => Value::Start,
            (Value::TypeParams(d), Tok::Punct(b'>')) => Value::TypeParams(d - 1),
            (Value::TypeParams(d), _) => Value::TypeParams(d),
            (Value::Param | Value::AfterParams, Tok::Arrow) => Value::Func,
            (Value::Params(d), Tok::Punct(b')')) if self.paren == d => Value::AfterParams,
            (Value::Params(d), _) => Value::Params(d),
            (Value::AfterParams, _) if self.rules.typescript() => Value::AfterParams,
            (Value::Func, _) => Value::Func,
            _ => Value::No,
        };
        if self.head.words == self.head.tokens && matches!(tok, Tok::Word(Word::Name | Word::Def)) {
            self.head.words += 1;
        }
        if self.head.tokens == 0 {
            self.head.first = tok;
            self.head.start = self.token_at;
        }
        self.head.tokens += 1;
        self.head.prev = self.head.last;
        self.head.last = tok;
    }

    // Long: one match over the keywords of nine languages, each arm what that word means to a
    // definition's head (`fn`, `func`, `function`, a type keyword, `impl`, a C declarator's
    // name); split by language, every part would carry the same head state.
    fn word(&mut self, tok: Tok, start: usize) {
        let lang = self.rules.lang;
        if lang == Lang::Php && self.php_import(start) {
            return;
        }
        let word = &self.src[start..self.at];
        if self.rules.c_like() && matches!(word, b"namespace" | b"extern") {
            self.head.declarations = true;
        }
        self.head.items |= match lang {
            Lang::Rust => matches!(word, b"impl" | b"mod" | b"trait" | b"extern"),
            Lang::CSharp | Lang::TypeScript | Lang::Tsx => word == b"namespace",
            _ => false,
        };
        self.head.constants |= lang == Lang::Java && word == b"enum";
        let after_dot = matches!(self.head.last, Tok::Punct(b'.'))
            || (lang == Lang::Php && matches!(self.head.last, Tok::Punct(b':')));
        if tok == Tok::Word(Word::LocalDef) && self.rules.javascript() && self.paren == 0 {
            self.head.declaring |= !after_dot;
        }
        match tok {
            Tok::Callable => {
                match lang {
                    // A Go function is declared at the top level; a `func` inside a block
                    // is a literal, never a definition (its variables are the enclosing
                    // definition's: `var tests = []T{{func() { var k int }}}`).
                    Lang::Go => {
                        if self.head.tokens == 0 && self.blocks.is_empty() {
                            self.head.callable = true;
                            self.sig = Sig::GoFunc;
                        }
                    }
                    Lang::Rust => {}
                    _ => {
                        // A JavaScript `function` may be named, and defines where it is
                        // assigned or declared: conservatively, anywhere.
                        self.head.function = true;
                        self.def();
                    }
                }
                // Rust's `fn name` in a block is a nested function, `fn(` a pointer type; a
                // JavaScript function is a definition whose body is local when named (else
                // when it is a definition's value, `open`).
                self.token(tok);
                self.head.after_callable = true;
                return;
            }
            Tok::Word(Word::Name) if self.head.after_callable => {
                self.head.callable = true;
                self.def();
                if lang == Lang::Rust {
                    self.sig = Sig::Name;
                    self.token(tok);
                    self.head.after_callable = false;
                    return;
                }
            }
            // Go's `import ( … )` defines nothing: its inside is left out.
            Tok::Word(Word::Name)
                if lang == Lang::Go
                    && word == b"import"
                    && self.head.tokens == 0
                    && self.blocks.is_empty()
                    && self.go_imports() =>
            {
                return;
            }
            // A `use` declaration defines nothing: left out whole.
            Tok::Word(Word::Name)
                if lang == Lang::Rust
                    && word == b"use"
                    && self.head.tokens == 0
                    && self.paren == 0
                    && self.macro_parens.is_empty() =>
            {
                self.use_declaration(start);
                return;
            }
            Tok::Word(Word::Def) if !after_dot => self.def(),
            Tok::Word(Word::LocalDef) if !after_dot && !self.local() => self.def(),
            Tok::Word(Word::Container) if !after_dot => {
                // C's `struct S *f(struct T *p) {` is a function's body.
                if !self.rules.c_like() || self.paren == 0 {
                    self.head.container = true;
                }
                // Go's `struct` and `interface` in a body are types (`interface{}`,
                // `struct{}{}`), C's `struct S *p` names a type: they define only with a
                // body (`close`). The others' `struct S`, `class C` define themselves.
                if !matches!(lang, Lang::Go | Lang::C | Lang::Cpp) {
                    self.def();
                }
            }
            Tok::Word(Word::Keyword) => {
                if word == b"new" {
                    self.head.new = true;
                }
                // `bool operator==(…)` outside a function declares or defines one.
                if word == b"operator" && !after_dot && self.in_declarations() {
                    self.def();
                }
                if matches!(
                    word,
                    b"if" | b"for" | b"while" | b"switch" | b"catch" | b"with"
                ) {
                    self.head.control = true;
                }
            }
            _ => {}
        }
        if lang == Lang::Go {
            self.go_signature_word(tok);
        } else if self.sig == Sig::Name {
            self.sig = Sig::None;
        }
        self.head.after_callable = false;
        // C's `struct __attribute__((packed)) S {` is still a struct's body.
        self.head.attribute = word.starts_with(b"__") || word == b"alignas" || word == b"_Alignas";
        self.token(tok);
    }

    // Long: one match over the punctuation that opens or closes a block or a head (`{`, `}`,
    // brackets, `;`, `,`, `=`, `=>`, `->`, `::`, `:`), each arm deciding whether what follows
    // may be left out; the arms read the same head and depth, which a split would pass around.
    fn punct(&mut self, b: u8) {
        self.at += 1;
        // `function* name`: the name still comes.
        if b != b'*' {
            self.head.after_callable = false;
        }
        if self.sig != Sig::None {
            self.signature(b);
        }
        if matches!(b, b'{' | b'}') || (b == b'=' && self.peek(0) == b'>') {
            self.arguments = None;
        }
        match b {
            b'{' => {
                self.open();
                self.pass_block();
                return;
            }
            b'}' => {
                if self.templates.last() == Some(&self.blocks.len()) {
                    self.templates.pop();
                    self.template();
                    self.token(Tok::Literal);
                    return;
                }
                self.close();
                return;
            }
            b'(' | b'[' => {
                if b == b'(' {
                    self.call();
                    if self.paren == 0 && self.cuts_arguments() {
                        self.arguments = Some((self.at, self.holes.len(), b')'));
                    }
                } else if self.rules.javascript()
                    && self.paren == 0
                    && self.head.last == Tok::Punct(b'=')
                {
                    self.arguments = Some((self.at, self.holes.len(), b']'));
                }
                if self.macro_call() {
                    let at = (self.at, self.blocks.len(), self.paren, self.holes.len());
                    self.macro_parens.push(at);
                }
                self.paren += 1;
            }
            b'?' if self.rules.lang == Lang::Php && self.peek(0) == b'>' => {
                self.at += 1;
                self.html = true;
                return;
            }
            // A conditional's `?`: not `?.`, `??` or an optional member's (`name?:`,
            // `name?(`, `name?<T>(` after its modifiers).
            b'?' if self.rules.javascript() && self.paren == 0 => {
                let optional = matches!(self.peek(0), b':' | b'(' | b'<')
                    && self.head.words == self.head.tokens;
                let twice = self.at >= 2 && self.src[self.at - 2] == b'?';
                if !optional && !twice && !matches!(self.peek(0), b'.' | b'?') {
                    self.head.ternary = true;
                }
            }
            b')' | b']' => {
                self.paren = self.paren.saturating_sub(1);
                if let (Some((inside, holes_from, close)), 0) = (self.arguments, self.paren) {
                    if close == b {
                        self.arguments = None;
                        if self.rules.lang != Lang::Cpp || self.cpp_parameters_go(inside) {
                            self.cut_inside(inside, self.at - 1, holes_from);
                        }
                    }
                }
                if let Some(&(inside, depth, paren, holes_from)) = self.macro_parens.last() {
                    if (depth, paren) == (self.blocks.len(), self.paren) {
                        self.macro_parens.pop();
                        self.cut_inside(inside, self.at - 1, holes_from);
                        // A function's head begun inside the token tree ends with it
                        // (rustix's `weak!(fn f(…) -> c::c_int);`): its return type went
                        // with the tree, and cut again at the `;` it overlapped it, which
                        // had the whole file parsed unskimmed.
                        let begun_outside = match self.sig {
                            Sig::Params(at, ..) | Sig::Ret(at, _) => at <= inside,
                            _ => false,
                        };
                        if !begun_outside {
                            self.sig = Sig::None;
                        }
                    }
                }
            }
            b';' if self.paren == 0 => {
                self.prototype();
                self.head = Head::default();
                self.ended = self.at_items();
                return;
            }
            // `var a = 1, b = function () {}`, `{ a: 1, f: () => {} }`: each its own; not in a
            // class's or interface's head (`extends Base<T, U>`, `implements A, B`), whose
            // body is one of members.
            b',' if self.paren == 0 && self.rules.javascript() && !self.head.container => {
                let declaring = self.head.declaring;
                self.head = Head {
                    declaring,
                    ..Head::default()
                };
                return;
            }
            b'=' if (self.paren == 0 || self.head.prev == Tok::Punct(b'.'))
                && self.rules.javascript()
                && !matches!(self.peek(0), b'=' | b'>') =>
            {
                // `const f =`, `export let f =`, `a.b.f =`: a definition when a function
                // comes next; a member's also inside parentheses (`h.f || (h.f = () => …)`),
                // where a name's `=` may be a parameter's default.
                // After a `.` a keyword is a property's name too (`slots.default =`).
                let named = matches!(self.head.last, Tok::Word(Word::Name | Word::Def))
                    || (self.head.prev == Tok::Punct(b'.')
                        && matches!(self.head.last, Tok::Word(_)));
                // Whatever came before in the head: a statement without its `;` goes on
                // into the next line's as far as the skim can tell.
                let declared = self.head.prev == Tok::Word(Word::LocalDef)
                    || (self.head.declaring && self.head.tokens == 1);
                let member = self.head.prev == Tok::Punct(b'.');
                self.token(Tok::Punct(b));
                if named && (declared || member) {
                    self.head.value = Value::Start;
                }
                return;
            }
            b'=' if self.peek(0) == b'>' => {
                self.at += 1;
                // An arrow function: a definition where it is the value assigned (`f = () =>`,
                // `f: async x =>`), not where it is passed or returned (`a.find(x => x)`).
                if self.rules.javascript()
                    && matches!(self.head.value, Value::Param | Value::AfterParams)
                {
                    self.def();
                }
                self.token(Tok::Arrow);
                return;
            }
            b'-' if self.peek(0) == b'>' => {
                self.at += 1;
                self.token(Tok::Arrow);
                return;
            }
            b':' if self.peek(0) == b':' => {
                self.at += 1;
                self.cpp_in_c |= self.rules.lang == Lang::C;
                self.token(Tok::Punct(b':'));
                return;
            }
            b':' if self.paren == 0 && self.rules.javascript() => {
                let name = |t: Tok| matches!(t, Tok::Word(Word::Name | Word::Def | Word::LocalDef));
                let key = self.head.tokens == 1 && name(self.head.last);
                // A key may be a keyword (`try: () => …`, `default: x`).
                let any_key = self.head.tokens == 1 && matches!(self.head.last, Tok::Word(_));
                // `name:` or `name?:` first in a statement may be a property of an object
                // type (a definition); in an object literal it is not, but the two look
                // alike.
                // After modifiers too: `readonly x:`, `private static y?:`.
                let (words, tokens) = (self.head.words, self.head.tokens);
                // Any word before `?:`, keywords too (`default?: T`), since a `switch`'s
                // label is never followed by `?`.
                let property = key
                    || (self.head.tokens == 2
                        && self.head.last == Tok::Punct(b'?')
                        && matches!(self.head.prev, Tok::Word(_)))
                    || ((1..=4).contains(&words)
                        && (tokens == words
                            || (tokens == words + 1 && self.head.last == Tok::Punct(b'?'))));
                let signature = self.head.signature && self.head.last == Tok::Punct(b')');
                self.head.returns |= self.head.last == Tok::Punct(b')') && !self.head.ternary;
                // A keyword as the key is one too (`default: typeof f` in a type), but in a
                // `switch`'s body `default:` is its label.
                if self.rules.typescript()
                    && (property || signature || (any_key && !self.in_switch()))
                {
                    self.def();
                }
                // `f: function () {`, `f: () => {`: a method of an object.
                self.token(Tok::Punct(b));
                if any_key {
                    self.head.value = Value::Start;
                }
                return;
            }
            _ => {}
        }
        // `T name = …` in a C++ namespace declares a variable (in a function, a local one;
        // in an initializer, a member's value).
        if b == b'='
            && self.rules.lang == Lang::Cpp
            && self.paren == 0
            && self.head.tokens >= 2
            && self.head.last == Tok::Word(Word::Name)
            && self.in_declarations()
        {
            self.def();
        }
        // C and C++ `struct S *f(…) {` is a function's body, `struct S s = {` an
        // initializer; the other languages' class heads may hold parentheses (a record's
        // components, an anonymous class's arguments).
        if self.head.container
            && self.rules.c_like()
            && (b == b'=' || (b == b'(' && !self.head.attribute))
        {
            self.head.container = false;
        }
        self.token(Tok::Punct(b));
    }

    /// A `(` after a name: a method's head (JavaScript), or `Type name(` that defines (a
    /// method of an anonymous class, a local function, a C++ declaration).
    fn call(&mut self) {
        if self.rules.typescript() && self.paren == 0 {
            let word = |t: Tok| matches!(t, Tok::Word(Word::Name | Word::LocalDef | Word::Def));
            let generic = self.typescript_generic_head();
            self.head.signature = (self.head.tokens == 1 && word(self.head.last))
                || (self.head.tokens == 2
                    && self.head.last == Tok::Punct(b'?')
                    && word(self.head.prev))
                || generic == Some(true);
            if generic.is_some() && !self.head.control {
                self.head.method = true;
            }
        }
        if self.rules.lang == Lang::CSharp && self.csharp_function_head() {
            self.def();
        }
        let Tok::Word(last) = self.head.last else {
            return;
        };
        // Not after `new`: `new Array(256)` and a block on the next line is a statement.
        if self.rules.javascript()
            && self.paren == 0
            && !self.head.control
            && !self.head.new
            && matches!(last, Word::Name | Word::LocalDef | Word::Def)
        {
            self.head.method = true;
        }
        if self.rules.typed_calls_define() && last == Word::Name {
            let typed = matches!(
                self.head.prev,
                Tok::Word(Word::Name) | Tok::Punct(b'>' | b']' | b'?')
            );
            // In a C++ namespace or an `extern "C"` block, C's and C++'s other shapes of a
            // declaration: `A::f(` and `A::~A(` (a member defined outside its class; a
            // constructor has no type), `T *f(` and `T &f(`, and a name first (a macro's
            // `TEST(a, b) {`). In a function or an initializer the same shapes are calls and
            // products (`std::sort(`, `a * f(x)`, a table's `ROW(1, 2),`), which define
            // nothing.
            let outside = self.in_declarations()
                && (self.head.tokens == 1
                    || matches!(self.head.prev, Tok::Punct(b':' | b'~' | b'*' | b'&')));
            // In C's and C++'s code (a function's body, or a block in one) `T name(` is a
            // prototype or a variable, which define nothing there (`parse::tree_of`).
            let in_code = self.rules.c_like()
                && self
                    .blocks
                    .last()
                    .is_some_and(|o| !o.container && !o.declarations && !o.initializer);
            if (typed && !in_code) || outside {
                self.def();
            }
        }
    }

    /// TypeScript: whether the `(` just passed follows a name's type parameters, `name<…>(`
    /// or `name?<…>(` (a generic method), and if so whether the name begins its statement
    /// (a method's signature in an object type: `override<T>(x: T): void;`).
    fn typescript_generic_head(&self) -> Option<bool> {
        if self.head.last != Tok::Punct(b'>') {
            return None;
        }
        let src = self.src;
        let lt = matching(src, space_before(src, self.at - 1), b'<', b'>')?;
        let mut before = space_before(src, lt);
        if before > 0 && src[before - 1] == b'?' {
            before -= 1;
        }
        let (name, start) = word_before(src, before);
        let named = matches!(
            self.rules.word(name),
            Tok::Word(Word::Name | Word::LocalDef | Word::Def)
        );
        if name.is_empty() || !named {
            return None;
        }
        let first = space_before(src, start);
        Some(first == 0 || matches!(src[first - 1], b'{' | b';' | b','))
    }

    /// C#: whether the `(` just passed opens the parameters of a function whose head the
    /// `Type name(` rule does not see: a generic one (`void Check<T>(`, `List<T> Make<T>(`)
    /// or one that returns a tuple (`static (A, B) Make(`), either of which may be a local
    /// function (a definition) in a method's body.
    fn csharp_function_head(&self) -> bool {
        let src = self.src;
        let open = self.at - 1;
        let type_before = |at: usize| {
            let (word, _) = word_before(src, at);
            if !word.is_empty() {
                return self.rules.word(word) == Tok::Word(Word::Name)
                    && !CSHARP_MODIFIERS.contains(&word);
            }
            // A type's last token: `List<int>`, `int[]`, `int?`; not an arrow's `=>` (a
            // lambda's body, `() => Make<T>(`) nor a pointer's `->`.
            let end = space_before(src, at);
            end > 0
                && matches!(src[end - 1], b'>' | b']' | b'?')
                && !(end > 1 && src[end - 1] == b'>' && matches!(src[end - 2], b'=' | b'-'))
        };
        match self.head.last {
            // `Type name<…>(`
            Tok::Punct(b'>') => {
                matching(src, space_before(src, open), b'<', b'>').is_some_and(|lt| {
                    let (name, start) = word_before(src, lt);
                    !name.is_empty()
                        && self.rules.word(name) == Tok::Word(Word::Name)
                        && type_before(start)
                })
            }
            // `(A, B) name(` first in a statement or after modifiers
            Tok::Word(Word::Name) if self.head.prev == Tok::Punct(b')') => {
                let (_, name) = word_before(src, open);
                matching(src, space_before(src, name), b'(', b')').is_some_and(|paren| {
                    let (word, _) = word_before(src, paren);
                    let end = space_before(src, paren);
                    CSHARP_MODIFIERS.contains(&word)
                        || end == 0
                        || matches!(src[end - 1], b';' | b'{' | b'}')
                })
            }
            _ => false,
        }
    }

    /// PHP: a `use` statement outside a class (`use A\B;`, `use function f;`, `use A\{B,
    /// C};`) imports names and defines none: left out whole, as Rust's `use` is. Inside a
    /// class `use` takes traits (and may have a block); after a closure's parameters it is
    /// no statement.
    fn php_import(&mut self, start: usize) -> bool {
        if self.head.tokens != 0
            || self.paren != 0
            || !self.src[start..self.at].eq_ignore_ascii_case(b"use")
            || self.blocks.iter().any(|o| o.container)
        {
            return false;
        }
        let Some(semicolon) = memchr::memchr(b';', &self.src[self.at..]) else {
            return false;
        };
        self.cut(start, self.at + semicolon + 1);
        self.at += semicolon + 1;
        true
    }

    /// Whether the PHP word at `start` (just passed) is the `function` of a closure
    /// (`function ($x) use ($y) {`, `function &() {`): an anonymous function, which defines
    /// nothing, unlike `function name(`.
    fn php_closure(&self, start: usize) -> bool {
        if self.rules.lang != Lang::Php
            || !self.src[start..self.at].eq_ignore_ascii_case(b"function")
        {
            return false;
        }
        let mut at = space_after(self.src, self.at);
        if self.src.get(at) == Some(&b'&') {
            at = space_after(self.src, at + 1);
        }
        self.src.get(at) == Some(&b'(')
    }

    /// Whether the parentheses opening here may have their inside left out
    /// ([`Lexer::arguments`]): after a name (not after a keyword, an operator or a cast's
    /// `=`), but in Rust and Go (whose parameters go by `Lexer::signature`) and C
    /// ([`Lexer::cpp_parameters_go`]). Not after a C# modifier, where they are a tuple type
    /// (`public (int, int) F()`), which `()` would not be; in C++ not after a word of
    /// [`CPP_NOT_CALLS`], nor where [`Lexer::cpp_parameters_go`] says no at the `)`.
    fn cuts_arguments(&self) -> bool {
        if matches!(self.rules.lang, Lang::Rust | Lang::Go | Lang::C)
            || self.head.last != Tok::Word(Word::Name)
        {
            return false;
        }
        let (word, start) = word_before(self.src, self.at - 1);
        let not_call = match self.rules.lang {
            // (Nor after such a word and a macro: `if _GLIBCXX17_CONSTEXPR (…)`.)
            Lang::Cpp => {
                CPP_NOT_CALLS.contains(&word)
                    || CPP_NOT_CALLS.contains(&word_before(self.src, start).0)
                    || word.starts_with(b"__builtin")
            }
            Lang::CSharp => CSHARP_MODIFIERS.contains(&word) || CSHARP_NOT_CALLS.contains(&word),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => TYPESCRIPT_NOT_CALLS.contains(&word),
            // PHP: only a function's parameters (its control words are names to the lexer:
            // `if (` is no call), and not a constructor's, whose promoted parameters
            // (`private int $x`) are fields.
            Lang::Php => {
                !word_before(self.src, start)
                    .0
                    .eq_ignore_ascii_case(b"function")
                    || word.eq_ignore_ascii_case(b"__construct")
            }
            _ => false,
        };
        !not_call
    }

    /// C++, after `template`: the inside of its parameter list goes (`template<typename _Tp,
    /// typename _Alloc = allocator<_Tp>>` is parsed as `template<>`). It names nothing an
    /// outline lists, and libstdc++'s headers write one before nearly every declaration,
    /// with defaults the grammar reads slowly. The lexer goes on after its `>`.
    fn template_parameters(&mut self) {
        let open = space_after(self.src, self.at);
        if self.src.get(open) != Some(&b'<') {
            return;
        }
        let Some(close) = template_close(self.src, open) else {
            return;
        };
        if close > open + 1 {
            self.cut(open + 1, close);
        }
        self.at = close + 1;
        self.token(Tok::Punct(b'>'));
    }

    /// C++: whether the inside of the parentheses closed here (opened after a name at
    /// `inside`) may go ([`Lexer::arguments`]). A function's parameters make up much of a
    /// header's declarations (libstdc++'s `bits/`: 12 % of what was left to parse). Not in
    /// C, where macros stand among declarations more often and a parse with errors around
    /// one recovers the declarations from their parameters (on redis's jemalloc, with
    /// `TEST_BEGIN(name) {` and `f(…) NOT_REACHED`, 536 definitions were lost and 107
    /// gained without them). In C++ only where a function's parameters may stand: before
    /// its body, an initializer list, `= 0`, a trailing return type, a ref-qualifier or
    /// one of [`CPP_AFTER_PARAMETERS`] (not before a macro, for the same recovery); before
    /// a `;` only in a class's body or a function's, since elsewhere `T name(1, 2);` is a
    /// variable, which `T name();` would make a function; not before a `,` (in an enum's
    /// body, `MACRO(x),` is read with an error either way, and better recovered from with
    /// its arguments). Not a declarator's parentheses, which name what they declare
    /// (`(*handler)(int)`, `(*rows)[4]`: a `(` or `[` follows), nor with a directive
    /// inside (a branch of it would be left without its `#endif`).
    fn cpp_parameters_go(&self, inside: usize) -> bool {
        if self.directive_end.is_some_and(|end| end > inside) {
            return false;
        }
        let next = space_after(self.src, self.at);
        match self.src.get(next) {
            Some(b'{' | b':' | b'=' | b'-' | b'&') => true,
            Some(b';') => self.blocks.last().is_some_and(|o| o.local || o.container),
            _ => CPP_AFTER_PARAMETERS.contains(&word_at(self.src, next)),
        }
    }

    fn open(&mut self) {
        let parent_local = self.local();
        let parent_keep = self.blocks.last().is_some_and(|o| o.keep_all);
        let h = self.head;
        let lang = self.rules.lang;
        // (Not C#'s `where T : new()` after a method's parameters.)
        let constrained = lang == Lang::CSharp && constraints_after_params(self.src, self.at - 1);
        // Java's `new T(…) {` (C# has none: `new T() {` opens an object's initializer).
        let anonymous_class = lang == Lang::Java
            && h.new
            && h.last == Tok::Punct(b')')
            && !constrained
            && after_new_call(self.src, self.at - 1);
        let container = h.container || anonymous_class;
        // A JavaScript method's body: `name(…) {`, `name(…): T {` (TypeScript).
        let method = self.rules.javascript()
            && h.method
            && !h.control
            && self.paren == 0
            && (h.last == Tok::Punct(b')')
                || (self.rules.typescript()
                    && h.returns
                    && !matches!(h.last, Tok::Punct(b'(' | b',' | b'='))));
        // A function's body whose declarations are local: only a function that is itself a
        // definition (a callback's variables are the enclosing definition's, or top-level).
        let function_value = self.rules.javascript()
            && h.value == Value::Func
            && self.paren == 0
            && (h.function || h.last == Tok::Arrow);
        let callable = match lang {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                h.callable || method || function_value
            }
            _ => h.callable,
        };
        // A JavaScript method defines (`{ render() { … } }` in a function's object).
        if method {
            self.def();
        }
        let may_go = self.may_go(&h, constrained);
        // Bodies of fields and variants hold no code: Rust's (a struct-like variant's fields
        // are in a block of their own), C's, Go's. A class body's methods are looked at
        // one by one.
        let members_only = matches!(lang, Lang::Rust | Lang::C | Lang::Go);
        let macro_body = self.macro_call();
        let initializer = self.rules.c_like()
            && (h.last == Tok::Punct(b'=') || self.blocks.last().is_some_and(|o| o.initializer));
        let declarations = h.declarations && !container && self.rules.c_like();
        let items =
            !(macro_body || initializer || callable || parent_local || method || h.constants)
                && (h.items || (container && !members_only) || declarations);
        self.blocks.push(Open {
            macro_body,
            function_value: function_value && h.function,
            declarations,
            items,
            members: Vec::new(),
            initializer,
            inside: self.at,
            local: parent_local || callable,
            keep_all: parent_keep || (container && members_only),
            container,
            has_def: false,
            content: false,
            may_go,
            holes_from: self.holes.len(),
            paren: self.paren,
            head: h,
        });
        self.paren = 0;
        self.head = Head::default();
        if items {
            self.ended = true;
        }
    }

    /// find_symbol's skim ([`skim_places`]): a block just opened that holds no place of the
    /// name is passed over at once, up to its `}` (its braces matched past strings and
    /// comments). Nothing in it needs reading: its inside goes when it closes, or, kept (a
    /// struct's fields, an `impl`), is cut by [`around`], as when it is read through. Only
    /// where strings and comments alone can hide a brace: not in JavaScript (a regular
    /// expression is told by the token before it), C# and PHP (code inside strings), nor
    /// past a C preprocessor line (`#if` may hold a brace of its own). Nothing is passed
    /// when a place comes first.
    fn pass_block(&mut self) {
        if self.places.is_empty()
            || !matches!(
                self.rules.lang,
                Lang::Rust | Lang::Go | Lang::Java | Lang::C | Lang::Cpp
            )
        {
            return;
        }
        let stop = self.next_place();
        let start = self.at;
        let mut depth = 0usize;
        while self.at < stop {
            // Only these bytes matter (a word's letters begin no string but for a prefix,
            // `r#"` or `u8R"(`, looked for from the quote): the others are passed at once.
            let Some(b) = self.scan_to(stop, PASS_STOP) else {
                break;
            };
            match b {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    let inside = &self.src[start..self.at];
                    if let Some(open) = self.blocks.last_mut() {
                        open.content |= inside.iter().any(|b| !b.is_ascii_whitespace());
                    }
                    self.line_start = false;
                    return;
                }
                b'}' => depth -= 1,
                b'#' if self.rules.c_like() => break,
                b'/' | b'"' | b'\'' | b'`' if self.pass_quoted(start) => continue,
                _ => {}
            }
            self.at += 1;
        }
        self.at = start;
    }

    /// find_symbol's skim of Rust, C and C++: at a statement that begins at the top level
    /// (in C++ also in a namespace's or an `extern "C"` body), the statements that end
    /// before the next place of the name are passed over unread, as one
    /// ([`Skim::statements`], [`Skim::members`]: [`around`] cuts it whole, as it cuts each
    /// of them when read). A statement ends at a `;` outside brackets, or in Rust at a `}`
    /// that closes its last bracket and ends its line (not `Foo<{ N }>`, nor `} else {` in
    /// a constant's value; in C a type's name may follow on the next line). A file of
    /// bindings holds thousands of constants before its one `fn new`; a header, its
    /// declarations. A preprocessor line is passed over with them, but for a conditional
    /// one (`#if` … `#endif`), which the pass stops before: the lexer reads it
    /// ([`Skim::branches`]). Nothing is passed when the place comes first, or (at
    /// the top level) a bracket closes that was not opened here; in a body, its closing
    /// brace ends the pass.
    fn pass_statements(&mut self) -> bool {
        let c_like = self.rules.c_like();
        if self.places.is_empty() || !(c_like || self.rules.lang == Lang::Rust) {
            return false;
        }
        let last = match self.blocks.last() {
            None => self.statements.last(),
            Some(open) if c_like && open.declarations => open.members.last(),
            Some(_) => return false,
        };
        if last != Some(&self.at) || self.at < self.scanned_to {
            return false;
        }
        let in_body = !self.blocks.is_empty();
        let stop = self.next_place();
        let start = self.at;
        let mut depth = 0usize;
        let mut end = start;
        while self.at < stop {
            let Some(b) = self.scan_to(stop, STATEMENT_STOP) else {
                break;
            };
            match b {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => {
                    let Some(d) = depth.checked_sub(1) else {
                        if !in_body {
                            end = start;
                        }
                        break;
                    };
                    depth = d;
                    // (Not in C: `typedef struct { … }` may name its type on the next line.)
                    if b == b'}' && depth == 0 && !c_like && line_ends(&self.src[self.at + 1..]) {
                        end = self.at + 1;
                    }
                }
                b';' if depth == 0 => end = self.at + 1,
                b'#' if c_like => {
                    if self.pass_directive(stop) {
                        continue;
                    }
                    break;
                }
                b'/' | b'"' | b'\'' if self.pass_quoted(start) => continue,
                _ => {}
            }
            self.at += 1;
        }
        // What lies between `end` and here is read; another pass from there would stop
        // where this one did.
        self.scanned_to = self.at;
        self.at = end;
        if end > start && in_body {
            // What was passed may hold definitions: the body is kept as if they were read.
            if let Some(open) = self.blocks.last_mut() {
                open.has_def = true;
                open.content = true;
            }
        }
        end > start
    }

    /// Passing statements over unread in C and C++: the preprocessor line at `at` (its `#`,
    /// first on its line), to its end, continued lines and all; false, and nothing passed,
    /// for a conditional one (its branches are the lexer's to follow: [`Skim::branches`]),
    /// a `#` elsewhere, or a line that runs on to `stop`.
    fn pass_directive(&mut self, stop: usize) -> bool {
        let hash = self.at;
        let line = memchr::memrchr(b'\n', &self.src[..hash]).map_or(0, |n| n + 1);
        if run_of(&self.src[line..hash], BLANK) != hash - line {
            return false;
        }
        let name = word_at(self.src, space_after(self.src, hash + 1));
        if matches!(
            name,
            b"if" | b"ifdef" | b"ifndef" | b"elif" | b"elifdef" | b"elifndef" | b"else" | b"endif"
        ) {
            return false;
        }
        self.pass_line(stop);
        if self.at >= stop {
            self.at = hash;
            return false;
        }
        true
    }

    /// On to the end of the preprocessor line `at` is on (its newline), or to `stop`: a
    /// backslash takes the newline after it along, and a block comment that starts on the
    /// line may end on another (it is not left out: a macro's text is what the directive
    /// holds, to its end).
    fn pass_line(&mut self, stop: usize) {
        while self.at < stop {
            let Some(n) = memchr::memchr3(b'\n', b'\\', b'/', &self.src[self.at..stop]) else {
                self.at = stop;
                return;
            };
            self.at += n;
            match self.src[self.at] {
                b'\n' => return,
                b'\\' => {
                    self.at += 1;
                    if self.peek(0) == b'\r' {
                        self.at += 1;
                    }
                    self.at += 1;
                }
                _ if self.peek(1) == b'*' => {
                    self.comment_end();
                }
                _ => self.at += 1,
            }
        }
    }

    /// Where passing over bytes unread ([`Lexer::pass_block`], [`Lexer::pass_statements`])
    /// stops: at the next place of the name, or at the end. (Places past the end, as a
    /// request to the parse helper may give, stop nothing.)
    fn next_place(&self) -> usize {
        let next = self.places.partition_point(|&p| p < self.at);
        self.places
            .get(next)
            .map_or(self.src.len(), |&p| p.min(self.src.len()))
    }

    /// Passing over bytes unread: on to the first byte of `class` ([`CLASSES`]) before
    /// `stop`, and that byte; None, at `stop`, where there is none.
    fn scan_to(&mut self, stop: usize, class: u8) -> Option<u8> {
        let rest = &self.src[self.at..stop];
        let found = rest.iter().position(|&b| CLASSES[b as usize] & class != 0);
        self.at += found.unwrap_or(rest.len());
        found.map(|n| rest[n])
    }

    /// Passing over bytes unread: the comment or string that begins at `at` (a string's
    /// prefix looked for back to `from`), passed; false, and nothing passed, where none does.
    fn pass_quoted(&mut self, from: usize) -> bool {
        let b = self.src[self.at];
        if b == b'/' {
            return self.comment_end();
        }
        let quote = self.at;
        if b == b'"' {
            self.at = self.string_prefix_before(from);
        }
        if self.string() {
            return true;
        }
        self.at = quote;
        false
    }

    /// Where the string whose quote is at `at` starts, its prefix included (Rust's `br#"`,
    /// C++'s `u8R"`), looking back no further than `from`.
    fn string_prefix_before(&self, from: usize) -> usize {
        let src = &self.src[from..self.at];
        let word_start = |n: usize| n == 0 || !is_word(src[n - 1]);
        let prefix = match self.rules.lang {
            Lang::Rust => {
                let hashes = src.iter().rev().take_while(|&&b| b == b'#').count();
                let r = src.len() - hashes;
                if r > 0 && src[r - 1] == b'r' {
                    let p = if r > 1 && matches!(src[r - 2], b'b' | b'c') {
                        r - 2
                    } else {
                        r - 1
                    };
                    Some(p).filter(|&p| word_start(p))
                } else {
                    None
                }
            }
            Lang::Cpp if src.ends_with(b"R") => [3, 2, 1]
                .into_iter()
                .filter(|&n| src.len() >= n)
                .map(|n| src.len() - n)
                .find(|&p| {
                    matches!(&src[p..], b"u8R" | b"uR" | b"UR" | b"LR" | b"R") && word_start(p)
                }),
            _ => None,
        };
        prefix.map_or(self.at, |p| from + p)
    }

    /// Whether the block opening now may be left out, by what comes before its `{`.
    fn may_go(&self, h: &Head, constrained: bool) -> bool {
        match self.rules.lang {
            // A C# property's accessors and initializers `{ get; set; }` must stay.
            Lang::CSharp => {
                matches!(
                    h.last,
                    Tok::Punct(b')') | Tok::Arrow | Tok::Word(Word::Keyword)
                ) || h.tokens == 0
                    || self.follows_word(b"get")
                    || self.follows_word(b"set")
                    || self.follows_word(b"init")
                    || self.follows_word(b"else")
                    || self.follows_word(b"finally")
                    || constrained
            }
            // `$a->{$name}(…)`, `A::{$m}()`, `${$v}`: a name computed in braces, which `{}`
            // would not stand for.
            Lang::Php => {
                let before = &self.src[..space_before(self.src, self.at - 1)];
                !(before.ends_with(b"->") || before.ends_with(b"::") || before.ends_with(b"$"))
            }
            _ => true,
        }
    }

    /// Whether the `{` just read follows the word `word`.
    fn follows_word(&self, word: &[u8]) -> bool {
        word_before(self.src, self.at - 1).0 == word
    }

    /// A block of items closed at `end` ([`Skim::members`]): where its items started, and
    /// its end when the last one ended.
    fn close_items(&mut self, mut members: Vec<usize>, end: usize) {
        if self.ended_before {
            members.push(end);
        }
        if members.len() > 1 {
            self.members.push(members);
        }
    }

    fn close(&mut self) {
        let Some(open) = self.blocks.pop() else {
            self.head = Head::default();
            return;
        };
        // A macro's parentheses left open inside the block (a misread) end with it.
        while self
            .macro_parens
            .last()
            .is_some_and(|m| m.1 > self.blocks.len())
        {
            self.macro_parens.pop();
        }
        let end = self.at - 1;
        if open.items && self.until.is_some() {
            self.close_items(open.members, end);
        }
        // An immediately invoked function: its body, kept whole, defines its variables (the
        // skim took them for local ones).
        let invoked = open.function_value
            && matches!(
                self.src.get(space_after(self.src, self.at)),
                Some(b'(' | b'.')
            );
        if invoked {
            self.holes.truncate(open.holes_from);
        }
        // A C++ namespace's body (or an `extern "C"` block) holds declarations, whose
        // variables (`inline constexpr _End end{};`) the skim does not tell from others.
        let keep = !open.macro_body
            && (invoked
                || open.has_def
                || open.keep_all
                || open.container
                || open.declarations
                || !open.may_go);
        if !keep {
            self.cut_inside(open.inside, end, open.holes_from);
        } else if open.may_go && !open.macro_body && end > open.inside {
            self.kept.push((open.inside, end));
        }
        let defines = invoked
            || open.has_def
            || (open.container && (open.content || self.rules.lang != Lang::Go));
        if defines && !open.macro_body {
            self.def();
        }
        self.paren = open.paren;
        self.head = open.head;
        // Go's `[]struct{ … }{ … }`: after a type's body, a `{` opens a composite literal (a
        // test's table, mostly), which may go like any block.
        if self.rules.lang == Lang::Go && open.container {
            self.head.container = false;
        }
        self.token(Tok::Punct(b'}'));
        // A block ends its statement (`if … { … }`, `fn f() { … }`) unless it is inside
        // parentheses (a closure passed to a call). A declaration goes on after a value's
        // block or a pattern's: `let a = { … }, f = () => …`, `const { a } = o, f = …`.
        if self.paren == 0 {
            let declaring = open.head.declaring
                && self.rules.javascript()
                && matches!(
                    self.src.get(space_after(self.src, self.at)),
                    Some(b',' | b'=')
                );
            self.head = Head {
                declaring,
                ..Head::default()
            };
            // At the top level a block ends its statement, but in C and C++ only a
            // function's body or a namespace's (a struct's may have declarators after it:
            // `struct S { … } s;`, and an initializer its `;`).
            self.ended = self.at_items()
                && (!self.rules.c_like()
                    || open.declarations
                    || (open.head.last == Tok::Punct(b')') && !open.initializer));
        }
    }
}

/// Where `needle` first occurs in `hay`.
fn memchr_str(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    let mut from = 0;
    while let Some(n) = memchr::memchr(first, &hay[from..]) {
        let at = from + n;
        if hay[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(lang: Lang, src: &str) -> String {
        super::super::skim_python::kept_text(src, &holes(lang, src.as_bytes()))
    }

    #[test]
    fn rust_bodies_go_definitions_stay() {
        let src = "struct S { x: u8 }\nenum E { A { y: u8 }, B }\nfn f() { let s = \"}\"; if a { b } }\nfn g() { fn inner() {} const C: u8 = 1; }\nconst K: u8 = { const L: u8 = 2; L };\nimpl S { fn m(&self) -> &'static str { 'x'; r#\"{\"#; loop {} } }\n";
        assert_eq!(
            kept(Lang::Rust, src),
            "struct S { x: u8 }\nenum E { A { y: u8 }, B }\nfn f(){}\nfn g(){ fn inner(){} const C: u8 = 1; }\nconst K: u8 = { const L: u8 = 2; L };\nimpl S { fn m(){} }\n"
        );
    }

    #[test]
    fn c_bodies_go_unless_a_struct_or_directive_is_inside() {
        let src = "struct S *make(struct S *p) { return p; }\nint f(void) {\n#ifdef X\n  g();\n#endif\n}\nvoid h() { struct T { int a; } t; }\nint a[] = { 1, 2 };\n";
        assert_eq!(
            kept(Lang::C, src),
            "struct S *make(struct S *p) {}\nint f(void) {\n#ifdef X\n  g();\n#endif\n}\nvoid h() { struct T { int a; } t; }\nint a[] = {};\n"
        );
    }

    /// A block that holds no place is passed over unread (`pass_block`): the braces in its
    /// strings, characters and comments close nothing, and what find_symbol's parse keeps is
    /// what it keeps when every block is read.
    #[test]
    fn a_block_without_the_name_is_passed_over_as_if_read() {
        let cases = [
            (
                Lang::Rust,
                "impl S {\n    fn a<'a>(x: &'a str) {\n        let s = r#\"}\"#;\n        \
                 let c = '}';\n        let b = br\"{\";\n        let t = \"\\\"}\";\n        \
                 // }\n        /* { /* } */ } */\n    }\n    fn new() {}\n}\n",
            ),
            (
                Lang::Cpp,
                "struct S {\n    void a() {\n        auto s = R\"x(})x\";\n        char c = '}';\n\
                 #if A\n        if (x) { f(); }\n#else\n        if (y) { g(); }\n#endif\n    }\n    \
                 void b() { auto t = u8R\"(})\"; /* } */ }\n    S *create();\n};\n",
            ),
            (
                Lang::Go,
                "type S struct {\n\ta int\n}\n\nfunc a() {\n\ts := `}`\n\tr := '}'\n}\n\n\
                 func create() {}\n",
            ),
            (
                Lang::Java,
                "class S {\n    void a() {\n        String t = \"\"\"\n            }\n            \
                 \"\"\";\n        char c = '}';\n    }\n    void create() {}\n}\n",
            ),
        ];
        for (lang, src) in cases {
            let name = if lang == Lang::Rust { "new" } else { "create" };
            let at = src.find(name).unwrap();
            let places = [(at as u32, (at + name.len()) as u32)];
            let left = |passing: &[usize]| {
                let skim = skim_places(lang, src.as_bytes(), Some(at + name.len()), passing);
                left_of(src, &around(src.as_bytes(), &places, &skim))
            };
            let passed = left(&[at]);
            assert_eq!(passed, left(&[]), "{lang:?}");
            assert!(
                passed.contains(name) && passed.len() < src.len(),
                "{passed}"
            );
            // A place past the end (as a request to the parse helper may hold) stops no pass,
            // and reads nothing past the end (this panicked).
            let past = [(src.len() as u32 + 10, src.len() as u32 + 13)];
            focused(lang, src.as_bytes(), &past);
        }
    }

    /// What is left of `src` without `holes` (sorted, apart).
    fn left_of(src: &str, holes: &[(usize, usize)]) -> String {
        let mut text = String::new();
        let mut from = 0;
        for &(start, end) in holes.iter().chain(&[(src.len(), src.len())]) {
            text.push_str(&src[from..start]);
            from = end;
        }
        text
    }

    /// What find_symbol's parse of `src` keeps for `new` (its places as words), and how many
    /// statements and items the skim recorded: with the places passed to the skim, so that
    /// it passes over what holds none, and without.
    fn passed_and_read(lang: Lang, src: &str) -> ((String, usize), (String, usize)) {
        let bytes = src.as_bytes();
        let starts: Vec<usize> = src
            .match_indices("new")
            .map(|(at, _)| at)
            .filter(|&at| !is_word(bytes[at - 1]) && !is_word(bytes[at + 3]))
            .collect();
        let places: Vec<(u32, u32)> = starts
            .iter()
            .map(|&at| (at as u32, at as u32 + 3))
            .collect();
        let until = Some(*starts.last().unwrap() + 3);
        let left = |passing: &[usize]| {
            let skim = skim_places(lang, bytes, until, passing);
            let text = left_of(src, &around(bytes, &places, &skim));
            let members: usize = skim.members.iter().map(Vec::len).sum();
            (text, skim.statements.len() + members)
        };
        (left(&starts), left(&[]))
    }

    /// At Rust's top level, the statements that end before the next place are passed over
    /// unread, as one (`pass_statements`): what find_symbol's parse keeps is what it keeps
    /// when each is read (but for the newlines between them), also where a `}` ends no
    /// statement (`Foo<{ N }>`, `} else {`) and where the braces and `;` are in strings,
    /// characters and comments.
    #[test]
    fn statements_before_the_name_are_passed_over_as_one() {
        let src = "use a::b; // ; }\n\
                   pub const S: &str = \"; }\";\n\
                   const Q: char = '}';\n\
                   #[repr(C)]\n\
                   pub struct P<'a> { x: [u8; 4], y: &'a str }\n\
                   const C: u8 = if X { 1 } else { new };\n\
                   /* } ; */\n\
                   impl Foo<{ N }> {\n    pub const fn new() -> Self { Foo }\n}\n\
                   pub const T: u32 = 1;\n\
                   fn new() {}\n\
                   fn later() {}\n";
        let ((passed, fewer), (read, each)) = passed_and_read(Lang::Rust, src);
        let squeezed = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(squeezed(&passed), squeezed(&read));
        assert!(
            passed.contains("impl Foo<{}> {") && !passed.contains("struct P"),
            "{passed}"
        );
        assert!(fewer < each, "{fewer} statements passed, {each} read");
    }

    /// In C and C++ too, the statements before the next place are passed over unread, as
    /// one, with the preprocessor lines among them (a `#define` with an open brace), but
    /// for a conditional one, where the pass stops; in C++ also in a namespace's body. What
    /// is kept is what is kept when each is read (but for the newlines between them), also
    /// where a type's name follows its struct's `}` on the next line.
    #[test]
    fn c_statements_before_the_name_are_passed_over_as_one() {
        let src = "#ifndef H\n#define H\n#define OPEN {\n#define LONG(a) \\\n  a }\n\
                   int a; /* } ; */ // ; }\n\
                   static const char *s = \"; }\";\n\
                   char c = '}';\n\
                   typedef struct\n{\n  int x[4];\n}\nnew;\n\
                   int f(void) { return 0; }\n\
                   #if X\nint g;\n#endif\n\
                   namespace n {\nint p;\nstruct q { int r; };\nint new(int);\n}\n\
                   int later;\n#endif\n";
        let ((passed, fewer), (read, each)) = passed_and_read(Lang::Cpp, src);
        let squeezed = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(squeezed(&passed), squeezed(&read));
        assert!(
            passed.contains("typedef struct") && passed.contains("int new(int);"),
            "{passed}"
        );
        assert!(
            !passed.contains("int p;") && !passed.contains("OPEN"),
            "{passed}"
        );
        assert!(fewer < each, "{fewer} statements passed, {each} read");
    }

    /// In C and C++, a statement inside an `#if` (a header's guard, mostly) goes whole as
    /// one outside does, where the directives it holds close the branches they open: what
    /// is left keeps every `#if` with its `#endif`. One that begins in one branch and ends
    /// in another stays, and so does the rest of a file past the last place inside an `#if`.
    #[test]
    fn statements_inside_an_if_go_with_their_branches() {
        let src = "#ifndef LIB_H\n#define LIB_H\n#include <stddef.h>\n\
                   struct other { int a; };\n\
                   #if defined(BIG)\ntypedef long size;\n#else\ntypedef int size;\n#endif\n\
                   #ifdef WIDE\nint open(int fd, long n)\n#else\nint open(int fd)\n#endif\n{ return fd; }\n\
                   size_t len;\n\
                   int after(void);\n\
                   #endif\n";
        let at = src.find("len").unwrap();
        let places = [(at as u32, at as u32 + 3)];
        let left = left_of(src, &focused(Lang::C, src.as_bytes(), &places).holes);
        let lines: Vec<&str> = left.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            lines,
            [
                "#ifndef LIB_H",
                "#if defined(BIG)",
                "#else",
                "#endif",
                "#ifdef WIDE",
                "int open(int fd, long n)",
                "#else",
                "int open(int fd)",
                "#endif",
                "{}",
                "size_t len;",
                "#endif"
            ],
            "{left}"
        );
    }

    /// In C and C++ a parameter's name names no definition (`a_parameter`); a function
    /// pointer's, a variable's, a macro's argument and a function's do.
    #[test]
    fn a_parameter_names_nothing() {
        let parameter = |lang: Lang, src: &str| {
            let word = |&(at, _): &(usize, &str)| at == 0 || !is_word(src.as_bytes()[at - 1]);
            let start = src.match_indices("len").find(word).unwrap().0;
            a_parameter(lang, src.as_bytes(), start, start + 3)
        };
        for src in [
            "size_t strnlen(const char *s, size_t len);",
            "void f(char *len)",
            "int f(int a,\n      unsigned long len,\n      int b);",
            "struct ops { int (*read)(void *buf, size_t len); };",
            "void g(const char * const len);",
            "Foo::Foo(std::string &&len) : n(0) {}",
        ] {
            assert!(parameter(Lang::Cpp, src), "{src}");
        }
        assert!(parameter(Lang::C, "int f(int len);"));
        assert!(!parameter(Lang::Java, "int f(int len);"));
        for src in [
            "struct ops { int (*len)(void *); };",
            "int len, n;",
            "size_t len(const char *s);",
            "EXPORT_SYMBOL(len);",
            "int f(int x) { return g(x); } int len;",
            "void f(int len = 4);",
            "#define LEN(len) (len + 1)",
        ] {
            assert!(!parameter(Lang::C, src), "{src}");
        }
    }

    /// A name written as a member or inside a path names no definition where the language
    /// has none so (`a_member`); where it has, the place is kept.
    #[test]
    fn a_member_or_a_path_names_nothing() {
        let member = |lang: Lang, src: &str, name: &str| {
            let start = src.find(name).unwrap();
            a_member(lang, src.as_bytes(), start, start + name.len())
        };
        assert!(member(Lang::Rust, "let n = v. len();", "len"));
        assert!(member(Lang::Rust, "let v = Vec::new ();", "new"));
        assert!(member(Lang::Rust, "let v = a::new::f();", "new"));
        assert!(member(Lang::Go, "n := s.Len()", "Len"));
        assert!(member(Lang::C, "n = p->len;", "len"));
        // A definition: an impl of a type by its path, a C++ member defined outside its class,
        // a JavaScript method assigned to a prototype, a C# interface's method.
        assert!(!member(Lang::Rust, "impl a::S {}", "S"));
        assert!(!member(Lang::Rust, "impl<T> a::S<T> {}", "S"));
        assert!(!member(Lang::Cpp, "void A::f() {}", "f"));
        assert!(!member(
            Lang::JavaScript,
            "A.prototype.f = function () {};",
            "f"
        ));
        assert!(!member(Lang::CSharp, "void I.F() {}", "F"));
        // On the line before: not looked at.
        assert!(!member(Lang::Rust, "// a.\nfn len() {}", "len"));
        let commented = |lang: Lang, src: &str, name: &str| {
            commented(lang, src.as_bytes(), src.find(name).unwrap())
        };
        assert!(commented(
            Lang::Rust,
            "fn f() {}\n    /// Makes a new one.",
            "new"
        ));
        assert!(commented(Lang::C, "\t// new", "new"));
        assert!(!commented(Lang::Rust, "fn new() {} // new", "new"));
        assert!(!commented(Lang::Python, "// new", "new"));
        assert!(commented(Lang::C, "int len; // the data's", "data"));
        // What may quote the `//` before it: code.
        assert!(!commented(
            Lang::C,
            "char *u = \"a://b\"; int data;",
            "data"
        ));
        assert!(!commented(Lang::Go, "u := `a://b`; var data int", "data"));
        assert!(!commented(Lang::C, "/* a // b */ int data;", "data"));
    }

    /// What `test` tells of each place of `name` in `src` (its bytes, start and end), in order.
    fn at_each(
        src: &str,
        name: &str,
        mut test: impl FnMut(&[u8], usize, usize) -> bool,
    ) -> Vec<bool> {
        src.match_indices(name)
            .map(|(at, _)| test(src.as_bytes(), at, at + name.len()))
            .collect()
    }

    /// Places in a block comment name nothing; an opening that something before it on its
    /// line may quote is taken as code, and a closing anywhere ends the comment.
    #[test]
    fn places_in_block_comments_name_nothing() {
        let in_comments = |lang: Lang, src: &str, name: &str| {
            let mut comments = Comments::of(lang);
            at_each(src, name, |src, at, _| comments.in_one(src, at))
        };
        let src = "/*\n * data\n * more data */\nint data;\n/* data */ int data;\nint x; /* data\n";
        assert_eq!(
            in_comments(Lang::C, src, "data"),
            [true, true, false, true, false, true]
        );
        let src = "char *s = \"a/*\"; int data;\n// a /* b\nint data;\n";
        assert_eq!(in_comments(Lang::C, src, "data"), [false, false]);
        // Nor in a language whose literals may hold `/*` unquoted.
        assert_eq!(in_comments(Lang::JavaScript, "/* data */", "data"), [false]);
    }

    /// In C and C++, a name written as a type or a scope names nothing; one that a
    /// declaration may name (or a specialization, or a macro) is kept.
    #[test]
    fn a_type_names_nothing() {
        let typed = |lang: Lang, src: &str, name: &str| {
            at_each(src, name, |src, at, end| a_type(lang, src, at, end))
        };
        let src = "FILE *f; FILE& g(); FILE x; std::FILE::y; FILE __THROW; FILE final {";
        assert_eq!(
            typed(Lang::Cpp, src, "FILE"),
            [true, true, true, true, false, false]
        );
        let src = "vector<int> v; vector<vector<int>> w; template<> struct vector<bool> {";
        assert_eq!(typed(Lang::Cpp, src, "vector"), [true, true, true, false]);
        assert_eq!(
            typed(Lang::C, "data << 2; data < b;", "data"),
            [true, false]
        );
        // A header is read as C before its language is told: C++'s specializations stay.
        let src = "template<typename T>\n  struct S<T, false>\n  {\n";
        assert_eq!(typed(Lang::C, src, "S"), [false]);
        // In a parameter list, any word after it and a `,` or `)` after a `,` too.
        let src = "int f(size_t __n, char *, size_t);\ntemplate<size_t _Np> struct S;";
        assert_eq!(typed(Lang::Cpp, src, "size_t"), [true, true, true]);
        let src = "enum { A, data, B };\nint data, size_t;\n#define data pData\nint (data)(void);";
        assert_eq!(typed(Lang::C, src, "data"), [false, false, false, false]);
        assert_eq!(typed(Lang::Rust, "data x", "data"), [false]);
        // Java and C#: a qualifier, or a type before a word that goes on with no definition.
        let src = "String s; java.lang.String.valueOf(); List<String> l; class String<T> extends";
        assert_eq!(typed(Lang::Java, src, "String"), [true, true, true, false]);
        let src = "namespace A.B {}\nA.C x;\ninterface A where";
        assert_eq!(typed(Lang::CSharp, src, "A"), [false, true, false]);
    }

    /// In C and C++, a directive's words name nothing but the macro a `#define` defines,
    /// on its `\`-continued lines too.
    #[test]
    fn directives_name_only_their_macros() {
        let directive = |lang: Lang, src: &str, name: &str| {
            at_each(src, name, |src, at, _| in_a_directive(lang, src, at))
        };
        let src = "#define data 1\n# define data(x, data) f(data)\n#if defined(data)\n#undef data\nint data;\n";
        assert_eq!(
            directive(Lang::C, src, "data"),
            [false, false, true, true, true, true, false]
        );
        let src = "#define \\\r\n  data \\\n  data\nstatic int data;\n  #  define\tdata\n";
        assert_eq!(
            directive(Lang::Cpp, src, "data"),
            [false, true, false, false]
        );
        assert_eq!(directive(Lang::Rust, "#define data", "data"), [false]);
    }

    /// A namespace that holds only variables stays: the skim does not tell a variable's
    /// declaration from a prototype's, and libstdc++'s `ranges::end` is one.
    #[test]
    fn a_namespace_of_variables_stays() {
        let src = "namespace std {\ninline namespace __cust {\n  inline constexpr _End end{};\n}\nextern \"C\" {\n  int errno_value;\n}\nint f() { int local = 1; }\n}\n";
        assert_eq!(
            kept(Lang::Cpp, src),
            "namespace std {\ninline namespace __cust {\n  inline constexpr _End end{};\n}\nextern \"C\" {\n  int errno_value;\n}\nint f() {}\n}\n"
        );
    }

    #[test]
    fn a_skim_tells_whether_it_left_out_code() {
        // Comments and an annotation the grammar cannot read: no code.
        let header = "/* lib */\nOSSL_DEPRECATEDIN_3_0 int f;\n// g\nint g;\n";
        let s = skim(Lang::C, header.as_bytes());
        assert!(!s.holes.is_empty() && !s.code);
        // A body: code. What is not code is also listed apart (`Skim::plain`), inside the
        // body too, for a parse that keeps the bodies.
        assert!(skim(Lang::C, b"int f(void) { return 1; }\n").code);
        let src = "/* lib */\nOSSL_DEPRECATEDIN_3_0 int f(void) { /* one */ return 1; }\n";
        let s = skim(Lang::C, src.as_bytes());
        assert!(s.code);
        assert_eq!(
            super::super::skim_python::kept_text(src, &s.plain),
            " int f(void) {  return 1; }\n"
        );
        // A comment right after a directive stays (tree-sitter may end the directive on the
        // comment's line); others go.
        let src = "#define A 1 /* a */ \n/* b */\nint x; /* c */\n";
        assert_eq!(
            kept(Lang::C, src),
            "#define A 1 /* a */ \n/* b */\nint x; \n"
        );
    }

    /// A C prototype at the file's level goes whole, with its annotations (outline and
    /// find_symbol name no function's declaration); a statement that declares anything
    /// else, or that the skim cannot be sure of, stays.
    #[test]
    fn c_prototypes_go_whole() {
        let src = "int f(void);\nextern char *strerror_r (int __errnum, char *__buf)\n     __THROW __nonnull ((2)) __wur;\nstatic struct S *make(int n) __attribute__((malloc));\nOSSL_DEPRECATEDIN_3_0 int MD2_Init(MD2_CTX *c);\nSTACK_OF(X509) *load(const char *f); /* c */\nint x;\n";
        let kept_words: Vec<String> = kept(Lang::C, src)
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(kept_words, ["int", "x;"]);
        for src in [
            "int a, f(void);\n",
            "int (*fp)(int);\n",
            "typedef int cb(void *);\n",
            "int x = f(1);\n",
            "struct S { int a; } make(void);\n",
            "DEFINE_FOO(x);\nstatic DEFINE_SPINLOCK(lock);\nint MY_FUNC(int);\n",
            "int f(x)\nint x;\n{}\n",
        ] {
            assert_eq!(kept(Lang::C, src), src, "{src}");
        }
        // Nor across a directive (a head split between branches is read elsewhere).
        let split = b"int f(int a,\n#ifdef A\n int b\n#endif\n);";
        assert!(!c_prototype(split, 0, split.len() - 1));
        assert!(c_prototype(b"int f(int a, int b);", 0, 19));
        // In C++ `T t(a);` may be a variable; prototypes stay there.
        let src = "int f(void);\nstd::string s(\"x\");\n";
        assert_eq!(kept(Lang::Cpp, src), src);
    }

    #[test]
    fn a_macro_call_that_stands_for_declarations_goes() {
        let src = "int v;\nDECLARE_ASN1_ITEM(X509)\nDECLARE_ASN1_FUNCTIONS(X509_NAME)\nint g(void) { return 1; }\nOSSL_CORE_MAKE_FUNC(const OSSL_PARAM *, params,\n    (void *p))\n# define N 1\nSTACK_OF(X509)\nload(const char *f) { return 0; }\n";
        assert_eq!(
            kept(Lang::C, src),
            "int v;\n\nint g(void) {}\n\n# define N 1\nSTACK_OF(X509)\nload(const char *f) {}\n"
        );
    }

    /// A function's head in a macro's token tree ends with the tree: its return type is
    /// not cut a second time at the `;` (the holes would overlap, and the file would be
    /// parsed whole).
    #[test]
    fn a_function_head_inside_a_macro_ends_with_it() {
        let source = b"weak!(fn f(a: u8) -> u8);\nfn g() -> u8 { 1 + 2 }\n";
        let holes = holes(Lang::Rust, source);
        let text = |(start, end): (usize, usize)| std::str::from_utf8(&source[start..end]).unwrap();
        let cut: Vec<&str> = holes.iter().map(|&h| text(h)).collect();
        assert_eq!(cut, ["fn f(a: u8) -> u8", " -> u8 ", " 1 + 2 "]);
    }

    #[test]
    fn a_macro_after_a_templates_parameters_goes() {
        let src = "template<typename _Tp, typename _Up = _Tp>\n  _GLIBCXX20_CONSTEXPR\n  inline _Tp\n  exchange(_Tp& o, _Up&& n)\n  { return o; }\ntemplate<typename T> requires (A<T> > 1)\n  B_C f();\n";
        assert_eq!(
            kept(Lang::Cpp, src),
            "template<>\n  \n  inline _Tp\n  exchange()\n  {}\ntemplate<> requires (A<T> > 1)\n  B_C f();\n"
        );
    }

    #[test]
    fn tables_whose_values_a_directive_chooses_go() {
        let src = "static const fe d = {{\n#if defined(X)\n    1, 2,\n#else\n    3,\n#endif\n}};\nconst T t[] = {\n#include \"t.inc\"\n};\nint f(void) {\n#if X\n  g();\n#endif\n}\n";
        assert_eq!(
            kept(Lang::C, src),
            "static const fe d = {};\nconst T t[] = {};\nint f(void) {\n#if X\n  g();\n#endif\n}\n"
        );
        // A macro defined among the values is a definition.
        let src = "int a[] = {\n#define N 3\n  N,\n};\n";
        assert_eq!(kept(Lang::Cpp, src), src);
    }

    #[test]
    fn go_heads_imports_and_tables_go() {
        let src = "package q\n\nimport (\n\t\"fmt\" // x\n\ts \"strings\"\n)\n\nimport \"os\"\n\ntype List[T any] struct{ v []T }\n\nfunc (l *List[T]) Len(x, y int) (n int, err error) {\n\treturn len(l.v), nil\n}\n\nfunc Map[S ~[]E, E any](s S, f func(E) E) S {\n\treturn s\n}\n\nfunc asm(x int) int\n\nfunc ret(a int) interface{ M() } {\n\treturn nil\n}\n\nfunc withType(p struct{ A int }) interface{ M() } {\n\treturn nil\n}\n\nfunc table() {\n\ttests := []struct {\n\t\tin  string\n\t}{\n\t\t{\"a\"},\n\t\t{in: \"b\"},\n\t}\n\t_ = tests\n}\n\nvar cases = map[string]struct{}{\"x\": {}, \"y\": {}}\n\nfunc multi(\n\ta int,\n) (\n\tc int,\n) {\n\treturn 0\n}\n";
        assert_eq!(
            kept(Lang::Go, src),
            "package q\n\nimport ()\n\nimport \"os\"\n\ntype List[T any] struct{ v []T }\n\nfunc (l *List[T]) Len(){}\n\nfunc Map[S ~[]E, E any](){}\n\nfunc asm() int\n\nfunc ret() interface{ M() } {}\n\nfunc withType(p struct{ A int }) interface{ M() } {}\n\nfunc table(){\n\ttests := []struct {\n\t\tin  string\n\t}{}\n\t_ = tests\n}\n\nvar cases = map[string]struct{}{}\n\nfunc multi(){}\n"
        );
    }

    #[test]
    fn cpp_namespaces_keep_their_declarations_and_tables_still_go() {
        let src = "namespace n {\nA::A() : x(0) { init(); }\n}\nextern \"C\" {\nint *f(int a) { return g(a); }\n}\nstatic const T t[] = {\n  ROW(1, *p(2)),\n  ROW(3, A::b(4)),\n};\nvoid h() { std::sort(a, b); T *q(int); }\n";
        assert_eq!(
            kept(Lang::Cpp, src),
            "namespace n {\nA::A() : x() {}\n}\nextern \"C\" {\nint *f() {}\n}\nstatic const T t[] = {};\nvoid h() {}\n"
        );
    }

    #[test]
    fn reserved_macros_alone_and_directives_in_a_head_go() {
        // libstdc++'s concept checks in a class's body go (one after another, and before a
        // directive); a reserved name with arguments that is not alone stays, as does a
        // compiler's keyword (`__attribute__`).
        let src = "template<typename _Tp>\n  class stack\n  {\n    typedef int value_type;\n    __glibcxx_class_requires(_Tp, _SGIAssignableConcept)\n    __glibcxx_class_requires2(_Tp, _S, _SameTypeConcept)\n#endif\n    __attribute__((__noinline__))\n    void f();\n    void g() { __glibcxx_requires_nonempty(); }\n  };\n";
        let body = kept(Lang::Cpp, src);
        assert!(!body.contains("class_requires"), "{body}");
        assert!(body.contains("__attribute__((__noinline__))"), "{body}");
        // An `#if` inside a declaration's head: its first branch, without the directives
        // (env_posix.cc's `#if` between a method's parameters and its qualifiers, libstdc++'s
        // `noexcept` under `#if` and `#else`); one after an access label is read whole.
        let src = "class S {\n  void swap(S& s)\n#if A\n  noexcept(X)\n#else\n  noexcept(Y)\n#endif\n  { s.f(); }\n public:\n#if B\n  void b();\n#else\n  void c();\n#endif\n};\n";
        let head = kept(Lang::Cpp, src);
        assert!(
            head.contains("void swap(S& s)\n\n  noexcept(X)\n\n  {}"),
            "{head}"
        );
        assert!(
            head.contains("#if B\n  void b();\n#else\n  void c();\n#endif"),
            "{head}"
        );
    }

    #[test]
    fn c_macros_the_grammar_cannot_read_go() {
        // Each line: the source, and what is kept of it.
        let cases = [
            (
                "namespace std _GLIBCXX_VISIBILITY(default)\n{\n_GLIBCXX_BEGIN_NAMESPACE_VERSION\n  template<typename T> struct S;\n_GLIBCXX_END_NAMESPACE_VERSION\n}\n",
                "namespace std \n{\n\n  template<> struct S;\n\n}\n",
            ),
            (
                "class LEVELDB_EXPORT DB : public X {\n public:\n  virtual ~DB();\n};\nstruct GTEST_API_ T {};\n",
                "class  DB : public X {\n public:\n  virtual ~DB();\n};\nstruct  T {};\n",
            ),
            (
                "LEVELDB_EXPORT Cache* NewLRUCache(size_t capacity);\nOSSL_DEPRECATEDIN_3_0 const char *MD2_options(void);\n",
                " Cache* NewLRUCache(size_t capacity);\n const char *MD2_options(void);\n",
            ),
            (
                "struct M {\n  void Lock() EXCLUSIVE_LOCK_FUNCTION();\n  bool f() const LOCKS_EXCLUDED(mu_) { return x; }\n  explicit L(Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {}\n  int total GUARDED_BY(mu);\n  S stats_[config::kLevels] GUARDED_BY(mu);\n};\n",
                "struct M {\n  void Lock() ;\n  bool f() const  {}\n  explicit L(Mutex* mu)  : mu_() {}\n  int total ;\n  S stats_[config::kLevels] ;\n};\n",
            ),
            (
                "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n#ifdef  __cplusplus\n}  /* extern \"C\" */\n#endif\n",
                "\nint f(void);\n\n",
            ),
            (
                "static inline void _X_ATTRIBUTE_PRINTF(1, 0)\nVErrorF(const char *f, va_list args)\n{\n    vfprintf(stderr, f, args);\n}\n",
                "static inline void \nVErrorF()\n{}\n",
            ),
            (
                "JNIEXPORT jint JNICALL Java_p_C_f(JNIEnv *env)\n{\n    return 1;\n}\nJNIEXPORT void JNICALL\nJava_p_C_g(JNIEnv *env)\n{\n}\nLRESULT CALLBACK WndProc(HWND h)\n{\n    return 0;\n}\nint WINAPI WinMain(HINSTANCE h)\n{\n    return 0;\n}\n",
                " jint  Java_p_C_f()\n{}\n void \nJava_p_C_g()\n{}\nLRESULT  WndProc()\n{}\nint  WinMain()\n{}\n",
            ),
            (
                "struct _Bit_reference\n{\n  _GLIBCXX20_CONSTEXPR\n  _Bit_reference() _GLIBCXX_NOEXCEPT : _M_p(0) { }\n  _GLIBCXX20_CONSTEXPR\n  ~_Bit_reference() { }\n  _GLIBCXX20_CONSTEXPR\n  _Bit_reference&\n  operator=(bool __x) _GLIBCXX_NOEXCEPT\n  { return *this; }\n  [[nodiscard]] _GLIBCXX20_CONSTEXPR bool f() const;\n  friend _GLIBCXX20_CONSTEXPR bool operator==(A, B);\n  virtual ~_Bit_reference() _GLIBCXX_TXN_SAFE_DYN _GLIBCXX_NOTHROW;\n  typedef _Arg argument_type _GLIBCXX17_DEPRECATED;\n};\n",
                "struct _Bit_reference\n{\n  \n  _Bit_reference()  : _M_p() {}\n  \n  ~_Bit_reference() {}\n  \n  _Bit_reference&\n  operator=(bool __x) \n  {}\n  [[nodiscard]]  bool f() const;\n  friend  bool operator==(A, B);\n  virtual ~_Bit_reference() ;\n  typedef _Arg argument_type ;\n};\n",
            ),
            (
                "class U_I18N_API RegexPattern U_FINAL : public UObject {\n  virtual RegexMatcher *matcher(UErrorCode &status) const;\n  static UClassID U_EXPORT2 getStaticClassID();\n};\nstruct S U_FINAL {};\n",
                "class  RegexPattern  : public UObject {\n  virtual RegexMatcher *matcher() const;\n  static UClassID  getStaticClassID();\n};\nstruct S  {};\n",
            ),
            (
                "U_CAPI int32_t U_EXPORT2\nu_strlen(const UChar *s);\nU_CAPI const char * U_EXPORT2 uloc_getDefault(void);\nint U_EXPORT2 MY_FUNC(int);\n",
                " int32_t \nu_strlen(const UChar *s);\n const char *  uloc_getDefault(void);\nint  MY_FUNC(int);\n",
            ),
            (
                "struct fstring {\n  template <typename S>\n  FMT_CONSTEVAL FMT_ALWAYS_INLINE fstring(const S& s) : str(s) {}\n};\n",
                "struct fstring {\n  template <>\n   fstring() : str() {}\n};\n",
            ),
            (
                "void JEMALLOC_NOTHROW *\nJEMALLOC_ATTR(malloc) JEMALLOC_ALLOC_SIZE(1)\nje_malloc(size_t size) {\n}\n",
                "void  *\n\nje_malloc() {}\n",
            ),
            (
                "class W : public QWidget {\n  Q_OBJECT\n  Q_PROPERTY(int value READ value)\npublic:\n  int value() const;\nprivate:\n  FOO_CONSTEXPR\n  W(int v);\n};\n",
                "class W : public QWidget {\n  \npublic:\n  int value() const;\nprivate:\n  \n  W();\n};\n",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(kept(Lang::Cpp, src), want, "{src}");
        }
        // Where a word in capitals is an enumerator, a type, a function's name or a value,
        // it stays.
        for src in [
            "typedef enum {\n\tLZMA_DELTA_TYPE_BYTE\n} lzma_delta_type;\n",
            "enum class E : int {\n  FOO_BAR,\n  BAZ_QUX\n};\n",
            "struct MY_STRUCT s;\nstruct MY_STRUCT *p = 0;\n",
            "static int FOO_BAR(int x) {}\nUINT_PTR GetFoo(void) {}\nSIZE_T count;\n",
            "SIZE_T\nfoo(void) {}\n",
            "struct S {\n  RESULT_TYPE\n  get(void) const;\n};\n",
            "int x = (int) INT_MAX;\nSTACK_OF(X509) *certs;\n",
            "const STACK_OF(X509) f(void) {}\nunsigned LONG_OF(x) g(void) {}\n",
            "#ifdef __cplusplus\nextern \"C\" {\nint g(void);\n#endif\n",
        ] {
            assert_eq!(kept(Lang::C, src), src, "{src}");
        }
    }

    #[test]
    fn typescript_heads_with_type_arguments_keep_their_bodies() {
        // A comma in a class's or interface's head does not end it: the body is one of
        // members, kept whole (a generic method whose type parameter holds an object type
        // is not taken for a definition by itself).
        for head in [
            "export interface Z<T = unknown> extends C<T, T> {",
            "class K implements A, B {",
        ] {
            let src = format!(
                "{head}\n  p<S extends {{ [k in keyof T]?: X<unknown, T[k]> }}>(\n    shape: S\n  ): Z<T>;\n}}\n"
            );
            let kept = kept(Lang::TypeScript, &src);
            assert!(kept.contains("  p<S extends {}>("), "{kept}");
        }
    }

    #[test]
    fn typescript_keyword_keys_define_but_a_switch_label_does_not() {
        let src = "declare function f(): T & {\n    default: any;\n};\nfunction g(x) {\n    switch (x) {\n        default:\n            return 1;\n    }\n}\n";
        let kept = kept(Lang::TypeScript, src);
        assert!(kept.contains("{\n    default: any;\n}"), "{kept}");
        assert!(kept.contains("function g() {}"), "{kept}");
    }

    #[test]
    fn a_line_without_semicolon_ends_its_statement_before_the_next() {
        // fast-uri's top-level block after `new Array(256)`, a line after a call: a block
        // statement, not the body of a method `bind(…) … Array(256) {`; its constant is
        // top-level, and stays.
        let src = "const u = R.bind(/a/)\nconst B = new Array(256)\n{\n  const H = '0'\n}\nfunction f(x) {\n  return x\n}\n";
        let js = kept(Lang::JavaScript, src);
        assert!(js.contains("{\n  const H = '0'\n}"), "{js}");
        assert!(js.contains("function f() {}"), "{js}");
        // eventsource's object type: an index signature without `;` over a property.
        let src = "interface I {\n  headers: {\n    [key: string]: string\n    Accept: 'text/event-stream'\n  }\n}\n";
        assert_eq!(kept(Lang::TypeScript, src), src);
        // A head that goes on at the next line stays one: `extends` after a class's name,
        // a cast's type after `as`.
        let src = "class A\n  extends B {\n  m() {\n    return 1\n  }\n}\nconst c = d as\n  E\n";
        assert!(kept(Lang::TypeScript, src).contains("  m() {}"), "{src}");
    }

    #[test]
    fn typescript_arrow_values_through_a_conditional_or_type_parameters() {
        // zod's `objectKeys = c ? (o) => … : (object) => { const keys … }`: the `:` is the
        // conditional's, not a method's return type, and the arrow is no definition (its
        // constant is a definition of the whole parse, as a callback's are), so the body stays.
        let src = "export const k: K =\n  typeof O === \"function\"\n    ? (o: any) => O.keys(o)\n    : (object: any) => {\n        const keys = [];\n        return keys;\n      };\n";
        let body = "{\n        const keys = [];\n        return keys;\n      }";
        assert!(kept(Lang::TypeScript, src).contains(body), "{src}");
        // A generic arrow `<T>(…) =>` assigned is a function, defined in a function's body.
        let src =
            "function c(r: R) {\n  const pick = <T>(xs: T[]): T => xs[0];\n  return pick(r);\n}\n";
        let body = "{\n  const pick = <T>(xs: T[]): T => xs[0];\n  return pick();\n}";
        assert!(kept(Lang::TypeScript, src).contains(body), "{src}");
    }

    #[test]
    fn typescript_object_types_keep_their_members() {
        // Members of an object type are definitions: a method's signature, a property after
        // modifiers; a function's body with typed locals and calls still goes.
        let src = "type S = {\n    toString(): string;\n} | {\n    readonly raw: string;\n};\ninterface F {\n    list?(input: I): R;\n    private static readonly n?: number;\n}\nfunction f(a: A): B {\n    let x: number = g(a) ? h(a) : 0;\n    return x;\n}\n";
        assert_eq!(
            kept(Lang::TypeScript, src),
            src.replace(
                "(a: A): B {\n    let x: number = g(a) ? h(a) : 0;\n    return x;\n}",
                "(): B {}"
            )
        );
    }

    #[test]
    fn javascript_declarators_after_a_comma_and_members_in_parentheses_define_functions() {
        // `let a = 1, s = t => …`: `s` is declared as `a` is (after an object's value too),
        // and a function's value makes it a definition, whose function keeps its body
        // (minified code declares so); so does a member's inside parentheses.
        let src = "function f() {\n  let a = 1, s = (t) => { return t.x; };\n  g(a, b), c = () => { return 1; };\n}\nfunction k(h) {\n  const w = h.f || (h.f = () => { x(); });\n}\nfunction m(h) {\n  h.default = () => 1;\n}\nfunction n() {\n  let o = { s: 1 }, p = (t) => { return t; };\n}\nfunction q(h) {\n  const { a: b } = h || {}, r = (t) => { return t; };\n}\n";
        assert_eq!(
            kept(Lang::JavaScript, src),
            "function f() {\n  let a = 1, s = (t) => {};\n  g(), c = () => {};\n}\nfunction k() {\n  const w = h.f || (h.f = () => {});\n}\nfunction m() {\n  h.default = () => 1;\n}\nfunction n() {\n  let o = {}, p = (t) => {};\n}\nfunction q() {\n  const {} = h || {}, r = (t) => {};\n}\n"
        );
    }

    #[test]
    fn typescript_generic_method_signatures_define() {
        // `name<…>(` begins a method's signature as `name(` does; the object type that holds
        // one stays.
        let src = "declare const d: {\n    x: {\n        new (o?: A): D;\n        override<T extends A = A>(m: P<T>): void;\n    };\n};\nfunction f() {\n    return g<T>(t);\n}\n";
        assert_eq!(
            kept(Lang::TypeScript, src),
            "declare const d: {\n    x: {\n        new (o?: A): D;\n        override<T extends A = A>(m: P<T>): void;\n    };\n};\nfunction f() {}\n"
        );
    }

    #[test]
    fn php_parameters_and_imports_go_but_a_constructors() {
        // A `use` statement outside a class goes too (a trait's stays).
        let src = "<?php\nnamespace N;\nuse A\\B;\nuse function C\\d;\nuse E\\{F, G};\nclass A {\n    use T;\n    public function __construct(private int $x, public array $y = []) {}\n    public function f(int $a, #[Attr(1)] array $b = [1, 2]): int { return 1; }\n    public static function &g($c) {}\n}\nfunction h(string $s) { if ($s) { i($s); } }\n";
        assert_eq!(
            kept(Lang::Php, src),
            "<?php\nnamespace N;\n\n\n\nclass A {\n    use T;\n    public function __construct(private int $x, public array $y = []) {}\n    public function f(): int {}\n    public static function &g($c) {}\n}\nfunction h() {}\n"
        );
    }

    #[test]
    fn php_computed_names_keep_their_braces() {
        // `->{…}`, `::{…}` and `${…}` compute a name; a body that stays keeps them.
        let src = "<?php\nfunction f() {\n    function inner() {}\n    $h->{$this->method}(...$args);\n    A::{$name}();\n    $v = ${'n' . $i};\n    if ($a) { g(); }\n}\n";
        assert_eq!(
            kept(Lang::Php, src),
            "<?php\nfunction f() {\n    function inner() {}\n    $h->{$this->method}(...$args);\n    A::{$name}();\n    $v = ${'n' . $i};\n    if ($a) {}\n}\n"
        );
    }

    #[test]
    fn php_closures_define_nothing() {
        let src = "<?php\nclass T {\n    public function testA(): void\n    {\n        $app->get('/', function ($req) use ($x) { return $x; });\n        $f = static fn ($a) => $a;\n    }\n    public function testB()\n    {\n        function inner() {}\n        $o = new class {\n            public function m() {}\n        };\n    }\n}\n";
        assert_eq!(
            kept(Lang::Php, src),
            "<?php\nclass T {\n    public function testA(): void\n    {}\n    public function testB()\n    {\n        function inner() {}\n        $o = new class {\n            public function m() {}\n        };\n    }\n}\n"
        );
    }

    #[test]
    fn typescript_keyword_keys_and_statements_without_semicolons() {
        // `default?:` is a property (a `switch`'s `default:` has no `?`).
        let src = "function f() {\n    const m = require(p) as { default?: T }\n}\n";
        assert_eq!(
            kept(Lang::TypeScript, src),
            "function f() {\n    const m = require(p) as { default?: T }\n}\n"
        );
        // `make()` then `try {` on the next line is no method `make(): T {`: the callback's
        // variables in the `try` block are definitions, and the block stays.
        let src = "describe(\"x\", () => {\n    const r = make()\n    try {\n        const v = r.get(1)\n    } finally {}\n})\n";
        assert_eq!(kept(Lang::TypeScript, src), src.replace("get(1)", "get()"));
    }

    #[test]
    fn arguments_and_parameters_go_unless_a_block_or_arrow_is_inside() {
        // Each: the language, the source, and what is kept of it.
        let cases = [
            // Java: a method's parameters, an annotation's and a constructor call's arguments
            // go; a cast's parentheses (after `=`) and the parentheses around a lambda's block
            // stay.
            (
                Lang::Java,
                "class A {\n    @SuppressWarnings(\"x\")\n    int f(int a, Map<K, V> m) throws E { return a; }\n    int k = (int) g(1, 2);\n    Runnable r = run(() -> { h(); });\n    Object o = new B(1) { void m(int x) {} };\n}\n",
                "class A {\n    @SuppressWarnings()\n    int f() throws E {}\n    int k = (int) g();\n    Runnable r = run(() -> {});\n    Object o = new B() { void m() {} };\n}\n",
            ),
            // C#: a tuple type after a modifier stays, as do a deconstruction after `var`, a
            // query clause's expression and an attribute's arguments (inside its brackets).
            (
                Lang::CSharp,
                "class C {\n    public (int, int) F(int a, string b) { return (a, 0); }\n    [Obsolete(\"old\")] void G(ref int x) {}\n    void H() { var (a, b) = M(1, 2); var q = from p in r select (string)p; static int L() { return 1; } }\n}\n",
                "class C {\n    public (int, int) F() {}\n    [Obsolete(\"old\")] void G() {}\n    void H() { var (a, b) = M(); var q = from p in r select (string)p; static int L() {} }\n}\n",
            ),
            // JavaScript: an arrow function among the arguments may be a definition (`a.b =
            // () =>`).
            (
                Lang::JavaScript,
                "function f(a, b = 1) { g(a) }\nsetup(exports.h = () => 1)\ncall(x, y)\n",
                "function f() {}\nsetup(exports.h = () => 1)\ncall()\n",
            ),
            // TypeScript: a type operator's parenthesized type stays.
            (
                Lang::TypeScript,
                "import m = require(\"m\");\nlet v = w as (A | B)[];\ntype U<T> = T extends (infer E)[] ? E : T;\nf(a, b);\n",
                "import m = require(\"m\");\nlet v = w as (A | B)[];\ntype U<T> = T extends (infer E)[] ? E : T;\nf();\n",
            ),
            // C++: a function's parameters before its body, an initializer list, `= 0`, `const`,
            // a trailing return type, and before a `;` in a class's body (not before a `,`).
            (
                Lang::Cpp,
                "struct S {\n  S(int a, T b) : a_(a), b_(b) {}\n  virtual int f(int x) const = 0;\n  auto g(A a) -> R;\n  void h(int a);\n};\nint S::k(int a) noexcept { return a; }\n",
                "struct S {\n  S() : a_(a), b_() {}\n  virtual int f() const = 0;\n  auto g() -> R;\n  void h();\n};\nint S::k() noexcept {}\n",
            ),
        ];
        for (lang, src, want) in cases {
            assert_eq!(kept(lang, src), want, "{src}");
        }
        // Parentheses stay where they may be something else: a declarator's (`(*f)(int)`), a
        // variable's arguments outside a class (`T t(1, 2);`), before a macro, with a
        // directive inside (whose lines go, as in any head), after a keyword (`sizeof`,
        // `decltype`, a condition's macro), in an enum's body; and all of C's, whose macros
        // need them for a parse with errors to recover.
        let src = "struct P { void (*handler)(int sig); int (*rows)[4]; };\nT t(1, 2);\nbool b(int a) NOT_REACHED\nvoid m(int a,\n#if X\n  int b\n#endif\n) {}\nenum E { A = f(1), MARK(B) };\nstatic_assert(sizeof(T) == 4);\nauto d() -> decltype(x.y()) {}\nint c() { if _CONSTEXPR (n(1)) { struct L {}; } }\n";
        assert_eq!(
            kept(Lang::Cpp, src),
            src.replace("#if X", "").replace("#endif", "")
        );
        assert_eq!(
            kept(Lang::C, "int f(int a) { return a; }\n"),
            "int f(int a) {}\n"
        );
        // A template's parameters go, unless their end is in doubt (a `<` that may be an
        // operator, `->`, `>=`, a brace, a string, a comment).
        let src = "template <typename T, typename A = alloc<T>, int N = (1 > 0)> struct V;\ntemplate<bool B = x < static_cast<int>(y)> struct W {};\ntemplate<typename T, typename = decltype(a->b)> void f();\ntemplate<int N = 1 /* n */> struct X;\n";
        assert_eq!(
            kept(Lang::Cpp, src),
            "template <> struct V;\ntemplate<bool B = x < static_cast<int>(y)> struct W {};\ntemplate<> void f();\ntemplate<int N = 1 > struct X;\n"
        );
    }

    #[test]
    fn cpp_raw_strings_hold_no_braces() {
        // A quote inside: read as an ordinary string, the raw string would run on to the
        // line's end and take the block's `}` with it.
        for prefix in ["R", "u8R", "LR", "uR", "UR"] {
            let src = format!("void f() {{ auto s = {prefix}\"x(\"{{)x\"; }} void h() {{ k(); }}\nint FOOR = 1;\n");
            assert_eq!(
                kept(Lang::Cpp, &src),
                "void f() {} void h() {}\nint FOOR = 1;\n",
                "{prefix}"
            );
        }
    }

    #[test]
    fn rust_raw_strings_hold_quotes_and_braces() {
        for prefix in ["r", "br", "cr"] {
            let src = format!("fn f() {{ let s = {prefix}#\"x\"{{\"#; }}\nfn g() {{ x(); }}\n");
            assert_eq!(kept(Lang::Rust, &src), "fn f(){}\nfn g(){}\n", "{prefix}");
        }
    }

    #[test]
    fn csharp_interpolated_strings_hold_their_holes_braces() {
        // Read as a word `$` and ordinary strings, the hole's `"}"` would leave a `}` out
        // of any string, which would close the body.
        let src = "class C\n{\n    void F()\n    {\n        var s = $\"{\"}\"}\";\n        if (a) { b(); }\n    }\n    void G() { }\n}\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "class C\n{\n    void F()\n    {}\n    void G() {}\n}\n"
        );
    }

    #[test]
    fn csharp_local_functions_with_a_generic_or_tuple_head_keep_their_body() {
        let src = "class C\n{\n    void M()\n    {\n        void Check<T>(T x) where T : B { }\n        Check<int>(1);\n    }\n    void N()\n    {\n        static (A, B) Make() => (a, b);\n    }\n    void O()\n    {\n        var y = (T) F(x);\n        G<int>(2);\n        return Foo<T>(x);\n    }\n    void P()\n    {\n        Should(() => Valid<S, D>());\n        p->Get<T>();\n    }\n}\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "class C\n{\n    void M()\n    {\n        void Check<T>(T x) where T : B {}\n        Check<int>(1);\n    }\n    void N()\n    {\n        static (A, B) Make() => (a, b);\n    }\n    void O()\n    {}\n    void P()\n    {}\n}\n"
        );
    }

    #[test]
    fn csharp_directives_in_a_body_go_with_it() {
        let src = "class C\n{\n#if NET\n    public int P { get; }\n#endif\n    public bool F(int key)\n    {\n        if (a)\n        {\n            return true;\n        }\n#if X\n        else if (b)\n        {\n            return false;\n        }\n#endif\n        else\n        {\n            return c;\n        }\n    }\n    void G()\n    {\n#pragma warning disable CS1\n        return;\n    }\n}\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "class C\n{\n\n    public int P { get; }\n\n    public bool F()\n    {}\n    void G()\n    {}\n}\n"
        );
    }

    #[test]
    fn a_minified_file_is_skimmed() {
        let src = "class A{constructor(t){let{max:e=0}=t;this.m=e}get(t){return this.m}}var o={a:1},f=t=>{let r=t;return r},g=function(){return 1};";
        assert_eq!(
            kept(Lang::JavaScript, src),
            "class A{constructor(){}get(){}}var o={},f=t=>{},g=function(){};"
        );
    }

    #[test]
    fn java_anonymous_classes_stay_and_statements_after_new_go() {
        let src = "class A {\n    void f(File f) {\n        try (var in = new FileInputStream(f)) {\n            read(in);\n        }\n    }\n    void g() {\n        sort(l, new java.util.Comparator<String>() {\n            public int compare(String a, String b) { return 0; }\n        });\n    }\n}\n";
        assert_eq!(
            kept(Lang::Java, src),
            "class A {\n    void f() {}\n    void g() {\n        sort(l, new java.util.Comparator<String>() {\n            public int compare() {}\n        });\n    }\n}\n"
        );
    }

    #[test]
    fn csharp_bodies_after_new_go() {
        // C# has no anonymous classes: after `new T()` a block is an initializer or a
        // statement's.
        let src = "class T\n{\n    void F()\n    {\n        using (var c = new C())\n        {\n            c.Run();\n        }\n    }\n    C G() => new C() { A = 1 };\n}\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "class T\n{\n    void F()\n    {}\n    C G() => new C() {};\n}\n"
        );
    }

    #[test]
    fn csharp_branches_after_the_first_go() {
        // The first branch of an `#if` stays, without its directives; the others go, nested
        // ones with them.
        let src = "\u{feff}#if A\ninterface I\n{\n    I F(int a)\n#if NET\n    {\n        return this;\n    }\n#else\n        ;\n#endif\n#if A\n    void G();\n#elif B\n    void H();\n#if C\n    void J();\n#endif\n#else\n    void K();\n  #  endif\n    void L();\n}\n#endif\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "\u{feff}\ninterface I\n{\n    I F()\n\n    {}\n\n\n    void G();\n\n    void L();\n}\n\n"
        );
    }

    #[test]
    fn csharp_verbatim_strings_that_begin_with_a_doubled_quote() {
        let src = "class C {\n    void F() {\n        A(@\"\"\"\" + x + @\"\\\"\"\");\n    }\n    void G() {}\n}\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "class C {\n    void F() {}\n    void G() {}\n}\n"
        );
    }

    #[test]
    fn csharp_bodies_after_constraints_go() {
        let src = "public class C<T> where T : class\n{\n    public Task Send<R>(R r) where R : IRequest, new()\n    {\n        if (r == null) { throw new E(); }\n        return H(r);\n    }\n    int P { get; set; }\n}\n";
        assert_eq!(
            kept(Lang::CSharp, src),
            "public class C<T> where T : class\n{\n    public Task Send<R>(R r) where R : IRequest, new()\n    {}\n    int P { get; set; }\n}\n"
        );
    }

    #[test]
    fn javascript_arrows_define_where_assigned_and_invoked_functions_stay() {
        let src = "class I {\n  async exec (args) {\n    const a = args.find(x => x.ok)\n    return a\n  }\n  other () {\n    const ok = 1\n    const isDir = async s => { return s }\n  }\n}\nconst o = { try: () => { f() } }\nconst c = function () {\n  let fiber = undefined\n  return () => { fiber = 1 }\n}()\nconst d = function () {\n  let local = 1\n}\n";
        assert_eq!(
            kept(Lang::JavaScript, src),
            "class I {\n  async exec () {}\n  other () {\n    const ok = 1\n    const isDir = async s => {}\n  }\n}\nconst o = { try: () => {} }\nconst c = function () {\n  let fiber = undefined\n  return () => { fiber = 1 }\n}()\nconst d = function () {}\n"
        );
    }

    #[test]
    fn javascript_arrays_that_are_values_go_unless_a_block_or_arrow_is_inside() {
        let src = "class I extends C {\n  static params = [\n    'a',\n    ...super.params,\n  ]\n  static f = [x => x]\n}\nconst t = [function g() { return 1 }]\nconst [a, b] = arr\ntype T = [string, number]\n";
        assert_eq!(
            kept(Lang::TypeScript, src),
            "class I extends C {\n  static params = []\n  static f = [x => x]\n}\nconst t = [function g() {}]\nconst [a, b] = arr\ntype T = []\n"
        );
    }

    #[test]
    fn javascript_a_call_before_a_function_value_is_no_method() {
        // The function's variables are the module's, as a callback's are: its body stays.
        let src = "var m = d(\"x\") ? function (t) {\n  var n = 1;\n  return n;\n} : 0;\n";
        assert_eq!(
            kept(Lang::JavaScript, src),
            "var m = d() ? function (t) {\n  var n = 1;\n  return n;\n} : 0;\n"
        );
    }

    #[test]
    fn javascript_keeps_methods_and_template_braces() {
        let src = "function f() { return { render() { x(); } }; }\nfunction g() { const s = `${a}}`; if (a) { b(); } }\n";
        assert_eq!(
            kept(Lang::JavaScript, src),
            "function f() { return { render() {} }; }\nfunction g() {}\n"
        );
    }
}
