//! find_references: where a name is used in code. The grep engine finds the files and the
//! places that hold the word, as `rg -w NAME` does; each such file's parse (or its cached
//! tags) then tells which of those places are code: a place inside a comment or a string
//! (outside its interpolations) is left out, and so is a definition's own name. Each use comes
//! with its line's text and the definition it lies in (its container), so that "who calls
//! this" reads off the result.

use std::fmt::Write as _;

use grep_matcher::Matcher;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::outline::{self, page_note, unsupported_note, Unsupported};
use super::symbol::name_matcher;
use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::code::source::{self, Gather, Parser, Source};
use crate::code::Part;
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::fs::jail::Kind;
use crate::render::human::Text;
use crate::render::model;

pub const DEFAULT_LIMIT: u64 = 200;
/// Characters of a line's text returned at most.
pub const MAX_TEXT_CHARS: usize = 300;

/// Find the uses of an identifier in code: each place it appears outside comments and
/// strings (a Rust doc comment's examples, links and `code` spans, a Python docstring's
/// doctests and ``literals``, the names of `__all__`, and a comment's names written as only
/// code writes them: `code`, snake_case, CamelCase, name(), a::name, obj.name, count), with
/// the definitions themselves left out, from a real parse of each file that holds the word (Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C, C++, C#, Ruby, PHP,
/// Bash). Each use comes with its line and the definition it is in.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindReferencesArgs {
    /// The identifier, e.g. "walk_builder" (of a name path "Searcher/search_path", the last
    /// name).
    pub name: String,
    /// Directory or file to search in, relative to the workspace root. Default: ".".
    #[serde(default = "default_path")]
    pub path: String,
    /// Uses to skip, for the next page after a truncated one (see next_offset). Default: 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Most uses to return. Default: 200.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub limit: Option<u64>,
}

fn default_path() -> String {
    ".".to_string()
}

/// One use of the name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct Reference {
    /// File path relative to the workspace root.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column where the name starts.
    pub column: u32,
    /// The line's text without its line ending (very long lines are shortened).
    pub text: String,
    /// The name of the innermost definition the use lies in, or null at the top level.
    pub container: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct FindReferencesResult {
    /// Uses by path, then line and column.
    pub references: Vec<Reference>,
    /// True when more uses exist than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Files that hold the word but were not parsed (another language, too large).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Unsupported>,
}

/// The uses of `name` in one parsed file, in order.
fn uses(file: &Source, name: &str, matcher: &impl Matcher) -> Vec<Reference> {
    let bytes = &file.bytes;
    let tags = &file.tags;
    let mut found = Vec::new();
    let _ = matcher.find_iter(bytes, |m| {
        found.push(m.start());
        true
    });
    let mut out = Vec::new();
    let mut line_start = 0usize;
    let mut line = 1u32;
    for at in found {
        let Ok(at32) = u32::try_from(at) else { break };
        if tags.in_skip(at32) {
            continue;
        }
        if tags
            .defs
            .iter()
            .any(|d| d.name_byte == at32 && d.name == name)
        {
            continue;
        }
        // Lines are counted forward only: matches come in order.
        while let Some(nl) = memchr::memchr(b'\n', &bytes[line_start..at]) {
            line_start += nl + 1;
            line += 1;
        }
        let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let text = String::from_utf8_lossy(&bytes[line_start..line_end]);
        let text = crate::text::shorten(text.trim_end_matches('\r'), MAX_TEXT_CHARS);
        let container = tags.innermost_at(line).map(|i| tags.defs[i].name.clone());
        out.push(Reference {
            path: file.path.clone(),
            line,
            column: u32::try_from(at - line_start + 1).unwrap_or(u32::MAX),
            text,
            container,
        });
    }
    out
}

