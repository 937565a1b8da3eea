"""``report.md``: the run as a document, and the document model the HTML report shares.

Owns :func:`build_document` (summary -> a list of blocks: headings, text,
bullet lists, tables, figures) and :func:`render_markdown`. The HTML writer
renders the same blocks, so both reports always say the same thing. What the
document holds: the scenario in brief, the verdict, an overview table, the
plots, and per step the SLA table (bound, measured, margin, pass/fail), the
latency table, client-saturation and Little's-law warnings, cost and telemetry.

Imports: the standard library, loadgen.summary, loadgen.report.csv_out,
loadgen.report.console.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loadgen.report.console import load_label
from loadgen.report.csv_out import telemetry_fields
from loadgen.summary import Distribution, SlaCheck, StepSummary, Summary

__all__ = [
    "FAIL",
    "PASS",
    "Block",
    "Figures",
    "Heading",
    "Items",
    "Table",
    "Text",
    "build_document",
    "render_markdown",
]

PASS = "✔ pass"
FAIL = "✘ FAIL"
_NAMES = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "itl_ms": "ITL", "e2e_ms": "E2E"}
OVERVIEW_HEADER = (
    "step",
    "load",
    "ok / failed",
    "error rate",
    "req/s",
    "goodput req/s",
    "output tok/s",
    "TTFT p50",
    "TTFT p99",
    "TPOT p99",
    "ITL p99",
    "E2E p99",
    "SLA",
)
_STATS = ("count", "mean", "p50", "p90", "p95", "p99", "p99_9", "max")


@dataclass(frozen=True, slots=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True, slots=True)
class Text:
    text: str
    tone: str = ""  # "", "verdict", "warn", "pass", "fail", "note"


@dataclass(frozen=True, slots=True)
class Items:
    items: tuple[str, ...]
    tone: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Figures:
    """Images shown side by side: (path relative to the results dir, alt text)."""

    images: tuple[tuple[str, str], ...] = field(default_factory=tuple)


Block = Heading | Text | Items | Table | Figures


def _num(v: float | None, digits: int = 2) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}" if abs(v) < 1e15 else f"{v:.3g}"


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.2f}%"


def _scenario_items(summary: Summary, scenario: dict[str, Any] | None) -> tuple[str, ...]:
    sc = scenario or {}
    load, work = sc.get("load") or {}, sc.get("workload") or {}
    values = [load_label(s) for s in summary.steps]
    items = [
        f"target: {summary.target_url} · api {summary.api} · model {summary.model}",
        f"steps run: {len(summary.steps)} ({'; '.join(values) or 'none'})",
    ]
    if load:
        length = (
            f"{load['requests_per_step']} requests"
            if load.get("requests_per_step")
            else f"{load.get('duration_s')} s"
        )
        items.append(f"per step: {length}, {load.get('warmup_requests', 0)} warm-up requests")
    for key in ("prompt_tokens", "output_tokens"):
        if isinstance(work.get(key), dict):
            spec = ", ".join(f"{k} {v}" for k, v in work[key].items() if v is not None)
            items.append(f"{key.replace('_', ' ')}: {spec}")
    items.append(f"SLA: {_sla_text(summary.sla)}")
    if isinstance(sc.get("cost"), dict) and sc["cost"].get("usd_per_hour") is not None:
        items.append(f"cost basis: {sc['cost']['usd_per_hour']} USD/hour")
    tel = sc.get("telemetry") or {}
    if tel.get("agents") or tel.get("server_metrics"):
        sources = [
            *tel.get("agents", []),
            *([tel["server_metrics"]] if tel.get("server_metrics") else []),
        ]
        items.append(f"telemetry: {', '.join(sources)}")
    return tuple(items)


def _sla_text(sla: dict[str, Any]) -> str:
    parts = []
    for metric, bounds in sla.items():
        if isinstance(bounds, dict):
            parts += [f"{_NAMES.get(metric, metric)} {s} ≤ {b:g} ms" for s, b in bounds.items()]
        elif metric == "max_error_rate" and isinstance(bounds, int | float):
            parts.append(f"error rate ≤ {_pct(bounds)}")
    return "; ".join(parts) or "none stated"


def _verdict_blocks(summary: Summary) -> list[Block]:
    v = summary.verdict
    blocks: list[Block] = [Heading("Verdict")]
    if v is not None and v.text:
        blocks.append(Text(v.text, "verdict"))
    else:
        passing = [s for s in summary.steps if s.sla.passed and s.requests.ok > 0]
        best = max(passing, key=lambda s: s.throughput.requests_per_s, default=None)
        text = (
            f"highest load meeting the SLA: {load_label(best)}"
            if best is not None
            else "no step met the SLA"
        )
        blocks.append(
            Text(f"{text} (computed by the report: summary.json has no verdict)", "verdict")
        )
    notes = []
    if v is not None and v.bracket:
        tol = f" (tolerance {v.tolerance:g})" if v.tolerance is not None else ""
        notes.append(f"bracket: passes at {v.bracket[0]:g}, fails at {v.bracket[-1]:g}{tol}")
    if v is not None and v.saturation_rps is not None:
        notes.append(f"saturation probe: {v.saturation_rps:.2f} req/s")
    if v is not None and v.stopped_early:
        notes.append(f"stopped early: {v.stopped_early}")
    if summary.interrupted:
        notes.append("the run was interrupted: this report covers the steps that finished")
    if notes:
        blocks.append(Items(tuple(notes), "warn"))
    return blocks


def _overview(summary: Summary) -> Table:
    header = OVERVIEW_HEADER
    rows = [
        (
            str(s.index),
            load_label(s),
            f"{s.requests.ok} / {s.requests.failed}",
            _pct(s.requests.error_rate),
            _num(s.throughput.requests_per_s),
            _num(s.throughput.goodput_requests_per_s),
            _num(s.throughput.output_tokens_per_s, 0),
            _num(s.ttft_ms.p50),
            _num(s.ttft_ms.p99),
            _num(s.tpot_ms.p99),
            _num(s.itl_ms.p99),
            _num(s.e2e_ms.p99),
            (PASS if s.sla.passed else FAIL) if s.sla.checks else "–",
        )
        for s in summary.steps
    ]
    return Table(header, tuple(rows))


def _check_row(c: SlaCheck) -> tuple[str, ...]:
    if c.metric == "error_rate":
        name, bound, value = "error rate", _pct(c.bound), _pct(c.value)
        margin = "–" if c.margin is None else f"{100 * c.margin:+.2f} pp"
    else:
        name = f"{_NAMES.get(c.metric, c.metric)} {c.stat.replace('_', '.')}"
        bound, value = f"≤ {c.bound:g} ms", f"{_num(c.value)} ms"
        margin = "–" if c.margin is None else f"{c.margin:+,.2f} ms"
    if c.margin is not None and c.bound:
        margin += f" ({100 * c.margin / c.bound:+.0f}%)"
    return (
        name,
        bound if c.metric != "error_rate" else f"≤ {bound}",
        value,
        margin,
        PASS if c.passed else FAIL,
    )


def _latency_table(step: StepSummary) -> Table:
    rows: list[tuple[str, ...]] = []
    for metric in ("ttft_ms", "ttft_from_scheduled_ms", "itl_ms", "tpot_ms", "e2e_ms"):
        d: Distribution | None = getattr(step, metric)
        if d is None:
            continue
        name = _NAMES.get(metric, "TTFT from schedule")
        rows.append(
            (name, *(str(d.count) if s == "count" else _num(getattr(d, s)) for s in _STATS))
        )
    return Table(("ms", *(s.replace("_", ".") for s in _STATS)), tuple(rows))


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
        out.append(f"{step.tokens.count_mismatches} requests where usage tokens ≠ token events")
    return tuple(out)


def _facts(step: StepSummary) -> tuple[str, ...]:
    r, t = step.requests, step.throughput
    out = [
        f"{r.ok} ok, {r.failed} failed, {r.warmup} warm-up over {step.duration_s:.2f} s; "
        f"{t.requests_per_s:.2f} req/s, {t.output_tokens_per_s:,.0f} output tok/s, "
        f"{t.input_tokens_per_s:,.0f} input tok/s"
        + (
            f"; goodput {t.goodput_requests_per_s:.2f} req/s"
            if t.goodput_requests_per_s is not None
            else ""
        )
    ]
    if step.little is not None and not step.little.flagged:
        out.append(
            f"Little's law: {step.little.mean_in_flight:.1f} in flight sampled vs "
            f"{step.little.predicted:.1f} predicted"
        )
    if step.cost:
        out.append("cost: " + "; ".join(_cost(k, v) for k, v in step.cost.items()))
    tf = telemetry_fields(step)
    if tf:
        out.append("telemetry: " + _telemetry_text(tf))
    return tuple(out)


def _cost(key: str, value: float) -> str:
    label = key.removeprefix("usd_").replace("_", " ")
    return f"{value:,.4g} USD {label}"


_TELEMETRY_TEXT = {
    "gpu_util_pct_mean": "GPU util mean {:.0f}%",
    "gpu_util_pct_max": "max {:.0f}%",
    "gpu_mem_used_gib_peak": "memory peak {:.1f} GiB",
    "gpu_power_w_mean": "power mean {:.0f} W",
    "gpu_energy_j": "energy {:,.0f} J",
    "gpu_j_per_output_token": "{:.3g} J/output token",
    "server_running_mean": "server running mean {:.1f}",
    "server_waiting_mean": "waiting mean {:.1f}",
    "server_waiting_max": "max {:.0f}",
    "server_kv_usage_pct_mean": "KV usage mean {:.0f}%",
    "server_kv_usage_pct_max": "max {:.0f}%",
    "server_preemptions": "preemptions {:.0f}",
}


def _telemetry_text(tf: dict[str, float]) -> str:
    parts = []
    fmt = _TELEMETRY_TEXT
    for key, pattern in fmt.items():
        if key in tf:
            parts.append(pattern.format(tf[key]))
    return ", ".join(parts)


def _step_blocks(step: StepSummary) -> list[Block]:
    mark = "" if not step.sla.checks else (" — SLA met" if step.sla.passed else " — SLA missed")
    blocks: list[Block] = [Heading(f"Step {step.index} · {load_label(step)}{mark}", 3)]
    blocks.append(Items(_facts(step)))
    if step.sla.checks:
        header = ("SLA bound", "limit", "measured", "margin (headroom)", "result")
        blocks.append(Table(header, tuple(_check_row(c) for c in step.sla.checks)))
    if step.requests.ok:
        blocks.append(_latency_table(step))
    if warnings := _warnings(step):
        blocks.append(Items(warnings, "warn"))
    return blocks


def build_document(
    summary: Summary,
    scenario: dict[str, Any] | None = None,
    plots: dict[str, str] | None = None,
    notes: Sequence[str] = (),
) -> list[Block]:
    """The report's blocks. ``plots``: plot name -> path relative to the results dir."""
    plots = plots or {}
    started = dt.datetime.fromtimestamp(summary.clock_anchor.get("wall_ns", 0) / 1e9, dt.UTC)
    blocks: list[Block] = [
        Heading(f"loadgen report: {summary.name}", 1),
        Text(
            f"run {summary.run_id} · started {started:%Y-%m-%d %H:%M:%S} UTC · "
            f"loadgen {summary.loadgen_version}",
            "note",
        ),
        Heading("Scenario"),
        Items(_scenario_items(summary, scenario)),
        *_verdict_blocks(summary),
        Heading("Steps at a glance"),
        _overview(summary) if summary.steps else Text("no step finished", "warn"),
    ]
    groups = (("curve", "telemetry"), ("throughput",), ("cdf",), ("timeline",))
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
            blocks += _step_blocks(step)
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
