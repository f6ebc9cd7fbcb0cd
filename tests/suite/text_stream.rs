//! `--format text` of sneaky-grep and sneaky-find is streamed: written as files are
//! searched, so in the order they finish, as rg and fd with threads. These tests hold it to
//! rg's and fd's output as sets, to the cap (the first results found, the cut said on stderr),
//! to the exit statuses of JSON mode, and to a reader that goes away (`| head -1`).

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

use crate::util::{self, Ws};

struct TextRun {
    status: i32,
    stdout: String,
    stderr: String,
}

fn command(w: &Ws, bin: &str, args: &[&str]) -> Command {
    let mut cmd = Command::cargo_bin(bin).expect("binary");
    cmd.current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .stdin(Stdio::null())
        .args(["--format", "text"])
        .args(args);
    cmd
}

fn text(w: &Ws, bin: &str, args: &[&str]) -> TextRun {
    let out = assert_cmd::Command::from_std(command(w, bin, args))
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{bin} panicked: {stderr}");
    TextRun {
        status: out.status.code().expect("status"),
        stdout: String::from_utf8(out.stdout).expect("utf-8"),
        stderr,
    }
}

/// A reference tool's stdout lines in `root`, sorted, "./" and a trailing "/" removed.
fn reference_lines(root: &std::path::Path, tool: &str, args: &[&str]) -> Vec<String> {
    // stdin from /dev/null: rg searches a piped stdin instead of the directory.
    let out = Command::new(tool)
        .current_dir(root)
        .stdin(Stdio::null())
        .args(args)
        .output()
        .expect("run reference");
    sorted(&String::from_utf8_lossy(&out.stdout))
}

fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| l.trim_start_matches("./").trim_end_matches('/').to_string())
        .collect();
    lines.sort();
    lines
}

/// A git repository of `dirs` × `files` small files, each with "let " on six lines and every
/// other one a "needle", some context around it; a gitignored folder and a hidden file that
/// neither rg nor we search.
fn tree(dirs: usize, files: usize) -> Ws {
    let w = util::ws();
    w.mkdir(".git")
        .write(".gitignore", "generated/\n")
        .write("generated/g.rs", "let needle = 1;\n")
        .write(".hidden/h.rs", "let needle = 2;\n");
    for d in 0..dirs {
        for i in 0..files {
            let mut body = format!("// file {i} of {d}\nfn item() {{\n");
            for k in 0..6 {
                body.push_str(&format!("    let v{k} = {k};\n"));
                if i % 2 == 0 && k == 3 {
                    body.push_str("    // needle here\n");
                }
            }
            body.push_str("}\n");
            w.write(&format!("d{d:03}/f{i:03}.rs"), &body);
        }
    }
    w
}

#[test]
fn streamed_grep_prints_what_rg_prints() {
    if !util::require_cmd("rg") {
        return;
    }
    let w = tree(20, 30);
    let big = ["--max-results", "100000000"];
    let cases: [(&[&str], &[&str]); 5] = [
        (&["needle"], &["-n", "--no-heading", "needle"]),
        (&["-l", "let "], &["-l", "let "]),
        (&["-c", "let v[0-3]"], &["-c", "let v[0-3]"]),
        (
            &["-w", "-i", "NEEDLE"],
            &["-n", "--no-heading", "-w", "-i", "NEEDLE"],
        ),
        (
            &["-C", "1", "needle"],
            &["-n", "--no-heading", "-C", "1", "needle"],
        ),
    ];
    for (ours, rg) in cases {
        let t = text(&w, "sneaky-grep", &[ours, &big].concat());
        assert_eq!((t.status, t.stderr.as_str()), (0, ""), "{ours:?}");
        assert_eq!(
            sorted(&t.stdout),
            reference_lines(&w.root, "rg", rg),
            "sneaky-grep {ours:?} --format text differs from rg {rg:?}"
        );
    }
    // Each file's lines stay together and in order, as rg prints them.
    let t = text(&w, "sneaky-grep", &["let v", "--max-results", "100000000"]);
    let mut seen_files = std::collections::HashSet::new();
    let mut last: Option<(String, u64)> = None;
    for line in t.stdout.lines() {
        let mut parts = line.splitn(3, ':');
        let (path, n) = (parts.next().unwrap(), parts.next().unwrap());
        let n: u64 = n.parse().unwrap();
        match &last {
            Some((p, m)) if p == path => assert!(n > *m, "{line} after line {m}"),
            _ => assert!(seen_files.insert(path.to_string()), "{path} printed twice"),
        }
        last = Some((path.to_string(), n));
    }
    assert_eq!(seen_files.len(), 600);
}

