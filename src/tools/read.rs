//! read_file: UTF-8 text, whole or a range of lines. Binary files (a NUL byte in the first
//! 8 KiB, or bytes that are not UTF-8) are refused, and so are files over
//! `max_file_size_bytes` unless a range of lines is asked for; a range is read streaming, so
//! its memory stays bounded by the limit whatever the file's size.

use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{committed_schema, Cli, Context, Doc, Hints, Tool, ToolName, TextExample};
use crate::error::{Error, ErrorKind, Result};
use crate::render::human::Text;
use crate::render::model;

/// Bytes inspected for a NUL byte to tell binary files from text.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Read a UTF-8 text file from the workspace. Returns its content (line endings kept) and its
/// number of lines. For a large file, read a range with `offset` and `limit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Path of the file to read, relative to the workspace root.
    pub file_path: String,
    /// First line to return, counting from 1. Default: 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Maximum number of lines to return. Default: all lines up to the end of the file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ReadResult {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The text, line endings kept.
    pub content: String,
    /// Number of lines in the whole file.
    pub total_lines: u64,
    /// First and last line returned (1-based; `end_line` < `start_line` when none).
    pub start_line: u64,
    pub end_line: u64,
    /// True when `content` is not the whole file.
    pub truncated: bool,
}

pub struct ReadFile;

impl Tool for ReadFile {
    const NAME: ToolName = ToolName::ReadFile;
    const TITLE: &'static str = "Read file";
    const HINTS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        isolated: false,
        walks: false,
        ends_session: false,
    };
    const CLI: Cli = Cli {
        positional: &["file_path"],
        stdin_param: None,
    };
    const DOC: Doc = Doc {
        example: r#"{"file_path": "src/main.rs", "offset": 10, "limit": 20}"#,
        pipeline: "sneaky-read src/main.rs --offset 10 --limit 20 | jq -r .result.content",
        config: &["max_file_size_bytes: largest file (or range) returned"],
        env: &[],
        text: TextExample::prints(
            &[("hello.txt", "héllo\n\tworld \"quoted\"\n")],
            &["hello.txt"],
            "",
            "héllo\n\tworld \"quoted\"\n",
        ),
    };
    const SCHEMA: &'static str = committed_schema!("read_file");
    const PATH_PARAMS: &'static [&'static str] = &["file_path"];
    type Args = ReadArgs;
    type Output = ReadResult;

    fn run(args: ReadArgs, ctx: &Context) -> Result<ReadResult> {
        if args.offset == Some(0) {
            return Err(Error::invalid_args("offset: lines count from 1"));
        }
        if args.limit == Some(0) {
            return Err(Error::invalid_args("limit: must be at least 1"));
        }
        let rel = ctx.ws.relative(&args.file_path)?;
        let (file, size) = ctx.ws.open_read_sized(&rel)?;
        let max = ctx.config.max_file_size_bytes;
        let path = rel.display().to_string();
        if args.offset.is_none() && args.limit.is_none() {
            if size > max {
                return Err(too_large(&path, size, max));
            }
            let bytes = read_bounded(file, size, max, &path)?;
            let content = text_or_binary(bytes, &path)?;
            let total_lines = count_lines(content.as_bytes());
            return Ok(ReadResult {
                path,
                content,
                total_lines,
                start_line: 1,
                end_line: total_lines,
                truncated: false,
            });
        }
        read_range(
            file,
            path,
            args.offset.unwrap_or(1),
            args.limit.unwrap_or(u64::MAX),
            max,
        )
    }

    /// `path (lines a-b of N)`, then the content unchanged.
    fn model_text(r: &ReadResult) -> String {
        let path = &r.path;
        let (start, end, total) = (r.start_line, r.end_line, r.total_lines);
        let header = if total == 0 {
            format!("{path} (empty file)")
        } else if end < start {
            format!(
                "{path} (nothing there: the file has {})",
                model::plural(total, "line", "lines")
            )
        } else {
            format!("{path} (lines {start}-{end} of {total})")
        };
        if r.content.is_empty() {
            return header;
        }
        format!("{header}\n{}", r.content)
    }

    fn human_text(r: &ReadResult, _binary: &str) -> Text {
        Text {
            stdout: r.content.clone(),
            stderr: String::new(),
        }
    }

    const TEXT_FORMAT: &'static str = "the file's content, as is";
}

fn too_large(path: &str, size: u64, max: u64) -> Error {
    Error::new(
        ErrorKind::FileTooLarge,
        format!(
            "{path} is {size} bytes, over max_file_size_bytes ({max}); \
             read it in parts with offset and limit (in lines)"
        ),
    )
}

/// `size` is the length the file had when opened: room for it (and one byte more, to see the
/// end) is made at once, so that a whole read takes two `read`s instead of one per doubling
/// from 32 bytes (nine for 4 KB; `Take` hides the file's size from `read_to_end`).
fn read_bounded(file: std::fs::File, size: u64, max: u64, path: &str) -> Result<Vec<u8>> {
    let room = usize::try_from(size.min(max))
        .unwrap_or(0)
        .saturating_add(1);
    let mut bytes = Vec::with_capacity(room);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(path, bytes.len() as u64, max));
    }
    Ok(bytes)
}

/// Text when the bytes hold no NUL in their first 8 KiB and are valid UTF-8.
pub fn text_or_binary(bytes: Vec<u8>, path: &str) -> Result<String> {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if head.contains(&0) {
        return Err(binary(path, "it contains NUL bytes"));
    }
    String::from_utf8(bytes).map_err(|e| {
        binary(
            path,
            &format!(
                "it is not valid UTF-8 (at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn binary(path: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::BinaryFile,
        format!("{path} looks like a binary file: {why}"),
    )
}

/// Lines as an editor counts them: a final line without a newline still counts.
pub fn count_lines(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    match bytes.last() {
        None => 0,
        Some(b'\n') => newlines,
        Some(_) => newlines + 1,
    }
}

fn read_range(
    file: std::fs::File,
    path: String,
    offset: u64,
    limit: u64,
    max: u64,
) -> Result<ReadResult> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| Error::io(&path, e))?;
    if head[..head.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(binary(&path, "it contains NUL bytes"));
    }
    let last_wanted = offset.saturating_add(limit - 1);
    let mut content = Vec::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(&path, e))?;
        if n == 0 {
            break;
        }
        number += 1;
        if number >= offset && number <= last_wanted {
            if (content.len() + line.len()) as u64 > max {
                return Err(Error::new(
                    ErrorKind::FileTooLarge,
                    format!(
                        "lines {offset}..{number} of {path} are over max_file_size_bytes \
                         ({max}); ask for fewer lines with limit"
                    ),
                ));
            }
            content.extend_from_slice(&line);
        }
    }
    let content = text_or_binary(content, &path)?;
    let start_line = offset.min(number + 1);
    let end_line = last_wanted.min(number);
    Ok(ReadResult {
        path,
        content,
        total_lines: number,
        start_line,
        end_line,
        truncated: start_line > 1 || end_line < number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_an_editor() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\r\nb\r\n"), 2);
    }

    #[test]
    fn binary_detection() {
        assert!(text_or_binary(b"ok\n".to_vec(), "f").is_ok());
        assert_eq!(
            text_or_binary(b"a\0b".to_vec(), "f")
                .expect_err("nul")
                .code(),
            "binary_file"
        );
        assert_eq!(
            text_or_binary(b"caf\xe9".to_vec(), "f")
                .expect_err("latin1")
                .code(),
            "binary_file"
        );
    }
}
