//! JSON-RPC 2.0 framing for MCP's stdio transport: one message per line, read with a bound on
//! the line's length by a reader thread, classified into requests, notifications and responses.
//!
//! Parsing happens on the reader thread, beside the thread that routes the messages.

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// One classified incoming message.
#[derive(Debug)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response to a request this server sent (`roots/list`): the result, or the error object.
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
}

/// A message that cannot be served, answered with a JSON-RPC error.
#[derive(Debug)]
pub struct Fault {
    /// The request's id when it could be read, else null.
    pub id: Value,
    pub code: i64,
    pub message: String,
}

/// A line or body read: one message, or a JSON-RPC batch (an array of them).
#[derive(Debug)]
pub enum Parsed {
    One(Message),
    /// Each element classified on its own. Only sessions of protocol version 2025-03-26 take
    /// batches (that revision's MUST; the others removed them): the server decides.
    Batch(Vec<Result<Message, Fault>>),
}

/// The refusal of a batch where the negotiated protocol version has none.
pub const BATCHES_REFUSED: &str =
    "invalid request: batches are not supported; send one message per line";

/// What the reader thread hands over.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    Batch(Vec<Result<Message, Fault>>),
    Fault(Fault),
    Eof,
    /// Reading stdin failed (not EOF): serving cannot go on.
    Failed(io::Error),
}

