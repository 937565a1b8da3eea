"""What every output shows of a pooling API's step (embeddings, rerank) instead of token timing.

A pooling answer is one JSON body and no tokens are generated: there is no
TTFT, ITL or TPOT to show, and no output tokens. The outputs show E2E
latency, requests/s, inputs/s (documents/s for rerank) and input tokens/s in
their place (docs/metrics.md, "Pooling APIs"):

- the console's throughput line (:func:`throughput_parts`); its latency table
  keeps the E2E row only (:mod:`loadgen.report.console`);
- steps.csv: no ``ttft_*``, ``itl_*``, ``tpot_*`` or output-token columns;
  ``inputs_per_s``, ``inputs_total``, ``inputs_mean``, ``vector_dims`` beside
  the input tokens (:func:`csv_columns`, :func:`csv_fields`);
- report.md/html: the overview's columns
  (:func:`loadgen.report.pooling_views.overview`) and each step's latency
  table (E2E only: :data:`LATENCY_ROWS`);
- the plots: :mod:`loadgen.report.pooling_figures`.

Imports: loadgen.summary, loadgen.vocab.
"""

from __future__ import annotations

from typing import Any

from loadgen.summary import StepSummary, Summary
from loadgen.vocab import POOLING_APIS

__all__ = [
    "CSV_DROPPED",
    "CSV_FIELDS",
    "LATENCY_ROWS",
    "csv_columns",
    "csv_fields",
    "inputs_word",
    "is_pooling",
    "throughput_parts",
]

#: steps.csv columns a pooling run leaves out: by prefix, and by name
CSV_DROPPED = ("ttft_", "itl_", "tpot_", "output_tokens_", "token_count_mismatches", "short_")
#: steps.csv columns a pooling run adds, after input_tokens_per_s
CSV_FIELDS = ("inputs_per_s", "inputs_total", "inputs_mean", "vector_dims")
#: a pooling step's latency table in report.md: summary field -> row name
LATENCY_ROWS = (("e2e_ms", "E2E"), ("e2e_from_sent_ms", "E2E from send"))


def is_pooling(summary: Summary) -> bool:
    """The run spoke a pooling API (its steps have no token timing)."""
    return summary.api in POOLING_APIS


def inputs_word(step: StepSummary) -> str:
    """``documents`` for rerank, ``inputs`` for embeddings."""
    return "documents" if step.pooling is not None and step.pooling.api == "rerank" else "inputs"


def throughput_parts(step: StepSummary) -> list[str]:
    """``21.30 req/s · 170.4 inputs/s · 16,409 input tok/s · goodput 21.30 req/s``."""
    t = step.throughput
    per_s = "-" if t.inputs_per_s is None else f"{t.inputs_per_s:,.1f}"
    parts = [
        f"{t.requests_per_s:.2f} req/s",
        f"{per_s} {inputs_word(step)}/s",
        f"{t.input_tokens_per_s:,.0f} input tok/s",
    ]
    if t.goodput_requests_per_s is not None:
        parts.append(f"goodput {t.goodput_requests_per_s:.2f} req/s")
    return parts


def csv_columns(columns: list[str]) -> list[str]:
    """steps.csv's columns for a pooling run: token timing out, :data:`CSV_FIELDS` in."""
    kept = [c for c in columns if not c.startswith(CSV_DROPPED)]
    at = kept.index("input_tokens_per_s") + 1 if "input_tokens_per_s" in kept else len(kept)
    return [*kept[:at], *CSV_FIELDS, *kept[at:]]


def csv_fields(step: StepSummary) -> dict[str, Any]:
    """A pooling step's :data:`CSV_FIELDS` (``vector_dims``: ``64:98;32:2``)."""
    p = step.pooling
    dims = ";".join(f"{d}:{n}" for d, n in (p.vector_dims or {}).items()) if p else ""
    return {
        "inputs_per_s": step.throughput.inputs_per_s,
        "inputs_total": p.inputs_total if p else None,
        "inputs_mean": p.inputs_mean if p else None,
        "vector_dims": dims or None,
    }
