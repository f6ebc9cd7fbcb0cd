//! grep_files: ripgrep's engine (grep-searcher + grep-regex) over the shared walk, set up as
//! `rg` is by default: gitignore and hidden files skipped, binary files (a NUL byte) left
//! after the first one is seen, `^`/`$` at line boundaries. Files are searched in parallel,
//! each opened through its directory's handle.
//!
//! What is found goes to a `GrepSink` one file at a time, as soon as the file is searched:
//! the JSON result keeps the first `max_results` (after `offset`) in (path, line) order in
//! compact per-file storage; a streaming output (text) can print each file as it comes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{
    committed_schema, Calls, Cli, Context, Doc, Hints, Short, StreamText, TextExample,
    TextStreamed, Tool, ToolName,
};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::found::{self, Batch, PathList, PathSink};
use crate::fs::jail::Kind;
use crate::fs::walk::{self, Filters, Flow, TopN};
use crate::render::human::{self, Text};
use crate::render::model;
use crate::render::stream::{Piece, TextStream};

pub const DEFAULT_MAX_RESULTS: u64 = 1000;
pub const MAX_RESULTS_BOUND: u64 = 1_000_000;
/// Matched lines longer than this many characters are shortened with a marker.
pub const MAX_LINE_CHARS: usize = 500;
pub const MAX_CONTEXT: u64 = 20;

/// Search file contents for a regular expression (Rust regex syntax, as ripgrep). Returns
/// matching lines with their path and 1-based line number, sorted by path then line (or, with
/// output_mode, the files that match or a count per file). Like ripgrep, skips hidden files,
/// gitignored files and binary files.
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
    /// More globs like file_pattern (rg's -g), e.g. ["*.rs", "!tests/**"]; a glob with "/"
    /// matches the path from the workspace root.
    #[serde(default)]
    pub glob: Vec<String>,
    /// Only search files of these types (rg's -t), e.g. ["rust", "py"].
    #[serde(default, rename = "type")]
    pub file_type: Vec<String>,
    /// Do not search files of these types (rg's -T).
    #[serde(default)]
    pub type_not: Vec<String>,
    /// Match without regard to case. Default: false.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Treat the pattern as a literal string, not a regular expression. Default: false.
    #[serde(default)]
    pub fixed_strings: bool,
    /// Only match whole words. Default: false.
    #[serde(default)]
    pub word_regexp: bool,
    /// "content" (matching lines, the default), "files_with_matches" (the paths of files that
    /// match) or "count" (matching lines per file).
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Lines of context to return before and after each match. Default: 0.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub context: Option<u64>,
    /// Lines of context before each match (overrides context).
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub before_context: Option<u64>,
    /// Lines of context after each match (overrides context).
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub after_context: Option<u64>,
    /// Search hidden files and directories too. Default: false.
    #[serde(default)]
    pub hidden: bool,
    /// Do not skip what .gitignore, .ignore and .rgignore files exclude. Default: false.
    #[serde(default)]
    pub no_ignore: bool,
    /// Most results (matches, files or counts) to return. Default: 1000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000000))]
    pub max_results: Option<u64>,
    /// Results to skip, for the next page after a truncated one (see next_offset). Default: 0.
    #[serde(default)]
    pub offset: Option<u64>,
}

fn default_path() -> String {
    ".".to_string()
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum OutputMode {
    #[default]
    Content,
    FilesWithMatches,
    Count,
}

/// One match as the JSON result shows it (the schema of `matches`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Match {
    /// File path relative to the workspace root.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The matching line without its line ending (very long lines are shortened).
    pub text: String,
    /// Context lines before the match (with `context`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// Context lines after the match (with `context`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct GrepResult {
    /// Matches sorted by path, then line (output_mode "content").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Match>>")]
    pub matches: Option<MatchPage>,
    /// Sorted paths of the files that match (output_mode "files_with_matches").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub files: Option<PathList>,
    /// Matching lines per file, by path (output_mode "count").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<BTreeMap<String, u64>>")]
    pub counts: Option<Counts>,
    /// True when more results exist than were returned.
    pub truncated: bool,
    /// With truncated: the offset that asks for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
}

/// The lines the model's text shows of one file: line number → (is a match, text).
type FileLines<'a> = BTreeMap<u64, (bool, &'a str)>;

/// What a line of a file's result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Match,
    /// Context before a match.
    Before,
    /// Context after a match.
    After,
    /// A gap between groups of context (rg prints "--").
    Break,
}

mod store;
pub use store::MatchPage;

#[derive(Debug, Clone, Copy)]
struct LineRec {
    number: u64,
    /// End of the line's text in `FileMatches::text`; it starts where the previous one ended.
    end: u32,
    kind: LineKind,
}

/// One file's matching (and context) lines, compactly: one path, one text buffer, a small
/// record per line.
#[derive(Debug)]
pub struct FileMatches {
    pub path: String,
    lines: Vec<LineRec>,
    text: String,
    /// Number of matching lines held.
    pub matched: u64,
}

