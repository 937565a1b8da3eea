"""The open-file limit is checked against the planned load before the run.

Probes (issue #20): under ``ulimit -n 256`` a run at concurrency 400 failed
mid-step: connects failing EMFILE (559 ``connect_error`` "is the server
running"), or a traceback from numpy importing ``numpy.ma`` on its first
``percentile`` in the loop monitor, with no summary. At concurrency 100,000 the
log filled with 80,015 EMFILE errors. :func:`ensure_open_files` raises the soft
limit up to the hard one where that is enough, and otherwise refuses the run in
one line with the ``ulimit -n`` to run. (The run itself under a real limit is in
tests/integration/test_open_files.py.)
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from loadgen.errors import ScenarioError
from loadgen.execute import open_files
from loadgen.execute.open_files import (
    OPEN_FILES_HEADROOM,
    OPEN_FILES_MARGIN,
    ensure_open_files,
    planned_in_flight,
)
from loadgen.scenario.models import Scenario

INF = open_files.resource.RLIM_INFINITY


def scenario(load: dict[str, Any], **target: Any) -> Scenario:
    return Scenario.model_validate(
        {"target": {"url": "http://127.0.0.1:9", "model": "m", **target}, "load": load}
    )


class Limits:
    """A stand-in for RLIMIT_NOFILE: what it holds and what was set."""

    def __init__(self, soft: int, hard: int, *, refuse: bool = False) -> None:
        self.soft, self.hard, self.refuse = soft, hard, refuse
        self.set: list[tuple[int, int]] = []

    def getrlimit(self, which: int) -> tuple[int, int]:
        return self.soft, self.hard

    def setrlimit(self, which: int, limits: tuple[int, int]) -> None:
        if self.refuse:
            raise ValueError("not allowed")
        self.set.append(limits)
        self.soft = limits[0]


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(soft: int, hard: int, **kw: Any) -> Limits:
        lim = Limits(soft, hard, **kw)
        monkeypatch.setattr(open_files.resource, "getrlimit", lim.getrlimit)
        monkeypatch.setattr(open_files.resource, "setrlimit", lim.setrlimit)
        return lim

    return make


CLOSED = {"concurrency": [1, 400], "requests_per_step": 800}
NEED = 400 + OPEN_FILES_MARGIN  # the sweep's largest concurrency and loadgen's own
WANT = NEED + 400 // OPEN_FILES_HEADROOM  # and room for connections being replaced


def test_the_soft_limit_is_raised_when_the_hard_one_allows(limits: Any) -> None:
    lim = limits(256, 4096)
    ensure_open_files(scenario(CLOSED), workers=1)
    assert lim.set == [(WANT, 4096)]


def test_the_headroom_gives_way_to_a_hard_limit_that_fits_the_need(limits: Any) -> None:
    lim = limits(256, NEED + 10)
    ensure_open_files(scenario(CLOSED), workers=1)
    assert lim.set == [(NEED + 10, NEED + 10)]


def test_a_limit_that_suffices_is_left_alone(limits: Any) -> None:
    lim = limits(1024, 1024)
    ensure_open_files(scenario(CLOSED), workers=1)
    assert lim.set == []


def test_above_the_hard_limit_the_run_is_refused_with_the_ulimit_to_run(limits: Any) -> None:
    limits(256, 256)
    with pytest.raises(ScenarioError) as exc:
        ensure_open_files(scenario(CLOSED), workers=1)
    line = str(exc.value)
    assert line.startswith("load.concurrency 400: ") and "\n" not in line
    assert f"`ulimit -n {WANT}`" in line and "256" in line and f"about {NEED} open" in line
    assert f"--ulimit nofile={WANT}:{WANT}" in line  # where root cannot go past it: a container


def test_a_system_that_refuses_the_raise_refuses_the_run(limits: Any) -> None:
    limits(256, 100_000, refuse=True)
    with pytest.raises(ScenarioError, match="ulimit -n") as exc:
        ensure_open_files(scenario(CLOSED), workers=1)
    assert "the system refused" in str(exc.value) and "hard limit" not in str(exc.value)


def test_workers_share_the_connections_but_the_mock_holds_all_of_its_own(limits: Any) -> None:
    lim = limits(256, 100_000)
    ensure_open_files(scenario(CLOSED), workers=4)  # 100 a worker: fits
    assert lim.set == []
    mock = Scenario.model_validate({"target": {"url": "mock"}, "load": CLOSED})
    ensure_open_files(mock, workers=4)  # the one mock answers all 400
    assert lim.set == [(WANT, 100_000)]


def test_an_uncapped_open_loop_gets_what_the_hard_limit_allows(limits: Any) -> None:
    lim = limits(256, 8192)
    ensure_open_files(scenario({"mode": "rate", "rate": [5], "requests_per_step": 10}), 1)
    assert lim.set == [(8192, 8192)]
    lim = limits(256, INF)
    ensure_open_files(scenario({"mode": "rate", "rate": [5], "requests_per_step": 10}), 1)
    assert lim.set == [(open_files.MAX_OPEN_FILES, INF)]


@pytest.mark.parametrize(
    ("load", "planned"),
    [
        (CLOSED, (400, "load.concurrency")),
        ({"mode": "rate", "rate": [5], "requests_per_step": 9}, None),
        (
            {"mode": "rate", "rate": [5], "max_concurrency": 7, "requests_per_step": 9},
            (7, "load.max_concurrency"),
        ),
        (
            {"mode": "rate", "sweep": "auto", "max_concurrency": 7, "requests_per_step": 9},
            (64, "load.max_concurrency"),  # the saturation probe runs at probe_concurrency
        ),
        (
            {"mode": "offline", "requests_per_step": 900},
            (900, "load.requests_per_step (mode offline sends them at once)"),
        ),
        (
            {"mode": "offline", "requests_per_step": 900, "max_concurrency": [8, 32]},
            (32, "load.max_concurrency"),
        ),
    ],
)
def test_planned_in_flight(load: dict[str, Any], planned: tuple[int, str] | None) -> None:
    assert planned_in_flight(scenario(load)) == planned


def test_the_loop_monitor_imports_nothing_mid_run() -> None:
    """np.percentile imports numpy.ma on its first call: at EMFILE, a traceback."""
    code = """
import sys
from loadgen.execute.monitor import LoopMonitor
before = set(sys.modules)
m = LoopMonitor()
m.lags_ns, m.samples = [1, 2, 3], [(5, 2)]
m.health([1, 2, 3], read_lag=(3, 2.0, 3))
m.mean_in_flight(0, 10)
print(sorted(set(sys.modules) - before))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stdout
