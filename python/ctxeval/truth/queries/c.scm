; Definitions in C; `.h` headers are parsed as C (see python.scm for the conventions).

;; preset: contextbench
; Every struct_specifier counts, also a bare `struct matrix` naming a type in a signature.
(function_definition) @definition
(struct_specifier) @definition

;; preset: strict
; Only specifiers with a body define a type; typedefs count.
(function_definition) @definition
(struct_specifier body: (_)) @definition
(union_specifier body: (_)) @definition
(enum_specifier body: (_)) @definition
(type_definition) @definition
