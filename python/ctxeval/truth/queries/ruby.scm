; Definitions in Ruby (see python.scm for the conventions).

;; preset: contextbench
(method) @definition
(class) @definition
(module) @definition

;; preset: strict
(method) @definition
(singleton_method) @definition
(class) @definition
(module) @definition
