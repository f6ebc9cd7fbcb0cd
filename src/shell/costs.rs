//! Where the time of a command's start and end goes, for the cost table of
//! benches/run_start.sh: named marks on the monotonic clock, which every process of the machine
//! shares, so that the runner's marks and the launcher's line up. Each mark names the step that
//! ends with it. Taken only when `SNEAKY_RUN_COSTS` names a file in the runner's environment;
//! the launcher (whose environment is the command's) is told by its spec, and hands its marks
//! back on its report line. The runner appends one line per call to that file:
//! `name=nanoseconds` pairs separated by tabs, in the order taken. Unset, a mark is one load of
//! a flag: no clock is read and nothing is kept.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The environment variable naming the file the runner appends its marks to.
pub const ENV: &str = "SNEAKY_RUN_COSTS";

static ON: AtomicBool = AtomicBool::new(false);
static MARKS: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());

/// The runner: take marks when [`ENV`] is set.
pub fn from_env() {
    if std::env::var_os(ENV).is_some_and(|v| !v.is_empty()) {
        ON.store(true, Ordering::Relaxed);
    }
}

/// The launcher: take marks when its spec says so.
pub fn set(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The step named `name` has ended now.
pub fn mark(name: &str) {
    if !on() {
        return;
    }
    let Ok(now) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) else {
        return;
    };
    let ns = u64::try_from(now.tv_sec()).unwrap_or(0) * 1_000_000_000
        + u64::try_from(now.tv_nsec()).unwrap_or(0);
    if let Ok(mut marks) = MARKS.lock() {
        marks.push((name.to_string(), ns));
    }
}

/// The marks taken so far, taken away (the launcher's, for its report).
pub fn take() -> Vec<(String, u64)> {
    MARKS
        .lock()
        .map(|mut m| std::mem::take(&mut *m))
        .unwrap_or_default()
}

/// Marks another process took (the launcher's, from its report).
pub fn add(marks: Vec<(String, u64)>) {
    if let Ok(mut all) = MARKS.lock() {
        all.extend(marks);
    }
}

/// Append this call's marks, in time order, as one line of the file [`ENV`] names.
pub fn write() {
    let Some(path) = std::env::var_os(ENV).filter(|_| on()) else {
        return;
    };
    let mut marks = take();
    marks.sort_by_key(|(_, ns)| *ns);
    let line = marks
        .iter()
        .map(|(name, ns)| format!("{name}={ns}"))
        .collect::<Vec<_>>()
        .join("\t");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_kept_only_when_on_and_come_back_in_order() {
        set(false);
        mark("ignored");
        assert!(take().is_empty());
        set(true);
        mark("first");
        add(vec![("earlier".into(), 1)]);
        mark("second");
        let marks = take();
        set(false);
        let names: Vec<&str> = marks.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["first", "earlier", "second"]);
        assert!(marks[0].1 <= marks[2].1);
        assert!(take().is_empty());
    }
}
