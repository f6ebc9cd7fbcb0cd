//! read_file of an image: through sneaky-read (JSON and text), through sneaky-mcp (an `image`
//! content block); scaling handed to `sneaky-outline --scale-image` by both; through the official
//! TypeScript SDK's client (tests/mcp/ts_media_test.cjs), which parses the image block (and
//! reads a PDF's pages: tests/suite/pdf.rs has the rest of read_file of a PDF).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};

use crate::util::{self, Ws};

/// Pixels of a `width` x `height` gradient, RGB.
fn gradient(width: u32, height: u32) -> Vec<u8> {
    let mut data = Vec::new();
    for y in 0..height {
        for x in 0..width {
            data.extend_from_slice(&[(x % 251) as u8, (y % 241) as u8, ((x + y) % 7) as u8]);
        }
    }
    data
}

pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("png header");
    writer
        .write_image_data(&gradient(width, height))
        .expect("png data");
    writer.finish().expect("png end");
    out
}

fn jpeg(width: u16, height: u16) -> Vec<u8> {
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, 90)
        .encode(
            &gradient(u32::from(width), u32::from(height)),
            width,
            height,
            jpeg_encoder::ColorType::Rgb,
        )
        .expect("jpeg");
    out
}

fn gif(width: u16, height: u16) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let palette = [0, 0, 0, 255, 0, 0];
        let mut encoder = gif::Encoder::new(&mut out, width, height, &palette).expect("gif");
        let pixels: Vec<u8> = (0..usize::from(width) * usize::from(height))
            .map(|i| (i % 2) as u8)
            .collect();
        let frame = gif::Frame {
            width,
            height,
            buffer: std::borrow::Cow::Owned(pixels),
            ..gif::Frame::default()
        };
        encoder.write_frame(&frame).expect("gif frame");
    }
    out
}

fn webp(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out)
        .encode(
            &gradient(width, height),
            width,
            height,
            image_webp::ColorType::Rgb8,
        )
        .expect("webp");
    out
}

