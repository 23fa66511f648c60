"""Reading: what the agent looked at, from the trajectory as the agent wrote it.

Enters: trajectory files and directories, or records in memory, in any supported format, and
the repository at the base commit where printed text must be placed.
Leaves: neutral :class:`~ctxeval.model.Trajectory` objects (steps of
:class:`~ctxeval.model.View`), found by :mod:`.inputs` and :mod:`.identify`, read by one
adapter per format (:mod:`.adapters`), shell commands read by :mod:`.shell`, printed text
placed in the file (:mod:`.placing`, :mod:`.textmatch`), Moatless spans rendered
(:mod:`.moatless_spans`), and the benchmark's resolved status (:mod:`.resolved`).

May import: :mod:`ctxeval.truth` (the repository at the base commit, gold readers' format
predicates) and the bottom of the package; nothing from evaluation or analysis.
"""
