"""A small parser for the Prometheus text exposition format (0.0.4).

Owns turning ``/metrics`` text into ``(name, labels, value)`` rows. It handles
what inference servers emit: ``# HELP``/``# TYPE`` and other comments, label
sets with escaped values (``\\\\``, ``\\"``, ``\\n``), ``NaN``/``+Inf``/``-Inf``,
an optional trailing timestamp, and CRLF line ends. A malformed line is
skipped and counted, never raised: a half-broken endpoint still yields the
series that parse. (Written here instead of depending on ``prometheus_client``:
it is forty lines of pure function and the only parser loadgen needs.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PromSample", "parse_prometheus_text"]

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_ESCAPES = re.compile(r"\\[\\\"n]")


@dataclass(frozen=True, slots=True)
class PromSample:
    name: str
    labels: dict[str, str]
    value: float


def _labels(line: str, pos: int) -> tuple[dict[str, str], int]:
    """Parse ``{a="x",b="y"}`` starting at ``line[pos] == "{"``; returns labels and end index."""
    labels: dict[str, str] = {}
    pos += 1
    if line[pos:].lstrip().startswith("}"):
        return labels, line.index("}", pos) + 1
    while True:
        m = _LABEL.match(line, pos)
        if m is None:
            msg = "bad label set"
            raise ValueError(msg)
        labels[m.group(1)] = _ESCAPES.sub(lambda e: _UNESCAPE[e.group(0)], m.group(2))
        pos = m.end()
        if m.group(3) == "}":
            return labels, pos
        if line[pos:].lstrip().startswith("}"):  # trailing comma
            return labels, line.index("}", pos) + 1


def _parse_line(line: str) -> PromSample:
    m = _NAME.match(line)
    if m is None:
        msg = "no metric name"
        raise ValueError(msg)
    labels: dict[str, str] = {}
    pos = m.end()
    if pos < len(line) and line[pos] == "{":
        labels, pos = _labels(line, pos)
    parts = line[pos:].split()
    if not parts or len(parts) > 2:
        msg = "expected a value and an optional timestamp"
        raise ValueError(msg)
    return PromSample(m.group(0), labels, float(parts[0]))  # float() reads NaN, +Inf, -Inf


def parse_prometheus_text(text: str) -> tuple[list[PromSample], int]:
    """All samples in ``text`` in order, and the number of malformed lines skipped."""
    samples: list[PromSample] = []
    bad = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            samples.append(_parse_line(line))
        except ValueError:
            bad += 1
    return samples, bad