fn write_bytes(w: &Ws, rel: &str, bytes: &[u8]) {
    let path = w.root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

fn decode_base64(text: &str) -> Vec<u8> {
    sneaky::media::base64_decode(text).expect("content is base64")
}

#[test]
fn each_image_format_comes_back_as_it_is_with_its_type_and_size() {
    let w = util::ws();
    let files: [(&str, Vec<u8>, &str); 4] = [
        ("img/a.png", png(64, 32), "image/png"),
        ("img/b.jpg", jpeg(40, 30), "image/jpeg"),
        ("img/c.gif", gif(12, 8), "image/gif"),
        ("img/d.webp", webp(20, 10), "image/webp"),
    ];
    let sizes = [(64, 32), (40, 30), (12, 8), (20, 10)];
    for ((rel, bytes, mime), (width, height)) in files.iter().zip(sizes) {
        write_bytes(&w, rel, bytes);
        // Lines mean nothing in an image: offset and limit do not cut it.
        for request in [
            json!({"file_path": rel}),
            json!({"file_path": rel, "offset": 1, "limit": 5}),
        ] {
            let reply = w.call("sneaky-read", request);
            let r = reply.ok();
            assert_eq!(r["encoding"], "base64", "{rel}: {r}");
            assert_eq!(r["mime_type"], *mime, "{rel}");
            assert_eq!(
                (r["width"].clone(), r["height"].clone()),
                (json!(width), json!(height))
            );
            assert_eq!(r["original_width"], width);
            assert_eq!(r["truncated"], false);
            assert_eq!(r["total_lines"], 0);
            assert_eq!(
                decode_base64(r["content"].as_str().expect("content")),
                *bytes
            );
        }
    }
    let out = std::process::Command::cargo_bin("sneaky-read")
        .expect("binary")
        .current_dir(&w.root)
        .env("SNEAKY_ROOT", &w.root)
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .args(["img/a.png", "--format", "text"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        stdout.starts_with("img/a.png: PNG image, 64x32 pixels"),
        "{stdout}"
    );
}

#[test]
fn a_large_image_is_scaled_down_and_an_unreadable_one_refused() {
    let w = util::ws();
    write_bytes(&w, "wide.png", &png(3000, 1200));
    let reply = w.call("sneaky-read", json!({"file_path": "wide.png"}));
    let r = reply.ok();
    assert_eq!(
        (r["width"].clone(), r["height"].clone()),
        (json!(2000), json!(800))
    );
    assert_eq!(
        (r["original_width"].clone(), r["original_height"].clone()),
        (json!(3000), json!(1200))
    );
    assert_eq!(r["truncated"], true);
    let bytes = decode_base64(r["content"].as_str().expect("content"));
    let kind = sneaky::media::ImageKind::sniff(&bytes).expect("an image");
    assert_eq!(r["mime_type"], kind.mime_type());
    assert_eq!(kind.dimensions(&bytes), Some((2000, 800)));

    // Over max_file_size_bytes (but within the sides): made smaller until its data fits.
    w.user_config("max_file_size_bytes = 20000\n");
    write_bytes(&w, "photo.jpg", &jpeg(1600, 1200));
    let r = w.call("sneaky-read", json!({"file_path": "photo.jpg"}));
    let r = r.ok();
    let bytes = decode_base64(r["content"].as_str().expect("content"));
    assert!(bytes.len() <= 20000, "{} bytes", bytes.len());
    assert_eq!(r["mime_type"], "image/jpeg");
    assert!(r["width"].as_u64().expect("width") < 1600);
    assert_eq!(r["original_width"], 1600);

    // The signature of a PNG and nothing readable after it.
    write_bytes(&w, "broken.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x10");
    let msg = w
        .call("sneaky-read", json!({"file_path": "broken.png"}))
        .err("binary_file", 1);
    assert!(msg.contains("PNG"), "{msg}");
}

/// An RGB PNG of noise, which compresses to nearly its pixels' size (a photograph's worth).
fn noise_png(width: u32, height: u32) -> Vec<u8> {
    let mut state: u32 = 0x2545_f491;
    let pixels: Vec<u8> = (0..width * height * 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("png header");
    writer.write_image_data(&pixels).expect("png data");
    writer.finish().expect("png end");
    out
}

/// However large `max_file_size_bytes` is, an image's data stays within what models' APIs
/// take (Anthropic's: 5 MiB of base64), scaled down until it fits.
#[test]
fn an_image_stays_within_what_models_take_whatever_the_limit_for_text() {
    let w = util::ws();
    w.user_config("max_file_size_bytes = 16777216\n");
    let big = noise_png(1900, 1000);
    assert!(big.len() > 5_000_000, "{} bytes", big.len());
    write_bytes(&w, "noise.png", &big);
    let r = w.call("sneaky-read", json!({"file_path": "noise.png"}));
    let r = r.ok();
    let content = r["content"].as_str().expect("content");
    assert!(content.len() <= 5 * 1024 * 1024, "{} base64", content.len());
    let bytes = decode_base64(content);
    assert!(
        bytes.len() as u64 <= sneaky::media::MAX_IMAGE_DATA_BYTES,
        "{}",
        bytes.len()
    );
    assert_eq!(r["truncated"], true);
    assert_eq!(r["original_width"], 1900);
}

/// One stdio session: initialize, then each read_file call's result.
pub fn mcp_calls(w: &Ws, calls: &[Value]) -> Vec<Value> {
    let mut child = Command::cargo_bin("sneaky-mcp")
        .expect("binary")
        .arg("--root")
        .arg(&w.root)
        .env_remove("SNEAKY_ROOT")
        .env_remove("SNEAKY_CONFIG")
        .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
        .env("XDG_STATE_HOME", w.outside().join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn sneaky-mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |v: Value| writeln!(stdin, "{v}").expect("write");
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "suite", "version": "1"}}}),
    );
    let _ = lines.next();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut results = Vec::new();
    for (i, arguments) in calls.iter().enumerate() {
        send(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "read_file", "arguments": arguments}}),
        );
        let line = lines.next().expect("a reply").expect("read");
        let reply: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(reply["id"], i + 1, "{reply}");
        results.push(reply["result"].clone());
    }
    drop(stdin);
    let _ = child.wait();
    results
}

#[test]
fn over_mcp_an_image_is_an_image_block_scaled_by_the_helper() {
    let w = util::ws();
    let small = png(64, 32);
    write_bytes(&w, "small.png", &small);
    write_bytes(&w, "tall.png", &png(500, 2500));
    let results = mcp_calls(
        &w,
        &[
            json!({"file_path": "small.png"}),
            json!({"file_path": "tall.png"}),
        ],
    );
    let small_result = &results[0];
    assert_eq!(small_result["isError"], false, "{small_result}");
    assert_eq!(
        small_result["content"][0],
        json!({"type": "text", "text": "small.png (PNG image, 64x32 pixels)"})
    );
    let block = &small_result["content"][1];
    assert_eq!(block["type"], "image");
    assert_eq!(block["mimeType"], "image/png");
    assert_eq!(decode_base64(block["data"].as_str().expect("data")), small);
    assert_eq!(small_result["structuredContent"]["width"], 64);

    let tall = &results[1];
    assert_eq!(tall["isError"], false, "{tall}");
    assert_eq!(
        tall["content"][0]["text"],
        "tall.png (PNG image, 500x2500 pixels, scaled down to 400x2000)"
    );
    let data = decode_base64(tall["content"][1]["data"].as_str().expect("data"));
    let kind = sneaky::media::ImageKind::sniff(&data).expect("an image");
    assert_eq!(kind.dimensions(&data), Some((400, 2000)));
}

