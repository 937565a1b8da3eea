"""The outputs' public names exist; the CLI's import of the commands stays light.

What report may import is held by the package-wide layering test
(tests/unit/test_layering.py: ALLOWED and NARROW); the modules checked here
are every ``loadgen/report/**/*.py`` on disk, so a new module is checked without
being listed.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[3] / "loadgen" / "report"


def _modules() -> list[str]:
    return sorted(
        ".".join(p.relative_to(REPORT).with_suffix("").parts)
        for p in REPORT.rglob("*.py")
        if p.stem != "__init__"
    )


def test_public_names_exist() -> None:
    for name in _modules():
        module = importlib.import_module(f"loadgen.report.{name}")
        for public in module.__all__:
            assert hasattr(module, public), f"{name}.{public}"


def test_cli_help_does_not_import_matplotlib_or_numpy() -> None:
    heavy = ("matplotlib", "numpy", "loadgen.report.documents.writer")
    code = f"import sys, loadgen.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
