; Definitions in Rust (see python.scm for the conventions).

;; preset: contextbench
(function_item) @definition
(impl_item) @definition
(struct_item) @definition
(trait_item) @definition

;; preset: strict
; Trait methods without a body are function_signature_item nodes.
(function_item) @definition
(function_signature_item) @definition
(impl_item) @definition
(struct_item) @definition
(enum_item) @definition
(union_item) @definition
(trait_item) @definition
(type_item) @definition
(mod_item) @definition
(macro_definition) @definition
