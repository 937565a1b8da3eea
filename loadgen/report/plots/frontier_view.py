"""The frontier of a run as plots and ``loadgen compare`` read it: its points, its
Pareto front and its best point under the SLA.

Owns :class:`FrontierView` (what ``frontier.png`` and ``loadgen compare`` draw),
:func:`frontier_view`, :func:`best_text` and :func:`shared_axis`. The formulas are
:mod:`loadgen.metrics.frontier`'s; this module only picks the points and the axis.

The y axis is throughput per GPU when every point has a GPU count, else the
run's output tokens/s (one axis for all the points, never a mix).

Which steps count is the run's verdict's rule (``StepSummary.meets_sla``: a step
cut short is never the best point); without SLA bounds (``Summary.sla_set``) the
best point is the one with the most throughput among the steps run cleanly, and
no line speaks of an SLA.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loadgen.metrics import best_under_sla, pareto_front
from loadgen.report.plots.series import curve_steps, point_label
from loadgen.summary import StepSummary, Summary

__all__ = ["PER_GPU", "PER_RUN", "FrontierView", "best_text", "frontier_view", "shared_axis"]

#: The y axis's label: per GPU, or the whole run's throughput.
PER_GPU = "output tokens/s per GPU"
PER_RUN = "output tokens/s (all GPUs)"


@dataclass(frozen=True, slots=True)
class FrontierView:
    """The points of one run (steps in load order, probes left out) on one pair of axes."""

    steps: tuple[StepSummary, ...]
    points: tuple[tuple[float, float], ...]  # (interactivity tok/s/user, y), as ``steps``
    meets: tuple[bool, ...]  # each point met the SLA (without one: ran cleanly)
    front: tuple[int, ...]  # indexes into ``points``, by rising interactivity
    best: int | None  # the best point under the SLA, an index into ``points``
    y_label: str
    sla_set: bool = True  # the run had SLA bounds (``Summary.sla_set``)

    def label(self, i: int) -> str:
        return point_label(self.steps[i])

    @property
    def best_name(self) -> str:
        """What the best point is: ``best under the SLA``, or without an SLA ``most
        throughput run cleanly``."""
        return "best under the SLA" if self.sla_set else "most throughput run cleanly"

    @property
    def point_names(self) -> tuple[str, str]:
        """The legend of the points that count and of those that do not."""
        cut = any(not s.judged for s in self.steps)
        if self.sla_set:
            return "meets the SLA", "misses the SLA" + (" or cut short" if cut else "")
        return "run cleanly", "not run cleanly" + (" or cut short" if cut else "")


def _xy(step: StepSummary, per_gpu: bool) -> tuple[float, float] | None:
    """(interactivity, y) of a step that has both and some throughput, else None."""
    f = step.frontier
    if f is None or f.interactivity_tok_s is None or f.output_tokens_per_s <= 0:
        return None
    y = f.output_tokens_per_s_per_gpu if per_gpu else f.output_tokens_per_s
    return None if y is None else (f.interactivity_tok_s, y)


def frontier_view(summary: Summary, per_gpu: bool | None = None) -> FrontierView:
    """The run's points with an interactivity and a throughput; ``per_gpu`` None: per GPU
    when every such point has a GPU count (``loadgen compare`` passes one axis for all)."""
    steps = [s for s in curve_steps(summary) if _xy(s, False) is not None]
    if per_gpu is None:
        per_gpu = bool(steps) and all(_xy(s, True) is not None for s in steps)
    kept = [(s, xy) for s in steps if (xy := _xy(s, per_gpu)) is not None]
    points = tuple(xy for _, xy in kept)
    meets = tuple(s.meets_sla for s, _ in kept)
    return FrontierView(
        steps=tuple(s for s, _ in kept),
        points=points,
        meets=meets,
        front=tuple(pareto_front(points)),
        best=best_under_sla(points, meets),
        y_label=PER_GPU if per_gpu else PER_RUN,
        sla_set=summary.sla_set,
    )


def best_text(view: FrontierView) -> str:
    """``best under the SLA: c=16 (41.2 tok/s per user, 812 output tokens/s per GPU)``;
    without SLA bounds ``most throughput run cleanly: c=64 (...)``."""
    if view.best is None:
        why = "no finished step met it" if view.sla_set else "no finished step ran cleanly"
        return f"{view.best_name}: none ({why})"
    x, y = view.points[view.best]
    where = f"{x:,.1f} tok/s per user, {y:,.0f} {view.y_label}"
    return f"{view.best_name}: {view.label(view.best)} ({where})"


def shared_axis(summaries: Sequence[Summary]) -> bool:
    """Per GPU for several runs when the points of every run that has some all have a
    GPU count."""
    views = [v for v in (frontier_view(s) for s in summaries) if v.points]
    return bool(views) and all(v.y_label == PER_GPU for v in views)
