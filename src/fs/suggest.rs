//! Making a failed path actionable: a `not_found` path gets the nearest name that exists
//! ("did you mean src/main.rs?"), and an `outside_workspace` message names the root the path
//! fell outside of. Applied once, in the one dispatch (`tools::call`), so every tool on every
//! surface (binaries, sneaky-mcp, sneaky-agent) says the same.
//!
//! The search lists directories through the jail, one component at a time, so it sees only
//! what the tools may see; it is bounded, and it is only ever run on a failure.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use nix::dir::Dir;
use serde_json::Value;

use super::jail::{RelPath, Workspace};
use crate::error::{Error, ErrorKind, Suggestion};

/// Entries of one directory compared at most.
const MAX_ENTRIES_SCANNED: usize = 10_000;

/// The path arguments of a call (`params`: the tool's `Tool::PATH_PARAMS`), taken before the
/// arguments are consumed.
pub fn path_args(params: &[&str], args: &Value) -> Vec<String> {
    params
        .iter()
        .filter_map(|p| args.get(*p).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Add what helps to a failure about one of `paths`.
pub fn explain(err: Error, ws: &Workspace, paths: &[String]) -> Error {
    match err.kind {
        ErrorKind::OutsideWorkspace if !err.locates_root() => {
            err.with_root(ws.root().display().to_string())
        }
        ErrorKind::NotFound => {
            let guess = paths
                .iter()
                .find_map(|user| nearest_existing(ws, concerned(&err, ws, user)?.as_path()));
            match guess {
                Some(guess) => err.with_suggestion(Suggestion::Nearest(guess)),
                None => err,
            }
        }
        _ => err,
    }
}

/// `user` (a path argument) as the root-relative path the failure is about, if it is.
fn concerned(err: &Error, ws: &Workspace, user: &str) -> Option<RelPath> {
    let rel = ws.relative(user).ok()?;
    (err.path() == Some(rel.display())).then_some(rel)
}

/// A shell user below the root who typed a path relative to the current directory
/// (`sneaky-read main.rs` from `src/`): when that path exists there, say so, as the better
/// guess. `cwd` is the process's current directory; only the binaries have a meaningful one.
pub fn relative_to_cwd(err: Error, ws: &Workspace, paths: &[String], cwd: &Path) -> Error {
    if !matches!(err.kind, ErrorKind::NotFound | ErrorKind::OutsideWorkspace) {
        return err;
    }
    let Ok(below) = cwd.strip_prefix(ws.root()) else {
        return err;
    };
    if below.as_os_str().is_empty() {
        return err;
    }
    let found = paths.iter().find_map(|user| {
        if Path::new(user).is_absolute() {
            return None;
        }
        let rel = concerned(&err, ws, user)?;
        // `../x` from src/deep is src/x, not outside: resolve against the current directory.
        let candidate = lexically_inside(&below.join(rel.as_path()))?;
        if exists(ws, &candidate) {
            return Some(candidate.to_string_lossy().into_owned());
        }
        // A typo as well (`mian.rs` from src/) when the root itself offers nothing alike.
        if err.suggestion().is_some() {
            return None;
        }
        nearest_existing(ws, &candidate)
    });
    match found {
        Some(candidate) => err.with_suggestion(Suggestion::FromCurrentDir {
            candidate,
            root: ws.root().display().to_string(),
        }),
        None => err,
    }
}

/// `a/b/../c` → `a/c`; None when the path climbs above its start (or is empty).
fn lexically_inside(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// The existing path nearest to `missing`, replacing each missing component by the most
/// similar name in its directory; None when some component has no close name.
pub fn nearest_existing(ws: &Workspace, missing: &Path) -> Option<String> {
    let mut found = PathBuf::new();
    let mut changed = false;
    for comp in missing.components() {
        let name = match comp {
            Component::Normal(name) => name,
            Component::CurDir => continue,
            // `..` or a root: not something to guess about.
            _ => return None,
        };
        let here = found.join(name);
        if exists(ws, &here) {
            found = here;
            continue;
        }
        let best = closest_name(ws, &found, name)?;
        found.push(best);
        changed = true;
    }
    let text = found.to_string_lossy().into_owned();
    (changed && !text.is_empty()).then_some(text)
}

fn rel(ws: &Workspace, path: &Path) -> Option<RelPath> {
    let text = if path.as_os_str().is_empty() {
        ".".to_string()
    } else {
        path.to_str()?.to_string()
    };
    ws.relative(&text).ok()
}

fn exists(ws: &Workspace, path: &Path) -> bool {
    rel(ws, path).is_some_and(|r| ws.kind_of(&r).is_ok())
}

/// The entry of `dir` most like `name`: the same name in another case, the same stem
/// (`README` for `README.md`), or within a small edit distance.
fn closest_name(ws: &Workspace, dir: &Path, name: &OsStr) -> Option<PathBuf> {
    let wanted = name.to_str()?.to_lowercase();
    let fd = ws.open_dir(&rel(ws, dir)?).ok()?;
    let mut listing = Dir::from_fd(fd).ok()?;
    let mut best: Option<(usize, String)> = None;
    for entry in listing.iter().take(MAX_ENTRIES_SCANNED).flatten() {
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let Ok(candidate) = std::str::from_utf8(bytes) else {
            continue;
        };
        let Some(score) = likeness(&wanted, &candidate.to_lowercase()) else {
            continue;
        };
        let better = match &best {
            None => true,
            Some((b, n)) => score < *b || (score == *b && candidate < n.as_str()),
        };
        if better {
            best = Some((score, candidate.to_string()));
        }
    }
    best.map(|(_, n)| PathBuf::from(OsStr::from_bytes(n.as_bytes())))
}

/// A distance (lower is closer), or None when the names are not alike. Both are lowercase.
fn likeness(wanted: &str, candidate: &str) -> Option<usize> {
    if wanted == candidate {
        return Some(0);
    }
    let stem = |s: &str| s.split('.').next().unwrap_or(s).to_string();
    if !wanted.is_empty() && (stem(candidate) == wanted || stem(wanted) == candidate) {
        return Some(1);
    }
    let distance = strsim::damerau_levenshtein(wanted, candidate);
    let allowed = (wanted.chars().count() / 3).clamp(1, 3);
    (distance <= allowed).then_some(distance + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alike_names() {
        assert_eq!(likeness("mian.rs", "main.rs"), Some(2));
        assert_eq!(likeness("readme", "readme.md"), Some(1));
        assert_eq!(likeness("src", "scr"), Some(2));
        assert_eq!(likeness("lib.rs", "cargo.toml"), None);
        assert_eq!(likeness("a", "b"), Some(2));
        assert_eq!(likeness("ab", "xy"), None);
    }

    #[test]
    fn nearest_path_through_the_jail() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(dir.path().join("src/bin")).expect("mkdir");
        std::fs::write(dir.path().join("src/main.rs"), "").expect("write");
        let ws = Workspace::open_root(dir.path()).expect("root");
        assert_eq!(
            nearest_existing(&ws, Path::new("scr/mian.rs")).as_deref(),
            Some("src/main.rs")
        );
        assert_eq!(nearest_existing(&ws, Path::new("src/zzzzzz.toml")), None);
        assert_eq!(nearest_existing(&ws, Path::new("../src")), None);
        let e = explain(
            Error::not_found("src/mainn.rs"),
            &ws,
            &["./src/mainn.rs".to_string()],
        );
        assert_eq!(
            e.message(),
            "src/mainn.rs does not exist; did you mean src/main.rs?"
        );
        // A failure about another path than the one given gets no guess.
        let e = explain(
            Error::not_found("src/mainn.rs/x"),
            &ws,
            &["src/mainn.rs".to_string()],
        );
        assert_eq!(e.message(), "src/mainn.rs/x does not exist");
        let e = relative_to_cwd(
            Error::not_found("main.rs").with_suggestion(Suggestion::Nearest("x".into())),
            &ws,
            &["main.rs".to_string()],
            &ws.root().join("src"),
        );
        let root = ws.root().display().to_string();
        assert_eq!(
            e.message(),
            format!(
                "main.rs does not exist; paths are relative to the workspace root {root}, not \
                 to the current directory: did you mean src/main.rs?"
            )
        );
        let e = explain(
            Error::outside_workspace("../main.rs is outside").about_path("../main.rs"),
            &ws,
            &[],
        );
        assert_eq!(
            e.message(),
            format!("../main.rs is outside the workspace root {root}")
        );
        // Named once: the hint does not say where the root is again.
        let e = relative_to_cwd(
            e,
            &ws,
            &["../main.rs".to_string()],
            &ws.root().join("src/bin"),
        );
        assert_eq!(
            e.message(),
            format!(
                "../main.rs is outside the workspace root {root}; paths are relative to the \
                 workspace root, not to the current directory: did you mean src/main.rs?"
            )
        );
        // A failure that does not name the root says where it is after what it says.
        let e = explain(
            Error::new(ErrorKind::OutsideWorkspace, "a link leads out"),
            &ws,
            &[],
        );
        assert_eq!(
            e.message(),
            format!("a link leads out (the workspace root is {root})")
        );
        // Said once, even when explained twice.
        assert_eq!(explain(e.clone(), &ws, &[]), e);
    }
}
