//! Protocol versions. The client proposes one in `initialize`; the server answers with the same
//! version when it speaks it, else with its latest, and the client decides whether to go on.
//!
//! 2025-11-25 (what the official SDKs offer today) changes nothing a tools-only stdio server
//! must do: its additions (icons, tasks, URL elicitation, authorization) are optional or belong
//! to other features, so it is served exactly as 2025-06-18.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
}

impl Version {
    pub const LATEST: Version = Version::V2025_11_25;
    pub const ALL: [Version; 4] = [
        Version::V2024_11_05,
        Version::V2025_03_26,
        Version::V2025_06_18,
        Version::V2025_11_25,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V2024_11_05 => "2024-11-05",
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
        }
    }

    /// The version of that name, if this server speaks it.
    pub fn parse(name: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The version to answer a client that proposed `requested`.
    pub fn negotiate(requested: &str) -> Version {
        Version::ALL
            .into_iter()
            .find(|v| v.as_str() == requested)
            .unwrap_or(Version::LATEST)
    }

    /// Tool annotations arrived in 2025-03-26.
    pub fn has_annotations(self) -> bool {
        self >= Version::V2025_03_26
    }

    /// A `message` in `notifications/progress` arrived in 2025-03-26.
    pub fn has_progress_message(self) -> bool {
        self >= Version::V2025_03_26
    }

    /// `title`, `outputSchema` and `structuredContent` arrived in 2025-06-18.
    pub fn has_structured_output(self) -> bool {
        self >= Version::V2025_06_18
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        assert_eq!(Version::negotiate("2024-11-05"), Version::V2024_11_05);
        assert_eq!(Version::negotiate("2025-03-26"), Version::V2025_03_26);
        assert_eq!(Version::negotiate("2025-06-18"), Version::V2025_06_18);
        assert_eq!(Version::negotiate("2099-01-01"), Version::LATEST);
        assert_eq!(Version::negotiate(""), Version::LATEST);
    }
}
