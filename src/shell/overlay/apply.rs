//! The changes applied to the workspace: the paths git ignores and a nested repository's git
//! data straight (src/shell/overlay/straight.rs), the rest as one journaled change `undo` takes
//! back (src/fs/transition.rs); with `dry_run`, only their diff.
//!
//! Every path is applied as a file tool's edit is: reached beneath the root with no link
//! followed at any component, checked where it really lands (never the workspace's own
//! `.git`, a nested repository's `.git` only for the data git writes there, never a protected
//! or read-deny path), and acted on through that directory handle (src/fs/durable/landing.rs).
//! A path that can no longer be reached that way (a running job swapped a directory for a link
//! meanwhile) fails the apply, and the changes are kept where they were held.

use std::fs;
use std::os::unix::ffi::OsStringExt;

use nix::errno::Errno;
use nix::fcntl::{readlinkat, AtFlags};
use nix::sys::stat::fstatat;

use super::applied::{Applied, Changed};
use super::gitignore::Ignored;
use super::route::{nested_git, no_conflict, refused_configs, route, Route};
use super::scan::{expand_removed, scan, Found};
use super::scratch::Scratch;
use super::straight;
use crate::error::Result;
use crate::fs::durable::{self, lstat_no_links, Git};
use crate::fs::history::{self, Digest, Snapshot, State, Undoable};
use crate::fs::jail::{Kind, Workspace};
use crate::fs::transition::{self, Content, Step, To};

/// The changes sorted by what becomes of them.
#[derive(Default)]
struct Sorted {
    /// Recorded for undo.
    journaled: Vec<Step>,
    /// Paths git ignores: applied straight, not recorded.
    untracked: Vec<Step>,
    /// A nested repository's git data: applied straight, not recorded.
    nested: Vec<Step>,
    discarded: Vec<String>,
}

/// Turn the upper layer into changes, and apply them unless `dry_run`.
pub fn collect(
    ws: &Workspace,
    scratch: &Scratch,
    max_bytes: u64,
    cap: usize,
    dry_run: bool,
) -> Result<Applied> {
    let upper = scratch.upper();
    let scanned = scan(ws, &upper, scratch.placed());
    if scanned.found.is_empty() {
        // The usual case for a command that only reads: nothing more to look at.
        return Ok(Applied {
            diff: dry_run.then(String::new),
            reduced: scanned.reduced,
            ..Applied::default()
        });
    }
    let all = with_removed_trees(ws, scanned.found);
    let vcs_writable = ws.vcs_writes_allowed();
    if !dry_run {
        let linked = &scanned.linked_present;
        no_conflict(ws, &upper, &all, linked, scratch.started)?;
    }
    let mut sorted = sort(ws, &upper, all, vcs_writable);
    // What the history keeps (contents included); a file it cannot keep (over
    // undo.max_bytes) leaves the change unrecorded rather than lost.
    let (now, unrecordable) = match recordable_states(ws, &sorted.journaled, max_bytes) {
        Ok(now) => (now, None),
        Err(e) => (states(ws, &sorted.journaled)?, Some(e)),
    };
    let untracked_now = states(ws, &sorted.untracked)?;
    let nested_now = states(ws, &sorted.nested)?;
    let mut applied = Applied {
        changes: changed(&sorted.journaled, &now),
        untracked: changed(&sorted.untracked, &untracked_now),
        refused_configs: refused_configs(ws, &upper, &sorted.discarded),
        discarded: std::mem::take(&mut sorted.discarded),
        links_broken: links_broken(ws, &sorted),
        reduced: scanned.reduced,
        ..Applied::default()
    };
    if dry_run {
        let (diff, cut) = diff_of(&sorted.journaled, &now, cap);
        applied.diff = Some(diff);
        applied.diff_truncated = cut;
        return Ok(applied);
    }
    for steps in [
        &mut sorted.journaled,
        &mut sorted.untracked,
        &mut sorted.nested,
    ] {
        without_xattrs(steps)?;
    }
    // What goes first, what comes last: an untracked path may sit in a tracked directory
    // that the recorded change removes or makes.
    let nested_rule = |s: &Step| nested_git(&s.path, &s.to, vcs_writable);
    straight::remove(ws, &sorted.nested, &nested_now, nested_rule)?;
    straight::remove(ws, &sorted.untracked, &untracked_now, |_| Git::AsTools)?;
    applied.undo = match unrecordable {
        _ if sorted.journaled.is_empty() => Undoable::default(),
        None => apply_journaled(ws, &sorted.journaled, &now, max_bytes)?,
        Some(e) => {
            transition::apply(ws, &sorted.journaled, &now)?;
            Undoable {
                undo_unavailable: Some(e.message()),
                ..Undoable::default()
            }
        }
    };
    straight::add(ws, &sorted.untracked, &untracked_now, |_| Git::AsTools)?;
    straight::add(ws, &sorted.nested, &nested_now, nested_rule)?;
    Ok(applied)
}

