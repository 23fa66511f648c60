; Definitions in Swift (see python.scm for the conventions).

;; preset: contextbench
; class_declaration also covers struct, enum, extension and actor declarations.
(function_declaration) @definition
(class_declaration) @definition
(protocol_declaration) @definition

;; preset: strict
(function_declaration) @definition
(init_declaration) @definition
(class_declaration) @definition
(protocol_declaration) @definition
(protocol_function_declaration) @definition
(typealias_declaration) @definition
