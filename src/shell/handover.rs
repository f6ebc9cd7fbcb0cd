//! The workspace as a background job sees it, handed from the job's launcher to its supervisor
//! as a descriptor over a socket in the supervisor's private directory: the launcher's end
//! ([`hand_view`]) and the supervisor's ([`take_view`]). Why a descriptor and not a namespace:
//! src/shell/jobs/mirror.rs, which writes the workspace's changes through it.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::{Duration, Instant};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// In the launcher, once the job's mount view is built: hand the supervisor the workspace as
/// the job sees it (`root`, the overlay with what is bound over it).
pub fn hand_view(to: &UnixStream, root: &Path) {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    if let Ok(fd) = nix::fcntl::open(root, flags, Mode::empty()) {
        let _ = crate::shell::sys::send_fd(to, fd.as_fd());
    }
}

/// In the supervisor, while a job starts: the descriptor its launcher (`launcher`, by pid)
/// hands over on `listener`. `starting`: whether the launcher may still connect (it does so
/// before it reports, so once the report is in, one last look suffices).
pub fn take_view(
    listener: &UnixListener,
    launcher: i32,
    limit: Duration,
    starting: impl Fn() -> bool,
) -> Option<OwnedFd> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    listener.set_nonblocking(true).ok()?;
    let deadline = Instant::now() + limit;
    let stream = loop {
        let last = !starting() || Instant::now() > deadline;
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && !last => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return None,
        }
    };
    // Only the job's own launcher hands a view over.
    let peer = getsockopt(&stream.as_fd(), PeerCredentials).ok()?;
    if peer.pid() != launcher {
        return None;
    }
    stream.set_nonblocking(false).ok()?;
    stream
        .set_read_timeout(Some(deadline.saturating_duration_since(Instant::now())))
        .ok()?;
    crate::shell::sys::recv_fd(&stream).ok().flatten()
}
