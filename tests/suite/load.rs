//! Load: 16 concurrent processes doing mixed edits (write_file, str_replace, patch_apply,
//! make_dir, delete_file, read_file) on the same small tree. Every file is always whole: each
//! version has a header, lines and a footer that all carry one version id (a torn file mixes
//! ids or lacks its footer), checked by every read while the load runs and on every file at
//! the end; no temporary file is left; every reply is one valid envelope.
//!
//! The suite runs it for 3 s; `benches/load.sh` runs it for a minute and prints the figures.
//! On a loaded machine 3 s may not be enough for every tool to succeed once (which the test
//! asserts), so the load goes on past its duration until each has, for at most two minutes.
//! SNEAKY_LOAD_SECS sets the duration, SNEAKY_LOAD_BIN_DIR the directory of the binaries
//! (default: this build's), SNEAKY_LOAD_WORKERS the number of concurrent processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{self, Reply};

const TOOLS: [&str; 6] = ["write", "read", "replace", "patch", "mkdir", "rm"];
const FILES: [&str; 6] = ["a.txt", "b.txt", "c.txt", "d/e.txt", "d/f.txt", "d/x/g.txt"];
const DIRS: [&str; 3] = ["d/x", "d/y", "d/y/z"];

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A whole version: `v <id>`, then `<id> <n>` lines, then `end <id>`.
fn version(id: &str, lines: usize) -> String {
    let mut s = format!("v {id}\n");
    for n in 0..lines {
        s.push_str(&format!("{id} {n}\n"));
    }
    s.push_str(&format!("end {id}\n"));
    s
}

