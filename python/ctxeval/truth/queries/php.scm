; Definitions in PHP (see python.scm for the conventions).

;; preset: contextbench
(function_definition) @definition
(method_declaration) @definition
(class_declaration) @definition

;; preset: strict
(function_definition) @definition
(method_declaration) @definition
(class_declaration) @definition
(interface_declaration) @definition
(trait_declaration) @definition
(enum_declaration) @definition
