"""A run killed at a few points (kill -9, SIGTERM) always leaves loadable results.

Each case starts ``loadgen run`` against the built-in mock, waits for a point
in the run (the first records on disk; the first step's summary written), kills
it, and checks that ``loadgen report DIR`` succeeds afterwards (rebuilding
summary.json from the records when the kill came before the first step ended)
and that no mock child outlives a kill -9.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.records import read_records
from loadgen.results.files import read_summary

from .conftest import children

ROOT = Path(__file__).resolve().parents[2]

# step 0: 40 requests of ~0.2 s at 4 streams (~2 s); step 1: the same at 2 streams (~4 s)
SCENARIO = """
name: killed
target:
  url: mock
  model: m
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "10", "--itl-ms", "10"]}
workload:
  prompt_tokens: {dist: fixed, value: 16}
  output_tokens: {dist: fixed, value: 20}
load: {concurrency: [4, 2], requests_per_step: 40}
"""

WAIT_S = 60  # for a point in the run, on a busy machine


def wait_for(what: str, ready: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if ready():
            return
        assert proc.poll() is None, f"the run ended (exit {proc.returncode}) before {what}"
        time.sleep(0.02)
    raise AssertionError(f"no {what} within {WAIT_S} s")


def gone(pid: int) -> bool:
    """Exited (or a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def has_rows(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def first_step_done(out: Path) -> bool:
    return (out / "summary.json").is_file()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("sig", "point"),
    [
        (signal.SIGKILL, "records"),  # during step 0: no summary.json yet, it is rebuilt
        (signal.SIGKILL, "step"),  # during step 1: summary.json of step 0 on disk
        (signal.SIGTERM, "records"),  # handled like Ctrl-C: exit 143, partial summary
    ],
)
def test_a_killed_run_leaves_loadable_results(tmp_path: Path, sig: int, point: str) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "loadgen", "run", str(scenario), "--out", str(out), "-q"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    mocks: list[int] = []
    try:
        wait_for("records on disk", lambda: has_rows(out / "records.jsonl"), proc)
        if point == "step":
            wait_for("the first step's summary", lambda: first_step_done(out), proc)
            time.sleep(0.3)
        mocks = [p for p in children(proc.pid) if b"loadgen.mock" in _cmdline(p)]
        assert len(mocks) == 1
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if sig == signal.SIGTERM:
        assert proc.returncode == 143, err
        assert "interrupted: partial results in" in err
        summary = read_summary(out / "summary.json")
        assert summary.interrupted and summary.steps[-1].interrupted
    else:
        assert proc.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while not all(gone(p) for p in mocks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(gone(p) for p in mocks), "the mock outlived loadgen"

    rows = list(read_records(out / "records.jsonl"))
    assert rows
    rebuilt = not (out / "summary.json").exists()
    report = subprocess.run(
        [sys.executable, "-m", "loadgen", "report", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert report.returncode == 0, report.stderr
    assert ("rebuilt it from records.jsonl" in report.stderr) == rebuilt
    assert rebuilt == (sig == signal.SIGKILL and point == "records")
    summary = read_summary(out / "summary.json")
    assert summary.steps and summary.interrupted == (point == "records")
    assert sum(s.requests.total for s in summary.steps) <= len(rows)
    assert (out / "report.md").is_file() and (out / "steps.csv").is_file()


def test_report_and_compare_skip_damaged_rows_with_one_line(tmp_path: Path) -> None:
    """Rows of the wrong shape and torn lines are counted once on stderr, never a traceback."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        SCENARIO.replace("[4, 2], requests_per_step: 40", "[4], requests_per_step: 8")
    )
    out = tmp_path / "out"
    run = [sys.executable, "-m", "loadgen", "run", str(scenario), "--out", str(out), "-q"]
    assert subprocess.run(run, cwd=ROOT, capture_output=True, timeout=WAIT_S).returncode == 0
    with (out / "records.jsonl").open("ab") as fh:
        fh.write(b'[1, 2]\n{"step": "0", "id": 1}\n{"step": 0, "id": 3, "warm')
    for args in (
        ["report", str(out)],
        ["compare", str(out), str(out), "--out", str(tmp_path / "c")],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "loadgen", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        lines = [ln for ln in done.stderr.splitlines() if "damaged row" in ln]
        said = f"warning: {out / 'records.jsonl'}: skipped 3 damaged row(s)"
        assert len(lines) == 1 and lines[0].startswith(said), done.stderr


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
