"""The step summary as loadgen computed it from a list of records before StepColumns.

A verbatim copy of ``summarize_step`` and its helpers from loadgen/metrics/step.py
as of commit c965ee7, kept as the oracle that test_columns.py holds the
columnar summary to. Do not "fix" it: it is the reference.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from loadgen.clock import NS_PER_S
from loadgen.metrics.latency import (
    FIRST_STAMP,
    first_answer,
    first_reasoning,
    queue_wait_ns,
    ttft_from_scheduled_ns,
)
from loadgen.metrics.profiles import PROFILES, Profile
from loadgen.metrics.sla import check_sla, request_meets_sla
from loadgen.metrics.stats import distribution_ms
from loadgen.metrics.tokens import (
    PROMPT_TOLERANCE,
    prompt_length_check,
    short_output_warning,
    token_counts,
)
from loadgen.metrics.window import completed_in, steady_window
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import (
    ClientHealth,
    Distribution,
    LittleCheck,
    LoadPoint,
    RequestCounts,
    StepSummary,
    Throughput,
)

LITTLE_TOLERANCE = 0.15


def summarize_step_reference(
    index: int,
    load: LoadPoint,
    records: Sequence[Record],
    sla: SlaSpec,
    *,
    client: ClientHealth | None = None,
    mean_in_flight: float | None = None,
    interrupted: bool = False,
    profile: Profile = PROFILES["loadgen"],
    ttft_of: str = "any",
    prompt_tolerance: float = PROMPT_TOLERANCE,
    expect_full_output: bool = False,
) -> StepSummary:
    """Counts, latency statistics (by ``profile``'s formulas), throughput and SLA of a step.

    ``ttft_of`` ("any" or "answer") picks the stamp TTFT, its SLA bounds and
    goodput measure to; ``prompt_tolerance`` is the relative prompt-length
    difference counted as beyond tolerance; ``expect_full_output`` (the body
    forces outputs of max_tokens) turns short outputs into a warning.
    """
    if ttft_of not in FIRST_STAMP:
        msg = f"ttft_of {ttft_of!r}; expected one of {', '.join(FIRST_STAMP)}"
        raise ValueError(msg)
    # Cut short by the user, not by the server: kept in records.jsonl, out of the metrics.
    measured = [r for r in records if not r.warmup and not r.ramp and r.error_kind != "cancelled"]
    ok = [r for r in measured if r.ok]
    start = min((r.sent_ns for r in measured), default=0)
    end = max((r.end_ns for r in measured), default=0)
    window_s = (end - start) / NS_PER_S if end > start else 0.0

    open_loop = load.mode in ("rate", "trace")
    step = StepSummary(
        index=index,
        load=load,
        started_ns=start,
        ended_ns=end,
        duration_s=window_s,
        interrupted=interrupted,
        client=client or ClientHealth(),
        ttft_of="answer" if ttft_of == "answer" else "any",
        latency_from="scheduled" if open_loop and sla.latency_from == "scheduled" else "sent",
    )
    step.requests = _counts(records, measured, len(ok))
    _latencies(step, ok, profile, ttft_of)
    if open_loop:
        _open_loop_latencies(step, ok, profile, ttft_of)
    step.tokens = token_counts(ok, expect_full_output=expect_full_output)
    step.prompt_lengths = prompt_length_check(ok, prompt_tolerance)
    if (warning := short_output_warning(step.tokens, len(ok))) is not None:
        step.warnings.append(warning)
    good = [r for r in ok if request_meets_sla(r, sla, ttft_of, profile)]
    step.throughput_whole = _throughput(ok, good, window_s, "whole")
    step.throughput = step.throughput_whole
    steady = steady_window(measured, None if open_loop else load.concurrency)
    if steady is not None:
        step.steady_started_ns, step.steady_ended_ns = steady
        step.steady_duration_s = (steady[1] - steady[0]) / NS_PER_S
        step.throughput = _throughput(
            completed_in(ok, *steady), completed_in(good, *steady), step.steady_duration_s, "steady"
        )
    if ok:  # the send duration: loadgen began the request to its last byte written
        step.send_ms = distribution_ms(
            [r.sent_ns - r.start_ns for r in ok], confidence=sla.confidence
        )
    step.sla = check_sla(step, sla)
    step.sla.good_requests = len(good)
    if mean_in_flight is not None and window_s and ok:  # as loadgen.metrics.step now
        step.little = little_check(mean_in_flight, measured, window_s)
    return step


def _throughput(
    ok: Sequence[Record], good: Sequence[Record], window_s: float, window: str
) -> Throughput:
    """Requests, tokens and good requests (within every per-request bound) per second."""
    per_s = 1.0 / window_s if window_s else 0.0
    return Throughput(
        requests_per_s=len(ok) * per_s,
        output_tokens_per_s=sum(r.output_tokens for r in ok) * per_s,
        input_tokens_per_s=sum(r.prompt_tokens for r in ok) * per_s,
        goodput_requests_per_s=len(good) * per_s,
        window="steady" if window == "steady" else "whole",
    )


def _counts(records: Sequence[Record], measured: Sequence[Record], ok: int) -> RequestCounts:
    kept = [r for r in records if r.error_kind != "cancelled"]
    errors = Counter(r.error_kind or "unknown" for r in measured if not r.ok)
    return RequestCounts(
        total=len(measured),
        ok=ok,
        failed=len(measured) - ok,
        warmup=sum(1 for r in kept if r.warmup),
        ramp=sum(1 for r in kept if r.ramp and not r.warmup),
        cancelled=len(records) - len(kept),
        reconnects=sum(r.reconnects for r in measured),
        errors=dict(sorted(errors.items())),
        error_rate=(len(measured) - ok) / len(measured) if measured else 0.0,
    )


def _latencies(step: StepSummary, ok: Sequence[Record], profile: Profile, ttft_of: str) -> None:
    """TTFT (to the stamp ``ttft_of`` picks), its reasoning/answer split and per-turn view,
    ITL, TPOT and E2E, by the profile's formulas, from where ``step.latency_from`` says."""
    first, frm = FIRST_STAMP[ttft_of], step.latency_from
    step.ttft_ms = distribution_ms(
        [v for r in ok if (v := profile.ttft(r, first, frm)) is not None]
    )
    if any(r.reasoning_events for r in ok):
        step.ttft_reasoning_ms = distribution_ms(
            [v for r in ok if (v := profile.ttft(r, first_reasoning, frm)) is not None]
        )
        step.ttft_answer_ms = distribution_ms(
            [v for r in ok if (v := profile.ttft(r, first_answer, frm)) is not None]
        )
    step.ttft_by_turn = _ttft_by_turn(ok, profile, ttft_of, frm)
    step.itl_ms = distribution_ms(profile.itl(ok))
    if profile.icl is not None:
        step.icl_ms = distribution_ms(profile.icl(ok))
    step.tpot_ms = distribution_ms([t for r in ok if (t := profile.tpot(r)) is not None])
    step.e2e_ms = distribution_ms([e for r in ok if (e := profile.latency(r, frm)) is not None])


def _open_loop_latencies(
    step: StepSummary, ok: Sequence[Record], profile: Profile, ttft_of: str
) -> None:
    """Both origins of TTFT and E2E, and the queue wait: the intended send time is known."""
    first = FIRST_STAMP[ttft_of]
    step.ttft_from_scheduled_ms = distribution_ms(
        [v for r in ok if (v := ttft_from_scheduled_ns(r, first)) is not None]
    )
    step.ttft_from_sent_ms = distribution_ms(
        [v for r in ok if (v := profile.ttft(r, first, "sent")) is not None]
    )
    step.e2e_from_scheduled_ms = distribution_ms(
        [e for r in ok if (e := profile.latency(r, "scheduled")) is not None]
    )
    step.e2e_from_sent_ms = distribution_ms(
        [e for r in ok if (e := profile.latency(r, "sent")) is not None]
    )
    step.queue_wait_ms = distribution_ms([v for r in ok if (v := queue_wait_ns(r)) is not None])


def _ttft_by_turn(
    ok: Sequence[Record], profile: Profile, ttft_of: str, latency_from: str
) -> dict[str, Distribution] | None:
    """TTFT as ``ttft_ms`` measures it, per 0-based turn; None when no record has a turn."""
    by_turn: defaultdict[int, list[int]] = defaultdict(list)
    for r in ok:
        if r.turn is not None:
            values = by_turn[r.turn]  # a turn with no first token at all still shows, empty
            if (v := profile.ttft(r, FIRST_STAMP[ttft_of], latency_from)) is not None:
                values.append(v)
    if not by_turn:
        return None
    return {str(t): distribution_ms(by_turn[t]) for t in sorted(by_turn)}


def little_check(mean_in_flight: float, measured: Sequence[Record], window_s: float) -> LittleCheck:
    """L = lambda x W: the sampled mean in flight vs completions/s x mean time held
    (end - start; a record without a start stamp: from its send)."""
    completions_per_s = len(measured) / window_s
    held = sum(r.end_ns - (r.start_ns or r.sent_ns) for r in measured)
    mean_latency_s = held / len(measured) / NS_PER_S
    predicted = completions_per_s * mean_latency_s
    ratio = mean_in_flight / predicted if predicted else None
    flagged = ratio is not None and abs(ratio - 1.0) > LITTLE_TOLERANCE
    return LittleCheck(
        mean_in_flight=mean_in_flight, predicted=predicted, ratio=ratio, flagged=flagged
    )
