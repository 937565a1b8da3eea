"""Ctrl-C (or SIGTERM) in the middle of a step still leaves a valid partial report."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from loadgen.results.files import read_summary

SCENARIO = """
name: interrupted
target:
  url: mock
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "20", "--itl-ms", "20"]}
workload: {output_tokens: {dist: fixed, value: 50}}
load: {concurrency: [4, 8], requests_per_step: 1000}
"""


@pytest.mark.parametrize(("sig", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_leaves_a_valid_partial_summary(tmp_path: Path, sig: int, exit_code: int) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out), "--quiet"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # wait until some requests have finished
            rec = out / "records.jsonl"
            if rec.exists() and rec.stat().st_size > 0:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(sig)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == exit_code
    assert proc.stderr is not None
    assert "interrupted: partial results in" in proc.stderr.read()
    summary = read_summary(out / "summary.json")
    assert summary.interrupted
    assert len(summary.steps) == 1
    step = summary.steps[0]
    assert step.interrupted
    rows = [orjson.loads(line) for line in (out / "records.jsonl").read_bytes().splitlines()]
    cancelled = [r for r in rows if r["error_kind"] == "cancelled"]
    finished = [r for r in rows if r["ok"]]
    assert len(cancelled) == 4  # the four workers' requests in flight
    assert step.requests.cancelled == 4
    assert step.requests.ok == len(finished) > 0
    assert step.requests.failed == 0  # cut short by the user, not failures of the server
    assert step.ttft_ms.count == len(finished)
