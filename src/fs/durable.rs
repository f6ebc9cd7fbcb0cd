//! Changing files without ever losing or tearing them: the machinery every edit tool shares.
//!
//! A user path is turned into a [`Target`]: a directory handle opened through the jail plus one
//! final name. Every create, delete and rename is an `*at` call on that handle with that single
//! name, so nothing can be redirected out of the root between the check and the act (a
//! multi-component path handed to `unlinkat`/`mkdirat` would be resolved again, unjailed).
//!
//! New content is written to an unnamed `O_TMPFILE` in the same directory (or, where the file
//! system lacks it, a fresh `O_EXCL` temporary name), flushed with `fsync`, given the old
//! file's permission bits, and only then given the final name: `linkat` for a new file (which
//! fails instead of overwriting one that appeared meanwhile) or `renameat` over the old one.
//! A reader or a `kill -9` sees the old content or the new, never a mix, and an interrupted
//! write leaves no named temporary behind. Just before the rename the target is compared with
//! what was read (inode, size, times); if another process changed it, the edit is refused with
//! `conflict` rather than silently undoing that change.
//!
//! `staged`: several files changed as one, all or none. `landing`: the targets of a change no
//! one named the path of for the occasion (a command's changes applied, an undo), reached with
//! no link followed at any component and checked where they really land.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use nix::errno::Errno;
use nix::fcntl::{openat, readlinkat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, FileStat, Mode};
use nix::unistd::{faccessat, fsync, linkat, unlinkat, AccessFlags, UnlinkatFlags};

use crate::error::{Error, ErrorKind, Result};
use crate::fs::jail::{map_errno, Kind, Workspace, CONFIG_FILE_NAME};
use crate::fs::MAX_LINK_HOPS;

mod landing;
mod staged;
pub use landing::{locate_no_links, lstat_no_links, not_reached, Git};
pub use staged::{commit_all, recover, Change};

/// Descriptors a change of one file holds until the whole change is committed: its directory's
/// handle and its new content's (a command's upper layer), and the staged copies of both.
pub const DESCRIPTORS_PER_FILE: u64 = 4;

/// Make room for `needed` open descriptors in this process. A change of many files holds
/// handles on each until all are committed together (all or none), and distributions start
/// programs with a soft limit of 1024 under a far higher hard one: a command that made 600
/// files would fail with "Too many open files". The soft limit is raised towards the hard one
/// as far as needed, in this process only (the command's programs have ended; an edit tool
/// starts none); past the hard limit the change fails with EMFILE and `Error::io` says which
/// limit to raise.
pub fn room_for_descriptors(needed: u64) {
    // What the process holds besides: standard streams, the history's files, the jail's root.
    const BESIDES: u64 = 64;
    // A limit that stays lower is said by the EMFILE that follows.
    let _ = raise_descriptor_limit(needed.saturating_add(BESIDES));
}

/// Raise this process's soft RLIMIT_NOFILE to `wanted`, or to the hard limit when that is
/// lower; never lowers it. Err names the limits when the kernel refused.
pub fn raise_descriptor_limit(wanted: u64) -> std::result::Result<(), String> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(());
    };
    let wanted = wanted.min(hard);
    if soft < wanted && setrlimit(Resource::RLIMIT_NOFILE, wanted, hard).is_err() {
        return Err(format!(
            "could not raise the descriptor limit from {soft} to {wanted}"
        ));
    }
    Ok(())
}

/// An entry to change: its parent directory (opened beneath the root) and its single name.
#[derive(Debug)]
pub struct Target {
    pub dir: OwnedFd,
    pub name: OsString,
    /// Root-relative path of the entry, after following links that stay inside.
    pub display: String,
}

/// Identity and version of a file as it was read, to notice a concurrent change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The same file, unchanged, not counting its ctime (which a hard link to it changes).
    fn same_but_ctime(&self, other: &Stamp) -> bool {
        Stamp {
            ctime: other.ctime,
            ..*self
        } == *other
    }

    fn of(st: &FileStat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        }
    }
}

/// A regular file as found before an edit.
#[derive(Debug)]
pub struct Existing {
    /// The content, or None when it is over the size limit (then it was not read).
    pub bytes: Option<Vec<u8>>,
    pub size: u64,
    pub stamp: Stamp,
    /// Permission bits (with set-id and sticky bits) and owner, kept by the rewrite.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

/// Split a relative path into its parent and a final plain name.
fn split(path: &Path) -> Option<(PathBuf, OsString)> {
    let mut comps: Vec<Component<'_>> = path.components().collect();
    match comps.pop() {
        Some(Component::Normal(name)) => {
            let parent: PathBuf = comps.iter().collect();
            let parent = if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent
            };
            Some((parent, name.to_os_string()))
        }
        _ => None,
    }
}

fn display_of(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_string()),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY
}

/// Open a directory beneath the root; with `create`, make the missing ones (`mkdir -p`), each
/// with `mkdirat` on its already-open parent. Returns the handle and the directories created.
/// A call that fails halfway (a later name refused, say `new/.git`) removes the directories it
/// made, so that a refused edit leaves the workspace as it was.
pub fn open_dirs(ws: &Workspace, path: &Path, create: bool) -> Result<(OwnedFd, Vec<String>)> {
    let (fd, made) = open_dirs_making(ws, path, create)?;
    Ok((fd, made.keep()))
}

fn open_dirs_making(ws: &Workspace, path: &Path, create: bool) -> Result<(OwnedFd, MadeDirs)> {
    let display = display_of(path);
    match ws.open_at(ws.root_fd(), path, dir_flags(), Mode::empty()) {
        Ok(fd) => return Ok((fd, MadeDirs::default())),
        Err(Errno::ENOENT) if create => {}
        Err(e) => return Err(dir_error(e, &display)),
    }
    let mut made = MadeDirs::default();
    // On an error `made` is dropped here, which takes its directories back.
    let fd = make_missing(ws, path, &mut made.0)?;
    Ok((fd, made))
}

