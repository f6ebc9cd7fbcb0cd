//! The changes applied to the workspace: the paths git ignores straight, a nested
//! repository's git data as git wrote it, the rest as one journaled change `undo` takes back;
//! with `dry_run`, only their diff.

use std::fs::{self, File};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::applied::{Applied, Changed};
use super::gitignore::Ignored;
use super::route::{changed_meanwhile, conflict, route, Route};
use super::scan::{expand_removed, scan};
use super::scratch::Scratch;
use crate::error::{Error, Result};
use crate::fs::durable;
use crate::fs::history::{self, Digest, Snapshot, State, Undoable};
use crate::fs::jail::{map_errno, Workspace};
use crate::fs::transition::{self, Content, Step, To};

/// A path's state without its content (what applying needs to know of it).
fn state_of(root: &Path, path: &str) -> Snapshot {
    let state = match fs::symlink_metadata(root.join(path)) {
        Err(_) => State::Absent,
        Ok(m) if m.file_type().is_dir() => State::Dir {
            mode: m.mode() & 0o7777,
        },
        Ok(m) if m.file_type().is_symlink() => State::Link {
            target: fs::read_link(root.join(path))
                .map(|t| t.into_os_string().into_vec())
                .unwrap_or_default(),
        },
        Ok(m) => State::File {
            mode: m.mode() & 0o7777,
            size: m.len(),
            // Not worked out: such a state is only told apart by its kind.
            digest: Digest::Blake3(String::new()),
        },
    };
    Snapshot {
        path: path.to_string(),
        state,
        content: None,
    }
}

fn kind_of(before: &State, to: &To) -> &'static str {
    match (before, to) {
        (State::Absent, _) => "created",
        (_, To::Absent) => "deleted",
        _ => "modified",
    }
}

