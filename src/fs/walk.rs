//! The walk shared by list_dir, grep_files and find_files: one pass over a directory tree,
//! in parallel, through directory handles.
//!
//! Every directory is opened from its parent's handle with `openat(…, O_NOFOLLOW)` and every
//! file is opened from its directory's handle the same way (`DirHandle`), so whatever the walk
//! reaches is beneath the root because of how it was reached; nothing is looked up again from
//! the root by name. A directory swapped for a link while the walk runs makes that open fail
//! and the subtree is skipped; it is never followed. Links are reported, never entered.
//!
//! Filtering is ripgrep's and fd's (the `ignore` crate's rules, applied to names here rather
//! than through its walker): hidden entries skipped; `.gitignore` (inside a git repository),
//! `.ignore`, the tool's own ignore file and `.git/info/exclude` of every directory from the
//! workspace root down; globs (`-g`) and file types (`-t`) on top. Ignore files are read
//! through the same handles, and never above the workspace root.

use std::ffi::{CStr, OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use ignore::types::Types;
use ignore::Match;

use crate::fs::jail::{DirHandle, Kind, Listing, WalkStart, Workspace};
use crate::fs::pathlist::DenyRead;

/// The root ignore rules are built with. The paths they are matched against are already
/// relative to the rules' directory (`relative_to`), and "." tells `Gitignore::matched` to
/// take them as they are; with any other root it compares the root with "." (a comparison
/// of paths by components) and strips it from every path first, which was half the cost of
/// matching an entry against a .gitignore.
const RULES_ROOT: &str = ".";

/// Ignore files larger than this are not read (a generated file is not a list of rules).
const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// Which entries a walk reports, as ripgrep and fd decide by default.
pub struct Filters {
    /// Report hidden entries (names starting with ".") too.
    pub hidden: bool,
    /// Read ignore files (.gitignore, .ignore, the tool's own, .git/info/exclude, git's
    /// global excludes) and skip what they exclude.
    pub ignore_files: bool,
    /// The tool's own ignore file name (".rgignore", ".fdignore").
    pub custom_ignore: &'static str,
    /// Globs that include or (with "!") exclude paths; matched against root-relative paths.
    pub overrides: Override,
    /// File types to search (rg's `-t`); directories are not subject to them.
    pub types: Types,
}

impl Filters {
    /// ripgrep's / fd's defaults with the given custom ignore file.
    pub fn standard(custom_ignore: &'static str) -> Filters {
        Filters {
            hidden: false,
            ignore_files: true,
            custom_ignore,
            overrides: Override::empty(),
            types: Types::empty(),
        }
    }
}

/// What a walk filters with: `Filters`, or `Unfiltered` for a walk that reports every entry.
/// A type rather than only a runtime `None`, so that a binary whose walks are all unfiltered
/// (sneaky-ls) does not link the ignore-file and glob machinery (regex engines included):
/// `Option<Unfiltered>` can only be `None`, and the filtering code is compiled out of it.
pub trait Filter: Sync {
    fn filters(&self) -> &Filters;
}

impl Filter for Filters {
    fn filters(&self) -> &Filters {
        self
    }
}

/// No filters: every entry is reported (list_dir). Has no values.
pub enum Unfiltered {}

impl Filter for Unfiltered {
    fn filters(&self) -> &Filters {
        match *self {}
    }
}

pub struct Options<P: Filter = Filters> {
    /// None: report every entry (list_dir).
    pub filters: Option<P>,
    /// Entries deeper than this are not reported (1: the start's own entries).
    pub max_depth: Option<usize>,
    pub threads: usize,
    /// A directory's files visited by one thread in one go; the rest goes to the queue in
    /// shares of this many while another thread waits for work ([`FILES_PER_JOB`] where a
    /// file is quick to visit; fewer where each costs a parse, so that a directory of a few
    /// dozen files is shared).
    pub files_per_job: usize,
}

/// What a visitor tells the walk after seeing an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// Do not descend into this directory.
    Prune,
    /// Stop the whole walk.
    Quit,
}

/// One entry the walk reached.
pub struct Entry<'a> {
    /// Root-relative, `/`-separated.
    pub path: &'a str,
    pub name: &'a OsStr,
    /// The length of `path`'s directory part, up to its last `/` (0 at the start's top).
    pub dir_len: usize,
    /// What the directory listing says it is (links not followed).
    pub kind: Kind,
    /// 1 for the start's own entries; 0 for the start itself when it is a file.
    pub depth: usize,
    dir: &'a DirHandle,
    is_start: bool,
    /// The read-deny list, whose files are not opened under another name (a hard link).
    deny: Option<&'a DenyRead>,
    /// The walk's answer to whether each of the list's files has one name.
    one_name_each: &'a OnceLock<bool>,
}

impl Entry<'_> {
    /// Open a regular file for reading through its directory's handle; None when it is not
    /// one (any more): a link, FIFO or device swapped in is not opened.
    pub fn open_file(&self) -> Option<File> {
        self.open_file_sized().map(|(file, _)| file)
    }

    /// `open_file`, with the file's size when it was opened. The status that tells a regular
    /// file is the one that tells a hard link (one `fstat` per file, not two).
    pub fn open_file_sized(&self) -> Option<(File, u64)> {
        let (file, st) = if self.is_start {
            self.dir.as_file_stat().ok()?
        } else {
            self.dir.open_file_stat(self.name).ok()?
        };
        if let Some(deny) = self.deny {
            if st.nlink > 1 && deny.by_identity(st.dev, st.ino) {
                return None;
            }
        }
        Some((file, st.size))
    }

    /// `open_file_sized`, without the status where nothing needs it: when no file of the
    /// read-deny list has a second name (so this file is none of them), the file is opened and
    /// no more, and its size is None. Then it was a regular file when listed but may be
    /// anything swapped in since (a FIFO), so the caller reads a bounded amount and asks for
    /// the status ([`regular_size`]) before reading on. Saves one system call of the four a
    /// searched file costs.
    pub fn open_file_lean(&self) -> Option<(File, Option<u64>)> {
        let lean = !self.is_start
            && self.deny.map_or(true, |deny| {
                *self.one_name_each.get_or_init(|| deny.one_name_each())
            });
        if !lean {
            return self
                .open_file_sized()
                .map(|(file, size)| (file, Some(size)));
        }
        let file = self.dir.open_file_unchecked(self.name).ok()?;
        Some((file, None))
    }
}

/// The size of an open file, if it is a regular file.
// The status's field types differ between architectures.
#[allow(clippy::useless_conversion)]
pub fn regular_size(file: &File) -> Option<u64> {
    let st = rustix::fs::fstat(file).ok()?;
    (Kind::from_mode(st.st_mode.into()) == Kind::File)
        .then(|| u64::try_from(st.st_size).unwrap_or(0))
}

