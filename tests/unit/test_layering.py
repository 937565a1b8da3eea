"""Imports flow one way: scenario -> workload -> client -> records -> metrics -> report.

Read from the source with ``ast`` (nothing is imported), so the rule holds for
lazy imports inside functions too. The mock and the agent stand apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "loadgen"

#: package -> the only loadgen packages it may import (the mock and agent: none)
ALLOWED: dict[str, set[str]] = {
    "clock": set(),
    "errors": set(),
    "vocab": set(),
    "redact": set(),
    "summary": {"vocab", "redact"},
    "scenario": {"errors", "redact"},
    "workload": {"scenario", "errors"},
    "records": {"errors"},
    "client": {"clock", "records", "workload", "errors"},
    "metrics": {"clock", "records", "scenario", "summary", "vocab"},
    "mock": set(),
    "agent": set(),
}


def loadgen_imports(path: Path) -> set[str]:
    """The first component after ``loadgen.`` of every loadgen import in ``path``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "loadgen" and len(parts) > 1:
                found.add(parts[1])
    return found


def sources(part: str) -> list[Path]:
    target = PKG / part
    return sorted(target.rglob("*.py")) if target.is_dir() else [target.with_suffix(".py")]


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_imports_flow_one_way(part: str) -> None:
    files = sources(part)
    assert files and all(f.exists() for f in files)
    allowed = ALLOWED[part] | {part}
    bad = {
        f"{f.relative_to(PKG)} imports loadgen.{m}"
        for f in files
        for m in loadgen_imports(f) - allowed
    }
    assert not bad


def test_the_checker_sees_lazy_imports(tmp_path: Path) -> None:
    src = tmp_path / "x.py"
    src.write_text("def f():\n    from loadgen.run import run_scenario\n    import loadgen.mock\n")
    assert loadgen_imports(src) == {"runner", "mock"}
