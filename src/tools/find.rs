//! find_files: glob search over names, with fd's defaults (hidden and gitignored paths skipped,
//! links not followed, smart case: a pattern without capitals ignores case). A pattern
//! without `/` matches the entry's name; one with `/` matches its path relative to the root,
//! where `**` crosses directories. The walk reaches every entry through its directory's handle,
//! so a hit is inside the root by construction; fd's filters (type, extension, depth,
//! excludes, hidden, no-ignore) come on top.

use std::os::unix::ffi::OsStrExt;

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    committed_schema, Calls, Cli, Context, Doc, Hints, Short, StreamText, TextExample,
    TextStreamed, Tool, ToolName, WriteJson,
};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::found::{Batch, PathList, PathSink, Paths, Sorted};
use crate::fs::jail::Kind;
use crate::fs::walk::{self, Filters, Flow};
use crate::render::human::{self, Text};
use crate::render::json_out;
use crate::render::model;
use crate::render::stream::{Piece, TextStream};

pub const DEFAULT_MAX_RESULTS: u64 = 1000;
pub const MAX_RESULTS_BOUND: u64 = 1_000_000;

/// Find files and directories whose name matches a glob, e.g. "*.py" or "config.yaml"; a
/// pattern containing "/" matches the whole path relative to the workspace root, e.g.
/// "src/**/*.rs". Case is ignored unless the pattern has a capital letter. Skips hidden and
/// gitignored paths, like fd. Returns sorted root-relative paths; directories end with "/".
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// Glob pattern: "*" and "?" within a name, "**" across directories, "{a,b}" alternatives.
    pub pattern: String,
    /// Directory to search in, relative to the workspace root. Default: ".".
    #[serde(default = "default_path")]
    pub path: String,
    /// Only entries of these types (fd's -t): "f" (file), "d" (directory), "l" (symlink).
    #[serde(default, rename = "type")]
    pub entry_type: Vec<String>,
    /// Only entries with one of these extensions (fd's -e), e.g. ["rs", "toml"]; case is ignored.
    #[serde(default)]
    pub extension: Vec<String>,
    /// Descend at most this many levels (fd's -d); 1 lists only the directory's own entries.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_depth: Option<u64>,
    /// Leave out entries matching these globs, and what is below them (fd's -E).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Include hidden files and directories (fd's -H). Default: false.
    #[serde(default)]
    pub hidden: bool,
    /// Do not skip what .gitignore, .ignore and .fdignore files exclude (fd's -I). Default: false.
    #[serde(default)]
    pub no_ignore: bool,
    /// Most paths to return. Default: 1000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000000))]
    pub max_results: Option<u64>,
    /// Paths to skip, for the next page after a truncated one (see next_offset). Default: 0.
    #[serde(default)]
    pub offset: Option<u64>,
}

