"""What a scenario would send, without sending it: ``loadgen workload`` and the summary.

Every step is planned exactly as ``loadgen run`` plans it (same seeds, same
requests); a step bounded by ``duration_s`` in closed loop shows its first
``SAMPLE`` requests. Sessions show their first turn's prompt and each turn's
new message; the history a later turn carries is made of real answers, which
only a run knows. Agent tasks show their shapes and planned context growth
(:mod:`loadgen.workload.describe_agent`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from loadgen.scenario import RateLoad, Scenario, TraceLoad
from loadgen.vocab import pace
from loadgen.workload.agent import AgentPlan
from loadgen.workload.describe_agent import agent_lines, describe_agent
from loadgen.workload.lengths import describe
from loadgen.workload.plan import RequestSpec
from loadgen.workload.pooling import pooling_dists
from loadgen.workload.source import SessionPlan, Workload
from loadgen.workload.step import (
    ClosedPlan,
    ClosedSessionsPlan,
    LinkedPlan,
    OpenPlan,
    OpenSessionsPlan,
    Session,
    StepPlan,
    plan_step,
)
from loadgen.workload.tools import describe_output
from loadgen.workload.trace_stats import arrival_profile, trace_stats
from loadgen.workload.traces import TraceRow

__all__ = ["SAMPLE", "describe_workload", "workload_report"]

#: Requests shown for a step whose length is a duration (closed loop).
SAMPLE = 1000
_PCTS = (50, 90, 99)
_BAR = 30


def describe_workload(sc: Scenario, workload: Workload) -> dict[str, Any]:
    """A short, JSON-ready description of the workload for summary.json."""
    w = sc.workload
    out: dict[str, Any] = {"prompt_length_source": workload.prompt_length_source}
    if w.dataset is not None:
        out["dataset"] = w.dataset.path
        out["dataset_rows"] = len(workload.dataset or [])
    elif isinstance(sc.load, TraceLoad):
        out["trace"] = sc.load.trace
    else:
        out["prompt_tokens"] = describe(w.prompt_tokens)
    if not isinstance(sc.load, TraceLoad) and workload.pooling is None:
        out["output_tokens"] = describe(w.output_tokens)
    for name, dist in pooling_dists(w, sc.target.api).items():  # embeddings, rerank
        out[name] = describe(dist)
    if w.tokenizer is not None:
        out["tokenizer"] = w.tokenizer
    if w.prefix is not None and workload.prefixes:
        out["prefix"] = {
            "groups": w.prefix.groups,
            "tokens": w.prefix.tokens,
            "share": w.prefix.share,
        }
    if w.sessions is not None:
        s = w.sessions
        out["sessions"] = {
            "turns": describe(s.turns),
            "think_time_s": describe(s.think_time_s) if s.think_time_s else None,
        }
    if w.agent is not None:
        out["agent"] = describe_agent(w.agent)
    if workload.output is not None:
        out.update(describe_output(workload.output, w))
    out.update(_media(workload))
    if (c := w.cancel) is not None:  # users who stop
        point = c.after_tokens if c.after_tokens is not None else c.after_s
        unit = "token events" if c.after_tokens is not None else "s after the send"
        assert point is not None
        out["cancel"] = (
            f"{c.share:.0%} of requests aborted by the client after {describe(point)} {unit}"
        )
    return out


def _media(workload: Workload) -> dict[str, str]:
    """``images`` and ``audio``: the synthetic ones' distributions, a dataset's count."""
    out = {}
    if workload.row_media:
        rows = len(workload.row_media)
        images = sum(len(m) for m in workload.row_media.values())
        of = len(workload.dataset or [])
        out["images"] = f"from the dataset: {rows} of {of} rows, {images} images"
    if workload.media is not None and (i := workload.media.images) is not None:
        text = f"{describe(i.count)} a request, {describe(i.width)} x {describe(i.height)} px"
        out["images"] = f"{text}, {i.format}" + (f"; {out['images']}" if "images" in out else "")
    if workload.media is not None and (a := workload.media.audio) is not None:
        out["audio"] = f"{describe(a.seconds)} a request, {a.sample_rate} Hz WAV"
    return out


def workload_report(
    sc: Scenario,
    workload: Workload,
    *,
    notes: Mapping[int, Sequence[str]] | None = None,
    tail: Sequence[str] = (),
) -> str:
    """The text ``loadgen workload`` prints; ``notes[i]`` go under step i, ``tail`` last.

    (The notes and tail are :mod:`loadgen.forecast`'s: what each step can decide and
    how long it takes, which this stage cannot know.)
    """
    source = workload.prompt_length_source
    if source == "approximate" and sc.workload.calibrate:
        source += " (a run first calibrates with the server's tokenize endpoint, where it has one)"
    lines = [f"scenario {sc.name}: {sc.target.api}, prompt lengths {source}"]
    for key, value in describe_workload(sc, workload).items():
        if key == "prefix":
            size = value["tokens"] or f"{value['share']:.0%} of the mean prompt"
            lines.append(f"  prefix: {value['groups']} shared, {size} tokens each")
        elif key == "sessions":
            think = f", think time {value['think_time_s']}" if value["think_time_s"] else ""
            lines.append(f"  sessions: turns {value['turns']}{think}")
        elif key == "agent":
            lines.append("  agent: " + "; ".join(f"{k} {v}" for k, v in value.items() if v))
        elif key != "prompt_length_source":
            lines.append(f"  {key}: {value}")
    if workload.models:
        lines.append(f"  models: {_mix_line(workload.models)}")
    if isinstance(sc.load, TraceLoad):
        lines += _trace_lines(workload.trace_rows(sc.load, 1.0))
    points = _points(sc)
    if not points:
        lines.append("  (sweep auto: the rates come from the saturation probe at run time)")
    for index, (mode, value) in enumerate(points):
        plan = plan_step(workload, sc.load, mode, value, index)
        if isinstance(plan, ClosedPlan):  # a closed loop's media, made here
            plan.requests = map(workload.with_media, plan.requests)
        lines.append("")
        lines.extend(_step_lines(plan, index, mode, value, _sessions_of(sc, workload)))
        lines.extend((notes or {}).get(index, ()))
    lines.extend(tail)
    return "\n".join(lines)


def _trace_lines(rows: list[TraceRow]) -> list[str]:
    """The trace as recorded: rate, span, shared hash blocks (prefixes), sessions."""
    if not rows:
        return []
    st = trace_stats(rows)
    rate = f", mean {st['mean_rate_rps']:.2f} req/s" if st["mean_rate_rps"] else ""
    lines = [f"  recorded: {st['count']} requests over {st['duration_s']:.2f} s{rate}"]
    if st["shared_block_share"] is not None:
        lines.append(
            f"  shared prefixes: {st['shared_block_share']:.0%} of requests share a "
            "512-token hash block with another"
        )
    if st["sessions"] is not None:
        lines.append(f"  sessions: {st['sessions']}")
    ag = st["agents"]
    if ag is not None:
        lines.append(
            f"  agents: {ag['tasks']} tasks, {ag['sub_agents']} sub-agents (depth up to "
            f"{ag['max_depth']}), calls per task p50 {ag['calls_p50']:g}, max {ag['calls_max']}"
        )
        lines.append(
            f"  linked: {ag['linked']} of {st['count']} calls wait for earlier calls "
            "to end (plus the recorded gap)"
        )
    return lines


def _points(sc: Scenario) -> list[tuple[str, float]]:
    load = sc.load
    if isinstance(load, RateLoad) and load.sweep == "auto":
        return []
    return [(load.mode, v) for v in load.points]


def _sessions_of(sc: Scenario, workload: Workload) -> Callable[[list[Session]], list[str]]:
    """How a step's sessions are shown: chats, or agent tasks."""
    agent = sc.workload.agent
    if agent is None:
        return _session_lines
    system = [workload.maker.count_text(p) for p in workload.prefixes]
    limit = agent.max_context_tokens

    def lines(tasks: list[Session]) -> list[str]:
        plans = [t for t in tasks if isinstance(t, AgentPlan)]
        return agent_lines(plans, system, limit, _picked)

    return lines