/// Directories made for an edit that has not landed yet. Dropped without [`MadeDirs::keep`]
/// (the edit failed: refused halfway, a conflict at commit, a full disk), they are removed
/// again, deepest first, each with `rmdir` through the parent handle it was made in: only an
/// empty directory goes, and only one this edit made.
#[derive(Default)]
pub struct MadeDirs(Vec<Made>);

/// A directory [`open_dirs`] made: the parent it was made in, its name, and how it is shown.
struct Made {
    parent: OwnedFd,
    name: OsString,
    display: String,
}

impl MadeDirs {
    /// How each directory made is shown, outermost first.
    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(|m| m.display.clone()).collect()
    }

    /// The edit landed: keep the directories; returns how each is shown, outermost first.
    pub fn keep(mut self) -> Vec<String> {
        std::mem::take(&mut self.0)
            .into_iter()
            .map(|m| m.display)
            .collect()
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        for m in self.0.iter().rev() {
            let _ = unlinkat(&m.parent, m.name.as_os_str(), UnlinkatFlags::RemoveDir);
        }
    }
}

fn make_missing(ws: &Workspace, path: &Path, made: &mut Vec<Made>) -> Result<OwnedFd> {
    let mut cur = ws
        .open_at(ws.root_fd(), Path::new("."), dir_flags(), Mode::empty())
        .map_err(|e| dir_error(e, "."))?;
    let mut prefix = PathBuf::new();
    for (i, comp) in path.components().enumerate() {
        let name = match comp {
            Component::Normal(n) => n,
            Component::ParentDir if !made.is_empty() => {
                // The directories made are the names just before this `..`.
                let tail = made.iter().map(|m| m.name.as_os_str());
                let tail = tail.chain(path.components().skip(i).map(|c| c.as_os_str()));
                let base = made[0].parent.as_fd();
                return Err(climbs_out(ws, base, tail.collect(), &display_of(&prefix)));
            }
            Component::ParentDir => OsStr::new(".."),
            _ => continue,
        };
        prefix.push(name);
        let here = display_of(&prefix);
        match ws.open_at(ws.root_fd(), &prefix, dir_flags(), Mode::empty()) {
            Ok(fd) => cur = fd,
            Err(Errno::ENOENT) if name != ".." => {
                refuse_config_name(ws, &cur, name, &here)?;
                refuse_vcs_metadata(ws, &cur, name, &here)?;
                ws.refuse_protected_entry(cur.as_fd(), name, &here)?;
                let next = match mkdirat(&cur, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) => {
                        // The new entry must survive a crash along with what goes in it.
                        let _ = fsync(&cur);
                        let next = ws.open_at(ws.root_fd(), &prefix, dir_flags(), Mode::empty());
                        made.push(Made {
                            parent: cur,
                            name: name.to_os_string(),
                            display: here.clone(),
                        });
                        next
                    }
                    Err(Errno::EEXIST) => {
                        ws.open_at(ws.root_fd(), &prefix, dir_flags(), Mode::empty())
                    }
                    Err(e) => return Err(dir_error(e, &here)),
                };
                cur = next.map_err(|e| dir_error(e, &here))?;
            }
            Err(e) => return Err(dir_error(e, &here)),
        }
    }
    Ok(cur)
}

