"""SLA checks for a step, and the per-request test behind goodput.

A step passes when every stated bound holds: ``sla.ttft_ms.p99: 500`` means the
step's TTFT p99 must be <= 500 ms. Goodput counts requests that meet every
per-request bound: for each of TTFT, TPOT and E2E the bound of the highest
percentile stated (p99 before p95, p90, p50, mean) is applied to the request's
own value. ITL bounds are step-level only. ``sla.session_s`` bounds the step's
session time percentiles (seconds; loadgen.metrics.sessions has session goodput).
With ``ttft_of="answer"`` the request's TTFT is to its first answer token (a
request with none fails a TTFT bound). In open loop TTFT and E2E count from the intended send time
unless ``sla.latency_from`` is ``sent``.

:func:`decide` gives the step its one verdict, which every output renders:
*missed* when no request succeeded or a bound is missed with confidence;
*inconclusive* when a bound is undecided, with the cause (too few requests
for the percentile, loadgen's own error, or the bound inside the interval);
else *met*.

loadgen's own error (``step.client_error``, loadgen.metrics.client_error)
decides with the interval: a latency statistic's interval is widened by its
band, how far the statistic may move were every reading off by its bound. A
bound missed or met by more than that keeps its verdict, however busy the
client was; one inside it is inconclusive, cause ``client_error``, and the
reason says by how much the readings may be off. Saturation
(``client.saturated``) is a warning beside the verdict, not a verdict.
"""

from __future__ import annotations

from loadgen.clock import NS_PER_MS
from loadgen.metrics.confidence import Interval, verdict
from loadgen.metrics.latency import FIRST_STAMP
from loadgen.metrics.profiles import PROFILES, Profile
from loadgen.metrics.validity import METRIC as VALIDITY
from loadgen.metrics.validity import validity_check
from loadgen.records import Record
from loadgen.scenario import PercentileBounds, SlaSpec
from loadgen.summary import SlaCheck, SlaResult, StepSummary

__all__ = ["SESSION_METRIC", "check_sla", "decide", "request_meets_sla"]

