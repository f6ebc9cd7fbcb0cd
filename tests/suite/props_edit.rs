//! Property tests of the edit tools over arbitrary text: files with LF, CRLF or mixed line
//! endings, a BOM, tabs, a missing final newline and bytes that are not UTF-8.
//!
//! - diff-then-patch: the diff the library renders (and the one write_file shows with dry_run)
//!   applied by patch_apply to the old file gives exactly the new file;
//! - str_replace then the inverse replace gives the original bytes back;
//! - write_file then read_file gives the content back, whole or read in line ranges.
//!
//! The properties call the tools' library entry points (`(spec.run)(json, &ctx)`), the same
//! code the binaries run; a few cases go through the binaries themselves.

use proptest::prelude::*;
use serde_json::{json, Value};

use sneaky::config::Config;
use sneaky::fs::jail::Workspace;
use sneaky::tools::{find, Context};

use crate::util;

/// Never produced by the generators: makes a replacement text unique in any generated file.
const MARK: &str = "§";

/// A line's text (without its ending): ASCII, tabs, spaces, some multi-byte characters, a
/// lone CR, and with `raw` now and then a byte that is not UTF-8.
fn body(raw: bool) -> impl Strategy<Value = Vec<u8>> {
    let bad = if raw { 1 } else { 0 };
    let piece = prop_oneof![
        6 => "[a-e ]{1,4}".prop_map(String::into_bytes),
        1 => Just(b"\t".to_vec()),
        1 => Just("é".as_bytes().to_vec()),
        1 => Just("日本".as_bytes().to_vec()),
        1 => Just(b"\r".to_vec()),
        bad => Just(vec![0xff]),
        bad => Just(vec![0xc3]),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|v| v.concat())
}

/// A UTF-8 line text (what a model can send in JSON).
fn text_body() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => "[a-e ]{1,4}",
        1 => Just("\t".to_string()),
        1 => Just("é".to_string()),
        1 => Just("日本".to_string()),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|v| v.concat())
}

#[derive(Debug, Clone, Copy)]
enum Endings {
    Lf,
    Crlf,
    Mixed,
}

#[derive(Debug, Clone)]
struct TextFile {
    bom: bool,
    endings: Endings,
    lines: Vec<(Vec<u8>, bool)>,
    final_newline: bool,
}

impl TextFile {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice("\u{feff}".as_bytes());
        }
        let n = self.lines.len();
        for (i, (text, crlf)) in self.lines.iter().enumerate() {
            out.extend_from_slice(text);
            if i + 1 < n || self.final_newline {
                let crlf = match self.endings {
                    Endings::Lf => false,
                    Endings::Crlf => true,
                    Endings::Mixed => *crlf,
                };
                out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            }
        }
        out
    }
}

/// A text file; one in four has bytes that are not UTF-8.
fn text_file() -> impl Strategy<Value = TextFile> {
    (
        any::<bool>(),
        prop_oneof![Just(Endings::Lf), Just(Endings::Crlf), Just(Endings::Mixed)],
        prop::bool::weighted(0.25)
            .prop_flat_map(|raw| prop::collection::vec((body(raw), any::<bool>()), 0..14)),
        any::<bool>(),
    )
        .prop_map(|(bom, endings, lines, final_newline)| TextFile {
            bom,
            endings,
            lines,
            final_newline,
        })
}

#[derive(Debug, Clone)]
enum LineEdit {
    Replace(usize, Vec<u8>),
    Insert(usize, Vec<u8>),
    Delete(usize),
}

fn line_edit(utf8_only: bool) -> impl Strategy<Value = LineEdit> {
    let text = if utf8_only {
        text_body().prop_map(String::into_bytes).boxed()
    } else {
        body(true).boxed()
    };
    prop_oneof![
        (any::<usize>(), text.clone()).prop_map(|(i, t)| LineEdit::Replace(i, t)),
        (any::<usize>(), text).prop_map(|(i, t)| LineEdit::Insert(i, t)),
        any::<usize>().prop_map(LineEdit::Delete),
    ]
}

