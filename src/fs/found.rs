//! What a walk finds, on its way to a tool's result: the paths a walking thread hands over in
//! one go (`Paths`: one buffer, in runs of paths from one directory), and the sorted result
//! gathered from them (`Sorted`) without sorting every path at the end.
//!
//! The result's order is the paths' byte order. Each run is sorted on the walking thread that
//! found it, in parallel; at the end the runs are merged along the tree they form, which is a
//! merge rather than a sort: a directory's paths all start with its prefix (`dir/`), so they
//! come together in the byte order, between the entries of its parent that sort before that
//! prefix and those that sort after it ('.' < '/' < '0': `a.b`, `a/`, `a/x`, `a0`). The kept
//! paths and the result hold their text in one buffer each, not one allocation per path.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Mutex;

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Paths found by one walking thread, handed to a sink together: their text in one buffer,
/// in runs of paths from one directory (a thread visits a directory's entries one after
/// another, so a run is usually the whole directory, or the share of it the thread visited).
#[derive(Debug, Default, Clone)]
pub struct Paths {
    text: String,
    /// Per path: where it is in `text`.
    spans: Vec<Range<usize>>,
    /// Per run, in order: where it starts in `spans`, and the length of its directory's
    /// prefix, which every path of the run starts with ("" at the root, else "dir/").
    runs: Vec<(usize, usize)>,
    /// Known to hold nothing JSON escapes (`text::json_plain`): looked at by `Sorted` on
    /// the walking thread, so that the result's writer, on one thread after the walk, copies
    /// each path between quotes as it is (escaping them there was 3 ms of sneaky-find's 84
    /// over 180,000 paths).
    plain: bool,
}

impl Paths {
    /// Room for `n` paths of about `bytes` bytes in all.
    pub fn with_capacity(n: usize, bytes: usize) -> Paths {
        Paths {
            text: String::with_capacity(bytes),
            spans: Vec::with_capacity(n),
            runs: Vec::new(),
            plain: false,
        }
    }

    /// Add a path; `dir`: it names a directory, shown with a trailing "/".
    pub fn push(&mut self, path: &str, dir: bool) {
        self.push_in(path, prefix_len(path), dir);
    }

    /// `push` of a path whose directory part (up to its last "/") is `prefix` bytes long, as
    /// a walk knows it: finding the last "/" again took 22M of sneaky-find's 414M
    /// instructions for 180,000 paths.
    fn push_in(&mut self, path: &str, prefix: usize, dir: bool) {
        if !self.continues_run(path, prefix) {
            self.runs.push((self.spans.len(), prefix));
        }
        let start = self.text.len();
        self.text.push_str(path);
        if dir {
            self.text.push('/');
        }
        self.spans.push(start..self.text.len());
    }

    /// Whether `path` (its directory part `prefix` bytes long) is in the last run's directory.
    fn continues_run(&self, path: &str, prefix: usize) -> bool {
        self.runs.last().is_some_and(|&(first, len)| {
            len == prefix
                && self.spans.get(first).is_some_and(|span| {
                    self.text.as_bytes().get(span.start..span.start + len)
                        == path.as_bytes().get(..len)
                })
        })
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The paths, in the order they were added (or sorted, within runs, once sorted).
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.spans.iter().map(|span| self.path(span))
    }

    fn path(&self, span: &Range<usize>) -> &str {
        self.text.get(span.clone()).unwrap_or("")
    }

    /// The runs: (their spans, their directory's prefix length).
    fn runs(&self) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
        let starts = self.runs.iter().map(|&(first, _)| first);
        let ends = starts.clone().skip(1).chain([self.spans.len()]);
        self.runs
            .iter()
            .zip(ends)
            .map(|(&(first, prefix), end)| (first..end, prefix))
    }

    /// Sort each run by its paths' bytes (after the prefix they share). Compared by their
    /// first 8 bytes as a number first, so that most comparisons touch no name: it took a
    /// third of the time of comparing the names (the order is the same, see `head`).
    fn sort_runs(&mut self) {
        let text = self.text.as_bytes();
        let runs: Vec<(Range<usize>, usize)> = self.runs().collect();
        let mut keyed: Vec<(u64, Range<usize>)> = Vec::new();
        for (range, prefix) in runs {
            let Some(spans) = self.spans.get_mut(range) else {
                continue;
            };
            if spans.len() < 2 {
                continue;
            }
            let name = |s: &Range<usize>| text.get(s.start + prefix..s.end).unwrap_or(&[]);
            keyed.clear();
            keyed.extend(spans.iter().map(|s| (head(name(s)), s.clone())));
            keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| name(&a.1).cmp(name(&b.1))));
            for (slot, (_, span)) in spans.iter_mut().zip(keyed.drain(..)) {
                *slot = span;
            }
        }
    }

    /// Drop the paths that do not sort before `bar`.
    fn retain_below(&mut self, bar: &str) {
        let mut spans = Vec::with_capacity(self.spans.len());
        let mut runs = Vec::with_capacity(self.runs.len());
        for (range, prefix) in self.runs() {
            let first = spans.len();
            for span in self.spans.get(range).unwrap_or(&[]) {
                if self.path(span) < bar {
                    spans.push(span.clone());
                }
            }
            if spans.len() > first {
                runs.push((first, prefix));
            }
        }
        self.spans = spans;
        self.runs = runs;
    }
}

