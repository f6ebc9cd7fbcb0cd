//! The LLM-edit corpus: model-shaped mistakes made to real edits of real files, each case with
//! the result a careful human would produce (or a refusal when no unique answer exists).
//!
//! A base edit is either a real change from a repository's history (old and new file) or a
//! seeded synthetic edit of a real file (lines modified, inserted and deleted at one to three
//! places far enough apart to give separate hunks). Its unified diff (3 context lines) is then
//! mutated the way models get diffs wrong, one class at a time (see [`CLASSES`]). Shared by
//! `benches/llm_edits.sh` (through `examples/llm_edits_corpus.rs`, which writes every case to
//! disk for GNU patch and git apply too) and the CI sample in `tests/suite/edit_corpus.rs`.
//!
//! "Unique" marks cases whose answer is pinned by the text itself: every hunk's old lines (for
//! str_replace, the lines meant, as the file has them), compared with all whitespace stripped,
//! occur once in the file. str_replace tools are compared on those: with no line numbers, a
//! tool that takes the first of several places is guessing, right or wrong.

#![allow(dead_code)]

use sneaky::edit::{line_edits, render, Lines};

/// The mistake classes, in table order.
pub const CLASSES: [&str; 23] = [
    "clean",
    "file_shifted",
    "numbers_wrong",
    "numbers_missing",
    "counts_wrong",
    "trailing_ws_lost",
    "tabs_as_spaces",
    "indent_shifted",
    "hunks_reordered",
    "context_dropped",
    "context_doubled",
    "crlf_file_lf_patch",
    "prose_and_fences",
    "elided_lines",
    "lost_marker",
    "context_indent_shifted",
    "repeated_context",
    "replace_trailing_ws",
    "replace_indent_shifted",
    "replace_moved_ws",
    "replace_elided",
    "replace_numbered",
    "replace_quotes",
];

/// What the tool is asked to do.
#[derive(Debug, Clone)]
pub enum Request {
    /// patch_apply with this patch on the file `f`.
    Patch(String),
    /// str_replace on the file `f`.
    Replace { old_str: String, new_str: String },
}

#[derive(Debug, Clone)]
pub struct Case {
    pub class: &'static str,
    pub name: String,
    pub old: String,
    pub request: Request,
    /// The right result; None when the only right answer is a refusal.
    pub expected: Option<String>,
    pub unique: bool,
}

/// A real file, or a real change of one.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub old: String,
    /// The file after a real change (None: make a synthetic edit).
    pub new: Option<String>,
}

/// A small deterministic generator (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

fn lines_of(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_string).collect()
}

