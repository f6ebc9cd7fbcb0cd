//! The library's modules form layers: a module may use the ones beneath it, never one above
//! it, and no two modules use each other, even through a third. The compiler does not check
//! this inside one crate, so this test reads every `src/**/*.rs` file and checks each path that
//! reaches another top-level module (`crate::m`, `crate::{m, …}`, and `super::` paths that
//! climb to the crate root) against [`LAYERS`].
//!
//! The same holds at every depth: the files of one module directory (`shell/sandbox.rs`,
//! `shell/spec.rs`, `shell/jobs/`) may use one another, but never in a cycle, even through a
//! third. A path is followed through the `use` items it names (`super::Spec` where `shell/mod.rs`
//! says `pub use spec::Spec` reaches `shell/spec.rs`), so a re-export does not hide an edge.
//!
//! A new top-level module must be placed in [`LAYERS`]; the test fails until it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; modules on one line are peers (they may use each other, but not
/// in a cycle). Why each sits where it does:
const LAYERS: &[&[&str]] = &[
    // Leaves, using no other module: the error type and its codes; the tool names and tiers;
    // a call's cancellation; small text helpers; the /proc process table; the progress lines
    // a tool binary prints for its host.
    &[
        "error",
        "catalog",
        "cancel",
        "text",
        "proctable",
        "progress",
    ],
    // Unified diffs over bytes: parse, place, apply, explain, render. Pure data, no files.
    &["edit"],
    // The workspace jail and crash-safe writes (which report what they changed as a diff).
    &["fs"],
    // The user's hooks around tool calls: their configuration's shape and running them; they
    // name tools (catalog).
    &["hooks"],
    // sneaky.toml, read through the jail; it names tools (catalog) and holds the command lists.
    &["config"],
    // Tiers from the configuration; where the workspace root comes from.
    &["permissions", "discover"],
    // What run_command may run and how it is confined: needs the configuration and the
    // workspace, knows nothing of tools.
    &["shell"],
    // Results as text, for models and for people.
    &["render"],
    // Images as read_file returns them: format, size, base64, scaling down (in sneaky-read,
    // which the hosts run for it); source code parsed (languages, grammars, tags, the parse
    // cache), with its parse helper in sneaky-outline, found beside sneaky-read's.
    &["media", "code"],
    // One module per tool, over everything beneath.
    &["tools"],
    // Running a tool in its own binary; the stdin/flags → envelope front end; the tool
    // definitions a model is shown.
    &["isolate", "protocol", "definitions"],
    // The hosts: the LLM driver and the MCP server.
    &["agent", "mcp"],
];

/// One path a file names, from the crate root (`super::spec::Spec` in `shell/sandbox.rs` is
/// shell::spec::Spec), with its line; `name` is what a `use` of it binds (the last name, or
/// its alias), None for a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reach {
    line: usize,
    path: Vec<String>,
    name: Option<String>,
}

/// Every source file under src/: its path there, its module path, its text.
fn sources(src: &Path) -> Vec<(PathBuf, Option<Vec<String>>, String)> {
    rust_files(src)
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap_or(&file).to_path_buf();
            let text = std::fs::read_to_string(&file).expect("read a source file");
            let module = module_path(&relative);
            (relative, module, text)
        })
        .collect()
}

#[test]
fn modules_use_only_the_layers_beneath_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank = |m: &str| LAYERS.iter().position(|layer| layer.contains(&m));
    let mut problems = Vec::new();
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (relative, module, text) in sources(&src) {
        let Some(module) = module else {
            continue; // lib.rs: the root only declares the modules
        };
        let from = module[0].clone();
        let Some(from_rank) = rank(&from) else {
            problems.push(format!(
                "src/{}: module `{from}` is not in LAYERS (tests/suite/layers.rs): place it",
                relative.display()
            ));
            continue;
        };
        for reach in paths(&text, &module) {
            let Some(to) = reach.path.first() else {
                continue;
            };
            if *to == from {
                continue;
            }
            let edge = Edge {
                line: reach.line,
                to: to.clone(),
            };
            let at = format!("src/{}:{}", relative.display(), edge.line);
            match rank(&edge.to) {
                None => problems.push(format!(
                    "{at}: {from} -> {}: `{}` is not in LAYERS",
                    edge.to, edge.to
                )),
                Some(to_rank) if to_rank > from_rank => problems.push(format!(
                    "{at}: {from} -> {} goes up (`{}` is in layer {to_rank}, `{from}` in layer \
                     {from_rank})",
                    edge.to, edge.to
                )),
                Some(_) => {}
            }
            graph
                .entry(from.clone())
                .or_default()
                .entry(edge.to.clone())
                .or_insert(at);
        }
    }
    problems.extend(cycles(&graph));
    assert!(
        problems.is_empty(),
        "layering broken:\n  {}",
        problems.join("\n  ")
    );
}