fn find(args: FindReferencesArgs, ctx: &Context, parser: Parser) -> Result<FindReferencesResult> {
    let limit = outline::limit_of(args.limit, DEFAULT_LIMIT)?;
    let name = args.name.trim().rsplit('/').next().unwrap_or("");
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return Err(Error::invalid_args(
            "name: an identifier, e.g. \"walk_builder\"",
        ));
    }
    let matcher = name_matcher(name, false)?;
    let filter = |bytes: &[u8]| matcher.is_match(bytes).unwrap_or(false);
    let rel = ctx.ws.relative(&args.path)?;
    let is_file = ctx.ws.kind_of(&rel)? == Kind::File;
    let gather = Gather {
        parser,
        need: Part::All,
        filter: Some(&filter),
        keep_bytes: true,
        focus: None,
        names: None,
    };
    let gathered = source::gather(&ctx.ws, &rel, &gather)?;
    outline::refuse_one_unparsed(is_file, &gathered)?;
    let mut references = Vec::new();
    for file in &gathered.files {
        references.extend(uses(file, name, &matcher));
    }
    let (references, truncated, next_offset) =
        outline::page(references, args.offset.unwrap_or(0), limit);
    Ok(FindReferencesResult {
        references,
        truncated,
        next_offset,
        unsupported: Unsupported::of(&gathered.unparsed),
    })
}

pub struct FindReferences;

impl Tool for FindReferences {
    const NAME: ToolName = ToolName::FindReferences;
    const TITLE: &'static str = "Find the uses of a name";
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
        summary: "the uses of an identifier in code (not in comments or strings, save the code of doc comments and the names a comment writes as code; definitions left out), each with its line and container",
        example: r#"{"name": "walk_builder", "path": "src"}"#,
        pipeline: "sneaky-refs answer | jq -r '.result.references[] | \"\\(.path):\\(.line): \\(.container)\"'",
        config: &[],
        env: &[(
            "XDG_STATE_HOME",
            "where the parse cache is kept: $XDG_STATE_HOME/sneaky/parse/ (else \
             ~/.local/state/sneaky/parse/), one directory per workspace",
        )],
        text: TextExample::prints(
            &[
                ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
                (
                    "src/main.rs",
                    "// answer in a comment\nfn main() {\n    answer();\n}\n",
                ),
            ],
            &["answer"],
            "",
            "src/main.rs:3:5:    answer();\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"name": "answer"}"#,
            fails: r#"{"name": "answer", "path": "no/such/dir"}"#,
            fails_with: ErrorKind::NotFound,
        },
    };
    const SCHEMA: &'static str = committed_schema!("find_references");
    const PATH_PARAMS: &'static [&'static str] = &["path"];
    type Args = FindReferencesArgs;
    type Output = FindReferencesResult;

    fn run(args: FindReferencesArgs, ctx: &Context) -> Result<FindReferencesResult> {
        find(args, ctx, Parser::ELSEWHERE)
    }

    /// Grouped by file as grep_files' text: the path, then `line: text`, with the definition
    /// the use is in.
    fn model_text(r: &FindReferencesResult) -> String {
        let mut out = String::new();
        let mut path = "";
        for u in &r.references {
            if u.path != path {
                if !path.is_empty() {
                    out.push('\n');
                }
                path = &u.path;
                let _ = writeln!(out, "{path}");
            }
            let _ = write!(out, "{}:{}", u.line, u.text);
            if let Some(c) = &u.container {
                let _ = write!(out, "  (in {c})");
            }
            out.push('\n');
        }
        if out.is_empty() {
            out.push_str("no references found");
        }
        let mut out = out.trim_end_matches('\n').to_string();
        out.push_str(&model::cut_note(
            r.truncated,
            r.next_offset,
            r.references.len(),
            "name or path",
        ));
        out.push_str(&Unsupported::note(&r.unsupported));
        out
    }

    fn human_text(r: &FindReferencesResult, binary: &str) -> Text {
        let mut text = Text::default();
        for u in &r.references {
            let _ = writeln!(text.stdout, "{}:{}:{}:{}", u.path, u.line, u.column, u.text);
        }
        page_note(
            &mut text,
            binary,
            r.truncated,
            r.next_offset,
            r.references.len(),
            "uses",
        );
        unsupported_note(&mut text, binary, &r.unsupported);
        text
    }

    const TEXT_FORMAT: &'static str =
        "one use a line, path:line:column:text, as rg --column prints";
}