impl FileMatches {
    fn new(path: &str) -> FileMatches {
        FileMatches {
            path: path.to_string(),
            lines: Vec::new(),
            text: String::new(),
            matched: 0,
        }
    }

    fn push(&mut self, number: u64, kind: LineKind, bytes: &[u8]) {
        push_line_text(&mut self.text, bytes);
        let end = u32::try_from(self.text.len()).unwrap_or(u32::MAX);
        self.lines.push(LineRec { number, end, kind });
        if kind == LineKind::Match {
            self.matched += 1;
        }
    }

    /// Matches with their context as the JSON result groups them.
    pub fn grouped(&self) -> Vec<store::MatchView<'_>> {
        store::grouped(self.lines())
    }

    /// Every line in file order: (line number, kind, text without its line ending).
    pub fn lines(&self) -> impl Iterator<Item = (u64, LineKind, &str)> + '_ {
        let mut start = 0usize;
        self.lines.iter().map(move |rec| {
            let end = rec.end as usize;
            let text = self.text.get(start..end).unwrap_or("");
            start = end;
            (rec.number, rec.kind, text)
        })
    }
}

/// A line's text without its line ending, shortened when very long, appended to `out`.
fn push_line_text(out: &mut String, bytes: &[u8]) {
    let mut end = bytes.len();
    if end > 0 && bytes[end - 1] == b'\n' {
        end -= 1;
        if end > 0 && bytes[end - 1] == b'\r' {
            end -= 1;
        }
    }
    let text = String::from_utf8_lossy(&bytes[..end]);
    // No more characters than bytes (a replacement character stands for at least one): a
    // line this short is not counted.
    if end <= MAX_LINE_CHARS {
        out.push_str(&text);
        return;
    }
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(&text),
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            out.push_str(&format!("… [{} more bytes]", text.len() - cut));
        }
    }
}

/// Counts per file in path order, serialized as a JSON object.
#[derive(Debug)]
pub struct Counts(pub Vec<(String, u64)>);

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (path, n) in &self.0 {
            map.serialize_entry(path, n)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Counts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Counts, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Counts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of counts by path")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut map: M,
            ) -> std::result::Result<Counts, M::Error> {
                let mut counts = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    counts.push(entry);
                }
                Ok(Counts(counts))
            }
        }
        d.deserialize_map(InOrder)
    }
}

/// What one searched file yielded.
pub enum Found {
    /// Output mode "content": its matching and context lines.
    Lines(FileMatches),
    /// Output mode "count": its number of matching lines.
    Count(String, u64),
    /// Output mode "files_with_matches": it matches.
    File(String),
}

/// Where a search hands its results, one file at a time, from the search threads as each file
/// is done (so in no global order). The JSON result collects them sorted; a streaming output
/// (e.g. `--format text`) can write each one at once and keep nothing:
///
/// ```no_run
/// # use std::io::Write;
/// # use sneaky::tools::grep::{Found, GrepSink, LineKind};
/// struct Text(std::sync::Mutex<std::io::BufWriter<std::io::Stdout>>);
/// impl GrepSink for Text {
///     fn found(&self, found: Found) -> bool {
///         let Ok(mut out) = self.0.lock() else { return false };
///         let written = match &found {
///             Found::Lines(file) => file.lines().try_for_each(|(n, kind, text)| match kind {
///                 LineKind::Match => writeln!(out, "{}:{n}:{text}", file.path),
///                 LineKind::Before | LineKind::After => writeln!(out, "{}-{n}-{text}", file.path),
///                 LineKind::Break => writeln!(out, "--"),
///             }),
///             Found::Count(path, n) => writeln!(out, "{path}:{n}"),
///             Found::File(path) => writeln!(out, "{path}"),
///         };
///         written.is_ok() // a closed pipe stops the search
///     }
/// }
/// // grep::search(&args, &ctx, &Text(Mutex::new(BufWriter::new(std::io::stdout()))))?;
/// ```
pub trait GrepSink: Sync {
    /// One file's results (only files that match). Return false to stop the search.
    fn found(&self, found: Found) -> bool;
    /// Whether a file at `path` could still change the result: a sorted, capped collection
    /// that already knows it is truncated says no for paths after all it keeps.
    fn wants(&self, _path: &str) -> bool {
        true
    }
    /// Most matching lines one file needs to report (content mode).
    fn per_file_limit(&self) -> Option<u64> {
        None
    }
    /// Where the paths of matching files (output mode "files_with_matches") go instead of
    /// `found`, when the sink gathers them so: a walking thread's paths in batches, sorted
    /// there (see `crate::fs::found`).
    fn file_paths(&self) -> Option<&dyn PathSink> {
        None
    }
}

/// The validated search: the matcher, the searcher, the walk.
struct Plan {
    matcher: RegexMatcher,
    searcher: SearcherBuilder,
    mode: OutputMode,
    filters: Filters,
}