/// The old file and an edited version of it (line edits, maybe the final newline toggled).
fn edited(old: &TextFile, edits: &[LineEdit], toggle_final: bool) -> TextFile {
    let mut new = old.clone();
    for e in edits {
        let n = new.lines.len();
        match e {
            LineEdit::Replace(i, t) if n > 0 => new.lines[i % n].0 = t.clone(),
            LineEdit::Insert(i, t) => new.lines.insert(i % (n + 1), (t.clone(), true)),
            LineEdit::Delete(i) if n > 0 => {
                new.lines.remove(i % n);
            }
            _ => {}
        }
    }
    if toggle_final {
        new.final_newline = !new.final_newline;
    }
    new
}

struct Tmp {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    ctx: Context,
}

fn tmp() -> Tmp {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).expect("mkdir");
    let ctx = Context {
        ws: Workspace::open_root(&root).expect("root"),
        config: Config::default(),
    };
    Tmp {
        _dir: dir,
        root,
        ctx,
    }
}

fn run(ctx: &Context, tool: &str, args: Value) -> Result<Value, sneaky::error::Error> {
    (find(tool).expect("tool").run)(args, ctx)
}

/// No temporary file or anything else but `expected` is left in the root.
fn only(root: &std::path::Path, expected: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, expected, "unexpected entries in the workspace");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 160,
        max_global_rejects: 100_000,
        ..ProptestConfig::default()
    })]

    /// The diff the library renders from old to new, applied by patch_apply to the old file,
    /// gives the new file byte for byte (when the diff itself is UTF-8 and can travel in JSON).
    #[test]
    fn diff_then_patch_gives_the_new_file(
        old in text_file(),
        edits in prop::collection::vec(line_edit(false), 1..5),
        toggle_final in prop::bool::weighted(0.2),
    ) {
        let new = edited(&old, &edits, toggle_final);
        let (old_b, new_b) = (old.bytes(), new.bytes());
        prop_assume!(old_b != new_b);
        let (diff, cut) =
            sneaky::edit::diff_text("f.txt", Some(&old_b), &new_b, None, usize::MAX);
        prop_assert!(!cut);
        // A diff line that is not UTF-8 cannot be sent in JSON (it shows as U+FFFD).
        prop_assume!(!diff.contains('\u{fffd}'));
        let t = tmp();
        std::fs::write(t.root.join("f.txt"), &old_b).expect("write");
        let out = run(&t.ctx, "patch_apply", json!({"file_path": "f.txt", "patch": diff}))
            .unwrap_or_else(|e| panic!("{e}\nold {old_b:?}\nnew {new_b:?}\n{diff}"));
        let now = std::fs::read(t.root.join("f.txt")).expect("read");
        prop_assert_eq!(&now, &new_b, "diff:\n{}\nresult {}", diff, out);
        only(&t.root, &["f.txt"]);
    }

    /// The diff write_file shows with dry_run is one patch_apply applies to give that content.
    #[test]
    fn write_dry_run_diff_applies(
        old in text_file(),
        edits in prop::collection::vec(line_edit(true), 1..5),
        toggle_final in prop::bool::weighted(0.2),
    ) {
        let new = edited(&old, &edits, toggle_final);
        let old_b = old.bytes();
        let Ok(new_s) = String::from_utf8(new.bytes()) else {
            return Ok(()); // write_file takes text only
        };
        prop_assume!(old_b != new_s.as_bytes());
        let t = tmp();
        std::fs::write(t.root.join("f.txt"), &old_b).expect("write");
        let shown = run(
            &t.ctx,
            "write_file",
            json!({"file_path": "f.txt", "content": new_s, "dry_run": true}),
        )
        .expect("dry run");
        prop_assert_eq!(std::fs::read(t.root.join("f.txt")).expect("read"), old_b.clone());
        let diff = shown["diff"].as_str().expect("diff").to_string();
        prop_assume!(!diff.contains('\u{fffd}'));
        run(&t.ctx, "patch_apply", json!({"file_path": "f.txt", "patch": diff}))
            .unwrap_or_else(|e| panic!("{e}\nold {old_b:?}\nnew {new_s:?}\n{diff}"));
        let now = std::fs::read(t.root.join("f.txt")).expect("read");
        prop_assert_eq!(String::from_utf8_lossy(&now), new_s, "diff:\n{}", diff);
        only(&t.root, &["f.txt"]);
    }

    /// str_replace of a unique piece of the file, then the inverse replace (new_str and
    /// old_str swapped), gives the original bytes back.
    #[test]
    fn replace_then_inverse_gives_the_original(
        file in text_file(),
        start in any::<prop::sample::Index>(),
        len in 1usize..24,
        replacement in (text_body(), prop::option::of(text_body()), any::<bool>()),
    ) {
        let bytes = file.bytes();
        prop_assume!(!bytes.is_empty());
        let from = start.index(bytes.len());
        let to = (from + len).min(bytes.len());
        let Ok(old_str) = std::str::from_utf8(&bytes[from..to]) else {
            return Ok(()); // old_str must be text
        };
        // The replacement: text with a mark making it unique, maybe spanning lines.
        let (a, b, crlf) = replacement;
        let new_str = match b {
            Some(b) => format!("{a}{MARK}{}{b}", if crlf { "\r\n" } else { "\n" }),
            None => format!("{a}{MARK}"),
        };
        // In a file mostly of CRLF lines new_str's lone LFs become CRLF (an LLM writes "\n"
        // in JSON), so there the inverse is exact for an old_str without lone LFs.
        let style = |b: &[u8]| sneaky::edit::Lines::new(b).newline();
        let lone_lf = old_str
            .bytes()
            .enumerate()
            .any(|(i, c)| c == b'\n' && (i == 0 || old_str.as_bytes()[i - 1] != b'\r'));
        let cut_crlf = old_str.starts_with('\n') && from > 0 && bytes[from - 1] == b'\r';
        prop_assume!(style(&bytes) == b"\n" || !lone_lf || (cut_crlf && !old_str[1..].contains('\n')));
        let t = tmp();
        std::fs::write(t.root.join("f.txt"), &bytes).expect("write");
        let first = run(
            &t.ctx,
            "str_replace",
            json!({"file_path": "f.txt", "old_str": old_str, "new_str": new_str}),
        );
        match first {
            Ok(_) => {}
            Err(e) if e.code() == "multiple_matches" => {
                prop_assert_eq!(std::fs::read(t.root.join("f.txt")).expect("read"), bytes);
                return Ok(());
            }
            Err(e) => panic!("{e}: {old_str:?} in {bytes:?}"),
        }
        let edited = std::fs::read(t.root.join("f.txt")).expect("read");
        prop_assert_ne!(&edited, &bytes);
        // new_str's line endings follow the file's usual ending; the inverse is exact when the
        // edit did not change which ending that is (it can in a file of one or two lines).
        prop_assume!(style(&edited) == style(&bytes));
        run(
            &t.ctx,
            "str_replace",
            json!({"file_path": "f.txt", "old_str": new_str, "new_str": old_str}),
        )
        .unwrap_or_else(|e| panic!("{e}: inverse of {old_str:?} → {new_str:?} in {edited:?}"));
        let back = std::fs::read(t.root.join("f.txt")).expect("read");
        prop_assert_eq!(
            &back, &bytes,
            "{:?} → {:?} via {:?}", old_str, new_str, String::from_utf8_lossy(&edited)
        );
        only(&t.root, &["f.txt"]);
    }

    /// write_file then read_file gives the content back, whole and in any line ranges.
    #[test]
    fn write_then_read_gives_the_content(
        file in text_file(),
        chunk in 1u64..6,
        nested in any::<bool>(),
    ) {
        let Ok(content) = String::from_utf8(file.bytes()) else {
            return Ok(()); // write_file takes text only
        };
        let t = tmp();
        let path = if nested { "d/e/f.txt" } else { "f.txt" };
        let w = run(&t.ctx, "write_file", json!({"file_path": path, "content": content}))
            .expect("write");
        prop_assert_eq!(w["bytes_written"].as_u64(), Some(content.len() as u64));
        prop_assert_eq!(std::fs::read(t.root.join(path)).expect("read"), content.as_bytes());
        let r = run(&t.ctx, "read_file", json!({"file_path": path})).expect("read");
        prop_assert_eq!(r["content"].as_str(), Some(content.as_str()));
        let total = r["total_lines"].as_u64().expect("total_lines");
        let mut joined = String::new();
        let mut offset = 1;
        while offset <= total {
            let part = run(
                &t.ctx,
                "read_file",
                json!({"file_path": path, "offset": offset, "limit": chunk}),
            )
            .expect("read range");
            joined.push_str(part["content"].as_str().expect("content"));
            offset += chunk;
        }
        prop_assert_eq!(&joined, &content);
        // Writing the same content again changes nothing and says so.
        let again = run(&t.ctx, "write_file", json!({"file_path": path, "content": content}))
            .expect("write again");
        prop_assert_eq!(again["created"].as_bool(), Some(false));
        prop_assert_eq!(again["diff"].as_str(), Some(""));
        only(&t.root, &[if nested { "d" } else { "f.txt" }]);
    }
}

