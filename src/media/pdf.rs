//! A PDF's text, page by page: the document is parsed by lopdf (cross-reference tables and
//! streams, object streams, stream filters, decryption with the empty user password), and each
//! page's content stream is walked here, glyph by glyph. Where lopdf's own `extract_text`
//! starts a line only at `ET` or `T*` and a word only at a `TJ` gap of 0.1 em, this places
//! each glyph with the font's widths and the text and transformation matrices, and starts a
//! word where the gap to the previous glyph is wider than a space's share of an em and a line
//! where the baseline moves — as `pdftotext -raw` does: producers such as groff kern inside
//! words with `Td` and ghostscript spaces words with `Tc`. A font's `ToUnicode` map is
//! preferred to its `Encoding` (a subset font's `Differences` often name glyphs that no table
//! knows). Text inside form XObjects is read too.
//!
//! Only `sneaky-outline` links this: read_file reaches it through `sneaky-outline --pdf-text`
//! (`super::pdf_elsewhere`). A hostile file is bounded in size by the caller
//! (`super::MAX_PDF_FILE_BYTES`), in what its streams may inflate to here, and in time: the
//! walk runs on a thread of its own, and a panic or an overrun of [`SECONDS`] is a
//! `binary_file` error rather than a crash or a hang.

use std::collections::HashMap;
use std::io::Read;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, LoadOptions, Object, ObjectId};

use super::{PdfPage, PdfRequest, PdfText, MAX_PDF_FILE_BYTES};
use crate::error::{Error, ErrorKind, Result};

/// How long reading one document may take. A 100-page report takes a fraction of a second;
/// past this the file is taken for a hostile one.
pub const SECONDS: u64 = 30;

/// The most one stream (an object stream, a page's content, a font's ToUnicode map) may
/// inflate to.
const STREAM_LIMIT: usize = 64 << 20;

/// How deep form XObjects may nest (each drawn by the one above it).
const FORM_DEPTH: usize = 8;

/// How deep `q` may nest: deeper saves are ignored (their `Q` then restores an outer state).
const SAVE_DEPTH: usize = 256;

/// The name of the thread that reads the document, so that the panic hook can keep quiet
/// about a panic inside the parser (it is reported as an error instead).
const THREAD_NAME: &str = "pdf-text";

/// `sneaky-outline --pdf-text MAX_BYTES OFFSET LIMIT`: the PDF on stdin, its text as an envelope
/// on stdout (`{"ok":true,"result":{"total_pages","pages":[{"number","text"}]}}`), or a
/// failure envelope.
pub fn main(args: &[String]) -> ExitCode {
    let number = |i: usize| args.get(i).and_then(|n| n.parse::<u64>().ok());
    let outcome = match (number(0), number(1), number(2)) {
        (Some(max_bytes), Some(offset), Some(limit))
            if max_bytes > 0 && offset > 0 && limit > 0 =>
        {
            let mut bytes = Vec::new();
            std::io::stdin()
                .take(MAX_PDF_FILE_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io("stdin", e))
                .and_then(|_| {
                    if bytes.len() as u64 > MAX_PDF_FILE_BYTES {
                        return Err(Error::new(
                            ErrorKind::FileTooLarge,
                            format!("the PDF is over {MAX_PDF_FILE_BYTES} bytes"),
                        ));
                    }
                    text(
                        bytes,
                        PdfRequest {
                            offset,
                            limit,
                            max_bytes,
                        },
                    )
                })
        }
        _ => Err(Error::invalid_args(
            "--pdf-text takes the largest text in bytes, the first page and the number of pages",
        )),
    };
    super::answer(outcome.map(|found| super::pdf_text_json(&found)))
}

/// The text of the pages `request` asks for, read on a thread of its own within [`SECONDS`].
pub fn text(bytes: Vec<u8>, request: PdfRequest) -> Result<PdfText> {
    quiet_panics_of_this_module();
    let (send, receive) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(THREAD_NAME.to_string())
        .spawn(move || {
            let _ = send.send(extract(&bytes, request));
        });
    if let Err(e) = spawned {
        return Err(Error::new(
            ErrorKind::Internal,
            format!("cannot start the PDF reader: {e}"),
        ));
    }
    match receive.recv_timeout(Duration::from_secs(SECONDS)) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(unreadable(&format!(
            "reading it took over {SECONDS} s (a damaged or hostile file?)"
        ))),
        // The thread ended without an answer: the parser panicked on the file.
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(unreadable("the PDF parser failed on it (a damaged file?)"))
        }
    }
}

/// A panic on the reading thread is the file's fault and becomes an error; the panic hook
/// that `protocol::main` sets would print it as a bug in SneakyCode.
fn quiet_panics_of_this_module() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(THREAD_NAME) {
                previous(info);
            }
        }));
    });
}

fn unreadable(why: &str) -> Error {
    Error::new(
        ErrorKind::BinaryFile,
        format!("it starts as a PDF but cannot be read: {why}"),
    )
}

fn encrypted() -> Error {
    Error::new(
        ErrorKind::BinaryFile,
        "it is an encrypted PDF that needs a password to open; read_file reads only PDFs that \
         open without one (decrypt it first, e.g. `qpdf --decrypt --password=… in.pdf out.pdf`)",
    )
}