fn plan(args: &GrepArgs) -> Result<Plan> {
    let context = |given: Option<u64>, what: &str| -> Result<usize> {
        let n = given.or(args.context).unwrap_or(0);
        if n > MAX_CONTEXT {
            return Err(Error::invalid_args(format!(
                "{what}: at most {MAX_CONTEXT} lines"
            )));
        }
        Ok(n as usize)
    };
    let (before, after) = (
        context(args.before_context, "before_context")?,
        context(args.after_context, "after_context")?,
    );
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.case_insensitive)
        .fixed_strings(args.fixed_strings)
        .word(args.word_regexp)
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| Error::invalid_args(format!("pattern: {e}")))?;
    let content = args.output_mode == OutputMode::Content;
    let mut searcher = SearcherBuilder::new();
    // Line numbers are shown in content mode only; elsewhere counting them up to each match
    // is work for nothing (a tenth of `-l`'s instructions over 10,000 small files).
    searcher
        .line_number(content)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(if content { before } else { 0 })
        .after_context(if content { after } else { 0 });
    let mut filters = Filters::standard(".rgignore");
    filters.hidden = args.hidden;
    filters.ignore_files = !args.no_ignore;
    let mut globs: Vec<(&str, &str)> = args.glob.iter().map(|g| ("glob", g.as_str())).collect();
    if let Some(g) = &args.file_pattern {
        globs.insert(0, ("file_pattern", g.as_str()));
    }
    filters.overrides = overrides(&globs)?;
    filters.types = types(&args.file_type, &args.type_not)?;
    Ok(Plan {
        matcher,
        searcher,
        mode: args.output_mode,
        filters,
    })
}

/// rg's `-g` globs, matched against root-relative paths (a glob without "/" against names).
pub fn overrides(globs: &[(&str, &str)]) -> Result<Override> {
    if globs.is_empty() {
        return Ok(Override::empty());
    }
    let mut ob = OverrideBuilder::new("");
    for (what, glob) in globs {
        ob.add(glob)
            .map_err(|e| Error::invalid_args(format!("{what}: {e}")))?;
    }
    ob.build()
        .map_err(|e| Error::invalid_args(format!("glob: {e}")))
}

/// rg's file types (`rg --type-list`).
fn types(select: &[String], negate: &[String]) -> Result<Types> {
    if select.is_empty() && negate.is_empty() {
        return Ok(Types::empty());
    }
    let mut tb = TypesBuilder::new();
    tb.add_defaults();
    let known: Vec<String> = tb
        .definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    for (what, names) in [("type", select), ("type_not", negate)] {
        for name in names {
            if !known.iter().any(|k| k == name) {
                return Err(Error::invalid_args(format!(
                    "{what}: unknown file type {name:?} (rg --type-list shows them; e.g. rust, py, js, md)"
                )));
            }
            if what == "type" {
                tb.select(name);
            } else {
                tb.negate(name);
            }
        }
    }
    tb.build()
        .map_err(|e| Error::invalid_args(format!("type: {e}")))
}

/// Run a search, handing each matching file's results to `sink` as soon as it is searched.
pub fn search(args: &GrepArgs, ctx: &Context, sink: &dyn GrepSink) -> Result<()> {
    let plan = plan(args)?;
    let rel = ctx.ws.relative(&args.path)?;
    let start = ctx.ws.walk_start(&rel)?;
    let opts = walk::Options {
        filters: Some(plan.filters),
        max_depth: None,
        threads: walk::threads(),
        files_per_job: walk::FILES_PER_JOB,
    };
    let (matcher, searcher, mode) = (&plan.matcher, &plan.searcher, plan.mode);
    let limit = sink.per_file_limit();
    walk::walk(&ctx.ws, start, &opts, || {
        let mut searcher = searcher.build();
        let mut buf = Vec::new();
        let mut paths = sink.file_paths().map(Batch::new);
        let mut checked = 0;
        move |entry: &walk::Entry<'_>| {
            if !matches!(entry.kind, Kind::File) {
                return Flow::Continue;
            }
            if !sink.wants(entry.path) {
                return Flow::Continue;
            }
            // A thread's first files are looked at as they are opened: a call that searches
            // a few never reads the read-deny list's files to know it need not.
            let opened = if checked < CHECKED_OPENS {
                checked += 1;
                entry
                    .open_file_sized()
                    .map(|(file, size)| (file, Some(size)))
            } else {
                entry.open_file_lean()
            };
            let Some((file, size)) = opened else {
                return Flow::Continue;
            };
            let searched = search_file(
                entry.path,
                file,
                size,
                &mut buf,
                (matcher, &mut searcher),
                mode,
                limit,
            );
            let go_on = match (searched, &mut paths) {
                (None, _) => true,
                (Some(Searched::File), Some(paths)) => paths.push(entry, false),
                (Some(searched), _) => sink.found(searched.found(entry.path)),
            };
            if go_on {
                Flow::Continue
            } else {
                Flow::Quit
            }
        }
    });
    Ok(())
}

