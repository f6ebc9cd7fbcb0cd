//! Real diffs from a git history: every file change in this repository's own history (and, so
//! that a shallow clone still tests something, changes made to this repository's source files
//! by a seeded mutator and diffed with `git diff --no-index`) is applied to the old version
//! and must give the new one exactly; then again with the old file shifted by a few lines,
//! where hunks must be found by their context. `benches/patch_history.sh` runs the same kind
//! of inputs through GNU patch for comparison.

use std::path::{Path, PathBuf};
use std::process::Command;

use sneaky::edit::{self, Hunk};

use crate::util;

pub struct Case {
    pub name: String,
    pub old: Vec<u8>,
    pub new: Vec<u8>,
    pub diff: String,
}

fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    // `git diff --no-index` exits 1 when the files differ.
    (out.status.code() == Some(0) || out.status.code() == Some(1)).then_some(out.stdout)
}

fn text_file(bytes: &[u8]) -> bool {
    bytes.len() < 512 * 1024 && !bytes.contains(&0)
}

/// File modifications in this repository's first-parent history (newest first).
fn repository_cases(max_commits: usize) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(list) = git(
        root,
        &[
            "rev-list",
            "--first-parent",
            &format!("--max-count={max_commits}"),
            "HEAD",
        ],
    ) else {
        return Vec::new();
    };
    let mut cases = Vec::new();
    for commit in String::from_utf8_lossy(&list).split_whitespace() {
        let parent = format!("{commit}^");
        let Some(names) = git(
            root,
            &["diff", "--name-only", "--diff-filter=M", &parent, commit],
        ) else {
            continue;
        };
        for file in String::from_utf8_lossy(&names).lines() {
            let (Some(old), Some(new)) = (
                git(root, &["show", &format!("{parent}:{file}")]),
                git(root, &["show", &format!("{commit}:{file}")]),
            ) else {
                continue;
            };
            let Some(diff) = git(
                root,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    &parent,
                    commit,
                    "--",
                    file,
                ],
            ) else {
                continue;
            };
            if !text_file(&old) || !text_file(&new) || old == new {
                continue;
            }
            let Ok(diff) = String::from_utf8(diff) else {
                continue;
            };
            cases.push(Case {
                name: format!("{}:{file}", &commit[..10.min(commit.len())]),
                old,
                new,
                diff,
            });
        }
    }
    cases
}

/// A small deterministic generator (no dependency needed for a test's randomness).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Edit a file the way a person does: a few scattered insertions, deletions and changes.
fn mutate(old: &[u8], rng: &mut Lcg) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = old
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for _ in 0..1 + rng.below(6) {
        if lines.is_empty() {
            break;
        }
        let at = rng.below(lines.len());
        match rng.below(3) {
            0 => {
                let n = 1 + rng.below(3);
                for k in 0..n {
                    lines.insert(
                        at,
                        format!("    // inserted {k} {}\n", rng.next()).into_bytes(),
                    );
                }
            }
            1 => {
                let n = (1 + rng.below(3)).min(lines.len() - at);
                lines.drain(at..at + n);
            }
            _ => {
                let mut l = lines[at].clone();
                let nl = l.ends_with(b"\n");
                if nl {
                    l.pop();
                }
                l.extend_from_slice(b" /* changed */");
                if nl {
                    l.push(b'\n');
                }
                lines[at] = l;
            }
        }
    }
    lines.concat()
}

/// Mutations of this repository's source files, diffed by git.
fn mutation_cases(dir: &Path, per_file: usize) -> Vec<Case> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![src];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut rng = Lcg(0x5eed);
    let mut cases = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let mut old = std::fs::read(file).expect("read");
        for round in 0..per_file {
            let new = mutate(&old, &mut rng);
            if new == old {
                continue;
            }
            let (a, b) = (
                dir.join(format!("{i}-{round}.old")),
                dir.join(format!("{i}-{round}.new")),
            );
            std::fs::write(&a, &old).expect("write");
            std::fs::write(&b, &new).expect("write");
            let diff = git(
                dir,
                &[
                    "diff",
                    "--no-index",
                    "--no-color",
                    a.to_str().expect("utf8"),
                    b.to_str().expect("utf8"),
                ],
            )
            .expect("git diff --no-index");
            cases.push(Case {
                name: format!(
                    "{}#{round}",
                    file.file_name().unwrap_or_default().to_string_lossy()
                ),
                old: old.clone(),
                new: new.clone(),
                diff: String::from_utf8(diff).expect("utf8 diff"),
            });
            old = new;
        }
    }
    cases
}

fn apply(old: &[u8], diff: &str) -> Result<Vec<u8>, String> {
    let patch = edit::parse(diff).map_err(|e| e.to_string())?;
    let hunks: Vec<Hunk<'_>> = patch.sections.into_iter().flat_map(|s| s.hunks).collect();
    edit::apply(old, &hunks, edit::MAX_FUZZ)
        .map(|a| a.content)
        .map_err(|r| r.message)
}

