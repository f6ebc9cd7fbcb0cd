//! The launcher forked ahead of time: `sneaky-run`'s main, while it still has one thread,
//! forks a copy of itself that waits on a socket for the launch. Starting the launcher by a
//! fresh exec of `sneaky-run` cost about 1.1 ms a call, most of it the C library's start-up
//! in a virtual machine (its cache-size probing executes `cpuid` dozens of times, each a trap
//! to the hypervisor) and the dynamic loader; a fork of a process that has done nothing yet
//! costs a tenth of that. The forked launcher is the same program in the same state as a
//! freshly executed one: it takes the launch spec, the command, its environment, its working
//! directory and the two pipes of its output over the socket, puts them in place of what it
//! inherited (stdin becomes /dev/null; every other descriptor is closed or close-on-exec; the
//! environment is handed to the command, which an executed launcher's exec gives it),
//! and runs the launcher step (src/shell/sandbox.rs) from its start, but for the death
//! signal and its own session, which it takes at once, while it waits (`sandbox::detach`). A
//! call that runs no command closes the socket, and the waiting copy exits.
//!
//! While it waits it also works for the runner: it works out the contained exec set as soon
//! as the runner knows its configuration (the runner's longest step before the launch:
//! src/shell/spec.rs, `ExecAhead`) and answers with it, enters the network namespace the
//! runner made for it meanwhile (as root: `namespaces::NetAhead`), and takes its first steps
//! (`sandbox::begin`). It starts on a CPU other than the runner's, so that both work at once
//! ([`place_apart`]).
//!
//! Only the `sneaky-run` program forks one (bin/sneaky-run/entry.rs); a long-lived host
//! starts the launcher by exec as before.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::Mutex;

use nix::unistd::Pid;

use super::launch::Early;
use super::spec::{Ahead, ExecAhead, ExecInputs};
use super::sys::{fork_single_threaded, Forked};

/// The launcher waiting in a forked copy of this process, not yet used.
pub struct Zygote {
    socket: UnixStream,
    pid: Pid,
    /// The exec set's inputs it was asked to work out already ([`ask_exec_set`]).
    asked: Option<ExecInputs>,
}

static WAITING: Mutex<Option<Zygote>> = Mutex::new(None);

/// What the forked launcher is handed: what `Command::new(sneaky-run)` gives an executed one
/// (the launcher's flag, `spec` and `command` as its arguments, `env` as its whole
/// environment, `cwd` as its directory).
#[derive(Debug, PartialEq)]
pub struct Launch {
    pub spec: String,
    pub command: OsString,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: OsString,
}

/// A [`Launch`] on the socket is its fields' bytes, each after its length (a little-endian
/// u64), the environment's pairs after their count: the spec is JSON already, and the rest
/// are byte strings, which JSON would spell as arrays of numbers (a call's environment came
/// to 8 KB that way, written by one process and parsed by the other on the launch's path).
impl Launch {
    fn to_bytes(&self) -> Vec<u8> {
        fn put(out: &mut Vec<u8>, f: &[u8]) {
            out.extend((f.len() as u64).to_le_bytes());
            out.extend_from_slice(f);
        }
        let fields = [
            self.spec.as_bytes(),
            self.command.as_bytes(),
            self.cwd.as_bytes(),
        ];
        let pairs = self
            .env
            .iter()
            .flat_map(|(k, v)| [k.as_bytes(), v.as_bytes()]);
        let size: usize = fields
            .into_iter()
            .chain(pairs.clone())
            .map(|f| f.len() + 8)
            .sum();
        let mut out = Vec::with_capacity(size + 8);
        for f in fields {
            put(&mut out, f);
        }
        out.extend((self.env.len() as u64).to_le_bytes());
        for f in pairs {
            put(&mut out, f);
        }
        out
    }

    /// None for bytes that are not a whole launch (or whose spec is not UTF-8).
    fn from_bytes(mut bytes: &[u8]) -> Option<Launch> {
        fn number(bytes: &mut &[u8]) -> Option<usize> {
            let (n, rest) = bytes.split_first_chunk::<8>()?;
            *bytes = rest;
            usize::try_from(u64::from_le_bytes(*n)).ok()
        }
        fn field(bytes: &mut &[u8]) -> Option<OsString> {
            let len = number(bytes)?;
            let (f, rest) = bytes.split_at_checked(len)?;
            *bytes = rest;
            Some(OsString::from_vec(f.to_vec()))
        }
        let spec = field(&mut bytes)?.into_string().ok()?;
        let command = field(&mut bytes)?;
        let cwd = field(&mut bytes)?;
        let count = number(&mut bytes)?;
        let mut env = Vec::with_capacity(count.min(bytes.len() / 16));
        for _ in 0..count {
            env.push((field(&mut bytes)?, field(&mut bytes)?));
        }
        bytes.is_empty().then_some(Launch {
            spec,
            command,
            env,
            cwd,
        })
    }
}

