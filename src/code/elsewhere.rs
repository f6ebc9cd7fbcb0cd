//! Parsing in `sneaky-outline`, for the programs that do not link the grammars:
//! find_references and repo_map in their binaries, every navigation tool in the hosts, and the
//! edit tools' syntax errors. They run `sneaky-outline --parse` with the files' bytes on
//! stdin and read each file's [`FileTags`] back, as read_file hands it a PDF or a large image
//! (`--pdf-text`, `--scale-image`: `crate::media`). The helper does no I/O of its own beyond
//! its pipes: the caller opened the files through the jail.
//!
//! Request: `SNKP5`, the length of the rest (u64, little-endian), then per file its language
//! id (1 byte), what is wanted of it (1 byte: 0 everything, 1 the definitions, 2 the
//! definitions at its focus, 3 the same without the holes given), its focus (a u64 length,
//! then that many bytes of u32 pairs: byte ranges; none unless 2 or 3), with 3 its holes
//! likewise, its length (u64) and its bytes. With 3, the bytes may stop at the start of the
//! last hole, which then reaches past them: the rest of the file (nothing or whitespace
//! after that hole), left out of the parse. Answer: `SNKR1`, then per file, in order, a
//! status byte (0: tags, 1: why it was not parsed), a length (u64) and the encoded tags or
//! the message. The helper parses on as many threads as the machine has.

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::tags::{FileTags, Want};
use super::Lang;
use crate::error::{Error, ErrorKind, Result};

/// The flag of `sneaky-outline` that parses what stdin holds (`serve`).
pub const PARSE_FLAG: &str = "--parse";

const REQUEST: &[u8] = b"SNKP5";
const ANSWER: &[u8] = b"SNKR1";

/// The binary that holds the grammars.
const PARSER_BINARY: &str = "sneaky-outline";

/// One file's parse: its tags, or why there are none (given up, too slow).
pub type Parsed = std::result::Result<FileTags, String>;

/// One file to parse: its language, its bytes and what is wanted of it.
pub type Job<'a> = (Lang, &'a [u8], Want<'a>);

/// The main of `sneaky-outline`: the parse helper (`serve`) when [`PARSE_FLAG`] is its first
/// argument, else the outline tool's main (handed in by the binary: this module sits beneath
/// the tools and the protocol).
pub fn main_or(outline: fn() -> ExitCode) -> ExitCode {
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(PARSE_FLAG)) {
        return serve();
    }
    outline()
}

/// The helper: read a request on stdin, answer on stdout.
fn serve() -> ExitCode {
    let Ok(input) = read_input(&mut std::io::stdin().lock()) else {
        return ExitCode::from(2);
    };
    let Some((files, foci)) = read_request(&input) else {
        eprintln!("sneaky-outline {PARSE_FLAG}: not a parse request");
        return ExitCode::from(2);
    };
    let jobs = jobs_of(&files, &foci);
    let answers = parse_all(&jobs);
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(&answer_bytes(&answers))
        .and_then(|()| out.flush());
    if written.is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// A request's bytes, read into room made once for the length its head gives (up to
/// [`ROOM_AT_MOST`]): a batch is tens of megabytes, which a growing buffer copies over and
/// over.
fn read_input(stdin: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut head = [0u8; REQUEST.len() + 8];
    stdin.read_exact(&mut head)?;
    let len = u64::from_le_bytes(head[REQUEST.len()..].try_into().unwrap_or_default());
    let room = usize::try_from(len).unwrap_or(usize::MAX).min(ROOM_AT_MOST);
    let mut input = Vec::with_capacity(head.len() + room);
    input.extend_from_slice(&head);
    stdin.read_to_end(&mut input)?;
    Ok(input)
}

/// The most room a request's head makes the helper set aside: a batch of files to parse
/// (`source::BATCH_BYTES`) and a file more.
const ROOM_AT_MOST: usize = 64 << 20;

/// Parse each file with the grammars linked here, on every core, answers in order.
pub fn parse_all(files: &[Job<'_>]) -> Vec<Parsed> {
    let threads = crate::fs::walk::threads().min(files.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Parsed>>> =
        files.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(lang, bytes, want)) = files.get(i) else {
                    break;
                };
                let parsed = super::parse::tags_for(lang, bytes, want);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(parsed);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err("the parse did not finish".to_string()))
        })
        .collect()
}

/// Byte ranges on the wire.
type Ranges = Vec<(u32, u32)>;

