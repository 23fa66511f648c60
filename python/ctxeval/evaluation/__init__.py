"""``ctxeval evaluate`` in three stages: plan → extract → score.

Enters: gold, trajectories and repositories (read by :mod:`ctxeval.truth` and
:mod:`ctxeval.reading`). Leaves: result rows, one per (run, instance), in input order,
streamed as they are ready, and the files they are written to (:mod:`.output`).

* **plan** (:mod:`.plan`): read each trajectory and its gold record, open the repository at
  the base commit, resolve every path and place every printed view; what is left of each
  instance is a :class:`~ctxeval.evaluation.prepare.preparer.Planned` engine input that lacks only
  definitions, and the list of distinct blobs whose definitions it needs (:class:`.plan.Need`).
* **extract** (:mod:`.extract`): the definitions of each distinct blob, once: from memory, the
  disk cache, or a parse, the versions of one path taken in commit order so that incremental
  re-parsing applies. The blobs are sharded over the ``-j N`` native threads **by path**
  (:class:`.extract.ThreadExtractor`), so that one repository never keeps one thread busy and
  the others idle, while this thread reads, plans and scores (``-j 1`` included).
* **score** (:mod:`.score`): each planned instance finished with its definitions and scored
  by the native engine in one batch call; rows are built (:mod:`.rows`).

:mod:`.run` drives the stages over a run's inputs, keeping a bounded window of batches in
flight, and holds :func:`.run.evaluate`, what the command calls (:mod:`.pipeline` gathers its
names). Beside the stages: :mod:`.prepare` (one instance made ready for the engine, in the
``strict`` and ``contextbench`` readings), :mod:`.output` (results files, JSON lines and
Parquet, and the views sidecar), :mod:`.scorer` (one rollout per call, for RL loops),
:mod:`.ray_engine` (the same evaluation on a Ray cluster) and :mod:`.resolve` (``ctxeval
convert --repos``: a trajectory resolved with the preparers' help).

May import: reading, truth and the bottom of the package (the native core, model, errors);
nothing above (analysis, the command line).
"""
