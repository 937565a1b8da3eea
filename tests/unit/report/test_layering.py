"""Outputs see only the summary side; the CLI's import of the commands stays light.

The modules checked are every ``loadgen/report/*.py`` on disk, so a new module
is checked without being listed.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[3] / "loadgen" / "report"
#: what any module of loadgen.report may import from loadgen
ALLOWED = (
    "loadgen.summary",
    "loadgen.records",
    "loadgen.errors",
    "loadgen.report",
    "loadgen.vocab",  # metric names, labels, statistics
    "loadgen.redact",  # every output passes through it (files.py: scenario.yaml)
    "loadgen.scenario.models",  # the resolved scenario, typed
    "loadgen.metrics.latency",  # the per-request formulas, for CDFs and the bootstrap
    "loadgen.metrics.profiles",  # the metrics profile's formulas, likewise
)
#: a module's imports beyond ALLOWED
EXTRA = {"progress": ("loadgen.clock",)}  # the live run's progress line reads the clock


def _modules() -> list[str]:
    return sorted(p.stem for p in REPORT.glob("*.py") if p.stem != "__init__")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {n for n in found if n.split(".")[0] == "loadgen"}


def test_outputs_import_only_the_summary_side() -> None:
    assert {"writer", "samples", "bins", "files"} <= set(_modules())  # the glob found them
    for name in _modules():
        allowed = ALLOWED + EXTRA.get(name, ())
        for module in _imports(REPORT / f"{name}.py"):
            assert module.startswith(allowed), f"{name}.py imports {module}"


def test_public_names_exist() -> None:
    for name in _modules():
        module = importlib.import_module(f"loadgen.report.{name}")
        for public in module.__all__:
            assert hasattr(module, public), f"{name}.{public}"


def test_cli_help_does_not_import_matplotlib_or_numpy() -> None:
    heavy = ("matplotlib", "numpy", "loadgen.report.writer")
    code = f"import sys, loadgen.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
