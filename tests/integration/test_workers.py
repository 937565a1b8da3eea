"""load.workers: several processes send one step against the built-in mock.

The merged result must be the one process's: the same measured counts, the
same latencies (within noise) at a load one process carries, the planned
arrival schedule exactly, the concurrency never exceeded. Stopping keeps
what the workers measured; a worker that dies is reported and the run goes on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.records import read_records
from loadgen.results.files import read_summary
from loadgen.scenario import Scenario
from loadgen.workload import Workload, plan_step

from .conftest import children, most_in_flight

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

ROOT = Path(__file__).resolve().parents[2]
MOCK = {"args": ["--ttft-ms", "20", "--itl-ms", "4"]}
WORKLOAD = {
    "prompt_tokens": {"dist": "fixed", "value": 16},
    "output_tokens": {"dist": "fixed", "value": 24},
}


def test_two_workers_give_one_workers_numbers(
    run: Callable[..., tuple], scenario: Callable[..., Scenario]
) -> None:
    results = {}
    for workers in (1, 2):
        sc = scenario(
            target={"mock": MOCK, "extra_body": {"ignore_eos": True}},
            workload=WORKLOAD,
            load={"concurrency": [8], "requests_per_step": 160, "workers": workers},
        )
        summary, records, _ = run(sc)
        results[workers] = (summary, records)
    (one, _), (two, two_rows) = results[1], results[2]
    assert two.workers == 2 and one.workers == 1
    a, b = one.steps[0], two.steps[0]
    assert a.requests.ok == b.requests.ok == 160 and b.requests.failed == 0
    assert len({r.id for r in two_rows}) == len(two_rows)  # ids unique across workers
    assert most_in_flight(two_rows) == 8  # the concurrency split exactly, never exceeded
    assert b.ttft_ms.p50 == pytest.approx(a.ttft_ms.p50, abs=2.0)
    assert b.itl_ms.p50 == pytest.approx(a.itl_ms.p50, abs=0.5)
    assert b.throughput.requests_per_s == pytest.approx(a.throughput.requests_per_s, rel=0.15)
    health = b.client
    assert health.workers is not None and len(health.workers) == 2
    assert health.cpu_util_total is not None and health.cpu_util_total >= health.cpu_util
    # memory beside CPU: each process's peak during the step, and all of them together
    assert a.client.rss_peak_mib is not None and 10 < a.client.rss_peak_mib < 4096
    assert health.rss_peak_mib is not None and health.rss_peak_total_mib is not None
    assert health.rss_peak_total_mib > health.rss_peak_mib
    assert b.little is not None and not b.little.flagged


def test_workers_send_the_planned_arrival_schedule(
    run: Callable[..., tuple], scenario: Callable[..., Scenario]
) -> None:
    sc = scenario(
        target={"mock": MOCK},
        workload=WORKLOAD,
        load={"mode": "rate", "rate": [40], "requests_per_step": 120, "workers": 2},
    )
    summary, records, _ = run(sc)
    assert summary.steps[0].requests.ok == 120
    plan = plan_step(Workload.prepare(sc.workload, chat=True), sc.load, "rate", 40, 0)
    scheduled = sorted(r.scheduled_ns for r in records if r.scheduled_ns is not None)
    t0 = scheduled[0] - plan.offsets_ns[0]
    assert [s - t0 for s in scheduled] == plan.offsets_ns  # to the nanosecond
    by_index = {r.id: r.scheduled_ns for r in records}
    assert all(
        by_index[s.index] == t0 + o for s, o in zip(plan.requests, plan.offsets_ns, strict=True)
    )


SCENARIO = """
name: workers
target:
  url: mock
  model: m
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "10", "--itl-ms", "10"]}
workload:
  prompt_tokens: {dist: fixed, value: 16}
  output_tokens: {dist: fixed, value: 30}
