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

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn cuts_at_characters_and_counts_the_bytes_dropped() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc… [1 more bytes]");
        assert_eq!(shorten("ééé", 1), "é… [4 more bytes]");
        assert_eq!(shorten("", 0), "");
    }
}
