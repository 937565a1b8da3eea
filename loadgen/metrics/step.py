"""One step's records -> its :class:`~loadgen.summary.StepSummary`.

The records come as a :class:`~loadgen.metrics.columns.StepColumns` (what a
run keeps of each finished request) or as a list of records, which is made
into one first; both give the same summary.

Warm-up and ramp-up records are counted but excluded from every metric.
Latency metrics use the successful requests; counts and the error rate use
all of them, but for the requests the client aborted on purpose
(``workload.cancel``): counted apart, in no latency, throughput or error rate.
The whole window is the first send to the last end among the measured
(non-warm-up, non-ramp) requests, aborted ones included; throughput and goodput are over
the steady window where the step has one long enough to rate
(loadgen.metrics.window; else ``steady_unrated`` says why), with the whole
window's figures kept beside them (``throughput_whole``).

Open loop (rate, trace): TTFT and E2E count from the intended send time
unless ``sla.latency_from`` is ``sent``; both figures are kept.

Records with a session also make the step's ``sessions`` block
(loadgen.metrics.sessions), over the whole window.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from loadgen.clock import NS_PER_MS, NS_PER_S
from loadgen.metrics import vector as v
from loadgen.metrics.aggregate import (
    completed_in,
    meets_sla,
    prompt_length_check,
    steady_window,
    token_counts,
)
from loadgen.metrics.cache import cached_token_stats
from loadgen.metrics.client_error import client_error
from loadgen.metrics.columns import NONE, StepColumns
from loadgen.metrics.confidence import rate_interval, requests_needed
from loadgen.metrics.latency import FIRST_STAMP
from loadgen.metrics.media import media_stats, send_ms
from loadgen.metrics.phases import connection_phases
from loadgen.metrics.pooling import dims_warning, pooling_stats
from loadgen.metrics.profiles import PROFILES, Profile
from loadgen.metrics.sessions import session_stats, sessions_needed
from loadgen.metrics.share import by_model, part_throughput, throughput
from loadgen.metrics.sla import SESSION_METRIC, check_sla, decide
from loadgen.metrics.stats import distribution_ms
from loadgen.metrics.tokens import PROMPT_TOLERANCE, short_output_warning, usage_ignored_warning
from loadgen.metrics.validity import output_validity
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import (
    ClientError,
    ClientHealth,
    Cost,
    Distribution,
    EndpointStats,
    LittleCheck,
    LoadPoint,
    RequestCounts,
    StepSummary,
)
from loadgen.vocab import PERCENTILE_OF, POOLING_APIS, confidence_text

__all__ = ["LITTLE_TOLERANCE", "by_endpoint", "step_cost", "summarize_step"]

#: Little's-law disagreement (ratio away from 1) that gets flagged.
LITTLE_TOLERANCE = 0.15

Mask = npt.NDArray[np.bool_]


def summarize_step(
    index: int,
    load: LoadPoint,
    records: StepColumns | Sequence[Record],
    sla: SlaSpec,
    *,
    client: ClientHealth | None = None,
    mean_in_flight: float | None = None,
    interrupted: bool = False,
    profile: Profile = PROFILES["loadgen"],
    ttft_of: str = "any",
    prompt_tolerance: float = PROMPT_TOLERANCE,
    expect_full_output: bool = False,
    endpoints: Sequence[str] = (),
    endpoint_columns: Sequence[StepColumns] = (),
    models: Sequence[tuple[str, float]] = (),
    model_columns: Sequence[StepColumns] = (),
    api: str | None = None,
) -> StepSummary:
    """Counts, latency statistics (by ``profile``'s formulas), throughput and SLA of a step.

    ``ttft_of`` ("any" or "answer") picks the stamp TTFT, its SLA bounds and
    goodput measure to; ``prompt_tolerance`` is the relative prompt-length
    difference counted as beyond tolerance; ``expect_full_output`` (the body
    forces outputs of max_tokens) turns short outputs into a warning. With
    two or more ``endpoints`` (base URLs, indexed by ``Record.endpoint``) the
    step also gets their breakdown (:func:`by_endpoint`), from
    ``endpoint_columns`` (each endpoint's own accumulator) or, given records,
    from the records split by endpoint. A model mix (``models``: target.models'
    (name, weight) pairs, ``Record.model``) is broken down the same way, from
    ``model_columns`` or the records.
    from the records split by endpoint. A pooling ``api`` (embeddings, rerank) adds
    ``step.pooling`` (:mod:`loadgen.metrics.pooling`).
    """
    if ttft_of not in FIRST_STAMP:
        msg = f"ttft_of {ttft_of!r}; expected one of {', '.join(FIRST_STAMP)}"
        raise ValueError(msg)
    cols = records if isinstance(records, StepColumns) else StepColumns.of(records)
    # Cut short by the user, not by the server (cancelled): counted, out of the metrics.
    start, end = cols.span()
    window_s = (end - start) / NS_PER_S if end > start else 0.0

    open_loop = load.mode in ("rate", "trace", "offline")
    step = StepSummary(
        index=index,
        load=load,
        started_ns=start,
        ended_ns=end,
        duration_s=window_s,
        interrupted=interrupted,
        client=client or ClientHealth(),
        ttft_of="answer" if ttft_of == "answer" else "any",
        latency_from=(
            "scheduled"
            if open_loop and load.mode != "offline" and sla.latency_from == "scheduled"
            else "sent"
        ),
    )
    step.requests = _counts(cols)
    ok = v.Columns(cols)
    _latencies(step, ok, profile.name, ttft_of, sla.confidence)
    if open_loop:
        _open_loop_latencies(step, ok, profile.name, ttft_of, sla.confidence)
    step.tokens = token_counts(ok, expect_full_output)
    step.tokens.cancelled_output_total = cols.by_client_tokens  # users who stopped
    step.prompt_lengths = prompt_length_check(ok, prompt_tolerance)
    if (warning := short_output_warning(step.tokens, len(ok))) is not None:
        step.warnings.append(warning)
    if (warning := usage_ignored_warning(cols.usage_ignored, cols.measured_count)) is not None:
        step.warnings.append(warning)
    good = meets_sla(ok, sla, ttft_of, profile.name)
    everyone = np.ones(len(ok), dtype=bool)
    step.throughput_whole = throughput(ok, everyone, good, window_s, "whole")
    step.throughput = step.throughput_whole
    sent, ended = cols.measured("sent"), cols.measured("end")
    found = steady_window(sent, ended, cols.measured("ok"), None if open_loop else load.concurrency)
    steady = None if isinstance(found, str) else found
    step.steady_unrated = found if isinstance(found, str) else None
    if steady is not None:
        step.steady_started_ns, step.steady_ended_ns = steady
        step.steady_duration_s = (steady[1] - steady[0]) / NS_PER_S
        inside = completed_in(ok["end"], *steady)
        step.throughput = throughput(ok, inside, good & inside, step.steady_duration_s, "steady")
    _rate_intervals(step, window_s, sla.confidence)
    step.output_validity = output_validity(cols.outputs, sla.confidence)
    if api in POOLING_APIS:  # pooling APIs (embeddings, rerank)
        step.pooling = pooling_stats(ok, cols, api)
        if (warning := dims_warning(step.pooling)) is not None:
            step.warnings.append(warning)
    step.send_ms = send_ms(ok, sla.confidence)
    window = step.steady_duration_s if steady is not None else window_s
    step.media = media_stats(ok, inside if steady is not None else everyone, window or 0.0)
    ttft_rows = v.ttft_rows(ok, profile.name, ttft_of, step.latency_from)
    step.sessions, session_times = session_stats(cols.sessions, good, ttft_rows, window_s, sla)
    step.cache = cached_token_stats(ok)
    step.phases = connection_phases(ok)
    if len(ok):
        error = client_error(ok, profile.name, ttft_of, step.latency_from, sla.confidence)
        if api in POOLING_APIS:  # no token timing: the end alone
            error = ClientError(e2e_ms=error.e2e_ms)
        step.client_error = error
    step.sla = check_sla(step, sla)
    _requests_needed(step, ok, profile.name, ttft_of, sla.confidence)
    for c in step.sla.checks:
        if c.metric == SESSION_METRIC:
            sessions_needed(c, session_times, step.requests.ok, sla.confidence)
    decide(step.sla, step.requests.ok)  # again: the reasons now say how many would decide
    step.sla.good_requests = int(good.sum())
    # a step where nothing succeeded (a server down) has no latency to check it with, and
    # an interrupted one's cut requests ended when the user stopped it, not the server
    if mean_in_flight is not None and window_s and len(ok) and not interrupted:
        began = cols.measured("start")
        held = int((ended - np.where(began > 0, began, sent)).sum())  # 0: not stamped
        step.little = little_check(mean_in_flight, len(sent), held, window_s)

    def part(subset: StepColumns) -> StepSummary:
        return summarize_step(
            index,
            load,
            subset,
            sla,
            profile=profile,
            ttft_of=ttft_of,
            prompt_tolerance=prompt_tolerance,
            expect_full_output=expect_full_output,
            api=api,
        )

    rows = list(records) if not isinstance(records, StepColumns) else []
    if len(endpoints) > 1:
        parts = list(endpoint_columns) or [
            StepColumns.of([r for r in rows if r.endpoint == i]) for i in range(len(endpoints))
        ]
        step.endpoints = by_endpoint(step, parts, endpoints, part, sla, ttft_of, profile)
    if models:
        mixed = list(model_columns) or [
            StepColumns.of([r for r in rows if r.model == name]) for name, _ in models
        ]
        step.models = by_model(step, mixed, models, part, sla, ttft_of, profile)
    return step


def by_endpoint(
    step: StepSummary,
    parts: Sequence[StepColumns],
    urls: Sequence[str],
    summarize: Callable[[StepColumns], StepSummary],
    sla: SlaSpec,
    ttft_of: str,
    profile: Profile,
) -> list[EndpointStats]:
    """Each endpoint's counts and latencies (``summarize`` on its own columns) and its
    throughput over ``step``'s window, so the endpoints' throughputs add up to the step's.

    ``parts[i]`` holds the records that went to ``urls[i]`` (Record.endpoint).
    """
    out = []
    for i, (url, cols) in enumerate(zip(urls, parts, strict=True)):
        s = summarize(cols)
        out.append(
            EndpointStats(
                endpoint=i,
                url=url,
                requests=s.requests,
                throughput=part_throughput(step, cols, sla, ttft_of, profile),
                ttft_ms=s.ttft_ms,
                itl_ms=s.itl_ms,
                tpot_ms=s.tpot_ms,
                e2e_ms=s.e2e_ms,
            )
        )
    return out


def _counts(cols: StepColumns) -> RequestCounts:
    """total = ok + failed + cancelled_by_client; error_rate = failed / (ok + failed)."""
    measured, ok, by_client = cols.measured_count, cols.ok_count, cols.by_client
    failed = measured - ok - by_client
    ran = measured - by_client  # the requests the client let run to their end
    return RequestCounts(
        total=measured,
        ok=ok,
        failed=failed,
        warmup=cols.warmup,
        ramp=cols.ramp,
        cancelled=cols.cancelled,
        reconnects=cols.reconnects,
        errors=dict(sorted(cols.errors.items())),
        error_rate=failed / ran if ran else 0.0,
        cancelled_by_client=by_client,
        cancelled_by_client_share=by_client / measured if measured else 0.0,
    )


def _latencies(
    step: StepSummary, ok: v.Columns, profile: str, ttft_of: str, confidence: float
) -> None:
    """TTFT (to the stamp ``ttft_of`` picks), its reasoning/answer split and per-turn view,
    ITL, TPOT and E2E, by the profile's formulas, from where ``step.latency_from`` says."""
    frm = step.latency_from
    dist = functools.partial(distribution_ms, confidence=confidence)
    step.ttft_ms = dist(v.ttft(ok, profile, ttft_of, frm))
    if ok.source.reasoning_ok:
        step.ttft_reasoning_ms = dist(v.ttft(ok, profile, "reasoning", frm))
        step.ttft_answer_ms = dist(v.ttft(ok, profile, "answer", frm))
    step.ttft_by_turn = _ttft_by_turn(ok, profile, ttft_of, frm)
    step.itl_ms = dist(v.itl_values(ok, profile))
    if (icl := v.icl_values(ok, profile)) is not None:
        step.icl_ms = dist(icl)
    step.tpot_ms = dist(v.tpot(ok, profile))
    step.e2e_ms = dist(v.latency(ok, profile, frm))


def _open_loop_latencies(
    step: StepSummary, ok: v.Columns, profile: str, ttft_of: str, confidence: float
) -> None:
    """Both origins of TTFT and E2E, and the queue wait: the intended send time is known."""
    dist = functools.partial(distribution_ms, confidence=confidence)
    step.ttft_from_scheduled_ms = dist(v.ttft_from_scheduled(ok, ttft_of))
    step.ttft_from_sent_ms = dist(v.ttft(ok, profile, ttft_of, "sent"))
    step.e2e_from_scheduled_ms = dist(v.latency(ok, profile, "scheduled"))
    step.e2e_from_sent_ms = dist(v.latency(ok, profile, "sent"))
    step.queue_wait_ms = dist(v.queue_wait(ok))


def _rate_intervals(step: StepSummary, window_s: float, confidence: float) -> None:
    """requests_per_s's interval for the throughput figures (the count as Poisson)."""
    figures = [step.throughput]
    if step.throughput_whole is not None and step.throughput_whole is not step.throughput:
        figures.append(step.throughput_whole)
    for t in figures:
        seconds = step.steady_duration_s if t.window == "steady" else window_s
        if not seconds:
            continue
        ci = rate_interval(round(t.requests_per_s * seconds), seconds, confidence)
        t.requests_per_s_ci = [ci.low, ci.high]


def _requests_needed(
    step: StepSummary, ok: v.Columns, profile: str, ttft_of: str, confidence: float
) -> None:
    """For each inconclusive percentile bound: the requests that would decide it.

    At the share of values beyond the bound seen in this step
    (loadgen.metrics.confidence.requests_needed); values are per request but
    for ITL (gaps), whose count is turned into requests at this step's gaps
    per request.
    """
    frm = step.latency_from
    values_of: dict[str, Callable[[], npt.NDArray[Any]]] = {
        "ttft_ms": lambda: v.ttft(ok, profile, ttft_of, frm),
        "itl_ms": lambda: v.itl_values(ok, profile),
        "tpot_ms": lambda: v.tpot(ok, profile),
        "e2e_ms": lambda: v.latency(ok, profile, frm),
    }
    for c in step.sla.checks:
        if c.verdict != "inconclusive" or c.reason is not None:  # a check's own reason stays
            continue
        c.reason = (
            f"{c.stat_label} is within its {confidence_text(confidence)} interval of the "
            f"bound {c.bound:g}: "
            "too close to call"
        )
        if c.stat not in PERCENTILE_OF or (get := values_of.get(c.metric)) is None:
            continue
        values = np.asarray(get(), dtype=np.float64)
        n = int(values.size)
        if n == 0 or len(ok) == 0:
            continue
        beyond = int(np.count_nonzero(values > c.bound * NS_PER_MS))
        needed = requests_needed(n, beyond, PERCENTILE_OF[c.stat] / 100, confidence)
        if needed is not None:
            c.requests_needed = math.ceil(needed * len(ok) / n)
            if c.requests_needed > len(ok):
                c.reason = (
                    f"{len(ok):,} requests cannot decide a {c.stat_label} at "
                    f"{confidence_text(confidence)}; "
                    f"about {c.requests_needed:,} would"
                )


def _ttft_by_turn(
    ok: v.Columns, profile: str, ttft_of: str, latency_from: str
) -> dict[str, Distribution] | None:
    """TTFT as ``ttft_ms`` measures it, per 0-based turn; None when no request has a turn."""
    turn = ok["turn"]
    has = turn != NONE
    if not has.any():
        return None
    # a turn with no first token at all still shows, empty
    values, counted = v.ttft_rows(ok, profile, ttft_of, latency_from)
    return {
        str(t): distribution_ms(values[(turn == t) & counted])
        for t in sorted(int(t) for t in np.unique(turn[has]))
    }


def little_check(
    mean_in_flight: float, completions: int, e2e_total_ns: int, window_s: float
) -> LittleCheck:
    """L = lambda x W: the sampled mean in flight vs completions/s x mean time held, over
    the ``completions`` measured requests whose times in loadgen's hands (end - start: the
    in-flight count holds a request from before its start to after its end) add up to
    ``e2e_total_ns``."""
    completions_per_s = completions / window_s
    mean_latency_s = e2e_total_ns / completions / NS_PER_S
    predicted = completions_per_s * mean_latency_s
    ratio = mean_in_flight / predicted if predicted else None
    flagged = ratio is not None and abs(ratio - 1.0) > LITTLE_TOLERANCE
    return LittleCheck(
        mean_in_flight=mean_in_flight, predicted=predicted, ratio=ratio, flagged=flagged
    )


def step_cost(step: StepSummary, usd_per_hour: float) -> Cost:
    """USD per million output tokens and per 1,000 requests at the step's throughput.

    cost per token = (usd_per_hour / 3600) / output tokens per second.
    """
    usd_per_s = usd_per_hour / 3600.0
    t = step.throughput
    return Cost(
        usd_per_hour=usd_per_hour,
        usd_per_million_output_tokens=usd_per_s / t.output_tokens_per_s * 1e6
        if t.output_tokens_per_s > 0
        else None,
        usd_per_1000_requests=usd_per_s / t.requests_per_s * 1e3 if t.requests_per_s > 0 else None,
    )