/// What [`make_missing`] would refuse on the way to `path`, checked without making anything:
/// from the first missing directory on, a `.git` name (or anything under `.git`), and the
/// configuration file's name directly in the root. Returns how the edit will show `path`.
fn check_unmade(ws: &Workspace, path: &Path) -> Result<String> {
    let mut cur = ws
        .open_at(ws.root_fd(), Path::new("."), dir_flags(), Mode::empty())
        .map_err(|e| dir_error(e, "."))?;
    let mut prefix = PathBuf::new();
    // The names from the first missing directory on.
    let mut rest: Option<PathBuf> = None;
    for (i, comp) in path.components().enumerate() {
        let name = match comp {
            Component::Normal(n) => n,
            Component::ParentDir if rest.is_some() => {
                let tail = rest
                    .iter()
                    .flat_map(|r| r.components().map(|c| c.as_os_str()));
                let tail = tail.chain(path.components().skip(i).map(|c| c.as_os_str()));
                return Err(climbs_out(
                    ws,
                    cur.as_fd(),
                    tail.collect(),
                    &display_of(&prefix),
                ));
            }
            Component::ParentDir => OsStr::new(".."),
            _ => continue,
        };
        prefix.push(name);
        let here = display_of(&prefix);
        match &mut rest {
            Some(rest) => rest.push(name),
            None => match ws.open_at(ws.root_fd(), &prefix, dir_flags(), Mode::empty()) {
                Ok(fd) => {
                    cur = fd;
                    continue;
                }
                Err(Errno::ENOENT) => {
                    refuse_config_name(ws, &cur, name, &here)?;
                    refuse_vcs_metadata(ws, &cur, name, &here)?;
                    ws.refuse_protected_entry(cur.as_fd(), name, &here)?;
                    // Something is there that is no directory to enter (a dangling link):
                    // making the directory would fail on it.
                    if fstatat(&cur, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok() {
                        return Err(dir_error(Errno::ENOENT, &here));
                    }
                    rest = Some(PathBuf::from(name));
                    continue;
                }
                Err(e) => return Err(dir_error(e, &here)),
            },
        }
        // `cur` is the deepest directory that exists: under `.git` refuses everything below it.
        refuse_vcs_metadata(ws, &cur, name, &here)?;
    }
    // Shown as the edit will show it: where the deepest existing directory really is (the path
    // may lead there through `..`), then the names still to be made.
    let rest = rest.unwrap_or_default();
    match path.components().any(|c| c == Component::ParentDir) {
        true => match ws.real_location(cur.as_fd()) {
            Ok(Some(real)) => Ok(display_of(&real.join(rest))),
            _ => Ok(display_of(path)),
        },
        false => Ok(display_of(path)),
    }
}

/// `..` after a directory the call would make: `mkdir -p new/../x` would make `new` only to
/// leave it, and a dry run could not tell what the path reaches. Refused before anything is made
/// (what was made on the way goes again).
/// A path that climbs above the root that way is `outside_workspace`, as when the directories
/// exist: `tail` is the rest of the path from the first missing directory, found in `base`.
fn climbs_out(ws: &Workspace, base: BorrowedFd<'_>, tail: PathBuf, made: &str) -> Error {
    let base = ws.real_location(base).ok().flatten().unwrap_or_default();
    if climbs_above_root(base.components().count(), &tail) {
        let shown = display_of(&base.join(&tail));
        return Error::outside_workspace(format!("{shown} is outside")).about_path(shown);
    }
    Error::invalid_args(format!(
        "the path climbs with `..` out of {made}, a directory that does not exist yet (it would \
         be made only to be left): name the path without `..`"
    ))
}

/// Whether `path`, taken from a directory `depth` levels below the root, climbs above the root
/// with its `..`, counted by name (no link in it is followed). An absolute path climbs.
pub fn climbs_above_root(depth: usize, path: &Path) -> bool {
    let mut depth = depth as i64;
    path.components().any(|c| {
        depth += match c {
            Component::Normal(_) => 1,
            Component::ParentDir => -1,
            Component::CurDir => 0,
            Component::RootDir | Component::Prefix(_) => return true,
        };
        depth < 0
    })
}

fn dir_error(e: Errno, display: &str) -> Error {
    match e {
        Errno::ENOTDIR => Error::new(
            ErrorKind::NotADirectory,
            format!("{display}: a component of the path is not a directory"),
        ),
        Errno::ENOENT => Error::new(
            ErrorKind::NotFound,
            format!("directory {display} does not exist"),
        ),
        other => map_errno(other, display),
    }
}

/// Refuse a name that is the workspace's own `sneaky.toml` (directly in the root).
fn refuse_config_name(ws: &Workspace, dir: &OwnedFd, name: &OsStr, display: &str) -> Result<()> {
    if name != CONFIG_FILE_NAME {
        return Ok(());
    }
    let (Ok(d), Ok(r)) = (fstat(dir.as_fd()), fstat(ws.root_fd())) else {
        return Err(protected(display));
    };
    if d.st_dev == r.st_dev && d.st_ino == r.st_ino {
        return Err(protected(display));
    }
    Ok(())
}

/// Refuse an entry under `.git` (or named `.git`) unless the configuration allows it.
fn refuse_vcs_metadata(ws: &Workspace, dir: &OwnedFd, name: &OsStr, display: &str) -> Result<()> {
    if !ws.is_vcs_metadata(dir.as_fd(), name) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::ProtectedPath,
        format!("{display} is version-control metadata (.git), read-only to every tool; set allow_vcs_writes = true in the configuration to change it"),
    ))
}

fn protected(display: &str) -> Error {
    Error::new(
        ErrorKind::ProtectedPath,
        format!("{display} is the workspace configuration file; no tool may change it"),
    )
}

/// Where an entry named by the user lives. With `follow`, a final component that is a link
/// staying inside the root is followed (to edit what it points to); a link leading out is
/// `outside_workspace`. Without `follow` the final component itself is the target (delete).
/// With `made`, missing directories on the way are made and recorded there (the caller keeps
/// them once its edit has landed); without it, a missing directory is `not_found`, as for the
/// kernel (`gone/../a.txt` names nothing).
pub fn locate(
    ws: &Workspace,
    user: &str,
    follow: bool,
    made: Option<&mut MadeDirs>,
) -> Result<Target> {
    let missing = match made {
        Some(made) => Missing::Make(made),
        None => Missing::NotFound,
    };
    match find(ws, user, follow, missing)? {
        Unmade::Found(t) => Ok(t),
        // Only a dry run answers this; for the others a missing directory is an error.
        Unmade::Missing(shown) => Err(Error::new(
            ErrorKind::NotFound,
            format!("the directory of {shown} does not exist"),
        )),
    }
}

/// What the dry run of an edit that makes directories finds.
pub enum Unmade {
    /// The entry's directory exists (the entry itself may not).
    Found(Target),
    /// Directories are still to be made; the entry as the edit will show it.
    Missing(String),
}

/// [`locate`] for the dry run of an edit that would make the missing directories: it refuses
/// what making them would refuse, and says how the new entry will be shown.
pub fn locate_unmade(ws: &Workspace, user: &str, follow: bool) -> Result<Unmade> {
    find(ws, user, follow, Missing::Unmade)
}

/// What [`find`] does about a directory on the way that does not exist.
enum Missing<'a> {
    /// It is `not_found`.
    NotFound,
    /// It is made, and recorded.
    Make(&'a mut MadeDirs),
    /// A dry run: it would be made.
    Unmade,
}

