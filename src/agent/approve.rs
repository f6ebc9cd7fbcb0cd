//! The permission gate every call passes after its checks: auto-tier calls run; confirm-tier
//! calls run with --yes or after an "always" for the tool, and otherwise are shown to the
//! person on the terminal (/dev/tty, so that stdin and stdout stay free for pipes) — with the
//! diff of a dry run for tools that support `dry_run` — and asked: yes, no, always, quit.
//! Without a terminal they are refused with a result that tells the model why. A command whose
//! effect the policy classed as `reads` is not asked about: it runs with its changes held, and
//! only what it changed anyway goes to the person (never applied silently).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};

use serde_json::Value;

use crate::catalog::ToolName;
use crate::error::ErrorKind;
use crate::hooks::Verdict;
use crate::permissions::Tier;
use crate::shell::policy::Effect;
use crate::tools::ToolSpec;

use super::exec::{envelope, error_envelope, is_ok, Runner};
use super::ui::{Paint, Prompting};

/// The results of calls the person did not approve.
const NOT_APPROVED: ErrorKind = ErrorKind::NotApproved;

enum Decision {
    Run,
    /// Already run (a command approved by its effect): send this envelope back.
    Done(Value),
    /// Send this envelope back instead of running.
    Refuse(Value),
    /// The person wants to stop: send this envelope, then end the session.
    Quit(Value),
}

enum Answer {
    Yes,
    No,
    Always,
    Quit,
    /// Take back the workspace's most recent change first, then ask again.
    Undo,
    /// Show the whole diff (the question showed its first lines), then ask again.
    Whole,
}

struct Tty {
    reader: BufReader<File>,
    writer: File,
}

impl Tty {
    fn open() -> Option<Tty> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let writer = file.try_clone().ok()?;
        Some(Tty {
            reader: BufReader::new(file),
            writer,
        })
    }

    /// `held`: the call already ran with its changes held; the question is whether to keep
    /// them. `cut`: the diff shown was cut short (the person may ask for all of it).
    fn ask(&mut self, tool: &str, held: bool, cut: bool, paint: Paint) -> std::io::Result<Answer> {
        let _prompting = Prompting::start();
        let no = if held {
            "[n]o (drop its changes)"
        } else {
            "[n]o"
        };
        let question = format!("Allow {tool}?");
        let whole = if cut { ", [d]iff in full" } else { "" };
        loop {
            write!(
                self.writer,
                "{} [y]es, {no}, [a]lways for {tool} this session, [q]uit, [u]ndo the last \
                 change{whole}: ",
                paint.bold(&question)
            )?;
            self.writer.flush()?;
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                // End of input on the terminal (Ctrl-D): stop rather than guess.
                writeln!(self.writer)?;
                return Ok(Answer::Quit);
            }
            match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Ok(Answer::Yes),
                "n" | "no" => return Ok(Answer::No),
                "a" | "always" => return Ok(Answer::Always),
                "q" | "quit" => return Ok(Answer::Quit),
                "u" | "undo" | "/undo" => return Ok(Answer::Undo),
                "d" | "diff" if cut => return Ok(Answer::Whole),
                _ if cut => writeln!(self.writer, "Please answer y, n, a, q, u or d.")?,
                _ => writeln!(self.writer, "Please answer y, n, a, q or u.")?,
            }
        }
    }
}

enum TtyState {
    Unopened,
    Open(Tty),
    Missing,
}

pub struct Gate {
    yes: bool,
    always: HashSet<ToolName>,
    tty: TtyState,
    /// Tools of the calls refused because nobody could be asked, in call order.
    unapproved: Vec<String>,
}

impl Gate {
    pub fn new(yes: bool) -> Gate {
        Gate {
            yes,
            always: HashSet::new(),
            tty: TtyState::Unopened,
            unapproved: Vec::new(),
        }
    }

    /// The tools of the calls refused because nobody could approve them (no terminal, no
    /// --yes), each named once, in the order first refused.
    pub fn unapproved(&self) -> &[String] {
        &self.unapproved
    }

