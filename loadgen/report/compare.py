"""``loadgen compare``: runs side by side, overlay plots, and the regression gate.

Owns the matching of steps across runs (by load mode and the nearest load
value within a relative tolerance: rate 4 in one run with rate 4.1 in the
other, an ``auto`` sweep's concurrency probe only with a probe), the refusal
to compare runs measured under different metrics profiles, the comparison
tables (each metric for each run and its relative difference from the first
run, the baseline), the overlay plots and ``comparison.md`` / ``comparison.html``.
The environments side by side and the refusal of unequal workloads live in
:mod:`loadgen.report.env_compare`.
The gate's rule lives in :mod:`loadgen.report.gate`; what pooling runs
(embeddings, rerank: no token timing) are compared by, in
:mod:`loadgen.report.pooling_compare`.

Imports: loadgen.errors, loadgen.summary, loadgen.vocab, loadgen.report.*
(matplotlib lazily, through figures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loadgen.errors import ScenarioError
from loadgen.report.blocks import Block, Figures, Heading, Items, Table, Text
from loadgen.report.console import load_label
from loadgen.report.csv_out import load_value
from loadgen.report.env_compare import environment_table
from loadgen.report.gate import Gate, GateResult, conclusions, evaluate_gate, step_value
from loadgen.report.markdown import render_markdown
from loadgen.report.plots import Series, curve_steps, load_axis_label, load_x
from loadgen.report.pooling_compare import (
    check_gates,
    overlay_x,
    table_metrics,
    throughput_y,
)
from loadgen.report.repeats import RepeatSpread
from loadgen.report.samples import RunSamples, read_run_samples
from loadgen.report.writer import load_summary
from loadgen.summary import StepSummary, Summary
from loadgen.vocab import CURVE_STATS, metric_label

__all__ = [
    "MATCH_TOLERANCE",
    "TABLE_METRICS",
    "ProfileMismatchError",
    "Run",
    "check_profiles",
    "comparison_tables",
    "default_out_dir",
    "format_table",
    "load_runs",
    "matched_steps",
    "overlay_series",
    "profiles_text",
    "run_gates",
    "throughput_overlay",
    "write_comparison",
]

#: (field path, table title, unit) of every metric the comparison tables show.
TABLE_METRICS = (
    ("ttft_ms.p50", "TTFT p50", "ms"),
    ("ttft_ms.p99", "TTFT p99", "ms"),
    ("tpot_ms.p50", "TPOT p50", "ms"),
    ("tpot_ms.p99", "TPOT p99", "ms"),
    ("itl_ms.p50", "ITL p50", "ms"),
    ("itl_ms.p99", "ITL p99", "ms"),
    ("e2e_ms.p50", "E2E p50", "ms"),
    ("e2e_ms.p99", "E2E p99", "ms"),
    ("throughput.requests_per_s", "requests/s", "req/s"),
    ("throughput.goodput_requests_per_s", "goodput", "req/s"),
    ("throughput.output_tokens_per_s", "output tokens/s", "tok/s"),
    ("requests.error_rate", "error rate", "%"),
)
OVERLAY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")
#: Two loads match when they differ by at most this fraction of the larger one.
MATCH_TOLERANCE = 0.1


class ProfileMismatchError(ScenarioError):
    """The runs were summarised under different metrics profiles: their numbers measure
    different things (vLLM's TTFT counts from the request's start, loadgen's from the send)."""


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    path: Path
    summary: Summary  # with repeats: the first repeat's, each compared figure their mean
    samples: RunSamples | None
    repeats: list[Summary] | None = None  # ``loadgen run --repeat N``: every repeat's summary

    def repeat_steps(self, step: StepSummary) -> list[StepSummary]:
        """The step at the same index and load in every repeat (empty without repeats)."""
        return [
            r.steps[step.index]
            for r in self.repeats or []
            if len(r.steps) > step.index and r.steps[step.index].load == step.load
        ]


def check_profiles(runs: Sequence[Run], *, allow_mismatch: bool = False) -> None:
    """Raise :class:`ProfileMismatchError` when the runs' metrics profiles differ, unless
    ``allow_mismatch`` (``loadgen compare --allow-profile-mismatch``)."""
    profiles = {r.summary.metrics_profile for r in runs}
    if len(profiles) > 1 and not allow_mismatch:
        each = ", ".join(f"{r.name}: {r.summary.metrics_profile}" for r in runs)
        msg = (
            f"compare: the runs were measured under different metrics profiles ({each}), "
            "so their numbers are not comparable; run them with the same --metrics-profile, "
            "or pass --allow-profile-mismatch to compare them anyway"
        )
        raise ProfileMismatchError(msg)


def load_runs(paths: Sequence[Path], *, allow_profile_mismatch: bool = False) -> list[Run]:
    """Each results directory's summary and samples; names are the folder names, made unique.

    Runs under different metrics profiles are refused (:func:`check_profiles`) unless
    ``allow_profile_mismatch``.
    """
    runs: list[Run] = []
    seen: set[str] = set()
    for i, path in enumerate(paths):
        name = path.resolve().name or f"run{i + 1}"
        if name in seen:
            name = f"{name}#{i + 1}"
        seen.add(name)
        repeats = _load_repeats(path)
        if repeats is not None:
            runs.append(Run(name, path, _mean_summary(repeats), None, repeats))
            continue
        summary = load_summary(path)
        samples = read_run_samples(path, summary, exact_up_to=None)  # the bootstrap's: all
        runs.append(Run(name, path, summary, samples))
    check_profiles(runs, allow_mismatch=allow_profile_mismatch)
    return runs


def _load_repeats(path: Path) -> list[Summary] | None:
    """A ``--repeat`` results directory's repeats (None for a plain results directory)."""
    index = path / "repeats.json"
    if (path / "summary.json").exists() or not index.is_file():
        return None
    try:
        dirs = RepeatSpread.model_validate_json(index.read_bytes()).dirs
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"{index}: not a repeats index: {exc}") from None
    return [load_summary(path / d) for d in dirs]


