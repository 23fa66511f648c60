; Definitions in Go (see python.scm for the conventions).

;; preset: contextbench
; A grouped `type ( ... )` block is one type_declaration.
(function_declaration) @definition
(method_declaration) @definition
(type_declaration) @definition

;; preset: strict
; Each type spec (and alias) of a declaration is its own definition; interface methods count.
(function_declaration) @definition
(method_declaration) @definition
(type_spec) @definition
(type_alias) @definition
(method_elem) @definition
