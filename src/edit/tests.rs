//! Tests of the diff engine as a whole: parse, place, build and render together.

use super::parse::parse_header;
use super::*;

fn apply_text(file: &str, patch: &str) -> Result<String, String> {
    let p = parse(patch).map_err(|e| e.to_string())?;
    let hunks: Vec<Hunk<'_>> = p.sections.into_iter().flat_map(|s| s.hunks).collect();
    apply(file.as_bytes(), &hunks, MAX_FUZZ)
        .map(|a| String::from_utf8(a.content).expect("utf8"))
        .map_err(|r| r.message)
}

#[test]
fn header_forms() {
    assert_eq!(
        parse_header("@@ -1,3 +1,4 @@ fn x()"),
        Ok(Some(((1, 3), (1, 4))))
    );
    assert_eq!(parse_header("@@ -5 +5 @@"), Ok(Some(((5, 1), (5, 1)))));
    assert_eq!(parse_header("@@ -0,0 +1,2 @@"), Ok(Some(((0, 0), (1, 2)))));
    assert_eq!(parse_header("@@"), Ok(None));
    assert!(parse_header("@@ -a,3 +1 @@").is_err());
    assert!(parse_header("@@@ -1 -1 +1 @@@").is_err());
}

#[test]
fn simple_apply_and_offset() {
    let file = "a\nb\nc\nd\ne\n";
    let patch = "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n";
    assert_eq!(apply_text(file, patch).expect("ok"), "a\nb\nC\nd\ne\n");
    let shifted = format!("x\ny\n{file}");
    assert_eq!(
        apply_text(&shifted, patch).expect("ok"),
        "x\ny\na\nb\nC\nd\ne\n"
    );
}

#[test]
fn crlf_file_stays_crlf() {
    let file = "a\r\nb\r\nc\r\n";
    let patch = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n";
    assert_eq!(
        apply_text(file, patch).expect("ok"),
        "a\r\nB\r\nB2\r\nc\r\n"
    );
}

#[test]
fn a_cr_on_an_added_line_is_kept_unless_the_whole_patch_is_crlf() {
    // git diff of a mixed file: the CR belongs to the line.
    assert_eq!(
        apply_text("a\nb\n", "@@ -1 +1,2 @@\n a\n+new\r\n").expect("ok"),
        "a\nnew\r\nb\n"
    );
    // Its absence too, when the patch shows CRs elsewhere.
    let p = "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+b\n";
    assert_eq!(apply_text("a\r\nb\r\n", p).expect("ok"), "a\r\nb\n");
    // No CR anywhere: the file's ending.
    assert_eq!(
        apply_text("a\r\nb\r\n", "@@ -2 +2 @@\n-b\n+c\n").expect("ok"),
        "a\r\nc\r\n"
    );
    // A patch carried with CRLF throughout: the file's own ending is used.
    let p = "--- a/f\r\n+++ b/f\r\n@@ -1 +1,2 @@\r\n a\r\n+new\r\n";
    assert_eq!(apply_text("a\nb\n", p).expect("ok"), "a\nnew\nb\n");
}

#[test]
fn an_added_line_takes_the_ending_of_the_lines_around_it() {
    // Mostly CRLF, but the hunk is in the LF part: its added line is LF (the diff rendered
    // from this edit has no CR, and must give the new file back).
    let file = "a\r\na\r\na\r\na\r\na\r\nb\nb\nb\nb\n";
    assert_eq!(
        apply_text(file, "@@ -7,3 +7,4 @@\n b\n b\n b\n+c\n").expect("ok"),
        format!("{file}c\n")
    );
    // And the other way round.
    let file = "a\r\na\r\nb\nb\nb\n";
    assert_eq!(
        apply_text(file, "@@ -1,2 +1,3 @@\n a\n+x\n a\n").expect("ok"),
        "a\r\nx\r\na\r\nb\nb\nb\n"
    );
    // Context without endings (the unterminated last line alone): the file's ending.
    assert_eq!(
        apply_text("x\r\ny\r\nz", "@@ -3 +3,2 @@\n+w\n z\n").expect("ok"),
        "x\r\ny\r\nw\r\nz"
    );
}

