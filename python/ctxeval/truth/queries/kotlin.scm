; Definitions in Kotlin (see python.scm for the conventions).

;; preset: contextbench
; Interfaces and enum classes are class_declaration nodes; objects are not counted.
(function_declaration) @definition
(class_declaration) @definition

;; preset: strict
(function_declaration) @definition
(class_declaration) @definition
(object_declaration) @definition
(companion_object) @definition
(secondary_constructor) @definition
(type_alias) @definition
