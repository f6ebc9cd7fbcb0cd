//! Walking the bash syntax tree: lists, pipelines, subshells and groups, control structures,
//! functions, assignments and declarations, `[[ … ]]`, `(( … ))`, simple commands and
//! `[ … ]`; any node kind not named here is refused (fail closed). When strict, only lists,
//! pipelines, subshells, `!`, simple commands and `[ … ]`.

use tree_sitter::Node;

use super::kinds::describe_kind;
use super::lists::harmless_variable;
use super::words::Word;
use super::{children, deny, short, Checker};
use crate::error::Result;

/// A function defined in the script being checked: a call of its name from where it is in
/// force is the function, not a program.
pub(super) struct Function {
    name: String,
    /// Where the definition starts (a call before it runs the program of that name).
    start: usize,
    /// The byte range of the shell it is defined in (the script, a subshell, a substitution
    /// or a pipeline's element): it is not defined outside.
    scope: (usize, usize),
}

/// Tokens that only separate or bracket statements.
const SEPARATORS: &[&str] = &[
    ";", "&", "&&", "||", "|", "|&", "\n", "(", ")", "!", "{", "}", "if", "then", "elif", "else",
    "fi", "while", "until", "do", "done", ";;", ";&", ";;&",
];

impl Checker<'_> {
    // Long: one arm per statement kind of bash's grammar that the policy walks, each a few
    // lines; the match is the list of what the policy understands.
    pub(super) fn statement(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let kind = node.kind();
        if self.strict && !STRICT_KINDS.contains(&kind) && !is_bracket_test(node) {
            return Err(self.strict_refusal(&short(self.text(node, src)), &describe_kind(kind)));
        }
        match kind {
            "program" | "list" | "pipeline" | "subshell" | "negated_command" | "do_group"
            | "if_statement" | "elif_clause" | "else_clause" | "while_statement" => {
                self.statements(node, src, depth)
            }
            "compound_statement" if node.child(0).is_some_and(|c| c.kind() == "((") => {
                let part = short(self.text(node, src));
                self.nested(node, src, &part, depth)
            }
            "compound_statement" => self.statements(node, src, depth),
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
            "test_command" if is_bracket_test(node) => {
                let part = short(self.text(node, src));
                let mut args = Vec::new();
                self.bracket_test(node, src, &part, &mut args, depth)?;
                self.simple("[", &args, &part, depth)
            }
            "test_command" => {
                let part = short(self.text(node, src));
                self.test_expression(node, src, &part, depth)
            }
            "redirected_statement" => self.redirected(node, src, depth),
            "for_statement" => {
                let part = short(self.text(node, src));
                for child in children(node) {
                    match child.kind() {
                        "variable_name" => {}
                        "do_group" => self.statement(child, src, depth)?,
                        _ if child.is_named() => {
                            self.word(child, src, &part, depth)?;
                        }
                        "for" | "select" | "in" | ";" | "\n" => {}
                        other => return Err(syntax_refusal(&part, other)),
                    }
                }
                Ok(())
            }
            "c_style_for_statement" => {
                let part = short(self.text(node, src));
                for child in children(node) {
                    match child.kind() {
                        "do_group" | "compound_statement" => self.statement(child, src, depth)?,
                        "variable_assignment" => self.assignment(child, src, &part, depth)?,
                        _ if child.is_named() => self.nested(child, src, &part, depth)?,
                        _ => {}
                    }
                }
                Ok(())
            }
            "case_statement" => {
                let part = short(self.text(node, src));
                for child in children(node) {
                    match child.kind() {
                        "case_item" => self.case_item(child, src, &part, depth)?,
                        _ if child.is_named() => {
                            self.word(child, src, &part, depth)?;
                        }
                        "case" | "in" | "esac" | ";" | "\n" => {}
                        other => return Err(syntax_refusal(&part, other)),
                    }
                }
                Ok(())
            }
            "function_definition" => self.function(node, src, depth),
            "variable_assignment" | "variable_assignments" => {
                let part = short(self.text(node, src));
                self.assignments(node, src, &part, depth)
            }
            "declaration_command" | "unset_command" => {
                let part = short(self.text(node, src));
                for child in children(node) {
                    match child.kind() {
                        "variable_assignment" => self.assignment(child, src, &part, depth)?,
                        "variable_name" => {}
                        _ if child.is_named() => {
                            self.word(child, src, &part, depth)?;
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            kind => Err(deny(format!(
                "`{}`: {} is not understood by the policy",
                short(self.text(node, src)),
                describe_kind(kind)
            ))),
        }
    }

    /// The statements of a list-like node, with only separators between them.
    fn statements(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        for child in children(node) {
            if child.is_named() {
                self.statement(child, src, depth)?;
            } else if !SEPARATORS.contains(&child.kind()) {
                return Err(syntax_refusal(&short(self.text(node, src)), child.kind()));
            }
        }
        Ok(())
    }

    /// A statement with redirections (`cmd > f`, `bash <<'EOF' … EOF`): the text a heredoc or
    /// here-string gives a simple command is its standard input, which a shell runs.
    fn redirected(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let kids = children(node);
        let stdin = kids
            .iter()
            .rfind(|c| matches!(c.kind(), "heredoc_redirect" | "herestring_redirect"))
            .and_then(|r| self.stdin_text(*r, src));
        for child in &kids {
            match child.kind() {
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {}
                "command" => {
                    self.stdin = stdin.clone();
                    let extra: Vec<Node<'_>> = kids
                        .iter()
                        .flat_map(|r| super::redirect::extra_words(*r))
                        .collect();
                    let checked = self.command_with(*child, &extra, src, depth);
                    self.stdin = None;
                    checked?
                }
                _ if child.is_named() => self.statement(*child, src, depth)?,
                other => {
                    return Err(syntax_refusal(&short(self.text(node, src)), other));
                }
            }
        }
        for child in kids {
            if matches!(
                child.kind(),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect"
            ) {
                self.redirect(child, src, depth)?;
            }
        }
        Ok(())
    }

    pub(super) fn command(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        self.command_with(node, &[], src, depth)
    }

    /// A simple command, with the words the grammar put in a redirection after it (`extra`),
    /// which are its last arguments for bash.
    // Long: a simple command's words as bash assembles them (adjacent nodes one word, the
    // redirection's trailing words, the heredoc's stdin), then judged together; the grouping
    // and the judging share the nodes collected.
    fn command_with(
        &mut self,
        node: Node<'_>,
        extra: &[Node<'_>],
        src: &[u8],
        depth: u8,
    ) -> Result<()> {
        let part = short(self.text(node, src));
        // The standard input a heredoc gives this command; its own words' commands do not
        // read it.
        let given = self.stdin.take();
        // The words, each as the nodes the grammar gave it: adjacent nodes are one word for
        // bash (`$"x"y` is `$` and `"x"y` to the grammar).
        let mut words: Vec<Vec<Node<'_>>> = Vec::new();
        let mut name_index = None;
        let mut last_end = None;
        let mut inner_extra = Vec::new();
        for child in children(node) {
            let item = match child.kind() {
                "variable_assignment" | "variable_assignments" => {
                    self.assignments(child, src, &part, depth)?;
                    None
                }
                "file_redirect" | "herestring_redirect" => {
                    self.redirect(child, src, depth)?;
                    inner_extra.extend(super::redirect::extra_words(child));
                    None
                }
                "command_name" => {
                    name_index = Some(words.len());
                    Some(child)
                }
                "subshell" => {
                    self.statement(child, src, depth)?;
                    None
                }
                "$" | "==" | "=~" => Some(child),
                _ if child.is_named() => Some(child),
                other => return Err(syntax_refusal(&part, other)),
            };
            let Some(item) = item else {
                last_end = None;
                continue;
            };
            match words.last_mut() {
                Some(word) if last_end == Some(item.start_byte()) => word.push(item),
                _ => words.push(vec![item]),
            }
            last_end = Some(item.end_byte());
        }
        words.extend(
            inner_extra
                .into_iter()
                .chain(extra.iter().copied())
                .map(|n| vec![n]),
        );
        let mut values = Vec::new();
        for nodes in &words {
            values.push(self.word_of(nodes, src, &part, depth)?);
        }
        let Some(index) = name_index else {
            // Only assignments and redirections: those were checked above.
            return Ok(());
        };
        let args = values.split_off(index + 1);
        let Some(name) = values.pop() else {
            return Ok(());
        };
        if self.strict && !super::programs::plain(&name) {
            return Err(deny(format!(
                "`{part}`: the command name `{}` must be a plain word (no quotes, escapes, expansions or globs)",
                short(&name.value)
            )));
        }
        // A herestring on the command itself (`bash <<< 'ls'`) comes after a heredoc before it.
        let herestring = children(node)
            .into_iter()
            .rfind(|c| c.kind() == "herestring_redirect");
        self.stdin = match herestring {
            Some(r) => self.stdin_text(r, src),
            None => given,
        };
        let checked = match name.known() {
            Some(known) if self.is_function(known, node) => Ok(()),
            _ => self.program(&name, &args, &part, depth),
        };
        self.stdin = None;
        checked
    }

    /// A function definition: its name is recorded for the calls that follow, its body is
    /// checked where it stands.
    fn function(&mut self, node: Node<'_>, src: &[u8], depth: u8) -> Result<()> {
        let part = short(self.text(node, src));
        for child in children(node) {
            match child.kind() {
                "word" => {
                    let name = self.text(child, src).to_string();
                    self.functions.push(Function {
                        name,
                        start: node.start_byte(),
                        scope: scope_of(node),
                    });
                }
                "file_redirect" | "herestring_redirect" => self.redirect(child, src, depth)?,
                _ if child.is_named() => self.statement(child, src, depth)?,
                "function" | "(" | ")" => {}
                other => return Err(syntax_refusal(&part, other)),
            }
        }
        Ok(())
    }

    /// Whether `name`, called at `call`, is a function defined before it in a shell that
    /// holds the call.
    fn is_function(&self, name: &str, call: Node<'_>) -> bool {
        let at = call.start_byte();
        self.functions.iter().any(|f| {
            f.name == name && f.start <= at && f.scope.0 <= at && call.end_byte() <= f.scope.1
        })
    }

    /// Assignments alone or before a command: their values are checked as words (the commands
    /// of their substitutions judged); refused when strict.
    fn assignments(&mut self, node: Node<'_>, src: &[u8], part: &str, depth: u8) -> Result<()> {
        if node.kind() == "variable_assignments" {
            for child in children(node) {
                if child.kind() == "variable_assignment" {
                    self.assignments(child, src, part, depth)?;
                }
            }
            return Ok(());
        }
        self.assignment(node, src, part, depth)?;
        // An environment variable changes what the programs that see it do (`PATH`,
        // `LD_PRELOAD`, `GIT_EXTERNAL_DIFF` …), before a command or for those after it.
        if let Some(name) = node.child_by_field_name("name") {
            if !harmless_variable(self.text(name, src)) {
                self.writes = true;
            }
        }
        Ok(())
    }

    pub(super) fn assignment(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        depth: u8,
    ) -> Result<()> {
        if self.strict {
            return Err(deny(format!(
                "`{part}`: variable assignments (`{}`) are not allowed: the kernel layers that \
                 contain what a command does may not all be in force (tools.shell.sandbox, \
                 container_boundary or require_layers), so the policy accepts only words it can \
                 read",
                short(self.text(node, src))
            )));
        }
        for child in children(node) {
            match child.kind() {
                "variable_name" => {}
                "subscript"
                | "binary_expression"
                | "unary_expression"
                | "postfix_expression"
                | "parenthesized_expression" => self.nested(child, src, part, depth)?,
                "variable_assignment" => self.assignment(child, src, part, depth)?,
                "array" => {
                    for element in children(child) {
                        if element.is_named() {
                            self.word(element, src, part, depth)?;
                        }
                    }
                }
                _ if child.is_named() => {
                    self.word(child, src, part, depth)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn case_item(&mut self, node: Node<'_>, src: &[u8], part: &str, depth: u8) -> Result<()> {
        for child in children(node) {
            if child_is_field(node, child, "value") {
                self.word(child, src, part, depth)?;
            } else if child.is_named() {
                self.statement(child, src, depth)?;
            } else if !matches!(child.kind(), "|" | ")" | "(" | ";;" | ";&" | ";;&") {
                return Err(syntax_refusal(part, child.kind()));
            }
        }
        Ok(())
    }

    /// `[[ … ]]`: its words checked (the commands of their substitutions judged).
    fn test_expression(&mut self, node: Node<'_>, src: &[u8], part: &str, depth: u8) -> Result<()> {
        for child in children(node) {
            match child.kind() {
                "binary_expression" | "unary_expression" | "parenthesized_expression" => {
                    self.test_expression(child, src, part, depth)?
                }
                "test_operator" => {}
                "redirected_statement" => self.statement(child, src, depth)?,
                _ if child.is_named() => {
                    self.word(child, src, part, depth)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `[ … ]` is the `test` builtin with words, but the grammar reads it as an expression
    /// (as in `[[ … ]]`): collect its words in order, and refuse the tokens that bash would
    /// read as redirections or list operators there (`[ a > b ]` writes a file `b`).
    pub(super) fn bracket_test(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        part: &str,
        args: &mut Vec<Word>,
        depth: u8,
    ) -> Result<()> {
        for child in children(node) {
            match child.kind() {
                // `~/x`: the grammar reads the tilde as a unary operator; it is one word.
                "unary_expression" if child.child(0).is_some_and(|c| c.kind() == "~") => {
                    args.push(self.word(child, src, part, depth)?)
                }
                "unary_expression" | "binary_expression" => {
                    self.bracket_test(child, src, part, args, depth)?
                }
                "[" | "]" => {}
                "test_operator" | "!" | "=" | "==" | "!=" => {
                    args.push(Word::literal(self.text(child, src)))
                }
                other if !child.is_named() => {
                    return Err(deny(format!(
                        "`{part}`: `{other}` inside [ … ] is a redirection or shell operator for bash; quote it"
                    )))
                }
                _ => args.push(self.word(child, src, part, depth)?),
            }
        }
        Ok(())
    }
}

/// The node kinds the strict policy walks.
const STRICT_KINDS: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "subshell",
    "negated_command",
    "comment",
    "command",
    "redirected_statement",
];

fn is_bracket_test(node: Node<'_>) -> bool {
    node.kind() == "test_command" && node.child(0).is_some_and(|c| c.kind() == "[")
}

fn child_is_field(parent: Node<'_>, child: Node<'_>, field: &str) -> bool {
    let mut cursor = parent.walk();
    let found = parent
        .children_by_field_name(field, &mut cursor)
        .any(|c| c.id() == child.id());
    found
}

/// The byte range of the shell a function defined at `node` lives in.
fn scope_of(node: Node<'_>) -> (usize, usize) {
    let mut child = node;
    while let Some(parent) = child.parent() {
        match parent.kind() {
            "subshell" | "command_substitution" | "process_substitution" | "program" => {
                return (parent.start_byte(), parent.end_byte())
            }
            // Each element of a pipeline runs in a subshell of its own.
            "pipeline" => return (child.start_byte(), child.end_byte()),
            _ => child = parent,
        }
    }
    (node.start_byte(), node.end_byte())
}

fn syntax_refusal(part: &str, token: &str) -> crate::error::Error {
    deny(format!(
        "`{part}`: shell syntax `{token}` is not understood by the policy"
    ))
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
