"""The requests of one step: prompt text, prompt length and max output tokens.

Seeded per (workload seed, step index), so each step sees the same requests
whatever ran before it, and a rerun sends the same prompts.

Imports: numpy, loadgen.scenario.models, loadgen.workload.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from loadgen.scenario.models import WorkloadSpec
from loadgen.workload.lengths import sample_lengths
from loadgen.workload.prompts import make_prompt

__all__ = ["Message", "Prompt", "RequestSource", "RequestSpec", "plan_requests", "step_rng"]


#: One chat message: ``{"role": "system" | "user" | "assistant", "content": text}``.
Message = dict[str, str]
#: What a request sends: text, token ids (completions only) or chat messages.
Prompt = str | list[int] | list[Message]


@dataclass(slots=True, frozen=True)
class RequestSpec:
    """One request to send."""

    index: int
    prompt: Prompt
    prompt_tokens: int  # as planned: exact with a tokenizer, else the approximation
    max_tokens: int
    warmup: bool = False
    ramp: bool = False  # started during load.ramp_up_s: recorded, out of the metrics
    session: int | None = None
    turn: int | None = None  # 0-based turn of a multi-turn session
    keep_text: bool = False  # the runner needs the answer text (multi-turn sessions)


def step_rng(seed: int, step: int, stream: int) -> np.random.Generator:
    """Independent generator for (seed, step, stream); stream 0 = requests, 1 = arrivals."""
    return np.random.default_rng([seed, step, stream])


def plan_requests(
    spec: WorkloadSpec, rng: np.random.Generator, n: int, *, start: int = 0, warmup: int = 0
) -> list[RequestSpec]:
    """``n`` requests numbered from ``start``; the first ``warmup`` are flagged warm-up."""
    prompt_lens = sample_lengths(spec.prompt_tokens, n, rng)
    output_lens = sample_lengths(spec.output_tokens, n, rng)
    return [
        RequestSpec(
            index=start + i,
            prompt=make_prompt(p, rng) if spec.prompt_as == "text" else _token_ids(p, spec, rng),
            prompt_tokens=p,
            max_tokens=o,
            warmup=i < warmup,
        )
        for i, (p, o) in enumerate(zip(prompt_lens, output_lens, strict=True))
    ]


def _token_ids(n: int, spec: WorkloadSpec, rng: np.random.Generator) -> list[int]:
    """``n`` random ids above the usual special-token range (as vLLM's random dataset)."""
    low = min(100, spec.vocab_size - 1)
    return [int(i) for i in rng.integers(low, spec.vocab_size, size=n)]


class RequestSource:
    """Endless supply of requests for duration-bound steps, planned in batches."""

    def __init__(self, spec: WorkloadSpec, rng: np.random.Generator, *, start: int = 0) -> None:
        self._spec = spec
        self._rng = rng
        self._next = start
        self._batch: list[RequestSpec] = []

    def __call__(self) -> RequestSpec:
        if not self._batch:
            self._batch = plan_requests(self._spec, self._rng, 64, start=self._next)[::-1]
            self._next += 64
        return self._batch.pop()
