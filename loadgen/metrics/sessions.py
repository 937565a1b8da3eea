"""A step's sessions as wholes: agent tasks and multi-turn chats, from their calls' records.

A session is the set of calls (records) with one ``Record.session`` in a step,
of every agent. The main agent is ``agent`` 0 or None (a chat's turns); a
call's index is ``call``, else ``turn``. Formulas (docs/metrics.md "Sessions"):

- *measured*: every call of it is measured (none warm-up, ramp-up, or cut by
  an interrupt); the others are left out of every figure here.
- *completed*: measured and every call ok (a call the client cut on purpose,
  ``cancelled_by_client``, is not a failure); *failed*: measured, not completed.
- session time T = max(end_ns) - min(start_ns) over its calls (any agent).
- the main agent's time in LLM calls L = sum(end - start) of its calls;
  its wait for sub-agents W = sum over its calls m that started some of
  max(0, min(E_m, S_next) - end_m), E_m the latest end among m's descendants
  (calls whose chain of ``parent`` ids leads to m), S_next the start of the main
  agent's next call (T's end after its last); tools and other = max(0, T - L - W).
- context growth: prompt tokens (``Record.prompt_tokens``) of the main agent's
  first and last call (by start time), their p50 and the p50 of last - first.
- sessions/s = completed sessions / the step's whole window (first measured
  send to last measured end: every completed session lies wholly inside it);
  its interval takes the count as Poisson.
- a *good* session: completed, T <= the session bound (the highest percentile
  of ``sla.session_s`` stated, as goodput does per request) and every call
  within the per-request bounds (:func:`loadgen.metrics.aggregate.meets_sla`;
  a call cut by the client is not judged); goodput sessions/s = good / window.
- TTFT by call index and by agent depth: the TTFT ``ttft_ms`` is made of, of
  the successful calls of the measured sessions.

Time split, counts and context growth are over the completed sessions. Pure:
the calls come as a :class:`~loadgen.metrics.session_tally.SessionTally`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadgen.clock import NS_PER_S
from loadgen.metrics.confidence import rate_interval, requests_needed
from loadgen.metrics.session_tally import NONE, SessionTally
from loadgen.metrics.stats import distribution_ms
from loadgen.scenario import SlaSpec
from loadgen.summary import Distribution, SessionStats, SlaCheck
from loadgen.vocab import PERCENTILE_OF, confidence_text

__all__ = ["EXACT_CALLS", "SessionTimes", "call_bucket", "session_stats", "sessions_needed"]

Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

#: TTFT by call index: each index below this alone, then doubling buckets (10-19, 20-39, ...)
EXACT_CALLS = 10

_ORDER = ("p99", "p95", "p90", "p50", "mean")


def call_bucket(index: int) -> str:
    """``3`` -> ``"3"``; ``10`` -> ``"10-19"``; ``25`` -> ``"20-39"``."""
    if index < EXACT_CALLS:
        return str(index)
    low = EXACT_CALLS
    while index >= 2 * low:
        low *= 2
    return f"{low}-{2 * low - 1}"


def _bucket_key(label: str) -> int:
    return int(label.split("-")[0])


@dataclass(slots=True)
class SessionTimes:
    """One session's figures (ns): time, main agent's LLM time and sub-agent wait."""

    time: int
    llm: int
    wait: int


def split_time(
    agent: Sequence[int],
    ids: Sequence[int],
    parent: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
) -> SessionTimes:
    """The time of one session and its main agent's split; calls in start order."""
    t0, t1 = min(start), max(end)
    main = [i for i, a in enumerate(agent) if a in (0, NONE)]
    llm = sum(end[i] - start[i] for i in main)
    row_of = {ids[i]: i for i in range(len(ids))}
    latest: dict[int, int] = {}  # main call's row -> its descendants' latest end
    for i, a in enumerate(agent):
        if a in (0, NONE):
            continue
        root, seen = parent[i], 0
        while root != NONE and root in row_of and agent[row_of[root]] not in (0, NONE):
            root, seen = parent[row_of[root]], seen + 1
            if seen > len(ids):  # a loop of parent ids: not attributable
                root = NONE
        if root == NONE or root not in row_of:
            continue  # a sub-agent call with no link to a main call: tools and other
        m = row_of[root]
        latest[m] = max(latest.get(m, end[i]), end[i])
    wait = 0
    for k, m in enumerate(main):
        if m not in latest:
            continue
        cap = start[main[k + 1]] if k + 1 < len(main) else t1
        wait += max(0, min(latest[m], cap) - end[m])
    return SessionTimes(t1 - t0, llm, wait)