/// A request read: its files, each with what is wanted of it, and each one's focus and
/// holes (in the same order; the jobs borrow them, `jobs_of`).
type Request<'a> = (Vec<(Lang, &'a [u8], u8)>, Vec<(Ranges, Ranges)>);

fn jobs_of<'a>(files: &[(Lang, &'a [u8], u8)], foci: &'a [(Ranges, Ranges)]) -> Vec<Job<'a>> {
    files
        .iter()
        .zip(foci)
        .map(|(&(lang, bytes, want), (focus, holes))| {
            let want = match want {
                0 => Want::All,
                1 => Want::Defs,
                2 => Want::At(&focus[..]),
                _ => Want::Skimmed(&focus[..], &holes[..]),
            };
            (lang, bytes, want)
        })
        .collect()
}

/// Byte ranges framed ([`framed`]), and what follows them.
fn framed_ranges(input: &[u8]) -> Option<(Ranges, &[u8])> {
    let (ranges, after) = framed(input)?;
    if ranges.len() % 8 != 0 {
        return None;
    }
    let number = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let ranges = ranges
        .chunks_exact(8)
        .map(|p| (number(&p[..4]), number(&p[4..])))
        .collect();
    Some((ranges, after))
}

fn frame_ranges(out: &mut Vec<u8>, ranges: &[(u32, u32)]) {
    let mut bytes = Vec::with_capacity(ranges.len() * 8);
    for &(start, end) in ranges {
        bytes.extend_from_slice(&start.to_le_bytes());
        bytes.extend_from_slice(&end.to_le_bytes());
    }
    frame(out, &bytes);
}

fn read_request(input: &[u8]) -> Option<Request<'_>> {
    let (rest, after) = framed(input.strip_prefix(REQUEST)?)?;
    if !after.is_empty() {
        return None;
    }
    let mut rest = rest;
    let (mut files, mut foci) = (Vec::new(), Vec::new());
    while let Some((&lang, after)) = rest.split_first() {
        let lang = Lang::from_id(lang)?;
        let (&want, after) = after.split_first()?;
        if want > 3 {
            return None;
        }
        let (focus, after) = framed_ranges(after)?;
        let (holes, after) = match want {
            3 => framed_ranges(after)?,
            _ => (Vec::new(), after),
        };
        foci.push((focus, holes));
        let (bytes, after) = framed(after)?;
        files.push((lang, bytes, want));
        rest = after;
    }
    Some((files, foci))
}