fn default_path() -> String {
    ".".to_string()
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct FindResult {
    /// Sorted paths relative to the workspace root; directories end with "/".
    #[schemars(with = "Vec<String>")]
    pub files: PathList,
    /// True when more paths matched than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

pub struct FindFiles;

/// Compile a find pattern with fd's smart case.
pub fn compile(pattern: &str) -> Result<(GlobMatcher, bool)> {
    if pattern.is_empty() {
        return Err(Error::invalid_args("pattern: must not be empty"));
    }
    let full_path = pattern.contains('/');
    let smart_insensitive = !pattern.chars().any(char::is_uppercase);
    let glob = GlobBuilder::new(pattern.trim_start_matches("./"))
        .case_insensitive(smart_insensitive)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| Error::invalid_args(format!("pattern: {e}")))?;
    Ok((glob.compile_matcher(), full_path))
}

/// The entry kinds asked for: (files, directories, symlinks); all when none is named.
fn kinds(types: &[String]) -> Result<[bool; 3]> {
    if types.is_empty() {
        return Ok([true; 3]);
    }
    let mut want = [false; 3];
    for t in types {
        match t.as_str() {
            "f" | "file" => want[0] = true,
            "d" | "dir" | "directory" => want[1] = true,
            "l" | "symlink" => want[2] = true,
            other => {
                return Err(Error::invalid_args(format!(
                    "type: {other:?} is not one of f (file), d (directory), l (symlink)"
                )))
            }
        }
    }
    Ok(want)
}

/// A name pattern that is a literal, or "*" then a literal ("*.rs", "Makefile"), matched by
/// comparing bytes: what its compiled glob decides (globset's regex has Unicode off, so its
/// case-insensitivity is ASCII's, byte by byte), at a fraction of the cost of running it on
/// every name walked.
#[derive(Debug)]
struct Literal {
    star: bool,
    text: Vec<u8>,
    case_insensitive: bool,
}

impl Literal {
    /// None when the pattern holds anything else a glob gives meaning to.
    fn of(pattern: &str, case_insensitive: bool) -> Option<Literal> {
        let (star, text) = match pattern.strip_prefix('*') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        if text.bytes().any(|b| b"*?[]{}\\,!/".contains(&b)) || (!star && text.is_empty()) {
            return None;
        }
        Some(Literal {
            star,
            text: text.as_bytes().to_vec(),
            case_insensitive,
        })
    }

    fn is_match(&self, name: &[u8]) -> bool {
        let tail = match name.len().checked_sub(self.text.len()) {
            Some(0) => name,
            Some(at) if self.star => &name[at..],
            _ => return false,
        };
        if self.case_insensitive {
            tail.eq_ignore_ascii_case(&self.text)
        } else {
            tail == self.text.as_slice()
        }
    }
}

/// The validated search.
pub struct Plan {
    matcher: GlobMatcher,
    /// The pattern as a literal, when it is one (matched against names only).
    literal: Option<Literal>,
    full_path: bool,
    kinds: [bool; 3],
    /// Lower-cased ".ext" suffixes.
    extensions: Vec<String>,
    opts: walk::Options,
}

pub fn plan(args: &FindArgs) -> Result<Plan> {
    let (matcher, full_path) = compile(&args.pattern)?;
    let literal = if full_path {
        None
    } else {
        let smart_insensitive = !args.pattern.chars().any(char::is_uppercase);
        Literal::of(args.pattern.trim_start_matches("./"), smart_insensitive)
    };
    let mut filters = Filters::standard(".fdignore");
    filters.hidden = args.hidden;
    filters.ignore_files = !args.no_ignore;
    let excludes: Vec<String> = args.exclude.iter().map(|g| format!("!{g}")).collect();
    let globs: Vec<(&str, &str)> = excludes.iter().map(|g| ("exclude", g.as_str())).collect();
    filters.overrides = super::grep::overrides(&globs)?;
    let max_depth = match args.max_depth {
        Some(0) => return Err(Error::invalid_args("max_depth: must be at least 1")),
        d => d.map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
    };
    let extensions = args
        .extension
        .iter()
        .map(|e| format!(".{}", e.trim_start_matches('.').to_lowercase()))
        .collect();
    Ok(Plan {
        matcher,
        literal,
        full_path,
        kinds: kinds(&args.entry_type)?,
        extensions,
        opts: walk::Options {
            filters: Some(filters),
            max_depth,
            threads: walk::threads(),
            files_per_job: walk::FILES_PER_JOB,
        },
    })
}

/// Run a search, handing each path found to `sink` as soon as it is found (directories with a
/// trailing "/"), in no particular order.
pub fn search(args: &FindArgs, ctx: &Context, sink: &dyn PathSink) -> Result<()> {
    let plan = plan(args)?;
    let rel = ctx.ws.relative(&args.path)?;
    let start = ctx.ws.walk_start(&rel)?;
    if start.kind != Kind::Dir {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{} is not a directory", rel.display()),
        ));
    }
    let plan = &plan;
    walk::walk(&ctx.ws, start, &plan.opts, || {
        let mut batch = Batch::new(sink);
        move |entry: &walk::Entry<'_>| {
            let wanted = match entry.kind {
                Kind::File => plan.kinds[0],
                Kind::Dir => plan.kinds[1],
                Kind::Symlink => plan.kinds[2],
                Kind::Other => plan.kinds == [true; 3],
            };
            if !wanted {
                return Flow::Continue;
            }
            let hit = match &plan.literal {
                Some(literal) => literal.is_match(entry.name.as_bytes()),
                None if plan.full_path => plan.matcher.is_match(entry.path),
                None => plan.matcher.is_match(entry.name),
            };
            if !hit || !has_extension(&plan.extensions, entry.name) {
                return Flow::Continue;
            }
            if batch.push(entry, entry.kind == Kind::Dir) {
                Flow::Continue
            } else {
                Flow::Quit
            }
        }
    });
    Ok(())
}

fn has_extension(extensions: &[String], name: &std::ffi::OsStr) -> bool {
    if extensions.is_empty() {
        return true;
    }
    let name = name.to_string_lossy().to_lowercase();
    extensions
        .iter()
        .any(|e| name.len() > e.len() && name.ends_with(e.as_str()))
}

