; Python definitions. An assignment at module level is a variable, in a class body a field;
; one inside a function is local and dropped (`parse::tree_of`).

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(expression_statement (assignment left: (identifier) @name) @definition.variable)
(expression_statement (assignment left: (pattern_list (identifier) @name)) @definition.variable)
(expression_statement (assignment left: (tuple_pattern (identifier) @name)) @definition.variable)
