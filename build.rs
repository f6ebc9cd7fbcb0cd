//! Links the binaries with packed relative relocations (`-z pack-relative-relocs`, DT_RELR)
//! where the linker and the C library support them, and, in release builds, with identical
//! code folding where the linker rustc uses can fold.
//!
//! The binaries are position-independent, so every pointer in their read-only data (regex and
//! Unicode tables, vtables, string slices) needs a relocation at load time; as 24-byte RELA
//! entries those took 1.5 MB of the 16 release binaries (240 KB of sneaky-grep alone). DT_RELR
//! packs a run of them into a few bits each. The code is unchanged, so is its speed; loading
//! does a little less work. The flag needs a linker that knows it and a dynamic loader that
//! reads it (glibc 2.36 or later): a small program is linked and run with it first, and
//! without both the binaries are linked as before.
//!
//! Identical code folding (`--icf=all`, lld's, gold's and mold's) keeps one copy of functions
//! whose machine code and references are the same: generic code instantiated for types of the
//! same layout, mostly (0.7-0.9% of a binary: 19 KB of sneaky-grep's 2.83 MB). Rust makes no
//! promise that two functions have different addresses (MSVC's linker folds Rust code by
//! default), and no code here compares them. rustc links through lld, not the system's `cc`, so
//! the probe is a Rust program that rustc links with the flag and the build's own rustc flags;
//! debug builds keep every function under its own name, for their backtraces.
//!
//! The unwinder (libgcc's, which a panic unwinds through) is linked in from `libgcc_eh.a`
//! instead of loaded from `libgcc_s.so.1`, as `gcc -static-libgcc` links it: loading that
//! library took about 0.1 ms of every tool call's 1 ms start (its constructor asks the CPU
//! what it supports, which traps to the hypervisor on a virtual machine), and `cat` pays none
//! of it. Rust's standard library names `gcc_s` itself, so the archive is offered under that
//! name in a directory searched first; a program that panics and catches it is linked and run
//! that way first, and without success the binaries load the library as before.
//!
//! It also gives the library a digest of the parse code (`SNEAKY_PARSE_CODE`), which keys the
//! parse cache's entries: a build whose skim or queries differ never reads the tags another
//! made.

use std::env;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const FLAG: &str = "-Wl,-z,pack-relative-relocs";
/// The code that turns a file into its tags (the skim, the parse, the queries).
const PARSE_CODE: &str = "src/code";
const ICF: &str = "-Wl,--icf=all";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-changed={PARSE_CODE}");
    println!(
        "cargo:rustc-env=SNEAKY_PARSE_CODE={:016x}",
        parse_code_digest()
    );
    let var = |name: &str| env::var(name).unwrap_or_default();
    // Only where the probe's result holds for the binaries: built for the machine that runs
    // the probe (a cross build cannot run it), on Linux with glibc.
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
    {
        return;
    }
    let out_dir = PathBuf::from(var("OUT_DIR"));
    if links_and_runs(&var("RUSTC_LINKER"), &out_dir) {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
    if var("PROFILE") == "release"
        && rustc_links_with(
            &["-C", &format!("link-arg={ICF}")],
            &out_dir,
            "fn main() {}\n",
        )
    {
        println!("cargo:rustc-link-arg-bins={ICF}");
    }
    if let Some(dir) = static_unwinder(&var("RUSTC_LINKER"), &out_dir) {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

/// A digest (FNV-1a, 64 bits) of every file under `PARSE_CODE`, by path and content, in
/// the order of their paths: part of the parse cache's key (`src/code/cache.rs`), so that
/// entries made by a build whose parse differs are misses, without a version to bump by
/// hand. It changes with any edit there, also one that leaves the tags as they were: a cold
/// call then, never a wrong one.
fn parse_code_digest() -> u64 {
    fn files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    files(std::path::Path::new(PARSE_CODE), &mut paths);
    paths.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for path in paths {
        eat(path.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&std::fs::read(&path).unwrap_or_default());
        eat(&[0]);
    }
    hash
}

/// A directory holding libgcc's static unwinder as `libgcc_s.a`, when programs linked with it
/// unwind a panic and catch it.
fn static_unwinder(linker: &str, out_dir: &std::path::Path) -> Option<PathBuf> {
    let cc = if linker.is_empty() { "cc" } else { linker };
    let out = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let archive = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    if !archive.is_absolute() || !archive.is_file() {
        return None;
    }
    let dir = out_dir.join("static-unwind");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::copy(&archive, dir.join("libgcc_s.a")).ok()?;
    let search = format!("native={}", dir.display());
    let probe = "fn main() {\n\
        std::panic::set_hook(Box::new(|_| {}));\n\
        let caught = std::panic::catch_unwind(|| panic!(\"probe\")).is_err();\n\
        std::process::exit(if caught { 0 } else { 1 });\n\
        }\n";
    rustc_links_with(&["-L", &search], out_dir, probe).then_some(dir)
}

/// Does rustc, with this build's flags and linker and the arguments `args`, link the program
/// `code`, and does it run (and exit 0)?
fn rustc_links_with(args: &[&str], out_dir: &std::path::Path, code: &str) -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    let source = out_dir.join("link-probe.rs");
    let program = out_dir.join("link-probe");
    if std::fs::write(&source, code).is_err() {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut command = Command::new(rustc);
    command.args(
        var("CARGO_ENCODED_RUSTFLAGS")
            .split('\x1f')
            .filter(|f| !f.is_empty()),
    );
    let linker = var("RUSTC_LINKER");
    if !linker.is_empty() {
        command.arg("-C").arg(format!("linker={linker}"));
    }
    let linked = command
        .arg("--target")
        .arg(var("TARGET"))
        .args(args)
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    linked
        && Command::new(&program)
            .status()
            .is_ok_and(|status| status.success())
}

/// Does a position-independent C program linked with FLAG (by the linker rustc uses: cargo's
/// RUSTC_LINKER, else `cc`) build, and run?
fn links_and_runs(linker: &str, out_dir: &std::path::Path) -> bool {
    let linker = if linker.is_empty() { "cc" } else { linker };
    let program = out_dir.join("relr-probe");
    let child = Command::new(linker)
        .args(["-x", "c", "-", "-fPIE", "-pie", FLAG, "-o"])
        .arg(&program)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return false };
    if let Some(mut stdin) = child.stdin.take() {
        if stdin
            .write_all(b"static const char *p = \"ok\"; int main(void) { return p[0] != 'o'; }\n")
            .is_err()
        {
            let _ = child.wait();
            return false;
        }
    }
    let linked = child.wait().is_ok_and(|status| status.success());
    linked
        && Command::new(&program)
            .status()
            .is_ok_and(|status| status.success())
}
