//! read_file: UTF-8 text, whole or a range of lines. Binary files (a NUL byte in the first
//! 8 KiB, or bytes that are not UTF-8) are refused, and so are files over
//! `max_file_size_bytes` unless a range of lines is asked for; a range is read streaming, so
//! its memory stays bounded by the limit whatever the file's size. An image (PNG, JPEG, GIF,
//! WebP, told by its first bytes) comes back in base64, scaled down when it is over the
//! limits of `crate::media`; a PDF as the text of its pages, `offset` and `limit` counting
//! pages.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{committed_schema, Calls, Cli, Context, Doc, Hints, TextExample, Tool, ToolName};
use crate::error::{Error, ErrorKind, Result};
use crate::media::{self, Image, ImageKind, PdfRequest};
use crate::render::human::Text;
use crate::render::model;

/// Bytes inspected for a NUL byte to tell binary files from text.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Read a UTF-8 text file from the workspace. Returns its content (line endings kept) and its
/// number of lines. For a large file, read a range with `offset` and `limit`. An image (PNG,
/// JPEG, GIF, WebP) is returned as an image (base64 data, MIME type, pixel size), scaled down
/// when large; a PDF as the text of its pages (`offset` and `limit` then count pages).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// Path of the file to read, relative to the workspace root.
    pub file_path: String,
    /// First line to return, counting from 1 (for a PDF: first page). Default: 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// Maximum number of lines to return (for a PDF: pages). Default: all lines up to the end
    /// of the file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct ReadResult {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The text, line endings kept (an image: its bytes in base64; a PDF: the text of the
    /// pages returned, each followed by a form feed, as `pdftotext` writes it).
    pub content: String,
    /// Number of lines in the whole file (0 for an image or a PDF).
    pub total_lines: u64,
    /// First and last line returned (1-based; `end_line` < `start_line` when none).
    pub start_line: u64,
    pub end_line: u64,
    /// True when `content` is not the whole file (for an image: it was scaled down; for a PDF:
    /// not every page is there).
    pub truncated: bool,
    /// `base64` for an image: `content` holds its bytes in base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// The type of an image's `content` (`image/png`, `image/jpeg`, `image/gif`, `image/webp`);
    /// `application/pdf` for a PDF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// An image's width and height in pixels, as `content` holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u64>,
    /// The file's own width and height, larger than `width` and `height` when it was scaled
    /// down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_width: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_height: Option<u64>,
    /// A PDF's number of pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// The first and last page returned (from 1; `end_page` < `start_page` when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_page: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_page: Option<u64>,
    /// A PDF's pages returned, each with its text (empty for a page without a text layer,
    /// such as a scan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<Page>>,
}

/// One page of a PDF.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Page {
    /// Its number, from 1.
    pub number: u64,
    /// Its text, a line of the page a line.
    pub text: String,
}

/// The form feed that ends each page in `content`.
const PAGE_END: char = '\u{c}';

/// The MIME type of a PDF.
const PDF_MIME_TYPE: &str = "application/pdf";

impl ReadResult {
    /// A text result (no image fields).
    fn text(path: String, content: String, total_lines: u64, lines: (u64, u64)) -> ReadResult {
        ReadResult {
            path,
            content,
            total_lines,
            start_line: lines.0,
            end_line: lines.1,
            truncated: lines.0 > 1 || lines.1 < total_lines,
            encoding: None,
            mime_type: None,
            width: None,
            height: None,
            original_width: None,
            original_height: None,
            total_pages: None,
            start_page: None,
            end_page: None,
            pages: None,
        }
    }

    /// The image `content` holds, when it is one.
    pub fn image_kind(&self) -> Option<ImageKind> {
        self.mime_type
            .as_deref()
            .and_then(ImageKind::from_mime_type)
    }

