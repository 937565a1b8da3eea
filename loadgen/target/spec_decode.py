"""The server's speculative-decoding counters, read before and after each step.

vLLM (0.32, ``vllm/v1/spec_decode/metrics.py``) publishes them only when it
serves with a draft model (``--speculative-config``): cumulative counters
``vllm:spec_decode_num_drafts_total`` (one per request per decoding step),
``vllm:spec_decode_num_draft_tokens_total`` (tokens proposed),
``vllm:spec_decode_num_accepted_tokens_total`` (tokens accepted) and
``vllm:spec_decode_num_accepted_tokens_per_pos_total`` with a ``position``
label. A step's figures are their differences over the step, summed over
engines and endpoints (:class:`~loadgen.summary.SpecDecodeStats` has the
formulas). A server without them, a scrape that fails, or a counter that went
back (a restart) gives no figures. The parsers read the step boundary's one
answer of each endpoint's ``/metrics`` (:mod:`~loadgen.target.scrape`), the
same text the prefix-cache counters come from.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.summary import SpecDecodeStats
from loadgen.telemetry import parse_prometheus_text

__all__ = [
    "ACCEPTED",
    "DRAFTS",
    "DRAFT_TOKENS",
    "PER_POSITION",
    "spec_decode_all",
    "spec_decode_counters",
    "spec_decode_delta",
]

DRAFTS = "vllm:spec_decode_num_drafts_total"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
SOURCE = "vllm:spec_decode_*"
_TOTALS = {DRAFTS: "drafts", DRAFT_TOKENS: "draft_tokens", ACCEPTED: "accepted"}


def spec_decode_counters(text: str) -> dict[str, float] | None:
    """``{"drafts", "draft_tokens", "accepted", "pos0", "pos1", ...}`` from ``/metrics`` text,
    summed over engines; None when the three totals are not all there."""
    out: dict[str, float] = {}
    samples, _bad = parse_prometheus_text(text)
    for sample in samples:
        if sample.value != sample.value:  # NaN
            continue
        key = _TOTALS.get(sample.name)
        if key is None and sample.name == PER_POSITION:
            position = sample.labels.get("position", "")
            key = f"pos{position}" if position.isdigit() else None
        if key is not None:
            out[key] = out.get(key, 0.0) + sample.value
    if not all(k in out for k in _TOTALS.values()):
        return None
    return out


def spec_decode_all(texts: Sequence[str | None]) -> dict[str, float] | None:
    """Every endpoint's counters (:func:`spec_decode_counters`), summed; None unless every
    endpoint has them (a None text, no answer, has none)."""
    total: dict[str, float] = {}
    for text in texts:
        one = spec_decode_counters(text) if text is not None else None
        if one is None:
            return None
        for key, value in one.items():
            total[key] = total.get(key, 0.0) + value
    return total or None


def spec_decode_delta(
    before: dict[str, float] | None,
    after: dict[str, float] | None,
    tokens_per_event: float | None = None,
) -> SpecDecodeStats | None:
    """The step's figures from two scrapes; None without both or when a counter went back."""
    if before is None or after is None:
        return None
    diff = {k: v - before.get(k, 0.0) for k, v in after.items()}
    if any(v < 0 for v in diff.values()):
        return None
    drafts, drafted, accepted = diff["drafts"], diff["draft_tokens"], diff["accepted"]
    positions = sorted((int(k[3:]), v) for k, v in diff.items() if k.startswith("pos"))
    by_position = [v / drafts for _, v in positions] if positions and drafts > 0 else None
    return SpecDecodeStats(
        drafts=drafts,
        draft_tokens=drafted,
        accepted_tokens=accepted,
        emitted_tokens=drafts + accepted,
        acceptance_rate=accepted / drafted if drafted > 0 else None,
        mean_accepted_length=1.0 + accepted / drafts if drafts > 0 else None,
        acceptance_by_position=by_position,
        tokens_per_event=tokens_per_event,
        source=SOURCE,
    )
