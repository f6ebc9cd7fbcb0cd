//! Writing an outgoing message as JSON, byte for byte what `serde_json::to_writer` writes for
//! the same `Value`, with a string escaper that looks at 8 bytes at a time.
//!
//! Why not serde_json's own writer: a read_file answer carries the file's content twice (the
//! text for the model and `structuredContent`), and serde_json escapes strings one byte at a
//! time through a table (`format_escaped_str`, ~12% of the server's CPU under
//! benches/mcp_bench.sh's 4 KB reads; opt-level 3 for serde_json did not change that
//! measurably). Text needs escaping rarely (quotes, backslashes, control characters such as
//! newlines), so whole runs of 8 bytes without any of them are passed over with a few integer
//! operations and copied in one piece. Numbers are still written by serde_json.

use serde_json::Value;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Append `value` as compact JSON (the same bytes as `serde_json::to_writer`).
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => {
            // Writing into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Whether any of the 8 bytes is a control character (< 0x20), `"` or `\` (exact: no byte
/// is reported that is not there, none is missed).
fn needs_escape(word: u64) -> bool {
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    (below_space | quote | backslash) != 0
}

/// Append `s` as a JSON string, escaped as serde_json escapes it.
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0; // bytes before this are in `out`
    let mut at = 0;
    while at < bytes.len() {
        if let Some(Ok(word)) = bytes.get(at..at + 8).map(<[u8; 8]>::try_from) {
            if !needs_escape(u64::from_le_bytes(word)) {
                at += 8;
                continue;
            }
        }
        // This group of 8 (or the last few bytes) holds something to escape: byte by byte.
        let end = (at + 8).min(bytes.len());
        while at < end {
            let byte = bytes[at];
            if byte < 0x20 || byte == b'"' || byte == b'\\' {
                out.extend_from_slice(&bytes[copied..at]);
                write_escape(out, byte);
                copied = at + 1;
            }
            at += 1;
        }
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
    out.extend_from_slice(&[b'\\', short]);
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
        // Every ASCII byte, at every offset within a group of 8, and non-ASCII text.
        let all: String = (0u8..=0x7f).map(char::from).collect();
        for shift in 0..9 {
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
