//! The code navigation tools (outline, find_symbol, find_references, repo_map) on temporary
//! workspaces holding a file of each language: what they find, paging, files of other
//! languages named, the jail (links out refused, the read-deny list skipped), the parse cache.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{self, Ws};

/// A file of each supported language, each defining a container `Widget` (class, struct …)
/// with a member `render`, and a top-level function `make_widget` that uses both.
pub const FILES: &[(&str, &str)] = &[
    (
        "rust/lib.rs",
        "/// A widget.\npub struct Widget {\n    size: u32,\n}\n\nimpl Widget {\n    pub fn render(&self) -> String {\n        \"Widget\".to_string()\n    }\n}\n\npub fn make_widget() -> Widget {\n    let w = Widget { size: 1 };\n    w.render();\n    w\n}\n",
    ),
    (
        "py/app.py",
        "class Widget:\n    size = 1\n\n    def render(self):\n        return \"render\"\n\n\ndef make_widget():\n    # Widget in a comment\n    w = Widget()\n    w.render()\n    return w\n",
    ),
    (
        "js/app.js",
        "class Widget {\n  render() {\n    return 'Widget';\n  }\n}\n\nfunction make_widget() {\n  const w = new Widget();\n  w.render();\n  return w;\n}\n",
    ),
    (
        "ts/app.ts",
        "interface Shape {\n  area(): number;\n}\n\nclass Widget implements Shape {\n  area(): number { return 1; }\n  render(): string {\n    return `Widget ${this.area()}`;\n  }\n}\n\nfunction make_widget(): Widget {\n  const w = new Widget();\n  w.render();\n  return w;\n}\n",
    ),
    (
        "ts/view.tsx",
        "class Widget {\n  render() {\n    return <div>Widget</div>;\n  }\n}\n\nfunction make_widget() {\n  const w = new Widget();\n  w.render();\n  return w;\n}\n",
    ),
    (
        "go/app.go",
        "package app\n\ntype Widget struct {\n\tSize int\n}\n\nfunc (w *Widget) render() string {\n\treturn \"Widget\"\n}\n\nfunc make_widget() *Widget {\n\tw := &Widget{}\n\tw.render()\n\treturn w\n}\n",
    ),
    (
        "java/Widget.java",
        "public class Widget {\n    private int size;\n\n    public String render() {\n        return \"Widget\";\n    }\n\n    static Widget make_widget() {\n        Widget w = new Widget();\n        w.render();\n        return w;\n    }\n}\n",
    ),
    (
        "c/widget.c",
        "struct Widget {\n    int size;\n};\n\nstatic const char *\nrender(struct Widget *w)\n{\n    return \"Widget\";\n}\n\nstruct Widget *make_widget(void)\n{\n    static struct Widget w;\n    render(&w);\n    return &w;\n}\n",
    ),
    (
        "cpp/widget.cpp",
        "class Widget {\n public:\n  const char *render() const;\n  int size = 0;\n};\n\nconst char *Widget::render() const { return \"Widget\"; }\n\nWidget make_widget() {\n  Widget w;\n  w.render();\n  return w;\n}\n",
    ),
    (
        "cs/Widget.cs",
        "namespace App {\n  public class Widget {\n    public int Size { get; set; }\n    public string render() { return \"Widget\"; }\n    public static Widget make_widget() {\n      var w = new Widget();\n      w.render();\n      return w;\n    }\n  }\n}\n",
    ),
    (
        "rb/widget.rb",
        "class Widget\n  attr_reader :size\n\n  def render\n    \"Widget\"\n  end\nend\n\ndef make_widget\n  w = Widget.new\n  w.render\n  w\nend\n",
    ),
    (
        "php/widget.php",
        "<?php\nclass Widget {\n    private $size;\n    public function render() { return \"Widget\"; }\n}\n\nfunction make_widget() {\n    $w = new Widget();\n    $w->render();\n    return $w;\n}\n",
    ),
    (
        "sh/widget.sh",
        "#!/bin/bash\nWIDGET_SIZE=1\n\nrender() {\n  echo \"Widget\"\n}\n\nmake_widget() {\n  render\n}\n",
    ),
];

/// A workspace with every file of `FILES`.
pub fn workspace() -> Ws {
    let w = util::ws();
    for (path, content) in FILES {
        w.write(path, content);
    }
    w
}