/// Files up to this size are read whole into the thread's buffer and searched there.
const WHOLE_FILE_MAX: usize = 256 * 1024;

/// What each thread opens with its status first (see `walk::Entry::open_file_lean`).
const CHECKED_OPENS: usize = 64;

/// The first read of a file opened without its size.
const UNSIZED_READ: usize = 64 * 1024;

/// What reading a file whole gave.
enum Whole {
    /// The file: `buf[..len]`.
    Read(usize),
    /// It is larger than `WHOLE_FILE_MAX`: `buf[..len]` was read of it, the rest is to come.
    Larger(usize),
}

/// Read a regular file of `size` bytes (its size when it was opened) into `buf`: one `read`
/// when the size holds. A read that returns fewer bytes than asked and brings the total to
/// the size is the end (a regular file's read is short only there); any other short read
/// reads on, until a read returns nothing, so a file that grew or shrank meanwhile is read as
/// it is now.
///
/// Without the size, one read of [`UNSIZED_READ`] bytes: short, it was the whole file; full,
/// the file's status says whether it is a regular file (else it is not read on: a FIFO or
/// device swapped in since the listing gives no more) and its size, and it is read on as
/// above.
fn read_whole(file: &mut std::fs::File, size: Option<u64>, buf: &mut Vec<u8>) -> io::Result<Whole> {
    let (size, mut len) = match size {
        Some(size) => (size, 0),
        None => {
            if buf.len() < UNSIZED_READ {
                buf.resize(UNSIZED_READ, 0);
            }
            let len = read_some(file, &mut buf[..UNSIZED_READ])?;
            if len < UNSIZED_READ {
                return Ok(Whole::Read(len));
            }
            let size = walk::regular_size(file).ok_or(io::ErrorKind::InvalidInput)?;
            (size, len)
        }
    };
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    if size >= WHOLE_FILE_MAX {
        return Ok(Whole::Larger(len));
    }
    if len > 0 && len == size {
        return Ok(Whole::Read(len));
    }
    let mut want = size.max(len) + 1;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    loop {
        let n = read_some(file, &mut buf[len..want])?;
        if n == 0 {
            return Ok(Whole::Read(len));
        }
        len += n;
        if len == size {
            return Ok(Whole::Read(len));
        }
        if len == want {
            // It grew since it was opened.
            if want >= WHOLE_FILE_MAX {
                return Ok(Whole::Larger(len));
            }
            want = (want * 2).min(WHOLE_FILE_MAX);
            if buf.len() < want {
                buf.resize(want, 0);
            }
        }
    }
}

/// One `read` (again when interrupted): rustix's system call rather than libc's wrapper (made
/// for every file searched).
fn read_some(file: &std::fs::File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match rustix::io::read(file, &mut *buf) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// What one searched file yielded, before it is told where it is (`Found` with its path).
enum Searched {
    Lines(FileMatches),
    Count(u64),
    File,
}

impl Searched {
    fn found(self, path: &str) -> Found {
        match self {
            Searched::Lines(lines) => Found::Lines(lines),
            Searched::Count(n) => Found::Count(path.to_string(), n),
            Searched::File => Found::File(path.to_string()),
        }
    }
}

/// Search one open file of `size` bytes; None when nothing matches (unreadable files are
/// skipped as rg does).
///
/// A file that fits the buffer is read whole in one `read` (rg reads each file three times:
/// the byte order mark, the rest, the end) and searched as a slice when that finds exactly
/// what the searcher's reader finds: when it holds no NUL (the reader and the slice search
/// stop at one in different places; a slice with a byte order mark goes through the reader
/// anyway). Otherwise the bytes read go through the reader, followed by the rest of the file.
fn search_file(
    path: &str,
    mut file: std::fs::File,
    size: Option<u64>,
    buf: &mut Vec<u8>,
    (matcher, searcher): (&RegexMatcher, &mut Searcher),
    mode: OutputMode,
    limit: Option<u64>,
) -> Option<Searched> {
    let mut sink = Collect {
        mode,
        limit: limit.unwrap_or(u64::MAX),
        file: None,
        path,
        count: 0,
    };
    let _ = match read_whole(&mut file, size, buf) {
        Err(_) => return None,
        Ok(Whole::Read(len)) => {
            let bytes = &buf[..len];
            if memchr::memchr(0, bytes).is_none() {
                // Known to hold no NUL: the searcher need not look for one again.
                searcher.set_binary_detection(BinaryDetection::none());
                searcher.search_slice(matcher, bytes, &mut sink)
            } else {
                searcher.set_binary_detection(BinaryDetection::quit(0));
                searcher.search_reader(matcher, bytes, &mut sink)
            }
        }
        Ok(Whole::Larger(len)) => {
            searcher.set_binary_detection(BinaryDetection::quit(0));
            searcher.search_reader(matcher, io::Read::chain(&buf[..len], &file), &mut sink)
        }
    };
    if sink.count == 0 {
        return None;
    }
    Some(match (mode, sink.file) {
        (OutputMode::Content, Some(file)) => Searched::Lines(file),
        (OutputMode::Count, _) => Searched::Count(sink.count),
        _ => Searched::File,
    })
}

struct Collect<'a> {
    mode: OutputMode,
    limit: u64,
    /// Made at the first match: most files searched match nothing and cost no allocation.
    file: Option<FileMatches>,
    path: &'a str,
    count: u64,
}

