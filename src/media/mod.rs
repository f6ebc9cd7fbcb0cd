//! Files that read_file returns as something other than text, told by their first bytes: the
//! images a multimodal model takes (PNG, JPEG, GIF, WebP), and PDFs.
//!
//! An image comes back as its bytes in base64 with its MIME type and size in pixels, bounded
//! twice: its data by `max_file_size_bytes`, its sides by [`MAX_EDGE`]. One within both is
//! returned as it is (only its header is read); a larger one is decoded and scaled down
//! (`scale`). A PDF comes back as the text of its pages (`pdf`), as many as fit
//! `max_file_size_bytes`. The decoders and the PDF parser live in `sneaky-outline` alone (the
//! binary that carries the grammars, `code::elsewhere`): `sneaky-read` and the hosts
//! (sneaky-mcp, sneaky-agent, which run read_file in their own process) hand such an image's or
//! PDF's bytes to `sneaky-outline --scale-image` (`scale_elsewhere`) or
//! `sneaky-outline --pdf-text` (`pdf_elsewhere`), so that only one installed binary carries
//! them, and not the one whose start every read_file call pays: their panic locations and
//! tables are pointers the dynamic loader rewrites at every start (`.data.rel.ro`), and in
//! `sneaky-read` they made it 64 KB instead of 30, 16 pages copied at load instead of 7.

pub mod pdf;
pub mod scale;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};

/// The longest side, in pixels, of an image read_file returns: larger ones are scaled down to
/// fit a square of this side. Anthropic's API takes up to 8000 px but scales anything over
/// 1568 px itself (2000 px when a request holds many images); OpenAI's fits images into
/// 2048 px. 2000 keeps what all of them show.
pub const MAX_EDGE: u32 = 2000;

/// The most bytes of image data read_file returns, whatever `max_file_size_bytes`: Anthropic's
/// API refuses an image whose base64 is over 5 MiB ("image exceeds 5 MB maximum"), which is
/// 3.75 MiB of data; OpenAI's takes more. A larger image is scaled down until it fits.
pub const MAX_IMAGE_DATA_BYTES: u64 = 5 * 1024 * 1024 / 4 * 3;

/// The largest image file read_file reads to scale down, whatever `max_file_size_bytes`
/// (what it returns stays within that): photos from a phone are larger than the default 1 MiB.
pub const MAX_IMAGE_FILE_BYTES: u64 = 64 << 20;

/// The most pixels an image may have to be scaled: decoding holds 4 bytes each (256 MiB here).
pub const MAX_PIXELS: u64 = 64_000_000;

/// The binary that links the decoders and the PDF parser, and answers [`SCALE_FLAG`] and
/// [`PDF_FLAG`] (`main_or`).
pub const HELPER_BINARY: &str = "sneaky-outline";

/// The flag of [`HELPER_BINARY`] that scales an image given on stdin (`scale::main`).
pub const SCALE_FLAG: &str = "--scale-image";

/// The flag of [`HELPER_BINARY`] that reads the text of a PDF given on stdin (`pdf::main`).
pub const PDF_FLAG: &str = "--pdf-text";

/// The largest PDF read_file reads, whatever `max_file_size_bytes` (what it returns, the
/// text, stays within that): a PDF's pictures and fonts make it far larger than its text.
pub const MAX_PDF_FILE_BYTES: u64 = 64 << 20;

/// The main of [`HELPER_BINARY`]: `scale::main` or `pdf::main` when [`SCALE_FLAG`] or
/// [`PDF_FLAG`] is its first argument (how read_file has an image scaled down or a PDF read),
/// else `otherwise` (the binary's other modes and its tool, handed in by the binary: this
/// module sits beneath the tools and the protocol).
pub fn main_or(otherwise: impl FnOnce() -> std::process::ExitCode) -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    let rest = || -> Vec<String> { args.map(|a| a.to_string_lossy().into_owned()).collect() };
    match first.as_deref().and_then(std::ffi::OsStr::to_str) {
        Some(SCALE_FLAG) => scale::main(&rest()),
        Some(PDF_FLAG) => pdf::main(&rest()),
        _ => otherwise(),
    }
}

