//! repo_map: the workspace's most used definitions, file by file, within a token budget: what
//! Aider shows a model of a repository it has not read. Every source file is parsed (or read
//! from the parse cache); a file that uses a name another file defines is linked to it, by
//! how often it uses it; PageRank over those links, personalized by `focus` (files, folders
//! or names the caller cares about), ranks the files, and each file's rank flows to the
//! definitions the others use. The best ranked definitions, then the other files by name,
//! are written until the budget (tokens of o200k_base, `code::tokens`) is reached; the
//! definitions of names in `focus` come first.
//!
//! The weights are Aider's: a name used `n` times counts √n; a name in `focus`, or a long
//! snake_case or CamelCase name (8 letters or more), ten times as much; a private `_name`, or
//! one defined in more than five files, a tenth.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::outline::{unsupported_note, Unsupported};
use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::code::source::{self, Gather, Parser, Source};
use crate::code::{tokens, Part, SymbolKind};
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::render::human::Text;

pub const DEFAULT_MAX_TOKENS: u64 = 1024;
pub const MIN_MAX_TOKENS: u64 = 64;
pub const MAX_MAX_TOKENS: u64 = 65_536;

/// A map of the code: the files of the workspace (or of a folder) with their most used
/// definitions, ranked by how much the rest of the code uses them (PageRank over which file
/// uses which definition, as Aider's repo map), cut to a token budget. Give `focus` to rank
/// what matters to the task first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoMapArgs {
    /// Directory to map, relative to the workspace root. Default: ".".
    #[serde(default = "default_path")]
    pub path: String,
    /// Most tokens the map may take (o200k_base, estimated). Default: 1024.
    #[serde(default)]
    #[schemars(range(min = 64, max = 65536))]
    pub max_tokens: Option<u64>,
    /// Files, folders or names to rank first, e.g. ["src/fs/walk.rs", "Searcher"].
    #[serde(default)]
    pub focus: Vec<String>,
}

