//! Which connections the HTTP server keeps: at most [`MAX_CONNECTIONS`] (and half the
//! descriptors), at most [`MAX_PER_ADDRESS`] without the token from one address, the oldest one
//! without the token closed to make room; a connection leaves the table however its task ends.

use std::sync::Arc;
use std::time::Duration;

use super::{lock, Shared};
use crate::mcp::log::log;

/// A client has this long to send a request's headers, from the moment it connects or its
/// previous answer was sent: a connection without the token lives at most this long (then 401
/// and closed), and no slow-drip or silent connection is held open longer.
pub(super) const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections held open at once, at most (and at most half the descriptors the process may
/// open, the rest being for the work). Past it, the oldest connection that has not shown the
/// token yet is closed to make room, so clients without the token can neither crowd out those
/// with it nor use up the descriptors; when every one has shown it, the newcomer is closed.
pub(super) const MAX_CONNECTIONS: usize = 256;

/// Connections without the token from one client address, at most: past it, that address's
/// oldest one is closed, so that one address flooding the server closes only its own (the
/// slots of others, and their new connections, stay).
pub(super) const MAX_PER_ADDRESS: usize = 64;

/// The soft descriptor limit is raised to the hard one at start, up to this.
pub(super) const WANTED_DESCRIPTORS: u64 = 65536;

/// Raise the soft RLIMIT_NOFILE towards the hard one (distributions start services at 1024
/// with a far higher hard limit): every connection and every call's pipes take descriptors.
pub(super) fn raise_descriptor_limit() {
    if let Err(why) = crate::fs::durable::raise_descriptor_limit(WANTED_DESCRIPTORS) {
        log(why);
    }
}

/// `MAX_CONNECTIONS`, or half of RLIMIT_NOFILE when that is lower (at least 8).
pub(super) fn connection_cap() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(u64::MAX, |(soft, _)| soft);
    let half = usize::try_from(soft / 2).unwrap_or(usize::MAX);
    half.clamp(8, MAX_CONNECTIONS)
}

/// The open connections, by the order they came in.
pub(super) struct Connections {
    pub(super) cap: usize,
    pub(super) next: u64,
    pub(super) open: std::collections::BTreeMap<u64, Connection>,
}

impl Connections {
    /// Room for one more from `addr`: true when there is (after closing that address's oldest
    /// connection without the token when it has `MAX_PER_ADDRESS` of them, then the oldest
    /// one without the token at all when the table is full), false when every open one has
    /// shown it.
    pub(super) fn make_room(&mut self, addr: std::net::IpAddr) -> bool {
        let waiting = |c: &Connection| !c.authorized && c.addr == addr;
        if self.open.values().filter(|c| waiting(c)).count() >= MAX_PER_ADDRESS {
            self.close_oldest(waiting);
        }
        self.open.len() < self.cap || self.close_oldest(|c| !c.authorized)
    }

    /// Close the oldest connection that `pick` selects; whether there was one.
    fn close_oldest(&mut self, pick: impl Fn(&Connection) -> bool) -> bool {
        let oldest = self.open.iter().find(|(_, c)| pick(c)).map(|(id, _)| *id);
        match oldest.and_then(|id| self.open.remove(&id)) {
            Some(c) => {
                c.abort.abort();
                true
            }
            None => false,
        }
    }
}

/// One open connection: where from, whether it has shown the token, and how to close it.
pub(super) struct Connection {
    pub(super) addr: std::net::IpAddr,
    pub(super) authorized: bool,
    pub(super) abort: tokio::task::AbortHandle,
}

/// Takes a connection out of the table when its task ends, however it ends.
pub(super) struct Registered {
    pub(super) shared: Arc<Shared>,
    pub(super) id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.shared.connections).open.remove(&self.id);
    }
}
