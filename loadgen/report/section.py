"""What one feature says about one step, in a shape every output renders the same way.

A :class:`Section` is a feature's facts about a step (sessions, validity, the
cache, ...): its lines for people (the console wraps each at 80 columns,
report.md and report.html list them with the step's facts), an optional
breakdown :class:`~loadgen.report.blocks.Table` (a row per endpoint, per model),
and its ``steps.csv`` fields, in column order. The writers iterate the
sections (:mod:`loadgen.report.sections`) and know no feature: a feature's
output is one builder, ``section(step) -> Section | None``.

A :class:`Fact` is one figure with its label, unit, interval and verdict
where a feature's line is a list of such figures (``label value unit``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Breakdown", "Fact", "Section", "Verdict"]

#: a fact's judgement: within what it should be, beyond it, or nothing to judge
Verdict = Literal["ok", "off"] | None


@dataclass(slots=True, frozen=True)
class Fact:
    """One figure: ``loop lag p99 1.20 ms``; ``value`` already formatted."""

    label: str
    value: str
    unit: str = ""
    #: (low, high), already formatted: ``(CI 1.1-1.3)`` after the value
    interval: tuple[str, str] | None = None
    verdict: Verdict = None

    def text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        ci = f" (CI {self.interval[0]}-{self.interval[1]})" if self.interval else ""
        return f"{self.label} {self.value}{unit}{ci}"


@dataclass(slots=True, frozen=True)
class Breakdown:
    """A table of the step's parts: its header, and a row per part (endpoint, model)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(slots=True, frozen=True)
class Section:
    """One feature's facts about one step, as every output renders them.

    ``lines``: for people, the console (each wrapped at 80 columns between its
    phrases) and report.md/html (each an item of the step's facts).
    ``console``: the console's own lines where they are not ``lines`` (a compact
    breakdown, laid out already: not wrapped); ``()`` says nothing on the console.
    ``table``: a breakdown for report.md/html, after the step's latency table.
    ``fields``: steps.csv's columns, in order.
    ``apart``: report.md/html list ``lines`` on their own after the step's facts.
    ``detail``: the console shows ``lines`` only when asked for details (a run whose
    prompt lengths are a guess), unless ``verdict`` is ``off``.
    ``late_columns``: steps.csv puts ``fields`` after every other section's (the cost
    figures before them), in this order among themselves.
    """

    key: str
    lines: tuple[str, ...] = ()
    console: tuple[str, ...] | None = None
    table: Breakdown | None = None
    fields: Mapping[str, object] = field(default_factory=dict)
    apart: bool = False
    detail: bool = False
    verdict: Verdict = None
    late_columns: bool = False
