"""Imports stay one-way: the agent imports nothing from loadgen but the clihelp and
bearer leaves (standard library only: its --help laid out as click's, the token
check it shares with loadgen's metrics exporter); telemetry only
loadgen.clock, loadgen.summary (the pydantic schema its step stats fill, which
imports nothing of the measuring side), loadgen.redact (a standard-library-only
leaf that keeps secrets out of what is written) and loadgen.control (the bounded
client every poll and scrape goes through, which imports only redact)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "loadgen"
TELEMETRY_MAY = (
    *("loadgen.telemetry", "loadgen.clock", "loadgen.summary"),
    *("loadgen.redact", "loadgen.control"),
)


def _loadgen_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "loadgen"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "loadgen":
            found |= {f"loadgen.{a.name}" for a in node.names}  # from loadgen import clock
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module} if node.module.split(".")[0] == "loadgen" else set()
    return found


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("gpu_agent", ("loadgen.gpu_agent", "loadgen.clihelp", "loadgen.bearer")),
        ("telemetry", TELEMETRY_MAY),
    ],
)
def test_imports(package: str, allowed: tuple[str, ...]) -> None:
    for path in sorted((PKG / package).glob("*.py")):
        for name in _loadgen_imports(path):
            assert name.startswith(allowed), f"{path.name} imports {name}"


def test_public_api_is_pinned() -> None:
    import loadgen.gpu_agent
    import loadgen.telemetry

    assert loadgen.gpu_agent.__all__ == ["build_parser", "main"]
    assert "TelemetryCollector" in loadgen.telemetry.__all__
    for name in loadgen.telemetry.__all__:
        assert hasattr(loadgen.telemetry, name)
