//! The process table as Linux shows it in /proc: the few fields of `/proc/PID/stat` that the
//! clean-up after a command (`shell::supervise`) and a host's cancellation (`isolate`) need to
//! find what a command left behind.

/// One line of the process table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    /// `R`, `S`, `D`, `Z` (a zombie: dead, not yet reaped), `T`/`t` (stopped) …
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
}

/// A process's start time in clock ticks since boot (field 22 of /proc/PID/stat): with the
/// pid, it names one process, not whichever later takes the pid.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// The fields of one `/proc/PID/stat` line.
pub fn parse_stat(pid: i32, stat: &str) -> Option<Proc> {
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut f = rest.split(' ');
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    Some(Proc {
        pid,
        state,
        ppid,
        pgrp,
        session,
    })
}

/// Process `pid`, None when it is gone (or /proc is not there).
pub fn read(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

/// This process.
pub fn read_self() -> Option<Proc> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(std::process::id() as i32, &stat)
}

/// Every process (a full scan of /proc; empty when it is not there).
pub fn all() -> Vec<Proc> {
    pids().filter_map(read).collect()
}

/// The ids of every process, as /proc lists them (none when it is not there).
pub fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names() {
        let p = parse_stat(42, "42 (a b) c)) S 7 42 40 0 -1").expect("parse");
        assert_eq!((p.state, p.ppid, p.pgrp, p.session), ('S', 7, 42, 40));
        assert_eq!(parse_stat(1, "1 (x) S"), None);
    }

    #[test]
    fn this_process_is_in_the_table() {
        let me = read_self().expect("/proc/self/stat");
        assert_eq!(me.pid, std::process::id() as i32);
        assert_eq!(read(me.pid).map(|p| p.pgrp), Some(me.pgrp));
        assert!(all().iter().any(|p| p.pid == me.pid));
    }
}
