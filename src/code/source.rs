//! The files of a navigation call: a walk of the workspace as grep_files walks it (the jail's
//! handles, ignore files, hidden files skipped, the read-deny list), each file of a supported
//! language read through its directory's handle, optionally kept only when its bytes pass a
//! test (the grep engine's match, for find_symbol and find_references), and its tags taken
//! from the cache or a parse. A call that needs only definitions (outline, find_symbol) takes
//! an entry of either part and parses for definitions alone; one that needs everything
//! (find_references, repo_map) takes only a whole entry, and its parse replaces a
//! definitions-only one. Files of other languages, too large or not parsed are named, never
//! dropped in silence.

use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::cache::{Cache, Key};
use super::elsewhere::{self, Job, Parsed};
use super::parse;
use super::skim;
use super::tags::{FileTags, Part, Want, CUT_SHORT};
use super::Lang;
use crate::error::{Error, Result};
use crate::fs::jail::{Kind, RelPath, Workspace};
use crate::fs::walk::{self, Filters, Flow};

/// Files larger than this are not parsed (named as such): generated code, data.
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// Bytes of files to parse handed to the helper in one go.
const BATCH_BYTES: usize = 32 << 20;

/// A parse of some files' bytes, each answered in order.
pub type ParseFn = fn(&[Job<'_>]) -> Result<Vec<Parsed>>;

/// A test of a file's bytes: whether the file matters to the call.
pub type Filter<'a> = &'a (dyn Fn(&[u8]) -> bool + Sync);

/// The places of a file's bytes that matter to the call (byte ranges, in order).
pub type Focus<'a> = &'a (dyn Fn(&[u8]) -> Vec<(u32, u32)> + Sync);

/// A test of a definition's name.
pub type Names<'a> = &'a (dyn Fn(&str) -> bool + Sync);

/// Where parses happen: in this process (only `sneaky-outline` and `sneaky-symbol` link the
/// grammars) or in the helper (`elsewhere`). A function rather than a flag, so that a
/// program that never names `here` does not link the grammars.
#[derive(Clone, Copy)]
pub struct Parser {
    parse: ParseFn,
    /// Bytes held before a batch is parsed: 0 parses each file as it is read.
    batch_bytes: usize,
}

impl Parser {
    /// In this process, each file on the walking thread that read it.
    pub const fn here(parse: ParseFn) -> Parser {
        Parser {
            parse,
            batch_bytes: 0,
        }
    }

    /// In `sneaky-outline --parse`, in batches.
    pub const ELSEWHERE: Parser = Parser {
        parse: parse_elsewhere,
        batch_bytes: BATCH_BYTES,
    };

    /// Parse some files' bytes now.
    pub fn parse(&self, files: &[Job<'_>]) -> Result<Vec<Parsed>> {
        (self.parse)(files)
    }
}

fn parse_elsewhere(files: &[Job<'_>]) -> Result<Vec<Parsed>> {
    elsewhere::parse_jobs_elsewhere(files, None)
}

/// What a walk keeps of the files.
pub struct Gather<'a> {
    pub parser: Parser,
    /// What each file's tags must hold: `Part::Defs` (every definition: outline,
    /// find_symbol) or `Part::All` (find_references, repo_map).
    pub need: Part,
    /// Keep only files whose bytes pass (and name only such files as not parsed).
    pub filter: Option<Filter<'a>>,
    /// Keep each file's bytes beside its tags (for bodies and references).
    pub keep_bytes: bool,
    /// Only the definitions at these places of a file are wanted (find_symbol: where its
    /// name is): a file the cache does not hold is skimmed and parsed for those alone
    /// (`Want::Skimmed`), and such tags are not cached. A file the cache holds is taken from
    /// there (with `names`, only the definitions they pass).
    pub focus: Option<Focus<'a>>,
    /// Only the definitions whose names pass are wanted (with those that hold them): of a
    /// file the cache holds, no other is decoded (find_symbol).
    pub names: Option<Names<'a>>,
}

/// A parsed file.
pub struct Source {
    /// Root-relative.
    pub path: String,
    pub tags: FileTags,
    /// The file's bytes, with `Gather::keep_bytes`; else empty.
    pub bytes: Vec<u8>,
}

/// A file not parsed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsed {
    pub path: String,
    pub reason: String,
}

/// The files of one call, sorted by path.
#[derive(Default)]
pub struct Gathered {
    pub files: Vec<Source>,
    pub unparsed: Vec<Unparsed>,
}

/// A file read, waiting for its parse.
struct Waiting {
    path: String,
    lang: Lang,
    bytes: Vec<u8>,
    /// Its key when it may be cached (it did not change while read, and has settled).
    key: Option<Key>,
    /// The places its parse is for (empty: every definition, or everything, as the call
    /// needs).
    focus: Vec<(u32, u32)>,
    /// With `focus`, what its parse leaves out (`skim::focused`).
    holes: Vec<(u32, u32)>,
}

impl Waiting {
    /// What its parse is for, in a call that needs `need`.
    fn want(&self, need: Part) -> Want<'_> {
        match need {
            _ if !self.focus.is_empty() => Want::Skimmed(&self.focus, &self.holes),
            Part::All => Want::All,
            Part::Defs | Part::Focused => Want::Defs,
        }
    }
}

struct Shared<'a> {
    gather: &'a Gather<'a>,
    cache: Option<Cache>,
    now: SystemTime,
    files: Mutex<Vec<Source>>,
    unparsed: Mutex<Vec<Unparsed>>,
    /// Files waiting for the helper, and their bytes in all.
    pending: Mutex<(Vec<Waiting>, usize)>,
    failed: Mutex<Option<Error>>,
}

