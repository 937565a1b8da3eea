"""What every output shows of a pooling API's step (embeddings, rerank) instead of token timing.

A pooling answer is one JSON body and no tokens are generated: there is no
TTFT, ITL or TPOT to show, and no output tokens. The outputs show E2E
latency, requests/s, inputs/s (documents/s for rerank) and input tokens/s in
their place (docs/metrics.md, "Pooling APIs"):

- the console's throughput line (:func:`throughput_parts`); its latency table
  keeps the E2E row only (:mod:`loadgen.report.terminal.console`); the per-endpoint and
  per-model breakdowns (console lines, report tables) show no TTFT, ITL or
  output tokens/s (:func:`keep_column`, :func:`kept_columns`,
  :func:`part_table`);
- steps.csv: no ``ttft_*``, ``itl_*``, ``tpot_*`` or output-token columns (nor
  ``endpoint<i>_`` / ``model<i>_`` ones);
  ``inputs_per_s``, ``inputs_total``, ``inputs_mean``, ``vector_dims`` beside
  the input tokens (:func:`csv_columns`, :func:`csv_fields`);
- report.md/html: the overview's columns
  (:func:`loadgen.report.plots.pooling_views.overview`) and each step's latency
  table (E2E only: :data:`LATENCY_ROWS`);
- the plots: :mod:`loadgen.report.plots.pooling_figures`; the latency CDF draws E2E
  only (:func:`loadgen.report.plots.cdf_figure.draw_e2e_cdf`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loadgen.results import inputs_word
from loadgen.summary import StepSummary

__all__ = [
    "CSV_DROPPED",
    "CSV_FIELDS",
    "LATENCY_ROWS",
    "csv_columns",
    "csv_fields",
    "keep_column",
    "kept_columns",
    "part_table",
    "throughput_parts",
]

#: steps.csv columns a pooling run leaves out: by prefix, and by name
CSV_DROPPED = ("ttft_", "itl_", "tpot_", "output_tokens_", "token_count_mismatches", "short_")
#: a breakdown column (endpoint, model) a pooling step leaves out: by its header's start
PART_DROPPED = ("TTFT", "ITL", "TPOT", "output")
#: steps.csv: a breakdown's columns, ``endpoint<i>_<field>`` or ``model<i>_<field>``
_PART_COLUMN = re.compile(r"(?:endpoint|model)\d+_(.*)")
#: steps.csv columns a pooling run adds, after input_tokens_per_s
CSV_FIELDS = ("inputs_per_s", "inputs_total", "inputs_mean", "vector_dims")
#: a pooling step's latency table in report.md: summary field -> row name
LATENCY_ROWS = (("e2e_ms", "E2E"), ("e2e_from_sent_ms", "E2E from send"))


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


def keep_column(step: StepSummary, header: str) -> bool:
    """Whether a breakdown column (endpoint, model) named ``header`` is shown for ``step``:
    all of them, but no token timing or output tokens for a pooling step."""
    return step.pooling is None or not header.startswith(PART_DROPPED)


def kept_columns(step: StepSummary, header: Sequence[str]) -> list[int]:
    """The indices of the breakdown columns in ``header`` that :func:`keep_column` keeps."""
    return [i for i, h in enumerate(header) if keep_column(step, h)]


def part_table(
    step: StepSummary, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A breakdown table's header and rows with the columns :func:`keep_column` drops out."""
    keep = kept_columns(step, header)
    return tuple(header[i] for i in keep), tuple(tuple(r[i] for i in keep) for r in rows)


def _dropped(column: str) -> bool:
    part = _PART_COLUMN.fullmatch(column)
    return (part.group(1) if part else column).startswith(CSV_DROPPED)


def csv_columns(columns: list[str]) -> list[str]:
    """steps.csv's columns for a pooling run: token timing out (the step's, and each
    endpoint's and model's), :data:`CSV_FIELDS` in."""
    kept = [c for c in columns if not _dropped(c)]
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
