//! str_replace's last rungs, tried only when old_str is found neither as written nor with its
//! whitespace forgiven: ways models copy text that no whitespace rule explains. Each is taken
//! only where exactly one placement fits.
//!
//! - `line_numbers`: every line of old_str carries the prefix of a numbered listing
//!   (`  12→`, `12:`, `12\t`, numbers counting up by one); the prefixes are dropped (from
//!   new_str too when all its lines carry them) and old_str is looked for again; where it
//!   occurs more than once, the one at the line the first prefix numbers is taken.
//! - `quotes`: old_str matches once when typographic quotes (‘’“”) are read as straight ones;
//!   the text new_str keeps (its common start and end with old_str) keeps the file's quotes,
//!   and a changed middle with a quote in it is refused (which style it wants is a guess).
//! - `elided`: old_str has lines standing for lines left out (`...`, `// ... existing code ...`,
//!   `# rest unchanged`), and new_str as many: the parts between them each occur once in the
//!   file as whole lines, in order; each is replaced by new_str's part, and the lines left out
//!   stay as they are.

use memchr::memmem;

use super::{splice, whitespace, Loose, Refusal};
use crate::edit::seek::{is_elision, Rung};
use crate::edit::Lines;

/// old_str and new_str (LF) without the prefixes of a numbered listing, when every line of
/// old_str has one, numbered up by one.
fn unnumbered(old: &[u8], new: &[u8]) -> Option<(Vec<u8>, Vec<u8>, usize)> {
    let strip = |text: &[u8]| -> Option<(Vec<u8>, Vec<usize>)> {
        let mut out = Vec::with_capacity(text.len());
        let mut numbers = Vec::new();
        for (k, line) in text.split(|b| *b == b'\n').enumerate() {
            let (n, rest) = listing_prefix(line)?;
            numbers.push(n);
            if k > 0 {
                out.push(b'\n');
            }
            out.extend_from_slice(rest);
        }
        Some((out, numbers))
    };
    let (o, numbers) = strip(old)?;
    if numbers.windows(2).any(|w| w[1] != w[0] + 1) {
        return None;
    }
    let n = if new.is_empty() {
        Vec::new()
    } else {
        match strip(new) {
            Some((n, _)) => n,
            // Prefixes on some lines of new_str only: which ones are text is a guess.
            None if new
                .split(|b| *b == b'\n')
                .any(|l| listing_prefix(l).is_some()) =>
            {
                return None
            }
            None => new.to_vec(),
        }
    };
    Some((o, n, numbers[0]))
}

/// (number, rest) of a line of a numbered listing: spaces, digits, then `→`, `:` or a tab.
fn listing_prefix(line: &[u8]) -> Option<(usize, &[u8])> {
    let spaces = line.iter().take_while(|b| **b == b' ').count();
    let digits = line[spaces..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 7 {
        return None;
    }
    let number: usize = std::str::from_utf8(&line[spaces..spaces + digits])
        .ok()?
        .parse()
        .ok()?;
    let rest = &line[spaces + digits..];
    let rest = rest
        .strip_prefix("→".as_bytes())
        .or_else(|| rest.strip_prefix(b":"))
        .or_else(|| rest.strip_prefix(b"\t"))?;
    Some((number, rest))
}

fn fold_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        c => c,
    }
}

fn is_quote(c: char) -> bool {
    fold_char(c) != c || c == '\'' || c == '"'
}

/// The text with typographic quotes made straight, and for each of its chars the byte offset
/// of the original char (plus the end).
fn folded(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len() + 1);
    for (i, c) in text.char_indices() {
        let f = fold_char(c);
        for _ in 0..f.len_utf8() {
            map.push(i);
        }
        out.push(f);
    }
    map.push(text.len());
    (out, map)
}

