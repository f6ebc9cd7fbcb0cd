//! The properties the fuzz targets check, shared with the corpus replay in the test suite
//! (`tests/suite/fuzz_replay.rs`), so CI replays the minimised corpus without a fuzzing build.

#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use sneaky::config::commands::{DEFAULT_DENIED, STRICT_ALLOWED, STRICT_DENIED};
use sneaky::config::Shell;
use sneaky::edit::{self, Edit, Hunk, Lines};
use sneaky::fs::jail::Workspace;
use sneaky::fs::walk;
use sneaky::protocol::parse_request;
use sneaky::shell::policy::{self, NEVER, OPAQUE_WRAPPERS};
use sneaky::tools::find;
use sneaky::tools::replace::{self, Refusal};

/// Arbitrary bytes as a tool's stdin: request parsing and every tool's argument validation
/// return Ok or a clean error, never panic or allocate without bound.
pub fn protocol(data: &[u8]) {
    let Ok(value) = parse_request(data) else {
        return;
    };
    for spec in sneaky::tools::all() {
        let _ = (spec.check_args)(&value);
    }
    if let Some(pattern) = value.get("pattern").and_then(|p| p.as_str()) {
        let _ = find::compile(pattern);
    }
}

fn hostile_workspace() -> &'static (PathBuf, Workspace) {
    static WS: OnceLock<(PathBuf, Workspace)> = OnceLock::new();
    WS.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("sneaky-fuzz-jail-{}", std::process::id()));
        let root = base.join("ws");
        let _ = std::fs::create_dir_all(root.join("a/b"));
        let _ = std::fs::write(root.join("a/f"), "inside");
        let _ = std::fs::write(base.join("secret"), "outside");
        for (target, link) in [
            ("..", "up"),
            ("../secret", "out"),
            ("/proc/self/root", "proc"),
            ("a/b/../..", "loop_root"),
            ("l2", "l1"),
            ("l1", "l2"),
        ] {
            let _ = std::os::unix::fs::symlink(target, root.join(link));
        }
        let _ = std::os::unix::fs::symlink(&base, root.join("a/abs_out"));
        let _ = std::os::unix::fs::symlink(root.join("a"), root.join("abs_in"));
        let ws = Workspace::open_root(&root).expect("workspace");
        (ws.root().to_path_buf(), ws)
    })
}

/// Arbitrary path strings against a workspace full of hostile links: whatever opens, by
/// openat2 or by the fallback walker, lies beneath the root in the kernel's own view.
pub fn jail_paths(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (root, ws) = hostile_workspace();
    let Ok(rel) = ws.relative(text) else {
        return;
    };
    for flags in [
        OFlag::O_PATH,
        OFlag::O_RDONLY,
        OFlag::O_PATH | OFlag::O_NOFOLLOW,
    ] {
        let opened = [
            ws.open(&rel, flags, Mode::empty()).ok(),
            ws.resolve_beneath(ws.root_fd(), rel.as_path(), flags, Mode::empty())
                .ok(),
        ];
        for fd in opened.into_iter().flatten() {
            let real =
                std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("readlink");
            assert!(
                real.starts_with(root),
                "{text:?} opened {real:?}, outside {root:?}"
            );
        }
    }
    // A walk started there reaches only paths that resolve beneath the root.
    let Ok(start) = ws.walk_start(&rel) else {
        return;
    };
    let opts = walk::Options {
        filters: None::<walk::Unfiltered>,
        max_depth: Some(3),
        threads: 1,
        files_per_job: walk::FILES_PER_JOB,
    };
    let seen = std::sync::Mutex::new(Vec::new());
    walk::walk(ws, start, &opts, || {
        |entry: &walk::Entry<'_>| {
            if let Ok(mut seen) = seen.lock() {
                seen.push(entry.path.to_string());
            }
            walk::Flow::Continue
        }
    });
    for path in seen.into_inner().expect("lock") {
        let rel = ws.relative(&path).expect("walked path is relative");
        let fd = ws
            .open(&rel, OFlag::O_PATH | OFlag::O_NOFOLLOW, Mode::empty())
            .unwrap_or_else(|e| panic!("{text:?}: walked {path:?}, which does not resolve: {e}"));
        let real =
            std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("readlink");
        assert!(real.starts_with(root), "{text:?}: walked {real:?}");
    }
}