fn find(ws: &Workspace, user: &str, follow: bool, mut missing: Missing<'_>) -> Result<Unmade> {
    let rel = ws.relative(user)?;
    ws.refuse_protected_spelling(&rel)?;
    // A multi-file edit killed halfway is put back before anything else is edited.
    staged::recover(ws);
    let mut path = rel.as_path().to_path_buf();
    let dry = matches!(missing, Missing::Unmade);
    let make = matches!(missing, Missing::Make(_));
    for _ in 0..=MAX_LINK_HOPS {
        let Some((parent, name)) = split(&path) else {
            return Err(Error::invalid_args(format!(
                "{} does not name a file (it ends in \".\", \"..\" or is the root)",
                rel.display()
            )));
        };
        let (dir, mut new) = match open_dirs_making(ws, &parent, make) {
            // What making the directories would refuse is refused here too.
            Err(e) if dry && e.kind == ErrorKind::NotFound => {
                return Ok(Unmade::Missing(check_unmade(ws, &path)?));
            }
            other => other?,
        };
        if let Missing::Make(made) = &mut missing {
            made.0.append(&mut new.0);
        }
        let display = shown_path(ws, &dir, &parent, &name);
        if follow {
            if let Ok(st) = fstatat(&dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
                if Kind::from_mode(st.st_mode) == Kind::Symlink {
                    let target =
                        readlinkat(&dir, name.as_os_str()).map_err(|e| map_errno(e, &display))?;
                    path = link_destination(ws, &parent, &target, rel.display())?;
                    continue;
                }
            }
        }
        // Every edit tool comes through here: the workspace configuration and version-control
        // metadata are refused whatever the tool goes on to do, a new file's name included
        // (`sub/new/.git` once reached patch_apply's creation path unchecked).
        refuse_config_name(ws, &dir, &name, &display)?;
        refuse_vcs_metadata(ws, &dir, &name, &display)?;
        ws.refuse_protected_entry(dir.as_fd(), &name, &display)?;
        ws.refuse_denied_entry(dir.as_fd(), &name, &display)?;
        return Ok(Unmade::Found(Target { dir, name, display }));
    }
    Err(map_errno(Errno::ELOOP, rel.display()))
}

/// The root-relative path to report for `name` in the directory `dir`, reached as `parent`.
/// A followed link's target may have led through `..` (`sub/link -> ../f.txt` gives
/// `sub/../f.txt`); that is folded by asking the kernel where the open directory really is,
/// since `..` after a link cannot be folded by hand. For the message only: the directory
/// handle, opened through the jail, is what is acted on.
fn shown_path(ws: &Workspace, dir: &OwnedFd, parent: &Path, name: &OsStr) -> String {
    let lexical = parent.join(name);
    if !lexical.components().any(|c| c == Component::ParentDir) {
        return display_of(&lexical);
    }
    match ws.real_location(dir.as_fd()) {
        Ok(Some(rel)) => display_of(&rel.join(name)),
        _ => display_of(&lexical),
    }
}

/// The root-relative path a link's target names, or `outside_workspace`.
fn link_destination(ws: &Workspace, parent: &Path, target: &OsStr, user: &str) -> Result<PathBuf> {
    let target_path = Path::new(target);
    if target_path.is_absolute() {
        let text = target.to_str().ok_or_else(|| {
            Error::outside_workspace(format!("{user} is a link that leads outside"))
                .about_path(user)
        })?;
        let rel = ws.relative(text).map_err(|_| {
            Error::outside_workspace(format!("{user} is a link that leads outside"))
                .about_path(user)
        })?;
        return Ok(rel.as_path().to_path_buf());
    }
    Ok(parent.join(target_path))
}

impl Target {
    /// Where the entry really is, root-relative, with no link on the way: the path a change is
    /// recorded under, so that undo, which follows no link (src/fs/durable/landing.rs), reaches
    /// it whatever directory link the edit went through. As shown when that cannot be told.
    pub fn recorded_path(&self, ws: &Workspace) -> String {
        if !self.display.contains('/') {
            // In the root itself: no link on the way.
            return self.display.clone();
        }
        let name = self.name.to_string_lossy();
        match ws.real_location(self.dir.as_fd()) {
            Ok(Some(dir)) if dir.as_os_str().is_empty() => name.into_owned(),
            Ok(Some(dir)) => format!("{}/{name}", dir.to_string_lossy()),
            _ => self.display.clone(),
        }
    }

    /// The entry's status without following a link, or None when it does not exist.
    pub fn stat(&self) -> Result<Option<FileStat>> {
        match fstatat(
            &self.dir,
            self.name.as_os_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(map_errno(e, &self.display)),
        }
    }

    /// Refuse the active configuration file by identity, whatever name or link reached it.
    /// (The names — the workspace's `sneaky.toml`, `.git` — are refused by [`locate`], which
    /// hands out every target.)
    pub fn refuse_protected(&self, ws: &Workspace, st: &FileStat) -> Result<()> {
        if ws.is_protected(st.st_dev, st.st_ino) {
            return Err(protected(&self.display));
        }
        Ok(())
    }

