"""One instance made ready for the native engine, in both presets' readings.

:mod:`.preparer` holds what both presets share (:class:`~.preparer.PreparerBase`, the engine
input, the notes a row carries) and the ``strict`` reading (:class:`~.preparer.Preparer`);
:mod:`.contextbench` the published ContextBench evaluator's reading
(:class:`~.contextbench.ContextBenchPreparer`), with the same interface.

Enters: a :class:`~ctxeval.model.GoldInstance`, a :class:`~ctxeval.model.Trajectory` and the
repository at the base commit. Leaves: the plain input the engine takes, plus notes.
May import: reading, truth and the bottom of the package.
"""
