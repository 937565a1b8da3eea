"""Token counts, the prompt-length check, goodput and the steady window, over columns.

The column twins of :func:`loadgen.metrics.tokens.token_counts`,
:func:`~loadgen.metrics.tokens.prompt_length_check`,
:func:`loadgen.metrics.sla.request_meets_sla` and
:func:`loadgen.metrics.window.steady_or_why`: same definitions (in those
functions' docstrings), same numbers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.clock import NS_PER_MS
from loadgen.metrics import vector as v
from loadgen.metrics.columns import NONE
from loadgen.metrics.sla import per_request_bound
from loadgen.metrics.window import too_short
from loadgen.scenario import SlaSpec
from loadgen.summary import PromptLengthCheck, TokenCounts

__all__ = ["completed_in", "meets_sla", "prompt_length_check", "steady_window", "token_counts"]

Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


def token_counts(ok: v.Columns, expect_full_output: bool = False) -> TokenCounts:
    """``tokens.token_counts``: totals over the successful requests."""
    server = ok["output_server"]
    has_server = server != NONE
    output = ok["output_tokens"]
    return TokenCounts(
        output_total=int(output.sum()),
        input_total=int(ok["prompt_tokens"].sum()),
        output_events_total=int(ok["output_events"].sum()),
        count_mismatches=int((has_server & (server != ok["output_events"])).sum()),
        server_counts=int(has_server.sum()),
        prompt_requested_total=int(ok["prompt_requested"].sum()),
        reasoning_total=int(ok["reasoning_tokens"].sum()),
        short_outputs=int((output < ok["max_tokens"]).sum()),
        full_output_expected=expect_full_output,
    )


def prompt_length_check(ok: v.Columns, tolerance: float) -> PromptLengthCheck:
    """``tokens.prompt_length_check``: (server - requested) / requested per request."""
    server, requested = ok["prompt_server"], ok["prompt_requested"]
    text_only = (ok["images"] == 0) & (ok["audio_us"] == 0)  # media tokens are not planned
    has = (server != NONE) & (requested > 0) & text_only
    if not has.any():
        return PromptLengthCheck(tolerance=tolerance)
    diffs = (server[has] - requested[has]) / requested[has]
    return PromptLengthCheck(
        compared=int(diffs.size),
        mean_rel_diff=sum(diffs.tolist()) / diffs.size,  # Python's sum, in order, as before
        worst_rel_diff=float(diffs[np.argmax(np.abs(diffs))]),  # the first of the largest
        beyond_tolerance=int((np.abs(diffs) > tolerance).sum()),
        tolerance=tolerance,
    )


def meets_sla(ok: v.Columns, sla: SlaSpec, ttft_of: str, profile: str) -> Mask:
    """``sla.request_meets_sla`` of every successful request: within every per-request bound."""
    good = np.ones(len(ok), dtype=bool)
    frm = sla.latency_from
    if (bound := per_request_bound(sla.ttft_ms)) is not None:
        ttft, has = v.ttft_rows(ok, profile, ttft_of, frm)
        good &= has & ~(ttft > bound * NS_PER_MS)
    if (bound := per_request_bound(sla.tpot_ms)) is not None:
        tpot, has = v.tpot_rows(ok, profile)
        good &= ~has | ~(tpot > bound * NS_PER_MS)  # one-token answers have no TPOT
    if (bound := per_request_bound(sla.e2e_ms)) is not None:
        e2e, has = v.e2e(ok, profile)
        good &= has & ~(e2e + v.lead(ok, profile, frm) > bound * NS_PER_MS)
    return good


def steady_window(
    sent: Ints, ended: Ints, ok: Ints, concurrency: int | None
) -> tuple[int, int] | str:
    """``window.steady_or_why`` of the measured requests' sends, ends and ok flags."""
    if not sent.size:
        return "no measured requests"
    end = int(sent.max())
    if concurrency is not None:
        if sent.size <= concurrency:
            return f"no more measured requests than the concurrency ({concurrency})"
        after = max(int(np.partition(sent, concurrency - 1)[concurrency - 1]), int(ended.min()))
        later = sent[sent >= after]
        start = int(later.min()) if later.size else end  # none: no window (below)
    else:
        start = int(ended.min())
    if end <= start:
        return "no send after the first completion"
    e2e = np.sort((ended - sent)[ok != 0])
    request_ns = int(e2e[e2e.size // 2]) if e2e.size else 0
    why = too_short(start, end, int(completed_in(ended, start, end).sum()), request_ns)
    return why if why is not None else (start, end)


def completed_in(ended: Ints, start_ns: int, end_ns: int) -> Mask:
    """``window.completed_in``: which requests ended in ``(start_ns, end_ns]``."""
    return (ended > start_ns) & (ended <= end_ns)