def _groups(session: Ints, start: Ints) -> tuple[Ints, Ints]:
    """(order, group starts): the calls sorted by session then start."""
    order = np.lexsort((start, session))
    s = session[order]
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    return order, starts


def session_bound_ns(sla: SlaSpec) -> int | None:
    """Each session's own bound for goodput: the highest percentile of sla.session_s stated."""
    stated = dict(sla.session_s.items())
    for key in _ORDER:
        if key in stated:
            return round(stated[key] * NS_PER_S)
    return None


def session_stats(
    tally: SessionTally,
    good: Mask,
    ttft: tuple[Ints, Mask],
    window_s: float,
    sla: SlaSpec,
) -> tuple[SessionStats | None, Ints]:
    """The step's :class:`SessionStats` (None without a session) and the completed
    sessions' times (ns), for :func:`sessions_needed`.

    ``good``: each successful measured request within the per-request bounds (rows of
    the step's successful-request columns); ``ttft``: their TTFT values and where one is
    defined (:func:`loadgen.metrics.vector.ttft_rows`); ``window_s``: the step's whole window.
    """
    if not len(tally):
        return None, np.zeros(0, dtype=np.int64)
    c = {name: tally.column(name) for name in ("session", "start")}
    order, starts = _groups(c["session"], c["start"])
    col = {name: tally.column(name)[order] for name in _NAMES}
    ends = np.append(starts[1:], len(order))
    measured = np.minimum.reduceat(col["measured"], starts) == 1
    completed = measured & (np.minimum.reduceat(col["ok"], starts) == 1)
    okrow = col["okrow"]
    has_row = okrow != NONE
    call_good = col["client_cancelled"] == 1
    call_good[has_row] |= good[okrow[has_row]]
    all_good = np.minimum.reduceat(call_good.astype(np.int64), starts) == 1
    times: list[SessionTimes] = []
    firsts, lasts, calls, subs = [], [], [], []
    truncated = 0
    for g in np.flatnonzero(completed):
        a, b = int(starts[g]), int(ends[g])
        agent = col["agent"][a:b].tolist()
        times.append(
            split_time(
                agent,
                col["id"][a:b].tolist(),
                col["parent"][a:b].tolist(),
                col["start"][a:b].tolist(),
                col["end"][a:b].tolist(),
            )
        )
        prompts = [p for p, ag in zip(col["prompt_tokens"][a:b].tolist(), agent, strict=True)
                   if ag in (0, NONE)]  # fmt: skip
        if prompts:
            firsts.append(prompts[0])
            lasts.append(prompts[-1])
        calls.append(b - a)
        subs.append(len({ag for ag in agent if ag not in (0, NONE)}))
        truncated += bool(col["truncated"][a:b].any())
    t = np.array([s.time for s in times], dtype=np.int64)
    llm = np.array([s.llm for s in times], dtype=np.int64)
    wait = np.array([s.wait for s in times], dtype=np.int64)
    other = np.maximum(0, t - llm - wait)
    bound = session_bound_ns(sla)
    within = t <= bound if bound is not None else np.ones(t.size, dtype=bool)
    n_good = int((within & all_good[completed]).sum())
    n_done = int(completed.sum())
    conf = sla.confidence
    ci = rate_interval(n_done, window_s, conf) if window_s else None
    total = int(t.sum())
    per_s = 1.0 / window_s if window_s else 0.0
    in_measured = np.repeat(measured, ends - starts)
    stats = SessionStats(
        measured=int(measured.sum()),
        completed=n_done,
        failed=int(measured.sum()) - n_done,
        left_out=int((~measured).sum()),
        sessions_per_s=n_done * per_s,
        sessions_per_s_ci=None if ci is None else [ci.low, ci.high],
        good_sessions=n_good,
        goodput_sessions_per_s=n_good * per_s,
        time_ms=distribution_ms(t, confidence=conf),
        llm_ms=distribution_ms(llm, confidence=conf),
        sub_agent_wait_ms=distribution_ms(wait, confidence=conf),
        tools_other_ms=distribution_ms(other, confidence=conf),
        llm_share=int(llm.sum()) / total if total else None,
        sub_agent_wait_share=int(wait.sum()) / total if total else None,
        tools_other_share=int(other.sum()) / total if total else None,
        calls_mean=float(np.mean(calls)) if calls else None,
        calls_p50=float(np.percentile(calls, 50)) if calls else None,
        calls_max=max(calls) if calls else None,
        sub_agents_mean=float(np.mean(subs)) if subs else None,
        first_prompt_tokens_p50=_p50(firsts),
        last_prompt_tokens_p50=_p50(lasts),
        growth_tokens_p50=_p50([b - a for a, b in zip(firsts, lasts, strict=True)]),
        truncated_sessions=truncated,
    )
    _cached(stats, col, in_measured & has_row)
    stats.ttft_by_call, stats.ttft_by_depth = _ttft_views(col, in_measured & has_row, ttft, conf)
    return stats, t