impl Collect<'_> {
    fn lines(&mut self) -> &mut FileMatches {
        self.file.get_or_insert_with(|| FileMatches::new(self.path))
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(
        &mut self,
        _s: &Searcher,
        mat: &SinkMatch<'_>,
    ) -> std::result::Result<bool, io::Error> {
        self.count += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                let number = mat.line_number().unwrap_or(0);
                self.lines().push(number, LineKind::Match, mat.bytes());
                Ok(self.count < self.limit)
            }
        }
    }

    fn context(
        &mut self,
        _s: &Searcher,
        ctx: &SinkContext<'_>,
    ) -> std::result::Result<bool, io::Error> {
        // Context is asked for in content mode only; it may come before the first match.
        let kind = match ctx.kind() {
            SinkContextKind::After => LineKind::After,
            SinkContextKind::Before | SinkContextKind::Other => LineKind::Before,
        };
        let number = ctx.line_number().unwrap_or(0);
        self.lines().push(number, kind, ctx.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> std::result::Result<bool, io::Error> {
        self.lines().push(0, LineKind::Break, b"");
        Ok(true)
    }
}

/// The JSON result's sink: keeps the first `cap` results in path order, whole files at a time
/// (compact storage), counting everything seen.
struct Sorted {
    cap: u64,
    files: Mutex<SortedFiles>,
    names: found::Sorted,
    counts: TopN<(String, u64)>,
    /// More results exist than `cap`: later paths no longer matter once past the bar.
    over: AtomicBool,
}

#[derive(Default)]
struct SortedFiles {
    arena: store::Arena,
}

impl Sorted {
    fn new(cap: u64) -> Sorted {
        let n = usize::try_from(cap).unwrap_or(usize::MAX);
        Sorted {
            cap,
            files: Mutex::new(SortedFiles::default()),
            names: found::Sorted::new(n),
            counts: TopN::new(n),
            over: AtomicBool::new(false),
        }
    }

    fn last_kept(&self) -> Option<String> {
        if let Some(bar) = self.files.lock().ok()?.arena.bar.clone() {
            return Some(bar);
        }
        self.names
            .bar()
            .or_else(|| self.counts.bar().map(|(path, _)| path))
    }
}

impl GrepSink for Sorted {
    fn found(&self, found: Found) -> bool {
        match found {
            Found::Lines(file) => {
                let Ok(mut files) = self.files.lock() else {
                    return false;
                };
                files.arena.add(&file, self.cap);
                if files.arena.total > self.cap && !self.over.load(Ordering::Relaxed) {
                    // From now on only paths before the last one kept matter.
                    files.arena.prune(self.cap);
                    self.over.store(true, Ordering::Relaxed);
                }
            }
            Found::File(path) => {
                let mut paths = found::Paths::default();
                paths.push(&path, false);
                return self.names.found(paths);
            }
            Found::Count(path, n) => {
                self.counts.extend([(path, n)]);
                if self.counts.seen() > self.cap {
                    self.over.store(true, Ordering::Relaxed);
                }
            }
        }
        true
    }

    fn wants(&self, path: &str) -> bool {
        if !self.over.load(Ordering::Relaxed) && !self.names.barred() {
            return true;
        }
        self.last_kept().map_or(true, |bar| path < bar.as_str())
    }

    fn per_file_limit(&self) -> Option<u64> {
        // Later lines of a file sort after its earlier ones: one more than the cap tells
        // that there are more.
        Some(self.cap.saturating_add(1))
    }

    fn file_paths(&self) -> Option<&dyn PathSink> {
        Some(&self.names)
    }
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
        walks: true,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["pattern", "path"],
        stdin_param: None,
    };
    const SHORT: &'static [Short] = &[
        ('i', "case_insensitive", None),
        ('F', "fixed_strings", None),
        ('w', "word_regexp", None),
        ('l', "output_mode", Some("files_with_matches")),
        ('c', "output_mode", Some("count")),
        ('g', "glob", None),
        ('t', "type", None),
        ('T', "type_not", None),
        ('A', "after_context", None),
        ('B', "before_context", None),
        ('C', "context", None),
    ];
    const DOC: Doc = Doc {
        summary: "regex search like `rg`, with rg's options and short flags (below)",
        example: r#"{"pattern": "fn main", "path": "src", "file_pattern": "*.rs"}"#,
        pipeline:
            "sneaky-grep TODO | jq -r '.result.matches[] | \"\\(.path):\\(.line): \\(.text)\"'",
        config: &[],
        env: &[],
        text: TextExample::prints(
            &[("src/lib.rs", "fn one() {}\nfn two() {}\n")],
            &["fn t"],
            "",
            "src/lib.rs:2:fn two() {}\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"pattern": "fn t"}"#,
            fails: r#"{"pattern": "fn ("}"#,
            fails_with: ErrorKind::InvalidArgs,
        },
    };
    const SCHEMA: &'static str = committed_schema!("grep_files");
    const PATH_PARAMS: &'static [&'static str] = &["path"];
    type Args = GrepArgs;
    type Output = GrepResult;

    const STREAM_TEXT: Option<StreamText<GrepArgs>> = Some(stream_text);

    fn run(args: GrepArgs, ctx: &Context) -> Result<GrepResult> {
        let limit = super::bounded_max(args.max_results, DEFAULT_MAX_RESULTS, MAX_RESULTS_BOUND)?;
        let offset = args.offset.unwrap_or(0);
        let sink = Sorted::new(offset.saturating_add(limit));
        search(&args, ctx, &sink)?;
        let page = |total: u64, kept: u64| {
            let returned = kept.saturating_sub(offset).min(limit);
            let truncated = total > offset.saturating_add(returned);
            (truncated, truncated.then_some(offset + returned))
        };
        let mut result = GrepResult {
            matches: None,
            files: None,
            counts: None,
            truncated: false,
            next_offset: None,
        };
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        match args.output_mode {
            OutputMode::Content => {
                let files = sink.files.into_inner().unwrap_or_else(|p| p.into_inner());
                let total = files.arena.total;
                let page_of = MatchPage::new(files.arena, offset, limit);
                (result.truncated, result.next_offset) = page(total, page_of.held());
                result.matches = Some(page_of);
            }
            OutputMode::FilesWithMatches => {
                let (names, total) = sink.names.finish(skip);
                // `finish` leaves out the first `offset` kept (none are left when fewer were).
                let kept = offset.saturating_add(names.len() as u64);
                (result.truncated, result.next_offset) = page(total, kept);
                result.files = Some(names);
            }
            OutputMode::Count => {
                let (counts, total) = sink.counts.finish();
                (result.truncated, result.next_offset) = page(total, counts.len() as u64);
                result.counts = Some(Counts(counts.into_iter().skip(skip).collect()));
            }
        }
        Ok(result)
    }

    /// `rg --heading -n`: each file's path, then its lines as `n:text` (matches) and `n-text`
    /// (context), `--` between runs of lines that do not touch, a blank line between files.
    /// Results in another output mode (`files`, `counts`) are listed as rg lists them.
    fn model_text(r: &GrepResult) -> String {
        let (truncated, next) = (r.truncated, r.next_offset);
        if let Some(counts) = &r.counts {
            let lines: Vec<String> = counts.0.iter().map(|(p, n)| format!("{p}:{n}")).collect();
            return model::path_lines(&lines, truncated, next, "search", "no matches");
        }
        if let Some(files) = &r.files {
            return model::path_lines(&files.to_vec(), truncated, next, "search", "no matches");
        }
        let matches = r.matches.as_ref().map(MatchPage::views).unwrap_or_default();
        if matches.is_empty() {
            return "no matches".to_string();
        }
        // Per file (in result order): line number → (is a match, text); a match wins over the
        // same line seen as another match's context.
        let mut files: Vec<(&str, FileLines)> = Vec::new();
        for (path, m) in &matches {
            if files.last().map(|(p, _)| *p) != Some(*path) {
                files.push((path, BTreeMap::new()));
            }
            let Some((_, lines)) = files.last_mut() else {
                continue;
            };
            for (i, t) in m.before.iter().enumerate() {
                let n = m.line.saturating_sub((m.before.len() - i) as u64);
                lines.entry(n).or_insert((false, t));
            }
            lines.insert(m.line, (true, m.text));
            for (i, t) in m.after.iter().enumerate() {
                lines.entry(m.line + 1 + i as u64).or_insert((false, t));
            }
        }
        // Without context, rg puts no `--` between distant matches; with it, between runs.
        let with_context = matches
            .iter()
            .any(|(_, m)| !m.before.is_empty() || !m.after.is_empty());
        let mut out = String::new();
        for (i, (path, lines)) in files.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(path);
            out.push('\n');
            let mut previous: Option<u64> = None;
            for (n, (is_match, t)) in lines {
                if with_context && previous.is_some_and(|p| p + 1 < *n) {
                    out.push_str("--\n");
                }
                let separator = if *is_match { ':' } else { '-' };
                let _ = writeln!(out, "{n}{separator}{t}");
                previous = Some(*n);
            }
        }
        let mut out = out.trim_end_matches('\n').to_string();
        out.push_str(&model::cut_note(
            truncated,
            next,
            matches.len(),
            "pattern or path (counting matches)",
        ));
        out
    }

    /// rg's forms: `path:line:text` for matches, `path-line-text` for context lines, `--`
    /// between groups that do not touch; `path` alone (files_with_matches) and `path:n`
    /// (count).
    fn human_text(r: &GrepResult, binary: &str) -> Text {
        let mut text = Text::default();
        let cut = (r.truncated, r.next_offset);
        if let Some(counts) = &r.counts {
            for (path, n) in &counts.0 {
                let _ = writeln!(text.stdout, "{path}:{n}");
            }
            human::cut_note(&mut text, binary, cut, counts.0.len(), "files");
            return text;
        }
        if let Some(files) = &r.files {
            human::lines(&mut text.stdout, &files.to_vec());
            human::cut_note(&mut text, binary, cut, files.len(), "files");
            return text;
        }
        let matches = r.matches.as_ref().map(MatchPage::views).unwrap_or_default();
        let out = &mut text.stdout;
        let with_context = matches
            .iter()
            .any(|(_, m)| !m.before.is_empty() || !m.after.is_empty());
        // The last line printed: (path, line number), so overlapping context is printed once.
        let mut last: Option<(&str, u64)> = None;
        for (path, m) in &matches {
            let first = m.line.saturating_sub(m.before.len() as u64);
            if with_context {
                if let Some((last_path, last_line)) = last {
                    if last_path != *path || last_line + 1 < first {
                        out.push_str("--\n");
                    }
                }
            }
            let mut emit = |n: u64, sep: char, line: &str| {
                if last.is_some_and(|(p, l)| p == *path && n <= l) {
                    return;
                }
                let _ = writeln!(out, "{path}{sep}{n}{sep}{line}");
                last = Some((path, n));
            };
            for (i, line) in m.before.iter().enumerate() {
                emit(first + i as u64, '-', line);
            }
            emit(m.line, ':', m.text);
            for (i, line) in m.after.iter().enumerate() {
                emit(m.line + 1 + i as u64, '-', line);
            }
        }
        human::cut_note(&mut text, binary, cut, matches.len(), "matches");
        text
    }

    const TEXT_FORMAT: &'static str =
        "rg's lines: path:line:text for a match, path-line-text for a context line, -- \
         between groups; one path a line for files_with_matches, path:count for count. \
         They are written as each file is searched, so files come in the order they were \
         searched, as rg's do, and --max-results has no upper bound (with --offset, even 0, \
         the sorted page is printed instead)";
}

