"""The per-endpoint breakdown in the console, steps.csv and report.md/html; absent for one."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from loadgen.metrics import summarize_step
from loadgen.records import Record
from loadgen.report.documents.html import render_html
from loadgen.report.documents.markdown import build_document, render_markdown
from loadgen.report.endpoints import CSV_FIELDS, HEADER, target_text
from loadgen.report.step_table import render_steps_csv
from loadgen.report.terminal.console import format_run_header, format_step
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint, Summary

MS = 1_000_000
URLS = ["http://a:1", "http://b:2"]


def rec(i: int, endpoint: int | None) -> Record:
    sent = i * 10 * MS
    first = sent + (10 + 40 * (endpoint or 0)) * MS  # endpoint 1 is slower
    return Record(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=10, max_tokens=2,
        start_ns=sent, sent_ns=sent, first_token_ns=first, first_answer_ns=first,
        last_token_ns=first + 5 * MS, end_ns=first + 6 * MS, token_ns=[first, first + 5 * MS],
        output_events=2, ok=True, endpoint=endpoint,
    )  # fmt: skip


def summary(urls: list[str]) -> Summary:
    several = len(urls) > 1
    records = [rec(i, i % 2 if several else None) for i in range(10)]
    lp = LoadPoint(mode="concurrency", concurrency=2)
    step = summarize_step(0, lp, records, SlaSpec(), endpoints=urls)
    return Summary(
        loadgen_version="0", name="ep", run_id="r", target_url=urls[0], api="openai-chat",
        model="m", clock_anchor={"monotonic_ns": 0, "wall_ns": 0}, steps=[step],
        endpoints=urls if several else None, routing="round_robin" if several else None,
    )  # fmt: skip


def test_the_console_shows_a_line_per_endpoint() -> None:
    s = summary(URLS)
    text = format_step(s.steps[0])
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:1] == ["endpoint"])
    rows = lines[head + 1 : head + 3]
    assert rows[0].split()[0] == "#0" and rows[0].endswith("http://a:1")
    assert rows[1].split()[0] == "#1" and rows[1].endswith("http://b:2")
    assert rows[0].split()[1:3] == ["5", "0"]  # ok, failed
    assert rows[1].split()[4] == "50.00"  # TTFT p50 of the slow endpoint
    header = format_run_header(s).splitlines()[0]
    assert header.endswith("at 2 endpoints (routing round_robin): http://a:1, http://b:2")


def test_one_endpoint_prints_as_before() -> None:
    s = summary(URLS[:1])
    assert "endpoint" not in format_step(s.steps[0])
    assert format_run_header(s).splitlines()[0].endswith("at http://a:1")
    assert target_text(s) == "http://a:1"
    assert "endpoint" not in render_steps_csv(s)


def test_target_text_counts_what_it_does_not_name() -> None:
    s = summary(URLS).model_copy(update={"endpoints": [f"http://h{i}:1" for i in range(6)]})
    assert target_text(s).endswith("http://h3:1, +2 more")


def test_steps_csv_has_columns_per_endpoint() -> None:
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary(URLS)))))
    assert len(rows) == 1  # still one row per step
    row = rows[0]
    for i in (0, 1):
        assert all(f"endpoint{i}_{f}" in row for f in CSV_FIELDS)
    assert row["endpoint1_url"] == "http://b:2"
    assert int(row["endpoint0_requests_ok"]) + int(row["endpoint1_requests_ok"]) == int(
        row["requests_ok"]
    )
    assert float(row["endpoint1_ttft_ms_p50"]) == 50.0


def test_the_reports_have_a_table_per_step(tmp_path: Path) -> None:
    blocks = build_document(summary(URLS))
    md = render_markdown(blocks)
    assert "| " + " | ".join(HEADER) + " |" in md
    assert "| 1 | http://b:2 | 5 / 0 |" in md
    assert "2 endpoints (routing round_robin)" in md
    html = render_html(blocks, tmp_path)
    assert "<td>http://b:2</td>" in html or "http://b:2</td>" in html
    one = render_markdown(build_document(summary(URLS[:1])))
    assert "| endpoint |" not in one


def test_the_docs_name_every_endpoint_column() -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "reports.md").read_text()
    assert "`endpoint<i>_<field>`" in docs
    for name in CSV_FIELDS:
        assert f"`{name}`" in docs, name
