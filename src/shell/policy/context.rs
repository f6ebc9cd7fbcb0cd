//! What an argument rule's check needs to know beyond the arguments: shared by the table of
//! rules (src/shell/policy/rules.rs), the checks that parse an argument list (`git`, `sed`,
//! `archive`) and the program checker that calls them.

use std::path::Path;

/// What a rule needs to know beyond the arguments.
pub struct RuleContext<'a> {
    /// The canonical workspace root.
    pub root: &'a Path,
    /// Paths a program works on or writes must stay inside the root: the policy is strict (a
    /// kernel layer that keeps writes in the workspace may be missing).
    pub inside_root: bool,
}