/// Turn the upper layer into changes, and apply them unless `dry_run`.
pub fn collect(
    ws: &Workspace,
    scratch: &Scratch,
    max_bytes: u64,
    cap: usize,
    dry_run: bool,
) -> Result<Applied> {
    let root = ws.root();
    // (Sockets are not carried over: the placeholders the upper layer holds, `Scratch::place`,
    // are not among the changes.)
    let found = scan(root, &scratch.upper());
    if found.is_empty() {
        // The usual case for a command that only reads: nothing more to look at.
        return Ok(Applied {
            diff: dry_run.then(String::new),
            ..Applied::default()
        });
    }
    // A directory of the workspace that goes or becomes something else takes its contents
    // with it: each is a change of its own.
    let mut all = Vec::with_capacity(found.len());
    for f in found {
        let was_dir =
            fs::symlink_metadata(root.join(&f.path)).is_ok_and(|m| m.file_type().is_dir());
        let removes_tree = was_dir && !matches!(f.to, To::Dir { .. });
        let path = f.path.clone();
        all.push(f);
        if removes_tree {
            expand_removed(root, &path, &mut all);
        }
    }
    // Parents before their children.
    all.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    let upper = scratch.upper();
    let vcs_writable = !ws.is_vcs_metadata(ws.root_fd(), std::ffi::OsStr::new(".git"));
    if !dry_run {
        let meanwhile = changed_meanwhile(ws, &upper, &all, scratch.started, vcs_writable);
        if !meanwhile.is_empty() {
            return Err(conflict(&meanwhile));
        }
    }
    let mut ignored = Ignored::new(root);
    let mut applied = Applied::default();
    let mut journaled = Vec::new();
    let mut untracked = Vec::new();
    let mut nested_git = Vec::new();
    for f in all {
        match route(ws, &upper, &f, vcs_writable) {
            Route::Discarded => {
                applied.discarded.push(f.path);
                continue;
            }
            Route::NestedGit => {
                nested_git.push(Step {
                    path: f.path,
                    to: f.to,
                });
                continue;
            }
            Route::Workspace => {}
        }
        let is_dir = matches!(f.to, To::Dir { .. })
            || fs::symlink_metadata(root.join(&f.path)).is_ok_and(|m| m.file_type().is_dir());
        if ignored.ignores(&f.path, is_dir) {
            untracked.push(f);
        } else {
            journaled.push(f);
        }
    }
    let steps: Vec<Step> = journaled
        .into_iter()
        .map(|f| Step {
            path: f.path,
            to: f.to,
        })
        .collect();
    // What the history keeps (contents included); a file it cannot keep (over
    // undo.max_bytes) leaves the change unrecorded rather than lost.
    // (A path that is not there has nothing to keep: one lstat says so.)
    let (now, unrecordable) = match steps
        .iter()
        .map(|s| match fs::symlink_metadata(root.join(&s.path)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Snapshot {
                path: s.path.clone(),
                state: State::Absent,
                content: None,
            }),
            _ => Snapshot::at(ws, &s.path, max_bytes),
        })
        .collect::<Result<Vec<_>>>()
    {
        Ok(now) => (now, None),
        Err(e) => (
            steps.iter().map(|s| state_of(root, &s.path)).collect(),
            Some(e),
        ),
    };
    applied.changes = steps
        .iter()
        .zip(&now)
        .map(|(s, n)| Changed {
            path: s.path.clone(),
            kind: kind_of(&n.state, &s.to).into(),
        })
        .collect();
    let untracked_steps: Vec<Step> = untracked
        .into_iter()
        .map(|f| Step {
            path: f.path,
            to: f.to,
        })
        .collect();
    let untracked_now: Vec<Snapshot> = untracked_steps
        .iter()
        .map(|s| state_of(root, &s.path))
        .collect();
    applied.untracked = untracked_steps
        .iter()
        .zip(&untracked_now)
        .map(|(s, n)| Changed {
            path: s.path.clone(),
            kind: kind_of(&n.state, &s.to).into(),
        })
        .collect();
    // A file with other hard links loses them: the new version is a new file (the overlay
    // copied it up at the command's first write, and the commit replaces, never writes into,
    // an existing file).
    applied.links_broken = steps
        .iter()
        .chain(&untracked_steps)
        .filter(|s| matches!(s.to, To::File { .. }))
        .filter(|s| {
            fs::symlink_metadata(root.join(&s.path)).is_ok_and(|m| m.is_file() && m.nlink() > 1)
        })
        .map(|s| s.path.clone())
        .collect();
    if dry_run {
        let (diff, cut) = diff_of(&steps, &now, cap);
        applied.diff = Some(diff);
        applied.diff_truncated = cut;
        return Ok(applied);
    }
    // A nested repository's own writes are applied as git made them, through a handle of the
    // workspace that lets them into `.git` (what may go there was decided by `route`).
    let git_ws = if nested_git.is_empty() {
        None
    } else {
        let mut git_ws = Workspace::open_root(root)?;
        git_ws.allow_vcs_writes(true);
        Some(git_ws)
    };
    let nested_now: Vec<Snapshot> = nested_git.iter().map(|s| state_of(root, &s.path)).collect();
    // What goes of them goes first, what comes last: an untracked path may sit in a tracked
    // directory that the recorded change removes or makes.
    if let Some(git_ws) = &git_ws {
        remove_untracked(git_ws, &nested_git, &nested_now)?;
    }
    remove_untracked(ws, &untracked_steps, &untracked_now)?;
    applied.undo = match unrecordable {
        _ if steps.is_empty() => Undoable::default(),
        None => apply_journaled(ws, &steps, &now, max_bytes)?,
        Some(e) => {
            transition::apply(ws, &steps, &now)?;
            Undoable {
                undo_unavailable: Some(e.message()),
                ..Undoable::default()
            }
        }
    };
    add_untracked(ws, &untracked_steps, &untracked_now)?;
    if let Some(git_ws) = &git_ws {
        add_untracked(git_ws, &nested_git, &nested_now)?;
    }
    Ok(applied)
}