#[test]
fn a_streamed_cut_shows_the_first_results_found_and_says_so() {
    let w = tree(2, 10); // 10 needles, 20 files
    let all = sorted(&text(&w, "sneaky-grep", &["needle"]).stdout);
    assert_eq!(all.len(), 10);
    let t = text(&w, "sneaky-grep", &["needle", "--max-results", "4"]);
    assert_eq!(t.status, 0);
    let shown = sorted(&t.stdout);
    assert_eq!(shown.len(), 4, "{}", t.stdout);
    assert!(shown.iter().all(|l| all.contains(l)), "{}", t.stdout);
    assert!(
        t.stderr.contains("cut: only the first 4 matches found"),
        "{}",
        t.stderr
    );
    // Exactly the cap is not a cut.
    let t = text(&w, "sneaky-grep", &["needle", "--max-results", "10"]);
    assert_eq!((sorted(&t.stdout), t.stderr.as_str()), (all.clone(), ""));
    // Files and counts are cut by files.
    let t = text(&w, "sneaky-grep", &["-l", "let", "--max-results", "7"]);
    assert_eq!(t.stdout.lines().count(), 7);
    assert!(t.stderr.contains("first 7 files"), "{}", t.stderr);
    let t = text(&w, "sneaky-grep", &["-c", "let", "--max-results", "3"]);
    assert_eq!(t.stdout.lines().count(), 3);
    assert!(t.stdout.lines().all(|l| l.ends_with(":6")), "{}", t.stdout);
    assert!(t.stderr.contains("first 3 files"), "{}", t.stderr);
    // A cut inside a file keeps each match's context lines.
    let t = text(
        &w,
        "sneaky-grep",
        &["-A", "1", "let v[05]", "d000/f000.rs", "--max-results", "1"],
    );
    assert_eq!(
        t.stdout,
        "d000/f000.rs:3:    let v0 = 0;\nd000/f000.rs-4-    let v1 = 1;\n"
    );
    assert!(t.stderr.contains("first 1 matches"), "{}", t.stderr);
    // With --offset the sorted page, and the next page to ask for.
    let t = text(
        &w,
        "sneaky-grep",
        &["needle", "--max-results", "4", "--offset", "0"],
    );
    assert_eq!(t.stdout.lines().collect::<Vec<_>>(), all[..4]);
    assert!(t.stderr.contains("--offset 4"), "{}", t.stderr);
    let t = text(&w, "sneaky-find", &["*.rs", "--max-results", "5"]);
    assert_eq!(t.stdout.lines().count(), 5);
    assert!(t.stderr.contains("first 5 paths found"), "{}", t.stderr);
}

#[test]
fn streamed_text_exits_as_json_does() {
    let w = tree(1, 4);
    let cases: [&[&str]; 5] = [
        &["needle"],
        &["nothing matches this"],
        &["(unclosed"],
        &["needle", "missing/dir"],
        &["needle", "--max-results", "0"],
    ];
    for args in cases {
        let json = w.call_raw("sneaky-grep", args, b"");
        let t = text(&w, "sneaky-grep", args);
        assert_eq!(t.status, json.status, "{args:?}: {}", t.stderr);
        if json.json["ok"] == false {
            let code = json.json["error"]["code"].as_str().unwrap();
            assert!(
                t.stderr.starts_with(&format!("sneaky-grep: {code}: ")),
                "{args:?}: {}",
                t.stderr
            );
            assert_eq!(t.stdout, "");
        }
    }
    // The bound of JSON mode does not apply where nothing is held; zero still is refused.
    assert_eq!(
        text(&w, "sneaky-grep", &["needle", "--max-results", "5000000"]).status,
        0
    );
    w.call_raw("sneaky-grep", &["needle", "--max-results", "5000000"], b"")
        .err("invalid_args", 2);
}

#[test]
fn streamed_find_prints_what_fd_prints() {
    if !util::require_cmd("fdfind") {
        return;
    }
    let w = tree(10, 20);
    for (ours, fd) in [
        (&["*.rs"][..], &["--glob", "*.rs"][..]),
        (&["-t", "d", "*"], &["-t", "d", "--glob", "*"]),
    ] {
        let t = text(
            &w,
            "sneaky-find",
            &[ours, &["--max-results", "10000000"]].concat(),
        );
        assert_eq!((t.status, t.stderr.as_str()), (0, ""), "{ours:?}");
        assert_eq!(sorted(&t.stdout), reference_lines(&w.root, "fdfind", fd));
    }
}

/// `sneaky-grep … | head -1`: the reader goes away after one line, and the search stops at
/// once, quietly, with status 0 (no EPIPE panic, no error message).
#[test]
fn a_closed_pipe_ends_the_stream() {
    let w = tree(40, 50); // 2,000 files, 12,000 lines with "let "
    for (bin, args) in [
        ("sneaky-grep", &["let ", "--max-results", "100000000"][..]),
        ("sneaky-grep", &["-l", "let", "--max-results", "100000000"]),
        ("sneaky-find", &["*", "--max-results", "100000000"]),
    ] {
        let mut child = command(&w, bin, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut first = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        out.read_line(&mut first).expect("a line");
        assert!(!first.is_empty(), "{bin} printed nothing");
        drop(out);
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{bin} {args:?} went on after its reader left");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
            .expect("stderr");
        assert_eq!((status.code(), stderr.as_str()), (Some(0), ""), "{bin}");
    }
}