fn indent_of(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// A line changed the way an edit changes code: a word renamed, or a trailing comment.
fn modified(line: &str, rng: &mut Rng) -> String {
    let body = line.trim_end_matches('\n');
    let ind = indent_of(body);
    let rest = &body[ind.len()..];
    if rest.is_empty() {
        return format!("{ind}// added note {}\n", rng.below(1000));
    }
    if rng.below(2) == 0 {
        if let Some(p) = rest.find(|c: char| c.is_alphanumeric()) {
            let end = rest[p..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(rest.len(), |e| p + e);
            return format!("{ind}{}{}_v2{}\n", &rest[..p], &rest[p..end], &rest[end..]);
        }
    }
    format!("{ind}{rest} // edited\n")
}

/// A synthetic edit of `old`: `sites` places at least 12 lines apart.
pub fn synthetic_edit(old: &str, sites: usize, rng: &mut Rng) -> Option<String> {
    let lines = lines_of(old);
    let n = lines.len();
    if n < 20 || sites == 0 {
        return None;
    }
    let mut spots: Vec<usize> = Vec::new();
    for _ in 0..sites * 8 {
        if spots.len() == sites {
            break;
        }
        let p = rng.range(2, n - 3);
        if spots.iter().all(|s| s.abs_diff(p) >= 12) && !lines[p].trim().is_empty() {
            spots.push(p);
        }
    }
    if spots.len() < sites {
        return None;
    }
    spots.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    for &p in &spots {
        out.extend_from_slice(&lines[i..p]);
        match rng.below(3) {
            0 => {
                let k = rng.range(1, 2).min(n - p);
                out.extend(lines[p..p + k].iter().map(|l| modified(l, rng)));
                i = p + k;
            }
            1 => {
                let ind = indent_of(&lines[p]).to_string();
                for j in 0..rng.range(1, 3) {
                    out.push(format!("{ind}inserted_line_{}_{j}();\n", rng.below(1000)));
                }
                out.push(lines[p].clone());
                i = p + 1;
            }
            _ => {
                let k = rng.range(1, 2).min(n - p);
                i = p + k;
            }
        }
    }
    out.extend_from_slice(&lines[i..]);
    let new: String = out.concat();
    (new != old).then_some(new)
}

/// The unified diff from old to new, with `a/f`/`b/f` names.
pub fn diff(old: &str, new: &str) -> String {
    let (a, b) = (Lines::new(old.as_bytes()), Lines::new(new.as_bytes()));
    let edits = line_edits(&a, &b);
    render(&a, &b, &edits, "a/f", "b/f", usize::MAX).0
}

/// A diff split into its file header and hunks (header line + body lines, with newlines).
#[derive(Debug, Clone)]
pub struct Hunks {
    pub head: Vec<String>,
    pub hunks: Vec<Vec<String>>,
}

impl Hunks {
    pub fn of(diff: &str) -> Hunks {
        let mut head = Vec::new();
        let mut hunks: Vec<Vec<String>> = Vec::new();
        for l in lines_of(diff) {
            if l.starts_with("@@") {
                hunks.push(vec![l]);
            } else if let Some(h) = hunks.last_mut() {
                h.push(l);
            } else {
                head.push(l);
            }
        }
        Hunks { head, hunks }
    }

    pub fn text(&self) -> String {
        let mut s = self.head.concat();
        for h in &self.hunks {
            s.push_str(&h.concat());
        }
        s
    }

    /// Every hunk's old side (context and removed lines, without the marker and newline).
    pub fn old_sides(&self) -> Vec<Vec<String>> {
        self.hunks
            .iter()
            .map(|h| {
                h[1..]
                    .iter()
                    .filter(|l| l.starts_with(' ') || l.starts_with('-'))
                    .map(|l| l[1..].trim_end_matches('\n').to_string())
                    .collect()
            })
            .collect()
    }
}

/// (old start, old count, new start, new count) of a header.
fn header_numbers(h: &str) -> Option<(usize, usize, usize, usize)> {
    let mut parts = h.split_whitespace();
    parts.next()?;
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (os, oc) = range(old)?;
    let (ns, nc) = range(new)?;
    Some((os, oc, ns, nc))
}

fn header(os: usize, oc: usize, ns: usize, nc: usize) -> String {
    format!("@@ -{os},{oc} +{ns},{nc} @@\n")
}

/// True when every hunk's old lines, all whitespace stripped, occur once in the file.
pub fn unique_in(file: &str, hunks: &Hunks) -> bool {
    let squash = |s: &str| -> String { s.chars().filter(|c| !c.is_whitespace()).collect() };
    let file_lines: Vec<String> = file.lines().map(squash).collect();
    hunks.old_sides().iter().all(|side| {
        let want: Vec<String> = side.iter().map(|l| squash(l)).collect();
        if want.is_empty() || want.len() > file_lines.len() {
            return !want.is_empty() || file_lines.is_empty();
        }
        let count = (0..=file_lines.len() - want.len())
            .filter(|&p| {
                want.iter()
                    .enumerate()
                    .all(|(k, w)| file_lines[p + k] == *w)
            })
            .count();
        count == 1
    })
}

/// Leading groups of four spaces made tabs.
fn tabbed(text: &str) -> String {
    lines_of(text)
        .iter()
        .map(|l| {
            let spaces = l.len() - l.trim_start_matches(' ').len();
            format!("{}{}", "\t".repeat(spaces / 4), &l[spaces - spaces % 4..])
        })
        .collect()
}

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// Every diff line with a marker gets `by` more spaces of indentation (or loses them).
fn shift_diff(h: &Hunks, add: bool, by: usize) -> Option<Hunks> {
    let pad = " ".repeat(by);
    let mut out = h.clone();
    for hunk in &mut out.hunks {
        for l in hunk.iter_mut().skip(1) {
            let (marker, rest) = l.split_at(1);
            if rest.trim().is_empty() {
                continue;
            }
            *l = if add {
                format!("{marker}{pad}{rest}")
            } else {
                format!("{marker}{}", rest.strip_prefix(&pad)?)
            };
        }
    }
    Some(out)
}

/// What a mutation gives: the file, the patch text, the expected result, and whether the text
/// pins the answer down.
type Mutated = (String, String, String, bool);

/// One case of `class` from a base edit, or None when the base does not suit the class.
pub fn make(class: &'static str, src: &Source, new: &str, rng: &mut Rng) -> Option<Case> {
    let old = src.old.as_str();
    let base = Hunks::of(&diff(old, new));
    if base.hunks.is_empty() {
        return None;
    }
    let unique = unique_in(old, &base);
    let same = |patch: String| Some((old.to_string(), patch, new.to_string(), unique));
    let (file, patch, expected, unique) = match class {
        "clean" => same(base.text())?,
        "file_shifted" => {
            let pre: String = (0..rng.range(1, 40))
                .map(|i| format!("// shifted line {i}\n"))
                .collect();
            let old2 = format!("{pre}{old}");
            let u = unique_in(&old2, &base);
            (old2, base.text(), format!("{pre}{new}"), u)
        }
        "numbers_wrong" | "numbers_missing" | "counts_wrong" => {
            same(renumber(class, &base, rng)?.text())?
        }
        "trailing_ws_lost" => {
            let (o, n) = trailing_ws(&base, old, new, rng)?;
            let u = unique_in(&o, &base);
            (o, base.text(), n, u)
        }
        "tabs_as_spaces" => tabs_as_spaces(&base, old, new, unique)?,
        "indent_shifted" => {
            let add = rng.below(2) == 0;
            let h = shift_diff(&base, add, 4).or_else(|| shift_diff(&base, true, 4))?;
            same(h.text())?
        }
        "hunks_reordered" if base.hunks.len() >= 2 => {
            let mut h = base.clone();
            h.hunks.reverse();
            same(h.text())?
        }
        "context_dropped" | "context_doubled" => same(context_slip(class, &base, rng)?.text())?,
        "crlf_file_lf_patch" => (crlf(old), base.text(), crlf(new), unique),
        "prose_and_fences" => same(fenced(&base, rng))?,
        "elided_lines" => same(elided(&base, rng)?.text())?,
        "lost_marker" => same(lost_marker(&base)?.text())?,
        "context_indent_shifted" => same(context_shifted(&base, rng)?.text())?,
        "repeated_context" => repeated_context(&base, old, new, rng)?,
        _ => return None,
    };
    Some(Case {
        class,
        name: src.name.clone(),
        old: file,
        request: Request::Patch(patch),
        expected: Some(expected),
        unique,
    })
}

/// Stale numbers (all hunks off alike), no numbers (`@@ @@`), or wrong counts.
fn renumber(class: &str, base: &Hunks, rng: &mut Rng) -> Option<Hunks> {
    let d = rng.range(1, 30) as isize * if rng.below(2) == 0 { 1 } else { -1 };
    let mut h = base.clone();
    for hunk in &mut h.hunks {
        let (os, oc, ns, nc) = header_numbers(&hunk[0])?;
        let m = |x: usize| (x as isize + d).max(1) as usize;
        hunk[0] = match class {
            "numbers_wrong" => header(m(os), oc, m(ns), nc),
            "numbers_missing" => "@@ @@\n".into(),
            _ => header(
                os,
                oc + rng.range(1, 4),
                ns,
                nc.saturating_sub(rng.range(1, 2)),
            ),
        };
    }
    Some(h)
}

/// The file indented with tabs, the patch (with its added lines) written with spaces.
fn tabs_as_spaces(base: &Hunks, old: &str, new: &str, unique: bool) -> Option<Mutated> {
    let (o2, n2) = (tabbed(old), tabbed(new));
    // Every hunk shows the file's indentation in an old line, so the patch's spaces are
    // evidence of tabs written as spaces.
    let evident = base
        .old_sides()
        .iter()
        .all(|side| side.iter().any(|l| l.starts_with("    ")));
    (o2 != old && evident).then(|| (o2, base.text(), n2, unique))
}

/// One context line of one hunk left out, or written twice (the header left as it was).
fn context_slip(class: &str, base: &Hunks, rng: &mut Rng) -> Option<Hunks> {
    let mut h = base.clone();
    let k = rng.below(h.hunks.len());
    // Not a line next to an added one: that line says where the addition goes, and without
    // it (or with it twice) the patch asks for another edit rather than a slipped one.
    let hunk = &h.hunks[k];
    let added = |i: usize| hunk.get(i).is_some_and(|l| l.starts_with('+'));
    let ctx: Vec<usize> = (1..hunk.len())
        .filter(|&i| hunk[i].starts_with(' ') && !added(i - 1) && !added(i + 1))
        .collect();
    let at = *ctx.get(rng.below(ctx.len()))?;
    if class == "context_dropped" {
        h.hunks[k].remove(at);
    } else {
        let l = h.hunks[k][at].clone();
        h.hunks[k].insert(at, l);
    }
    Some(h)
}

/// The diff (with or without its file header) in a Markdown fence between sentences.
fn fenced(base: &Hunks, rng: &mut Rng) -> String {
    let body = if rng.below(2) == 0 {
        base.text()
    } else {
        base.hunks.iter().map(|h| h.concat()).collect()
    };
    format!(
        "Here is the change you asked for:\n\n```diff\n{body}```\n\nThis keeps the rest of the file as it is.\n"
    )
}

/// Lines a model writes for lines it left out.
const ELISIONS: [&str; 4] = [
    "...",
    "// ... existing code ...",
    "# rest unchanged",
    "/* ... */",
];

/// The leading (or trailing) context of one hunk but the line nearest the change replaced by
/// a line standing for them (`// ... existing code ...`, `...`, `# rest unchanged`).
fn elided(base: &Hunks, rng: &mut Rng) -> Option<Hunks> {
    let mut h = base.clone();
    let k = rng.below(h.hunks.len());
    let marker = ELISIONS[rng.below(ELISIONS.len())];
    let hunk = &mut h.hunks[k];
    let lead = hunk[1..].iter().take_while(|l| l.starts_with(' ')).count();
    let trail = hunk[1..]
        .iter()
        .rev()
        .take_while(|l| l.starts_with(' '))
        .count();
    let front = rng.below(2) == 0;
    if front && lead >= 3 {
        let ind = indent_of(&hunk[1][1..]).to_string();
        hunk.splice(1..lead, [format!(" {ind}{marker}\n")]);
    } else if trail >= 3 {
        let n = hunk.len();
        let ind = indent_of(&hunk[n - 1][1..]).to_string();
        hunk.splice(n - trail + 1..n, [format!(" {ind}{marker}\n")]);
    } else {
        return None;
    }
    Some(h)
}

/// Context lines that start with a space written without their marker space (so that each
/// reads one column less indented); blank context lines lose it too.
fn lost_marker(base: &Hunks) -> Option<Hunks> {
    let mut h = base.clone();
    let mut changed = false;
    for hunk in &mut h.hunks {
        for l in hunk.iter_mut().skip(1) {
            if l.starts_with("  ") || l.as_str() == " \n" {
                *l = l[1..].to_string();
                changed = true;
            }
        }
    }
    changed.then_some(h)
}

/// The context lines (only) indented 4 spaces more, or less where every one allows it; the
/// removed and added lines as they should be.
fn context_shifted(base: &Hunks, rng: &mut Rng) -> Option<Hunks> {
    let ctx = |l: &String| l.starts_with(' ') && !l[1..].trim().is_empty();
    let all_deep = base
        .hunks
        .iter()
        .flat_map(|h| h[1..].iter())
        .filter(|l| ctx(l))
        .all(|l| l[1..].starts_with("    "));
    let add = !all_deep || rng.below(2) == 0;
    let mut h = base.clone();
    let mut changed = false;
    for hunk in &mut h.hunks {
        for l in hunk.iter_mut().skip(1) {
            if ctx(l) {
                *l = if add {
                    format!("     {}", &l[1..])
                } else {
                    format!(" {}", &l[5..])
                };
                changed = true;
            }
        }
    }
    changed.then_some(h)
}

/// The last hunk's old lines also occur, exactly, 12 to 44 lines below it, while at the place
/// the header states one of its context lines has trailing whitespace the patch does not
/// show: the stated place is the right one (test files full of `}`, blank lines and
/// `#[test]` make such repeats common).
fn repeated_context(base: &Hunks, old: &str, new: &str, rng: &mut Rng) -> Option<Mutated> {
    let last = base.hunks.last()?;
    let (os, oc, _, _) = header_numbers(&last[0])?;
    let old_lines = lines_of(old);
    let new_lines = lines_of(new);
    let end = os.saturating_sub(1) + oc;
    let at = end + rng.range(12, 44);
    if at > old_lines.len() || oc == 0 {
        return None;
    }
    let count = |lines: &[String], l: &str| lines.iter().filter(|x| *x == l).count();
    let fit: Vec<String> = last[1..]
        .iter()
        .filter(|l| l.starts_with(' ') && !l[1..].trim().is_empty())
        .map(|l| l[1..].to_string())
        .filter(|l| count(&old_lines, l) == 1 && count(&new_lines, l) == 1)
        .collect();
    let pick = fit.get(rng.below(fit.len()))?.clone();
    let with = format!("{}  \n", pick.trim_end_matches('\n'));
    let swap = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .map(|l| if *l == pick { with.clone() } else { l.clone() })
            .collect()
    };
    let copy: Vec<String> = last[1..]
        .iter()
        .filter(|l| l.starts_with(' ') || l.starts_with('-'))
        .map(|l| l[1..].to_string())
        .collect();
    let delta = new_lines.len() as isize - old_lines.len() as isize;
    let at_new = usize::try_from(at as isize + delta).ok()?;
    let mut o = swap(&old_lines);
    o.splice(at..at, copy.iter().cloned());
    let mut n = swap(&new_lines);
    n.splice(at_new..at_new, copy.iter().cloned());
    let (o, n) = (o.concat(), n.concat());
    let u = unique_in(&o, base);
    Some((o, base.text(), n, u))
}

/// Trailing whitespace added to some of the file's lines that the diff shows as context.
fn trailing_ws(base: &Hunks, old: &str, new: &str, rng: &mut Rng) -> Option<(String, String)> {
    let contexts: Vec<String> = base
        .hunks
        .iter()
        .flat_map(|h| h[1..].iter())
        .filter(|l| l.starts_with(' ') && !l[1..].trim().is_empty())
        .map(|l| l[1..].to_string())
        .collect();
    let count = |text: &str, l: &str| lines_of(text).iter().filter(|x| *x == l).count();
    let fit: Vec<&String> = contexts
        .iter()
        .filter(|l| count(old, l) == 1 && count(new, l) == 1)
        .collect();
    let pick = (*fit.get(rng.below(fit.len()))?).clone();
    let ws = if rng.below(2) == 0 { "  " } else { "\t" };
    let with = format!("{}{ws}\n", pick.trim_end_matches('\n'));
    let swap = |text: &str| -> String {
        lines_of(text)
            .iter()
            .map(|l| if *l == pick { with.clone() } else { l.clone() })
            .collect()
    };
    Some((swap(old), swap(new)))
}

/// A str_replace case: a block of 2–5 lines of the file, written as models get it wrong.
pub fn make_replace(class: &'static str, src: &Source, rng: &mut Rng) -> Option<Case> {
    let lines = lines_of(&src.old);
    if lines.len() < 10 {
        return None;
    }
    let len = if class == "replace_elided" {
        rng.range(7, 12)
    } else {
        rng.range(2, 5)
    };
    if lines.len() <= len {
        return None;
    }
    let at = rng.below(lines.len() - len);
    let block: Vec<String> = lines[at..at + len].to_vec();
    if block.iter().filter(|l| !l.trim().is_empty()).count() < 2 {
        return None;
    }
    let new_lines: Vec<String> = block
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i == len / 2 {
                modified(l, rng)
            } else {
                l.clone()
            }
        })
        .collect();
    let drift = replace_drift(class, &block, &new_lines, at, rng)?;
    let splice = |with: &[String]| -> String {
        let mut v = lines.clone();
        v.splice(at..at + len, with.iter().cloned());
        v.concat()
    };
    let old = splice(&drift.file_block);
    let trim_last = |v: &[String]| -> String {
        let s = v.concat();
        s.strip_suffix('\n').unwrap_or(&s).to_string()
    };
    let old_str = trim_last(&drift.old_str);
    let new_str = trim_last(&drift.new_str);
    if old.contains(&old_str) {
        // The slipped old_str is an exact text of the file elsewhere: a valid request for
        // another edit, not a slip.
        return None;
    }
    // Pinned down when the lines meant (as the file has them) occur once with all whitespace
    // ignored: old_str's drift (numbers, quotes, elided lines) says nothing about where.
    let squash = |s: &str| -> String { s.chars().filter(|c| !c.is_whitespace()).collect() };
    let unique = squash(&old)
        .matches(&squash(&drift.file_block.concat()))
        .count()
        == 1;
    Some(Case {
        class,
        name: src.name.clone(),
        old,
        request: Request::Replace { old_str, new_str },
        expected: Some(splice(&drift.expected)),
        unique,
    })
}

