"""A Git LFS pointer given as a trajectory or as gold says what it is and how to fetch it."""

from __future__ import annotations

import pytest

from ctxeval.errors import AdapterError, GoldError
from ctxeval.reading import adapters
from ctxeval.reading.inputs import read_inputs
from ctxeval.truth.gold import load_gold

POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
           b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
           b"size 48213\n")


@pytest.fixture
def pointer(tmp_path):
    f = tmp_path / "django__django-11099.traj.json"
    f.write_bytes(POINTER)
    return f


def _says_lfs(message: str) -> None:
    assert "Git LFS pointer" in message and "git lfs pull" in message
    assert "48213 bytes" in message
    assert "no adapter recognises" not in message


def test_detection_names_the_pointer(pointer):
    with pytest.raises(AdapterError) as err:
        adapters.detect(pointer)
    assert err.value.kind == "lfs_pointer" and err.value.path == str(pointer)
    _says_lfs(err.value.message)


def test_a_forced_format_says_the_same(pointer):
    with pytest.raises(AdapterError) as err:
        adapters.read(pointer, "mini-swe-agent")
    _says_lfs(err.value.message)


def test_pointers_met_while_walking_a_folder_are_reported(pointer, tmp_path):
    (tmp_path / "notes.txt").write_text("not a trajectory")
    results = list(read_inputs([tmp_path]))
    assert len(results) == 1  # the unrelated text file is skipped silently, the pointer is not
    assert results[0].problem.kind == "lfs_pointer"
    _says_lfs(results[0].problem.message)


def test_gold_file_and_gold_folder(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_bytes(POINTER)
    with pytest.raises(GoldError) as err:
        load_gold([gold])
    assert err.value.path == str(gold)
    _says_lfs(err.value.message.replace("trajectory", "gold"))
    assert "gold file itself" in err.value.message
    folder = tmp_path / "tree" / "django__django-11099"
    folder.mkdir(parents=True)
    (folder / "gold.json").write_bytes(POINTER)
    with pytest.raises(GoldError) as err:  # no record at all: the pointer says why
        load_gold([tmp_path / "tree"])
    assert err.value.kind == "lfs_pointer" and err.value.path.endswith("gold.json")


def test_a_file_that_only_mentions_the_spec_is_not_a_pointer(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_bytes(b'{"note": "version https://git-lfs.github.com/spec/v1"}\n')
    with pytest.raises(AdapterError) as err:
        adapters.detect(f)
    assert err.value.kind != "lfs_pointer"
