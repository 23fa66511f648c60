"""Truth: what an instance is measured against, read at its base commit.

Enters: gold files (neutral JSONL, ContextBench, SWE-bench records), repositories, patches.
Leaves: :class:`~ctxeval.model.GoldInstance` records (:mod:`.gold`), files read at a commit
(:mod:`.repo`), edit locations of a patch (:mod:`.patches`), and the definitions of a file
found by tree-sitter (:mod:`.symbols`, :mod:`.grammars` with the queries in ``queries/``,
:mod:`.extraction` with the on-disk :mod:`.cache`); the parsing itself is native
(``rust/ctxeval-core``).

May import: the bottom of the package only (:mod:`ctxeval._core`, :mod:`ctxeval.model`,
:mod:`ctxeval.errors`, :mod:`ctxeval.paths`, :mod:`ctxeval.linesets`, :mod:`ctxeval.lfs`).
``tests/test_architecture.py`` holds the order of the stages and checks it.
"""
