"""The per-step latency tables carry the confidence intervals the console prints (#19)."""

from __future__ import annotations

from pathlib import Path

from loadgen.records import Record
from loadgen.report.blocks import Table
from loadgen.report.documents.html import render_html
from loadgen.report.documents.markdown import render_markdown
from loadgen.report.documents.step_doc import step_blocks
from loadgen.summary import Distribution, Summary

from .conftest import bare_step


def _latency(blocks: list[object]) -> Table:
    return next(b for b in blocks if isinstance(b, Table) and b.header[0] == "latency (ms)")


def test_each_metric_row_is_followed_by_its_intervals() -> None:
    step = bare_step(0, "concurrency", 16, 152.06)
    step.ttft_ms = Distribution.model_validate(
        {
            "count": 59, "mean": 67.86, "p50": 41.13, "p90": 152.0, "p95": 152.03,
            "p99": 152.06, "p99_9": 152.07, "max": 152.07,
            "ci": {
                "confidence": 0.95, "mean": [55.15, 80.56], "p50": [37.0, 49.12],
                "p90": [151.04, 1152.06], "p95": [151.07, None], "p99": [152.04, None],
                "p99_9": [None, None],
            },
        }
    )  # fmt: skip
    table = _latency(step_blocks(step))
    names = [row[0] for row in table.rows]
    assert names[:2] == ["TTFT", "TTFT 95% CI"]
    assert "TPOT 95% CI" not in names  # no interval, no row
    ci = dict(zip(table.header, table.rows[1], strict=True))
    assert ci["mean"] == "55.15–80.56" and ci["p50"] == "37.00–49.12"
    assert ci["p90"] == "151.04–1,152.06"
    assert ci["p95"] == "≥ 151.07" and ci["p99"] == "≥ 152.04"  # no upper end: open
    assert ci["p99.9"] == "–" and ci["count"] == "" and ci["max"] == ""
    md = render_markdown([table])
    assert "| TTFT 95% CI |  | 55.15–80.56 | 37.00–49.12 |" in md
    page = render_html([table], Path("."))
    assert "<td>≥ 152.04</td>" in page and ">TTFT 95% CI</td>" in page


def test_a_real_steps_intervals_are_in_the_report(run_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = run_data  # summarised by the metrics code: every metric has its intervals
    step = summary.steps[0]
    table = _latency(step_blocks(step))
    rows = {row[0]: row for row in table.rows}
    for name in ("TTFT", "ITL", "TPOT", "E2E"):
        assert f"{name} 95% CI" in rows
    p99 = table.header.index("p99")
    lo, hi = step.ttft_ms.ci.p99  # type: ignore[union-attr]
    assert lo is not None
    want = f"≥ {lo:,.2f}" if hi is None else f"{lo:,.2f}–{hi:,.2f}"
    assert rows["TTFT 95% CI"][p99] == want