/// Arbitrary source in each language (the first byte picks it from `Lang::ALL`): the skim's
/// holes (src/code/skim.rs, skim_python.rs) are sorted, apart and inside the source, and come
/// quickly; never a panic.
pub fn skim(data: &[u8]) {
    use sneaky::code::Lang;
    let Some((&pick, source)) = data.split_first() else {
        return;
    };
    let lang = Lang::ALL[usize::from(pick) % Lang::ALL.len()];
    let started = Instant::now();
    let holes = sneaky::code::skim::holes(lang, source);
    assert_quick(started);
    for &(start, end) in &holes {
        assert!(start <= end && end <= source.len(), "{holes:?}");
    }
    assert!(holes.windows(2).all(|w| w[0].1 <= w[1].0), "{holes:?}");
}

/// Longest any single check may take on a fuzz input (a hang or a quadratic blow-up fails).
const SLOW: Duration = Duration::from_secs(5);

/// Fails a check that took longer than SLOW when timing is strict (SNEAKY_TIMING=1, which
/// benches/fuzz.sh sets for its optimised fuzz runs). The test suite replays the corpus
/// unoptimised, on machines that may be loaded: there a slow check is only reported on stderr
/// (libFuzzer's own -timeout catches hangs in the fuzz runs).
fn assert_quick(started: Instant) {
    let took = started.elapsed();
    if took < SLOW {
        return;
    }
    if std::env::var("SNEAKY_TIMING").as_deref() == Ok("1") {
        panic!("slow: {took:?}");
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SLOW fuzz check: {took:?} (bound {SLOW:?})"
    );
}

fn split_at_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == 0) {
        Some(p) => (&data[..p], &data[p + 1..]),
        None => (data, &[]),
    }
}

fn hunks_of<'a>(patch: edit::Patch<'a>) -> Vec<Hunk<'a>> {
    patch.sections.into_iter().flat_map(|s| s.hunks).collect()
}

/// Old and new files whose diff text can say everything about them: UTF-8 (the diff is text).
fn diffable(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok()
}

/// The edits say exactly how `new` differs from `old`: in order, and every line outside them
/// is the same line (ending included) on both sides.
fn check_edits(old: &Lines<'_>, new: &Lines<'_>, edits: &[Edit]) {
    let (mut i, mut j) = (0usize, 0usize);
    let same = |from_old: usize, from_new: usize, count: usize| {
        for k in 0..count {
            assert_eq!(
                old.raw(from_old + k),
                new.raw(from_new + k),
                "line {} (old) / {} (new) outside the edits {edits:?} differs",
                from_old + k,
                from_new + k
            );
        }
    };
    for e in edits {
        assert!(
            e.old.start >= i
                && e.new.start >= j
                && e.old.end <= old.len()
                && e.new.end <= new.len(),
            "edits out of order or range: {edits:?}"
        );
        assert_eq!(
            e.old.start - i,
            e.new.start - j,
            "gap mismatch in {edits:?}"
        );
        same(i, j, e.old.start - i);
        i = e.old.end;
        j = e.new.end;
    }
    assert_eq!(old.len() - i, new.len() - j, "tail mismatch in {edits:?}");
    same(i, j, old.len() - i);
}

/// Render the diff of `edits` from `old` to `new`, read it back and apply it to `old` without
/// fuzz: it must give `new` exactly.
fn check_round_trip(old: &[u8], new: &[u8], edits: &[Edit]) {
    let (a, b) = (Lines::new(old), Lines::new(new));
    let (diff, cut) = edit::render(&a, &b, edits, "a/f", "b/f", usize::MAX);
    assert!(!cut);
    if diff.is_empty() {
        assert_eq!(old, new, "no diff for different files");
        return;
    }
    let patch = edit::parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
    let hunks = hunks_of(patch);
    let back = edit::apply(old, &hunks, 0)
        .unwrap_or_else(|r| panic!("own diff rejected: {}\n{diff}", r.message));
    assert!(
        back.content == new,
        "own diff applied gives {:?}, not {:?}\n{diff}",
        String::from_utf8_lossy(&back.content),
        String::from_utf8_lossy(new)
    );
}

