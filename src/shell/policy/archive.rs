//! Rules for programs that copy or archive: tar's options that run programs (checkpoint
//! actions, compression programs, volume scripts, remote archives), and `cp -R` of device
//! files (which makes a device node, a door to a disk).

use super::context::RuleContext;

type Verdict = std::result::Result<(), String>;

/// tar's long options that run a program (GNU getopt accepts any unambiguous abbreviation,
/// so these are matched by prefix).
const TAR_RUNS: &[&str] = &[
    "checkpoint-action",
    "to-command",
    "use-compress-program",
    "info-script",
    "new-volume-script",
    "rsh-command",
    "rmt-command",
];

pub(super) fn check_tar(args: &[String], _: &RuleContext<'_>) -> Verdict {
    for (n, a) in args.iter().enumerate() {
        if let Some(long) = a.strip_prefix("--") {
            let opt = long.split_once('=').map_or(long, |(o, _)| o);
            if opt.len() >= 3 {
                if let Some(full) = TAR_RUNS.iter().find(|r| r.starts_with(opt)) {
                    return Err(format!("tar --{full} runs a program"));
                }
            }
            continue;
        }
        // Short clusters (`-xzf`), and the old style where the first word is a cluster
        // without a dash (`tar xIf …`).
        let cluster = match a.strip_prefix('-') {
            Some(c) => Some(c),
            None if n == 0 => Some(a.as_str()),
            None => None,
        };
        if let Some(c) = cluster.filter(|c| c.chars().all(|ch| ch.is_ascii_alphanumeric())) {
            if let Some(bad) = c.chars().find(|ch| matches!(ch, 'I' | 'F')) {
                return Err(format!("tar -{bad} runs a program"));
            }
        }
        if a.contains(':') && !a.starts_with('-') && !args.iter().any(|x| x == "--force-local") {
            return Err(format!(
                "tar {a}: an archive name with `:` is a remote archive (runs rsh); use --force-local"
            ));
        }
    }
    Ok(())
}

/// cp/mv/install with a device file as the source (recursively or not, with -a/-R/-r or
/// --copy-contents) would make a device node; a plain `cp /dev/null x` copies contents and
/// stays allowed.
pub(super) fn check_copy(args: &[String], _: &RuleContext<'_>) -> Verdict {
    let recursive = args.iter().any(|a| {
        a == "--recursive"
            || a == "--archive"
            || a.starts_with("--preserve")
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a.chars().any(|c| matches!(c, 'a' | 'R' | 'r')))
    });
    if !recursive {
        return Ok(());
    }
    match args.iter().find(|a| is_device_path(a)) {
        Some(dev) => Err(format!(
            "{dev}: copying from /dev (or /proc, /sys) recursively makes device nodes"
        )),
        None => Ok(()),
    }
}

fn is_device_path(a: &str) -> bool {
    let clean = a.trim_end_matches('/');
    ["/dev", "/proc", "/sys"]
        .iter()
        .any(|d| clean == *d || clean.starts_with(&format!("{d}/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn tar_options_that_run_programs() {
        let root = &RuleContext {
            root: std::path::Path::new("/ws"),
            inside_root: true,
        };
        assert!(check_tar(&args(&["-czf", "out.tgz", "src"]), root).is_ok());
        assert!(check_tar(
            &args(&["--checkpoint=1", "--checkpoint-action=exec=sh"]),
            root
        )
        .is_err());
        assert!(check_tar(&args(&["--checkpoint-act=exec=sh", "-cf", "x", "."]), root).is_err());
        assert!(check_tar(&args(&["--to-com=sh", "-xf", "x"]), root).is_err());
        assert!(check_tar(&args(&["-cIsh", "-f", "x", "."]), root).is_err());
        assert!(check_tar(&args(&["cIf", "sh", "x", "."]), root).is_err());
        assert!(check_tar(&args(&["-cf", "host:x", "."]), root).is_err());
    }

    #[test]
    fn recursive_copies_of_devices() {
        let root = &RuleContext {
            root: std::path::Path::new("/ws"),
            inside_root: true,
        };
        assert!(check_copy(&args(&["/dev/null", "x"]), root).is_ok());
        assert!(check_copy(&args(&["-R", "/dev/null", "x"]), root).is_err());
        assert!(check_copy(&args(&["-a", "/dev/", "x"]), root).is_err());
        assert!(check_copy(&args(&["-r", "src", "dst"]), root).is_ok());
    }
}