    /// Read the regular file at the target (None when there is none). Content over `max` bytes
    /// is not read (`bytes` is None). A link swapped in meanwhile is refused, never followed.
    pub fn read_existing(&self, ws: &Workspace, max: u64) -> Result<Option<Existing>> {
        let flags = OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NOCTTY
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC;
        let fd = match openat(&self.dir, self.name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(Errno::ELOOP) => {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("{} became a symbolic link while being edited", self.display),
                ))
            }
            Err(Errno::EISDIR) => return Err(not_a_file(&self.display, Kind::Dir)),
            Err(e) => return Err(map_errno(e, &self.display)),
        };
        let st = fstat(fd.as_fd()).map_err(|e| map_errno(e, &self.display))?;
        self.refuse_protected(ws, &st)?;
        ws.refuse_denied_open(fd.as_fd(), &st, &self.display)?;
        let kind = Kind::from_mode(st.st_mode);
        if kind != Kind::File {
            return Err(not_a_file(&self.display, kind));
        }
        let size = u64::try_from(st.st_size).unwrap_or(0);
        let bytes = if size > max {
            None
        } else {
            let mut buf = Vec::with_capacity(size as usize);
            File::from(fd)
                .take(max + 1)
                .read_to_end(&mut buf)
                .map_err(|e| Error::io(&self.display, e))?;
            if buf.len() as u64 > max {
                None
            } else {
                Some(buf)
            }
        };
        Ok(Some(Existing {
            bytes,
            size,
            stamp: Stamp::of(&st),
            mode: st.st_mode & 0o7777,
            uid: st.st_uid,
            gid: st.st_gid,
        }))
    }

    /// Give the target `content` atomically. `prior` is the file as read (None: it must not
    /// exist yet). Fails with `conflict` when the target is no longer what was read.
    pub fn replace_with(&self, content: &[u8], prior: Option<&Existing>) -> Result<()> {
        let staged = self.stage(content, prior)?;
        staged
            .sync()
            .map_err(|e| self.explain(Error::io(format!("writing {}", self.display), e)))?;
        staged.publish()?;
        // The new name must survive a crash too.
        let _ = fsync(&self.dir);
        Ok(())
    }

    /// The first half of [`Target::replace_with`]: `content` written beside the target (with
    /// the old file's owner and mode), neither flushed nor named yet, so that a caller can
    /// flush it together with writes of its own (the undo history's) before it lands.
    pub fn stage(&self, content: &[u8], prior: Option<&Existing>) -> Result<Staged<'_>> {
        if prior.is_some() {
            self.refuse_unwritable()?;
        }
        let mut temp = TempFile::create(self, prior.is_none()).map_err(|e| self.explain(e))?;
        temp.fill(content, prior, false)
            .map_err(|e| self.explain(Error::io(format!("writing {}", self.display), e)))?;
        Ok(Staged {
            target: self,
            temp,
            expected: prior.map(|p| p.stamp),
        })
    }

    /// An edit failed: when the directory itself was removed or replaced while we worked in
    /// it, that is what to say.
    fn explain(&self, e: Error) -> Error {
        if fstat(self.dir.as_fd()).is_ok_and(|st| st.st_nlink == 0) {
            return self.conflict("(its directory) was removed or replaced by another process");
        }
        e
    }

    /// Give the file at the target, still the one read as `prior`, a second name `name` in
    /// `dir` (a hard link): a rewrite replaces the file by a rename, which leaves this one as
    /// it was, so the second name keeps the old content without a copy. None (and nothing
    /// done) when that cannot hold or be done: the file has other names (one of them could
    /// change it in place), `dir` is on another file system, `name` exists, or the file is no
    /// longer the one read; the caller copies the content instead. The file is returned open
    /// (to be flushed), and the stamp the edit must now expect of it (the link changed its
    /// ctime).
    pub fn link_as(
        &self,
        prior: &Existing,
        dir: BorrowedFd<'_>,
        name: &OsStr,
    ) -> Result<Option<(File, Stamp)>> {
        let Some(st) = self.stat()? else {
            return Ok(None);
        };
        if Stamp::of(&st) != prior.stamp || st.st_nlink != 1 {
            return Ok(None);
        }
        match linkat(
            &self.dir,
            self.name.as_os_str(),
            dir,
            name,
            AtFlags::empty(),
        ) {
            Ok(()) => {}
            Err(_) => return Ok(None),
        }
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let opened = openat(dir, name, flags, Mode::empty()).and_then(|fd| {
            let st = fstat(fd.as_fd())?;
            Ok((File::from(fd), st))
        });
        let same = |st: &FileStat| {
            // The file that was read, with no other name than the two.
            Stamp::of(st).same_but_ctime(&prior.stamp)
                && st.st_nlink == 2
                && st.st_mode & 0o7777 == prior.mode
                && (st.st_uid, st.st_gid) == (prior.uid, prior.gid)
                && Kind::from_mode(st.st_mode) == Kind::File
        };
        match opened {
            Ok((file, st)) if same(&st) => Ok(Some((file, Stamp::of(&st)))),
            other => {
                let _ = unlinkat(dir, name, UnlinkatFlags::NoRemoveDir);
                match other {
                    // Changed meanwhile by someone else: the edit would overwrite that.
                    Ok(_) => Err(self.conflict("was changed by another process")),
                    Err(e) => Err(map_errno(e, &self.display)),
                }
            }
        }
    }

    /// An existing file is only rewritten when it could be written in place: the rename would
    /// otherwise silently replace a file its owner made read-only (mode 0444 and the like).
    /// As `open(O_WRONLY)` would: root may, an immutable file or a read-only mount refuses.
    fn refuse_unwritable(&self) -> Result<()> {
        let flags = AtFlags::AT_EACCESS | AtFlags::AT_SYMLINK_NOFOLLOW;
        match faccessat(&self.dir, self.name.as_os_str(), AccessFlags::W_OK, flags) {
            Ok(()) => Ok(()),
            Err(Errno::EACCES | Errno::EPERM) => Err(Error::new(
                ErrorKind::PermissionDenied,
                format!(
                    "{} is read-only (no write permission, or marked immutable); nothing was \
                     changed",
                    self.display
                ),
            )),
            Err(Errno::EROFS) => Err(Error::new(
                ErrorKind::IoError,
                format!(
                    "{} is on a read-only file system; nothing was changed",
                    self.display
                ),
            )),
            // Gone or replaced meanwhile: the check before the rename reports the conflict.
            // A kernel or libc without the flags: the rename still tells what it can.
            Err(Errno::ENOENT | Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => Ok(()),
            Err(e) => Err(map_errno(e, &self.display)),
        }
    }

    /// Remove the entry itself (a link, never its target). Directories are refused.
    pub fn unlink(&self) -> Result<()> {
        match unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) => {
                let _ = fsync(&self.dir);
                Ok(())
            }
            Err(Errno::EISDIR) => Err(not_a_file(&self.display, Kind::Dir)),
            Err(Errno::ENOENT) => Err(map_errno(Errno::ENOENT, &self.display)),
            Err(e) => Err(map_errno(e, &self.display)),
        }
    }

    fn conflict(&self, what: &str) -> Error {
        Error::new(
            ErrorKind::Conflict,
            format!(
                "{} {what} while the edit was being made; nothing was written. Read it again and \
                 redo the edit",
                self.display
            ),
        )
    }
}