def _step_lines(
    plan: StepPlan,
    index: int,
    mode: str,
    value: float,
    session_lines: Callable[[list[Session]], list[str]],
) -> list[str]:
    head = {
        "concurrency": f"step {index}: concurrency {value:g}",
        "rate": f"step {index}: rate {value:g} req/s",
        "trace": f"step {index}: trace at time scale {value:g} ({pace(value)})",
        "offline": f"step {index}: offline, "
        + (f"at most {value:g} in flight" if value else "all at once"),
    }[mode]
    match plan:
        case ClosedSessionsPlan():
            count = plan.measured if plan.measured is not None else SAMPLE
            return [head, *session_lines(list(itertools.islice(plan.sessions, count)))]
        case OpenSessionsPlan():  # each arrival starts a session (an agent task)
            head = head.replace(" req/s", " sessions/s")
            return [head, *session_lines(plan.sessions), *_arrivals(plan.offsets_ns, "sessions/s")]
        case ClosedPlan():
            count = plan.measured if plan.measured is not None else SAMPLE
            specs = plan.warmup + list(itertools.islice(plan.requests, count))
            if plan.measured is None:
                seconds = (plan.duration_ns or 0) / 1e9
                head += f" for {seconds:g} s (how many requests fit is up to the server: "
                head += f"the first {SAMPLE} shown)"
            return [head, *_request_lines(specs)]
        case OpenPlan() | LinkedPlan():
            return [head, *_request_lines(plan.requests), *_arrivals(plan.offsets_ns)]