/// (path, name, kind, line, container) of each symbol of a result.
fn rows(result: &Value) -> Vec<(String, String, String, u64, Option<String>)> {
    result["symbols"]
        .as_array()
        .expect("symbols")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path").to_string(),
                s["name"].as_str().expect("name").to_string(),
                s["kind"].as_str().expect("kind").to_string(),
                s["line"].as_u64().expect("line"),
                s["container"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn has(
    rows: &[(String, String, String, u64, Option<String>)],
    path: &str,
    name: &str,
    kind: &str,
    line: u64,
    container: Option<&str>,
) -> bool {
    rows.iter().any(|r| {
        r.0 == path && r.1 == name && r.2 == kind && r.3 == line && r.4.as_deref() == container
    })
}

/// (file, Widget's kind, its line, render's kind, its line, its container, make_widget's line)
type Expected = (
    &'static str,
    &'static str,
    u64,
    &'static str,
    u64,
    Option<&'static str>,
    u64,
);

#[test]
fn outline_of_a_file_of_each_language() {
    let w = workspace();
    let expected: &[Expected] = &[
        ("rust/lib.rs", "struct", 2, "method", 7, Some("Widget"), 12),
        ("py/app.py", "class", 1, "method", 4, Some("Widget"), 8),
        ("js/app.js", "class", 1, "method", 2, Some("Widget"), 7),
        ("ts/app.ts", "class", 5, "method", 7, Some("Widget"), 12),
        ("ts/view.tsx", "class", 1, "method", 2, Some("Widget"), 7),
        ("go/app.go", "struct", 3, "method", 7, Some("Widget"), 11),
        (
            "java/Widget.java",
            "class",
            1,
            "method",
            4,
            Some("Widget"),
            8,
        ),
        ("c/widget.c", "struct", 1, "function", 6, None, 11),
        ("cpp/widget.cpp", "class", 1, "method", 7, Some("Widget"), 9),
        ("cs/Widget.cs", "class", 2, "method", 4, Some("Widget"), 5),
        ("rb/widget.rb", "class", 1, "method", 4, Some("Widget"), 9),
        ("php/widget.php", "class", 2, "method", 4, Some("Widget"), 7),
    ];
    for &(path, kind, line, render_kind, render_line, render_in, make_line) in expected {
        let r = w.call("sneaky-outline", json!({"path": path}));
        let rows = rows(r.ok());
        assert!(
            rows.iter()
                .any(|s| s.1 == "Widget" && s.2 == kind && s.3 == line),
            "{path}: Widget {kind} at {line}: {rows:?}"
        );
        assert!(
            has(&rows, path, "render", render_kind, render_line, render_in),
            "{path}: render: {rows:?}"
        );
        assert!(
            rows.iter()
                .any(|s| s.1 == "make_widget" && s.3 == make_line),
            "{path}: make_widget at {make_line}: {rows:?}"
        );
        assert!(r.ok().get("unsupported").is_none(), "{path}");
    }
    // Bash: functions and the variables outside them.
    let r = w.call("sneaky-outline", json!({"path": "sh/widget.sh"}));
    let rows = rows(r.ok());
    assert!(has(&rows, "sh/widget.sh", "render", "function", 4, None));
    assert!(has(
        &rows,
        "sh/widget.sh",
        "make_widget",
        "function",
        8,
        None
    ));
    assert!(has(
        &rows,
        "sh/widget.sh",
        "WIDGET_SIZE",
        "variable",
        2,
        None
    ));
    // A Go method's receiver is its container; the end line covers the body.
    let r = w.call("sneaky-outline", json!({"path": "go/app.go"}));
    let render = r.ok()["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "render")
        .cloned()
        .unwrap();
    assert_eq!(render["end_line"], 9);
    assert_eq!(render["signature"], "func (w *Widget) render() string");
}

#[test]
fn outline_of_a_folder_names_what_it_did_not_parse() {
    let w = workspace();
    w.write("README.md", "# Widget\n")
        .write(
            "tool",
            "#!/usr/bin/env python3\ndef script_main():\n    pass\n",
        )
        .write("data.bin", "\0\0\0")
        .write(".hidden/secret.rs", "fn hidden() {}\n")
        .write("ignored/gen.rs", "fn generated() {}\n")
        .write(".gitignore", "ignored/\n")
        .mkdir(".git");
    let r = w.call("sneaky-outline", json!({"path": "."}));
    let res = r.ok();
    let rows = rows(res);
    let paths: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let mut want: Vec<&str> = FILES.iter().map(|(p, _)| *p).collect();
    want.push("tool");
    assert_eq!(paths, want.into_iter().collect());
    // A script without an extension is told by its `#!` line.
    assert!(has(&rows, "tool", "script_main", "function", 2, None));
    // Sorted by path, then position.
    let order: Vec<(&str, u64)> = rows.iter().map(|r| (r.0.as_str(), r.3)).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    let unsupported = &res["unsupported"];
    let named: Vec<&str> = unsupported["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(named.contains(&"README.md"), "{unsupported}");
    assert!(!named
        .iter()
        .any(|n| n.contains("hidden") || n.contains("ignored")));
    assert_eq!(unsupported["count"].as_u64(), Some(named.len() as u64));
    // One file of another language is refused, naming why.
    let e = w
        .call("sneaky-outline", json!({"path": "README.md"}))
        .err("invalid_args", 2);
    assert!(
        e.contains("README.md") && e.contains("not a supported language"),
        "{e}"
    );
}

#[test]
fn outline_pages_and_depth() {
    let w = workspace();
    let all = w.call("sneaky-outline", json!({"path": "."}));
    let all = rows(all.ok());
    assert!(all.len() > 30, "{}", all.len());
    let first = w.call("sneaky-outline", json!({"path": ".", "limit": 10}));
    let first = first.ok();
    assert_eq!(first["truncated"], true);
    assert_eq!(first["next_offset"], 10);
    let second = w.call(
        "sneaky-outline",
        json!({"path": ".", "offset": 10, "limit": 1000}),
    );
    let second = second.ok();
    assert_eq!(second["truncated"], false);
    let mut both = rows(first);
    both.extend(rows(second));
    assert_eq!(both, all);
    // Depth 1: no member of anything.
    let top = w.call("sneaky-outline", json!({"path": ".", "depth": 1}));
    let top = rows(top.ok());
    assert!(
        top.iter().all(|r| r.4.is_none() || r.1 == "render"),
        "{top:?}"
    );
    assert!(top.len() < all.len());
    w.call("sneaky-outline", json!({"path": ".", "depth": 0}))
        .err("invalid_args", 2);
    w.call("sneaky-outline", json!({"path": ".", "limit": 0}))
        .err("invalid_args", 2);
}

#[test]
fn outline_keeps_to_the_jail() {
    let w = workspace();
    std::fs::write(w.outside().join("outside.rs"), "fn outside_secret() {}\n").unwrap();
    w.link(w.outside(), "out")
        .link(w.outside().join("outside.rs"), "rust/linked.rs");
    w.call("sneaky-outline", json!({"path": "out"}))
        .err("outside_workspace", 3);
    w.call("sneaky-outline", json!({"path": "../outside.rs"}))
        .err("outside_workspace", 3);
    // A walk never follows a link.
    let r = w.call("sneaky-outline", json!({"path": "."}));
    let text = r.ok().to_string();
    assert!(!text.contains("outside_secret"), "{text}");
    // The read-deny list: a denied file is neither parsed nor named.
    w.user_config("extra_deny_read = [\"secrets\"]\n")
        .write("secrets/keys.rs", "fn deny_me() {}\n");
    let r = w.call("sneaky-outline", json!({"path": "."}));
    let text = r.ok().to_string();
    assert!(
        !text.contains("deny_me") && !text.contains("keys.rs"),
        "{text}"
    );
    w.call("sneaky-outline", json!({"path": "secrets/keys.rs"}))
        .err("protected_path", 3);
}

/// The names outline gives for `path`, in its order.
fn outline_names(w: &Ws, path: &str) -> Vec<String> {
    rows(w.call("sneaky-outline", json!({ "path": path })).ok())
        .into_iter()
        .map(|r| r.1)
        .collect()
}

/// The parse cache: kept outside the workspace, used while the file is unchanged, and never
/// fooled by a change that keeps the size and sets the modification time back.
#[test]
fn the_parse_cache_sees_every_change() {
    let w = util::ws();
    w.write("a.rs", "fn first_name() {}\n");
    let path = w.root.join("a.rs");
    let old_mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    // Entries are kept only for files that have not changed for a while.
    std::thread::sleep(sneaky::code::cache::SETTLE + Duration::from_millis(300));
    let names = |w: &Ws| outline_names(w, "a.rs");
    assert_eq!(names(&w), ["first_name"]);
    let cache = w.outside().join("state/sneaky/parse");
    let entries = files_under(&cache);
    assert_eq!(entries.len(), 1, "one entry: {entries:?}");
    assert!(!entries[0].starts_with(&w.root));
    // Same size, modification time set back: still seen.
    std::fs::write(&path, "fn other_name() {}\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old_mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 19);
    assert_eq!(names(&w), ["other_name"]);
    // A damaged entry is a miss, not a failure.
    std::fs::write(&entries[0], b"garbage").unwrap();
    assert_eq!(names(&w), ["other_name"]);
}

/// outline keeps only the definitions of the files it parses; find_references, which needs
/// what is not code too, takes such an entry for a miss (a use in a comment or a string
/// stays out), and the whole entry it leaves serves outline again.
#[test]
fn an_entry_of_definitions_alone_serves_outline_not_references() {
    let w = util::ws();
    w.write(
        "a.rs",
        "// render in a comment\nfn render() {}\n\nfn main() {\n    let s = \"render\";\n    render();\n}\n",
    );
    std::thread::sleep(sneaky::code::cache::SETTLE + Duration::from_millis(300));
    let outline = |w: &Ws| -> Vec<(String, u64)> {
        rows(w.call("sneaky-outline", json!({"path": "."})).ok())
            .into_iter()
            .map(|r| (r.1, r.3))
            .collect()
    };
    let defs = [("render".to_string(), 2), ("main".to_string(), 4)];
    assert_eq!(outline(&w), defs);
    let cache = w.outside().join("state/sneaky/parse");
    let entry = files_under(&cache);
    assert_eq!(entry.len(), 1, "one entry: {entry:?}");
    let defs_only = std::fs::read(&entry[0]).unwrap();
    let r = w.call("sneaky-refs", json!({"name": "render"}));
    assert_eq!(places(r.ok(), "references"), [("a.rs".to_string(), 6)]);
    let whole = std::fs::read(&entry[0]).unwrap();
    assert!(
        whole.len() > defs_only.len(),
        "find_references kept its whole parse"
    );
    assert_eq!(outline(&w), defs);
    assert_eq!(std::fs::read(&entry[0]).unwrap(), whole, "outline used it");
}

/// The entries are kept in a few files, whatever the number of directories (a file per entry,
/// then per directory, cost a creation each on a cold outline of a tree), a directory's
/// entries together, and the next call reads them back without writing anything.
#[test]
fn the_entries_are_kept_in_a_few_packs() {
    let w = util::ws();
    let mut expected = Vec::new();
    for d in 0..40 {
        w.write(
            &format!("d{d:02}/a.rs"),
            &format!("fn f{d:02}() {{}}\nfn g{d:02}() {{}}\n"),
        );
        expected.extend([format!("f{d:02}"), format!("g{d:02}")]);
    }
    std::thread::sleep(sneaky::code::cache::SETTLE + Duration::from_millis(300));
    let names = |w: &Ws| outline_names(w, ".");
    assert_eq!(names(&w), expected);
    let cache = w.outside().join("state/sneaky/parse");
    let mut packs = files_under(&cache);
    packs.sort();
    assert!(
        (2..=16).contains(&packs.len()),
        "40 directories in at most 16 files: {packs:?}"
    );
    let kept: Vec<Vec<u8>> = packs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert_eq!(names(&w), expected);
    let mut again = files_under(&cache);
    again.sort();
    assert_eq!(again, packs);
    let reread: Vec<Vec<u8>> = again.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert_eq!(reread, kept);
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// (path, line) of each entry of a result's list.
fn places(result: &Value, list: &str) -> Vec<(String, u64)> {
    result[list]
        .as_array()
        .expect("a list")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path").to_string(),
                s["line"].as_u64().expect("line"),
            )
        })
        .collect()
}

#[test]
fn find_symbol_finds_definitions_not_mentions() {
    let w = workspace();
    w.write("README.md", "Widget and render are documented here.\n")
        .write("notes.txt", "nothing to see\n");
    let r = w.call("sneaky-symbol", json!({"name": "Widget"}));
    let res = r.ok();
    let found = rows(res);
    let want = [
        ("c/widget.c", "struct", 1),
        ("cpp/widget.cpp", "class", 1),
        ("cs/Widget.cs", "class", 2),
        ("go/app.go", "struct", 3),
        ("java/Widget.java", "class", 1),
        ("js/app.js", "class", 1),
        ("php/widget.php", "class", 2),
        ("py/app.py", "class", 1),
        ("rb/widget.rb", "class", 1),
        ("rust/lib.rs", "struct", 2),
        ("ts/app.ts", "class", 5),
        ("ts/view.tsx", "class", 1),
    ];
    let got: Vec<(&str, &str, u64)> = found
        .iter()
        .map(|r| (r.0.as_str(), r.2.as_str(), r.3))
        .collect();
    assert_eq!(got, want);
    // The file of another language that mentions the name is named; one that does not is not.
    let named: Vec<&str> = res["unsupported"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["README.md"]);
    // A name path: render inside Widget (Go's receiver and C++'s Widget:: count).
    let r = w.call("sneaky-symbol", json!({"name": "Widget/render"}));
    let found = rows(r.ok());
    assert_eq!(found.len(), 12, "{found:?}");
    assert!(found
        .iter()
        .all(|r| r.1 == "render" && r.4.as_deref() == Some("Widget")));
    assert!(has(
        &found,
        "cpp/widget.cpp",
        "render",
        "method",
        7,
        Some("Widget")
    ));
    assert!(has(
        &found,
        "cpp/widget.cpp",
        "render",
        "method",
        3,
        Some("Widget")
    ));
    // By kind: the free functions called render.
    let r = w.call(
        "sneaky-symbol",
        json!({"name": "render", "kind": "function"}),
    );
    assert_eq!(
        places(r.ok(), "symbols"),
        [
            ("c/widget.c".to_string(), 6),
            ("sh/widget.sh".to_string(), 4)
        ]
    );
    // The impl block is a container, found only when asked for.
    let r = w.call(
        "sneaky-symbol",
        json!({"name": "Widget", "kind": "impl", "path": "rust"}),
    );
    assert_eq!(places(r.ok(), "symbols"), [("rust/lib.rs".to_string(), 6)]);
    // Not exact: the name contains it, case ignored.
    let r = w.call(
        "sneaky-symbol",
        json!({"name": "WIDG", "exact": false, "path": "py"}),
    );
    let names: Vec<String> = rows(r.ok()).into_iter().map(|r| r.1).collect();
    assert_eq!(names, ["Widget", "make_widget"]);
    // Bodies.
    let r = w.call(
        "sneaky-symbol",
        json!({"name": "render", "path": "py/app.py", "include_body": true}),
    );
    assert_eq!(
        r.ok()["symbols"][0]["body"],
        "    def render(self):\n        return \"render\"\n"
    );
    // Pages.
    let r = w.call("sneaky-symbol", json!({"name": "Widget", "limit": 5}));
    assert_eq!(r.ok()["truncated"], true);
    assert_eq!(r.ok()["next_offset"], 5);
    let r = w.call(
        "sneaky-symbol",
        json!({"name": "Widget", "offset": 5, "limit": 100}),
    );
    assert_eq!(places(r.ok(), "symbols").len(), 7);
    w.call("sneaky-symbol", json!({"name": "A//b"}))
        .err("invalid_args", 2);
    w.call("sneaky-symbol", json!({"name": "Widget", "kind": "nope"}))
        .err("invalid_args", 2);
}

#[test]
fn find_symbol_and_references_keep_to_the_jail() {
    let w = workspace();
    std::fs::write(
        w.outside().join("outside.py"),
        "def render():\n    render()\n",
    )
    .unwrap();
    w.link(w.outside(), "out")
        .user_config("extra_deny_read = [\"secrets\"]\n")
        .write("secrets/keys.py", "def render():\n    render()\n");
    for bin in ["sneaky-symbol", "sneaky-refs"] {
        let r = w.call(bin, json!({"name": "render"}));
        let text = r.ok().to_string();
        assert!(
            !text.contains("outside") && !text.contains("secrets"),
            "{bin}: {text}"
        );
        w.call(bin, json!({"name": "render", "path": "out"}))
            .err("outside_workspace", 3);
    }
}

#[test]
fn find_references_finds_uses_in_code_only() {
    let w = workspace();
    w.write("README.md", "render\n");
    let r = w.call("sneaky-refs", json!({"name": "render"}));
    let res = r.ok();
    let refs = res["references"].as_array().unwrap();
    let got: Vec<(&str, u64, u64, Option<&str>)> = refs
        .iter()
        .map(|u| {
            (
                u["path"].as_str().unwrap(),
                u["line"].as_u64().unwrap(),
                u["column"].as_u64().unwrap(),
                u["container"].as_str(),
            )
        })
        .collect();
    // One use in each file (`w.render()`), none at a definition, none in a string
    // (Python's `return "render"`), and Bash's call of the function.
    let want = [
        ("c/widget.c", 14, 5, Some("make_widget")),
        ("cpp/widget.cpp", 11, 5, Some("make_widget")),
        ("cs/Widget.cs", 7, 9, Some("make_widget")),
        ("go/app.go", 13, 4, Some("make_widget")),
        ("java/Widget.java", 10, 11, Some("make_widget")),
        ("js/app.js", 9, 5, Some("make_widget")),
        ("php/widget.php", 9, 9, Some("make_widget")),
        ("py/app.py", 11, 7, Some("make_widget")),
        ("rb/widget.rb", 11, 5, Some("make_widget")),
        ("rust/lib.rs", 14, 7, Some("make_widget")),
        ("sh/widget.sh", 9, 3, Some("make_widget")),
        ("ts/app.ts", 14, 5, Some("make_widget")),
        ("ts/view.tsx", 9, 5, Some("make_widget")),
    ];
    assert_eq!(got, want);
    assert_eq!(refs[0]["text"], "    render(&w);");
    assert_eq!(res["unsupported"]["files"][0]["path"], "README.md");
    // A word in a comment or a string is no use; an interpolation is code.
    w.write(
        "py/more.py",
        "# render here is a comment\nx = \"render\"\ny = f\"{render()}\"\n",
    );
    let r = w.call(
        "sneaky-refs",
        json!({"name": "render", "path": "py/more.py"}),
    );
    assert_eq!(
        places(r.ok(), "references"),
        [("py/more.py".to_string(), 3)]
    );
    // The Widget of Python's comment is left out; its uses are not.
    let r = w.call("sneaky-refs", json!({"name": "Widget", "path": "py"}));
    assert_eq!(
        places(r.ok(), "references"),
        [("py/app.py".to_string(), 10)]
    );
    // What a rename must change too is code: a Rust doc comment's examples, intra-doc links
    // and code spans (not its prose, nor a text block), the names of a Python `__all__`, a
    // docstring's doctest and its literals and roles (not its prose, nor a doctest's output).
    w.write(
        "docs/lib.rs",
        "/// Draws with [`render`], [render] or [draw](render);\n\
         /// render as a word is prose.\n\
         /// ```\n\
         /// let s = render();\n\
         /// ```\n\
         /// ```text\n\
         /// render in text\n\
         /// ```\n\
         // render in a plain comment\n\
         //! `render` of an inner doc\n\
         /** A block: `render`\n render here is prose */\n\
         pub fn draw() {}\n\
         /// render, a fence never closed:\n\
         /// ```\n\
         \n\
         /// render after a gap is prose again\n\
         pub fn more() {}\n",
    )
    .write(
        "docs/mod.py",
        "__all__ = ['render', 'other']\n\
         __all__ += ('render',)\n\
         __all__.extend(['render'])\n\
         names = ['render']\n\
         \"\"\"render in a string\"\"\"\n\
         def draw():\n\
         \x20   \"\"\"Calls render, :func:`render` and ``render``.\n\
         \n\
         \x20   >>> render()\n\
         \x20   render\n\
         \x20   \"\"\"\n",
    );
    let r = w.call("sneaky-refs", json!({"name": "render", "path": "docs"}));
    let got: Vec<(String, u64, u64)> = r.ok()["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["path"].as_str().unwrap().to_string(),
                u["line"].as_u64().unwrap(),
                u["column"].as_u64().unwrap(),
            )
        })
        .collect();
    let at = |path: &str, line: u64, column: u64| (path.to_string(), line, column);
    assert_eq!(
        got,
        [
            at("docs/lib.rs", 1, 18),
            at("docs/lib.rs", 1, 29),
            at("docs/lib.rs", 1, 47),
            at("docs/lib.rs", 4, 13),
            at("docs/lib.rs", 10, 6),
            at("docs/lib.rs", 11, 15),
            at("docs/mod.py", 1, 13),
            at("docs/mod.py", 2, 14),
            at("docs/mod.py", 3, 18),
            at("docs/mod.py", 7, 29),
            at("docs/mod.py", 7, 43),
            at("docs/mod.py", 9, 9),
        ]
    );
    // A name that a comment (of any language) or a docstring writes as only code writes it
    // is a use there too: snake_case, CamelCase, a code span, BoringSSL's |name|, a call, a
    // path or an attribute; the same name as an English word is prose, and so is an address.
    w.write(
        "prose/a.c",
        "// render_all and RenderAll: `render` or |render|\n\
         /* render is prose, http://x.org/render_all too */\n\
         // call render() or Widget::render or self.render\n",
    )
    .write(
        "prose/b.py",
        "def f():\n\
         \x20   \"\"\"Uses render_all, then render.\"\"\"\n\
         # render, e.g. render.py\n",
    );
    let got = |name: &str| {
        let r = w.call("sneaky-refs", json!({"name": name, "path": "prose"}));
        places(r.ok(), "references")
    };
    let at = |path: &str, line: u64| (path.to_string(), line);
    assert_eq!(got("render_all"), [at("prose/a.c", 1), at("prose/b.py", 2)]);
    assert_eq!(got("RenderAll"), [at("prose/a.c", 1)]);
    // One place per use: two on line 1, three on line 3.
    assert_eq!(
        got("render"),
        [
            at("prose/a.c", 1),
            at("prose/a.c", 1),
            at("prose/a.c", 3),
            at("prose/a.c", 3),
            at("prose/a.c", 3)
        ]
    );
    let r = w.call(
        "sneaky-refs",
        json!({"name": "render", "path": "prose/a.c"}),
    );
    let columns: Vec<u64> = r.ok()["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["column"].as_u64().unwrap())
        .collect();
    assert_eq!(columns, [31, 43, 9, 29, 44]);
    // Pages.
    let r = w.call("sneaky-refs", json!({"name": "render", "limit": 4}));
    assert_eq!(r.ok()["truncated"], true);
    assert_eq!(r.ok()["next_offset"], 4);
    w.call("sneaky-refs", json!({"name": "two words"}))
        .err("invalid_args", 2);
    w.call(
        "sneaky-refs",
        json!({"name": "render", "path": "README.md"}),
    )
    .err("invalid_args", 2);
}

/// A tree of 100 Python modules: each defines its own function and calls two others', and all
/// of them use `shared_helper` of `core.py`.
fn hundred_modules() -> Ws {
    let w = util::ws();
    w.write(
        "pkg/core.py",
        "def shared_helper(x):\n    return x\n\n\nclass Registry:\n    pass\n",
    );
    for i in 0..99 {
        let (a, b) = ((i * 7 + 3) % 99, (i * 13 + 5) % 99);
        w.write(
            &format!("pkg/mod_{i:02}.py"),
            &format!(
                "from pkg.core import shared_helper, Registry\n\n\ndef compute_{i:02}(value):\n    \
                 registry = Registry()\n    return shared_helper(value) + compute_{a:02}(value) + \
                 compute_{b:02}(value)\n"
            ),
        );
    }
    w
}

#[test]
fn repo_map_ranks_what_is_used_within_the_budget() {
    let w = hundred_modules();
    let r = w.call("sneaky-map", json!({}));
    let res = r.ok();
    let map = res["map"].as_str().unwrap();
    let files = util::strings(&res["files"]);
    assert!(res["tokens"].as_u64().unwrap() <= 1024, "{res}");
    assert!(files.len() >= 10, "{} files: {map}", files.len());
    // What every module uses comes first.
    assert_eq!(files[0], "pkg/core.py", "{map}");
    assert!(
        map.starts_with("pkg/core.py:\n  1: def shared_helper(x)\n"),
        "{map}"
    );
    // A smaller budget holds less, and stays within it.
    let r = w.call("sneaky-map", json!({"max_tokens": 100}));
    let small = r.ok();
    assert!(small["tokens"].as_u64().unwrap() <= 100);
    assert!(util::strings(&small["files"]).len() < files.len());
    // Focus: a module and what it uses rank first.
    let r = w.call(
        "sneaky-map",
        json!({"max_tokens": 200, "focus": ["pkg/mod_42.py"]}),
    );
    let focused = util::strings(&r.ok()["files"]);
    let (a, b) = ((42 * 7 + 3) % 99, (42 * 13 + 5) % 99);
    for used in [format!("pkg/mod_{a:02}.py"), format!("pkg/mod_{b:02}.py")] {
        let at = focused.iter().position(|f| *f == used);
        assert!(at.is_some_and(|at| at < 4), "{used} in {focused:?}");
    }
    // A focused name ranks its definer first.
    let r = w.call(
        "sneaky-map",
        json!({"max_tokens": 100, "focus": ["compute_77"]}),
    );
    assert_eq!(util::strings(&r.ok()["files"])[0], "pkg/mod_77.py");
    w.call("sneaky-map", json!({"max_tokens": 10}))
        .err("invalid_args", 2);
}

/// (line, text) of each syntax error of an edit's result.
fn introduced(result: &Value) -> Vec<(String, u64, String)> {
    result
        .get("syntax_errors")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .map(|e| {
                    (
                        e["path"].as_str().unwrap().to_string(),
                        e["line"].as_u64().unwrap(),
                        e["text"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn edits_report_the_syntax_errors_they_introduced_only() {
    let w = util::ws();
    // A new file with an error.
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "a.py", "content": "def f(:\n    return 1\n"}),
    );
    let errors = introduced(r.ok());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!((errors[0].0.as_str(), errors[0].1), ("a.py", 1));
    // A file broken already: an edit elsewhere reports nothing, though the error moved.
    w.write("b.rs", "fn broken( {\n}\n\nfn fine() -> u32 {\n    1\n}\n");
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "b.rs", "old_str": "fn fine", "new_str": "// moved\nfn fine"}),
    );
    assert_eq!(introduced(r.ok()), [], "{}", r.ok());
    // One more error: only that one.
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "b.rs", "old_str": "    1\n}", "new_str": "    1 +\n}"}),
    );
    let errors = introduced(r.ok());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].1 >= 5, "{errors:?}");
    // A fix reports nothing; nor does a file of another language.
    let r = w.call(
        "sneaky-replace",
        json!({"file_path": "b.rs", "old_str": "fn broken( {", "new_str": "fn broken() {"}),
    );
    assert_eq!(introduced(r.ok()), []);
    let r = w.call(
        "sneaky-write",
        json!({"file_path": "notes.txt", "content": "def f(:\n"}),
    );
    assert!(r.ok().get("syntax_errors").is_none());
    // A patch of two files, one broken by it; a dry run is checked too.
    w.write("c.js", "function c() {\n  return 1;\n}\n")
        .write("d.go", "package d\n\nfunc D() int {\n\treturn 1\n}\n");
    let patch = "--- a/c.js\n+++ b/c.js\n@@ -1,3 +1,3 @@\n function c() {\n-  return 1;\n+  return (1;\n }\n--- a/d.go\n+++ b/d.go\n@@ -3,3 +3,3 @@\n func D() int {\n-\treturn 1\n+\treturn 2\n }\n";
    for dry_run in [true, false] {
        let r = w.call("sneaky-patch", json!({"patch": patch, "dry_run": dry_run}));
        let errors = introduced(r.ok());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!((errors[0].0.as_str(), errors[0].1), ("c.js", 2));
    }
    // --format text says so on stderr, one line each.
    let out = assert_cmd::Command::cargo_bin("sneaky-write")
        .unwrap()
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env("SNEAKY_CEILING_DIRECTORIES", w.outside())
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .args(["e.py", "--format", "text"])
        .write_stdin("def e(:\n")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("e.py:1:") && stderr.contains("introduced a syntax error"),
        "{stderr}"
    );
}

/// The check never holds an edit: without sneaky-outline beside it or on PATH, the edit is
/// made and its result carries no errors.
#[test]
fn an_edit_without_the_parse_helper_is_made_all_the_same() {
    let w = util::ws();
    let bin = util::copy_binaries_for_others(w.outside(), &["sneaky-write"]);
    let out = std::process::Command::new(bin.join("sneaky-write"))
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env("SNEAKY_CEILING_DIRECTORIES", w.outside())
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .env("PATH", "/usr/bin:/bin")
        .arg("a.py")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"def f(:\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["ok"], true, "{reply}");
    assert!(reply["result"].get("syntax_errors").is_none(), "{reply}");
    assert_eq!(w.read("a.py"), "def f(:\n");
}