/// Fork the launcher-to-be, if this process has one thread (a fork copies only the calling
/// thread: another's locks would stay held in the copy). None in the process that goes on as
/// `sneaky-run`; in the forked copy, the launcher step's exit code once it has run (or
/// success, without a launch).
pub fn start() -> Option<ExitCode> {
    if !single_threaded() {
        return None;
    }
    let (ours, theirs) = UnixStream::pair().ok()?;
    let parent = std::process::id() as i32;
    match fork_single_threaded() {
        Err(_) => None,
        Ok(Forked::Parent(pid)) => {
            drop(theirs);
            if !place_apart(pid) {
                return None;
            }
            if let Ok(mut waiting) = WAITING.lock() {
                *waiting = Some(Zygote {
                    socket: ours,
                    pid,
                    asked: None,
                });
            }
            None
        }
        Ok(Forked::Child) => {
            drop(ours);
            Some(serve(theirs, parent))
        }
    }
}

/// The waiting launcher, for one launch.
pub fn take() -> Option<Zygote> {
    WAITING.lock().ok()?.take()
}

/// Have the waiting launcher, if there is one, start on the contained exec set for `inputs`
/// now, while this process checks the command: the launch takes its answer when it asks for
/// the same inputs ([`Zygote::work_out_exec_set`]); a call that runs nothing leaves it unread.
pub fn ask_exec_set(inputs: &ExecInputs) {
    let Ok(mut waiting) = WAITING.lock() else {
        return;
    };
    if let Some(zygote) = waiting.as_mut().filter(|z| z.asked.is_none()) {
        if zygote.ask(inputs).is_some() {
            zygote.asked = Some(inputs.clone());
        }
    }
}

/// Start the forked copy on a CPU other than the one this process runs on, when it may run
/// on another: it has its own steps to take while this process reads the configuration, and
/// the scheduler placed it beside its parent, where it waited for this process's time slice
/// (1.5 ms, measured) while the other CPU of this 2-core machine stood idle. Its CPUs are
/// narrowed, which moves it to another one's queue, and given back at once: it stays queued
/// there, and the scheduler may still move it where it would (a CPU busy with another
/// program), as it may any process.
fn place_apart(child: Pid) -> bool {
    use nix::sched::{sched_getaffinity, sched_getcpu, sched_setaffinity};
    let (Ok(ours), Ok(here)) = (sched_getaffinity(Pid::from_raw(0)), sched_getcpu()) else {
        return true;
    };
    let mut apart = ours;
    if apart.unset(here).is_err() {
        return true;
    }
    let others = (0..nix::sched::CpuSet::count()).any(|cpu| apart.is_set(cpu).unwrap_or(false));
    if others && sched_setaffinity(child, &apart).is_ok() {
        // Given back: what the child starts inherits its CPUs. Where they cannot be, the
        // child goes (its copy of the socket with it), and the launch executes a launcher.
        if sched_setaffinity(child, &ours).is_err() {
            let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
            return false;
        }
    }
    true
}

fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1)
}

/// The launched process: its pid and the read ends of its stdout and stderr.
pub struct Launched {
    pub pid: Pid,
    pub stdout: std::fs::File,
    pub stderr: std::fs::File,
}

impl Zygote {
    /// Have the waiting launcher work out the contained exec set from `inputs`, before its
    /// first steps (in the host's namespaces, as this process would: a user namespace of the
    /// sandbox's own would see other users' files otherwise), while this process makes the
    /// temp dir, the environment and the placeholders; the spec's build takes its answer
    /// (src/shell/spec.rs, [`ExecAhead`]). None where it cannot be asked.
    /// Asked already for the same inputs ([`ask_exec_set`]), its answer is taken; asked for
    /// others, None (that answer would come first).
    pub fn work_out_exec_set(&self, inputs: &ExecInputs) -> Option<ExecAhead> {
        match &self.asked {
            Some(asked) if asked == inputs => {}
            Some(_) => return None,
            None => self.ask(inputs)?,
        }
        let answers = self.socket.try_clone().ok()?;
        Some(ExecAhead::answered_by(move || {
            serde_json::from_slice::<Option<Ahead>>(&body(&answers)?).ok()?
        }))
    }

