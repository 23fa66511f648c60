"""Detection over every input of ../shared: each trajectory goes to its adapter, nothing else is
claimed. The expected format of each file is written here from the corpus and parity manifests.
"""

from __future__ import annotations

import contextlib
import json
import re

import pytest

from conftest import CORPUS, PARITY, SHARED, requires_parity, requires_shared
from ctxeval.errors import AdapterError
from ctxeval.reading import adapters
from ctxeval.reading.inputs import list_inputs

EXPECTED = [  # (pattern on the path relative to ../shared, format or None for "not a trajectory")
    (r"/acr_gpt4-0125__acr-run-1$", "autocoderover"),
    (r"/mini-swe-agent_[\d.]+_[\w-]+\.traj\.json$", "mini-swe-agent"),
    (r"/moatless0\.4_.*\.trajectory\.json$", "moatless"),
    (r"/moatless_\d+_\w+\.json$", "moatless"),
    (r"/openhands_v0\.15\.0_claude35__llm_completions$", "openhands-completions"),
    (r"/openhands_v0\.15\.0_claude35__infer\.log$", None),
    (r"/swe-agent_0\.x_.*\.traj$", "swe-agent"),
    (r"^corpus/swe-agent-1\.x/.*\.traj$", "swe-agent"),
    (r"\.checkpoints\.jsonl$", "sweagent-checkpoints"),
    (r"/agentless_v1_gpt4o__loc_outputs\.jsonl$", "agentless"),
    (r"/openhands_output\.jsonl$", "openhands"),
    (r"/claude_sample_session\.jsonl$", "claude-code"),
    (r"/sample_codex_session\.jsonl$", "codex"),
    (r"^parity/trajs/.*/output\.jsonl$", "openhands"),
    (r"^parity/trajs/.*\.traj\.json$", "mini-swe-agent"),
    (r"^parity/trajs/.*_traj\.json$", "agentless-traj"),
    (r"^parity/trajs/.*\.log$", "prometheus"),
    (r"^parity/trajs/.*\.context\.json$", "sweagent-context-json"),
    (r"^parity/trajs/.*\.patch_context\.txt$", "sweagent-patch-context-txt"),
    (r"^parity/trajs/.*/(pred\.json|preds\.jsonl)$", "contextbench-pred"),
    (r"(gold\.json|MANIFEST\.md|\.parquet|\.patch|\.report\.json|final_report\.json"
     r"|swe-bench-lite-test\.json)$", None),
]


def expected_format(rel: str) -> str | None:
    for pattern, fmt in EXPECTED:
        if re.search(pattern, rel):
            return fmt
    raise AssertionError(f"no expectation written for {rel}")


def detected(path) -> str | None:
    try:
        return adapters.detect(path).FORMAT
    except AdapterError:
        return None


def inputs_under(root):
    return [item[0] for item in list_inputs([root])]


@requires_shared
def test_every_corpus_input_goes_to_its_adapter():
    paths = inputs_under(CORPUS)
    assert len(paths) >= 50
    wrong = {str(p.relative_to(SHARED)): (detected(p), expected_format(
        p.relative_to(SHARED).as_posix())) for p in paths}
    wrong = {k: v for k, v in wrong.items() if v[0] != v[1]}
    assert wrong == {}


@requires_parity
def test_every_parity_trajectory_goes_to_its_adapter():
    paths = inputs_under(PARITY / "trajs")
    assert len(paths) == 42
    for p in paths:
        rel = p.relative_to(SHARED).as_posix()
        assert detected(p) == expected_format(rel), rel


@pytest.mark.parametrize("fmt", adapters.formats())
def test_every_adapter_rejects_an_empty_file(tmp_path, fmt):
    f = tmp_path / "empty.json"
    f.write_bytes(b"")
    assert not adapters.get(fmt).detect(f, b"")


def _corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in inputs_under(CORPUS) if p.is_file() and p.stat().st_size < 4 << 20)


