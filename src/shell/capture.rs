//! Capturing a command's output: one reader thread, waiting on both pipes at once, fills a
//! bounded head+tail buffer per stream (`max_output_bytes` each), so memory stays bounded
//! however much a command prints; the launcher's status line is split off the start of
//! stderr, and its last line ([`launch::END_PREFIX`]) off the end.

use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::AsFd;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::launch::{self, LaunchEnd, LaunchStatus};

const READ_CHUNK: usize = 64 * 1024;
/// The first reads' buffer: most commands print little (and the launcher's status line is
/// short), and a buffer's pages are touched when it is made (zeroed, in a reader thread's
/// fresh malloc arena: 32 pages and 130K instructions a call for two 64 KiB buffers). A
/// read that fills it grows it to [`READ_CHUNK`] (a pipe's whole buffer) for what follows.
const FIRST_CHUNK: usize = 4 * 1024;
/// The stream's last bytes kept apart from the capture, however small `max_output_bytes`:
/// room for the launcher's last line (at most 16 refusals of at most 253-byte names).
const LAST_KEPT: usize = 16 * 1024;

/// One output stream: a reader thread filling a bounded capture.
pub struct Stream {
    shared: Arc<Mutex<Shared>>,
    done: Option<mpsc::Receiver<()>>,
}

struct Shared {
    capture: Capture,
    status: Option<LaunchStatus>,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Stream {
    /// A reading of how many bytes the stream has carried so far (for progress reports).
    pub fn byte_counter(&self) -> impl Fn() -> u64 + Send + 'static {
        let shared = Arc::clone(&self.shared);
        move || lock(&shared).capture.total
    }

    /// A stream and what fills it: `launcher_status`, the launcher's status line comes first;
    /// `ended` is called once the stream is at its end.
    fn with_reader(
        cap: usize,
        launcher_status: bool,
        ended: Option<Box<dyn FnOnce() + Send>>,
    ) -> (Stream, Reader) {
        let mut stream = Stream::unread(cap);
        let (tx, rx) = mpsc::channel();
        stream.done = Some(rx);
        let reader = Reader {
            shared: Arc::clone(&stream.shared),
            buf: vec![0u8; FIRST_CHUNK],
            pending: launcher_status.then(Vec::new),
            done: tx,
            ended,
        };
        (stream, reader)
    }

    /// A stream with nothing to read.
    fn unread(cap: usize) -> Stream {
        Stream {
            shared: Arc::new(Mutex::new(Shared {
                capture: Capture::new(cap),
                status: None,
            })),
            done: None,
        }
    }

    /// Read `pipe` in a thread of its own; `ended` is called once it is at its end.
    #[cfg(test)]
    pub fn start<R: Read + Send + 'static>(
        pipe: Option<R>,
        cap: usize,
        launcher_status: bool,
        ended: Option<Box<dyn FnOnce() + Send>>,
    ) -> Stream {
        let Some(mut pipe) = pipe else {
            return Stream::unread(cap);
        };
        let (stream, reader) = Stream::with_reader(cap, launcher_status, ended);
        std::thread::spawn(move || reader.read_to_end(&mut pipe));
        stream
    }

    /// Read a command's stdout and stderr (whose first line may be the launcher's status
    /// line: `err_status`) in one thread, which waits on both pipes at once, and on `watch`
    /// too: a thread of its own per stream, and one waiting for the launcher's exit, cost
    /// about 0.1 ms of CPU each in a fresh process here (its stack, its malloc arena, its
    /// start and its end). `ended` gives each stream's end callback.
    pub fn start_both(
        out: Option<Box<dyn Output>>,
        err: Option<Box<dyn Output>>,
        cap: usize,
        err_status: bool,
        ended: impl Fn() -> Option<Box<dyn FnOnce() + Send>>,
        watch: Option<Watch>,
    ) -> (Stream, Stream) {
        let mut open = Vec::new();
        let mut stream = |pipe: Option<Box<dyn Output>>, status: bool| match pipe {
            None => Stream::unread(cap),
            Some(pipe) => {
                let (stream, reader) = Stream::with_reader(cap, status, ended());
                open.push((pipe, reader));
                stream
            }
        };
        let (stdout, stderr) = (stream(out, false), stream(err, err_status));
        if !open.is_empty() || watch.is_some() {
            std::thread::spawn(move || read_all(open, watch));
        }
        (stdout, stderr)
    }

    pub fn wait(&self, deadline: Instant) {
        if let Some(rx) = &self.done {
            let _ = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        }
    }

    pub fn status(&self) -> Option<LaunchStatus> {
        lock(&self.shared).status.clone()
    }

    /// Take the launcher's last line off the end of the stream, when it carries `token` (the
    /// status line's) and ends the stream. A line without the token is the command's output
    /// and stays. Before [`Stream::finish`].
    pub fn take_end(&self, token: &str) -> Option<LaunchEnd> {
        if token.is_empty() {
            return None;
        }
        let mut shared = lock(&self.shared);
        let last: Vec<u8> = shared.capture.last.iter().copied().collect();
        let marker = format!("{}{token}:", launch::END_PREFIX).into_bytes();
        let at = memchr::memmem::rfind(&last, &marker)?;
        let json = last[at + marker.len()..].strip_suffix(b"\n")?;
        if json.contains(&b'\n') {
            return None;
        }
        let end = serde_json::from_slice(json).ok()?;
        shared.capture.drop_suffix(last.len() - at);
        Some(end)
    }

    pub fn finish(&self) -> Captured {
        lock(&self.shared).capture.finish()
    }
}

