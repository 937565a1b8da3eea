"""loadgen's own error on the step's timings: how far its readings may be off.

``steps[].client_error`` holds, per metric, each reading's bound (how much earlier
or later than its stamps the server's events may have been: tokens that shared
a read got that read's stamp). Verdicts are decided with it
(loadgen.metrics.sla); this section shows the bounds beside the metrics. A
quiet client's readings are exact: report.md/html say so and the console says
nothing; a busy client's are listed, metric by metric, in every output.
steps.csv carries ``{metric}_error_ms_{p99,max}`` (ttft, itl, tpot, e2e).
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import ErrorBound, StepSummary
from loadgen.vocab import metric_label

__all__ = ["section"]

#: the metrics with a client error, in the outputs' order
_METRICS = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")


def section(step: StepSummary) -> Section | None:
    """``loadgen's own error: TTFT p99 6.0 ms, max 9.1 ms (12 of 400 readings not exact)
    · ITL exact · ...``; ``every reading exact`` on report.md/html alone when quiet."""
    error = step.client_error
    if error is None:
        return None
    bounds = {m: b for m in _METRICS if (b := error.bound(m)) is not None}
    if not bounds:
        return None
    fields: dict[str, object] = {}
    for metric, b in bounds.items():
        name = metric.removesuffix("_ms")
        fields[f"{name}_error_ms_p99"] = round(b.p99, 6)
        fields[f"{name}_error_ms_max"] = round(b.max, 6)
    if not any(b.uncertain for b in bounds.values()):
        names = ", ".join(metric_label(m, "") for m in bounds)
        text = f"loadgen's own error: none; every {names} reading exact (one event a read)"
        return Section("client_error", (text,), console=(), fields=fields)
    parts = [f"{metric_label(m, '')} {_text(b)}" for m, b in bounds.items()]
    return Section("client_error", ("loadgen's own error: " + " · ".join(parts),), fields=fields)


def _text(b: ErrorBound) -> str:
    """``p99 6.0 ms, max 9.1 ms (12 of 400 readings not exact)``, or ``exact``."""
    if not b.uncertain:
        return "exact"
    return (
        f"p99 {_ms(b.p99)}, max {_ms(b.max)} ({b.uncertain:,} of {b.readings:,} readings not exact)"
    )


def _ms(x: float) -> str:
    return f"{x:.2g} ms" if x < 10 else f"{x:.0f} ms"
