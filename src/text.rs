//! Small text helpers shared by every layer (messages, results, the driver's screen).

/// Shorten a line for display, marking what was cut: at most `max_chars` characters are kept,
/// followed by `… [N more bytes]`.
pub fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => {
            let dropped = text.len() - cut;
            format!("{}… [{dropped} more bytes]", &text[..cut])
        }
    }
}

/// `text` with every character that a terminal would act on or that shows nothing written as
/// an escape (`\x1b`, `\u{202e}`), so that what a person reads is what a program gets: C0 and
/// C1 controls but tab and newline, DEL, bidirectional overrides and isolates, zero-width and
/// other invisible format characters, line and paragraph separators, variation selectors and
/// tag characters. Returns the text and how many characters were escaped.
pub fn visible(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut escaped = 0;
    for c in text.chars() {
        if !hidden(c) {
            out.push(c);
            continue;
        }
        escaped += 1;
        let code = u32::from(c);
        if code < 0x100 {
            out.push_str(&format!("\\x{code:02x}"));
        } else {
            out.push_str(&format!("\\u{{{code:x}}}"));
        }
    }
    (out, escaped)
}

/// Whether a character acts on a terminal or is invisible (see [`visible`]).
fn hidden(c: char) -> bool {
    matches!(u32::from(c),
        0x00..=0x08 | 0x0b..=0x1f | 0x7f..=0x9f
        | 0xad | 0x34f | 0x61c | 0x115f | 0x1160 | 0x17b4 | 0x17b5 | 0x180b..=0x180f
        | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0x3164
        | 0xfe00..=0xfe0f | 0xfeff | 0xffa0 | 0xfff9..=0xfffb
        | 0x1d173..=0x1d17a | 0xe0000..=0xe007f | 0xe0100..=0xe01ef)
}

/// Where `needle` first is in `haystack`. This and the two below search through memchr's SSE2
/// searchers on x86-64, which every such CPU has (memchr decides that at compile time):
/// memchr's generic entries ask the CPU what it supports on their first call (std_detect, a
/// dozen CPUID instructions, each a trap to the hypervisor on a virtual machine), about
/// 0.06 ms of a one-shot tool's call, which is 1 ms in all for a small file's read_file.
pub fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return searcher.find(haystack);
    }
    memchr::memchr(needle, haystack)
}

/// How many times `needle` is in `haystack` (see `find_byte`).
pub fn count_byte(needle: u8, haystack: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return searcher.count(haystack);
    }
    memchr::memchr_iter(needle, haystack).count()
}

/// Each place of `needle` in `haystack`, in order (see `find_byte`).
pub fn byte_positions(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + find_byte(needle, haystack.get(from..)?)?;
        from = at + 1;
        Some(at)
    })
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `word` that JSON escapes in a string, a control character (< 0x20), `"` or
/// `\`, each marked by its high bit. The lowest mark is exact (a borrow can only mark a byte
/// above a marked one), so `trailing_zeros() / 8` is the first such byte; none is missed.
#[inline(always)]
pub fn json_escape_marks(word: u64) -> u64 {
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    below_space | quote | backslash
}

/// Whether `bytes` hold nothing JSON escapes in a string (see [`json_escape_marks`]): then
/// they are the string's JSON as they are, between quotes.
pub fn json_plain(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    let mut marks = 0;
    for word in &mut words {
        marks |= json_escape_marks(u64::from_le_bytes(word.try_into().unwrap_or([0; 8])));
    }
    // The last few bytes padded with spaces, which need no escape.
    let rest = words.remainder();
    let mut padded = [b' '; 8];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    marks | json_escape_marks(u64::from_le_bytes(padded)) == 0
}

#[cfg(test)]
mod tests {
    use super::{byte_positions, count_byte, find_byte, json_plain, shorten, visible};

    #[test]
    fn what_a_terminal_would_act_on_or_hide_is_escaped() {
        assert_eq!(visible("ls -l\tx\n"), ("ls -l\tx\n".to_string(), 0));
        let (shown, n) = visible("git status\x1b[2K\rtouch pwned");
        assert_eq!(shown, "git status\\x1b[2K\\x0dtouch pwned");
        assert_eq!(n, 2);
        // Trojan Source: a right-to-left override and an isolate; a zero-width space; a BOM.
        let (shown, n) = visible("a\u{202e}b\u{2066}c\u{200b}d\u{feff}é");
        assert_eq!(shown, "a\\u{202e}b\\u{2066}c\\u{200b}d\\u{feff}é");
        assert_eq!(n, 4);
        assert_eq!(visible("\u{9b}31m").0, "\\x9b31m");
    }

    #[test]
    fn cuts_at_characters_and_counts_the_bytes_dropped() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc… [1 more bytes]");
        assert_eq!(shorten("ééé", 1), "é… [4 more bytes]");
        assert_eq!(shorten("", 0), "");
    }

    #[test]
    fn byte_searches_agree_with_a_byte_loop() {
        // Every length around the searcher's 16- and 64-byte steps, the needle at every offset
        // of a step, at its edges, in runs, and absent; from aligned and unaligned starts.
        for len in 0..300usize {
            for period in [1usize, 2, 3, 15, 16, 17, 63, 64, 65, 301] {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| {
                        if i % period == period - 1 {
                            b'\n'
                        } else {
                            b'a'
                        }
                    })
                    .collect();
                for start in [0, 1] {
                    let hay = bytes.get(start..).unwrap_or_default();
                    let want: Vec<usize> = (0..hay.len()).filter(|&i| hay[i] == b'\n').collect();
                    let what = format!("len {len}, period {period}, start {start}");
                    assert_eq!(count_byte(b'\n', hay), want.len(), "{what}");
                    assert_eq!(find_byte(b'\n', hay), want.first().copied(), "{what}");
                    assert_eq!(
                        byte_positions(b'\n', hay).collect::<Vec<_>>(),
                        want,
                        "{what}"
                    );
                }
            }
        }
    }

    #[test]
    fn json_plain_text_is_what_json_writes_as_it_is() {
        for plain in [
            "",
            "src/lib.rs",
            "a long path/with spaces/é€😀/and more than 8 bytes",
        ] {
            assert!(json_plain(plain.as_bytes()), "{plain}");
            assert_eq!(
                serde_json::to_string(plain).unwrap(),
                format!("\"{plain}\"")
            );
        }
        for at in 0..20 {
            for odd in ["\"", "\\", "\n", "\u{1}", "\u{1f}"] {
                let s = format!("{}{odd}{}", "a".repeat(at), "b".repeat(20 - at));
                assert!(!json_plain(s.as_bytes()), "{s:?}");
            }
        }
    }
}