fn extract(bytes: &[u8], request: PdfRequest) -> Result<PdfText> {
    let options = LoadOptions {
        max_decompressed_size: Some(STREAM_LIMIT),
        ..LoadOptions::default()
    };
    let mentions_encryption = memchr::memmem::find(bytes, b"/Encrypt").is_some();
    let doc = match Document::load_mem_with_options(bytes, options) {
        Ok(doc) => doc,
        Err(_) if mentions_encryption => return Err(encrypted()),
        Err(e) => return Err(unreadable(&format!("{e} (a damaged or cut-short file?)"))),
    };
    if doc.trailer.has(b"Encrypt") && !doc.was_encrypted() {
        return Err(encrypted());
    }
    let pages = doc.get_pages();
    if pages.is_empty() {
        return Err(unreadable("no page can be found in it"));
    }
    let total_pages = pages.len() as u64;
    let last = request
        .offset
        .saturating_add(request.limit - 1)
        .min(total_pages);
    let mut found = PdfText {
        total_pages,
        pages: Vec::new(),
    };
    let mut used = 0u64;
    let mut fonts = Fonts::new();
    let wanted = pages
        .iter()
        .skip_while(|(n, _)| u64::from(**n) < request.offset)
        .take_while(|(n, _)| u64::from(**n) <= last);
    for (&number, &page_id) in wanted {
        // A page whose content cannot be decoded is not given as an empty one (which reads as
        // a scan): the pages before it are returned, and asked for alone it is an error
        // naming it, so that a reader goes on past it knowingly.
        let text = match page_text(&doc, page_id, &mut fonts) {
            Ok(text) => text,
            Err(why) if found.pages.is_empty() => {
                return Err(unreadable(&format!(
                    "the content of page {number} cannot be read ({why}); read on with offset {}",
                    u64::from(number) + 1
                )))
            }
            Err(_) => break,
        };
        used += text.len() as u64;
        if used > request.max_bytes {
            if found.pages.is_empty() {
                return Err(Error::new(
                    ErrorKind::FileTooLarge,
                    format!(
                        "the text of page {number} alone is {} bytes, over max_file_size_bytes \
                         ({})",
                        text.len(),
                        request.max_bytes
                    ),
                ));
            }
            break;
        }
        found.pages.push(PdfPage {
            number: u64::from(number),
            text,
        });
    }
    Ok(found)
}

/// A 2-D affine transformation `[a b c d e f]`, as PDF writes them (row vectors: a point is
/// `[x y 1] × M`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Matrix([f32; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    fn translate(x: f32, y: f32) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, x, y])
    }

    /// `self × then`: first this transformation, then `then`.
    fn then(self, then: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = then.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    fn origin(self) -> (f32, f32) {
        (self.0[4], self.0[5])
    }

    fn of(operands: &[Object]) -> Option<Matrix> {
        let mut m = [0.0; 6];
        if operands.len() < 6 {
            return None;
        }
        for (slot, operand) in m.iter_mut().zip(operands) {
            *slot = number(operand)?;
        }
        Some(Matrix(m))
    }
}

fn number(object: &Object) -> Option<f32> {
    object.as_float().ok().filter(|n| n.is_finite())
}

/// The parameters of the text state that `q` and `Q` save (PDF 32000-1, 9.3).
#[derive(Debug, Clone)]
struct TextState {
    ctm: Matrix,
    char_spacing: f32,
    word_spacing: f32,
    /// `Tz` / 100.
    scale: f32,
    leading: f32,
    rise: f32,
    font: Option<Vec<u8>>,
    size: f32,
}

impl TextState {
    fn new(ctm: Matrix) -> TextState {
        TextState {
            ctm,
            char_spacing: 0.0,
            word_spacing: 0.0,
            scale: 1.0,
            leading: 0.0,
            rise: 0.0,
            font: None,
            size: 0.0,
        }
    }
}

/// Where the previous glyph ended, in device space, and the direction and height of its text.
#[derive(Debug, Clone, Copy)]
struct Pen {
    end: (f32, f32),
    /// The unit vector along the baseline.
    dir: (f32, f32),
    height: f32,
}

/// The page's text as it is gathered.
struct Page<'d, 'f> {
    doc: &'d Document,
    text: String,
    pen: Option<Pen>,
    /// The document's fonts read so far, by object id.
    fonts: &'f mut Fonts,
}

type Fonts = HashMap<ObjectId, Rc<Font>>;

/// A font as far as text needs it: what its codes say and how wide its glyphs are. Built
/// once per font object of the document.
struct Font {
    codes: Codes,
    widths: Widths,
}

enum Codes {
    /// A simple font: one byte a code, the text of each (none for a code nothing maps).
    Simple(Vec<Option<String>>),
    /// A Type0 font: two bytes a code (Identity-H and the UCS-2 CMaps; mixed-length CMaps are
    /// read two bytes at a time too), told by its ToUnicode map, or read as UTF-16 when its
    /// CMap is a predefined UCS-2 one (`UniJIS-UCS2-H`). Without either, its codes are glyph
    /// ids that tell nothing.
    Cid {
        unicode: Option<Encoding<'static>>,
        ucs2: bool,
    },
}

enum Widths {
    /// A simple font: `Widths[code - FirstChar]`, in glyph units of `unit` text space.
    Simple {
        first: i64,
        widths: Vec<f32>,
        missing: f32,
        unit: f32,
    },
    /// A CID font: `W` ranges over CIDs, `DW` the rest, in thousandths.
    Cid {
        ranges: Vec<(u32, u32, Vec<f32>)>,
        default: f32,
    },
}