/// A key that tells request ids apart exactly (`1` and `"1"` are different ids).
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The response carrying `result`, moved into it (`json!` would copy it whole: it turns
/// each value it is given into a new one, a read's content and all).
pub fn response(id: &Value, result: Value) -> Value {
    let mut msg = Map::with_capacity(3);
    msg.insert("jsonrpc".into(), "2.0".into());
    msg.insert("id".into(), id.clone());
    msg.insert("result".into(), result);
    Value::Object(msg)
}

pub fn error_response(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

pub fn request(id: &Value, method: &str, params: Option<Value>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let (Some(params), Value::Object(map)) = (params, &mut msg) {
        map.insert("params".into(), params);
    }
    msg
}

/// Parse one line or body: a message, or a batch of them (an empty batch is invalid, as
/// JSON-RPC 2.0 says).
pub fn parse(line: &[u8]) -> Result<Parsed, Fault> {
    // An object, nearly every message, is read straight into its keys: read into a map, each
    // key was hashed in and hashed again to take it out, about a twentieth of the server's
    // instructions for a 4 KB read. What that shape does not read (a key given twice, JSON
    // that is not valid) is read as a value below, and answered as it always was.
    let object = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if object {
        if let Ok(keys) = serde_json::from_slice::<Keys>(line) {
            return classify_keys(keys).map(Parsed::One);
        }
    }
    let value: Value = serde_json::from_slice(line).map_err(|e| Fault {
        id: Value::Null,
        code: PARSE_ERROR,
        message: format!("parse error: not valid JSON: {e}"),
    })?;
    match value {
        Value::Array(items) if items.is_empty() => Err(invalid(Value::Null, "an empty batch")),
        Value::Array(items) => Ok(Parsed::Batch(items.into_iter().map(classify).collect())),
        value => classify(value).map(Parsed::One),
    }
}

/// The keys of a message that JSON-RPC gives a meaning, each None when it is not there (a
/// `null` is there: `Some(Value::Null)`); others are ignored.
#[derive(Debug, Default, PartialEq, Deserialize)]
struct Keys {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Tell requests, notifications and responses apart, refusing what JSON-RPC 2.0 does not allow.
pub fn classify(value: Value) -> Result<Message, Fault> {
    let Value::Object(mut obj) = value else {
        return Err(invalid(Value::Null, "a message must be a JSON object"));
    };
    classify_keys(Keys {
        jsonrpc: obj.remove("jsonrpc"),
        id: obj.remove("id"),
        method: obj.remove("method"),
        params: obj.remove("params"),
        result: obj.remove("result"),
        error: obj.remove("error"),
    })
}

/// A message JSON-RPC 2.0 does not allow, answered to `id` (null when it could not be read).
fn invalid(id: Value, message: &str) -> Fault {
    Fault {
        id,
        code: INVALID_REQUEST,
        message: format!("invalid request: {message}"),
    }
}

fn classify_keys(keys: Keys) -> Result<Message, Fault> {
    let Keys {
        jsonrpc,
        id,
        method,
        params,
        result,
        error,
    } = keys;
    let id_ok = matches!(&id, Some(Value::String(_)) | Some(Value::Number(_)));
    let reply_id = if id_ok {
        id.clone().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(reply_id, r#""jsonrpc" must be "2.0""#));
    }
    if let Some(method) = method {
        let Value::String(method) = method else {
            return Err(invalid(reply_id, r#""method" must be a string"#));
        };
        return match id {
            None => Ok(Message::Notification { method, params }),
            Some(id) if id_ok => Ok(Message::Request { id, method, params }),
            Some(_) => Err(invalid(Value::Null, r#""id" must be a string or a number"#)),
        };
    }
    match (id, result, error) {
        (Some(id), Some(result), None) => Ok(Message::Response {
            id,
            outcome: Ok(result),
        }),
        (Some(id), None, Some(error)) => Ok(Message::Response {
            id,
            outcome: Err(error),
        }),
        _ => Err(invalid(
            reply_id,
            r#"a message needs "method" (request or notification) or "result"/"error" with "id""#,
        )),
    }
}

/// Read lines on a thread of their own and hand each over parsed to `deliver`, which returns
/// false once nobody listens any more. `limit` is read before each line, so the bound follows
/// the configuration once the workspace is known.
pub fn spawn_reader<R, D>(input: R, limit: Arc<AtomicU64>, deliver: D) -> io::Result<()>
where
    R: Read + Send + 'static,
    D: FnMut(Incoming) -> bool + Send + 'static,
{
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || read_loop(BufReader::with_capacity(64 * 1024, input), &limit, deliver))?;
    Ok(())
}

fn read_loop<R: BufRead>(
    mut input: R,
    limit: &AtomicU64,
    mut deliver: impl FnMut(Incoming) -> bool,
) {
    let mut line = Vec::new();
    loop {
        let max = usize::try_from(limit.load(Ordering::Relaxed)).unwrap_or(usize::MAX);
        let incoming = match read_bounded_line(&mut input, max, &mut line) {
            Ok(Line::Eof) => {
                deliver(Incoming::Eof);
                return;
            }
            Ok(Line::TooLong) => Incoming::Fault(Fault {
                id: Value::Null,
                code: INVALID_REQUEST,
                message: format!(
                    "invalid request: message longer than {max} bytes (4 × max_file_size_bytes \
                     + 64 KiB); it was skipped"
                ),
            }),
            Ok(Line::Complete) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match parse(&line) {
                    Ok(Parsed::One(message)) => Incoming::Message(message),
                    Ok(Parsed::Batch(items)) => Incoming::Batch(items),
                    Err(fault) => Incoming::Fault(fault),
                }
            }
            Err(e) => {
                deliver(Incoming::Failed(e));
                return;
            }
        };
        if !deliver(incoming) {
            return; // the server has stopped
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Complete,
    /// The line was longer than the limit; it was read to its end and dropped.
    TooLong,
    Eof,
}

/// Read one line into `line` (without its `\n`), never holding more than `limit` bytes of it.
pub fn read_bounded_line<R: BufRead>(
    input: &mut R,
    limit: usize,
    line: &mut Vec<u8>,
) -> io::Result<Line> {
    line.clear();
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            // EOF: a last line without its newline still counts.
            return Ok(match (seen_any, too_long) {
                (false, _) => Line::Eof,
                (true, true) => Line::TooLong,
                (true, false) => Line::Complete,
            });
        }
        seen_any = true;
        let (chunk, used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !too_long {
            if line.len() + chunk.len() > limit {
                too_long = true;
                *line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        input.consume(used);
        if done {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(line: &[u8]) -> Result<Message, Fault> {
        match parse(line)? {
            Parsed::One(message) => Ok(message),
            Parsed::Batch(_) => panic!("one message expected"),
        }
    }

    fn lines(input: &[u8], limit: usize) -> Vec<(Line, Vec<u8>)> {
        let mut r = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            let l = read_bounded_line(&mut r, limit, &mut line).expect("read");
            if l == Line::Eof {
                return out;
            }
            out.push((l, line.clone()));
        }
    }

    #[test]
    fn lines_are_bounded_and_the_stream_goes_on() {
        let got = lines(b"short\r\nthis one is far too long\nok\nlast", 8);
        assert_eq!(got[0], (Line::Complete, b"short".to_vec()));
        assert_eq!(got[1].0, Line::TooLong);
        assert_eq!(got[2], (Line::Complete, b"ok".to_vec()));
        assert_eq!(got[3], (Line::Complete, b"last".to_vec()));
        assert_eq!(got.len(), 4);
    }

    /// Read straight into its keys, an object is classified as it is through a value: the
    /// same message or the same fault, for every shape of each key. A key given twice is
    /// refused by that read, and read through the value (the last one counts).
    #[test]
    fn an_object_read_into_its_keys_is_classified_as_its_value_is() {
        let lines: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"a"}}}"#,
            r#" {"method":"ping","jsonrpc":"2.0","id":"x","extra":[1,{"id":3}]}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":null}"#,
            r#"{"jsonrpc":"2.0","id":2.5,"result":{"roots":[]}}"#,
            r#"{"jsonrpc":"2.0","id":"s1","error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":"s1","result":1,"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
            r#"{"jsonrpc":2,"id":7,"method":"ping"}"#,
            r#"{"id":7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            r#"{"jsonrpc":"2.0","method":["ping"]}"#,
            r#"{}"#,
        ];
        for line in lines {
            let through_value = serde_json::from_str::<Value>(line).map(classify);
            let into_keys = serde_json::from_str::<Keys>(line).map(classify_keys);
            assert_eq!(
                format!("{:?}", into_keys.expect("read into keys")),
                format!("{:?}", through_value.expect("read as a value")),
                "{line}"
            );
        }
        let twice = br#"{"jsonrpc":"2.0","id":1,"method":"ping","id":2}"#;
        assert!(serde_json::from_slice::<Keys>(twice).is_err());
        let m = parse_line(twice).expect("request");
        assert!(matches!(m, Message::Request { id, .. } if id == json!(2)));
    }

    #[test]
    fn classification() {
        let m = parse_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).expect("request");
        assert!(matches!(m, Message::Request { .. }));
        let m = parse_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .expect("notification");
        assert!(matches!(m, Message::Notification { .. }));
        let m =
            parse_line(br#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}"#).expect("response");
        assert!(matches!(m, Message::Response { outcome: Ok(_), .. }));
        let f = parse_line(b"{nope").expect_err("parse error");
        assert_eq!(f.code, PARSE_ERROR);
        let f = parse_line(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#).expect_err("version");
        assert_eq!((f.code, f.id), (INVALID_REQUEST, json!(7)));
        let f = parse_line(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).expect_err("null id");
        assert_eq!(f.code, INVALID_REQUEST);
        let Ok(Parsed::Batch(items)) = parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},[]]"#)
        else {
            panic!("a batch");
        };
        assert!(matches!(items[0], Ok(Message::Request { .. })));
        assert_eq!(
            items[1].as_ref().map(|_| ()).expect_err("nested").code,
            INVALID_REQUEST
        );
        assert_eq!(parse(b"[]").expect_err("empty").code, INVALID_REQUEST);
    }
}