def _mean_summary(repeats: Sequence[Summary]) -> Summary:
    """The first repeat's summary, each table figure replaced by its mean over the repeats."""
    out = repeats[0].model_copy(deep=True)
    for step in out.steps:
        same = [
            r.steps[step.index]
            for r in repeats
            if len(r.steps) > step.index and r.steps[step.index].load == step.load
        ]
        paths = dict.fromkeys(p for p, _, _ in table_metrics(repeats, TABLE_METRICS))
        for path in dict.fromkeys([*(p for p, _, _ in TABLE_METRICS), *paths]):
            values = [step_value(s, path) for s in same]
            if len(values) == len(repeats) and all(v is not None for v in values):
                *parents, last = path.split(".")
                node: object = step
                for part in parents:
                    node = getattr(node, part)
                setattr(node, last, sum(v for v in values if v is not None) / len(values))
    return out


def _distance(a: StepSummary, b: StepSummary) -> float | None:
    """How far apart two steps' loads are, as a fraction of the larger; None: never matched
    (another mode, a probe with a step, a load without a value)."""
    if a.role != b.role or a.load.mode != b.load.mode:
        return None
    va, vb = load_value(a), load_value(b)
    if va is None or vb is None:
        return None
    return abs(va - vb) / (max(abs(va), abs(vb)) or 1.0)


def _nearest(
    base: Sequence[StepSummary], other: Sequence[StepSummary], tolerance: float
) -> dict[int, StepSummary]:
    """Baseline position -> the other run's step at the nearest load within ``tolerance``;
    each step is matched once, the closest pairs first (then run order)."""
    pairs = sorted(
        (d, i, j)
        for i, a in enumerate(base)
        for j, b in enumerate(other)
        if (d := _distance(a, b)) is not None and d <= tolerance
    )
    out: dict[int, StepSummary] = {}
    used: set[int] = set()
    for _d, i, j in pairs:
        if i not in out and j not in used:
            out[i] = other[j]
            used.add(j)
    return out


def _label(steps: Sequence[StepSummary | None]) -> str:
    """The baseline's load, and ``~`` each other load matched to it: ``rate 4 req/s ~ 4.1``."""
    labels: list[str] = []
    for s in steps:
        if s is not None:
            label = ("probe " if s.role == "probe" else "") + load_label(s)
            if label not in labels:
                labels.append(label)
    return " ~ ".join(labels)


