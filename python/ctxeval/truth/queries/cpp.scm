; Definitions in C++ (see python.scm for the conventions).

;; preset: contextbench
(function_definition) @definition
(class_specifier) @definition
(struct_specifier) @definition

;; preset: strict
; Specifiers with a body, namespaces, aliases, and methods declared (not defined) in a class.
(function_definition) @definition
(class_specifier body: (_)) @definition
(struct_specifier body: (_)) @definition
(union_specifier body: (_)) @definition
(enum_specifier body: (_)) @definition
(namespace_definition) @definition
(type_definition) @definition
(alias_declaration) @definition
(field_declaration
  declarator: (function_declarator
    declarator: [(field_identifier) (operator_name) (destructor_name)])) @definition
