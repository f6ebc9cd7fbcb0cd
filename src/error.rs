//! One error type for every tool. Each error carries a stable snake_case `code` (part of the
//! outside contract, docs/contract.md) and maps to one exit status: 1 the operation failed,
//! 2 bad input, 3 refused.

use std::fmt;
use std::io;

/// Every kind of failure, once: its variant, its stable code, its exit status (1 the operation
/// failed, 2 bad input, 3 refused) and what it means (the exit status table of help and man
/// pages). The enum, [`ErrorKind::ALL`], `code`, `exit_status` and `meaning` are generated from
/// this one list, so a kind cannot be left out of any of them.
macro_rules! error_kinds {
    ($($variant:ident => $code:literal, $exit:literal, $meaning:literal;)*) => {
        /// The kind of failure. The string form (`code()`) is what scripts and models see.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorKind {
            $($variant,)*
        }

        impl ErrorKind {
            /// Every kind, in the list's order.
            pub const ALL: [ErrorKind; [$(stringify!($variant)),*].len()] =
                [$(ErrorKind::$variant),*];

            pub fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $code,)*
                }
            }

            /// Exit status: 1 operation failed, 2 bad input, 3 refused.
            pub fn exit_status(self) -> i32 {
                match self {
                    $(ErrorKind::$variant => $exit,)*
                }
            }

            /// One line for the exit status table in help and man pages.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $meaning,)*
                }
            }
        }
    };
}

error_kinds! {
    InvalidJson => "invalid_json", 2, "stdin is not one JSON object";
    InvalidArgs => "invalid_args", 2,
        "an argument is missing, unknown, of the wrong type or out of range";
    ConfigError => "config_error", 2, "the configuration file cannot be read or has unknown keys";
    InputTooLarge => "input_too_large", 2, "stdin is larger than the input bound";
    OutsideWorkspace => "outside_workspace", 3, "the path leads outside the workspace root";
    ProtectedPath => "protected_path", 3,
        "the path is the active configuration file or a config location";
    UnknownTool => "unknown_tool", 2, "no tool has that name (sneaky-agent, sneaky-mcp)";
    ToolDenied => "tool_denied", 3, "the tool is in permissions.deny";
    NotApproved => "not_approved", 3, "the person did not approve the call (sneaky-agent)";
    CommandDenied => "command_denied", 3, "the command is not allowed by the command policy";
    HookDenied => "hook_denied", 3,
        "a PreToolUse hook of the user's configuration blocked the call";
    NotFound => "not_found", 1, "the path does not exist";
    NotAFile => "not_a_file", 1, "the path is not a regular file";
    NotADirectory => "not_a_directory", 1, "the path (or one of its parents) is not a directory";
    BinaryFile => "binary_file", 1, "the file is not UTF-8 text";
    FileTooLarge => "file_too_large", 1, "the file exceeds max_file_size_bytes";
    NoMatch => "no_match", 1, "old_str (or the pattern) was not found";
    MultipleMatches => "multiple_matches", 1, "old_str occurs more than once";
    PatchRejected => "patch_rejected", 1, "a hunk of the patch does not apply";
    AlreadyExists => "already_exists", 1, "something already exists where a new entry was to go";
    PermissionDenied => "permission_denied", 1, "the operating system refused access";
    Conflict => "conflict", 1, "the file changed while the tool was working on it";
    IoError => "io_error", 1, "another input/output failure";
    Internal => "internal_error", 1, "a bug in SneakyCode (please report it)";
}

