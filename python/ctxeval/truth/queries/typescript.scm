; Definitions in TypeScript and TSX (both grammars share these node types; see python.scm for
; the conventions).

;; preset: contextbench
; ContextBench's TypeScript kinds do not include arrow functions (unlike JavaScript's), nor
; abstract classes, enums or type aliases.
(function_declaration) @definition
(class_declaration) @definition
(method_definition) @definition
(interface_declaration) @definition

;; preset: strict
(function_declaration) @definition
(generator_function_declaration) @definition
(function_signature) @definition
(class_declaration) @definition
(abstract_class_declaration) @definition
(method_definition) @definition
(method_signature) @definition
(abstract_method_signature) @definition
(interface_declaration) @definition
(enum_declaration) @definition
(type_alias_declaration) @definition
(internal_module) @definition
(module) @definition
(variable_declarator
  name: (identifier)
  value: [(arrow_function) (function_expression) (generator_function) (class)] @definition)
(assignment_expression
  left: [(identifier) (member_expression property: (property_identifier))]
  right: [(arrow_function) (function_expression) (generator_function) (class)] @definition)
(public_field_definition
  name: (property_identifier)
  value: [(arrow_function) (function_expression) (generator_function)] @definition)
(pair
  key: [(property_identifier) (string)]
  value: [(arrow_function) (function_expression) (generator_function)] @definition)
