//! outline: the definitions of a file or of every file under a folder (functions, methods,
//! classes, structs, enums, traits and interfaces, types, constants, fields), each with its
//! lines, its head and what encloses it, from a tree-sitter parse of the file's language.
//! The folder is walked as grep_files walks it (the jail's handles, ignore files, hidden
//! files skipped, the read-deny list), in parallel, and each file's tags come from the parse
//! cache when the file has not changed (`code::cache`).
//!
//! Its binary, `sneaky-outline`, links the grammars (as only `sneaky-symbol` does besides):
//! it parses on its walking threads, and answers the others' parses (`code::elsewhere`,
//! `--parse`); it links read_file's image decoders and PDF parser too, and answers for them
//! (`modes`). The hosts run this tool in their own process and parse through that helper
//! (`Tool::run_hosted`). The result types here (`Symbol`, `Unsupported`) are the ones
//! find_symbol, find_references and repo_map answer with too.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, Main, TextExample, Tool, ToolName};
use crate::code::elsewhere::{Job, Parsed};
use crate::code::source::{self, Gather, Gathered, Parser, Unparsed};
use crate::code::{FileTags, Lang, Part, SymbolKind};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::Kind;
use crate::render::human::Text;
use crate::render::model;

/// The modes of `sneaky-outline` ahead of the tool: the helpers for the programs that do not
/// link what they need, the parser (`code::elsewhere`, `--parse`) and the image decoders and
/// PDF parser (`media`, `--scale-image` and `--pdf-text`), which `sneaky-read`'s start would
/// otherwise pay for at every call.
fn modes(outline: fn() -> std::process::ExitCode) -> std::process::ExitCode {
    crate::media::main_or(|| crate::code::elsewhere::main_or(outline))
}

pub const DEFAULT_LIMIT: u64 = 500;
pub const MAX_LIMIT: u64 = 100_000;
/// Files not parsed that a result names by path (all are counted).
pub const UNSUPPORTED_SHOWN: usize = 20;

