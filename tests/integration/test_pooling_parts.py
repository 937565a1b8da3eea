"""A pooling step broken down per endpoint and per model: no token timing anywhere.

Embeddings against two mock replicas with a two-model mix (the mock's --lora), over real
sockets. What is held: summary.json's endpoints and models carry no ttft/itl/tpot and no
throughput carries output_tokens_per_s (a generating run's parts do); steps.csv has no
``endpoint<i>_`` / ``model<i>_`` token-timing column; the console's breakdown lines and
report.md's breakdown tables show no TTFT, ITL or output tokens/s; the latency CDF plot
is the E2E one (one panel), never the TTFT/ITL one.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.records import Record
from loadgen.report.plots import figures, timeline_figure
from loadgen.report.plots.cdf_figure import draw_e2e_cdf
from loadgen.report.terminal.console import format_step
from loadgen.results.samples import samples_from_records
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
TOKEN_KEYS = ("ttft", "itl", "tpot", "icl")


def _sweep(run: RunFixture, api: str) -> tuple[Summary, list[Record], Path]:
    extra = {"batch": {"dist": "fixed", "value": 2}} if api == "openai-embeddings" else {}
    output = {} if extra else {"output_tokens": {"dist": "fixed", "value": 8}}
    target = {
        "url": "mock",
        "api": api,
        "models": [{"name": "base"}, {"name": "sql-lora"}],
        "mock": {"replicas": 2, "args": ["--ttft-ms", "2", "--itl-ms", "1"]},
    }
    return run(
        Scenario.model_validate(
            {
                "name": "parts",
                "target": target,
                "workload": {"prompt_tokens": {"dist": "fixed", "value": 16}, **extra, **output},
                "load": {"mode": "concurrency", "concurrency": [2], "requests_per_step": 16},
            }
        ),
        reports=True,
    )


def test_a_pooling_steps_parts_have_no_token_timing(
    run: RunFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    summary, records, out = _sweep(run, "openai-embeddings")
    raw = json.loads((out / "summary.json").read_text())
    (step,) = raw["steps"]
    assert len(step["endpoints"]) == 2 and len(step["models"]) == 2
    for part in [*step["endpoints"], *step["models"]]:
        assert not [k for k in part if k.startswith(TOKEN_KEYS)], part.keys()
        assert part["e2e_ms"]["count"] > 0
        assert "output_tokens_per_s" not in part["throughput"]
        assert part["throughput"]["requests_per_s"] > 0
    for key in ("throughput", "throughput_whole"):
        assert "output_tokens_per_s" not in step[key] and step[key]["inputs_per_s"] > 0
    Summary.model_validate(raw)  # what was left out reads back (its defaults)

    with (out / "steps.csv").open() as fh:
        header = next(csv.reader(fh))
    assert "endpoint1_e2e_ms_p99" in header and "model1_requests_per_s" in header
    timing = ("ttft", "itl", "tpot", "output_tokens")
    assert not [c for c in header if c.split("_", 1)[-1].startswith(timing)], header

    text = format_step(summary.steps[0])
    assert "E2E p50" in text and "TTFT" not in text and "ITL" not in text
    report = (out / "report.md").read_text()
    assert "E2E p99 (ms)" in report and "sql-lora" in report
    assert "TTFT p" not in report and "ITL p" not in report and "output (tok/s)" not in report

    samples = samples_from_records(records)
    fig = draw_e2e_cdf(summary, samples)
    assert [ax.get_xlabel().split(" ")[0] for ax in fig.axes] == ["E2E"]

    def no_token_cdf(*_: object) -> None:
        raise AssertionError("the TTFT/ITL CDF drawn for a pooling run")

    monkeypatch.setattr(figures, "draw_cdf", no_token_cdf)
    written, notes = figures.write_plots(summary, samples, [], tmp_path)
    assert "cdf" in written and not notes, notes
    # the timeline has no output tokens/s panel (the report showed an empty one)
    timeline = timeline_figure.draw_timeline(summary, samples, [])
    assert [ax.get_ylabel() for ax in timeline.axes] == ["requests in flight"]


def test_a_generating_steps_parts_keep_token_timing(run: RunFixture) -> None:
    """The counterpart: a chat run's parts keep every field the pooling one leaves out."""
    summary, _, out = _sweep(run, "openai-chat")
    (step,) = json.loads((out / "summary.json").read_text())["steps"]
    for part in [*step["endpoints"], *step["models"]]:
        assert {"ttft_ms", "itl_ms", "tpot_ms"} <= set(part)
        assert part["throughput"]["output_tokens_per_s"] > 0
    assert "TTFT p50" in format_step(summary.steps[0])
