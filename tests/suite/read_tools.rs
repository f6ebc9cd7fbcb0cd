//! read_file, list_dir, grep_files, find_files and finish against docs/contract.md.

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

/// sneaky-find writes its answer itself (not through serde_json, whose escaping was slow for a
/// million paths): byte for byte what serde_json writes, names to escape and all, whole or a
/// page of it (`--pretty` goes through serde_json as before).
#[test]
fn find_writes_what_serde_json_writes() {
    let w = util::ws();
    for name in [
        "quote\"d.rs",
        "tab\there.rs",
        "back\\slash.rs",
        "é.rs",
        "bell\u{7}.rs",
    ] {
        w.write(&format!("src/{name}"), "");
    }
    for i in 0..300 {
        w.write(&format!("many/m{i}.rs"), "");
    }
    for request in [
        json!({"pattern": "*.rs"}),
        json!({"pattern": "*.rs", "max_results": 7, "offset": 150}),
        json!({"pattern": "*.none"}),
    ] {
        let r = w.call("sneaky-find", request);
        let value: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
        assert_eq!(
            r.stdout,
            format!("{}\n", serde_json::to_string(&value).expect("JSON"))
        );
    }
    let r = w.call("sneaky-find", json!({"pattern": "*.rs", "path": "src"}));
    assert_eq!(util::strings(&r.ok()["files"]).len(), 5, "{}", r.stdout);
}

/// find and grep's file lists are in the byte order of the whole paths, which is not the order
/// of names directory by directory: '.' < '/' < '0' puts `a/…` between `a.b` and `a0`.
/// Pages with an offset are slices of the same order.
#[test]
fn find_and_grep_sort_by_the_whole_path() {
    let w = util::ws();
    let files = [
        "a.b", "a/x-", "a/x.y/z", "a/x0", "a0", "a-", "ab/c", "d/e/f", "d/e.g", "d/e0/h", "B",
        "é/x", "a/x/y/q",
    ];
    for f in files {
        w.write(f, "hit\n");
    }
    let mut expected: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    expected.sort();
    let r = w.call(
        "sneaky-grep",
        json!({"pattern": "hit", "output_mode": "files_with_matches"}),
    );
    assert_eq!(util::strings(&r.ok()["files"]), expected);
    let dirs = [
        "a/", "a/x.y/", "a/x/", "a/x/y/", "ab/", "d/", "d/e/", "d/e0/", "é/",
    ];
    expected.extend(dirs.iter().map(|d| d.to_string()));
    expected.sort();
    let r = w.call("sneaky-find", json!({"pattern": "*"}));
    assert_eq!(util::strings(&r.ok()["files"]), expected);
    let mut paged = Vec::new();
    for offset in (0..expected.len()).step_by(4) {
        let r = w.call(
            "sneaky-find",
            json!({"pattern": "*", "max_results": 4, "offset": offset}),
        );
        paged.extend(util::strings(&r.ok()["files"]));
    }
    assert_eq!(paged, expected);
}

#[test]
fn finish_returns_its_message() {
    let w = util::ws();
    let r = w.call("sneaky-finish", json!({"message": "Created the module."}));
    assert_eq!(r.ok()["message"], "Created the module.");
    let r = w.call("sneaky-finish", json!({}));
    assert_eq!(r.ok()["message"], "Task complete.");
}

// --- against the real rg and fd ------------------------------------------------------------

/// A reference tool on PATH (`.ci/setup-scale.sh` installs them); otherwise a loud skip,
/// a failure under SNEAKY_REQUIRE_ALL=1 (CI).
fn reference(tool: &str) -> Option<()> {
    util::require_cmd(tool).then_some(())
}

/// The cargo registry sources: a real tree of a few thousand crates' files.
fn registry() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))
        .unwrap_or_default();
    let found = std::fs::read_dir(home.join("registry/src"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir());
    if found.is_none() {
        util::skip(&format!(
            "no cargo registry sources under {} (any `cargo fetch` fills them)",
            home.display()
        ));
    }
    found
}

