//! A fixed sample of the LLM-edit corpus (`benches/llm_edits/corpus.rs`), run through the real
//! sneaky-patch and sneaky-replace binaries: model-shaped mistakes (stale or missing line
//! numbers, wrong counts, lost trailing whitespace, tabs written as spaces, shifted
//! indentation, hunks out of order, a context line dropped or doubled, CRLF files, prose and
//! fences, elided lines, str_replace drift) made to seeded edits of this repository's own
//! files. Never wrong in any class; the cases the text pins down are nearly all recovered.
//! `benches/llm_edits.sh` runs the full corpus against GNU patch, git apply and an Aider-like
//! matcher. A second test applies the committed sample in `tests/llm_edits` (cases made from
//! registry crates and the histories of this repository and ripgrep, with the references'
//! outcomes beside each) and holds ours to the best reference that is never wrong in a class.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::corpus::{self, Request, Source, CLASSES};
use crate::util;

const PER_CLASS: usize = 6;
const SEED: u64 = 14;

/// This repository's text files that suit the corpus, in a fixed order.
fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests/suite", "benches"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs" || x == "sh") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let old = std::fs::read_to_string(&p).ok()?;
            corpus::usable(&old).then(|| Source {
                name: p.display().to_string(),
                old,
                new: None,
            })
        })
        .collect()
}

#[derive(Default, Debug)]
struct Tally {
    correct: usize,
    refused: usize,
    wrong: Vec<String>,
    unique: usize,
    unique_correct: usize,
}

#[test]
fn corpus_sample_is_never_wrong() {
    let sources = sources();
    assert!(
        sources.len() >= 20,
        "too few source files: {}",
        sources.len()
    );
    let cases = corpus::generate(&sources, PER_CLASS, SEED);
    assert!(
        cases.len() >= CLASSES.len() * PER_CLASS / 2,
        "{} cases",
        cases.len()
    );
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    for case in &cases {
        let w = util::ws();
        w.write("f", &case.old);
        let reply = match &case.request {
            Request::Patch(patch) => {
                w.call("sneaky-patch", json!({"file_path": "f", "patch": patch}))
            }
            Request::Replace { old_str, new_str } => w.call(
                "sneaky-replace",
                json!({"file_path": "f", "old_str": old_str, "new_str": new_str}),
            ),
        };
        let now = std::fs::read(w.root.join("f")).expect("read");
        let t = tally.entry(case.class).or_default();
        t.unique += usize::from(case.unique);
        if reply.status != 0 {
            if now == case.old.as_bytes() {
                t.refused += 1;
            } else {
                t.wrong
                    .push(format!("{} (changed the file, then failed)", case.name));
            }
        } else if case.expected.as_deref().map(str::as_bytes) == Some(now.as_slice()) {
            t.correct += 1;
            t.unique_correct += usize::from(case.unique);
        } else {
            t.wrong.push(format!(
                "{}: {:?}\n{}",
                case.name,
                case.request,
                String::from_utf8_lossy(&now)
            ));
        }
    }
    for (class, t) in &tally {
        eprintln!(
            "{class:24} correct {:3} refused {:3} wrong {:3} (pinned down: {} of {})",
            t.correct,
            t.refused,
            t.wrong.len(),
            t.unique_correct,
            t.unique
        );
    }
    let wrong: Vec<&String> = tally.values().flat_map(|t| &t.wrong).collect();
    assert!(wrong.is_empty(), "wrong results:\n{wrong:#?}");
    let (unique, recovered): (usize, usize) = tally
        .values()
        .fold((0, 0), |(u, c), t| (u + t.unique, c + t.unique_correct));
    assert!(
        recovered * 10 >= unique * 9,
        "only {recovered} of {unique} pinned-down cases recovered: {tally:#?}"
    );
    for (class, t) in &tally {
        assert!(
            t.unique_correct * 2 >= t.unique,
            "{class}: {} of {} pinned-down cases recovered: {t:?}",
            t.unique_correct,
            t.unique
        );
    }
}

/// A committed case: class, pinned down by its text, file, request, expected file (None: only
/// a refusal is right) and the references' (tool, outcome).
type Committed = (
    String,
    bool,
    String,
    Request,
    Option<String>,
    Vec<(String, String)>,
);

fn read_case(dir: &Path) -> Committed {
    let read = |name: &str| std::fs::read_to_string(dir.join(name));
    let meta = read("meta").expect("meta");
    let mut words = meta.split_whitespace();
    let class = words.next().expect("class").to_string();
    let unique = words.next() == Some("unique");
    let old = read("old").expect("old");
    let request = match read("patch") {
        Ok(patch) => Request::Patch(patch),
        Err(_) => {
            let args: serde_json::Value =
                serde_json::from_str(&read("args.json").expect("args.json")).expect("json");
            Request::Replace {
                old_str: args["old_str"].as_str().expect("old_str").to_string(),
                new_str: args["new_str"].as_str().expect("new_str").to_string(),
            }
        }
    };
    let refs = read("refs")
        .expect("refs")
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(t, o)| (t.to_string(), o.to_string()))
        .collect();
    (class, unique, old, request, read("expected").ok(), refs)
}

#[test]
fn committed_sample_is_never_wrong_and_beats_every_never_wrong_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/llm_edits");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("tests/llm_edits")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    // class → tool → (correct where counted, wrong); "ours" among the tools.
    let mut table: BTreeMap<String, BTreeMap<String, (usize, usize)>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for dir in &dirs {
        let (class, unique, old, request, expected, refs) = read_case(dir);
        // str_replace has no line numbers: a tool taking the first of several places guesses,
        // so its classes are compared on the cases the text pins down.
        let counted = unique || matches!(request, Request::Patch(_));
        let w = util::ws();
        w.write("f", &old);
        let reply = match &request {
            Request::Patch(patch) => {
                w.call("sneaky-patch", json!({"file_path": "f", "patch": patch}))
            }
            Request::Replace { old_str, new_str } => w.call(
                "sneaky-replace",
                json!({"file_path": "f", "old_str": old_str, "new_str": new_str}),
            ),
        };
        let now = std::fs::read(w.root.join("f")).expect("read");
        let outcome = if reply.status != 0 {
            if now == old.as_bytes() {
                "refused"
            } else {
                "wrong"
            }
        } else if expected.as_deref().map(str::as_bytes) == Some(now.as_slice()) {
            "correct"
        } else {
            "wrong"
        };
        if outcome == "wrong" {
            wrong.push(dir.display().to_string());
        }
        let tools = table.entry(class).or_default();
        for (tool, o) in refs
            .iter()
            .map(|(t, o)| (t.as_str(), o.as_str()))
            .chain([("ours", outcome)])
        {
            let cell = tools.entry(tool.to_string()).or_default();
            cell.0 += usize::from(o == "correct" && counted);
            cell.1 += usize::from(o == "wrong");
        }
    }
    assert!(wrong.is_empty(), "ours wrong on: {wrong:#?}");
    for class in CLASSES {
        let tools = table
            .get(class)
            .unwrap_or_else(|| panic!("the sample has no case of {class}"));
        let ours = tools["ours"].0;
        for (tool, (correct, wrong)) in tools {
            eprintln!("{class:24} {tool:8} correct {correct:3} wrong {wrong:3}");
            assert!(
                *wrong > 0 || ours >= *correct,
                "{class}: ours correct {ours} times, {tool} (never wrong) {correct} times"
            );
        }
    }
}
