; Definitions in JavaScript and JSX (see python.scm for the conventions).

;; preset: contextbench
; Every arrow function counts, anonymous callbacks included; function expressions do not.
(function_declaration) @definition
(class_declaration) @definition
(method_definition) @definition
(arrow_function) @definition

;; preset: strict
; Declarations, plus functions and classes that are bound to a name; anonymous callbacks are
; not definitions a reader would look up.
(function_declaration) @definition
(generator_function_declaration) @definition
(class_declaration) @definition
(method_definition) @definition
(variable_declarator
  name: (identifier)
  value: [(arrow_function) (function_expression) (generator_function) (class)] @definition)
(assignment_expression
  left: [(identifier) (member_expression property: (property_identifier))]
  right: [(arrow_function) (function_expression) (generator_function) (class)] @definition)
(field_definition
  property: (property_identifier)
  value: [(arrow_function) (function_expression) (generator_function)] @definition)
(pair
  key: [(property_identifier) (string)]
  value: [(arrow_function) (function_expression) (generator_function)] @definition)
