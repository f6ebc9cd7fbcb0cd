//! Talking to the model: the two wire formats (OpenAI Chat Completions with `tools`, which
//! OpenAI, Ollama, llama.cpp, vLLM and OpenRouter all speak, and the Anthropic Messages API)
//! and one small blocking HTTP client with bounded retries.
//!
//! The conversation is kept in the provider's own message format so that what goes back to
//! the server is exactly what it sent, plus our tool results; only the reply is read into a
//! common shape (text and tool calls).

use std::time::Duration;

use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
}

pub const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com";
const ANTHROPIC_VERSION: &str = "2023-06-01";
const ANTHROPIC_MAX_TOKENS: u32 = 8192;

/// Retries after 429 and 5xx: few, and never a long sleep.
const MAX_RETRIES: u32 = 4;
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// First backoff step when the server gives no Retry-After; doubles each time. The hidden
/// SNEAKY_RETRY_BASE_MS overrides it (the tests use it to stay fast).
const DEFAULT_RETRY_BASE: Duration = Duration::from_secs(1);

/// One tool call of a reply. `arguments` is Err(the text and the parse error) when the model
/// sent arguments that are not JSON.
#[derive(Debug, Clone)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Result<Value, String>,
    /// The arguments as the model sent them, for the transcript.
    pub raw_arguments: Value,
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<ToolCall>,
    /// The assistant message to keep in the conversation.
    message: Value,
}

pub struct ToolResult {
    pub id: String,
    pub content: String,
    pub is_error: bool,
    /// An image the call returned (read_file of a PNG, JPEG, GIF or WebP), for the model to see.
    pub image: Option<ImagePart>,
}

/// An image in base64 with its MIME type (`image/png` …), as both APIs take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    pub mime_type: String,
    pub data: String,
}

impl ImagePart {
    /// The image of a tool's result, when it holds one (`encoding: "base64"` and an image type).
    pub fn of_result(result: &Value) -> Option<ImagePart> {
        if result.get("encoding")?.as_str()? != "base64" {
            return None;
        }
        let mime_type = result.get("mime_type")?.as_str()?;
        crate::media::ImageKind::from_mime_type(mime_type)?;
        Some(ImagePart {
            mime_type: mime_type.to_string(),
            data: result.get("content")?.as_str()?.to_string(),
        })
    }
}

pub struct Conversation {
    provider: Provider,
    system: String,
    tools: Value,
    messages: Vec<Value>,
}

