//! The properties the fuzz targets check, shared with the corpus replay in the test suite
//! (`tests/suite/fuzz_replay.rs`), so CI replays the minimised corpus without a fuzzing build.

#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::OnceLock;

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use sneaky::jail::Workspace;
use sneaky::protocol::parse_request;
use sneaky::tools::{find, finish, grep, list, parse_args, read};

/// Arbitrary bytes as a tool's stdin: request parsing and every tool's argument validation
/// return Ok or a clean error, never panic or allocate without bound.
pub fn protocol(data: &[u8]) {
    let Ok(value) = parse_request(data) else {
        return;
    };
    let _ = parse_args::<read::ReadArgs>(value.clone());
    let _ = parse_args::<list::ListArgs>(value.clone());
    let _ = parse_args::<grep::GrepArgs>(value.clone());
    let _ = parse_args::<find::FindArgs>(value.clone());
    let _ = parse_args::<finish::FinishArgs>(value.clone());
    if let Some(pattern) = value.get("pattern").and_then(|p| p.as_str()) {
        let _ = find::compile(pattern);
    }
}

fn hostile_workspace() -> &'static (PathBuf, Workspace) {
    static WS: OnceLock<(PathBuf, Workspace)> = OnceLock::new();
    WS.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("sneaky-fuzz-jail-{}", std::process::id()));
        let root = base.join("ws");
        let _ = std::fs::create_dir_all(root.join("a/b"));
        let _ = std::fs::write(root.join("a/f"), "inside");
        let _ = std::fs::write(base.join("secret"), "outside");
        for (target, link) in [
            ("..", "up"),
            ("../secret", "out"),
            ("/proc/self/root", "proc"),
            ("a/b/../..", "loop_root"),
            ("l2", "l1"),
            ("l1", "l2"),
        ] {
            let _ = std::os::unix::fs::symlink(target, root.join(link));
        }
        let _ = std::os::unix::fs::symlink(&base, root.join("a/abs_out"));
        let _ = std::os::unix::fs::symlink(root.join("a"), root.join("abs_in"));
        let ws = Workspace::open_root(&root).expect("workspace");
        (ws.root().to_path_buf(), ws)
    })
}

/// Arbitrary path strings against a workspace full of hostile links: whatever opens, by
/// openat2 or by the fallback walker, lies beneath the root in the kernel's own view.
pub fn jail_paths(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (root, ws) = hostile_workspace();
    let Ok(rel) = ws.relative(text) else {
        return;
    };
    for flags in [
        OFlag::O_PATH,
        OFlag::O_RDONLY,
        OFlag::O_PATH | OFlag::O_NOFOLLOW,
    ] {
        let opened = [
            ws.open(&rel, flags, Mode::empty()).ok(),
            ws.resolve_beneath(ws.root_fd(), rel.as_path(), flags, Mode::empty())
                .ok(),
        ];
        for fd in opened.into_iter().flatten() {
            let real =
                std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("readlink");
            assert!(
                real.starts_with(root),
                "{text:?} opened {real:?}, outside {root:?}"
            );
        }
    }
}
