"""What ``loadgen calibrate`` prints: the ceiling's table, the machine's estimate, caveats.

Owns the estimate (workers x tokens per client CPU-second) and the rules that
say when a figure is not the client's ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from loadgen.ceiling.measure import (
    CLIENT_LATE_MS,
    LADDER,
    MOCK_BUSY,
    TOGETHER,
    Ceiling,
    CeilingReport,
)

__all__ = [
    "CLIENT_LATE_MS",
    "TOGETHER",
    "Estimate",
    "about",
    "caveats",
    "ceiling_json",
    "estimate",
    "format_ceiling",
    "ladder_line",
]


@dataclass(slots=True, frozen=True)
class Estimate:
    """What this machine can drive: ``workers`` processes of one core, each at the ceiling."""

    workers: int
    tokens_per_s: float  # one token per write, a live server's case
    burst_tokens_per_s: float | None
    basis: str  # one line: how the figure was made


def about(value: float) -> str:
    """``value`` to three significant figures, with thousands separators: 146,606 -> 147,000."""
    return f"{float(f'{value:.3g}'):,.0f}"


def estimate(report: CeilingReport) -> Estimate | None:
    """``workers`` x tokens per CPU-second; workers = cores - 1 (system) - 1 (the mock).

    The one-token-per-write figure leads, since a live server writes each token
    on its own; bursts only say how far a batching server lets a client go.
    Where the client's core was not full (the mock's pace was the limit) and
    tokens still came one per read, the figure is a floor: a busier client
    handles more sockets per wake-up and spends less per token.
    """
    live = report.regime("per-token") or report.regime("burst")
    if live is None or live.tokens_per_cpu_s <= 0:
        return None
    cores = report.pinning.cores
    workers = max(1, cores - 2)
    burst = report.regime("burst") if live.regime != "burst" else None
    per_core = f"{about(live.tokens_per_cpu_s)} output tokens per client CPU-second"
    kind = "one token per write" if live.regime == "per-token" else "bursts"
    basis = (
        f"{workers} x {per_core} ({kind}); workers = {cores} cores - 1 for the "
        "system - 1 for the mock, at least 1 (against a remote server, add the mock's core)"
    )
    one_by_one = live.tokens_per_read is None or live.tokens_per_read <= TOGETHER
    if live.regime == "per-token" and live.client_util < MOCK_BUSY and one_by_one:
        limit = " (the mock was the limit)" if report.stopped == "mock" else ""
        basis += (
            f"; a floor: the client's core was {live.client_util:.0%} busy at this pace{limit}, "
            "and a busier client spends less per token"
        )
    return Estimate(
        workers=workers,
        tokens_per_s=workers * live.tokens_per_cpu_s,
        burst_tokens_per_s=workers * burst.tokens_per_cpu_s if burst else None,
        basis=basis,
    )


def caveats(report: CeilingReport) -> list[str]:
    """What makes a figure less than the client's ceiling, one line each."""
    out: list[str] = []
    for c in report.ceilings:
        if c.requests_ok == 0:
            out.append(f"{c.regime}: no request succeeded ({c.failed} failed): no figure")
            continue
        if c.failed:
            out.append(f"{c.regime}: {c.failed} request(s) failed (not counted)")
        if c.regime == "burst" and c.mock_bound:
            out.append(
                f"burst: the mock's core was {c.mock_util:.0%} busy: the mock, not the "
                "client, was the limit, so the client's figure is a lower bound"
            )
        elif c.regime == "burst" and c.client_util < MOCK_BUSY:
            out.append(
                f"burst: the client used {c.client_util:.0%} of its core while the mock had "
                "time to spare: other processes took the rest, so output tokens/s is low "
                "(tokens per CPU-second still holds)"
            )
        if c.regime == "per-token" and (c.tokens_per_read or 0.0) > TOGETHER:
            lag = c.read_lag_p99_ms or 0.0
            if lag >= CLIENT_LATE_MS:
                who = (
                    f"the client read late (read lag p99 {lag:.1f} ms): it fell behind, or "
                    "other processes took its core (run again on a quieter machine)"
                )
            else:
                who = "the mock fell behind and wrote several at once (try a larger --itl-ms)"
            out.append(
                f"per-token: {c.tokens_per_read:.1f} tokens per read, not one: {who}; "
                "the figure flatters a live server's case"
            )
    if report.ladder and report.stopped in ("mock", "late"):
        last = report.ladder[-1]
        # where the rung it rates is the last and read tokens together, that is said above
        if last is not report.regime("per-token") or (last.tokens_per_read or 0.0) <= TOGETHER:
            short = (
                "the figure is a floor, not the client's ceiling"
                if report.stopped == "mock"
                else "the ladder stopped short of the client's ceiling"
            )
            out.append(f"per-token: {_stop_reason(report)}; {short}")
    return out


def _stop_reason(report: CeilingReport) -> str:
    """Why the per-token ladder stopped where it did, one phrase."""
    last = report.ladder[-1]
    util, lag = last.client_util, last.read_lag_p99_ms or 0.0
    offered = last.offered_tokens_per_s or 0.0
    if report.stopped == "client":
        return f"the client's core was {util:.0%} busy: its per-token ceiling"
    if report.stopped == "late":
        return (
            f"the client read late ({last.tokens_per_read or 0:.1f} tokens per read, read lag "
            f"p99 {lag:.1f} ms) with its core {util:.0%} busy: it fell behind in bursts, or "
            "other processes took its core (run again on a quieter machine)"
        )
    if report.stopped == "mock":
        return (
            f"the mock was the limit: it delivered {last.tokens_per_s:,.0f} tokens/s "
            f"({last.tokens_per_s / offered:.0%} of the offer, {last.tokens_per_read or 0:.1f} "
            f"per read) with the client's core {util:.0%} busy and reading on time "
            f"(read lag p99 {lag:.2f} ms)"
        )
    if report.stopped == "failed":
        return "no request succeeded"
    return (
        f"the ladder's top ({LADDER[-1]:g}x the first offer) with the client's core "
        f"{util:.0%} busy and the mock keeping up"
    )