/// The paths git ignores are applied as they are, unrecorded, each through the jail
/// (`durable::locate`). First what goes, deepest first.
fn remove_untracked(ws: &Workspace, steps: &[Step], now: &[Snapshot]) -> Result<()> {
    use nix::unistd::{unlinkat, UnlinkatFlags};
    for (s, n) in steps.iter().zip(now).rev() {
        let goes = match (&s.to, &n.state) {
            (_, State::Absent) => false,
            (To::Dir { .. }, State::Dir { .. }) => false,
            (To::File { .. }, State::File { .. }) => false, // renamed over
            _ => true,
        };
        if !goes {
            continue;
        }
        let t = durable::locate(ws, &s.path, false, None)?;
        let flag = if matches!(n.state, State::Dir { .. }) {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        match unlinkat(&t.dir, t.name.as_os_str(), flag) {
            Ok(()) | Err(nix::errno::Errno::ENOENT) => {}
            Err(e) => return Err(map_errno(e, &s.path)),
        }
    }
    Ok(())
}

/// Then what comes, parents first: a file is moved from the upper layer (a rename where it
/// shares the workspace's file system, so that a build's outputs are not copied).
fn add_untracked(ws: &Workspace, steps: &[Step], now: &[Snapshot]) -> Result<()> {
    use nix::unistd::symlinkat;
    for (s, n) in steps.iter().zip(now) {
        match &s.to {
            To::Absent => {}
            To::Dir { mode } => {
                let t = durable::locate(ws, &s.path, false, None)?;
                if !matches!(n.state, State::Dir { .. }) {
                    nix::sys::stat::mkdirat(
                        &t.dir,
                        t.name.as_os_str(),
                        Mode::from_bits_truncate(*mode),
                    )
                    .map_err(|e| map_errno(e, &s.path))?;
                }
                nix::sys::stat::fchmodat(
                    &t.dir,
                    t.name.as_os_str(),
                    Mode::from_bits_truncate(*mode),
                    nix::sys::stat::FchmodatFlags::FollowSymlink,
                )
                .map_err(|e| map_errno(e, &s.path))?;
            }
            To::Link { target } => {
                let t = durable::locate(ws, &s.path, false, None)?;
                symlinkat(
                    std::ffi::OsStr::from_bytes(target),
                    &t.dir,
                    t.name.as_os_str(),
                )
                .map_err(|e| map_errno(e, &s.path))?;
            }
            To::File { content, .. } => {
                let t = durable::locate(ws, &s.path, false, None)?;
                let Content::File(from) = content else {
                    continue;
                };
                move_in(from, &t)
                    .map_err(|e| Error::io(format!("moving {} in place", s.path), e))?;
            }
        }
    }
    Ok(())
}

/// Move a file of the upper layer to the target: renamed, or, across file systems, copied to
/// a temporary beside it and renamed over it.
fn move_in(from: &Path, t: &durable::Target) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (from.parent(), from.file_name()) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    let src = File::open(dir)?;
    match nix::fcntl::renameat(&src, name, &t.dir, t.name.as_os_str()) {
        Ok(()) => return Ok(()),
        Err(nix::errno::Errno::EXDEV) => {}
        Err(e) => return Err(e.into()),
    }
    let mut temp = t.name.clone();
    temp.push(format!(".sneaky-{}.tmp", std::process::id()));
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC;
    let mode = fs::metadata(from)?.mode() & 0o7777;
    let fd = nix::fcntl::openat(
        &t.dir,
        temp.as_os_str(),
        flags,
        Mode::from_bits_truncate(mode),
    )?;
    let mut out = File::from(fd);
    let copied = std::io::copy(&mut File::open(from)?, &mut out).and_then(|_| {
        nix::sys::stat::fchmod(&out, Mode::from_bits_truncate(mode))?;
        nix::fcntl::renameat(&t.dir, temp.as_os_str(), &t.dir, t.name.as_os_str())?;
        Ok(())
    });
    if copied.is_err() {
        let _ = nix::unistd::unlinkat(
            &t.dir,
            temp.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    copied
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