/// Walk from `start`, calling a visitor for each entry that passes the filters. `make` builds
/// one visitor per thread (each may hold its own buffers); entries arrive in no global order.
pub fn walk<F, V, P>(ws: &Workspace, start: WalkStart, opts: &Options<P>, make: F)
where
    P: Filter,
    F: Fn() -> V + Sync,
    V: FnMut(&Entry<'_>) -> Flow,
{
    let deny = ws.deny_read().cloned();
    if start.kind != Kind::Dir {
        let name = start.path.rsplit('/').next().unwrap_or("").to_string();
        let mut visit = make();
        visit(&Entry {
            path: &start.path,
            name: OsStr::new(&name),
            dir_len: start.path.len() - name.len(),
            kind: start.kind,
            depth: 0,
            dir: &start.handle,
            is_start: true,
            deny: deny.as_deref(),
            one_name_each: &OnceLock::new(),
        });
        return;
    }
    let rules = match filters_of(opts) {
        Some(f) if f.ignore_files => Some(ancestor_rules(ws, &start.path, f.custom_ignore)),
        _ => None,
    };
    let shared = Shared {
        queue: Mutex::new(Queue {
            jobs: vec![Job {
                dir: JobDir::Open(start.handle),
                path: start.path,
                depth: 0,
                rules,
            }],
            active: 0,
        }),
        wake: Condvar::new(),
        waiting: AtomicUsize::new(0),
        quit: AtomicBool::new(false),
        cancel: crate::cancel::Cancel::current(),
        global: OnceLock::new(),
        one_name_each: OnceLock::new(),
        denied_here: deny
            .as_ref()
            .filter(|d| !d.here.is_empty())
            .map(|_| ws.root().to_path_buf()),
        deny,
    };
    let threads = opts.threads.max(1);
    let first_cpu = nix::sched::sched_getcpu().ok();
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|| {
                leave_cpu(first_cpu);
                worker(&shared, opts, make())
            });
        }
        if threads > 1 {
            // A new thread is queued beside its parent: let it run now, and move.
            std::thread::yield_now();
        }
        worker(&shared, opts, make());
    });
}

/// Move the calling thread off `cpu` (the one the walk's first thread ran on), when it may
/// run elsewhere. The scheduler queues a new thread on its parent's CPU, and on this
/// 2-core machine (whose kernel packs threads onto few CPUs, `sched_vcpu_pack`) it let both
/// threads take turns there for up to 16 ms while the other CPU stood idle (perf sched
/// timehist): a third of a 10,000-file grep. The CPUs are narrowed, which moves the thread
/// at once, and given back at once, so the scheduler may still move it where it would (a
/// CPU busy with another program), as it may any thread (src/shell/zygote.rs's
/// `place_apart` does the same for the launcher it forks).
fn leave_cpu(cpu: Option<usize>) {
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    use nix::unistd::Pid;
    let this_thread = Pid::from_raw(0);
    let (Some(cpu), Ok(ours)) = (cpu, sched_getaffinity(this_thread)) else {
        return;
    };
    let mut apart = ours;
    if apart.unset(cpu).is_err() {
        return;
    }
    if (0..CpuSet::count()).any(|c| apart.is_set(c).unwrap_or(false))
        && sched_setaffinity(this_thread, &apart).is_ok()
    {
        let _ = sched_setaffinity(this_thread, &ours);
    }
}

/// The walk's filters, if any (always none for `Unfiltered`).
fn filters_of<P: Filter>(opts: &Options<P>) -> Option<&Filters> {
    opts.filters.as_ref().map(Filter::filters)
}

pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().min(12))
        .unwrap_or(1)
}

enum JobDir {
    Open(DirHandle),
    Child(Arc<DirHandle>, OsString),
    /// Some of a listed directory's other entries (files, links …), to visit: a directory with
    /// many files is shared out between threads, as ripgrep shares out its files.
    Files(Arc<DirHandle>, Arc<Listing>, Range<usize>),
}

struct Job {
    dir: JobDir,
    /// Root-relative path of the directory ("" for the root).
    path: String,
    /// The directory's depth (0 for the start).
    depth: usize,
    /// The rules of the directory's parent (`Files`: of the directory itself).
    rules: Option<Arc<Rules>>,
}

/// Entries visited by one thread in one go, where a file is quick to visit (grep, find): the
/// rest of a large directory goes to the queue when another thread is waiting for work.
pub const FILES_PER_JOB: usize = 64;

struct Queue {
    jobs: Vec<Job>,
    /// Workers holding a job (which may add more).
    active: usize,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
    /// Workers waiting for a job: a directory's files are shared out only then (sharing
    /// costs a job and a wake-up, worth it only to a thread with nothing else to do).
    waiting: AtomicUsize,
    quit: AtomicBool,
    /// The call's cancellation (sneaky-mcp's `notifications/cancelled`): stops the walk too.
    cancel: crate::cancel::Cancel,
    /// git's global excludes file, read the first time a repository is seen.
    global: OnceLock<Gitignore>,
    /// The read-deny list: denied entries are skipped (not reported, not entered), and a
    /// denied file is not opened under another name.
    deny: Option<Arc<DenyRead>>,
    /// Whether every file of the read-deny list has one name, looked at once per walk, the
    /// first time a visitor asks (`Entry::open_file_lean`).
    one_name_each: OnceLock<bool>,
    /// The workspace root, when some of the read-deny list can lie in the workspace.
    denied_here: Option<std::path::PathBuf>,
}

impl Shared {
    /// A visitor quit the walk, or the call was cancelled.
    fn stopped(&self) -> bool {
        self.quit.load(Ordering::Relaxed) || self.cancel.is_cancelled()
    }

    /// The next directory to read, or None when there is no work left (or the walk quit).
    ///
    /// A worker without a job is not woken by the one that queues the next: it yields its CPU
    /// for a while, then sleeps in short steps, as ripgrep's walker does. The scheduler puts
    /// a thread woken by another on the waker's CPU, behind it, and this machine's kernel
    /// left it there for milliseconds while the other CPU stood idle; a thread that wakes
    /// from its own sleep stays on its own CPU. Only the end of the walk wakes sleepers.
    fn next(&self) -> Option<Job> {
        let mut idle_since: Option<std::time::Instant> = None;
        let got = loop {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            if self.stopped() {
                break None;
            }
            if let Some(job) = q.jobs.pop() {
                q.active += 1;
                break Some(job);
            }
            if q.active == 0 {
                break None;
            }
            let since = *idle_since.get_or_insert_with(|| {
                self.waiting.fetch_add(1, Ordering::Relaxed);
                std::time::Instant::now()
            });
            let idle = since.elapsed();
            if idle < IDLE_SPIN {
                drop(q);
                std::thread::yield_now();
            } else {
                let nap = idle.min(IDLE_NAP_MAX).max(IDLE_NAP_MIN);
                drop(self.wake.wait_timeout(q, nap));
            }
        };
        if idle_since.is_some() {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
        }
        if got.is_none() {
            self.wake.notify_all();
        }
        got
    }