def _request_lines(specs: list[RequestSpec]) -> list[str]:
    measured = [s for s in specs if not s.warmup and not s.ramp]
    lines = [
        f"  requests: {len(measured)} measured, {sum(s.warmup for s in specs)} warm-up, "
        f"{sum(s.ramp for s in specs)} ramp-up",
        f"  tokens: {sum(s.prompt_tokens for s in specs):,} prompt, "
        f"{sum(s.max_tokens for s in specs):,} output (max_tokens)",
    ]
    lines += _picked([s.model for s in specs], "requests")
    lines += _histogram("prompt tokens", [s.prompt_tokens for s in specs])
    if specs and specs[0].inputs:  # a pooling api: inputs (documents) in place of outputs
        lines[1] = f"  tokens: {sum(s.prompt_tokens for s in specs):,} prompt, no output"
        lines += _histogram("inputs per request", [len(s.inputs) for s in specs])
        return lines
    lines += _histogram("output tokens", [s.max_tokens for s in specs])
    return lines + _media_lines(specs)


def _media_lines(specs: list[RequestSpec]) -> list[str]:
    """Images per request, their sizes and bytes; audio seconds (none: no lines)."""
    images = [m for s in specs for m in s.media if m.kind == "image"]
    audio = [m.seconds for s in specs for m in s.media if m.kind == "audio"]
    lines = []
    if images and specs:
        mp = [m.pixels / 1e6 for m in images]
        kb = np.mean([m.nbytes for m in images]) / 1e3
        sizes = sorted({(m.width, m.height) for m in images})
        shown = ", ".join(f"{w}x{h}" for w, h in sizes[:4]) + (", ..." if len(sizes) > 4 else "")
        lines.append(
            f"  images: {len(images) / len(specs):.2f} a request, {shown} "
            f"(mean {np.mean(mp):.3f} MP, {kb:,.0f} KB encoded, {images[0].mime})"
        )
    if audio:
        lines.append(
            f"  audio: mean {np.mean(audio):.2f} s a request, min {min(audio):.2f} s, "
            f"max {max(audio):.2f} s"
        )
    return lines


def _mix_line(models: Sequence[tuple[str, float]]) -> str:
    """``base 75%, sql-lora 25% of the requests (seeded picks; a session keeps its model)``."""
    total = sum(w for _, w in models)
    shares = ", ".join(f"{name} {w / total:.0%}" for name, w in models)
    return f"{shares} of the requests (seeded picks; a session keeps its model)"


def _picked(models: list[str | None], what: str) -> list[str]:
    """``  models: base 91, sql-lora 33 requests``: the step's picks; none without a mix."""
    if not any(models):
        return []
    counts: dict[str, int] = {}
    for m in models:
        if m is not None:
            counts[m] = counts.get(m, 0) + 1
    return ["  models: " + ", ".join(f"{m} {n}" for m, n in counts.items()) + f" {what}"]


def _session_lines(chats: list[Session]) -> list[str]:
    sessions = [s for s in chats if isinstance(s, SessionPlan)]
    turns = [s.turns for s in sessions]
    users = [t for s in sessions for t in s.user_tokens]
    outs = [t for s in sessions for t in s.max_tokens]
    think = [t / 1e9 for s in sessions for t in s.think_ns[:-1]]
    lines = [
        f"  sessions: {len(sessions)}, {sum(turns)} turns "
        f"(per session p50 {_pct(turns, 50):g}, max {max(turns, default=0)})",
    ]
    if think:
        lines.append(f"  think time: mean {np.mean(think):.2f} s, p90 {_pct(think, 90):.2f} s")
    lines += _picked([s.model for s in sessions], "sessions")
    lines += _histogram("new user tokens per turn", users)
    lines += _histogram("output tokens", outs)
    return lines


def _arrivals(offsets_ns: list[int], unit: str = "req/s") -> list[str]:
    if not offsets_ns:
        return []
    span = offsets_ns[-1] / 1e9
    lines = [f"  arrivals: {len(offsets_ns)} over {span:.2f} s"]
    if len(offsets_ns) > 1 and span > 0:
        rows = [TraceRow(o, 1, 1) for o in offsets_ns]
        profile = arrival_profile(rows, bins=10)
        top = max((r for _, r in profile), default=0.0) or 1.0
        for start, rate in profile:
            bar = "#" * round(rate / top * _BAR)
            lines.append(f"    {start:8.2f} s {rate:8.2f} {unit} {bar}")
    return lines


def _histogram(name: str, values: list[int]) -> list[str]:
    if not values:
        return [f"  {name}: none"]
    pcts = ", ".join(f"p{p} {_pct(values, p):g}" for p in _PCTS)
    lines = [f"  {name}: mean {np.mean(values):.1f}, {pcts}, min {min(values)}, max {max(values)}"]
    lo, hi = min(values), max(values)
    if lo == hi:
        return lines
    bins = min(8, hi - lo + 1)
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi + 1))
    top = int(counts.max()) or 1
    for c, a, b in zip(counts, edges[:-1], edges[1:], strict=True):
        bar = "#" * round(int(c) / top * _BAR)
        lines.append(f"    [{a:7.0f}, {b:7.0f}) {int(c):6d} {bar}")
    return lines


def _pct(values: list[int] | list[float], p: float) -> float:
    return float(np.percentile(values, p, method="lower"))
