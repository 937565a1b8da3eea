"""Speculative decoding end to end: loadgen against the mock's simulated draft model.

The mock (``--spec-decode 3:0.7``) drafts 3 tokens per request per engine step,
keeps each with probability 0.7 and sends the step's tokens as one event; its
truth file says, per request, how many drafts, draft tokens and accepted tokens
it had and when it wrote each token (tokens of one event share a stamp). So the
step's counters must equal the truth's sums exactly, the acceptance rate must
be 0.7 within the binomial error of that many draft tokens, the events must be
fewer than the tokens, and loadgen's per-event ITL and per-token TPOT must be
the mock's own within a millisecond.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest

from loadgen.records import Record
from loadgen.report.spec_decode import spec_decode_text
from loadgen.scenario import Scenario
from loadgen.summary import Summary

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
MS = 1e6
RATE = 0.7


def test_acceptance_rate_events_and_itl_against_the_mocks_truth(
    run: RunFixture, scenario: Make, tmp_path: Path
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    args = ["--spec-decode", f"3:{RATE}", "--step-base-ms", "10", "--truth", str(truth_path)]
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": args}},
        workload={"output_tokens": {"dist": "fixed", "value": 64}},
        load={"concurrency": [4], "requests_per_step": 24},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.ok == 24
    truth = {row["request_id"]: row for row in map(orjson.loads, truth_path.read_bytes().split())}
    sums = [sum(row["spec_decode"][i] for row in truth.values()) for i in range(3)]
    sd = step.spec_decode
    assert sd is not None
    assert [sd.drafts, sd.draft_tokens, sd.accepted_tokens] == sums  # the mock's own counts
    assert sd.emitted_tokens == sd.drafts + sd.accepted_tokens
    sigma = (RATE * (1 - RATE) / sd.draft_tokens) ** 0.5  # binomial, given the draft tokens
    assert sd.acceptance_rate is not None and abs(sd.acceptance_rate - RATE) < 4 * sigma
    assert sd.mean_accepted_length == 1 + sd.accepted_tokens / sd.drafts
    assert sd.acceptance_by_position is not None and len(sd.acceptance_by_position) == 3

    tokens = step.tokens
    assert tokens.output_total == 24 * 64
    assert tokens.output_events_total < tokens.output_total  # several tokens per event
    assert sd.tokens_per_event == tokens.output_total / tokens.output_events_total
    gaps_true, gaps_seen, tpot_true, tpot_seen = [], [], [], []
    for rec in records:
        row = truth[rec.request_id]
        writes = sorted(set(row["token_ns"]))  # one write = one event
        assert rec.output_events == len(writes) and rec.output_tokens == row["output_tokens"]
        gaps_true += np.diff(writes).tolist()
        gaps_seen += np.diff(rec.token_ns).tolist()
        tpot_true.append((writes[-1] - writes[0]) / (row["output_tokens"] - 1))
        assert rec.first_token_ns is not None and rec.last_token_ns is not None
        tpot_seen.append((rec.last_token_ns - rec.first_token_ns) / (rec.output_tokens - 1))
    # ITL is per event (one engine step), TPOT per token: the step over its tokens
    assert abs(step.itl_ms.mean - np.mean(gaps_true) / MS) < 1.0  # type: ignore[operator]
    assert abs(step.tpot_ms.mean - np.mean(tpot_true) / MS) < 1.0  # type: ignore[operator]
    assert abs(step.itl_ms.mean - np.mean(gaps_seen) / MS) < 1e-6  # type: ignore[operator]
    assert abs(step.tpot_ms.mean - np.mean(tpot_seen) / MS) < 1e-6  # type: ignore[operator]
    assert step.tpot_ms.mean is not None and step.itl_ms.mean is not None
    assert step.tpot_ms.mean < step.itl_ms.mean / 1.5  # 1 + 3 * 0.7 tokens per step, less the tail
    text = spec_decode_text(step)
    assert text is not None and "draft tokens accepted" in text and "per event" in text


def test_a_server_without_a_draft_model_leaves_it_null(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}},
        load={"concurrency": [1], "requests_per_step": 4},
    )
    summary, _, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.ok == 4 and step.spec_decode is None
    assert step.tokens.output_events_total == step.tokens.output_total  # one token an event


def test_two_replicas_counters_are_summed(run: RunFixture, scenario: Make) -> None:
    """Each replica drafts on its own; the step's figures are both endpoints' together."""
    args = ["--spec-decode", "2:0.5", "--step-base-ms", "10"]
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": args, "replicas": 2}},
        workload={"output_tokens": {"dist": "fixed", "value": 32}},
        load={"concurrency": [2], "requests_per_step": 8},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.ok == 8 and {r.endpoint for r in records} == {0, 1}
    sd = step.spec_decode
    assert sd is not None and sd.drafts > 0
    assert sd.draft_tokens <= 2 * sd.drafts
    # of a request's 32 tokens, the prefill step gives the first and a step with one token
    # left drafts nothing: its drafted steps emitted 30 or 31, on whichever replica it ran
    assert 8 * 30 <= sd.emitted_tokens <= 8 * 31