/// The same round trips through the real binaries, for a few fixed-seed cases.
#[test]
fn round_trips_through_the_binaries() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        RunnerConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = (
        text_file(),
        prop::collection::vec(line_edit(true), 1..4),
        any::<bool>(),
    );
    let mut done = 0;
    for _ in 0..40 {
        if done == 6 {
            break;
        }
        let (old, edits, toggle) = strategy.new_tree(&mut runner).expect("case").current();
        let new = edited(&old, &edits, toggle);
        let (Ok(old_s), Ok(new_s)) = (
            String::from_utf8(old.bytes()),
            String::from_utf8(new.bytes()),
        ) else {
            continue;
        };
        if old_s == new_s {
            continue;
        }
        let w = util::ws();
        // write → read
        w.call(
            "sneaky-write",
            json!({"file_path": "f.txt", "content": old_s}),
        )
        .ok();
        let r = w.call("sneaky-read", json!({"file_path": "f.txt"}));
        assert_eq!(r.ok()["content"], old_s.as_str());
        // the dry-run diff → sneaky-patch FILE with the patch on stdin
        let shown = w.call(
            "sneaky-write",
            json!({"file_path": "f.txt", "content": new_s, "dry_run": true}),
        );
        let diff = shown.ok()["diff"].as_str().expect("diff").to_string();
        let applied = w.call_raw("sneaky-patch", &["f.txt"], diff.as_bytes());
        applied.ok();
        assert_eq!(
            std::fs::read(w.root.join("f.txt")).expect("read"),
            new_s.as_bytes(),
            "{diff}"
        );
        // str_replace of the whole file's first line piece and back
        if let Some(piece) = new_s.lines().find(|l| !l.is_empty()) {
            let unique = new_s.matches(piece).count() == 1;
            let there = w.call(
                "sneaky-replace",
                json!({"file_path": "f.txt", "old_str": piece, "new_str": format!("{MARK}{piece}")}),
            );
            if unique {
                there.ok();
                w.call(
                    "sneaky-replace",
                    json!({"file_path": "f.txt", "old_str": format!("{MARK}{piece}"), "new_str": piece}),
                )
                .ok();
                assert_eq!(
                    std::fs::read(w.root.join("f.txt")).expect("read"),
                    new_s.as_bytes()
                );
            } else {
                there.err("multiple_matches", 1);
            }
        }
        done += 1;
    }
    assert_eq!(done, 6, "too few UTF-8 cases generated");
}