pub fn not_a_file(display: &str, kind: Kind) -> Error {
    let what = match kind {
        Kind::Dir => "a directory",
        Kind::Symlink => "a symbolic link",
        Kind::File => "a file",
        Kind::Other => "not a regular file (a device, socket or pipe)",
    };
    Error::new(
        ErrorKind::NotAFile,
        format!("{display} is {what}, not a regular file"),
    )
}

/// Creating the new version beside the target failed: a refusal names the directory.
fn temp_error(e: Errno, display: &str) -> Error {
    match e {
        Errno::EACCES | Errno::EPERM => Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "{display}: permission denied: its directory does not allow creating files (it \
                 is read-only or immutable; an edit writes the new version beside the file)"
            ),
        ),
        other => map_errno(other, display),
    }
}

/// New content written beside its target and not yet in place ([`Target::stage`]).
pub struct Staged<'t> {
    target: &'t Target,
    temp: TempFile,
    /// The file it replaces, as it must still be (None: a new file).
    expected: Option<Stamp>,
}

impl Staged<'_> {
    /// Flush the content (`fsync`).
    pub fn sync(&self) -> std::io::Result<()> {
        self.temp.file.sync_all()
    }

    /// Its permission bits (as it will be once in place).
    pub fn mode(&self) -> Result<u32> {
        let st = fstat(self.temp.file.as_fd()).map_err(|e| map_errno(e, &self.target.display))?;
        Ok(st.st_mode & 0o7777)
    }

    /// The file it replaces must now be as `stamp` says (see [`Target::link_as`]).
    pub fn expect(&mut self, stamp: Stamp) {
        self.expected = Some(stamp);
    }

    /// Put it in place: renamed over the old file if that is still the one read, or named as
    /// a new file if none has appeared meanwhile (`conflict` otherwise). The directory is not
    /// flushed: the caller does.
    pub fn publish(self) -> Result<()> {
        let t = self.target;
        let published = match self.expected {
            None => self.temp.link_new(t),
            Some(stamp) => self.temp.rename_over(t, stamp),
        };
        published.map_err(|e| t.explain(e))
    }
}

/// A temporary file in the target's directory: unnamed (`O_TMPFILE`) when the file system
/// allows, else under a fresh `O_EXCL` name that is removed on every failure path.
struct TempFile {
    file: File,
    /// The temporary name when there is one (named fallback, or after linking for a rename).
    name: Option<OsString>,
    dir: OwnedFd,
}

static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Tests set this to exercise the named-temporary fallback on file systems with `O_TMPFILE`.
#[cfg(test)]
static FORCE_NAMED_TEMP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn temp_name(final_name: &OsStr) -> OsString {
    let bytes = final_name.as_bytes();
    let keep = &bytes[..bytes.len().min(100)];
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut name = b".".to_vec();
    name.extend_from_slice(keep);
    name.extend_from_slice(
        format!(".sneaky-{}-{n}-{nanos:08x}.tmp", std::process::id()).as_bytes(),
    );
    OsString::from_vec(name)
}

impl TempFile {
    /// A temporary beside the target. For a new file (`fresh`) it is created with mode 0666 so
    /// that the kernel applies the umask (or the directory's default ACL) as for any new file:
    /// the process-wide umask is never read by setting it, which would race with other threads
    /// (sneaky-mcp runs the edit tools in-process, concurrently). A rewrite starts at 0600 and
    /// is then given the old file's mode.
    fn create(t: &Target, fresh: bool) -> Result<TempFile> {
        let mode = Mode::from_bits_truncate(if fresh { 0o666 } else { 0o600 });
        let dir = t
            .dir
            .try_clone()
            .map_err(|e| Error::io(format!("directory of {}", t.display), e))?;
        #[cfg(test)]
        if FORCE_NAMED_TEMP.load(Ordering::Relaxed) {
            return Self::create_named(t, dir, mode);
        }
        if !Path::new("/proc/self/fd").is_dir() {
            // Naming an unnamed file goes through /proc; without it use a named temporary.
            return Self::create_named(t, dir, mode);
        }
        let unnamed = openat(
            &t.dir,
            ".",
            OFlag::O_TMPFILE | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
            mode,
        );
        match unnamed {
            Ok(fd) => {
                return Ok(TempFile {
                    file: File::from(fd),
                    name: None,
                    dir,
                })
            }
            // Real failures the named route would meet too.
            Err(e @ (Errno::EACCES | Errno::EROFS | Errno::ENOSPC | Errno::EDQUOT)) => {
                return Err(temp_error(e, &t.display))
            }
            // Unsupported here (or a directory removed meanwhile: the named route tells).
            Err(_) => {}
        }
        Self::create_named(t, dir, mode)
    }

    fn create_named(t: &Target, dir: OwnedFd, mode: Mode) -> Result<TempFile> {
        for _ in 0..16 {
            let name = temp_name(&t.name);
            let flags = OFlag::O_WRONLY
                | OFlag::O_CREAT
                | OFlag::O_EXCL
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC;
            match openat(&dir, name.as_os_str(), flags, mode) {
                Ok(fd) => {
                    return Ok(TempFile {
                        file: File::from(fd),
                        name: Some(name),
                        dir,
                    })
                }
                Err(Errno::EEXIST) => continue,
                Err(e) => return Err(temp_error(e, &t.display)),
            }
        }
        Err(Error::new(
            ErrorKind::IoError,
            format!("could not create a temporary file beside {}", t.display),
        ))
    }

