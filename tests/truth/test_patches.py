"""Edit locations of unified diffs: hand-computed cases and the real SWE-bench Lite patches."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, requires_shared
from ctxeval.errors import PatchError
from ctxeval.truth.patches import EditLocations, contextbench_removed_lines, edit_locations


def one(patch: str):
    files = edit_locations(patch).files
    assert len(files) == 1, files
    return next(iter(files.values()))


def test_empty_patch_has_no_locations():
    assert edit_locations("") == EditLocations({})
    assert edit_locations("\n\n").lines_by_file() == {}


def test_insertion_at_top_locates_at_line_1():
    patch = ("--- a/m.py\n+++ b/m.py\n"
             "@@ -1,3 +1,5 @@\n+import os\n+import sys\n a = 1\n b = 2\n c = 3\n")
    fe = one(patch)
    assert fe.path == "m.py" and fe.lines == (1,) and fe.removed == ()
    # the "-0,0" form: inserted before base line 1
    assert one("--- a/m.py\n+++ b/m.py\n@@ -0,0 +1,2 @@\n+x\n+y\n").lines == (1,)


def test_insertion_mid_file_locates_at_the_line_before():
    patch = ("--- a/m.py\n+++ b/m.py\n"
             "@@ -10,6 +10,8 @@ def f():\n l10\n l11\n l12\n+new1\n+new2\n l13\n l14\n l15\n")
    assert one(patch).lines == (12,)
    # "-k,0" names the line after which the lines go
    assert one("--- a/m.py\n+++ b/m.py\n@@ -5,0 +6,2 @@\n+x\n+y\n").lines == (5,)
    # an insertion ending a hunk sits after its last context line
    assert one("--- a/m.py\n+++ b/m.py\n@@ -7,2 +7,3 @@\n l7\n l8\n+x\n").lines == (8,)


def test_replacement_adds_nothing_beyond_the_removed_lines():
    patch = ("--- a/m.py\n+++ b/m.py\n"
             "@@ -20,5 +20,6 @@\n l20\n-old21\n-old22\n+new1\n+new2\n+new3\n l23\n l24\n l25\n")
    fe = one(patch)
    assert fe.lines == (21, 22) and fe.removed == (21, 22)
    # additions before the removal in the same run are part of the replacement too
    assert one("--- a/m.py\n+++ b/m.py\n@@ -3,3 +3,3 @@\n l3\n+n\n-o4\n l5\n").lines == (4,)


def test_mixed_hunk_runs_are_located_separately():
    patch = ("--- a/m.py\n+++ b/m.py\n"
             "@@ -1,6 +1,6 @@\n l1\n-o2\n l3\n+n\n l4\n-o5\n+p\n l6\n")
    fe = one(patch)
    # run 1 removes 2; run 2 inserts after 3; run 3 replaces 5
    assert fe.lines == (2, 3, 5) and fe.removed == (2, 5)


def test_deletion_only():
    patch = "--- a/m.py\n+++ b/m.py\n@@ -4,4 +4,1 @@\n l4\n-d5\n-d6\n-d7\n"
    fe = one(patch)
    assert fe.lines == (5, 6, 7) and fe.removed == (5, 6, 7)
    assert not (fe.created or fe.deleted or fe.renamed)


def test_multiple_files_and_hunks():
    patch = ("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
             "@@ -1,2 +1,2 @@\n-x\n+y\n l2\n@@ -50,2 +50,3 @@\n l50\n+z\n l51\n"
             "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -9 +9 @@\n-q\n+r\n")
    assert edit_locations(patch).lines_by_file() == {"a.py": [1, 50], "b.py": [9]}


def test_created_deleted_and_renamed_files():
    patch = (
        "diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..1111111\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\nindex 2222222..0000000\n"
        "--- a/gone.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"
        "diff --git a/old/x.py b/new/x.py\nsimilarity index 90%\n"
        "rename from old/x.py\nrename to new/x.py\n"
        "--- a/old/x.py\n+++ b/new/x.py\n@@ -5,3 +5,3 @@\n l5\n-l6\n+L6\n l7\n"
        "diff --git a/p.py b/q.py\nsimilarity index 100%\nrename from p.py\nrename to q.py\n"
    )
    files = edit_locations(patch).files
    assert set(files) == {"new.py", "gone.py", "old/x.py", "p.py"}
    new = files["new.py"]
    assert (new.created, new.old_path, new.new_path, new.lines) == (True, None, "new.py", ())
    gone = files["gone.py"]
    assert (gone.deleted, gone.new_path, gone.lines, gone.removed) == \
        (True, None, (1, 2, 3), (1, 2, 3))
    ren = files["old/x.py"]
    assert (ren.renamed, ren.old_path, ren.new_path, ren.lines) == \
        (True, "old/x.py", "new/x.py", (6,))
    pure = files["p.py"]
    assert (pure.renamed, pure.new_path, pure.lines) == (True, "q.py", ())


def test_binary_files_have_file_level_edits_only():
    patch = ("diff --git a/img.png b/img.png\nindex 1111111..2222222 100644\n"
             "Binary files a/img.png and b/img.png differ\n"
             "diff --git a/logo.bin b/logo.bin\nnew file mode 100644\nindex 0000000..3333333\n"
             "GIT binary patch\nliteral 12\nTcmZ?wbhEHbRA5kGU|;|M2v-0A\n\n"
             "literal 0\nHcmV?d00001\n\n"
             "diff --git a/c.py b/c.py\n--- a/c.py\n+++ b/c.py\n@@ -2 +2 @@\n-u\n+v\n")
    files = edit_locations(patch).files
    assert files["img.png"].lines == () and not files["img.png"].created
    assert files["logo.bin"].created and files["logo.bin"].lines == ()
    assert files["c.py"].lines == (2,)


def test_crlf_patch_reads_like_lf():
    lf = ("diff --git a/w.txt b/w.txt\n--- a/w.txt\n+++ b/w.txt\n"
          "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
          "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n"
          "@@ -0,0 +1 @@\n+x\n")
    crlf = lf.replace("\n", "\r\n")
    assert edit_locations(crlf) == edit_locations(lf)
    assert edit_locations(crlf).lines_by_file() == {"w.txt": [2], "n.txt": []}
    # a CRLF *file* inside an LF patch: the \r stays in content lines, locations unchanged
    mixed = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n one\r\n-two\r\n+TWO\r\n"
    assert one(mixed).lines == (2,)


def test_no_newline_marker_is_not_a_line():
    patch = ("--- a/m.py\n+++ b/m.py\n@@ -8,2 +8,3 @@\n l8\n-last\n"
             "\\ No newline at end of file\n+last\n+more\n\\ No newline at end of file\n")
    fe = one(patch)
    assert fe.lines == (9,) and fe.removed == (9,)


def test_plain_diff_u_with_timestamps_and_quoted_paths():
    patch = ("--- a/dir/f g.py\t2024-01-01 00:00:00.000000000 +0000\n"
             "+++ b/dir/f g.py\t2024-01-02 00:00:00.000000000 +0000\n@@ -3 +3 @@\n-a\n+b\n"
             'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n'
             '--- "a/caf\\303\\251.py"\n+++ "b/caf\\303\\251.py"\n@@ -1 +1 @@\n-a\n+b\n')
    assert edit_locations(patch).lines_by_file() == {"dir/f g.py": [3], "café.py": [1]}


@pytest.mark.parametrize(("patch", "needle"), [
    ("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", "shorter than its header"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n", "longer than its header"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1,x +1,1 @@\n a\n", "malformed hunk header"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n?b\n", "unexpected line in hunk"),
])
def test_malformed_hunk_names_origin_file_and_hunk(patch, needle):
    with pytest.raises(PatchError) as err:
        edit_locations(patch, origin="preds.jsonl")
    msg = str(err.value)
    assert needle in msg
    assert "preds.jsonl" in msg and "'x.py'" in msg
    if "longer" not in needle:
        assert "@@ -1," in msg


def test_error_points_at_the_failing_hunk_not_the_first():
    patch = ("--- a/ok.py\n+++ b/ok.py\n@@ -1 +1 @@\n-a\n+b\n"
             "--- a/bad.py\n+++ b/bad.py\n@@ -10,2 +10,2 @@ def g():\n l\n")
    with pytest.raises(PatchError) as err:
        edit_locations(patch, origin="p.diff")
    assert err.value.path == "p.diff" and err.value.line == 8
    assert "'bad.py'" in str(err.value) and "@@ -10,2 +10,2 @@ def g():" in str(err.value)


def test_contextbench_reading_quirks():
    # a deleted file has no "+++ b/" header: the reference credits its lines to the file before
    patch = ("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
             "--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-p\n-q\n")
    assert contextbench_removed_lines(patch) == {"a.py": [(1, 2)]}
    assert edit_locations(patch).files["gone.py"].removed == (1, 2)
    # a removed line whose text starts with "--" ends the reference's hunk
    sql = "--- a/q.sql\n+++ b/q.sql\n@@ -1,3 +1,1 @@\n-select 1;\n--- comment\n-select 2;\n+x\n"
    assert contextbench_removed_lines(sql) == {"q.sql": [(1, 1)]}
    assert edit_locations(sql).files["q.sql"].removed == (1, 2, 3)


@requires_shared
def test_all_swe_bench_lite_gold_patches_have_edit_locations():
    records = json.loads((CORPUS / "swe-bench" / "swe-bench-lite-test.json").read_text())
    assert len(records) == 300
    for rec in records:
        el = edit_locations(rec["patch"], origin=rec["instance_id"])
        # every Lite gold patch edits existing files only, each at some base line
        assert el.files, rec["instance_id"]
        assert all(fe.lines and not fe.created for fe in el.files.values()), rec["instance_id"]
        # ContextBench's reading of removed lines agrees on every one of them
        ref = {f: sorted({n for s, e in rs for n in range(s, e + 1)})
               for f, rs in contextbench_removed_lines(rec["patch"]).items()}
        mine = {fe.new_path: list(fe.removed) for fe in el.files.values() if fe.removed}
        assert mine == ref, rec["instance_id"]
    by_id = {r["instance_id"]: r for r in records}
    # hand-read: hunk -108 inserts after 110 and removes 116-119; -127 removes 130; -139 removes 142
    el = edit_locations(by_id["django__django-15202"]["patch"])
    assert el.lines_by_file() == {"django/core/validators.py": [110, 116, 117, 118, 119, 130, 142]}
    assert el.files["django/core/validators.py"].removed == (116, 117, 118, 119, 130, 142)
    # hand-read: a pure insertion after context lines 182-184
    el = edit_locations(by_id["sphinx-doc__sphinx-8721"]["patch"])
    assert el.lines_by_file() == {"sphinx/ext/viewcode.py": [184]}


@requires_shared
def test_contextbench_parquet_patches_read_like_the_reference():
    import pyarrow.parquet as pq

    rows = pq.read_table(CORPUS / "contextbench" / "contextbench_verified_test.parquet").to_pylist()
    assert len(rows) == 50
    created = set()
    for row in rows:
        for key in ("patch", "test_patch"):
            el = edit_locations(row[key], origin=f"{row['instance_id']}:{key}")
            assert el.files
            ref = {f: sorted({n for s, e in rs for n in range(s, e + 1)})
                   for f, rs in contextbench_removed_lines(row[key]).items()}
            assert {fe.new_path: list(fe.removed) for fe in el.files.values() if fe.removed} \
                == ref
            if key == "patch":
                created |= {fe.path for fe in el.files.values() if fe.created}
    # the three gold patches that add a file add a changelog fragment / changeset
    assert created == {"changelogs/fragments/prettydoc.yml", ".changeset/nasty-yaks-peel.md",
                       "changelogs/fragments/67794-atomic_move-default-perms.yml"}


def test_mail_and_format_patch_text_around_the_diff_is_skipped():
    patch = ("From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/2] fix\n\n"
             "Fix the thing.\n---\n a.py | 2 +-\n 1 file changed\n\n"
             "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-x\n+y\n"
             "-- \n2.43.0\n\n"
             "From 5678 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 2/2] more\n---\n"
             "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -9,2 +9,3 @@\n l9\n+z\n l10\n"
             "-- \n2.43.0\n")
    # the same file in two patches of a series: locations are united
    assert edit_locations(patch).lines_by_file() == {"a.py": [3, 9]}


def _unidiff_locations(patch: str) -> dict[str, tuple[set[int], set[int]]]:
    """An independent reading with unidiff: per base file, (removed lines, edit locations) by
    the rule of docs/metrics.md (a run of added lines with no removal next to it is located at
    the base line before it, line 1 at the top)."""
    from unidiff import PatchSet

    out: dict[str, tuple[set[int], set[int]]] = {}
    for pf in PatchSet(patch):
        if pf.is_added_file or pf.is_binary_file:
            continue
        path = pf.source_file[2:] if pf.source_file.startswith("a/") else pf.source_file
        removed, locs = set(), set()
        for hunk in pf:
            # the base line before the current position (``-k,0``: the insertion is after k)
            prev_base = hunk.source_start if hunk.source_length == 0 else hunk.source_start - 1
            run_removed, run_added = [], False
            for line in [*hunk, None]:
                if line is None or line.is_context:
                    if run_removed:
                        locs.update(run_removed)
                    elif run_added:
                        locs.add(max(prev_base, 1))
                    run_removed, run_added = [], False
                    if line is not None:
                        prev_base = line.source_line_no
                elif line.is_removed:
                    removed.add(line.source_line_no)
                    run_removed.append(line.source_line_no)
                    prev_base = line.source_line_no
                elif line.is_added:
                    run_added = True
        out[path] = (removed, locs)
    return out


@requires_shared
def test_edit_locations_agree_with_unidiff_on_every_real_patch():
    """All SWE-bench Lite gold and test patches, read by both, give the same base lines."""
    import json

    from unidiff.errors import UnidiffParseError

    records = json.loads((CORPUS / "swe-bench" / "swe-bench-lite-test.json").read_text())
    compared = 0
    for rec in records:
        for patch in (rec["patch"], rec["test_patch"]):
            try:
                theirs = _unidiff_locations(patch)
            except UnidiffParseError:
                continue
            ours = edit_locations(patch).files
            for path, (removed, locs) in theirs.items():
                fe = ours[path]
                assert set(fe.removed) == removed, (rec["instance_id"], path)
                assert set(fe.lines) == locs, (rec["instance_id"], path)
                compared += 1
    assert compared > 600


def test_a_patch_kept_in_a_cache_is_parsed_once_and_its_error_kept_too() -> None:
    from ctxeval.truth.patches import kept_edit_locations

    patch = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
             "@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n")
    cache: dict = {}
    first = kept_edit_locations(cache, patch, "gold patch")
    assert first == edit_locations(patch) and kept_edit_locations(cache, patch, "gold patch") \
        is first
    bad = kept_edit_locations(cache, "@@ -1 +1 @@\n-x\n+y\n", "gold patch")
    assert isinstance(bad, PatchError) and bad.path == "gold patch"
    assert kept_edit_locations(cache, "@@ -1 +1 @@\n-x\n+y\n", "gold patch") is bad
    assert len(cache) == 2