/// Writes what `--scale-image` or `--pdf-text` made as the binaries' envelope
/// (docs/contract.md, "What comes out"), which the host reads back; the exit status with it.
fn answer(outcome: Result<Value>) -> std::process::ExitCode {
    let (envelope, status) = match outcome {
        Ok(result) => (
            serde_json::json!({"ok": true, "tool": "read_file", "result": result}),
            0,
        ),
        Err(e) => (
            serde_json::json!({"ok": false, "tool": "read_file",
                   "error": {"code": e.code(), "message": e.message()}}),
            u8::try_from(e.exit_status()).unwrap_or(1),
        ),
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{envelope}");
    let _ = out.flush();
    std::process::ExitCode::from(status)
}

/// Whether a file is a PDF: it starts with the header `%PDF-` (PDF 32000-1, 7.5.2).
pub fn is_pdf(head: &[u8]) -> bool {
    head.starts_with(b"%PDF-")
}

/// Which pages of a PDF to read, and how much text they may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfRequest {
    /// The first page, from 1.
    pub offset: u64,
    /// How many pages at most (at least 1).
    pub limit: u64,
    /// The most bytes of text: the pages that would go over are left out.
    pub max_bytes: u64,
}

/// The text of a PDF's pages, as read_file returns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfText {
    pub total_pages: u64,
    /// The pages asked for, in order, up to the first that would go over the bound.
    pub pages: Vec<PdfPage>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfPage {
    /// From 1.
    pub number: u64,
    /// Its text, a line a line, ending with a newline unless empty.
    pub text: String,
}

/// How `pdf::main` writes a [`PdfText`] and [`pdf_elsewhere`] reads it back.
pub fn pdf_text_json(text: &PdfText) -> Value {
    let pages: Vec<Value> = text
        .pages
        .iter()
        .map(|p| serde_json::json!({"number": p.number, "text": p.text}))
        .collect();
    serde_json::json!({
        "total_pages": text.total_pages,
        "pages": pages,
    })
}

fn pdf_text_from_json(result: &Value) -> Option<PdfText> {
    let pages = result
        .get("pages")?
        .as_array()?
        .iter()
        .map(|p| {
            Some(PdfPage {
                number: p.get("number")?.as_u64()?,
                text: p.get("text")?.as_str()?.to_string(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(PdfText {
        total_pages: result.get("total_pages")?.as_u64()?,
        pages,
    })
}

/// How read_file reads a PDF's text: through `sneaky-outline --pdf-text MAX_BYTES OFFSET LIMIT`,
/// the PDF's bytes on stdin; it answers with the envelope `pdf::main` writes.
pub fn pdf_elsewhere(bytes: Vec<u8>, request: PdfRequest, path: &str) -> Result<PdfText> {
    let args = [
        PDF_FLAG.to_string(),
        request.max_bytes.to_string(),
        request.offset.to_string(),
        request.limit.to_string(),
    ];
    let result = ask_helper(&args, &bytes, path, &format!("read the text of {path}"))?;
    pdf_text_from_json(&result).ok_or_else(|| {
        Error::new(
            ErrorKind::Internal,
            format!("{HELPER_BINARY} {PDF_FLAG}: unexpected result"),
        )
    })
}

/// An image format read_file returns as an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl ImageKind {
    /// The format whose signature `head` starts with.
    pub fn sniff(head: &[u8]) -> Option<ImageKind> {
        if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageKind::Png)
        } else if head.starts_with(b"\xff\xd8\xff") {
            Some(ImageKind::Jpeg)
        } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
            Some(ImageKind::Gif)
        } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
            Some(ImageKind::WebP)
        } else {
            None
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::WebP => "image/webp",
        }
    }

    pub fn from_mime_type(mime: &str) -> Option<ImageKind> {
        [
            ImageKind::Png,
            ImageKind::Jpeg,
            ImageKind::Gif,
            ImageKind::WebP,
        ]
        .into_iter()
        .find(|k| k.mime_type() == mime)
    }

    /// How a sentence names it: "PNG".
    pub fn name(self) -> &'static str {
        match self {
            ImageKind::Png => "PNG",
            ImageKind::Jpeg => "JPEG",
            ImageKind::Gif => "GIF",
            ImageKind::WebP => "WebP",
        }
    }

    /// Width and height from the header, or None when the header is not one of this format.
    pub fn dimensions(self, bytes: &[u8]) -> Option<(u32, u32)> {
        let le16 = |at: usize| -> Option<u32> {
            let b = bytes.get(at..at + 2)?;
            Some(u32::from(u16::from_le_bytes([b[0], b[1]])))
        };
        let be32 = |at: usize| -> Option<u32> {
            let b = bytes.get(at..at + 4)?;
            Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let found = match self {
            // The signature, then the IHDR chunk: length, "IHDR", width, height.
            ImageKind::Png => {
                if bytes.get(12..16)? != b"IHDR" {
                    return None;
                }
                (be32(16)?, be32(20)?)
            }
            // The logical screen: width and height after the 6-byte signature.
            ImageKind::Gif => (le16(6)?, le16(8)?),
            ImageKind::WebP => match bytes.get(12..16)? {
                // Lossy: frame tag (3 bytes), start code 9d 01 2a, then 14-bit sides.
                b"VP8 " => {
                    if bytes.get(23..26)? != [0x9d, 0x01, 0x2a] {
                        return None;
                    }
                    (le16(26)? & 0x3fff, le16(28)? & 0x3fff)
                }
                // Lossless: signature 0x2f, then 14 bits each of width - 1 and height - 1.
                b"VP8L" => {
                    if *bytes.get(20)? != 0x2f {
                        return None;
                    }
                    let b = bytes.get(21..25)?;
                    let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    ((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
                }
                // Extended: flags (4 bytes), then 24 bits each of width - 1 and height - 1.
                b"VP8X" => {
                    let b = bytes.get(24..30)?;
                    let w = u32::from_le_bytes([b[0], b[1], b[2], 0]) + 1;
                    let h = u32::from_le_bytes([b[3], b[4], b[5], 0]) + 1;
                    (w, h)
                }
                _ => return None,
            },
            ImageKind::Jpeg => jpeg_dimensions(bytes)?,
        };
        Some(found).filter(|(w, h)| *w > 0 && *h > 0)
    }
}

/// The frame header (SOFn) of a JPEG: walk the segments after SOI until one is found.
fn jpeg_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xff {
            return None;
        }
        let mut marker = *bytes.get(at + 1)?;
        // Fill bytes: any number of 0xff before a marker.
        while marker == 0xff {
            at += 1;
            marker = *bytes.get(at + 1)?;
        }
        at += 2;
        match marker {
            // Markers without a length: TEM, RSTn, SOI.
            0x01 | 0xd0..=0xd8 => continue,
            // EOI or the start of the scan before any frame header.
            0xd9 | 0xda => return None,
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
        // SOF0..SOF15, but DHT (c4), JPG (c8) and DAC (cc) share the range.
        if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            let height = u16::from_be_bytes([*bytes.get(at + 3)?, *bytes.get(at + 4)?]);
            let width = u16::from_be_bytes([*bytes.get(at + 5)?, *bytes.get(at + 6)?]);
            return Some((u32::from(width), u32::from(height)));
        }
        if len < 2 {
            return None;
        }
        at += len;
    }
}

