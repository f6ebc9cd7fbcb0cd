//! The one glob matcher of the tool set: the read-deny list and the protected paths
//! (src/fs/pathlist.rs) and the `.gitignore` rules a command's changes are sorted by
//! (src/shell/overlay/gitignore.rs).
//!
//! Within a component `*` matches any run of bytes, `?` one byte, `[abc]`/`[a-z]`/`[!x]`/`[^x]`
//! one of a set (a `]` right after the opening is part of the set; a `[` with no closing `]` is
//! a literal `[`), `\` escapes the byte after it. Over components, a component `**` matches any
//! number of components, none included.
//!
//! Both levels are matched by the same greedy walk that remembers only the last star and, on a
//! mismatch, gives it one more byte (or component): no recursion, no backtracking past that
//! star, so a pattern of many stars costs at most the pattern's length times the name's, never
//! the exponential time of trying every split (the patterns come from files a repository ships).
//! Written here rather than taken from `globset`: every tool binary matches these lists, and a
//! regular-expression engine in each would cost more than the binaries' size budget allows.

/// One component (`name`, no `/`) against one glob component (`*`, `?`, `[…]`, `\`).
pub fn component(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and the name position it has taken up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match pat.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(b'?') => Some(1),
            Some(b'[') => class(&pat[p..], name[n]),
            Some(b'\\') => match pat.get(p + 1) {
                Some(c) if *c == name[n] => Some(2),
                _ => None,
            },
            Some(c) if *c == name[n] => Some(1),
            _ => None,
        };
        match step {
            Some(len) => {
                p += len;
                n += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pat[p..].iter().all(|b| *b == b'*')
}

/// `[…]` at the start of `pat` against one byte: the class's length when it matches.
fn class(pat: &[u8], c: u8) -> Option<usize> {
    let mut i = 1;
    let negate = matches!(pat.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while let Some(&b) = pat.get(i) {
        if b == b']' && !first {
            return (hit != negate).then_some(i + 1);
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|e| *e != b']') {
            let end = pat[i + 2];
            hit |= (b..=end).contains(&c);
            i += 3;
        } else {
            hit |= b == c;
            i += 1;
        }
    }
    // No closing bracket: a literal `[`.
    (c == b'[').then_some(1)
}

/// How much of a path a pattern's components must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The whole path (a `.gitignore` rule against a path).
    Whole,
    /// The path's first components: the pattern names a place and everything beneath it.
    Prefix,
}

/// A path's components against a pattern's, each pattern component matched by [`component`]
/// and a `**` component standing for any number of path components.
pub fn components<P: AsRef<[u8]>, C: AsRef<[u8]>>(pat: &[P], path: &[C], extent: Extent) -> bool {
    let is_any = |p: usize| pat[p].as_ref() == b"**";
    let (mut p, mut n) = (0, 0);
    // Where the last `**` was, and the path position it has taken up to.
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p == pat.len() && extent == Extent::Prefix {
            return true;
        }
        if n == path.len() {
            break;
        }
        if p < pat.len() && is_any(p) {
            star = Some((p, n));
            p += 1;
            continue;
        }
        if p < pat.len() && component(pat[p].as_ref(), path[n].as_ref()) {
            p += 1;
            n += 1;
            continue;
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    (p..pat.len()).all(is_any)
}

/// Whether a glob component holds a character with a meaning (it is not a plain name).
pub fn has_wildcard(part: &[u8]) -> bool {
    part.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_match_like_a_shell() {
        for (pat, name, hit) in [
            ("id_*", "id_ed25519", true),
            ("id_*", "known_hosts", false),
            ("*.pem", "a.pem", true),
            ("*.pem", "a.pem.txt", false),
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("?x", "ax", true),
            ("?x", "x", false),
            ("[ab]x", "bx", true),
            ("[!ab]x", "bx", false),
            ("[^ab]x", "cx", true),
            ("[a-c]", "b", true),
            ("[a-c]", "d", false),
            ("[]a]", "]", true),
            ("[a-]", "-", true),
            ("\\*", "*", true),
            ("\\*", "a", false),
            ("[", "[", true),
            ("a[", "a[", true),
            (".env", ".env", true),
            (".env", ".envrc", false),
            ("*.log", "run.log", true),
            ("*.log", "run.logs", false),
            ("f[0-9].txt", "f7.txt", true),
        ] {
            assert_eq!(
                component(pat.as_bytes(), name.as_bytes()),
                hit,
                "{pat} {name}"
            );
        }
    }

    fn split(s: &str) -> Vec<&[u8]> {
        s.split('/').map(str::as_bytes).collect()
    }

    #[test]
    fn a_double_star_spans_any_number_of_components() {
        for (pat, path, whole, prefix) in [
            ("a/**/z", "a/z", true, true),
            ("a/**/z", "a/b/c/z", true, true),
            ("a/**/z", "a/b/c/z/q", false, true),
            ("a/**/z", "a/b/c", false, false),
            ("**/tmp", "tmp", true, true),
            ("**/tmp", "x/y/tmp", true, true),
            ("logs/**", "logs/x/y", true, true),
            ("logs/**", "logs", true, true),
            ("doc/*.html", "doc/a.html", true, true),
            ("doc/*.html", "doc/sub/a.html", false, false),
            ("**/a/**/b", "x/a/y/b/c", false, true),
            ("**", "", true, true),
            ("a", "a/b", false, true),
            ("a/b", "a", false, false),
        ] {
            let (pat, path) = (split(pat), split(path));
            let path: Vec<&[u8]> = path.into_iter().filter(|c| !c.is_empty()).collect();
            assert_eq!(
                components(&pat, &path, Extent::Whole),
                whole,
                "{pat:?} {path:?}"
            );
            assert_eq!(
                components(&pat, &path, Extent::Prefix),
                prefix,
                "{pat:?} {path:?}"
            );
        }
    }

    /// Patterns that cost exponential time to a matcher that tries every split of the name at
    /// each star (the one the change scan had: 30 stars against 200 bytes did not finish in
    /// an hour) finish at once.
    #[test]
    fn many_stars_against_a_long_name_are_matched_in_linear_passes() {
        let name = "a".repeat(10_000);
        let pat = format!("{}b", "*a".repeat(30));
        let start = std::time::Instant::now();
        assert!(!component(pat.as_bytes(), name.as_bytes()));
        assert!(component(
            format!("{}*", "*a".repeat(30)).as_bytes(),
            name.as_bytes()
        ));
        let deep: Vec<&[u8]> = std::iter::repeat(&b"a"[..]).take(2_000).collect();
        let mut pat: Vec<&[u8]> = Vec::new();
        for _ in 0..30 {
            pat.extend([&b"**"[..], b"a"]);
        }
        pat.push(b"b");
        assert!(!components(&pat, &deep, Extent::Whole));
        assert!(!components(&pat, &deep, Extent::Prefix));
        pat.pop();
        assert!(components(&pat, &deep, Extent::Prefix));
        pat.push(b"**");
        assert!(components(&pat, &deep, Extent::Whole));
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "took {:?}",
            start.elapsed()
        );
    }
}
