//! The plain responses every part of the HTTP server answers with: text, JSON, `202`, `405`,
//! and reading a header as text.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;

use super::HttpBody;
use crate::render::json_out;

pub(super) fn plain(status: StatusCode, text: &str) -> Response<HttpBody> {
    let mut resp = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

pub(super) fn accepted() -> Response<HttpBody> {
    let mut resp = Response::new(Full::new(Bytes::new()).boxed());
    *resp.status_mut() = StatusCode::ACCEPTED;
    resp
}

pub(super) fn json_response(status: StatusCode, message: &Value) -> Response<HttpBody> {
    let mut body = Vec::new();
    json_out::write_value(&mut body, message);
    let mut resp = Response::new(Full::new(Bytes::from(body)).boxed());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// 405, naming what the endpoint takes.
pub(super) fn method_not_allowed() -> Response<HttpBody> {
    let mut resp = plain(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed: POST a JSON-RPC message, DELETE to end a session, GET with \
         Last-Event-ID to resume an event stream",
    );
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    resp
}
