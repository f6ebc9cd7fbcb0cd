//! Running commands for run_command: the policy that decides what may run (a friendly first
//! layer with clear messages) and the sandbox that enforces it underneath.
//!
//! - `policy`: parsing the command line and checking programs and their arguments.
//! - `sandbox`: the launcher that confines a command before it executes.

pub mod policy;
pub mod sandbox;