/// A directory of the workspace that goes or becomes something else takes its contents with
/// it: each is a change of its own. Parents come before their children.
fn with_removed_trees(ws: &Workspace, found: Vec<Found>) -> Vec<Found> {
    let mut all = Vec::with_capacity(found.len());
    for f in found {
        let removes_tree = !matches!(f.to, To::Dir { .. }) && is_dir_now(ws, &f.path);
        let path = f.path.clone();
        all.push(f);
        if removes_tree {
            expand_removed(ws, &path, &mut all);
        }
    }
    all.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    all
}

/// Whether the workspace holds a real directory at `path` (reached without links).
fn is_dir_now(ws: &Workspace, path: &str) -> bool {
    lstat_no_links(ws, path)
        .is_ok_and(|st| st.is_some_and(|st| Kind::from_mode(st.st_mode) == Kind::Dir))
}

fn sort(ws: &Workspace, upper: &std::path::Path, all: Vec<Found>, vcs_writable: bool) -> Sorted {
    let mut ignored = Ignored::new(ws.root());
    let mut caches = CacheDirs::default();
    let mut sorted = Sorted::default();
    for f in all {
        let step = Step {
            path: f.path,
            to: f.to,
        };
        match route(ws, upper, &step.path, &step.to, vcs_writable) {
            Route::Discarded => sorted.discarded.push(step.path),
            Route::NestedGit => sorted.nested.push(step),
            Route::Workspace => {
                // What the workspace holds there now, looked up once for both questions.
                let now = lstat_no_links(ws, &step.path).ok().flatten();
                let now_dir = now.is_some_and(|st| Kind::from_mode(st.st_mode) == Kind::Dir);
                let is_dir = matches!(step.to, To::Dir { .. }) || now_dir;
                if ignored.ignores(&step.path, is_dir)
                    && !(now.is_some() && kept_change(ws, &mut caches, &step, now_dir))
                {
                    sorted.untracked.push(step);
                } else {
                    sorted.journaled.push(step);
                }
            }
        }
    }
    sorted
}

/// Whether the change of a path git ignores is one the history keeps all the same: a deletion
/// or an overwrite of what the workspace holds (`rm -rf .env data/`, `git clean -fdx`,
/// `echo … > .env`: content nobody can make again from the repository), unless it lies in a
/// directory tagged as a cache (a `CACHEDIR.TAG`, as cargo's `target/` is): build output and
/// caches are made again by their tools, and keeping every rebuild's old files would crowd
/// the history out. What a command creates there, and a directory's new mode, is not recorded.
/// `step`'s path is in the workspace now (a directory when `now_dir`).
fn kept_change(ws: &Workspace, caches: &mut CacheDirs, step: &Step, now_dir: bool) -> bool {
    let replaced = matches!(step.to, To::Absent) || !now_dir;
    replaced && !caches.holds(ws, &step.path)
}

/// The workspace's directories tagged as caches (Cache Directory Tagging: a `CACHEDIR.TAG`
/// that begins with its signature), looked at once each.
#[derive(Default)]
struct CacheDirs(std::collections::HashMap<String, bool>);

