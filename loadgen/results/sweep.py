"""Which load to run next: the sweep strategies, pure functions of the steps so far.

- list: the scenario's values in order.
- auto: a closed-loop saturation probe at ``probe_concurrency`` measures the
  highest request rate; then ``auto_points`` open-loop rates spread evenly up
  to it (``max/N, 2·max/N, ..., max``), like GuideLLM's sweep.
- sla-search: bisection between a passing and a failing load until the
  bracket is narrower than the tolerance; the answer is the passing end.

A step passes when its one verdict (``sla.verdict``,
:func:`loadgen.metrics.sla.decide`) is *met*: its bounds decided within at
the SLA's confidence. An inconclusive step (too few requests, a bound within
loadgen's own error of the value, or a bound inside its interval) never
passes: sla-search takes it by its point estimate, and the run's verdict
names it with its cause.

Every strategy also stops early when a step's error rate, or its miss of an
SLA bound, is past ``load.stop_early`` (so a sweep never hammers a dead
server), and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadgen.scenario import LoadSpec, OfflineLoad, RateLoad, TraceLoad
from loadgen.summary import StepSummary, Verdict
from loadgen.vocab import confidence_text

__all__ = ["Point", "Sweep", "early_stop_reason", "make_sweep", "verdict"]


@dataclass(slots=True, frozen=True)
class Point:
    mode: str  # "concurrency" | "rate"
    value: float
    role: str = "step"


def early_stop_reason(step: StepSummary, load: LoadSpec) -> str | None:
    """Why the sweep should stop after ``step``, or None."""
    rules = load.stop_early
    if rules is None or step.requests.total == 0:
        return None
    if step.requests.error_rate > rules.max_error_rate:
        return (
            f"step {step.index}: error rate {step.requests.error_rate:.0%} "
            f"> stop_early.max_error_rate {rules.max_error_rate:.0%}"
        )
    for c in step.sla.checks:
        if (
            c.value is not None
            and c.metric not in ("error_rate", "valid_output_rate")
            and c.value > c.bound * rules.sla_factor
        ):
            return (
                f"step {step.index}: {c.metric}.{c.stat} {c.value:.1f} is over "
                f"{rules.sla_factor:g}x its bound {c.bound:g}"
            )
    return None


@dataclass(slots=True)
class Sweep:
    """Yields points until done; ``observe`` feeds back each finished step."""

    load: LoadSpec
    kind: str
    queue: list[Point] = field(default_factory=list)
    done: list[tuple[Point, StepSummary]] = field(default_factory=list)
    stopped: str | None = None
    saturation_rps: float | None = None
    low: float | None = None  # sla-search: highest known passing load
    high: float | None = None  # sla-search: lowest known failing load

    def next_point(self) -> Point | None:
        if self.stopped is not None:
            return None
        if self.kind == "sla-search" and not self.queue:
            return self._bisect()
        return self.queue.pop(0) if self.queue else None

    def observe(self, point: Point, step: StepSummary) -> None:
        self.done.append((point, step))
        if point.role == "probe":
            self._after_probe(step)
            return
        if self.kind == "sla-search":
            self._search_update(point, step)
        reason = early_stop_reason(step, self.load)
        if reason is None:
            return
        if self.kind == "sla-search":
            if self.low is None:
                self.stopped = reason
        elif self.queue:  # only when there were steps left to skip
            self.stopped = reason
            self.queue.clear()

    def _after_probe(self, probe: StepSummary) -> None:
        rps = probe.throughput.requests_per_s
        if rps <= 0:
            self.stopped = "the saturation probe completed no request"
            return
        self.saturation_rps = rps
        assert isinstance(self.load, RateLoad)
        n = self.load.auto_points
        self.queue = [Point("rate", round(rps * k / n, 4)) for k in range(1, n + 1)]

    # -- sla-search ------------------------------------------------------------------

    @property
    def tolerance(self) -> float:
        assert not isinstance(self.load, TraceLoad | OfflineLoad)
        if self.load.search_tolerance is not None:
            return self.load.search_tolerance
        return 1.0 if self.load.mode == "concurrency" else 0.05 * max(self.load.points)

    def _search_update(self, point: Point, step: StepSummary) -> None:
        # an undecided bound goes by its point estimate (the interval, or loadgen's own
        # error, cannot say which side the load is on)
        undecided = step.sla.cause in ("few_requests", "close_call", "client_error")
        if step.sla.passed if undecided else step.meets_sla:
            self.low = max(self.low or point.value, point.value)
        else:
            self.high = min(self.high or point.value, point.value)

    def _bisect(self) -> Point | None:
        lo, hi = min(self.load.points), max(self.load.points)
        tried = {p.value for p, _ in self.done}
        if lo not in tried:
            return Point(self.load.mode, lo)
        if self.low is None:
            first = next(st for p, st in self.done if p.value == lo and p.role == "step")
            why = first.sla.reason or "no successful request"
            self.stopped = f"the lowest load ({lo:g}) does not meet the SLA: {why}"
            return None
        if hi not in tried:
            return Point(self.load.mode, hi)
        if self.high is None:
            return None  # the highest load passes: nothing to search
        assert not isinstance(self.load, TraceLoad | OfflineLoad)
        if self.high - self.low <= self.tolerance or len(self.done) >= self.load.max_search_steps:
            return None
        mid = (self.low + self.high) / 2
        if self.load.mode == "concurrency":
            mid = float(int(mid))
            if mid in tried:
                return None
        return Point(self.load.mode, mid)


def make_sweep(load: LoadSpec) -> Sweep:
    sweep = Sweep(load=load, kind=load.sweep)
    if load.sweep == "list":
        sweep.queue = [Point(load.mode, v) for v in load.points]
    elif isinstance(load, RateLoad) and load.sweep == "auto":
        sweep.queue = [Point("concurrency", float(load.probe_concurrency), role="probe")]
    return sweep


def verdict(sweep: Sweep) -> Verdict:
    """The run's one verdict: the highest load whose step met the SLA, with goodput there;
    undecided steps named. Every output renders it and decides nothing of its own.

    The rules (docs/metrics.md, "The run's verdict"): a step cut short by a stop signal
    (``interrupted``) is left out, and named; without SLA bounds the answer is the
    highest load run cleanly (a request succeeded, loadgen not saturated), and no word
    of an SLA is said."""
    steps = [(p, s) for p, s in sweep.done if p.role == "step"]
    mode = steps[0][0].mode if steps else sweep.load.mode
    v = Verdict(mode=mode, sweep=sweep.kind, stopped_early=sweep.stopped)
    v.sla_set = any(st.sla.checks for _, st in steps)
    v.interrupted_steps = [s.index for _, s in steps if not s.judged]
    steps = [(p, s) for p, s in steps if s.judged]
    v.inconclusive_steps = [s.index for _, s in steps if s.sla.verdict == "inconclusive"]
    v.saturation_rps = sweep.saturation_rps
    if sweep.kind == "sla-search":
        v.tolerance = sweep.tolerance
        if sweep.low is not None and sweep.high is not None:
            v.bracket = [sweep.low, sweep.high]
    if mode == "offline":
        _offline_verdict(v, steps)
    else:
        _load_verdict(v, steps)
    undecided = [s for _, s in steps if s.sla.verdict == "inconclusive"]
    if undecided:
        v.text += "; " + undecided_text(undecided)
    if v.interrupted_steps:
        v.text += f"; {_indexes(v.interrupted_steps)} interrupted (cut short): not judged"
    if sweep.stopped:
        v.text += f"; stopped early: {sweep.stopped}"
    return v


def _load_verdict(v: Verdict, steps: list[tuple[Point, StepSummary]]) -> None:
    """``v``'s answer and sentence from the judged steps of a concurrency, rate or trace
    sweep."""
    trace = v.mode == "trace"
    unit = "replay speed" if trace else "concurrency" if v.mode == "concurrency" else "rate"
    sessions = any(st.sessions is not None for _, st in steps)  # each arrival starts one
    suffix = "" if v.mode == "concurrency" else " sessions/s" if sessions else " req/s"
    sure = _with_confidence(steps) if v.sla_set else ""
    passing = [(p, s) for p, s in steps if s.meets_sla]
    if not passing:
        if not steps:
            v.text = "no step finished"
        elif v.sla_set:
            v.text = f"no {unit} met the SLA{sure}"
        else:  # nothing to meet: say what did not happen
            ok = any(s.requests.ok for _, s in steps)
            v.text = f"no SLA bounds set: no {unit} " + (
                "ran cleanly (loadgen itself saturated)" if ok else "completed a request"
            )
        return
    pick = min if trace else max  # the heaviest load: a trace's smallest time scale
    best_p, best_s = pick(passing, key=lambda ps: ps[0].value)
    v.max_passing = best_p.value
    v.goodput_requests_per_s = best_s.throughput.goodput_requests_per_s
    v.output_tokens_per_s = best_s.throughput.output_tokens_per_s
    goodput = f"goodput there: {v.goodput_requests_per_s or 0:.2f} req/s"
    if not v.sla_set:  # nothing to meet: say so
        best = (
            f"fastest replay run cleanly: time scale {best_p.value:g}"
            if trace
            else f"highest {unit} run cleanly: {best_p.value:g}{suffix}"
        )
        v.text = (
            f"no SLA bounds set: {best}; "
            f"throughput there: {best_s.throughput.requests_per_s:.2f} req/s"
        )
    elif trace:
        v.text = (
            f"fastest replay meeting the SLA: time scale {best_p.value:g} "
            f"({1 / best_p.value:g}x the recorded rate, "
            f"{best_s.throughput.requests_per_s:.2f} req/s){sure}; {goodput}"
        )
    else:
        v.text = f"max {unit} meeting the SLA: {best_p.value:g}{suffix}{sure}; {goodput}"
    if v.bracket:
        failing = [st for pt, st in steps if pt.value == v.bracket[1]]
        how = "misses it" if not failing or failing[-1].sla.verdict == "missed" else "is undecided"
        v.text += f" ({v.bracket[1]:g}{suffix} {how})"


def undecided_text(steps: list[StepSummary]) -> str:
    """The inconclusive steps grouped by cause: ``inconclusive: step 0, 1 (too few
    requests: about 368 per step would decide); step 5 (a bound within loadgen's own
    error of the value)``."""
    parts = []
    few = [s for s in steps if s.sla.cause == "few_requests"]
    if few:
        need = max(
            (
                c.requests_needed or 0
                for s in few
                for c in s.sla.checks
                if c.verdict == "inconclusive"
            ),
            default=0,
        )
        would = f": about {need:,} per step would decide" if need else ""
        parts.append(f"{_steps(few)} (too few requests{would})")
    close = [s for s in steps if s.sla.cause == "close_call"]
    if close:
        parts.append(f"{_steps(close)} (a bound inside its interval: too close to call)")
    ours = [s for s in steps if s.sla.cause == "client_error"]
    if ours:
        parts.append(f"{_steps(ours)} (a bound within loadgen's own error of the value)")
    saturated = [s for s in steps if s.sla.cause == "saturated"]  # a summary of loadgen before
    if saturated:
        parts.append(f"{_steps(saturated)} (loadgen itself saturated)")
    return "inconclusive: " + "; ".join(parts)


def _steps(steps: list[StepSummary]) -> str:
    return _indexes([s.index for s in steps])


def _indexes(indexes: list[int]) -> str:
    """``step 3``, ``steps 0, 1``."""
    return ("step " if len(indexes) == 1 else "steps ") + ", ".join(map(str, indexes))


def _with_confidence(steps: list[tuple[Point, StepSummary]]) -> str:
    """`` (95% confidence)`` when a step's statistics have intervals, else nothing."""
    for _, s in steps:
        for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
            ci = getattr(s, metric).ci
            if ci is not None and s.sla.checks:
                return f" ({confidence_text(ci.confidence)} confidence)"
    return ""


def _offline_verdict(v: Verdict, steps: list[tuple[Point, StepSummary]]) -> None:
    """MLPerf Offline: the highest throughput any step reached (latency bounds do not apply)."""
    done = [(p, s) for p, s in steps if s.requests.ok]
    if not done:
        v.text = "offline: no step completed a request"
        return
    best_p, best_s = max(done, key=lambda ps: ps[1].throughput.output_tokens_per_s)
    t = best_s.throughput
    v.max_passing = best_p.value
    v.goodput_requests_per_s = t.goodput_requests_per_s
    v.output_tokens_per_s = t.output_tokens_per_s
    cap = f"at most {best_p.value:g} in flight" if best_p.value else "all in flight at once"
    v.text = (
        f"offline throughput: {t.output_tokens_per_s:,.0f} output tok/s, "
        f"{t.requests_per_s:.2f} req/s ({best_s.requests.ok} requests, {cap})"
    )