    fn tty(&mut self) -> Option<&mut Tty> {
        if let TtyState::Unopened = self.tty {
            self.tty = match Tty::open() {
                Some(tty) => TtyState::Open(tty),
                None => TtyState::Missing,
            };
        }
        match &mut self.tty {
            TtyState::Open(tty) => Some(tty),
            _ => None,
        }
    }

    /// Check a call (known tool, not denied, valid arguments, and what the tool would refuse
    /// anyway, such as a command the policy denies: nobody is asked about a call that cannot
    /// run), gate it and run it: the envelope the model gets back, and whether the person asked
    /// to stop. Both `run` and `pipe` call tools through here.
    ///
    /// The user's PreToolUse hooks run first: what is checked, shown, approved and run is the
    /// call as they left it. Their `allow` runs it without asking, `ask` asks even about an
    /// auto-tier call (and despite --yes or "always"), `deny` refuses it.
    pub fn run(
        &mut self,
        runner: &Runner,
        name: &str,
        args: &Value,
        call_id: &str,
    ) -> (Value, bool) {
        let call_id = &runner.call_id(call_id);
        let before = match runner.before(name, args, call_id) {
            Ok(before) => before,
            Err(e) => return (envelope(name, &Err(e)), false),
        };
        // Without hooks the call is taken as given (not copied).
        let (args, verdict, context) = match &before {
            Some(b) => (&b.args, &b.verdict, b.context.clone()),
            None => (args, &Verdict::Undecided, Vec::new()),
        };
        let (spec, effect) = match runner.check_effect(name, args) {
            Ok(checked) => checked,
            Err(e) => return (envelope(name, &Err(e)), false),
        };
        let decision = match verdict {
            Verdict::Allow => Decision::Run,
            Verdict::Ask(reason) => self.decide(runner, spec, effect, args, Some(reason)),
            Verdict::Undecided => self.decide(runner, spec, effect, args, None),
        };
        let (mut envelope, quit) = match decision {
            Decision::Run => (runner.execute(spec, args), false),
            Decision::Done(envelope) => (envelope, false),
            Decision::Refuse(envelope) => (envelope, false),
            Decision::Quit(envelope) => (envelope, true),
        };
        runner.after(spec, args, &mut envelope, context, call_id);
        (envelope, quit)
    }

