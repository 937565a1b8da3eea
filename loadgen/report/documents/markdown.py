"""``report.md``: the run as a document.

Owns :func:`build_document` (summary -> a list of blocks of
:mod:`loadgen.report.blocks`) and :func:`render_markdown`. The HTML writer
renders the same blocks, so both reports always say the same thing. What the
document holds: the scenario in brief (with where prompt lengths come from and
the workload), the verdict, an overview table (a prefix-cache column when a
step has a hit rate), the plots, and each step's section
(:func:`loadgen.report.documents.step_doc.step_blocks`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from loadgen.metrics import PROFILES
from loadgen.report import facts, sessions
from loadgen.report.blocks import (
    FAIL,
    PASS,
    Block,
    Figures,
    Heading,
    Items,
    Table,
    Text,
    num,
    pct,
    verdict_cell,
)
from loadgen.report.documents.step_doc import step_blocks
from loadgen.report.endpoints import target_text
from loadgen.report.plots import pooling_views
from loadgen.report.plots.frontier_view import best_text, frontier_view
from loadgen.report.plots.series import curve_steps, tail_stat
from loadgen.results import is_pooling, load_label
from loadgen.scenario import Scenario
from loadgen.summary import SlaBounds, StepSummary, Summary
from loadgen.vocab import metric_label

__all__ = [
    "FAIL",
    "OVERVIEW_HEADER",
    "PASS",
    "PREFIX_COLUMN",
    "Block",
    "Figures",
    "Heading",
    "Items",
    "Table",
    "Text",
    "build_document",
    "render_markdown",
]

OVERVIEW_HEADER = (
    "step",
    "load",
    "ok / failed",
    "error rate (%)",
    "requests (req/s)",
    "goodput (req/s)",
    "output (tok/s)",
    "TTFT p50 (ms)",
    "TTFT p99 (ms)",
    "TPOT p99 (ms)",
    "ITL p99 (ms)",
    "E2E p99 (ms)",
    "SLA",
)
#: The overview's column after TTFT p99 when a step has a prefix-cache hit rate.
PREFIX_COLUMN = "prefix cache hit (%)"


def _scenario_items(summary: Summary, scenario: Scenario | None) -> tuple[str, ...]:
    values = [load_label(s) for s in summary.steps]
    items = [
        f"target: {target_text(summary)} · api {summary.api} · model {summary.model}",
        f"steps run: {len(summary.steps)} ({'; '.join(values) or 'none'})",
    ]
    if scenario is not None:
        load = scenario.load
        length = (
            f"{load.requests_per_step} requests"
            if load.requests_per_step
            else f"{load.duration_s} s"
        )
        warmup = getattr(load, "warmup_requests", 0)  # a trace or an offline batch has none
        items.append(f"per step: {length}, {warmup} warm-up requests")
    items.append(f"metrics profile: {_profile_text(summary.metrics_profile, is_pooling(summary))}")
    items += facts.run_facts(summary)
    if scenario is not None and summary.workload is None:
        work = scenario.workload
        for key, dist in (
            ("prompt_tokens", work.prompt_tokens),
            ("output_tokens", work.output_tokens),
        ):
            spec = ", ".join(
                f"{k} {v}" for k, v in dist.model_dump(mode="json").items() if v is not None
            )
            items.append(f"{key.replace('_', ' ')}: {spec}")
    items.append(f"SLA: {_sla_text(summary.sla)}")
    if (view := frontier_view(summary)).points:
        items.append(f"frontier: {best_text(view)} (plots/frontier.png)")
    if scenario is not None:
        if scenario.cost.usd_per_hour is not None:
            items.append(f"cost basis: {scenario.cost.usd_per_hour} USD/hour")
        tel = scenario.telemetry
        sources = [*tel.agents, *([tel.server_metrics] if tel.server_metrics else [])]
        sources += [f"dcgm {u}" for u in tel.dcgm]
        sources += [f"prometheus {tel.prometheus.url}"] if tel.prometheus else []
        if sources:
            items.append(f"telemetry: {', '.join(sources)}")
    return tuple(items)


def _profile_text(profile: str, pooled: bool = False) -> str:
    """``loadgen: loadgen's own formulas (TTFT from the send)``; a pooling run's note says
    where E2E counts from (it has no TTFT)."""
    found = PROFILES.get(profile)
    if found is None:
        return profile
    note = found.pooling_note if pooled else found.note
    return f"{profile}: {note}" if note else profile


def _sla_text(sla: SlaBounds) -> str:
    parts = [f"{metric_label(m, s)} ≤ {b:g} ms" for m, s, b in sla.latency_bounds()]
    parts += sessions.bound_texts(sla)
    if sla.max_error_rate is not None:
        parts.append(f"error rate ≤ {pct(sla.max_error_rate)}")
    if sla.valid_output_rate is not None:
        parts.append(f"valid output rate ≥ {pct(sla.valid_output_rate)}")
    return "; ".join(parts) or "none stated"


def _verdict_blocks(summary: Summary) -> list[Block]:
    """The run's verdict (``summary.verdict``, decided by the sweep) as the console says it,
    and its notes; the report decides nothing of its own."""
    v = summary.verdict
    blocks: list[Block] = [Heading("Verdict")]
    if v is not None and v.text:
        blocks.append(Text(v.text, "verdict"))
    else:  # a summary written without one: say so, decide nothing
        blocks.append(Text("summary.json holds no verdict" if summary.steps else "no step ran"))
    notes = []
    if v is not None and v.bracket:
        tol = f" (tolerance {v.tolerance:g})" if v.tolerance is not None else ""
        notes.append(f"bracket: passes at {v.bracket[0]:g}, fails at {v.bracket[-1]:g}{tol}")
    if v is not None and v.saturation_rps is not None:
        notes.append(f"saturation probe: {v.saturation_rps:.2f} req/s")
    if v is not None and v.stopped_early:
        notes.append(f"stopped early: {v.stopped_early}")
    if summary.interrupted:
        cut = [str(st.index) for st in summary.steps if st.interrupted]
        which = (
            f" (step {', '.join(cut)} was cut short: shown as far as it got, not judged)"
            if cut
            else ""
        )
        notes.append(f"the run was interrupted: this report covers the steps it ran{which}")
    if notes:
        blocks.append(Items(tuple(notes), "warn"))
    return blocks


def _sla_cell(step: StepSummary) -> str:
    return verdict_cell(step.standing)


def overview_header(summary: Summary) -> tuple[str, ...]:
    """:data:`OVERVIEW_HEADER` with each latency's tail the percentile the SLA bounds
    (:func:`loadgen.report.plots.series.tail_stat`): ``TTFT p90 (ms)`` beside a p90 bound."""
    out = list(OVERVIEW_HEADER)
    for i, metric in _TAIL_COLUMNS.items():
        name = metric_label(metric, tail_stat(summary, metric))
        out[i] = f"{name} (ms)"
    return tuple(out)


#: the overview's tail-latency columns: index -> metric
_TAIL_COLUMNS = {8: "ttft_ms", 9: "tpot_ms", 10: "itl_ms", 11: "e2e_ms"}


def _overview(summary: Summary) -> Table:
    """:func:`overview_header`, with a prefix-cache column after the TTFT tail when a step
    has one.

    Rows in load order (an sla-search runs 1, 64, 32, 16, ...), an ``auto`` sweep's probe
    first; the step column keeps the run order."""
    steps = [s for s in summary.steps if s.role == "probe"] + curve_steps(summary)
    if is_pooling(summary):  # no token timing: requests, inputs, E2E
        return pooling_views.overview(summary, steps, load_label)
    tails = {m: tail_stat(summary, m) for m in _TAIL_COLUMNS.values()}
    header = overview_header(summary)
    rows: list[tuple[str, ...]] = [
        (
            str(s.index),
            ("probe: " if s.role == "probe" else "") + load_label(s),
            f"{s.requests.ok} / {s.requests.failed}",
            f"{100 * s.requests.error_rate:.2f}",  # the header says (%)
            num(s.throughput.requests_per_s),
            num(s.throughput.goodput_requests_per_s),
            num(s.throughput.output_tokens_per_s, 0),
            num(s.ttft_ms.p50),
            *(num(getattr(getattr(s, m), tails[m])) for m in _TAIL_COLUMNS.values()),
            _sla_cell(s),
        )
        for s in steps
    ]
    hits = [s.prefix_cache.hit_rate if s.prefix_cache else None for s in steps]
    if all(h is None for h in hits):
        return Table(header, tuple(rows))
    at = min(_TAIL_COLUMNS) + 1  # after the TTFT tail
    header = (*header[:at], PREFIX_COLUMN, *header[at:])
    with_hits = [
        (*row[:at], "–" if h is None else f"{100 * h:.1f}", *row[at:])
        for row, h in zip(rows, hits, strict=True)
    ]
    return Table(header, tuple(with_hits))


def build_document(
    summary: Summary,
    scenario: Scenario | None = None,
    plots: dict[str, str] | None = None,
    notes: Sequence[str] = (),
) -> list[Block]:
    """The report's blocks. ``plots``: plot name -> path relative to the results dir."""
    plots = plots or {}
    started = dt.datetime.fromtimestamp(summary.clock_anchor.wall_ns / 1e9, dt.UTC)
    blocks: list[Block] = [
        Heading(f"loadgen report: {summary.name}", 1),
        Text(
            f"run {summary.run_id} · started {started:%Y-%m-%d %H:%M:%S} UTC · "
            f"loadgen {summary.loadgen_version} · metrics profile {summary.metrics_profile}",
            "note",
        ),
        Heading("Scenario"),
        Items(_scenario_items(summary, scenario)),
        *_verdict_blocks(summary),
        Heading("Steps at a glance"),
        _overview(summary) if summary.steps else Text("no step finished", "warn"),
    ]
    groups = (
        ("curve", "telemetry"),
        ("throughput", "frontier"),
        ("cdf",),
        ("turns",),
        ("context",),
        ("time_split",),
        ("timeline",),
    )
    figures = [
        Figures(tuple((plots[n], n) for n in group if n in plots))
        for group in groups
        if any(n in plots for n in group)
    ]
    if figures:
        blocks += [Heading("Plots"), *figures]
    if summary.steps:
        blocks.append(Heading("Steps"))
        for step in summary.steps:
            blocks += step_blocks(step)
    if notes:
        blocks += [Heading("Notes"), Items(tuple(notes), "warn")]
    return blocks


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Text):
            out.append(f"**{b.text}**" if b.tone == "verdict" else b.text)
        elif isinstance(b, Items):
            prefix = "- ⚠ " if b.tone == "warn" else "- "
            out.append("\n".join(prefix + i for i in b.items))
        elif isinstance(b, Table):
            lines = ["| " + " | ".join(b.header) + " |", "|" + "---|" * len(b.header)]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
            out.append("\n".join(lines))
        else:
            out.append("\n".join(f"![{alt}]({path})" for path, alt in b.images))
    return "\n\n".join(out) + "\n"
