//! What a person approves is what runs, read off the screen: sneaky-agent runs under a
//! pseudo-terminal (`script`), every byte the terminal received goes through a terminal
//! emulator (the vt100 crate), and the assertions read the emulated screen, as the person
//! would: control, escape, bidirectional and zero-width characters are shown as escapes, long
//! and many-line commands whole, diffs escaped, and nothing the model wrote before the prompt
//! (its prose, a refused call's message) can hide or rearrange it.

use serde_json::json;

use crate::agent::{finish_call, openai_reply, serve};
use crate::agent_tty::run_in_pty_raw;
use crate::util;

/// The screen after `bytes`: rows as lines, a row that wrapped joined to the next.
fn screen(bytes: &str) -> String {
    let mut parser = vt100::Parser::new(1000, 80, 0);
    parser.process(bytes.as_bytes());
    parser.screen().contents()
}

/// The screen with every run of spaces squeezed to one (a wrapped row is padded with none,
/// a tab becomes spaces): what reads the same to a person compares equal.
fn squeezed(screen: &str) -> String {
    let mut out = String::new();
    for c in screen.chars() {
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    out
}

#[test]
fn the_approval_prompt_shows_on_screen_exactly_what_runs() {
    if !util::require_cmd("script") {
        return;
    }
    let w = util::ws();
    w.write("a.txt", "old line\n");
    let long = format!("echo {} && touch pwned2", "a".repeat(3000));
    let many: String = (1..=60)
        .map(|i| format!("echo line {i}\n"))
        .chain(["touch pwned3".to_string()])
        .collect();
    let commands = [
        // A tab run that would park the cursor at the right margin and overwrite the rest.
        format!("echo safe{}; touch pwned1", "\t".repeat(40)),
        long.clone(),
        many.clone(),
        "echo 'ok\u{1b}[2K\r\u{8}\u{8}'; touch pwned4".to_string(),
        "echo \u{202e}fdp.exe\u{2066} a\u{200b}b; touch pwned5".to_string(),
        // A carriage return before a newline is part of the command too.
        "echo one\r\ntouch pwned6".to_string(),
    ];
    let mut calls: Vec<(String, String, String)> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                format!("c{i}"),
                "run_command".to_string(),
                json!({ "command": c }).to_string(),
            )
        })
        .collect();
    calls.push((
        "w".into(),
        "write_file".into(),
        json!({"file_path": "a.txt", "content": "new\u{1b}[8m hidden\u{202e}\n"}).to_string(),
    ));
    let refs: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    let finish = finish_call("f", "done");
    // The model's prose before its calls tries to take the screen over: a one-row scroll
    // region, origin mode, the cursor home, an erase and a hidden-text attribute.
    let prose = "Let me look.\u{1b}[3;3r\u{1b}[?6h\u{1b}[H\u{1b}[2J\u{1b}[8m";
    let server = serve(vec![
        openai_reply(Some(prose), &refs),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let answers = "n\n".repeat(calls.len());
    let (status, raw) = run_in_pty_raw(&w, &server.base, &answers, false);
    let shown = screen(&raw);
    let flat = squeezed(&shown);
    assert_eq!(status, 0, "{shown}");
    assert_eq!(
        shown.matches("Allow run_command?").count(),
        commands.len(),
        "{shown}"
    );
    assert!(shown.contains("Allow write_file?"), "{shown}");
    // The prose is shown with its escapes, and took nothing over.
    assert!(
        flat.contains("Let me look.\\x1b[3;3r\\x1b[?6h\\x1b[H\\x1b[2J\\x1b[8m"),
        "{shown}"
    );
    assert!(
        flat.contains("command: echo safe ; touch pwned1"),
        "{shown}"
    );
    // A long command, whole (wrapped rows are joined on the screen).
    assert!(shown.contains(&format!("command: {long}")), "{shown}");
    // Every line of a many-line command, and nothing said to be left out.
    for line in many.lines() {
        assert!(
            shown.lines().any(|l| l.trim() == line),
            "missing {line:?}: {shown}"
        );
    }
    assert!(!shown.contains("more lines"), "{shown}");
    assert!(
        flat.contains("command: echo 'ok\\x1b[2K\\x0d\\x08\\x08'; touch pwned4"),
        "{shown}"
    );
    assert!(
        flat.contains("command: echo \\u{202e}fdp.exe\\u{2066} a\\u{200b}b; touch pwned5"),
        "{shown}"
    );
    assert!(flat.contains("echo one\\x0d\n touch pwned6"), "{shown}");
    // The dry run's diff, escaped.
    assert!(flat.contains("-old line"), "{shown}");
    assert!(flat.contains("+new\\x1b[8m hidden\\u{202e}"), "{shown}");
    for n in 1..=6 {
        assert!(!w.root.join(format!("pwned{n}")).exists());
    }
    assert_eq!(w.read("a.txt"), "old line\n");
}