/// Write the request for `files` to `out` (the helper's stdin), each file's bytes as they
/// are: a batch is tens of megabytes, not copied into one buffer first.
fn write_request(out: &mut impl Write, files: &[Job<'_>]) -> std::io::Result<()> {
    let heads: Vec<Vec<u8>> = files
        .iter()
        .map(|&(lang, bytes, want)| {
            let mut head = vec![lang.id(), want.id()];
            match want {
                Want::All | Want::Defs => frame_ranges(&mut head, &[]),
                Want::At(focus) => frame_ranges(&mut head, focus),
                Want::Skimmed(places, holes) => {
                    frame_ranges(&mut head, places);
                    frame_ranges(&mut head, holes);
                }
            }
            head.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            head
        })
        .collect();
    let len: usize = heads
        .iter()
        .zip(files)
        .map(|(h, f)| h.len() + f.1.len())
        .sum();
    let mut out = std::io::BufWriter::with_capacity(64 << 10, out);
    out.write_all(REQUEST)?;
    out.write_all(&(len as u64).to_le_bytes())?;
    for (head, &(_, bytes, _)) in heads.iter().zip(files) {
        out.write_all(head)?;
        out.write_all(bytes)?;
    }
    out.flush()
}

/// A u64 length and that many bytes, and what follows them.
fn framed(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let len: [u8; 8] = input.get(..8)?.try_into().ok()?;
    let len = usize::try_from(u64::from_le_bytes(len)).ok()?;
    let body = input.get(8..8usize.checked_add(len)?)?;
    Some((body, &input[8 + len..]))
}

fn frame(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn answer_bytes(answers: &[Parsed]) -> Vec<u8> {
    let mut out = ANSWER.to_vec();
    for answer in answers {
        match answer {
            Ok(tags) => {
                out.push(0);
                frame(&mut out, &tags.encode());
            }
            Err(why) => {
                out.push(1);
                frame(&mut out, why.as_bytes());
            }
        }
    }
    out
}

fn read_answer(input: &[u8], count: usize) -> Option<Vec<Parsed>> {
    let mut rest = input.strip_prefix(ANSWER)?;
    let mut answers = Vec::with_capacity(count);
    while let Some((&status, after)) = rest.split_first() {
        let (body, after) = framed(after)?;
        answers.push(match status {
            0 => Ok(FileTags::decode(body)?),
            1 => Err(String::from_utf8_lossy(body).into_owned()),
            _ => return None,
        });
        rest = after;
    }
    (answers.len() == count).then_some(answers)
}

/// Parse `files` (their whole tags) in `sneaky-outline --parse`. With `limit`, a helper still
/// running then is ended and the call fails (an edit's syntax check must not hold the edit).
pub fn parse_elsewhere(files: &[(Lang, &[u8])], limit: Option<Duration>) -> Result<Vec<Parsed>> {
    let jobs: Vec<Job<'_>> = files.iter().map(|&(l, b)| (l, b, Want::All)).collect();
    parse_jobs_elsewhere(&jobs, limit)
}

/// Parse `files` in `sneaky-outline --parse`, each for what is wanted of it; `limit` as
/// `parse_elsewhere`'s.
pub fn parse_jobs_elsewhere(files: &[Job<'_>], limit: Option<Duration>) -> Result<Vec<Parsed>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let binary = crate::media::sibling_binary(PARSER_BINARY);
    let cannot = |why: String| {
        Error::new(
            ErrorKind::Internal,
            format!(
                "cannot parse through {} {PARSE_FLAG}: {why} (`cargo install --path .` \
                 installs every binary)",
                binary.display()
            ),
        )
    };
    let mut child = Command::new(&binary)
        .arg(PARSE_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| cannot(e.to_string()))?;
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (out, stderr) = std::thread::scope(|scope| {
        // Written while the answer is read: a helper that cannot answer before it has read
        // everything does not hold the pipe full.
        if let Some(mut stdin) = stdin {
            scope.spawn(move || write_request(&mut stdin, files));
        }
        let errors = stderr.map(|mut stderr| {
            scope.spawn(move || {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text);
                text
            })
        });
        let (done, answer) = mpsc::channel();
        if let Some(mut stdout) = stdout {
            scope.spawn(move || {
                let mut out = Vec::new();
                let _ = stdout.read_to_end(&mut out);
                let _ = done.send(out);
            });
        }
        let out = match limit {
            Some(limit) => answer.recv_timeout(limit).ok(),
            None => answer.recv().ok(),
        };
        if out.is_none() {
            // Its pipes close with it: the threads above end.
            let _ = child.kill();
        }
        let _ = child.wait();
        (out, errors.and_then(|e| e.join().ok()).unwrap_or_default())
    });
    let Some(out) = out else {
        return Err(cannot(format!(
            "no answer within {} ms",
            limit.unwrap_or_default().as_millis()
        )));
    };
    read_answer(&out, files.len()).ok_or_else(|| cannot(format!("no answer: {}", stderr.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_round_trip() {
        let files: Vec<Job<'_>> = vec![
            (Lang::Rust, b"fn a() {}", Want::At(&[(3, 4)])),
            (Lang::Python, b"", Want::All),
            (Lang::Go, b"x", Want::At(&[(0, 1), (7, 9)])),
            (
                Lang::Rust,
                b"fn a() { b }",
                Want::Skimmed(&[(3, 4)], &[(8, 11)]),
            ),
            (Lang::C, b"int x;", Want::Defs),
        ];
        let mut request = Vec::new();
        write_request(&mut request, &files).unwrap();
        assert_eq!(read_input(&mut &request[..]).unwrap(), request);
        let (read, foci) = read_request(&request).unwrap();
        assert_eq!(jobs_of(&read, &foci), files);
        assert_eq!(read_request(&request[..request.len() - 1]), None);
        let answers = parse_all(&[
            (Lang::Rust, b"fn a() {}", Want::All),
            (Lang::Rust, b"fn (", Want::All),
            (Lang::Rust, b"fn (", Want::Defs),
        ]);
        let bytes = answer_bytes(&answers);
        let back = read_answer(&bytes, 3).unwrap();
        assert_eq!(back, answers);
        assert_eq!(back[0].as_ref().unwrap().defs[0].name, "a");
        assert!(!back[1].as_ref().unwrap().errors.is_empty());
        // Only the definitions were asked for: no errors looked for.
        let defs_only = back[2].as_ref().unwrap();
        assert!(defs_only.errors.is_empty() && defs_only.part == crate::code::Part::Defs);
        assert_eq!(read_answer(&bytes, 4), None);
        assert_eq!(read_answer(&bytes[..bytes.len() - 1], 3), None);
    }
}
