//! Who may use the HTTP server: the bearer token (where it comes from, compared in constant
//! time), the browser origins accepted (loopback and `--allow-origin`), and the answers that
//! tell a client without the token what is wanted (401, and 404 for OAuth discovery).

use std::io::Read;
use std::net::IpAddr;

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::json;

use super::reply::{header_str, json_response, plain};
use super::{HttpBody, Shared, TOKEN_ENV};
use crate::error::{Error, ErrorKind, Result};

/// A token shorter than this is refused (it would be guessable).
pub(super) const MIN_TOKEN_LEN: usize = 16;

pub(super) struct Token {
    pub(super) value: String,
    pub(super) generated: bool,
    /// Where a client's user finds it, for the 401 (never the value, nor the file's path).
    pub(super) whence: &'static str,
}

/// `--token-file`, else `SNEAKY_MCP_TOKEN`, else a fresh random one.
pub(super) fn load_token(file: Option<&std::path::Path>) -> Result<Token> {
    let given = match file {
        Some(path) => Some((
            std::fs::read_to_string(path).map_err(|e| {
                Error::new(
                    ErrorKind::ConfigError,
                    format!("--token-file {}: {e}", path.display()),
                )
            })?,
            format!("--token-file {}", path.display()),
        )),
        None => std::env::var(TOKEN_ENV)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .map(|t| (t, TOKEN_ENV.to_string())),
    };
    match given {
        Some((text, origin)) => {
            let value = text.trim().to_string();
            if value.len() < MIN_TOKEN_LEN || value.chars().any(|c| c.is_whitespace()) {
                return Err(Error::new(
                    ErrorKind::ConfigError,
                    format!(
                        "{origin}: the token must be at least {MIN_TOKEN_LEN} characters \
                         without spaces"
                    ),
                ));
            }
            Ok(Token {
                value,
                generated: false,
                whence: if file.is_some() {
                    "the content of the --token-file the server was started with"
                } else {
                    "the SNEAKY_MCP_TOKEN the server was started with"
                },
            })
        }
        None => Ok(Token {
            value: random_hex(32).map_err(|e| Error::io("making a token", e))?,
            generated: true,
            whence: "the random token the server printed on its stderr when it started (start \
                     it with SNEAKY_MCP_TOKEN or --token-file to choose one)",
        }),
    }
}

pub(super) fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// `Authorization: Bearer TOKEN`, compared in constant time.
pub(super) fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = header_str(headers, header::AUTHORIZATION.as_str()) else {
        return false;
    };
    let Some((scheme, given)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && same_secret(given.trim().as_bytes(), token.as_bytes())
}

pub(super) fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Loopback origins (any scheme and port) and the ones allowed explicitly.
pub(super) fn origin_allowed(origin: &HeaderValue, allowed: &[String]) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim().trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false; // "null" and other opaque origins
    };
    if !matches!(scheme, "http" | "https") {
        return false;
    }
    let host = if let Some(v6) = rest.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        rest.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip: IpAddr| ip.is_loopback())
}

/// 401, saying what is wanted and where it comes from: clients such as the MCP Inspector start
/// an OAuth flow on a bare 401, which fails here without ever telling the person that a
/// bearer token was wanted.
pub(super) fn unauthorized(headers: &HeaderMap, shared: &Shared) -> Response<HttpBody> {
    let mut resp = plain(
        StatusCode::UNAUTHORIZED,
        &format!(
            "unauthorized: sneaky-mcp wants the header Authorization: Bearer TOKEN, where TOKEN \
             is {}. It has no OAuth server: give the token to the client as that header \
             (e.g. the MCP Inspector's Authentication > Bearer Token, or \"headers\" in a \
             host's server configuration).",
            shared.token_whence
        ),
    );
    // RFC 6750: an error code only when credentials were sent; the description always, as
    // clients show it.
    let error = if headers.contains_key(header::AUTHORIZATION) {
        "error=\"invalid_token\", "
    } else {
        ""
    };
    let challenge = format!(
        "Bearer realm=\"sneaky-mcp\", {error}error_description=\"a static bearer token is \
         wanted (no OAuth): Authorization: Bearer TOKEN with {}\"",
        shared.token_whence
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    // Without the token a client keeps no connection open.
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// The well-known documents an OAuth client looks for first (RFC 9728 protected resource
/// metadata, RFC 8414 authorization server metadata, OpenID discovery), at the root or with
/// the resource's path after them.
pub(super) fn is_oauth_discovery(path: &str) -> bool {
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ]
    .iter()
    .any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// 404 without a challenge: there is no OAuth here, so a client learns it at discovery rather
/// than in a failed registration.
pub(super) fn no_oauth_here(shared: &Shared) -> Response<HttpBody> {
    let body = json!({
        "error": "not_found",
        "error_description": format!(
            "sneaky-mcp has no OAuth authorization server: it takes a static bearer token in \
             the header Authorization: Bearer TOKEN, where TOKEN is {}",
            shared.token_whence
        ),
    });
    let mut resp = json_response(StatusCode::NOT_FOUND, &body);
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let ok = |o: &str, allowed: &[&str]| {
            let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
            origin_allowed(&HeaderValue::from_str(o).expect("header"), &allowed)
        };
        assert!(ok("http://localhost:3000", &[]));
        assert!(ok("http://127.0.0.1", &[]));
        assert!(ok("https://[::1]:8443", &[]));
        assert!(!ok("http://evil.example", &[]));
        assert!(!ok("http://localhost.evil.example", &[]));
        assert!(!ok("null", &[]));
        assert!(!ok("file://", &[]));
        assert!(ok(
            "https://agent.example.com",
            &["https://agent.example.com/"]
        ));
    }

    #[test]
    fn bearer_tokens() {
        let mut h = HeaderMap::new();
        let token = "0123456789abcdef0123";
        assert!(!authorized(&h, token));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer 0123456789abcdef0123"),
        );
        assert!(authorized(&h, token));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer 0123456789abcdef0124"),
        );
        assert!(!authorized(&h, token));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic 0123456789abcdef0123"),
        );
        assert!(!authorized(&h, token));
    }
}
