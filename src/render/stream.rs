//! `--format text` written while the work goes on: the search tools hand over each piece of
//! their result (a searched file's lines, a batch of paths) as soon as they have it, from their
//! worker threads, and it goes out at once, so memory does not grow with the result.
//!
//! The order is the order the pieces come in (rg's with several threads: whole files in the
//! order they were searched); the cap is the first `cap` results (matches, files, counts,
//! paths) to come in, and the stream knows exactly whether there were more. A write that fails
//! (the reader closed the pipe: `| head`) stops everything quietly.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Where streamed text goes; shared by the worker threads (the lock keeps each piece whole).
pub struct TextStream<'a> {
    state: Mutex<State<'a>>,
    /// Set once the cap is reached or the reader is gone: workers can skip what is left.
    stopped: AtomicBool,
}

struct State<'a> {
    out: &'a mut (dyn Write + Send),
    cap: u64,
    shown: u64,
    cut: bool,
    closed: bool,
    /// Written between two pieces (rg's `--` between files when context lines are shown).
    separator: Option<&'static [u8]>,
    wrote_any: bool,
}

/// How a streamed run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    /// Results written (at most the cap).
    pub shown: u64,
    /// More results existed than the cap allowed.
    pub cut: bool,
    /// The reader went away before the end (nothing more is said then).
    pub closed: bool,
}

/// One piece of text holding several results, and where each result's text ends, so that a
/// piece can be cut after any of them.
#[derive(Debug, Default)]
pub struct Piece {
    pub text: Vec<u8>,
    /// `ends[k]`: the length of the text holding the first `k + 1` results.
    pub ends: Vec<usize>,
}

impl Piece {
    /// Mark the end of one result at the current end of the text.
    pub fn end_result(&mut self) {
        self.ends.push(self.text.len());
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl<'a> TextStream<'a> {
    pub fn new(out: &'a mut (dyn Write + Send), cap: u64) -> TextStream<'a> {
        TextStream {
            state: Mutex::new(State {
                out,
                cap,
                shown: 0,
                cut: false,
                closed: false,
                separator: None,
                wrote_any: false,
            }),
            stopped: AtomicBool::new(false),
        }
    }

    /// Write `separator` between two pieces.
    pub fn with_separator(self, separator: &'static [u8]) -> TextStream<'a> {
        if let Ok(mut state) = self.state.lock() {
            state.separator = Some(separator);
        }
        self
    }

    /// Nothing more will be written: the cap is reached or the reader is gone.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Write a piece whole, or as many of its results as the cap leaves room for. False when
    /// nothing more will be written (the caller stops its work).
    pub fn write(&self, piece: &Piece) -> bool {
        if piece.is_empty() {
            return !self.stopped();
        }
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        if state.cut || state.closed {
            return false;
        }
        let room = state.cap.saturating_sub(state.shown);
        let results = piece.ends.len() as u64;
        let taken = results.min(room);
        if taken < results {
            state.cut = true;
        }
        if taken > 0 {
            let end = piece.ends[(taken - 1) as usize].min(piece.text.len());
            let separator = state.separator.filter(|_| state.wrote_any);
            let written = match separator {
                Some(sep) => state.out.write_all(sep),
                None => Ok(()),
            }
            .and_then(|()| state.out.write_all(&piece.text[..end]));
            state.wrote_any = true;
            state.shown += taken;
            if written.is_err() {
                state.closed = true;
            }
        }
        let go_on = !state.cut && !state.closed;
        if !go_on {
            self.stopped.store(true, Ordering::Relaxed);
        }
        go_on
    }

    /// Flush what is buffered and say how it went.
    pub fn finish(self) -> Streamed {
        let mut state = match self.state.into_inner() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !state.closed && state.out.flush().is_err() {
            state.closed = true;
        }
        Streamed {
            shown: state.shown,
            cut: state.cut,
            closed: state.closed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(lines: &[&str]) -> Piece {
        let mut p = Piece::default();
        for line in lines {
            p.text.extend_from_slice(line.as_bytes());
            p.text.push(b'\n');
            p.end_result();
        }
        p
    }

    #[test]
    fn cuts_at_the_cap_and_knows_there_was_more() {
        let mut out = Vec::new();
        let stream = TextStream::new(&mut out, 3);
        assert!(stream.write(&piece(&["a", "b"])));
        assert!(!stream.write(&piece(&["c", "d"])));
        assert!(stream.stopped());
        assert!(!stream.write(&piece(&["e"])));
        let end = stream.finish();
        assert_eq!((end.shown, end.cut, end.closed), (3, true, false));
        assert_eq!(out, b"a\nb\nc\n");
    }

    #[test]
    fn exactly_the_cap_is_not_a_cut() {
        let mut out = Vec::new();
        let stream = TextStream::new(&mut out, 2).with_separator(b"--\n");
        assert!(stream.write(&piece(&["a"])));
        assert!(stream.write(&piece(&["b"])));
        let end = stream.finish();
        assert_eq!((end.shown, end.cut), (2, false));
        assert_eq!(out, b"a\n--\nb\n");
    }

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_reader_stops_the_work() {
        let mut out = Closed;
        let stream = TextStream::new(&mut out, 10);
        assert!(!stream.write(&piece(&["a"])));
        assert!(stream.stopped());
        let end = stream.finish();
        assert!(end.closed && !end.cut);
    }
}