impl ErrorKind {
    /// The kind of a stable code (as read back from a tool binary's envelope).
    pub fn from_code(code: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// A tool failure: a kind, what happened, and what is known about it (`Context`: the path, the
/// root, the argument, a better guess). The message
/// is built from these when it is read (`message`), so adding to a failure never edits its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// What happened.
    text: String,
    /// Boxed: most failures carry none, and a `Result` stays small.
    context: Option<Box<Context>>,
}

/// What a failure knows besides what happened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Context {
    /// The path the failure is about, as the failure names it (root-relative as the jail shows
    /// it, or the path as given when it is outside), when it is about one path.
    path: Option<String>,
    /// `text` goes on with "the workspace root" (a path led outside it).
    names_root: bool,
    /// Where the workspace root is, once someone said: named once in the message.
    root: Option<String>,
    /// A better guess at what was meant.
    suggestion: Option<Suggestion>,
    /// The argument at fault and what is wrong with it (then it says what happened).
    arg: Option<ArgFault>,
}

/// What is wrong with one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgFault {
    /// A required argument was not given.
    Missing { field: String },
    /// A required argument was given as null.
    Null { field: String },
    /// An argument the tool does not have; `detail` says so and lists those it has.
    Unknown { field: String, detail: String },
    /// The value given is refused: `detail` says why, in the words of JSON (it may name the
    /// value and the type expected). `field` is None when the failure is about the arguments
    /// as a whole, else the argument or the place inside it (`edits[0].old_str`); `given` is
    /// the value refused, when the failure is about a whole argument.
    Refused {
        field: Option<String>,
        given: Option<serde_json::Value>,
        detail: String,
    },
}

impl ArgFault {
    /// The argument at fault, when the failure names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ArgFault::Missing { field }
            | ArgFault::Null { field }
            | ArgFault::Unknown { field, .. } => Some(field),
            ArgFault::Refused { field, .. } => field.as_deref(),
        }
    }

    /// The failure in the words of JSON arguments.
    pub fn describe(&self) -> String {
        match self {
            ArgFault::Missing { field } => format!("missing field `{field}`"),
            ArgFault::Null { field } => format!("{field}: is required and must not be null"),
            ArgFault::Unknown { field, detail } => format!("{field}: {detail}"),
            ArgFault::Refused {
                field: Some(field),
                detail,
                ..
            } => format!("{field}: {detail}"),
            ArgFault::Refused { detail, .. } => detail.clone(),
        }
    }
}

