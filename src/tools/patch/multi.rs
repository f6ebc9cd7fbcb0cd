//! A patch that names its files (`git diff`, `diff -ru`, Codex's envelope), applied without a
//! `file_path`: each section's names are read as git and diff write them (`a/`, `b/` or the two
//! tree names stripped, `/dev/null` for a side that does not exist, git's `rename from/to`,
//! `new file mode`, `deleted file mode`), every path goes through the jail (no `..`, nothing
//! outside the root, nothing under `.git`, not the configuration file, no file named twice —
//! also through a link), every hunk is placed, and only then is anything written: all files
//! at once through `durable::commit_all`, or none.

use std::collections::HashSet;
use std::os::fd::AsFd;
use std::path::Component;

use super::{adjustments, patched, FileChange, PatchApply, PatchResult};
use crate::code::check::{self, Edited};
use crate::edit::{self, Applied, Hunk, Lines, Section};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::durable::{self, Change, Existing, MadeDirs, Target, Unmade};
use crate::fs::history;
use crate::fs::jail::Kind;
use crate::tools::{Context, Tool};

/// What one section does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Modify,
    Create,
    Delete,
    Rename,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Action::Modify => "modified",
            Action::Create => "created",
            Action::Delete => "deleted",
            Action::Rename => "renamed",
        }
    }
}

/// A section with its names resolved.
struct Plan<'s, 'a> {
    section: &'s Section<'a>,
    action: Action,
    /// The path the change reads (None: created).
    old: Option<String>,
    /// The path the change writes (None: deleted).
    new: Option<String>,
}

/// A name from a `---`/`+++` line: None for `/dev/null`.
fn real(name: Option<&str>) -> Option<&str> {
    name.filter(|n| *n != "/dev/null")
}

/// The name without its first component (`a/src/x.rs` → `src/x.rs`).
fn strip_one(name: &str) -> String {
    name.split_once('/')
        .map_or(name, |(_, rest)| rest)
        .to_string()
}

/// True when the names carry a prefix to strip: git's (a `diff --git` line, or `a/` and `b/`)
/// or `diff -ru`'s two tree names.
fn prefixed(section: &Section<'_>, old: Option<&str>, new: Option<&str>) -> bool {
    if section.plain_names {
        return false;
    }
    if section.git_names.is_some() {
        return true;
    }
    match (old, new) {
        (Some(o), Some(n)) => {
            let first = |p: &str| p.split_once('/').map(|(f, _)| f.to_string());
            first(o).is_some() && first(n).is_some() && first(o) != first(n)
        }
        (Some(p), None) => p.starts_with("a/"),
        (None, Some(p)) => p.starts_with("b/"),
        (None, None) => false,
    }
}

fn plan<'s, 'a>(section: &'s Section<'a>, warnings: &mut Vec<String>) -> Result<Plan<'s, 'a>> {
    let at = section.patch_line;
    if section.copied {
        return Err(Error::invalid_args(format!(
            "the section at patch line {at} copies a file (`copy from`/`copy to`); patch_apply \
             does not copy files: send the new file as a creation (`--- /dev/null`)"
        )));
    }
    if section.mode_change {
        warnings.push(format!(
            "the section at patch line {at} changes a file mode; modes are not changed by \
             patch_apply"
        ));
    }
    let (mut old, mut new) = (
        real(section.old_name).map(str::to_string),
        real(section.new_name).map(str::to_string),
    );
    if section.old_name.is_none() && section.new_name.is_none() {
        if let Some((a, b)) = &section.git_names {
            old = (!section.created).then(|| a.clone());
            new = (!section.deleted).then(|| b.clone());
        }
    }
    if prefixed(section, old.as_deref(), new.as_deref()) {
        old = old.as_deref().map(strip_one);
        new = new.as_deref().map(strip_one);
    }
    if let Some(from) = &section.rename_from {
        old = Some(from.clone());
    }
    if let Some(to) = &section.rename_to {
        new = Some(to.clone());
    }
    if section.created || (section.old_name == Some("/dev/null")) {
        old = None;
    }
    if section.deleted || (section.new_name == Some("/dev/null")) {
        new = None;
    }
    let action = match (&old, &new) {
        (None, Some(_)) => Action::Create,
        (Some(_), None) => Action::Delete,
        (Some(o), Some(n)) if o != n => Action::Rename,
        (Some(_), Some(_)) => Action::Modify,
        (None, None) => {
            return Err(Error::invalid_args(format!(
                "the section at patch line {at} names no file (`--- /dev/null` and `+++ \
                 /dev/null`, or no `---`/`+++` lines): give each file `--- a/PATH` and `+++ \
                 b/PATH` lines, or pass file_path"
            )))
        }
    };
    Ok(Plan {
        section,
        action,
        old,
        new,
    })
}

