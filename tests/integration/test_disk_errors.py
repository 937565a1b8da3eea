"""A disk that refuses writes mid-run ends the run with one line and exit 2, never a traceback.

A full disk is made two ways that need no root: ``/dev/full`` (every flush
fails with ENOSPC) for the records writer alone, and a file-size limit
(RLIMIT_FSIZE, with SIGXFSZ ignored so a write past it fails with EFBIG) on a
whole ``loadgen run`` against the built-in mock.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.errors import OutputError
from loadgen.records import Record, RecordWriter

SCENARIO = """
name: disk
target:
  url: mock
  model: m
  extra_body: {ignore_eos: true}
  mock: {args: ["--ttft-ms", "1", "--itl-ms", "1"]}
workload:
  prompt_tokens: {dist: fixed, value: 16}
  output_tokens: {dist: fixed, value: 64}
load: {concurrency: [4], requests_per_step: 400}
"""


def test_writer_on_a_full_device_raises_one_output_error_and_stays_failed() -> None:
    writer = RecordWriter(Path("/dev/full"), flush_every=1)
    row = Record(
        step=0, id=0, warmup=False, request_id="r", prompt_tokens_requested=1, max_tokens=1
    )
    with pytest.raises(OutputError, match=r"/dev/full: cannot write: No space left on device"):
        writer.write(row)
    assert not writer.pending  # nothing more for a flush timer to try
    with pytest.raises(OutputError) as again:
        writer.write(row)
    assert again.value is writer.failure
    writer.close()  # no second error from the buffer the disk refused


def _limit_file_size(size: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, not a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


# (requests, file-size limit, the file that meets it): ~1.6 KB a record, ~270 KB of report.html
CASES = [
    (400, 20_000, "records.jsonl"),
    (400, 200_000, "records.jsonl"),
    (60, 200_000, "report.html"),
]


@pytest.mark.parametrize(("requests", "limit", "refused"), CASES)
def test_run_that_fills_its_disk_exits_2_with_one_line(
    tmp_path: Path, requests: int, limit: int, refused: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "loadgen", "run", str(path), "--out", str(out), "--quiet"]
    cmd += ["--requests", str(requests)]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limit_file_size(limit),
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("loadgen:")]
    assert len(errors) == 1, proc.stderr
    assert "cannot write: File too large" in errors[0]
    assert str(out) in errors[0] and refused in errors[0]
    # what reached the disk before the limit is still there
    assert (out / "scenario.yaml").is_file()
    assert (out / "records.jsonl").stat().st_size > 0
