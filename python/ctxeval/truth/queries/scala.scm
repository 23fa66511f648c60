; Definitions in Scala (see python.scm for the conventions).

;; preset: contextbench
(function_definition) @definition
(class_definition) @definition
(trait_definition) @definition

;; preset: strict
; Abstract (trait) methods are function_declaration nodes.
(function_definition) @definition
(function_declaration) @definition
(class_definition) @definition
(object_definition) @definition
(trait_definition) @definition
(enum_definition) @definition
(type_definition) @definition
