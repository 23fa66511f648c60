"""The files an evaluation writes, and reading them back.

:mod:`.results`: result rows as JSON lines, their checks, the metadata beside them;
:mod:`.results_parquet`: the same rows as Parquet; :mod:`.outfile`: an output held by one
evaluation at a time, repaired by ``--resume``; :mod:`.views_sidecar`: what each step showed
(``--views``), for the viewer.

Enters: rows and views from the stages. Leaves: files, and rows read back for analysis.
May import: reading, truth and the bottom of the package.
"""
