//! When a command started, on the clock that stamps change times: what tells a workspace
//! path changed by someone else while the command ran from one it found as it was.

use std::fs::File;

use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};

/// When a command started, in nanoseconds since the epoch on this machine's real-time clock.
///
/// Whether a workspace path was changed by someone else while the command ran (a person's
/// editor, another tool) is told by its change time (ctime), which every change of content,
/// mode, links or name sets to the kernel's clock and which no program can set back: a change
/// time at or after the start is a change made since. Nothing is read or recorded per path
/// at the start, so a large workspace costs nothing.
///
/// The kernel stamps change times from a coarse clock, which here lags the real time by up to
/// two ticks (4-8 ms), so the start is best taken from the kernel's own stamps
/// ([`Started::stamped`]): two changes in a row to a directory of ours on the workspace's file
/// system, the start being the second one's change time. The stamps the kernel hands out never
/// go back (a fine-grained stamp, Linux 6.13 on, raises the floor of every later coarse one),
/// so every change made before the first of the two is stamped at most the first one's time,
/// and every change made after the second at least the second one's. When the second is
/// later than the first, no change made before the start can look made since, and none made
/// after it can look made before: exact, with no wait. Otherwise (the same coarse tick on a
/// kernel or file system without fine-grained stamps, or the history on another file system)
/// the start is the real-time clock's, and [`Started::settle`] holds the command back until
/// the coarse clock has passed it, so that any change made once the command runs is stamped
/// after the start, and any change made before the start is stamped before it (a change made
/// during the few milliseconds in between counts as made meanwhile: the safe side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started(pub(super) i128);

impl Started {
    pub fn now() -> Started {
        Started(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128),
        )
    }

    /// The start as the kernel stamps changes (see [`Started`]): the change time of the second
    /// of two changes of `marker`'s mode to what it is, when it is later than the first's, and
    /// `marker` is on the workspace's file system (`workspace_dev`), whose stamps then have
    /// its granularity too. None: the real-time clock and [`Started::settle`] it is.
    pub(super) fn stamped(marker: &File, workspace_dev: u64) -> Option<Started> {
        use nix::sys::stat::{fchmod, fstat};
        let was = fstat(marker).ok()?;
        if was.st_dev != workspace_dev {
            return None;
        }
        let mode = Mode::from_bits_truncate(was.st_mode & 0o7777);
        // Each change is read back: a change time that was read is what makes the kernel
        // stamp the next change of the same file finer than its coarse clock.
        let stamp = || -> Option<i128> {
            fchmod(marker, mode).ok()?;
            let now = fstat(marker).ok()?;
            Some(i128::from(now.st_ctime) * 1_000_000_000 + i128::from(now.st_ctime_nsec))
        };
        let (first, second) = (stamp()?, stamp()?);
        (second > first).then_some(Started(second))
    }

    /// Wait until the coarse clock that stamps change times has passed the start (at most two
    /// clock ticks).
    pub fn settle(self) {
        use nix::time::{clock_gettime, ClockId};
        let limit = std::time::Instant::now() + std::time::Duration::from_millis(50);
        loop {
            let Ok(coarse) = clock_gettime(ClockId::CLOCK_REALTIME_COARSE) else {
                // No coarse clock to watch: wait out the longest tick (HZ=100).
                std::thread::sleep(std::time::Duration::from_millis(10));
                return;
            };
            let coarse = i128::from(coarse.tv_sec()) * 1_000_000_000 + i128::from(coarse.tv_nsec());
            if coarse > self.0 || std::time::Instant::now() > limit {
                return;
            }
            std::thread::sleep(std::time::Duration::from_micros(250));
        }
    }

    /// Whether a path with this change time was changed at or after the start. A change time with
    /// no nanoseconds comes from a file system that keeps whole seconds (or two): then a
    /// change in the second before the start counts too.
    pub(super) fn changed_since(self, ctime: i64, ctime_nsec: i64) -> bool {
        if ctime_nsec == 0 {
            let start_secs = self.0.div_euclid(1_000_000_000);
            return i128::from(ctime) >= start_secs - 1;
        }
        i128::from(ctime) * 1_000_000_000 + i128::from(ctime_nsec) >= self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    /// The kernel's release as (major, minor).
    fn kernel() -> (u32, u32) {
        let release = nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut parts = release.split(|c: char| !c.is_ascii_digit());
        let mut next = || parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (next(), next())
    }

    #[test]
    fn a_stamped_start_parts_changes_made_before_it_from_changes_made_after() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("marker")).unwrap();
        let marker = File::open(dir.path().join("marker")).unwrap();
        let dev = fs::metadata(dir.path()).unwrap().dev();
        let rounds = 1000;
        let mut exact = 0;
        for i in 0..rounds {
            if i % 50 == 0 {
                // Clock ticks enough since the marker last changed that its first change in
                // this round is stamped from the coarse clock, as the file made before it.
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            // New files, never looked at: the kernel stamps them from its coarse clock (or the
            // floor of fine-grained stamps), which is what a person's editor's changes get.
            let before = dir.path().join(format!("before-{i}"));
            fs::write(&before, "").unwrap();
            let Some(started) = Started::stamped(&marker, dev) else {
                continue;
            };
            exact += 1;
            let after = dir.path().join(format!("after-{i}"));
            fs::write(&after, "").unwrap();
            let meta = |p: &std::path::Path| fs::symlink_metadata(p).unwrap();
            assert!(
                !{
                    let m = meta(&before);
                    started.changed_since(m.ctime(), m.ctime_nsec())
                },
                "round {i}: a change made before the start counts as made since"
            );
            assert!(
                {
                    let m = meta(&after);
                    started.changed_since(m.ctime(), m.ctime_nsec())
                },
                "round {i}: a change made after the start counts as made before"
            );
        }
        // Fine-grained stamps (Linux 6.13 on, ext4, xfs, btrfs, tmpfs) make nearly every start
        // exact; before them, only a start whose two stamps fell in two clock ticks is.
        if kernel() >= (6, 13) && Started::stamped(&marker, dev).is_some() {
            assert!(
                exact * 10 >= rounds * 9,
                "{exact} of {rounds} starts were exact"
            );
        }
        assert!(Started::stamped(&marker, dev.wrapping_add(1)).is_none());
    }
}