/// An image as read_file returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub kind: ImageKind,
    /// The bytes of the image returned (the file's, or the scaled image's).
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Whether an image of this size needs scaling to be returned.
pub fn fits(width: u32, height: u32, bytes: u64, max_bytes: u64) -> bool {
    width <= MAX_EDGE && height <= MAX_EDGE && bytes <= max_bytes
}

/// The size an image of `width` x `height` is scaled to so that neither side is over `edge`
/// (the aspect ratio kept, each side at least 1).
pub fn fitted(width: u32, height: u32, edge: u32) -> (u32, u32) {
    let long = width.max(height);
    if long <= edge {
        return (width, height);
    }
    let scale = |side: u32| -> u32 {
        let scaled = (u64::from(side) * u64::from(edge) + u64::from(long) / 2) / u64::from(long);
        u32::try_from(scaled).unwrap_or(edge).max(1)
    };
    (scale(width), scale(height))
}

/// How read_file scales an image: through `sneaky-outline --scale-image MAX_BYTES`, the image's
/// bytes on stdin (which tell it their format); it answers with the envelope `scale::main`
/// writes.
pub fn scale_elsewhere(
    _kind: ImageKind,
    bytes: &[u8],
    max_bytes: u64,
    path: &str,
) -> Result<Image> {
    let args = [SCALE_FLAG.to_string(), max_bytes.to_string()];
    let result = ask_helper(&args, bytes, path, &format!("scale {path} down"))?;
    scaled_from_json(&result).ok_or_else(|| {
        Error::new(
            ErrorKind::Internal,
            format!("{HELPER_BINARY} {SCALE_FLAG}: unexpected result"),
        )
    })
}

