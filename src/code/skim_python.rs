//! What a parse of Python for its definitions may leave out (`super::skim` does the
//! languages of braces): the body of a function that defines nothing in it, but for its last
//! line. Python's blocks are its indentation, so a body cannot go whole (`def f():` needs a
//! statement after it); its last line stays, at whatever depth (the first statement of a
//! block sets its indentation), so that the function and the class around it end where they
//! end in the file. Where that line cannot stand alone, or a comment after it would end the
//! block before it, the last statement stays (with its block, if it is an `if`, a `for`, a
//! `try` …), and a comment after it belongs where it belongs in the file. The function is kept
//! whole when its body holds a `def`, a `class` or a decorator at any depth. What a
//! function's body assigns is local, so nothing the outline shows goes with it. Comments
//! alone on their line and docstrings go too where a statement of their block follows them
//! (`idle_lines`).
//!
//! The lexer reads logical lines: a line goes on inside brackets, strings (triple-quoted
//! ones over many lines) and after a backslash. A hole runs from the end of the function's
//! header to the start of its last statement's line, so the text left keeps its lines whole
//! and each line its indentation.

/// A logical line: where its first line starts (before its indentation) and where it ends
/// (past the newline), its indentation, and what the skim needs of its tokens.
struct Line {
    line_start: usize,
    end: usize,
    indent: usize,
    /// It begins with `def` or `async def`.
    def: bool,
    /// It begins with `class` or `@`: a definition the outline shows, wherever it is.
    defines: bool,
    /// Its last token is `:`: a compound statement's header, whose block follows.
    opens: bool,
    /// It goes on the compound statement before it (`else`, `elif`, `except`, `finally`),
    /// and cannot stand alone.
    goes_on: bool,
    /// It is strings alone (a docstring): a statement that defines nothing.
    strings: bool,
    /// It begins with `import` or `from` (an import: `from` begins no other statement).
    import: bool,
}

/// A line that holds only a comment: where it starts, where it ends (past the newline) and
/// its indentation.
struct Comment {
    start: usize,
    end: usize,
    indent: usize,
}

/// The byte ranges to leave out of a parse of `source`, sorted and apart.
pub fn holes(source: &[u8]) -> Vec<(usize, usize)> {
    let mut comments = Vec::new();
    let mut holes = Vec::new();
    let Some(lines) = logical_lines(source, &mut comments, &mut holes) else {
        return Vec::new();
    };
    holes.extend(idle_lines(&lines, &comments));
    // A module's imports define nothing, and at its top level a statement can go whole.
    holes.extend(
        lines
            .iter()
            .filter(|l| l.indent == 0 && l.import)
            .map(|l| (l.line_start, l.end)),
    );
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        if !line.def || !line.opens {
            i += 1;
            continue;
        }
        let body = lines[i + 1..]
            .iter()
            .take_while(|l| l.indent > line.indent)
            .count();
        let inside = &lines[i + 1..=i + body];
        // A nested definition: this function stays whole, and each one inside is looked at
        // in its turn.
        if inside.iter().any(|l| l.def || l.defines) {
            i += 1;
            continue;
        }
        // The comments after the body and before the next line: where they are less
        // indented than the body's last line, they still end the function in the file.
        let next = lines
            .get(i + 1 + body)
            .map_or(source.len(), |l| l.line_start);
        let last_end = lines[i + body].end;
        let from = comments.partition_point(|c| c.start < last_end);
        let until = comments.partition_point(|c| c.start < next);
        last_line(&lines[i..=i + body], &comments[from..until], &mut holes);
        i += 1 + body;
    }
    super::tags::merged(holes)
}

