"""Console lines of at most 80 columns, broken only between phrases."""

from __future__ import annotations

import re

__all__ = ["CONSOLE_WIDTH", "fit", "phrases"]

CONSOLE_WIDTH = 80


def fit(head: str, parts: list[str], sep: str, width: int = CONSOLE_WIDTH) -> list[str]:
    """``head`` + ``parts`` joined by ``sep``, as lines of at most ``width`` columns where
    the parts allow; a line is only ever broken between parts, never inside a phrase."""
    lines: list[str] = []
    line, fresh = head, True  # fresh: nothing on the line yet but its head or indent
    indent = " " * (len(head) - len(head.lstrip()) + 2)
    for part in parts:
        candidate = line + ("" if fresh else sep) + part
        if not fresh and len(candidate) > width:
            lines.append(line + sep.rstrip())
            candidate = indent + part
        line, fresh = candidate, False
    lines.append(line)
    return lines


def phrases(text: str) -> list[str]:
    """``text`` cut where a line may break: after ``;``, ``,`` or `` · ``, before ``(``; a
    number and its unit, or a bound and its value, stay together."""
    return [p for p in re.split(r"(?<=[;,·]) | (?=\()", text) if p]