/// List the definitions in a file, or in every source file under a directory: functions,
/// methods, classes, structs, enums, traits and interfaces, types, constants and fields, each
/// with its line range, its signature and its container, from a real parse of the file's
/// language (Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C, C++, C#, Ruby, PHP, Bash).
/// Skips hidden, gitignored and denied files like grep_files; files of other languages are
/// named in `unsupported`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlineArgs {
    /// File or directory, relative to the workspace root, e.g. "src/lib.rs" or "src/".
    pub path: String,
    /// Levels of nesting to list: 1 lists only top-level definitions, 2 also their members
    /// (methods, fields, variants), and so on. Default: all.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub depth: Option<u64>,
    /// Definitions to skip, for the next page after a truncated one (see next_offset).
    /// Default: 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most definitions to return. Default: 500.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub limit: Option<u64>,
}

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Symbol {
    /// File path relative to the workspace root.
    pub path: String,
    pub name: String,
    pub kind: SymbolKind,
    /// 1-based line of its name.
    pub line: u32,
    /// 1-based last line of the definition (its body included).
    pub end_line: u32,
    /// Its head on one line: "pub fn walk(ws: &Workspace) -> Result<()>".
    pub signature: String,
    /// The name of what it belongs to (the class, impl, module or receiver type), or null.
    pub container: Option<String>,
    /// The whole definition's text (find_symbol with include_body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// Files that were not parsed: of another language, too large, or given up.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Unsupported {
    /// How many files were not parsed.
    pub count: u64,
    /// The first of them by path, each with why.
    pub files: Vec<UnsupportedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct UnsupportedFile {
    pub path: String,
    /// "not a supported language", "larger than 4 MiB", "not parsed: …".
    pub reason: String,
}

impl Unsupported {
    /// The summary of a call's files not parsed; None when there are none.
    pub fn of(unparsed: &[Unparsed]) -> Option<Unsupported> {
        (!unparsed.is_empty()).then(|| Unsupported {
            count: unparsed.len() as u64,
            files: unparsed
                .iter()
                .take(UNSUPPORTED_SHOWN)
                .map(|u| UnsupportedFile {
                    path: u.path.clone(),
                    reason: u.reason.clone(),
                })
                .collect(),
        })
    }

    /// A closing note for a model: which files were not parsed.
    pub fn note(this: &Option<Unsupported>) -> String {
        let Some(u) = this else {
            return String::new();
        };
        let mut out = format!("\n[{} not parsed:", model::plural(u.count, "file", "files"));
        for f in &u.files {
            let _ = write!(out, " {} ({});", f.path, f.reason);
        }
        if u.count > u.files.len() as u64 {
            let _ = write!(out, " …");
        }
        out.push(']');
        out
    }
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct OutlineResult {
    /// Definitions by path, then position; members after what encloses them.
    pub symbols: Vec<Symbol>,
    /// True when more definitions exist than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Files under the path that were not parsed, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Unsupported>,
}

/// The symbols of a file's tags, at most `depth` levels deep, each with its nesting depth.
pub fn symbols_of(path: &str, tags: &FileTags, depth: Option<u64>) -> Vec<(Symbol, usize)> {
    let mut out = Vec::new();
    for i in 0..tags.defs.len() {
        let level = tags.ancestors(i).count() + 1;
        if depth.is_some_and(|d| level as u64 > d) {
            continue;
        }
        out.push((symbol(path, tags, i), level));
    }
    out
}

/// `tags.defs[i]` as a result's symbol.
pub fn symbol(path: &str, tags: &FileTags, i: usize) -> Symbol {
    let def = &tags.defs[i];
    Symbol {
        path: path.to_string(),
        name: def.name.clone(),
        kind: def.kind,
        line: def.line,
        end_line: def.end_line,
        signature: def.signature.clone(),
        container: tags.container(i).map(str::to_string),
        body: None,
    }
}

/// Parse in this process: what `sneaky-outline` does (and only it links).
pub fn parse_here(files: &[Job<'_>]) -> Result<Vec<Parsed>> {
    Ok(files
        .iter()
        .map(|&(lang, bytes, want)| crate::code::parse::tags_for(lang, bytes, want))
        .collect())
}

/// Refuse a start that is one file not parsed, saying why (a folder's files that were not
/// parsed are listed in the result instead).
pub fn refuse_one_unparsed(start_is_file: bool, gathered: &Gathered) -> Result<()> {
    match gathered.unparsed.first() {
        Some(u) if start_is_file && gathered.files.is_empty() => Err(Error::new(
            ErrorKind::InvalidArgs,
            format!(
                "{}: {} (these tools parse {})",
                u.path,
                u.reason,
                Lang::extension_list()
            ),
        )
        .about_path(u.path.clone())),
        _ => Ok(()),
    }
}

/// A page of `items` after `offset`: (the page, truncated, next offset).
pub fn page<T>(items: Vec<T>, offset: u64, limit: u64) -> (Vec<T>, bool, Option<u64>) {
    let total = items.len() as u64;
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    let page: Vec<T> = items.into_iter().skip(skip).take(take).collect();
    let end = offset.saturating_add(page.len() as u64);
    let truncated = total > end;
    (page, truncated, truncated.then_some(end))
}

/// `limit` resolved: its default when absent, refused when 0 or over the bound.
pub fn limit_of(given: Option<u64>, default: u64) -> Result<u64> {
    match given {
        None => Ok(default),
        Some(0) => Err(Error::invalid_args("limit: must be at least 1")),
        Some(n) if n > MAX_LIMIT => Err(Error::invalid_args(format!("limit: at most {MAX_LIMIT}"))),
        Some(n) => Ok(n),
    }
}

fn outline(args: OutlineArgs, ctx: &Context, parser: Parser) -> Result<OutlineResult> {
    let limit = limit_of(args.limit, DEFAULT_LIMIT)?;
    if args.depth == Some(0) {
        return Err(Error::invalid_args("depth: must be at least 1"));
    }
    let rel = ctx.ws.relative(&args.path)?;
    let is_file = ctx.ws.kind_of(&rel)? == Kind::File;
    let gather = Gather {
        parser,
        need: Part::Defs,
        filter: None,
        keep_bytes: false,
        focus: None,
        names: None,
    };
    let gathered = source::gather(&ctx.ws, &rel, &gather)?;
    refuse_one_unparsed(is_file, &gathered)?;
    let mut symbols = Vec::new();
    for file in &gathered.files {
        symbols.extend(
            symbols_of(&file.path, &file.tags, args.depth)
                .into_iter()
                .map(|(s, _)| s),
        );
    }
    let (symbols, truncated, next_offset) = page(symbols, args.offset.unwrap_or(0), limit);
    Ok(OutlineResult {
        symbols,
        truncated,
        next_offset,
        unsupported: Unsupported::of(&gathered.unparsed),
    })
}

/// The nesting depth of each symbol of a page, told from the containers before it in the
/// same file (a page holds members after what encloses them).
fn depths(symbols: &[Symbol]) -> Vec<usize> {
    let mut out = Vec::with_capacity(symbols.len());
    // The open definitions of the current file: (name, end line).
    let mut open: Vec<(&str, u32)> = Vec::new();
    let mut path = "";
    for s in symbols {
        if s.path != path {
            open.clear();
            path = &s.path;
        }
        match s.container.as_deref() {
            None => open.clear(),
            Some(container) => {
                while let Some(&(name, end)) = open.last() {
                    if name == container && end >= s.line {
                        break;
                    }
                    open.pop();
                }
            }
        }
        out.push(open.len());
        open.push((&s.name, s.end_line));
    }
    out
}

pub struct Outline;

impl Tool for Outline {
    const NAME: ToolName = ToolName::Outline;
    const TITLE: &'static str = "Outline definitions";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: true,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "the definitions of a file or folder (functions, classes, methods …) with lines, signature and container, parsed with tree-sitter for Rust, Python, JS, TS/TSX, Go, Java, C, C++, C#, Ruby, PHP, Bash",
        example: r#"{"path": "src/lib.rs"}"#,
        pipeline: "sneaky-outline src | jq -r '.result.symbols[] | \"\\(.path):\\(.line) \\(.kind) \\(.name)\"'",
        config: &[],
        env: &[(
            "XDG_STATE_HOME",
            "where the parse cache is kept: $XDG_STATE_HOME/sneaky/parse/ (else \
             ~/.local/state/sneaky/parse/), one directory per workspace",
        )],
        text: TextExample::prints(
            &[(
                "src/lib.rs",
                "pub struct Point {\n    x: i32,\n}\n\nfn main() {}\n",
            )],
            &["src/lib.rs"],
            "",
            "src/lib.rs:1: pub struct Point\nsrc/lib.rs:2:   x: i32\nsrc/lib.rs:5: fn main()\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"path": "src/lib.rs"}"#,
            fails: r#"{"path": "src/missing.rs"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("outline");
    const PATH_PARAMS: &'static [&'static str] = &["path"];
    const MAIN: Main = Main::GeneratedWith(modes);
    type Args = OutlineArgs;
    type Output = OutlineResult;

    fn run(args: OutlineArgs, ctx: &Context) -> Result<OutlineResult> {
        outline(args, ctx, Parser::here(parse_here))
    }

    fn run_hosted(args: OutlineArgs, ctx: &Context) -> Result<OutlineResult> {
        outline(args, ctx, Parser::ELSEWHERE)
    }

    /// Each file's path, then its definitions a line each, members indented under what
    /// encloses them: `12-40 pub struct Searcher`.
    fn model_text(r: &OutlineResult) -> String {
        let mut out = String::new();
        let mut path = "";
        for (s, depth) in r.symbols.iter().zip(depths(&r.symbols)) {
            if s.path != path {
                if !path.is_empty() {
                    out.push('\n');
                }
                path = &s.path;
                let _ = writeln!(out, "{path}");
            }
            let _ = writeln!(
                out,
                "{}{}-{} {}",
                "  ".repeat(depth),
                s.line,
                s.end_line,
                shown_signature(s)
            );
        }
        if out.is_empty() {
            out.push_str("no definitions found");
        }
        let mut out = out.trim_end_matches('\n').to_string();
        out.push_str(&model::cut_note(
            r.truncated,
            r.next_offset,
            r.symbols.len(),
            "path or depth",
        ));
        out.push_str(&Unsupported::note(&r.unsupported));
        out
    }

    fn human_text(r: &OutlineResult, binary: &str) -> Text {
        let mut text = Text::default();
        for (s, depth) in r.symbols.iter().zip(depths(&r.symbols)) {
            let _ = writeln!(
                text.stdout,
                "{}:{}: {}{}",
                s.path,
                s.line,
                "  ".repeat(depth),
                shown_signature(s)
            );
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
        "one definition a line, path:line: signature, members indented under what encloses them";
}

/// A symbol's signature, with its name when the signature does not show it.
pub fn shown_signature(s: &Symbol) -> String {
    if s.signature.contains(s.name.as_str()) {
        s.signature.clone()
    } else {
        format!("{} {}", s.kind.as_str(), s.name)
    }
}

/// `--format text`'s note on stderr when a page was cut.
pub fn page_note(
    text: &mut Text,
    binary: &str,
    truncated: bool,
    next_offset: Option<u64>,
    shown: usize,
    what: &str,
) {
    if let (true, Some(next)) = (truncated, next_offset) {
        let _ = writeln!(
            text.stderr,
            "{binary}: the result was cut: only {shown} {what} are shown (the next page: \
             --offset {next}; or raise --limit)"
        );
    }
}

/// `--format text`'s note on stderr naming the files not parsed.
pub fn unsupported_note(text: &mut Text, binary: &str, unsupported: &Option<Unsupported>) {
    let Some(u) = unsupported else { return };
    let _ = writeln!(
        text.stderr,
        "{binary}: {} not parsed",
        model::plural(u.count, "file", "files")
    );
    for f in &u.files {
        let _ = writeln!(text.stderr, "{binary}: {}: {}", f.path, f.reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, line: u32, end: u32, container: Option<&str>) -> Symbol {
        Symbol {
            path: "a.rs".into(),
            name: name.into(),
            kind: SymbolKind::Function,
            line,
            end_line: end,
            signature: format!("fn {name}()"),
            container: container.map(str::to_string),
            body: None,
        }
    }

    #[test]
    fn members_are_indented_under_their_container() {
        let symbols = [
            sym("A", 1, 10, None),
            sym("f", 2, 4, Some("A")),
            sym("g", 5, 9, Some("A")),
            sym("inner", 6, 7, Some("g")),
            sym("B", 11, 12, None),
        ];
        assert_eq!(depths(&symbols), [0, 1, 1, 2, 0]);
        let (page_of, truncated, next) = page(vec![1, 2, 3, 4, 5], 1, 2);
        assert_eq!((page_of, truncated, next), (vec![2, 3], true, Some(3)));
        let (page_of, truncated, next) = page(vec![1, 2, 3], 1, 5);
        assert_eq!((page_of, truncated, next), (vec![2, 3], false, None));
    }
}