impl CacheDirs {
    /// Whether `path` lies beneath (or is) a tagged directory.
    fn holds(&mut self, ws: &Workspace, path: &str) -> bool {
        let mut dir = String::new();
        for part in path.split('/') {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(part);
            let tagged = *self
                .0
                .entry(dir.clone())
                .or_insert_with(|| Self::tagged(ws, &dir));
            if tagged {
                return true;
            }
        }
        false
    }

    fn tagged(ws: &Workspace, dir: &str) -> bool {
        use std::io::Read;
        const SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";
        let Ok(fd) = ws.open_dir_no_links(std::path::Path::new(dir)) else {
            return false;
        };
        let flags = nix::fcntl::OFlag::O_RDONLY
            | nix::fcntl::OFlag::O_NOFOLLOW
            | nix::fcntl::OFlag::O_NONBLOCK
            | nix::fcntl::OFlag::O_CLOEXEC;
        let Ok(tag) = nix::fcntl::openat(&fd, "CACHEDIR.TAG", flags, nix::sys::stat::Mode::empty())
        else {
            return false;
        };
        let mut head = [0u8; SIGNATURE.len()];
        std::fs::File::from(tag).read_exact(&mut head).is_ok() && head == SIGNATURE
    }
}

/// The journaled paths as the history keeps them, contents included (a path that is not
/// there has nothing to keep: one lookup says so).
fn recordable_states(ws: &Workspace, steps: &[Step], max_bytes: u64) -> Result<Vec<Snapshot>> {
    steps
        .iter()
        .map(|s| match lstat_no_links(ws, &s.path) {
            Ok(None) => Ok(Snapshot::absent(&s.path)),
            _ => Snapshot::at(ws, &s.path, max_bytes),
        })
        .collect()
}

/// The paths' states without their contents (what applying needs to know of them), each
/// reached without a link: one on the way now fails the apply before anything is written.
fn states(ws: &Workspace, steps: &[Step]) -> Result<Vec<Snapshot>> {
    steps.iter().map(|s| state_of(ws, &s.path)).collect()
}

fn state_of(ws: &Workspace, path: &str) -> Result<Snapshot> {
    let unreachable = |e: Errno| durable::not_reached(ws, path, e);
    let Some(st) = lstat_no_links(ws, path).map_err(unreachable)? else {
        return Ok(Snapshot::absent(path));
    };
    let state = match Kind::from_mode(st.st_mode) {
        Kind::Dir => State::Dir {
            mode: st.st_mode & 0o7777,
        },
        Kind::Symlink => State::Link {
            target: link_target(ws, path).map_err(unreachable)?,
        },
        Kind::File | Kind::Other => State::File {
            mode: st.st_mode & 0o7777,
            size: u64::try_from(st.st_size).unwrap_or(0),
            // Not worked out: such a state is only told apart by its kind.
            digest: Digest::Blake3(String::new()),
        },
    };
    Ok(Snapshot {
        path: path.to_string(),
        state,
        content: None,
    })
}

/// The target text of the link at `path` (reached without links).
fn link_target(ws: &Workspace, path: &str) -> std::result::Result<Vec<u8>, Errno> {
    let at = std::path::Path::new(path);
    let parent = at.parent().unwrap_or(std::path::Path::new(""));
    let name = at.file_name().ok_or(Errno::EINVAL)?;
    let dir = ws.open_dir_no_links(parent)?;
    // Still a link (not swapped meanwhile for something readlink would follow into).
    fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
    Ok(readlinkat(&dir, name)?.into_vec())
}

fn kind_of(before: &State, to: &To) -> &'static str {
    match (before, to) {
        (State::Absent, _) => "created",
        (_, To::Absent) => "deleted",
        _ => "modified",
    }
}

fn changed(steps: &[Step], now: &[Snapshot]) -> Vec<Changed> {
    steps
        .iter()
        .zip(now)
        .map(|(s, n)| Changed {
            path: s.path.clone(),
            kind: kind_of(&n.state, &s.to).into(),
        })
        .collect()
}

