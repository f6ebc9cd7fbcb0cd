//! The process limit that also holds for root: a pids cgroup per call.
//!
//! RLIMIT_NPROC does not bind uid 0 (the kernel exempts the root user from it, inside a user
//! namespace mapped to itself too), so as root a fork loop would run unbounded. The runner
//! creates a child cgroup of its own in the pids hierarchy (cgroup v1's `pids` controller, or
//! a cgroup v2 directory whose `cgroup.subtree_control` already enables `pids`) with
//! `pids.max = tools.shell.max_processes`; the launcher moves itself into it before entering
//! the namespaces, so every process and thread of the command counts, and none can leave it
//! (the cgroup files are read-only in the command's mount view, and it has no capabilities).
//! After the call the runner kills whatever the cgroup still holds and removes it; a cgroup
//! left by a runner that was killed is removed by the next call.
//!
//! Where no pids hierarchy is writable (not root, a container with /sys/fs/cgroup read-only),
//! RLIMIT_NPROC stays the only limit, and the result's `sandbox` field says so.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Every cgroup made here is named `sneaky-run-<runner pid>-<n>`.
const PREFIX: &str = "sneaky-run-";
/// How long removing the cgroup waits for its processes to be gone.
const REMOVE_LIMIT: Duration = Duration::from_secs(3);

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A call's pids cgroup; removed (its processes killed first) when dropped.
pub struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// Create the call's cgroup with `pids.max = max`, or say why there is none. Its parent
    /// is looked for where the pids hierarchy is usually mounted first ([`Mounts::Usual`]),
    /// then among every mount.
    pub fn create(max: u64) -> Result<Self, String> {
        if let Ok(made) = own_pids_cgroup(&Mounts::Usual).and_then(|p| Self::create_in(&p, max)) {
            return Ok(made);
        }
        let mounts = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("reading /proc/self/mountinfo: {e}"))?;
        Self::create_in(&own_pids_cgroup(&Mounts::Listed(mounts))?, max)
    }

    /// The call's cgroup beneath `parent`; an error where `parent` is no pids hierarchy's
    /// (a child there has no `pids.max`: then it goes again at once).
    fn create_in(parent: &Path, max: u64) -> Result<Self, String> {
        remove_stale(parent);
        let me = std::process::id();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("{PREFIX}{me}-{n}"));
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let made = Self { dir };
        std::fs::write(made.dir.join("pids.max"), max.to_string())
            .map_err(|e| format!("writing {}/pids.max: {e}", made.dir.display()))?;
        Ok(made)
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        remove(&self.dir, Instant::now() + REMOVE_LIMIT);
    }
}

/// Move the calling process (the launcher, before it enters the namespaces) into `dir`.
/// The launcher has a single thread, so in cgroup v1 moving that thread (`tasks`, "0" for
/// the caller) moves the process, without the global lock a `cgroup.procs` write takes,
/// which waits for an RCU grace period (about 11 ms a call, measured on Linux 6.18).
pub fn join(dir: &Path) -> Result<(), String> {
    let tasks = dir.join("tasks");
    let result = if tasks.exists() {
        std::fs::write(tasks, "0")
    } else {
        std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
    };
    result.map_err(|e| format!("joining {}: {e}", dir.display()))
}

/// Where a cgroup hierarchy is looked for.
enum Mounts {
    /// Where systemd and container runtimes mount it (`/sys/fs/cgroup/pids` for cgroup v1's
    /// pids controller, `/sys/fs/cgroup` or `/sys/fs/cgroup/unified` for cgroup v2), if a
    /// cgroup file system of that version is mounted there. Reading `/proc/self/mountinfo`
    /// (its every line formatted by the kernel) was most of the pids cgroup's step: 2 % of
    /// `sneaky-run`'s own CPU samples in a call (perf, 200 calls), on the runner's thread
    /// while the forked launcher and the network namespace's thread take the other CPU.
    Usual,
    /// Among the mounts of `/proc/self/mountinfo` (its text).
    Listed(String),
}

