; Ruby definitions. `attr_reader :name` and its kin define fields.

(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(alias name: (_) @name) @definition.method
(class name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.class
(module name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.module
(assignment left: (constant) @name) @definition.constant
(call
  method: (identifier) @_attr
  arguments: (argument_list (simple_symbol) @name)
  (#any-of? @_attr "attr_reader" "attr_writer" "attr_accessor")) @definition.field
