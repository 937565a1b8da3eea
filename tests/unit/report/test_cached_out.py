"""The cached prompt tokens (``step.cache``) in every output: the console's line under the
table, report.md / report.html facts and steps.csv columns; none when nothing was cached."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from loadgen.metrics.step import summarize_step
from loadgen.records import Record
from loadgen.report.documents.writer import write_reports
from loadgen.report.step_table import render_steps_csv
from loadgen.report.terminal.console import format_step
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint, Summary

from .conftest import RICH_N, T0, rich_records, write_run

# 704 of 2,040 prompt tokens; 11 of 20 requests; seven sessions' rates (128/303, 128/307,
# 0, ...) average 34.4%; turn 1: 384 of 715 tokens, turn 2: 320 of 612
LINE = (
    "cached tokens (usage): 34.5% of prompt tokens, 55% of requests, 35/request, "
    "34.4% a session; by turn 0%, 54%, 52%"
)
COLUMNS = ["cache_tokens_per_request", "cache_hit_rate", "cache_requests_with_hits"]


def with_cache(summary: Summary, records: list[Record]) -> list[Record]:
    """The rich run's sessions step again, its answers counting cached tokens: turn t of a
    session (prompt 100-104 tokens) found 64 of them cached when t > 0, but not session 2's."""
    step = rich_records(0, RICH_N, T0, sessions=True)
    for r in step:
        assert r.turn is not None and r.session is not None
        r.cached_tokens_server = 64 if r.turn and r.session != 2 else 0
    summary.steps[0] = summarize_step(
        0, LoadPoint(mode="concurrency", concurrency=4), step, SlaSpec()
    )
    return step + [r for r in records if r.step != 0]


def test_every_output_shows_the_cached_tokens(
    tmp_path: Path, rich_data: tuple[Summary, list[Record]]
) -> None:
    summary, records = rich_data
    records = with_cache(summary, records)
    c = summary.steps[0].cache
    assert c is not None and c.cached_tokens == 64 * 11  # 13 later turns, less session 2's
    text = format_step(summary.steps[0])
    assert LINE in " ".join(text.split())  # wrapped at 80 columns, under the table
    assert text.index("cached tokens") > text.index("TTFT")
    assert "cached tokens" not in format_step(summary.steps[1])  # the trace step: no count
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary))))
    assert [list(r).index(COLUMNS[0]) + 1 == list(r).index(COLUMNS[1]) for r in rows]
    assert [r["cache_hit_rate"] for r in rows] == [str(c.hit_rate), ""]
    assert rows[0]["cache_tokens_per_request"] == str(c.cached_tokens_per_request)
    out = write_run(tmp_path / "rich", summary, records, telemetry=False)
    write_reports(out)
    assert f"- {LINE}" in (out / "report.md").read_text()
    assert f"<li>{LINE}</li>" in (out / "report.html").read_text()


def test_a_server_that_counts_zero_says_nothing(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, _ = rich_data
    step = rich_records(0, RICH_N, T0, sessions=True)
    for r in step:
        r.cached_tokens_server = 0
    summary.steps[0] = summarize_step(
        0, LoadPoint(mode="concurrency", concurrency=4), step, SlaSpec()
    )
    c = summary.steps[0].cache
    assert c is not None and c.hit_rate == 0.0 and c.reported == RICH_N  # in summary.json
    assert "cached tokens" not in format_step(summary.steps[0])
    assert not set(COLUMNS) & set(render_steps_csv(summary).splitlines()[0].split(","))
