//! What became of a command's changes, as its result states it: the paths changed, recorded
//! or passed straight through, what was discarded, and the notes the command's stderr gains.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scan::Reduced;
use crate::fs::history::Undoable;

/// One path the command changed, as a result states it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Changed {
    /// Root-relative.
    pub path: String,
    /// "created", "modified" or "deleted" (a rename is a delete and a create).
    pub kind: String,
}

/// What became of a command's changes.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The changes git does not ignore: journaled (or, with dry_run, held).
    pub changes: Vec<Changed>,
    /// The paths git ignores, applied straight (or held, with dry_run).
    pub untracked: Vec<Changed>,
    /// Changes no tool may make (`.git`, the workspace configuration, protected paths): never
    /// applied.
    pub discarded: Vec<String>,
    pub undo: Undoable,
    /// With dry_run: the diff of the changes.
    pub diff: Option<String>,
    pub diff_truncated: bool,
    /// With dry_run under `--hold-changes`: the id the held changes wait under.
    pub held: Option<String>,
    /// Files the command changed that have other hard links: their new version replaces
    /// them (as an edit tool's does), and the other names keep the old content.
    pub links_broken: Vec<String>,
    /// What of the changes was applied reduced, or not at all ([`Reduced`]).
    pub reduced: Vec<Reduced>,
    /// The `.git/config` of a repository the command made, not applied for the settings it
    /// holds that make git run a program (or anything not in `PLAIN_GIT_CONFIG`): each path
    /// with those settings.
    pub refused_configs: Vec<(String, Vec<String>)>,
}

impl Applied {
    /// What the command's stderr gains when applying broke hard links (empty: none).
    pub fn links_note(&self) -> String {
        if self.links_broken.is_empty() {
            return String::new();
        }
        format!(
            "sneaky-run: {} had other hard links; the command's version {} it, and the other \
             names keep the old content (a command's changes are applied as an edit tool's are, \
             never written through a hard link)\n",
            self.links_broken.join(", "),
            if self.held.is_some() || self.diff.is_some() {
                "would replace"
            } else {
                "replaced"
            }
        )
    }

    /// What the command's stderr gains when the configuration of a repository it made was
    /// not applied (empty: none).
    pub fn repository_note(&self) -> String {
        self.refused_configs
            .iter()
            .map(|(path, settings)| {
                format!(
                    "sneaky-run: {path} of the repository the command made was not applied: it \
                     sets {} (a command gives a new repository only settings that run no \
                     program, in the form `git config` writes them: {}); its hooks are never \
                     applied. Set what you want with `git config` in your own shell\n",
                    settings.join(", "),
                    super::route::PLAIN_GIT_CONFIG.join(", ")
                )
            })
            .collect()
    }

    /// What the command's stderr gains when some of its changes were applied reduced or not
    /// at all (empty: none).
    pub fn reduced_note(&self) -> String {
        if self.reduced.is_empty() {
            return String::new();
        }
        const SHOWN: usize = 10;
        let mut named: Vec<String> = self
            .reduced
            .iter()
            .take(SHOWN)
            .map(|r| format!("{} ({})", r.path, r.what))
            .collect();
        if self.reduced.len() > SHOWN {
            named.push(format!("and {} more", self.reduced.len() - SHOWN));
        }
        format!(
            "sneaky-run: a command's changes {} as git keeps files (plain permission bits, no \
             extended attributes, no special files): {}\n",
            if self.held.is_some() || self.diff.is_some() {
                "would be applied"
            } else {
                "were applied"
            },
            named.join(", ")
        )
    }
}