fn default_path() -> String {
    ".".to_string()
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct RepoMapResult {
    /// The map: each file's path, then its chosen definitions as `line: signature`, the
    /// most important files first.
    pub map: String,
    /// The files the map names, in its order.
    pub files: Vec<String>,
    /// The map's size in tokens (o200k_base, estimated).
    pub tokens: u64,
    /// Files under the path that were not parsed, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Unsupported>,
}

/// Aider's weight of a name's links.
fn name_weight(name: &str, focused: bool, definers: usize) -> f64 {
    let mut weight = 1.0;
    let long_word = name.chars().count() >= 8
        && (name.contains('_')
            || (name.chars().any(char::is_uppercase) && name.chars().any(char::is_lowercase)));
    if focused {
        weight *= 10.0;
    }
    if long_word {
        weight *= 10.0;
    }
    if name.starts_with('_') {
        weight *= 0.1;
    }
    if definers > 5 {
        weight *= 0.1;
    }
    weight
}

/// Personalized PageRank over weighted links (damping 0.85; what flows out of a file with no
/// links goes back by the personalization, as networkx does).
fn pagerank(nodes: usize, links: &[(usize, usize, f64)], personal: &[f64]) -> Vec<f64> {
    const DAMPING: f64 = 0.85;
    let mut out_weight = vec![0.0; nodes];
    for &(from, _, w) in links {
        out_weight[from] += w;
    }
    let mut rank = personal.to_vec();
    for _ in 0..100 {
        let dangling: f64 = (0..nodes)
            .filter(|&n| out_weight[n] == 0.0)
            .map(|n| rank[n])
            .sum();
        let mut next: Vec<f64> = personal
            .iter()
            .map(|p| (1.0 - DAMPING) * p + DAMPING * dangling * p)
            .collect();
        for &(from, to, w) in links {
            next[to] += DAMPING * rank[from] * w / out_weight[from];
        }
        let change: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if change < 1e-9 * nodes as f64 {
            break;
        }
    }
    rank
}

/// One line the map may hold: a definition of a file, or the file's path alone.
struct Entry {
    file: usize,
    /// Index in the file's definitions; None for a file named without any.
    def: Option<usize>,
}

fn render(files: &[Source], entries: &[Entry]) -> (String, Vec<String>) {
    // By file in the order the files first come, each file's definitions in line order.
    let mut order: Vec<usize> = Vec::new();
    let mut defs: HashMap<usize, Vec<usize>> = HashMap::new();
    for e in entries {
        if !defs.contains_key(&e.file) {
            order.push(e.file);
        }
        let list = defs.entry(e.file).or_default();
        if let Some(d) = e.def {
            list.push(d);
        }
    }
    let mut map = String::new();
    let mut named = Vec::new();
    for file in order {
        let source = &files[file];
        named.push(source.path.clone());
        let mut list = defs.remove(&file).unwrap_or_default();
        if list.is_empty() {
            let _ = writeln!(map, "{}", source.path);
            continue;
        }
        let _ = writeln!(map, "{}:", source.path);
        // Each definition under what encloses it (the class of a method), for context.
        let enclosing: Vec<usize> = list
            .iter()
            .flat_map(|&d| ancestor_indices(&source.tags, d))
            .collect();
        list.extend(enclosing);
        list.sort_unstable_by_key(|&d| (source.tags.defs[d].line, d));
        list.dedup();
        for d in list {
            let def = &source.tags.defs[d];
            let depth = source.tags.ancestors(d).count();
            let _ = writeln!(
                map,
                "{}{}: {}",
                "  ".repeat(depth + 1),
                def.line,
                def.signature
            );
        }
    }
    (map, named)
}

/// The indices of the definitions that enclose `defs[i]`.
fn ancestor_indices(tags: &crate::code::FileTags, i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = tags.defs.get(i).and_then(|d| d.parent);
    while let Some(p) = at.and_then(|p| usize::try_from(p).ok()) {
        out.push(p);
        at = tags.defs.get(p).and_then(|d| d.parent);
    }
    out
}

/// Whether a definition is one the map links and shows: what code calls or names (not a
/// variable, field or enum member, whose names are too common to tell one from another).
fn mapped(kind: SymbolKind) -> bool {
    !matches!(
        kind,
        SymbolKind::Variable | SymbolKind::Field | SymbolKind::Variant | SymbolKind::Impl
    )
}

// Long: the map's stages (focus, definers, links, rank, the names asked for, the other files,
// the budget) share the gathered files and the maps indexed into them; each is a few lines over
// the same borrowed data, which a split would thread through as arguments.
fn repo_map(args: RepoMapArgs, ctx: &Context, parser: Parser) -> Result<RepoMapResult> {
    let budget = args.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if !(MIN_MAX_TOKENS..=MAX_MAX_TOKENS).contains(&budget) {
        return Err(Error::invalid_args(format!(
            "max_tokens: from {MIN_MAX_TOKENS} to {MAX_MAX_TOKENS}"
        )));
    }
    let rel = ctx.ws.relative(&args.path)?;
    let gather = Gather {
        parser,
        need: Part::All,
        filter: None,
        keep_bytes: false,
        focus: None,
        names: None,
    };
    let gathered = source::gather(&ctx.ws, &rel, &gather)?;
    let files = &gathered.files;
    let n = files.len();
    // Focus: a file, or a folder's files; anything else is a name.
    let mut focus_files = vec![false; n];
    let mut focus_names: HashSet<&str> = HashSet::new();
    for f in &args.focus {
        let f = f.trim().trim_start_matches("./").trim_end_matches('/');
        let mut hit = false;
        for (i, file) in files.iter().enumerate() {
            if file.path == f || file.path.starts_with(&format!("{f}/")) {
                focus_files[i] = true;
                hit = true;
            }
        }
        if !hit && !f.is_empty() {
            focus_names.insert(f);
        }
    }
    // Who defines each name.
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        let mut seen = HashSet::new();
        for def in &file.tags.defs {
            if mapped(def.kind) && seen.insert(def.name.as_str()) {
                definers.entry(def.name.as_str()).or_default().push(i);
            }
        }
    }
    for (name, owners) in &definers {
        if focus_names.contains(name) {
            for &i in owners {
                focus_files[i] = true;
            }
        }
    }
    // Links: a file → each file defining a name it uses, labelled with the name.
    let mut links: Vec<(usize, usize, f64)> = Vec::new();
    let mut labels: Vec<&str> = Vec::new();
    for (i, file) in files.iter().enumerate() {
        for (name, count) in &file.tags.idents {
            let Some(owners) = definers.get(name.as_str()) else {
                continue;
            };
            let weight = name_weight(name, focus_names.contains(name.as_str()), owners.len())
                * f64::from(*count).sqrt();
            for &owner in owners {
                links.push((i, owner, weight));
                labels.push(name.as_str());
            }
        }
    }
    let focused = focus_files.iter().filter(|&&f| f).count();
    let personal: Vec<f64> = if focused == 0 {
        vec![1.0 / n.max(1) as f64; n]
    } else {
        focus_files
            .iter()
            .map(|&f| if f { 1.0 / focused as f64 } else { 0.0 })
            .collect()
    };
    let rank = pagerank(n, &links, &personal);
    // Each file's rank flows along its links to the names it uses, where they are defined.
    let mut out_weight = vec![0.0; n];
    for &(from, _, w) in &links {
        out_weight[from] += w;
    }
    let mut name_rank: HashMap<(usize, &str), f64> = HashMap::new();
    for (&(from, to, w), &name) in links.iter().zip(&labels) {
        *name_rank.entry((to, name)).or_default() += rank[from] * w / out_weight[from];
    }
    let mut ranked: Vec<((usize, &str), f64)> = name_rank.into_iter().collect();
    // The names asked for first, then by rank.
    ranked.sort_by(|a, b| {
        let focused = |(_, name): &(usize, &str)| !focus_names.contains(name);
        focused(&a.0)
            .cmp(&focused(&b.0))
            .then(b.1.total_cmp(&a.1))
            .then(a.0.cmp(&b.0))
    });
    let mut entries: Vec<Entry> = Vec::new();
    let mut shown_files = vec![false; n];
    for ((file, name), _) in &ranked {
        for (d, def) in files[*file].tags.defs.iter().enumerate() {
            if def.name == *name && mapped(def.kind) {
                entries.push(Entry {
                    file: *file,
                    def: Some(d),
                });
            }
        }
        shown_files[*file] = true;
    }
    // Then the other files by rank, named alone.
    let mut rest: Vec<usize> = (0..n).filter(|&i| !shown_files[i]).collect();
    rest.sort_by(|&a, &b| rank[b].total_cmp(&rank[a]).then(a.cmp(&b)));
    entries.extend(rest.into_iter().map(|file| Entry { file, def: None }));
    // The most entries whose map fits the budget, with a margin for the estimate's error
    // (`code::tokens`: at most 4 % under the real count on maps).
    let room = budget - budget / 20;
    let fits = |k: usize| {
        let (map, _) = render(files, &entries[..k]);
        tokens::count(&map) as u64 <= room
    };
    let (mut low, mut high) = (0usize, entries.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(mid) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let (map, named) = render(files, &entries[..low]);
    Ok(RepoMapResult {
        tokens: tokens::count(&map) as u64,
        map,
        files: named,
        unsupported: Unsupported::of(&gathered.unparsed),
    })
}

pub struct RepoMap;

impl Tool for RepoMap {
    const NAME: ToolName = ToolName::RepoMap;
    const TITLE: &'static str = "Map the code";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: true,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        summary: "the files and their most used definitions, ranked as Aider's repo map (PageRank over which file uses which definition, personalized by `focus`), cut to `max_tokens` (o200k_base)",
        example: r#"{"max_tokens": 2048, "focus": ["src/fs/walk.rs"]}"#,
        pipeline: "sneaky-map --max-tokens 4096 | jq -r .result.map",
        config: &[],
        env: &[(
            "XDG_STATE_HOME",
            "where the parse cache is kept: $XDG_STATE_HOME/sneaky/parse/ (else \
             ~/.local/state/sneaky/parse/), one directory per workspace",
        )],
        text: TextExample::prints(
            &[
                ("src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
                ("src/main.rs", "fn main() {\n    answer();\n}\n"),
            ],
            &[],
            "",
            "src/lib.rs:\n  1: pub fn answer() -> u32\nsrc/main.rs\n",
        ),
        calls: Calls {
            before: &[],
            works: r#"{"max_tokens": 256}"#,
            fails: r#"{"max_tokens": 1}"#,
            fails_with: ErrorKind::InvalidArgs,
        },
    };
    const SCHEMA: &'static str = committed_schema!("repo_map");
    const PATH_PARAMS: &'static [&'static str] = &["path"];
    type Args = RepoMapArgs;
    type Output = RepoMapResult;

    fn run(args: RepoMapArgs, ctx: &Context) -> Result<RepoMapResult> {
        repo_map(args, ctx, Parser::ELSEWHERE)
    }

    fn model_text(r: &RepoMapResult) -> String {
        let mut out = if r.map.is_empty() {
            "no source files to map".to_string()
        } else {
            r.map.trim_end_matches('\n').to_string()
        };
        out.push_str(&Unsupported::note(&r.unsupported));
        out
    }

    fn human_text(r: &RepoMapResult, binary: &str) -> Text {
        let mut text = Text {
            stdout: r.map.clone(),
            stderr: String::new(),
        };
        unsupported_note(&mut text, binary, &r.unsupported);
        text
    }

    const TEXT_FORMAT: &'static str = "the map as it is";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_follows_the_links_and_the_focus() {
        // 0 and 1 use what 2 defines; 2 uses what 0 defines.
        let links = [(0, 2, 1.0), (1, 2, 1.0), (2, 0, 1.0)];
        let uniform = [1.0 / 3.0; 3];
        let rank = pagerank(3, &links, &uniform);
        assert!(rank[2] > rank[0] && rank[0] > rank[1], "{rank:?}");
        assert!((rank.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        let focus = [0.0, 1.0, 0.0];
        let focused = pagerank(3, &links, &focus);
        assert!(focused[1] > rank[1], "{focused:?}");
        assert!(name_weight("walk_builder", false, 1) > name_weight("walk", false, 1));
        assert!(name_weight("walk", true, 1) > name_weight("walk", false, 1));
        assert!(name_weight("_walk", false, 1) < name_weight("walk", false, 1));
        assert!(name_weight("new", false, 9) < name_weight("new", false, 1));
    }
}