/// The id of a whole version, or why the content is torn.
fn check_whole(content: &str, ids: &Mutex<BTreeSet<String>>) -> Result<String, String> {
    let mut lines = content.lines();
    let id = lines
        .next()
        .and_then(|l| l.strip_prefix("v "))
        .ok_or("no header line")?
        .to_string();
    if !content.ends_with(&format!("\nend {id}\n")) {
        return Err(format!("no footer for {id}"));
    }
    for l in lines {
        if l == format!("end {id}") {
            continue;
        }
        let (lid, n) = l.split_once(' ').ok_or_else(|| format!("bad line {l:?}"))?;
        if lid != id || n.parse::<u64>().is_err() {
            return Err(format!("line {l:?} in version {id}"));
        }
    }
    if !ids.lock().expect("ids").contains(&id) {
        return Err(format!("version {id} was never written"));
    }
    Ok(id)
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[derive(Default)]
struct Tally {
    ops: u64,
    /// "tool code" → count.
    codes: BTreeMap<String, u64>,
    torn: Vec<String>,
    bad_envelopes: Vec<String>,
}

fn bin_path(bin: &str) -> PathBuf {
    match std::env::var_os("SNEAKY_LOAD_BIN_DIR") {
        Some(dir) => Path::new(&dir).join(bin),
        None => assert_cmd::cargo::cargo_bin(bin),
    }
}

/// One process: a tool with a JSON request; the reply must be one valid envelope.
fn call(root: &Path, bin: &str, request: &Value) -> Result<Reply, String> {
    let mut child = Command::new(bin_path(bin))
        .current_dir(root)
        .env("SNEAKY_ROOT", root)
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", root.join(".no-xdg"))
        .env(
            "XDG_STATE_HOME",
            root.parent().expect("ws has a parent").join("state"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn {bin}: {e}"))?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().ok_or("stdin")?;
        stdin
            .write_all(request.to_string().as_bytes())
            .map_err(|e| format!("{bin} stdin: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{bin}: {e}"))?;
    // Reply::parse asserts the envelope; turn its panic into a tallied failure.
    std::panic::catch_unwind(|| Reply::parse(bin, out)).map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("{bin} {request}: {msg}")
    })
}

fn code_of(reply: &Reply) -> String {
    if reply.json["ok"] == true {
        "ok".into()
    } else {
        reply.json["error"]["code"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    }
}

/// Codes a tool may answer under this load; anything else is a finding.
fn expected(bin: &str, code: &str) -> bool {
    match code {
        "ok" | "conflict" | "not_found" => true,
        // The file changed between the worker's read and its edit.
        "no_match" => bin == "sneaky-replace",
        "patch_rejected" => bin == "sneaky-patch",
        _ => false,
    }
}

/// When the workers stop: at `until` if every tool has succeeded once by then, else as soon as
/// they all have, and at `hard_stop` whatever happened.
struct Deadline {
    until: Instant,
    hard_stop: Instant,
    /// Binaries that have answered ok at least once.
    succeeded: Mutex<BTreeSet<String>>,
}

impl Deadline {
    fn running(&self) -> bool {
        let now = Instant::now();
        now < self.until
            || (now < self.hard_stop
                && self.succeeded.lock().expect("succeeded").len() < TOOLS.len())
    }
}

fn worker(root: &Path, seed: u64, deadline: &Deadline, ids: &Mutex<BTreeSet<String>>) -> Tally {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut t = Tally::default();
    let mut n = 0u64;
    let fresh_id = |n: &mut u64| {
        *n += 1;
        let id = format!("w{seed}n{n}");
        ids.lock().expect("ids").insert(id.clone());
        id
    };
    while deadline.running() {
        let file = FILES[rng.below(FILES.len())];
        let (bin, request) = match rng.below(10) {
            0..=2 => {
                let id = fresh_id(&mut n);
                (
                    "sneaky-write",
                    json!({"file_path": file, "content": version(&id, 1 + rng.below(300))}),
                )
            }
            3..=5 => ("sneaky-read", json!({"file_path": file})),
            6 | 7 => {
                // Read, then edit what was read: replace_all the id (str_replace) or add a
                // line before the footer (patch_apply).
                let Ok(read) = call(root, "sneaky-read", &json!({"file_path": file})) else {
                    t.bad_envelopes.push(format!("read {file}"));
                    continue;
                };
                t.ops += 1;
                *t.codes
                    .entry(format!("sneaky-read {}", code_of(&read)))
                    .or_default() += 1;
                let Some(content) = read.json["result"]["content"].as_str() else {
                    continue;
                };
                let old = match check_whole(content, ids) {
                    Ok(id) => id,
                    Err(why) => {
                        t.torn.push(format!("{file} read: {why}"));
                        continue;
                    }
                };
                if rng.below(2) == 0 {
                    let id = fresh_id(&mut n);
                    (
                        "sneaky-replace",
                        json!({"file_path": file, "old_str": old, "new_str": id, "replace_all": true}),
                    )
                } else {
                    let count = content.lines().count();
                    let patch = format!(
                        "--- a/{file}\n+++ b/{file}\n@@ -{count},1 +{count},2 @@\n+{old} {count}\n end {old}\n"
                    );
                    ("sneaky-patch", json!({"file_path": file, "patch": patch}))
                }
            }
            8 => (
                "sneaky-mkdir",
                json!({"directory_path": DIRS[rng.below(DIRS.len())]}),
            ),
            _ => ("sneaky-rm", json!({"file_path": file})),
        };
        let reply = match call(root, bin, &request) {
            Ok(r) => r,
            Err(e) => {
                t.bad_envelopes.push(e);
                continue;
            }
        };
        t.ops += 1;
        let code = code_of(&reply);
        if !expected(bin, &code) {
            t.bad_envelopes
                .push(format!("unexpected {bin} {request}: {}", reply.json));
        }
        if bin == "sneaky-read" && code == "ok" {
            let content = reply.json["result"]["content"].as_str().unwrap_or("");
            if let Err(why) = check_whole(content, ids) {
                t.torn.push(format!("{file} read: {why}"));
            }
        }
        if code == "ok" {
            deadline
                .succeeded
                .lock()
                .expect("succeeded")
                .insert(bin.to_string());
        }
        *t.codes.entry(format!("{bin} {code}")).or_default() += 1;
    }
    t
}

/// Every entry below `dir`, relative.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.file_type().expect("type").is_dir() {
            walk(&e.path(), &format!("{name}/"), out);
            out.push(format!("{name}/"));
        } else {
            out.push(name);
        }
    }
}

/// Failures by error code, from counts by "tool code".
fn errors_by_code(codes: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for (k, v) in codes {
        if let Some((_, code)) = k.split_once(' ') {
            if code != "ok" {
                *errors.entry(code.to_string()).or_default() += v;
            }
        }
    }
    errors
}

