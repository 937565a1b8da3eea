"""Every report table says its units; every report names the metrics profile (a pooling
run's note says where E2E counts from: it has no TTFT)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from loadgen.compare.runs import load_runs
from loadgen.metrics.profiles import PROFILES
from loadgen.records import Record
from loadgen.report.blocks import Table
from loadgen.report.documents.comparison import comparison_tables
from loadgen.report.documents.markdown import build_document
from loadgen.report.documents.writer import write_reports
from loadgen.report.step_table import render_steps_csv
from loadgen.summary import Summary

from .conftest import write_run

#: a header cell that names a unit, or that is not a quantity (names, counts, verdicts)
_UNIT = re.compile(r"\((ms|req/s|tok/s|%)\)|^(step|load|ok / failed|SLA|SLA bound|result|count)$")


def _unitless(table: Table) -> list[str]:
    """Header cells of a table with numbers in them and no unit: the first cell (the row
    names) must carry the unit when the other cells are statistics."""
    stats = {"mean", "p50", "p90", "p95", "p99", "p99.9", "max", "count"}
    if set(table.header[1:]) <= stats:
        return [] if _UNIT.search(table.header[0]) else [table.header[0]]
    return [h for h in table.header if not _UNIT.search(h)]


def test_report_tables_carry_units(
    run_data: tuple[Summary, list[Record]], rich_data: tuple[Summary, list[Record]]
) -> None:
    for summary, _ in (run_data, rich_data):
        tables = [b for b in build_document(summary) if isinstance(b, Table)]
        sla_tables = [t for t in tables if t.header[0] == "SLA bound"]
        others = [t for t in tables if t.header[0] != "SLA bound"]
        assert others and all(_unitless(t) == [] for t in others), [_unitless(t) for t in others]
        for t in sla_tables:  # bounds of mixed units: each cell says its own
            assert all(row[1].endswith(("ms", "%")) for row in t.rows)
        for t in others:  # a unit in the header is not repeated in every cell
            for i, name in enumerate(t.header):
                if name.endswith("(%)"):
                    assert not any(row[i].endswith("%") for row in t.rows), name


def test_comparison_tables_carry_units(
    tmp_path: Path, run_data: tuple[Summary, list[Record]]
) -> None:
    summary, records = run_data
    a, b = write_run(tmp_path / "A", summary, records), write_run(tmp_path / "B", summary, records)
    for title, table in comparison_tables(load_runs([a, b])):
        assert _UNIT.search(title), title
        assert _unitless(table) == [], title


def test_every_report_names_the_metrics_profile(
    tmp_path: Path, run_data: tuple[Summary, list[Record]]
) -> None:
    summary, records = run_data
    summary.metrics_profile = "guidellm"
    out = write_run(tmp_path / "run", summary, records)
    write_reports(out)
    md = (out / "report.md").read_text()
    assert "metrics profile guidellm" in md and "metrics profile: guidellm: GuideLLM" in md
    assert "metrics profile guidellm" in (out / "report.html").read_text()
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(summary))))
    assert {r["metrics_profile"] for r in rows} == {"guidellm"}
    assert rows[0]["role"] == "step"


def test_a_pooling_runs_profile_note_names_e2e_not_ttft() -> None:
    """report.md's "metrics profile" line for embeddings / rerank: each profile's origin,
    said of E2E (test_pooling_compare.py reads it in a real run's report.md)."""
    for name, profile in PROFILES.items():
        assert "TTFT" in profile.note and "TTFT" not in profile.pooling_note, name
        origin = "from the send" if profile.counts_from == "sent" else "from the"
        assert f"(E2E {origin}" in profile.pooling_note, (name, profile.pooling_note)
