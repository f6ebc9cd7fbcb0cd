//! read_file, list_dir, grep_files, find_files and finish against CONTRACT.md.

use serde_json::json;

use crate::util;

#[test]
fn read_whole_ranges_and_limits() {
    let w = util::ws();
    w.write("crlf.txt", "a\r\nb\r\nc");
    let r = w.call("sneaky-read", json!({"file_path": "crlf.txt"}));
    let res = r.ok();
    assert_eq!(res["content"], "a\r\nb\r\nc");
    assert_eq!(res["total_lines"], 3);
    assert_eq!(res["truncated"], false);
    let r = w.call(
        "sneaky-read",
        json!({"file_path": "crlf.txt", "offset": 2, "limit": 1}),
    );
    let res = r.ok();
    assert_eq!(res["content"], "b\r\n");
    assert_eq!(
        (res["start_line"].as_u64(), res["end_line"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(res["truncated"], true);
    let r = w.call("sneaky-read", json!({"file_path": "crlf.txt", "offset": 9}));
    assert_eq!(r.ok()["content"], "");
    assert_eq!(r.ok()["total_lines"], 3);
    w.call("sneaky-read", json!({"file_path": "crlf.txt", "offset": 0}))
        .err("invalid_args", 2);
    w.write("empty.txt", "");
    assert_eq!(
        w.call("sneaky-read", json!({"file_path": "empty.txt"}))
            .ok()["total_lines"],
        0
    );
}

#[test]
fn read_refuses_binary_and_large_files_with_advice() {
    let w = util::ws();
    std::fs::write(w.root.join("nul.bin"), b"abc\0def").expect("write");
    std::fs::write(w.root.join("latin1.txt"), b"caf\xe9\n").expect("write");
    w.call("sneaky-read", json!({"file_path": "nul.bin"}))
        .err("binary_file", 1);
    w.call("sneaky-read", json!({"file_path": "latin1.txt"}))
        .err("binary_file", 1);
    w.write("sneaky.toml", "max_file_size_bytes = 100\n");
    let big: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    w.write("big.txt", &big);
    let msg = w
        .call("sneaky-read", json!({"file_path": "big.txt"}))
        .err("file_too_large", 1);
    assert!(msg.contains("offset") && msg.contains("limit"), "{msg}");
    // A range of a large file is fine while the range itself fits.
    let r = w.call(
        "sneaky-read",
        json!({"file_path": "big.txt", "offset": 40, "limit": 2}),
    );
    assert_eq!(r.ok()["content"], "line 40\nline 41\n");
    assert_eq!(r.ok()["total_lines"], 50);
    w.call(
        "sneaky-read",
        json!({"file_path": "big.txt", "offset": 1, "limit": 40}),
    )
    .err("file_too_large", 1);
}

#[test]
fn read_does_not_hang_on_a_fifo() {
    let w = util::ws();
    nix::unistd::mkfifo(
        &w.root.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .expect("mkfifo");
    w.call("sneaky-read", json!({"file_path": "pipe"}))
        .err("not_a_file", 1);
    let r = w.call("sneaky-grep", json!({"pattern": "x"}));
    assert_eq!(r.ok()["matches"], json!([]));
}

#[test]
fn list_orders_directories_first_and_caps() {
    let w = util::ws();
    w.write("b.txt", "")
        .write("a.txt", "")
        .write("z/inner.txt", "");
    w.mkdir("m").mkdir(".git/objects").write(".hidden", "");
    let r = w.call("sneaky-ls", json!({}));
    assert_eq!(
        util::strings(&r.ok()["entries"]),
        [".git/", "m/", "z/", ".hidden", "a.txt", "b.txt"]
    );
    let r = w.call("sneaky-ls", json!({"recursive": true}));
    assert_eq!(
        util::strings(&r.ok()["entries"]),
        [
            ".git/",
            "m/",
            "z/",
            ".hidden",
            "a.txt",
            "b.txt",
            "z/inner.txt"
        ]
    );
    let r = w.call(
        "sneaky-ls",
        json!({"directory_path": "z", "recursive": true}),
    );
    // Root-relative, so each entry can be handed to another tool.
    assert_eq!(util::strings(&r.ok()["entries"]), ["z/inner.txt"]);
    for i in 0..30 {
        w.write(&format!("many/d{i:02}/f.txt"), "");
    }
    let r = w.call(
        "sneaky-ls",
        json!({"directory_path": "many", "recursive": true, "max_results": 40}),
    );
    let res = r.ok();
    assert_eq!(res["truncated"], true);
    let entries = util::strings(&res["entries"]);
    assert_eq!(entries.len(), 40);
    // Directories first: every directory before any file.
    assert_eq!(entries.iter().filter(|e| e.ends_with('/')).count(), 30);
    assert_eq!(entries[0], "many/d00/");
    assert_eq!(entries[30], "many/d00/f.txt");
}

#[test]
fn grep_matches_like_ripgrep() {
    let w = util::ws();
    w.mkdir(".git");
    w.write(".gitignore", "ignored/\n*.log\n");
    w.write("src/b.rs", "fn b() {}\n// TODO later\n");
    w.write("src/a.rs", "fn a() {}\r\nlet todo = 1;\n");
    w.write("ignored/x.rs", "TODO ignored\n");
    w.write("debug.log", "TODO in log\n");
    w.write(".hidden.rs", "TODO hidden\n");
    std::fs::write(w.root.join("bin.dat"), b"TODO\0binary").expect("write");
    let r = w.call("sneaky-grep", json!({"pattern": "TODO"}));
    let m = &r.ok()["matches"];
    assert_eq!(
        m,
        &json!([{"path": "src/b.rs", "line": 2, "text": "// TODO later"}])
    );
    let r = w.call(
        "sneaky-grep",
        json!({"pattern": "todo", "case_insensitive": true, "path": "src"}),
    );
    let got: Vec<(String, u64)> = r.ok()["matches"]
        .as_array()
        .expect("array")
        .iter()
        .map(|m| {
            (
                m["path"].as_str().expect("p").to_string(),
                m["line"].as_u64().expect("l"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [("src/a.rs".to_string(), 2), ("src/b.rs".to_string(), 2)]
    );
    // ^ and $ work per line; the CR of a CRLF line is not part of the text.
    let r = w.call("sneaky-grep", json!({"pattern": "^fn a\\(\\) \\{\\}"}));
    assert_eq!(r.ok()["matches"][0]["text"], "fn a() {}");
    let r = w.call(
        "sneaky-grep",
        json!({"pattern": "fn", "file_pattern": "b.*"}),
    );
    assert_eq!(r.ok()["matches"].as_array().expect("a").len(), 1);
    let r = w.call("sneaky-grep", json!({"pattern": "later", "context": 1}));
    assert_eq!(r.ok()["matches"][0]["before"], json!(["fn b() {}"]));
    let r = w.call(
        "sneaky-grep",
        json!({"pattern": "TODO", "path": "ignored/x.rs"}),
    );
    assert_eq!(
        r.ok()["matches"][0]["path"],
        "ignored/x.rs",
        "explicit files are searched"
    );
}

#[test]
fn grep_caps_deterministically_and_shortens_long_lines() {
    let w = util::ws();
    for i in 0..40 {
        w.write(&format!("d{}/f{i:02}.txt", i % 4), "hit\nhit\n");
    }
    let r = w.call("sneaky-grep", json!({"pattern": "hit", "max_results": 7}));
    let res = r.ok();
    assert_eq!(res["truncated"], true);
    let got: Vec<String> = res["matches"]
        .as_array()
        .expect("a")
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().expect("p"), m["line"]))
        .collect();
    assert_eq!(
        got,
        [
            "d0/f00.txt:1",
            "d0/f00.txt:2",
            "d0/f04.txt:1",
            "d0/f04.txt:2",
            "d0/f08.txt:1",
            "d0/f08.txt:2",
            "d0/f12.txt:1"
        ]
    );
    w.write("long.txt", &format!("{}needle\n", "x".repeat(5000)));
    let r = w.call(
        "sneaky-grep",
        json!({"pattern": "needle", "path": "long.txt"}),
    );
    let text = r.ok()["matches"][0]["text"]
        .as_str()
        .expect("t")
        .to_string();
    assert!(text.len() < 700 && text.contains("more bytes"), "{text}");
}

#[test]
fn find_matches_like_fd() {
    let w = util::ws();
    w.mkdir(".git");
    w.write(".gitignore", "target/\n");
    w.write("src/main.rs", "")
        .write("src/lib/mod.rs", "")
        .write("README.md", "");
    w.write("target/debug/x.rs", "")
        .write(".hidden/h.rs", "")
        .write("Docs/Guide.MD", "");
    w.mkdir("src/tests.rs");
    let r = w.call("sneaky-find", json!({"pattern": "*.rs"}));
    assert_eq!(
        util::strings(&r.ok()["files"]),
        ["src/lib/mod.rs", "src/main.rs", "src/tests.rs/"]
    );
    // Smart case: lower-case patterns ignore case, a capital makes it exact.
    let r = w.call("sneaky-find", json!({"pattern": "*.md"}));
    assert_eq!(
        util::strings(&r.ok()["files"]),
        ["Docs/Guide.MD", "README.md"]
    );
    let r = w.call("sneaky-find", json!({"pattern": "*.MD"}));
    assert_eq!(util::strings(&r.ok()["files"]), ["Docs/Guide.MD"]);
    // A pattern with "/" matches the path from the root; "**" crosses directories.
    let r = w.call("sneaky-find", json!({"pattern": "src/**/*.rs"}));
    assert_eq!(
        util::strings(&r.ok()["files"]),
        ["src/lib/mod.rs", "src/main.rs", "src/tests.rs/"]
    );
    let r = w.call("sneaky-find", json!({"pattern": "src/*.rs", "path": "src"}));
    assert_eq!(
        util::strings(&r.ok()["files"]),
        ["src/main.rs", "src/tests.rs/"]
    );
    let r = w.call(
        "sneaky-find",
        json!({"pattern": "*", "path": "src", "max_results": 2}),
    );
    assert_eq!(r.ok()["truncated"], true);
    assert_eq!(
        util::strings(&r.ok()["files"]),
        ["src/lib/", "src/lib/mod.rs"]
    );
    w.call("sneaky-find", json!({"pattern": "[", "path": "src"}))
        .err("invalid_args", 2);
    w.call("sneaky-find", json!({"pattern": "*", "path": "README.md"}))
        .err("not_a_directory", 1);
}

#[test]
fn finish_returns_its_message() {
    let w = util::ws();
    let r = w.call("sneaky-finish", json!({"message": "Created the module."}));
    assert_eq!(r.ok()["message"], "Created the module.");
    let r = w.call("sneaky-finish", json!({}));
    assert_eq!(r.ok()["message"], "Task complete.");
}