_NAMES = (
    "id",
    "agent",
    "index",
    "parent",
    "depth",
    "start",
    "end",
    "ok",
    "measured",
    "prompt_tokens",
    "cached",
    "truncated",
    "okrow",
    "client_cancelled",
)


def _p50(values: list[int]) -> float | None:
    return float(np.percentile(values, 50)) if values else None


def _cached(stats: SessionStats, col: dict[str, Ints], ok: Mask) -> None:
    """The cached share of the successful calls whose server reported cached tokens."""
    known = ok & (col["cached"] != NONE)
    stats.cached_reported = int(known.sum())
    prompts = int(col["prompt_tokens"][known].sum())
    if stats.cached_reported and prompts:
        stats.cached_share = int(col["cached"][known].sum()) / prompts


def _ttft_views(
    col: dict[str, Ints], ok: Mask, ttft: tuple[Ints, Mask], confidence: float
) -> tuple[dict[str, Distribution], dict[str, Distribution]]:
    """TTFT of the successful calls of the measured sessions by call index and by depth."""
    values, defined = ttft
    rows = col["okrow"][ok]
    has = defined[rows]
    v = values[rows][has]
    index = col["index"][ok][has]
    agent, depth = col["agent"][ok][has], col["depth"][ok][has]
    # no depth recorded: the main agent (agent 0 or None) is 0, any other agent 1
    depth = np.where(depth != NONE, depth, np.where((agent == 0) | (agent == NONE), 0, 1))
    by_call: dict[str, list[int]] = {}
    for i, x in zip(index.tolist(), v.tolist(), strict=True):
        if i != NONE:
            by_call.setdefault(call_bucket(i), []).append(x)
    by_depth = {str(d): v[depth == d] for d in sorted(set(depth.tolist()))}
    return (
        {
            k: distribution_ms(by_call[k], confidence=confidence)
            for k in sorted(by_call, key=_bucket_key)
        },
        {k: distribution_ms(x, confidence=confidence) for k, x in by_depth.items()},
    )


def sessions_needed(check: SlaCheck, times_ns: Ints, requests_ok: int, confidence: float) -> None:
    """An inconclusive ``session_s`` percentile check: its reason, and the requests that
    would decide it (the sessions needed at this step's calls per session)."""
    if check.verdict != "inconclusive" or check.stat not in PERCENTILE_OF:
        return
    n = int(times_ns.size)
    if n == 0:
        return
    beyond = int(np.count_nonzero(times_ns > check.bound * NS_PER_S))
    needed = requests_needed(n, beyond, PERCENTILE_OF[check.stat] / 100, confidence)
    if needed is None:
        return
    check.requests_needed = math.ceil(needed * requests_ok / n) if requests_ok else None
    if needed > n:
        check.reason = (
            f"{n:,} session{'s' if n != 1 else ''} cannot decide a {check.stat_label} "
            f"at {confidence_text(confidence)}; about {needed:,} would"
        )
