//! Replays the committed, minimised fuzz corpus (fuzz/corpus/<target>/) through the same
//! checks the fuzz targets run (fuzz/checks.rs), without a fuzzing build.

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("read");
        check(&data);
        count += 1;
    }
    assert!(count > 0, "empty corpus for {target}");
}

#[test]
fn protocol_corpus() {
    replay("protocol", crate::checks::protocol);
}

#[test]
fn jail_paths_corpus() {
    replay("jail_paths", crate::checks::jail_paths);
}

#[test]
fn unidiff_corpus() {
    replay("unidiff", crate::checks::unidiff);
}

#[test]
fn str_replace_corpus() {
    replay("str_replace", crate::checks::str_replace);
}

#[test]
fn command_policy_corpus() {
    replay("command_policy", crate::checks::command_policy);
}

#[test]
fn mcp_line_corpus() {
    replay("mcp_line", crate::checks::mcp_line);
}

/// Nesting bombs for the command policy: refused with a clear message (or, for long flat
/// lists, answered), without exhausting the stack; the recursive checks run only below a
/// bounded tree depth. The time bound is on the CPU time of the checking thread, which a
/// loaded machine does not stretch (the wall clock went from under a second to 28 s at a
/// load of 15); the wall clock only gets a SLOW line.
#[test]
fn command_policy_nesting_bombs_are_answered_quickly() {
    use sneaky::config::Shell;
    use sneaky::shell::policy;
    // Far beyond the checked depth (200), and long flat lists.
    let n = 5_000;
    let nested =
        |open: &str, mid: &str, close: &str| format!("{}{mid}{}", open.repeat(n), close.repeat(n));
    // (the bomb, whether it must be refused)
    let bombs = [
        (nested("(", "ls", ")"), true),
        (nested("$(", "ls", ")"), true),
        (nested("\"$(", "ls", ")\""), true),
        (nested("{ ", "ls", "; }"), true),
        (nested("if true; then ", "ls", "; fi"), true),
        (nested("[ ", "x", " ]"), true),
        (nested("! ", "ls", ""), true),
        (nested("sh -c '", "ls", "'"), true),
        (nested("<(", "ls", ")"), true),
        (nested("ls $((", "1", "))"), true),
        ("ls | ".repeat(n) + "ls", false),
        ("ls && ".repeat(n) + "ls", false),
        ("ls\n".repeat(n), false),
        ("cat <<A\n".repeat(n) + &"A\n".repeat(n), false),
        (format!("echo {}", "'a'\"b\"\\c".repeat(n)), false),
    ];
    let root = std::path::Path::new("/fuzz-root/ws");
    for (bomb, refused) in &bombs {
        let what = format!("checking {}…", &bomb[..40.min(bomb.len())]);
        let started = std::time::Instant::now();
        let cpu_before = thread_cpu();
        // The strict mode: the parser's refusals are what is measured.
        let strict = Shell {
            strict: true,
            ..Shell::default()
        };
        let verdict = policy::check(bomb, &strict, root);
        let cpu = thread_cpu().saturating_sub(cpu_before);
        assert!(
            cpu < std::time::Duration::from_secs(10),
            "{what} took {cpu:?} of CPU time"
        );
        crate::util::took_at_most(started, std::time::Duration::from_secs(10), &what);
        match verdict {
            Err(e) => assert!(
                e.message().len() > 20 && e.message().len() < 2_000,
                "{what}: not a clear refusal: {:?}",
                e.message()
            ),
            Ok(approved) => {
                assert!(!refused, "{what}: approved a nesting bomb");
                assert!(approved
                    .programs
                    .iter()
                    .all(|p| p == "ls" || p == "cat" || p == "echo"));
            }
        }
        // The fuzz target's own checks (both configurations, the programs it approves).
        crate::checks::command_policy(bomb.as_bytes());
    }
}

/// CPU time used so far by the calling thread (user + system).
fn thread_cpu() -> std::time::Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let micros = |t: nix::sys::time::TimeVal| {
        std::time::Duration::from_secs(t.tv_sec() as u64)
            + std::time::Duration::from_micros(t.tv_usec() as u64)
    };
    micros(usage.user_time()) + micros(usage.system_time())
}

#[test]
fn skim_corpus() {
    replay("skim", crate::checks::skim);
}
