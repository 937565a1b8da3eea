"""Per-step sections of the report: what report.md and report.html say about one step.

Owns :func:`step_blocks`: the step's heading, its facts (counts, throughput,
then each section's lines: :mod:`loadgen.report.sections`), the lists of the
sections kept apart (validity), the SLA table (bound, measured, margin,
pass/fail), the latency table (TTFT reasoning/answer rows when present), the
TTFT-by-turn table of multi-turn sessions, the sections' breakdown tables (per
endpoint, per model), and the warnings.
"""

from __future__ import annotations

import math

from loadgen.report import facts, sessions, validity
from loadgen.report.blocks import Block, Heading, Items, Table, Text, num, pct, verdict_cell
from loadgen.report.pooling import LATENCY_ROWS as POOLING_ROWS
from loadgen.report.pooling import throughput_parts as pooling_parts
from loadgen.report.section import Section
from loadgen.report.sections import step_sections
from loadgen.report.spec_decode import spec_mismatch_text
from loadgen.results import load_label
from loadgen.summary import Distribution, SlaCheck, StepSummary
from loadgen.vocab import (
    METRIC_LABELS,
    PERCENTILE_OF,
    TABLE_STATS,
    confidence_text,
    metric_label,
    stat_label,
)

__all__ = ["STATS", "step_blocks"]

#: The latency table's rows: summary field -> row name.
_LATENCY_ROWS = tuple(
    (m, METRIC_LABELS[m])
    for m in (
        "ttft_ms",
        "ttft_from_scheduled_ms",
        "ttft_reasoning_ms",
        "ttft_answer_ms",
        "itl_ms",
        "tpot_ms",
        "e2e_ms",
    )
)
STATS = TABLE_STATS
#: what a latency bound is measured as in a step where no request succeeded
NO_SUCCESS = "no successful request"


def _check_row(c: SlaCheck) -> tuple[str, ...]:
    if c.metric == validity.METRIC:
        return validity.check_cells(c)
    if c.metric == sessions.METRIC:
        return sessions.check_cells(c)
    if c.metric == "error_rate":
        name, bound, value = "error rate", pct(c.bound), pct(c.value)
        margin = "–" if c.margin is None else f"{100 * c.margin:+.2f} pp"
    else:  # the relative headroom only for a latency: 100% errors against 1% is not -9900%
        name = metric_label(c.metric, c.stat)
        bound = f"≤ {c.bound:g} ms"
        value = NO_SUCCESS if c.value is None else f"{num(c.value)} ms"
        margin = "–" if c.margin is None else f"{c.margin:+,.2f} ms"
        if c.margin is not None and c.bound:
            margin += f" ({100 * c.margin / c.bound:+.0f}%)"
    return (
        name,
        bound if c.metric != "error_rate" else f"≤ {bound}",
        value,
        margin,
        verdict_cell(c.verdict),
        c.reason or "",
    )


#: marks a percentile taken from fewer values than it can resolve
THIN = " *"


def resolves(stat: str, count: int) -> bool:
    """A p-th percentile of ``count`` values says something beyond the max only when
    count >= 1 / (1 - p/100): a p99 needs 100 values, a p99.9 1,000."""
    p = PERCENTILE_OF.get(stat)
    return p is None or count >= math.ceil(100 / (100 - p) - 1e-9)


def _stat_cell(d: Distribution, stat: str) -> str:
    if stat == "count":
        return str(d.count)
    value = getattr(d, stat)
    thin = value is not None and not resolves(stat, d.count)
    return num(value) + (THIN if thin else "")


def _dist_row(name: str, d: Distribution) -> tuple[str, ...]:
    return (name, *(_stat_cell(d, s) for s in STATS))


def _thin_note(table: Table) -> str | None:
    """What ``*`` means, when a cell has one: the smallest count a starred percentile
    would need."""
    starred = [
        s for row in table.rows for s, cell in zip(STATS, row[1:], strict=False)
        if cell.endswith(THIN)
    ]  # fmt: skip
    if not starred:
        return None
    worst = max(starred, key=lambda s: PERCENTILE_OF[s])
    need = math.ceil(100 / (100 - PERCENTILE_OF[worst]) - 1e-9)
    return (
        f"* a percentile from fewer values than it resolves (a {stat_label(worst)} needs "
        f"{need:,}): it is about the largest value seen, not the tail it names"
    )


def _ci_cell(pair: list[float | None] | None) -> str:
    """A confidence interval's cell: ``18.91–19.10``; an end the sample cannot give is left
    open, ``≥ 18.91`` (no upper end) or ``≤ 19.10``; ``–`` when it gives neither."""
    lo, hi = pair if pair is not None and len(pair) == 2 else (None, None)
    if lo is None and hi is None:
        return "–"
    if hi is None:
        return f"≥ {num(lo)}"
    if lo is None:
        return f"≤ {num(hi)}"
    return f"{num(lo)}–{num(hi)}"


