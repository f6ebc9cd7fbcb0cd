//! One error type for every tool. Each error carries a stable snake_case `code` (part of the
//! outside contract, CONTRACT.md) and maps to one exit status: 1 the operation failed,
//! 2 bad input, 3 refused.

use std::fmt;
use std::io;

/// The kind of failure. The string form (`code()`) is what scripts and models see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidJson,
    InvalidArgs,
    ConfigError,
    InputTooLarge,
    OutsideWorkspace,
    ProtectedPath,
    UnknownTool,
    ToolDenied,
    NotApproved,
    CommandDenied,
    NotFound,
    NotAFile,
    NotADirectory,
    BinaryFile,
    FileTooLarge,
    NoMatch,
    MultipleMatches,
    PatchRejected,
    AlreadyExists,
    PermissionDenied,
    Conflict,
    IoError,
    Internal,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 23] = [
        ErrorKind::InvalidJson,
        ErrorKind::InvalidArgs,
        ErrorKind::ConfigError,
        ErrorKind::InputTooLarge,
        ErrorKind::OutsideWorkspace,
        ErrorKind::ProtectedPath,
        ErrorKind::UnknownTool,
        ErrorKind::ToolDenied,
        ErrorKind::NotApproved,
        ErrorKind::CommandDenied,
        ErrorKind::NotFound,
        ErrorKind::NotAFile,
        ErrorKind::NotADirectory,
        ErrorKind::BinaryFile,
        ErrorKind::FileTooLarge,
        ErrorKind::NoMatch,
        ErrorKind::MultipleMatches,
        ErrorKind::PatchRejected,
        ErrorKind::AlreadyExists,
        ErrorKind::PermissionDenied,
        ErrorKind::Conflict,
        ErrorKind::IoError,
        ErrorKind::Internal,
    ];

    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::InvalidArgs => "invalid_args",
            ErrorKind::ConfigError => "config_error",
            ErrorKind::InputTooLarge => "input_too_large",
            ErrorKind::OutsideWorkspace => "outside_workspace",
            ErrorKind::ProtectedPath => "protected_path",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::ToolDenied => "tool_denied",
            ErrorKind::NotApproved => "not_approved",
            ErrorKind::CommandDenied => "command_denied",
            ErrorKind::NotFound => "not_found",
            ErrorKind::NotAFile => "not_a_file",
            ErrorKind::NotADirectory => "not_a_directory",
            ErrorKind::BinaryFile => "binary_file",
            ErrorKind::FileTooLarge => "file_too_large",
            ErrorKind::NoMatch => "no_match",
            ErrorKind::MultipleMatches => "multiple_matches",
            ErrorKind::PatchRejected => "patch_rejected",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::Conflict => "conflict",
            ErrorKind::IoError => "io_error",
            ErrorKind::Internal => "internal_error",
        }
    }

    /// The kind of a stable code (as read back from a tool binary's envelope).
    pub fn from_code(code: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// Exit status: 1 operation failed, 2 bad input, 3 refused.
    pub fn exit_status(self) -> i32 {
        match self {
            ErrorKind::InvalidJson
            | ErrorKind::InvalidArgs
            | ErrorKind::ConfigError
            | ErrorKind::InputTooLarge
            | ErrorKind::UnknownTool => 2,
            ErrorKind::OutsideWorkspace
            | ErrorKind::ProtectedPath
            | ErrorKind::ToolDenied
            | ErrorKind::NotApproved
            | ErrorKind::CommandDenied => 3,
            ErrorKind::NotFound
            | ErrorKind::NotAFile
            | ErrorKind::NotADirectory
            | ErrorKind::BinaryFile
            | ErrorKind::FileTooLarge
            | ErrorKind::NoMatch
            | ErrorKind::MultipleMatches
            | ErrorKind::PatchRejected
            | ErrorKind::AlreadyExists
            | ErrorKind::PermissionDenied
            | ErrorKind::Conflict
            | ErrorKind::IoError
            | ErrorKind::Internal => 1,
        }
    }

    /// One line for the exit status table in help and man pages.
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorKind::InvalidJson => "stdin is not one JSON object",
            ErrorKind::InvalidArgs => {
                "an argument is missing, unknown, of the wrong type or out of range"
            }
            ErrorKind::ConfigError => "the configuration file cannot be read or has unknown keys",
            ErrorKind::InputTooLarge => "stdin is larger than the input bound",
            ErrorKind::OutsideWorkspace => "the path leads outside the workspace root",
            ErrorKind::ProtectedPath => {
                "the path is the active configuration file or a config location"
            }
            ErrorKind::UnknownTool => "no tool has that name (sneaky-agent, sneaky-mcp)",
            ErrorKind::ToolDenied => "the tool is in permissions.deny",
            ErrorKind::NotApproved => "the person did not approve the call (sneaky-agent)",
            ErrorKind::CommandDenied => "the command is not allowed by the command policy",
            ErrorKind::NotFound => "the path does not exist",
            ErrorKind::NotAFile => "the path is not a regular file",
            ErrorKind::NotADirectory => "the path (or one of its parents) is not a directory",
            ErrorKind::BinaryFile => "the file is not UTF-8 text",
            ErrorKind::FileTooLarge => "the file exceeds max_file_size_bytes",
            ErrorKind::NoMatch => "old_str (or the pattern) was not found",
            ErrorKind::MultipleMatches => "old_str occurs more than once",
            ErrorKind::PatchRejected => "a hunk of the patch does not apply",
            ErrorKind::AlreadyExists => "something already exists where a new entry was to go",
            ErrorKind::PermissionDenied => "the operating system refused access",
            ErrorKind::Conflict => "the file changed while the tool was working on it",
            ErrorKind::IoError => "another input/output failure",
            ErrorKind::Internal => "a bug in SneakyCode (please report it)",
        }
    }
}

/// A tool failure: a kind and a message written for a person or a model to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    pub fn invalid_args(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgs, message)
    }

    pub fn io(context: impl fmt::Display, err: io::Error) -> Error {
        let kind = match err.kind() {
            io::ErrorKind::NotFound => ErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
            io::ErrorKind::NotADirectory => ErrorKind::NotADirectory,
            io::ErrorKind::IsADirectory => ErrorKind::NotAFile,
            _ => ErrorKind::IoError,
        };
        Error::new(kind, format!("{context}: {err}"))
    }

    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    pub fn exit_status(&self) -> i32 {
        self.kind.exit_status()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            let code = kind.code();
            assert!(code.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert!(seen.insert(code), "duplicate code {code}");
            assert!((1..=3).contains(&kind.exit_status()));
        }
    }

    #[test]
    fn io_errors_map_to_contract_codes() {
        let e = Error::io("x", io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(e.code(), "not_found");
        assert_eq!(e.exit_status(), 1);
    }
}
