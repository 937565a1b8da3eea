"""The sections: one per feature, in one order, each written by every writer without naming it."""

from __future__ import annotations

from loadgen.report import sections
from loadgen.report.section import Fact, Section
from loadgen.report.step_table import steps_table
from loadgen.report.terminal.console import format_step
from loadgen.summary import Summary


def test_each_builder_is_a_feature_modules_section_and_keys_are_unique(
    run_data: tuple[Summary, list[object]],
) -> None:
    summary, _ = run_data
    names = [b.__module__ for b in sections.STEP_SECTIONS]
    assert len(set(names)) == len(names)
    assert all(b.__name__ == "section" for b in sections.STEP_SECTIONS)
    for step in summary.steps:
        keys = [s.key for s in sections.step_sections(step)]
        assert len(set(keys)) == len(keys)


def test_late_columns_follow_the_others_in_the_step_table(
    run_data: tuple[Summary, list[object]],
) -> None:
    summary, _ = run_data
    columns, _ = steps_table(summary)
    telemetry = [i for i, c in enumerate(columns) if c.startswith("telemetry_")]
    assert telemetry and min(telemetry) > max(
        i for i, c in enumerate(columns) if not c.startswith(("telemetry_", "frontier_"))
    )


def test_a_detail_shows_on_the_console_only_when_asked_or_off(
    run_data: tuple[Summary, list[object]],
) -> None:
    summary, _ = run_data
    step = summary.steps[0].model_copy(
        update={"prompt_lengths": summary.steps[0].prompt_lengths.model_copy(
            update={"compared": 10, "mean_rel_diff": 0.01, "worst_rel_diff": 0.02,
                    "beyond_tolerance": 0})}
    )  # fmt: skip
    assert "prompt tokens: planned vs server" not in format_step(step)
    assert "prompt tokens: planned vs server +1.0%" in format_step(step, "approximate")
    off = step.model_copy(
        update={"prompt_lengths": step.prompt_lengths.model_copy(update={"beyond_tolerance": 3})}
    )
    assert "3 of 10" in format_step(off)


def test_a_fact_reads_label_value_unit_interval() -> None:
    assert Fact("loop lag p99", "1.20", "ms").text() == "loop lag p99 1.20 ms"
    assert Fact("rate", "98.0", "%", ("97.1", "98.7")).text() == "rate 98.0 % (CI 97.1-98.7)"
    assert Section("x").fields == {} and Section("x").console is None
