"""Stopping and writing: a hung-up terminal, a closed stdout, two quick Ctrl-Cs, a used --out.

Each test runs ``loadgen run`` as a child process against the built-in mock,
as a person or a script would, and checks what is left on disk and how the
process ended. The probes that found each case (issue #20) are in the
docstrings.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from loadgen.results.files import read_summary

#: a run long enough to be stopped in its middle (about 12 s a step at 4 streams)
LONG = """
name: stopping
target:
  url: mock
  model: m
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "20", "--itl-ms", "20"]}
workload:
  prompt_tokens: {dist: fixed, value: 16}
  output_tokens: {dist: fixed, value: 50}
load: {concurrency: [4, 8], requests_per_step: 1000}
"""

#: a short run of two steps (about half a second each)
SHORT = """
name: short
target:
  url: mock
  model: m{http2}
  extra_body: {{ignore_eos: true}}
  mock: {{args: ["--ttft-ms", "5", "--itl-ms", "5"]}}
workload:
  prompt_tokens: {{dist: fixed, value: 16}}
  output_tokens: {{dist: fixed, value: 8}}
load: {{concurrency: {steps}, requests_per_step: {requests}}}
"""


def short(tmp_path: Path, steps: str = "[1, 2]", requests: int = 12, http2: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SHORT.format(steps=steps, requests=requests, http2=http2))
    return path


def loadgen(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "loadgen", *map(str, args)]


def start_long(tmp_path: Path, group: bool = False) -> tuple[subprocess.Popen[str], Path]:
    """A long run, returned once some of its requests have finished; ``group``: in a
    process group of its own, as a terminal gives a command."""
    path = tmp_path / "s.yaml"
    path.write_text(LONG)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        loadgen("run", path, "--out", out, "--quiet"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    deadline = time.monotonic() + 60
    rec = out / "records.jsonl"
    while time.monotonic() < deadline and not (rec.exists() and rec.stat().st_size > 0):
        time.sleep(0.1)
    time.sleep(0.5)
    return proc, out


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str]:
    try:
        code = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    return code, proc.stderr.read()


def assert_partial_results(out: Path) -> None:
    """A valid partial summary, its interrupted step, the records and the reports."""
    summary = read_summary(out / "summary.json")
    assert summary.interrupted
    assert len(summary.steps) == 1 and summary.steps[0].interrupted
    rows = (out / "records.jsonl").read_bytes().splitlines()
    assert summary.steps[0].requests.ok == sum(orjson.loads(r)["ok"] for r in rows) > 0
    for name in ("report.md", "report.html", "steps.csv"):
        assert (out / name).is_file(), name


def test_sighup_is_handled_like_sigterm(tmp_path: Path) -> None:
    """Probe: ``kill -HUP`` on a run (what a closed terminal or a dropped SSH session
    sends): exit 129 by the default action, no summary.json. Now: the step in progress
    stops, its partial results are written, exit 129 (128 + SIGHUP)."""
    proc, out = start_long(tmp_path)
    proc.send_signal(signal.SIGHUP)
    code, err = finish(proc)
    assert code == 129, err
    assert "Traceback" not in err
    assert "interrupted: partial results in" in err
    assert_partial_results(out)


def test_the_mock_is_out_of_reach_of_the_terminal_s_signals(tmp_path: Path) -> None:
    """Probe: a real hang-up (or Ctrl-C) signals the terminal's whole process group, and
    the mock loadgen started was in it: the mock died at once (SIGHUP's default action),
    so requests still in flight could end `disconnected`, a server fault that never
    happened, whenever the mock's end beat loadgen's wind-down. Now the mock has a
    session of its own (loadgen stops it, and it dies with loadgen) and a hang-up of the
    whole group is a clean stop: exit 129, the partial results, nothing disconnected."""
    from loadgen.target.mock import MockServer

    mock = MockServer(["--ttft-ms", "1", "--itl-ms", "1"], tmp_path / "m2.log", cpus=None)
    with mock:
        assert mock.pid is not None
        assert os.getsid(mock.pid) == mock.pid != os.getsid(0)  # its own session
    proc, out = start_long(tmp_path, group=True)
    rec = out / "records.jsonl"
    os.killpg(proc.pid, signal.SIGHUP)  # the whole group, as a closed terminal does
    code, err = finish(proc)
    assert code == 129, err
    assert_partial_results(out)
    kinds = {orjson.loads(r).get("error_kind") for r in rec.read_bytes().splitlines()}
    assert "disconnected" not in kinds, kinds


def test_a_second_ctrl_c_during_the_wind_down_still_writes_the_summary(tmp_path: Path) -> None:
    """Probe: two SIGINTs 0.02 s apart: the second raised KeyboardInterrupt while the
    first step was winding down: exit 130 with records.jsonl but no summary.json and no
    report. Now the second is noted, the wind-down goes on, the files are written."""
    proc, out = start_long(tmp_path)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc)
    assert code == 130, err
    assert "Traceback" not in err
    assert "interrupted: partial results in" in err
    assert_partial_results(out)


def test_a_closed_stdout_does_not_stop_the_files(tmp_path: Path) -> None:
    """Probe: ``loadgen run ... | head -1``: the next line printed met a closed pipe;
    click turned the BrokenPipeError into exit 1 with nothing on stderr, after
    summary.json but before report.md, steps.csv and the plots. Now output to the
    closed stdout is dropped and the run ends as it would have: exit 0, every file."""
    out = tmp_path / "out"
    proc = subprocess.Popen(
        loadgen("run", short(tmp_path), "--out", out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # what `head -1` reads, then it exits
    proc.stdout.close()
    try:
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    assert first
    assert code == 0, err
    assert err == ""
    summary = read_summary(out / "summary.json")
    assert len(summary.steps) == 2 and not summary.interrupted
    for name in ("report.md", "report.html", "steps.csv"):
        assert (out / name).is_file(), name
    assert list((out / "plots").glob("*.png"))


def _limit_file_size(size: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, not a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def _run_limited(cmd: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limit_file_size(limit),
        check=False,
    )


def test_a_plot_the_disk_refuses_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Probe: a file-size limit that the records, summary and steps.csv fit under but a
    plot (40-70 KB) does not: the plot's failure was a note inside report.md, stderr
    empty (then report.html met the limit too). Now a refused plot is as any refused
    write: one line naming the file, exit 2."""
    out = tmp_path / "out"
    cmd = loadgen("run", short(tmp_path, "[2]", 8), "--out", out, "--quiet")
    proc = _run_limited(cmd, 30_000)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("loadgen:")]
    assert len(errors) == 1, proc.stderr
    assert re.search(r"plots/\w+\.png: cannot write: File too large", errors[0]), errors[0]
    assert (out / "summary.json").is_file() and (out / "steps.csv").is_file()


