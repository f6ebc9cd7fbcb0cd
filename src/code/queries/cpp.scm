; C++ definitions: C's, and classes, namespaces, members declared in a class, aliases. A
; function defined outside its class (`A::f`) belongs to `A` (`parse::unqualified`).

(function_definition) @definition.function
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(class_specifier name: (qualified_identifier name: (type_identifier) @name) body: (_)) @definition.class
(struct_specifier name: (qualified_identifier name: (type_identifier) @name) body: (_)) @definition.struct
(class_specifier name: (template_type name: (type_identifier) @name) body: (_)) @definition.class
(struct_specifier name: (template_type name: (type_identifier) @name) body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition declarator: (_ declarator: (type_identifier) @name)) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(concept_definition name: (identifier) @name) @definition.type
(enumerator name: (identifier) @name) @definition.variant
(field_declaration declarator: (function_declarator)) @definition.method
(field_declaration declarator: (_ declarator: (function_declarator))) @definition.method
(field_declaration declarator: (field_identifier) @name) @definition.field
(field_declaration declarator: (_ declarator: (field_identifier) @name)) @definition.field
(declaration declarator: (function_declarator)) @definition.function
(declaration declarator: (_ declarator: (function_declarator))) @definition.function
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(translation_unit (declaration declarator: (identifier) @name) @definition.variable)
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)
(namespace_definition body: (declaration_list (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable))
