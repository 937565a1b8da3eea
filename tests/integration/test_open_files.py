"""A run whose concurrency needs more open files than the limit: raised, or refused up front.

Probe (issue #20): ``ulimit -n 256``, then ``loadgen run`` at concurrency 400
against the built-in mock. The old code started the step: 559 of 800 requests
failed ``connect_error: [Errno 24] Too many open files`` with the hint "is the
server running", the dead-target watch stopped the run, exit 3 (or, in another
interleaving, numpy's lazy import in the loop monitor failed EMFILE: a
traceback and no summary). Now a hard limit that allows it is used (the run
completes, every request ok), and one that does not refuses the run before
anything starts: one line with the ``ulimit -n`` to run, exit 2.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.execute.open_files import OPEN_FILES_HEADROOM, OPEN_FILES_MARGIN

SCENARIO = """
name: files
target: {url: mock, mock: {args: ['--ttft-ms', '1', '--itl-ms', '1']}}
workload:
  prompt_tokens: {dist: fixed, value: 8}
  output_tokens: {dist: fixed, value: 2}
load: {mode: concurrency, concurrency: [400], requests_per_step: 800}
"""


def run_under(limit: tuple[int, int], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    return subprocess.run(
        [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=240,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, limit),
        check=False,
    )


def test_a_hard_limit_too_low_refuses_the_run_with_the_ulimit_to_run(tmp_path: Path) -> None:
    proc = run_under((256, 256), tmp_path)
    err = proc.stderr.strip()
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    want = 400 + OPEN_FILES_MARGIN + 400 // OPEN_FILES_HEADROOM
    assert f"`ulimit -n {want}`" in err and "load.concurrency 400" in err
    assert not (tmp_path / "out").exists()  # refused before anything started


def test_a_soft_limit_too_low_is_raised_and_every_request_succeeds(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 400 + OPEN_FILES_MARGIN:
        pytest.skip(f"the hard limit here ({hard}) is too low to raise to")
    proc = run_under((256, hard), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Too many open files" not in proc.stderr and "Traceback" not in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (step,) = summary["steps"]
    assert step["requests"]["ok"] == 800 and not step["requests"]["errors"]
