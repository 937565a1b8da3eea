"""SLA checks for a step, and the per-request test behind goodput.

A step passes when every stated bound holds: ``sla.ttft_ms.p99: 500`` means the
step's TTFT p99 must be <= 500 ms. Goodput counts requests that meet every
per-request bound: for each of TTFT, TPOT and E2E the bound of the highest
percentile stated (p99 before p95, p90, p50, mean) is applied to the request's
own value. ITL bounds are step-level only. With ``ttft_of="answer"`` the
request's TTFT is to its first answer token (a request with none fails a
TTFT bound). In open loop TTFT and E2E count from the intended send time
unless ``sla.latency_from`` is ``sent``.

A step whose client was saturated (``client.saturated``) is inconclusive: its
numbers describe loadgen as much as the server, so it never passes, whatever
its checks say.

Imports: loadgen.scenario.models, loadgen.summary, loadgen.records, loadgen.metrics.
"""

from __future__ import annotations

from loadgen.clock import NS_PER_MS
from loadgen.metrics.confidence import Interval, verdict
from loadgen.metrics.latency import FIRST_STAMP
from loadgen.metrics.profiles import PROFILES, Profile
from loadgen.records import Record
from loadgen.scenario.models import PercentileBounds, SlaSpec
from loadgen.summary import SlaCheck, SlaResult, StepSummary

__all__ = ["check_sla", "request_meets_sla"]

_ORDER = ("p99", "p95", "p90", "p50", "mean")


def per_request_bound(bounds: PercentileBounds) -> float | None:
    """The bound goodput applies to each request: that of the highest percentile stated."""
    stated = dict(bounds.items())
    for key in _ORDER:
        if key in stated:
            return stated[key]
    return None


def request_meets_sla(
    r: Record, sla: SlaSpec, ttft_of: str = "any", profile: Profile = PROFILES["loadgen"]
) -> bool:
    """True when an ok request is within every per-request bound.

    TTFT, TPOT and E2E are ``profile``'s, TTFT to the stamp ``ttft_of`` picks,
    and in open loop counted from where ``sla.latency_from`` says: the same
    values the step's percentiles are taken over.
    """
    if not r.ok:
        return False
    values: dict[str, float | None] = {
        "ttft_ms": profile.ttft(r, FIRST_STAMP[ttft_of], sla.latency_from),
        "tpot_ms": profile.tpot(r),
        "e2e_ms": profile.latency(r, sla.latency_from),
    }
    for metric, value in values.items():
        bound = per_request_bound(getattr(sla, metric))
        if bound is None:
            continue
        if value is None:
            if metric == "tpot_ms":
                continue  # one-token answers have no TPOT
            return False
        if value > bound * NS_PER_MS:
            return False
    return True


def check_sla(step: StepSummary, sla: SlaSpec) -> SlaResult:
    """Every stated bound against the step's measured value.

    A step with no successful request never passes, whatever bounds are stated;
    neither does a step whose client was saturated (it is inconclusive).
    """
    checks: list[SlaCheck] = []
    for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        distribution = getattr(step, metric)
        dist = distribution.model_dump()
        ci = distribution.ci.model_dump() if distribution.ci is not None else {}
        for stat, bound in getattr(sla, metric).items():
            value = dist.get(stat)
            check = _check(metric, stat, bound, value)
            pair = ci.get(stat)
            if value is not None and pair is not None:
                check.interval = pair
                check.verdict = verdict(Interval(pair[0], pair[1], ci["confidence"]), bound)
            checks.append(check)
    if sla.max_error_rate is not None:
        checks.append(_check("error_rate", "value", sla.max_error_rate, step.requests.error_rate))
    inconclusive = step.client.saturated
    passed = not inconclusive and step.requests.ok > 0 and all(c.passed for c in checks)
    result = SlaResult(passed=passed, inconclusive=inconclusive, checks=checks)
    if checks:
        verdicts = {c.verdict for c in checks}
        if step.requests.ok == 0 or "missed" in verdicts:
            result.verdict = "missed"
        elif inconclusive or "inconclusive" in verdicts:
            result.verdict = "inconclusive"
        else:
            result.verdict = "met"
    return result


def _check(metric: str, stat: str, bound: float, value: float | None) -> SlaCheck:
    if value is None:
        return SlaCheck(
            metric=metric,
            stat=stat,
            bound=bound,
            value=None,
            margin=None,
            passed=False,
            verdict="missed",
        )
    return SlaCheck(
        metric=metric,
        stat=stat,
        bound=bound,
        value=value,
        margin=bound - value,
        passed=value <= bound,
        verdict="met" if value <= bound else "missed",  # by the value, until an interval says
    )
