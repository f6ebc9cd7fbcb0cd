//! How a refusal names a piece of shell syntax: a tree-sitter node kind in words
//! (`command_substitution` → "command substitution"), for the syntax walker, the
//! redirections and the policy's entry alike.

/// A node kind in words; a kind without a name of its own is quoted as it is.
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
        "compound_statement" => "a `{ …; }` group or `(( … ))`".into(),
        "test_command" => "a `[[ … ]]` test".into(),
        "declaration_command" => "a declaration (declare/export/local …)".into(),
        "unset_command" => "unset".into(),
        other => format!("`{other}`"),
    }
}