/// A command's output pipe: read, and waited on with the other one ([`Stream::start_both`]).
pub trait Output: Read + AsFd + Send {}
impl<T: Read + AsFd + Send> Output for T {}

/// A descriptor that becomes readable once (the launcher's pidfd), waited on with the output
/// pipes, and what to do then (reap the launcher: it does not block).
pub struct Watch {
    pub fd: std::os::fd::OwnedFd,
    pub then: Box<dyn FnOnce() + Send>,
}

/// What fills one stream: its read buffer, and the launcher's status line while it comes.
struct Reader {
    shared: Arc<Mutex<Shared>>,
    buf: Vec<u8>,
    /// The start of stderr until the launcher's status line is whole.
    pending: Option<Vec<u8>>,
    done: mpsc::Sender<()>,
    ended: Option<Box<dyn FnOnce() + Send>>,
}

impl Reader {
    /// Read once from `pipe` into the capture; false at its end (or on an error).
    fn read_from(&mut self, pipe: &mut dyn Read) -> bool {
        let n = match pipe.read(&mut self.buf) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return true,
            Err(_) => return false,
        };
        let mut shared = lock(&self.shared);
        match self.pending.as_mut() {
            None => shared.capture.push(&self.buf[..n]),
            Some(p) => {
                p.extend_from_slice(&self.buf[..n]);
                if let Some((status, rest)) = split_status(p) {
                    shared.status = status;
                    shared.capture.push(&rest);
                    self.pending = None;
                }
            }
        }
        drop(shared);
        if n == self.buf.len() && n < READ_CHUNK {
            self.buf.resize(READ_CHUNK, 0);
        }
        true
    }

    /// Read `pipe` to its end (where the pipe has the thread to itself).
    fn read_to_end(mut self, pipe: &mut dyn Read) {
        while self.read_from(pipe) {}
        self.end();
    }

    /// The stream is at its end.
    fn end(self) {
        if let Some(p) = self.pending {
            lock(&self.shared).capture.push(&p);
        }
        let _ = self.done.send(());
        if let Some(ended) = self.ended {
            ended();
        }
    }
}

/// Read every pipe of `open` to its end, each when it has something (or has ended), and run
/// `watch`'s work once its descriptor is readable. Should poll fail, each pipe left is read to
/// its end in a thread of its own, and the work done in another (where it waits).
fn read_all(mut open: Vec<(Box<dyn Output>, Reader)>, mut watch: Option<Watch>) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    while !open.is_empty() || watch.is_some() {
        let mut fds: Vec<PollFd> = open
            .iter()
            .map(|(pipe, _)| pipe.as_fd())
            .chain(watch.as_ref().map(|w| w.fd.as_fd()))
            .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
            .collect();
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        // The pipes first: what the launcher wrote before it left is read before its end is
        // told.
        let watched = ready.get(open.len()).copied().unwrap_or(false);
        for at in (0..open.len()).rev() {
            let (pipe, reader) = &mut open[at];
            if ready[at] && !reader.read_from(pipe) {
                open.remove(at).1.end();
            }
        }
        if watched {
            if let Some(w) = watch.take() {
                (w.then)();
            }
        }
    }
    for (mut pipe, reader) in open {
        std::thread::spawn(move || reader.read_to_end(&mut pipe));
    }
    if let Some(w) = watch {
        std::thread::spawn(w.then);
    }
}

