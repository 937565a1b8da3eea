"""A percentile from fewer values than it resolves is starred, and the note says so."""

from __future__ import annotations

from loadgen.records import Record
from loadgen.report.blocks import Items, Table
from loadgen.report.documents.markdown import render_markdown
from loadgen.report.documents.step_doc import resolves, step_blocks
from loadgen.summary import Summary


def test_a_percentile_resolves_from_one_over_its_tail_share() -> None:
    assert resolves("p99", 100) and not resolves("p99", 99)
    assert resolves("p99_9", 1000) and not resolves("p99_9", 999)
    assert resolves("p50", 2) and not resolves("p50", 1)
    assert resolves("mean", 1) and resolves("max", 1)


def test_a_p99_9_of_twenty_values_is_starred_with_a_note(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, _ = run_data
    step = summary.steps[0]  # 20 requests
    blocks = step_blocks(step)
    table = next(b for b in blocks if isinstance(b, Table) and b.header[0] == "latency (ms)")
    ttft = next(row for row in table.rows if row[0] == "TTFT")
    cells = dict(zip(table.header, ttft, strict=True))
    assert cells["p99.9"].endswith(" *") and cells["p99"].endswith(" *")
    assert not cells["p95"].endswith("*") and not cells["p50"].endswith("*")
    note = blocks[blocks.index(table) + 1]
    assert isinstance(note, Items)
    assert note.items == (
        "* a percentile from fewer values than it resolves (a p99.9 needs 1,000): "
        "it is about the largest value seen, not the tail it names",
    )
    assert "a p99.9 needs 1,000" in render_markdown(blocks)
