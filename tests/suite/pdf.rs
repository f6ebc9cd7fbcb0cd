//! read_file of a PDF: the PDFs of tests/pdf/, made by real producers (groff, ghostscript,
//! qpdf; tests/pdf/make.sh), read through sneaky-read (JSON and text) and compared word for
//! word with pdftotext's text of each page (`<name>.pages`); through sneaky-mcp (a text block
//! with page markers); the PDF handed to `sneaky-outline --pdf-text` by both; the official TypeScript
//! SDK's client reads one in tests/suite/media.rs. Damaged, encrypted and scanned files
//! included.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Ws};

pub fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/pdf")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn put(w: &Ws, rel: &str, bytes: &[u8]) {
    std::fs::write(w.root.join(rel), bytes).expect("write");
}

/// pdftotext's text of each page of `name`.pdf, as tests/pdf/make.sh kept it.
fn reference_pages(name: &str) -> Vec<String> {
    let text = String::from_utf8(fixture(&format!("{name}.pages"))).expect("UTF-8");
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_string).collect();
    // Each page ends with a form feed: nothing follows the last.
    assert_eq!(pages.pop().as_deref(), Some(""), "{name}.pages");
    pages
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

#[test]
fn pdfs_of_real_producers_read_as_pdftotext_reads_them() {
    let w = util::ws();
    for name in ["groff", "gs", "objstm", "owner", "long", "scan"] {
        let file = format!("{name}.pdf");
        put(&w, &file, &fixture(&file));
        let reply = w.call("sneaky-read", json!({"file_path": file}));
        let r = reply.ok();
        let want = reference_pages(name);
        assert_eq!(r["mime_type"], "application/pdf", "{file}");
        assert_eq!(r["total_pages"], want.len(), "{file}");
        assert_eq!(
            (r["start_page"].clone(), r["end_page"].clone()),
            (json!(1), json!(want.len()))
        );
        assert_eq!(r["truncated"], false, "{file}");
        assert_eq!(r["total_lines"], 0, "{file}");
        assert!(r.get("encoding").is_none(), "{file}: the content is text");
        let pages = r["pages"].as_array().expect("pages");
        assert_eq!(pages.len(), want.len(), "{file}");
        let mut content = String::new();
        for (i, (page, reference)) in pages.iter().zip(&want).enumerate() {
            assert_eq!(page["number"], i + 1, "{file}");
            let text = page["text"].as_str().expect("text");
            assert_eq!(words(text), words(reference), "{file}, page {}", i + 1);
            content.push_str(text);
            content.push('\u{c}');
        }
        assert_eq!(r["content"], content, "{file}: pages ended by form feeds");
    }
}

#[test]
fn accented_greek_and_typographic_characters_come_through() {
    let w = util::ws();
    for name in ["groff.pdf", "gs.pdf"] {
        put(&w, name, &fixture(name));
        let r = w.call("sneaky-read", json!({"file_path": name, "limit": 1}));
        let text = r.ok()["pages"][0]["text"]
            .as_str()
            .expect("text")
            .to_string();
        for expected in [
            "Café,",
            "naïve,",
            "Straße,",
            "Ελληνικα,",
            "€uro",
            "—",
            "“quotes”.",
            "first",
        ] {
            assert!(
                text.contains(expected),
                "{name}: no {expected:?} in {text:?}"
            );
        }
    }
}

