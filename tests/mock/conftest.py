"""Fixtures: mock servers as child processes on ephemeral ports, always stopped."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the helper module next to this file

from mockhttp import MockProc


@pytest.fixture
def start_mock(tmp_path: Path) -> Iterator[Callable[..., MockProc]]:
    """Starts ``python -m loadgen.mock --port 0 ARGS``; stops every one at teardown."""
    procs: list[MockProc] = []

    def start(*args: str) -> MockProc:
        proc = MockProc(list(args), tmp_path / f"mock{len(procs)}.err")
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.stop()
    for proc in procs:  # the server must never log a traceback, whatever the test did
        assert "Traceback" not in proc.log() and "Exception in" not in proc.log()


@pytest.fixture(scope="module")
def fast_mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockProc]:
    """Fixed mode without delays, shared by the format tests of a module."""
    path = tmp_path_factory.mktemp("fast")
    proc = MockProc(["--ttft-ms", "0", "--itl-ms", "0", "--seed", "3"], path / "mock.err")
    yield proc
    proc.stop()
    assert "Traceback" not in proc.log() and "Exception in" not in proc.log()
