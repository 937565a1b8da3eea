"""Prompts from a local dataset file: reading, filtering and seeded sampling.

Two layouts, told apart by content (or by ``DatasetSpec.format``):

- JSONL, one object a line: ``{"prompt": "..."}`` or ``{"messages": [{"role",
  "content"}, ...]}``, with an optional ``output_tokens`` (int) and an optional
  reference ``answer``. A final assistant message in ``messages`` is the
  answer and is not sent. Other keys (of a row or a message) are ignored. A JSON array of such
  objects is read the same way.
- ShareGPT: a JSON array (or JSONL) of ``{"conversations": [{"from":
  "human"|"gpt"|"system", "value": "..."}]}``. The prompt is the first human
  turn (``sharegpt_turns: first``) or every turn up to the last human turn as
  chat messages (``all``); the gpt turn after it is the answer. A conversation
  with no human turn is skipped (real ShareGPT dumps hold some).

Token counts come from the caller's ``count_tokens`` (a tokenizer, or a word
count): they drive the length filters and ``output_tokens: answer``.

Every problem with the file is one :class:`ScenarioError` line naming the
file and line. Reading each format is :mod:`loadgen.workload.dataset_formats`'s
(its :func:`read_text` and :func:`json_array_items`, which the lengths module
uses for empirical files, are importable from here too); this module counts,
filters and samples the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from loadgen.errors import ScenarioError
from loadgen.scenario import DatasetSpec
from loadgen.workload.dataset_formats import (
    JSON_WS,
    Parsed,
    json_array_items,
    jsonl_items,
    jsonl_row,
    read_text,
    sharegpt_row,
)

__all__ = [
    "DatasetRow",
    "RowSampler",
    "json_array_items",
    "load_dataset",
    "read_text",
    "sample_rows",
]


@dataclass(slots=True, frozen=True)
class DatasetRow:
    """One usable row, after parsing and filtering.

    ``prompt`` is text or chat messages (``{"role", "content"}``, ending with
    the user's). ``output_tokens`` is the max_tokens this row asks for, as
    ``DatasetSpec.output_tokens`` chose it; None means: draw it from
    ``workload.output_tokens``. ``prompt_tokens`` is ``count_tokens`` of the
    prompt (of each message's content, summed: no chat template). ``line`` is
    where the row starts in the file (1-based).
    """

    prompt: str | list[dict[str, str]]
    answer: str | None
    output_tokens: int | None
    line: int
    prompt_tokens: int
    images: tuple[str, ...] = ()  # the row's image files, as written (relative to the dataset)


# --- loading ------------------------------------------------------------------------------


def load_dataset(
    spec: DatasetSpec, count_tokens: Callable[[str], int], *, base_dir: Path | None = None
) -> list[DatasetRow]:
    """The rows of ``spec.path`` that pass its filters, in file order, at most ``spec.limit``.

    ``output_tokens`` of each row is resolved here (see :class:`DatasetRow`).
    Reading stops once ``limit`` rows are kept, so a later broken line of a
    JSONL file goes unnoticed then.
    """
    path = Path(spec.path)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    source = str(path)
    text = read_text(path, "dataset")
    if text.lstrip(JSON_WS).startswith("["):
        items: Iterator[tuple[int, Any]] = iter(json_array_items(text, source))
    else:
        items = jsonl_items(text, source)
    first = next(items, None)
    if first is None:
        raise ScenarioError(f"{source}: no rows (the file is empty)")
    layout = spec.format
    if layout == "auto":
        obj = first[1]
        layout = "sharegpt" if isinstance(obj, dict) and "conversations" in obj else "jsonl"
    rows: list[DatasetRow] = []
    skipped = {"no human turn": 0, "no output length": 0}
    for line, obj in _chain(first, items):
        where = f"{source}:{line}"
        if layout == "sharegpt":
            parsed = sharegpt_row(obj, where, line, spec.sharegpt_turns)
            if parsed is None:
                skipped["no human turn"] += 1
                continue
        else:
            parsed = jsonl_row(obj, where, line)
        row = _measured(parsed, spec, count_tokens)
        if row is None:
            skipped["no output length"] += 1
        elif _passes(row, spec):
            rows.append(row)
            if spec.limit is not None and len(rows) >= spec.limit:
                break
    if not rows:
        raise ScenarioError(f"{source}: {_why_empty(spec, skipped)}")
    return rows


def _chain(first: tuple[int, Any], rest: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield first
    yield from rest


def _measured(
    p: Parsed, spec: DatasetSpec, count_tokens: Callable[[str], int]
) -> DatasetRow | None:
    """The row with its prompt counted and its output length chosen; None if it has none."""
    if isinstance(p.prompt, str):
        prompt_tokens = count_tokens(p.prompt)
    else:
        prompt_tokens = sum(count_tokens(m["content"]) for m in p.prompt)
    mode = spec.output_tokens
    out: int | None = None
    if mode in ("dataset", "auto"):
        out = p.output_tokens
    if out is None and mode in ("answer", "auto") and p.answer is not None:
        out = count_tokens(p.answer) or None
    if out is None and mode in ("dataset", "answer"):
        return None
    return DatasetRow(p.prompt, p.answer, out, p.line, prompt_tokens, p.images)


def _passes(row: DatasetRow, spec: DatasetSpec) -> bool:
    if spec.min_prompt_tokens is not None and row.prompt_tokens < spec.min_prompt_tokens:
        return False
    if spec.max_prompt_tokens is not None and row.prompt_tokens > spec.max_prompt_tokens:
        return False
    return not (
        spec.max_output_tokens is not None
        and row.output_tokens is not None
        and row.output_tokens > spec.max_output_tokens
    )


def _why_empty(spec: DatasetSpec, skipped: dict[str, int]) -> str:
    filters = [
        f"{name} {value}"
        for name in ("min_prompt_tokens", "max_prompt_tokens", "max_output_tokens")
        if (value := getattr(spec, name)) is not None
    ]
    reasons = []
    if n := skipped["no human turn"]:
        reasons.append(_count(n, "conversation has", "conversations have") + " no human turn")
    if n := skipped["no output length"]:
        what = "output_tokens field" if spec.output_tokens == "dataset" else "answer"
        has = _count(n, "row has", "rows have")
        reasons.append(f"{has} no {what} (output_tokens: {spec.output_tokens})")
    if filters:
        text = f"no rows left after the length filters ({', '.join(filters)})"
        return f"{text}; {', '.join(reasons)}" if reasons else text
    return f"no rows left: {', '.join(reasons)}"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


# --- sampling -----------------------------------------------------------------------------


class RowSampler:
    """Rows for one stream of requests, drawn as ``DatasetSpec.sample`` and ``replace`` say.

    random: a seeded shuffle, taken in order, reshuffled when used up (every
    row once before any repeats); with ``replace``, independent uniform draws.
    sequential: file order from the first row, starting over at the end (no
    draw from ``rng``). Successive :meth:`take` calls continue the stream.
    """

    __slots__ = ("_order", "_pos", "_replace", "_rng", "_rows", "_sequential")

    def __init__(
        self, rows: Sequence[DatasetRow], rng: np.random.Generator, spec: DatasetSpec
    ) -> None:
        if not rows:
            raise ValueError("no rows to sample from")
        self._rows = rows
        self._rng = rng
        self._sequential = spec.sample == "sequential"
        self._replace = spec.replace
        self._order: list[int] = []
        self._pos = 0

    def take(self, n: int) -> list[DatasetRow]:
        """The next ``n`` rows."""
        size = len(self._rows)
        if self._sequential:
            picks = [(self._pos + i) % size for i in range(n)]
            self._pos = (self._pos + n) % size
        elif self._replace:
            picks = self._rng.integers(0, size, size=n).tolist()
        else:
            picks = []
            while len(picks) < n:
                if self._pos == len(self._order):
                    self._order = self._rng.permutation(size).tolist()
                    self._pos = 0
                more = self._order[self._pos : self._pos + n - len(picks)]
                self._pos += len(more)
                picks += more
        return [self._rows[i] for i in picks]


def sample_rows(
    rows: Sequence[DatasetRow], n: int, rng: np.random.Generator, spec: DatasetSpec
) -> list[DatasetRow]:
    """``n`` rows drawn from ``rows`` by a fresh :class:`RowSampler` (seeded by ``rng``)."""
    return RowSampler(rows, rng, spec).take(n)