/// Runs `HELPER_BINARY ARGS` with `input` on stdin and returns the `result` of its envelope, or
/// its error (`purpose` says what it was asked to do, for the messages).
fn ask_helper(args: &[String], input: &[u8], path: &str, purpose: &str) -> Result<Value> {
    let binary = sibling_binary(HELPER_BINARY);
    let spawned = Command::new(&binary)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = spawned.map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!(
                "cannot run {} to {purpose}: {e} (`cargo install --path .` installs \
                 every binary)",
                binary.display()
            ),
        )
    })?;
    let input = input.to_vec();
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    // stderr on a thread of its own, so that neither pipe fills while the other is read.
    let errors = child.stderr.take().map(|mut stderr| {
        std::thread::spawn(move || {
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err);
            err
        })
    });
    let mut out = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_end(&mut out);
    }
    let err = errors.and_then(|e| e.join().ok()).unwrap_or_default();
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let _ = child.wait();
    let envelope: Value = serde_json::from_slice(&out).map_err(|_| {
        Error::new(
            ErrorKind::Internal,
            format!(
                "{} {} gave no answer for {path}: {}",
                binary.display(),
                args.first().map_or("", String::as_str),
                err.trim()
            ),
        )
    })?;
    if envelope.get("ok").and_then(Value::as_bool) != Some(true) {
        let field = |name: &str| {
            envelope
                .pointer(&format!("/error/{name}"))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let kind = ErrorKind::from_code(field("code")).unwrap_or(ErrorKind::Internal);
        return Err(Error::new(kind, format!("{path}: {}", field("message"))));
    }
    Ok(envelope.get("result").cloned().unwrap_or(Value::Null))
}

/// The image of `scale::main`'s result: `{mime_type, width, height, content}` (base64).
fn scaled_from_json(result: &Value) -> Option<Image> {
    let kind = ImageKind::from_mime_type(result.get("mime_type")?.as_str()?)?;
    let width = u32::try_from(result.get("width")?.as_u64()?).ok()?;
    let height = u32::try_from(result.get("height")?.as_u64()?).ok()?;
    let bytes = base64_decode(result.get("content")?.as_str()?)?;
    Some(Image {
        kind,
        bytes,
        width,
        height,
    })
}

/// The program `name` beside the running one, else its bare name (looked up on PATH).
pub fn sibling_binary(name: &str) -> std::path::PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| std::path::PathBuf::from(name))
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4), as MCP's image `data` and the model APIs want.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The bytes of standard base64 with padding; None when it is not.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if text.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        BASE64
            .iter()
            .position(|&b| b == c)
            .and_then(|p| u32::try_from(p).ok())
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let quads = text.len() / 4;
    for (q, quad) in text.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && q + 1 != quads) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_matches_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), coded);
            assert_eq!(base64_decode(coded), Some(plain.as_bytes().to_vec()));
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(base64_decode(&base64_encode(&all)), Some(all));
        assert_eq!(base64_decode("Zg="), None);
        assert_eq!(base64_decode("Zg==Zg=="), None);
        assert_eq!(base64_decode("Z!=="), None);
    }

    #[test]
    fn formats_are_told_by_their_signature() {
        assert_eq!(
            ImageKind::sniff(b"\x89PNG\r\n\x1a\nxxxx"),
            Some(ImageKind::Png)
        );
        assert_eq!(ImageKind::sniff(b"\xff\xd8\xff\xe0"), Some(ImageKind::Jpeg));
        assert_eq!(ImageKind::sniff(b"GIF89a.."), Some(ImageKind::Gif));
        assert_eq!(
            ImageKind::sniff(b"RIFF\0\0\0\0WEBPVP8 "),
            Some(ImageKind::WebP)
        );
        assert_eq!(ImageKind::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(ImageKind::sniff(b"%PDF-1.4"), None);
        assert_eq!(ImageKind::sniff(b"hello"), None);
    }

    #[test]
    fn fitting_keeps_the_aspect_ratio() {
        assert_eq!(fitted(100, 50, 2000), (100, 50));
        assert_eq!(fitted(4000, 3000, 2000), (2000, 1500));
        assert_eq!(fitted(3000, 4000, 2000), (1500, 2000));
        assert_eq!(fitted(10000, 1, 2000), (2000, 1));
    }

    #[test]
    fn jpeg_headers_are_walked_to_the_frame() {
        // SOI, an APP0 segment of 4 bytes, fill bytes, then SOF0 of 37 x 20.
        let jpeg = [
            0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xff, 0xc0, 0x00, 0x0b, 0x08,
            0x00, 0x14, 0x00, 0x25, 0x01, 0x01, 0x11, 0x00,
        ];
        assert_eq!(ImageKind::Jpeg.dimensions(&jpeg), Some((37, 20)));
        assert_eq!(ImageKind::Jpeg.dimensions(&jpeg[..12]), None);
        // A scan before any frame header.
        assert_eq!(
            ImageKind::Jpeg.dimensions(&[0xff, 0xd8, 0xff, 0xda, 0, 2]),
            None
        );
    }
}