/// The unified-diff parser and applier. The first byte picks a mode:
/// - 0: patch text, NUL, file: parse and apply may refuse, never panic; a patch that applies
///   reports edits that describe the change exactly, and the diff rendered from them applies
///   back to the same result;
/// - 1: old file, NUL, new file: the diff the project renders from (old, new) applies to old
///   and gives new exactly;
/// - 2: four control bytes, file, NUL, added text: a hunk built from the file's own lines at
///   their true position parses, applies with zero fuzz and offset, and gives the exact splice.
pub fn unidiff(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let started = Instant::now();
    match mode % 3 {
        0 => unidiff_apply(rest),
        1 => unidiff_round_trip(rest),
        _ => unidiff_constructed(rest),
    }
    assert_quick(started);
}

fn unidiff_apply(rest: &[u8]) {
    let (patch, file) = split_at_nul(rest);
    let Ok(text) = std::str::from_utf8(patch) else {
        return;
    };
    let Ok(parsed) = edit::parse(text) else {
        return;
    };
    let hunks = hunks_of(parsed);
    let Ok(applied) = edit::apply(file, &hunks, edit::MAX_FUZZ) else {
        return;
    };
    assert_eq!(applied.placements.len(), hunks.len());
    let (a, b) = (Lines::new(file), Lines::new(&applied.content));
    check_edits(&a, &b, &applied.edits);
    if diffable(file) && diffable(&applied.content) {
        check_round_trip(file, &applied.content, &applied.edits);
    }
}

fn unidiff_round_trip(rest: &[u8]) {
    let (old, new) = split_at_nul(rest);
    if !diffable(old) || !diffable(new) {
        return;
    }
    let (a, b) = (Lines::new(old), Lines::new(new));
    let edits = edit::line_edits(&a, &b);
    check_edits(&a, &b, &edits);
    check_round_trip(old, new, &edits);
}

fn unidiff_constructed(rest: &[u8]) {
    let [s, cb, k, ca, body @ ..] = rest else {
        return;
    };
    let (file, added) = split_at_nul(body);
    let Ok(file_text) = std::str::from_utf8(file) else {
        return;
    };
    let Ok(added_text) = std::str::from_utf8(added) else {
        return;
    };
    // LF only, final newline present: every line's ending is unambiguous.
    if file_text.contains('\r')
        || added_text.contains('\r')
        || !(file.is_empty() || file.ends_with(b"\n"))
    {
        return;
    }
    let lines: Vec<&str> = file_text.split_terminator('\n').collect();
    let n = lines.len();
    let start = usize::from(*s) % (n + 1);
    let removed = usize::from(*k) % (n - start + 1);
    let before = usize::from(*cb % 4).min(start);
    let after = usize::from(*ca % 4).min(n - start - removed);
    let added: Vec<&str> = added_text.split_terminator('\n').collect();
    let old_side = before + removed + after;
    let new_side = before + added.len() + after;
    if old_side + added.len() == 0 {
        return;
    }
    let first = start - before;
    // Diff convention: an empty side names the line it follows.
    let pos = |count: usize| if count == 0 { first } else { first + 1 };
    let mut patch = format!(
        "--- a/f\n+++ b/f\n@@ -{},{old_side} +{},{new_side} @@\n",
        pos(old_side),
        pos(new_side)
    );
    for l in &lines[first..start] {
        patch.push_str(&format!(" {l}\n"));
    }
    for l in &lines[start..start + removed] {
        patch.push_str(&format!("-{l}\n"));
    }
    for l in &added {
        patch.push_str(&format!("+{l}\n"));
    }
    for l in &lines[start + removed..start + removed + after] {
        patch.push_str(&format!(" {l}\n"));
    }
    let parsed = edit::parse(&patch).unwrap_or_else(|e| panic!("{e}\n{patch}"));
    assert!(parsed.warnings.is_empty(), "{:?}\n{patch}", parsed.warnings);
    let hunks = hunks_of(parsed);
    assert_eq!(hunks.len(), 1, "{patch}");
    assert_eq!(hunks[0].lines.len(), old_side + added.len(), "{patch}");
    let applied = edit::apply(file, &hunks, 0).unwrap_or_else(|r| panic!("{}\n{patch}", r.message));
    assert_eq!(applied.placements[0].offset, 0, "{patch}");
    assert_eq!(applied.placements[0].fuzz, 0, "{patch}");
    let mut want = String::new();
    for l in lines[..start]
        .iter()
        .chain(&added)
        .chain(&lines[start + removed..])
    {
        want.push_str(l);
        want.push('\n');
    }
    assert!(
        applied.content == want.as_bytes(),
        "got {:?}, want {want:?}\n{patch}",
        String::from_utf8_lossy(&applied.content)
    );
}