/// Split the launcher's status line off the start of stderr once it is complete (or once it
/// is clear there is none). None while more bytes are needed.
pub(crate) fn split_status(p: &[u8]) -> Option<(Option<LaunchStatus>, Vec<u8>)> {
    let prefix = launch::STATUS_PREFIX;
    let n = p.len().min(prefix.len());
    if p[..n] != prefix[..n] {
        return Some((None, p.to_vec()));
    }
    if p.len() < prefix.len() {
        return None;
    }
    match p.iter().position(|&b| b == b'\n') {
        Some(end) => {
            let status = serde_json::from_slice(&p[prefix.len()..end]).ok();
            Some((status, p[end + 1..].to_vec()))
        }
        None if p.len() > 4096 => Some((None, p.to_vec())),
        None => None,
    }
}

/// The first and last bytes of a stream, at most `cap` in all, and how many there were.
struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
    /// The last [`LAST_KEPT`] bytes.
    last: VecDeque<u8>,
}

pub struct Captured {
    pub text: String,
    pub truncated: bool,
    pub lossy: bool,
    pub total: u64,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        let head_cap = cap / 2;
        Capture {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: cap - head_cap,
            total: 0,
            last: VecDeque::new(),
        }
    }

    /// Forget the stream's last `n` bytes (at most what `last` holds), as if they had never
    /// come.
    fn drop_suffix(&mut self, n: usize) {
        let n = n.min(self.last.len());
        self.last.truncate(self.last.len() - n);
        self.tail.truncate(self.tail.len().saturating_sub(n));
        self.total -= n as u64;
        // Where the head reaches into the dropped bytes (a stream shorter than the head).
        if (self.head.len() as u64) > self.total {
            self.head.truncate(self.total as usize);
        }
    }

    fn push(&mut self, data: &[u8]) {
        let kept = &data[data.len().saturating_sub(LAST_KEPT)..];
        let overflow = (self.last.len() + kept.len()).saturating_sub(LAST_KEPT);
        self.last.drain(..overflow);
        self.last.extend(kept);
        self.total += data.len() as u64;
        let room = self.head_cap - self.head.len();
        let (to_head, rest) = data.split_at(room.min(data.len()));
        self.head.extend_from_slice(to_head);
        if rest.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    fn finish(&self) -> Captured {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let kept = (self.head.len() + tail.len()) as u64;
        if kept == self.total {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            let (text, lossy) = decode(&all);
            return Captured {
                text,
                truncated: false,
                lossy,
                total: self.total,
            };
        }
        // Cut at character boundaries so that the cuts themselves do not look like bad UTF-8.
        let head = &self.head[..utf8_prefix_end(&self.head)];
        let skip = tail
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        let tail = &tail[skip..];
        let dropped = self.total - (head.len() + tail.len()) as u64;
        let (h, hl) = decode(head);
        let (t, tl) = decode(tail);
        Captured {
            text: format!(
                "{h}\n[… {dropped} bytes dropped: output exceeded max_output_bytes …]\n{t}"
            ),
            truncated: true,
            lossy: hl || tl,
            total: self.total,
        }
    }
}

fn decode(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8_lossy(bytes) {
        std::borrow::Cow::Borrowed(s) => (s.to_string(), false),
        std::borrow::Cow::Owned(s) => (s, true),
    }
}