impl Conversation {
    pub fn new(provider: Provider, system: String, task: &str, tools: Value) -> Conversation {
        let mut messages = Vec::new();
        if provider == Provider::OpenAi {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.push(json!({"role": "user", "content": task}));
        Conversation {
            provider,
            system,
            tools,
            messages,
        }
    }

    pub fn request_body(&self, model: &str) -> Value {
        match self.provider {
            Provider::OpenAi => json!({
                "model": model,
                "messages": self.messages,
                // No tool_choice: "auto" is the default, and not every server accepts the key.
                "tools": self.tools,
            }),
            Provider::Anthropic => json!({
                "model": model,
                "max_tokens": ANTHROPIC_MAX_TOKENS,
                "system": self.system,
                "messages": self.messages,
                "tools": self.tools,
            }),
        }
    }

    pub fn push_assistant(&mut self, reply: &Reply) {
        self.messages.push(reply.message.clone());
    }

    pub fn push_user_text(&mut self, text: &str) {
        self.messages.push(json!({"role": "user", "content": text}));
    }

    /// One result per call, in call order, each with its call's id. An image goes where each
    /// API takes one: Anthropic's in the tool_result itself (an `image` block beside the text);
    /// OpenAI's Chat Completions takes only text in a `tool` message, so the images follow the
    /// results in one `user` message (`image_url` parts with `data:` URLs), each after a line
    /// naming the call it came from.
    pub fn push_results(&mut self, results: Vec<ToolResult>) {
        match self.provider {
            Provider::OpenAi => {
                let mut images = Vec::new();
                for r in results {
                    self.messages.push(json!({
                        "role": "tool",
                        "tool_call_id": r.id,
                        "content": r.content,
                    }));
                    if let Some(image) = r.image {
                        images.push(json!({"type": "text", "text": format!(
                            "The image of tool call {}:", r.id)}));
                        images.push(json!({"type": "image_url", "image_url": {
                            "url": format!("data:{};base64,{}", image.mime_type, image.data)}}));
                    }
                }
                if !images.is_empty() {
                    self.messages
                        .push(json!({"role": "user", "content": images}));
                }
            }
            Provider::Anthropic => {
                let blocks: Vec<Value> = results
                    .into_iter()
                    .map(|r| {
                        let content = match r.image {
                            None => json!(r.content),
                            Some(image) => json!([
                                {"type": "text", "text": r.content},
                                {"type": "image", "source": {"type": "base64",
                                    "media_type": image.mime_type, "data": image.data}},
                            ]),
                        };
                        json!({
                            "type": "tool_result",
                            "tool_use_id": r.id,
                            "content": content,
                            "is_error": r.is_error,
                        })
                    })
                    .collect();
                self.messages
                    .push(json!({"role": "user", "content": blocks}));
            }
        }
    }
}

/// Read a reply body into text and tool calls.
pub fn parse_reply(provider: Provider, body: &Value) -> Result<Reply, String> {
    match provider {
        Provider::OpenAi => parse_openai(body),
        Provider::Anthropic => parse_anthropic(body),
    }
}

/// Tool arguments as a value: the JSON text OpenAI specifies, or an object some servers send.
pub fn arguments_value(raw: &Value) -> Result<Value, String> {
    match raw {
        Value::String(text) if text.trim().is_empty() => Ok(json!({})),
        Value::String(text) => serde_json::from_str(text)
            .map_err(|e| format!("the arguments are not valid JSON ({e}): {text}")),
        Value::Null => Ok(json!({})),
        other => Ok(other.clone()),
    }
}

fn parse_openai(body: &Value) -> Result<Reply, String> {
    let message = body
        .pointer("/choices/0/message")
        .ok_or_else(|| format!("the reply has no choices[0].message: {}", excerpt(body)))?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut calls = Vec::new();
    let mut wire_calls = Vec::new();
    if let Some(list) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in list.iter().enumerate() {
            // Some servers leave the id out; results must still pair with their calls.
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}"));
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let raw = call
                .pointer("/function/arguments")
                .cloned()
                .unwrap_or(Value::Null);
            let wire_arguments = match &raw {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            wire_calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": wire_arguments},
            }));
            calls.push(ToolCall {
                id,
                name,
                arguments: arguments_value(&raw),
                raw_arguments: raw,
            });
        }
    }
    let content = match message.get("content") {
        Some(Value::Null) | None if !wire_calls.is_empty() => Value::Null,
        // A message with neither text nor calls is refused by some servers when sent back.
        Some(Value::Null) | None => Value::String(String::new()),
        Some(other) => other.clone(),
    };
    let mut kept = json!({"role": "assistant", "content": content});
    if !wire_calls.is_empty() {
        kept["tool_calls"] = Value::Array(wire_calls);
    }
    Ok(Reply {
        text,
        calls,
        message: kept,
    })
}

fn parse_anthropic(body: &Value) -> Result<Reply, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the reply has no content array: {}", excerpt(body)))?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(t);
                }
            }
            Some("tool_use") => {
                let raw = block.get("input").cloned().unwrap_or(Value::Null);
                calls.push(ToolCall {
                    id: block
                        .get("id")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("toolu_{i}")),
                    name: block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: arguments_value(&raw),
                    raw_arguments: raw,
                });
            }
            _ => {}
        }
    }
    Ok(Reply {
        text,
        calls,
        // The Messages API refuses an earlier assistant message with empty content.
        message: if content.is_empty() {
            json!({"role": "assistant", "content": [{"type": "text", "text": "(no reply)"}]})
        } else {
            json!({"role": "assistant", "content": content})
        },
    })
}

fn excerpt(value: &Value) -> String {
    crate::text::shorten(&value.to_string(), 300)
}