def test_the_count_of_records_written_before_a_full_disk_is_right(tmp_path: Path) -> None:
    """Probe: a file-size limit met after 32 rows said "about 0 record(s) before it
    were written": the count took only explicit flushes as written, but the file's
    buffer had written whole rows on its own (about 50 here). Now the count is what
    is on disk."""
    out = tmp_path / "out"
    path = tmp_path / "fast.yaml"  # 16 streams of instant answers: 64 rows well inside 0.1 s
    path.write_text(SHORT.format(steps="[16]", requests=400, http2="").replace('"5"', '"0"'))
    proc = _run_limited(loadgen("run", path, "--out", out, "--quiet"), 40_000)
    assert proc.returncode == 2, proc.stderr
    said = re.search(r"about (\d+) record\(s\) before it were written", proc.stderr)
    assert said is not None, proc.stderr
    whole = [line for line in (out / "records.jsonl").read_bytes().split(b"\n")[:-1]]
    assert int(said.group(1)) == len(whole) > 0


def test_a_results_directory_holding_a_run_is_refused_unless_replace(tmp_path: Path) -> None:
    """Probe: ``loadgen run --out DIR`` twice: the second run overwrote the first's
    summary.json and records without a word. Now it is refused (exit 2, naming the
    directory and --replace) and the first run's files are untouched; --replace
    overwrites, and leaves none of the old run's files behind."""
    out = tmp_path / "out"
    scenario = short(tmp_path, "[1]", 4)
    first = subprocess.run(loadgen("run", scenario, "--out", out, "-q"), capture_output=True)
    assert first.returncode == 0, first.stderr
    (out / "telemetry.jsonl").write_text("")  # a file of the old run the new one lacks
    before = (out / "summary.json").read_bytes()
    again = subprocess.run(
        loadgen("run", scenario, "--out", out, "-q"), capture_output=True, text=True
    )
    assert again.returncode == 2
    assert again.stderr.strip() == (
        f"loadgen: results directory {out}: already holds a run (summary.json); "
        "pass --replace to overwrite it, or --out a new directory"
    )
    assert (out / "summary.json").read_bytes() == before
    replaced = subprocess.run(
        loadgen("run", scenario, "--out", out, "-q", "--replace"), capture_output=True, text=True
    )
    assert replaced.returncode == 0, replaced.stderr
    assert (out / "summary.json").read_bytes() != before
    assert not (out / "telemetry.jsonl").exists()


def test_http2_versions_are_in_the_summary_of_a_one_step_run(tmp_path: Path) -> None:
    """Probe: ``target.http2: true`` (hypercorn over TLS, and any server): 40/40 ok but
    ``target_check.http_versions`` null in summary.json, because it was set after the
    step's summary was written; a run of two steps had it only from the second write.
    Against the mock (HTTP/1.1 only) a one-step run must carry ["HTTP/1.1"]."""
    out = tmp_path / "out"
    scenario = short(tmp_path, "[1]", 4, http2="\n  http2: true")
    proc = subprocess.run(
        loadgen("run", scenario, "--out", out, "-q"), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert read_summary(out / "summary.json").target_check.http_versions == ["HTTP/1.1"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_help_names_each_signals_exit_code(sig: int) -> None:
    """``loadgen --help`` lists the exit code of each signal a run handles."""
    text = subprocess.run(loadgen("--help"), capture_output=True, text=True).stdout
    code = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}[sig]
    assert str(code) in text
