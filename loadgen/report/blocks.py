"""The document model: blocks that report.md and report.html both render, and cell formats.

A report is a list of blocks (headings, text, bullet lists, tables, figures);
:mod:`loadgen.report.documents.markdown` builds the run's document and writes Markdown,
:mod:`loadgen.report.documents.html` renders the same blocks as a page, so both say the
same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadgen.vocab import METRIC_LABELS

__all__ = [
    "FAIL",
    "INCONCLUSIVE",
    "INTERRUPTED",
    "METRIC_NAMES",
    "PASS",
    "Block",
    "Figures",
    "Heading",
    "Items",
    "Table",
    "Text",
    "num",
    "pct",
    "verdict_cell",
]

#: How a verdict (a step's ``standing`` or a check's ``verdict``) reads in a table cell.
PASS = "✔ met"
FAIL = "✘ missed"
INCONCLUSIVE = "? inconclusive"
INTERRUPTED = "– interrupted, not judged"
_MARKS = {"met": PASS, "missed": FAIL, "inconclusive": INCONCLUSIVE, "interrupted": INTERRUPTED}


def verdict_cell(verdict: str | None) -> str:
    """``✔ met``, ``✘ missed``, ``? inconclusive``, ``– interrupted, not judged`` (a step
    cut short: ``StepSummary.standing``); ``–`` for no verdict (no bound stated)."""
    return _MARKS.get(verdict or "", "–")


#: Summary latency fields by the names people read.
METRIC_NAMES = METRIC_LABELS


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


def num(v: float | None, digits: int = 2) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}" if abs(v) < 1e15 else f"{v:.3g}"


def pct(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{100 * v:.{digits}f}%"