impl Widths {
    /// The advance of `code`, in text space units per unit of font size.
    fn of(&self, code: u32) -> f32 {
        match self {
            Widths::Simple {
                first,
                widths,
                missing,
                unit,
            } => {
                let at = i64::from(code) - first;
                let w = usize::try_from(at)
                    .ok()
                    .and_then(|i| widths.get(i))
                    .copied()
                    .filter(|w| *w > 0.0)
                    .unwrap_or(*missing);
                w * unit
            }
            Widths::Cid { ranges, default } => {
                let w = ranges
                    .iter()
                    .find(|(lo, hi, _)| (*lo..=*hi).contains(&code))
                    .map(|(lo, _, ws)| {
                        let i = (code - lo) as usize;
                        // `c [w1 w2 …]` lists one width each; `c1 c2 w` one for all.
                        ws.get(i).or(ws.first()).copied().unwrap_or(*default)
                    })
                    .unwrap_or(*default);
                w / 1000.0
            }
        }
    }
}

/// The width a glyph is given when its font says nothing (the standard 14 fonts of old
/// files carry no widths): half an em, the mean of a proportional Latin font.
const DEFAULT_WIDTH: f32 = 500.0;

impl Font {
    fn new(dict: &Dictionary, doc: &Document) -> Font {
        let subtype = get(doc, dict, b"Subtype")
            .and_then(|o| o.as_name().ok())
            .unwrap_or(b"");
        let unicode = to_unicode(dict, doc);
        if subtype == b"Type0" {
            let ucs2 = get(doc, dict, b"Encoding")
                .and_then(|o| o.as_name().ok())
                .is_some_and(|n| {
                    n.starts_with(b"Uni") && (n.ends_with(b"UCS2-H") || n.ends_with(b"UTF16-H"))
                });
            return Font {
                codes: Codes::Cid { unicode, ucs2 },
                widths: cid_widths(dict, doc),
            };
        }
        let base_font = get(doc, dict, b"BaseFont")
            .and_then(|o| o.as_name().ok())
            .unwrap_or(b"");
        // A subset's name is its family after six letters and a plus: ABCDEF+Symbol.
        let family = base_font.rsplit(|b| *b == b'+').next().unwrap_or(base_font);
        let symbol = family == b"Symbol" && !dict.has(b"Encoding");
        Font {
            codes: Codes::Simple(simple_codes(dict, doc, unicode.as_ref(), symbol)),
            widths: simple_widths(dict, doc, subtype == b"Type3", symbol),
        }
    }

    fn two_byte(&self) -> bool {
        matches!(self.codes, Codes::Cid { .. })
    }

    /// The text of one code (its value).
    fn decode(&self, value: u32, out: &mut String) {
        match &self.codes {
            Codes::Simple(table) => {
                if let Some(Some(text)) = usize::try_from(value).ok().and_then(|i| table.get(i)) {
                    out.push_str(text);
                }
            }
            Codes::Cid { unicode, ucs2 } => {
                let units = match unicode {
                    Some(Encoding::UnicodeMapEncoding(map)) => map.get(value, 2),
                    _ => None,
                };
                let units =
                    units.or_else(|| ucs2.then(|| vec![u16::try_from(value).unwrap_or(0xfffd)]));
                match units {
                    Some(units) => out.extend(
                        char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)),
                    ),
                    None => out.push(char::REPLACEMENT_CHARACTER),
                }
            }
        }
    }
}

/// The font's ToUnicode map, read by lopdf from a font dictionary that holds only the map
/// (lopdf reads a font's `Encoding` in preference to its map, where the map should come
/// first).
fn to_unicode(dict: &Dictionary, doc: &Document) -> Option<Encoding<'static>> {
    let map = dict.get(b"ToUnicode").ok()?;
    deref(doc, map)?.as_stream().ok()?;
    let mut only = Dictionary::new();
    only.set("Type", Object::Name(b"Font".to_vec()));
    only.set("ToUnicode", map.clone());
    match only.get_font_encoding_with_limit(doc, STREAM_LIMIT).ok()? {
        // The map is owned: it outlives the dictionary it was read through.
        Encoding::UnicodeMapEncoding(map) => Some(Encoding::UnicodeMapEncoding(map)),
        _ => None,
    }
}

/// What each code of a simple font says, by the first of: its ToUnicode map; the
/// `Differences` of its `Encoding`; the Symbol font's own encoding; the base encoding
/// (`BaseEncoding`, a named `Encoding`, else the standard one).
fn simple_codes(
    dict: &Dictionary,
    doc: &Document,
    unicode: Option<&Encoding>,
    symbol: bool,
) -> Vec<Option<String>> {
    let encoding = get(doc, dict, b"Encoding");
    let (base_name, differences) = match encoding {
        Some(Object::Name(name)) => (Some(name.as_slice()), None),
        Some(Object::Dictionary(enc)) => (
            get(doc, enc, b"BaseEncoding").and_then(|o| o.as_name().ok()),
            get(doc, enc, b"Differences").and_then(|o| o.as_array().ok()),
        ),
        _ => (None, None),
    };
    let mut base_dict = Dictionary::new();
    base_dict.set("Type", Object::Name(b"Font".to_vec()));
    if let Some(name) = base_name {
        base_dict.set("Encoding", Object::Name(name.to_vec()));
    }
    let base = base_dict
        .get_font_encoding_with_limit(doc, STREAM_LIMIT)
        .ok();
    let mut named: Vec<Option<String>> = vec![None; 256];
    if let Some(list) = differences {
        let mut code = 0usize;
        for item in list {
            match item {
                Object::Integer(n) => code = usize::try_from(*n).unwrap_or(256),
                Object::Name(name) => {
                    if let Some(slot) = named.get_mut(code) {
                        *slot = glyph_text(name, doc);
                    }
                    code = code.saturating_add(1);
                }
                _ => {}
            }
        }
    }
    let map = match unicode {
        Some(Encoding::UnicodeMapEncoding(map)) => Some(map),
        _ => None,
    };
    (0..=255u8)
        .map(|code| {
            let value = u32::from(code);
            // Some producers (groff) write a simple font's map with two-byte codes.
            if let Some(units) = map.and_then(|m| m.get(value, 1).or_else(|| m.get(value, 2))) {
                return Some(
                    char::decode_utf16(units)
                        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                        .collect(),
                );
            }
            if let Some(text) = named[usize::from(code)].take() {
                return Some(text);
            }
            if symbol {
                if let Some(c) = symbol_greek(value) {
                    return Some(c.to_string());
                }
            }
            let mut text = String::new();
            base.as_ref()?.write_to_string(&[code], &mut text).ok()?;
            Some(text).filter(|t| !t.is_empty())
        })
        .collect()
}

