"""`loadgen calibrate` for real: the built-in mock on 127.0.0.1, loadgen's client path, bounded.

No speed is asserted (benchmarks print speeds); only that every figure is
there and sane, and that the command leaves this process's CPUs as it found them.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from loadgen.ceiling.measure import LADDER
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
    t0 = time.monotonic()
    code, out, err = run_cli(["calibrate", "--seconds", "1"], capsys)
    # bounded: burst and at most len(LADDER) rungs of 1 s, a fresh mock each (~10 s here)
    assert time.monotonic() - t0 < 90
    assert code == 0, err
    assert os.sched_getaffinity(0) == before
    found = re.findall(r"^(burst|per-token) +(-|[\d.]+k) +([\d,]+) +([\d.]+) ", out, re.M)
    rows = {m[0]: m[2:] for m in found}
    assert set(rows) == {"burst", "per-token"}, out
    assert re.search(r"^per-token offered 51,200 (-> [\d,]+ )*tokens/s; stopped: ", out, re.M), out
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
    # the per-token ladder: a rising offer, a token every 5 ms per stream first
    ladder = data["per_token_ladder"]
    offers = [r["offered_tokens_per_s"] for r in ladder]
    assert offers[0] == pytest.approx(16 * 1000 / 5.0)
    assert offers == sorted(offers) and len(set(offers)) == len(offers)
    assert 1 <= len(ladder) <= len(LADDER)
    assert data["per_token_stopped"] in (None, "client", "mock", "late")
    # a ladder cut short says why; the last rung may stop it too (late on a busy machine)
    if len(ladder) < len(LADDER):
        assert data["per_token_stopped"] is not None
    assert data["regimes"]["per-token"] in ladder


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
