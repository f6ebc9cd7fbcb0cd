//! Property tests over the library: for random trees of files, directories and links (some
//! pointing out of the root, some dangling, some looping), the walking tools never return a
//! path that leads outside the root, nor anything of an outside file's content (nor does
//! read_file of what they return), and edits at random paths change nothing outside.

use proptest::prelude::*;
use serde_json::{json, Value};

use sneaky::fs::jail::Workspace;
use sneaky::tools::{find, Context};

#[derive(Debug, Clone)]
enum Node {
    Dir(String),
    File(String, String),
    Link(String, String),
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{1,2}",
        Just(".hidden".to_string()),
        Just("x.txt".to_string()),
        Just("leak.txt".to_string()),
    ]
}

fn rel_path() -> impl Strategy<Value = String> {
    prop::collection::vec(name(), 1..4).prop_map(|parts| parts.join("/"))
}

fn link_target() -> impl Strategy<Value = String> {
    prop_oneof![
        rel_path(),
        Just("..".to_string()),
        Just("../..".to_string()),
        Just("../outside".to_string()),
        Just("@OUTSIDE@".to_string()),
        Just("@ROOT@/a".to_string()),
        Just("/proc/self/root".to_string()),
        Just(".".to_string()),
        Just("missing/target".to_string()),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        rel_path().prop_map(Node::Dir),
        (rel_path(), "[a-z ]{0,12}").prop_map(|(p, c)| Node::File(p, c)),
        (rel_path(), link_target()).prop_map(|(p, t)| Node::Link(p, t)),
    ]
}

fn build(nodes: &[Node]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::create_dir_all(outside.join("a")).expect("mkdir");
    std::fs::write(outside.join("leak.txt"), "OUTSIDE\n").expect("write");
    std::fs::write(outside.join("a/leak.txt"), "OUTSIDE\n").expect("write");
    for node in nodes {
        // Never made through a link made before (one to `/proc/self/root` would put the rest
        // of the tree in the real `/`): such a node is left out.
        let path = match node {
            Node::Dir(p) | Node::File(p, _) | Node::Link(p, _) => p,
        };
        if through_link(&root, path) {
            continue;
        }
        // Creation failures (a file where a directory should be…) just shape the tree.
        match node {
            Node::Dir(p) => {
                let _ = std::fs::create_dir_all(root.join(p));
            }
            Node::File(p, c) => {
                let p = root.join(p);
                if let Some(parent) = p.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = std::fs::write(p, c);
            }
            Node::Link(p, t) => {
                let t = t
                    .replace("@OUTSIDE@", &outside.display().to_string())
                    .replace("@ROOT@", &root.display().to_string());
                let p = root.join(p);
                if let Some(parent) = p.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = std::os::unix::fs::symlink(t, p);
            }
        }
    }
    (dir, root)
}

