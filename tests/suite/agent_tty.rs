//! The approval prompt through a real pseudo-terminal: `script` (util-linux) runs the driver
//! with a new pty as its controlling terminal, so the prompt reads /dev/tty exactly as it does
//! for a person; our answers are typed into the pty before the prompt asks.
//!
//! The confirm-tier tool is write_file when this build has it (then the prompt also shows the
//! dry run's diff, and "no" must leave the file as it was); otherwise read_file, moved to the
//! confirm tier by the configuration.

use serde_json::json;

use crate::agent::{bin_path, code, finish_call, openai_reply, openai_results, ran, scrub, serve};
use crate::util;

struct Case {
    tool: &'static str,
    has_write: bool,
}

fn case(w: &util::Ws) -> Case {
    w.write("a.txt", "old line\n");
    if sneaky::tools::find("write_file").is_some() {
        Case {
            tool: "write_file",
            has_write: true,
        }
    } else {
        w.write("sneaky.toml", "[permissions]\nconfirm = [\"read_file\"]\n");
        Case {
            tool: "read_file",
            has_write: false,
        }
    }
}

impl Case {
    fn args(&self, content: &str) -> String {
        if self.has_write {
            json!({"file_path": "a.txt", "content": content}).to_string()
        } else {
            json!({"file_path": "a.txt"}).to_string()
        }
    }
}

fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Run `sneaky-agent run` under a pty with `typed` as the person's keystrokes; returns the
/// exit status and everything the terminal showed.
fn run_in_pty(w: &util::Ws, base: &str, typed: &str) -> (i32, String) {
    run_in_pty_with(w, base, typed, false)
}

fn run_in_pty_with(w: &util::Ws, base: &str, typed: &str, colour: bool) -> (i32, String) {
    let (status, raw) = run_in_pty_raw(w, base, typed, colour);
    (status, raw.replace("\r\n", "\n"))
}

/// Like `run_in_pty_with`, with the bytes as the terminal received them (for an emulator).
pub(crate) fn run_in_pty_raw(w: &util::Ws, base: &str, typed: &str, colour: bool) -> (i32, String) {
    let agent = bin_path("sneaky-agent");
    let line = [
        agent.to_str().unwrap(),
        "run",
        "--model",
        "test-model",
        "--base-url",
        &format!("{base}/v1"),
        "edit a.txt",
    ]
    .iter()
    .map(|a| quote(a))
    .collect::<Vec<_>>()
    .join(" ");
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"]);
    scrub(&mut cmd, w);
    if colour {
        cmd.env_remove("NO_COLOR");
    }
    let r = ran(crate::agent::run(cmd, typed.as_bytes()));
    (r.status, r.stdout)
}

fn prompts(screen: &str, tool: &str) -> usize {
    screen.matches(&format!("Allow {tool}?")).count()
}