/// Length of `b` without a trailing incomplete UTF-8 sequence.
fn utf8_prefix_end(b: &[u8]) -> usize {
    for back in 1..=3.min(b.len()) {
        let byte = b[b.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead
        }
        let need = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return b.len(),
        };
        return if need > back { b.len() - back } else { b.len() };
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::new(10);
        c.push(b"0123456789abcdef");
        c.push(b"XYZ");
        let out = c.finish();
        assert!(out.truncated);
        assert_eq!(out.total, 19);
        assert!(out.text.starts_with("01234\n"), "{}", out.text);
        assert!(out.text.ends_with("\nefXYZ"), "{}", out.text);
        assert!(out.text.contains("9 bytes dropped"), "{}", out.text);
        let mut small = Capture::new(10);
        small.push(b"hello");
        let out = small.finish();
        assert_eq!((out.text.as_str(), out.truncated), ("hello", false));
    }

    /// A stream over `chunks`, captured in `cap` bytes.
    fn stream_of(chunks: &[&[u8]], cap: usize) -> Stream {
        let data: Vec<u8> = chunks.concat();
        let s = Stream::start(Some(std::io::Cursor::new(data)), cap, false, None);
        s.wait(Instant::now() + std::time::Duration::from_secs(5));
        s
    }

    #[test]
    fn the_launchers_last_line_is_taken_only_with_its_token() {
        let end = format!(
            "{}TOKEN:{{\"refused\":[{{\"host\":\"a.example\",\"port\":443}}]}}\n",
            launch::END_PREFIX
        );
        for cap in [1000, 10, 1] {
            let s = stream_of(&[b"out\n", b"more", end.as_bytes()], cap);
            assert_eq!(s.take_end("OTHER"), None);
            let got = s.take_end("TOKEN").expect("the line");
            assert_eq!(got.refused[0].host, "a.example");
            let out = s.finish();
            assert_eq!(out.total, 8, "cap {cap}");
            if cap == 1000 {
                assert_eq!(out.text, "out\nmore");
            }
            assert!(!out.text.contains("TOKEN"), "cap {cap}: {}", out.text);
        }
        // Not at the very end (the command wrote after it), or no token: the command's output.
        let s = stream_of(&[end.as_bytes(), b"after\n"], 1000);
        assert_eq!(s.take_end("TOKEN"), None);
        assert_eq!(s.finish().text, format!("{end}after\n"));
        let s = stream_of(&[end.as_bytes()], 1000);
        assert_eq!(s.take_end(""), None);
    }

    /// A reader that hands out at most `step` bytes a read, as a pipe does what was written.
    struct Pipe {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_stream_arrives_whole_across_the_first_buffer_s_growth() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        for step in [
            1,
            FIRST_CHUNK - 1,
            FIRST_CHUNK,
            FIRST_CHUNK + 1,
            READ_CHUNK,
            usize::MAX,
        ] {
            let pipe = Pipe {
                data: data.clone(),
                at: 0,
                step,
            };
            let s = Stream::start(Some(pipe), data.len(), false, None);
            s.wait(Instant::now() + std::time::Duration::from_secs(30));
            let shared = lock(&s.shared);
            assert_eq!(shared.capture.total, data.len() as u64, "step {step}");
            assert_eq!(shared.capture.head, data[..data.len() / 2], "step {step}");
            let tail: Vec<u8> = shared.capture.tail.iter().copied().collect();
            assert_eq!(tail, data[data.len() / 2..], "step {step}");
        }
    }

    #[test]
    fn both_streams_are_read_in_one_thread_whichever_has_something() {
        // stderr carries more than a pipe holds while stdout stays open and silent, then
        // stdout speaks once stderr is at its end: read one at a time, either would block.
        let (out_r, out_w) = std::os::unix::net::UnixStream::pair().expect("pair");
        let (err_r, err_w) = std::os::unix::net::UnixStream::pair().expect("pair");
        let (to_err, flood) = (err_w, vec![b'e'; 300_000]);
        let mut to_out = out_w;
        let ends = Arc::new(Mutex::new(Vec::new()));
        let ended = || -> Option<Box<dyn FnOnce() + Send>> {
            let ends = Arc::clone(&ends);
            Some(Box::new(move || ends.lock().expect("ends").push(())))
        };
        let (stdout, stderr) = Stream::start_both(
            Some(Box::new(out_r)),
            Some(Box::new(err_r)),
            1_000_000,
            false,
            ended,
            None,
        );
        let writer = std::thread::spawn(move || {
            let mut to_err = to_err;
            std::io::Write::write_all(&mut to_err, &flood).expect("stderr");
            drop(to_err);
            std::io::Write::write_all(&mut to_out, b"done").expect("stdout");
        });
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        stderr.wait(deadline);
        assert_eq!(stderr.finish().total, 300_000);
        writer.join().expect("writer");
        stdout.wait(deadline);
        assert_eq!(stdout.finish().text, "done");
        // Each stream's end is told once (right after its `wait` returns).
        while ends.lock().expect("ends").len() < 2 && Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(ends.lock().expect("ends").len(), 2);
    }

    #[test]
    fn the_launchers_exit_is_waited_for_with_its_outputs() {
        // A child that outlives its output: its pipe ends first, its exit comes later, and the
        // work for its exit runs then, in the same thread, without blocking the pipe's end.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "echo out; exec >&-; sleep 0.2"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let fd = match crate::shell::sys::pidfd_open(pid) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = child.wait();
                eprintln!("skipped: no pidfd_open here: {e}");
                return;
            }
        };
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        let then = Box::new(move || {
            let _ = tx.send(child.wait().map(|s| s.success()));
        });
        let watch = Some(Watch { fd, then });
        let (stdout, _) = Stream::start_both(Some(Box::new(out)), None, 100, false, || None, watch);
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        stdout.wait(deadline);
        assert_eq!(stdout.finish().text, "out\n");
        let waited = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert!(matches!(waited, Ok(Ok(true))), "{waited:?}");
    }

    #[test]
    fn cuts_fall_on_characters() {
        let mut c = Capture::new(6);
        c.push("ééééééééé".as_bytes());
        let out = c.finish();
        assert!(!out.lossy, "{}", out.text);
        let mut bad = Capture::new(100);
        bad.push(b"ok\xff");
        assert!(bad.finish().lossy);
    }
}