/// Whether a component of `rel` beneath `root` is a symbolic link already.
fn through_link(root: &std::path::Path, rel: &str) -> bool {
    let mut at = root.to_path_buf();
    rel.split('/').any(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// A returned path must be relative, free of `..`, and resolve beneath the root.
fn assert_inside(ws: &Workspace, path: &str) {
    let trimmed = path.trim_end_matches('/');
    assert!(!trimmed.starts_with('/'), "absolute path returned: {path}");
    assert!(
        !trimmed.split('/').any(|c| c == ".."),
        "path with .. returned: {path}"
    );
    let rel = ws.relative(trimmed).expect("relative");
    let flags = nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_NOFOLLOW;
    ws.open(&rel, flags, nix::sys::stat::Mode::empty())
        .unwrap_or_else(|e| panic!("{path} does not resolve beneath the root: {e}"));
}

fn call(ctx: &Context, tool: &str, args: Value) -> Value {
    let spec = find(tool).expect("tool");
    (spec.run)(args, ctx).unwrap_or_else(|e| panic!("{tool}: {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn walkers_stay_inside(nodes in prop::collection::vec(node(), 1..25)) {
        let (_dir, root) = build(&nodes);
        let ctx = Context {
            ws: Workspace::open_root(&root).expect("root"),
            config: sneaky::config::Config::default(),
        };
        let listed = call(&ctx, "list_dir", json!({"recursive": true}));
        for e in listed["entries"].as_array().expect("entries") {
            assert_inside(&ctx.ws, e.as_str().expect("str"));
        }
        let found = call(&ctx, "find_files", json!({"pattern": "*"}));
        for f in found["files"].as_array().expect("files") {
            assert_inside(&ctx.ws, f.as_str().expect("str"));
        }
        // Following up on what the walkers returned stays inside too: read_file of every
        // path found reads nothing from outside the root.
        for f in found["files"].as_array().expect("files") {
            let path = f.as_str().expect("str");
            match (find("read_file").expect("tool").run)(json!({"file_path": path}), &ctx) {
                Ok(r) => prop_assert!(!r.to_string().contains("OUTSIDE"), "{}: {}", path, r),
                Err(e) => prop_assert!(e.code() != "internal", "{}: {}", path, e),
            }
        }
        let grep = call(&ctx, "grep_files", json!({"pattern": "."}));
        for m in grep["matches"].as_array().expect("matches") {
            assert_inside(&ctx.ws, m["path"].as_str().expect("path"));
            prop_assert!(!m["text"].as_str().unwrap_or("").contains("OUTSIDE"));
        }
        prop_assert!(!grep.to_string().contains("OUTSIDE"));
    }
}

/// Names and contents of everything under `dir` (links as their targets), to compare.
fn snapshot(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            let ft = e.file_type().expect("type");
            let what = if ft.is_symlink() {
                format!("-> {}", std::fs::read_link(&p).expect("readlink").display())
            } else if ft.is_dir() {
                stack.push(p.clone());
                "dir".to_string()
            } else {
                std::fs::read_to_string(&p).unwrap_or_default()
            };
            out.push((p.display().to_string(), what));
        }
    }
    out.sort();
    out
}

#[derive(Debug, Clone)]
enum Edit {
    Write(String),
    Mkdir(String),
    Rm(String),
    Replace(String),
    Patch(String),
    PatchAll(String),
}

fn edit() -> impl Strategy<Value = Edit> {
    let target = prop_oneof![rel_path(), link_target()];
    prop_oneof![
        target.clone().prop_map(Edit::Write),
        target.clone().prop_map(Edit::Mkdir),
        target.clone().prop_map(Edit::Rm),
        target.clone().prop_map(Edit::Replace),
        target.clone().prop_map(Edit::Patch),
        target.prop_map(Edit::PatchAll),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Edits at random paths of a random tree with links (out, dangling, looping) never
    /// change anything outside the root, and report only paths inside it.
    #[test]
    fn edits_stay_inside(
        nodes in prop::collection::vec(node(), 1..20),
        edits in prop::collection::vec(edit(), 1..12),
    ) {
        let (dir, root) = build(&nodes);
        let outside = dir.path().join("outside");
        let before = snapshot(&outside);
        let ctx = Context {
            ws: Workspace::open_root(&root).expect("root"),
            config: sneaky::config::Config::default(),
        };
        let fill = |p: &str| {
            p.replace("@OUTSIDE@", &outside.display().to_string())
                .replace("@ROOT@", &root.display().to_string())
        };
        for e in &edits {
            let (tool, args) = match e {
                Edit::Write(p) => ("write_file", json!({"file_path": fill(p), "content": "NEW\n"})),
                Edit::Mkdir(p) => ("make_dir", json!({"directory_path": fill(p)})),
                Edit::Rm(p) => ("delete_file", json!({"file_path": fill(p)})),
                Edit::Replace(p) => (
                    "str_replace",
                    json!({"file_path": fill(p), "old_str": "OUTSIDE", "new_str": "CHANGED"}),
                ),
                // A line added at the top of one file named by file_path (created if missing,
                // through links too), and a patch that names the files it creates.
                Edit::Patch(p) => (
                    "patch_apply",
                    json!({"file_path": fill(p), "patch": "@@ -0,0 +1 @@\n+NEW\n"}),
                ),
                Edit::PatchAll(p) => {
                    let p = fill(p);
                    ("patch_apply", json!({"patch": format!(
                        "--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+NEW\n\
                         --- /dev/null\n+++ b/{p}.new\n@@ -0,0 +1 @@\n+NEW\n"
                    )}))
                }
            };
            match (find(tool).expect("tool").run)(args.clone(), &ctx) {
                Ok(r) => {
                    for key in ["path", "resolved_path"] {
                        if let Some(p) = r[key].as_str() {
                            prop_assert!(!p.starts_with('/') && !p.split('/').any(|c| c == ".."),
                                "{} {}: {}", tool, args, r);
                        }
                    }
                }
                Err(e) => prop_assert!(e.code() != "internal", "{} {}: {}", tool, args, e),
            }
        }
        prop_assert_eq!(snapshot(&outside), before, "edits {:?}", edits);
    }
}

/// A path for the dry-run property: parts that exist or not, `..`, `.git` and links.
fn dry_path() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        4 => name(),
        1 => Just("..".to_string()),
        1 => Just(".git".to_string()),
        1 => Just("new".to_string()),
    ];
    prop::collection::vec(part, 1..5).prop_map(|parts| parts.join("/"))
}

