//! find_symbol: where a name is defined, from a parse rather than a text search. The grep
//! engine (grep_files' matcher) picks the files whose text holds the name, as `rg -w NAME -l`
//! would; only those are parsed (or read from the parse cache), and their definitions of that
//! name are returned, optionally with their bodies. A name path (`Searcher/search_path`)
//! narrows to definitions inside the named containers, as Serena's `find_symbol` does.

use std::fmt::Write as _;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::outline::{self, page_note, shown_signature, unsupported_note, Symbol, Unsupported};
use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::code::source::{self, Gather, Parser};
use crate::code::{FileTags, Part, SymbolKind};
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::fs::jail::Kind;
use crate::render::human::Text;
use crate::render::model;

pub const DEFAULT_LIMIT: u64 = 100;
/// Lines of a body returned at most; the rest is counted.
pub const MAX_BODY_LINES: usize = 1000;

/// Find where a symbol is defined: its file, line, kind, signature and container, from a real
/// parse of each file that mentions the name (Rust, Python, JavaScript, TypeScript/TSX, Go,
/// Java, C, C++, C#, Ruby, PHP, Bash). "Widget/render" finds render inside Widget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindSymbolArgs {
    /// The symbol's name, e.g. "Searcher", or a name path, e.g. "Searcher/search_path": the
    /// names of its containers (class, impl, module …), outermost first, then its own.
    pub name: String,
    /// Directory or file to search in, relative to the workspace root. Default: ".".
    #[serde(default = "default_path")]
    pub path: String,
    /// Only definitions of this kind.
    #[serde(default)]
    pub kind: Option<SymbolKind>,
    /// true (default): the name is matched whole, case included; false: a definition whose
    /// name contains it, case ignored, is found too.
    #[serde(default)]
    pub exact: Option<bool>,
    /// Return each definition's whole text in `body`. Default: false.
    #[serde(default)]
    pub include_body: bool,
    /// Definitions to skip, for the next page after a truncated one. Default: 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most definitions to return. Default: 100.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub limit: Option<u64>,
}

fn default_path() -> String {
    ".".to_string()
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct FindSymbolResult {
    /// The definitions found, by path, then line.
    pub symbols: Vec<Symbol>,
    /// True when more definitions exist than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Files that mention the name but were not parsed (another language, too large).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Unsupported>,
}

/// The grep engine's matcher for files that may hold `name`: the whole word as `rg -w`
/// matches it when the name is a word, else the text (case ignored with `ignore_case`).
pub fn name_matcher(name: &str, ignore_case: bool) -> Result<RegexMatcher> {
    let word = name.chars().all(|c| c.is_alphanumeric() || c == '_');
    RegexMatcherBuilder::new()
        .fixed_strings(true)
        .word(word && !ignore_case)
        .case_insensitive(ignore_case)
        .build(name)
        .map_err(|e| Error::invalid_args(format!("name: {e}")))
}

/// A name path split: the containers' names and the symbol's own.
fn split_name(name: &str) -> Result<(Vec<&str>, &str)> {
    let parts: Vec<&str> = name.trim_matches('/').split('/').collect();
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(Error::invalid_args(
            "name: a symbol's name, or names separated by / (\"Widget/render\")",
        ));
    }
    let (own, containers) = parts.split_last().unwrap_or((&"", &[]));
    Ok((containers.to_vec(), own))
}

/// Whether `tags.defs[i]` is the symbol asked for, its own name passing `named`.
fn wanted(
    tags: &FileTags,
    i: usize,
    args: &FindSymbolArgs,
    containers: &[&str],
    named: &dyn Fn(&str) -> bool,
) -> bool {
    let def = &tags.defs[i];
    match args.kind {
        Some(kind) if def.kind != kind => return false,
        None if def.kind == SymbolKind::Impl => return false,
        _ => {}
    }
    if !named(&def.name) {
        return false;
    }
    if containers.is_empty() {
        return true;
    }
    let path = tags.name_path(i);
    let above = &path[..path.len().saturating_sub(1)];
    above.len() >= containers.len() && above.ends_with(containers)
}