load: {concurrency: [4, 4], requests_per_step: 60, workers: 2}
"""
WAIT_S = 60


def _workers_of(pid: int) -> list[int]:
    out = []
    for child in children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"multiprocessing" in cmdline and b"resource_tracker" not in cmdline:
            out.append(child)
    return out


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out), "-q"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + WAIT_S
    rows = out / "records.jsonl"
    while not (rows.is_file() and rows.stat().st_size > 0):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no records on disk"
        time.sleep(0.02)
    return proc, out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_every_worker_and_keeps_their_records(tmp_path: Path) -> None:
    proc, out = _start(tmp_path)
    try:
        workers = _workers_of(proc.pid)
        assert len(workers) == 2
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    summary = read_summary(out / "summary.json")
    assert summary.interrupted and summary.steps[-1].interrupted
    rows = list(read_records(out / "records.jsonl"))
    assert {r.id for r in rows if r.ok} and any(r.error_kind == "cancelled" for r in rows)
    time.sleep(0.5)
    assert not any(Path(f"/proc/{p}").exists() for p in workers), "a worker outlived the run"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_that_dies_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    proc, out = _start(tmp_path)
    try:
        workers = _workers_of(proc.pid)
        assert len(workers) == 2
        os.kill(max(workers), signal.SIGKILL)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "died during the step (killed by signal 9)" in err
    summary = read_summary(out / "summary.json")
    assert len(summary.steps) == 2
    died = [w for s in summary.steps for w in s.client.warnings if "died" in w]
    assert len(died) == 1 and "later steps run on 1" in died[0]
    assert summary.steps[1].requests.ok == 60  # the survivor carried the next step whole


RAY_SCENARIO = """
name: ray
target:
  url: mock
  model: m
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "20", "--itl-ms", "4"]}
workload:
  prompt_tokens: {dist: fixed, value: 16}
  output_tokens: {dist: fixed, value: 24}
load: {concurrency: [8], requests_per_step: 160, workers: 2}
"""


def _saturation_line(line: str) -> bool:
    """A line of loadgen's own saying a step ran with the client saturated."""
    return line.startswith("step ") or (
        line.startswith("  warning: ")
        and ("event-loop lag" in line or "read its sockets" in line or "CPU" in line)
    )


def test_ray_actors_on_a_local_cluster_match_one_process(tmp_path: Path) -> None:
    """Two Ray actors (a private local Ray instance) against the mock vs one process."""
    pytest.importorskip("ray", reason="loadgen[ray] is not installed")
    path = tmp_path / "s.yaml"
    path.write_text(RAY_SCENARIO)
    summaries = {}
    for how in ("one", "ray"):
        out = tmp_path / how
        cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out), "-q"]
        cmd += ["--ray", "local"] if how == "ray" else ["--workers", "1"]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        summaries[how] = summary = read_summary(out / "summary.json")
        # Nothing of Ray's on stderr. loadgen's own saturation warnings may be there on a
        # busy machine, and then only when the step says it was saturated.
        theirs = [line for line in proc.stderr.splitlines() if not _saturation_line(line)]
        assert theirs == [], proc.stderr
        if proc.stderr:
            assert summary.steps[0].client.saturated, proc.stderr
    one, ray = summaries["one"], summaries["ray"]
    assert ray.workers == 2 and ray.workers_clock_uncertainty_ms is not None
    assert 0 <= ray.workers_clock_uncertainty_ms < 5
    a, b = one.steps[0], ray.steps[0]
    assert a.requests.ok == b.requests.ok == 160 and b.requests.failed == 0
    assert b.client.workers is not None and len(b.client.workers) == 2
    rows = list(read_records(tmp_path / "ray" / "records.jsonl"))
    assert most_in_flight(rows) == 8 and len({r.id for r in rows}) == len(rows)
    if a.client.saturated or b.client.saturated:
        pytest.skip("loadgen was saturated (a busy machine): its latencies are not comparable")
    assert b.ttft_ms.p50 == pytest.approx(a.ttft_ms.p50, abs=2.0)
    assert b.itl_ms.p50 == pytest.approx(a.itl_ms.p50, abs=0.5)
    assert b.throughput.requests_per_s == pytest.approx(a.throughput.requests_per_s, rel=0.15)