/// `--format text` without `offset`: each searched file's lines are written as soon as the file
/// is done, in the order files finish (rg's with threads), and nothing is kept, so memory stays
/// flat whatever the number of matches. `max_results` caps what is written (the first results
/// to come, exactly known to be cut or not) and has no upper bound here, since nothing is held.
/// With `offset` the sorted page is printed instead (pages need the stable order), as JSON
/// mode returns it.
fn stream_text(
    args: &GrepArgs,
    ctx: &Context,
    out: &mut (dyn io::Write + Send),
) -> Option<Result<TextStreamed>> {
    args.offset
        .is_none()
        .then(|| stream_text_run(args, ctx, out))
}

fn stream_text_run(
    args: &GrepArgs,
    ctx: &Context,
    out: &mut (dyn io::Write + Send),
) -> Result<TextStreamed> {
    let cap = super::bounded_max(args.max_results, DEFAULT_MAX_RESULTS, u64::MAX)?;
    let context = [args.before_context, args.after_context]
        .iter()
        .any(|given| given.or(args.context).unwrap_or(0) > 0);
    let mut stream = TextStream::new(out, cap);
    if context && args.output_mode == OutputMode::Content {
        // rg's "--" between the groups of different files.
        stream = stream.with_separator(b"--\n");
    }
    let sink = TextSink { stream, cap };
    search(args, ctx, &sink)?;
    Ok(TextStreamed {
        end: sink.stream.finish(),
        unit: match args.output_mode {
            OutputMode::Content => "matches",
            OutputMode::FilesWithMatches | OutputMode::Count => "files",
        },
    })
}

