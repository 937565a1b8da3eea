"""Token counts of a step, and how the lengths asked for compare with what the server saw."""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.records import Record
from loadgen.summary import PromptLengthCheck, TokenCounts

__all__ = [
    "PROMPT_TOLERANCE",
    "prompt_length_check",
    "short_output_warning",
    "token_counts",
    "usage_ignored_warning",
]

#: Relative prompt-length difference (server vs requested) beyond which a request is counted.
PROMPT_TOLERANCE = 0.02


def token_counts(ok: Sequence[Record], *, expect_full_output: bool = False) -> TokenCounts:
    """Totals over the successful requests; a short output has output_tokens < max_tokens."""
    return TokenCounts(
        output_total=sum(r.output_tokens for r in ok),
        input_total=sum(r.prompt_tokens for r in ok),
        output_events_total=sum(r.output_events for r in ok),
        count_mismatches=sum(1 for r in ok if r.count_mismatch),
        server_counts=sum(1 for r in ok if r.output_tokens_server is not None),
        prompt_requested_total=sum(r.prompt_tokens_requested for r in ok),
        reasoning_total=sum(r.reasoning_tokens for r in ok),
        short_outputs=sum(1 for r in ok if r.output_tokens < r.max_tokens),
        full_output_expected=expect_full_output,
    )


def short_output_warning(tokens: TokenCounts, ok: int) -> str | None:
    """A warning when full outputs were forced and some requests still ended short."""
    if not tokens.full_output_expected or not tokens.short_outputs:
        return None
    return (
        f"{tokens.short_outputs} of {ok} requests ended before max_tokens although the "
        "request body forces full outputs (ignore_eos, or min_tokens = max_tokens)"
    )


def usage_ignored_warning(ignored: int, measured: int) -> str | None:
    """A warning when the server sent usage blocks loadgen could not believe (a count that
    is a string, say): those requests were measured, their tokens counted from the stream."""
    if not ignored:
        return None
    return (
        f"{ignored} of {measured} requests had unusable usage from the server (a token count "
        "that is not an integer in range); it was ignored and their output tokens were "
        "counted from the stream (records: usage_ignored)"
    )


def prompt_length_check(
    ok: Sequence[Record], tolerance: float = PROMPT_TOLERANCE
) -> PromptLengthCheck:
    """Relative difference = (server prompt tokens - requested) / requested, per request.

    Over successful requests with a server count and a requested length > 0 that
    carried no image or audio (the server counts their tokens; the plan cannot).
    A request is beyond tolerance when |difference| > ``tolerance`` (0: any
    difference at all).
    """
    diffs = [
        (s - r.prompt_tokens_requested) / r.prompt_tokens_requested
        for r in ok
        if (s := r.prompt_tokens_server) is not None
        and r.prompt_tokens_requested > 0
        and not (r.images or r.audio_s)
    ]
    if not diffs:
        return PromptLengthCheck(tolerance=tolerance)
    return PromptLengthCheck(
        compared=len(diffs),
        mean_rel_diff=sum(diffs) / len(diffs),
        worst_rel_diff=max(diffs, key=abs),
        beyond_tolerance=sum(1 for d in diffs if abs(d) > tolerance),
        tolerance=tolerance,
    )