    /// Decide about a checked call (known tool, not denied, valid arguments), with the effect
    /// run_command's policy classed a command with.
    // Long: one decision over the tool's tier, a hook's ask, the command's effect and whether a
    // terminal is there, each changing what the person is shown; the answer loop at its end
    // reads the answer to exactly that text.
    fn decide(
        &mut self,
        runner: &Runner,
        spec: &ToolSpec,
        effect: Option<Effect>,
        args: &Value,
        hook_asks: Option<&str>,
    ) -> Decision {
        let tool = spec.name;
        let name = spec.name();
        let usual = runner.tier(tool) != Tier::Confirm || self.yes || self.always.contains(&tool);
        if usual && hook_asks.is_none() {
            return Decision::Run;
        }
        let holdable = tool == ToolName::RunCommand
            && spec.supports_dry_run()
            && args.get("background").and_then(Value::as_bool) != Some(true);
        // A command that only reads is not asked about: it runs with its changes held, and
        // what it changed anyway is applied only when the person keeps it (asked below, shown
        // what changed). One that changed nothing is done.
        let mut ran_reading = None;
        if holdable && effect == Some(Effect::Reads) {
            let mut dry = args.clone();
            dry["dry_run"] = Value::Bool(true);
            let envelope = runner.execute_holding(spec, &dry);
            match envelope.pointer("/result/held").and_then(Value::as_str) {
                Some(id) if is_ok(&envelope) && changed_nothing(&envelope) => {
                    return Decision::Done(runner.keep_held(id, envelope.clone()));
                }
                Some(id) if is_ok(&envelope) => {
                    ran_reading = Some((id.to_string(), envelope.clone()));
                }
                // Could not be held (no overlay): asked about before it runs, as any command.
                _ => {}
            }
        }
        if self.tty().is_none() {
            if let Some((id, _)) = &ran_reading {
                runner.drop_held(id);
                if !self.unapproved.iter().any(|t| t == name) {
                    self.unapproved.push(name.to_string());
                }
                return Decision::Refuse(error_envelope(
                    name,
                    NOT_APPROVED,
                    "the command only reads, by its programs, but it changed files, and those \
                     need the person's approval; sneaky-agent has no terminal to ask on, so they \
                     were dropped: the workspace is as it was. Do not retry it; go on without it \
                     or call finish and say what you would have done.",
                ));
            }
            if !self.unapproved.iter().any(|t| t == name) {
                self.unapproved.push(name.to_string());
            }
            return Decision::Refuse(error_envelope(
                name,
                NOT_APPROVED,
                format!(
                    "{name} needs the person's approval, but sneaky-agent has no terminal to ask \
                     on, so the call was not run (the person can allow it with --yes or by \
                     moving {name} to permissions.allow). Do not retry it; go on without it or \
                     call finish and say what you would have done."
                ),
            ));
        }
        // A command is approved by its effect: it runs with its changes held, the person sees
        // them, and keeping applies them (the command does not run again); dropping discards
        // them. Only without network: held file changes are then all it can do. Where they
        // cannot be held (no overlay), or with a network, it is asked about before it runs.
        let mut held = None;
        let by_effect =
            holdable && runner.config().tools.shell.network == crate::config::Network::Off;
        let preview = if let Some((id, envelope)) = ran_reading {
            let shown = self::effect(&envelope);
            held = Some((id, envelope));
            Some(shown)
        } else if by_effect {
            let mut dry = args.clone();
            dry["dry_run"] = Value::Bool(true);
            let envelope = runner.execute_holding(spec, &dry);
            match envelope.pointer("/result/held").and_then(Value::as_str) {
                Some(id) if is_ok(&envelope) => {
                    held = Some((id.to_string(), envelope.clone()));
                    Some(self::effect(&envelope))
                }
                _ => None,
            }
        } else if spec.supports_dry_run() {
            let mut dry = args.clone();
            dry["dry_run"] = Value::Bool(true);
            let envelope = runner.execute(spec, &dry);
            if !is_ok(&envelope) {
                // The real call would fail the same way: no need to bother the person.
                return Decision::Refuse(envelope);
            }
            envelope
                .pointer("/result/diff")
                .and_then(Value::as_str)
                .map(str::to_string)
        } else {
            None
        };
        let paint = Paint::tty();
        let Some(tty) = self.tty() else {
            return Decision::Refuse(error_envelope(name, NOT_APPROVED, "no terminal"));
        };
        // The command itself is shown whole, as for any call; its effect below it.
        let shown = match (&held, preview.as_deref()) {
            (Some(_), Some(effect)) => {
                describe(spec, args, None, paint) + &shown_effect(effect, paint)
            }
            _ => describe(spec, args, preview.as_deref(), paint),
        };
        let shown = match hook_asks {
            Some(reason) => format!(
                "{shown}{}\n",
                paint.bold(&format!(
                    "A hook asks for your approval: {}",
                    crate::text::visible(reason).0
                ))
            ),
            None => shown,
        };
        let cut = held.is_none() && preview.as_deref().is_some_and(diff_cut);
        let mut answer = write!(tty.writer, "{shown}")
            .and_then(|()| tty.writer.flush())
            .and_then(|()| tty.ask(name, held.is_some(), cut, paint));
        loop {
            let report = match answer {
                Ok(Answer::Undo) => undo_last(runner, paint),
                Ok(Answer::Whole) => whole_diff(preview.as_deref().unwrap_or_default(), paint),
                _ => break,
            };
            answer = write!(tty.writer, "{report}")
                .and_then(|()| tty.writer.flush())
                .and_then(|()| tty.ask(name, held.is_some(), cut, paint));
        }
        let keep = |held: Option<(String, Value)>| match held {
            Some((id, dry)) => Decision::Done(runner.keep_held(&id, dry)),
            None => Decision::Run,
        };
        let drop_held = |held: &Option<(String, Value)>| {
            if let Some((id, _)) = held {
                runner.drop_held(id);
            }
        };
        match answer {
            Ok(Answer::Yes) => keep(held),
            Ok(Answer::Always) => {
                self.always.insert(tool);
                keep(held)
            }
            Ok(Answer::No) => {
                drop_held(&held);
                let what = if held.is_some() {
                    "the command ran with its changes held, and the person dropped them: the \
                     workspace is as it was"
                } else {
                    "nothing was changed"
                };
                Decision::Refuse(error_envelope(
                    name,
                    NOT_APPROVED,
                    format!(
                        "the person declined this {name} call; {what}. Do not retry it \
                         unchanged: ask yourself what they would accept, or call finish and \
                         explain."
                    ),
                ))
            }
            Ok(Answer::Quit) => {
                drop_held(&held);
                Decision::Quit(error_envelope(
                    name,
                    NOT_APPROVED,
                    "the person declined this call and ended the session",
                ))
            }
            Ok(Answer::Undo | Answer::Whole) | Err(_) => {
                drop_held(&held);
                let why = match answer {
                    Err(e) => e.to_string(),
                    _ => "no answer".into(),
                };
                Decision::Refuse(error_envelope(
                    name,
                    NOT_APPROVED,
                    format!(
                        "could not ask the person on the terminal ({why}); the call was not run"
                    ),
                ))
            }
        }
    }
}

