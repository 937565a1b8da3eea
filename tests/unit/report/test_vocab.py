"""One vocabulary: the stat lists and metric labels are written once, in loadgen.vocab."""

from __future__ import annotations

import re
from pathlib import Path

from loadgen import vocab
from loadgen.metrics.profiles import PROFILE_NAMES
from loadgen.summary import PERCENTILES, Distribution

REPORT = Path(vocab.__file__).parent / "report"
#: the CLI helper's files, switched by their owner
_NOT_MINE = {"console.py", "progress.py", "commands.py"}


def test_vocab_matches_the_summary_and_the_profiles() -> None:
    stats = tuple(f for f in Distribution.model_fields if f != "ci")  # ci: the intervals
    assert stats == vocab.DISTRIBUTION_STATS
    assert PERCENTILES is vocab.PERCENTILES
    assert PROFILE_NAMES is vocab.PROFILE_NAMES
    assert set(vocab.TABLE_STATS) <= set(vocab.DISTRIBUTION_STATS)


def test_labels() -> None:
    assert vocab.stat_key(99.9) == "p99_9"
    assert vocab.metric_label("ttft_ms", "p99_9") == "TTFT p99.9"
    assert vocab.metric_label("tpot_ms", "") == "TPOT"
    assert vocab.metric_label("unknown_ms", "p50") == "unknown_ms p50"


def test_report_modules_spell_out_no_stat_list_or_metric_label() -> None:
    stat_list = re.compile(r'"p50",\s*"p9|"mean",\s*"p50"|"p50",\s*"p99"')
    label = re.compile(r'"(ttft|tpot|itl|e2e)_ms":\s*"[A-Z]')
    found = [
        f.name
        for f in sorted(REPORT.glob("*.py"))
        if f.name not in _NOT_MINE and (stat_list.search(t := f.read_text()) or label.search(t))
    ]
    assert found == []


def test_an_open_interval_reads_as_a_bound_not_a_dash_and_dots() -> None:
    from loadgen.report.terminal.console import interval_text

    assert interval_text(18.914, None) == "≥ 18.91"
    assert interval_text(None, 19.1) == "≤ 19.10"
    assert interval_text(18.9, 19.1) == "18.90-19.10"
    assert interval_text(None, None) == "-"


def test_a_time_scale_says_whether_the_replay_is_slower_or_faster() -> None:
    from loadgen.vocab import pace

    assert pace(2) == "2x slower"
    assert pace(0.5) == "2x faster"
    assert pace(1) == "as recorded"


def test_console_lines_fit_80_columns_and_break_only_between_phrases() -> None:
    from loadgen.report.terminal.console import fit

    parts = ["14.93 req/s", "840 output tok/s", "2,434 input tok/s", "goodput 4.68 req/s"]
    lines = fit("  throughput ", parts, " · ")
    assert all(len(line) <= 80 for line in lines)
    assert lines == [
        "  throughput 14.93 req/s · 840 output tok/s · 2,434 input tok/s ·",
        "    goodput 4.68 req/s",
    ]
    assert " ".join(" ".join(lines).split()) == "throughput " + " · ".join(parts)
    assert fit("  SLA PASS: ", ["a <= 1 ok"], "; ") == ["  SLA PASS: a <= 1 ok"]


def test_a_line_of_facts_breaks_after_its_dots_not_inside_a_figure() -> None:
    from loadgen.report.wrap import fit, phrases

    text = (
        "frontier: 314.4 tok/s per user (1000/TPOT p50 309.4) · 1,143 output tok/s per GPU"
        " (1 GPU, cost.gpus) · 0.49 USD per M output tokens"
    )
    lines = fit("  ", phrases(text), " ")
    assert lines == [
        "  frontier: 314.4 tok/s per user (1000/TPOT p50 309.4) ·",
        "    1,143 output tok/s per GPU (1 GPU, cost.gpus) · 0.49 USD per M output tokens",
    ]
