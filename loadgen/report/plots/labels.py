"""Point labels (``c=16``, ``4 r/s``) placed where matplotlib lays them out clear of each other.

Owns :func:`place_labels`. The figure is laid out first (a draw without rendering,
so the constrained layout, the axis limits and the legend are final), the legend is
pinned where it was put, then each label tries offsets around its point, nearest
first, and keeps the first whose text box (``Text.get_window_extent``) lies inside the
axes, clear of its border, of the legend and of every label placed before it;
offsets that also keep it off the plotted markers are preferred. A label that finds
no such place is left out rather than drawn on another. Labels are kept out of the
layout, so placing them moves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.text import Annotation
    from matplotlib.transforms import Bbox

__all__ = ["OFFSETS", "place_labels"]

_Ha = Literal["left", "center", "right"]
_Va = Literal["bottom", "center", "top"]
_AROUND: tuple[tuple[float, float, _Ha, _Va], ...] = (
    (4, 5, "left", "bottom"),
    (4, -5, "left", "top"),
    (-4, 5, "right", "bottom"),
    (-4, -5, "right", "top"),
    (7, 0, "left", "center"),
    (-7, 0, "right", "center"),
    (0, 7, "center", "bottom"),
    (0, -7, "center", "top"),
)
#: Offsets (points) tried around a label's point, nearest first: (dx, dy, ha, va).
OFFSETS: tuple[tuple[float, float, _Ha, _Va], ...] = tuple(
    (dx * r, dy * r, ha, va) for r in (1.0, 2.2, 3.6) for dx, dy, ha, va in _AROUND
)
#: pixels a label keeps from the axes' border
_INSET = 2.0
#: points a label's offset may reach before a thin leader line joins it to its point
_LEADER_FROM = 10.0
#: the leader: a thin grey line from a far-placed label back to its point
_LEADER = {"arrowstyle": "-", "color": "#888888", "lw": 0.6, "shrinkA": 0, "shrinkB": 2}


def _overlaps(box: Bbox, others: Sequence[Bbox]) -> bool:
    return any(bool(o.overlaps(box)) for o in others)


def _inside(box: Bbox, frame: Bbox) -> bool:
    x0, y0, x1, y1 = (float(v) for v in box.extents)
    f0, g0, f1, g1 = (float(v) for v in frame.extents)
    return x0 >= f0 + _INSET and x1 <= f1 - _INSET and y0 >= g0 + _INSET and y1 <= g1 - _INSET


def _marker_boxes(ax: Axes, px_per_point: float) -> list[Bbox]:
    """A square around each plotted marker of the axes, as big as the marker."""
    from matplotlib.transforms import Bbox

    boxes = []
    for line in ax.get_lines():
        if line.get_marker() in (None, "", "None", " "):
            continue
        half = (float(line.get_markersize()) + 1.0) * px_per_point / 2
        for x, y in line.get_transform().transform(line.get_xydata()):
            boxes.append(Bbox.from_extents(x - half, y - half, x + half, y + half))
    return boxes


def _pin_legend(ax: Axes) -> Bbox | None:
    """The legend's box, its place fixed: "best" would move it off the labels next draw."""
    legend = ax.get_legend()
    if legend is None:
        return None
    box = legend.get_window_extent()
    x, y = ax.transAxes.inverted().transform((box.x0, box.y0))
    legend.set_loc((float(x), float(y)))
    return box


def _text_box(ann: Annotation, renderer: object) -> Bbox:
    """The box of the label's text alone (an annotation's own extent takes in its leader)."""
    from matplotlib.text import Text

    ann.update_positions(renderer)  # type: ignore[arg-type]
    return Text.get_window_extent(ann, renderer)  # type: ignore[arg-type]


def place_labels(
    ax: Axes, labels: Sequence[tuple[float, float, str]], fontsize: float = 7.5
) -> list[Annotation]:
    """Annotate ``(x, y, text)`` points in the order given (most wanted first) where each
    text box fits; returns the annotations drawn. Call once the axes are complete."""
    fig = ax.get_figure(root=True)
    if fig is None or not labels:
        return []
    fig.draw_without_rendering()  # the final layout, limits and legend place
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    frame = ax.get_window_extent(renderer)
    legend = _pin_legend(ax)
    markers = _marker_boxes(ax, fig.dpi / 72)
    placed: list[Annotation] = []
    taken: list[Bbox] = [legend] if legend is not None else []
    for x, y, text in labels:
        trial = ax.annotate(text, (x, y), (0, 0), textcoords="offset points", fontsize=fontsize)
        chosen = None
        for dx, dy, ha, va in OFFSETS:
            trial.set_position((dx, dy))
            trial.set_horizontalalignment(ha)
            trial.set_verticalalignment(va)
            box = _text_box(trial, renderer)
            if not _inside(box, frame) or _overlaps(box, taken):
                continue
            if not _overlaps(box, markers):
                chosen = (dx, dy, ha, va)
                break
            chosen = chosen or (dx, dy, ha, va)
        trial.remove()
        if chosen is None:
            continue
        dx, dy, ha, va = chosen
        far = max(abs(dx), abs(dy)) > _LEADER_FROM
        ann = ax.annotate(
            text, (x, y), textcoords="offset points", xytext=(dx, dy), ha=ha, va=va,
            fontsize=fontsize, arrowprops=_LEADER if far else None,
        )  # fmt: skip
        ann.set_in_layout(False)
        taken.append(_text_box(ann, renderer))
        placed.append(ann)
    return placed