/// The streaming text sink: each file's results in rg's forms, written at once.
struct TextSink<'a> {
    stream: TextStream<'a>,
    cap: u64,
}

impl GrepSink for TextSink<'_> {
    fn found(&self, found: Found) -> bool {
        self.stream.write(&text_piece(&found))
    }

    fn wants(&self, _path: &str) -> bool {
        !self.stream.stopped()
    }

    fn per_file_limit(&self) -> Option<u64> {
        // One more than the cap tells that there are more.
        Some(self.cap.saturating_add(1))
    }
}

/// One file's results in rg's forms: `path:line:text` for a match, `path-line-text` for a
/// context line, `--` between groups; `path` (files_with_matches); `path:n` (count). A match's
/// result ends after its context lines, so a cut never leaves a match without them.
fn text_piece(found: &Found) -> Piece {
    use std::io::Write as _;
    let mut piece = Piece::default();
    let out = &mut piece.text;
    match found {
        Found::Lines(file) => {
            let mut open_match = false;
            for (n, kind, text) in file.lines() {
                if open_match && kind != LineKind::After {
                    piece.ends.push(out.len());
                    open_match = false;
                }
                let path = &file.path;
                let _ = match kind {
                    LineKind::Match => writeln!(out, "{path}:{n}:{text}"),
                    LineKind::Before | LineKind::After => writeln!(out, "{path}-{n}-{text}"),
                    LineKind::Break => out.write_all(b"--\n"),
                };
                open_match |= kind == LineKind::Match;
            }
            if open_match {
                piece.ends.push(out.len());
            }
        }
        Found::Count(path, n) => {
            let _ = writeln!(out, "{path}:{n}");
            piece.end_result();
        }
        Found::File(path) => {
            let _ = writeln!(out, "{path}");
            piece.end_result();
        }
    }
    piece
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(file: &mut std::fs::File, size: Option<u64>) -> (String, Vec<u8>) {
        let mut buf = Vec::new();
        match read_whole(file, size, &mut buf) {
            Ok(Whole::Read(len)) => ("read".into(), buf[..len].to_vec()),
            Ok(Whole::Larger(len)) => ("larger".into(), buf[..len].to_vec()),
            Err(e) => (format!("error {}", e.kind()), Vec::new()),
        }
    }

    /// Read with its size or without: the same bytes, whatever the size against the first
    /// read and the largest file read whole.
    #[test]
    fn files_read_whole_with_or_without_their_size() {
        let tmp = tempfile::tempdir().expect("tmp");
        for len in [
            0,
            1,
            UNSIZED_READ - 1,
            UNSIZED_READ,
            UNSIZED_READ + 1,
            WHOLE_FILE_MAX - 1,
            WHOLE_FILE_MAX,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let path = tmp.path().join(format!("f{len}"));
            std::fs::write(&path, &bytes).expect("write");
            for size in [Some(len as u64), None] {
                let mut file = std::fs::File::open(&path).expect("open");
                let (how, read) = whole(&mut file, size);
                if len >= WHOLE_FILE_MAX {
                    // The rest is read by the searcher from the file.
                    assert_eq!(how, "larger", "{len} {size:?}");
                    assert!(bytes.starts_with(&read), "{len} {size:?}");
                } else {
                    assert_eq!((how.as_str(), read.len()), ("read", len), "{size:?}");
                    assert!(read == bytes, "{len} {size:?}");
                }
            }
        }
    }

    /// Opened without a look at its status, a file may be anything swapped in since the
    /// listing: a pipe that fills the first read is not read on.
    #[test]
    fn a_full_first_read_of_a_pipe_stops_there() {
        // Not blocking, as the walk opens files: a read on is an error, not a wait.
        let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK).expect("pipe");
        let mut w = std::fs::File::from(w);
        io::Write::write_all(&mut w, &vec![b'x'; UNSIZED_READ]).expect("fill");
        let mut r = std::fs::File::from(r);
        let (how, _) = whole(&mut r, None);
        assert_eq!(how, format!("error {}", io::ErrorKind::InvalidInput));
        // A short one is read as a whole file: what the pipe held.
        io::Write::write_all(&mut w, b"abc").expect("write");
        assert_eq!(whole(&mut r, None), ("read".into(), b"abc".to_vec()));
    }

    fn line_text(bytes: &[u8]) -> String {
        let mut out = String::new();
        push_line_text(&mut out, bytes);
        out
    }

    /// Lines of up to `MAX_LINE_CHARS` bytes are kept whole without counting their
    /// characters; longer ones are cut at that many characters, not bytes.
    #[test]
    fn lines_are_shortened_at_the_character_bound() {
        let at_bound = "x".repeat(MAX_LINE_CHARS);
        assert_eq!(line_text(format!("{at_bound}\r\n").as_bytes()), at_bound);
        let over = format!("{at_bound}yz\n");
        assert_eq!(
            line_text(over.as_bytes()),
            format!("{at_bound}… [2 more bytes]")
        );
        // Two bytes a character: twice the bound in bytes, the bound in characters.
        let wide = "é".repeat(MAX_LINE_CHARS);
        assert_eq!(line_text(wide.as_bytes()), wide);
        assert_eq!(
            line_text(format!("{wide}é").as_bytes()),
            format!("{wide}… [2 more bytes]")
        );
        // Bytes that are not UTF-8: one replacement character each, three bytes long.
        let invalid = vec![0xff; MAX_LINE_CHARS];
        assert_eq!(line_text(&invalid), "\u{fffd}".repeat(MAX_LINE_CHARS));
        assert_eq!(
            line_text(&[0xff; MAX_LINE_CHARS + 1]),
            format!("{}… [3 more bytes]", "\u{fffd}".repeat(MAX_LINE_CHARS))
        );
    }
}
