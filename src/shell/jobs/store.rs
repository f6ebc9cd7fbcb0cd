//! One output stream of a background job, kept in bounded files addressed by offsets.
//!
//! An offset counts the bytes the stream has carried since the job started. The bytes live in
//! segment files of [`SEGMENT`] bytes each (`<name>.<n>` holds offsets `n * SEGMENT` up to
//! the next segment); when a new segment begins, the one before the previous is deleted, so a
//! stream never takes more than two segments on disk, however much the job prints, and the
//! last [`SEGMENT`] bytes at least are always there to read. Nothing of the output is held in
//! memory beyond one read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Bytes per segment file: a stream keeps between one and two of them.
pub const SEGMENT: u64 = 512 * 1024;
/// The most a stream of one job takes on disk.
pub const BOUND: u64 = 2 * SEGMENT;

pub struct Store {
    dir: PathBuf,
    name: &'static str,
    /// Bytes the stream has carried.
    total: u64,
    /// The open segment (the one `total` falls in), when there is one.
    current: Option<(u64, File)>,
}

impl Store {
    pub fn new(dir: &Path, name: &'static str) -> Store {
        Store {
            dir: dir.to_path_buf(),
            name,
            total: 0,
            current: None,
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The oldest offset still kept.
    pub fn first_kept(&self) -> u64 {
        let segment = self.total / SEGMENT;
        segment.saturating_sub(1) * SEGMENT
    }

    fn path(&self, segment: u64) -> PathBuf {
        self.dir.join(format!("{}.{segment}", self.name))
    }

    /// Append bytes the job wrote. On a write error the bytes still count (the offsets stay
    /// those of the job's stream) and reading them gives what the files hold.
    pub fn append(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let segment = self.total / SEGMENT;
            let room = (SEGMENT - self.total % SEGMENT) as usize;
            let (now, rest) = data.split_at(room.min(data.len()));
            if self.current.as_ref().map(|c| c.0) != Some(segment) {
                if segment >= 2 {
                    let _ = std::fs::remove_file(self.path(segment - 2));
                }
                self.current = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.path(segment))
                    .ok()
                    .map(|f| (segment, f));
            }
            if let Some((_, file)) = &mut self.current {
                let _ = file.write_all(now);
            }
            self.total += now.len() as u64;
            data = rest;
        }
    }

    /// Up to `max` bytes from `from` (moved up to the oldest kept offset): the offset they
    /// start at and the bytes.
    pub fn read(&self, from: u64, max: usize) -> (u64, Vec<u8>) {
        let start = from.max(self.first_kept()).min(self.total);
        let end = self.total.min(start.saturating_add(max as u64));
        let mut out = Vec::with_capacity((end - start) as usize);
        let mut at = start;
        while at < end {
            let segment = at / SEGMENT;
            let upto = end.min((segment + 1) * SEGMENT);
            let Ok(mut file) = File::open(self.path(segment)) else {
                break;
            };
            if file.seek(SeekFrom::Start(at % SEGMENT)).is_err() {
                break;
            }
            let want = (upto - at) as usize;
            let before = out.len();
            if file.take(want as u64).read_to_end(&mut out).is_err() || out.len() - before < want {
                break;
            }
            at = upto;
        }
        (start, out)
    }

    /// Delete the files (the job is forgotten).
    pub fn remove(&mut self) {
        self.current = None;
        let last = self.total / SEGMENT;
        for segment in last.saturating_sub(1)..=last {
            let _ = std::fs::remove_file(self.path(segment));
        }
    }
}

/// The length of `bytes` without an incomplete UTF-8 sequence at its end (a character whose
/// remaining bytes the job has not written yet): a read stops before it and the next one
/// starts with the whole character.
pub fn complete_utf8(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=3.min(n) {
        let b = bytes[n - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return n,
        };
        return if back < need { n - back } else { n };
    }
    n
}

/// Terminal output made plain: escape sequences (CSI, OSC, and the two-byte ones) removed,
/// carriage returns before a newline dropped (a terminal's line ends are "\r\n").
pub fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, then one final byte in @..~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') | Some('P') | Some('_') | Some('^') => {
                    // A string ended by BEL or ESC \.
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some('(') | Some(')') | Some('*') | Some('+') => {
                    chars.next();
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            '\x07' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_keeps_its_last_segments_and_its_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::new(dir.path(), "stdout");
        s.append(b"hello ");
        s.append(b"world");
        assert_eq!(s.read(0, 100), (0, b"hello world".to_vec()));
        assert_eq!(s.read(6, 3), (6, b"wor".to_vec()));
        let chunk = vec![b'x'; 100_000];
        for _ in 0..30 {
            s.append(&chunk);
        }
        let total = 11 + 3_000_000;
        assert_eq!(s.total(), total);
        let on_disk: u64 = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(on_disk <= BOUND, "{on_disk} bytes on disk");
        assert!(total - s.first_kept() >= SEGMENT);
        let (start, bytes) = s.read(0, 10);
        assert_eq!(start, s.first_kept());
        assert_eq!(bytes, b"xxxxxxxxxx");
        // Across a segment boundary.
        let (start, bytes) = s.read(SEGMENT * 5 - 2, 4);
        assert_eq!((start, bytes.len()), (SEGMENT * 5 - 2, 4));
        assert_eq!(s.read(total, 10), (total, Vec::new()));
        s.remove();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn utf8_is_cut_before_an_unfinished_character() {
        let e = "é".as_bytes();
        assert_eq!(complete_utf8(b"ab"), 2);
        assert_eq!(complete_utf8(&[b'a', e[0]]), 1);
        assert_eq!(complete_utf8(&[b'a', e[0], e[1]]), 3);
        let k = "😀".as_bytes();
        assert_eq!(complete_utf8(&k[..3]), 0);
        assert_eq!(complete_utf8(k), 4);
    }

    #[test]
    fn escapes_are_removed() {
        assert_eq!(
            strip_escapes("\x1b[1;32mok\x1b[0m\r\n\x1b]0;title\x07>>> "),
            "ok\n>>> "
        );
    }
}