@requires_shared
@pytest.mark.parametrize("fmt", adapters.formats())
def test_wrong_format_and_truncated_inputs_raise_only_adapter_errors(tmp_path, fmt):
    """Every corpus file, whole and cut in half, forced through every adapter."""
    from ctxeval.reading.adapters import ReadOptions

    mod = adapters.get(fmt)
    for preset in ("strict", "contextbench"):
        opts = ReadOptions(preset=preset)
        for src in _corpus_files():
            data = src.read_bytes()
            cut = tmp_path / src.name
            cut.write_bytes(data[: len(data) // 2])
            for path in (src, cut):
                with contextlib.suppress(AdapterError):
                    mod.read(path, opts)


NEW_FORMAT_FIXTURES = {  # fixture input (relative to fixtures/adapters) -> its format
    "atif/claude-code": "atif",
    "atif/terminus-2": "atif",
    "atif/openhands": "atif",
    "atif/django__django-11099__Ab3dE5f/agent": "atif",
    "atif/claude-code-mcp__Qm7Xa2c/agent": "atif",  # its claude-code.txt is the same run
    "openhands-v1/9b1f4c2ad3e84f0c8a7e5d6b4c3a2f10": "openhands-v1",
    # the 2026 CLI agents (issue 21)
    "codex/rollout-2025-01-01T00-00-00-x.jsonl": "codex",
    "codex/rollout-2025-12-15T10-00-00-019b2a11.jsonl": "codex",
    "codex/rollout-2026-06-10T09-00-00-019e9a7c.jsonl": "codex",
    "codex-exec/codex-exec.jsonl": "codex-exec",
    "codex-exec/codex-exec-parallel.jsonl": "codex-exec",
    "gemini-cli/chat-share-calc.json": "gemini-cli",
    "gemini-cli/checkpoint-calc.json": "gemini-cli",
    "gemini-cli/session-2025-10-16T08-00-7d1e2f30.json": "gemini-cli",
    "gemini-cli/session-2026-08-20T10-00-s1-0c6f.jsonl": "gemini-cli",
    "opencode/export-ses_1f2e3d4c5b6aXyZ0123456789.json": "opencode",
    "opencode/opencode-run.jsonl": "opencode",
    "opencode/data": "opencode",  # the data directory holding storage/: one input
}
_FIXTURE_DIRS = ("atif", "openhands-v1", "codex", "codex-exec", "gemini-cli", "opencode")


def test_new_format_fixtures_go_to_their_adapter():
    from conftest import FIXTURES

    root = FIXTURES / "adapters"
    assert {k: detected(root / k) for k in NEW_FORMAT_FIXTURES} == NEW_FORMAT_FIXTURES
    # their inputs, listed as a user's folder would be, are those and nothing else
    listed = [p for d in _FIXTURE_DIRS for p in inputs_under(root / d)]
    assert sorted(p.relative_to(root).as_posix() for p in listed if detected(p)) == \
        sorted(NEW_FORMAT_FIXTURES)


@pytest.mark.parametrize("fmt", adapters.formats())
def test_new_format_fixture_files_forced_through_every_adapter(tmp_path, fmt):
    """Every file of the ATIF, OpenHands V1 and 2026 CLI agents' fixtures, whole and cut in half,
    forced through every adapter: an AdapterError or a result, never anything else."""
    from conftest import FIXTURES
    from ctxeval.reading.adapters import ReadOptions

    mod = adapters.get(fmt)
    files = sorted(p for d in _FIXTURE_DIRS for ext in ("*.json", "*.jsonl")
                   for p in (FIXTURES / "adapters" / d).rglob(ext))
    assert len(files) > 20
    for preset in ("strict", "contextbench"):
        for src in files:
            data = src.read_bytes()
            cut = tmp_path / src.name
            cut.write_bytes(data[: len(data) // 2])
            for path in (src, cut):
                with contextlib.suppress(AdapterError):
                    mod.read(path, ReadOptions(preset=preset))


def test_the_registry_lists_every_adapter_module_in_detection_order():
    """``REGISTRY`` is written out (detection imports an adapter only when it reaches it): it
    must name every module of the package that is an adapter, with its ``FORMAT``, ordered by
    ``PRIORITY`` and then format, as discovering the modules would order them."""
    import importlib
    import pkgutil

    found = []
    for info in pkgutil.iter_modules(adapters.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{adapters.__name__}.{info.name}")
        if hasattr(mod, "FORMAT") and hasattr(mod, "read") and hasattr(mod, "detect"):
            found.append((getattr(mod, "PRIORITY", 100), mod.FORMAT, info.name))
    assert len(found) > 20  # the walk sees the adapters
    assert list(adapters.REGISTRY) == [(name, fmt) for _p, fmt, name in sorted(found)]


def test_detecting_a_neutral_file_imports_no_agent_adapter(tmp_path):
    """A neutral trajectory is detected before any agent's format is imported (a fresh
    interpreter: this one has imported them all)."""
    from conftest import FIXTURES, python_lines

    runs = FIXTURES / "example" / "runs" / "agent-a.jsonl"
    script = ("import json, sys\n"
              "from pathlib import Path\n"
              "from ctxeval.reading.adapters import detect\n"
              f"print(detect(Path({str(runs)!r})).FORMAT)\n"
              "print(json.dumps(sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
              "                        if m.startswith('ctxeval.reading.adapters.')\n"
              "                        and not m.rsplit('.', 1)[1].startswith('_'))))\n")
    out = python_lines(script)
    assert out[0] == "neutral"
    imported = json.loads(out[1])
    assert "neutral" in imported and "swe_agent" not in imported and "atif" not in imported