fn quotes(file: &Lines<'_>, old: &[u8], new: &[u8], max_len: u64) -> Result<Loose, Refusal> {
    let (Ok(text), Ok(old), Ok(new)) = (
        std::str::from_utf8(file.bytes),
        std::str::from_utf8(old),
        std::str::from_utf8(new),
    ) else {
        return Err(Refusal::NotFound);
    };
    let crlf = file.newline() == b"\r\n";
    let adapt = |s: &str| {
        if crlf {
            s.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            s.to_string()
        }
    };
    let (old, new) = (adapt(old), adapt(new));
    let (ff, map) = folded(text);
    let (fo, _) = folded(&old);
    if fo == old && ff == text {
        // No typographic quote on either side: nothing for this rung to read.
        return Err(Refusal::NotFound);
    }
    let at: Vec<usize> = memmem::find_iter(ff.as_bytes(), fo.as_bytes()).collect();
    let start = match at.as_slice() {
        [] => return Err(Refusal::NotFound),
        [one] if memmem::find(&ff.as_bytes()[one + 1..], fo.as_bytes()).is_none() => *one,
        _ => return Err(Refusal::Loose(Rung::Quotes, lines_of(file, &map, &at))),
    };
    let (a, b) = (map[start], map[start + fo.len()]);
    let span: Vec<char> = text[a..b].chars().collect();
    let old_c: Vec<char> = old.chars().collect();
    let new_c: Vec<char> = new.chars().collect();
    let pre = old_c.iter().zip(&new_c).take_while(|(x, y)| x == y).count();
    let room = old_c.len().min(new_c.len()) - pre;
    let suf = old_c
        .iter()
        .rev()
        .zip(new_c.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let middle = &new_c[pre..new_c.len() - suf];
    let restyled = span.iter().zip(&old_c).any(|(f, o)| f != o);
    if restyled && middle.iter().any(|c| is_quote(*c)) {
        // The text new_str changes had quotes written otherwise than the file's.
        return Err(Refusal::NotFound);
    }
    let mut written = String::new();
    written.extend(&span[..pre]);
    written.extend(middle);
    written.extend(&span[span.len() - suf..]);
    let mut content = Vec::with_capacity(text.len() + written.len());
    content.extend_from_slice(&file.bytes[..a]);
    content.extend_from_slice(written.as_bytes());
    content.extend_from_slice(&file.bytes[b..]);
    if content.len() as u64 > max_len {
        return Err(Refusal::TooLarge(content.len()));
    }
    Ok(Loose {
        content,
        line: file.line_of(a),
        rung: Rung::Quotes,
    })
}

fn lines_of(file: &Lines<'_>, map: &[usize], at: &[usize]) -> Vec<usize> {
    at.iter().map(|p| file.line_of(map[*p])).collect()
}

/// old_str and new_str split at their elision lines into whole-line parts: the replacement
/// of each old part by its new part, where the old part occurs once in the file and after the
/// one before it.
fn elided(file: &Lines<'_>, old: &[u8], new: &[u8], max_len: u64) -> Result<Loose, Refusal> {
    let parts = |text: &[u8]| -> Vec<Vec<Vec<u8>>> {
        let mut out = vec![Vec::new()];
        for line in text.split(|b| *b == b'\n') {
            if is_elision(line) {
                out.push(Vec::new());
            } else if let Some(last) = out.last_mut() {
                last.push(line.to_vec());
            }
        }
        out
    };
    let (olds, news) = (parts(old), parts(new));
    if olds.len() < 2 || olds.len() != news.len() {
        return Err(Refusal::NotFound);
    }
    let mut runs: Vec<(usize, usize, &Vec<Vec<u8>>)> = Vec::new();
    let mut after = 0;
    for (o, n) in olds.iter().zip(&news) {
        if o.iter().all(|l| l.iter().all(u8::is_ascii_whitespace)) {
            if !n.iter().all(|l| l.iter().all(u8::is_ascii_whitespace)) {
                // Text added where only lines left out were: where it goes is a guess.
                return Err(Refusal::NotFound);
            }
            continue;
        }
        let pattern: Vec<&[u8]> = o.iter().map(Vec::as_slice).collect();
        let at = crate::edit::seek::candidates(file, &pattern, 0..file.len() + 1, Rung::Exact);
        match at.as_slice() {
            [one] if *one >= after => {
                runs.push((*one, o.len(), n));
                after = one + o.len();
            }
            [] | [_] => return Err(Refusal::NotFound),
            _ => return Err(Refusal::Loose(Rung::Elided, at)),
        }
    }
    if runs.is_empty() {
        return Err(Refusal::NotFound);
    }
    let eol = file.newline();
    let mut content = Vec::with_capacity(file.bytes.len() + new.len());
    let mut cursor = 0;
    for (at, count, lines) in &runs {
        content.extend_from_slice(&file.bytes[file.offset(cursor)..file.offset(*at)]);
        let last = at + count - 1;
        let ending = &file.raw(last)[file.content(last).len()..];
        for (k, l) in lines.iter().enumerate() {
            content.extend_from_slice(l);
            let end = if k + 1 == lines.len() && !ending.is_empty() {
                ending
            } else {
                eol
            };
            content.extend_from_slice(end);
        }
        cursor = at + count;
    }
    content.extend_from_slice(&file.bytes[file.offset(cursor)..]);
    if file.lacks_final_newline() && cursor == file.len() && content.ends_with(eol) {
        content.truncate(content.len() - eol.len());
    }
    if content.len() as u64 > max_len {
        return Err(Refusal::TooLarge(content.len()));
    }
    Ok(Loose {
        content,
        line: runs[0].0,
        rung: Rung::Elided,
    })
}

/// Of several places old_str occurs once its prefixes are dropped, the one starting the line
/// its first prefix numbers: the listing says where it was copied from.
fn numbered_at(
    file: &Lines<'_>,
    old: &[u8],
    new: &[u8],
    first: usize,
    at: &[usize],
    max_len: u64,
) -> Option<Result<Loose, Refusal>> {
    let line = first.checked_sub(1).filter(|l| *l < file.len())?;
    let start = file.offset(line);
    if !at.contains(&start) {
        return None;
    }
    let crlf = file.newline() == b"\r\n";
    let (o, n) = if crlf && old.contains(&b'\n') {
        (super::to_crlf(old), super::to_crlf(new))
    } else if crlf {
        (old.to_vec(), super::to_crlf(new))
    } else {
        (old.to_vec(), new.to_vec())
    };
    if !file.bytes[start..].starts_with(&o) {
        return None;
    }
    let mut content = Vec::with_capacity(file.bytes.len() + n.len());
    content.extend_from_slice(&file.bytes[..start]);
    content.extend_from_slice(&n);
    content.extend_from_slice(&file.bytes[start + o.len()..]);
    if content.len() as u64 > max_len {
        return Some(Err(Refusal::TooLarge(content.len())));
    }
    Some(Ok(Loose {
        content,
        line,
        rung: Rung::LineNumbers,
    }))
}

/// The drift rungs in order, after the whitespace ones found nothing (old and new in LF, old
/// without its final newline when new has none either).
pub(super) fn drifted(
    file: &Lines<'_>,
    old: &[u8],
    new: &[u8],
    max_len: u64,
) -> Result<Loose, Refusal> {
    if let Some((o, n, first)) = unnumbered(old, new) {
        let found = match splice(file, &o, &n, false, max_len) {
            Ok(s) => Ok(Loose {
                content: s.content,
                line: file.line_of(s.at[0]),
                rung: Rung::LineNumbers,
            }),
            Err(Refusal::Multiple(at)) => numbered_at(file, &o, &n, first, &at, max_len)
                .ok_or(Refusal::Multiple(at))
                .and_then(|r| r),
            Err(Refusal::NotFound) => whitespace(file, &o, &n, max_len).map(|l| Loose {
                rung: Rung::LineNumbers,
                ..l
            }),
            Err(e) => Err(e),
        };
        if !matches!(found, Err(Refusal::NotFound)) {
            return found;
        }
    }
    match quotes(file, old, new, max_len) {
        Err(Refusal::NotFound) => {}
        r => return r,
    }
    elided(file, old, new, max_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(file: &str, old: &str, new: &str) -> Result<Loose, Refusal> {
        let lines = Lines::new(file.as_bytes());
        super::super::forgiving(&lines, old.as_bytes(), new.as_bytes(), 1 << 20)
    }

    fn text(l: &Loose) -> &str {
        std::str::from_utf8(&l.content).expect("utf8")
    }

    #[test]
    fn numbered_listing_prefixes_are_dropped() {
        let file = "fn a() {\n    x();\n    y();\n}\n";
        for (old, new) in [
            ("     2→    x();\n     3→    y();", "    x();\n    z();"),
            ("2:    x();\n3:    y();", "2:    x();\n3:    z();"),
            ("     2\t    x();\n     3\t    y();", "    x();\n    z();"),
        ] {
            let got = run(file, old, new).expect("numbered");
            assert_eq!(got.rung, Rung::LineNumbers);
            assert_eq!(text(&got), "fn a() {\n    x();\n    z();\n}\n");
        }
        // Twice in the file: the numbers say which.
        let twice = "x();\ny();\nx();\ny();\n";
        let got = run(twice, "3:x();\n4:y();", "z();").expect("numbered");
        assert_eq!(text(&got), "x();\ny();\nz();\n");
        assert!(run(twice, "2:x();\n3:y();", "z();").is_err());
        // Not counting up by one: not a listing.
        assert!(run(file, "2:    x();\n5:    y();", "z").is_err());
    }

    #[test]
    fn typographic_quotes_match_straight_ones() {
        let file = "// it\u{2019}s \u{201C}fine\u{201D}\nlet a = 1;\nlet b = 2;\n";
        let got = run(
            file,
            "// it's \"fine\"\nlet a = 1;",
            "// it's \"fine\"\nlet a = 3;",
        )
        .expect("quotes");
        assert_eq!(got.rung, Rung::Quotes);
        assert_eq!(
            text(&got),
            "// it\u{2019}s \u{201C}fine\u{201D}\nlet a = 3;\nlet b = 2;\n"
        );
        // The kept quotes stay the file's; a quote in the changed text: which style it wants
        // is a guess.
        let got = run(file, "// it's \"fine\"", "// it's \"good\"").expect("quotes");
        assert_eq!(
            text(&got),
            "// it\u{2019}s \u{201C}good\u{201D}\nlet a = 1;\nlet b = 2;\n"
        );
        assert!(run(file, "// it's \"fine\"", "// it's \"fine\" and 'ok'").is_err());
        // Twice in the file: refused with both places.
        let twice = format!("{file}{file}");
        assert!(matches!(
            run(&twice, "// it's \"fine\"\nlet a = 1;", "x"),
            Err(Refusal::Loose(Rung::Quotes, _))
        ));
    }

    #[test]
    fn elided_lines_keep_what_they_stand_for() {
        let file = "fn a() {\n    one();\n    two();\n    three();\n    four();\n}\n";
        let old = "fn a() {\n    // ... existing code ...\n    four();\n}";
        let new = "fn a(x: u8) {\n    // ... existing code ...\n    four(x);\n}";
        let got = run(file, old, new).expect("elided");
        assert_eq!(got.rung, Rung::Elided);
        assert_eq!(
            text(&got),
            "fn a(x: u8) {\n    one();\n    two();\n    three();\n    four(x);\n}\n"
        );
        // new_str without the elision: what replaces the lines left out is a guess.
        assert!(run(file, old, "fn a() {\n}").is_err());
        // A part that is not unique: refused.
        let twice = format!("{file}{file}");
        assert!(run(&twice, old, new).is_err());
    }
}