impl Tool for FindFiles {
    const NAME: ToolName = ToolName::FindFiles;
    const TITLE: &'static str = "Find files by name";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: true,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["pattern", "path"],
        stdin_param: None,
    };
    const SHORT: &'static [Short] = &[
        ('t', "type", None),
        ('e', "extension", None),
        ('d', "max_depth", None),
        ('E', "exclude", None),
        ('H', "hidden", None),
        ('I', "no_ignore", None),
    ];
    const DOC: Doc = Doc {
        summary: "glob search like `fd --glob`, with fd's filters and short flags (below)",
        example: r#"{"pattern": "*.toml", "path": "."}"#,
        pipeline: "sneaky-find 'src/**/*.rs' | jq -r '.result.files[]' | xargs wc -l",
        config: &[],
        env: &[],
        text: TextExample::prints(
            &[("src/lib.rs", ""), ("notes.md", "")],
            &["*.rs"],
            "",
            "src/lib.rs\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"pattern": "*.rs"}"#,
            fails: r#"{"pattern": "*.rs", "nope": 1}"#,
            fails_with: ErrorKind::InvalidArgs,
        },
    };
    const SCHEMA: &'static str = committed_schema!("find_files");
    const PATH_PARAMS: &'static [&'static str] = &["path"];
    type Args = FindArgs;
    type Output = FindResult;

    const STREAM_TEXT: Option<StreamText<FindArgs>> = Some(stream_text);
    const WRITE_JSON: Option<WriteJson<FindResult>> = Some(write_json);

    fn run(args: FindArgs, ctx: &Context) -> Result<FindResult> {
        let limit = super::bounded_max(args.max_results, DEFAULT_MAX_RESULTS, MAX_RESULTS_BOUND)?;
        let offset = args.offset.unwrap_or(0);
        let found =
            Sorted::new(usize::try_from(offset.saturating_add(limit)).unwrap_or(usize::MAX));
        search(&args, ctx, &found)?;
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let (files, total) = found.finish(skip);
        let truncated = total > offset + files.len() as u64;
        Ok(FindResult {
            next_offset: truncated.then_some(offset + files.len() as u64),
            files,
            truncated,
        })
    }

    fn model_text(r: &FindResult) -> String {
        model::path_lines(
            &r.files.to_vec(),
            r.truncated,
            r.next_offset,
            "pattern",
            "no files match",
        )
    }

    fn human_text(r: &FindResult, binary: &str) -> Text {
        let mut text = Text::default();
        human::lines(&mut text.stdout, &r.files.to_vec());
        let cut = (r.truncated, r.next_offset);
        human::cut_note(&mut text, binary, cut, r.files.len(), "paths");
        text
    }

    const TEXT_FORMAT: &'static str =
        "one path a line, written as they are found, so in the order the walk finds them, \
         as fd's, and --max-results has no upper bound (with --offset, even 0, the sorted \
         page is printed instead)";
}

