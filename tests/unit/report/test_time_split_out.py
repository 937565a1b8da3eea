"""Where the time went in the outputs: the growth line, the facts line and the stacked bars
(checked through the data handed to matplotlib)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.metrics.time_split import split_growth
from loadgen.records import Record
from loadgen.report import time_split
from loadgen.report.plots import figures
from loadgen.report.plots.split_figure import PART_COLOURS, draw_time_split, split_bars
from loadgen.summary import PhaseTime, Summary, TimeSplit


def split(
    queue: float, prefill: float, decode: float, network: float, frontend: float = 0.0
) -> TimeSplit:
    def ph(ms: float, name: str) -> PhaseTime:
        return PhaseTime(count=20, mean_ms=ms, metric=f"vllm:request_{name}_time_seconds")

    e2e = queue + prefill + decode + frontend
    return TimeSplit(
        engine="vllm", queue=ph(queue, "queue"), prefill=ph(prefill, "prefill"),
        decode=ph(decode, "decode"),
        server_e2e=PhaseTime(count=20, mean_ms=e2e, metric="vllm:e2e_request_latency_seconds"),
        client_e2e_mean_ms=e2e + network, network_ms=network, frontend_ms=frontend,
    )  # fmt: skip


@pytest.fixture
def with_splits(run_data: tuple[Summary, list[Record]]) -> Summary:
    """build_run's steps (met, met, missed, missed) with splits: the third's queue grows."""
    summary, _ = run_data
    s0, s1, s2, _dead = summary.steps
    s0.time_split = split(1.0, 8.0, 10.0, 2.0, 4.0)
    s1.time_split = split(5.0, 12.0, 20.0, 3.0, 6.0)
    s2.time_split = split(40.0, 14.0, 30.0, -1.0, 7.0)
    return summary


def test_growth_names_the_part_against_the_last_step_that_met(with_splits: Summary) -> None:
    s0, s1, s2, dead = with_splits.steps
    assert [s.sla.verdict for s in with_splits.steps] == ["met", "met", "missed", "missed"]
    assert split_growth(s1, [s0]) is None  # met: nothing to explain
    line = split_growth(s2, [s0, s1])
    # steps are named by their index, as the console's "step 1 · ..." headers name them
    assert (
        line == f"queue grew most: +35 ms mean (5 -> 40) against step {s1.index}, which met the SLA"
    )
    assert split_growth(dead, [s0, s1, s2]) is None  # no split of its own


def test_growth_without_a_met_step_uses_the_first_with_a_split(with_splits: Summary) -> None:
    s0, s1, *_ = with_splits.steps
    s0.sla.verdict = s1.sla.verdict = "missed"
    s1.time_split = split(5.0, 12.0, 90.0, 3.0)
    line = split_growth(s1, [s0])
    assert line is not None and line.startswith("decode grew most: +80 ms mean (10 -> 90)")
    assert line.endswith(f"against step {s0.index}, the first with a split")


def test_growth_can_name_the_server_frontend(with_splits: Summary) -> None:
    s0, s1, s2, _ = with_splits.steps
    s2.time_split = split(5.0, 12.0, 20.0, 3.0, 96.0)  # only the frontend's time grew
    line = split_growth(s2, [s0, s1])
    assert line == (
        f"server frontend grew most: +90 ms mean (6 -> 96) against step {s1.index}, "
        "which met the SLA"
    )


def test_facts_line(with_splits: Summary) -> None:
    s2 = with_splits.steps[2]
    s2.time_split = s2.time_split and s2.time_split.model_copy(update={"grew_most": "queue up"})
    assert time_split.time_split_text(s2) == (
        "where the time went (vllm histograms, means): queue 40 ms, prefill 14 ms, "
        "decode 30 ms, server frontend 7 ms, network + client -1 ms; queue up"
    )
    assert time_split.time_split_text(with_splits.steps[3]) is None


def test_a_mean_that_rounds_to_zero_reads_0_not_minus_0(with_splits: Summary) -> None:
    s0 = with_splits.steps[0]
    s0.time_split = split(0.2, 8.0, 10.0, -0.4, -0.3)  # the mock: float noise about 0
    assert time_split.time_split_text(s0) == (
        "where the time went (vllm histograms, means): queue 0 ms, prefill 8 ms, "
        "decode 10 ms, server frontend 0 ms, network + client 0 ms"
    )


def test_bars_stack_in_load_order(with_splits: Summary) -> None:
    bars = split_bars(with_splits)
    assert [b.label for b in bars] == ["1", "4", "16"]
    assert [b.missed for b in bars] == [False, False, True]
    fig = draw_time_split(with_splits)
    ax = fig.axes[0]
    # one bar container per part, in the order of a request's life
    labels = [c.get_label() for c in ax.containers]
    assert labels == [
        "queue", "prefill", "decode", "server frontend (server E2E - queue - prefill - decode)",
        "network + client (client - server E2E)",
    ]  # fmt: skip
    heights = {c.get_label(): [r.get_height() for r in c] for c in ax.containers}
    bottoms = {c.get_label(): [r.get_y() for r in c] for c in ax.containers}
    assert heights["queue"] == [1.0, 5.0, 40.0]
    assert bottoms["decode"] == [9.0, 17.0, 54.0]  # on top of queue + prefill
    assert heights[labels[3]] == [4.0, 6.0, 7.0]
    assert bottoms[labels[3]] == [19.0, 37.0, 84.0]  # on top of the engine's parts
    assert heights[labels[4]] == [2.0, 3.0, 0.0]  # a negative difference draws 0
    # a bar's top is the client's E2E mean (where nothing is negative)
    tops = [b + h for b, h in zip(bottoms[labels[4]], heights[labels[4]], strict=True)]
    clients = [s.time_split.client_e2e_mean_ms for s in with_splits.steps[:2] if s.time_split]
    assert tops[:2] == clients == [25.0, 46.0]
    colours = {c.get_label(): c[0].get_facecolor() for c in ax.containers}
    assert len(set(colours.values())) == len(PART_COLOURS)
    ticks = [t.get_color() for t in ax.get_xticklabels()]
    assert ticks[2] != ticks[0]  # the missed step's label stands out


def test_written_only_when_a_step_has_a_split(with_splits: Summary, tmp_path: Path) -> None:
    written, notes = figures.write_plots(with_splits, None, [], tmp_path / "a")
    assert notes == [] and written["time_split"].name == "time_split.png"
    for step in with_splits.steps:
        step.time_split = None
    written, _ = figures.write_plots(with_splits, None, [], tmp_path / "b")
    assert "time_split" not in written
