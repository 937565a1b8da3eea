"""`loadgen calibrate` for real: the built-in mock on 127.0.0.1, loadgen's client path, bounded.

No speed is asserted (benchmarks print speeds); only that every figure is
there and sane, and that the command leaves this process's CPUs as it found them.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from loadgen.cli import main


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_prints_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    before = os.sched_getaffinity(0)
    code, out, err = run_cli(["calibrate", "--seconds", "1"], capsys)
    assert code == 0, err
    assert os.sched_getaffinity(0) == before
    rows = {m[0]: m[1:] for m in re.findall(r"^(burst|per-token) +([\d,]+) +([\d.]+) ", out, re.M)}
    assert set(rows) == {"burst", "per-token"}, out
    for tokens_per_s, cpu_s in rows.values():
        assert int(tokens_per_s.replace(",", "")) > 0
        assert float(cpu_s) > 0
    assert f"cores: {len(before)} " in out
    drive = re.search(
        r"this machine can drive about ([\d,]+) output tokens/s with (\d+) worker", out
    )
    assert drive, out
    assert int(drive[1].replace(",", "")) > 0
    assert int(drive[2]) == max(1, len(before) - 2)
    assert "estimate: " in out


def test_calibrate_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["calibrate", "--seconds", "0.5", "--concurrency", "16", "--tokens", "16", "--json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["cores"] == len(os.sched_getaffinity(0))
    for regime in ("burst", "per-token"):
        figures = data["regimes"][regime]
        assert figures["requests_ok"] > 0
        assert figures["failed"] == 0
        assert figures["count_mismatches"] == 0
        assert figures["output_tokens_per_s"] > 0
        assert figures["client_cpu_s"] > 0
        assert figures["tokens_per_cpu_s"] > 0
        assert figures["tokens_per_read"] > 0
        assert figures["mock_cpu_util"] is not None
    assert data["estimate"]["output_tokens_per_s"] > 0
    assert data["estimate"]["workers"] >= 1


@pytest.mark.parametrize(
    ("flag", "value"), [("--seconds", "0"), ("--concurrency", "0"), ("--transport", "h3")]
)
def test_bad_flags_are_one_line_and_exit_2(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["calibrate", flag, value], capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert flag in err
