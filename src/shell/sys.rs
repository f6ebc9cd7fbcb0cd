//! The system calls the sandbox needs that no safe crate offers; the only `unsafe` code
//! in SneakyCode.
//!
//! - `fork`: the launcher becomes the first process (init) of the command's new PID namespace
//!   by forking after `unshare(CLONE_NEWPID)`. A re-exec would be safe Rust but costs a
//!   millisecond per call and loses the capabilities the init needs to mount `/proc`.
//!   Forking is sound here because the launcher is a freshly exec'd, single-threaded process
//!   (it never starts a thread), so no lock can be held by a thread that does not exist in
//!   the child.
//! - `mount_setattr(2)` with `AT_RECURSIVE` (Linux 5.12): makes a whole mount tree read-only
//!   in one call (nix and rustix do not wrap it).
//! - `close_range(2)` with `CLOSE_RANGE_CLOEXEC` (Linux 5.11): every descriptor the caller
//!   left open is closed when the command is executed, in one call.
//! - `ioctl(SIOCSIFFLAGS)`: the loopback of a workspace's shared network namespace
//!   (src/shell/jobs) or of a command's own with a host list (src/shell/proxy.rs) is brought up.
//! - `SCM_RIGHTS`: the listening socket of a host list's bridge is handed to the proxy
//!   (src/shell/proxy.rs); a received descriptor becomes an `OwnedFd`.
//! - `lgetxattr(2)`: whether a directory of a command's overlay upper layer is opaque (its
//!   `user.overlay.opaque` attribute; src/shell/overlay/scan.rs).
//! - `llistxattr(2)`, `lremovexattr(2)`: whether a command set extended attributes on the root
//!   of its overlay (src/shell/overlay/scratch.rs), and on the files it leaves, which are
//!   applied without them (src/shell/overlay/scan.rs, apply.rs).
//! - `pidfd_open(2)` (Linux 5.3): a descriptor that becomes readable when the launcher exits,
//!   waited on with its output pipes by one thread (src/shell/capture.rs; nix has no wrapper).

#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::unistd::Pid;

/// Which side of a fork this is.
pub enum Forked {
    Parent(Pid),
    Child,
}

/// Fork the calling process. Only call from a single-threaded process: the launcher, or
/// sneaky-run's main before it starts a thread (src/shell/zygote.rs, which checks).
pub fn fork_single_threaded() -> std::io::Result<Forked> {
    // SAFETY: the caller has exactly one thread (the launcher is a fresh exec of sneaky-run
    // that starts none; the zygote's caller counts /proc/self/task first), so the child
    // gets a consistent copy of the whole address space, with no lock held by a thread it
    // lacks; it may then allocate and call anything, as a single-threaded process may.
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Parent { child }) => Ok(Forked::Parent(child)),
        Ok(nix::unistd::ForkResult::Child) => Ok(Forked::Child),
        Err(e) => Err(std::io::Error::from(e)),
    }
}

/// `MOUNT_ATTR_*` flags of mount_setattr(2).
pub const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub const MOUNT_ATTR_NODEV: u64 = 0x4;
pub const MOUNT_ATTR_NOEXEC: u64 = 0x8;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Set and clear mount attributes on `path` and, with `recursive`, every mount beneath it.
pub fn mount_setattr(path: &Path, recursive: bool, set: u64, clear: u64) -> std::io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: `c_path` is a valid NUL-terminated string and `attr` a valid `struct
    // mount_attr` whose size is passed; both outlive the call, which only reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c_path.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Mark every descriptor above 2 close-on-exec: whatever the caller of `sneaky-run` left