    /// More work, for whoever asks next (see `next`: nobody is woken for it).
    fn push(&self, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.jobs.extend(jobs);
    }

    fn done(&self, children: Vec<Job>) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.active -= 1;
        q.jobs.extend(children);
        if q.active == 0 && q.jobs.is_empty() {
            // The walk is over: sleepers need not wait out their nap.
            self.wake.notify_all();
        }
    }
}

/// How long a worker without a job yields its CPU before it sleeps (see `Shared::next`):
/// about what the first directories take to list, before there is work for every thread.
const IDLE_SPIN: std::time::Duration = std::time::Duration::from_micros(500);
/// A sleeping worker's naps: as long as it has been idle, within these bounds.
const IDLE_NAP_MIN: std::time::Duration = std::time::Duration::from_micros(100);
const IDLE_NAP_MAX: std::time::Duration = std::time::Duration::from_millis(1);

fn worker<V, P: Filter>(shared: &Shared, opts: &Options<P>, mut visit: V)
where
    V: FnMut(&Entry<'_>) -> Flow,
{
    while let Some(job) = shared.next() {
        let children = read_dir(shared, opts, job, &mut visit);
        shared.done(children);
    }
}

/// Read one directory (or visit a share of one): report its entries; subdirectories go to the
/// queue before this thread visits the files, and shares of a large directory's files when
/// another thread waits for work.
fn read_dir<V, P: Filter>(shared: &Shared, opts: &Options<P>, job: Job, visit: &mut V) -> Vec<Job>
where
    V: FnMut(&Entry<'_>) -> Flow,
{
    let (handle, unread) = match job.dir {
        JobDir::Open(h) => (h, false),
        JobDir::Child(parent, name) => match parent.open_subdir(&name) {
            Ok(h) => (h, true),
            // Gone, unreadable, or swapped for a link since it was listed: skip it.
            Err(_) => return Vec::new(),
        },
        JobDir::Files(handle, listing, range) => {
            let here = Dir {
                handle: &handle,
                listing: &listing,
                path: &job.path,
                depth: job.depth,
                rules: job.rules.as_ref(),
            };
            return visit_files(shared, opts, &here, range, visit);
        }
    };
    let listed = if unread {
        handle.listing_unread()
    } else {
        handle.listing()
    };
    let Ok(mut listing) = listed else {
        return Vec::new();
    };
    let rules = match (filters_of(opts), job.rules) {
        (Some(f), Some(parent)) => Some(Rules::child(
            parent,
            &job.path,
            &handle,
            &listing,
            f.custom_ignore,
        )),
        _ => None,
    };
    let handle = Arc::new(handle);
    // Directories first: their jobs are queued before this thread turns to the files.
    let dirs = listing.directories_first();
    let listing = Arc::new(listing);
    let here = Dir {
        handle: &handle,
        listing: &listing,
        path: &job.path,
        depth: job.depth,
        rules: rules.as_ref(),
    };
    let jobs = visit_entries(shared, opts, &here, 0..dirs, visit);
    shared.push(jobs);
    visit_files(shared, opts, &here, dirs..listing.len(), visit)
}

/// Visit a directory's files (and other entries that are not directories), a share at a
/// time; while another thread waits for work, what is left beyond this thread's next share
/// goes to the queue in shares.
fn visit_files<V, P: Filter>(
    shared: &Shared,
    opts: &Options<P>,
    dir: &Dir<'_>,
    mut range: Range<usize>,
    visit: &mut V,
) -> Vec<Job>
where
    V: FnMut(&Entry<'_>) -> Flow,
{
    let share = opts.files_per_job.max(1);
    let mut children = Vec::new();
    while !range.is_empty() {
        if opts.threads > 1 && range.len() > share && shared.waiting.load(Ordering::Relaxed) > 0 {
            let mut shares = Vec::new();
            let mut at = range.start + share;
            while at < range.end {
                let to = (at + share).min(range.end);
                shares.push(Job {
                    dir: JobDir::Files(dir.handle.clone(), dir.listing.clone(), at..to),
                    path: dir.path.to_string(),
                    depth: dir.depth,
                    rules: dir.rules.cloned(),
                });
                at = to;
            }
            range.end = range.start + share;
            shared.push(shares);
        }
        let to = (range.start + share).min(range.end);
        children.extend(visit_entries(shared, opts, dir, range.start..to, visit));
        range.start = to;
        if shared.stopped() {
            break;
        }
    }
    children
}

/// A listed directory, as its entries are visited.
struct Dir<'a> {
    handle: &'a Arc<DirHandle>,
    listing: &'a Arc<Listing>,
    /// Root-relative path ("" for the root).
    path: &'a str,
    depth: usize,
    /// Its own ignore rules.
    rules: Option<&'a Arc<Rules>>,
}

/// Filter and visit some entries of a directory; the subdirectories to walk.
fn visit_entries<V, P: Filter>(
    shared: &Shared,
    opts: &Options<P>,
    dir: &Dir<'_>,
    entries: Range<usize>,
    visit: &mut V,
) -> Vec<Job>
where
    V: FnMut(&Entry<'_>) -> Flow,
{
    let depth = dir.depth + 1;
    let descend = opts.max_depth.map_or(true, |max| depth < max);
    let mut children = Vec::new();
    let mut path = String::with_capacity(dir.path.len() + 64);
    for i in entries {
        if shared.stopped() {
            break;
        }
        let (name, kind) = (dir.listing.name(i), dir.listing.kind(i));
        path.clear();
        if !dir.path.is_empty() {
            path.push_str(dir.path);
            path.push('/');
        }
        let base_at = path.len();
        // A UTF-8 name (nearly all) through `to_str`: a little cheaper than
        // `to_string_lossy`'s check, which gives the same name then.
        match name.to_str() {
            Some(name) => path.push_str(name),
            None => path.push_str(&name.to_string_lossy()),
        }
        if let (Some(root), Some(deny)) = (&shared.denied_here, &shared.deny) {
            if deny.by_path(&root.join(&path)).is_some() {
                continue;
            }
        }
        let is_dir = kind == Kind::Dir;
        if let Some(f) = filters_of(opts) {
            let base = path.get(base_at..).unwrap_or("");
            if skip(
                shared,
                f,
                dir.rules.map(|r| &**r),
                (&path, base),
                name,
                is_dir,
            ) {
                continue;
            }
        }
        let flow = visit(&Entry {
            path: &path,
            name,
            dir_len: base_at,
            kind,
            depth,
            dir: dir.handle,
            is_start: false,
            deny: shared.deny.as_deref(),
            one_name_each: &shared.one_name_each,
        });
        match flow {
            Flow::Quit => {
                shared.quit.store(true, Ordering::Relaxed);
                break;
            }
            Flow::Continue if is_dir && descend => children.push(Job {
                dir: JobDir::Child(dir.handle.clone(), name.to_os_string()),
                path: path.clone(),
                depth,
                rules: dir.rules.cloned(),
            }),
            _ => {}
        }
    }
    children
}

/// ripgrep's order of precedence: globs, then ignore files, then types; hidden entries are
/// skipped unless a rule explicitly included them. `base`: the last component of `path`.
fn skip(
    shared: &Shared,
    f: &Filters,
    rules: Option<&Rules>,
    (path, base): (&str, &str),
    name: &OsStr,
    is_dir: bool,
) -> bool {
    let m = f.overrides.matched(path, is_dir);
    if !m.is_none() {
        return m.is_ignore();
    }
    let mut whitelisted = false;
    if let Some(rules) = rules {
        match rules.matched(shared, path, base, is_dir) {
            Match::Ignore(()) => return true,
            Match::Whitelist(()) => whitelisted = true,
            Match::None => {}
        }
    }
    let m = f.types.matched(path, is_dir);
    if m.is_ignore() {
        return true;
    }
    whitelisted |= m.is_whitelist();
    !whitelisted && !f.hidden && name.as_bytes().first() == Some(&b'.')
}

/// The ignore files of one directory, linked to its parent's.
struct Rules {
    parent: Option<Arc<Rules>>,
    /// Root-relative path of the directory ("" for the root).
    dir: String,
    custom: IgnoreFile,
    ignore: IgnoreFile,
    git: IgnoreFile,
    exclude: IgnoreFile,
    /// The directory holds `.git`: the root of a repository.
    has_git: bool,
    /// This directory or one above (within the workspace) is in a repository.
    any_git: bool,
}

impl Rules {
    fn root() -> Arc<Rules> {
        Arc::new(Rules {
            parent: None,
            dir: String::new(),
            custom: IgnoreFile::empty(),
            ignore: IgnoreFile::empty(),
            git: IgnoreFile::empty(),
            exclude: IgnoreFile::empty(),
            has_git: false,
            any_git: false,
        })
    }

    /// The rules below `dir`: its parent's when it has no ignore files of its own.
    fn child(
        parent: Arc<Rules>,
        dir: &str,
        handle: &DirHandle,
        entries: &Listing,
        custom_name: &str,
    ) -> Arc<Rules> {
        let has = |n: &str| entries.has(n.as_bytes()).is_some();
        let git_kind = entries.has(b".git");
        let (has_custom, has_ignore, has_gitignore) =
            (has(custom_name), has(".ignore"), has(".gitignore"));
        if !has_custom && !has_ignore && !has_gitignore && git_kind.is_none() {
            return parent;
        }
        let load = |present: bool, name: &str| {
            if present {
                read_rules(handle, Path::new(name))
            } else {
                IgnoreFile::empty()
            }
        };
        let exclude = match git_kind {
            Some(Kind::Dir) => read_rules(handle, Path::new(".git/info/exclude")),
            _ => IgnoreFile::empty(),
        };
        let has_git = git_kind.is_some();
        Arc::new(Rules {
            any_git: parent.any_git || has_git,
            parent: Some(parent),
            dir: dir.to_string(),
            custom: load(has_custom, custom_name),
            ignore: load(has_ignore, ".ignore"),
            git: load(has_gitignore, ".gitignore"),
            exclude,
            has_git,
        })
    }

    /// The first rule that decides, as the `ignore` crate orders them: per kind, the deepest
    /// directory's file wins; the tool's own file beats .ignore, which beats .gitignore, which
    /// beats .git/info/exclude, which beats git's global excludes. Git's files count only
    /// inside a repository, and not above its root.
    fn matched(&self, shared: &Shared, path: &str, base: &str, is_dir: bool) -> Match<()> {
        let any_git = self.any_git;
        let (mut custom, mut ignore, mut git, mut exclude) =
            (Match::None, Match::None, Match::None, Match::None);
        let mut saw_git = false;
        let mut level = Some(self);
        while let Some(rules) = level {
            let rel = relative_to(path, &rules.dir);
            // A file without rules is passed over here, not asked: four calls per entry and
            // level, most of them to empty files, were 28M of sneaky-find's 346M instructions
            // (find '*.rs' over 200,000 files with one .gitignore).
            if custom.is_none() && !rules.custom.is_empty() {
                custom = rules.custom.matched(rel, base, is_dir);
            }
            if ignore.is_none() && !rules.ignore.is_empty() {
                ignore = rules.ignore.matched(rel, base, is_dir);
            }
            if any_git && !saw_git {
                if git.is_none() && !rules.git.is_empty() {
                    git = rules.git.matched(rel, base, is_dir);
                }
                if exclude.is_none() && !rules.exclude.is_empty() {
                    exclude = rules.exclude.matched(rel, base, is_dir);
                }
            }
            saw_git |= rules.has_git;
            level = rules.parent.as_deref();
        }
        let global = if any_git {
            shared
                .global
                .get_or_init(global_excludes)
                .matched(path, is_dir)
                .map(|_| ())
        } else {
            Match::None
        };
        custom.or(ignore).or(git).or(exclude).or(global)
    }
}

/// git's global excludes file, as `GitignoreBuilder::build_global` finds and reads it, without
/// its cost where that cannot change the answer. build_global looks for `core.excludesFile`
/// in each git configuration file that exists ($GIT_CONFIG_GLOBAL, ~/.gitconfig,
/// $XDG_CONFIG_HOME/git/config, $GIT_CONFIG_SYSTEM or /etc/gitconfig) with a regular
/// expression it compiles first: 1.4 million instructions, more than all the rest of a grep
/// of one file, in every walk inside a repository. Where no configuration file holds the word
/// `excludesfile` (in any case) that expression cannot match, and the file is the default one,
/// $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore, read here as build_global reads it.
fn global_excludes() -> Gitignore {
    #[allow(deprecated)] // build_global's own notion of the home directory
    let home = std::env::home_dir();
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let xdg = var("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let configs = [
        var("GIT_CONFIG_GLOBAL").map(std::path::PathBuf::from),
        home.as_ref().map(|h| h.join(".gitconfig")),
        xdg.as_ref().map(|x| x.join("git/config")),
        Some(var("GIT_CONFIG_SYSTEM").map_or_else(|| "/etc/gitconfig".into(), Into::into)),
    ];
    let names_excludes_file =
        |path: &Path| std::fs::read(path).is_ok_and(|text| mentions_excludes_file(&text));
    if configs.iter().flatten().any(|p| names_excludes_file(p)) {
        return GitignoreBuilder::new(RULES_ROOT).build_global().0;
    }
    let Some(default) = xdg.map(|x| x.join("git/ignore")).filter(|p| p.is_file()) else {
        return Gitignore::empty();
    };
    let mut builder = GitignoreBuilder::new(RULES_ROOT);
    let _ = builder.add(default);
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Whether a git configuration file's text holds `excludesfile` in any ASCII case (as the
/// expression build_global matches it with, `(?i-u)`).
fn mentions_excludes_file(text: &[u8]) -> bool {
    const WORD: &[u8] = b"excludesfile";
    text.windows(WORD.len())
        .any(|w| w.eq_ignore_ascii_case(WORD))
}

/// `path` relative to the directory `dir` it lies beneath ("" is the root).
fn relative_to<'a>(path: &'a str, dir: &str) -> &'a str {
    if dir.is_empty() {
        return path;
    }
    path.strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
}

/// The rules of the directories above the start (the root down to its parent), whose ignore
/// files apply below them as ripgrep's do.
fn ancestor_rules(ws: &Workspace, start: &str, custom_name: &str) -> Arc<Rules> {
    let mut rules = Rules::root();
    for (dir, handle) in ws.ancestors(start) {
        let Ok(entries) = handle.listing() else {
            break;
        };
        rules = Rules::child(rules, &dir, &handle, &entries, custom_name);
    }
    rules
}

/// A gitignore-format file read through a directory handle (not followed if it is a link);
/// unreadable or malformed lines are skipped, as git and ripgrep skip them.
fn read_rules(dir: &DirHandle, name: &Path) -> IgnoreFile {
    let mut parts = name.iter();
    let mut cur: Option<DirHandle> = None;
    let mut last = None;
    for part in parts.by_ref() {
        if let Some(prev) = last.take() {
            let next = match &cur {
                Some(c) => c.open_subdir(prev),
                None => dir.open_subdir(prev),
            };
            match next {
                Ok(h) => cur = Some(h),
                Err(_) => return IgnoreFile::empty(),
            }
        }
        last = Some(part);
    }
    let Some(file_name) = last else {
        return IgnoreFile::empty();
    };
    let file = match &cur {
        Some(c) => c.open_file(file_name),
        None => dir.open_file(file_name),
    };
    let Ok(file) = file else {
        return IgnoreFile::empty();
    };
    let mut bytes = Vec::new();
    if file
        .take(MAX_IGNORE_FILE_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return IgnoreFile::empty();
    }
    let text = String::from_utf8_lossy(&bytes);
    IgnoreFile::parse(&text)
}

/// One ignore file's rules: when every line is one our own matcher decides (names, paths and
/// simple globs: "target/", "*.log", "/dist", "!keep.log", "[Dd]ebug/", "**/packages/*": most
/// .gitignore files, Visual Studio's among them), the same decisions as the `ignore` crate's
/// globs, made here; otherwise the crate's globs. The crate compiles a regex and its DFA for
/// each glob that is more than a literal, extension or prefix (some 28M instructions for
/// Visual Studio's .gitignore, paid by every call), and matching an entry through it builds a
/// candidate and takes a scratch list from a shared pool (a lock, for all but one thread) for
/// every entry walked.
enum IgnoreFile {
    Simple(Vec<SimpleRule>),
    Globs(Gitignore),
}

/// A gitignore line as `GitignoreBuilder::add_line` turns it into a glob, matched here with
/// globset's semantics under `literal_separator`: components split at "/", each made of
/// literal bytes, "*" (any run of bytes), "?" (one byte: globset's regex matches bytes, not
/// characters) and classes of ASCII letters, digits, "_" and "." or ranges of them ("[Dd]",
/// "[a-z]"). Each is matched against one component of the path, so none of them can take a
/// "/", as none does in the crate.
#[derive(Debug)]
struct SimpleRule {
    /// The glob's components, in order.
    parts: Vec<Component>,
    /// The components match the whole path from the file's directory (the line had a "/"
    /// before its end), not only its last components: a line without a "/" matches the name
    /// at any depth (the crate puts "**/" before it), and so do the components after a
    /// leading "**/".
    anchored: bool,
    dir_only: bool,
    whitelist: bool,
}

/// One component of a glob: its tokens, then the literal bytes it ends with, compared first
/// (most names differ in their last bytes, and comparing those needs no call).
#[derive(Debug)]
struct Component {
    head: Vec<Token>,
    tail: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
enum Token {
    Byte(u8),
    /// "?": one byte.
    Any,
    /// "*": any run of bytes, none too.
    Star,
    /// "[…]": the ASCII bytes it holds, one bit each.
    Class(u128),
}

impl SimpleRule {
    /// A line as `GitignoreBuilder::add_line` reads it: Ok(None) for a line that says nothing,
    /// Err(()) for one whose glob syntax is left to the crate: escapes, alternatives, "**"
    /// anywhere but a leading "**/", and classes other than the simple ones described above.
    fn parse(line: &str) -> std::result::Result<Option<SimpleRule>, ()> {
        if line.starts_with('#') {
            return Ok(None);
        }
        if line.contains(['\\', '{', '}']) {
            return Err(());
        }
        let line = line.trim_end_matches(' ');
        let (whitelist, line) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let (absolute, line) = match line.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        if line.is_empty() {
            return Ok(None);
        }
        let (dir_only, line) = match line.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let (anchored, line) = match line.strip_prefix("**/") {
            Some(rest) => (false, rest),
            None => (absolute || line.contains('/'), line),
        };
        // Nothing left after "**/" ("**//") is the crate's "every path"; any other "**" is
        // left to the crate too.
        if line.is_empty() || line.contains("**") {
            return Err(());
        }
        let parts = line
            .split('/')
            .map(Component::parse)
            .collect::<Result<_, _>>()?;
        Ok(Some(SimpleRule {
            parts,
            anchored,
            dir_only,
            whitelist,
        }))
    }

    /// `rel`: the path from the ignore file's directory; `name`: its last component.
    fn matches(&self, rel: &str, name: &str) -> bool {
        let Some((last, parents)) = self.parts.split_last() else {
            return false;
        };
        if !last.matches(name.as_bytes()) {
            return false;
        }
        let mut dirs = rel.rsplit('/').skip(1);
        for part in parents.iter().rev() {
            match dirs.next() {
                Some(dir) if part.matches(dir.as_bytes()) => {}
                _ => return false,
            }
        }
        !self.anchored || dirs.next().is_none()
    }
}

impl Component {
    /// One component of a line (no "/" in it).
    fn parse(text: &str) -> std::result::Result<Component, ()> {
        let literal = text.rfind(['*', '?', ']']).map_or(0, |i| i + 1);
        let (head, tail) = text.split_at(literal);
        if tail.contains('[') {
            return Err(());
        }
        let mut bytes = head.bytes();
        let mut tokens = Vec::new();
        while let Some(b) = bytes.next() {
            tokens.push(match b {
                b'*' => Token::Star,
                b'?' => Token::Any,
                b'[' => Token::Class(parse_class(&mut bytes)?),
                b']' => return Err(()),
                b => Token::Byte(b),
            });
        }
        Ok(Component {
            head: tokens,
            tail: tail.as_bytes().to_vec(),
        })
    }

    fn matches(&self, name: &[u8]) -> bool {
        if self
            .tail
            .last()
            .is_some_and(|last| name.last() != Some(last))
        {
            return false;
        }
        match name.strip_suffix(self.tail.as_slice()) {
            Some(rest) => glob_matches(&self.head, rest),
            None => false,
        }
    }
}

/// A class after its "[", up to its "]": members and ranges ("a-z") of ASCII letters, digits,
/// "_" and "."; anything else (negation, "]" or "-" as a member, POSIX classes, a range the
/// crate refuses or reads otherwise, no "]") is left to the crate.
fn parse_class(bytes: &mut impl Iterator<Item = u8>) -> std::result::Result<u128, ()> {
    let member = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let mut set = 0u128;
    // The last single member, which a "-" turns into the start of a range.
    let mut single = None;
    loop {
        match bytes.next().ok_or(())? {
            b']' if set != 0 => return Ok(set),
            b'-' => {
                let (Some(lo), Some(hi)) = (single.take(), bytes.next()) else {
                    return Err(());
                };
                if !member(hi) || hi < lo {
                    return Err(());
                }
                set |= (lo..=hi).fold(0, |s, b| s | 1 << b);
            }
            b if member(b) => {
                set |= 1 << b;
                single = Some(b);
            }
            _ => return Err(()),
        }
    }
}

/// Whether `tokens` match the whole of `name` (a component: no "/" in it). Every token but a
/// star takes one byte; on a mismatch only the last star takes one more byte and matching
/// resumes after it (enough: a later star can take whatever an earlier one would have left),
/// so the time is at most the product of the two lengths.
fn glob_matches(tokens: &[Token], name: &[u8]) -> bool {
    let (mut t, mut n) = (0, 0);
    // The token after the last star and where its match in `name` starts now.
    let mut resume = None;
    loop {
        match tokens.get(t) {
            Some(Token::Star) => {
                resume = Some((t + 1, n));
                t += 1;
                continue;
            }
            Some(&token) if n < name.len() && token.takes(name[n]) => {
                t += 1;
                n += 1;
                continue;
            }
            None if n == name.len() => return true,
            _ => {}
        }
        match resume {
            Some((after, start)) if start < name.len() => {
                resume = Some((after, start + 1));
                (t, n) = (after, start + 1);
            }
            _ => return false,
        }
    }
}

impl Token {
    /// Whether this token takes the byte `b` (a star is `glob_matches`' to handle).
    fn takes(self, b: u8) -> bool {
        match self {
            Token::Byte(byte) => byte == b,
            Token::Any => true,
            Token::Class(set) => b < 128 && set >> b & 1 == 1,
            Token::Star => false,
        }
    }
}

impl IgnoreFile {
    fn empty() -> IgnoreFile {
        IgnoreFile::Simple(Vec::new())
    }

    /// Whether it has no rule (no line, or none but comments and blanks).
    fn is_empty(&self) -> bool {
        match self {
            IgnoreFile::Simple(rules) => rules.is_empty(),
            IgnoreFile::Globs(globs) => globs.is_empty(),
        }
    }

    /// An ignore file's text (the byte order mark at its start is not part of its first line).
    fn parse(text: &str) -> IgnoreFile {
        let text = text.trim_start_matches('\u{feff}');
        let simple: std::result::Result<Vec<Option<SimpleRule>>, ()> =
            text.lines().map(SimpleRule::parse).collect();
        if let Ok(rules) = simple {
            return IgnoreFile::Simple(rules.into_iter().flatten().collect());
        }
        let mut builder = GitignoreBuilder::new(RULES_ROOT);
        for line in text.lines() {
            let _ = builder.add_line(None, line);
        }
        IgnoreFile::Globs(builder.build().unwrap_or_else(|_| Gitignore::empty()))
    }

    /// As `Gitignore::matched`: the last line that matches decides (a line for directories
    /// only passes over anything else). `name`: the last component of `rel`.
    fn matched(&self, rel: &str, name: &str, is_dir: bool) -> Match<()> {
        let rules = match self {
            IgnoreFile::Globs(globs) => return globs.matched(rel, is_dir).map(|_| ()),
            IgnoreFile::Simple(rules) => rules,
        };
        for rule in rules.iter().rev() {
            if (is_dir || !rule.dir_only) && rule.matches(rel, name) {
                return if rule.whitelist {
                    Match::Whitelist(())
                } else {
                    Match::Ignore(())
                };
            }
        }
        Match::None
    }
}

/// A C string's bytes as an OsStr.
pub fn os_name(name: &CStr) -> &OsStr {
    OsStr::from_bytes(name.to_bytes())
}

/// Keeps the `cap` smallest items seen (in their `Ord`), counting all of them: memory stays
/// bounded (at most twice the cap between prunes) and the kept set does not depend on the
/// order threads deliver items in.
pub struct TopN<T: Ord + Clone + Send> {
    cap: usize,
    inner: Mutex<Kept<T>>,
}

struct Kept<T> {
    items: Vec<T>,
    seen: u64,
    /// After a prune that kept `cap` items: the largest kept. Nothing not smaller can enter.
    bar: Option<T>,
}

impl<T: Ord + Clone + Send> TopN<T> {
    pub fn new(cap: usize) -> TopN<T> {
        TopN {
            cap,
            inner: Mutex::new(Kept {
                items: Vec::new(),
                seen: 0,
                bar: None,
            }),
        }
    }

    pub fn extend(&self, items: impl IntoIterator<Item = T>) {
        let Ok(mut kept) = self.inner.lock() else {
            return;
        };
        let kept = &mut *kept;
        for item in items {
            kept.seen += 1;
            if kept.bar.as_ref().is_some_and(|bar| item >= *bar) {
                continue;
            }
            kept.items.push(item);
            if kept.items.len() >= self.cap.saturating_mul(2).max(1024) {
                kept.items.sort_unstable();
                kept.items.truncate(self.cap);
                if kept.items.len() == self.cap {
                    kept.bar = kept.items.last().cloned();
                }
            }
        }
    }

    /// Once known: the largest item that can still be kept (anything not smaller cannot).
    pub fn bar(&self) -> Option<T> {
        self.inner.lock().ok()?.bar.clone()
    }

    /// How many items were seen so far.
    pub fn seen(&self) -> u64 {
        self.inner.lock().map(|k| k.seen).unwrap_or(0)
    }

    /// The kept items in order, and how many were seen in all.
    pub fn finish(self) -> (Vec<T>, u64) {
        let mut kept = self
            .inner
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        sort_halves(&mut kept.items);
        kept.items.truncate(self.cap);
        (kept.items, kept.seen)
    }
}

/// Sort, the two halves of a long list on two threads and then merged: the sort at the end of
/// a walk is work no walking thread shares, and it is most of what is left to do then (about
/// 40% of the time after the walk for sneaky-find's 180,000 paths).
fn sort_halves<T: Ord + Send>(items: &mut Vec<T>) {
    /// Below this a second thread costs more than it saves.
    const HALVES_FROM: usize = 16 * 1024;
    if items.len() < HALVES_FROM {
        items.sort_unstable();
        return;
    }
    let mut right = items.split_off(items.len() / 2);
    let left = items;
    std::thread::scope(|scope| {
        scope.spawn(|| right.sort_unstable());
        left.sort_unstable();
    });
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let mut a = std::mem::take(left).into_iter().peekable();
    let mut b = right.into_iter().peekable();
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        let next = if x <= y { a.next() } else { b.next() };
        merged.extend(next);
    }
    merged.extend(a);
    merged.extend(b);
    *left = merged;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walking thread moves off the CPU it is told to leave, and keeps the CPUs it may
    /// run on.
    #[test]
    fn a_walking_thread_leaves_the_first_threads_cpu() {
        use nix::sched::{sched_getaffinity, sched_getcpu, CpuSet};
        let this_thread = nix::unistd::Pid::from_raw(0);
        let allowed = sched_getaffinity(this_thread).expect("affinity");
        let cpus = (0..CpuSet::count())
            .filter(|&c| allowed.is_set(c).unwrap_or(false))
            .count();
        if cpus < 2 {
            eprintln!("skipped: this process may run on one CPU only");
            return;
        }
        std::thread::spawn(move || {
            for _ in 0..20 {
                let here = sched_getcpu().expect("cpu");
                leave_cpu(Some(here));
                assert_ne!(sched_getcpu().expect("cpu"), here);
                assert_eq!(sched_getaffinity(this_thread).expect("affinity"), allowed);
            }
        })
        .join()
        .expect("thread");
    }

    #[test]
    fn top_n_keeps_the_smallest_whatever_the_order() {
        let t = TopN::new(3);
        t.extend([9, 1, 7]);
        t.extend([3, 8, 2]);
        let (kept, total) = t.finish();
        assert_eq!(kept, vec![1, 2, 3]);
        assert_eq!(total, 6);
        let t = TopN::new(5);
        t.extend([2, 1]);
        assert_eq!(t.finish(), (vec![1, 2], 2));
        // Past the prune threshold the bar keeps later, larger items out.
        let t = TopN::new(10);
        t.extend((0..5000).rev());
        assert!(t.bar().is_some_and(|bar| bar >= 9));
        let (kept, total) = t.finish();
        assert_eq!((kept, total), ((0..10).collect::<Vec<_>>(), 5000));
    }

    #[test]
    fn long_lists_sort_in_halves_as_in_one() {
        // Past the size that sorts on two threads; duplicates and both halves' ends mixed.
        let items: Vec<String> = (0..40_000u64)
            .map(|i| format!("d{}/f{}", i * 7919 % 1000, i * 104_729 % 30_011))
            .collect();
        let mut expected = items.clone();
        expected.sort();
        let t = TopN::new(usize::MAX);
        t.extend(items.iter().cloned());
        assert_eq!(t.finish(), (expected.clone(), 40_000));
        let t = TopN::new(25_000);
        t.extend(items);
        let (kept, total) = t.finish();
        assert_eq!((kept.as_slice(), total), (&expected[..25_000], 40_000));
    }

    /// What `ours` and the ignore crate decide for `path`, as a file and as a directory.
    fn decisions(ours: &IgnoreFile, theirs: &Gitignore, path: &str) -> [[(bool, bool); 2]; 2] {
        let kind = |m: Match<()>| (m.is_ignore(), m.is_whitelist());
        let name = path.rsplit('/').next().unwrap_or(path);
        [false, true].map(|is_dir| {
            [
                kind(ours.matched(path, name, is_dir)),
                kind(theirs.matched(path, is_dir).map(|_| ())),
            ]
        })
    }

    fn as_gitignore(text: &str) -> Gitignore {
        let mut builder = GitignoreBuilder::new(RULES_ROOT);
        for line in text.lines() {
            let _ = builder.add_line(None, line);
        }
        builder.build().expect("globs")
    }

    /// The .gitignore of Visual Studio projects (github/gitignore's VisualStudio.gitignore, as
    /// MediatR carries it): 129 rules, a third of them globs.
    const VISUAL_STUDIO: &str = include_str!("../../tests/fixtures/visual_studio.gitignore");

    /// Lines of ignore files: names, paths, the globs we match and their corner cases.
    const LINES: &[&str] = &[
        "target/",
        "*.log",
        "/dist",
        "!keep.log",
        "a/b",
        "a/b/",
        "/a",
        "*",
        "!*.rs",
        ".env",
        "# c",
        "",
        "   ",
        "x  ",
        "!",
        "/",
        "!/",
        "node_modules",
        "*.tar.gz",
        "build/",
        "!build/",
        "ab",
        "\u{e9}",
        "*\u{e9}",
        "! y",
        "a//",
        "c/d/e",
        "!/dist",
        "#!x",
        "x\t",
        "[Dd]ebug/",
        "[Tt]est[Rr]esult*/",
        "*_i.c",
        "*.[Cc]ache",
        "!*.[Cc]ache/",
        "DocProject/Help/*.HxT",
        "**/packages/*",
        "!**/packages/build/",
        "~$*",
        ".*crunch*.local.xml",
        "*.mm.*",
        "a*b*c",
        "*a*b*",
        "?",
        "??",
        "x?z",
        "\u{e9}?",
        "?\u{e9}",
        "[a-z]*",
        "/[0-9]?.txt",
        "**/a/b",
        "/**/q",
        "**/\u{e9}",
        "*.[ch]",
        "[._]*.sw[a-p]",
        "a/*/c",
        "*/b",
        "!/*/b/",
        "[A-Z]",
        "[.-9]x",
        "[Z-a]",
        "x*",
        "*?",
        "?*?",
        "a,b",
        "!!x",
        "a!",
    ];

    /// Paths the lines are matched against, each as a file and as a directory.
    const PATHS: &[&str] = &[
        "target",
        "a/target",
        "x.log",
        "a/x.log",
        "dist",
        "a/dist",
        "keep.log",
        "z/keep.log",
        "a/b",
        "c/a/b",
        "a",
        "b/a",
        "x.rs",
        ".env",
        "node_modules",
        "z.tar.gz",
        "z.gz",
        "build",
        "q/build",
        "\u{e9}",
        "x\u{e9}",
        "\u{e9}\u{e9}",
        "\u{e9}x",
        "a/\u{e9}",
        "x",
        "x ",
        "ab",
        "a.b",
        "c/d/e",
        "c/d",
        " y",
        "y",
        ".log",
        "tar.gz",
        "x\t",
        "#!x",
        "Debug",
        "debug",
        "DEBUG",
        "x/Debug",
        "TestResults",
        "testresult",
        "TestResult",
        "Tests",
        "foo_i.c",
        "_i.c",
        "a.cache",
        "a.Cache",
        "a.CACHE",
        "x/.cache",
        "DocProject/Help/x.HxT",
        "DocProject/Help/x.hxt",
        "DocProject/Help/a/x.HxT",
        "z/DocProject/Help/x.HxT",
        "packages",
        "packages/p",
        "a/packages/p",
        "packages/build",
        "a/b/packages/build",
        "packages/p/q",
        "~$x",
        "~$",
        "~x",
        ".xcrunchy.local.xml",
        ".crunch.local.xml",
        "a.crunch.local.xml",
        ".crunch.local.xm",
        "x.mm.y",
        "x.mm.",
        ".mm.",
        "xmm.y",
        "abc",
        "aXbYc",
        "acb",
        "abcc",
        "aXbYcZ",
        "cba",
        "1a.txt",
        "12.txt",
        "a/1a.txt",
        "a/b/c",
        "a/x/c",
        "a/x/y/c",
        "x/a/b",
        "q",
        "z/q",
        "x.c",
        "x.h",
        ".a.swp",
        "_x.swz",
        "A",
        "Z",
        "[",
        "_",
        "/x",
        ".x",
        "xyz",
        "xz",
        "a,b",
        "!x",
        "!!x",
        "a!",
        "b",
        "z/b",
        "z/y/b",
    ];

    /// Ignore files our own matcher decides decide as the ignore crate's globs do, line by
    /// line and together.
    #[test]
    fn simple_ignore_files_match_as_gitignore() {
        let mut files: Vec<String> = LINES.iter().map(|l| l.to_string()).collect();
        for (i, a) in LINES.iter().enumerate() {
            files.push(format!(
                "{a}\n{}\n{}",
                LINES[(i * 7 + 3) % LINES.len()],
                LINES[(i * 11 + 5) % LINES.len()]
            ));
        }
        files.push(LINES.join("\n"));
        files.push(format!("\u{feff}{}", LINES.join("\n")));
        files.push(VISUAL_STUDIO.to_string());
        let mut simple = 0;
        for text in &files {
            let ours = IgnoreFile::parse(text);
            simple += usize::from(matches!(ours, IgnoreFile::Simple(_)));
            let theirs = as_gitignore(text.trim_start_matches('\u{feff}'));
            for path in PATHS {
                let [file, dir] = decisions(&ours, &theirs, path);
                assert_eq!(file[0], file[1], "{text:?} on file {path:?}");
                assert_eq!(dir[0], dir[1], "{text:?} on directory {path:?}");
            }
        }
        assert!(
            simple > files.len() * 9 / 10,
            "{simple} of {} simple",
            files.len()
        );
        assert!(matches!(
            IgnoreFile::parse(VISUAL_STUDIO),
            IgnoreFile::Simple(_)
        ));
        for glob in [
            "\\#x",
            "x\\ ",
            "x/**",
            "a/**/b",
            "**",
            "**/",
            "/**/",
            "**//",
            "**/**/x",
            "a**",
            "**.log",
            "{a,b}",
            "*.{cs,vb}",
            "a}",
            "[!a]",
            "[^a]",
            "[]a]",
            "[]",
            "[a-]",
            "[-a]",
            "[z-a]",
            "[a-b-c]",
            "[[:alpha:]]",
            "[/]",
            "[a",
            "a[",
            "a]",
            "[\u{e9}]",
            "[a*]",
        ] {
            assert!(
                matches!(IgnoreFile::parse(glob), IgnoreFile::Globs(_)),
                "{glob}"
            );
        }
    }

    /// Names made of a few bytes, every one up to four long, against globs of stars, "?" and
    /// classes: what the matcher's backtracking must get right.
    #[test]
    fn simple_globs_match_every_short_name_as_gitignore() {
        let mut names = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = names
                .iter()
                .flat_map(|n| ["a", "b", "c", ".", "\u{e9}"].map(|b| format!("{n}{b}")))
                .collect();
            names.extend(longer);
        }
        names.retain(|n| !n.is_empty());
        for line in [
            "a*b*c", "*a*", "*ab", "a*", "*.*", "?", "??", "???", "?*?", "*?a", "a?*b", "[ab]*c",
            "*[bc]?", "a*b?", "*a*a*", "**/a?", "\u{e9}*", "*\u{e9}?", "[a-c]", "*.[ab]*",
        ] {
            let (ours, theirs) = (IgnoreFile::parse(line), as_gitignore(line));
            assert!(matches!(ours, IgnoreFile::Simple(_)), "{line}");
            for name in &names {
                for path in [name.clone(), format!("d/{name}")] {
                    let [file, dir] = decisions(&ours, &theirs, &path);
                    assert_eq!(file[0], file[1], "{line:?} on file {path:?}");
                    assert_eq!(dir[0], dir[1], "{line:?} on directory {path:?}");
                }
            }
        }
    }

    /// The configuration texts in which build_global's expression finds `core.excludesFile`
    /// all hold the word, so the ones without it can skip the expression.
    #[test]
    fn configs_naming_an_excludes_file_hold_the_word() {
        use grep_matcher::Matcher;
        let theirs = grep_regex::RegexMatcherBuilder::new()
            .build(r#"(?im-u)^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$"#)
            .expect("regex");
        let texts: &[&[u8]] = &[
            b"[core]\n\texcludesFile = ~/.gitignore_global\n",
            b"[core]\n  EXCLUDESFILE=\"/tmp/x\"\n",
            b"[user]\n\tname = A\n[core]\n\texcludesfile = \"  ~/g i\"\n",
            b"excludesfile =\n",
            b"[core]\n\texcludes-file = x\n",
            b"[core]\n\texcludes file = x\n",
            b"[user]\n\temail = a@b\n",
            b"\xff\xfe[core]\n\tExcludesFile = \xff\n",
            b"",
        ];
        for text in texts {
            let found = theirs.is_match(text).expect("match");
            assert!(!found || mentions_excludes_file(text), "{text:?}");
        }
        assert!(mentions_excludes_file(b"[core]\n\texcludesFile = ~/x\n"));
        assert!(mentions_excludes_file(b"EXCLUDESFILE"));
        assert!(!mentions_excludes_file(b"[core]\n\texcludes-file = x\n"));
        assert!(!mentions_excludes_file(b"excludesfil"));
    }

    #[test]
    fn relative_paths_strip_whole_components() {
        assert_eq!(relative_to("a/b/c", "a"), "b/c");
        assert_eq!(relative_to("a/b/c", ""), "a/b/c");
        assert_eq!(relative_to("ab/c", "a"), "ab/c");
    }
}