    /// "PDF, pages 1-3 of 12; read on with offset 4", "PDF, page 2 of 2: no text layer …".
    fn pdf_description(&self) -> String {
        let total = self.total_pages.unwrap_or(0);
        let start = self.start_page.unwrap_or(1);
        let end = self.end_page.unwrap_or(0);
        if end < start {
            return format!(
                "PDF, nothing there: the document has {}",
                model::plural(total, "page", "pages")
            );
        }
        let mut text = if start == end {
            format!("PDF, page {start} of {total}")
        } else {
            format!("PDF, pages {start}-{end} of {total}")
        };
        let pages = self.pages.as_deref().unwrap_or_default();
        if pages.iter().all(|p| p.text.is_empty()) {
            text.push_str(
                ": no text layer (the pages are only pictures, such as a scan); read_file \
                 returns no text for them",
            );
        }
        if end < total {
            text.push_str(&format!("; read on with offset {}", end + 1));
        }
        text
    }

    /// "PNG image, 64x32 pixels", "JPEG image, 4000x3000 pixels, scaled down to 2000x1500".
    fn image_description(&self, kind: ImageKind) -> String {
        let (w, h) = (self.width.unwrap_or(0), self.height.unwrap_or(0));
        let (ow, oh) = (
            self.original_width.unwrap_or(w),
            self.original_height.unwrap_or(h),
        );
        let mut text = format!("{} image, {ow}x{oh} pixels", kind.name());
        if (ow, oh) != (w, h) {
            text.push_str(&format!(", scaled down to {w}x{h}"));
        }
        text
    }
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
        summary: "UTF-8 text, whole or `offset`/`limit` lines; images (PNG, JPEG, GIF, WebP) in base64, scaled down when large; PDFs as text per page (`offset`/`limit` in pages)",
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
        calls: Calls {
            before: &[],
            works: r#"{"file_path": "hello.txt"}"#,
            fails: r#"{"file_path": "../secret.txt"}"#,
            fails_with: ErrorKind::OutsideWorkspace,
        },
    };
    const SCHEMA: &'static str = committed_schema!("read_file");
    const PATH_PARAMS: &'static [&'static str] = &["file_path"];
    type Args = ReadArgs;
    type Output = ReadResult;

    fn run(args: ReadArgs, ctx: &Context) -> Result<ReadResult> {
        read(args, ctx)
    }

    /// The content moved into its place rather than copied (a tenth of a 4 KB read's time
    /// through sneaky-mcp went to that copy).
    fn into_value(mut result: ReadResult) -> serde_json::Result<Value> {
        let content = std::mem::take(&mut result.content);
        let mut value = serde_json::to_value(result)?;
        if let Some(slot) = value.get_mut("content") {
            *slot = Value::String(content);
        }
        Ok(value)
    }

    /// `path (lines a-b of N)`, then the content unchanged; for an image, what it is (the image
    /// itself goes beside the text, as the host's API takes images).
    fn model_text(r: &ReadResult) -> String {
        let path = &r.path;
        if let Some(kind) = r.image_kind() {
            return format!("{path} ({})", r.image_description(kind));
        }
        if let Some(pages) = &r.pages {
            let mut text = format!("{path} ({})", r.pdf_description());
            if pages.iter().any(|p| !p.text.is_empty()) {
                for page in pages {
                    if page.text.is_empty() {
                        text.push_str(&format!("\n--- page {} (no text) ---", page.number));
                    } else {
                        text.push_str(&format!("\n--- page {} ---\n", page.number));
                        text.push_str(page.text.trim_end_matches('\n'));
                    }
                }
            }
            return text;
        }
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

    fn human_text(r: &ReadResult, binary: &str) -> Text {
        if let Some(pages) = &r.pages {
            // The text as `pdftotext` prints it; what the pages are goes to stderr.
            let mut stderr = String::new();
            if pages.is_empty() || pages.iter().all(|p| p.text.is_empty()) || r.truncated {
                stderr = format!("{binary}: {}: {}\n", r.path, r.pdf_description());
            }
            return Text {
                stdout: r.content.clone(),
                stderr,
            };
        }
        if let Some(kind) = r.image_kind() {
            return Text {
                stdout: format!(
                    "{}: {} (its bytes, in base64, are in --format json's result.content)\n",
                    r.path,
                    r.image_description(kind)
                ),
                stderr: String::new(),
            };
        }
        Text {
            stdout: r.content.clone(),
            stderr: String::new(),
        }
    }

    const TEXT_FORMAT: &'static str =
        "the file's content, as is; for an image, a line saying what it is; for a PDF, the text \
         of its pages, each ended by a form feed";
}