/// A path named by the patch, checked before the jail sees it: relative, no `..`, not under
/// `.git`.
fn checked(ctx: &Context, name: &str) -> Result<String> {
    let rel = ctx.ws.relative(name)?;
    let path = rel.as_path();
    if durable::climbs_above_root(0, path) {
        return Err(Error::outside_workspace(format!(
            "the patch names {name}, which leads outside"
        )));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(Error::invalid_args(format!(
            "the patch names {name}: a name in a patch may not contain `..` (git apply and GNU \
             patch refuse it too); name the file without it"
        )));
    }
    if path.components().any(|c| c.as_os_str() == ".git") {
        return Err(Error::new(
            ErrorKind::ProtectedPath,
            format!("the patch names {name}, inside .git: VCS metadata is read-only"),
        ));
    }
    let shown = rel.display().to_string();
    if shown.is_empty() || shown == "." {
        return Err(Error::invalid_args(format!(
            "the patch names {name:?}, which is not a file"
        )));
    }
    Ok(shown)
}

/// A file's identity for "named twice": its directory's device and inode, and its name.
type Identity = (u64, u64, std::ffi::OsString);

fn identity(t: &Target) -> Result<Identity> {
    let st = nix::sys::stat::fstat(t.dir.as_fd())
        .map_err(|e| crate::fs::jail::map_errno(e, &t.display))?;
    Ok((st.st_dev, st.st_ino, t.name.clone()))
}

/// An existing file the change reads: followed through links for a modify or rename source
/// only when it stays a regular file; a delete removes the entry itself.
fn load_old(ctx: &Context, path: &str, action: Action) -> Result<(Target, Existing, Vec<u8>)> {
    let max = ctx.config.max_file_size_bytes;
    if action == Action::Modify {
        return durable::load_for_edit(&ctx.ws, path, max);
    }
    let target = durable::locate(&ctx.ws, path, false, None)?;
    if let Some(st) = target.stat()? {
        let kind = Kind::from_mode(st.st_mode);
        if kind != Kind::File {
            return Err(durable::not_a_file(&target.display, kind));
        }
    }
    let mut existing = target
        .read_existing(&ctx.ws, max)?
        .ok_or_else(|| Error::not_found(path))?;
    let bytes = existing
        .bytes
        .take()
        .ok_or_else(|| durable::too_large(&target.display, existing.size, max))?;
    if bytes.contains(&0) {
        return Err(Error::new(
            ErrorKind::BinaryFile,
            format!("{path} looks like a binary file; it cannot be patched as text"),
        ));
    }
    Ok((target, existing, bytes))
}

/// A file the change creates: its directory opened (made only when writing), the name free.
fn new_target(ctx: &Context, path: &str, made: Option<&mut MadeDirs>) -> Result<Option<Target>> {
    let target = match made {
        Some(made) => durable::locate(&ctx.ws, path, false, Some(made))?,
        None => match durable::locate_unmade(&ctx.ws, path, false)? {
            Unmade::Found(t) => t,
            // The directory is missing: a dry run says what would be created.
            Unmade::Missing(_) => return Ok(None),
        },
    };
    if target.stat()?.is_some() {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("the patch creates {path}, but it already exists; nothing was changed"),
        ));
    }
    Ok(Some(target))
}

/// One section worked out: the changes to commit and what the result says about it.
struct Worked {
    changes: Vec<Change>,
    /// The file's content before (None: new) and after, when the patch leaves it.
    contents: Option<(Option<Vec<u8>>, Vec<u8>)>,
    report: FileChange,
    diff: String,
    hunks: usize,
}

