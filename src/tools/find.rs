//! find_files: glob search over names, with fd's defaults (hidden and gitignored paths skipped,
//! links not followed, smart case: a pattern without capitals ignores case). A pattern
//! without `/` matches the entry's name; one with `/` matches its path relative to the root,
//! where `**` crosses directories. Every hit is confirmed through the jail before it is returned.

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Cli, Context, Doc, Hints, Tool, ToolName};
use crate::error::{Error, Result};
use crate::fs::walk::{self, TopN};

pub const DEFAULT_MAX_RESULTS: u64 = 1000;
pub const MAX_RESULTS_BOUND: u64 = 1_000_000;

/// Find files and directories whose name matches a glob, e.g. "*.py" or "config.yaml"; a
/// pattern containing "/" matches the whole path relative to the workspace root, e.g.
/// "src/**/*.rs". Case is ignored unless the pattern has a capital letter. Skips hidden and
/// gitignored paths, like fd. Returns sorted root-relative paths; directories end with "/".
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// Glob pattern: "*" and "?" within a name, "**" across directories, "{a,b}" alternatives.
    pub pattern: String,
    /// Directory to search in, relative to the workspace root. Default: ".".
    #[serde(default = "default_path")]
    pub path: String,
    /// Most paths to return. Default: 1000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000000))]
    pub max_results: Option<u64>,
}

fn default_path() -> String {
    ".".to_string()
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FindResult {
    /// Sorted paths relative to the workspace root; directories end with "/".
    pub files: Vec<String>,
    /// True when more paths matched than `max_results`.
    pub truncated: bool,
}

pub struct FindFiles;

/// Compile a find pattern with fd's smart case.
pub fn compile(pattern: &str) -> Result<(GlobMatcher, bool)> {
    if pattern.is_empty() {
        return Err(Error::invalid_args("pattern: must not be empty"));
    }
    let full_path = pattern.contains('/');
    let smart_insensitive = !pattern.chars().any(char::is_uppercase);
    let glob = GlobBuilder::new(pattern.trim_start_matches("./"))
        .case_insensitive(smart_insensitive)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| Error::invalid_args(format!("pattern: {e}")))?;
    Ok((glob.compile_matcher(), full_path))
}

impl Tool for FindFiles {
    const NAME: ToolName = ToolName::FindFiles;
    const TITLE: &'static str = "Find files by name";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
    };
    const CLI: Cli = Cli {
        positional: &["pattern", "path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        example: r#"{"pattern": "*.toml", "path": "."}"#,
        pipeline: "sneaky-find 'src/**/*.rs' | jq -r '.result.files[]' | xargs wc -l",
        config: &[],
        env: &[],
    };
    const SCHEMA: &'static str = committed_schema!("find_files");
    type Args = FindArgs;
    type Output = FindResult;

    fn run(args: FindArgs, ctx: &Context) -> Result<FindResult> {
        let cap = super::bounded_max(args.max_results, DEFAULT_MAX_RESULTS, MAX_RESULTS_BOUND)?;
        let (matcher, full_path) = compile(&args.pattern)?;
        let rel = ctx.ws.relative(&args.path)?;
        let start = walk::start(&ctx.ws, &rel)?;
        if start.kind != crate::fs::jail::Kind::Dir {
            return Err(Error::new(
                crate::error::ErrorKind::NotADirectory,
                format!("{} is not a directory", rel.display()),
            ));
        }
        let found = TopN::new(cap as usize);
        walk::builder(&start, ".fdignore").build_parallel().run(|| {
            let matcher = matcher.clone();
            let found = &found;
            let ws = &ctx.ws;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                let Some(rel) = ws.strip_root(entry.path()) else {
                    return WalkState::Continue;
                };
                let hit = if full_path {
                    matcher.is_match(rel)
                } else {
                    matcher.is_match(entry.file_name())
                };
                if !hit {
                    return WalkState::Continue;
                }
                // Confirm the name through the jail: a parent swapped for a link yields nothing.
                let check = OFlag::O_PATH | OFlag::O_NOFOLLOW;
                if ws.open_at(ws.root_fd(), rel, check, Mode::empty()).is_err() {
                    return WalkState::Continue;
                }
                let mut shown = rel.to_string_lossy().into_owned();
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    shown.push('/');
                }
                found.extend([shown]);
                WalkState::Continue
            })
        });
        let (files, truncated) = found.finish();
        Ok(FindResult { files, truncated })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn smart_case_and_separators() {
        let (m, full) = compile("*.rs").expect("glob");
        assert!(!full);
        assert!(m.is_match("main.rs") && m.is_match("MAIN.RS"));
        let (m, _) = compile("*.RS").expect("glob");
        assert!(!m.is_match("main.rs"));
        let (m, full) = compile("src/**/*.rs").expect("glob");
        assert!(full);
        assert!(m.is_match(Path::new("src/a/b/c.rs")));
        assert!(m.is_match(Path::new("src/c.rs")));
        assert!(!m.is_match(Path::new("tests/src/c.rs")));
        let (m, _) = compile("src/*.rs").expect("glob");
        assert!(!m.is_match(Path::new("src/a/c.rs")));
        assert!(compile("a[").is_err());
    }
}