    /// Send the request for the exec set of `inputs`.
    fn ask(&self, inputs: &ExecInputs) -> Option<()> {
        let request = ExecRequest {
            inputs: inputs.clone(),
            costs: super::costs::on(),
        };
        send(
            &self.socket,
            Some(EXEC),
            &serde_json::to_vec(&request).ok()?,
        )
        .ok()
    }

    /// Hand the waiting launcher the network namespace made for its launch
    /// (`namespaces::NetworkNamespace`), before its first steps ([`Zygote::begin`]).
    pub fn hand_network(&self, made: &OwnedFd) -> std::io::Result<()> {
        super::sys::send_byte_fd(&self.socket, NETWORK, made.as_fd())
    }

    /// Have the waiting launcher take its first steps (the process limit, the namespaces:
    /// src/shell/sandbox.rs, `begin`) while this process works out the rest of
    /// the launch; [`Zygote::launch`] must then hand it the launch they were taken for.
    pub fn begin(&self, early: &Early) -> std::io::Result<()> {
        let body = serde_json::to_vec(early).map_err(std::io::Error::other)?;
        send(&self.socket, Some(EARLY), &body)
    }

    /// Hand the waiting launcher its launch.
    pub fn launch(self, launch: &Launch) -> std::io::Result<Launched> {
        let body = launch.to_bytes();
        let (out_r, out_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let (err_r, err_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        super::sys::send_fd(&self.socket, out_w.as_fd())?;
        super::sys::send_fd(&self.socket, err_w.as_fd())?;
        (&self.socket).write_all(&(body.len() as u64).to_le_bytes())?;
        (&self.socket).write_all(&body)?;
        Ok(Launched {
            pid: self.pid,
            stdout: out_r.into(),
            stderr: err_r.into(),
        })
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        // After a launch, the end of what was sent (the copy reads it all first); a copy
        // never used sees the socket close and exits (one never taken ends with this process).
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }
}

/// The forked copy: wait for the launch, take on its state, run the launcher step.
fn serve(socket: UnixStream, parent: i32) -> ExitCode {
    // The runner's marks so far are the runner's to report.
    let _ = super::costs::take();
    // What the caller gave sneaky-run is not the launcher's: its stdout and stderr are the
    // caller's pipes, which would stay open (and the caller waiting) while this copy waits.
    if let Ok(null) = std::fs::File::open("/dev/null") {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
    // The death signal and the session now, while nothing else is to be done here.
    if !super::sandbox::detach(parent) {
        return ExitCode::SUCCESS;
    }
    super::costs::mark("launcher-forked-session");
    // The network namespace the runner made for the launch, if it makes one
    // (`namespaces::NetAhead`): entered when it comes, the host's sockets read now, in the
    // host's; the first steps use it, or leave it.
    let mut host_sockets = super::namespaces::NetAhead::host_sockets();
    let mut ahead = None;
    let mut begun = None;
    let (launch, out, err) = loop {
        match receive(&socket) {
            Some(Message::Exec(request)) => {
                // Only before the first steps: in the sandbox's user namespace, the files of
                // other users would be seen as by nobody. Then the runner works it out.
                let answer = match begun {
                    None => {
                        super::costs::set(request.costs);
                        let worked = request.inputs.work();
                        super::costs::mark("exec-set");
                        worked
                    }
                    Some(_) => None,
                };
                let sent = serde_json::to_vec(&answer)
                    .ok()
                    .and_then(|a| send(&socket, None, &a).ok());
                if sent.is_none() {
                    return ExitCode::SUCCESS;
                }
            }
            Some(Message::Network(made)) if begun.is_none() && ahead.is_none() => {
                ahead = host_sockets
                    .take()
                    .and_then(|sockets| super::namespaces::NetAhead::enter(made, sockets));
                super::costs::mark("network-namespace-entered");
            }
            Some(Message::Early(early)) if begun.is_none() => {
                begun = Some(super::sandbox::begin(early, ahead.take()));
            }
            Some(Message::Launch(launch, out, err)) => break (launch, out, err),
            _ => return ExitCode::SUCCESS,
        }
    };
    drop(socket);
    if nix::unistd::dup2_stdout(&out).is_err() || nix::unistd::dup2_stderr(&err).is_err() {
        return ExitCode::from(super::launch::SETUP_FAILED as u8);
    }
    drop((out, err));
    if std::env::set_current_dir(&launch.cwd).is_err() {
        return ExitCode::from(super::launch::SETUP_FAILED as u8);
    }
    // The environment goes to the command (the launcher's own steps read none of it).
    super::sandbox::launcher_main_after(
        [OsString::from(launch.spec), launch.command].into_iter(),
        begun,
        ahead,
        Some(launch.env),
    )
}

/// What the runner sends: the exec set to work out, the first steps' [`Early`], then the
/// launch and the two pipes it came with. The launcher answers the first alone, with the set
/// (`Option<Ahead>` as JSON, after its length).
enum Message {
    Exec(ExecRequest),
    Network(OwnedFd),
    Early(Early),
    Launch(Launch, OwnedFd, OwnedFd),
}

/// The contained exec set's inputs, and whether to mark the time it took.
#[derive(serde::Serialize, serde::Deserialize)]
struct ExecRequest {
    inputs: ExecInputs,
    costs: bool,
}

/// The bytes an [`Early`] and an exec set's message start with ([`super::sys::send_fd`]
/// sends `L`).
const EARLY: u8 = b'E';
const EXEC: u8 = b'X';
/// The byte sent with the network namespace's descriptor.
const NETWORK: u8 = b'N';

/// A message: its body after the body's length (a little-endian u64), after its kind's byte
/// where it has one (the launcher's answer has none).
fn send(socket: &UnixStream, kind: Option<u8>, body: &[u8]) -> std::io::Result<()> {
    let mut message = Vec::with_capacity(body.len() + 9);
    message.extend(kind);
    message.extend((body.len() as u64).to_le_bytes());
    message.extend_from_slice(body);
    (&*socket).write_all(&message)
}

/// The body [`send`] wrote; None at the stream's end.
fn body(socket: &UnixStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 8];
    (&*socket).read_exact(&mut len).ok()?;
    let mut body = vec![0u8; usize::try_from(u64::from_le_bytes(len)).ok()?];
    (&*socket).read_exact(&mut body).ok()?;
    Some(body)
}

/// The next message; None when the socket closed first (or sent what is not a message).
fn receive(socket: &UnixStream) -> Option<Message> {
    match super::sys::recv_byte_fd(socket).ok()? {
        (Some(EXEC), None) => Some(Message::Exec(serde_json::from_slice(&body(socket)?).ok()?)),
        (Some(EARLY), None) => Some(Message::Early(serde_json::from_slice(&body(socket)?).ok()?)),
        (Some(NETWORK), Some(made)) => Some(Message::Network(made)),
        (Some(_), Some(out)) => {
            let err = super::sys::recv_fd(socket).ok()??;
            let launch = Launch::from_bytes(&body(socket)?)?;
            Some(Message::Launch(launch, out, err))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exec_set_asked_ahead_is_asked_once_and_taken_only_for_its_inputs() {
        let shell = crate::config::Shell::default();
        let inputs = ExecInputs::of(&shell, std::path::Path::new("/w")).expect("contained");
        let other = ExecInputs::of(&shell, std::path::Path::new("/v")).expect("contained");
        let (ours, theirs) = UnixStream::pair().expect("pair");
        let mut zygote = Zygote {
            socket: ours,
            pid: Pid::from_raw(1),
            asked: None,
        };
        zygote.ask(&inputs).expect("asked");
        zygote.asked = Some(inputs.clone());
        assert!(zygote.work_out_exec_set(&other).is_none());
        assert!(zygote.work_out_exec_set(&inputs).is_some());
        // One request reached the launcher's end, for those inputs, and nothing after it.
        match receive(&theirs) {
            Some(Message::Exec(request)) => assert!(request.inputs == inputs),
            _ => panic!("no request"),
        }
        theirs.set_nonblocking(true).expect("nonblocking");
        let mut more = [0u8; 1];
        let after = (&theirs).read(&mut more);
        assert!(
            matches!(&after, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{after:?}"
        );
    }

    #[test]
    fn a_launch_goes_over_the_socket_whole_and_nothing_else_does() {
        let odd = OsString::from_vec(b"/tmp/ws-\xff".to_vec());
        let launch = Launch {
            spec: r#"{"sandbox":true,"cwd":"/w"}"#.into(),
            command: OsString::from_vec(b"echo \xfe; true".to_vec()),
            env: vec![
                ("PATH".into(), "/usr/bin:/bin".into()),
                (OsString::from_vec(b"K\xff".to_vec()), odd.clone()),
                ("EMPTY".into(), OsString::new()),
            ],
            cwd: odd,
        };
        let bytes = launch.to_bytes();
        assert_eq!(Launch::from_bytes(&bytes), Some(launch));
        // Cut anywhere, or with a byte more, it is no launch.
        for cut in 0..bytes.len() {
            assert_eq!(Launch::from_bytes(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Launch::from_bytes(&longer), None);
        // A length past the end, and a count no bytes could hold, are refused, not allocated.
        let mut huge = bytes.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Launch::from_bytes(&huge), None);
    }
}