_ORDER = ("p99", "p95", "p90", "p50", "mean")
#: the session-time check's metric (bounds and values in seconds)
SESSION_METRIC = "session_s"


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

    A step with no successful request never passes, whatever bounds are stated.
    """
    checks: list[SlaCheck] = []
    errors = step.client_error
    for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        distribution = getattr(step, metric)
        dist = distribution.model_dump()
        ci = distribution.ci.model_dump() if distribution.ci is not None else {}
        error = errors.bound(metric) if errors is not None else None
        for stat, bound in getattr(sla, metric).items():
            value = dist.get(stat)
            check = _check(metric, stat, bound, value)
            pair = ci.get(stat)
            if value is not None and pair is not None:
                check.interval = pair
                check.verdict = verdict(Interval(pair[0], pair[1], ci["confidence"]), bound)
            band = error.band.get(stat) if error is not None else None
            wide = error.interval.get(stat) if error is not None else None
            if value is not None and band is not None and wide is not None:
                _with_client_error(check, value, band, wide, ci.get("confidence"))
            checks.append(check)
    checks += _session_checks(step, sla)
    if sla.max_error_rate is not None:
        checks.append(_check("error_rate", "value", sla.max_error_rate, step.requests.error_rate))
    if sla.valid_output_rate is not None:
        bound = sla.valid_output_rate
        checks.append(validity_check(step.output_validity, bound, sla.confidence))
    passed = step.requests.ok > 0 and all(c.passed for c in checks)
    result = SlaResult(passed=passed, checks=checks)
    decide(result, step.requests.ok)
    return result


def _with_client_error(
    check: SlaCheck,
    value: float,
    band: list[float | None],
    wide: list[float | None],
    confidence: float | None,
) -> None:
    """Decide ``check`` with loadgen's own error: on the interval of the statistic were
    every reading as early as its bound allows (its low end) and as late (its high end),
    ``wide``. A bound missed or met by more than that keeps its verdict; one inside it is
    undecided, and says by how much the readings may be off (``band``: the statistic's
    own two ends)."""
    low, high = band
    if low is None or high is None:
        return
    down, up = value - low, high - value
    down, up = (x if x > _NS_MS else 0.0 for x in (down, up))  # the band's rounding aside
    if not down and not up:
        return
    check.client_band = [low, high]
    if check.interval is None:  # no interval (too few values): the band's own ends
        wide = [low, high]
    widened = verdict(Interval(wide[0], wide[1], confidence or 0.95), check.bound)
    if widened == check.verdict:
        return
    check.verdict = widened
    check.client_error = True
    late = f"up to {_ms(down)} late" if down else ""
    early = f"up to {_ms(up)} early" if up else ""
    off = " or ".join(w for w in (late, early) if w)
    check.reason = f"loadgen's readings may be {off} here"


def _session_checks(step: StepSummary, sla: SlaSpec) -> list[SlaCheck]:
    """``sla.session_s``'s bounds (seconds) against the step's session time percentiles
    (``sessions.time_ms`` / 1000), judged on their intervals as the latency bounds are;
    a step without a completed session has no value (missed)."""
    checks = []
    sessions = step.sessions
    d = sessions.time_ms if sessions is not None else None
    dist = d.model_dump() if d is not None else {}
    ci = d.ci.model_dump() if d is not None and d.ci is not None else {}
    for stat, bound in sla.session_s.items():
        ms = dist.get(stat)
        check = _check(SESSION_METRIC, stat, bound, None if ms is None else ms / 1000)
        pair = ci.get(stat)
        if ms is not None and pair is not None:
            check.interval = [None if x is None else x / 1000 for x in pair]
            interval = Interval(check.interval[0], check.interval[1], ci["confidence"])
            check.verdict = verdict(interval, bound)
        checks.append(check)
    return checks


def decide(result: SlaResult, ok: int) -> None:
    """Set ``result``'s verdict, cause and reason from its checks; ``ok`` successful requests.

    Run again once the checks carry their reasons (how many requests would decide
    them): the verdict only depends on the checks' verdicts, the words on their reasons.
    """
    checks = result.checks
    missed = [c for c in checks if c.verdict == "missed"]
    unsure = [c for c in checks if c.verdict == "inconclusive"]
    if checks and ok == 0:
        result.verdict, result.cause, result.reason = "missed", "no_success", NO_SUCCESS
    elif not checks:
        result.verdict = result.cause = result.reason = None
    elif missed:
        result.verdict, result.cause = "missed", "missed"
        result.reason = "; ".join(_missed_text(c) for c in missed)
    elif unsure:
        result.verdict = "inconclusive"
        few = [c for c in unsure if c.requests_needed is not None and c.requests_needed > ok]
        ours = [c for c in unsure if c.client_error]
        result.cause = "few_requests" if few else "client_error" if ours else "close_call"
        result.reason = "; ".join(_unsure_text(c) for c in (few or ours or unsure))
    else:
        result.verdict, result.cause = "met", "met"
        result.reason = f"every bound met ({len(checks)} checked)"


#: a nanosecond in ms: a band end closer than this to the value is the value
_NS_MS = 1e-6

#: what a step with no successful request is, in every output
NO_SUCCESS = "no successful request"
#: what a step with no completed session is, against a session bound
NO_SESSION = "no completed session"


def _missed_text(c: SlaCheck) -> str:
    """``ttft_ms.p99 712.4 > 400``; an error rate as a percentage."""
    if c.metric == VALIDITY:
        if c.value is None:
            return f"valid output rate: {c.reason or 'no answer was checked'}"
        high = f" (interval to {100 * c.interval[1]:.2f}%)" if c.interval and c.interval[1] else ""
        return f"valid output rate {100 * c.value:.2f}% < {100 * c.bound:g}%{high}"
    name = f"{c.metric}.{c.stat_label}" if c.metric != "error_rate" else "error rate"
    if c.value is None:
        return f"{name}: {NO_SESSION if c.metric == SESSION_METRIC else NO_SUCCESS}"
    if c.metric == "error_rate":
        return f"{name} {100 * c.value:.2f}% > {100 * c.bound:g}%"
    low = f" (interval from {c.interval[0]:.4g})" if c.interval and c.interval[0] else ""
    return f"{name} {c.value:.4g} > {c.bound:g}{low}"


def _unsure_text(c: SlaCheck) -> str:
    """The check's own reason, named: ``ttft_ms.p99: 9 requests cannot decide ...``."""
    if c.client_error and c.value is not None:
        return f"{c.metric}.{c.stat_label} {c.value:.4g} against {c.bound:g}: {c.reason}"
    if c.metric == VALIDITY:
        return f"valid output rate: {c.reason or 'too close to call'}"
    return f"{c.metric}.{c.stat_label}: {c.reason or 'too close to call'}"


def _ms(x: float) -> str:
    """A few significant figures of milliseconds: ``6 ms``, ``0.04 ms``."""
    return f"{x:.2g} ms" if x < 10 else f"{x:.0f} ms"


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
