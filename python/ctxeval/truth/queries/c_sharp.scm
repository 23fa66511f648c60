; Definitions in C# (see python.scm for the conventions).

;; preset: contextbench
(method_declaration) @definition
(class_declaration) @definition
(interface_declaration) @definition

;; preset: strict
(class_declaration) @definition
(struct_declaration) @definition
(interface_declaration) @definition
(enum_declaration) @definition
(record_declaration) @definition
(delegate_declaration) @definition
(method_declaration) @definition
(constructor_declaration) @definition
(local_function_statement) @definition
(namespace_declaration) @definition
(file_scoped_namespace_declaration) @definition