/// Every non-overlapping occurrence, left to right, found the slow obvious way.
fn occurrences(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut at = Vec::new();
    let mut i = 0;
    while !needle.is_empty() && i + needle.len() <= hay.len() {
        if &hay[i..i + needle.len()] == needle {
            at.push(i);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    at
}

fn lf_to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' && text.get(i.wrapping_sub(1)) != Some(&b'\r') {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

fn crlf_to_lf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &b) in text.iter().enumerate() {
        if !(b == b'\r' && text.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    out
}

/// str_replace's splice on arbitrary bytes. Input: a flags byte (bit 0: replace_all), the
/// lengths of old_str and new_str (one byte each), old_str, new_str, then the file's bytes.
/// Checked against a slow reference model: which line-ending form of old_str is used, where
/// it occurs, exactly-one unless replace_all, the result is the splice (so bytes outside the
/// replaced spans, CRs and invalid UTF-8 included, are kept), the inverse replacement restores
/// the file, and the rendered diff applies back.
pub fn str_replace(data: &[u8]) {
    let [flags, ol, nl, rest @ ..] = data else {
        return;
    };
    let (ol, nl) = (usize::from(*ol), usize::from(*nl));
    if rest.len() < ol + nl {
        return;
    }
    let (old, rest) = rest.split_at(ol);
    let (new, file) = rest.split_at(nl);
    let replace_all = flags & 1 == 1;
    // run() refuses these before reading the file.
    if old.is_empty() || old == new {
        return;
    }
    let lines = Lines::new(file);
    let started = Instant::now();
    let got = replace::splice(&lines, old, new, replace_all, u64::MAX);
    assert_quick(started);

    // The reference: the file's dominant ending decides which forms are tried, in order.
    let crlf_lines = file
        .iter()
        .enumerate()
        .filter(|(i, b)| **b == b'\n' && *i > 0 && file[i - 1] == b'\r')
        .count();
    let lf_lines = file.iter().filter(|b| **b == b'\n').count() - crlf_lines;
    let crlf = crlf_lines > lf_lines;
    let mut forms: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    if crlf && old.contains(&b'\n') {
        forms.push((lf_to_crlf(old), lf_to_crlf(new)));
    }
    forms.push((
        old.to_vec(),
        if crlf { lf_to_crlf(new) } else { new.to_vec() },
    ));
    if !crlf && old.windows(2).any(|w| w == b"\r\n") {
        forms.push((crlf_to_lf(old), crlf_to_lf(new)));
    }
    let chosen = forms
        .into_iter()
        .map(|(o, n)| (occurrences(file, &o), o, n))
        .find(|(at, _, _)| !at.is_empty());
    let Some((at, old_b, new_b)) = chosen else {
        assert_eq!(got, Err(Refusal::NotFound));
        if !replace_all {
            check_forgiving(&lines, old, new);
        }
        return;
    };
    if !replace_all {
        // Exactly one: two occurrences, even overlapping ones (`aa` in `aaa`), are refused.
        let starts: Vec<usize> = (0..file.len())
            .filter(|&i| file[i..].starts_with(&old_b))
            .collect();
        if starts.len() > 1 {
            match &got {
                Err(Refusal::Multiple(listed)) => assert!(
                    listed.len() > 1 && listed.iter().all(|o| starts.contains(o)),
                    "{listed:?} vs {starts:?}"
                ),
                other => panic!("{} occurrences at {starts:?}, got {other:?}", starts.len()),
            }
            return;
        }
    }
    let spliced = got.unwrap_or_else(|e| panic!("refused with {e:?}"));
    assert_eq!(spliced.at, at);
    assert_eq!(spliced.old, old_b);
    assert_eq!(spliced.new, new_b);
    let mut want = Vec::new();
    let mut prev = 0;
    for &o in &at {
        assert_eq!(&file[o..o + old_b.len()], old_b.as_slice());
        want.extend_from_slice(&file[prev..o]);
        want.extend_from_slice(&new_b);
        prev = o + old_b.len();
    }
    want.extend_from_slice(&file[prev..]);
    assert_eq!(spliced.content, want);
    // Nothing before the first or after the last replacement moved or changed.
    let last_end = at[at.len() - 1] + old_b.len();
    assert_eq!(&spliced.content[..at[0]], &file[..at[0]]);
    assert!(spliced.content.ends_with(&file[last_end..]));

    // The inverse: when new_str now occurs exactly once, in the same ending form, replacing
    // it by old_str gives the original bytes back.
    if at.len() == 1 && !new.is_empty() {
        let new_lines = Lines::new(&spliced.content);
        if let Ok(back) = replace::splice(&new_lines, new, old, false, u64::MAX) {
            if back.old == spliced.new && back.new == spliced.old {
                assert_eq!(back.at, at);
                assert_eq!(
                    back.content, file,
                    "the inverse replacement did not restore the file"
                );
            }
        }
    }

    // The diff shown for the edit describes it and applies back.
    let new_lines = Lines::new(&spliced.content);
    let edits = spliced.edits(&lines, &new_lines);
    check_edits(&lines, &new_lines, &edits);
    if diffable(file) && diffable(&spliced.content) {
        check_round_trip(file, &spliced.content, &edits);
    }
}

/// The bytes without trailing ASCII whitespace.
fn rtrim(b: &[u8]) -> &[u8] {
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    &b[..end]
}

/// str_replace's ladder when old_str is not there as written: what it replaces is old_str's
/// lines at one place (trailing whitespace, or indentation, aside) — the only such place for
/// the trailing-whitespace rung, by a slow count — and every byte outside those lines is kept.
fn check_forgiving(lines: &Lines<'_>, old: &[u8], new: &[u8]) {
    let started = Instant::now();
    let got = replace::forgiving(lines, old, new, u64::MAX);
    assert!(started.elapsed() < SLOW);
    let Ok(loose) = got else { return };
    let lf = crlf_to_lf(old);
    let body = lf.strip_suffix(b"\n").unwrap_or(&lf);
    let want: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    let n = lines.len();
    assert!(loose.line + want.len() <= n, "{loose:?}");
    let strip = |b: &[u8]| -> Vec<u8> {
        b.iter()
            .copied()
            .filter(|c| !c.is_ascii_whitespace())
            .collect()
    };
    for (k, w) in want.iter().enumerate() {
        let have = lines.content(loose.line + k);
        assert_eq!(
            strip(have),
            strip(w),
            "line {} of the match",
            loose.line + k
        );
    }
    if loose.rung == sneaky::edit::Rung::TrailingWhitespace {
        let places = (0..=n - want.len())
            .filter(|&p| {
                want.iter()
                    .enumerate()
                    .all(|(k, w)| rtrim(lines.content(p + k)) == rtrim(w))
            })
            .count();
        assert_eq!(places, 1, "taken with {places} places matching");
    }
    let file = lines.bytes;
    let before = lines.offset(loose.line);
    let after = lines.offset(loose.line + want.len());
    assert_eq!(&loose.content[..before], &file[..before]);
    assert!(loose.content.ends_with(&file[after..]));
}

fn policy_root() -> &'static Path {
    Path::new("/fuzz-root/ws")
}

/// The first place where bash would expand or substitute something: `$` starting a parameter,
/// command or arithmetic expansion (or `$'…'`/`$"…"`), a backtick, `<(` or `>(`, outside
/// single quotes, comments and backslash escapes. Heredocs are not modelled (the caller skips
/// lines with `<<`).
fn bash_expansion(text: &str) -> Option<usize> {
    #[derive(PartialEq)]
    enum St {
        Plain,
        Single,
        Double,
    }
    let b = text.as_bytes();
    let expands_after_dollar = |next: Option<&u8>| {
        next.is_some_and(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'_' | b'{'
                        | b'('
                        | b'['
                        | b'@'
                        | b'*'
                        | b'#'
                        | b'?'
                        | b'$'
                        | b'!'
                        | b'-'
                        | b'\''
                        | b'"'
                )
        })
    };
    let mut st = St::Plain;
    let mut word_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match st {
            St::Plain => {
                match c {
                    b'\\' => {
                        i += 2;
                        word_start = false;
                        continue;
                    }
                    b'\'' => st = St::Single,
                    b'"' => st = St::Double,
                    b'#' if word_start => {
                        while i < b.len() && b[i] != b'\n' {
                            i += 1;
                        }
                        continue;
                    }
                    b'`' => return Some(i),
                    b'$' if expands_after_dollar(b.get(i + 1)) => return Some(i),
                    b'<' | b'>' if b.get(i + 1) == Some(&b'(') => return Some(i),
                    _ => {}
                }
                word_start = matches!(
                    c,
                    b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
                );
            }
            St::Single => {
                if c == b'\'' {
                    st = St::Plain;
                    word_start = false;
                }
            }
            St::Double => match c {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'"' => {
                    st = St::Plain;
                    word_start = false;
                }
                b'`' => return Some(i),
                // `$"` and `$'` are quoting only outside double quotes.
                b'$' if expands_after_dollar(b.get(i + 1))
                    && !matches!(b.get(i + 1), Some(b'"' | b'\'')) =>
                {
                    return Some(i)
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// A restrictive configuration: a short allowed list (with a shell, so `sh -c` nesting is
/// explored; with sort, tar and cp, whose options run programs or copy devices) and an
/// explicit denied list.
fn restrictive() -> Shell {
    Shell {
        allowed_commands: Some(
            [
                "ls", "cat", "echo", "git", "sed", "find", "xargs", "env", "timeout", "sh", "sort",
                "tar", "cp",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ),
        denied_commands: Some(vec!["rm".to_string(), "curl".to_string()]),
        ..Shell::default()
    }
}

/// Arbitrary text to the command policy, with the default (the contained mode), the strict
/// mode's defaults, a restrictive allow list and the same with the kernel layers off: an answer
/// comes quickly (nesting bombs included); an accepted line runs no denied program (by name or
/// by a path outside the workspace), and under an allow list only programs it allows (never a
/// NEVER builtin or an opaque wrapper); a denied command on the next line is refused. When the
/// policy is strict, also: bash would expand nothing in an accepted line (no `$…`, backticks or
/// process substitution outside single quotes), and a line that runs only sort hands it no
/// compression program.
pub fn command_policy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let restrictive_allowed = vec![
        "ls", "cat", "echo", "git", "sed", "find", "xargs", "env", "timeout", "sh", "sort", "tar",
        "cp",
    ];
    let deny_list: Vec<&str> = DEFAULT_DENIED.iter().map(|(n, _)| *n).collect();
    let strict_denied: Vec<&str> = deny_list.iter().chain(STRICT_DENIED).copied().collect();
    for (shell, allowed, denied, next) in [
        (Shell::default(), None, deny_list, "sudo pwned"),
        (
            Shell {
                strict: true,
                ..Shell::default()
            },
            Some(STRICT_ALLOWED.to_vec()),
            strict_denied,
            "rm pwned",
        ),
        (
            restrictive(),
            Some(restrictive_allowed.clone()),
            vec!["rm", "curl"],
            "rm pwned",
        ),
        (
            Shell {
                sandbox: false,
                ..restrictive()
            },
            Some(restrictive_allowed),
            vec!["rm", "curl"],
            "rm pwned",
        ),
    ] {
        let strict = !policy::contained(&shell);
        let started = Instant::now();
        let verdict = policy::check(text, &shell, policy_root());
        assert_quick(started);
        let Ok(approved) = verdict else {
            continue;
        };
        for p in &approved.programs {
            // A relative path without `..` is a file of the workspace: a copy runs contained.
            let base = p.rsplit('/').next().unwrap_or(p);
            let in_workspace =
                p.contains('/') && !p.starts_with('/') && !p.split('/').any(|c| c == "..");
            assert!(
                !denied.contains(&base) || in_workspace,
                "{text:?} runs denied {p}"
            );
            let Some(allowed) = &allowed else {
                continue;
            };
            assert!(
                allowed.contains(&p.as_str()),
                "{text:?} runs {p}, not allowed"
            );
            assert!(
                !NEVER.contains(&p.as_str()) && !OPAQUE_WRAPPERS.contains(&p.as_str()),
                "{text:?} runs {p}"
            );
        }
        // A line that runs only sort never hands it a compression program (any abbreviation
        // of --compress-program, however quoted). With the layers in force, one known only at
        // run time is the kernel's (it must be in the exec set).
        if strict && !approved.programs.is_empty() && approved.programs.iter().all(|p| p == "sort")
        {
            let unquoted: String = text
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                .collect();
            assert!(
                !unquoted.split_whitespace().any(|t| t.starts_with("--com")),
                "{text:?} hands sort a compression program"
            );
        }
        // A complete accepted line followed by another line: that line is a command of its
        // own, denied in every configuration (unless the line defines functions, one of which
        // could be named like it).
        let defines = text.contains("()") || text.contains("function");
        if !text.contains("<<") && !text.ends_with('\\') && !defines {
            let more = format!("{text}\n{next}");
            assert!(
                policy::check(&more, &shell, policy_root()).is_err(),
                "{more:?} accepted"
            );
        }
        if strict && !text.contains("<<") && !text.ends_with('\\') {
            if let Some(at) = bash_expansion(text) {
                panic!(
                    "{text:?} accepted, but bash expands at byte {at}: {:?}",
                    &text[at..]
                );
            }
        }
    }
}

fn mcp_workspace() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir()
            .join(format!("sneaky-fuzz-mcp-{}", std::process::id()))
            .join("ws");
        let _ = std::fs::create_dir_all(root.join("src"));
        let _ = std::fs::write(root.join("src/a.rs"), "fn main() {}\n");
        let _ = std::fs::write(root.join("notes.txt"), "alpha\nbeta\n");
        root
    })
}