/// Run one of our binaries on `root` with flags; the JSON result.
fn ours(root: &std::path::Path, bin: &str, args: &[&str]) -> serde_json::Value {
    let mut cmd = std::process::Command::cargo_bin(bin).expect("binary");
    cmd.current_dir(root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .arg("--root")
        .arg(root)
        .args(args);
    let out = cmd.output().expect("run");
    let reply = util::Reply::parse(bin, out);
    reply.ok().clone()
}

/// A reference tool's output lines, run in `root`, sorted, "./" and trailing "/" removed.
fn lines_of(root: &std::path::Path, tool: &str, args: &[&str]) -> Vec<String> {
    // stdin from /dev/null: rg searches a piped stdin instead of the directory.
    let out = std::process::Command::new(tool)
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .args(args)
        .output()
        .expect("run reference");
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").trim_end_matches('/').to_string())
        .collect();
    lines.sort();
    lines
}

fn sorted_strings(v: &serde_json::Value) -> Vec<String> {
    let mut s: Vec<String> = util::strings(v)
        .into_iter()
        .map(|p| p.trim_end_matches('/').to_string())
        .collect();
    s.sort();
    s
}

use assert_cmd::cargo::CommandCargoExt;

#[test]
fn grep_file_sets_match_rg_on_the_registry() {
    let (Some(tree), Some(())) = (registry(), reference("rg")) else {
        return;
    };
    // The same flags mean the same to both (rg's short flags).
    let cases: [&[&str]; 4] = [
        &["-i", "-w", "todo"],
        &["-F", "Vec::new()", "-t", "rust"],
        &["-g", "*.md", "-g", "!README*", "rust"],
        &["--hidden", "--no-ignore", "-g", "*.json", "github"],
    ];
    for our_args in cases {
        let rg_args = our_args;
        let mut args = vec!["-l", "--max-results", "1000000"];
        args.extend_from_slice(our_args);
        let got = sorted_strings(&ours(&tree, "sneaky-grep", &args)["files"]);
        let mut rg = vec!["-l"];
        rg.extend_from_slice(rg_args);
        let want = lines_of(&tree, "rg", &rg);
        assert!(!want.is_empty(), "rg {rg:?} found nothing");
        assert_eq!(
            got, want,
            "files_with_matches {our_args:?} differs from rg -l"
        );
        let mut args = vec!["-c", "--max-results", "1000000"];
        args.extend_from_slice(our_args);
        let counts = ours(&tree, "sneaky-grep", &args)["counts"].clone();
        let mut got: Vec<String> = counts
            .as_object()
            .expect("counts")
            .iter()
            .map(|(p, n)| format!("{p}:{n}"))
            .collect();
        got.sort();
        let mut rg = vec!["-c"];
        rg.extend_from_slice(rg_args);
        assert_eq!(
            got,
            lines_of(&tree, "rg", &rg),
            "count {our_args:?} differs from rg -c"
        );
    }
}

#[test]
fn find_filters_match_fd_on_the_registry() {
    let (Some(tree), Some(())) = (registry(), reference("fdfind")) else {
        return;
    };
    let cases: [&[&str]; 7] = [
        &["*.rs"],
        &["-t", "f", "-e", "toml", "*"],
        &["-t", "d", "-d", "2", "*"],
        &["-E", "*test*", "-E", "benches", "*.rs"],
        &["-H", "*.json"],
        &["-I", "-H", "-t", "f", "*.yml"],
        &["-e", "md", "-e", "txt", "*"],
    ];
    for args in cases {
        let mut ours_args = vec!["--max-results", "1000000"];
        ours_args.extend_from_slice(args);
        let got = sorted_strings(&ours(&tree, "sneaky-find", &ours_args)["files"]);
        let mut fd = vec!["--glob"];
        fd.extend_from_slice(args);
        let want = lines_of(&tree, "fdfind", &fd);
        assert!(!want.is_empty(), "fd {fd:?} found nothing");
        assert_eq!(got, want, "find {args:?} differs from fd");
    }
}

/// Nested ignore files of every kind in a git repository, against rg and fd themselves.
#[test]
fn ignore_rules_match_rg_and_fd() {
    let (Some(()), Some(())) = (reference("rg"), reference("fdfind")) else {
        return;
    };
    let w = util::ws();
    w.mkdir(".git/info");
    w.write(".git/info/exclude", "excluded.txt\n");
    w.write(".gitignore", "*.log\nbuild/\n/top_only.txt\n!keep.log\n");
    w.write("sub/.gitignore", "*.tmp\n!important.tmp\nnested/deep/\n");
    w.write("sub/.ignore", "secret*\n");
    w.write(".rgignore", "rg_only.txt\n");
    w.write(".fdignore", "fd_only.txt\n");
    for f in [
        "a.txt",
        "a.log",
        "keep.log",
        "build/out.txt",
        "top_only.txt",
        "sub/top_only.txt",
        "excluded.txt",
        "sub/excluded.txt",
        "sub/x.tmp",
        "sub/important.tmp",
        "sub/secret1.txt",
        "sub/nested/deep/d.txt",
        "sub/nested/shallow.txt",
        "rg_only.txt",
        "fd_only.txt",
        ".hidden/h.txt",
        "sub/.h.txt",
        "other/build/b.txt",
    ] {
        w.write(f, "word\n");
    }
    for extra in [&[][..], &["--hidden"][..], &["--no-ignore"][..]] {
        let mut args = vec!["-l"];
        args.extend_from_slice(extra);
        args.push("word");
        let got = sorted_strings(&ours(&w.root, "sneaky-grep", &args)["files"]);
        assert_eq!(got, lines_of(&w.root, "rg", &args), "grep {extra:?}");
        let mut args = vec!["-t", "f"];
        args.extend(
            extra
                .iter()
                .map(|f| if *f == "--hidden" { "-H" } else { "-I" }),
        );
        args.push("*");
        let got = sorted_strings(&ours(&w.root, "sneaky-find", &args)["files"]);
        let mut fd = vec!["--glob"];
        fd.extend_from_slice(&args);
        assert_eq!(got, lines_of(&w.root, "fdfind", &fd), "find {extra:?}");
    }
}

/// git's global excludes file, at its default place ($XDG_CONFIG_HOME/git/ignore) and where
/// ~/.gitconfig's core.excludesFile names it (a "~/" path): grep skips what it excludes inside
/// a repository, as rg does.
#[test]
fn global_git_excludes_match_rg() {
    let Some(()) = reference("rg") else {
        return;
    };
    let w = util::ws();
    w.mkdir(".git");
    for f in ["a.txt", "a.xdg", "a.named", "sub/b.xdg", "sub/b.named"] {
        w.write(f, "word\n");
    }
    let home = w.outside().join("home");
    let xdg = w.outside().join("xdg");
    std::fs::create_dir_all(xdg.join("git")).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::write(xdg.join("git/ignore"), "*.xdg\n").expect("write");
    std::fs::write(home.join("named_ignore"), "*.named\n").expect("write");
    let gitconfig = "[core]\n\texcludesFile = ~/named_ignore\n";
    for config in [None, Some(gitconfig)] {
        match config {
            Some(text) => std::fs::write(home.join(".gitconfig"), text).expect("write"),
            None => {
                let _ = std::fs::remove_file(home.join(".gitconfig"));
            }
        }
        let run = |cmd: &mut std::process::Command| {
            let out = cmd
                .current_dir(&w.root)
                .stdin(std::process::Stdio::null())
                .env("HOME", &home)
                .env("XDG_CONFIG_HOME", &xdg)
                .env("GIT_CONFIG_SYSTEM", "/dev/null")
                .env_remove("GIT_CONFIG_GLOBAL")
                .env_remove("SNEAKY_ROOT")
                .env_remove("SNEAKY_CONFIG")
                .output()
                .expect("run");
            let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect();
            lines.sort();
            lines
        };
        let ours = run(std::process::Command::cargo_bin("sneaky-grep")
            .expect("binary")
            .args(["--format", "text", "-l", "word"]));
        let theirs = run(std::process::Command::new("rg").args(["-l", "word"]));
        assert_eq!(ours, theirs, "{config:?}");
        let expected = match config {
            None => ["a.named", "a.txt", "sub/b.named"],
            Some(_) => ["a.txt", "a.xdg", "sub/b.xdg"],
        };
        assert_eq!(ours, expected, "{config:?}");
    }
}

/// Visual Studio's .gitignore (classes, stars inside names, anchored globs, "**/" lines and
/// the whitelists after them): grep and find skip what it ignores and keep the rest.
#[test]
fn visual_studio_gitignore_skips_builds_and_keeps_sources() {
    let w = util::ws();
    w.mkdir(".git");
    w.write(
        ".gitignore",
        include_str!("../fixtures/visual_studio.gitignore"),
    );
    let ignored = [
        "src/App/bin/Debug/App.dll",
        "src/App/obj/project.assets.json",
        "Release/notes.txt",
        "TestResults/run.trx",
        "src/App/App.csproj.user",
        "src/Gen_i.c",
        "src/.mycrunchsettings.local.xml",
        "notes.mm.txt",
        "DocProject/Help/Guide.HxT",
        "packages/Newtonsoft/lib.dll",
        "src/packages/Foo/foo.nupkg",
        "~$report.docx",
        "resolve.cache",
        "src/App.Server/GeneratedArtifacts/x.cs",
        "BuildLog.htm",
    ];
    let kept = [
        "src/App/Program.cs",
        "src/App/App.csproj",
        "src/Debugger/Trace.cs",
        "src/Gen_i.cs",
        "notes.mm",
        "packages/build/targets.props",
        "data.cache/readme.txt",
        "DocProject/Help/Guide.md",
        "DocProject/Help/sub/Guide.HxT",
        "other/DocProject/Help/Guide.HxT",
        "Tests/UnitTest.cs",
    ];
    for f in ignored.iter().chain(&kept) {
        w.write(f, "needle\n");
    }
    let mut want: Vec<&str> = kept.to_vec();
    want.sort();
    let grep = w.call(
        "sneaky-grep",
        json!({"pattern": "needle", "output_mode": "files_with_matches", "hidden": true}),
    );
    assert_eq!(sorted_strings(&grep.ok()["files"]), want, "grep");
    want.push(".gitignore");
    want.sort();
    let find = w.call(
        "sneaky-find",
        json!({"pattern": "*", "type": ["f"], "hidden": true}),
    );
    assert_eq!(sorted_strings(&find.ok()["files"]), want, "find");
}

/// Pages asked for with `offset` = the last page's `next_offset` add up to the whole result,
/// in order, with nothing twice: for grep (each mode), find and list_dir.
#[test]
fn pages_cover_the_whole_result_in_order() {
    let w = util::ws();
    for i in 0..23 {
        w.write(
            &format!("d{}/f{i:02}.txt", i % 3),
            "hit one\nmiss\nhit two\n",
        );
    }
    let whole_and_pages = |bin: &str, base: serde_json::Value, key: &str| {
        let mut all = base.clone();
        all["max_results"] = json!(1000);
        let whole = w.call(bin, all).ok()[key].clone();
        let mut pages = Vec::new();
        let mut offset = 0;
        loop {
            let mut req = base.clone();
            req["max_results"] = json!(4);
            req["offset"] = json!(offset);
            let r = w.call(bin, req).ok().clone();
            pages.push(r[key].clone());
            if r["truncated"] == false {
                assert!(r.get("next_offset").is_none(), "{r}");
                break;
            }
            offset = r["next_offset"].as_u64().expect("next_offset");
        }
        (whole, pages)
    };
    for (bin, base, key) in [
        ("sneaky-grep", json!({"pattern": "hit"}), "matches"),
        (
            "sneaky-grep",
            json!({"pattern": "hit", "output_mode": "files_with_matches"}),
            "files",
        ),
        ("sneaky-find", json!({"pattern": "*"}), "files"),
        ("sneaky-ls", json!({"recursive": true}), "entries"),
    ] {
        let (whole, pages) = whole_and_pages(bin, base.clone(), key);
        let joined: Vec<serde_json::Value> = pages
            .iter()
            .flat_map(|p| p.as_array().expect("array").clone())
            .collect();
        assert!(pages.len() > 2, "{bin} {base}: {} pages", pages.len());
        assert_eq!(json!(joined), whole, "{bin} {base}");
    }
    // Counts page by file, as an object.
    let r = w.call(
        "sneaky-grep",
        json!({"pattern": "hit", "output_mode": "count", "max_results": 2, "offset": 1}),
    );
    assert_eq!(r.ok()["counts"], json!({"d0/f03.txt": 2, "d0/f06.txt": 2}));
    assert_eq!(r.ok()["next_offset"], 3);
}

/// rg's and fd's short flags, and repeated array flags, on the command line.
#[test]
fn short_and_repeated_flags_mean_what_rg_and_fd_mean() {
    let w = util::ws();
    w.write("src/a.rs", "Foo bar\nfoobar\n")
        .write("src/b.py", "foo\n")
        .write("docs/c.md", "foo\n")
        .write(".hidden/d.rs", "foo\n");
    let files = |r: &util::Reply| util::strings(&r.ok()["files"]);
    let r = w.call_raw("sneaky-grep", &["-l", "-i", "-w", "foo"], b"");
    assert_eq!(files(&r), ["docs/c.md", "src/a.rs", "src/b.py"]);
    let r = w.call_raw(
        "sneaky-grep",
        &["-l", "-g", "*.rs", "-g", "*.md", "foo"],
        b"",
    );
    assert_eq!(files(&r), ["docs/c.md", "src/a.rs"]);
    let r = w.call_raw(
        "sneaky-grep",
        &["-c", "-t", "rust", "-F", "o", "--hidden"],
        b"",
    );
    assert_eq!(r.ok()["counts"], json!({".hidden/d.rs": 1, "src/a.rs": 2}));
    let r = w.call_raw("sneaky-grep", &["-C", "1", "^Foo", "src/a.rs"], b"");
    assert_eq!(r.ok()["matches"][0]["after"], json!(["foobar"]));
    let r = w.call_raw("sneaky-grep", &["-A", "0", "-B", "1", "foobar"], b"");
    assert_eq!(r.ok()["matches"][0]["before"], json!(["Foo bar"]));
    let r = w.call_raw("sneaky-find", &["-e", "rs", "-e", "md", "-H", "*"], b"");
    assert_eq!(files(&r), [".hidden/d.rs", "docs/c.md", "src/a.rs"]);
    let r = w.call_raw("sneaky-find", &["-t", "d", "-d", "1", "*"], b"");
    assert_eq!(files(&r), ["docs/", "src/"]);
    let r = w.call_raw("sneaky-find", &["-E", "src", "-t", "f", "*"], b"");
    assert_eq!(files(&r), ["docs/c.md"]);
    w.call_raw("sneaky-find", &["-t", "x", "*"], b"")
        .err("invalid_args", 2);
    w.call_raw("sneaky-grep", &["-t", "nosuchtype", "x"], b"")
        .err("invalid_args", 2);
}

/// Files whose bytes the searcher reads differently from a plain slice (byte order marks,
/// NUL bytes early, late and past the first 64 KiB, a file larger than what is read whole, no
/// final line ending, CRLF): the lines found, with context, are rg's.
#[test]
fn grep_lines_match_rg_on_awkward_files() {
    let Some(()) = reference("rg") else {
        return;
    };
    let w = util::ws();
    let put = |rel: &str, bytes: &[u8]| std::fs::write(w.root.join(rel), bytes).expect("write");
    let utf16 = |bom: &[u8], text: &str, le: bool| {
        let mut b = bom.to_vec();
        for u in text.encode_utf16() {
            b.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        b
    };
    put(
        "utf16le.txt",
        &utf16(b"\xFF\xFE", "one hit\ntwo\nhit three\n", true),
    );
    put("utf16be.txt", &utf16(b"\xFE\xFF", "hit one\ntwo\n", false));
    put("bom8.txt", b"\xEF\xBB\xBFhit at the start\nmore hit\n");
    put("nul_early.txt", b"x\nhit\0 after\n");
    put("nul_start.txt", b"hit\nhit\n\0");
    put("nul_late.txt", b"hit one\nline\nhit two\n\0\n");
    let mut big = Vec::new();
    for i in 0..20_000 {
        big.extend_from_slice(
            format!("line {i} {}\n", if i % 997 == 0 { "hit" } else { "" }).as_bytes(),
        );
    }
    put("big.txt", &big);
    let mut big_nul = big.clone();
    big_nul.extend_from_slice(b"\0hit after the NUL\n");
    put("big_nul.txt", &big_nul);
    let mut nul_past_64k = b"hit first\n".to_vec();
    nul_past_64k.resize(70_000, b'a');
    nul_past_64k.extend_from_slice(b"\nhit late\n\0\nhit last\n");
    put("nul_past_64k.txt", &nul_past_64k);
    put("no_newline.txt", b"a\nhit");
    put("crlf.txt", b"hit\r\nnot\r\nhit again\r\n");
    put("empty.txt", b"");
    put("just_hit.txt", b"hit");
    for context in ["0", "1"] {
        let got = ours(
            &w.root,
            "sneaky-grep",
            &["--max-results", "1000000", "-C", context, "hit"],
        );
        let mut lines = Vec::new();
        for m in got["matches"].as_array().expect("matches") {
            let path = m["path"].as_str().expect("path");
            let line = m["line"].as_u64().expect("line");
            let strings = |key: &str| match &m[key] {
                serde_json::Value::Null => Vec::new(),
                v => util::strings(v),
            };
            let before = strings("before");
            for (i, t) in before.iter().enumerate() {
                lines.push(format!("{path}-{}-{t}", line - (before.len() - i) as u64));
            }
            lines.push(format!(
                "{path}:{line}:{}",
                m["text"].as_str().expect("text")
            ));
            for (i, t) in strings("after").iter().enumerate() {
                lines.push(format!("{path}-{}-{t}", line + 1 + i as u64));
            }
        }
        lines.sort();
        lines.dedup();
        let mut want: Vec<String> = lines_of(
            &w.root,
            "rg",
            &[
                "-n",
                "--no-heading",
                "--with-filename",
                "-C",
                context,
                "hit",
            ],
        )
        .into_iter()
        // rg's notes on binary files come on stdout too.
        .filter(|l| l != "--" && !l.contains(": WARNING: "))
        // rg's lines keep the CR of a CRLF line; ours are without their line ending.
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect();
        want.dedup();
        assert_eq!(lines, want, "context {context}");
    }
}