/// A function's body (`lines`: its header, then the body's lines) is parsed as its last line
/// alone, however deep that line is in the body's blocks, when it can stand alone: the first
/// statement of a block sets the block's indentation, so `def f():` over an `if` whose
/// `else:` ends in `return x` reads as `def f():` and `return x`, and ends where the
/// function ends. A last line that goes on a statement before it (`else: x = 1`), or that
/// comments after it (`trailing`) are less indented than (they would end the body before
/// them), keeps the statements it needs (`last_statements`).
fn last_line(lines: &[Line], trailing: &[Comment], holes: &mut Vec<(usize, usize)>) {
    match lines {
        [header, .., last]
            if lines.len() > 2
                && !last.goes_on
                && !last.opens
                && trailing.iter().all(|c| c.indent >= last.indent) =>
        {
            holes.push((header.end, last.line_start));
        }
        _ => last_statements(lines, holes),
    }
}

/// The blocks of a statement (`lines`: its header, then the lines of its block and of
/// each clause that goes on it, `else:`, `except:` …) keep only their last statement at
/// their own level, with that one's blocks in turn: a function that defines nothing keeps
/// its last statement (with the `if` or `try` its `else:` or `except:` goes on), and `for x
/// in y:` over ten lines ending in `return x` is parsed as `for x in y:` and `return x`,
/// which ends where the function ends.
fn last_statements(lines: &[Line], holes: &mut Vec<(usize, usize)>) {
    let Some(first) = lines.first() else {
        return;
    };
    let mut k = 0;
    while k < lines.len() {
        let header = &lines[k];
        let block = lines[k + 1..]
            .iter()
            .take_while(|l| l.indent > first.indent)
            .count();
        if header.opens && block > 0 {
            let inside = &lines[k + 1..=k + block];
            let base = inside[0].indent;
            if let Some(last) = inside.iter().rposition(|l| l.indent == base && !l.goes_on) {
                if last > 0 {
                    holes.push((header.end, inside[last].line_start));
                }
                last_statements(&inside[last..], holes);
            }
        }
        k += 1 + block;
    }
}

/// The lines a parse for definitions need not see: comments alone on their line and
/// statements of strings alone (docstrings), where each of them up to the next statement
/// (itself included) is at that statement's indentation or less. They then lie inside a
/// block, before a statement of it: no definition starts or ends on them. One that is
/// deeper than the statement after it may be the last of a block, which tree-sitter ends
/// with it, and it stays, as does every one before it up to that statement (the scanner's
/// dedent before a comment depends on the comments before it); so does one that the end of
/// the file follows, and a docstring alone in its block.
fn idle_lines(lines: &[Line], comments: &[Comment]) -> Vec<(usize, usize)> {
    let mut holes = Vec::new();
    // From the end: the indentation of the next statement, and whether every idle line
    // since it was at that indentation or less.
    let mut next: Option<usize> = None;
    let mut all_within = true;
    let (mut l, mut c) = (lines.len(), comments.len());
    while l > 0 || c > 0 {
        let line_last = c == 0 || (l > 0 && lines[l - 1].line_start > comments[c - 1].start);
        let (start, end, indent) = if line_last {
            l -= 1;
            let line = &lines[l];
            if !line.strings {
                next = Some(line.indent);
                all_within = true;
                continue;
            }
            (line.line_start, line.end, line.indent)
        } else {
            c -= 1;
            let comment = &comments[c];
            (comment.start, comment.end, comment.indent)
        };
        all_within = all_within && next.is_some_and(|n| indent <= n);
        if all_within {
            holes.push((start, end));
        }
    }
    holes
}