/// A name's first 8 bytes as a number that sorts as they do: big-endian, zeros past the end
/// (a name holds no NUL, so a name that is a prefix of another sorts first either way).
fn head(name: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let n = name.len().min(8);
    bytes[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(bytes)
}

/// The length of a path's directory prefix: up to its last "/" but a trailing one.
fn prefix_len(path: &str) -> usize {
    let bare = path.strip_suffix('/').unwrap_or(path);
    bare.rfind('/').map_or(0, |i| i + 1)
}

/// Where a walking tool hands the paths it finds, a batch at a time, from the walk's threads
/// as it finds them (so in no particular order). A sorted, capped result collects them
/// (`Sorted`); a streaming output writes them at once. Return false to stop the walk.
pub trait PathSink: Sync {
    fn found(&self, paths: Paths) -> bool;
}

/// One walking thread's paths on their way to a sink: handed over about 256 at a time (one
/// lock per batch, not per path) and the rest when the thread is done. A batch ends where a
/// directory's run does (up to 16 times the size): the runs of one directory from several
/// batches are sorted together at the end, on one thread (13.5M of sneaky-find's 318M
/// instructions over 2,000 directories of 100 files, when batches ended at 256 paths).
pub struct Batch<'a> {
    sink: &'a dyn PathSink,
    paths: Paths,
    stopped: bool,
}

impl<'a> Batch<'a> {
    const SIZE: usize = 256;
    /// Room made for a batch's text, for paths of 32 bytes on average: a batch that grew from
    /// nothing took 8% of sneaky-find's time over 180,000 paths.
    const TEXT: usize = Self::SIZE * 32;