def matched_steps(
    runs: Sequence[Run], *, tolerance: float = MATCH_TOLERANCE
) -> list[tuple[str, list[StepSummary | None]]]:
    """(load label, the step of each run or None) for each step of the baseline some other
    run has a match for: same mode and role (a probe only with a probe), the nearest load
    value within ``tolerance`` (a fraction of the larger load). Probes first, then the
    baseline's steps in load order.
    """
    base = sorted(
        runs[0].summary.steps,
        key=lambda s: (s.role != "probe", load_value(s) is None, load_value(s) or 0.0, s.index),
    )
    found = [_nearest(base, run.summary.steps, tolerance) for run in runs[1:]]
    out = []
    for i, b in enumerate(base):
        row: list[StepSummary | None] = [b, *(f.get(i) for f in found)]
        if any(s is not None for s in row[1:]):
            out.append((_label(row), row))
    return out


def _rel(base: float | None, new: float | None) -> str:
    if base is None or new is None:
        return "–"
    if base == 0:
        return "=" if new == 0 else "n/a"
    return f"{(new - base) / abs(base) * 100:+.1f}%"


def _fmt(v: float | None, path: str) -> str:
    if v is None:
        return "–"
    return f"{100 * v:.2f}%" if path == "requests.error_rate" else f"{v:,.2f}"


def comparison_tables(
    runs: Sequence[Run], *, tolerance: float = MATCH_TOLERANCE
) -> list[tuple[str, Table]]:
    """Per metric: rows of load, each run's value, and each later run's change vs the baseline
    (a pooling run's figures when every run is one: no token timing)."""
    matches = matched_steps(runs, tolerance=tolerance)
    tables = []
    for path, title, unit in table_metrics([r.summary for r in runs], TABLE_METRICS):
        header = (
            "load",
            *(f"{r.name} ({unit})" for r in runs),
            *(f"Δ {r.name} (%)" for r in runs[1:]),
        )
        rows = []
        for label, steps in matches:
            values = [step_value(s, path) if s is not None else None for s in steps]
            rows.append(
                (
                    label,
                    *(_fmt(v, path) for v in values),
                    *(_rel(values[0], v) for v in values[1:]),
                )
            )
        tables.append((f"{title} ({unit})", Table(header, tuple(rows))))
    return tables


def format_table(table: Table) -> str:
    """Plain-text columns for the terminal."""
    rows = [table.header, *table.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(table.header))]
    lines = []
    for row in rows:
        cells = zip(row, widths, strict=True)
        lines.append(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells))
        )
    return "\n".join(lines)


def run_gates(
    gates: Sequence[Gate],
    runs: Sequence[Run],
    *,
    seed: int = 0,
    resamples: int = 1000,
    tolerance: float = MATCH_TOLERANCE,
) -> list[GateResult]:
    """Every gate on every step the baseline (first run) and the newest (last run) share.

    The bootstrap resamples values made by the runs' metrics profile (:func:`load_runs`
    refuses runs under different profiles unless told). A gate on token timing where a run
    is a pooling one is a one-line ScenarioError.
    """
    check_gates(gates, [r.name for r in runs], [r.summary for r in runs])
    base, new = runs[0], runs[-1]
    pairs = [
        (label, (steps[0], steps[-1]))
        for label, steps in matched_steps([base, new], tolerance=tolerance)
        if steps[0] is not None and steps[-1] is not None
    ]
    return [
        evaluate_gate(
            gate,
            label,
            pair,
            (base.samples, new.samples),
            seed=seed,
            resamples=resamples,
            repeats=(base.repeat_steps(pair[0]), new.repeat_steps(pair[1]))
            if base.repeats and new.repeats
            else None,
        )
        for gate in gates
        for label, pair in pairs
    ]


def overlay_series(runs: Sequence[Run], metric: str) -> Series:
    """x = output tokens/s (pooling runs: requests/s), y = the metric's p50 and p99 (ms), per
    run: ``"<run> p99"``; each run's steps in load order, probes left out
    (:func:`loadgen.report.plots.curve_steps`)."""
    out: Series = {}
    x_field, _ = overlay_x([r.summary for r in runs])
    for run in runs:
        for stat in CURVE_STATS:
            points = [
                (float(getattr(s.throughput, x_field) or 0.0), float(v))
                for s in curve_steps(run.summary)
                if (v := getattr(getattr(s, metric), stat)) is not None
            ]
            if points:
                out[f"{run.name} {stat}"] = points
    return out