/// Whether some hunk's old side (its context and removed lines) stands more than once in `old`.
fn repeated_hunk(old: &[u8], diff: &str) -> bool {
    let Ok(patch) = edit::parse(diff) else {
        return false;
    };
    let lines: Vec<&[u8]> = old
        .split_inclusive(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\n").unwrap_or(l))
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    patch.sections.iter().flat_map(|s| &s.hunks).any(|hunk| {
        let side: Vec<&[u8]> = hunk
            .lines
            .iter()
            .filter(|l| l.op != edit::Op::Add)
            .map(|l| l.text)
            .collect();
        !side.is_empty()
            && lines
                .windows(side.len())
                .filter(|w| *w == side.as_slice())
                .count()
                > 1
    })
}

/// Lines put before the old file. (No blank line: a hunk whose only context is a blank line
/// could then match inside the shift; such hunks are refused when ambiguous, see unidiff.)
const SHIFT: &[u8] = b"// shifted 1\n// shifted 2\n// shifted 3\n// shifted 4\n// shifted 5\n";

const SHIFT_WITH_BLANK: &[u8] = b"// shifted 1\n\n// shifted 3\n";

#[test]
fn real_history_diffs_apply_exactly_also_when_shifted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cases = repository_cases(300);
    let from_history = cases.len();
    cases.extend(mutation_cases(tmp.path(), 4));
    assert!(cases.len() >= 40, "too few cases: {}", cases.len());
    let mut failures = Vec::new();
    let mut hunks = 0;
    let mut refused = 0;
    for case in &cases {
        hunks += case.diff.lines().filter(|l| l.starts_with("@@")).count();
        match apply(&case.old, &case.diff) {
            Ok(out) if out == case.new => {}
            Ok(_) => failures.push(format!("{}: applied but WRONG", case.name)),
            Err(e) => failures.push(format!("{}: rejected: {e}", case.name)),
        }
        let shifted_old = [SHIFT, &case.old].concat();
        let shifted_new = [SHIFT, &case.new].concat();
        match apply(&shifted_old, &case.diff) {
            Ok(out) if out == shifted_new => {}
            Ok(_) => failures.push(format!("{} (shifted): applied but WRONG", case.name)),
            // Off its numbers, a hunk whose lines stand twice in the file is refused, never
            // placed by a guess (the source has look-alike blocks: struct literals, tests).
            Err(_) if repeated_hunk(&case.old, &case.diff) => refused += 1,
            Err(e) => failures.push(format!("{} (shifted): rejected: {e}", case.name)),
        }
        // With a blank line in the shift a hunk may be refused as ambiguous, never misplaced.
        let blank_old = [SHIFT_WITH_BLANK, &case.old].concat();
        let blank_new = [SHIFT_WITH_BLANK, &case.new].concat();
        match apply(&blank_old, &case.diff) {
            Ok(out) if out == blank_new => {}
            Ok(_) => failures.push(format!("{} (shifted, blank): applied but WRONG", case.name)),
            Err(_) => refused += 1,
        }
    }
    eprintln!(
        "history: {} cases ({from_history} from this repository's history, {} mutations), {hunks} hunks, {} failures, {refused} refused as ambiguous (a blank line in the shift, or a hunk whose lines stand twice)",
        cases.len(),
        cases.len() - from_history,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn history_diffs_through_the_binary() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cases = mutation_cases(tmp.path(), 1);
    let w = util::ws();
    for case in cases.iter().take(8) {
        std::fs::write(w.root.join("f.rs"), &case.old).expect("write");
        let reply = w.call_raw("sneaky-patch", &["f.rs"], case.diff.as_bytes());
        reply.ok();
        assert!(
            std::fs::read(w.root.join("f.rs")).expect("read") == case.new,
            "{}",
            case.name
        );
    }
}

/// The diff every edit returns is a real patch: rendered for random edits of real files (also
/// in CRLF and without a final newline), it applies back with our parser and with GNU patch
/// (when installed) to give the new file exactly.
#[test]
fn returned_diffs_round_trip() {
    use sneaky::edit::{line_edits, render, Lines};
    let tmp = tempfile::tempdir().expect("tempdir");
    let gnu = Command::new("patch").arg("--version").output().is_ok();
    let mut rng = Lcg(0xd1ff);
    let mut checked = 0;
    for case in mutation_cases(tmp.path(), 2) {
        let variants: [(Vec<u8>, Vec<u8>); 3] = [
            (case.old.clone(), case.new.clone()),
            (crlf(&case.old), crlf(&case.new)),
            (
                strip_final_newline(&case.old),
                mutate(&strip_final_newline(&case.old), &mut rng),
            ),
        ];
        for (old, new) in variants {
            // A mutation may change nothing (the random edits depend on the corpus, this
            // repository's own sources): no edit, no diff to check.
            if old == new {
                continue;
            }
            let (a, b) = (Lines::new(&old), Lines::new(&new));
            let (diff, cut) = render(&a, &b, &line_edits(&a, &b), "a/f", "b/f", usize::MAX);
            assert!(!cut);
            let ours = apply(&old, &diff).unwrap_or_else(|e| panic!("{}: {e}\n{diff}", case.name));
            assert!(
                ours == new,
                "{}: our own diff applied wrongly\n{diff}",
                case.name
            );
            if gnu {
                let f = tmp.path().join("gnu.txt");
                std::fs::write(&f, &old).expect("write");
                let status = Command::new("patch")
                    .args(["-s", "-f", "--no-backup-if-mismatch", "-r", "-"])
                    .arg(&f)
                    .stdin(
                        std::fs::File::open({
                            let p = tmp.path().join("d.patch");
                            std::fs::write(&p, &diff).expect("write");
                            p
                        })
                        .expect("open"),
                    )
                    .status()
                    .expect("patch");
                assert!(
                    status.success(),
                    "{}: GNU patch refused our diff\n{diff}",
                    case.name
                );
                assert!(
                    std::fs::read(&f).expect("read") == new,
                    "{}: GNU patch result differs",
                    case.name
                );
            }
            checked += 1;
        }
    }
    eprintln!(
        "round trip: {checked} diffs (GNU patch {})",
        if gnu { "checked too" } else { "not installed" }
    );
}

fn crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 2);
    for b in text {
        if *b == b'\n' {
            out.push(b'\r');
        }
        out.push(*b);
    }
    out
}

fn strip_final_newline(text: &[u8]) -> Vec<u8> {
    text.strip_suffix(b"\n").unwrap_or(text).to_vec()
}