/// Whether `base` can be a model server's base URL: http or https, with a host. Checked before
/// any request, so that a typo is bad input (exit 2), not a network failure.
pub fn check_base_url(base: &str) -> Result<(), String> {
    let uri: ureq::http::Uri = base
        .parse()
        .map_err(|e| format!("not a URL ({e}); expected e.g. http://localhost:11434/v1"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => return Err(format!("scheme {other:?}: only http and https are spoken")),
        None => return Err("no scheme: expected http://HOST… or https://HOST…".into()),
    }
    if uri.host().map_or(true, str::is_empty) {
        return Err("no host".into());
    }
    if uri.query().is_some() {
        return Err("a base URL takes no query (?…); the path is appended to it".into());
    }
    Ok(())
}

pub struct Client {
    provider: Provider,
    url: String,
    model: String,
    key: Option<String>,
    agent: ureq::Agent,
    retry_base: Duration,
}

impl Client {
    pub fn new(provider: Provider, base_url: &str, model: String, key: Option<String>) -> Client {
        let base = base_url.trim_end_matches('/');
        let url = match provider {
            Provider::OpenAi => format!("{base}/chat/completions"),
            Provider::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
            Provider::Anthropic => format!("{base}/v1/messages"),
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(30)))
            // Local models can think for minutes; a stuck server still ends.
            .timeout_global(Some(Duration::from_secs(900)))
            .build()
            .into();
        let retry_base = std::env::var("SNEAKY_RETRY_BASE_MS")
            .ok()
            .and_then(|ms| ms.parse::<u64>().ok())
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_RETRY_BASE);
        Client {
            provider,
            url,
            model,
            key: key.filter(|k| !k.is_empty()),
            agent,
            retry_base,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// POST the body; retry 429 and 5xx a few times. `note` hears about each retry.
    pub fn send(&self, body: &Value, note: &dyn Fn(&str)) -> Result<Value, String> {
        let text = body.to_string();
        let mut attempt = 0;
        loop {
            let mut request = self
                .agent
                .post(&self.url)
                .header("content-type", "application/json");
            request = match self.provider {
                Provider::OpenAi => match &self.key {
                    Some(key) => request.header("authorization", &format!("Bearer {key}")),
                    None => request,
                },
                Provider::Anthropic => {
                    let r = request.header("anthropic-version", ANTHROPIC_VERSION);
                    match &self.key {
                        Some(key) => r.header("x-api-key", key),
                        None => r,
                    }
                }
            };
            let mut response = match request.send(text.as_str()) {
                Ok(r) => r,
                Err(e) => return Err(self.transport_error(e)),
            };
            let status = response.status().as_u16();
            let retry_after = header_wait(&response);
            let reply_text = response
                .body_mut()
                .with_config()
                .limit(64 * 1024 * 1024)
                .read_to_string()
                .map_err(|e| self.transport_error(e))?;
            if (200..300).contains(&status) {
                return serde_json::from_str(&reply_text).map_err(|e| {
                    format!(
                        "the model server at {} answered with something that is not JSON ({e}): {}",
                        self.url,
                        crate::text::shorten(&reply_text, 300)
                    )
                });
            }
            let said = server_message(&reply_text);
            if status == 429 || (500..600).contains(&status) {
                if attempt < MAX_RETRIES {
                    attempt += 1;
                    let wait = retry_after
                        .unwrap_or_else(|| self.retry_base.saturating_mul(1 << (attempt - 1)))
                        .min(MAX_RETRY_WAIT);
                    note(&format!(
                        "the model server answered {status}{}; retrying in {:.1}s ({attempt}/{MAX_RETRIES})",
                        if said.is_empty() { String::new() } else { format!(" ({said})") },
                        wait.as_secs_f64()
                    ));
                    std::thread::sleep(wait);
                    continue;
                }
                return Err(format!(
                    "the model server at {} answered {status} {} times; giving up{}",
                    self.url,
                    MAX_RETRIES + 1,
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {said}")
                    }
                ));
            }
            return Err(self.status_error(status, &said));
        }
    }

    fn status_error(&self, status: u16, said: &str) -> String {
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(" The server said: {said}")
        };
        let key_var = match self.provider {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        };
        match status {
            401 => format!(
                "the model server at {} refused the request as unauthenticated (401): {} \
                 Check {key_var}.{said}",
                self.url,
                if self.key.is_some() {
                    format!("the API key in {key_var} was not accepted.")
                } else {
                    format!("no API key was sent because {key_var} is not set.")
                }
            ),
            403 => format!(
                "the model server at {} refused the request (403 Forbidden): the API key in \
                 {key_var} is not allowed to use model {:?} or this endpoint.{said}",
                self.url, self.model
            ),
            404 => format!(
                "the model server has no {} (404 Not Found): check --base-url (an OpenAI-compatible \
                 base URL usually ends in /v1) and --model {:?}.{said}",
                self.url, self.model
            ),
            _ => format!(
                "the model server at {} answered {status}.{said}",
                self.url
            ),
        }
    }

    fn transport_error(&self, e: ureq::Error) -> String {
        let what = match &e {
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                "connection refused: is the server running, and is --base-url right?".to_string()
            }
            ureq::Error::HostNotFound => "host not found: check --base-url".to_string(),
            ureq::Error::Timeout(t) => format!("timed out ({t})"),
            other => other.to_string(),
        };
        format!("cannot reach the model server at {}: {what}", self.url)
    }
}