/// A str_replace block as the file has it, as the model writes old_str and new_str, and as
/// the file should end up.
struct Drift {
    file_block: Vec<String>,
    old_str: Vec<String>,
    new_str: Vec<String>,
    expected: Vec<String>,
}

/// Typographic quotes for straight ones: an apostrophe between letters is `’`, other single
/// and double quotes open and close in turn.
fn curled(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let (mut single, mut double) = (false, false);
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let letter = |j: Option<&char>| j.is_some_and(|c| c.is_alphanumeric());
        out.push(match c {
            '\'' if letter(i.checked_sub(1).and_then(|j| chars.get(j)))
                && letter(chars.get(i + 1)) =>
            {
                '\u{2019}'
            }
            '\'' => {
                single = !single;
                if single {
                    '\u{2018}'
                } else {
                    '\u{2019}'
                }
            }
            '"' => {
                double = !double;
                if double {
                    '\u{201C}'
                } else {
                    '\u{201D}'
                }
            }
            c => *c,
        });
    }
    out
}

fn replace_drift(
    class: &str,
    block: &[String],
    new_lines: &[String],
    at: usize,
    rng: &mut Rng,
) -> Option<Drift> {
    match class {
        "replace_moved_ws" => {
            // A line of the file with trailing whitespace old_str lost, and new_str adds a
            // line above it: every line new_str writes moves, and follows new_str.
            let k = (0..block.len() - 1).find(|&i| !block[i].trim().is_empty())?;
            let mut file_block = block.to_vec();
            file_block[k] = format!("{}  \n", block[k].trim_end_matches('\n'));
            let ind = indent_of(&block[0]).to_string();
            let mut new_str = vec![format!("{ind}inserted_line_{}();\n", rng.below(1000))];
            new_str.extend_from_slice(new_lines);
            Some(Drift {
                file_block,
                old_str: block.to_vec(),
                new_str: new_str.clone(),
                expected: new_str,
            })
        }
        "replace_elided" => {
            // The middle of the block (or its end) written as one line standing for it; the
            // first line changed (and the last, when the middle is elided).
            let marker = ELISIONS[rng.below(ELISIONS.len())];
            let n = block.len();
            let mut expected = block.to_vec();
            expected[0] = modified(&block[0], rng);
            let ind = indent_of(&block[1]).to_string();
            let mark = format!("{ind}{marker}\n");
            let (old_str, new_str) = if rng.below(2) == 0 {
                expected[n - 1] = modified(&block[n - 1], rng);
                let o = [&block[..2], std::slice::from_ref(&mark), &block[n - 2..]].concat();
                let w = [&expected[..2], &[mark], &expected[n - 2..]].concat();
                (o, w)
            } else {
                let o = [&block[..3], std::slice::from_ref(&mark)].concat();
                let w = [&expected[..3], &[mark]].concat();
                (o, w)
            };
            Some(Drift {
                file_block: block.to_vec(),
                old_str,
                new_str,
                expected,
            })
        }
        "replace_numbered" => {
            let style = rng.below(3);
            let number = |i: usize, l: &String| -> String {
                let n = at + i + 1;
                match style {
                    0 => format!("{n:>6}\u{2192}{l}"),
                    1 => format!("{n}:{l}"),
                    _ => format!("{n:>6}\t{l}"),
                }
            };
            let old_str: Vec<String> = block
                .iter()
                .enumerate()
                .map(|(i, l)| number(i, l))
                .collect();
            let new_str = if rng.below(2) == 0 {
                new_lines
                    .iter()
                    .enumerate()
                    .map(|(i, l)| number(i, l))
                    .collect()
            } else {
                new_lines.to_vec()
            };
            Some(Drift {
                file_block: block.to_vec(),
                old_str,
                new_str,
                expected: new_lines.to_vec(),
            })
        }
        "replace_quotes" => {
            let file_block: Vec<String> = block.iter().map(|l| curled(l)).collect();
            if file_block == block {
                return None;
            }
            Some(Drift {
                file_block,
                old_str: block.to_vec(),
                new_str: new_lines.to_vec(),
                expected: new_lines.iter().map(|l| curled(l)).collect(),
            })
        }
        "replace_trailing_ws" => {
            // Not the last line: old_str ends there, and a text ending before the file's
            // trailing whitespace is an exact match of its own.
            let k = (0..block.len() - 1).find(|&i| !block[i].trim().is_empty())?;
            let mut file_block = block.to_vec();
            file_block[k] = format!("{}  \n", block[k].trim_end_matches('\n'));
            // Lines new_str keeps stay as the file has them.
            let expected = new_lines
                .iter()
                .zip(&file_block)
                .zip(block)
                .map(|((n, f), b)| if n == b { f.clone() } else { n.clone() })
                .collect();
            Some(Drift {
                file_block,
                old_str: block.to_vec(),
                new_str: new_lines.to_vec(),
                expected,
            })
        }
        "replace_indent_shifted" => {
            let strip = block
                .iter()
                .chain(new_lines)
                .filter(|l| !l.trim().is_empty())
                .all(|l| l.starts_with("    "));
            let f = |l: &String| -> String {
                if l.trim().is_empty() {
                    l.clone()
                } else if strip {
                    l[4..].to_string()
                } else {
                    format!("    {l}")
                }
            };
            Some(Drift {
                file_block: block.to_vec(),
                old_str: block.iter().map(f).collect(),
                new_str: new_lines.iter().map(f).collect(),
                expected: new_lines.to_vec(),
            })
        }
        _ => None,
    }
}

