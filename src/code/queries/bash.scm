; Bash definitions: functions, and variables assigned outside them.

(function_definition name: (word) @name) @definition.function
(variable_assignment name: (variable_name) @name) @definition.variable
(declaration_command (variable_assignment name: (variable_name) @name)) @definition.variable
