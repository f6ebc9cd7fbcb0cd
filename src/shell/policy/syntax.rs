//! Walking the bash syntax tree: lists, pipelines, subshells, simple commands and `[ … ]`;
//! any node kind not named here is refused (fail closed).

use tree_sitter::Node;

use super::words::{valid_name, Word};
use super::{children, deny, short, Checker};
use crate::error::Result;

impl Checker<'_> {
    pub(super) fn statement(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        match node.kind() {
            "program" | "list" | "pipeline" | "subshell" | "negated_command" => {
                for child in children(node) {
                    if child.is_named() {
                        self.statement(child, src, depth)?;
                    } else if !matches!(
                        child.kind(),
                        ";" | "&" | "&&" | "||" | "|" | "|&" | "\n" | "(" | ")" | "!"
                    ) {
                        return Err(deny(format!(
                            "`{}`: shell syntax `{}` is not allowed",
                            short(self.text(node, src)),
                            child.kind()
                        )));
                    }
                }
                Ok(())
            }
            // bash starts a comment only where a word starts; the grammar also after `]`
            // (`[ -f x ]#; rm …` is `[ -f x ]#` and then `rm …` for bash; found by fuzzing).
            "comment" => {
                let word_start = |b: &u8| b" \t\n;&|()".contains(b);
                let before = node.start_byte().checked_sub(1).and_then(|i| src.get(i));
                if before.map_or(true, word_start) {
                    Ok(())
                } else {
                    Err(deny(format!(
                        "`{}`: this `#` is part of a word for bash, not a comment",
                        short(self.text(node, src))
                    )))
                }
            }
            "command" => self.command(node, src, depth),
            "test_command" if node.child(0).is_some_and(|c| c.kind() == "[") => {
                let part = short(self.text(node, src));
                let mut args = Vec::new();
                self.bracket_test(node, src, &part, &mut args)?;
                self.simple("[", &args, &part, depth)
            }
            "redirected_statement" => {
                for child in children(node) {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, src, depth)?
                        }
                        _ if child.is_named() => self.statement(child, src, depth)?,
                        other => {
                            return Err(deny(format!(
                                "`{}`: shell syntax `{other}` is not allowed",
                                short(self.text(node, src))
                            )))
                        }
                    }
                }
                Ok(())
            }
            kind => Err(deny(format!(
                "`{}`: {} is not allowed (the policy accepts only simple commands, pipelines and lists)",
                short(self.text(node, src)),
                describe_kind(kind)
            ))),
        }
    }

    pub(super) fn command(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let part = short(self.text(node, src));
        let mut name: Option<String> = None;
        let mut args: Vec<Word> = Vec::new();
        for child in children(node) {
            match child.kind() {
                "variable_assignment" | "variable_assignments" => {
                    return Err(deny(format!(
                        "`{part}`: variable assignments (`{}`) are not allowed",
                        short(self.text(child, src))
                    )))
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child, src, depth)?
                }
                "command_name" => name = Some(self.command_name(child, src, &part)?),
                _ if child.is_named() => args.push(self.word(child, src, &part)?),
                other => {
                    return Err(deny(format!(
                        "`{part}`: shell syntax `{other}` is not allowed"
                    )))
                }
            }
        }
        let Some(name) = name else {
            // Only redirections (`> file`): those were checked above.
            return Ok(());
        };
        self.simple(&name, &args, &part, depth)
    }

    /// `[ … ]` is the `test` builtin with words, but the grammar reads it as an expression
    /// (as in `[[ … ]]`): collect its words in order, and refuse the tokens that bash would
    /// read as redirections or list operators there (`[ a > b ]` writes a file `b`).
    pub(super) fn bracket_test(
        &self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        args: &mut Vec<Word>,
    ) -> Result<()> {
        for child in children(node) {
            match child.kind() {
                "unary_expression" | "binary_expression" => {
                    self.bracket_test(child, src, part, args)?
                }
                "[" | "]" => {}
                "test_operator" | "!" | "=" | "==" | "!=" => args.push(Word {
                    value: self.text(child, src).to_string(),
                    expands: false,
                    quoted: false,
                }),
                other if !child.is_named() => {
                    return Err(deny(format!(
                        "`{part}`: `{other}` inside [ … ] is a redirection or shell operator for bash; quote it"
                    )))
                }
                _ => args.push(self.word(child, src, part)?),
            }
        }
        Ok(())
    }

    pub(super) fn command_name(&self, node: Node<'_>, src: &[u8], part: &str) -> Result<String> {
        let kids: Vec<Node<'_>> = children(node);
        let text = self.text(node, src);
        let plain = kids.len() == 1 && kids[0].kind() == "word";
        let word = if plain {
            Some(self.word(kids[0], src, part)?)
        } else {
            None
        };
        match word {
            Some(w) if !w.quoted && !w.expands && valid_name(&w.value) => Ok(w.value),
            _ => Err(deny(format!(
                "`{part}`: the command name `{}` must be a plain word (no quotes, escapes, expansions or globs)",
                short(text)
            ))),
        }
    }
}

pub(super) fn describe_kind(kind: &str) -> String {
    match kind {
        "command_substitution" => "command substitution".into(),
        "process_substitution" => "process substitution".into(),
        "simple_expansion" | "expansion" => "variable expansion".into(),
        "arithmetic_expansion" => "arithmetic expansion".into(),
        "brace_expression" => "brace expansion".into(),
        "ansi_c_string" => "ANSI-C quoting ($'…')".into(),
        "translated_string" => "a translated string ($\"…\")".into(),
        "function_definition" => "a function definition".into(),
        "variable_assignment" | "variable_assignments" => "a variable assignment".into(),
        "if_statement"
        | "while_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "case_statement" => "a control structure".into(),
        "compound_statement" => "a `{ …; }` group".into(),
        "test_command" => "a `[[ … ]]` test".into(),
        "declaration_command" => "a declaration (declare/export/local …)".into(),
        "unset_command" => "unset".into(),
        other => format!("`{other}`"),
    }
}

/// The depth of a syntax tree, walked with a cursor (no recursion).
pub(super) fn tree_depth(root: Node<'_>) -> usize {
    let mut cursor = root.walk();
    let (mut depth, mut max) = (0usize, 0usize);
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            max = max.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return max;
            }
            depth -= 1;
        }
    }
}

pub(super) fn first_error<'s>(node: Node<'_>, src: &'s [u8]) -> Option<&'s str> {
    if node.is_error() || node.is_missing() {
        return node.utf8_text(src).ok().map(|t| t.get(..40).unwrap_or(t));
    }
    children(node).into_iter().find_map(|c| first_error(c, src))
}
