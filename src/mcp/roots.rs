//! The client's roots (`roots/list`): the first `file://` root becomes the workspace when
//! neither `--root` nor `SNEAKY_ROOT` names one.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use serde_json::Value;

/// The first root of a `roots/list` result that names a local directory.
pub fn first_local_root(result: &Value) -> Option<PathBuf> {
    result
        .get("roots")?
        .as_array()?
        .iter()
        .filter_map(|root| root.get("uri")?.as_str())
        .find_map(file_uri_to_path)
}

/// `file:///a/b%20c` → `/a/b c`. Only local files: an empty host or `localhost`.
pub fn file_uri_to_path(uri: &str) -> Option<PathBuf> {
    let scheme_len = "file://".len();
    if uri.len() < scheme_len || !uri[..scheme_len].eq_ignore_ascii_case("file://") {
        return None;
    }
    let rest = &uri[scheme_len..];
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if rest[..i].eq_ignore_ascii_case("localhost") => &rest[i..],
        _ => return None,
    };
    // A query or fragment is not part of the path.
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = percent_decode(path)?;
    if bytes.contains(&0) {
        return None;
    }
    Some(PathBuf::from(OsString::from_vec(bytes)))
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn file_uris() {
        let p = |s: &str| file_uri_to_path(s).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(p("file:///home/a/proj").as_deref(), Some("/home/a/proj"));
        assert_eq!(p("file://localhost/srv/x%20y").as_deref(), Some("/srv/x y"));
        assert_eq!(p("FILE:///caf%C3%A9").as_deref(), Some("/café"));
        assert_eq!(p("file:///a#frag").as_deref(), Some("/a"));
        assert_eq!(p("file://otherhost/a"), None);
        assert_eq!(p("https://example.com/a"), None);
        assert_eq!(p("file:///bad%zz"), None);
        assert_eq!(p("file:///nul%00"), None);
    }

    #[test]
    fn first_usable_root_wins() {
        let result = json!({"roots": [
            {"uri": "https://example.com/repo"},
            {"uri": "file:///work/one", "name": "one"},
            {"uri": "file:///work/two"}
        ]});
        assert_eq!(first_local_root(&result), Some(PathBuf::from("/work/one")));
        assert_eq!(first_local_root(&json!({"roots": []})), None);
    }
}