fn work(
    ctx: &Context,
    p: &Plan<'_, '_>,
    dry_run: bool,
    seen: &mut HashSet<Identity>,
    made: &mut MadeDirs,
) -> Result<Worked> {
    let hunks: &[Hunk<'_>] = &p.section.hunks;
    let max = ctx.config.max_file_size_bytes;
    let old = match &p.old {
        Some(path) => Some(load_old(ctx, path, p.action)?),
        None => None,
    };
    let new_t = match (&p.new, p.action) {
        (Some(path), Action::Create | Action::Rename) => {
            new_target(ctx, path, (!dry_run).then_some(made))?
        }
        _ => None,
    };
    for t in old.iter().map(|o| &o.0).chain(new_t.iter()) {
        if !seen.insert(identity(t)?) {
            return Err(Error::invalid_args(format!(
                "the patch names {} twice (or two names that lead to the same file); give each \
                 file one section",
                t.display
            )));
        }
    }
    let shown = p.new.clone().or_else(|| p.old.clone()).unwrap_or_default();
    let before: &[u8] = old.as_ref().map_or(&[], |o| o.2.as_slice());
    let applied: Option<Applied> = if hunks.is_empty() {
        None
    } else {
        Some(patched(&shown, before, hunks, max)?)
    };
    let after: Vec<u8> = match (&applied, p.action) {
        (_, Action::Delete) => Vec::new(),
        (Some(a), _) => a.content.clone(),
        (None, _) => before.to_vec(),
    };
    if p.action == Action::Delete && applied.as_ref().is_some_and(|a| !a.content.is_empty()) {
        return Err(edit_rejected(format!(
            "{shown}: the patch deletes the file but its hunks leave lines in it: the file has \
             lines the patch does not remove; nothing was changed"
        )));
    }
    let diff = section_diff(p, before, &after, ctx.config.max_output_bytes as usize);
    let unchanged = after == before;
    let contents =
        (p.action != Action::Delete).then(|| (old.as_ref().map(|o| o.2.clone()), after.clone()));
    let changes = changes_of(p.action, old, new_t, after, unchanged)?;
    Ok(Worked {
        changes,
        contents,
        report: FileChange {
            path: shown,
            action: p.action.word().to_string(),
            from: (p.action == Action::Rename)
                .then(|| p.old.clone())
                .flatten(),
            hunks_applied: applied.as_ref().map_or(0, |a| a.placements.len()),
            adjustments: applied.as_ref().map(adjustments).unwrap_or_default(),
        },
        diff,
        hunks: hunks.len(),
    })
}

fn edit_rejected(message: String) -> Error {
    Error::new(ErrorKind::PatchRejected, message)
}

fn changes_of(
    action: Action,
    old: Option<(Target, Existing, Vec<u8>)>,
    new_t: Option<Target>,
    after: Vec<u8>,
    unchanged: bool,
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    match (action, old) {
        (Action::Modify, Some((target, prior, _))) => {
            if !unchanged {
                out.push(Change::Write {
                    target,
                    content: after,
                    prior: Some(prior),
                    mode: None,
                });
            }
        }
        (Action::Delete, Some((target, prior, _))) => out.push(Change::Delete { target, prior }),
        (Action::Rename, Some((target, prior, _))) => {
            if let Some(t) = new_t {
                out.push(Change::Write {
                    target: t,
                    content: after,
                    prior: None,
                    mode: Some(prior.mode),
                });
            }
            out.push(Change::Delete { target, prior });
        }
        (Action::Create, None) => {
            if let Some(t) = new_t {
                out.push(Change::Write {
                    target: t,
                    content: after,
                    prior: None,
                    mode: None,
                });
            }
        }
        _ => {
            return Err(Error::new(
                ErrorKind::IoError,
                "internal: a file change without its file",
            ))
        }
    }
    Ok(out)
}

/// The section's diff as git would print it (`a/old` → `b/new`, `/dev/null` for a missing
/// side).
fn section_diff(p: &Plan<'_, '_>, before: &[u8], after: &[u8], cap: usize) -> String {
    let old_label = p
        .old
        .as_ref()
        .filter(|_| p.action != Action::Create)
        .map_or("/dev/null".to_string(), |o| format!("a/{o}"));
    let new_label = p
        .new
        .as_ref()
        .filter(|_| p.action != Action::Delete)
        .map_or("/dev/null".to_string(), |n| format!("b/{n}"));
    let (a, b) = (Lines::new(before), Lines::new(after));
    let edits = edit::line_edits(&a, &b);
    let (mut text, _) = edit::render(&a, &b, &edits, &old_label, &new_label, cap);
    if text.is_empty() && p.action == Action::Rename {
        text = format!("--- {old_label}\n+++ {new_label}\n");
    }
    text
}

/// `diff -ruN` writes a new file as a change of an empty one (`--- old/x <epoch>`, one
/// `@@ -0,0 +1,N @@` hunk): when that file does not exist, the section creates it.
fn creation_by_hunk(ctx: &Context, p: &mut Plan<'_, '_>) {
    if p.action != Action::Modify || !super::creates_file(&p.section.hunks) {
        return;
    }
    let Some(path) = p.old.as_deref() else { return };
    let missing = match durable::locate(&ctx.ws, path, false, None) {
        Ok(t) => t.stat().is_ok_and(|st| st.is_none()),
        Err(e) => e.kind == ErrorKind::NotFound,
    };
    if missing {
        p.action = Action::Create;
        p.old = None;
    }
}

fn work_all(
    ctx: &Context,
    plans: &[Plan<'_, '_>],
    dry_run: bool,
    made: &mut MadeDirs,
) -> Result<Vec<Worked>> {
    let mut seen = HashSet::new();
    plans
        .iter()
        .map(|p| work(ctx, p, dry_run, &mut seen, made))
        .collect()
}

/// Every section of the patch, all files or none.
// Long: every section planned, checked once without touching the workspace, then worked for
// real with the files read again, and recorded; the plans and the directories made (kept only
// when the commit lands) run through all three.
pub(super) fn apply_all(
    ctx: &Context,
    parsed: edit::Patch<'_>,
    dry_run: bool,
) -> Result<PatchResult> {
    let mut warnings = parsed.warnings.clone();
    let mut plans = Vec::new();
    for section in &parsed.sections {
        let mut p = plan(section, &mut warnings)?;
        p.old = p.old.as_deref().map(|n| checked(ctx, n)).transpose()?;
        p.new = p.new.as_deref().map(|n| checked(ctx, n)).transpose()?;
        creation_by_hunk(ctx, &mut p);
        plans.push(p);
    }
    // Everything is checked once without touching the workspace (no directory made for a new
    // file yet); only then, for real, with the files read again. Directories made for new
    // files go again unless the commit lands (`made` dropped without `keep`).
    let mut made = MadeDirs::default();
    let mut worked = work_all(ctx, &plans, true, &mut made)?;
    if !dry_run {
        worked = work_all(ctx, &plans, false, &mut made)?;
    }
    let cap = ctx.config.max_output_bytes as usize;
    let mut diff: String = worked.iter().map(|w| w.diff.as_str()).collect();
    let diff_truncated = diff.len() > cap;
    if diff_truncated {
        let cut = diff[..cap].rfind('\n').map_or(0, |p| p + 1);
        diff.truncate(cut);
    }
    let hunks_applied = worked.iter().map(|w| w.hunks).sum();
    let edited: Vec<Edited<'_>> = worked
        .iter()
        .filter_map(|w| {
            let (before, after) = w.contents.as_ref()?;
            Some(Edited {
                path: &w.report.path,
                before: before.as_deref(),
                after,
            })
        })
        .collect();
    // Checked before the commit (this holds the contents), reported after it.
    let syntax_errors = check::introduced(&edited);
    drop(edited);
    let mut changes = Vec::new();
    let mut files = Vec::new();
    for w in worked {
        changes.extend(w.changes);
        files.push(w.report);
    }
    let recorded = if dry_run {
        made.keep();
        None
    } else {
        let targets: Vec<&Target> = changes.iter().map(Change::target).collect();
        Some(history::record(
            &ctx.ws,
            ctx.config.undo.max_bytes,
            PatchApply::NAME.as_str(),
            &targets,
            || {
                durable::commit_all(&ctx.ws, &changes)?;
                Ok(made.keep())
            },
        )?)
    };
    Ok(PatchResult {
        path: files.first().map(|f| f.path.clone()).unwrap_or_default(),
        hunks_applied,
        dry_run,
        created: false,
        adjustments: Vec::new(),
        files,
        warnings,
        diff,
        diff_truncated,
        resolved_path: None,
        syntax_errors,
        undo: recorded.map(|r| r.undo).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_stripped_as_git_and_diff_write_them() {
        let s = Section::default();
        assert!(prefixed(&s, Some("a/x"), Some("b/x")));
        assert!(prefixed(&s, Some("old/src/x"), Some("new/src/x")));
        assert!(!prefixed(&s, Some("src/x"), Some("src/x")));
        assert!(!prefixed(&s, Some("x"), Some("x")));
        assert_eq!(strip_one("a/src/x.rs"), "src/x.rs");
    }
}