/// `per_class` cases of every class from the sources, deterministic for a seed.
pub fn generate(sources: &[Source], per_class: usize, seed: u64) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for (ci, class) in CLASSES.iter().enumerate() {
        let mut made = 0;
        let mut tries = 0;
        while made < per_class && tries < per_class * 40 && !sources.is_empty() {
            tries += 1;
            let src = &sources[rng.below(sources.len())];
            let case = if class.starts_with("replace_") {
                make_replace(class, src, &mut rng)
            } else {
                let sites = if *class == "hunks_reordered" {
                    rng.range(2, 3)
                } else {
                    rng.range(1, 3)
                };
                let new = match &src.new {
                    Some(n) if rng.below(2) == 0 => Some(n.clone()),
                    _ => synthetic_edit(&src.old, sites, &mut rng),
                };
                new.and_then(|n| make(class, src, &n, &mut rng))
            };
            if let Some(mut c) = case {
                c.name = format!("{:02}-{class}-{made:04}", ci);
                made += 1;
                out.push(c);
            }
        }
    }
    out
}

/// Text files fit for the corpus: UTF-8, LF, 40 to 3,000 lines, ending in a newline.
pub fn usable(text: &str) -> bool {
    let n = text.lines().count();
    (40..=3000).contains(&n) && !text.contains('\r') && !text.contains('\0') && text.ends_with('\n')
}