/// One path from a file to another top-level module.
struct Edge {
    line: usize,
    to: String,
}

#[test]
fn no_two_files_of_a_module_use_each_other_even_through_a_third() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&src);
    let modules: BTreeSet<Vec<String>> = files.iter().filter_map(|f| f.1.clone()).collect();
    let mut uses: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (_, module, text) in &files {
        let Some(module) = module else { continue };
        for reach in use_items(text, module) {
            if let Some(name) = reach.name {
                uses.entry(module.clone())
                    .or_default()
                    .insert(name, reach.path);
            }
        }
    }
    // For each module directory (by its path), the graph between the files in it: a file of
    // `shell/jobs/` counts as `jobs`.
    let mut levels: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    for (relative, module, text) in &files {
        let Some(module) = module else { continue };
        for reach in paths(text, module) {
            let to = resolve(reach.path, &modules, &uses);
            let shared = module.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // Level 0 is the layers test's; a path to the file's own module directory's
            // items (shell/mod.rs's) or to its own children is no edge between files.
            if shared == 0 || shared >= module.len() || shared >= to.len() {
                continue;
            }
            if !modules.contains(&to[..=shared]) {
                continue;
            }
            levels
                .entry(module[..shared].to_vec())
                .or_default()
                .entry(module[shared].clone())
                .or_default()
                .entry(to[shared].clone())
                .or_insert(format!("src/{}:{}", relative.display(), reach.line));
        }
    }
    let mut problems = Vec::new();
    for (level, graph) in &levels {
        for cycle in cycles(graph) {
            problems.push(format!("in src/{}/: {cycle}", level.join("/")));
        }
    }
    assert!(
        problems.is_empty(),
        "{} import cycles between files; move what both use into the lower file (or a file of \
         its own) rather than hide the edge:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

/// A path followed through the `use` items it names, until it reaches a module or an item
/// that no `use` re-exports.
fn resolve(
    mut path: Vec<String>,
    modules: &BTreeSet<Vec<String>>,
    uses: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
) -> Vec<String> {
    for _ in 0..16 {
        let Some(k) = (0..path.len()).find(|&k| !modules.contains(&path[..=k])) else {
            return path;
        };
        match uses.get(&path[..k]).and_then(|names| names.get(&path[k])) {
            Some(target) if target[..] != path[..=k] => {
                let mut next = target.clone();
                next.extend_from_slice(&path[k + 1..]);
                path = next;
            }
            _ => return path,
        }
    }
    path
}

/// Each group of modules that reach one another (a strongly connected component), named once
/// by its shortest cycle through its first module, with the place of each edge.
fn cycles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    let next = |m: &str| graph.get(m).into_iter().flat_map(|to| to.keys());
    // Breadth first from `from`: the parent of every module reached (for the path back).
    let reach = |from: &str| {
        let mut parent: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([from.to_string()]);
        while let Some(at) = queue.pop_front() {
            for to in next(&at) {
                if !parent.contains_key(to) {
                    parent.insert(to.clone(), at.clone());
                    queue.push_back(to.clone());
                }
            }
        }
        parent
    };
    let mut reported: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for start in graph.keys() {
        if reported.contains(start) {
            continue;
        }
        let parent = reach(start);
        if !parent.contains_key(start) {
            continue; // on no cycle
        }
        let group: BTreeSet<String> = parent
            .keys()
            .filter(|m| reach(m).contains_key(start))
            .cloned()
            .collect();
        reported.extend(group.iter().cloned());
        let mut cycle = vec![start.clone()];
        let mut at = parent[start].clone();
        while at != *start {
            cycle.push(at.clone());
            at = parent[&at].clone();
        }
        cycle.push(start.clone());
        cycle.reverse();
        let places: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} -> {} at {}", w[0], w[1], graph[&w[0]][&w[1]]))
            .collect();
        out.push(format!(
            "cycle {} (the modules {} reach one another): {}",
            cycle.join(" -> "),
            group.into_iter().collect::<Vec<_>>().join(", "),
            places.join("; ")
        ));
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("read a source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The module a file holds, from the crate root: `fs/durable/staged.rs` → fs::durable::staged,
/// `shell/mod.rs` → shell; None for the crate root.
fn module_path(relative: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
        parts.push(stem.to_string());
    }
    (!parts.is_empty()).then_some(parts)
}

/// A token of Rust source with comments, strings and character literals taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// Tokens with their line numbers.
fn tokens(text: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    // Skip to just past `end`, counting lines.
    let skip_to = |i: &mut usize, line: &mut usize, end: &[char]| {
        while *i < chars.len() && !chars[*i..].starts_with(end) {
            if chars[*i] == '\n' {
                *line += 1;
            }
            *i += 1;
        }
        *i += end.len();
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r'))
            && matches!(at(i + 1 + usize::from(c == 'b')), '"' | '#')
            && !is_ident_char(if i == 0 { ' ' } else { chars[i - 1] })
        {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = i + 1 + usize::from(c == 'b');
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                // `r#ident`, a raw identifier.
                let start = j;
                while is_ident_char(at(j)) {
                    j += 1;
                }
                out.push((line, Token::Ident(chars[start..j].iter().collect())));
                i = j;
                continue;
            }
            i = j + 1;
            let mut end = vec!['"'];
            end.extend(std::iter::repeat('#').take(hashes));
            skip_to(&mut i, &mut line, &end);
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 2;
                skip_to(&mut i, &mut line, &['\'']);
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push((line, Token::Path));
            i += 2;
        } else if is_ident_char(c) {
            let start = i;
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push((line, Token::Ident(chars[start..i].iter().collect())));
        } else {
            if !c.is_whitespace() {
                out.push((line, Token::Punct(c)));
            }
            i += 1;
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path the file names from `crate::`, `super::` or `self::`, from the crate root, where
/// `module` is the file's own path from the crate root. Inline `mod name { … }` blocks count
/// for `super::` and `self::`.
fn paths(text: &str, module: &[String]) -> Vec<Reach> {
    walk(text, module, false)
}

/// The file-level `use` items of the file (not those inside a function or an inline module),
/// each with the name it binds; a path that starts with a plain name is taken as relative to
/// the file's module (a child module, or an outside crate that resolves to no module here).
fn use_items(text: &str, module: &[String]) -> Vec<Reach> {
    walk(text, module, true)
}

fn walk(text: &str, module: &[String], only_uses: bool) -> Vec<Reach> {
    let toks = tokens(text);
    let ident = |i: usize| match toks.get(i) {
        Some((_, Token::Ident(s))) => Some(s.as_str()),
        _ => None,
    };
    let is = |i: usize, t: Token| toks.get(i).map(|(_, x)| x) == Some(&t);
    let mut out = Vec::new();
    // The inline modules open at each point, with the brace depth each opened at.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].1 {
            Token::Punct('{') => braces += 1,
            Token::Punct('}') => {
                braces = braces.saturating_sub(1);
                if inline.last().map(|l| l.0) == Some(braces) {
                    inline.pop();
                }
            }
            Token::Ident(w) if w == "mod" && is(i + 2, Token::Punct('{')) => {
                if let Some(name) = ident(i + 1) {
                    inline.push((braces, name.to_string()));
                }
            }
            _ => {}
        }
        let mut here: Vec<String> = module.to_vec();
        here.extend(inline.iter().map(|l| l.1.clone()));
        let after_dollar = i > 0 && is(i - 1, Token::Punct('$'));
        let after_path = i > 0 && is(i - 1, Token::Path);
        let mut at = i;
        if only_uses {
            if !(ident(i) == Some("use") && braces == 0 && inline.is_empty()) {
                i += 1;
                continue;
            }
            at = i + 1;
        }
        let start = match ident(at) {
            Some("crate") if !after_dollar && !after_path && is(at + 1, Token::Path) => {
                Some((Vec::new(), at + 2))
            }
            Some("self") if !after_path && is(at + 1, Token::Path) => Some((here, at + 2)),
            Some("super") if !after_path => {
                let mut j = at;
                let mut climbs = 0;
                while ident(j) == Some("super") && is(j + 1, Token::Path) {
                    climbs += 1;
                    j += 2;
                }
                (climbs > 0 && climbs <= here.len())
                    .then(|| (here[..here.len() - climbs].to_vec(), j))
            }
            Some(_) if only_uses => Some((here, at)),
            _ => None,
        };
        if let Some((prefix, j)) = start {
            use_tree(&toks, j, prefix, &mut out);
        }
        i += 1;
    }
    out
}

/// The paths of a use tree (or of a plain path) starting at `j` under `prefix`:
/// `a::{b, c::{self, d as e}, f::*}`.
fn use_tree(toks: &[(usize, Token)], mut j: usize, mut path: Vec<String>, out: &mut Vec<Reach>) {
    let is = |i: usize, t: Token| toks.get(i).map(|(_, x)| x) == Some(&t);
    loop {
        match toks.get(j) {
            Some((line, Token::Ident(name))) => {
                if name == "self" {
                    let name = path.last().cloned();
                    out.push(Reach {
                        line: *line,
                        path,
                        name,
                    });
                    return;
                }
                path.push(name.clone());
                if is(j + 1, Token::Path) {
                    j += 2;
                    continue;
                }
                let name = match (toks.get(j + 1), toks.get(j + 2)) {
                    (Some((_, Token::Ident(r#as))), Some((_, Token::Ident(alias))))
                        if r#as == "as" =>
                    {
                        alias.clone()
                    }
                    _ => name.clone(),
                };
                out.push(Reach {
                    line: *line,
                    path,
                    name: Some(name),
                });
                return;
            }
            Some((_, Token::Punct('{'))) => {
                let mut k = j + 1;
                while k < toks.len() && !is(k, Token::Punct('}')) {
                    use_tree(toks, k, path.clone(), out);
                    // On to the next item at this depth.
                    let mut depth = 0usize;
                    while k < toks.len() {
                        match toks[k].1 {
                            Token::Punct('{') => depth += 1,
                            Token::Punct('}') if depth == 0 => break,
                            Token::Punct('}') => depth -= 1,
                            Token::Punct(',') if depth == 0 => {
                                k += 1;
                                break;
                            }
                            _ => {}
                        }
                        k += 1;
                    }
                }
                return;
            }
            Some((line, _)) => {
                if !path.is_empty() {
                    out.push(Reach {
                        line: *line,
                        path,
                        name: None,
                    });
                }
                return;
            }
            None => return,
        }
    }
}

#[test]
fn the_reader_finds_every_kind_of_path_and_nothing_in_comments_or_strings() {
    let text = r####"
use crate::fs::jail;
use crate::{config::Config, shell::{self, policy},
    tools};
// use crate::agent;
/* crate::mcp /* nested */ crate::mcp */
const S: &str = "crate::isolate";
const R: &str = r#"crate::isolate "quoted" "#;
const C: char = '"';
fn f<'a>(x: &'a str) -> char { 'x' }
macro_rules! m { () => { $crate::render::x() }; }
pub(crate) fn g() { crate::protocol::main(); super::super::discover::find(); }
mod tests {
    use super::*;
    use super::super::super::permissions;
}
"####;
    let module = vec!["tools".to_string(), "run".to_string()];
    let found = paths(text, &module);
    let found: Vec<(usize, String)> = found.iter().map(|r| (r.line, r.path.join("::"))).collect();
    let expected = [
        (2, "fs::jail"),
        (3, "config::Config"),
        (3, "shell"),
        (3, "shell::policy"),
        (4, "tools"),
        (12, "protocol::main"),
        (12, "discover::find"),
        (14, "tools::run"),
        (15, "permissions"),
    ];
    let expected: Vec<(usize, String)> = expected
        .iter()
        .map(|(line, path)| (*line, path.to_string()))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        module_path(Path::new("fs/durable/staged.rs")),
        Some(vec!["fs".into(), "durable".into(), "staged".into()])
    );
    assert_eq!(
        module_path(Path::new("shell/mod.rs")),
        Some(vec!["shell".into()])
    );
    assert_eq!(module_path(Path::new("lib.rs")), None);
}

#[test]
fn a_cycle_is_reported_once_with_its_places() {
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(from.into())
            .or_default()
            .insert(to.into(), format!("src/{from}.rs:1"));
    }
    assert_eq!(
        cycles(&graph),
        vec![
            "cycle a -> b -> c -> a (the modules a, b, c reach one another): a -> b at \
             src/a.rs:1; b -> c at src/b.rs:1; c -> a at src/c.rs:1"
                .to_string()
        ]
    );
}

#[test]
fn a_path_is_followed_through_the_use_items_that_re_export_it() {
    let module = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let modules: BTreeSet<Vec<String>> = ["shell", "shell::spec", "shell::sandbox"]
        .into_iter()
        .map(module)
        .collect();
    let mut uses: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let parent = "pub use spec::{Spec, Mount as Bind};\nuse self::sandbox::*;\nfn f() { use spec::Hidden; }\n";
    let found = use_items(parent, &module("shell"));
    let bound: Vec<(Option<String>, String)> = found
        .iter()
        .map(|r| (r.name.clone(), r.path.join("::")))
        .collect();
    assert_eq!(
        bound,
        vec![
            (Some("Spec".into()), "shell::spec::Spec".into()),
            (Some("Bind".into()), "shell::spec::Mount".into()),
            (None, "shell::sandbox".into()),
        ]
    );
    for reach in found {
        if let Some(name) = reach.name {
            uses.entry(module("shell"))
                .or_default()
                .insert(name, reach.path);
        }
    }
    let child = "use super::Bind;\nfn g() -> crate::shell::Spec { todo!() }\n";
    let reached: Vec<String> = paths(child, &module("shell::sandbox"))
        .into_iter()
        .map(|r| resolve(r.path, &modules, &uses).join("::"))
        .collect();
    assert_eq!(reached, vec!["shell::spec::Mount", "shell::spec::Spec"]);
}