#[test]
fn no_leaves_the_file_untouched_and_the_model_is_told() {
    let w = util::ws();
    let c = case(&w);
    let finish = finish_call("f", "left it alone");
    let server = serve(vec![
        openai_reply(None, &[("w1", c.tool, &c.args("new line\n"))]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let (status, screen) = run_in_pty(&w, &server.base, "n\n");
    assert_eq!(status, 0, "{screen}");
    assert_eq!(prompts(&screen, c.tool), 1, "{screen}");
    assert!(
        screen.contains(&format!("{} wants to run", c.tool)),
        "{screen}"
    );
    assert!(screen.contains("file_path: a.txt"), "{screen}");
    if c.has_write {
        // The dry run's diff is shown before the question.
        assert!(screen.contains("-old line"), "{screen}");
        assert!(screen.contains("+new line"), "{screen}");
    }
    assert!(screen.contains("left it alone"), "{screen}");
    assert_eq!(w.read("a.txt"), "old line\n");
    let results = openai_results(&server.requests()[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "w1");
    assert_eq!(code(&results[0].1), "not_approved", "{}", results[0].1);
    assert!(results[0].1.contains("declined"));
}

#[test]
fn yes_runs_once_and_always_stops_asking_for_that_tool() {
    let w = util::ws();
    let c = case(&w);
    let finish = finish_call("f", "written");
    let server = serve(vec![
        openai_reply(
            None,
            &[
                ("w1", c.tool, &c.args("one\n")),
                ("w2", c.tool, &c.args("two\n")),
            ],
        ),
        openai_reply(None, &[("w3", c.tool, &c.args("three\n"))]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    // "y" for the first call, "always" for the second; the third is not asked.
    let (status, screen) = run_in_pty(&w, &server.base, "y\nalways\n");
    assert_eq!(status, 0, "{screen}");
    assert_eq!(prompts(&screen, c.tool), 2, "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let mut results = openai_results(&requests[2]);
    assert_eq!(results.len(), 3);
    for (id, text) in &results {
        let done = if c.has_write {
            "wrote a.txt"
        } else {
            "a.txt (lines"
        };
        assert!(text.starts_with(done), "{id}: {text}");
    }
    let ids: Vec<String> = results.drain(..).map(|(id, _)| id).collect();
    assert_eq!(ids, ["w1", "w2", "w3"]);
    if c.has_write {
        assert_eq!(w.read("a.txt"), "three\n");
    }
}

#[test]
fn quit_stops_the_session_before_the_call_runs() {
    let w = util::ws();
    let c = case(&w);
    let server = serve(vec![openai_reply(
        None,
        &[("w1", c.tool, &c.args("new line\n"))],
    )]);
    let (status, screen) = run_in_pty(&w, &server.base, "what\nq\n");
    assert_eq!(status, 130, "{screen}");
    assert!(screen.contains("Please answer"), "{screen}");
    assert!(screen.contains("quit"), "{screen}");
    assert_eq!(w.read("a.txt"), "old line\n");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn colours_unless_no_color() {
    let w = util::ws();
    let c = case(&w);
    let finish = finish_call("f", "ok");
    let script = || {
        serve(vec![
            openai_reply(None, &[("w1", c.tool, &c.args("new line\n"))]),
            openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
        ])
    };
    let server = script();
    let (status, coloured) = run_in_pty_with(&w, &server.base, "n\n", true);
    assert_eq!(status, 0, "{coloured}");
    assert!(coloured.contains("\x1b[1mAllow"), "{coloured:?}");
    if c.has_write {
        assert!(coloured.contains("\x1b[32m+new line"), "{coloured:?}");
    }
    let server = script();
    let (status, plain) = run_in_pty_with(&w, &server.base, "n\n", false);
    assert_eq!(status, 0, "{plain}");
    assert!(plain.contains("Allow"));
    assert!(
        !plain.contains("\x1b[1m") && !plain.contains("\x1b[3"),
        "{plain:?}"
    );
}

/// A command is approved by its effect: it runs once with its changes held, the person sees
/// them, "no" drops them (the workspace stays as it was), "yes" applies them without running
/// the command again, as one change that undo takes back.
#[test]
fn a_command_is_approved_by_its_effect_kept_or_dropped() {
    let w = util::ws();
    w.write("a.txt", "old line\n");
    let command = json!({"command": "echo more >> a.txt"}).to_string();
    let finish = finish_call("f", "done");
    let server = serve(vec![
        openai_reply(None, &[("r1", "run_command", &command)]),
        openai_reply(None, &[("r2", "run_command", &command)]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let (status, screen) = run_in_pty(&w, &server.base, "n\ny\n");
    assert_eq!(status, 0, "{screen}");
    assert_eq!(prompts(&screen, "run_command"), 2, "{screen}");
    assert!(
        screen.contains("It ran (exit code 0) with its changes held"),
        "{screen}"
    );
    assert!(screen.contains("a.txt (modified)"), "{screen}");
    assert!(screen.contains("+more"), "{screen}");
    // Once, not twice: the kept changes were applied, the command was not run again.
    assert_eq!(w.read("a.txt"), "old line\nmore\n");
    let requests = server.requests();
    let results = openai_results(&requests[2]);
    let result = |id: &str| {
        results
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"))
    };
    let dropped = result("r1");
    assert_eq!(code(&dropped), "not_approved", "{dropped}");
    assert!(dropped.contains("dropped"), "{dropped}");
    let kept = result("r2");
    assert!(kept.starts_with("exit code 0"), "{kept}");
    assert!(kept.contains("changed: a.txt (modified)"), "{kept}");
    assert!(kept.contains("change_id"), "{kept}");
    // Nothing held is left behind.
    let scratch = std::fs::read_dir(w.outside().join("state/sneaky/undo"))
        .expect("history")
        .flatten()
        .map(|d| d.path().join("scratch"))
        .next()
        .expect("a workspace history");
    let left: Vec<_> = std::fs::read_dir(scratch)
        .expect("scratch")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// "u" at the prompt takes back the workspace's most recent change, shows it, and asks again.
#[test]
fn undo_at_the_prompt_takes_back_the_last_change() {
    let w = util::ws();
    let c = case(&w);
    if !c.has_write {
        return;
    }
    let finish = finish_call("f", "done");
    let server = serve(vec![
        openai_reply(None, &[("w1", c.tool, &c.args("one\n"))]),
        openai_reply(None, &[("w2", c.tool, &c.args("two\n"))]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let (status, screen) = run_in_pty(&w, &server.base, "y\nu\nn\n");
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("undid "), "{screen}");
    assert!(screen.contains("+old line"), "{screen}");
    assert_eq!(prompts(&screen, c.tool), 3, "{screen}");
    assert_eq!(w.read("a.txt"), "old line\n");
}

/// A diff longer than the question shows: "d" shows all of it, then the question comes again.
#[test]
fn a_long_diff_is_shown_in_full_on_asking() {
    let w = util::ws();
    let c = case(&w);
    if !c.has_write {
        return;
    }
    let content: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    let finish = finish_call("f", "done");
    let server = serve(vec![
        openai_reply(None, &[("w1", c.tool, &c.args(&content))]),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    let (status, screen) = run_in_pty(&w, &server.base, "d\ny\n");
    assert_eq!(status, 0, "{screen}");
    let (question, rest) = screen.split_once("[d]iff in full").expect("offered");
    assert!(
        question.contains("more diff lines ([d] shows them all)"),
        "{screen}"
    );
    assert!(!question.contains("+line 300"), "{screen}");
    assert!(rest.contains("+line 300"), "{screen}");
    assert_eq!(prompts(&screen, c.tool), 2, "{screen}");
    assert_eq!(w.read("a.txt"), content);
}

/// The person is asked only about commands that write: one that only reads runs at once; one
/// that reads by its programs but changed files anyway (a repository's `diff.external`) is
/// shown what it changed and asked, and its changes are applied only on "yes".
#[test]
fn only_writes_are_asked_about_and_a_reading_commands_changes_are_held() {
    let w = util::ws();
    crate::agent::repository_whose_diff_writes(&w);
    let finish = finish_call("f", "done");
    let server = serve(vec![
        openai_reply(None, &[("r1", "run_command", r#"{"command":"cat a.txt"}"#)]),
        openai_reply(None, &[("r2", "run_command", r#"{"command":"git diff"}"#)]),
        openai_reply(None, &[("r3", "run_command", r#"{"command":"git diff"}"#)]),
        openai_reply(
            None,
            &[("r4", "run_command", r#"{"command":"echo x > b.txt"}"#)],
        ),
        openai_reply(None, &[(&finish.0, &finish.1, &finish.2)]),
    ]);
    // Answers, in order: drop the first git diff's changes, keep the second's, decline the
    // write. `cat` is never asked about.
    let (status, screen) = run_in_pty(&w, &server.base, "n\ny\nn\n");
    assert_eq!(status, 0, "{screen}");
    assert_eq!(prompts(&screen, "run_command"), 3, "{screen}");
    assert!(!screen.contains("command: cat a.txt"), "{screen}");
    assert!(screen.contains("pwned (created)"), "{screen}");
    let results = openai_results(&server.requests()[4]);
    let result = |id: &str| {
        results
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"))
    };
    let read = result("r1");
    assert!(
        read.starts_with("exit code 0") && read.contains("one\ntwo"),
        "{read}"
    );
    assert_eq!(code(&result("r2")), "not_approved");
    let kept = result("r3");
    assert!(kept.contains("changed: pwned (created)"), "{kept}");
    assert!(kept.contains("effect: reads"), "{kept}");
    assert!(w.root.join("pwned").exists());
    assert_eq!(code(&result("r4")), "not_approved");
    assert!(!w.root.join("b.txt").exists());
}
