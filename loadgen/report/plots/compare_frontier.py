"""``loadgen compare``'s overlay of the runs' frontiers, and each run's best point named.

Owns :func:`compare_fronts` (the views on one shared axis: per GPU when every
run with points has a GPU count for each, else each run's output tokens/s),
:func:`best_lines` and :func:`write_fronts` (``compare_frontier.png``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loadgen.report.plots.frontier_view import FrontierView, best_text, frontier_view, shared_axis
from loadgen.summary import Summary

__all__ = ["FRONTS_FILE", "FRONTS_TITLE", "best_lines", "compare_fronts", "write_fronts"]

FRONTS_FILE = "compare_frontier.png"
FRONTS_TITLE = "throughput vs interactivity (the frontiers)"


def compare_fronts(summaries: Sequence[Summary]) -> list[FrontierView]:
    """Each run's frontier, all on the same y axis."""
    per_gpu = shared_axis(summaries)
    return [frontier_view(s, per_gpu) for s in summaries]


def best_lines(names: Sequence[str], views: Sequence[FrontierView]) -> list[str]:
    """``A: best under the SLA: c=16 (41.2 tok/s per user, 812 output tokens/s per GPU)``,
    one per run."""
    return [f"{name}: {best_text(view)}" for name, view in zip(names, views, strict=True)]


def write_fronts(
    names: Sequence[str], summaries: Sequence[Summary], out_dir: Path, subtitle: str = ""
) -> tuple[Path, list[str]] | None:
    """Draw the fronts of the runs that have points into ``out_dir``/:data:`FRONTS_FILE`;
    (its path, each run's best-point line), or None when no run has a point."""
    from loadgen.report.plots.figstyle import save_figure
    from loadgen.report.plots.frontier_figure import draw_fronts

    views = compare_fronts(summaries)
    if not any(v.points for v in views):
        return None
    fig = draw_fronts(names, views, subtitle)
    return save_figure(fig, out_dir / FRONTS_FILE), best_lines(names, views)