/// The text of a glyph name: lopdf's glyph list (through an encoding of that one name), else
/// the `uniXXXX` and `uXXXX` forms of the Adobe Glyph List specification.
fn glyph_text(name: &[u8], doc: &Document) -> Option<String> {
    if name == b".notdef" {
        return None;
    }
    let mut encoding = Dictionary::new();
    encoding.set(
        "Differences",
        Object::Array(vec![Object::Integer(0), Object::Name(name.to_vec())]),
    );
    let mut font = Dictionary::new();
    font.set("Type", Object::Name(b"Font".to_vec()));
    font.set("Encoding", Object::Dictionary(encoding));
    // An unknown name makes lopdf fall back to the standard encoding: only its Differences
    // answer counts.
    if let Ok(found @ Encoding::Differences(_)) = font.get_font_encoding(doc) {
        let mut text = String::new();
        if found.write_to_string(&[0], &mut text).is_ok() && !text.is_empty() {
            return Some(text);
        }
    }
    let name = std::str::from_utf8(name).ok()?;
    let hex = |digits: &str| {
        u32::from_str_radix(digits, 16)
            .ok()
            .and_then(char::from_u32)
    };
    if let Some(groups) = name
        .strip_prefix("uni")
        .filter(|g| g.len() % 4 == 0 && !g.is_empty())
    {
        return (0..groups.len() / 4)
            .map(|i| groups.get(i * 4..i * 4 + 4).and_then(hex))
            .collect();
    }
    name.strip_prefix('u')
        .filter(|d| (4..=6).contains(&d.len()))
        .and_then(hex)
        .map(String::from)
}

/// The widths of the Symbol font's space and Greek letters (its AFM file), for a PDF that
/// uses the font without giving them; the rest get [`DEFAULT_WIDTH`].
fn symbol_widths() -> Vec<f32> {
    const UPPER: [u16; 26] = [
        722, 667, 722, 612, 611, 763, 603, 722, 333, 631, 722, 686, 889, 722, 722, 768, 741, 556,
        592, 611, 690, 439, 768, 645, 795, 611,
    ];
    const LOWER: [u16; 26] = [
        631, 549, 549, 494, 439, 521, 411, 603, 329, 603, 549, 549, 576, 521, 549, 549, 521, 549,
        603, 439, 576, 713, 686, 493, 686, 494,
    ];
    let mut widths = vec![DEFAULT_WIDTH; 256];
    widths[0x20] = 250.0;
    for (i, (upper, lower)) in UPPER.iter().zip(LOWER).enumerate() {
        widths[0x41 + i] = f32::from(*upper);
        widths[0x61 + i] = f32::from(lower);
    }
    widths
}

/// The Greek letters of the Symbol font's encoding, at the codes of the Latin letters.
fn symbol_greek(code: u32) -> Option<char> {
    const UPPER: &str = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ";
    const LOWER: &str = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ";
    let (letters, from) = match code {
        0x41..=0x5a => (UPPER, 0x41),
        0x61..=0x7a => (LOWER, 0x61),
        _ => return None,
    };
    letters.chars().nth(usize::try_from(code - from).ok()?)
}

fn deref<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Object> {
    doc.dereference(object).ok().map(|(_, o)| o)
}

fn get<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    dict.get(key).ok().and_then(|o| deref(doc, o))
}

fn simple_widths(dict: &Dictionary, doc: &Document, type3: bool, symbol: bool) -> Widths {
    let first = get(doc, dict, b"FirstChar")
        .and_then(|o| o.as_i64().ok())
        .unwrap_or(0);
    let widths = get(doc, dict, b"Widths")
        .and_then(|o| o.as_array().ok())
        .map(|a| {
            a.iter()
                .map(|w| deref(doc, w).and_then(number).unwrap_or(0.0))
                .collect()
        });
    let (first, widths) = match widths {
        Some(widths) => (first, widths),
        None if symbol => (0, symbol_widths()),
        None => (first, Vec::new()),
    };
    let missing = get(doc, dict, b"FontDescriptor")
        .and_then(|o| o.as_dict().ok())
        .and_then(|d| get(doc, d, b"MissingWidth"))
        .and_then(number)
        .filter(|w| *w > 0.0);
    // A Type3 font's widths are in its glyph space, which FontMatrix maps to text space.
    let unit = if type3 {
        get(doc, dict, b"FontMatrix")
            .and_then(|o| o.as_array().ok())
            .and_then(|a| a.first())
            .and_then(number)
            .filter(|u| *u > 0.0)
            .unwrap_or(0.001)
    } else {
        0.001
    };
    let missing = missing.unwrap_or(if type3 { 0.0 } else { DEFAULT_WIDTH });
    Widths::Simple {
        first,
        widths,
        missing,
        unit,
    }
}