pub fn run_load(secs: u64, workers: u64) {
    let w = util::ws();
    let ids = Arc::new(Mutex::new(BTreeSet::new()));
    for (i, f) in FILES.iter().enumerate() {
        let id = format!("init{i}");
        ids.lock().expect("ids").insert(id.clone());
        w.write(f, &version(&id, 20));
    }
    let started = Instant::now();
    let deadline = Arc::new(Deadline {
        until: started + Duration::from_secs(secs),
        hard_stop: started + Duration::from_secs(secs.max(120)),
        succeeded: Mutex::default(),
    });
    let handles: Vec<_> = (0..workers)
        .map(|i| {
            let (root, ids, deadline) = (w.root.clone(), Arc::clone(&ids), Arc::clone(&deadline));
            std::thread::spawn(move || worker(&root, i + 1, &deadline, &ids))
        })
        .collect();
    let mut total = Tally::default();
    for h in handles {
        let t = h.join().expect("worker");
        total.ops += t.ops;
        for (k, v) in t.codes {
            *total.codes.entry(k).or_default() += v;
        }
        total.torn.extend(t.torn);
        total.bad_envelopes.extend(t.bad_envelopes);
    }
    let elapsed = started.elapsed();
    // At rest: every file whole, nothing else than the tree's own names.
    let mut entries = Vec::new();
    walk(&w.root, "", &mut entries);
    let allowed: BTreeSet<String> = FILES
        .iter()
        .map(|s| s.to_string())
        .chain(DIRS.iter().map(|d| format!("{d}/")))
        .chain(["d/".to_string()])
        .collect();
    let leftovers: Vec<&String> = entries.iter().filter(|e| !allowed.contains(*e)).collect();
    for f in FILES {
        if let Ok(content) = std::fs::read_to_string(w.root.join(f)) {
            if let Err(why) = check_whole(&content, &ids) {
                total.torn.push(format!("{f} at rest: {why}"));
            }
        }
    }
    let errors = errors_by_code(&total.codes);
    eprintln!(
        "load: {workers} processes for {:.1} s: {} ops ({:.0}/s); errors by code {errors:?}; \
         torn files {}; leftover temps {}; bad envelopes {}",
        elapsed.as_secs_f64(),
        total.ops,
        total.ops as f64 / elapsed.as_secs_f64(),
        total.torn.len(),
        leftovers.len(),
        total.bad_envelopes.len()
    );
    eprintln!("load: by tool and code {:?}", total.codes);
    assert!(total.torn.is_empty(), "torn files: {:#?}", total.torn);
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
    assert!(
        total.bad_envelopes.is_empty(),
        "bad or unexpected replies: {:#?}",
        &total.bad_envelopes[..total.bad_envelopes.len().min(20)]
    );
    for tool in TOOLS {
        assert!(
            total.codes.contains_key(&format!("sneaky-{tool} ok")),
            "no successful sneaky-{tool} under load: {:?}",
            total.codes
        );
    }
}

#[test]
fn sixteen_processes_editing_one_tree() {
    run_load(
        env_num("SNEAKY_LOAD_SECS", 3),
        env_num("SNEAKY_LOAD_WORKERS", 16),
    );
}

/// The checker itself tells torn content from whole versions.
#[test]
fn the_torn_file_check_works() {
    let ids = Mutex::new(BTreeSet::from(["a".to_string(), "b".to_string()]));
    let (a, b) = (version("a", 50), version("b", 50));
    assert_eq!(check_whole(&a, &ids), Ok("a".to_string()));
    let mixed = format!("{}{}", &a[..a.len() / 2], &b[b.len() / 2..]);
    assert!(check_whole(&mixed, &ids).is_err(), "a mix of two versions");
    assert!(
        check_whole(&a[..a.len() - 3], &ids).is_err(),
        "a cut version"
    );
    let cut_at_line = &a[..a.find("a 30\n").expect("line")];
    assert!(check_whole(cut_at_line, &ids).is_err(), "cut at a line end");
    assert!(
        check_whole(&version("c", 3), &ids).is_err(),
        "never written"
    );
}