/// The directory of this process's cgroup in a hierarchy where a child gets `pids.max`.
fn own_pids_cgroup(mounts: &Mounts) -> Result<PathBuf, String> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("reading /proc/self/cgroup: {e}"))?;
    // hierarchy-id:controllers:path; v1's pids line names the controller, v2's is `0::path`.
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let v1 = controllers.split(',').any(|c| c == "pids");
        if !v1 && !controllers.is_empty() {
            continue;
        }
        let mount = match mounts {
            Mounts::Usual => usual_mount_point(v1),
            Mounts::Listed(mountinfo) => mount_point(mountinfo, v1),
        };
        let Some(mount) = mount else {
            continue;
        };
        let dir = mount.join(path.trim_start_matches('/'));
        if v1 || delegates_pids(&dir) {
            return Ok(dir);
        }
    }
    Err("no pids cgroup controller available".into())
}

/// [`Mounts::Usual`]: the first usual place where a cgroup file system of the version asked
/// for is mounted. Whether a v1 one holds the pids controller is told by the child made there
/// (`pids.max`, [`PidsCgroup::create_in`]).
fn usual_mount_point(v1: bool) -> Option<PathBuf> {
    use nix::sys::statfs::{statfs, CGROUP2_SUPER_MAGIC, CGROUP_SUPER_MAGIC};
    let (places, magic): (&[&str], _) = if v1 {
        (&["/sys/fs/cgroup/pids"], CGROUP_SUPER_MAGIC)
    } else {
        (
            &["/sys/fs/cgroup", "/sys/fs/cgroup/unified"],
            CGROUP2_SUPER_MAGIC,
        )
    };
    places
        .iter()
        .map(PathBuf::from)
        .find(|p| statfs(p).is_ok_and(|s| s.filesystem_type() == magic))
}

/// Where the pids hierarchy is mounted: a cgroup (v1) mount with the `pids` option, or the
/// cgroup2 mount.
fn mount_point(mountinfo: &str, v1: bool) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        // id parent major:minor root mount-point options [optional…] - fstype source super-options
        let (left, right) = line.split_once(" - ")?;
        let mount = left.split(' ').nth(4)?;
        let mut right = right.split(' ');
        let fstype = right.next()?;
        let options = right.nth(1).unwrap_or("");
        let matches = if v1 {
            fstype == "cgroup" && options.split(',').any(|o| o == "pids")
        } else {
            fstype == "cgroup2"
        };
        matches.then(|| PathBuf::from(unescape(mount)))
    })
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// A cgroup v2 directory whose children get the pids controller (enabling it here would
/// change the host's configuration, and fails where the cgroup holds processes itself).
fn delegates_pids(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.subtree_control"))
        .is_ok_and(|s| s.split_whitespace().any(|c| c == "pids"))
}

/// Remove the cgroups of runners that no longer exist (killed before they could clean up).
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = matches!(
            kill(Pid::from_raw(owner), None),
            Err(nix::errno::Errno::ESRCH)
        );
        if gone {
            remove(&entry.path(), Instant::now());
        }
    }
}

/// Kill every process in `dir`, then remove it; retried until `deadline` while processes
/// are still on their way out.
fn remove(dir: &Path, deadline: Instant) {
    loop {
        if let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) {
            for pid in procs.split_whitespace().filter_map(|p| p.parse().ok()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_place_of_the_pids_hierarchy_is_the_one_the_mounts_name() {
        let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else {
            eprintln!("skipped: no /proc/self/mountinfo");
            return;
        };
        let listed = own_pids_cgroup(&Mounts::Listed(mountinfo));
        match own_pids_cgroup(&Mounts::Usual) {
            Ok(usual) => assert_eq!(Ok(usual), listed),
            Err(_) => eprintln!("no pids hierarchy in the usual places here: {listed:?}"),
        }
    }

    #[test]
    fn finds_the_v1_pids_mount_and_the_v2_mount() {
        let info =
            "30 25 0:26 / /sys/fs/cgroup/pids rw,relatime shared:12 - cgroup cgroup rw,pids\n\
                    31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n\
                    32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
        assert_eq!(
            mount_point(info, true),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            mount_point(info, false),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(
            mount_point("32 25 0:28 / /a rw - cgroup cgroup rw,cpu\n", true),
            None
        );
    }
}
