"""``ctxeval evaluate`` in three stages: plan → extract → score.

Gold, trajectories and repositories enter; result rows leave, one per (run, instance), in
input order, streamed as they are ready.

* **plan** (:mod:`.plan`): read each trajectory and its gold record, open the repository at
  the base commit, resolve every path and place every printed view; what is left of each
  instance is a :class:`~ctxeval.prepare.Planned` engine input that lacks only definitions,
  and the list of distinct blobs whose definitions it needs (:class:`.plan.Need`).
* **extract** (:mod:`.extract`): the definitions of each distinct blob, once: from memory, the
  disk cache, or a parse, the versions of one path taken in commit order so that incremental
  re-parsing applies. The blobs are sharded over the ``-j N`` native threads **by path**
  (:class:`.extract.ThreadExtractor`), so that one repository never keeps one thread busy and
  the others idle, while this thread reads, plans and scores (``-j 1`` included).
* **score** (:mod:`.score`): each planned instance finished with its definitions and scored
  by the native engine in one batch call; rows are built (:mod:`.rows`).

:mod:`.run` drives the stages over a run's inputs, keeping a bounded window of batches in
flight, and holds :func:`.run.evaluate`, what the command calls. The stages use the layers
below them (readers and adapters, gold, repositories, definitions, the preparers, the native
core) and nothing above (reports, the command line).
"""
