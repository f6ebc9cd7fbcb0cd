//! The server's stderr: a line per event (`sneaky-mcp: MESSAGE`), or with `--log-format
//! json` one JSON object per line and one per tool call, for an engine's log collector. Every
//! part of the server logs through here (the session loop, the calls, the worker pool, HTTP).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

use crate::render::json_out;

/// `--log-format json`: every stderr line is a JSON object, and each tool call gets one.
static JSON_LOG: AtomicBool = AtomicBool::new(false);

pub fn set_json_log() {
    JSON_LOG.store(true, Ordering::Relaxed);
}

/// A line on stderr: `sneaky-mcp: MESSAGE`, or with `--log-format json` `{"time", "msg"}`.
pub fn log(message: impl std::fmt::Display) {
    if JSON_LOG.load(Ordering::Relaxed) {
        log_json(json!({"time": rfc3339_now(), "msg": message.to_string()}));
    } else {
        log_line(format!("sneaky-mcp: {message}\n"));
    }
}

/// How a tool call ended, for its log line.
pub struct CallEnd<'a> {
    /// The server's name for the session over HTTP (never its id); None over stdio.
    pub session: Option<&'a str>,
    /// The tool, when the request named one this server has (a name it does not know is not
    /// repeated: it is the client's text).
    pub tool: Option<&'static str>,
    pub took: Duration,
    /// "ok", "error" (a tool error: `code` says which), "invalid_params", "cancelled" (by the
    /// client) or "stopped" (by the server's stop).
    pub outcome: &'static str,
    pub code: Option<&'static str>,
}

/// With `--log-format json`, one line per tool call for an engine's log collector: when it
/// ended, its session, tool, duration and outcome. Never its arguments, its result or the token.
pub fn log_call(end: &CallEnd<'_>) {
    if !JSON_LOG.load(Ordering::Relaxed) {
        return;
    }
    let mut line = json!({
        "time": rfc3339_now(),
        "event": "call",
        "tool": end.tool,
        "duration_ms": u64::try_from(end.took.as_millis()).unwrap_or(u64::MAX),
        "outcome": end.outcome,
    });
    if let Some(code) = end.code {
        line["code"] = json!(code);
    }
    if let Some(session) = end.session {
        line["session"] = json!(session);
    }
    log_json(line);
}

fn log_json(value: Value) {
    let mut line = Vec::new();
    json_out::write_value(&mut line, &value);
    line.push(b'\n');
    log_line(line);
}

/// One write, so that lines of calls ending together do not interleave.
fn log_line(line: impl AsRef<[u8]>) {
    let _ = io::stderr().lock().write_all(line.as_ref());
}

/// Now as RFC 3339 in UTC with milliseconds (`2026-12-01T21:10:00.123Z`).
fn rfc3339_now() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since)
}

fn rfc3339(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let (y, m, d) = civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since_epoch.subsec_millis()
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        let at = |secs: u64, ms: u32| rfc3339(Duration::new(secs, ms * 1_000_000));
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.007Z");
        assert_eq!(at(1_704_067_199, 999), "2023-12-31T23:59:59.999Z");
        assert_eq!(at(1_798_761_600, 0), "2027-01-01T00:00:00.000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }
}
