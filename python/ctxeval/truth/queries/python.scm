; Definitions in Python. One section per preset (`;; preset: <name>` lines split the file;
; see ctxeval/symbols.py). Every node captured as @definition is one definition, identified by
; its node type and byte range; names are read from the node (its `name` field, or for JS/TS
; function expressions the binding they are assigned to) in Python.

;; preset: contextbench
; ContextBench counts every function_definition and class_definition node
; (its "async_function_definition" does not exist in the grammar: async defs are
; function_definition nodes).
(function_definition) @definition
(class_definition) @definition

;; preset: strict
(function_definition) @definition
(class_definition) @definition
; Python 3.12 `type X = ...` aliases.
(type_alias_statement) @definition