fn cid_widths(dict: &Dictionary, doc: &Document) -> Widths {
    let descendant = get(doc, dict, b"DescendantFonts")
        .and_then(|o| o.as_array().ok())
        .and_then(|a| a.first())
        .and_then(|o| deref(doc, o))
        .and_then(|o| o.as_dict().ok());
    let default = descendant
        .and_then(|d| get(doc, d, b"DW"))
        .and_then(number)
        .unwrap_or(1000.0);
    let mut ranges = Vec::new();
    let list = descendant
        .and_then(|d| get(doc, d, b"W"))
        .and_then(|o| o.as_array().ok());
    if let Some(list) = list {
        let mut items = list.iter().map(|o| deref(doc, o));
        while let Some(Some(start)) = items.next() {
            let Some(lo) = number(start).map(|n| n as u32) else {
                break;
            };
            match items.next() {
                Some(Some(Object::Array(ws))) => {
                    let ws: Vec<f32> = ws
                        .iter()
                        .map(|w| deref(doc, w).and_then(number).unwrap_or(default))
                        .collect();
                    let hi = lo.saturating_add((ws.len() as u32).saturating_sub(1));
                    ranges.push((lo, hi, ws));
                }
                Some(Some(end)) => {
                    let (Some(hi), Some(Some(w))) = (
                        number(end).map(|n| n as u32),
                        items.next().map(|w| w.and_then(number)),
                    ) else {
                        break;
                    };
                    ranges.push((lo, hi, vec![w]));
                }
                _ => break,
            }
        }
    }
    Widths::Cid { ranges, default }
}

/// The resource dictionaries in force, nearest first.
type Resources<'d> = Vec<&'d Dictionary>;

/// The page's text, or why its content streams cannot be decoded (one inflates past
/// [`STREAM_LIMIT`]).
fn page_text(
    doc: &Document,
    page_id: ObjectId,
    fonts: &mut Fonts,
) -> std::result::Result<String, String> {
    let mut resources = Vec::new();
    if let Ok((direct, ids)) = doc.get_page_resources(page_id) {
        resources.extend(direct);
        resources.extend(ids.into_iter().filter_map(|id| doc.get_dictionary(id).ok()));
    }
    let content = doc
        .get_page_content_with_limit(page_id, STREAM_LIMIT)
        .map_err(|e| match e {
            lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { limit }) => {
                format!("a content stream inflates past {} MiB", limit >> 20)
            }
            e => e.to_string(),
        })?;
    let mut page = Page {
        doc,
        text: String::new(),
        pen: None,
        fonts,
    };
    let mut forms = Vec::new();
    page.walk(&content, &resources, Matrix::IDENTITY, &mut forms);
    Ok(tidy(&page.text))
}

/// Each line without the spaces at its ends, no blank lines at either end, and a final
/// newline unless empty; a word hyphenated at the end of a line is joined again (as
/// `pdftotext` does, so that a search for "report" finds "re-" / "port").
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    let mut lines = text.lines().map(str::trim_end).peekable();
    while let Some(line) = lines.next() {
        let next_starts_lower = lines
            .peek()
            .and_then(|next| next.chars().next())
            .is_some_and(char::is_lowercase);
        let mut end = line.chars().rev();
        let hyphenated = matches!(end.next(), Some('-' | '\u{ad}' | '\u{2010}'))
            && end.next().is_some_and(char::is_alphabetic);
        if hyphenated && next_starts_lower {
            out.push_str(&line[..line.len() - line.chars().last().map_or(0, char::len_utf8)]);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let trimmed = out.trim_matches('\n');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}\n")
    }
}

/// The font `name` of the resources: its object id (None for a font written into the
/// resources) and dictionary.
fn font<'d>(
    doc: &'d Document,
    resources: &[&'d Dictionary],
    name: &[u8],
) -> Option<(Option<ObjectId>, &'d Dictionary)> {
    for res in resources {
        let Some(table) = get(doc, res, b"Font").and_then(|o| o.as_dict().ok()) else {
            continue;
        };
        let Ok(value) = table.get(name) else {
            continue;
        };
        let id = value.as_reference().ok();
        return Some((id, deref(doc, value)?.as_dict().ok()?));
    }
    None
}

/// The form XObject `name` of the resources: its id, content, matrix and own resources.
fn form<'d>(
    doc: &'d Document,
    resources: &[&'d Dictionary],
    name: &[u8],
) -> Option<(ObjectId, Vec<u8>, Matrix, Option<&'d Dictionary>)> {
    for res in resources {
        let Some(table) = get(doc, res, b"XObject").and_then(|o| o.as_dict().ok()) else {
            continue;
        };
        let Ok(value) = table.get(name) else {
            continue;
        };
        let id = value.as_reference().ok()?;
        let stream = doc.get_object(id).ok()?.as_stream().ok()?;
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok()? != b"Form" {
            return None;
        }
        let content = stream.get_plain_content_with_limit(STREAM_LIMIT).ok()?;
        let matrix = get(doc, &stream.dict, b"Matrix")
            .and_then(|o| o.as_array().ok())
            .and_then(|a| Matrix::of(a))
            .unwrap_or(Matrix::IDENTITY);
        let own = get(doc, &stream.dict, b"Resources").and_then(|o| o.as_dict().ok());
        return Some((id, content, matrix, own));
    }
    None
}