/// Arbitrary bytes as JSON-RPC lines to the MCP server (read-only, on a small workspace),
/// after a well-formed `initialize`: serving ends at EOF without error; every line written
/// is one JSON-RPC 2.0 message (a response with `result` or `error`); `initialize` is
/// answered exactly once; every request with a usable id read from the input is answered
/// at most once, and nothing answers an id that was never sent.
pub fn mcp_line(data: &[u8]) {
    let init = br#"{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
    let mut input = init.to_vec();
    input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    input.extend_from_slice(data);
    input.push(b'\n');
    // The ids a request in the input could carry (any JSON value; the server answers an
    // invalid one with null).
    let mut sent: Vec<serde_json::Value> = vec![serde_json::Value::Null];
    for line in input.split(|b| *b == b'\n') {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
            if let Some(id) = v.get("id") {
                sent.push(id.clone());
            }
        }
    }
    // The server's workers write their answers themselves: stdout must outlive the call.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let opts = sneaky::mcp::Options {
        root: Some(mcp_workspace().clone()),
        config: None,
        read_only: true,
        structured_content: sneaky::mcp::StructuredChoice::default(),
    };
    let started = Instant::now();
    sneaky::mcp::serve(opts, std::io::Cursor::new(input), captured.clone()).expect("serve");
    assert_quick(started);
    let out = std::mem::take(&mut *captured.0.lock().expect("lock"));
    let mut answered: Vec<serde_json::Value> = Vec::new();
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let msg: serde_json::Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(line)));
        assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
        assert!(
            msg.get("result").is_some() != msg.get("error").is_some(),
            "{msg}"
        );
        let id = msg.get("id").cloned().expect("a response has an id");
        assert!(sent.contains(&id), "answer to an id never sent: {msg}");
        if !id.is_null() {
            assert!(
                !answered.contains(&id) || sent.iter().filter(|s| **s == id).count() > 1,
                "answered twice: {msg}"
            );
        }
        answered.push(id);
    }
    let init_answers = answered.iter().filter(|a| **a == "fuzz-init").count();
    let init_sent = sent.iter().filter(|s| **s == "fuzz-init").count();
    assert!(
        init_answers >= 1 && init_answers <= init_sent,
        "{answered:?}"
    );
}