fn dry_edit() -> impl Strategy<Value = (u8, String)> {
    (0u8..6, prop_oneof![3 => dry_path(), 1 => link_target()])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A dry run changes nothing and answers as the edit does on the same tree: the same error
    /// code, or the same result but for `dry_run` (created, resolved_path, the diff).
    #[test]
    fn dry_runs_answer_as_the_edit(
        nodes in prop::collection::vec(node(), 1..20),
        edits in prop::collection::vec(dry_edit(), 1..10),
    ) {
        let (dir, root) = build(&nodes);
        let _ = std::fs::create_dir_all(root.join(".git/hooks"));
        let outside = dir.path().join("outside");
        let ctx = Context {
            ws: Workspace::open_root(&root).expect("root"),
            config: sneaky::config::Config::default(),
        };
        for (kind, p) in &edits {
            let p = p
                .replace("@OUTSIDE@", &outside.display().to_string())
                .replace("@ROOT@", &root.display().to_string());
            let (tool, mut args) = match kind {
                0 => ("write_file", json!({"file_path": p, "content": "NEW\n"})),
                1 => ("str_replace", json!({"file_path": p, "old_str": "a", "new_str": "b"})),
                2 => ("patch_apply", json!({"file_path": p,
                    "patch": "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+NEW\n"})),
                3 => ("patch_apply", json!({"file_path": p,
                    "patch": "@@ -1 +1 @@\n-a\n+b\n"})),
                4 => ("patch_apply", json!({
                    "patch": format!("--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+NEW\n")})),
                _ => ("patch_apply", json!({
                    "patch": format!("--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n")})),
            };
            let run = |args: &Value| match (find(tool).expect("tool").run)(args.clone(), &ctx) {
                Ok(mut r) => {
                    // What only the real edit has: its place in the undo history.
                    let r_obj = r.as_object_mut().expect("object");
                    for only_real in ["dry_run", "change_id", "forgotten_changes"] {
                        r_obj.remove(only_real);
                    }
                    Ok(r)
                }
                Err(e) => Err(e.code().to_string()),
            };
            let before = snapshot(&root);
            args["dry_run"] = json!(true);
            let dry = run(&args);
            prop_assert_eq!(snapshot(&root), before, "the dry run of {} {} changed the tree", tool, args);
            args["dry_run"] = json!(false);
            let real = run(&args);
            prop_assert_eq!(dry, real, "{} {}", tool, args);
        }
    }
}

/// The fuzz corpus of the skim (fuzz/corpus/skim/: a language's index in `Lang::ALL`, then a
/// source in it), read once.
fn skim_seeds() -> &'static [(u8, Vec<u8>)] {
    static SEEDS: std::sync::OnceLock<Vec<(u8, Vec<u8>)>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/skim");
        let mut seeds: Vec<(u8, Vec<u8>)> = std::fs::read_dir(dir)
            .expect("corpus")
            .map(|e| std::fs::read(e.expect("entry").path()).expect("seed"))
            .filter_map(|data| Some((*data.first()?, data[1..].to_vec())))
            .collect();
        seeds.sort();
        seeds
    })
}

/// The bytes a skim's lexer turns on: brackets, quotes, comment and line marks.
fn skim_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        prop::sample::select(b"{}()[]\"'`/*#\\\n:;=<>@$ \t_Aaz09".to_vec()),
        any::<u8>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Real sources of every language with bytes inserted, replaced and cut: the skim's holes
    /// (src/code/skim.rs, skim_python.rs) stay sorted, apart and inside the source, and the
    /// lexers never panic.
    #[test]
    fn the_skim_of_a_mangled_source_stays_in_bounds(
        seed in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, skim_byte()), 1..40),
    ) {
        use sneaky::code::Lang;
        let (pick, source) = seed.get(skim_seeds()).clone();
        let mut source = source;
        for (at, op, byte) in edits {
            let at = at.index(source.len() + 1);
            match op {
                0 => source.insert(at, byte),
                1 if at < source.len() => source[at] = byte,
                _ if at < source.len() => {
                    source.remove(at);
                }
                _ => source.push(byte),
            }
        }
        let lang = Lang::ALL[usize::from(pick) % Lang::ALL.len()];
        let holes = sneaky::code::skim::holes(lang, &source);
        for &(start, end) in &holes {
            prop_assert!(start <= end && end <= source.len(), "{} {:?}", lang.name(), holes);
        }
        prop_assert!(holes.windows(2).all(|w| w[0].1 <= w[1].0), "{} {:?}", lang.name(), holes);
    }
}
