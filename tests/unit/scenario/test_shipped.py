"""Every scenario shipped in scenarios/ is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.scenario import load_scenario

SCENARIOS = sorted((Path(__file__).parents[3] / "scenarios").glob("*.yaml"))


def test_there_are_examples() -> None:
    names = {p.stem for p in SCENARIOS}
    assert {"demo", "chat-sla-vllm", "poisson-rate-sweep", "fp16-vs-int8"} <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenario_is_valid(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.name == path.stem
    assert path.read_text().startswith("# ")  # each is documented in its header
