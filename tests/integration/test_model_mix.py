"""A model mix for real: the built-in mock serving a base model and a LoRA adapter on 127.0.0.1.

Each request names its model on the wire (a name the mock does not serve is
its 404), the split follows the weights, and every output breaks each step
down per model: console, summary.json, steps.csv, report.md, a rebuilt summary.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.records import Record, read_records
from loadgen.results.rebuild import rebuild_summary
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import Summary

FAST = ["--ttft-ms", "2", "--itl-ms", "1"]
N = 240


def run(target: dict[str, Any], out: Path) -> tuple[Summary, list[Record]]:
    sc = {
        "name": "mix",
        "target": {"url": "mock", **target},
        "workload": {
            "seed": 3,
            "prompt_tokens": {"dist": "fixed", "value": 12},
            "output_tokens": {"dist": "fixed", "value": 4},
        },
        "load": {
            "mode": "concurrency",
            "concurrency": [8],
            "requests_per_step": N,
            "warmup_requests": 2,
        },
    }
    summary = run_scenario(Scenario.model_validate(sc), RunOptions(out, quiet=False))
    return summary, list(read_records(out / "records.jsonl"))


MIX = [{"name": "base", "weight": 3}, {"name": "sql-lora", "weight": 1}]
MODEL_ROWS = [[str(m["name"])] for m in MIX]


def test_a_3_to_1_mix_is_split_3_to_1_and_broken_down_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    summary, records = run({"models": MIX, "mock": {"args": FAST}}, out)
    console, err = capsys.readouterr()
    assert "not among the served models" not in err  # pre-flight found both names
    assert summary.models == ["base", "sql-lora"]
    # calibrated with the mock's vLLM /tokenize, the chat template counted, and said so
    assert summary.calibration is not None
    assert (summary.calibration.engine, summary.calibration.chat_template) == ("vllm", True)
    assert "prompt lengths: server (vLLM's POST /tokenize: " in console
    (step,) = summary.steps
    assert step.requests.ok == N and step.requests.failed == 0
    assert step.models is not None
    by_name = {m.model: m for m in step.models}
    assert list(by_name) == ["base", "sql-lora"]
    lora = by_name["sql-lora"].requests.total
    assert by_name["base"].requests.total + lora == N
    assert abs(lora - N / 4) < 4 * math.sqrt(N * 0.25 * 0.75)  # near 3:1
    assert by_name["base"].weight_share == pytest.approx(0.75)
    assert by_name["sql-lora"].request_share == pytest.approx(lora / N)
    for m in step.models:  # each model's own statistics, from its own requests
        assert m.ttft_ms.count == m.requests.ok > 0
        assert m.e2e_ms.p50 is not None and m.itl_ms.count > 0
    total = sum(m.throughput.requests_per_s for m in step.models)
    assert total == pytest.approx(step.throughput.requests_per_s)
    # the records name the model each request sent
    measured = [r for r in records if not r.warmup]
    assert Counter(r.model for r in measured) == {
        "base": N - lora,
        "sql-lora": lora,
    }

    # the console: a line per model under the step's table, 80 columns at most
    for name in ("base", "sql-lora"):
        assert any(line.split()[:1] == [name] for line in console.splitlines()), console
    assert "model mix: base, sql-lora" in console
    table = [
        line
        for line in console.splitlines()
        if line.split()[:2] == ["model", "ok"] or (line.split()[:1] in MODEL_ROWS and "%/" in line)
    ]
    assert len(table) == 3 and max(map(len, table)) <= 80, table  # head + a row per model
    # summary.json, steps.csv, report.md
    written = orjson.loads((out / "summary.json").read_bytes())
    assert [m["model"] for m in written["steps"][0]["models"]] == ["base", "sql-lora"]
    head, row = (out / "steps.csv").read_text().splitlines()[:2]
    cells = dict(zip(head.split(","), row.split(","), strict=True))
    assert cells["model0_name"] == "base" and cells["model1_name"] == "sql-lora"
    assert int(cells["model1_requests_total"]) == lora
    report = (out / "report.md").read_text()
    assert "| model | share (asked / sent) |" in report and "| sql-lora |" in report
    # a rebuilt summary (killed before summary.json) has the breakdown too
    (out / "summary.json").unlink()
    rebuilt = rebuild_summary(out)
    assert rebuilt.steps[0].models is not None
    assert [m.requests.total for m in rebuilt.steps[0].models] == [N - lora, lora]


def test_each_request_sends_its_own_model_name(tmp_path: Path) -> None:
    """A mock that serves only the base model: exactly the adapter's requests get its 404."""
    out = tmp_path / "out"
    target = {"models": MIX, "mock": {"args": [*FAST, "--model", "base"]}}
    summary, records = run(target, out)
    (step,) = summary.steps
    assert step.models is not None
    base, lora = step.models
    assert base.requests.failed == 0 and base.requests.ok > 0
    assert lora.requests.ok == 0 and lora.requests.failed == lora.requests.total > 0
    assert lora.requests.errors == {"http_404": lora.requests.total}
    assert {r.model for r in records if r.error_kind == "http_404"} == {"sql-lora"}