fn read(args: ReadArgs, ctx: &Context) -> Result<ReadResult> {
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
            // Over the limit for text; an image is read to be scaled down, a PDF for its text.
            let mut head = [0u8; 16];
            let n = file
                .read_at(&mut head, 0)
                .map_err(|e| Error::io(&path, e))?;
            if media::is_pdf(&head[..n]) {
                let bytes = read_pdf_bytes(file, &path)?;
                return pdf_result(bytes, path, PdfRequest::whole(max));
            }
            return match ImageKind::sniff(&head[..n]) {
                Some(kind) => {
                    let bytes = read_image_bytes(file, &path)?;
                    image_result(kind, bytes, path, max)
                }
                None => Err(too_large(&path, size, max)),
            };
        }
        let bytes = read_bounded(file, size, max, &path)?;
        if let Some(kind) = ImageKind::sniff(&bytes) {
            return image_result(kind, bytes, path, max);
        }
        if media::is_pdf(&bytes) {
            return pdf_result(bytes, path, PdfRequest::whole(max));
        }
        let content = text_or_binary(bytes, &path)?;
        let total_lines = count_lines(content.as_bytes());
        return Ok(ReadResult::text(
            path,
            content,
            total_lines,
            (1, total_lines),
        ));
    }
    read_range(
        file,
        path,
        args.offset.unwrap_or(1),
        args.limit.unwrap_or(u64::MAX),
        max,
    )
}

/// An image's whole file, up to `media::MAX_IMAGE_FILE_BYTES`.
fn read_image_bytes(file: impl Read, path: &str) -> Result<Vec<u8>> {
    read_whole(
        file,
        path,
        media::MAX_IMAGE_FILE_BYTES,
        "an image",
        "more than read_file scales down",
    )
}

/// A PDF's whole file, up to `media::MAX_PDF_FILE_BYTES`.
fn read_pdf_bytes(file: impl Read, path: &str) -> Result<Vec<u8>> {
    read_whole(
        file,
        path,
        media::MAX_PDF_FILE_BYTES,
        "a PDF",
        "more than read_file reads",
    )
}

