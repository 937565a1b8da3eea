"""Plain-text tables of step summaries for the terminal.

Imports: loadgen.summary only (outputs see only the summary).
"""

from __future__ import annotations

from loadgen.summary import Distribution, StepSummary

__all__ = ["format_step", "load_label"]


def load_label(step: StepSummary) -> str:
    load = step.load
    if load.mode == "concurrency":
        return f"concurrency {load.concurrency}"
    cap = f", max {load.max_concurrency} in flight" if load.max_concurrency else ""
    return f"rate {load.rate:g} req/s ({load.arrival}{cap})"


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _row(name: str, d: Distribution) -> str:
    cells = [d.mean, d.p50, d.p90, d.p95, d.p99, d.max]
    return f"  {name:<10}" + "".join(f"{_fmt(c):>10}" for c in cells)


def format_step(step: StepSummary) -> str:
    """A readable block: counts, throughput, latency table, SLA and warnings."""
    r, t = step.requests, step.throughput
    lines = [
        f"step {step.index} · {load_label(step)}" + (" · INTERRUPTED" if step.interrupted else ""),
        f"  requests  {r.ok} ok, {r.failed} failed"
        + (f" {r.errors}" if r.errors else "")
        + f", {r.warmup} warm-up · window {step.duration_s:.2f} s",
        f"  throughput {t.requests_per_s:.2f} req/s · {t.output_tokens_per_s:,.0f} output tok/s"
        f" · {t.input_tokens_per_s:,.0f} input tok/s"
        + (
            f" · goodput {t.goodput_requests_per_s:.2f} req/s"
            if t.goodput_requests_per_s is not None
            else ""
        ),
        f"  {'ms':<10}" + "".join(f"{h:>10}" for h in ("mean", "p50", "p90", "p95", "p99", "max")),
        _row("TTFT", step.ttft_ms),
        _row("ITL", step.itl_ms),
        _row("TPOT", step.tpot_ms),
        _row("E2E", step.e2e_ms),
    ]
    if step.ttft_from_scheduled_ms is not None:
        lines.insert(5, _row("TTFT(sch)", step.ttft_from_scheduled_ms))
    if step.tokens.count_mismatches:
        lines.append(
            f"  note: {step.tokens.count_mismatches} requests where usage tokens != token events"
        )
    if step.sla.checks:
        verdict = "PASS" if step.sla.passed else "FAIL"
        parts = [
            f"{c.metric}.{c.stat} {_fmt(c.value)} <= {c.bound:g} {'ok' if c.passed else 'MISS'}"
            for c in step.sla.checks
        ]
        lines.append(f"  SLA {verdict}: " + "; ".join(parts))
    lines.extend(f"  warning: {w}" for w in step.client.warnings)
    if step.little is not None and step.little.flagged:
        lines.append(
            f"  warning: Little's law off: {step.little.mean_in_flight:.1f} in flight sampled"
            f" vs {step.little.predicted:.1f} from throughput x latency"
        )
    return "\n".join(lines)