/// open (a file outside the workspace, a directory through which `/proc/self/fd/N/...`
/// reaches past every mount) never reaches the command. Close-on-exec rather than closed:
/// the launcher itself may still use its own until it executes the shell.
pub fn close_inherited_fds() -> std::io::Result<()> {
    // SAFETY: close_range takes plain integers and touches only the descriptor table; with
    // CLOSE_RANGE_CLOEXEC it closes nothing, so no descriptor owned elsewhere in this
    // process becomes invalid.
    let rc = unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A pidfd for the process `pid` (readable once it has exited), close-on-exec.
pub fn pidfd_open(pid: Pid) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1; it reads and
    // writes no memory of this process.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(std::io::Error::other)?;
    // SAFETY: the kernel just installed `fd` for this call; nothing else owns it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Bring up the loopback interface of this (new) network namespace, where it starts down.
/// nix has no wrapper for the interface ioctls; a netlink library for one flag is not worth
/// its size.
pub fn loopback_up() -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let sock = std::net::UdpSocket::bind("0.0.0.0:0")?;
    // SAFETY: `ifreq` is a plain C struct (a name and a union of integers and addresses),
    // for which all zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: `req` is a valid, initialized `struct ifreq` that lives across both calls, and
    // SIOCGIFFLAGS / SIOCSIFFLAGS read and write only its name and flags.
    let rc = unsafe {
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) != 0 {
            -1
        } else {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as _, &req)
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Send one descriptor over a Unix socket (SCM_RIGHTS), with one byte of data (`L`).
pub fn send_fd(
    sock: &std::os::unix::net::UnixStream,
    fd: std::os::fd::BorrowedFd<'_>,
) -> std::io::Result<()> {
    send_byte_fd(sock, b'L', fd)
}

/// [`send_fd`] with the byte `byte`, which [`recv_byte_fd`] returns with the descriptor.
pub fn send_byte_fd(
    sock: &std::os::unix::net::UnixStream,
    byte: u8,
    fd: std::os::fd::BorrowedFd<'_>,
) -> std::io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, UnixAddr};
    use std::os::fd::AsRawFd;
    let fds = [fd.as_raw_fd()];
    let data = [byte];
    let iov = [std::io::IoSlice::new(&data)];
    sendmsg::<UnixAddr>(
        sock.as_raw_fd(),
        &iov,
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map(drop)
    .map_err(std::io::Error::from)
}

/// Receive one descriptor sent by [`send_fd`] (close-on-exec); None when the other end
/// closed without sending one.
pub fn recv_fd(
    sock: &std::os::unix::net::UnixStream,
) -> std::io::Result<Option<std::os::fd::OwnedFd>> {
    recv_byte_fd(sock).map(|(_, fd)| fd)
}

/// Receive one byte, and the descriptor sent with it if any: [`send_fd`]'s `L` with its
/// descriptor, or a byte written plainly (None at the end of the stream).
pub fn recv_byte_fd(
    sock: &std::os::unix::net::UnixStream,
) -> std::io::Result<(Option<u8>, Option<std::os::fd::OwnedFd>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, UnixAddr};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
    let msg = recvmsg::<UnixAddr>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    let read = msg.bytes;
    let mut got = None;
    for cmsg in msg.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            for fd in fds {
                // SAFETY: the kernel just installed `fd` in this process's table for this
                // message; nothing else owns it, so it is wrapped exactly once (an extra one
                // is wrapped too, and closed when dropped).
                let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                if got.is_none() {
                    got = Some(owned);
                }
            }
        }
    }
    Ok(((read == 1).then_some(byte[0]), got))
}

/// The value of the extended attribute `name` of `path` (a link itself, never followed), or
/// None when it has none (or it cannot be read).
pub fn lgetxattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let c_name = CString::new(name).ok()?;
    let mut value = vec![0u8; 256];
    // SAFETY: both strings are valid and NUL-terminated, and `value` is a writable buffer of
    // the length passed; the kernel writes at most that many bytes and returns how many.
    let n = unsafe {
        libc::lgetxattr(
            c_path.as_ptr(),
            c_name.as_ptr(),
            value.as_mut_ptr().cast::<libc::c_void>(),
            value.len(),
        )
    };
    let n = usize::try_from(n).ok()?;
    value.truncate(n);
    Some(value)
}

/// Remove the extended attribute `name` of `path` (a link itself, never followed).
pub fn lremovexattr(path: &Path, name: &[u8]) -> std::io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())?;
    let c_name = CString::new(name)?;
    // SAFETY: both strings are valid and NUL-terminated; the call reads them only.
    let r = unsafe { libc::lremovexattr(c_path.as_ptr(), c_name.as_ptr()) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The names of the extended attributes of `path` (a link itself, never followed), or None
/// when they cannot be read.
pub fn llistxattr(path: &Path) -> Option<Vec<Vec<u8>>> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut list = vec![0u8; 1024];
    loop {
        // SAFETY: `c_path` is valid and NUL-terminated, and `list` a writable buffer of the
        // length passed; the kernel writes at most that many bytes and returns how many.
        let n = unsafe {
            libc::llistxattr(
                c_path.as_ptr(),
                list.as_mut_ptr().cast::<libc::c_char>(),
                list.len(),
            )
        };
        match usize::try_from(n) {
            Ok(n) => {
                list.truncate(n);
                break;
            }
            Err(_) if std::io::Error::last_os_error().raw_os_error() == Some(libc::ERANGE) => {
                if list.len() >= 1 << 16 {
                    return None;
                }
                list.resize(list.len() * 4, 0);
            }
            Err(_) => return None,
        }
    }
    // NUL-separated, NUL-terminated.
    Some(
        list.split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(<[u8]>::to_vec)
            .collect(),
    )
}