/// Both shapes of the tools (src/mcp/shape.rs): the image is one image block beside a short
/// text, never base64 in a text block.
#[test]
fn official_typescript_client_parses_the_image_block() {
    let Some(node_modules) = crate::mcp_client::node_modules() else {
        return;
    };
    let w = util::ws();
    write_bytes(&w, "shot.png", &png(48, 20));
    write_bytes(&w, "big.png", &png(2400, 600));
    write_bytes(&w, "doc.pdf", &crate::pdf::fixture("groff.pdf"));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/ts_media_test.cjs");
    for shape in ["structured", "text"] {
        let out = Command::new("node")
            .arg(&script)
            .arg(assert_cmd::cargo::cargo_bin("sneaky-mcp"))
            .arg(&w.root)
            .arg(shape)
            .env("NODE_PATH", &node_modules)
            .env_remove("SNEAKY_ROOT")
            .env_remove("SNEAKY_CONFIG")
            .env("XDG_CONFIG_HOME", w.outside().join("xdg"))
            .env("XDG_STATE_HOME", w.outside().join("state"))
            .output()
            .expect("run node");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success()
                && stdout.contains(&format!(
                    "all TypeScript media checks passed ({shape} shape)"
                ))
                && stdout.contains("the PDF's second page comes as text"),
            "{shape}: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status
        );
    }
}

/// sneaky-agent sends the images read_file returned to the model as each API takes them (the
/// request bodies validated against the OpenAI and Anthropic SDKs' message types by
/// tests/hosts/image_request_test.py); big.png is scaled by sneaky-outline for the agent.
#[test]
fn the_agent_passes_images_to_openai_and_anthropic() {
    use crate::agent::{agent_command, finish_call, ok, openai_reply, ran, run, run_openai, serve};
    let python = crate::mcp_client::target_dir().join("hosts-venv/bin/python");
    let w = util::ws();
    write_bytes(&w, "shot.png", &png(48, 20));
    write_bytes(&w, "big.png", &png(2400, 600));
    let finish = finish_call("c3", "seen");
    let server = serve(vec![
        openai_reply(
            None,
            &[
                ("c1", "read_file", r#"{"file_path": "shot.png"}"#),
                ("c2", "read_file", r#"{"file_path": "big.png"}"#),
            ],
        ),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let r = run_openai(&w, &server.base, &["look at the images"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let openai_body = server.requests()[1].body.clone();

    let server = serve(vec![
        ok(
            json!({"id": "m1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                  "content": [
                      {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                       "input": {"file_path": "shot.png"}},
                      {"type": "tool_use", "id": "toolu_2", "name": "read_file",
                       "input": {"file_path": "big.png"}}]}),
        ),
        ok(
            json!({"id": "m2", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                  "content": [{"type": "tool_use", "id": "toolu_3", "name": "finish",
                               "input": {"message": "seen"}}]}),
        ),
    ]);
    let mut cmd = agent_command(
        &w,
        &[
            "run",
            "--provider",
            "anthropic",
            "--base-url",
            &server.base,
            "--model",
            "claude-test",
            "look at the images",
        ],
    );
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test");
    let r = ran(run(cmd, b""));
    assert_eq!(r.status, 0, "{}", r.stderr);
    let anthropic_body = server.requests()[1].body.clone();

    // Checked here too, so that a machine without the SDKs still tests the shapes.
    let last = openai_body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned();
    assert_eq!(
        last.as_ref().map(|m| m["role"].clone()),
        Some(json!("user"))
    );
    let blocks = &anthropic_body["messages"][2]["content"];
    assert_eq!(blocks[0]["content"][1]["type"], "image", "{blocks}");

    if !util::require_python_pkg(&python, "anthropic", ".ci/setup-hosts.sh") {
        return;
    }
    let file = w.outside().join("requests.json");
    std::fs::write(
        &file,
        json!({"openai": openai_body, "anthropic": anthropic_body}).to_string(),
    )
    .expect("write");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/image_request_test.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&file)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all image request checks passed"),
        "{}\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