/// The lines of a definition, from its first to its last, at most `MAX_BODY_LINES`.
fn body(bytes: &[u8], start_line: u32, end_line: u32) -> String {
    let text = String::from_utf8_lossy(bytes);
    let first = usize::try_from(start_line.saturating_sub(1)).unwrap_or(0);
    let count = usize::try_from(end_line.saturating_sub(start_line)).unwrap_or(0) + 1;
    let mut out = String::new();
    for line in text
        .split_inclusive('\n')
        .skip(first)
        .take(count.min(MAX_BODY_LINES))
    {
        out.push_str(line);
    }
    if count > MAX_BODY_LINES {
        let _ = writeln!(out, "… [{} more lines]", count - MAX_BODY_LINES);
    }
    out
}

fn find(args: FindSymbolArgs, ctx: &Context, parser: Parser) -> Result<FindSymbolResult> {
    let limit = outline::limit_of(args.limit, DEFAULT_LIMIT)?;
    let (containers, own) = split_name(&args.name)?;
    let exact = args.exact.unwrap_or(true);
    let matcher = name_matcher(own, !exact)?;
    let filter = |bytes: &[u8]| matcher.is_match(bytes).unwrap_or(false);
    // A definition's own name: the one asked for, or (not `exact`) one that holds it in any
    // case; asked of every definition of a file the cache holds, so lowered once here.
    let lowered = own.to_lowercase();
    let named = |name: &str| {
        if exact {
            name == own
        } else {
            name.to_lowercase().contains(&lowered)
        }
    };
    // A definition of the name is named where the name is: only the definitions there (and
    // around them) are wanted of a file's parse.
    let focus = |bytes: &[u8]| {
        let mut places = Vec::new();
        let _ = matcher.find_iter(bytes, |m| {
            if let (Ok(start), Ok(end)) = (u32::try_from(m.start()), u32::try_from(m.end())) {
                places.push((start, end));
            }
            true
        });
        places
    };
    let rel = ctx.ws.relative(&args.path)?;
    let is_file = ctx.ws.kind_of(&rel)? == Kind::File;
    let gather = Gather {
        parser,
        need: Part::Defs,
        filter: Some(&filter),
        keep_bytes: args.include_body,
        focus: Some(&focus),
        names: Some(&named),
    };
    let gathered = source::gather(&ctx.ws, &rel, &gather)?;
    outline::refuse_one_unparsed(is_file, &gathered)?;
    let mut symbols = Vec::new();
    for file in &gathered.files {
        for i in 0..file.tags.defs.len() {
            if !wanted(&file.tags, i, &args, &containers, &named) {
                continue;
            }
            let mut symbol = outline::symbol(&file.path, &file.tags, i);
            if args.include_body {
                let def = &file.tags.defs[i];
                symbol.body = Some(body(&file.bytes, def.start_line, def.end_line));
            }
            symbols.push(symbol);
        }
    }
    let (symbols, truncated, next_offset) = outline::page(symbols, args.offset.unwrap_or(0), limit);
    Ok(FindSymbolResult {
        symbols,
        truncated,
        next_offset,
        unsupported: Unsupported::of(&gathered.unparsed),
    })
}

pub struct FindSymbol;