impl<'d> Page<'d, '_> {
    /// The font `name` of the resources, read once per font object.
    fn font(&mut self, resources: &[&'d Dictionary], name: &[u8]) -> Option<Rc<Font>> {
        let (id, dict) = font(self.doc, resources, name)?;
        if let Some(found) = id.and_then(|id| self.fonts.get(&id)) {
            return Some(Rc::clone(found));
        }
        let made = Rc::new(Font::new(dict, self.doc));
        if let Some(id) = id {
            self.fonts.insert(id, Rc::clone(&made));
        }
        Some(made)
    }

    /// The text shown by a content stream (a page's, or a form's drawn with `ctm`).
    /// `forms` holds the forms being drawn, to refuse a form that draws itself.
    // Long: one match over a content stream's operators, one arm per operator, all updating the
    // one text state (matrices, font, saved states) that PDF defines for the stream.
    fn walk(
        &mut self,
        content: &[u8],
        resources: &[&'d Dictionary],
        ctm: Matrix,
        forms: &mut Vec<ObjectId>,
    ) {
        let doc = self.doc;
        // The fonts this stream selected, by name (None: no such font).
        let mut by_name: HashMap<Vec<u8>, Option<Rc<Font>>> = HashMap::new();
        let mut state = TextState::new(ctm);
        let mut saved: Vec<TextState> = Vec::new();
        let mut tm = Matrix::IDENTITY;
        let mut tlm = Matrix::IDENTITY;
        // A damaged stream yields its operations up to the damage.
        for op in Content::decode_iter(content).map_while(|op| op.ok()) {
            let operands = &op.operands;
            let num = |i: usize| operands.get(i).and_then(number);
            match op.operator.as_str() {
                "q" if saved.len() < SAVE_DEPTH => saved.push(state.clone()),
                "Q" => {
                    if let Some(s) = saved.pop() {
                        state = s;
                    }
                }
                "cm" => {
                    if let Some(m) = Matrix::of(operands) {
                        state.ctm = m.then(state.ctm);
                    }
                }
                "BT" => {
                    tm = Matrix::IDENTITY;
                    tlm = Matrix::IDENTITY;
                }
                "Tf" => {
                    if let (Some(Object::Name(name)), Some(size)) = (operands.first(), num(1)) {
                        state.font = Some(name.clone());
                        state.size = size;
                    }
                }
                "Tc" => state.char_spacing = num(0).unwrap_or(state.char_spacing),
                "Tw" => state.word_spacing = num(0).unwrap_or(state.word_spacing),
                "Tz" => state.scale = num(0).map_or(state.scale, |s| s / 100.0),
                "TL" => state.leading = num(0).unwrap_or(state.leading),
                "Ts" => state.rise = num(0).unwrap_or(state.rise),
                "Td" | "TD" => {
                    if let (Some(x), Some(y)) = (num(0), num(1)) {
                        if op.operator == "TD" {
                            state.leading = -y;
                        }
                        tlm = Matrix::translate(x, y).then(tlm);
                        tm = tlm;
                    }
                }
                "Tm" => {
                    if let Some(m) = Matrix::of(operands) {
                        tlm = m;
                        tm = m;
                    }
                }
                "T*" => {
                    tlm = Matrix::translate(0.0, -state.leading).then(tlm);
                    tm = tlm;
                }
                "Tj" | "'" | "\"" | "TJ" => {
                    if op.operator == "\"" {
                        state.word_spacing = num(0).unwrap_or(state.word_spacing);
                        state.char_spacing = num(1).unwrap_or(state.char_spacing);
                    }
                    if op.operator != "Tj" && op.operator != "TJ" {
                        tlm = Matrix::translate(0.0, -state.leading).then(tlm);
                        tm = tlm;
                    }
                    let Some(name) = state.font.as_deref() else {
                        continue;
                    };
                    if !by_name.contains_key(name) {
                        let found = self.font(resources, name);
                        by_name.insert(name.to_vec(), found);
                    }
                    let Some(Some(font)) = by_name.get(name).cloned() else {
                        continue;
                    };
                    let font = font.as_ref();
                    let shown = if op.operator == "\"" {
                        operands.get(2)
                    } else {
                        operands.first()
                    };
                    match shown {
                        Some(Object::String(bytes, _)) => {
                            self.show(bytes, font, &state, &mut tm);
                        }
                        Some(Object::Array(items)) if op.operator == "TJ" => {
                            for item in items {
                                match item {
                                    Object::String(bytes, _) => {
                                        self.show(bytes, font, &state, &mut tm);
                                    }
                                    other => {
                                        if let Some(n) = number(other) {
                                            let tx = -n / 1000.0 * state.size * state.scale;
                                            tm = Matrix::translate(tx, 0.0).then(tm);
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
                "Do" if forms.len() < FORM_DEPTH => {
                    let Some(Object::Name(name)) = operands.first() else {
                        continue;
                    };
                    let Some((id, content, matrix, own)) = form(doc, resources, name) else {
                        continue;
                    };
                    if forms.contains(&id) {
                        continue;
                    }
                    let inner: Resources<'d> = match own {
                        Some(own) => vec![own],
                        None => resources.to_vec(),
                    };
                    forms.push(id);
                    self.walk(&content, &inner, matrix.then(state.ctm), forms);
                    forms.pop();
                }
                _ => {}
            }
        }
    }

    /// The glyphs of one string, each placed and then advanced past.
    fn show(&mut self, bytes: &[u8], font: &Font, state: &TextState, tm: &mut Matrix) {
        let step = if font.two_byte() { 2 } else { 1 };
        let size = state.size;
        let scale = state.scale;
        let glyph_space = Matrix([size * scale, 0.0, 0.0, size, 0.0, state.rise]);
        let mut decoded = String::new();
        for code in bytes.chunks(step) {
            let trm = glyph_space.then(*tm).then(state.ctm);
            // The origin on the baseline: a superscript's rise does not part it from its word.
            let start = tm.then(state.ctm).origin();
            let dir_len = length(trm.0[0], trm.0[1]);
            let dir = if dir_len > 0.0 {
                (trm.0[0] / dir_len, trm.0[1] / dir_len)
            } else {
                (1.0, 0.0)
            };
            let height = length(trm.0[2], trm.0[3]);
            let value = code.iter().fold(0u32, |v, b| (v << 8) | u32::from(*b));
            decoded.clear();
            font.decode(value, &mut decoded);
            self.place(start, height);
            for c in decoded.chars() {
                self.push(c);
            }
            let width = font.widths.of(value) * size * scale;
            let end = Matrix::translate(width, 0.0)
                .then(*tm)
                .then(state.ctm)
                .origin();
            let mut spacing = state.char_spacing;
            if step == 1 && value == 32 {
                spacing += state.word_spacing;
            }
            *tm = Matrix::translate(width + spacing * scale, 0.0).then(*tm);
            self.pen = Some(Pen { end, dir, height });
        }
    }

    /// Start a new line or word before a glyph at `start`, as its distance from the end of
    /// the previous one tells.
    fn place(&mut self, start: (f32, f32), height: f32) {
        let Some(pen) = self.pen else {
            return;
        };
        let height = pen.height.max(height);
        if height <= 0.0 || !height.is_finite() {
            return;
        }
        let (dx, dy) = (start.0 - pen.end.0, start.1 - pen.end.1);
        let along = dx * pen.dir.0 + dy * pen.dir.1;
        let across = pen.dir.0 * dy - pen.dir.1 * dx;
        if across.abs() > LINE_SHIFT * height {
            self.newline();
            // A gap of a blank line or more between lines: a new paragraph.
            if across.abs() > PARAGRAPH_SHIFT * height {
                self.text.push('\n');
            }
        } else if along > WORD_GAP * height || along < -height {
            self.space();
        }
    }

    fn push(&mut self, c: char) {
        match c {
            '\0' => {}
            ' ' => self.space(),
            c if c.is_control() || c.is_whitespace() => self.space(),
            c => match ligature(c) {
                Some(letters) => self.text.push_str(letters),
                None => self.text.push(c),
            },
        }
    }

    fn space(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with([' ', '\n']) {
            self.text.push(' ');
        }
    }

    fn newline(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }
}

/// How far, in ems of the larger of two glyphs, the baseline must move for a new line.
const LINE_SHIFT: f32 = 0.5;

/// How far, in ems, for a blank line between two lines (line spacing is about 1.2 em).
const PARAGRAPH_SHIFT: f32 = 1.9;

/// The gap, in ems, that starts a new word: a space is 0.25 to 0.33 em in most fonts, and
/// kerning stays within 0.1 em.
const WORD_GAP: f32 = 0.15;

/// The length of (x, y). Not `f32::hypot`: that is the C library's `hypotf`, the only reason
/// the binary that links this would load libm at every start; a text matrix's entries are
/// far from where squaring them overflows, and a huge or NaN one only misplaces the text.
fn length(x: f32, y: f32) -> f32 {
    (x * x + y * y).sqrt()
}

/// The letters of a Latin ligature (as `pdftotext` writes them, so that a search for "first"
/// finds "ﬁrst").
fn ligature(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{fb00}' => "ff",
        '\u{fb01}' => "fi",
        '\u{fb02}' => "fl",
        '\u{fb03}' => "ffi",
        '\u{fb04}' => "ffl",
        '\u{fb05}' | '\u{fb06}' => "st",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{dictionary, Stream};

    const TO_UNICODE: &str = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap \
        /CMapName /Test def 1 begincodespacerange <0000> <FFFF> endcodespacerange \
        3 beginbfchar <0001> <0416> <0002> <6F22> <0003> <0020> endbfchar endcmap \
        CMapName currentdict /CMap defineresource pop end end";

    /// A PDF with a page per content stream, the fonts F1 (simple, every glyph 600/1000 em
    /// wide, WinAnsi) and F2 (Type0, Identity-H, a ToUnicode map: 1 Ж, 2 漢, 3 space), and the
    /// form XObjects Fm1 (its content `form`) and Loop (which draws itself, then shows "Loop").
    fn pdf(pages: &[&str], form: &str) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let f1 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier",
            "Encoding" => "WinAnsiEncoding", "FirstChar" => 32,
            "Widths" => (32..127).map(|_| Object::Integer(600)).collect::<Vec<_>>(),
        });
        let map = doc.add_object(Stream::new(dictionary! {}, TO_UNICODE.as_bytes().to_vec()));
        let cid = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "Test", "DW" => 1000,
        });
        let f2 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "Test",
            "Encoding" => "Identity-H", "DescendantFonts" => vec![cid.into()], "ToUnicode" => map,
        });
        let form_id = doc.add_object(Stream::new(
            dictionary! {"Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 600.into(), 800.into()]},
            form.as_bytes().to_vec(),
        ));
        let loop_id = doc.new_object_id();
        let loop_form = Stream::new(
            dictionary! {"Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 600.into(), 800.into()],
            "Resources" => dictionary! {
                "Font" => dictionary! {"F1" => f1},
                "XObject" => dictionary! {"Loop" => loop_id},
            }},
            b"/Loop Do BT /F1 10 Tf 72 100 Td (Loop) Tj ET".to_vec(),
        );
        doc.objects.insert(loop_id, Object::Stream(loop_form));
        let resources = doc.add_object(dictionary! {
            "Font" => dictionary! {"F1" => f1, "F2" => f2},
            "XObject" => dictionary! {"Fm1" => form_id, "Loop" => loop_id},
        });
        let kids: Vec<Object> = pages
            .iter()
            .map(|content| {
                let content =
                    doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
                doc.add_object(dictionary! {
                    "Type" => "Page", "Parent" => pages_id, "Contents" => content,
                })
                .into()
            })
            .collect();
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Count" => i64::try_from(kids.len()).unwrap_or(0),
                "Kids" => kids, "Resources" => resources,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        doc.save_to(&mut out).expect("save");
        out
    }

    fn all(max_bytes: u64) -> PdfRequest {
        PdfRequest {
            offset: 1,
            limit: u64::MAX,
            max_bytes,
        }
    }

    fn pages(bytes: Vec<u8>) -> Vec<String> {
        text(bytes, all(1 << 20))
            .expect("read")
            .pages
            .into_iter()
            .map(|p| p.text)
            .collect()
    }

    #[test]
    fn words_and_lines_come_from_where_the_glyphs_are() {
        // 10 pt Courier: each glyph 6 pt wide.
        let page = "BT /F1 10 Tf 72 700 Td (Hel) Tj 18 0 Td (lo) Tj \
                    [-300 (wor) -50 (ld) -300 (again) -300] TJ 3 Tc (AT) Tj 0 Tc \
                    0 -12 Td (next) Tj 0 -40 Td (far) Tj ET \
                    BT /F1 10 Tf 1 0 0 1 72 500 Tm (x) Tj 5 Ts (2) Tj 0 Ts ( y) Tj ET";
        assert_eq!(
            pages(pdf(&[page], "")),
            ["Hello world again A T\nnext\n\nfar\n\nx2 y\n"]
        );
    }

    #[test]
    fn two_byte_codes_are_read_through_the_tounicode_map() {
        let page = "BT /F2 10 Tf 72 700 Td <0001000200030001> Tj <0009> Tj ET";
        assert_eq!(pages(pdf(&[page], "")), ["Ж漢 Ж\u{fffd}\n"]);
    }

    #[test]
    fn text_inside_forms_is_read_and_a_form_that_draws_itself_ends() {
        let page = "q 1 0 0 1 0 -100 cm /Fm1 Do Q /Loop Do BT /F1 10 Tf 72 700 Td (Page) Tj ET";
        let form = "BT /F1 10 Tf 72 700 Td (Inside) Tj ET";
        assert_eq!(pages(pdf(&[page], form)), ["Inside\n\nLoop\n\nPage\n"]);
    }

    #[test]
    fn pages_are_asked_for_by_number_and_bounded_by_size() {
        let doc = pdf(
            &[
                "BT /F1 10 Tf 72 700 Td (One) Tj ET",
                "BT /F1 10 Tf 72 700 Td (Two) Tj ET",
                "BT /F1 10 Tf 72 700 Td (Three) Tj ET",
            ],
            "",
        );
        let ask = |offset, limit, max_bytes| {
            text(
                doc.clone(),
                PdfRequest {
                    offset,
                    limit,
                    max_bytes,
                },
            )
        };
        let found = ask(2, 5, 100).expect("read");
        assert_eq!(found.total_pages, 3);
        assert_eq!(
            found.pages,
            [
                PdfPage {
                    number: 2,
                    text: "Two\n".into()
                },
                PdfPage {
                    number: 3,
                    text: "Three\n".into()
                }
            ]
        );
        let cut = ask(1, 3, 9).expect("read");
        assert_eq!(cut.pages.len(), 2);
        assert!(ask(4, 1, 100).expect("read").pages.is_empty());
        let over = ask(3, 1, 5).expect_err("a page over the bound");
        assert_eq!(over.code(), "file_too_large");
    }

    #[test]
    fn cut_and_scrambled_files_are_errors_never_panics() {
        let doc = pdf(&["BT /F1 10 Tf 72 700 Td (Hello) Tj ET"], "");
        let mut variants: Vec<Vec<u8>> = (0..doc.len())
            .step_by(doc.len() / 60 + 1)
            .map(|cut| doc[..cut].to_vec())
            .collect();
        for at in (0..doc.len()).step_by(doc.len() / 60 + 1) {
            let mut flipped = doc.clone();
            flipped[at] ^= 0x55;
            variants.push(flipped);
        }
        variants.push(b"%PDF-1.7\n".to_vec());
        variants.push(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 1 0 R >> endobj\n".to_vec());
        for bytes in variants {
            match text(bytes, all(1 << 20)) {
                Ok(_) => {}
                Err(e) => assert_eq!(e.code(), "binary_file", "{}", e.message()),
            }
        }
    }

    #[test]
    fn matrices_compose_as_pdf_writes_them() {
        let m = Matrix::translate(10.0, 20.0).then(Matrix([2.0, 0.0, 0.0, 2.0, 1.0, 1.0]));
        assert_eq!(m.origin(), (21.0, 41.0));
        assert_eq!(Matrix::IDENTITY.then(m), m);
    }

    #[test]
    fn pages_are_tidied() {
        assert_eq!(tidy("  \n\na b  \nc\n\n"), "a b\nc\n");
        assert_eq!(tidy(" \n "), "");
        assert_eq!(
            tidy("a re-\nport\nself-\nContained 2-\nx\n"),
            "a report\nself-\nContained 2-\nx\n"
        );
    }
}
