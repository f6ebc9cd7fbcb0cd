//! grep_files: ripgrep's engine (grep-searcher + grep-regex over the `ignore` walker), set up
//! as `rg` is by default: gitignore and hidden files skipped, binary files (a NUL byte) left
//! after the first one is seen, `^`/`$` at line boundaries. Files are searched in parallel,
//! each opened through the jail; results are the first `max_results` in (path, line) order.

use std::io;
use std::os::fd::AsFd;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use ignore::WalkState;
use nix::fcntl::OFlag;
use nix::sys::stat::{fstat, Mode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Cli, Context, Doc, Hints, Tool, ToolName};
use crate::error::{Error, Result};
use crate::fs::jail::Kind;
use crate::fs::walk::{self, TopN};

pub const DEFAULT_MAX_RESULTS: u64 = 1000;
pub const MAX_RESULTS_BOUND: u64 = 1_000_000;
/// Matched lines longer than this many characters are shortened with a marker.
pub const MAX_LINE_CHARS: usize = 500;
pub const MAX_CONTEXT: u64 = 20;

/// Search file contents for a regular expression (Rust regex syntax, as ripgrep). Returns
/// matching lines with their path and 1-based line number, sorted by path then line. Like
/// ripgrep, skips hidden files, gitignored files and binary files.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression to search for, e.g. "fn main" or "TODO|FIXME".
    pub pattern: String,
    /// Directory or file to search in, relative to the workspace root. Default: ".".
    #[serde(default = "default_path")]
    pub path: String,
    /// Only search files whose name matches this glob, e.g. "*.py" (gitignore-style glob; a
    /// leading "!" excludes).
    #[serde(default)]
    pub file_pattern: Option<String>,
    /// Match without regard to case. Default: false.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Lines of context to return before and after each match. Default: 0.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub context: Option<u64>,
    /// Most matches to return. Default: 1000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000000))]
    pub max_results: Option<u64>,
}

fn default_path() -> String {
    ".".to_string()
}

#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord)]
pub struct Match {
    /// File path relative to the workspace root.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The matching line without its line ending (very long lines are shortened).
    pub text: String,
    /// Context lines before the match (with `context`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// Context lines after the match (with `context`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepResult {
    /// Matches sorted by path, then line.
    pub matches: Vec<Match>,
    /// True when more matches exist than `max_results`.
    pub truncated: bool,
}

pub struct GrepFiles;

impl Tool for GrepFiles {
    const NAME: ToolName = ToolName::GrepFiles;
    const TITLE: &'static str = "Search file contents";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
    };
    const CLI: Cli = Cli {
        positional: &["pattern", "path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        example: r#"{"pattern": "fn main", "path": "src", "file_pattern": "*.rs"}"#,
        pipeline:
            "sneaky-grep TODO | jq -r '.result.matches[] | \"\\(.path):\\(.line): \\(.text)\"'",
        config: &[],
        env: &[],
    };
    const SCHEMA: &'static str = committed_schema!("grep_files");
    type Args = GrepArgs;
    type Output = GrepResult;

    fn run(args: GrepArgs, ctx: &Context) -> Result<GrepResult> {
        let cap = super::bounded_max(args.max_results, DEFAULT_MAX_RESULTS, MAX_RESULTS_BOUND)?;
        let context = args.context.unwrap_or(0);
        if context > MAX_CONTEXT {
            return Err(Error::invalid_args(format!(
                "context: at most {MAX_CONTEXT} lines"
            )));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .multi_line(true)
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| Error::invalid_args(format!("pattern: {e}")))?;
        let rel = ctx.ws.relative(&args.path)?;
        let start = walk::start(&ctx.ws, &rel)?;
        let mut builder = walk::builder(&start, ".rgignore");
        if let Some(glob) = &args.file_pattern {
            let base = if start.kind == Kind::Dir {
                start.path.clone()
            } else {
                start
                    .path
                    .parent()
                    .map(|p| p.to_path_buf())
                    .unwrap_or_default()
            };
            let mut ob = OverrideBuilder::new(base);
            ob.add(glob)
                .map_err(|e| Error::invalid_args(format!("file_pattern: {e}")))?;
            let overrides = ob
                .build()
                .map_err(|e| Error::invalid_args(format!("file_pattern: {e}")))?;
            builder.overrides(overrides);
        }
        let found = TopN::new(cap as usize);
        let searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .before_context(context as usize)
            .after_context(context as usize)
            .build();
        builder.build_parallel().run(|| {
            let matcher = matcher.clone();
            let mut searcher = searcher.clone();
            let found = &found;
            let ws = &ctx.ws;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let Some(rel) = ws.strip_root(entry.path()) else {
                    return WalkState::Continue;
                };
                let hits = search_file(ws, rel, &matcher, &mut searcher, cap);
                if !hits.is_empty() {
                    found.extend(hits);
                }
                WalkState::Continue
            })
        });
        let (matches, truncated) = found.finish();
        Ok(GrepResult { matches, truncated })
    }
}

/// Search one file, opened through the jail; unreadable files are skipped as rg skips them.
fn search_file(
    ws: &crate::fs::jail::Workspace,
    rel: &std::path::Path,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    cap: u64,
) -> Vec<Match> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOCTTY | OFlag::O_NONBLOCK;
    let Ok(fd) = ws.open_at(ws.root_fd(), rel, flags, Mode::empty()) else {
        return Vec::new();
    };
    match fstat(fd.as_fd()) {
        Ok(st) if Kind::from_mode(st.st_mode) == Kind::File => {}
        _ => return Vec::new(),
    }
    let file = std::fs::File::from(fd);
    let path = rel.to_string_lossy();
    let mut sink = Collect {
        path: &path,
        cap,
        hits: Vec::new(),
        pending_before: Vec::new(),
    };
    let _ = searcher.search_file(matcher, &file, &mut sink);
    sink.hits
}

struct Collect<'a> {
    path: &'a str,
    cap: u64,
    hits: Vec<Match>,
    pending_before: Vec<String>,
}

/// A line's text without its line ending, shortened when very long.
fn line_text(bytes: &[u8]) -> String {
    let mut end = bytes.len();
    if end > 0 && bytes[end - 1] == b'\n' {
        end -= 1;
        if end > 0 && bytes[end - 1] == b'\r' {
            end -= 1;
        }
    }
    super::shorten(&String::from_utf8_lossy(&bytes[..end]), MAX_LINE_CHARS)
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(
        &mut self,
        _s: &Searcher,
        mat: &SinkMatch<'_>,
    ) -> std::result::Result<bool, io::Error> {
        self.hits.push(Match {
            path: self.path.to_string(),
            line: mat.line_number().unwrap_or(0),
            text: line_text(mat.bytes()),
            before: std::mem::take(&mut self.pending_before),
            after: Vec::new(),
        });
        // Later lines of this file sort after these: no need to read further once over the cap.
        Ok((self.hits.len() as u64) <= self.cap)
    }

    fn context(
        &mut self,
        _s: &Searcher,
        ctx: &SinkContext<'_>,
    ) -> std::result::Result<bool, io::Error> {
        let text = line_text(ctx.bytes());
        match ctx.kind() {
            SinkContextKind::After => {
                if let Some(last) = self.hits.last_mut() {
                    last.after.push(text);
                }
            }
            SinkContextKind::Before | SinkContextKind::Other => self.pending_before.push(text),
        }
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> std::result::Result<bool, io::Error> {
        self.pending_before.clear();
        Ok(true)
    }
}