#[test]
fn offset_and_limit_count_pages() {
    let w = util::ws();
    put(&w, "long.pdf", &fixture("long.pdf"));
    let want = reference_pages("long");
    let r = w.call(
        "sneaky-read",
        json!({"file_path": "long.pdf", "offset": 3, "limit": 2}),
    );
    let r = r.ok();
    assert_eq!(r["total_pages"], 12);
    assert_eq!(
        (r["start_page"].clone(), r["end_page"].clone()),
        (json!(3), json!(4))
    );
    assert_eq!(r["truncated"], true);
    let numbers: Vec<&Value> = r["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| &p["number"])
        .collect();
    assert_eq!(numbers, [&json!(3), &json!(4)]);
    assert_eq!(
        words(r["pages"][0]["text"].as_str().expect("text")),
        words(&want[2])
    );
    assert!(r["content"]
        .as_str()
        .expect("content")
        .starts_with("-3-\n\n3. Chapter 3\n"));

    // The flags, and the last pages.
    let r = w.call_raw("sneaky-read", &["long.pdf", "--offset", "11"], b"");
    let r = r.ok();
    assert_eq!(
        (r["start_page"].clone(), r["end_page"].clone()),
        (json!(11), json!(12))
    );
    assert_eq!(r["truncated"], true);

    // Past the end: nothing, and how many pages there are.
    let r = w.call(
        "sneaky-read",
        json!({"file_path": "long.pdf", "offset": 13}),
    );
    let r = r.ok();
    assert_eq!(r["pages"], json!([]));
    assert_eq!(
        (r["start_page"].clone(), r["end_page"].clone()),
        (json!(13), json!(12))
    );

    // --format text: the text as pdftotext prints it, pages ended by form feeds.
    let r = text_run(&w, &["long.pdf", "--offset", "2", "--limit", "1"]);
    assert!(r.0.success());
    assert_eq!(words(&r.1), words(&want[1]));
    assert!(r.1.ends_with("dog.\n\u{c}"), "{:?}", r.1);
}

/// `sneaky-read ARGS --format text`: status, stdout, stderr.
fn text_run(w: &Ws, args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let out = Command::cargo_bin("sneaky-read")
        .expect("binary")
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .args(args)
        .args(["--format", "text"])
        .output()
        .expect("run");
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn max_file_size_bytes_bounds_the_text_not_the_file() {
    let w = util::ws();
    let bytes = fixture("long.pdf");
    put(&w, "long.pdf", &bytes);
    // The file is larger than the limit; its first pages' text is not.
    w.user_config("max_file_size_bytes = 1000\n");
    assert!(bytes.len() > 1000);
    let r = w.call("sneaky-read", json!({"file_path": "long.pdf"}));
    let r = r.ok();
    let end = r["end_page"].as_u64().expect("end_page");
    assert!((1..12).contains(&end), "{r}");
    assert_eq!(r["truncated"], true);
    assert_eq!(r["pages"].as_array().map(Vec::len), Some(end as usize));
    let text: usize = r["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| p["text"].as_str().map_or(0, str::len))
        .sum();
    assert!(text <= 1000, "{text} bytes of text");
    // Reading on from where it stopped.
    let r = w.call(
        "sneaky-read",
        json!({"file_path": "long.pdf", "offset": end + 1}),
    );
    assert_eq!(r.ok()["start_page"], end + 1);

    // A page whose text alone is over the limit.
    w.user_config("max_file_size_bytes = 50\n");
    let msg = w
        .call("sneaky-read", json!({"file_path": "long.pdf"}))
        .err("file_too_large", 1);
    assert!(msg.contains("page 1"), "{msg}");
}

#[test]
fn a_scan_says_it_has_no_text_layer() {
    let w = util::ws();
    put(&w, "scan.pdf", &fixture("scan.pdf"));
    let r = w.call("sneaky-read", json!({"file_path": "scan.pdf"}));
    assert_eq!(r.ok()["pages"], json!([{"number": 1, "text": ""}]));
    let (status, stdout, stderr) = text_run(&w, &["scan.pdf"]);
    assert!(status.success());
    assert_eq!(stdout, "\u{c}");
    assert!(stderr.contains("no text layer"), "{stderr}");
}

#[test]
fn encrypted_damaged_and_garbage_pdfs_are_clear_errors() {
    let w = util::ws();
    put(&w, "locked.pdf", &fixture("locked.pdf"));
    let msg = w
        .call("sneaky-read", json!({"file_path": "locked.pdf"}))
        .err("binary_file", 1);
    assert!(
        msg.contains("encrypted") && msg.contains("password"),
        "{msg}"
    );

    let whole = fixture("gs.pdf");
    let mut damaged: Vec<(String, Vec<u8>)> = vec![
        ("header.pdf".into(), b"%PDF-1.7\n".to_vec()),
        (
            "garbage.pdf".into(),
            b"%PDF-1.4\n\x00\xff garbage \x01\x02 trailer << >>".to_vec(),
        ),
    ];
    for cut in [16, 600, 4000, whole.len() / 2, whole.len() - 40] {
        damaged.push((format!("cut-{cut}.pdf"), whole[..cut].to_vec()));
    }
    let started = Instant::now();
    for (name, bytes) in &damaged {
        put(&w, name, bytes);
        let reply = w.call("sneaky-read", json!({"file_path": name}));
        // Some cuts leave pages that can be read (lopdf rebuilds the cross-reference table);
        // the others are binary_file, never a crash or an internal error.
        if reply.json["ok"] == false {
            let msg = reply.err("binary_file", 1);
            assert!(msg.contains("PDF"), "{name}: {msg}");
        }
        assert!(reply.stderr.is_empty(), "{name}: {}", reply.stderr);
    }
    let header = w.call("sneaky-read", json!({"file_path": "header.pdf"}));
    assert!(header.err("binary_file", 1).contains("cannot be read"));
    util::took_at_most(started, Duration::from_secs(60), "reading the damaged PDFs");
}

/// One stdio session of sneaky-mcp: each read_file call's result.
fn mcp_reads(w: &Ws, calls: &[Value]) -> Vec<Value> {
    crate::media::mcp_calls(w, calls)
}

#[test]
fn over_mcp_a_pdf_is_text_with_page_markers_read_by_the_helper() {
    let w = util::ws();
    put(&w, "groff.pdf", &fixture("groff.pdf"));
    put(&w, "scan.pdf", &fixture("scan.pdf"));
    put(&w, "locked.pdf", &fixture("locked.pdf"));
    let results = mcp_reads(
        &w,
        &[
            json!({"file_path": "groff.pdf", "offset": 2}),
            json!({"file_path": "groff.pdf", "limit": 1}),
            json!({"file_path": "scan.pdf"}),
            json!({"file_path": "locked.pdf"}),
        ],
    );
    let later = &results[0];
    assert_eq!(later["isError"], false, "{later}");
    let content = later["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "one text block: {later}");
    assert_eq!(
        content[0]["text"],
        "groff.pdf (PDF, pages 2-3 of 3)\n--- page 2 ---\n-2-\n\n2. Second section\nThe second \
         page says hello.\n--- page 3 ---\n-3-\n\n3. Third section\nThe third page ends here."
    );
    assert_eq!(later["structuredContent"]["total_pages"], 3);
    assert_eq!(later["structuredContent"]["pages"][1]["number"], 3);

    let first = results[1]["content"][0]["text"].as_str().expect("text");
    assert!(
        first.starts_with("groff.pdf (PDF, page 1 of 3; read on with offset 2)\n--- page 1 ---\nA Test Document\n"),
        "{first}"
    );

    assert_eq!(
        results[2]["content"][0]["text"],
        "scan.pdf (PDF, page 1 of 1: no text layer (the pages are only pictures, such as a scan); \
         read_file returns no text for them)"
    );

    let locked = &results[3];
    assert_eq!(locked["isError"], true);
    let text = locked["content"][0]["text"].as_str().expect("text");
    assert!(
        text.starts_with("binary_file: locked.pdf: it is an encrypted PDF"),
        "{text}"
    );
}

/// A two-page PDF whose second page's content stream inflates to 520 MB (1 MB in the file),
/// written by python3's zlib.
const BOMB: &str = r#"
import sys, zlib
c = zlib.compressobj(9)
bomb = b''.join(c.compress(b'BT (A) Tj ET\n' * 1000) for _ in range(40000)) + c.flush()
page1 = b'BT /F1 12 Tf 72 700 Td (before the bomb) Tj ET'
objs = [b'<< /Type /Catalog /Pages 2 0 R >>',
        b'<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>']
for content in (5, 6):
    objs.append(b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R '
                b'/Resources << /Font << /F1 7 0 R >> >> >>' % content)
objs.append(b'<< /Length %d >>\nstream\n' % len(page1) + page1 + b'\nendstream')
objs.append(b'<< /Length %d /Filter /FlateDecode >>\nstream\n' % len(bomb) + bomb + b'\nendstream')
objs.append(b'<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>')
out, offsets = b'%PDF-1.4\n', []
for i, o in enumerate(objs):
    offsets.append(len(out))
    out += b'%d 0 obj\n' % (i + 1) + o + b'\nendobj\n'
xref = len(out)
out += b'xref\n0 %d\n0000000000 65535 f \n' % (len(objs) + 1)
out += b''.join(b'%010d 00000 n \n' % o for o in offsets)
out += b'trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n' % (len(objs) + 1, xref)
open(sys.argv[1], 'wb').write(out)
"#;

/// A page whose content stream inflates past the bound is not given as an empty page (which
/// reads as a scan): the pages before it are, and that page alone is an error that names it
/// and says where to read on; memory and time stay bounded.
#[test]
fn a_page_that_inflates_past_the_bound_is_named_not_left_empty() {
    if !util::require_cmd("python3") {
        return;
    }
    let w = util::ws();
    let made = Command::new("python3")
        .args(["-c", BOMB])
        .arg(w.root.join("bomb.pdf"))
        .status()
        .expect("python3");
    assert!(made.success());
    let started = Instant::now();
    let r = w.call("sneaky-read", json!({"file_path": "bomb.pdf"}));
    let result = r.ok();
    assert_eq!(
        result["pages"],
        json!([{"number": 1, "text": "before the bomb\n"}]),
        "{}",
        r.json
    );
    assert_eq!(result["end_page"], 1);
    let msg = w
        .call("sneaky-read", json!({"file_path": "bomb.pdf", "offset": 2}))
        .err("binary_file", 1);
    assert!(
        msg.contains("page 2") && msg.contains("inflates past") && msg.contains("offset 3"),
        "{msg}"
    );
    util::took_at_most(started, Duration::from_secs(60), "reading the bomb");
}
