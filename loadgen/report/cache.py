"""The step's prefix cache: the server's hit rate, and the cached tokens its answers counted.

Owns :func:`section`: the ``prefix cache hit`` line (the server's counters,
:func:`prefix_cache_text`), the ``cached tokens (usage)`` line (the answers'
``cached_tokens``, :func:`cached_text`) and their steps.csv columns
(``prefix_cache_hit_rate``, ``cache_*``: written only when some step has one,
loadgen.report.step_table.OPTIONAL_COLUMNS). A run without shared prefixes
says nothing.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["cached_text", "prefix_cache_text", "section"]


def prefix_cache_text(step: StepSummary) -> str | None:
    """``prefix cache hit 62.5% of 12,000 prompt tokens``; None without a hit rate."""
    pc = step.prefix_cache
    if pc is None or pc.hit_rate is None:
        return None
    looked_up = f" of {pc.queries_tokens:,.0f} prompt tokens" if pc.queries_tokens else ""
    return f"prefix cache hit {100 * pc.hit_rate:.1f}%{looked_up}"


def cached_text(step: StepSummary) -> str | None:
    """``cached tokens (usage): 58.1% of prompt tokens, 90% of requests, 595/request; by
    turn 0%, 88%, 93%``: the prefix cache as the server's answers counted it; None when
    no answer counted a cached token (a server that counts them counts 0 on every request
    of a run without shared prefixes: nothing to say)."""
    c = step.cache
    if c is None or not c.cached_tokens:
        return None
    text = (
        f"cached tokens (usage): {100 * c.hit_rate:.1f}% of prompt tokens, "
        f"{100 * c.requests_with_hits:.0f}% of requests, "
        f"{c.cached_tokens_per_request:,.0f}/request"
    )
    if c.session_hit_rate_mean is not None:
        text += f", {100 * c.session_hit_rate_mean:.1f}% a session"
    if c.by_turn:
        rates = ", ".join("-" if r is None else f"{100 * r:.0f}%" for r in c.by_turn)
        text += f"; by {c.by_turn_of or 'turn'} {rates}"
    return text


def section(step: StepSummary) -> Section:
    """The cache's lines (none without a hit) and its columns (empty cells without one)."""
    pc, cache = step.prefix_cache, step.cache
    lines = tuple(t for t in (prefix_cache_text(step), cached_text(step)) if t is not None)
    fields = {
        "prefix_cache_hit_rate": pc.hit_rate if pc is not None else None,
        "cache_hit_rate": cache.hit_rate if cache is not None else None,
        "cache_requests_with_hits": cache.requests_with_hits if cache is not None else None,
        "cache_tokens_per_request": cache.cached_tokens_per_request if cache is not None else None,
    }
    return Section("cache", lines, fields=fields)
