"""What ``loadgen compare``, its gate and ``--repeat`` decide of pooling runs (embeddings, rerank).

A pooling answer is one JSON body with no tokens generated
(:mod:`loadgen.summary.pooling`): its steps have no TTFT, ITL or TPOT and no
output tokens/s. Where every run compared is a pooling one, the comparison
decides on what :mod:`loadgen.report.pooling` shows for one run:

- the figures compared: E2E p50 and p99, requests/s, goodput, inputs/s
  (documents/s for rerank), input tokens/s and the error rate
  (:func:`table_metrics`);
- the gate: ``--fail-if`` on a token-timing field (``ttft_ms.p99``,
  ``throughput.output_tokens_per_s``, ...) of a pooling run is one line, exit 2,
  naming the fields it has (:func:`check_gates`), never a silent "not checked";
- ``--repeat``: the spread of E2E, requests/s, inputs/s and input tokens/s
  (:func:`repeat_metrics`).

The overlays' axes of pooling runs are drawn by :mod:`loadgen.report.documents.comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from loadgen.errors import ScenarioError
from loadgen.results import inputs_word, is_pooling
from loadgen.summary import THROUGHPUT_FIELDS, TOKEN_TIMING_FIELDS, StepSummary, Summary

if TYPE_CHECKING:
    from loadgen.compare.gate import Gate

__all__ = [
    "POOLING_GATE_EXAMPLES",
    "POOLING_REPEAT_METRICS",
    "all_pooling",
    "check_gates",
    "repeat_metrics",
    "table_metrics",
    "token_timing",
]

#: the step figures whose run-to-run spread a pooling sweep reports
POOLING_REPEAT_METRICS = (
    "e2e_ms.p50",
    "e2e_ms.p99",
    "throughput.requests_per_s",
    "throughput.inputs_per_s",
    "throughput.input_tokens_per_s",
    "requests.error_rate",
)
#: the fields a pooling run's gate may name, as the error says
POOLING_GATE_EXAMPLES = (
    "e2e_ms.p99",
    "throughput.requests_per_s",
    "throughput.inputs_per_s",
    "throughput.input_tokens_per_s",
    "requests.error_rate",
)


def all_pooling(summaries: Sequence[Summary]) -> bool:
    """Every run spoke a pooling API (none of them has token timing)."""
    return bool(summaries) and all(is_pooling(s) for s in summaries)


def _word(summary: Summary) -> str:
    return inputs_word(summary.steps[0]) if summary.steps else "inputs"


def table_metrics(
    summaries: Sequence[Summary], generative: tuple[tuple[str, str, str], ...]
) -> tuple[tuple[str, str, str], ...]:
    """(field path, title, unit) of each comparison table: ``generative`` (the token
    tables), or a pooling run's figures when every run is a pooling one."""
    if not all_pooling(summaries):
        return generative
    word = _word(summaries[0])
    return (
        ("e2e_ms.p50", "E2E p50", "ms"),
        ("e2e_ms.p99", "E2E p99", "ms"),
        ("throughput.requests_per_s", "requests/s", "req/s"),
        ("throughput.goodput_requests_per_s", "goodput", "req/s"),
        ("throughput.inputs_per_s", word, "/s"),  # the overview's "inputs (/s)"
        ("throughput.input_tokens_per_s", "input tokens/s", "tok/s"),
        ("requests.error_rate", "error rate", "%"),
    )


def token_timing(path: str) -> bool:
    """Whether a gate's field is token timing or output tokens/s (none in a pooling run)."""
    head, _, rest = path.partition(".")
    if head in TOKEN_TIMING_FIELDS:
        return True
    return head in ("throughput", "throughput_whole") and rest in THROUGHPUT_FIELDS


def check_gates(gates: Sequence[Gate], names: Sequence[str], summaries: Sequence[Summary]) -> None:
    """A gate on a token-timing field where a run is a pooling one: a one-line ScenarioError."""
    pooling = [(n, s) for n, s in zip(names, summaries, strict=True) if is_pooling(s)]
    if not pooling:
        return
    for gate in gates:
        if token_timing(gate.path):
            name, summary = pooling[0]
            fields = ", ".join(POOLING_GATE_EXAMPLES)
            raise ScenarioError(
                f"--fail-if {gate.text!r}: {name} is a pooling run ({summary.api}): it has "
                f"no token timing or output tokens (no {gate.path}); gate one of {fields}"
            )


def repeat_metrics(steps: Sequence[StepSummary], generative: tuple[str, ...]) -> tuple[str, ...]:
    """The spread's figures: ``generative``, or a pooling step's."""
    if steps and all(s.pooling is not None for s in steps):
        return POOLING_REPEAT_METRICS
    return generative