/// The result as serde_json writes it, its paths escaped by `render::json_out` (at 180,000
/// paths, serde_json's escaping was 8 % of sneaky-find's instructions, on one thread after
/// the walk).
fn write_json(r: &FindResult, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(br#"{"files":"#)?;
    write_paths(&r.files, out)?;
    out.write_all(if r.truncated {
        br#","truncated":true"#
    } else {
        br#","truncated":false"#
    })?;
    if let Some(next) = r.next_offset {
        write!(out, r#","next_offset":{next}"#)?;
    }
    out.write_all(b"}")
}

/// The paths as a JSON array of strings, 64 KiB at a time.
fn write_paths(files: &PathList, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    const CHUNK: usize = 64 * 1024;
    let mut buf = Vec::with_capacity(CHUNK + 1024);
    buf.push(b'[');
    let mut first = true;
    let mut written = Ok(());
    files.for_each_marked(|path, plain| {
        if !first {
            buf.push(b',');
        }
        first = false;
        if plain {
            buf.push(b'"');
            buf.extend_from_slice(path.as_bytes());
            buf.push(b'"');
        } else {
            json_out::write_str(&mut buf, path);
        }
        if buf.len() >= CHUNK {
            written = out.write_all(&buf);
            buf.clear();
        }
        written.is_ok()
    });
    written?;
    buf.push(b']');
    out.write_all(&buf)
}

/// `--format text` without `offset`: paths are written as the walk finds them (fd's order with
/// threads), nothing kept; `max_results` caps what is written and has no upper bound here.
/// With `offset` the sorted page is printed instead, as JSON mode returns it.
fn stream_text(
    args: &FindArgs,
    ctx: &Context,
    out: &mut (dyn std::io::Write + Send),
) -> Option<Result<TextStreamed>> {
    args.offset
        .is_none()
        .then(|| stream_text_run(args, ctx, out))
}

fn stream_text_run(
    args: &FindArgs,
    ctx: &Context,
    out: &mut (dyn std::io::Write + Send),
) -> Result<TextStreamed> {
    let cap = super::bounded_max(args.max_results, DEFAULT_MAX_RESULTS, u64::MAX)?;
    let sink = TextPaths(TextStream::new(out, cap));
    search(args, ctx, &sink)?;
    Ok(TextStreamed {
        end: sink.0.finish(),
        unit: "paths",
    })
}

/// Streamed text: one path a line.
struct TextPaths<'a>(TextStream<'a>);

impl PathSink for TextPaths<'_> {
    fn found(&self, paths: Paths) -> bool {
        let mut piece = Piece::default();
        for path in paths.iter() {
            piece.text.extend_from_slice(path.as_bytes());
            piece.text.push(b'\n');
            piece.end_result();
        }
        self.0.write(&piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The result's own writer writes what serde_json writes: paths gathered by a walk's sink
    /// (more than one 64 KiB chunk of them, after a skip), a plain list, and none; with names
    /// that JSON escapes.
    #[test]
    fn the_result_is_written_as_serde_json_writes_it() {
        let odd = [
            "a\"b.rs",
            "tab\there.rs",
            "back\\slash/x.rs",
            "é/ü.rs",
            "\u{1}.rs",
            "dir/",
        ];
        let sorted = Sorted::new(10_000);
        let mut batch = Paths::default();
        for i in 0..5_000 {
            batch.push(&format!("src/m{}/file{i}.rs", i % 7), false);
        }
        for path in odd {
            batch.push(path.strip_suffix('/').unwrap_or(path), path.ends_with('/'));
        }
        assert!(sorted.found(batch));
        let (gathered, _) = sorted.finish(3);
        let plain: PathList = odd.iter().collect();
        for (files, truncated, next_offset) in [
            (gathered, true, Some(5_003)),
            (plain, false, None),
            (PathList::default(), false, None),
        ] {
            let result = FindResult {
                files,
                truncated,
                next_offset,
            };
            let mut ours = Vec::new();
            write_json(&result, &mut ours).expect("written");
            let theirs = serde_json::to_vec(&result).expect("serialized");
            assert!(ours.len() > 64 * 1024 || !truncated);
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
    }

    #[test]
    fn smart_case_and_separators() {
        let (m, full) = compile("*.rs").expect("glob");
        assert!(!full);
        assert!(m.is_match("main.rs") && m.is_match("MAIN.RS"));
        let (m, _) = compile("*.RS").expect("glob");
        assert!(!m.is_match("main.rs"));
        let (m, full) = compile("src/**/*.rs").expect("glob");
        assert!(full);
        assert!(m.is_match(Path::new("src/a/b/c.rs")));
        assert!(m.is_match(Path::new("src/c.rs")));
        assert!(!m.is_match(Path::new("tests/src/c.rs")));
        let (m, _) = compile("src/*.rs").expect("glob");
        assert!(!m.is_match(Path::new("src/a/c.rs")));
        assert!(compile("a[").is_err());
    }

    #[test]
    fn literal_patterns_match_as_their_globs() {
        let names: &[&[u8]] = &[
            b"main.rs",
            b"MAIN.RS",
            b"main.Rs",
            b".rs",
            b"rs",
            b"a.rs.bak",
            b"a.rsx",
            b"",
            b"Makefile",
            b"makefile",
            b"xMakefile",
            "é.rs".as_bytes(),
            "É.RS".as_bytes(),
            "a.\u{17f}".as_bytes(),
            b"\xff.rs",
            b"a\n.rs",
            b"k",
            "\u{212a}".as_bytes(),
        ];
        for pattern in [
            "*.rs", "*.RS", "*", "Makefile", "makefile", "*file", "é.rs", "k", "*K",
        ] {
            let (glob, _) = compile(pattern).expect("glob");
            let smart = !pattern.chars().any(char::is_uppercase);
            let literal = Literal::of(pattern, smart).expect("a literal pattern");
            for name in names {
                let os = std::ffi::OsStr::from_bytes(name);
                assert_eq!(
                    literal.is_match(name),
                    glob.is_match(os),
                    "{pattern} on {:?}",
                    String::from_utf8_lossy(name)
                );
            }
        }
        for pattern in [
            "*.r?",
            "[ab].rs",
            "*.{rs,toml}",
            "a*b",
            "**",
            "\\*.rs",
            "src/*.rs",
        ] {
            assert!(Literal::of(pattern, true).is_none(), "{pattern}");
        }
    }
}
