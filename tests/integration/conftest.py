"""Helpers for integration tests: scenarios run for real against real sockets on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import Summary


def make_scenario(**sections: Any) -> Scenario:
    base: dict[str, Any] = {
        "name": "it",
        "target": {"url": "mock", "api": "openai-chat", "model": "m"},
        "workload": {
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": 16},
        },
        "load": {"mode": "concurrency", "concurrency": [1], "requests_per_step": 4},
    }
    load = sections.get("load")
    if isinstance(load, dict) and (
        load.get("mode", "concurrency") != "concurrency"
        or ("sweep" in load and load["sweep"] == "auto")
    ):
        # the concurrency base does not fit another mode; a trace is replayed whole
        base["load"] = {} if load.get("mode") == "trace" else {"requests_per_step": 4}
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return Scenario.model_validate(base)


class Runner:
    """Runs a scenario into a fresh results directory; returns summary, records, dir.

    The reports (steps.csv, report.md, report.html, plots) are written only when a
    test asks for them with ``reports=True``: a run's summary.json and records.jsonl
    are whole without them, and rendering them is a quarter of an integration run."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.count = 0

    def __call__(
        self, scenario: Scenario, *, reports: bool = False
    ) -> tuple[Summary, list[Record], Path]:
        self.count += 1
        out = self.tmp_path / f"run{self.count}"
        summary = run_scenario(scenario, RunOptions(out_dir=out, quiet=True, reports=reports))
        return summary, list(read_records(out / "records.jsonl")), out


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    """Runs a scenario into a fresh results directory (see :class:`Runner`)."""
    return Runner(tmp_path)


@pytest.fixture
def scenario() -> Callable[..., Scenario]:
    """Builds a scenario: the base below with each given section merged in."""
    return make_scenario


def most_in_flight(records: list[Record]) -> int:
    """The most requests in flight at once, from the records' send and end times."""
    events = sorted([(r.start_ns, 1) for r in records] + [(r.end_ns, -1) for r in records])
    now = most = 0
    for _, change in events:
        now += change
        most = max(most, now)
    return most


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found