impl Tool for FindSymbol {
    const NAME: ToolName = ToolName::FindSymbol;
    const TITLE: &'static str = "Find a symbol's definition";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: true,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["name", "path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "where a name is defined (`Class/method` name paths, `kind`, substring with `exact: false`, `include_body`); only the files that hold the word are parsed",
        example: r#"{"name": "Searcher/search_path", "include_body": true}"#,
        pipeline: "sneaky-symbol main | jq -r '.result.symbols[] | \"\\(.path):\\(.line)\"'",
        config: &[],
        env: &[(
            "XDG_STATE_HOME",
            "where the parse cache is kept: $XDG_STATE_HOME/sneaky/parse/ (else \
             ~/.local/state/sneaky/parse/), one directory per workspace",
        )],
        text: TextExample::prints(
            &[
                ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
                ("src/main.rs", "fn main() {\n    answer();\n}\n"),
            ],
            &["answer"],
            "",
            "src/lib.rs:1: pub fn answer() -> u32\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"name": "answer"}"#,
            fails: r#"{"name": "answer", "kind": "nope"}"#,
            fails_with: ErrorKind::InvalidArgs,
        },
    };
    const SCHEMA: &'static str = committed_schema!("find_symbol");
    const PATH_PARAMS: &'static [&'static str] = &["path"];
    type Args = FindSymbolArgs;
    type Output = FindSymbolResult;

    /// Parsed in this process, on the walking threads, as each file is read: handing the
    /// files to `sneaky-outline --parse` made a cold call for `new` on 10,000 files take
    /// 201 ms instead of 166 (the bytes over a pipe, the helper's start and its wait), and a
    /// call on a one-file workspace 4.7 ms instead of 2.9. The binary is 22 MB instead of 3;
    /// its start measured no slower.
    fn run(args: FindSymbolArgs, ctx: &Context) -> Result<FindSymbolResult> {
        find(args, ctx, Parser::here(outline::parse_here))
    }

    /// The hosts parse through the helper: they link no grammar.
    fn run_hosted(args: FindSymbolArgs, ctx: &Context) -> Result<FindSymbolResult> {
        find(args, ctx, Parser::ELSEWHERE)
    }

    /// Each definition as `path:line kind signature (in container)`, its body after it.
    fn model_text(r: &FindSymbolResult) -> String {
        let mut out = String::new();
        for s in &r.symbols {
            let _ = write!(
                out,
                "{}:{}-{} {}",
                s.path,
                s.line,
                s.end_line,
                shown_signature(s)
            );
            if let Some(c) = &s.container {
                let _ = write!(out, " (in {c})");
            }
            out.push('\n');
            if let Some(body) = &s.body {
                out.push_str(body);
                if !body.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        if out.is_empty() {
            out.push_str("no definition found");
        }
        let mut out = out.trim_end_matches('\n').to_string();
        out.push_str(&model::cut_note(
            r.truncated,
            r.next_offset,
            r.symbols.len(),
            "name, kind or path",
        ));
        out.push_str(&Unsupported::note(&r.unsupported));
        out
    }

    fn human_text(r: &FindSymbolResult, binary: &str) -> Text {
        let mut text = Text::default();
        for s in &r.symbols {
            let _ = writeln!(text.stdout, "{}:{}: {}", s.path, s.line, shown_signature(s));
            if let Some(body) = &s.body {
                text.stdout.push_str(body);
            }
        }
        page_note(
            &mut text,
            binary,
            r.truncated,
            r.next_offset,
            r.symbols.len(),
            "definitions",
        );
        unsupported_note(&mut text, binary, &r.unsupported);
        text
    }

    const TEXT_FORMAT: &'static str =
        "one definition a line, path:line: signature, each followed by its body with --include-body";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_bodies() {
        assert_eq!(split_name("a").unwrap(), (vec![], "a"));
        assert_eq!(split_name("A/b").unwrap(), (vec!["A"], "b"));
        assert!(split_name("A//b").is_err() && split_name("").is_err());
        let text = b"one\ntwo\nthree\nfour\n";
        assert_eq!(body(text, 2, 3), "two\nthree\n");
        assert_eq!(body(text, 4, 9), "four\n");
        let m = name_matcher("walk", false).unwrap();
        assert!(m.is_match(b"fn walk()").unwrap());
        assert!(!m.is_match(b"fn walker()").unwrap());
        let m = name_matcher("Walk", true).unwrap();
        assert!(m.is_match(b"fn walker()").unwrap());
    }
}
