; Definitions in Java (see python.scm for the conventions).

;; preset: contextbench
(method_declaration) @definition
(class_declaration) @definition
(interface_declaration) @definition
(constructor_declaration) @definition

;; preset: strict
; Interface methods are method_declaration nodes too.
(class_declaration) @definition
(interface_declaration) @definition
(enum_declaration) @definition
(record_declaration) @definition
(annotation_type_declaration) @definition
(method_declaration) @definition
(constructor_declaration) @definition
(compact_constructor_declaration) @definition
