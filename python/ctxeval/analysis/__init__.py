"""Analysis: what result rows say, for people.

Enters: result rows (:mod:`ctxeval.evaluation.output.results` reads them, JSON lines or
Parquet) and the views sidecar.
Leaves: reports in every format (:mod:`.reports`: leaderboard, exploration, plots, the HTML
viewer), comparisons of runs with their statistics (:mod:`.comparison`, :mod:`.stats`), and
cost figures (:mod:`.tokens`).

May import: evaluation (to read rows), reading, truth and the bottom of the package; only
:mod:`ctxeval.api` and :mod:`ctxeval.cli` sit above it.
"""