/// Whether a command run with its changes held changed nothing that would be applied (changes
/// no tool may make, under `.git` or to `sneaky.toml`, are never applied: `discarded`).
fn changed_nothing(envelope: &Value) -> bool {
    let r = &envelope["result"];
    let empty = |key: &str| r[key].as_array().map_or(true, |a| a.is_empty());
    empty("changes") && empty("untracked")
}

/// What a command did with its changes held: how it ended, what it would change, the diff.
fn effect(envelope: &Value) -> String {
    let r = &envelope["result"];
    let mut out = match r["exit_code"].as_i64() {
        Some(code) => format!("It ran (exit code {code}) with its changes held"),
        None => "It ran and was killed; its changes are held".to_string(),
    };
    let list = |key: &str| -> Vec<String> {
        r[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| {
                        format!(
                            "{} ({})",
                            c["path"].as_str().unwrap_or(""),
                            c["kind"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let changes = list("changes");
    if changes.is_empty() {
        out.push_str(": it changed no file.\n");
    } else {
        out.push_str(&format!(": {}.\n", changes.join(", ")));
    }
    let untracked = list("untracked");
    if !untracked.is_empty() {
        out.push_str(&format!(
            "Untracked (git ignores them): {}.\n",
            untracked.join(", ")
        ));
    }
    out.push_str(r["diff"].as_str().unwrap_or(""));
    out
}

/// A command's effect as the person sees it: every line through `text::visible` (what the
/// command wrote into a file is shown escaped, as a diff is), the diff coloured.
fn shown_effect(effect: &str, paint: Paint) -> String {
    let lines: Vec<String> = effect.lines().map(|l| crate::text::visible(l).0).collect();
    format!("{}\n", paint.diff(&lines.join("\n")))
}

/// The person's undo at the prompt: the workspace's most recent change taken back, in words.
fn undo_last(runner: &Runner, paint: Paint) -> String {
    let name = crate::tools::spec(ToolName::Undo).name();
    let envelope = match runner.check(name, &serde_json::json!({})) {
        Ok(spec) => runner.execute(spec, &serde_json::json!({})),
        Err(e) => envelope(name, &Err(e)),
    };
    if !is_ok(&envelope) {
        return paint.red(&format!("undo: {}\n", super::exec::error_line(&envelope)));
    }
    let r = &envelope["result"];
    let paths: Vec<&str> = r["paths"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    format!(
        "{}\n{}",
        paint.green(&format!(
            "undid {} ({})",
            r["undone"].as_str().unwrap_or(""),
            paths.join(", ")
        )),
        paint.diff(r["diff"].as_str().unwrap_or(""))
    )
}

/// Lines of a diff the question shows; the person may ask for the rest ([d]iff in full).
const DIFF_SHOWN: usize = 200;

/// Whether the question shows only the first [`DIFF_SHOWN`] lines of `diff`.
fn diff_cut(diff: &str) -> bool {
    diff_lines(diff).count() > DIFF_SHOWN
}

fn diff_lines(diff: &str) -> std::str::Split<'_, char> {
    diff.strip_suffix('\n').unwrap_or(diff).split('\n')
}

/// The whole diff, each line through `text::visible` as in the question.
fn whole_diff(diff: &str, paint: Paint) -> String {
    let lines: Vec<String> = diff_lines(diff)
        .map(|l| crate::text::visible(l).0)
        .collect();
    format!("{}\n", paint.diff(&lines.join("\n")))
}

/// The call as the person sees it: the tool, its arguments (whole: a command of any length or
/// number of lines is shown entirely), and the diff when there is one (then the long texts
/// the diff already shows are summarised). Every text passes through
/// `text::visible`: a control, escape, bidirectional or zero-width character is shown as an
/// escape, never handed to the terminal, so that what is approved is what runs; when there is
/// any, a line says so first.
fn describe(spec: &ToolSpec, args: &Value, diff: Option<&str>, paint: Paint) -> String {
    let mut hidden = 0;
    let mut seen = |text: &str| {
        let (shown, n) = crate::text::visible(text);
        hidden += n;
        shown
    };
    let mut body = String::new();
    if let Value::Object(map) = args {
        for (key, value) in map {
            let shown = match value {
                Value::String(s) if diff.is_some() && s.contains('\n') => {
                    seen(s);
                    paint.dim(&format!(
                        "({} lines, {} bytes; see the diff)",
                        s.lines().count(),
                        s.len()
                    ))
                }
                Value::String(s) if s.contains('\n') => {
                    let mut text = String::new();
                    // split, not lines: a carriage return before a newline is part of the
                    // text and must show.
                    for line in s.split('\n') {
                        text.push_str("\n    ");
                        text.push_str(&seen(line));
                    }
                    text
                }
                Value::String(s) => seen(s),
                other => seen(&other.to_string()),
            };
            body.push_str(&format!("  {}: {shown}\n", paint.cyan(&seen(key))));
        }
    }
    if let Some(diff) = diff {
        let lines: Vec<String> = diff_lines(diff).map(&mut seen).collect();
        let head = lines
            .iter()
            .take(DIFF_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        body.push_str(&paint.diff(&head));
        body.push('\n');
        if lines.len() > DIFF_SHOWN {
            body.push_str(&paint.dim(&format!(
                "… {} more diff lines ([d] shows them all)\n",
                lines.len() - DIFF_SHOWN
            )));
        }
    }
    let mut out = format!(
        "\n{} {}\n",
        paint.yellow("●"),
        paint.bold(&format!("{} wants to run", spec.name()))
    );
    if hidden > 0 {
        out.push_str(&paint.red(&format!(
            "  ! {hidden} control or invisible character(s), shown below as \\x.. or \\u{{..}}: \
             they are part of the call\n"
        )));
    }
    out.push_str(&body);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::describe;
    use crate::agent::ui::Paint;
    use crate::tools::{spec, ToolName};

    #[test]
    fn hidden_characters_are_shown_never_sent_to_the_terminal() {
        let paint = Paint::plain();
        let args = json!({"command": "git status\u{1b}[2K\r\u{1b}[1Atouch pwned"});
        let shown = describe(spec(ToolName::RunCommand), &args, None, paint);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\r'),
            "{shown:?}"
        );
        assert!(
            shown.contains("git status\\x1b[2K\\x0d\\x1b[1Atouch pwned"),
            "{shown}"
        );
        assert!(shown.contains("3 control or invisible"), "{shown}");
        let diff = "--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-x\n+if ok {\u{202e} } \u{2066}// admin\u{2069}\n";
        let args = json!({"file_path": "a.rs", "content": "if ok\nx\n"});
        let shown = describe(spec(ToolName::WriteFile), &args, Some(diff), paint);
        assert!(
            shown.contains("+if ok {\\u{202e} } \\u{2066}// admin\\u{2069}"),
            "{shown}"
        );
        assert!(!shown.contains('\u{202e}'), "{shown:?}");
        let plain = describe(
            spec(ToolName::ReadFile),
            &json!({"file_path": "a"}),
            None,
            paint,
        );
        assert!(!plain.contains("invisible"), "{plain}");
    }
}
