//! Source code as the navigation tools see it (outline, find_symbol, find_references,
//! repo_map): which language a file is in, what a parse of it yields (its definitions, the
//! places that are not code, the identifiers it uses, its syntax errors), and where those come
//! from: a parse cache outside the workspace, or a parse.
//!
//! - `lang`: the languages parsed, told by a file's extension (or a script's `#!` line).
//! - `tags`: what one file's parse yields ([`FileTags`]): everything, or only its definitions
//!   ([`Part`]), with its compact encoding, which the cache stores and the parse helper
//!   answers in.
//! - `parse`: the tree-sitter grammars and the queries that turn a tree into tags. Only
//!   `sneaky-outline` links it (the grammars weigh about 18 MB); every other program that
//!   needs a parse hands the bytes to `sneaky-outline --parse` (`elsewhere`), as read_file
//!   hands it PDFs and large images (`crate::media`).
//! - `pattern`: the tags queries read and matched by our own small matcher (tree-sitter's
//!   `Query` costs more to build than a parse of many files).
//! - `cache`: parsed files by workspace path, in the state directory beside the undo history,
//!   keyed by what no program can set back (inode, size, change time).
//! - `doc`: the code inside a Rust doc comment (examples, intra-doc links, code spans).
//! - `check`: the syntax errors an edit introduced (write_file, str_replace, patch_apply).
//! - `tokens`: how many tokens of o200k_base a text is, estimated (repo_map's budget).
//! - `source`: the files of a tool's call gathered through the jail's walk, each with its tags
//!   from the cache or a parse.

mod braced;
pub mod cache;
pub mod check;
pub mod doc;
pub mod elsewhere;
mod holds;
pub mod lang;
pub mod parse;
pub mod pattern;
pub mod skim;
pub mod skim_python;
pub mod source;
pub mod tags;
pub mod tokens;

pub use lang::Lang;
pub use tags::{Def, FileTags, Part, SymbolKind, SyntaxError};