/// A directory's files one walking thread takes at a time when another waits: each may cost
/// a parse (a millisecond, where grep spends microseconds), and Python's standard library
/// keeps a package's few dozen modules in one directory (`asyncio`: 34), which one thread
/// parsed alone with shares of `walk::FILES_PER_JOB`.
const FILES_PER_PARSE_JOB: usize = 4;

/// Walk `start` (a directory or one file) and gather its files.
pub fn gather(ws: &Workspace, start: &RelPath, gather: &Gather<'_>) -> Result<Gathered> {
    let start = ws.walk_start(start)?;
    let opts = walk::Options {
        filters: Some(Filters::standard(".rgignore")),
        max_depth: None,
        threads: walk::threads(),
        files_per_job: FILES_PER_PARSE_JOB,
    };
    let shared = Shared {
        gather,
        cache: Cache::open(ws),
        now: SystemTime::now(),
        files: Mutex::new(Vec::new()),
        unparsed: Mutex::new(Vec::new()),
        pending: Mutex::new((Vec::new(), 0)),
        failed: Mutex::new(None),
    };
    walk::walk(ws, start, &opts, || {
        |entry: &walk::Entry<'_>| {
            if entry.kind != Kind::File {
                return Flow::Continue;
            }
            match shared.visit(entry) {
                Ok(()) => Flow::Continue,
                Err(e) => {
                    shared.fail(e);
                    Flow::Quit
                }
            }
        }
    });
    let rest = std::mem::take(&mut lock(&shared.pending).0);
    if let Err(e) = shared.parse(rest) {
        shared.fail(e);
    }
    if let Some(cache) = &shared.cache {
        cache.flush();
    }
    if let Some(e) = lock(&shared.failed).take() {
        return Err(e);
    }
    let mut files = shared.files.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut unparsed = shared
        .unparsed
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    unparsed.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Ok(Gathered { files, unparsed })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared<'_> {
    fn fail(&self, e: Error) {
        lock(&self.failed).get_or_insert(e);
    }

    fn unparsed(&self, path: &str, reason: impl Into<String>) {
        lock(&self.unparsed).push(Unparsed {
            path: path.to_string(),
            reason: reason.into(),
        });
    }

    fn visit(&self, entry: &walk::Entry<'_>) -> Result<()> {
        let name = entry.name.to_string_lossy();
        let by_name = Lang::of_name(&name);
        // A file of another language is read only to tell whether it matters (the filter)
        // or is a script (its `#!` line).
        if by_name.is_none() && self.gather.filter.is_none() && name.contains('.') {
            self.unparsed(entry.path, "not a supported language");
            return Ok(());
        }
        let Some(file) = entry.open_file() else {
            return Ok(());
        };
        let Ok(before) = file.metadata() else {
            return Ok(());
        };
        if before.len() > MAX_SOURCE_BYTES {
            if by_name.is_some() {
                self.unparsed(
                    entry.path,
                    format!("larger than {} MiB", MAX_SOURCE_BYTES >> 20),
                );
            }
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(usize::try_from(before.len()).unwrap_or(0));
        if (&file)
            .take(MAX_SOURCE_BYTES + 1)
            .read_to_end(&mut bytes)
            .is_err()
        {
            return Ok(());
        }
        if let Some(filter) = self.gather.filter {
            if !filter(&bytes) {
                return Ok(());
            }
        }
        let Some(lang) = by_name.or_else(|| Lang::of_shebang(&bytes)) else {
            if !bytes.contains(&0) {
                self.unparsed(entry.path, "not a supported language");
            }
            return Ok(());
        };
        // The places asked for (find_symbol's name) where a definition may be named, as the
        // bytes around each tell: a file that holds the name only as a member or a path
        // (`Vec::new()`) or in `//` lines needs neither its cache entry nor a skim.
        let focus = self.gather.focus.map(|f| f(&bytes)).unwrap_or_default();
        let named = skim::maybe_named(lang, &bytes, &focus);
        if !focus.is_empty() && named.is_empty() {
            let tags = FileTags::empty(lang, Part::Focused);
            self.keep(entry.path.to_string(), tags, bytes);
            return Ok(());
        }
        // Only now is a `.h` header's language told (C and C++ are alike to `maybe_named`):
        // that reads all of a C header, and most of those holding a common name are kept
        // above.
        let lang = lang.of_header(&name, &bytes);
        let key = Key::of(&before, lang);
        let unchanged = file
            .metadata()
            .is_ok_and(|after| Key::of(&after, lang) == key && after.len() == bytes.len() as u64);
        let key = (unchanged && key.settled(self.now)).then_some(key);
        if let (Some(cache), Some(key)) = (&self.cache, &key) {
            // An entry of only the definitions is a miss for a call that needs everything.
            if let Some(tags) = cache.get(
                entry.path,
                key,
                self.gather.need,
                self.gather.names.map(|n| n as _),
            ) {
                self.keep(entry.path.to_string(), tags, bytes);
                return Ok(());
            }
        }
        self.wait(entry.path, lang, bytes, key, named)
    }

    /// Put a file read in the next batch to parse (for the places `focus` the call asks
    /// for, if any), and parse the batch when it is full.
    fn wait(
        &self,
        path: &str,
        lang: Lang,
        bytes: Vec<u8>,
        key: Option<Key>,
        focus: Vec<(u32, u32)>,
    ) -> Result<()> {
        // The skim for the places is done here, on the walk's threads: a file where no
        // definition is named there (most of those that hold a common name) goes to no
        // parse, and the helper is handed the holes.
        let (focus, holes) = if focus.is_empty() {
            (focus, Vec::new())
        } else {
            // (`focus` is what `skim::maybe_named` kept: `visit`.)
            let skim = skim::focused_on(lang, &bytes, &focus);
            if skim.names_nothing() {
                let tags = FileTags::empty(lang, Part::Focused);
                self.keep(path.to_string(), tags, bytes);
                return Ok(());
            }
            let narrow = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            let holes = skim.holes.iter().map(|&(s, e)| (narrow(s), narrow(e)));
            (skim.places, holes.collect())
        };
        let read = Waiting {
            path: path.to_string(),
            lang,
            key: key.filter(|_| focus.is_empty()),
            bytes,
            focus,
            holes,
        };
        let batch = {
            let mut pending = lock(&self.pending);
            pending.1 += read.bytes.len();
            pending.0.push(read);
            if pending.1 >= self.gather.parser.batch_bytes {
                pending.1 = 0;
                std::mem::take(&mut pending.0)
            } else {
                Vec::new()
            }
        };
        self.parse(batch)
    }

    fn keep(&self, path: String, tags: FileTags, bytes: Vec<u8>) {
        let bytes = if self.gather.keep_bytes {
            bytes
        } else {
            Vec::new()
        };
        lock(&self.files).push(Source { path, tags, bytes });
    }

    fn parse(&self, batch: Vec<Waiting>) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let need = self.gather.need;
        let input: Vec<Job<'_>> = batch
            .iter()
            .map(|r| (r.lang, &r.bytes[..handed_over(r)], r.want(need)))
            .collect();
        let mut parsed = self.gather.parser.parse(&input)?;
        // A file cut short whose parse without the holes had an error, handed over again
        // whole (`tags::CUT_SHORT`).
        let again: Vec<usize> = (0..batch.len())
            .filter(|&i| input[i].1.len() < batch[i].bytes.len())
            .filter(|&i| matches!(&parsed[i], Err(why) if why == CUT_SHORT))
            .collect();
        if !again.is_empty() {
            let whole: Vec<Job<'_>> = again
                .iter()
                .map(|&i| (batch[i].lang, &batch[i].bytes[..], input[i].2))
                .collect();
            for (i, tags) in again.into_iter().zip(self.gather.parser.parse(&whole)?) {
                parsed[i] = tags;
            }
        }
        drop(input);
        for (read, parsed) in batch.into_iter().zip(parsed) {
            match parsed {
                Ok(tags) => {
                    if let (Some(cache), Some(key)) = (&self.cache, &read.key) {
                        cache.put(&read.path, key, &tags);
                    }
                    self.keep(read.path, tags, read.bytes);
                }
                Err(why) => self.unparsed(&read.path, format!("not parsed: {why}")),
            }
        }
        Ok(())
    }
}

/// How much of a file waiting for its parse is handed over: the rest of a file after its
/// last place is a hole (but for the newline that ends the file), and is not handed over
/// unless the parse without the holes is not worth it and would keep every body (on
/// find_symbol's walk, most of the bytes of the files that hold a common name lie there).
fn handed_over(file: &Waiting) -> usize {
    let len = file.bytes.len();
    let Some(&(start, end)) = file.holes.last() else {
        return len;
    };
    let (start, end) = (start as usize, end as usize);
    let blank_after = file
        .bytes
        .get(end..)
        .is_some_and(|tail| tail.iter().all(u8::is_ascii_whitespace));
    let left_out = file.holes.iter().map(|&(s, e)| (e - s) as usize).sum();
    if start < end && blank_after && parse::worth_leaving_out(left_out, len) {
        start
    } else {
        len
    }
}

/// The tags of one content parsed now (no cache): an edit's file before and after.
pub fn parse_contents(
    files: &[(Lang, &[u8])],
    limit: Duration,
) -> Result<Vec<std::result::Result<FileTags, String>>> {
    elsewhere::parse_elsewhere(files, Some(limit))
}
