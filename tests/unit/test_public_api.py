"""The public door: ``loadgen.__all__`` is pinned, and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import loadgen

EXPECTED = [
    "LoadgenError",
    "Record",
    "RunOptions",
    "Scenario",
    "ScenarioError",
    "StepSummary",
    "Summary",
    "TargetError",
    "__version__",
    "load_scenario",
    "read_records",
    "read_summary",
    "run_scenario",
    "write_reports",
]


def test_all_is_pinned() -> None:
    assert sorted(loadgen.__all__) == EXPECTED
    assert set(loadgen._EXPORTS) | {"__version__"} == set(EXPECTED)


def test_every_name_resolves() -> None:
    for name in loadgen.__all__:
        assert getattr(loadgen, name) is not None


def test_import_stays_light() -> None:
    code = "import sys, loadgen; print('numpy' in sys.modules, 'aiohttp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