/// A better guess at the path that was meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suggestion {
    /// The existing path most like the one given.
    Nearest(String),
    /// The path given, taken from the current directory instead of the root (where it exists,
    /// or has a name alike), for a person below the root; `root` is where the root is.
    FromCurrentDir { candidate: String, root: String },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            text: message.into(),
            context: None,
        }
    }

    pub fn invalid_args(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgs, message)
    }

    /// `invalid_args` about one argument: "`field`: `detail`".
    pub fn invalid_arg(field: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::bad_arg(ArgFault::Refused {
            field: Some(field.into()),
            given: None,
            detail: detail.into(),
        })
    }

    /// `invalid_args` for an argument at fault.
    pub fn bad_arg(fault: ArgFault) -> Error {
        let mut err = Error::new(ErrorKind::InvalidArgs, String::new());
        err.context_mut().arg = Some(fault);
        err
    }

    /// `not_found` for a path: "`path` does not exist".
    pub fn not_found(path: &str) -> Error {
        Error::new(ErrorKind::NotFound, format!("{path} does not exist")).about_path(path)
    }

    /// `outside_workspace`: `how` says how the path leads out ("x is outside", "x is a link that
    /// leads outside"), and the message goes on with "the workspace root".
    pub fn outside_workspace(how: impl Into<String>) -> Error {
        let mut err = Error::new(ErrorKind::OutsideWorkspace, how);
        err.context_mut().names_root = true;
        err
    }

    /// The same failure, known to be about `path` (as the message names it).
    pub fn about_path(mut self, path: impl Into<String>) -> Error {
        self.context_mut().path = Some(path.into());
        self
    }

    /// The same failure, saying where the workspace root is.
    pub fn with_root(mut self, root: impl Into<String>) -> Error {
        self.context_mut().root = Some(root.into());
        self
    }

    /// The same failure with a better guess (in place of any earlier one).
    pub fn with_suggestion(mut self, suggestion: Suggestion) -> Error {
        self.context_mut().suggestion = Some(suggestion);
        self
    }

    fn context_mut(&mut self) -> &mut Context {
        self.context.get_or_insert_with(Box::default)
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
        // A change of many files holds each open until all are written together: say which
        // limit stopped it.
        let limit = match err.raw_os_error() {
            Some(libc::EMFILE) => " (the process's descriptor limit: raise `ulimit -n`)",
            Some(libc::ENFILE) => " (the system's open-file limit: fs.file-max)",
            _ => "",
        };
        Error::new(kind, format!("{context}: {err}{limit}"))
    }

    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    pub fn exit_status(&self) -> i32 {
        self.kind.exit_status()
    }

    /// The path the failure is about, as its message names it.
    pub fn path(&self) -> Option<&str> {
        self.context.as_ref()?.path.as_deref()
    }

    /// Whether the message says where the workspace root is.
    pub fn locates_root(&self) -> bool {
        self.context.as_ref().is_some_and(|c| c.root.is_some())
    }

    pub fn suggestion(&self) -> Option<&Suggestion> {
        self.context.as_ref()?.suggestion.as_ref()
    }

    /// The argument at fault, for a failure about one.
    pub fn arg(&self) -> Option<&ArgFault> {
        self.context.as_ref()?.arg.as_ref()
    }

    /// The message, for a person or a model to act on.
    pub fn message(&self) -> String {
        self.message_with(ArgFault::describe)
    }

    /// The message with the argument at fault said by `describe` (a tool binary given flags
    /// says it in flags).
    pub fn message_with(&self, describe: impl FnOnce(&ArgFault) -> String) -> String {
        let Some(context) = &self.context else {
            return self.text.clone();
        };
        let mut out = match &context.arg {
            Some(fault) => describe(fault),
            None => self.text.clone(),
        };
        match (&context.root, context.names_root) {
            (Some(root), true) => out.push_str(&format!(" the workspace root {root}")),
            (None, true) => out.push_str(" the workspace root"),
            (Some(root), false) => out.push_str(&format!(" (the workspace root is {root})")),
            (None, false) => {}
        }
        match &context.suggestion {
            Some(Suggestion::Nearest(guess)) => out.push_str(&format!("; did you mean {guess}?")),
            Some(Suggestion::FromCurrentDir { candidate, root }) => {
                let root = match context.root {
                    Some(_) => String::new(),
                    None => format!(" {root}"),
                };
                out.push_str(&format!(
                    "; paths are relative to the workspace root{root}, not to the current \
                     directory: did you mean {candidate}?"
                ));
            }
            None => {}
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message())
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
    fn messages_are_built_from_the_context() {
        let e = Error::outside_workspace("../x is outside").about_path("../x");
        assert_eq!(e.message(), "../x is outside the workspace root");
        assert_eq!(e.path(), Some("../x"));
        let e = e.with_root("/ws");
        assert_eq!(e.message(), "../x is outside the workspace root /ws");
        assert_eq!(
            e.to_string(),
            "outside_workspace: ../x is outside the workspace root /ws"
        );
        let e = Error::not_found("a").with_suggestion(Suggestion::Nearest("b".into()));
        assert_eq!(e.message(), "a does not exist; did you mean b?");
        let e = e.with_suggestion(Suggestion::FromCurrentDir {
            candidate: "src/a".into(),
            root: "/ws".into(),
        });
        assert_eq!(
            e.message(),
            "a does not exist; paths are relative to the workspace root /ws, not to the current \
             directory: did you mean src/a?"
        );
        assert!(std::mem::size_of::<Error>() <= 48);
    }

    #[test]
    fn io_errors_map_to_contract_codes() {
        let e = Error::io("x", io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(e.code(), "not_found");
        assert_eq!(e.exit_status(), 1);
    }
}
