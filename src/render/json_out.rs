//! Writing an outgoing message as JSON, byte for byte what `serde_json::to_writer` writes for
//! the same `Value`, with a string escaper that looks at 16 bytes at a time.
//!
//! Why not serde_json's own writer: a read_file answer carries the file's content twice (the
//! text for the model and `structuredContent`), and serde_json escapes strings one byte at a
//! time through a table (`format_escaped_str`, ~12% of the server's CPU under
//! benches/mcp_bench.sh's 4 KB reads; opt-level 3 for serde_json did not change that
//! measurably). Text needs escaping rarely (quotes, backslashes, control characters such as
//! newlines), so whole runs of bytes without any of them are passed over with a few integer
//! operations and copied in one piece; and the content's second time is copied from its first
//! escaped bytes. Numbers are still written by serde_json.
//!
//! sneaky-find's answer is mostly paths, up to a million of them: `write_str` writes each
//! (`tools::find`), in two thirds of the instructions serde_json took.

use std::ops::Range;

use serde_json::Value;

use crate::text::json_escape_marks as escape_marks;

/// Append `value` as compact JSON (the same bytes as `serde_json::to_writer`).
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    Writer { out, last: None }.value(value);
}

/// Strings at least this long are remembered as written, for a later one that ends the same.
const LONG: usize = 256;

/// A message being written, and the last long string written in it.
struct Writer<'v, 'o> {
    out: &'o mut Vec<u8>,
    /// The string, and where its escaped bytes (between the quotes) are in `out`.
    last: Option<(&'v str, Range<usize>)>,
}

impl<'v> Writer<'v, '_> {
    fn value(&mut self, value: &'v Value) {
        match value {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            Value::Number(n) => {
                // Writing into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *self.out, n);
            }
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.value(item);
                }
                self.out.push(b']');
            }
            Value::Object(map) => {
                self.out.push(b'{');
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    write_str(self.out, key);
                    self.out.push(b':');
                    self.value(item);
                }
                self.out.push(b'}');
            }
        }
    }

    /// A string; when a long one ends the last long string written (a read's content, after
    /// the text for the model that holds it below a line of its own), its escaped bytes are
    /// copied from there rather than escaped again.
    fn string(&mut self, s: &'v str) {
        if s.len() < LONG {
            return write_str(self.out, s);
        }
        if let Some((last, escaped)) = &self.last {
            if let Some(head) = last.strip_suffix(s) {
                let from = escaped.start + escaped_len(head);
                let to = escaped.end;
                self.out.push(b'"');
                self.out.extend_from_within(from..to);
                self.out.push(b'"');
                return;
            }
        }
        let start = self.out.len() + 1;
        write_str(self.out, s);
        self.last = Some((s, start..self.out.len() - 1));
    }
}

/// How many bytes `s` takes escaped (without the quotes): escaped as `write_str` escapes it,
/// so that the two cannot disagree (`s` is a line, the head before a repeated content).
fn escaped_len(s: &str) -> usize {
    let mut escaped = Vec::with_capacity(s.len() + 2);
    write_str(&mut escaped, s);
    escaped.len() - 2
}

/// The first byte of 16 that JSON escapes, looked at as two words. Inlined: it is the body
/// of `next_escape`'s loop (this build optimizes for size, which left it a call).
#[inline(always)]
fn first_escape_of_16(chunk: &[u8; 16]) -> Option<usize> {
    let (low, high) = chunk.split_at(8);
    let word = |half: &[u8]| u64::from_le_bytes(half.try_into().unwrap_or([0; 8]));
    let (low, high) = (escape_marks(word(low)), escape_marks(word(high)));
    if low != 0 {
        Some((low.trailing_zeros() / 8) as usize)
    } else if high != 0 {
        Some(8 + (high.trailing_zeros() / 8) as usize)
    } else {
        None
    }
}

/// The first byte at or after `at` that JSON escapes: 16 bytes at a time, the last few
/// padded to 16 with spaces and looked at the same way.
fn next_escape(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(at..at + 16) {
        if let Some(i) = first_escape_of_16(chunk.try_into().unwrap_or(&[b' '; 16])) {
            return Some(at + i);
        }
        at += 16;
    }
    let rest = bytes.get(at..).filter(|rest| !rest.is_empty())?;
    let mut padded = [b' '; 16];
    padded.get_mut(..rest.len())?.copy_from_slice(rest);
    first_escape_of_16(&padded).map(|i| at + i)
}

