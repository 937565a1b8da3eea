"""Speculative decoding in the outputs: the console's line beside ITL, steps.csv's columns."""

from __future__ import annotations

import csv
import io

from loadgen.report.spec_decode import SPEC_DECODE_COLUMNS as COLUMNS
from loadgen.report.spec_decode import spec_decode_text
from loadgen.report.step_table import render_steps_csv
from loadgen.report.terminal.console import format_step
from loadgen.summary import SpecDecodeStats
from tests.unit.report.conftest import bare_step, bare_summary


def stats(drafts: float, drafted: float, accepted: float) -> SpecDecodeStats:
    return SpecDecodeStats(
        drafts=drafts, draft_tokens=drafted, accepted_tokens=accepted,
        emitted_tokens=drafts + accepted, acceptance_rate=accepted / drafted,
        mean_accepted_length=1 + accepted / drafts, tokens_per_event=2.5,
        source="vllm:spec_decode_*",
    )  # fmt: skip


def test_the_console_line_puts_the_rates_beside_itl_per_event_and_tpot_per_token() -> None:
    step = bare_step(0, "concurrency", 4, 50.0)
    step.spec_decode = stats(400, 1200, 840)
    want = (
        "speculative decoding: 70.0% of 1,200 draft tokens accepted, mean accepted length "
        "3.10; 2.50 tokens/event: ITL p50 5.0 ms per event, TPOT p50 5.0 ms per token"
    )
    assert spec_decode_text(step) == want
    assert "speculative decoding: 70.0%" in format_step(step)
    step.tokens.count_mismatches = 10  # usage counts tokens, the client events: told why
    # the note is fitted to 80 columns: read it as one line
    assert "token events (speculative decoding: an event carries" in " ".join(
        format_step(step).split()
    )


def test_no_line_without_counters_or_drafts() -> None:
    step = bare_step(0, "concurrency", 4, 50.0)
    assert spec_decode_text(step) is None and "speculative" not in format_step(step)
    step.spec_decode = SpecDecodeStats(
        drafts=0, draft_tokens=0, accepted_tokens=0, emitted_tokens=0, source="vllm:spec_decode_*"
    )
    assert spec_decode_text(step) is None


def test_steps_csv_has_the_columns_only_when_a_step_has_counters() -> None:
    plain = bare_summary([bare_step(0, "concurrency", 1, 50.0)])
    assert not set(COLUMNS) & set(next(csv.reader(io.StringIO(render_steps_csv(plain)))))
    s0, s1 = bare_step(0, "concurrency", 1, 50.0), bare_step(1, "concurrency", 4, 60.0)
    s1.spec_decode = stats(100, 300, 150)
    rows = list(csv.DictReader(io.StringIO(render_steps_csv(bare_summary([s0, s1])))))
    assert [r["spec_decode_acceptance_rate"] for r in rows] == ["", "0.5"]
    assert rows[1]["spec_decode_mean_accepted_length"] == "2.5"
    assert [rows[1][c] for c in COLUMNS[2:6]] == ["100.0", "300.0", "150.0", "250.0"]