    /// Write the content and give it the old file's owner and mode; with `flush`, `fsync` it
    /// (a transaction of many files flushes them all at once instead).
    fn fill(
        &mut self,
        content: &[u8],
        prior: Option<&Existing>,
        flush: bool,
    ) -> std::io::Result<()> {
        self.file.write_all(content)?;
        if let Some(p) = prior {
            // Keep the owner and group where allowed (root, or a group the user is in); chown
            // comes before chmod, which it would otherwise undo for set-id bits.
            let st = fstat(self.file.as_fd()).map_err(std::io::Error::from)?;
            if st.st_uid != p.uid || st.st_gid != p.gid {
                let _ = std::os::unix::fs::fchown(&self.file, Some(p.uid), Some(p.gid))
                    .or_else(|_| std::os::unix::fs::fchown(&self.file, None, Some(p.gid)));
            }
            fchmod(self.file.as_fd(), Mode::from_bits_truncate(p.mode))
                .map_err(std::io::Error::from)?;
        }
        if flush {
            self.file.sync_all()?;
        }
        Ok(())
    }

    fn proc_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
    }

    /// Give an unnamed temporary a name in the directory (fails if `name` exists).
    fn link_as(&self, name: &OsStr) -> std::result::Result<(), Errno> {
        linkat(
            nix::fcntl::AT_FDCWD,
            &self.proc_path(),
            &self.dir,
            name,
            AtFlags::AT_SYMLINK_FOLLOW,
        )
    }

    /// Publish as a new file; if the name appeared meanwhile, refuse with `conflict`.
    fn link_new(mut self, t: &Target) -> Result<()> {
        if self.name.is_some() {
            return self.commit_new(t);
        }
        match self.link_as(&t.name) {
            Ok(()) => Ok(()),
            Err(Errno::EEXIST) => Err(t.conflict("was created by another process")),
            Err(e) => Err(map_errno(e, &t.display)),
        }
    }

    /// The commit step for a new file from a named temporary (the one both a single write and
    /// a transaction take): hard-link the temporary to the final name, then drop the temporary
    /// name. link() is atomic and refuses an existing name like O_EXCL, so a file that
    /// appeared meanwhile is refused with `conflict`, never overwritten.
    fn commit_new(&mut self, t: &Target) -> Result<()> {
        let temp = self.name.take().unwrap_or_default();
        let linked = linkat(
            &self.dir,
            temp.as_os_str(),
            &self.dir,
            t.name.as_os_str(),
            AtFlags::empty(),
        );
        let _ = unlinkat(&self.dir, temp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        match linked {
            Ok(()) => Ok(()),
            Err(Errno::EEXIST) => Err(t.conflict("was created by another process")),
            Err(e) => Err(map_errno(e, &t.display)),
        }
    }

    /// The commit step over an existing file from a named temporary: rename it over the final
    /// name (atomic: a reader sees the old content or the new).
    fn commit_over(&mut self, t: &Target) -> Result<()> {
        let temp = self.name.clone().unwrap_or_default();
        renameat(&self.dir, temp.as_os_str(), &self.dir, t.name.as_os_str())
            .map_err(|e| map_errno(e, &t.display))?;
        self.name = None;
        Ok(())
    }

    /// Rename over the old file, if it is still the one that was read.
    fn rename_over(mut self, t: &Target, expected: Stamp) -> Result<()> {
        if self.name.is_none() {
            let mut linked = None;
            for _ in 0..16 {
                let name = temp_name(&t.name);
                match self.link_as(&name) {
                    Ok(()) => {
                        linked = Some(name);
                        break;
                    }
                    Err(Errno::EEXIST) => continue,
                    Err(e) => return Err(map_errno(e, &t.display)),
                }
            }
            self.name = Some(linked.ok_or_else(|| {
                Error::new(
                    ErrorKind::IoError,
                    format!("could not name a temporary file beside {}", t.display),
                )
            })?);
        }
        match t.stat()? {
            Some(st) if Stamp::of(&st) == expected => {}
            Some(_) => return Err(t.conflict("was changed by another process")),
            None => return Err(t.conflict("was deleted or moved by another process")),
        }
        self.commit_over(t)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = unlinkat(&self.dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// A text file loaded for an in-place edit (str_replace, patch_apply): a regular file inside
/// the root (links that stay inside are followed), within `max` bytes, without NUL bytes.
pub fn load_for_edit(ws: &Workspace, user: &str, max: u64) -> Result<(Target, Existing, Vec<u8>)> {
    if user.ends_with('/') {
        return Err(Error::invalid_args(format!(
            "file_path {user:?} ends with '/': name a file, not a directory"
        )));
    }
    let target = locate(ws, user, true, None)?;
    let mut existing = target
        .read_existing(ws, max)?
        .ok_or_else(|| map_errno(Errno::ENOENT, &target.display))?;
    let bytes = existing
        .bytes
        .take()
        .ok_or_else(|| too_large(&target.display, existing.size, max))?;
    if let Some(at) = crate::text::find_byte(0, &bytes) {
        return Err(Error::new(
            ErrorKind::BinaryFile,
            format!(
                "{} looks like a binary file (a NUL byte at offset {at}); it cannot be edited as text",
                target.display
            ),
        ));
    }
    Ok((target, existing, bytes))
}

pub fn too_large(display: &str, size: u64, max: u64) -> Error {
    Error::new(
        ErrorKind::FileTooLarge,
        format!("{display} would be {size} bytes, over max_file_size_bytes ({max})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_takes_one_final_name() {
        let (p, n) = split(Path::new("a/b/c.txt")).expect("split");
        assert_eq!(p, PathBuf::from("a/b"));
        assert_eq!(n, OsString::from("c.txt"));
        let (p, n) = split(Path::new("c.txt")).expect("split");
        assert_eq!(p, PathBuf::from("."));
        assert_eq!(n, OsString::from("c.txt"));
        assert!(split(Path::new("a/..")).is_none());
        assert!(split(Path::new(".")).is_none());
    }

    #[test]
    fn climbing_above_the_root_is_counted_by_name() {
        assert!(!climbs_above_root(0, Path::new("a/../b")));
        assert!(climbs_above_root(0, Path::new("a/../../b")));
        assert!(!climbs_above_root(1, Path::new("../b")));
        assert!(climbs_above_root(1, Path::new("new/../../../b")));
        assert!(climbs_above_root(3, Path::new("/etc")));
    }

    #[test]
    fn directories_made_for_an_edit_go_again_unless_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let ws = Workspace::open_root(root).expect("root");
        // Dropped: the edit failed, both go, deepest first.
        let mut made = MadeDirs::default();
        let t = locate(&ws, "a/b/new.txt", true, Some(&mut made)).expect("locate");
        assert_eq!(t.display, "a/b/new.txt");
        assert!(root.join("a/b").is_dir());
        drop(made);
        assert!(names(root).is_empty());
        // Something put inside meanwhile keeps its directory, and the ones above it.
        let mut made = MadeDirs::default();
        locate(&ws, "c/d/new.txt", true, Some(&mut made)).expect("locate");
        std::fs::write(root.join("c/d/other.txt"), "x").expect("write");
        drop(made);
        assert_eq!(names(&root.join("c/d")), vec!["other.txt"]);
        // Kept: the edit landed.
        let mut made = MadeDirs::default();
        locate(&ws, "e/f/new.txt", true, Some(&mut made)).expect("locate");
        assert_eq!(made.keep(), vec!["e", "e/f"]);
        assert!(root.join("e/f").is_dir());
        // Without `made`, nothing is made.
        let err = locate(&ws, "g/new.txt", true, None).expect_err("missing");
        assert_eq!(err.kind, ErrorKind::NotFound);
        assert!(!root.join("g").exists());
    }

    #[test]
    fn temp_names_are_hidden_and_bounded() {
        let long = OsString::from("x".repeat(250));
        let name = temp_name(&long);
        assert!(name.as_bytes().starts_with(b".x"));
        assert!(name.len() < 200);
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_followed_link_through_dotdot_is_shown_where_it_really_leads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::os::unix::fs::symlink("../g.txt", root.join("a/b/l")).expect("link");
        // d -> a/b, so d/.. is a, not the root: folding `d/../g.txt` by hand would be wrong.
        std::os::unix::fs::symlink("a/b", root.join("d")).expect("link");
        std::os::unix::fs::symlink("d/l", root.join("x.txt")).expect("link");
        let ws = Workspace::open_root(root).expect("root");
        assert_eq!(
            locate(&ws, "x.txt", true, None).expect("locate").display,
            "a/g.txt"
        );
        assert_eq!(
            locate(&ws, "a/b/l", true, None).expect("locate").display,
            "a/g.txt"
        );
        // Without a `..`, the path stays as reached (a link in the middle is not spelled out).
        assert_eq!(
            locate(&ws, "d/new.txt", true, None)
                .expect("locate")
                .display,
            "d/new.txt"
        );
    }

    #[test]
    fn a_change_between_read_and_rename_is_a_conflict() {
        conflict_checks();
        FORCE_NAMED_TEMP.store(true, Ordering::Relaxed);
        conflict_checks();
        FORCE_NAMED_TEMP.store(false, Ordering::Relaxed);
    }

    fn conflict_checks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("f.txt"), "old\n").expect("write");
        let ws = Workspace::open_root(root).expect("root");

        // Changed by someone else after the read.
        let t = locate(&ws, "f.txt", true, None).expect("locate");
        let before = t
            .read_existing(&ws, 1 << 20)
            .expect("read")
            .expect("exists");
        std::fs::write(root.join("f.txt"), "changed elsewhere\n").expect("write");
        let err = t
            .replace_with(b"new\n", Some(&before))
            .expect_err("conflict");
        assert_eq!(err.code(), "conflict");
        assert_eq!(
            std::fs::read_to_string(root.join("f.txt")).expect("read"),
            "changed elsewhere\n"
        );

        // Deleted after the read.
        let before = t
            .read_existing(&ws, 1 << 20)
            .expect("read")
            .expect("exists");
        std::fs::remove_file(root.join("f.txt")).expect("rm");
        let err = t
            .replace_with(b"new\n", Some(&before))
            .expect_err("conflict");
        assert_eq!(err.code(), "conflict");

        // Created by someone else after we saw it missing: not overwritten.
        let g = locate(&ws, "g.txt", true, None).expect("locate");
        assert!(g.read_existing(&ws, 1 << 20).expect("read").is_none());
        std::fs::write(root.join("g.txt"), "theirs\n").expect("write");
        let err = g.replace_with(b"ours\n", None).expect_err("conflict");
        assert_eq!(err.code(), "conflict");
        assert_eq!(
            std::fs::read_to_string(root.join("g.txt")).expect("read"),
            "theirs\n"
        );

        // No temporary file is left by any of these failures.
        assert_eq!(names(root), vec!["g.txt"]);

        // And the unchanged case goes through.
        let before = g
            .read_existing(&ws, 1 << 20)
            .expect("read")
            .expect("exists");
        g.replace_with(b"ours\n", Some(&before)).expect("replace");
        assert_eq!(
            std::fs::read_to_string(root.join("g.txt")).expect("read"),
            "ours\n"
        );
        assert_eq!(names(root), vec!["g.txt"]);
    }
}