def throughput_overlay(runs: Sequence[Run]) -> Series:
    """x = the load (:func:`loadgen.report.plots.load_x`; a trace: achieved requests/s),
    y = output tokens/s (pooling runs: requests/s), per run."""
    y_field, _, _ = throughput_y([r.summary for r in runs])
    return {
        run.name: [
            (x, float(getattr(s.throughput, y_field) or 0.0))
            for s in curve_steps(run.summary)
            if (x := load_x(s)) is not None
        ]
        for run in runs
    }


def profiles_text(runs: Sequence[Run]) -> str:
    """``vllm``, or ``A: loadgen, B: vllm`` when the runs differ (allowed by the caller)."""
    names = {r.summary.metrics_profile for r in runs}
    if len(names) == 1:
        return names.pop()
    return ", ".join(f"{r.name}: {r.summary.metrics_profile}" for r in runs)


def default_out_dir(runs: Sequence[Run]) -> Path:
    """``compare-<A>-vs-<B>/`` beside the first run (never the current directory)."""
    names = "-vs-".join(re.sub(r"[^\w.-]+", "_", r.name) for r in runs)
    return runs[0].path.resolve().parent / f"compare-{names}"[:120]


def _gate_block(results: Sequence[GateResult]) -> list[Block]:
    if not results:
        return []
    failed = [r for r in results if r.failed]
    verdict = f"{len(failed)} regression(s)" if failed else "no regression"
    return [
        Heading("Regression gate"),
        Text(f"newest run vs baseline: {verdict}", "fail" if failed else "pass"),
        Items(tuple(conclusions(results)), "warn" if failed else ""),
        Heading("Each step", 3),
        Items(tuple(r.message() for r in results), "warn" if failed else ""),
    ]


def write_comparison(
    runs: Sequence[Run],
    out_dir: Path,
    results: Sequence[GateResult] = (),
    *,
    tolerance: float = MATCH_TOLERANCE,
) -> list[Path]:
    """Overlay plots, comparison.md and comparison.html under ``out_dir``; their paths."""
    from loadgen.report.compare_frontier import FRONTS_FILE, FRONTS_TITLE, write_fronts
    from loadgen.report.figures import draw_overlay, save_figure
    from loadgen.report.html import render_html

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images = []
    profiles = f"metrics profile: {profiles_text(runs)}"
    summaries = [r.summary for r in runs]
    _, x_label = overlay_x(summaries)
    for metric in OVERLAY_METRICS:
        series = overlay_series(runs, metric)
        if series:
            title = f"{metric_label(metric, '')} vs throughput"
            fig = draw_overlay(series, title, x_label, f"{title.split()[0]} (ms)", profiles)
            written.append(save_figure(fig, out_dir / f"compare_{metric}.png"))
            images.append((f"compare_{metric}.png", title))
    xlabel = load_axis_label(runs[0].summary)
    _, y_label, y_title = throughput_y(summaries)
    fig = draw_overlay(throughput_overlay(runs), y_title, xlabel, y_label, profiles)
    written.append(save_figure(fig, out_dir / "compare_throughput.png"))
    images.append(("compare_throughput.png", y_title))
    fronts = write_fronts([r.name for r in runs], summaries, out_dir, profiles)
    if fronts is not None:
        written.append(fronts[0])
        images.append((FRONTS_FILE, FRONTS_TITLE))
    blocks: list[Block] = [
        Heading(f"loadgen compare: {' vs '.join(r.name for r in runs)}", 1),
        Items(
            tuple(
                f"{r.name}: {r.path} ({r.summary.name}, {len(r.summary.steps)} steps, "
                f"metrics profile {r.summary.metrics_profile})"
                for r in runs
            )
        ),
        Text(
            f"Metrics profile: {profiles_text(runs)}. Steps matched by the nearest load "
            f"within {tolerance:.0%}; a probe only with a probe."
        ),
        *_gate_block(results),
        Heading("Environment"),
        environment_table(runs)[0],
        Heading("Overlays"),
        *(Figures(tuple(images[i : i + 2])) for i in range(0, len(images), 2)),
        *([Items(tuple(fronts[1]))] if fronts is not None else []),
        Heading("Per matching step"),
    ]
    for title, table in comparison_tables(runs, tolerance=tolerance):
        blocks += [Heading(title, 3), table]
    md, page = out_dir / "comparison.md", out_dir / "comparison.html"
    md.write_text(render_markdown(blocks), encoding="utf-8")
    page.write_text(render_html(blocks, out_dir, "loadgen compare"), encoding="utf-8")
    return [*written, md, page]
