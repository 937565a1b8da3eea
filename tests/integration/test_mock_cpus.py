"""The built-in mock takes a CPU of its own and gives loadgen's back when it stops.

loadgen narrows its own affinity to leave the mock one CPU. Before this was
undone, a second run in the same process (``loadgen run --repeat``, a library
caller, the test suite) found one CPU left, did not split, and its mock
inherited loadgen's CPU: both shared one core, and on a busy machine the
mock's token writes lagged its own truth stamps by a scheduler slice (ITL
p99 3.7-4.0 ms off the truth instead of 0.02 ms).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from loadgen.target.mock import MockServer, start_mocks

from .conftest import Runner, make_scenario

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs CPU affinity and at least two CPUs",
)


def test_each_mock_gets_a_cpu_apart_and_loadgen_gets_its_own_back(tmp_path: Path) -> None:
    own = os.sched_getaffinity(0)
    for i in range(2):  # the second split as the first
        server = MockServer(["--ttft-ms", "1", "--itl-ms", "1"], tmp_path / f"mock{i}.log")
        with server:
            assert server.pid is not None
            mock = os.sched_getaffinity(server.pid)
            mine = os.sched_getaffinity(0)
            assert mock and mine and not (mock & mine), (mock, mine)
            assert mock | mine == own
        assert os.sched_getaffinity(0) == own


def test_replicas_share_the_split_and_the_stack_gives_it_back(tmp_path: Path) -> None:
    own = os.sched_getaffinity(0)
    target = make_scenario(target={"mock": {"replicas": 2}}).target
    for i in range(2):
        out = tmp_path / str(i)
        out.mkdir()
        with contextlib.ExitStack() as stack:
            assert len(start_mocks(target, out, stack)) == 2
            assert os.sched_getaffinity(0) != own  # split while the mocks run
        assert os.sched_getaffinity(0) == own


def test_a_run_leaves_loadgens_cpus_as_it_found_them(run: Runner) -> None:
    own = os.sched_getaffinity(0)
    run(make_scenario())
    assert os.sched_getaffinity(0) == own
    summary, _records, _out = run(make_scenario())
    assert summary.steps[0].requests.ok == 4
    assert os.sched_getaffinity(0) == own