/// The wait a 429/503 asks for: `retry-after-ms` or `retry-after` in seconds (an HTTP date is
/// ignored and backoff used instead).
fn header_wait(response: &ureq::http::Response<ureq::Body>) -> Option<Duration> {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = header("retry-after-ms") {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(3600.0)));
    }
    header("retry-after").map(|s| Duration::from_secs_f64(s.min(3600.0)))
}

/// The error message a server put in its body: `{"error":{"message"}}` (OpenAI, Anthropic),
/// `{"error":"…"}` (Ollama), or the text itself.
fn server_message(body: &str) -> String {
    let message = match serde_json::from_str::<Value>(body) {
        Ok(v) => match v.get("error") {
            Some(Value::String(s)) => s.clone(),
            Some(e) => e
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string()),
            None => v
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string()),
        },
        Err(_) => body.trim().to_string(),
    };
    crate::text::shorten(&message, 500)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_reply_without_ids_or_with_object_arguments_still_pairs_up() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": "hi",
        "tool_calls": [
            {"type": "function", "function": {"name": "read_file",
                                              "arguments": {"file_path": "a"}}},
            {"id": "x", "type": "function", "function": {"name": "list_dir",
                                                         "arguments": "{oops"}},
            {"id": "y", "type": "function", "function": {"name": "finish"}},
        ]}}]});
        let reply = parse_reply(Provider::OpenAi, &body).unwrap();
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.calls[0].id, "call_0");
        assert_eq!(reply.calls[0].arguments, Ok(json!({"file_path": "a"})));
        assert!(reply.calls[1]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("{oops"));
        assert_eq!(reply.calls[2].arguments, Ok(json!({})));
        // What goes back to the server is well-formed whatever came in.
        let calls = reply.message["tool_calls"].as_array().unwrap();
        assert_eq!(calls[0]["id"], "call_0");
        assert_eq!(calls[0]["function"]["arguments"], r#"{"file_path":"a"}"#);
        assert_eq!(calls[2]["function"]["arguments"], "{}");
    }

    #[test]
    fn malformed_replies_are_errors_not_panics() {
        assert!(parse_reply(Provider::OpenAi, &json!({"choices": []})).is_err());
        assert!(parse_reply(Provider::Anthropic, &json!({"content": "text"})).is_err());
        let reply = parse_reply(
            Provider::Anthropic,
            &json!({"content": [{"type": "thinking", "thinking": "…"},
                                 {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        )
        .unwrap();
        assert_eq!(reply.text, "a\nb");
        assert!(reply.calls.is_empty());
        // Blocks we do not read are still sent back as they came.
        assert_eq!(reply.message["content"][0]["type"], "thinking");
    }

    #[test]
    fn anthropic_results_go_in_one_user_message() {
        let mut c = Conversation::new(Provider::Anthropic, "sys".into(), "task", json!([]));
        c.push_results(vec![
            ToolResult {
                id: "a".into(),
                content: "{}".into(),
                is_error: false,
                image: None,
            },
            ToolResult {
                id: "b".into(),
                content: "{}".into(),
                is_error: true,
                image: None,
            },
        ]);
        let body = c.request_body("m");
        assert_eq!(body["system"], "sys");
        let last = &body["messages"][1];
        assert_eq!(last["role"], "user");
        assert_eq!(last["content"][1]["tool_use_id"], "b");
        assert_eq!(last["content"][1]["is_error"], true);
    }

    #[test]
    fn images_go_where_each_api_takes_them() {
        let image = ImagePart::of_result(&json!({"encoding": "base64", "mime_type": "image/png",
                                                 "content": "iVBO"}));
        assert_eq!(
            image,
            Some(ImagePart {
                mime_type: "image/png".into(),
                data: "iVBO".into()
            })
        );
        assert_eq!(ImagePart::of_result(&json!({"content": "text"})), None);
        let results = || {
            vec![
                ToolResult {
                    id: "a".into(),
                    content: "a.png (PNG image, 1x1 pixels)".into(),
                    is_error: false,
                    image: image.clone(),
                },
                ToolResult {
                    id: "b".into(),
                    content: "b.txt (lines 1-1 of 1)\nb\n".into(),
                    is_error: false,
                    image: None,
                },
            ]
        };
        let mut c = Conversation::new(Provider::Anthropic, "sys".into(), "task", json!([]));
        c.push_results(results());
        let body = c.request_body("m");
        let blocks = &body["messages"][1]["content"];
        assert_eq!(
            blocks[0]["content"],
            json!([{"type": "text", "text": "a.png (PNG image, 1x1 pixels)"},
                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                "data": "iVBO"}}])
        );
        assert_eq!(blocks[1]["content"], "b.txt (lines 1-1 of 1)\nb\n");

        let mut c = Conversation::new(Provider::OpenAi, "sys".into(), "task", json!([]));
        c.push_results(results());
        let messages = c.request_body("m")["messages"].clone();
        assert_eq!(messages[2]["role"], "tool");
        assert_eq!(messages[2]["content"], "a.png (PNG image, 1x1 pixels)");
        assert_eq!(messages[3]["tool_call_id"], "b");
        assert_eq!(
            messages[4],
            json!({"role": "user", "content": [
                {"type": "text", "text": "The image of tool call a:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]})
        );
    }

    #[test]
    fn empty_replies_are_kept_in_a_form_the_server_accepts_back() {
        let openai = json!({"choices": [{"message": {"role": "assistant", "content": null}}]});
        let reply = parse_reply(Provider::OpenAi, &openai).unwrap();
        assert_eq!(reply.message, json!({"role": "assistant", "content": ""}));
        let reply = parse_reply(Provider::Anthropic, &json!({"content": []})).unwrap();
        assert_eq!(reply.message["content"][0]["type"], "text");
    }

    #[test]
    fn server_messages_are_found_in_each_error_shape() {
        assert_eq!(
            server_message(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            server_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(server_message("<html>502</html>"), "<html>502</html>");
    }

    #[test]
    fn base_urls_are_checked_before_any_request() {
        for good in [
            "http://localhost:11434/v1",
            "https://api.openai.com/v1",
            "http://[::1]:8/",
        ] {
            assert_eq!(check_base_url(good), Ok(()), "{good}");
        }
        for bad in [
            "localhost:11434",
            "ftp://h/v1",
            "http://",
            "not a url",
            "",
            "http://h/v1?x=1",
        ] {
            assert!(check_base_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn anthropic_url_accepts_a_base_with_or_without_v1() {
        let c = |base: &str| Client::new(Provider::Anthropic, base, "m".into(), None).url;
        assert_eq!(
            c("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(c("http://proxy/v1/"), "http://proxy/v1/messages");
        let o = Client::new(Provider::OpenAi, "http://h:1/v1/", "m".into(), None).url;
        assert_eq!(o, "http://h:1/v1/chat/completions");
    }
}