/// The logical lines of `source` that hold a token, or `None` where the lexer finds
/// something it does not know (an unclosed string or bracket), and nothing is left out.
/// The lines that hold only a comment go to `comments`, and the insides of their outermost
/// brackets to `brackets` (`bracket_hole`).
fn logical_lines(
    src: &[u8],
    comments: &mut Vec<Comment>,
    brackets: &mut Vec<(usize, usize)>,
) -> Option<Vec<Line>> {
    let mut lines = Vec::new();
    let mut at = 0;
    while at < src.len() {
        // The line's indentation, past blank and comment-only lines.
        let line_start = at;
        while at < src.len() && matches!(src[at], b' ' | b'\t' | b'\x0c') {
            at += 1;
        }
        match src.get(at) {
            None => break,
            Some(b'\n' | b'\r') => {
                at += 1;
                continue;
            }
            Some(b'#') => {
                let indent = at - line_start;
                at = line_end(src, at);
                if at < src.len() {
                    comments.push(Comment {
                        start: line_start,
                        end: at + 1,
                        indent,
                    });
                }
                continue;
            }
            Some(b'\\') if matches!(src.get(at + 1), Some(b'\n' | b'\r')) => return None,
            _ => {}
        }
        let start = at;
        let word = word_at(src, start);
        let (def, defines) = match word {
            b"def" => (true, false),
            b"async" => (word_at(src, skip_blank(src, start + 5)) == b"def", false),
            b"class" => (false, true),
            _ => (false, src[start] == b'@'),
        };
        let goes_on = matches!(word, b"else" | b"elif" | b"except" | b"finally");
        let mut depth = 0u32;
        // Where the outermost bracket open opened.
        let mut opened = 0;
        let mut last = 0u8;
        let mut strings = matches!(src[start], b'\'' | b'"');
        while let Some(&b) = src.get(at) {
            match b {
                b'\n' if depth == 0 => {
                    at += 1;
                    break;
                }
                b'#' => {
                    at = line_end(src, at);
                    continue;
                }
                b'\\' => {
                    // A continuation (the next line joins this one).
                    at += 1;
                    if src.get(at) == Some(&b'\r') {
                        at += 1;
                    }
                    at += 1;
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    if depth == 0 {
                        opened = at;
                    }
                    depth += 1;
                }
                b')' | b']' | b'}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        brackets.extend(bracket_hole(src, opened, at));
                    }
                }
                b'\'' | b'"' => {
                    at = string_end(src, at)?;
                    last = b'"';
                    continue;
                }
                _ => {}
            }
            if !b.is_ascii_whitespace() {
                last = b;
                strings = false;
            }
            at += 1;
        }
        if depth != 0 {
            return None;
        }
        lines.push(Line {
            line_start,
            end: at,
            indent: start - line_start,
            def,
            defines,
            opens: last == b':',
            goes_on,
            strings,
            import: matches!(word, b"import" | b"from"),
        });
    }
    Some(lines)
}