#[test]
fn final_newline_rules() {
    // Unaware patch keeps the absence.
    assert_eq!(
        apply_text("a\nb", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n").expect("ok"),
        "a\nB"
    );
    // Aware patch adds it.
    let p = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
    assert_eq!(apply_text("a\nb", p).expect("ok"), "a\nb\n");
    // Aware patch removes it.
    let p = "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n";
    assert_eq!(apply_text("a\nb\n", p).expect("ok"), "a\nb");
    // Appending after a last line without newline.
    assert_eq!(
        apply_text("a\nb", "@@ -2 +2,2 @@\n b\n+c\n").expect("ok"),
        "a\nb\nc"
    );
}

#[test]
fn fuzz_is_used_and_reported() {
    let file = "X\nY\n3\n4\n5\n6\n7\n";
    let patch = "@@ -1,7 +1,7 @@\n 1\n 2\n 3\n-4\n+four\n 5\n 6\n 7\n";
    let p = parse(patch).expect("parse");
    let a = apply(file.as_bytes(), &p.sections[0].hunks, MAX_FUZZ).expect("fuzz");
    assert_eq!(a.placements[0].fuzz, 2);
    assert_eq!(
        String::from_utf8(a.content).expect("utf8"),
        "X\nY\n3\nfour\n5\n6\n7\n"
    );
    assert!(apply(file.as_bytes(), &p.sections[0].hunks, 0).is_err());
}

#[test]
fn rejection_names_hunk_and_expectation() {
    let file = "a\nb\nc\nd\n";
    let patch = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -3,2 +3,2 @@\n-zzz\n+Z\n d\n";
    let err = apply_text(file, patch).expect_err("second hunk fails");
    assert!(err.contains("hunk 2 of 2"), "{err}");
    assert!(err.contains("@@ -3,2 +3,2 @@"), "{err}");
    assert!(err.contains("|zzz"), "{err}");
}

#[test]
fn blank_only_context_is_not_moved_when_ambiguous() {
    let patch = "@@ -1 +1,2 @@\n+added\n \n";
    let err = apply_text("x\n\ny\n\n", patch).expect_err("ambiguous");
    assert!(err.contains("all blank"), "{err}");
    // Unique, or where the header says: applied.
    assert_eq!(
        apply_text("x\n\ny\n", patch).expect("unique"),
        "x\nadded\n\ny\n"
    );
    assert_eq!(
        apply_text("\nx\n\n", patch).expect("in place"),
        "added\n\nx\n\n"
    );
}

/// Random patch-like text against random files: parse and apply may refuse, never panic;
/// whatever applies renders a diff that applies back.
#[test]
fn random_patches_never_panic() {
    let pieces = [
        "@@ -1,2 +1,2 @@\n",
        "@@ -0,0 +1 @@\n",
        "@@ -3 +3,0 @@\n",
        "@@\n",
        " a\n",
        " b\n",
        "-a\n",
        "-b\n",
        "+c\n",
        "+\n",
        "\n",
        "\\ No newline at end of file\n",
        "--- a/f\n",
        "+++ b/f\n",
        "diff --git a/f b/f\n",
        " \r\n",
        "-- \n",
        "@@ -9,1 +2 @@ x\n",
        "+a\r\n",
    ];
    let files = [
        "",
        "a",
        "a\n",
        "a\nb",
        "a\nb\n",
        "b\na\n\n",
        "a\r\nb\r\n",
        "\n\n\n",
    ];
    let mut seed: u64 = 7;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    for _ in 0..20_000 {
        let text: String = (0..1 + next(8))
            .map(|_| pieces[next(pieces.len())])
            .collect();
        let file = files[next(files.len())].as_bytes();
        let Ok(patch) = parse(&text) else { continue };
        let hunks: Vec<Hunk<'_>> = patch.sections.into_iter().flat_map(|s| s.hunks).collect();
        if let Ok(applied) = apply(file, &hunks, MAX_FUZZ) {
            let (a, b) = (Lines::new(file), Lines::new(&applied.content));
            let (diff, _) = render(&a, &b, &applied.edits, "a/f", "b/f", usize::MAX);
            if diff.is_empty() {
                continue;
            }
            let back = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
            let hunks: Vec<Hunk<'_>> = back.sections.into_iter().flat_map(|s| s.hunks).collect();
            let again = apply(file, &hunks, 0)
                .unwrap_or_else(|r| panic!("{}\n{text:?}\n{diff}", r.message));
            assert_eq!(
                again.content, applied.content,
                "{text:?} on {file:?}\n{diff}"
            );
        }
    }
}

/// A last line ending in a lone CR without a newline: the CR is the line's text, in the
/// diff (`-x\r` then the marker) and when an added line is the new last one.
#[test]
fn a_lone_cr_before_the_no_newline_marker_is_text() {
    for (old, new) in [
        ("a\nb\r", "a\n"),
        ("a\nb\r", "a\nc\r"),
        ("a\n", "a\nc\r"),
        ("a\r\nb\r", "a\r\nc"),
        ("\n\n\n\n\n\n\n\n\n\r", "\n\n\n\n\n\n\n\n\n"),
    ] {
        let (a, b) = (Lines::new(old.as_bytes()), Lines::new(new.as_bytes()));
        let edits = line_edits(&a, &b);
        let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
        let parsed = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
        let hunks: Vec<Hunk<'_>> = parsed.sections.into_iter().flat_map(|s| s.hunks).collect();
        let applied = apply(old.as_bytes(), &hunks, 0)
            .unwrap_or_else(|r| panic!("{old:?} → {new:?}: {}\n{diff}", r.message));
        assert_eq!(applied.content, new.as_bytes(), "{old:?} → {new:?}\n{diff}");
    }
}

/// similar gives a Delete a new-side index after the equal run that follows it here; the
/// edits must still describe the change (they once merged across that run).
#[test]
fn line_edits_follow_the_equal_runs() {
    let (old, new) = (&b"\n\na\n\n\n"[..], &b"\n\n\n \n\n\n"[..]);
    let (a, b) = (Lines::new(old), Lines::new(new));
    let edits = line_edits(&a, &b);
    let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
    let parsed = parse(&diff).unwrap_or_else(|e| panic!("{e}\n{diff}"));
    let hunks: Vec<Hunk<'_>> = parsed.sections.into_iter().flat_map(|s| s.hunks).collect();
    let applied = apply(old, &hunks, 0).unwrap_or_else(|r| panic!("{}\n{diff}", r.message));
    assert_eq!(applied.content, new, "{diff}");
    assert!(diff.contains("@@ -1,5 +1,6 @@"), "{diff}");
}

#[test]
fn a_non_utf8_line_is_named() {
    let err = apply_text("caf\u{e9}\n", "@@ -1 +1 @@\n-caf\u{e9}\n+cafe\n").expect("utf8 ok");
    assert_eq!(err, "cafe\n");
    let p = parse("@@ -1 +1 @@\n-caf\u{e9}\n+cafe\n").expect("parse");
    let r = apply(b"caf\xe9\n", &p.sections[0].hunks, MAX_FUZZ).expect_err("latin-1");
    assert!(r.message.contains("not UTF-8"), "{}", r.message);
}

#[test]
fn pure_insertion_past_the_end_appends() {
    assert_eq!(
        apply_text("a\n", "@@ -5,0 +6 @@\n+z\n").expect("ok"),
        "a\nz\n"
    );
}

#[test]
fn every_failing_hunk_is_named() {
    let file: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    let patch = "@@ -2 +2 @@\n-nope\n+x\n@@ -10 +10 @@\n-l10\n+X\n@@ -20 +20 @@\n-gone\n+y\n";
    let err = apply_text(&file, patch).expect_err("two fail");
    assert!(
        err.starts_with("2 of 3 hunks do not apply (hunks 1, 3)"),
        "{err}"
    );
    assert!(err.contains("|nope") && err.contains("|gone"), "{err}");
}

#[test]
fn tabs_written_as_spaces_apply_at_the_indentation_rung() {
    let p = parse("@@ -1,2 +1,2 @@\n if x:\n-    pass\n+    return\n").expect("parse");
    let a = apply(b"if x:\n\tpass\n", &p.sections[0].hunks, MAX_FUZZ).expect("applies");
    assert_eq!(a.content, b"if x:\n\treturn\n");
    assert_eq!(a.placements[0].rung, Rung::Indentation);
}

#[test]
fn whitespace_hint_when_indentation_is_not_uniform() {
    let err = apply_text(
        "if x:\n\tpass\n  y\n",
        "@@ -1,3 +1,3 @@\n if x:\n-    pass\n+    return\n         y\n",
    )
    .expect_err("not uniform");
    assert!(err.contains("all whitespace is ignored"), "{err}");
}

#[test]
fn parse_errors_name_the_line() {
    let e = parse("@@ -1,2 +1,2 @@\n a\nbogus\n").expect_err("bad body");
    assert_eq!(e.line, 3);
    let e = parse("just text\n").expect_err("no hunks");
    assert!(e.message.contains("no hunk"));
    assert!(parse("").is_err());
}

#[test]
fn miscounted_header_is_read_by_body_with_warning() {
    let p = parse("@@ -1,5 +1,5 @@\n a\n-b\n+c\n").expect("parse");
    assert_eq!(p.warnings.len(), 1);
    let p = parse("@@ -1,1 +1,1 @@\n-b\n+c\n+d\n").expect("parse");
    assert_eq!(p.sections[0].hunks[0].lines.len(), 3);
    assert_eq!(p.warnings.len(), 1);
}

#[test]
fn git_preamble_and_signature() {
    let patch = "From abc\nSubject: x\n---\n f | 2 +-\n\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n-- \n2.39.0\n\n";
    assert_eq!(apply_text("a\n", patch).expect("ok"), "b\n");
}

/// Found by fuzzing: `similar` placed a delete after the insert that follows it; the
/// edits are now the gaps between its (checked) equal runs.
#[test]
fn line_edits_are_in_order_and_exact() {
    let old: &[u8] = b"a\r\na\r\na\r\na\r\na\r\nb\nb\nb\nb\n";
    let new: &[u8] = b"a\r\na\r\na\r\na\r\nb\n\x00a\ra=\nb\nb\nb\nb\nc\n";
    let (a, b) = (Lines::new(old), Lines::new(new));
    let edits = line_edits(&a, &b);
    let (mut i, mut j) = (0, 0);
    for e in &edits {
        assert!(e.old.start >= i && e.new.start >= j, "{edits:?}");
        assert_eq!(e.old.start - i, e.new.start - j, "{edits:?}");
        (i, j) = (e.old.end, e.new.end);
    }
    assert_eq!(a.len() - i, b.len() - j, "{edits:?}");
    let (diff, _) = render(&a, &b, &edits, "a/f", "b/f", usize::MAX);
    let hunks: Vec<Hunk<'_>> = parse(&diff)
        .expect("parse")
        .sections
        .into_iter()
        .flat_map(|s| s.hunks)
        .collect();
    assert_eq!(apply(old, &hunks, 0).expect("applies").content, new);
}

#[test]
fn render_matches_diff_u() {
    let old = Lines::new(b"a\nb\nc\n");
    let new = Lines::new(b"a\nB\nc\n");
    let edits = line_edits(&old, &new);
    let (text, cut) = render(&old, &new, &edits, "a/f", "b/f", 1 << 20);
    assert!(!cut);
    assert_eq!(text, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
}

#[test]
fn hunks_out_of_order_apply_by_their_own_numbers() {
    let file: String = (1..=20).map(|i| format!("l{i}\n")).collect();
    let patch = "@@ -15,3 +15,3 @@\n l15\n-l16\n+L16\n l17\n@@ -2,3 +2,3 @@\n l2\n-l3\n+L3\n l4\n";
    let out = apply_text(&file, patch).expect("applies");
    assert!(out.contains("L3\n") && out.contains("L16\n"), "{out}");
}

#[test]
fn a_bare_header_on_repeated_lines_is_refused_with_the_candidates() {
    let file = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
    let err = apply_text(file, "@@ @@\n-    x();\n+    y();\n }\n").expect_err("two");
    assert!(err.contains("starting at lines 2, 5"), "{err}");
    // Unique: applied, and said so.
    let p = parse("@@ @@\n fn b() {\n-    x();\n+    y();\n").expect("parse");
    let a = apply(file.as_bytes(), &p.sections[0].hunks, MAX_FUZZ).expect("unique");
    assert_eq!(a.placements[0].rung, Rung::NumbersIgnored);
}

#[test]
fn fuzz_far_from_the_stated_line_is_not_taken() {
    let mut file: String = (1..=200).map(|i| format!("l{i}\n")).collect();
    file.push_str("a\nb\nc\nd\ne\n");
    // Stated at line 1; its lines (without the first and last context) are at 202.
    let patch = "@@ -1,5 +1,5 @@\n X\n b\n-c\n+C\n d\n Y\n";
    assert!(apply_text(&file, patch).is_err());
}

#[test]
fn trailing_whitespace_and_shifted_indentation_are_forgiven() {
    let file = "    fn f() {\n        let a = 1;  \n        let b = 2;\n    }\n";
    let patch =
        "@@ -1,4 +1,4 @@\n fn f() {\n     let a = 1;\n-    let b = 2;\n+    let b = 3;\n }\n";
    let p = parse(patch).expect("parse");
    let a = apply(file.as_bytes(), &p.sections[0].hunks, MAX_FUZZ).expect("applies");
    assert_eq!(a.placements[0].rung, Rung::Indentation);
    assert_eq!(
        String::from_utf8(a.content).expect("utf8"),
        "    fn f() {\n        let a = 1;  \n        let b = 3;\n    }\n"
    );
}

#[test]
fn prose_and_fences_around_a_miscounted_hunk() {
    let patch = "Here is the fix:\n```diff\n@@ -1,9 +1,9 @@\n a\n-b\n+B\n c\n```\nThat's it.\n";
    assert_eq!(apply_text("a\nb\nc\n", patch).expect("ok"), "a\nB\nc\n");
    // A change after the prose is not dropped silently.
    assert!(parse("@@ -1,9 +1,9 @@\n a\n-b\n+B\nprose\n-c\n").is_err());
}

#[test]
fn git_headers_say_create_delete_rename() {
    let text = "diff --git a/old.txt b/new.txt\nsimilarity index 90%\nrename from old.txt\nrename to new.txt\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/gone b/gone\ndeleted file mode 100644\nindex 1..0\ndiff --git a/e b/e\nnew file mode 100644\n";
    let p = parse(text).expect("parse");
    assert_eq!(p.sections.len(), 3);
    assert_eq!(p.sections[0].rename_to.as_deref(), Some("new.txt"));
    assert!(p.sections[1].deleted && p.sections[2].created);
    assert_eq!(
        p.sections[2].git_names,
        Some(("a/e".to_string(), "b/e".to_string()))
    );
}

#[test]
fn codex_envelope() {
    let text = "*** Begin Patch\n*** Add File: n.txt\n+hello\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n     x = 1\n-    return x\n+    return x + 1\n*** Delete File: old.py\n*** End Patch\n";
    let p = parse(text).expect("parse");
    assert_eq!(p.sections.len(), 3);
    assert!(p.sections[0].created && p.sections[2].deleted);
    assert_eq!(p.sections[1].rename_to.as_deref(), Some("b.py"));
    let h = &p.sections[1].hunks[0];
    assert_eq!(h.anchor, Some("def f():"));
    let file = b"def g():\n    x = 1\n    return x\ndef f():\n    x = 1\n    return x\n";
    let a = apply(file, &p.sections[1].hunks, MAX_FUZZ).expect("after its anchor");
    assert!(a.content.ends_with(b"    return x + 1\n"));
    assert!(parse("*** Begin Patch\n*** Update File: a\n@@\n x\n").is_err());
}

/// The hint names the real cause: lines that match exactly but where another hunk already
/// applies are an overlap, not a whitespace problem; an elided line is named as such.
#[test]
fn hints_name_the_real_cause() {
    let file: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let patch = "@@ -3,3 +3,3 @@\n line 3\n-line 4\n+LINE 4\n line 5\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n";
    let err = apply_text(&file, patch).expect_err("overlap");
    assert!(err.contains("overlap"), "{err}");
    assert!(!err.contains("whitespace"), "{err}");
    let patch = "@@ -2,5 +2,5 @@\n line 2\n-line 3\n+LINE 3\n // ... existing code ...\n line 7\n-line 8\n+LINE 8\n";
    let err = apply_text(&file, patch).expect_err("elided");
    assert!(err.contains("stand for lines left out"), "{err}");
}

/// Found by the corpus: a file shifted by exactly the period of its repeated blocks. The
/// second hunk's lines are at its stated line too, but the first hunk (unique) shows the file
/// moved by 4 lines: the numbers, corrected by that shift, place it.
#[test]
fn a_shift_shown_by_a_unique_hunk_beats_a_repeat_at_the_stated_line() {
    let mut file = String::from("// unique head\nx\n");
    for _ in 0..6 {
        file.push_str("fn f0() {\n    a();\n    b();\n}\n");
    }
    let shifted = format!("s1\ns2\ns3\ns4\n{file}");
    // Hunk 2 is stated at line 8 (in the second block) — in the shifted file that line starts
    // another, identical block.
    let patch = "@@ -1,2 +1,2 @@\n-// unique head\n+// HEAD\n x\n@@ -8,3 +8,3 @@\n     a();\n-    b();\n+    c();\n }\n";
    let out = apply_text(&shifted, patch).expect("applies");
    let want = shifted.replacen("// unique head", "// HEAD", 1).replacen(
        "    b();\n}\nfn f0() {\n    a();\n    b();",
        "    b();\n}\nfn f0() {\n    a();\n    c();",
        1,
    );
    assert_eq!(out, want);
}

fn placed(file: &str, patch: &str) -> Result<(String, Vec<Placement>), String> {
    let p = parse(patch).map_err(|e| e.to_string())?;
    let hunks: Vec<Hunk<'_>> = p.sections.into_iter().flat_map(|s| s.hunks).collect();
    apply(file.as_bytes(), &hunks, MAX_FUZZ)
        .map(|a| (String::from_utf8(a.content).expect("utf8"), a.placements))
        .map_err(|r| r.message)
}

/// Context lines that lost their marker space look one column less indented; the added lines
/// (which kept their `+`) are right as written, and must not be moved by one column.
#[test]
fn a_lost_marker_space_is_not_a_reindent() {
    let file = "fn f() {\n    let a = 1;\n    let b = 2;\n}\n";
    // A pure insertion: every context line one column short.
    let patch = "@@ -2,2 +2,3 @@\n    let a = 1;\n+    let c = 3;\n    let b = 2;\n";
    let (out, at) = placed(file, patch).expect("applies");
    assert_eq!(
        out,
        "fn f() {\n    let a = 1;\n    let c = 3;\n    let b = 2;\n}\n"
    );
    assert_eq!(at[0].rung, Rung::LostMarker);
    // With a removed line (which kept its `-`), and a blank context line.
    let file = "fn f() {\n    let a = 1;\n\n    let b = 2;\n}\n";
    let patch = "@@ -2,3 +2,3 @@\n    let a = 1;\n\n-    let b = 2;\n+    let b = 4;\n";
    let (out, at) = placed(file, patch).expect("applies");
    assert_eq!(out, "fn f() {\n    let a = 1;\n\n    let b = 4;\n}\n");
    assert_eq!(at[0].rung, Rung::LostMarker);
    // A shift of one column on every line, added ones included, is no indentation reading.
    let patch = "@@ -2,3 +2,3 @@\n    let a = 1;\n \n-   let b = 2;\n+   let b = 4;\n";
    assert!(placed(file, patch).is_err());
}

/// Only the context lines' indentation is off; the removed line is the file's, which proves
/// the patch's own indentation right: the added lines are written as the patch has them.
#[test]
fn a_context_only_shift_keeps_the_added_lines() {
    let file = "impl X {\n    fn f() {\n        a();\n        b();\n    }\n}\n";
    let patch = "@@ -2,4 +2,4 @@\n fn f() {\n     a();\n-        b();\n+        c();\n }\n";
    let (out, at) = placed(file, patch).expect("applies");
    assert_eq!(
        out,
        "impl X {\n    fn f() {\n        a();\n        c();\n    }\n}\n"
    );
    assert_eq!(at[0].rung, Rung::ContextIndentation);
}

/// An exact match some lines away and a match at the stated line that differs only in
/// trailing whitespace disagree: the stated line decides, never the rung order. With neither
/// at the stated line, the hunk is refused with both places listed.
#[test]
fn the_stated_line_decides_between_rungs() {
    let mut file = String::from("head\n");
    file.push_str("}\n\n#[test]\nfn t() {  \n    x();\n}\n");
    for i in 0..20 {
        file.push_str(&format!("filler {i}\n"));
    }
    file.push_str("}\n\n#[test]\nfn t() {\n    x();\n}\n");
    let patch = "@@ -2,6 +2,7 @@\n }\n \n #[test]\n fn t() {\n+    y();\n     x();\n }\n";
    let (out, at) = placed(&file, patch).expect("applies");
    assert_eq!(at[0].rung, Rung::TrailingWhitespace);
    assert_eq!(at[0].line, 2);
    assert!(out.starts_with("head\n}\n\n#[test]\nfn t() {  \n    y();\n    x();\n"));
    // Stated between the two: neither is where the numbers say.
    let patch = patch.replace("@@ -2,6 +2,7 @@", "@@ -12,6 +12,7 @@");
    let err = placed(&file, &patch).expect_err("ambiguous");
    assert!(err.contains("2 places") && err.contains("2, 28"), "{err}");
}

/// Fuzz never wins over a place that matches with whitespace ignored, and is refused when it
/// finds more than one place in its window, even one at the stated line.
#[test]
fn fuzz_is_last_and_unique() {
    // The true place has its context indented otherwise (not uniformly); a similar spot two
    // lines below matches with fuzz 1.
    let file = "a\n  b\nc\n    x\nd\nb\nc\nx\nd\nz\n";
    let patch = "@@ -1,5 +1,5 @@\n a\n b\n c\n-x\n+X\n d\n";
    assert!(placed(file, patch).is_err());
    // Two fuzzed places in the window, one at the stated line: refused.
    let file = "q\nb\nc\nx\nd\nr\nb\nc\nx\nd\n";
    let patch = "@@ -1,5 +1,5 @@\n a\n b\n c\n-x\n+X\n d\n";
    let err = placed(file, patch).expect_err("two fuzzed places");
    assert!(err.contains("2 places"), "{err}");
}

/// A line standing for lines left out at either end of a hunk is dropped with what it stands
/// for, when the rest of the hunk anchors itself once in the file; between changes it is not.
#[test]
fn elided_context_at_the_ends() {
    let file: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let patch = "@@ -2,5 +2,5 @@\n // ... existing code ...\n line 4\n-line 5\n+LINE 5\n line 6\n";
    let (out, at) = placed(&file, patch).expect("applies");
    assert_eq!(out, file.replace("line 5\n", "LINE 5\n"));
    assert_eq!((at[0].rung, at[0].line, at[0].fuzz), (Rung::Elided, 4, 0));
    let patch = "@@ -8,4 +8,4 @@\n line 8\n-line 9\n+LINE 9\n line 10\n # rest unchanged\n";
    let (out, _) = placed(&file, patch).expect("applies");
    assert_eq!(out, file.replace("line 9\n", "LINE 9\n"));
    // What is left occurs twice: refused.
    let twice = format!("{file}{file}");
    assert!(placed(&twice, "@@ -2,3 +2,3 @@\n ...\n line 4\n-line 5\n+LINE 5\n").is_err());
    for yes in [
        "...",
        "  // ... existing code ...",
        "# ...",
        "/* … */",
        "# rest unchanged",
    ] {
        assert!(seek::is_elision(yes.as_bytes()), "{yes}");
    }
    for no in [
        "x...",
        "// unchanged behaviour is documented below in detail, see the notes",
        "..=",
    ] {
        assert!(!seek::is_elision(no.as_bytes()), "{no}");
    }
}

/// A pure insertion whose context is shifted alike: the whole hunk shifted (its added lines
/// re-indented back) or only the context (added lines as written). The added lines' neighbours
/// in the file decide when only one reading fits them; else refused.
#[test]
fn a_shifted_pure_insertion_is_read_by_its_neighbours() {
    let file = "fn f() {\n    a();\n    c();\n}\n";
    // Whole hunk 4 deeper: `b();` re-indented to 4, like its neighbours.
    let all = "@@ -2,2 +2,3 @@\n         a();\n+        b();\n         c();\n";
    let (out, at) = placed(file, all).expect("whole hunk shifted");
    assert_eq!(out, "fn f() {\n    a();\n    b();\n    c();\n}\n");
    assert_eq!(at[0].rung, Rung::Indentation);
    // Only the context 4 deeper: `b();` written at 4 fits as it is.
    let ctx = "@@ -2,2 +2,3 @@\n         a();\n+    b();\n         c();\n";
    let (out, at) = placed(file, ctx).expect("context shifted");
    assert_eq!(out, "fn f() {\n    a();\n    b();\n    c();\n}\n");
    assert_eq!(at[0].rung, Rung::ContextIndentation);
    let file = "fn f() {\n    if x {\n        a();\n    }\n}\n";
    // Either reading fits a neighbour: refused.
    let both = "@@ -3,2 +3,3 @@\n             a();\n+        b();\n         }\n";
    assert!(placed(file, both).is_err());
}
