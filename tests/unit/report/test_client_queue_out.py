"""The client queue section: in the console, steps.csv and report.md from its module alone."""

from __future__ import annotations

import csv
import io

from loadgen.report.documents.markdown import build_document, render_markdown
from loadgen.report.step_table import render_steps_csv
from loadgen.report.terminal.console import format_step
from loadgen.summary import Distribution, LoadPoint, StepSummary

from .conftest import bare_step, bare_summary

LINE = (
    "client queue (load.max_concurrency 8): wait for a free slot p50 0.50 ms, "
    "p99 41.20 ms, max 63.00 ms"
)


def _steps() -> list[StepSummary]:
    waited = bare_step(0, "rate", 40.0, 30.0).model_copy(
        update={
            "load": LoadPoint(mode="rate", rate=40.0, arrival="poisson", max_concurrency=8),
            "queue_wait_ms": Distribution(count=10, p50=0.5, p99=41.2, max=63.0),
        }
    )
    never = bare_step(1, "rate", 2.0, 20.0).model_copy(
        update={"queue_wait_ms": Distribution(count=10, p50=0.0, p99=0.0, max=0.0)}
    )
    return [waited, never]


def test_the_wait_reads_in_the_console_steps_csv_and_report_md() -> None:
    waited, never = _steps()
    console = format_step(waited)
    assert "  client queue (load.max_concurrency 8): wait for a free slot p50 0.50 ms," in console
    assert "    p99 41.20 ms, max 63.00 ms" in console  # wrapped at 80 between phrases
    assert max(map(len, console.splitlines())) <= 80
    assert "client queue" not in format_step(never)  # nobody waited: nothing to say
    summary = bare_summary([waited, never])
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary))))
    assert [r["queue_wait_ms_p99"] for r in rows] == ["41.2", ""]
    assert rows[0]["queue_wait_ms_max"] == "63.0"
    doc = render_markdown(build_document(summary))
    assert f"- {LINE}" in doc
    assert doc.count("client queue") == 1
