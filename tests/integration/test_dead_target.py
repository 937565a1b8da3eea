"""A target that is down from the start: the run stops within seconds, exit 3, the counts agree.

The probe (issue #19): ``--url http://127.0.0.1:9`` at concurrency 1 sent 7,168
requests in 3.5 s before exit 3. Here a port that was bound and closed again (so
nothing listens: every connect is refused) is the target.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import orjson
import pytest
import yaml

from loadgen.cli import main
from loadgen.records import read_records


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scenario(tmp_path: Path, **load: object) -> Path:
    doc = {
        "name": "down",
        "target": {"url": f"http://127.0.0.1:{closed_port()}", "model": "m"},
        "load": {"mode": "concurrency", "concurrency": [1, 4], "requests_per_step": 2000, **load},
        "sla": {"ttft_ms": {"p99": 400}, "max_error_rate": 0.01},
    }
    path = tmp_path / "down.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float]:
    t0 = time.monotonic()
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err, time.monotonic() - t0


def test_a_dead_target_stops_the_run_in_seconds_with_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario(tmp_path, warmup_requests=4)
    out_dir = tmp_path / "out"
    code, out, err, took = run(["run", str(path), "--out", str(out_dir)], capsys)
    assert code == 3
    assert took < 5.0
    records = list(read_records(out_dir / "records.jsonl"))
    assert 0 < len(records) < 100
    assert {r.error_kind for r in records} <= {"connect_error", "cancelled"}  # cut: in flight
    records = [r for r in records if r.error_kind == "connect_error"]
    summary = orjson.loads((out_dir / "summary.json").read_bytes())
    assert summary["stopped_on_errors"] and "failed to connect" in summary["stopped_on_errors"]
    assert len(summary["steps"]) == 1 and not summary["interrupted"]
    assert "refused the connection" in err and "did not answer 200" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("loadgen: target unusable: stopped at http://127.0.0.1:")
    # stdout's failed count and stderr's error count agree, the warm-ups named apart
    step = summary["steps"][0]["requests"]
    warm = sum(r.warmup for r in records)
    assert step["failed"] + warm == len(records)
    assert f"errors: {len(records)} connect_error ({warm} of them warm-up" in err
    assert f"{step['failed']} failed" in out
    assert "stopped early: the first" in out
    # a bound with no successful request says so, in every output; no -9900% headroom
    assert "ttft_ms.p99 <= 400 MISSED (no successful request)" in out
    for name in ("report.md", "report.html"):
        text = (out_dir / name).read_text()
        assert "no successful request" in text and "9900%" not in text, name
        assert "– ms" not in text, name


def test_off_sends_what_the_step_asks_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario(tmp_path, stop_on_errors="off", requests_per_step=30)
    out_dir = tmp_path / "out"
    code, _, err, _ = run(["run", str(path), "--out", str(out_dir), "-q"], capsys)
    assert code == 3
    assert len(list(read_records(out_dir / "records.jsonl"))) == 30  # the sweep stops after step 0
    assert orjson.loads((out_dir / "summary.json").read_bytes())["stopped_on_errors"] is None
    assert "no request succeeded" in err