def _ci_row(name: str, d: Distribution) -> tuple[str, ...] | None:
    """The row under a metric's: each statistic's confidence interval (the console's ``p99
    95% CI`` line, for every statistic that has one); None when the step has none."""
    if d.ci is None:
        return None
    cells = (
        "" if s in ("count", "max") else _ci_cell(getattr(d.ci, s, None)) for s in STATS
    )  # count and max are what was seen: no interval
    return (f"{name} {confidence_text(d.ci.confidence)} CI", *cells)


def _latency_table(step: StepSummary) -> Table:
    """A row per latency metric, each followed by its confidence intervals' row."""
    rows: list[tuple[str, ...]] = []
    for metric, name in POOLING_ROWS if step.pooling is not None else _LATENCY_ROWS:
        if (d := getattr(step, metric)) is None:
            continue
        rows.append(_dist_row(name, d))
        if (ci := _ci_row(name, d)) is not None:
            rows.append(ci)
    return Table(("latency (ms)", *(stat_label(s) for s in STATS)), tuple(rows))


def _turn_table(step: StepSummary) -> Table | None:
    """TTFT (ms) of each turn of the step's sessions; None when it ran none."""
    turns = step.ttft_by_turn or {}
    order = sorted(turns, key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t))
    rows = tuple(_dist_row(f"turn {t}", turns[t]) for t in order)
    if not rows:
        return None
    return Table(("TTFT by turn (ms)", *(stat_label(s) for s in STATS)), rows)


def _warnings(step: StepSummary) -> tuple[str, ...]:
    out = []
    if step.interrupted:
        out.append("interrupted: this step did not finish")
    if step.requests.ok == 0:
        out.append("no successful request: no latency values")
    if step.requests.errors:
        out.append("errors: " + ", ".join(f"{k} × {n}" for k, n in step.requests.errors.items()))
    if step.client.saturated:
        out.append(
            "the load generator was saturated: these numbers describe loadgen as much as the server"
        )
    out += [f"client: {w}" for w in step.client.warnings]
    if step.little is not None and step.little.flagged:
        ratio = f"ratio {step.little.ratio:.2f}" if step.little.ratio is not None else "no ratio"
        out.append(
            f"Little's law off: {step.little.mean_in_flight:.1f} in flight sampled vs "
            f"{step.little.predicted:.1f} from throughput × latency ({ratio})"
        )
    if step.tokens.count_mismatches:
        out.append(
            f"{step.tokens.count_mismatches} requests where usage tokens ≠ token events"
            + spec_mismatch_text(step)
        )
    out += facts.step_warnings(step)
    return tuple(out)


def _facts(step: StepSummary, sections: list[Section]) -> tuple[str, ...]:
    """Counts and throughput, then the lines of each section not kept apart."""
    r, t = step.requests, step.throughput
    head = (
        f"{r.ok} ok, {r.failed} failed{facts.cancelled_text(step)}, "
        f"{r.warmup} warm-up{facts.ramp_text(step)} "
        f"over {step.duration_s:.2f} s; "
    )
    if step.pooling is not None:  # no output tokens: inputs (documents) per second instead
        out = [head + ", ".join(pooling_parts(step))]
    else:
        out = [
            head + f"{t.requests_per_s:.2f} req/s, {t.output_tokens_per_s:,.0f} output tok/s, "
            f"{t.input_tokens_per_s:,.0f} input tok/s"
            + (
                f"; goodput {t.goodput_requests_per_s:.2f} req/s"
                if t.goodput_requests_per_s is not None
                else ""
            )
        ]
    out += [line for s in sections if not s.apart for line in s.lines]
    return tuple(out)


def step_blocks(step: StepSummary) -> list[Block]:
    sla = step.sla
    mark = f" — SLA {sla.verdict}" if sla.verdict is not None else ""
    if not step.judged:
        mark = " — interrupted, not judged"
    blocks: list[Block] = [Heading(f"Step {step.index} · {load_label(step)}{mark}", 3)]
    if step.judged and sla.verdict is not None and sla.reason:
        tone = {"met": "pass", "missed": "fail"}.get(sla.verdict, "warn")
        blocks.append(Text(f"SLA {sla.verdict}: {sla.reason}", tone))
    sections = step_sections(step)
    blocks.append(Items(_facts(step, sections)))
    blocks += [Items(s.lines) for s in sections if s.apart and s.lines]
    if step.sla.checks:
        header: tuple[str, ...] = ("SLA bound", "limit", "measured", "margin", "verdict", "why")
        rows = tuple(_check_row(c) for c in step.sla.checks)
        if not step.judged:  # the values as far as it got; no check is met or missed
            rows = tuple((*row[:4], verdict_cell(step.standing), *row[5:]) for row in rows)
        if not any(row[-1] for row in rows):  # every check decided: no "why" column
            header, rows = header[:-1], tuple(row[:-1] for row in rows)
        blocks.append(Table(header, rows))
    if step.requests.ok:
        table = _latency_table(step)
        blocks.append(table)
        if (note := _thin_note(table)) is not None:
            blocks.append(Items((note,), "note"))
    if (turns := _turn_table(step)) is not None:
        blocks.append(turns)
    blocks += [Table(s.table.header, s.table.rows) for s in sections if s.table is not None]
    if warnings := _warnings(step):
        blocks.append(Items(warnings, "warn"))
    return blocks
