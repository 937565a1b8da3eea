"""A media helper that dies mid-run stops the run with one line naming it (exit 1).

``loadgen run`` of a closed loop with synthetic images against the mock: once
records are on disk, the helper process (a child of the run, ``python -m
loadgen.execute.media_helper``) is killed. The run must end at once with one
stderr line that names the helper, its pid and the signal, exit code 1, no
traceback; the records written so far stay on disk, and none of them is a
``client_error`` (the requests were never sent without their images).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.records import read_records

from .conftest import children
from .test_nothing_lost import ROOT, WAIT_S, has_rows, wait_for

SCENARIO = """
name: helper-dies
target:
  url: mock
  model: m
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "10", "--itl-ms", "10"]}
workload:
  prompt_tokens: {dist: fixed, value: 16}
  output_tokens: {dist: fixed, value: 20}
  images: {count: {dist: fixed, value: 1}, width: {dist: fixed, value: 64},
           height: {dist: fixed, value: 48}}
load: {concurrency: [2], requests_per_step: 2000}
"""


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_media_helper_stops_the_run_with_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "loadgen", "run", str(scenario), "--out", str(out), "-q"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for("records on disk", lambda: has_rows(out / "records.jsonl"), proc)
        helpers = [p for p in children(proc.pid) if b"loadgen.execute.media_helper" in _cmdline(p)]
        assert len(helpers) == 1, helpers
        helper = helpers[0]
        os.kill(helper, signal.SIGKILL)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0] == (
        f"loadgen: the media helper process (pid {helper}, making the run's synthetic images "
        "and audio) died during the run (killed by SIGKILL)"
    )
    rows = list(read_records(out / "records.jsonl"))
    assert rows and len(rows) < 2000  # stopped, not run to the end
    assert not [r for r in rows if r.error_kind == "client_error"]