def ladder_line(report: CeilingReport) -> str | None:
    """The per-token ladder's rungs, where it stopped and why, and the rung it rates."""
    if not report.ladder:
        return None
    offers = " -> ".join(f"{c.offered_tokens_per_s or 0:,.0f}" for c in report.ladder)
    rated = report.regime("per-token")
    which = (
        f"; rated at {rated.offered_tokens_per_s or 0:,.0f} offered (the highest rung with "
        "one token per read)"
        if rated is not None and rated is not report.ladder[-1]
        else ""
    )
    return f"per-token offered {offers} tokens/s; stopped: {_stop_reason(report)}{which}"


def _rows(report: CeilingReport) -> list[Ceiling]:
    """The table's rows: the other regimes, then every per-token rung."""
    if not report.ladder:
        return report.ceilings
    return [c for c in report.ceilings if c.regime != "per-token"] + report.ladder


def format_ceiling(report: CeilingReport) -> str:
    """The table, the estimate and its basis, for the terminal (:func:`caveats` apart)."""
    lines = [
        f"client ceiling against the built-in mock: {report.transport}, "
        f"{report.concurrency} streams, {report.tokens} tokens per response, "
        f"{report.seconds:g} s per regime and rung; per-token: from a token every "
        f"{report.itl_ms:g} ms per stream ({report.concurrency * 1000 / report.itl_ms:,.0f} "
        f"tokens/s offered), more rung by rung up to {LADDER[-1]:g}x, until the client's "
        "core is full or the mock falls behind",
        f"cores: {report.pinning.cores} ({report.pinning.note})",
        "",
        f"{'regime':<10} {'offered':>8} {'output tok/s':>13} {'client CPU-s':>13} "
        f"{'client CPU':>11} {'tok per CPU-s':>14} {'mock CPU':>9} {'tok per read':>13} "
        f"{'read lag p99':>13}",
    ]
    for c in _rows(report):
        offered = f"{c.offered_tokens_per_s / 1000:,.1f}k" if c.offered_tokens_per_s else "-"
        mock = f"{c.mock_util:.0%}" if c.mock_util is not None else "-"
        per_read = f"{c.tokens_per_read:.1f}" if c.tokens_per_read is not None else "-"
        lag = f"{c.read_lag_p99_ms:.2f} ms" if c.read_lag_p99_ms is not None else "-"
        lines.append(
            f"{c.regime:<10} {offered:>8} {c.tokens_per_s:>13,.0f} {c.client_cpu_s:>13.2f} "
            f"{c.client_util:>11.0%} {c.tokens_per_cpu_s:>14,.0f} {mock:>9} {per_read:>13} "
            f"{lag:>13}"
        )
    lines.append("")
    if (ladder := ladder_line(report)) is not None:
        lines += [ladder, ""]
    est = estimate(report)
    if est is not None:
        burst = (
            f" (up to {about(est.burst_tokens_per_s)} where the server writes tokens in bursts)"
            if est.burst_tokens_per_s
            else ""
        )
        lines.append(
            f"this machine can drive about {about(est.tokens_per_s)} output tokens/s "
            f"with {est.workers} worker{'s' if est.workers != 1 else ''}{burst}"
        )
        lines.append(f"estimate: {est.basis}")
    return "\n".join(lines)


def ceiling_json(report: CeilingReport) -> dict[str, object]:
    """The same figures, machine-readable (``loadgen calibrate --json``)."""
    est = estimate(report)
    return {
        "transport": report.transport,
        "concurrency": report.concurrency,
        "tokens_per_response": report.tokens,
        "seconds": report.seconds,
        "per_token_itl_ms": report.itl_ms,
        "cores": report.pinning.cores,
        "client_cpu": report.pinning.client_cpu,
        "mock_cpu": report.pinning.mock_cpu,
        "pinning": report.pinning.note,
        "regimes": {c.regime: _figures(c) for c in report.ceilings},
        "per_token_ladder": [_figures(c) for c in report.ladder],
        "per_token_stopped": report.stopped,
        "estimate": None
        if est is None
        else {
            "workers": est.workers,
            "output_tokens_per_s": est.tokens_per_s,
            "burst_output_tokens_per_s": est.burst_tokens_per_s,
            "basis": est.basis,
        },
        "warnings": caveats(report),
    }


def _figures(c: Ceiling) -> dict[str, object]:
    return {
        "offered_tokens_per_s": c.offered_tokens_per_s,
        "itl_ms": c.itl_ms,
        "output_tokens_per_s": c.tokens_per_s,
        "client_cpu_s": c.client_cpu_s,
        "client_cpu_util": c.client_util,
        "tokens_per_cpu_s": c.tokens_per_cpu_s,
        "mock_cpu_util": c.mock_util,
        "mock_bound": c.mock_bound,
        "tokens_per_read": c.tokens_per_read,
        "read_lag_p99_ms": c.read_lag_p99_ms,
        "requests_ok": c.requests_ok,
        "failed": c.failed,
        "count_mismatches": c.mismatches,
        "wall_s": c.wall_s,
    }
