"""A step and its run in the words every output and every comparison uses.

Owns a step's configured load as one number (:func:`load_value`: how
``compare`` matches steps across runs, the x of the plots over the load, the
``load`` column of steps.csv) and in words (:func:`load_label`:
``concurrency 16``, ``rate 4 req/s (poisson)``), whether a run spoke a pooling
API (:func:`is_pooling`: embeddings and rerank have no token timing) and what
its inputs are called (:func:`inputs_word`).
"""

from __future__ import annotations

from loadgen.summary import StepSummary, Summary
from loadgen.vocab import POOLING_APIS

__all__ = ["inputs_word", "is_pooling", "load_label", "load_value"]


def load_value(step: StepSummary) -> float | None:
    """The step's configured load: concurrency, rate in req/s, a trace's time scale, or
    offline the cap on requests in flight (None: no cap)."""
    load = step.load
    value = {
        "concurrency": load.concurrency,
        "trace": load.time_scale,
        "offline": load.max_concurrency,
    }.get(load.mode, load.rate)
    return None if value is None else float(value)


def load_label(step: StepSummary) -> str:
    """``concurrency 16``, ``rate 4 req/s (poisson)`` (``sessions/s`` where each arrival
    starts a session or agent task), ``trace x0.5`` or ``offline (all in flight)``."""
    load = step.load
    if load.mode == "concurrency":
        return f"concurrency {load.concurrency}"
    if load.mode == "offline":
        cap = f"at most {load.max_concurrency}" if load.max_concurrency else "all"
        return f"offline ({cap} in flight)"
    if load.mode == "trace":
        scale = f" x{load.time_scale:g}" if load.time_scale is not None else ""
        cap = f" (max {load.max_concurrency} in flight)" if load.max_concurrency else ""
        return f"trace{scale}{cap}"
    cap = f", max {load.max_concurrency} in flight" if load.max_concurrency else ""
    unit = "sessions/s" if step.sessions is not None else "req/s"  # arrivals start sessions
    return f"rate {load.rate:g} {unit} ({load.arrival}{cap})"


def is_pooling(summary: Summary) -> bool:
    """The run spoke a pooling API (its steps have no token timing)."""
    return summary.api in POOLING_APIS


def inputs_word(step: StepSummary) -> str:
    """``documents`` for rerank, ``inputs`` for embeddings."""
    return "documents" if step.pooling is not None and step.pooling.api == "rerank" else "inputs"