/// A file with other hard links loses them: the new version is a new file (the overlay copied
/// it up at the command's first write, and the commit replaces, never writes into, an existing
/// file).
fn links_broken(ws: &Workspace, sorted: &Sorted) -> Vec<String> {
    sorted
        .journaled
        .iter()
        .chain(&sorted.untracked)
        .filter(|s| matches!(s.to, To::File { .. }))
        .filter(|s| {
            lstat_no_links(ws, &s.path).is_ok_and(|st| {
                st.is_some_and(|st| Kind::from_mode(st.st_mode) == Kind::File && st.st_nlink > 1)
            })
        })
        .map(|s| s.path.clone())
        .collect()
}

/// The upper layer's files go into the workspace without extended attributes (their mode is
/// given as they land): taken off the file where its owner may, else its content is copied
/// into a fresh file.
fn without_xattrs(steps: &mut [Step]) -> Result<()> {
    for s in steps {
        let To::File { content, .. } = &mut s.to else {
            continue;
        };
        let Content::File(up) = content else {
            continue;
        };
        if !straight::strip_xattrs(up) {
            let bytes = fs::read(&*up)
                .map_err(|e| crate::error::Error::io(format!("reading the new {}", s.path), e))?;
            *content = Content::Bytes(bytes);
        }
    }
    Ok(())
}

fn apply_journaled(
    ws: &Workspace,
    steps: &[Step],
    now: &[Snapshot],
    max_bytes: u64,
) -> Result<Undoable> {
    let history = match history::History::open(ws, max_bytes) {
        Ok(h) => h,
        Err(e) => {
            transition::apply(ws, steps, now)?;
            return Ok(Undoable {
                undo_unavailable: Some(e.message()),
                ..Undoable::default()
            });
        }
    };
    let pending = history.begin("run_command", now, None)?;
    transition::apply(ws, steps, now)?;
    let after = steps
        .iter()
        .map(|s| Snapshot::at(ws, &s.path, max_bytes))
        .collect::<Result<Vec<_>>>()?;
    Ok(pending.done(ws, &[], &after)?.undo)
}

/// The diff from what the workspace holds to what the command left.
fn diff_of(steps: &[Step], now: &[Snapshot], cap: usize) -> (String, bool) {
    let mut diff = String::new();
    let mut truncated = false;
    for (s, n) in steps.iter().zip(now) {
        let room = cap.saturating_sub(diff.len());
        let (part, cut) = match (&s.to, &n.state) {
            (To::File { content, .. }, State::Absent | State::File { .. }) => {
                let new = match content {
                    Content::Bytes(b) => b.clone(),
                    Content::File(p) => fs::read(p).unwrap_or_default(),
                };
                crate::edit::diff_text(&s.path, n.content.as_deref(), &new, None, room)
            }
            (To::Absent, State::File { .. }) => {
                let old = n.content.as_deref().unwrap_or_default();
                let (text, cut) = crate::edit::diff_text(&s.path, Some(old), b"", None, room);
                (
                    text.replacen(&format!("+++ b/{}", s.path), "+++ /dev/null", 1),
                    cut,
                )
            }
            (to, from) => (
                format!(
                    "{}: {} becomes {}\n",
                    s.path,
                    from.describe(),
                    describe_to(to)
                ),
                false,
            ),
        };
        truncated |= cut;
        diff.push_str(&part);
    }
    (diff, truncated)
}

fn describe_to(to: &To) -> String {
    match to {
        To::Absent => "missing".into(),
        To::File { .. } => "a file".into(),
        To::Link { target } => format!("a link to {}", String::from_utf8_lossy(target)),
        To::Dir { .. } => "a directory".into(),
    }
}

/// Apply the changes a dry run held (`--hold-changes`), as the command's call would have.
pub fn apply_held(ws: &Workspace, id: &str, max_bytes: u64, cap: usize) -> Result<Applied> {
    let scratch = Scratch::adopt(ws, id)?;
    match collect(ws, &scratch, max_bytes, cap, false) {
        Ok(applied) => Ok(applied),
        Err(e) => Err(scratch.keep_after(e)),
    }
}

/// Drop the changes a dry run held.
pub fn discard_held(ws: &Workspace, id: &str) -> Result<()> {
    Scratch::adopt(ws, id).map(drop)
}
