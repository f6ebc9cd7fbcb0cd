//! The container this runs in, as its markers tell, and the engine options that give a layer
//! missing inside it: for the launch spec, the launcher's refusal and the report.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Points the container engines' documentation at; tests point it elsewhere.
pub const CONTAINER_ROOT_ENV: &str = "SNEAKY_CONTAINER_ROOT";

/// The container this runs in, as its markers tell: Kubernetes (the `KUBERNETES_SERVICE_HOST`
/// every pod's containers get), Podman (`/run/.containerenv`, which CRI-O writes too), Docker
/// (`/.dockerenv`), else the `container` variable of PID 1's environment (systemd's
/// convention: `podman`, `docker`, `lxc`, `systemd-nspawn` …; readable when PID 1 runs as
/// this user or this is root). Only messages and reports use it: it loosens nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    /// "kubernetes", "podman", "docker", or the `container` variable's value.
    pub engine: String,
    /// What told.
    pub marker: String,
}

/// [`Container`] from the markers beneath `/`, or beneath `$SNEAKY_CONTAINER_ROOT` (for
/// tests: `DIR/run/.containerenv`, `DIR/.dockerenv`, `DIR/proc/1/environ`).
pub fn detect_container() -> Option<Container> {
    let root = std::env::var_os(CONTAINER_ROOT_ENV)
        .filter(|r| !r.is_empty())
        .map_or_else(|| PathBuf::from("/"), PathBuf::from);
    let kubernetes = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|v| !v.is_empty());
    detect_container_in(&root, kubernetes)
}

fn detect_container_in(root: &std::path::Path, kubernetes: bool) -> Option<Container> {
    let found = |engine: &str, marker: &str| {
        Some(Container {
            engine: engine.into(),
            marker: marker.into(),
        })
    };
    if kubernetes {
        return found("kubernetes", "KUBERNETES_SERVICE_HOST");
    }
    if root.join("run/.containerenv").exists() {
        return found("podman", "/run/.containerenv");
    }
    if root.join(".dockerenv").exists() {
        return found("docker", "/.dockerenv");
    }
    let environ = std::fs::read(root.join("proc/1/environ")).ok()?;
    let value = environ
        .split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(b"container="))?;
    let engine = String::from_utf8_lossy(value).trim().to_string();
    // A name, not arbitrary text, goes into messages.
    (!engine.is_empty()
        && engine.len() <= 32
        && engine
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)))
    .then(|| Container {
        marker: format!("container={engine} in PID 1's environment"),
        engine,
    })
}

impl Container {
    pub fn describe(&self) -> String {
        format!("{} ({})", self.engine, self.marker)
    }

    /// The engine options that give the missing layers, when this engine has them; the
    /// layers it cannot give (Landlock, seccomp: the kernel's) are left to the refusal.
    pub(super) fn options_for(&self, missing: &[(&str, &str)]) -> Option<String> {
        let hints: Vec<String> = missing
            .iter()
            .filter_map(|(layer, state)| {
                self.option_for(layer, state)
                    .map(|o| format!("for {layer}, {o}"))
            })
            .collect();
        (!hints.is_empty()).then(|| {
            format!(
                "inside this container ({}): {}",
                self.describe(),
                hints.join("; ")
            )
        })
    }

    fn option_for(&self, layer: &str, state: &str) -> Option<String> {
        let engine = self.engine.as_str();
        let seccomp = "`--security-opt seccomp=deploy/seccomp.json` (SneakyCode's profile: \
                       Docker's default plus the system calls the namespaces need)";
        // A refused unshare is the seccomp profile; a refused mount (after unshare worked)
        // is AppArmor's default profile for containers.
        let apparmor = if state.contains("unshare") {
            ""
        } else {
            ", and `--security-opt apparmor=unconfined` where AppArmor refuses mounts"
        };
        Some(match (layer, engine) {
            ("proc", "kubernetes") => "set `procMount: Unmasked` in the container's \
                 securityContext, with `hostUsers: false` in the pod (a user namespace)"
                .into(),
            ("proc", "podman") => "run it with `--security-opt unmask=/proc/*` (rootless Podman: \
                 nothing more; rootful only together with `--userns=auto`, or the container's \
                 root could write the host's sysctls through it)"
                .into(),
            ("proc", "docker") => "run it with `--security-opt systempaths=unconfined` (only \
                 where the container's root is not the host's: rootless Docker, or the \
                 daemon's userns-remap; else it could write the host's sysctls through it)"
                .into(),
            ("proc", _) => "run it with the engine's option that unmasks /proc (Podman \
                 `--security-opt unmask=/proc/*` with `--userns=auto`, Docker \
                 `--security-opt systempaths=unconfined` where its root is not the host's)"
                .into(),
            ("namespaces", "kubernetes") => format!(
                "give the container the seccomp profile deploy/seccomp.json \
                 (securityContext.seccompProfile of type Localhost: Docker's default plus the \
                 system calls the namespaces need){}",
                if apparmor.is_empty() {
                    ""
                } else {
                    ", and an AppArmor profile that allows mounts where the default one refuses them"
                }
            ),
            ("namespaces", _) => format!("run it with {seccomp}{apparmor}"),
            ("pids", "kubernetes") => "run the container as a user other than root \
                 (securityContext.runAsUser: RLIMIT_NPROC then holds)"
                .into(),
            ("pids", _) => "run it with `--user UID:GID`, a user other than root (RLIMIT_NPROC \
                 then holds; `--pids-limit` bounds the container as a whole)"
                .into(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_markers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        assert_eq!(detect_container_in(root, false), None);
        std::fs::create_dir_all(root.join("proc/1")).expect("mkdir");
        let environ = root.join("proc/1/environ");
        std::fs::write(&environ, "A=1\0container=$(touch x)\0").expect("write");
        assert_eq!(detect_container_in(root, false), None, "not a name");
        std::fs::write(&environ, "A=1\0container=systemd-nspawn\0").expect("write");
        let found = detect_container_in(root, false).expect("found");
        assert_eq!(found.engine, "systemd-nspawn");
        std::fs::write(root.join(".dockerenv"), "").expect("write");
        assert_eq!(
            detect_container_in(root, false).expect("found").engine,
            "docker"
        );
        std::fs::create_dir_all(root.join("run")).expect("mkdir");
        std::fs::write(root.join("run/.containerenv"), "").expect("write");
        assert_eq!(
            detect_container_in(root, false).expect("found").engine,
            "podman"
        );
        assert_eq!(
            detect_container_in(root, true).expect("found").engine,
            "kubernetes"
        );
    }

    #[test]
    fn engine_options_only_for_the_layers_an_engine_gives() {
        let podman = Container {
            engine: "podman".into(),
            marker: "/run/.containerenv".into(),
        };
        assert_eq!(podman.options_for(&[("landlock", "none")]), None);
        let hint = podman
            .options_for(&[("namespaces", "unshare: EPERM"), ("seccomp", "failed")])
            .expect("a hint");
        assert!(hint.contains("seccomp=deploy/seccomp.json"), "{hint}");
        assert!(
            !hint.contains("apparmor"),
            "unshare refused is seccomp: {hint}"
        );
        assert!(!hint.contains("for seccomp"), "{hint}");
        let hint = podman
            .options_for(&[("namespaces", "making mounts private at /: EACCES")])
            .expect("a hint");
        assert!(hint.contains("apparmor=unconfined"), "{hint}");
    }
}
