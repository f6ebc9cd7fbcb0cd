//! Paths in what the runner hands the launcher (the launch spec, as JSON), which need not be
//! UTF-8: a workspace, a home directory or a program on PATH may have any bytes in its name.
//! serde's own `PathBuf` refuses such a path; here a path is a JSON string when it is UTF-8
//! (the spec reads as before) and an array of its bytes when it is not. Used with
//! `#[serde(with = "…")]`: [`one`], [`many`] and [`maybe`] for `PathBuf`, `Vec<PathBuf>` and
//! `Option<PathBuf>`.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A path as it is written.
struct Out<'a>(&'a Path);

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.to_str() {
            Some(text) => s.serialize_str(text),
            None => s.serialize_bytes(self.0.as_os_str().as_bytes()),
        }
    }
}

/// A path as it is read: either form.
#[derive(Deserialize)]
#[serde(untagged)]
enum In {
    Text(String),
    Bytes(Vec<u8>),
}

impl From<In> for PathBuf {
    fn from(p: In) -> PathBuf {
        match p {
            In::Text(text) => PathBuf::from(text),
            In::Bytes(bytes) => PathBuf::from(OsString::from_vec(bytes)),
        }
    }
}

pub mod one {
    use super::*;

    pub fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
        Out(p).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        In::deserialize(d).map(PathBuf::from)
    }
}

pub mod many {
    use super::*;

    pub fn serialize<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(paths.iter().map(|p| Out(p)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        Vec::<In>::deserialize(d).map(|v| v.into_iter().map(PathBuf::from).collect())
    }
}

pub mod maybe {
    use super::*;

    pub fn serialize<S: Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
        p.as_deref().map(Out).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
        Option::<In>::deserialize(d).map(|p| p.map(PathBuf::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Paths {
        #[serde(with = "one")]
        one: PathBuf,
        #[serde(with = "many")]
        many: Vec<PathBuf>,
        #[serde(with = "maybe")]
        maybe: Option<PathBuf>,
        #[serde(with = "maybe")]
        none: Option<PathBuf>,
    }

    #[test]
    fn paths_of_any_bytes_go_through_json_and_back() {
        let odd = PathBuf::from(OsString::from_vec(b"/tmp/ws-\xff/a".to_vec()));
        let paths = Paths {
            one: odd.clone(),
            many: vec![PathBuf::from("/usr/bin"), odd.clone()],
            maybe: Some(odd.clone()),
            none: None,
        };
        let text = serde_json::to_string(&paths).expect("serialize");
        // A UTF-8 path reads as it always did.
        assert!(text.contains(r#""/usr/bin""#), "{text}");
        let back: Paths = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, paths);
    }
}
