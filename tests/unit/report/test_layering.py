"""Outputs see only the summary (and records); the CLI's import of the commands stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[3] / "loadgen" / "report"
ALLOWED = (
    "loadgen.summary",
    "loadgen.records",
    "loadgen.errors",
    "loadgen.metrics.latency",  # the per-request formulas, for CDFs and the bootstrap
    "loadgen.report",
    "loadgen.scenario.models",  # files.py: the resolved scenario
    "loadgen.metrics.profiles",  # the metrics profile's formulas, for CDFs and the bootstrap
    "loadgen.vocab",  # metric names, labels, statistics
)
NEW = ("samples", "csv_out", "plots", "figures", "markdown", "html", "writer", "gate",
       "compare", "commands", "console", "facts", "blocks", "step_doc", "endpoints")  # fmt: skip


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {n for n in found if n.split(".")[0] == "loadgen"}


def test_outputs_import_only_the_summary_side() -> None:
    for name in NEW:
        for module in _imports(REPORT / f"{name}.py"):
            assert module.startswith(ALLOWED), f"{name}.py imports {module}"


def test_public_names_exist() -> None:
    import importlib

    for name in NEW:
        module = importlib.import_module(f"loadgen.report.{name}")
        for public in module.__all__:
            assert hasattr(module, public), f"{name}.{public}"


def test_cli_help_does_not_import_matplotlib_or_numpy() -> None:
    heavy = ("matplotlib", "numpy", "loadgen.report.writer")
    code = f"import sys, loadgen.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