/// A whole file of `bound` bytes at most; over it, `file_too_large` saying what it is and why.
fn read_whole(file: impl Read, path: &str, bound: u64, what: &str, why: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(bound + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > bound {
        return Err(Error::new(
            ErrorKind::FileTooLarge,
            format!("{path} is {what} over {bound} bytes, {why}"),
        ));
    }
    Ok(bytes)
}

impl PdfRequest {
    /// Every page, as many as fit `max` bytes of text.
    fn whole(max: u64) -> PdfRequest {
        PdfRequest {
            offset: 1,
            limit: u64::MAX,
            max_bytes: max,
        }
    }
}

/// The text of the pages asked for.
fn pdf_result(bytes: Vec<u8>, path: String, request: PdfRequest) -> Result<ReadResult> {
    let found = media::pdf_elsewhere(bytes, request, &path)?;
    let total = found.total_pages;
    let start_page = request.offset.min(total + 1);
    let end_page = found
        .pages
        .last()
        .map_or(start_page - 1, |page| page.number);
    let mut content = String::new();
    for page in &found.pages {
        content.push_str(&page.text);
        content.push(PAGE_END);
    }
    let pages = found
        .pages
        .into_iter()
        .map(|p| Page {
            number: p.number,
            text: p.text,
        })
        .collect();
    Ok(ReadResult {
        path,
        content,
        total_lines: 0,
        start_line: 1,
        end_line: 0,
        truncated: start_page > 1 || end_page < total,
        encoding: None,
        mime_type: Some(PDF_MIME_TYPE.to_string()),
        width: None,
        height: None,
        original_width: None,
        original_height: None,
        total_pages: Some(total),
        start_page: Some(start_page),
        end_page: Some(end_page),
        pages: Some(pages),
    })
}

/// The image as it is when it is within the limits, else scaled down.
fn image_result(kind: ImageKind, bytes: Vec<u8>, path: String, max: u64) -> Result<ReadResult> {
    // What a model's API takes, whatever the limit for text.
    let max = max.min(media::MAX_IMAGE_DATA_BYTES);
    let (width, height) = kind.dimensions(&bytes).ok_or_else(|| {
        binary(
            &path,
            &format!(
                "it starts as a {} image, but its header cannot be read",
                kind.name()
            ),
        )
    })?;
    let image = if media::fits(width, height, bytes.len() as u64, max) {
        Image {
            kind,
            bytes,
            width,
            height,
        }
    } else {
        media::scale_elsewhere(kind, &bytes, max, &path)?
    };
    let scaled = (image.width, image.height) != (width, height) || image.kind != kind;
    Ok(ReadResult {
        path,
        content: media::base64_encode(&image.bytes),
        total_lines: 0,
        start_line: 1,
        end_line: 0,
        truncated: scaled,
        encoding: Some("base64".to_string()),
        mime_type: Some(image.kind.mime_type().to_string()),
        width: Some(u64::from(image.width)),
        height: Some(u64::from(image.height)),
        original_width: Some(u64::from(width)),
        original_height: Some(u64::from(height)),
        total_pages: None,
        start_page: None,
        end_page: None,
        pages: None,
    })
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
    // memchr's SSE2 search: `contains` looks at a word at a time (4,400 instructions of a
    // 4 KB read, a fifth of the read's own through sneaky-mcp).
    if crate::text::find_byte(0, head).is_some() {
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
    // memchr's counter looks at many bytes at once (the byte loop was ~9% of sneaky-mcp's CPU
    // serving 4 KB reads: this profile optimizes for size, which leaves it unvectorized),
    // without asking the CPU what it supports first.
    let newlines = crate::text::count_byte(b'\n', bytes) as u64;
    match bytes.last() {
        None => 0,
        Some(b'\n') => newlines,
        Some(_) => newlines + 1,
    }
}

/// Lines `offset` on, `limit` of them, read streaming (an image is returned whole: lines mean
/// nothing there; a PDF's pages are counted instead).
fn read_range(
    file: std::fs::File,
    path: String,
    offset: u64,
    limit: u64,
    max: u64,
) -> Result<ReadResult> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| Error::io(&path, e))?;
    if let Some(kind) = ImageKind::sniff(head) {
        let bytes = read_image_bytes(reader, &path)?;
        return image_result(kind, bytes, path, max);
    }
    if media::is_pdf(head) {
        let bytes = read_pdf_bytes(reader, &path)?;
        let request = PdfRequest {
            offset,
            limit,
            max_bytes: max,
        };
        return pdf_result(bytes, path, request);
    }
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
    Ok(ReadResult::text(
        path,
        content,
        number,
        (start_line, end_line),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value the hosts get is the one serde makes, key for key and in the same order.
    #[test]
    fn the_moved_content_is_where_serde_puts_it() {
        let mut image = ReadResult::text("a.png".into(), "iVBOR".into(), 0, (1, 0));
        image.encoding = Some("base64".into());
        image.mime_type = Some("image/png".into());
        for result in [
            ReadResult::text("a.txt".into(), "one\n\"two\"\n".into(), 2, (1, 2)),
            image,
        ] {
            let serde = serde_json::to_value(&result).expect("serde");
            let moved = ReadFile::into_value(result).expect("moved");
            assert_eq!(moved.to_string(), serde.to_string());
        }
    }

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