    pub fn new(sink: &'a dyn PathSink) -> Batch<'a> {
        Batch {
            sink,
            paths: Paths::default(),
            stopped: false,
        }
    }

    /// Add a walk's entry's path (`dir`: with a trailing "/"); false once the sink wants no
    /// more.
    pub fn push(&mut self, entry: &crate::fs::walk::Entry<'_>, dir: bool) -> bool {
        let full = self.paths.len() >= Self::SIZE;
        if full
            && (!self.paths.continues_run(entry.path, entry.dir_len)
                || self.paths.len() >= 16 * Self::SIZE)
        {
            self.flush();
        }
        if !self.stopped {
            if self.paths.spans.capacity() == 0 {
                self.paths = Paths::with_capacity(Self::SIZE, Self::TEXT);
            }
            self.paths.push_in(entry.path, entry.dir_len, dir);
        }
        !self.stopped
    }

    fn flush(&mut self) {
        if !self.paths.is_empty() && !self.stopped {
            self.stopped = !self.sink.found(std::mem::take(&mut self.paths));
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Keeps the `cap` first paths in byte order, counting all of them: memory stays bounded (at
/// most about twice the cap between prunes) and the kept set does not depend on the order the
/// threads deliver paths in.
pub struct Sorted {
    cap: usize,
    held: Mutex<Held>,
    /// A bar is set: the sink is full, and only paths before the bar can enter.
    barred: AtomicBool,
}

#[derive(Default)]
struct Held {
    batches: Vec<Paths>,
    kept: usize,
    seen: u64,
    /// After a prune that kept `cap` paths: the last kept. Nothing not before it can enter.
    bar: Option<String>,
}

impl Sorted {
    pub fn new(cap: usize) -> Sorted {
        Sorted {
            cap,
            held: Mutex::new(Held::default()),
            barred: AtomicBool::new(false),
        }
    }

    /// Whether the sink is full: a path not before `bar()` cannot enter any more.
    pub fn barred(&self) -> bool {
        self.barred.load(AtomicOrdering::Relaxed)
    }

    /// Once full: the last path kept.
    pub fn bar(&self) -> Option<String> {
        if !self.barred() {
            return None;
        }
        self.held.lock().ok()?.bar.clone()
    }

    /// The kept paths in order from the `skip`th, and how many were seen in all.
    pub fn finish(self, skip: usize) -> (PathList, u64) {
        let held = self
            .held
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let len = held.kept.min(self.cap).saturating_sub(skip);
        let list = PathList(List::Runs {
            batches: held.batches,
            skip,
            len,
        });
        (list, held.seen)
    }
}

impl PathSink for Sorted {
    fn found(&self, mut paths: Paths) -> bool {
        // Sorted and looked at here, on the walking thread, before the lock is taken.
        paths.sort_runs();
        paths.plain = crate::text::json_plain(paths.text.as_bytes());
        let Ok(mut held) = self.held.lock() else {
            return false;
        };
        let held = &mut *held;
        held.seen += paths.len() as u64;
        if let Some(bar) = &held.bar {
            paths.retain_below(bar);
        }
        held.kept += paths.len();
        held.batches.push(paths);
        if held.kept >= self.cap.saturating_mul(2).max(1024) {
            // Keep the first `cap`, as one batch (sorted, so its runs are too).
            let mut first = Paths::default();
            let mut left = self.cap;
            first.plain = held.batches.iter().all(|b| b.plain);
            merge(&held.batches, |path, _| {
                let dir = path.ends_with('/');
                first.push(path.strip_suffix('/').unwrap_or(path), dir);
                left -= 1;
                left > 0
            });
            held.kept = first.len();
            if held.kept == self.cap {
                held.bar = first.spans.last().map(|span| first.path(span).to_string());
                self.barred.store(true, AtomicOrdering::Relaxed);
            }
            held.batches = vec![first];
        }
        true
    }
}

/// A run's paths, as the merge reads them.
enum Items<'a> {
    /// Sorted spans of a batch's text.
    Spans(&'a Paths, &'a [Range<usize>]),
    /// Runs of one directory from several batches, merged (and whether all were plain).
    Merged(Vec<&'a str>, bool),
}

impl<'a> Items<'a> {
    fn len(&self) -> usize {
        match self {
            Items::Spans(_, spans) => spans.len(),
            Items::Merged(paths, _) => paths.len(),
        }
    }

    fn get(&self, i: usize) -> &'a str {
        match self {
            Items::Spans(paths, spans) => spans.get(i).map_or("", |span| paths.path(span)),
            Items::Merged(merged, _) => merged.get(i).copied().unwrap_or(""),
        }
    }

    /// Whether its paths hold nothing JSON escapes.
    fn plain(&self) -> bool {
        match self {
            Items::Spans(paths, _) => paths.plain,
            Items::Merged(_, plain) => *plain,
        }
    }
}

struct Run<'a> {
    /// The directory's prefix ("" or "dir/"), which every path of the run starts with.
    key: &'a str,
    items: Items<'a>,
}

/// Hand the paths of sorted runs to `emit` in byte order, until it returns false; with
/// each, whether it holds nothing JSON escapes (`Paths::plain`).
///
/// The runs are taken in the order of their prefixes, with a stack of the runs whose
/// directories hold the one at hand. A run's paths all start with its prefix, so they sort
/// together: a path of an enclosing directory comes before them when it is not greater than
/// the prefix (the directory's own entry, `dir/`, is equal to it and comes first), after them
/// all otherwise; and a run whose prefix does not start with the one on top of the stack
/// comes after everything left of that one.
fn merge<'a>(batches: &'a [Paths], mut emit: impl FnMut(&'a str, bool) -> bool) {
    let mut runs: Vec<Run<'a>> = batches
        .iter()
        .flat_map(|batch| {
            batch.runs().map(move |(range, prefix)| Run {
                key: batch
                    .spans
                    .get(range.start)
                    .and_then(|span| batch.text.get(span.start..span.start + prefix))
                    .unwrap_or(""),
                items: Items::Spans(batch, batch.spans.get(range).unwrap_or(&[])),
            })
        })
        .collect();
    runs.sort_unstable_by(|a, b| a.key.cmp(b.key));
    let mut stack: Vec<(Run<'a>, usize)> = Vec::new();
    let mut runs = runs.into_iter().peekable();
    while let Some(mut run) = runs.next() {
        // Runs of the same directory (its entries came in several batches): one run.
        if runs.peek().is_some_and(|next| next.key == run.key) {
            let mut merged: Vec<&str> = (0..run.items.len()).map(|i| run.items.get(i)).collect();
            let mut plain = run.items.plain();
            while let Some(next) = runs.next_if(|next| next.key == run.key) {
                merged.extend((0..next.items.len()).map(|i| next.items.get(i)));
                plain &= next.items.plain();
            }
            // A stable sort finds the sorted runs it is made of and merges them.
            merged.sort();
            run.items = Items::Merged(merged, plain);
        }
        while let Some((top, at)) = stack.last_mut() {
            if run.key.starts_with(top.key) {
                // An enclosing directory: its paths up to this one's prefix come first.
                while *at < top.items.len() && top.items.get(*at).cmp(run.key) != Ordering::Greater
                {
                    if !emit(top.items.get(*at), top.items.plain()) {
                        return;
                    }
                    *at += 1;
                }
                break;
            }
            // Not enclosing: all it has left comes before this run.
            while *at < top.items.len() {
                if !emit(top.items.get(*at), top.items.plain()) {
                    return;
                }
                *at += 1;
            }
            stack.pop();
        }
        stack.push((run, 0));
    }
    while let Some((top, mut at)) = stack.pop() {
        while at < top.items.len() {
            if !emit(top.items.get(at), top.items.plain()) {
                return;
            }
            at += 1;
        }
    }
}

/// Paths in order, serialized as a JSON array of strings: a walk's sorted runs, merged as
/// they are read (written out, the whole result is never copied into one list first: that
/// copy was a third of the time left after sneaky-find's walk of 180,000 paths), or paths
/// in one buffer.
#[derive(Debug, Clone, Default)]
pub struct PathList(List);

#[derive(Debug, Clone)]
enum List {
    /// Runs of `Sorted`: the `len` paths after the first `skip` in their merged order.
    Runs {
        batches: Vec<Paths>,
        skip: usize,
        len: usize,
    },
    Flat {
        text: String,
        /// Per path: where it ends in `text` (it starts where the one before ended).
        ends: Vec<usize>,
    },
}

impl Default for List {
    fn default() -> List {
        List::Flat {
            text: String::new(),
            ends: Vec::new(),
        }
    }
}

impl PathList {
    pub fn push(&mut self, path: &str) {
        if let List::Runs { .. } = self.0 {
            let flat: PathList = self.to_vec().into_iter().collect();
            *self = flat;
        }
        if let List::Flat { text, ends } = &mut self.0 {
            text.push_str(path);
            ends.push(text.len());
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            List::Runs { len, .. } => *len,
            List::Flat { ends, .. } => ends.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hand each path in order to `f`, until it returns false.
    pub fn for_each<'a>(&'a self, mut f: impl FnMut(&'a str) -> bool) {
        self.for_each_marked(|path, _| f(path));
    }

    /// [`PathList::for_each`], with each path whether it is known to hold nothing JSON
    /// escapes (`text::json_plain`).
    pub fn for_each_marked<'a>(&'a self, mut f: impl FnMut(&'a str, bool) -> bool) {
        match &self.0 {
            List::Runs { batches, skip, len } => {
                let (skip, end) = (*skip, skip.saturating_add(*len));
                let mut at = 0usize;
                merge(batches, |path, plain| {
                    if at >= end {
                        return false;
                    }
                    at += 1;
                    at <= skip || f(path, plain)
                });
            }
            List::Flat { text, ends } => {
                let starts = std::iter::once(0).chain(ends.iter().copied());
                for (start, end) in starts.zip(ends.iter().copied()) {
                    if !f(text.get(start..end).unwrap_or(""), false) {
                        break;
                    }
                }
            }
        }
    }

    pub fn to_vec(&self) -> Vec<&str> {
        let mut paths = Vec::with_capacity(self.len());
        self.for_each(|path| {
            paths.push(path);
            true
        });
        paths
    }
}

impl PartialEq for PathList {
    fn eq(&self, other: &PathList) -> bool {
        self.len() == other.len() && self.to_vec() == other.to_vec()
    }
}

impl Eq for PathList {}

impl<S: AsRef<str>> FromIterator<S> for PathList {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> PathList {
        let mut list = PathList::default();
        for path in iter {
            list.push(path.as_ref());
        }
        list
    }
}

impl Serialize for PathList {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        let mut failed = None;
        self.for_each(|path| match seq.serialize_element(path) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        });
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

impl<'de> Deserialize<'de> for PathList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<PathList, D::Error> {
        Ok(Vec::<String>::deserialize(d)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths handed over in batches of `size`, in the given order, to a sink keeping `cap`.
    fn gathered(paths: &[&str], size: usize, cap: usize, skip: usize) -> (Vec<String>, u64) {
        let sorted = Sorted::new(cap);
        for chunk in paths.chunks(size) {
            let mut batch = Paths::default();
            for path in chunk {
                batch.push(path.strip_suffix('/').unwrap_or(path), path.ends_with('/'));
            }
            assert!(sorted.found(batch));
        }
        let (list, seen) = sorted.finish(skip);
        let paths: Vec<String> = list.to_vec().into_iter().map(str::to_string).collect();
        // What is written is what is read.
        let json: Vec<String> =
            serde_json::from_value(serde_json::to_value(&list).expect("json")).expect("read back");
        assert_eq!(json, paths);
        assert_eq!(list.len(), paths.len());
        (paths, seen)
    }

    fn byte_order(paths: &[&str]) -> Vec<String> {
        let mut expected: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        expected.sort();
        expected
    }

    #[test]
    fn the_merge_gives_the_byte_order_of_the_whole_paths() {
        // '.' < '/' < '0': a directory's subtree sorts between its neighbours by its prefix,
        // and its own entry ("a/") right before what it holds; a directory with nothing found
        // of its own ("d/"), one whose name is a prefix of another's ("a", "ab"), one reached
        // in several batches.
        let paths = [
            "a0", "a/x", "a.b", "a/", "a/x.y/", "a/x.y/z", "a/x0", "ab/c", "ab/", "a-", "d/e/f",
            "d/e.g", "d/e0/h", "b", "a/x/y", "a/x/", "c d", "C", "a/x/y/", "a/x/y/q", "é/x", "z",
        ];
        let expected = byte_order(&paths);
        for size in [1, 2, 3, 5, paths.len()] {
            // In the given order, reversed, and rotated: the order of arrival does not count.
            for shift in 0..paths.len() {
                let mut order: Vec<&str> = paths.to_vec();
                order.rotate_left(shift);
                assert_eq!(
                    gathered(&order, size, usize::MAX, 0).0,
                    expected,
                    "{size} {shift}"
                );
                order.reverse();
                assert_eq!(
                    gathered(&order, size, usize::MAX, 0).0,
                    expected,
                    "{size} {shift}"
                );
            }
        }
    }

    #[test]
    fn a_cap_and_a_skip_keep_the_first_paths_and_count_them_all() {
        // Past the size that prunes: 2,000 directories' files and the directories themselves,
        // in batches that split directories.
        let names: Vec<String> = (0..2000u32)
            .flat_map(|d| {
                let dir = format!("p{}/m{}", d % 7, d * 7919 % 2000);
                let files = (0..5u32).map({
                    let dir = dir.clone();
                    move |f| format!("{dir}/f{}.rs", (f * 31 + d) % 11)
                });
                std::iter::once(format!("{dir}/")).chain(files)
            })
            .collect();
        let paths: Vec<&str> = names.iter().map(String::as_str).collect();
        let expected = byte_order(&paths);
        let all = paths.len() as u64;
        assert_eq!(
            gathered(&paths, 256, usize::MAX, 0),
            (expected.clone(), all)
        );
        assert_eq!(
            gathered(&paths, 100, 3000, 0),
            (expected[..3000].to_vec(), all)
        );
        assert_eq!(
            gathered(&paths, 7, 700, 650),
            (expected[650..700].to_vec(), all)
        );
        assert_eq!(gathered(&paths, 256, 10, 20), (Vec::new(), all));
    }

    #[test]
    fn a_path_list_reads_back_from_its_json() {
        let list: PathList = ["a/", "b c", "é"].into_iter().collect();
        let json = serde_json::to_string(&list).expect("json");
        assert_eq!(json, r#"["a/","b c","é"]"#);
        let back: PathList = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, list);
        assert_eq!(back.to_vec(), vec!["a/", "b c", "é"]);
    }
}