/// The inside of the outermost brackets from `open` to `close`, when it may be left out of a
/// parse for definitions: brackets hold expressions, and no expression defines (a `lambda`
/// is not a definition, and a function's locals are not kept). Left out, `f(…)` is parsed as
/// `f()`, `= […]` as `= []`, `return {…}` as `return {}`: so a table of data (`return
/// [(0x0, '3'), …]` over thousands of lines, a module's dict of frequencies) costs the parse
/// nothing. Only brackets that are a value: a call's, or after `=`, an operator or a keyword
/// that an expression follows ([`VALUE_AFTER`]); not a subscript's (`a[…]`, whose `a[]`
/// would not parse), not a target's (`(a, b) = …`, `for (k, v) in`, which may define), not
/// an import list's; and not an inside too short to be worth a hole ([`MIN_BRACKET_HOLE`]).
fn bracket_hole(src: &[u8], open: usize, close: usize) -> Option<(usize, usize)> {
    if close - open - 1 < MIN_BRACKET_HOLE {
        return None;
    }
    let mut end = open;
    while end > 0 && matches!(src[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let call = src[open] == b'(';
    let value = match end.checked_sub(1).map(|i| src[i]) {
        Some(b'=' | b'+' | b'-' | b'/' | b'%' | b'|' | b'&' | b'^' | b'~' | b'<' | b'>') => true,
        Some(b')' | b']') => call,
        Some(b) if is_word(b) => {
            let mut start = end;
            while start > 0 && is_word(src[start - 1]) {
                start -= 1;
            }
            let word = &src[start..end];
            if VALUE_AFTER.contains(&word) {
                true
            } else {
                call && !NOT_A_CALL.contains(&word)
            }
        }
        _ => false,
    };
    value.then_some((open + 1, close))
}

/// The shortest inside of brackets that [`bracket_hole`] leaves out.
const MIN_BRACKET_HOLE: usize = 16;

/// The keywords after which brackets are a value (`return [`, `in (`, `if {`).
const VALUE_AFTER: &[&[u8]] = &[
    b"return", b"yield", b"in", b"not", b"and", b"or", b"if", b"elif", b"else", b"is", b"await",
    b"assert", b"while",
];

/// The keywords that parentheses after them are no call's: a target (`for (k, v) in`, `as`,
/// `del`), an import list, `with`'s items.
const NOT_A_CALL: &[&[u8]] = &[
    b"for",
    b"as",
    b"del",
    b"import",
    b"with",
    b"print",
    b"exec",
    b"global",
    b"nonlocal",
    b"except",
    b"raise",
    b"from",
    b"async",
    b"case",
    b"match",
];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The end of the string whose quote is at `at` (its prefix, if any, was read as a word
/// before it), past its closing quote; `None` when it never closes.
fn string_end(src: &[u8], at: usize) -> Option<usize> {
    let quote = src[at];
    let triple = src.get(at..at + 3) == Some(&[quote; 3][..]);
    let mut i = at + if triple { 3 } else { 1 };
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return None,
            b if b == quote => {
                if !triple {
                    return Some(i + 1);
                }
                if src.get(i..i + 3) == Some(&[quote; 3][..]) {
                    return Some(i + 3);
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

fn line_end(src: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |n| at + n)
}

fn skip_blank(src: &[u8], mut at: usize) -> usize {
    while src.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
        at += 1;
    }
    at
}

fn word_at(src: &[u8], at: usize) -> &[u8] {
    let rest = &src[at.min(src.len())..];
    let len = rest
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80))
        .unwrap_or(rest.len());
    &rest[..len]
}

/// What a parse is given of `src`: its text without `holes` (this skim's tests and
/// `super::skim`'s, which uses this module: not the other way round).
#[cfg(test)]
pub(super) fn kept_text(src: &str, holes: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for &(start, end) in holes {
        out.push_str(&src[at..start]);
        at = end;
    }
    out.push_str(&src[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(src: &str) -> String {
        kept_text(src, &holes(src.as_bytes()))
    }

    #[test]
    fn function_bodies_go_but_their_last_line() {
        let src = "import os\n\nclass A(B):\n    x = 1\n\n    def m(self, a):\n        \"\"\"Doc\n        more.\"\"\"\n        y = [1,\n  2]\n        if y:\n            return 3\n        return 4\n    # after\n\n    async def n(self):\n        z = 1\n        if z:\n            return z  # done\n\n    def t(self):\n        a()\n        try:\n            b()\n        except E:\n            pass\n\ndef f(): return 1\n\ndef g():\n    pass\n";
        assert_eq!(
            kept(src),
            "\nclass A(B):\n    x = 1\n\n    def m(self, a):\n        return 4\n\n    async def n(self):\n            return z  # done\n\n    def t(self):\n            pass\n\ndef f(): return 1\n\ndef g():\n    pass\n"
        );
        // A comment less indented than the last line would end the body before it: the last
        // statement stays, its blocks keep their last statements, and so on down. So does
        // a last line that goes on the statement before it.
        let src = "def u(self):\n    for x in y:\n        a = 1\n        if a:\n            b()\n            c()\n        else:\n            d()\n            e()\n    # after\nz = 1\n";
        assert_eq!(
            kept(src),
            "def u(self):\n    for x in y:\n        if a:\n            c()\n        else:\n            e()\n    # after\nz = 1\n"
        );
        let src = "def v():\n    a()\n    if b:\n        c()\n    else: d()\n";
        assert_eq!(
            kept(src),
            "def v():\n    if b:\n        c()\n    else: d()\n"
        );
    }

    #[test]
    fn comments_and_docstrings_go_where_a_statement_of_their_block_follows() {
        let src = "\"\"\"Module doc.\"\"\"\n# about A\nclass A:\n    \"\"\"Doc.\"\"\"\n    # about x\n    x = 1\n    def m(self):\n        return 1\n        # the end of m\n    # before y\n    y = 2\n\nclass B:\n    \"\"\"Alone.\"\"\"\n# at the end\n";
        assert_eq!(
            kept(src),
            "class A:\n    x = 1\n    def m(self):\n        return 1\n        # the end of m\n    y = 2\n\nclass B:\n    \"\"\"Alone.\"\"\"\n# at the end\n"
        );
        // A comment the scanner dedents before decides where the deeper ones after it go
        // (into the block before, or not): it stays with them.
        let src = "def f():\n    return 1\n\n# def g():\n    # return 2\nclass C: pass\n";
        assert_eq!(kept(src), src);
        // Strings with more to them are an expression, not a docstring.
        let src = "class D:\n    \"a\".join(x)\n    \"b\" \"c\"\n    y = 1\n";
        assert_eq!(kept(src), "class D:\n    \"a\".join(x)\n    y = 1\n");
    }

    #[test]
    fn functions_that_define_stay() {
        for src in [
            "def f():\n    def inner():\n        return 1\n    return inner\n",
            "def f():\n    x = 1\n    if x:\n        class C: pass\n    return x\n",
            "def f():\n    x = 1\n    @wraps(g)\n    def h(): pass\n",
        ] {
            assert_eq!(kept(src), src);
        }
        // A nested function's own body goes.
        let src =
            "def outer():\n    def inner():\n        a = 1\n        return a\n    return inner\n";
        assert_eq!(
            kept(src),
            "def outer():\n    def inner():\n        return a\n    return inner\n"
        );
        // A `def` inside a string is text.
        let src = "def f():\n    s = \'\'\'\ndef not_code():\n\'\'\'\n    return s\n";
        assert_eq!(kept(src), "def f():\n    return s\n");
    }

    #[test]
    fn module_imports_go() {
        let src = "import os\nfrom a import (b,\n    c)\ntry:\n    import ssl\nexcept ImportError:\n    ssl = None\nx = 1\n";
        assert_eq!(
            kept(src),
            "try:\n    import ssl\nexcept ImportError:\n    ssl = None\nx = 1\n"
        );
    }

    #[test]
    fn values_in_brackets_go() {
        // A table's inside goes, where it is a value (assigned, returned, a call's
        // arguments); a subscript and a target stay, as do short insides.
        let src = "T = {\n    'a': 1, 'b': 2, 'c': 3,\n}\nx: Dict[str, int] = f(1, 2, 3, 4, 5, 6, 7, 8)\n(first_name, last_name) = g()\nfrom m import (alpha, beta, gamma)\nfor (key_one, value_two) in d: pass\ny = a[1, 2, 3, 4, 5, 6, 7, 8, 9]\nz = [1, 2]\n\ndef data():\n    return [\n        (0x0, '3'),\n        (0x1, '3'),\n    ]\n";
        assert_eq!(
            kept(src),
            "T = {}\nx: Dict[str, int] = f()\n(first_name, last_name) = g()\nfor (key_one, value_two) in d: pass\ny = a[1, 2, 3, 4, 5, 6, 7, 8, 9]\nz = [1, 2]\n\ndef data():\n    return []\n"
        );
    }

    #[test]
    fn what_the_lexer_cannot_read_leaves_everything() {
        for src in [
            "def f():\n    x = (1,\n    return x\n",
            "def f():\n    s = 'open\n    return s\n",
        ] {
            assert!(holes(src.as_bytes()).is_empty(), "{src}");
        }
    }
}
