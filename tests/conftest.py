"""Fixtures shared by the test folders: a real agent process on an ephemeral port, by PID."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
Spawn = Callable[..., tuple[subprocess.Popen[str], str]]


def spawn_agent(*args: str, env: dict[str, str] | None = None, timeout_s: float = 15.0):
    """Start ``python -m loadgen.agent --port 0 ARGS``; return (process, base URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadgen.agent", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("loadgen-agent listening on "):
        stop_agent(proc)
        pytest.fail(f"agent did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, line.strip().rsplit(" ", 1)[1]


def stop_agent(proc: subprocess.Popen[str]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return proc.returncode


@pytest.fixture
def stop() -> Callable[[subprocess.Popen[str]], int]:
    """Stop an agent by PID (SIGTERM, then SIGKILL); returns its exit code."""
    return stop_agent


@pytest.fixture
def agent_proc() -> Iterator[Spawn]:
    started: list[subprocess.Popen[str]] = []

    def spawn(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
        proc, url = spawn_agent(*args, env=env)
        started.append(proc)
        return proc, url

    yield spawn
    for proc in started:
        stop_agent(proc)
