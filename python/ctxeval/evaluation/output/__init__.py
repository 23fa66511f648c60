"""The files an evaluation writes, and reading them back.

:mod:`.destination`: an output's life, from held to finished (both engines write through it);
:mod:`.ownership`: whether a file is ours to overwrite; :mod:`.meta`: the metadata beside the
rows, and whether ``--resume`` may add to them; :mod:`.resume_scan`: what ``--resume`` needs of
the rows kept, read fast; :mod:`.results`: result rows as JSON lines and their checks
(:mod:`.row_ranges`: the values each metric may take); :mod:`.results_parquet`: the same rows
as Parquet; :mod:`.outfile`: a file held by one evaluation at a time, written a whole line at a
time; :mod:`.views_sidecar`: what each step showed (``--views``), for the viewer.

Enters: rows and views from the stages. Leaves: files, and rows read back for analysis.
May import: reading, truth and the bottom of the package.
"""