/// Append `s` as a JSON string, escaped as serde_json escapes it: the runs between the bytes
/// to escape are copied whole.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0; // bytes before this are in `out`
    while let Some(at) = next_escape(bytes, copied) {
        out.extend_from_slice(&bytes[copied..at]);
        write_escape(out, bytes[at]);
        copied = at + 1;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
            return;
        }
    };
    // Two pushes: extending by a two-byte slice is a call to memcpy.
    out.push(b'\\');
    out.push(short);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same_as_serde(value: &Value) {
        let mut ours = Vec::new();
        write_value(&mut ours, value);
        let theirs = serde_json::to_vec(value).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[test]
    fn every_character_class_is_escaped_as_serde_json_does() {
        // Every ASCII byte, at every offset within a group of 16, and non-ASCII text.
        let all: String = (0u8..=0x7f).map(char::from).collect();
        for shift in 0..17 {
            let s = format!(
                "{}{all}é€😀\u{2028}{}",
                "a".repeat(shift),
                "b".repeat(shift)
            );
            same_as_serde(&Value::String(s));
        }
        for s in [
            "",
            "\"",
            "\\",
            "\n",
            "abcdefg\"",
            "abcdefgh",
            "abcdefghi\u{1f}",
            "\u{7f}",
        ] {
            same_as_serde(&json!(s));
        }
        let long: String = "line of text with \"quotes\" and \\ and a tab\t\n".repeat(100);
        same_as_serde(&json!(long));
    }

    /// Two bytes to escape, or one beside non-ASCII text (bytes of 0x80 and above), at every
    /// pair of places in and across the groups of 16: each is found, none too early.
    #[test]
    fn escapes_are_found_wherever_they_stand() {
        let specials = ['\n', '\t', '"', '\\', '\u{0}', '\u{1f}', ' ', '!', 'é', '€'];
        for len in [15, 16, 17, 33] {
            for i in 0..len {
                for j in i..len {
                    for (a, b) in [(0, 1), (2, 3), (4, 8), (5, 9), (6, 7)] {
                        let mut text: Vec<char> = vec!['x'; len];
                        text[i] = specials[a];
                        text[j] = specials[b];
                        same_as_serde(&Value::String(text.into_iter().collect()));
                    }
                }
            }
        }
    }

    /// A long string that ends the long one before it (a read's content after the text that
    /// holds it) is copied from its escaped bytes: the same as serde_json, whatever the head
    /// holds to escape; one that does not end it, or a short one, is escaped as usual.
    #[test]
    fn a_string_that_ends_the_last_long_one_is_written_as_serde_json_writes_it() {
        let content = "line \"one\"\n\tline two \\ é\u{1}\n".repeat(20);
        for head in ["", "a.txt (lines 1-40 of 40)\n", "\"q\"\t\u{7}é\n"] {
            let text = format!("{head}{content}");
            same_as_serde(&json!({"content": [{"type": "text", "text": text}],
                                  "structuredContent": {"content": content, "again": content},
                                  "other": format!("{content}x"), "short": "\n"}));
        }
        let long_head = "h".repeat(LONG);
        same_as_serde(&json!([
            format!("{long_head}{content}"),
            content,
            long_head
        ]));
    }

    #[test]
    fn whole_messages_are_written_as_serde_json_writes_them() {
        same_as_serde(&json!({
            "jsonrpc": "2.0", "id": 7, "result": {
                "content": [{"type": "text", "text": "a.txt (lines 1-2 of 2)\na\n\"b\"\n"}],
                "structuredContent": {"path": "a.txt", "total_lines": 2, "truncated": false,
                                      "big": u64::MAX, "neg": -3, "f": 1.5, "e": 1e300,
                                      "none": null, "list": [], "obj": {}},
                "isError": false
            }
        }));
        same_as_serde(&json!({"jsonrpc": "2.0", "id": "s-1", "error": {"code": -32602}}));
    }
}
