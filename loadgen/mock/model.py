"""The mock's timing in steady state: what a closed loop of ``users`` gets from it, on paper.

The same formulas the server runs by, read without running it (``loadgen
workload`` estimates a run on the mock with them). Engine mode, with
``slots = min(max_num_seqs, kv_cache_tokens // (prompt + output))`` and each
step lasting :func:`~loadgen.mock.engine.step_ns`:

- one user: the engine idles between requests; the first step prefills,
  ``E2E = step(1, prompt) + (output - 1) * step(1, 0)``.
- up to ``slots`` users: a finished user's next request arrives during the
  next step and is admitted at the one after, so each user's cycle is
  ``output + 1`` steps, with ``users * output / (output + 1)`` running and
  ``users / (output + 1)`` prompts admitted a step: ``E2E = (output + 1) * step``.
- more users than slots: ``slots`` run, the rest queue; a step admits
  ``slots / output`` prompts, throughput is ``slots / (output * step)`` and
  ``E2E = users / throughput`` (Little's law), TTFT that less the decode.

Fixed mode: every request independent, ``E2E = ttft + (output - 1) * itl``
(``ttft`` in burst mode). Client and network time are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from loadgen.mock.engine import step_ns
from loadgen.mock.settings import Settings

__all__ = ["Steady", "closed_loop"]

_NS = 1e9


@dataclass(frozen=True, slots=True)
class Steady:
    """A closed loop's steady state: requests/s, and one request's TTFT and E2E in seconds."""

    throughput_rps: float
    ttft_s: float
    e2e_s: float


def closed_loop(
    settings: Settings, users: int, prompt_tokens: float, output_tokens: float
) -> Steady:
    """The steady state of ``users`` sending requests of these mean lengths back to back."""
    users = max(1, users)
    out = max(1.0, output_tokens)
    if settings.fixed:
        ttft = settings.ttft_ms / 1e3
        e2e = ttft if settings.burst else ttft + (out - 1) * settings.itl_ms / 1e3
        e2e = max(e2e, 1e-6)
        return Steady(users / e2e, ttft, e2e)
    prof = settings.profile
    slots = max(
        1, min(prof.max_num_seqs, prof.kv_cache_tokens // max(1, round(prompt_tokens + out)))
    )
    if users == 1:
        first = step_ns(prof, 1, round(prompt_tokens)) / _NS
        e2e = first + (out - 1) * step_ns(prof, 1, 0) / _NS
        return Steady(1 / e2e, first, e2e)
    if users <= slots:
        running = users * out / (out + 1)
        step = step_ns(prof, round(running), round(prompt_tokens * users / (out + 1))) / _NS
        e2e = (out + 1) * step
        return Steady(users / e2e, 2 * step, e2e)
    step = step_ns(prof, slots, round(prompt_tokens * slots / out)) / _NS
    rate = slots / (out * step)
    e2e = users / rate
    return Steady(rate, e2e - (out - 1) * step, e2e)
